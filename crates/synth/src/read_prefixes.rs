//! Fields a create answers whole and later views show as a prefix (`EntityType::read_prefixes`).
//!
//! An API may show a secret once: the create answers it whole, and every later read, update
//! answer and list item of the same record shows only its first characters. The recordings
//! show it as a record created in a session (by a 2xx create answering key K) and seen again
//! later in that session (a 2xx read or update of its type answering K, a 2xx list of its type
//! with an item of key K). A top-level field is learned, with length `n`, when every such later
//! view that carries it as a string shows a strict prefix of the created value of `n`
//! characters, the same `n` everywhere, over at least [`MIN_RECORDS`] records. A view showing
//! the value whole, another value or a non-string rules the field out. A field an update's
//! request sent stops being compared for that record from that update on (it is the request's
//! value now). Never from route or field names.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::StateOp;

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::state::{RoutePlan, record_in, scalar_string};
use crate::values;

/// Records (distinct session and key) whose later views a field needs.
pub const MIN_RECORDS: usize = 2;

/// What the views of one (type, field) showed.
#[derive(Default)]
struct Tally {
    /// Prefix lengths seen.
    lengths: BTreeSet<usize>,
    /// (session, key) of the records that showed a prefix.
    records: BTreeSet<(String, String)>,
    /// A view showed the whole value, another value or a non-string.
    ruled_out: bool,
}

/// One 2xx answer of a create, read, update or list route of an entity type.
struct Event<'g> {
    obs: usize,
    op: StateOp,
    plan: &'g RoutePlan,
}

/// The learned prefix fields of every entity type that has any: type → field → length.
pub fn learn(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    obs: &[Obs<'_>],
) -> BTreeMap<String, BTreeMap<String, u64>> {
    // Per entity type, its events in observation order (sessions are contiguous).
    let mut events: BTreeMap<&str, Vec<Event<'_>>> = BTreeMap::new();
    let mut created_in: BTreeSet<(&str, &str)> = BTreeSet::new();
    for (g, p) in groups.iter().zip(plans) {
        let (Some(op), Some(ty)) = (p.state_op, p.entity_type.as_deref()) else {
            continue;
        };
        if op == StateOp::Delete {
            continue;
        }
        for &i in &g.obs {
            if !values::is_2xx(obs[i].status) {
                continue;
            }
            if op == StateOp::Create {
                created_in.insert((ty, obs[i].session));
            }
            events.entry(ty).or_default().push(Event {
                obs: i,
                op,
                plan: p,
            });
        }
    }
    let mut out = BTreeMap::new();
    for (ty, mut evs) in events {
        evs.sort_by_key(|e| e.obs);
        let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
        // (session, key) → the created record's top-level string fields still compared.
        let mut created: BTreeMap<(&str, String), BTreeMap<String, String>> = BTreeMap::new();
        for e in &evs {
            let o = &obs[e.obs];
            if !created_in.contains(&(ty, o.session)) {
                continue;
            }
            let pk = e.plan.primary_key.as_deref().unwrap_or("id");
            if e.op != StateOp::Create {
                // Only answers that can name a record this session created are parsed.
                let live: Vec<&str> = created
                    .keys()
                    .filter(|(s, _)| *s == o.session)
                    .map(|(_, k)| k.as_str())
                    .collect();
                if live.is_empty() || !o.response_holds_any(live.iter().copied()) {
                    continue;
                }
            }
            let Some(body) = o.resp_json() else {
                continue;
            };
            match e.op {
                StateOp::Create => {
                    let record = if e.plan.record_at.is_empty() {
                        record_in(&body, pk).unwrap_or(&body)
                    } else {
                        match body.pointer(&e.plan.record_at) {
                            Some(r) => r,
                            None => continue,
                        }
                    };
                    let (Some(key), Some(map)) =
                        (record.get(pk).and_then(scalar_string), record.as_object())
                    else {
                        continue;
                    };
                    let fields = map
                        .iter()
                        .filter(|(k, _)| k.as_str() != pk)
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                        .collect();
                    created.insert((o.session, key), fields);
                }
                StateOp::Read | StateOp::Update => {
                    let Some(record) = record_in(&body, pk) else {
                        continue;
                    };
                    let Some(key) = record.get(pk).and_then(scalar_string) else {
                        continue;
                    };
                    if e.op == StateOp::Update
                        && let Some(fields) = created.get_mut(&(o.session, key.clone()))
                    {
                        // Fields the request sent are the request's values from here on.
                        for (ptr, _) in &o.req_fields {
                            let top = ptr.get(1..).unwrap_or("").split('/').next();
                            let top = top.unwrap_or("").replace("~1", "/").replace("~0", "~");
                            fields.remove(&top);
                        }
                    }
                    compare(&created, (o.session, key), record, &mut tallies);
                }
                StateOp::List => {
                    let pointer = e.plan.items_pointer.as_deref().unwrap_or("");
                    let Some(Value::Array(items)) = body.pointer(pointer) else {
                        continue;
                    };
                    for item in items {
                        if let Some(key) = item.get(pk).and_then(scalar_string) {
                            compare(&created, (o.session, key), item, &mut tallies);
                        }
                    }
                }
                StateOp::Delete => {}
            }
        }
        let learned: BTreeMap<String, u64> = tallies
            .into_iter()
            .filter(|(_, t)| !t.ruled_out && t.records.len() >= MIN_RECORDS)
            .filter_map(|(field, t)| match (t.lengths.len(), t.lengths.first()) {
                (1, Some(n)) => Some((field, *n as u64)),
                _ => None,
            })
            .collect();
        if !learned.is_empty() {
            out.insert(ty.to_string(), learned);
        }
    }
    out
}

/// Compare one later view of a record with the record as its create answered it.
fn compare(
    created: &BTreeMap<(&str, String), BTreeMap<String, String>>,
    at: (&str, String),
    view: &Value,
    tallies: &mut BTreeMap<String, Tally>,
) {
    let Some(fields) = created.get(&at) else {
        return;
    };
    for (field, whole) in fields {
        let Some(shown) = view.get(field) else {
            continue;
        };
        let tally = tallies.entry(field.clone()).or_default();
        match shown.as_str() {
            Some(s) if !s.is_empty() && s.len() < whole.len() && whole.starts_with(s) => {
                tally.lengths.insert(s.chars().count());
                tally.records.insert((at.0.to_string(), at.1.clone()));
            }
            _ => tally.ruled_out = true,
        }
    }
}
