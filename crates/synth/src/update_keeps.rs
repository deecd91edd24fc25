//! Timestamps an update leaves as they were (`Route::update_keeps`).
//!
//! An update's answer holds the record's timestamps: one the update moves (`updated_at`) and
//! one it keeps (`created`). Where a record is created and updated within the recording's
//! clock window both look like "now", so the update's template holds both as clock holes, and
//! the engine would stamp both with the session's clock. The recordings tell them apart: a 2xx
//! update of a record its session saw before (a create, a read or an earlier update answering
//! the same key) repeats a kept field's value as last seen, and shows a moved one anew. A clock
//! field of the update's answer is learned as kept when at least one such update repeated it
//! and none showed another value; a field the update's request sent is the request's, not
//! compared. Never from route or field names.
//!
//! Not learned: fields deeper than the record's top level, and records the session never saw
//! before the update (nothing to compare with: the engine stamps as before).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{BodyTemplate, Field, HoleKind, Node, Route, StateOp};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::state::{RoutePlan, record_in, scalar_string};
use crate::values;

/// What the updates of one route showed of one clock field.
#[derive(Default)]
struct Tally {
    /// Updates that repeated the value last seen.
    kept: usize,
    /// An update showed another value.
    moved: bool,
}

/// The kept clock fields of every route (same order as the groups); empty for all but
/// updates.
pub fn learn(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    built: &[Route],
    obs: &[Obs<'_>],
) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new(); groups.len()];
    // Per update route: the top-level fields of its record its 2xx templates hold as clocks.
    let clocks: Vec<BTreeSet<String>> = groups
        .iter()
        .zip(plans)
        .zip(built)
        .map(|((_, p), r)| {
            if p.state_op == Some(StateOp::Update) {
                clock_fields(r)
            } else {
                BTreeSet::new()
            }
        })
        .collect();
    let mut watched: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (gi, p) in plans.iter().enumerate() {
        if let Some(ty) = p.entity_type.as_deref() {
            watched
                .entry(ty)
                .or_default()
                .extend(clocks[gi].iter().map(String::as_str));
        }
    }
    let mut tallies: BTreeMap<(usize, String), Tally> = BTreeMap::new();
    for (ty, evs) in record_views(groups, plans, obs) {
        let Some(fields) = watched.get(ty).filter(|f| !f.is_empty()) else {
            continue;
        };
        // (session, key) → the watched fields as last seen.
        let mut last: BTreeMap<(&str, String), BTreeMap<&str, Value>> = BTreeMap::new();
        for (i, gi) in evs {
            let o = &obs[i];
            let pk = plans[gi].primary_key.as_deref().unwrap_or("id");
            let Some(body) = o.resp_json() else {
                continue;
            };
            let Some(record) = record_in(&body, pk) else {
                continue;
            };
            let Some(key) = record.get(pk).and_then(scalar_string) else {
                continue;
            };
            let at = (o.session, key);
            if plans[gi].state_op == Some(StateOp::Update)
                && let Some(before) = last.get(&at)
            {
                let sent = sent_fields(o);
                for field in &clocks[gi] {
                    if sent.contains(field) {
                        continue;
                    }
                    let (Some(was), Some(now)) = (before.get(field.as_str()), record.get(field))
                    else {
                        continue;
                    };
                    let t = tallies.entry((gi, field.clone())).or_default();
                    if was == now {
                        t.kept += 1;
                    } else {
                        t.moved = true;
                    }
                }
            }
            let seen = last.entry(at).or_default();
            for f in fields {
                if let Some(v) = record.get(*f) {
                    seen.insert(f, v.clone());
                }
            }
        }
    }
    for ((gi, field), t) in tallies {
        if t.kept > 0 && !t.moved {
            out[gi].push(field);
        }
    }
    out
}

/// Per entity type: the 2xx answers of its create, read and update routes, as (observation,
/// route group), in observation order (sessions are contiguous, each in recorded order).
pub(crate) fn record_views<'p>(
    groups: &[RouteGroup],
    plans: &'p [RoutePlan],
    obs: &[Obs<'_>],
) -> BTreeMap<&'p str, Vec<(usize, usize)>> {
    let mut events: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
    for (gi, (g, p)) in groups.iter().zip(plans).enumerate() {
        let Some(ty) = p.entity_type.as_deref() else {
            continue;
        };
        if !matches!(
            p.state_op,
            Some(StateOp::Create | StateOp::Read | StateOp::Update)
        ) {
            continue;
        }
        for &i in &g.obs {
            if values::is_2xx(obs[i].status) {
                events.entry(ty).or_default().push((i, gi));
            }
        }
    }
    for evs in events.values_mut() {
        evs.sort_unstable();
    }
    events
}

/// The top-level fields an exchange's request body sent.
pub(crate) fn sent_fields(o: &Obs<'_>) -> BTreeSet<String> {
    top_level(o.req_fields.iter())
}

/// The top-level fields an exchange's request body sent something other than `null` in: a
/// `null` is a client's unset field (`"tags": null` from a nil slice), not a value.
pub(crate) fn valued_fields(o: &Obs<'_>) -> BTreeSet<String> {
    top_level(o.req_fields.iter().filter(|(_, v)| !v.is_null()))
}

/// The top-level field names of request body leaves (JSON pointer, value).
fn top_level<'a>(leaves: impl Iterator<Item = &'a (String, Value)>) -> BTreeSet<String> {
    leaves
        .filter_map(|(ptr, _)| ptr.get(1..)?.split('/').next())
        .map(|top| top.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// The top-level fields of the record in a route's 2xx JSON templates (the answer itself, or
/// the record a one-key envelope wraps, as `envelope_of` finds it in the data) that are clock
/// holes.
pub(crate) fn clock_fields(route: &Route) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for record in record_templates(route) {
        for f in record {
            if matches!(&f.value, Node::Hole(h) if matches!(h.source, HoleKind::Clock { .. })) {
                out.insert(f.key.clone());
            }
        }
    }
    out
}

/// The record's fields in each of a route's 2xx JSON object templates: the answer itself, or
/// the object a one-key envelope wraps (an answer without an identifier key of its own and
/// exactly one object field).
pub(crate) fn record_templates(route: &Route) -> impl Iterator<Item = &[Field]> {
    route.variants.iter().filter_map(|v| {
        if !values::is_2xx(v.status) {
            return None;
        }
        let BodyTemplate::Json {
            root: Node::Object { fields },
        } = &v.body
        else {
            return None;
        };
        let mut objects = fields.iter().filter_map(|f| match &f.value {
            Node::Object { fields } => Some(fields),
            _ => None,
        });
        let enveloped = !fields.iter().any(|f| values::is_identifier_key(&f.key));
        Some(match (objects.next(), objects.next()) {
            (Some(inner), None) if enveloped => inner.as_slice(),
            _ => fields.as_slice(),
        })
    })
}
