//! Members a bodiless write names by a path segment (`Route::segment_member`): `PUT
//! /repos/:o/:r/issues/:n/labels/:name` adds the label to the issue's `labels` and answers
//! them, its `DELETE` takes it out. The answer is the record's array, which a template renders
//! from recorded items, so an issue labelled twice answered one label.
//!
//! Per write route (`PUT` or `POST` adding, `DELETE` removing) whose path ends in a literal and
//! the member's parameter, under a parent parameter of an entity type whose recorded records
//! hold an array of objects at that literal: the route adds when its every 2xx answer is an
//! array of objects one of which holds the member's path value at one same field (the `key`),
//! in at least two answers; a `DELETE` of the same path removes when none of its 2xx answers
//! (arrays too) holds it there.
//!
//! Not learned: members a write names in its body, arrays below the record's top level.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{EntityType, Route, SegmentMember};

use crate::observe::Obs;
use crate::routes::{RouteGroup, Seg};
use crate::state::RoutePlan;
use crate::values;

/// Fewest recorded answers showing an added member that the rule is learned from.
const MIN_ADDS: usize = 2;

/// Set `segment_member` on every route of `built` (parallel to `groups`) it holds for.
pub fn learn(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    let mut adds: BTreeMap<(Option<&str>, &str), SegmentMember> = BTreeMap::new();
    for (i, (g, p)) in groups.iter().zip(plans).enumerate() {
        if !matches!(g.method.as_str(), "PUT" | "POST") {
            continue;
        }
        let Some(mut rule) = candidate(g, p, entity_types) else {
            continue;
        };
        let Some(key) = added_key(g, obs) else {
            continue;
        };
        rule.key = key;
        adds.insert((g.origin.as_deref(), g.path.as_str()), rule.clone());
        built[i].segment_member = Some(rule);
    }
    for (i, g) in groups.iter().enumerate() {
        if g.method != "DELETE" {
            continue;
        }
        let Some(add) = adds.get(&(g.origin.as_deref(), g.path.as_str())) else {
            continue;
        };
        let answers = member_answers(g, obs);
        let removed = !answers.is_empty()
            && answers.iter().all(|(member, items)| {
                items.as_ref().is_some_and(|items| {
                    !items.iter().any(|it| {
                        it.get(&add.key).and_then(values::scalar_key) == Some(member.clone())
                    })
                })
            });
        if removed {
            built[i].segment_member = Some(SegmentMember {
                adds: false,
                ..add.clone()
            });
        }
    }
}

/// The rule's shape for route `g`, its key not yet known: the path ends in a literal naming
/// an array field of its last parent's records, then the member's parameter.
fn candidate(
    g: &RouteGroup,
    p: &RoutePlan,
    entity_types: &BTreeMap<String, EntityType>,
) -> Option<SegmentMember> {
    let [.., Seg::Lit(field), Seg::Param(member)] = g.segs.as_slice() else {
        return None;
    };
    let parent = p.parent_params.last()?;
    let et = entity_types.get(&parent.entity_type)?;
    let holds_array = et
        .records
        .values()
        .any(|r| r.get(field).is_some_and(Value::is_array));
    if !holds_array || parent.param == *member {
        return None;
    }
    Some(SegmentMember {
        entity_type: parent.entity_type.clone(),
        record_param: parent.param.clone(),
        field: field.clone(),
        member_param: member.clone(),
        key: String::new(),
        adds: true,
    })
}

/// Per 2xx answer of `g`: the member its path named and the answer's items, when the answer
/// is an array of objects.
fn member_answers(g: &RouteGroup, obs: &[Obs<'_>]) -> Vec<(String, Option<Vec<Value>>)> {
    g.obs
        .iter()
        .enumerate()
        .filter(|(_, i)| values::is_2xx(obs[**i].status))
        .filter_map(|(k, &i)| {
            let member = g.param_values.get(k)?.last()?;
            let member = wraith_model::request_key::decode_path_segment(member);
            let items = match obs[i].resp_json() {
                Some(Value::Array(items)) if items.iter().all(Value::is_object) => Some(items),
                _ => None,
            };
            Some((member, items))
        })
        .collect()
}

/// The item field that, in every 2xx answer of `g`, one item held the member's path value at,
/// over at least [`MIN_ADDS`] answers.
fn added_key(g: &RouteGroup, obs: &[Obs<'_>]) -> Option<String> {
    let answers = member_answers(g, obs);
    if answers.len() < MIN_ADDS {
        return None;
    }
    let mut common: Option<BTreeSet<String>> = None;
    for (member, items) in &answers {
        let items = items.as_ref()?;
        let keys: BTreeSet<String> = items
            .iter()
            .filter_map(Value::as_object)
            .flat_map(|o| {
                o.iter()
                    .filter(|(_, v)| values::scalar_key(v).as_deref() == Some(member.as_str()))
                    .map(|(k, _)| k.clone())
            })
            .collect();
        common = Some(match common {
            None => keys,
            Some(c) => c.intersection(&keys).cloned().collect(),
        });
    }
    common?.into_iter().next()
}
