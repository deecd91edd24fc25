//! Routes listing a record's versions (`Route::record_versions`): `GET /statuses/:id/history`
//! answers the session's post as its create and each of its edits answered it, oldest first.
//!
//! After each 2xx create or update of a type some route lists versions of, the session keeps
//! the version its answer shows (a create starts the list afresh); a 2xx rendered answer of the
//! versions route for a record the session holds versions of is that list. The versions count
//! towards the session's state, so a session editing one record forever is bounded as one
//! creating records forever is.
//!
//! Not here: a replayed answer (the recorded run's own versions), a record the session never
//! wrote (the answer stays as recorded or rendered).

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use wraith_model::{Model, RecordVersions, StateOp};

use super::{Call, Engine, Out, OutBody, created_pointer, entity_pointer};
use crate::api::{FieldSource, Provenance};
use crate::fixtures::scalar_key;
use crate::namespace::Namespace;
use crate::outbound::Origins;

/// Per entity type, the first route's rule listing its versions.
pub(crate) fn versioned_types(model: &Model) -> BTreeMap<String, RecordVersions> {
    let mut out = BTreeMap::new();
    for route in &model.routes {
        if let Some(rule) = &route.record_versions {
            out.entry(rule.entity_type.clone())
                .or_insert_with(|| rule.clone());
        }
    }
    out
}

impl Engine {
    /// Keep the version a write of a versioned type answered; answer a versions route with
    /// the session's versions of its record.
    pub(super) fn apply_record_versions(&self, ns: &mut Namespace, call: &Call<'_>, out: &mut Out) {
        if self.versioned.is_empty() || !(200..300).contains(&out.status) {
            return;
        }
        let route = &self.model.routes[call.m.route];
        if let Some(rule) = &route.record_versions {
            if out.replay.is_some() || call.head {
                return;
            }
            let Some((_, id)) = call.m.params.iter().find(|(n, _)| *n == rule.record_param) else {
                return;
            };
            let Some(items) = ns.versions.get(&(rule.entity_type.clone(), id.clone())) else {
                return;
            };
            out.body = OutBody::Json(Value::Array(items.clone()));
            out.provenance = Provenance::Template;
            out.exchange = None;
            out.moment = None;
            out.origins = Origins::default();
            out.sources.reset(Some(FieldSource::State));
            return;
        }
        let create = match route.state_op {
            Some(StateOp::Create) => true,
            Some(StateOp::Update) => false,
            _ => return,
        };
        let Some(ty) = route.entity_type.as_deref() else {
            return;
        };
        let Some(rule) = self.versioned.get(ty) else {
            return;
        };
        let pk = self.pk_of(ty);
        let OutBody::Json(body) = &out.body else {
            return;
        };
        let ptr = if create {
            created_pointer(route, body, &pk)
        } else {
            entity_pointer(body, &pk)
        };
        let Some(Value::Object(record)) = ptr.and_then(|p| body.pointer(&p)) else {
            return;
        };
        let Some(key) = record.get(&pk).and_then(scalar_key) else {
            return;
        };
        let mut item = Map::new();
        for f in &rule.fields {
            let from = if create {
                &f.from_create
            } else {
                &f.from_update
            };
            if let Some(v) = record.get(from) {
                item.insert(f.key.clone(), v.clone());
            }
        }
        let item = Value::Object(item);
        let size = crate::util::json_size(&item);
        let versions = ns.versions.entry((ty.to_string(), key)).or_default();
        let freed: u64 = if create {
            versions.drain(..).map(|v| crate::util::json_size(&v)).sum()
        } else {
            0
        };
        versions.push(item);
        ns.set_state_bytes(ns.state_bytes.saturating_sub(freed).saturating_add(size));
    }
}
