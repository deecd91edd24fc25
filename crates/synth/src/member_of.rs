//! Lists that read a member list the other way round (`Route::member_of`): `GET
//! /accounts/:id/lists` lists the lists whose member list (`GET /lists/:id/accounts`, written
//! by `POST` and `DELETE /lists/:id/accounts` with `account_ids[]`) holds the account. Replayed,
//! the route answered the lists a recorded run had made, never the session's own.
//!
//! A route is such a list of a member list when it is a `GET` list with one path parameter
//! naming a record of the member list's member type, and lists records of the type the member
//! list's one path parameter names; some route's membership action (`Route::membership`)
//! writes the member list. The evidence: replaying every recorded session's membership writes
//! in order, each 2xx answer of the route (a top-level array) read after a write of its
//! session listed exactly the parents whose members then held the named record, and at least
//! one such answer listed one.
//!
//! Not learned: answers in an envelope, lists with more than one path parameter, member lists
//! written by member effects (`Route::member_effects`) rather than membership actions.

use std::collections::{BTreeMap, BTreeSet};

use wraith_model::{EntityType, MemberOf, Route, StateOp};

use crate::action::sent_ids;
use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::values;

/// Set `member_of` on every route of `built` (parallel to `groups`) it holds for.
pub fn learn(
    groups: &[RouteGroup],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    let found: Vec<(usize, MemberOf)> = (0..built.len())
        .filter_map(|ri| {
            let rule = candidates(built, ri)
                .into_iter()
                .find(|&li| holds(groups, built, entity_types, obs, ri, li))?;
            Some((
                ri,
                MemberOf {
                    list_path: built[rule].path.clone(),
                },
            ))
        })
        .collect();
    for (ri, rule) in found {
        built[ri].member_of = Some(rule);
    }
}

/// The one parent type of a single-parameter `GET` list, with its listed type.
fn shape(r: &Route) -> Option<(&str, &str)> {
    if r.method != "GET" || r.state_op != Some(StateOp::List) || r.params.len() != 1 {
        return None;
    }
    let [parent] = r.parent_params.as_slice() else {
        return None;
    };
    Some((parent.entity_type.as_str(), r.entity_type.as_deref()?))
}

/// The member lists route `ri` may read the other way round (see the module doc).
fn candidates(built: &[Route], ri: usize) -> Vec<usize> {
    let r = &built[ri];
    let Some((named, listed)) = shape(r) else {
        return Vec::new();
    };
    if r.list.as_ref().is_none_or(|l| !l.items_pointer.is_empty()) {
        return Vec::new();
    }
    (0..built.len())
        .filter(|&li| {
            let l = &built[li];
            li != ri
                && l.origin == r.origin
                && shape(l) == Some((listed, named))
                && built.iter().any(|w| {
                    w.origin == l.origin
                        && w.membership.as_ref().is_some_and(|m| m.list_path == l.path)
                })
        })
        .collect()
}

/// Whether the recordings show route `ri` listing the parents whose member list `li` holds
/// the named record (see the module doc).
fn holds(
    groups: &[RouteGroup],
    built: &[Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
    ri: usize,
    li: usize,
) -> bool {
    let Some(pk) = built[ri]
        .entity_type
        .as_ref()
        .and_then(|t| entity_types.get(t))
        .map(|t| t.primary_key.as_str())
    else {
        return false;
    };
    let list_path = &built[li].path;
    // Every 2xx membership write of the list and every 2xx read of the route, in recorded
    // order: (observation, group, its path values).
    let mut events: Vec<(usize, usize, &Vec<String>)> = Vec::new();
    for (gi, route) in built.iter().enumerate() {
        let writes = route.origin == built[li].origin
            && route
                .membership
                .as_ref()
                .is_some_and(|m| m.list_path == *list_path);
        if !writes && gi != ri {
            continue;
        }
        for (&i, vals) in groups[gi].obs.iter().zip(&groups[gi].param_values) {
            if values::is_2xx(obs[i].status) {
                events.push((i, gi, vals));
            }
        }
    }
    events.sort();
    // Per session: parent → its members.
    let mut members: BTreeMap<&str, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut shown = false;
    for (i, gi, vals) in events {
        let o = &obs[i];
        let session = members.entry(o.session).or_default();
        if gi != ri {
            let (Some(effect), Some(parent)) = (&built[gi].membership, vals.first()) else {
                continue;
            };
            let ids = sent_ids(&o.req_fields, &effect.ids_field);
            let held = session.entry(parent.clone()).or_default();
            for id in ids {
                if effect.adds {
                    held.insert(id);
                } else {
                    held.remove(&id);
                }
            }
            continue;
        }
        // A read before its session wrote the list shows memberships made outside it.
        if session.is_empty() {
            continue;
        }
        let (Some(named), Some(listed)) = (vals.first(), o.listed_keys(pk)) else {
            return false;
        };
        let expected: BTreeSet<String> = session
            .iter()
            .filter(|(_, held)| held.contains(named))
            .map(|(parent, _)| parent.clone())
            .collect();
        if listed != expected {
            return false;
        }
        shown |= !expected.is_empty();
    }
    shown
}
