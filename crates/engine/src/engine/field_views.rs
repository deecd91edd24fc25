//! Routes that view one object field of a record (`Route::field_view`): a `GET
//! /firewalls/:id/rules` answers the `rules` of the firewall as the session holds it, and a 2xx
//! `PUT` of the same path stores its answer there, so the record's own reads, lists and the
//! next read of the field agree with what the session wrote.
//!
//! Not here: a record the session cannot see (deleted, or never known), which keeps the
//! answer the route gave (recorded or rendered); a replayed read of a record only the
//! recordings hold, which is already the recorded field.

use serde_json::Value;

use super::{Call, Engine, Out, OutBody};
use crate::namespace::{Namespace, Origin};
use crate::outbound::Origins;

impl Engine {
    /// After a 2xx answer of a route with a field view: a read answers the record's field, a
    /// write stores its answer as the record's field.
    pub(super) fn apply_field_view(&self, ns: &mut Namespace, call: &Call<'_>, out: &mut Out) {
        if !(200..300).contains(&out.status) || call.head {
            return;
        }
        let Some(view) = self.model.routes[call.m.route].field_view.as_ref() else {
            return;
        };
        let Some(id) = call
            .m
            .params
            .iter()
            .find(|(n, _)| *n == view.record_param)
            .map(|(_, v)| v.as_str())
        else {
            return;
        };
        let ty = view.entity_type.as_str();
        if view.writes {
            let Some(answer) = out
                .body
                .json()
                .filter(|v| v.is_object())
                .map(|v| v.into_owned())
            else {
                return;
            };
            let Some(mut entity) = self.base_entity(ns, ty, id) else {
                return;
            };
            let Value::Object(map) = &mut entity else {
                return;
            };
            if map.get(&view.field) == Some(&answer) {
                return;
            }
            map.insert(view.field.clone(), answer);
            let origin = if out.replay.is_some() {
                Origin::Replayed
            } else {
                Origin::Synthesized
            };
            super::put_acted(ns, ty, id, entity, origin);
            return;
        }
        // The session's record, else (for an answer not replayed) the recorded one.
        let (record, origin) = match ns.entity(ty, id) {
            Some(e) => (Some((*e.value).clone()), e.origin),
            None if out.replay.is_none() => (self.base_entity(ns, ty, id), Origin::Replayed),
            None => return,
        };
        let Some(field) = record
            .as_ref()
            .and_then(|r| r.get(&view.field))
            .filter(|v| v.is_object())
        else {
            return;
        };
        if out.body.json().as_deref() == Some(field) {
            return;
        }
        out.body = OutBody::Json(field.clone());
        let (provenance, source) = super::stored_provenance(origin);
        out.provenance = provenance;
        out.exchange = None;
        out.replay = None;
        out.moment = None;
        out.origins = Origins::default();
        out.sources.reset(Some(source));
    }
}
