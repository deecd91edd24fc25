//! Mirrored items that are records (`MirroredList::records`): a filter created with
//! `keywords_attributes` answers its `keywords`, and each of them is a keyword record of its
//! own, which `GET /filters/:id/keywords` lists and `DELETE /filters/keywords/:id` removes.
//!
//! On the synthesized create path, each mirrored item gets a fresh key of the item type's ids
//! (the template mints the item's id from the created type's counter, which is not the
//! keyword's) and is stored as a record under the created one. After that, the session's
//! writes of the item type under a record it created so keep that record's array in step: a
//! keyword created under the filter is appended, an updated one replaced, a deleted one taken
//! out, so the filter's own reads show what its keyword list shows.
//!
//! Not here: records the recordings hold (a replayed create's answer and its later reads are
//! the recorded ones), arrays one object down.

use serde_json::Value;
use wraith_model::{Route, StateOp};

use super::{Call, Engine, Out, OutBody, created_pointer};
use crate::fixtures::scalar_key;
use crate::namespace::{Namespace, Origin};
use crate::util::json_pointer_get_mut;

/// Where records of an item type are mirrored: in the records of `parent` at `at`.
#[derive(Debug, Clone)]
pub(crate) struct MirroredParent {
    pub parent: String,
    pub at: String,
}

/// Per item type, the arrays its records are mirrored in, from every create route's rules.
pub(crate) fn mirrored_parents(
    model: &wraith_model::Model,
) -> std::collections::BTreeMap<String, Vec<MirroredParent>> {
    let mut out: std::collections::BTreeMap<String, Vec<MirroredParent>> = Default::default();
    for route in &model.routes {
        let Some(parent) = &route.entity_type else {
            continue;
        };
        for rule in &route.mirrored_lists {
            let Some(child) = &rule.records else {
                continue;
            };
            let entry = out.entry(child.clone()).or_default();
            if !entry.iter().any(|m| m.parent == *parent && m.at == rule.at) {
                entry.push(MirroredParent {
                    parent: parent.clone(),
                    at: rule.at.clone(),
                });
            }
        }
    }
    out
}

impl Engine {
    /// Give the created `record` (key `key`, stored under `parents`) its mirrored items' own
    /// keys and store each as a record of its type under it. Returns the pointers (inside the
    /// record) of the keys minted.
    pub(super) fn store_mirrored_records(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        route: &Route,
        (parents, key): (&[String], &str),
        record: &mut Value,
    ) -> Vec<String> {
        let mut minted = Vec::new();
        for rule in &route.mirrored_lists {
            let Some(ty) = rule.records.as_deref() else {
                continue;
            };
            let Some(Value::Array(items)) = json_pointer_get_mut(record, &rule.at) else {
                continue;
            };
            let pk = self.pk_of(ty);
            let mut under = parents.to_vec();
            under.push(key.to_string());
            for (i, item) in items.iter_mut().enumerate() {
                let Some(picked) = item.get(&pk).cloned() else {
                    continue;
                };
                let Some(fresh) = self.fresh_key(ns, ty, &picked) else {
                    continue;
                };
                let (Some(id), Value::Object(map)) = (scalar_key(&fresh), &mut *item) else {
                    continue;
                };
                map.insert(pk.clone(), fresh);
                ns.put(
                    ty,
                    &id,
                    item.clone(),
                    Origin::Synthesized,
                    Some(under.clone()),
                );
                ns.note_creator(ty, &id, self.principal_of(call));
                minted.push(format!("{}/{i}/{pk}", rule.at));
            }
        }
        minted
    }

    /// After a 2xx write of a type some create mirrors as records: the same change in the
    /// array of the session-created record it is kept under.
    pub(super) fn apply_mirrored_parents(&self, ns: &mut Namespace, call: &Call<'_>, out: &Out) {
        if self.mirrored_parents.is_empty() || !(200..300).contains(&out.status) {
            return;
        }
        let route = &self.model.routes[call.m.route];
        let Some(ty) = route.entity_type.as_deref() else {
            return;
        };
        let Some(places) = self.mirrored_parents.get(ty) else {
            return;
        };
        let pk = self.pk_of(ty);
        let key = match route.state_op {
            Some(StateOp::Create) => {
                let OutBody::Json(body) = &out.body else {
                    return;
                };
                let Some(ptr) = created_pointer(route, body, &pk) else {
                    return;
                };
                body.pointer(&ptr)
                    .and_then(|r| r.get(&pk))
                    .and_then(scalar_key)
            }
            Some(StateOp::Update | StateOp::Delete) => self
                .target(route, &call.m.params)
                .map(|(_, id)| id.into_owned()),
            _ => None,
        };
        let Some(key) = key else {
            return;
        };
        let held = ns
            .entity(ty, &key)
            .map(|e| (e.value.clone(), e.parents.clone()));
        for place in places {
            match &held {
                // Created or updated: in the array of the record it is kept under.
                Some((value, Some(parents))) => {
                    if let Some(parent) = parents.last() {
                        self.mirror_into(ns, place, parent, &pk, &key, Some(value));
                    }
                }
                Some((_, None)) => {}
                // Deleted: out of whichever session-created record's array holds it.
                None => {
                    let holders: Vec<String> = ns
                        .type_store(&place.parent)
                        .map(|s| {
                            s.live
                                .iter()
                                .filter(|(_, e)| {
                                    e.origin == Origin::Synthesized
                                        && position(&e.value, &place.at, &pk, &key).is_some()
                                })
                                .map(|(k, _)| k.clone())
                                .collect()
                        })
                        .unwrap_or_default();
                    for parent in holders {
                        self.mirror_into(ns, place, &parent, &pk, &key, None);
                    }
                }
            }
        }
    }

    /// Put `item` (or, with `None`, no item) keyed `key` in the array at `place` of the
    /// session-created record `parent`: replacing the item of that key, else appended.
    fn mirror_into(
        &self,
        ns: &mut Namespace,
        place: &MirroredParent,
        parent: &str,
        pk: &str,
        key: &str,
        item: Option<&std::sync::Arc<Value>>,
    ) {
        let Some(e) = ns
            .entity(&place.parent, parent)
            .filter(|e| e.origin == Origin::Synthesized)
        else {
            return;
        };
        let at = position(&e.value, &place.at, pk, key);
        let mut record = (*e.value).clone();
        let Some(Value::Array(items)) = json_pointer_get_mut(&mut record, &place.at) else {
            return;
        };
        let shown = item.map(|v| as_items_show(items, v));
        match (at, shown) {
            (Some(i), Some(v)) => items[i] = v,
            (None, Some(v)) => items.push(v),
            (Some(i), None) => {
                items.remove(i);
            }
            (None, None) => return,
        }
        ns.put(&place.parent, parent, record, Origin::Synthesized, None);
    }
}

/// `record` as the array's items show their records: with only the fields the first item
/// has, when it is an object (a list item can be a view of the record).
fn as_items_show(items: &[Value], record: &Value) -> Value {
    match (items.first(), record) {
        (Some(Value::Object(first)), Value::Object(fields)) => Value::Object(
            fields
                .iter()
                .filter(|(k, _)| first.contains_key(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        _ => record.clone(),
    }
}

/// The index of the item keyed `key` in the array at `at` of `record`.
fn position(record: &Value, at: &str, pk: &str, key: &str) -> Option<usize> {
    record
        .pointer(at)?
        .as_array()?
        .iter()
        .position(|item| item.get(pk).and_then(scalar_key).as_deref() == Some(key))
}
