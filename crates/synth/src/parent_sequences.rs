//! Fields counted within each parent (`Route::parent_sequences`): an issue's `number` counts
//! from 1 in each repository while its `id` counts across them all. A create's top-level
//! integer field is counted per parent when, in every recorded session, the values it answered
//! under one set of path parameters rose by one from each create to the next, and one session
//! answered one value under two different parents (a count across the type never repeats
//! within a session). A field that never rose (`comments: 0`) is not a count.
//!
//! Where such a field held the path's id in every read and update answer as the primary key
//! did (each recorded issue's `number` equal to its `id`), the paths may name either, and the
//! type's `alternate_key` lets the engine find a record by it.
//!
//! Not here: the primary key's own minting (a key counted per parent stays keyed per type,
//! see `parent_keys`), or counts on the parent record (`create_counters`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{EntityType, Route};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::state::Plans;
use crate::values;

/// Fill each create route's `parent_sequences`, and the `alternate_key` of the types whose
/// paths may name such a field.
pub fn learn(
    groups: &[RouteGroup],
    plans: &Plans,
    obs: &[Obs<'_>],
    built: &mut [Route],
    entity_types: &mut BTreeMap<String, EntityType>,
) {
    for ((group, plan), route) in groups.iter().zip(&plans.routes).zip(built.iter_mut()) {
        let Some((ty, pk)) = crate::parent_keys::create_under_parent(plan) else {
            continue;
        };
        let fields = counted_fields(group, obs, pk);
        if fields.is_empty() {
            continue;
        }
        if let Some(t) = entity_types.get_mut(ty)
            && t.alternate_key.is_none()
            && let Some(tied) = plans.tied_keys.get(ty)
        {
            t.alternate_key = fields.iter().find(|f| tied.contains(*f)).cloned();
        }
        route.parent_sequences = fields;
    }
}

/// A create's 2xx answer: its session, exchange index, path parameters and top-level object.
type Answer<'a> = (&'a str, u64, &'a [String], serde_json::Map<String, Value>);

/// The create answers' top-level fields counted within each parent, sorted.
fn counted_fields(group: &RouteGroup, obs: &[Obs<'_>], pk: &str) -> Vec<String> {
    // Each 2xx answer's object, with its session and path parameters, in recorded order.
    let mut answers: Vec<Answer<'_>> = Vec::new();
    for (k, &i) in group.obs.iter().enumerate() {
        let o = &obs[i];
        if !values::is_2xx(o.status) {
            continue;
        }
        let Some(Value::Object(top)) = o.resp_json_levels(1) else {
            return Vec::new();
        };
        let Some(params) = group.param_values.get(k) else {
            return Vec::new();
        };
        answers.push((o.session, o.index, params, top));
    }
    answers.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    let Some((_, _, _, first)) = answers.first() else {
        return Vec::new();
    };
    let counted: BTreeSet<String> = first
        .keys()
        .filter(|f| f.as_str() != pk)
        .filter(|f| counted_per_parent(&answers, f))
        .cloned()
        .collect();
    counted.into_iter().collect()
}

fn counted_per_parent(answers: &[Answer<'_>], field: &str) -> bool {
    // (session, parents) → the values answered there, in order.
    let mut runs: BTreeMap<(&str, &[String]), Vec<u64>> = BTreeMap::new();
    for (session, _, params, top) in answers {
        let Some(n) = top.get(field).and_then(Value::as_u64) else {
            return false;
        };
        runs.entry((session, params)).or_default().push(n);
    }
    let rises = runs
        .values()
        .all(|v| v.windows(2).all(|w| w[0].checked_add(1) == Some(w[1])));
    let rose = runs.values().any(|v| v.len() >= 2);
    // One session answered one value under two parents.
    let mut seen: BTreeMap<(&str, u64), BTreeSet<&[String]>> = BTreeMap::new();
    for ((session, params), values) in &runs {
        for n in values {
            seen.entry((session, *n)).or_default().insert(params);
        }
    }
    let repeated = seen.values().any(|parents| parents.len() >= 2);
    rises && rose && repeated
}
