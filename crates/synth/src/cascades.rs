//! Cascading deletes (`Route::cascades`): a delete that takes the records created under its
//! record's path with it (`DELETE /widgets/:id` and the parts `POST /widgets/:id/parts`
//! made). Learned from sessions that read such a child back after its parent's delete: a 404
//! there (the child itself never deleted) is the evidence, a success anywhere refutes it.
//!
//! Not here: children the recordings did not create in the session (recorded records whose
//! parent the twin cannot know) and lists under the deleted parent (their `StateMember`
//! guard already refuses a parent the session deleted).

use std::collections::{BTreeMap, BTreeSet};

use wraith_model::{Cascade, EntityType, Route, StateOp};

use crate::observe::Obs;
use crate::routes::RouteGroup;

/// One candidate: child records of `child` type created by routes whose path parameter
/// `parent_at` names a record of `parent` type.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    parent: String,
    child: String,
    parent_at: usize,
}

/// Set `cascades` on every delete route whose record's children the recordings show going
/// with it.
pub fn learn(
    groups: &[RouteGroup],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    // Child creates: (route, candidate) for every parent parameter of a create route.
    let mut creates: BTreeMap<usize, Vec<Candidate>> = BTreeMap::new();
    for (r, route) in built.iter().enumerate() {
        let (Some(StateOp::Create), Some(child)) = (route.state_op, &route.entity_type) else {
            continue;
        };
        for pp in &route.parent_params {
            if pp.entity_type == *child {
                continue;
            }
            if let Some(parent_at) = route.params.iter().position(|p| *p == pp.param) {
                creates.entry(r).or_default().push(Candidate {
                    parent: pp.entity_type.clone(),
                    child: child.clone(),
                    parent_at,
                });
            }
        }
    }
    if creates.is_empty() {
        return;
    }
    let keyed = |r: usize| -> Option<(&str, usize)> {
        let route = &built[r];
        let ty = route.entity_type.as_deref()?;
        let id = route.id_param.as_ref()?;
        Some((ty, route.params.iter().position(|p| p == id)?))
    };
    let route_of = crate::routes::route_of(groups, obs.len());
    let mut confirmed: BTreeSet<Candidate> = BTreeSet::new();
    let mut refuted: BTreeSet<Candidate> = BTreeSet::new();
    // Per session: child (type, key) → (parent key, candidate); records deleted themselves.
    let mut children: BTreeMap<(String, String), (String, Candidate)> = BTreeMap::new();
    let mut deleted: BTreeSet<(String, String)> = BTreeSet::new();
    let mut session: Option<&str> = None;
    for (i, o) in obs.iter().enumerate() {
        if session != Some(o.session) {
            session = Some(o.session);
            children.clear();
            deleted.clear();
        }
        let Some((r, j)) = route_of[i] else {
            continue;
        };
        let params = &groups[r].param_values[j];
        let ok = (200..300).contains(&o.status);
        let route = &built[r];
        match route.state_op {
            Some(StateOp::Create) if ok => {
                let Some(cands) = creates.get(&r) else {
                    continue;
                };
                let Some(pk) = cands
                    .first()
                    .and_then(|c| entity_types.get(&c.child))
                    .map(|t| t.primary_key.as_str())
                else {
                    continue;
                };
                for key in crate::list::written_keys(o, pk) {
                    for c in cands {
                        if let Some(parent) = params.get(c.parent_at) {
                            children.insert(
                                (c.child.clone(), key.clone()),
                                (parent.clone(), c.clone()),
                            );
                        }
                    }
                }
            }
            Some(StateOp::Delete) if ok => {
                if let Some((ty, at)) = keyed(r)
                    && let Some(key) = params.get(at)
                {
                    deleted.insert((ty.to_string(), key.clone()));
                }
            }
            Some(StateOp::Read) if ok || o.status == 404 => {
                let Some((ty, at)) = keyed(r) else {
                    continue;
                };
                let Some(key) = params.get(at) else {
                    continue;
                };
                let child = (ty.to_string(), key.clone());
                if deleted.contains(&child) {
                    continue;
                }
                let Some((parent, cand)) = children.get(&child) else {
                    continue;
                };
                if !deleted.contains(&(cand.parent.clone(), parent.clone())) {
                    continue;
                }
                if ok {
                    refuted.insert(cand.clone());
                } else {
                    confirmed.insert(cand.clone());
                }
            }
            _ => {}
        }
    }
    for cand in confirmed.difference(&refuted) {
        for route in built.iter_mut() {
            if route.state_op == Some(StateOp::Delete)
                && route.entity_type.as_deref() == Some(cand.parent.as_str())
                && route.id_param.is_some()
            {
                let cascade = Cascade {
                    entity_type: cand.child.clone(),
                    parent_at: cand.parent_at,
                };
                if !route.cascades.contains(&cascade) {
                    route.cascades.push(cascade);
                }
            }
        }
    }
}
