//! Counts of the acting principal's own record that each of its creates steps by one
//! (`Route::actor_steps`): a status create answers its author (`account`, the route's
//! `actor_record`) with `statuses_count` one more than the author's previous post showed.
//! Without this, a session's posts all showed the count of one recorded moment.
//!
//! Per create route with an actor record inside its answer, every pair of consecutive 2xx
//! answers of the route in one session for one principal, naming the same record, is a sample
//! for each integer field both showed: it steps when the later value is the earlier one plus
//! one. Other writes between the two (a reblog is a post too; a delete takes one away) make a
//! few samples step otherwise, so a field is learned when at least [`MIN_PAIRS`] samples showed
//! it and at least nine in ten of them stepped. Never from field or route names.
//!
//! Not learned: counts other routes step (a reblog's, a delete's), nor the principal's record
//! read elsewhere (`verify_credentials` replays its recorded count).

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use wraith_model::{EntityType, Route, StateOp};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::values;

/// Fewest consecutive pairs that showed a field.
const MIN_PAIRS: usize = 3;

/// Of the pairs that showed a field, the share (in tenths) that must have stepped it by one.
const MIN_STEPPED_TENTHS: usize = 9;

/// Set `actor_steps` on every create route of `built` (same order as `groups`) whose answers
/// bear it out.
pub fn learn(
    groups: &[RouteGroup],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    for (gi, g) in groups.iter().enumerate() {
        let Some(route) = built.get(gi) else {
            continue;
        };
        if route.state_op != Some(StateOp::Create) {
            continue;
        }
        let Some(site) = route
            .actor_record
            .as_ref()
            .filter(|s| !s.pointer.is_empty())
        else {
            continue;
        };
        let Some(pk) = entity_types.get(&site.entity_type).map(|e| &e.primary_key) else {
            continue;
        };
        let steps = stepped_fields(g, obs, &site.pointer, pk);
        if let Some(route) = built.get_mut(gi) {
            route.actor_steps = steps;
        }
    }
}

/// The integer fields of the record at `pointer` that consecutive answers of `g` for one
/// principal stepped by one, in field-name order.
fn stepped_fields(g: &RouteGroup, obs: &[Obs<'_>], pointer: &str, pk: &str) -> Vec<String> {
    // Per field: (pairs that showed it, pairs that stepped it by one).
    let mut tally: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    // The latest record each (session, principal) answered.
    let mut last: BTreeMap<(&str, &str), Map<String, Value>> = BTreeMap::new();
    for &i in &g.obs {
        let Some(o) = obs.get(i) else {
            continue;
        };
        if !values::is_2xx(o.status) {
            continue;
        }
        let Some(principal) = o.principal.as_deref() else {
            continue;
        };
        let Some(Value::Object(record)) = o.resp_json().and_then(|b| b.pointer(pointer).cloned())
        else {
            continue;
        };
        if let Some(before) = last.get(&(o.session, principal))
            && before.get(pk).is_some()
            && before.get(pk) == record.get(pk)
        {
            for (field, now) in &record {
                let (Some(was), Some(now)) =
                    (before.get(field).and_then(Value::as_i64), now.as_i64())
                else {
                    continue;
                };
                let t = tally.entry(field.clone()).or_default();
                t.0 += 1;
                if Some(now) == was.checked_add(1) {
                    t.1 += 1;
                }
            }
        }
        last.insert((o.session, principal), record);
    }
    tally
        .into_iter()
        .filter(|(_, (pairs, stepped))| {
            *pairs >= MIN_PAIRS && stepped * 10 >= pairs * MIN_STEPPED_TENTHS
        })
        .map(|(field, _)| field)
        .collect()
}
