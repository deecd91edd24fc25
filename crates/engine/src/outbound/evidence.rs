//! Per-route column evidence the outbound scrub reads from the model: for every column (a body
//! path with array indices folded to `*`), which string values the recordings showed and on
//! which carriers (the enclosing object's `id`, else the recorded exchange). The same evidence
//! serves synth and strict fidelity, so a leaf is judged the same way in both.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde_json::Value;
use wraith_model::{Model, RecordedBody};

/// Values per column are tracked up to this many; a column past it is high-cardinality.
const MAX_VALUES: usize = 64;
/// Carriers per value are tracked up to this many.
const MAX_CARRIERS: usize = 4;

#[derive(Debug, Default, Clone)]
pub(crate) struct Column {
    /// value → distinct carriers (capped).
    values: BTreeMap<String, BTreeSet<String>>,
    overflow: bool,
    /// [`Column::names_carriers`], computed once when the evidence is built: the PII pass
    /// asks it for every name-keyed leaf of every served body.
    names_carriers: bool,
}

impl Column {
    /// A low-cardinality (enum-like) value: the same value recorded on two or more different
    /// carriers, in a column with few distinct values. Kept verbatim by the PII pass.
    pub(crate) fn is_enum_value(&self, v: &str) -> bool {
        !self.overflow && self.values.len() <= 8 && self.values.get(v).is_some_and(|c| c.len() >= 2)
    }

    /// The column names its carriers: at least two distinct values on distinct carriers and no
    /// value shared between carriers.
    pub(crate) fn names_carriers(&self) -> bool {
        self.names_carriers
    }

    fn compute_names_carriers(&self) -> bool {
        let carriers: BTreeSet<&String> = self.values.values().flatten().collect();
        self.values.len() >= 2 && carriers.len() >= 2 && self.values.values().all(|c| c.len() == 1)
    }
}

/// Column evidence of one route.
#[derive(Debug, Default, Clone)]
pub(crate) struct RouteEvidence {
    columns: BTreeMap<String, Column>,
}

impl RouteEvidence {
    pub(crate) fn column(&self, col: &str) -> Option<&Column> {
        self.columns.get(col)
    }
}

/// The evidence of one route, built the first time a leaf needs it. Most served bodies have
/// no leaf the PII pass would rewrite (the only leaves whose column it reads), so most routes
/// never pay for walking every recorded body of theirs; the answers are the same, because a
/// column is read only where its verdict could change the outcome.
#[derive(Clone, Copy)]
pub(crate) struct LazyEvidence<'a> {
    cell: &'a OnceLock<RouteEvidence>,
    model: &'a Model,
    route: usize,
}

impl<'a> LazyEvidence<'a> {
    /// Evidence of route `route` of `model`, kept in `cell` once built.
    pub(crate) fn new(
        cell: &'a OnceLock<RouteEvidence>,
        model: &'a Model,
        route: usize,
    ) -> LazyEvidence<'a> {
        LazyEvidence { cell, model, route }
    }

    /// The evidence, built on the first call ([`build`]).
    pub(crate) fn get(&self) -> &'a RouteEvidence {
        self.cell.get_or_init(|| build(self.model, self.route))
    }
}

/// Evidence of route `r` of `model` (empty for an index the model does not have). The engine
/// builds it the first time a body of that route goes through the outbound pass: walking every
/// recorded body of every route up front was most of a large twin's start-up time.
pub(crate) fn build(model: &Model, r: usize) -> RouteEvidence {
    let mut ev = RouteEvidence::default();
    let Some(route) = model.routes.get(r) else {
        return ev;
    };
    for entry in &route.exact {
        for m in &entry.moments {
            // Parsed one at a time and dropped: the model keeps only the text.
            if let RecordedBody::Json { value } = &m.body
                && let Ok(value) = value.parse()
            {
                walk(&value, &mut String::new(), &m.source, &mut ev);
            }
        }
    }
    if let Some(et) = route
        .entity_type
        .as_deref()
        .and_then(|ty| model.entity_types.get(ty))
    {
        for (id, rec) in &et.records {
            walk(rec, &mut String::new(), id, &mut ev);
        }
    }
    for col in ev.columns.values_mut() {
        col.names_carriers = col.compute_names_carriers();
    }
    ev
}

fn walk(v: &Value, col: &mut String, carrier: &str, ev: &mut RouteEvidence) {
    match v {
        Value::Object(m) => {
            let own = m.get("id").and_then(|id| match id {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            });
            let carrier = own.as_deref().unwrap_or(carrier);
            for (k, child) in m {
                let len = col.len();
                col.push('/');
                col.push_str(k);
                walk(child, col, carrier, ev);
                col.truncate(len);
            }
        }
        Value::Array(a) => {
            let len = col.len();
            col.push_str("/*");
            for item in a {
                walk(item, col, carrier, ev);
            }
            col.truncate(len);
        }
        Value::String(s) => {
            let c = ev.columns.entry(col.clone()).or_default();
            if c.overflow {
                return;
            }
            if !c.values.contains_key(s) && c.values.len() >= MAX_VALUES {
                c.overflow = true;
                return;
            }
            let set = c.values.entry(s.clone()).or_default();
            if set.len() < MAX_CARRIERS {
                set.insert(carrier.to_string());
            }
        }
        _ => {}
    }
}
