//! Keys counted per parent (`EntityType::keyed_per_parent`): an issue's `number` counts from 1
//! in each repository, so one session's two repositories each hold an issue `1`. A key that
//! names one record of its type never repeats within a session's creates; here a type whose
//! creates (under a parent: a route with parent parameters) answered, in one recorded
//! session, one key under two different parents is keyed per parent.
//!
//! Not here: what the key is (the plan's primary key) or minting keys per parent (the engine
//! stores a type's records by key alone, so it mints keys unique in the type).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{EntityType, StateOp};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::state::RoutePlan;
use crate::values;

/// Mark the entity types whose keys the recordings show counted per parent.
pub fn learn(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    obs: &[Obs<'_>],
    entity_types: &mut BTreeMap<String, EntityType>,
) {
    // (session, type, key) → the parent keys of the records created with it.
    let mut parents_of: BTreeMap<(&str, &str, String), BTreeSet<Vec<&str>>> = BTreeMap::new();
    for (group, plan) in groups.iter().zip(plans) {
        let Some((ty, pk)) = create_under_parent(plan) else {
            continue;
        };
        let positions: Vec<usize> = plan
            .parent_params
            .iter()
            .filter_map(|p| group.params.iter().position(|n| *n == p.param))
            .collect();
        for (k, &i) in group.obs.iter().enumerate() {
            let o = &obs[i];
            if !values::is_2xx(o.status) {
                continue;
            }
            let Some(key) = answered_key(o, pk) else {
                continue;
            };
            let Some(values) = group.param_values.get(k) else {
                continue;
            };
            let parents: Vec<&str> = positions
                .iter()
                .filter_map(|&p| values.get(p).map(String::as_str))
                .collect();
            parents_of
                .entry((o.session, ty, key))
                .or_default()
                .insert(parents);
        }
    }
    let per_parent: BTreeSet<&str> = parents_of
        .iter()
        .filter(|(_, parents)| parents.len() >= 2)
        .map(|((_, ty, _), _)| *ty)
        .collect();
    for ty in per_parent {
        if let Some(t) = entity_types.get_mut(ty) {
            t.keyed_per_parent = true;
        }
    }
}

/// A create under a parent (a route with parent parameters) answering its record at the top:
/// its entity type and primary key.
pub(crate) fn create_under_parent(plan: &RoutePlan) -> Option<(&str, &str)> {
    let (Some(StateOp::Create), Some(ty), Some(pk)) = (
        plan.state_op,
        plan.entity_type.as_deref(),
        plan.primary_key.as_deref(),
    ) else {
        return None;
    };
    (!plan.parent_params.is_empty() && plan.record_at.is_empty()).then_some((ty, pk))
}

/// The key a create answered at the top of its body.
fn answered_key(o: &Obs<'_>, pk: &str) -> Option<String> {
    match o.resp_json_levels(1)? {
        Value::Object(top) => top.get(pk).and_then(values::scalar_key),
        _ => None,
    }
}
