//! Answer fields a record carries from what the session's writes of it sent
//! (`Route::carried_fields`): a deleted status answers the `text` its create (or its last edit)
//! sent. After a 2xx create or update of an entity type some route carries fields of, the
//! session remembers what the request sent at those pointers, per record; a 2xx answer of a
//! carrying route naming that record then holds the remembered value in each carried field it
//! has. A carrying route may also be a sub-resource read of the record (`GET
//! /statuses/:id/source`, `Route::carried_record`), which names it by a path parameter. A
//! record the session never wrote, a field the answer lacks, or a write that did not send the
//! pointer changes nothing.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{Model, Route, StateOp};

use super::{Call, Engine, Out, OutBody};
use crate::fixtures;
use crate::namespace::Namespace;

/// Per entity type, the request pointers some route's carried fields take their values from.
pub(super) fn carried_pointers(model: &Model) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for route in &model.routes {
        let ty = match &route.carried_record {
            Some(c) => &c.entity_type,
            None => match &route.entity_type {
                Some(ty) => ty,
                None => continue,
            },
        };
        for c in &route.carried_fields {
            out.entry(ty.clone()).or_default().insert(c.from.clone());
        }
    }
    out
}

impl Engine {
    /// Remember what a create or an update of a carrying type sent, then write the carried
    /// fields of the call's route into its answer.
    pub(super) fn apply_carried_fields(&self, ns: &mut Namespace, call: &Call<'_>, out: &mut Out) {
        if self.carried.is_empty() || !(200..300).contains(&out.status) || call.head {
            return;
        }
        let route = &self.model.routes[call.m.route];
        if let Some(c) = &route.carried_record {
            let id = call.m.params.iter().find(|(n, _)| *n == c.record_param);
            if let Some((_, id)) = id {
                self.carry_into(ns, route, (c.entity_type.as_str(), id.as_str()), out);
            }
            return;
        }
        let Some(ty) = route.entity_type.as_deref() else {
            return;
        };
        if let Some(pointers) = self.carried.get(ty)
            && let Some(sent) = call.body.as_ref()
        {
            let key = match route.state_op {
                Some(StateOp::Create) => {
                    let pk = self.pk_of(ty);
                    out.body
                        .json()
                        .and_then(|b| b.get(&pk).and_then(fixtures::scalar_key))
                }
                Some(StateOp::Update) => self
                    .target(route, &call.m.params)
                    .map(|(_, id)| id.to_string()),
                _ => None,
            };
            if let Some(key) = key {
                for p in pointers {
                    if let Some(v @ Value::String(_)) = sent.pointer(p) {
                        ns.carried
                            .entry((ty.to_string(), key.clone()))
                            .or_default()
                            .insert(p.clone(), v.clone());
                    }
                }
            }
        }
        if route.carried_fields.is_empty() {
            return;
        }
        let Some((_, id_key)) = self.target(route, &call.m.params) else {
            return;
        };
        self.carry_into(ns, route, (ty, &id_key), out);
    }

    /// Write the route's carried fields of record `id` of `ty`, as the session's writes of it
    /// last sent them, into the answer.
    fn carry_into(&self, ns: &Namespace, route: &Route, (ty, id): (&str, &str), out: &mut Out) {
        let Some(sent) = ns.carried.get(&(ty.to_string(), id.to_string())) else {
            return;
        };
        let changes: Vec<(&str, &Value)> = {
            let Some(body) = out.body.json() else {
                return;
            };
            route
                .carried_fields
                .iter()
                .filter_map(|c| {
                    let value = sent.get(&c.from)?;
                    let now = body.get(&c.field)?;
                    (now != value).then_some((c.field.as_str(), value))
                })
                .collect()
        };
        if changes.is_empty() {
            return;
        }
        out.body.materialize();
        let OutBody::Json(Value::Object(map)) = &mut out.body else {
            return;
        };
        for (field, value) in changes {
            map.insert(field.to_string(), value.clone());
            out.origins.clear_under(&format!("/{field}"));
        }
        // No longer the recorded bytes.
        out.replay = None;
    }
}
