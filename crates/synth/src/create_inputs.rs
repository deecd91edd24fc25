//! Fields a create takes from its request though no recording sent them
//! (`Route::create_inputs`).
//!
//! A create's answer holds the fields the request sent (echo holes) and the record's defaults
//! for the rest: a domain created without `ttl_sec` answers `ttl_sec: 0`. When every recorded
//! create left a field out, its template holds the default as a recorded value, and a client
//! that sends the field would be answered the default — while an update of the same record
//! stores whatever it sends. A top-level field of the created record is learned as an input
//! when no recorded request of the create sent it and every 2xx template of the route that
//! holds it holds it as a recorded value: a constant, an observed value, or an object or array
//! of them. A minted key, a clock, a counter or an echo is the API's own, never an input; so
//! is the primary key (the engine keeps a client-supplied key by its own rule). A field some
//! recorded create sent is left to the template: it echoed the field where the answers did.
//! A `null` sent is no value (a client's unset collection, `"tags": null`), so a field every
//! recorded create sent only as `null` is still an input.
//! A default of `null` says nothing of the field's type, so it is an input only where some
//! recorded answer of the type's creates, reads and updates showed a scalar there and none an
//! object or an array (a `null` collection tag that other answers show as an object is not a
//! string input).
//!
//! A tagged-union answer (one template per type, a status per `visibility`) counts each type's
//! template as a template of the route.
//!
//! Not learned: records an answer carries deeper than a one-key envelope (a wrapped create,
//! `record_at`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use wraith_model::{ArrayNode, Field, HoleKind, Node, Route, StateOp};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::state::{RoutePlan, record_in};
use crate::update_keeps::{record_templates, record_views, valued_fields};
use crate::values;

/// The input fields of every route (same order as the groups); empty for all but creates.
pub fn learn(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    built: &[Route],
    obs: &[Obs<'_>],
) -> Vec<Vec<String>> {
    let views = record_views(groups, plans, obs);
    groups
        .iter()
        .zip(plans)
        .zip(built)
        .map(|((g, p), route)| {
            if p.state_op != Some(StateOp::Create)
                || p.entity_type.is_none()
                || !p.record_at.is_empty()
            {
                return Vec::new();
            }
            let pk = p.primary_key.as_deref().unwrap_or("id");
            let sent: BTreeSet<String> =
                g.obs.iter().flat_map(|&i| valued_fields(&obs[i])).collect();
            let mut out = inputs(route, pk, &sent);
            let nulls: Vec<&String> = out.iter().filter(|k| null_default(route, k)).collect();
            if !nulls.is_empty() {
                let ty = p.entity_type.as_deref().unwrap_or_default();
                let shown = shown_kinds(views.get(ty).map_or(&[], Vec::as_slice), obs, pk);
                let unknown: BTreeSet<String> = nulls
                    .into_iter()
                    .filter(|k| shown.get(k.as_str()) != Some(&Shown::Scalar))
                    .cloned()
                    .collect();
                out.retain(|k| !unknown.contains(k));
            }
            out
        })
        .collect()
}

/// What the recorded answers showed at one field of a type's records.
#[derive(PartialEq)]
enum Shown {
    /// Scalars (and `null`s) only, at least one scalar.
    Scalar,
    /// An object or an array somewhere.
    Composite,
}

/// Per field of a type's records: what its `views` (the 2xx answers of the type's creates,
/// reads and updates, as `record_views` lists them) held there besides `null`.
fn shown_kinds(views: &[(usize, usize)], obs: &[Obs<'_>], pk: &str) -> BTreeMap<String, Shown> {
    let mut out = BTreeMap::new();
    for &(i, _) in views {
        let Some(body) = obs[i].resp_json() else {
            continue;
        };
        let Some(Value::Object(record)) = record_in(&body, pk) else {
            continue;
        };
        for (k, v) in record {
            let kind = match v {
                Value::Null => continue,
                Value::Object(_) | Value::Array(_) => Shown::Composite,
                _ => Shown::Scalar,
            };
            let slot = out.entry(k.clone()).or_insert(Shown::Scalar);
            if kind == Shown::Composite {
                *slot = Shown::Composite;
            }
        }
    }
    out
}

/// Whether some 2xx template of `route` holds the record's `key` as a constant `null`.
fn null_default(route: &Route, key: &str) -> bool {
    templates(route).into_iter().any(|record| {
        record
            .iter()
            .any(|f| f.key == key && matches!(&f.value, Node::Const { value: Value::Null }))
    })
}

/// The record fields the 2xx templates of `route` hold, each as a recorded value in every
/// template holding it (a scheduled post's answer is another shape, without the post's
/// fields), less `pk` and the fields some recorded request sent.
fn inputs(route: &Route, pk: &str, sent: &BTreeSet<String>) -> Vec<String> {
    let mut verdicts: BTreeMap<&str, bool> = BTreeMap::new();
    for record in templates(route) {
        for f in record {
            let ok = recorded_value(&f.value);
            verdicts
                .entry(f.key.as_str())
                .and_modify(|v| *v &= ok)
                .or_insert(ok);
        }
    }
    verdicts
        .into_iter()
        .filter(|(k, ok)| *ok && *k != pk && !sent.contains(*k))
        .map(|(k, _)| k.to_string())
        .collect()
}

/// Whether a template node is a value the recordings showed rather than one the API made for
/// the request: constants and observed values, and objects and arrays of nothing else.
fn recorded_value(node: &Node) -> bool {
    match node {
        Node::Const { .. } => true,
        Node::Hole(h) => matches!(h.source, HoleKind::Observed),
        Node::Object { fields } => fields.iter().all(|f| recorded_value(&f.value)),
        Node::Array(
            ArrayNode::Tuple { items }
            | ArrayNode::List {
                representatives: items,
                ..
            },
        ) => items.iter().all(recorded_value),
    }
}

/// The record's fields in every 2xx template of `route`: each variant's own
/// ([`record_templates`]) and, for a tagged-union answer, each type's.
fn templates(route: &Route) -> Vec<&[Field]> {
    let unions = route
        .variants
        .iter()
        .filter(|v| values::is_2xx(v.status))
        .filter_map(|v| v.union.as_ref())
        .flat_map(|u| &u.templates)
        .filter_map(|t| match t {
            Node::Object { fields } => Some(fields.as_slice()),
            _ => None,
        });
    record_templates(route).chain(unions).collect()
}
