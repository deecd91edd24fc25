//! Routes that are a view of one object field of a record (`Route::field_view`): `GET
//! /firewalls/:id/rules` answers the firewall's `rules`, and `PUT /firewalls/:id/rules`
//! replaces them with what it answers. Without this a read answered the recorded template
//! (another run's rules), and neither a write nor the record's own reads agreed with it.
//!
//! A route without a state operation is a candidate when its path is a record's own path (its
//! last parameter names a record of a type whose recorded records hold an object at the field)
//! followed by the field's name. Its answers are compared with the record's views in the same
//! session: the 2xx answers of the type's creates, reads and updates (the record itself, keyed
//! by its primary key), and of the candidate writes of the same path (the field itself); a
//! write's next view may also be a read of the field.
//!
//! - A `GET` reads the field when each of its 2xx answers that a view came before equalled the
//!   field as the latest earlier view held it, at least one such answer.
//! - A `PUT`, `PATCH` or `POST` writes it when its 2xx answers are objects and each that a
//!   view came after (before any other write of the field) equalled the field as that next
//!   view held it, at least one such answer.
//!
//! Not learned: fields named otherwise than the segment, arrays and scalars, records in an
//! envelope.

use std::collections::BTreeMap;

use serde_json::Value;
use wraith_model::{EntityType, FieldView, Route, StateOp};

use crate::observe::Obs;
use crate::routes::{RouteGroup, Seg};
use crate::state::RoutePlan;
use crate::values;

/// The field as each view showed it, per (session, entity type, key), by observation index.
type Views<'a> = BTreeMap<(&'a str, &'a str, String), Vec<(usize, Value)>>;

/// Each type's record path: (origin, segments through the id) → (type, id parameter).
pub(crate) type RecordPaths<'a> = BTreeMap<(Option<&'a str>, &'a [Seg]), (&'a str, &'a str)>;

/// The `method` routes of `groups` with no state operation whose path is a record path
/// followed by one literal segment (`GET /statuses/:id/history`): each one's index, the
/// record's entity type and the parameter naming it.
pub(crate) fn sub_resources<'a>(
    groups: &'a [RouteGroup],
    plans: &'a [RoutePlan],
    method: &str,
) -> Vec<(usize, &'a str, &'a str)> {
    let record_paths = record_paths(groups, plans);
    groups
        .iter()
        .zip(plans)
        .enumerate()
        .filter(|(_, (g, p))| g.method == method && p.state_op.is_none())
        .filter_map(|(i, (g, _))| {
            let (Seg::Lit(_), record_path) = g.segs.split_last()? else {
                return None;
            };
            let (ty, param) = record_paths.get(&(g.origin.as_deref(), record_path))?;
            Some((i, *ty, *param))
        })
        .collect()
}

/// The record paths of `groups`: each read route's path ending in its id parameter.
pub(crate) fn record_paths<'a>(
    groups: &'a [RouteGroup],
    plans: &'a [RoutePlan],
) -> RecordPaths<'a> {
    let mut out: RecordPaths<'a> = BTreeMap::new();
    for (g, p) in groups.iter().zip(plans) {
        if p.state_op != Some(StateOp::Read) {
            continue;
        }
        if let (Some(ty), Some(param), [.., Seg::Param(last)]) =
            (&p.entity_type, &p.id_param, g.segs.as_slice())
            && last == param
        {
            out.insert((g.origin.as_deref(), g.segs.as_slice()), (ty, param));
        }
    }
    out
}

/// Set `field_view` on every route of `built` (parallel to `groups`) it holds for.
pub fn learn(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    let record_paths = record_paths(groups, plans);
    let candidates: Vec<(usize, FieldView)> = groups
        .iter()
        .zip(plans)
        .enumerate()
        .filter_map(|(i, (g, p))| candidate(g, p, &record_paths, entity_types).map(|v| (i, v)))
        .collect();
    if candidates.is_empty() {
        return;
    }
    // Every view of a candidate field: the record's own answers, then the writes' answers.
    let mut views: Views<'_> = BTreeMap::new();
    let fields: Vec<(&str, &str)> = candidates
        .iter()
        .map(|(_, v)| (v.entity_type.as_str(), v.field.as_str()))
        .collect();
    for (g, p) in groups.iter().zip(plans) {
        if !matches!(
            p.state_op,
            Some(StateOp::Create | StateOp::Read | StateOp::Update)
        ) {
            continue;
        }
        let (Some(ty), Some(pk)) = (p.entity_type.as_deref(), p.primary_key.as_deref()) else {
            continue;
        };
        for (_, field) in fields.iter().filter(|(t, _)| *t == ty) {
            for &i in &g.obs {
                if !values::is_2xx(obs[i].status) {
                    continue;
                }
                let Some(body) = obs[i].resp_json() else {
                    continue;
                };
                let (Some(id), Some(v)) =
                    (body.get(pk).and_then(values::scalar_key), body.get(*field))
                else {
                    continue;
                };
                views
                    .entry((obs[i].session, ty, id))
                    .or_default()
                    .push((i, v.clone()));
            }
        }
    }
    let writes: Vec<&(usize, FieldView)> = candidates.iter().filter(|(_, v)| v.writes).collect();
    for (gi, view) in &writes {
        for (i, id, answer) in answers(&groups[*gi], view, obs) {
            views
                .entry((obs[i].session, view.entity_type.as_str(), id))
                .or_default()
                .push((i, answer));
        }
    }
    // What a write's next view may be: those, and the reads of the field itself.
    let mut next_views = views.clone();
    for (gi, view) in candidates.iter().filter(|(_, v)| !v.writes) {
        for (i, id, answer) in answers(&groups[*gi], view, obs) {
            next_views
                .entry((obs[i].session, view.entity_type.as_str(), id))
                .or_default()
                .push((i, answer));
        }
    }
    for v in views.values_mut().chain(next_views.values_mut()) {
        v.sort_by_key(|(i, _)| *i);
    }
    for (gi, view) in &candidates {
        let g = &groups[*gi];
        let ty = view.entity_type.as_str();
        let mut agreed = 0usize;
        let mut holds = true;
        for (i, id, answer) in answers(g, view, obs) {
            let seen = if view.writes { &next_views } else { &views };
            let Some(seen) = seen.get(&(obs[i].session, ty, id)) else {
                continue;
            };
            let compared = if view.writes {
                // The next view after this write, unless another write of the field came first.
                seen.iter().find(|(j, _)| *j > i).filter(|(j, _)| {
                    !writes.iter().any(|(w, _)| {
                        groups[*w]
                            .obs
                            .iter()
                            .any(|k| *k > i && k < j && obs[*k].session == obs[i].session)
                    })
                })
            } else {
                seen.iter().rev().find(|(j, _)| *j < i)
            };
            let Some((_, field)) = compared else {
                continue;
            };
            if *field == answer {
                agreed += 1;
            } else {
                holds = false;
                break;
            }
        }
        if holds && agreed > 0 {
            built[*gi].field_view = Some(view.clone());
        }
    }
}

/// The view's shape for route `g`, when its path is a record's own path (a read route's)
/// followed by the name of an object field its type's recorded records hold.
fn candidate(
    g: &RouteGroup,
    p: &RoutePlan,
    record_paths: &RecordPaths<'_>,
    entity_types: &BTreeMap<String, EntityType>,
) -> Option<FieldView> {
    if p.state_op.is_some() {
        return None;
    }
    let writes = match g.method.as_str() {
        "GET" => false,
        "PUT" | "PATCH" | "POST" => true,
        _ => return None,
    };
    let (Seg::Lit(field), record_path) = g.segs.split_last()? else {
        return None;
    };
    let (ty, param) = record_paths.get(&(g.origin.as_deref(), record_path))?;
    let et = entity_types.get(*ty)?;
    let holds_object = et
        .records
        .values()
        .any(|r| r.get(field).is_some_and(Value::is_object));
    holds_object.then(|| FieldView {
        entity_type: ty.to_string(),
        record_param: param.to_string(),
        field: field.clone(),
        writes,
    })
}

/// Each 2xx object answer of `g`: (observation, the record key its path named, the answer).
fn answers(g: &RouteGroup, view: &FieldView, obs: &[Obs<'_>]) -> Vec<(usize, String, Value)> {
    let Some(at) = g.params.iter().position(|p| *p == view.record_param) else {
        return Vec::new();
    };
    g.obs
        .iter()
        .zip(&g.param_values)
        .filter(|(i, _)| values::is_2xx(obs[**i].status))
        .filter_map(|(&i, values)| {
            let id = wraith_model::request_key::decode_path_segment(values.get(at)?);
            let answer = obs[i].resp_json().filter(Value::is_object)?;
            Some((i, id, answer))
        })
        .collect()
}
