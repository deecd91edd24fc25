//! What an update's or a create's answers make of the fields it sent
//! (`Route::sent_expansions`).
//!
//! A `PUT` replaces the record's top-level fields with what it sent, but some APIs answer a
//! field with more than was sent: an object of slots sent empty (`devices: {}`) comes back with
//! every slot the record has, and an array of short items (`[{"purpose": "public"}]`) comes back
//! with each item made a record of its own (an id, state flags, the addresses assigned). The
//! recorded answers show both, next to the requests: synth keeps, per update route, the object
//! fields every recorded answer held with all the keys sent and some more, and the array fields
//! every recorded answer held item for item with all the sent item's keys and some more, with
//! each recorded (sent item, answered item) pair as a sample. The engine merges the first into
//! the stored object and answers the second with copies of the nearest samples. A create's
//! answers show the second alike (a VPC created with `subnets: [{"label": …}]` answers each
//! subnet made a record); a create has no stored object to merge into, and what every recorded
//! create that did not send the field answered there (`[]`) is kept for such requests.
//!
//! Not learned: fields a recorded answer held with fewer keys than sent, or as another kind of
//! value (the request's value is then not what the answer expands), and nested fields.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{EntityType, ImplicitSample, ItemExpansion, Route, SentExpansions, StateOp};

use crate::implicit_children::links;
use crate::observe::{Obs, ReqBody};
use crate::routes::RouteGroup;

/// Samples kept per array field (the first ones in session order).
pub const MAX_SAMPLES: usize = 32;

/// What one recorded exchange showed of one field.
#[derive(Default)]
struct FieldEvidence {
    /// Some answer held more than was sent.
    expanded: bool,
    /// Some answer held less, or another kind of value.
    contradicted: bool,
    samples: Vec<ImplicitSample>,
}

/// Every update route's expansions, parallel to `groups`/`built`.
pub fn learn(
    groups: &[RouteGroup],
    built: &[Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) -> Vec<Option<SentExpansions>> {
    let mut out = vec![None; groups.len()];
    // Route of each observation, and where its session starts (for the creates before it).
    let mut route_of: Vec<Option<usize>> = vec![None; obs.len()];
    for (g, group) in groups.iter().enumerate() {
        for &i in &group.obs {
            if let Some(slot) = route_of.get_mut(i) {
                *slot = Some(g);
            }
        }
    }
    let pk_of = |r: usize| -> Option<&str> {
        let ty = built[r].entity_type.as_deref()?;
        entity_types.get(ty).map(|t| t.primary_key.as_str())
    };
    let mut session_start: Option<Vec<usize>> = None;
    for (g, group) in groups.iter().enumerate() {
        let create = match built[g].state_op {
            Some(StateOp::Update) => false,
            Some(StateOp::Create) => true,
            _ => continue,
        };
        let mut objects: BTreeMap<String, FieldEvidence> = BTreeMap::new();
        let mut arrays: BTreeMap<String, FieldEvidence> = BTreeMap::new();
        for &i in &group.obs {
            let o = &obs[i];
            if !(200..300).contains(&o.status) {
                continue;
            }
            let ReqBody::Json(Value::Object(sent)) = &o.req else {
                continue;
            };
            // Cheap first: only a request sending an object or an array of objects is read.
            let shaped = |v: &Value| match v {
                Value::Object(_) => true,
                Value::Array(xs) => !xs.is_empty() && xs.iter().all(Value::is_object),
                _ => false,
            };
            if !sent.values().any(shaped) {
                continue;
            }
            let Some(answer) = o.resp_json() else {
                continue;
            };
            let Some(answer) = answer.as_object() else {
                continue;
            };
            for (field, value) in sent.iter().filter(|(_, v)| shaped(v)) {
                let got = answer.get(field);
                match value {
                    // A create has no stored object to merge into.
                    Value::Object(keys) if !create => {
                        let ev = objects.entry(field.clone()).or_default();
                        match got.and_then(Value::as_object) {
                            Some(held) if keys.keys().all(|k| held.contains_key(k)) => {
                                ev.expanded |= held.len() > keys.len();
                            }
                            _ => ev.contradicted = true,
                        }
                    }
                    Value::Array(items) => {
                        let ev = arrays.entry(field.clone()).or_default();
                        let held = got.and_then(Value::as_array).filter(|h| {
                            h.len() == items.len() && h.iter().zip(items).all(|(a, s)| covers(a, s))
                        });
                        let Some(held) = held else {
                            ev.contradicted = true;
                            continue;
                        };
                        if !held.iter().zip(items).any(|(a, s)| more(a, s)) {
                            continue;
                        }
                        ev.expanded = true;
                        let starts = session_start.get_or_insert_with(|| starts_of(obs));
                        let parent = pk_of(g)
                            .and_then(|pk| answer.get(pk))
                            .and_then(crate::values::scalar_key)
                            .unwrap_or_default();
                        for (a, s) in held.iter().zip(items) {
                            if ev.samples.len() >= MAX_SAMPLES {
                                break;
                            }
                            let creates = (starts[i]..i).filter_map(|e| {
                                let r = route_of[e]?;
                                let create = built[r].state_op == Some(StateOp::Create)
                                    && (200..300).contains(&obs[e].status);
                                let ty = built[r].entity_type.as_deref().filter(|_| create)?;
                                Some((&obs[e], ty, pk_of(r)?))
                            });
                            let answered = std::slice::from_ref(a);
                            ev.samples.push(ImplicitSample {
                                request: s.clone(),
                                parent_key: parent.clone(),
                                items: vec![a.clone()],
                                links: links(answered, "", s, &parent, creates),
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
        let merged_objects: Vec<String> = objects
            .into_iter()
            .filter(|(_, ev)| ev.expanded && !ev.contradicted)
            .map(|(f, _)| f)
            .collect();
        let items: Vec<ItemExpansion> = arrays
            .into_iter()
            .filter(|(_, ev)| ev.expanded && !ev.contradicted)
            .map(|(field, ev)| ItemExpansion {
                when_absent: if create {
                    answered_when_absent(&group.obs, obs, &field)
                } else {
                    None
                },
                field,
                samples: ev.samples,
            })
            .collect();
        if !merged_objects.is_empty() || !items.is_empty() {
            out[g] = Some(SentExpansions {
                merged_objects,
                items,
            });
        }
    }
    out
}

/// What every recorded 2xx answer to a request (a JSON object) that did not send `field`
/// held there, when they all held the same value; `None` when none was recorded, one lacked
/// the field or two differ.
fn answered_when_absent(group: &[usize], obs: &[Obs<'_>], field: &str) -> Option<Value> {
    let mut seen: Option<Value> = None;
    for &i in group {
        let o = &obs[i];
        if !(200..300).contains(&o.status) {
            continue;
        }
        let ReqBody::Json(Value::Object(sent)) = &o.req else {
            continue;
        };
        if sent.contains_key(field) {
            continue;
        }
        let answer = o.resp_json()?;
        let held = answer.as_object()?.get(field)?;
        match &seen {
            Some(v) if v != held => return None,
            Some(_) => {}
            None => seen = Some(held.clone()),
        }
    }
    seen
}

/// Whether the answered item holds every key of the sent one.
fn covers(answered: &Value, sent: &Value) -> bool {
    match (answered.as_object(), sent.as_object()) {
        (Some(a), Some(s)) => s.keys().all(|k| a.contains_key(k)),
        _ => false,
    }
}

/// Whether the answered item holds keys the sent one did not.
fn more(answered: &Value, sent: &Value) -> bool {
    let sent: BTreeSet<&String> = sent
        .as_object()
        .map(|s| s.keys().collect())
        .unwrap_or_default();
    answered
        .as_object()
        .is_some_and(|a| a.keys().any(|k| !sent.contains(k)))
}

/// For each observation, the index of its session's first observation.
fn starts_of(obs: &[Obs<'_>]) -> Vec<usize> {
    let mut out = Vec::with_capacity(obs.len());
    let mut start = 0;
    for (i, o) in obs.iter().enumerate() {
        if i > 0 && obs[i - 1].session != o.session {
            start = i;
        }
        out.push(start);
    }
    out
}
