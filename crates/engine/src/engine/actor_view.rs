//! The acting principal's own record inside a rendered answer (`Route::actor_record`).
//!
//! A route whose answers carry the principal's own record (a status create's `account`) is
//! rendered from its template when no recorded moment answers the request. The template's
//! representative there is whichever account the recordings showed most, not the one acting:
//! a profile field of another account, or of this one in another state (`feature_approval`
//! recorded `[]` in this run, `["public"]` in others), would be answered. The session already
//! saw its principal's record in an earlier answer of such a route (the engine remembers the
//! latest one per `Authorization`, `Namespace::actor_views`), so a rendered answer shows that
//! view at the route's pointer instead: the fields the rendered object has take the view's
//! values, and the object keeps the template's shape (a field the view lacks stays rendered;
//! a field only the view has is not added).
//!
//! Before the session saw its principal's record, the rendered record is the template's; where
//! it names a record the recordings know (`EntityType::records`), the values the renderer
//! minted for it (a `created_at` from the clock) take that record's recorded values: the
//! account existed before the session, and its creation time is not now.
//!
//! Not here: answers replayed from a recording (they carry the recorded run's own record),
//! and routes whose answer is the principal's record itself (empty pointer).

use serde_json::Value;
use wraith_model::Route;

use super::{Call, Engine};
use crate::namespace::Namespace;
use crate::outbound::Origins;

impl Engine {
    /// Remember the principal's own record a 2xx answer of `route` carries (its key is kept
    /// in `Namespace::actors` by the member-effects step).
    pub(super) fn remember_actor_view(
        &self,
        ns: &mut Namespace,
        route: &Route,
        principal: &str,
        body: &Value,
    ) {
        let Some(site) = &route.actor_record else {
            return;
        };
        let pk = self.pk_of(&site.entity_type);
        let Some(view) = body.pointer(&site.pointer).filter(|v| v.get(&pk).is_some()) else {
            return;
        };
        ns.actor_views.insert(
            (principal.to_string(), site.entity_type.clone()),
            view.clone(),
        );
    }

    /// In a body rendered from `route`'s template, show the principal's record as the session
    /// last saw it at the route's `actor_record` pointer. Returns whether anything changed.
    pub(super) fn embed_actor_view(
        &self,
        ns: &Namespace,
        call: &Call<'_>,
        route: &Route,
        body: &mut Value,
        origins: &mut Origins,
    ) -> bool {
        let Some(site) = &route.actor_record else {
            return false;
        };
        if site.pointer.is_empty() {
            return false;
        }
        let Some(principal) = self.principal_of(call) else {
            return false;
        };
        let Some(Value::Object(view)) = ns.actor_views.get(&(principal, site.entity_type.clone()))
        else {
            return self.known_record_for_minted(&site.entity_type, &site.pointer, body, origins);
        };
        let Some(Value::Object(slot)) = body.pointer_mut(&site.pointer) else {
            return false;
        };
        let mut changed = false;
        for (k, v) in slot.iter_mut() {
            if let Some(seen) = view.get(k)
                && seen != v
            {
                *v = seen.clone();
                changed = true;
            }
        }
        if changed {
            // Those positions now hold a value an earlier answer gave, not one minted here.
            origins.clear_under(&site.pointer);
        }
        changed
    }

    /// The fields of the record at `pointer` that the renderer minted take the recorded values
    /// of the known record of `entity_type` the rendered one names. Returns whether anything
    /// changed.
    fn known_record_for_minted(
        &self,
        entity_type: &str,
        pointer: &str,
        body: &mut Value,
        origins: &mut Origins,
    ) -> bool {
        let Some(ty) = self.model.entity_types.get(entity_type) else {
            return false;
        };
        let Some(Value::Object(slot)) = body.pointer_mut(pointer) else {
            return false;
        };
        let Some(Value::Object(known)) = slot
            .get(&ty.primary_key)
            .and_then(crate::fixtures::scalar_key)
            .and_then(|key| ty.records.get(&key))
        else {
            return false;
        };
        let mut changed = false;
        for (k, v) in slot.iter_mut() {
            let at = format!("{pointer}/{k}");
            if origins.of(&at) != Some(crate::outbound::FieldOrigin::Minted) {
                continue;
            }
            if let Some(recorded) = known.get(k) {
                *v = recorded.clone();
                origins.clear_under(&at);
                changed = true;
            }
        }
        changed
    }
}
