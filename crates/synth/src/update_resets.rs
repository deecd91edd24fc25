//! Fields an update resets when its request leaves them out (`Route::update_resets`).
//!
//! An API whose update replaces the record (`PUT` with the whole record) answers a field the
//! request did not send with a default (`color` back to `null`, `size` to `0`), where one that
//! merges (`PATCH`) answers it as it was. The engine merges by default; the recordings tell
//! the two apart. Synth compares every 2xx recorded update of a record its session saw before
//! (the latest earlier 2xx create, read or update answer of the same type with the same key)
//! with that view: a top-level field of the earlier view the request did not send is a reset
//! when every such update answered it with one same value and moved it there from at least
//! two others, or from one where other updates of the route sent the field (it is one of the
//! update's inputs: tests that create every record alike reset it from one value). One value
//! moved from, for a field no update sends, is no reset: a `version` stepped from 1 to 2 by
//! each session's one update, a `blurhash` that processing filled in, look the same. The
//! primary key and the update's clock fields (`updated_at`) are never
//! resets. Never from route, method or field names.
//!
//! Not learned: fields deeper than the record's top level, a field an update answered without
//! (left out of its answer), and records the session never saw before the update.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{Route, StateOp, UpdateReset};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::state::{RoutePlan, record_in, scalar_string};
use crate::update_keeps::{clock_fields, record_views, sent_fields};

/// What the updates of one route showed of one field they were not sent.
#[derive(Default)]
struct Tally {
    /// The values answered (canonical text, so one value is one entry).
    answered: BTreeMap<String, Value>,
    /// The values last seen that an update answered the field away from.
    moved_from: BTreeSet<String>,
    /// Some update left the field out of its answer.
    dropped: bool,
}

/// The reset fields of every route (same order as the groups), by field; empty for all but
/// updates.
pub fn learn(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    built: &[Route],
    obs: &[Obs<'_>],
) -> Vec<Vec<UpdateReset>> {
    let mut out = vec![Vec::new(); groups.len()];
    let updates = plans
        .iter()
        .any(|p| p.state_op == Some(StateOp::Update) && p.entity_type.is_some());
    if !updates {
        return out;
    }
    let clocks: BTreeMap<usize, BTreeSet<String>> = plans
        .iter()
        .enumerate()
        .filter(|(_, p)| p.state_op == Some(StateOp::Update))
        .map(|(gi, _)| (gi, clock_fields(&built[gi])))
        .collect();
    let mut tallies: BTreeMap<(usize, String), Tally> = BTreeMap::new();
    // Per update route: the top-level fields some 2xx update of it sent (its inputs).
    let mut inputs: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for (_, evs) in record_views(groups, plans, obs) {
        // (session, key) → the record as last seen.
        let mut last: BTreeMap<(&str, String), serde_json::Map<String, Value>> = BTreeMap::new();
        for (i, gi) in evs {
            let o = &obs[i];
            let pk = plans[gi].primary_key.as_deref().unwrap_or("id");
            let Some(body) = o.resp_json() else {
                continue;
            };
            let Some(Value::Object(record)) = record_in(&body, pk) else {
                continue;
            };
            let Some(key) = record.get(pk).and_then(scalar_string) else {
                continue;
            };
            let at = (o.session, key);
            if clocks.contains_key(&gi) {
                inputs.entry(gi).or_default().extend(sent_fields(o));
            }
            if let Some(clock) = clocks.get(&gi)
                && let Some(before) = last.get(&at)
            {
                let sent = sent_fields(o);
                for (field, was) in before {
                    if field == pk || clock.contains(field) || sent.contains(field) {
                        continue;
                    }
                    let t = tallies.entry((gi, field.clone())).or_default();
                    match record.get(field) {
                        None => t.dropped = true,
                        Some(now) => {
                            if now != was {
                                t.moved_from.insert(was.to_string());
                            }
                            t.answered.insert(now.to_string(), now.clone());
                        }
                    }
                }
            }
            last.insert(at, record.clone());
        }
    }
    for ((gi, field), t) in tallies {
        let input = inputs.get(&gi).is_some_and(|f| f.contains(&field));
        let evidence = t.moved_from.len() >= 2 || (input && !t.moved_from.is_empty());
        if evidence && !t.dropped && t.answered.len() == 1 {
            let value = t.answered.into_values().next().unwrap_or(Value::Null);
            out[gi].push(UpdateReset { field, value });
        }
    }
    out
}
