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
//! Elsewhere in a rendered create's answer, an object that names the principal's own record
//! (its primary key is the key the session saw at the principal's `actor_record`, and it
//! shares most of its field names with that view) is the same record embedded again (a
//! report's `target_account` when the principal reports its own account, a reblog of the
//! principal's own status): it shows the view too.
//!
//! A create whose answers stepped counts of that record (`Route::actor_steps`, a post's
//! author's `statuses_count`) shows them one above the view.
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
        let changed = show_view(slot, view);
        if changed {
            // Those positions now hold a value an earlier answer gave, not one minted here.
            origins.clear_under(&site.pointer);
        }
        changed
    }

    /// In a create's rendered answer that shows the principal's record as the session last saw
    /// it, step each of the route's `actor_steps` by one from that view: the session's next post
    /// shows its author's `statuses_count` one higher. Without a view the template's value
    /// stays (the count the session started from is unknown). Returns whether anything changed.
    pub(super) fn step_actor_counts(
        &self,
        ns: &Namespace,
        call: &Call<'_>,
        route: &Route,
        body: &mut Value,
    ) -> bool {
        if route.actor_steps.is_empty() {
            return false;
        }
        let Some(site) = route
            .actor_record
            .as_ref()
            .filter(|s| !s.pointer.is_empty())
        else {
            return false;
        };
        let Some(principal) = self.principal_of(call) else {
            return false;
        };
        let Some(Value::Object(view)) = ns.actor_views.get(&(principal, site.entity_type.clone()))
        else {
            return false;
        };
        let Some(Value::Object(slot)) = body.pointer_mut(&site.pointer) else {
            return false;
        };
        let mut changed = false;
        for field in &route.actor_steps {
            let Some(next) = view
                .get(field)
                .and_then(Value::as_i64)
                .and_then(|n| n.checked_add(1))
            else {
                continue;
            };
            if let Some(v) = slot.get_mut(field).filter(|v| v.is_i64()) {
                *v = Value::from(next);
                changed = true;
            }
        }
        changed
    }

    /// In a body rendered from `route`'s template, every other object naming the principal's
    /// own record (see the module doc) shows the view the session last saw of it. Returns
    /// whether anything changed.
    pub(super) fn embed_actor_view_elsewhere(
        &self,
        ns: &Namespace,
        call: &Call<'_>,
        route: &Route,
        body: &mut Value,
        origins: &mut Origins,
    ) -> bool {
        if ns.actors.is_empty() {
            return false;
        }
        let Some(principal) = self.principal_of(call) else {
            return false;
        };
        let skip = route.actor_record.as_ref().map(|s| s.pointer.as_str());
        let mut changed = false;
        for ((p, ty), key) in &ns.actors {
            if *p != principal {
                continue;
            }
            let Some(Value::Object(view)) = ns.actor_views.get(&(principal.clone(), ty.clone()))
            else {
                continue;
            };
            let pk = self.pk_of(ty);
            let mut at = Vec::new();
            find_named(body, &pk, key, view, "", skip, 0, &mut at);
            for pointer in at {
                let Some(Value::Object(slot)) = body.pointer_mut(&pointer) else {
                    continue;
                };
                if show_view(slot, view) {
                    origins.clear_under(&pointer);
                    changed = true;
                }
            }
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

/// The fields `slot` has take the view's values (a field the view lacks stays as rendered; a
/// field only the view has is not added). Returns whether anything changed.
fn show_view(
    slot: &mut serde_json::Map<String, Value>,
    view: &serde_json::Map<String, Value>,
) -> bool {
    let mut changed = false;
    for (k, v) in slot.iter_mut() {
        if let Some(seen) = view.get(k)
            && seen != v
        {
            *v = seen.clone();
            changed = true;
        }
    }
    changed
}

/// How deep below the answer's root an embedded copy is looked for.
const MAX_EMBED_DEPTH: usize = 4;

/// The pointers (JSON Pointer, escaped) of the objects under `v` whose `pk` is `key` and whose
/// field names are mostly the view's (Jaccard ≥ 60%), the root and `skip` excepted.
#[allow(clippy::too_many_arguments)]
fn find_named(
    v: &Value,
    pk: &str,
    key: &str,
    view: &serde_json::Map<String, Value>,
    at: &str,
    skip: Option<&str>,
    depth: usize,
    out: &mut Vec<String>,
) {
    if depth > MAX_EMBED_DEPTH {
        return;
    }
    match v {
        Value::Object(map) => {
            if depth > 0
                && Some(at) != skip
                && map.get(pk).and_then(crate::fixtures::scalar_key).as_deref() == Some(key)
            {
                let shared = map.keys().filter(|k| view.contains_key(*k)).count();
                let union = map.len() + view.len() - shared;
                if union > 0 && shared * 10 >= union * 6 {
                    out.push(at.to_string());
                    return;
                }
            }
            for (k, child) in map {
                let next = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                find_named(child, pk, key, view, &next, skip, depth + 1, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                find_named(
                    child,
                    pk,
                    key,
                    view,
                    &format!("{at}/{i}"),
                    skip,
                    depth + 1,
                    out,
                );
            }
        }
        _ => {}
    }
}
