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
use crate::fixtures;
use crate::namespace::Namespace;
use crate::outbound::Origins;

impl Engine {
    /// Remember the principal's own record a 2xx answer of `route` carries (its key is kept
    /// in `Namespace::actors` by the member-effects step), and which of its fields an answer
    /// the twin rendered (not replayed) changed (`Namespace::actor_views_made`): the values a
    /// rendered answer that is the record echoed from its request. (Not the counts a rendered
    /// create stepped: they step from whichever run's record the session's first replayed
    /// answer showed, which the replayed "who am I" read need not share.)
    ///
    /// An answer that is the record itself (an empty pointer: a "who am I" read, a profile
    /// update) carries more fields than the record shows where other answers embed it (a
    /// credential account's `source`), so it only updates the fields of the view the session
    /// holds, or, before any, of the record the recordings hold under its key; a rendered one,
    /// once the session holds a view, only with the values it echoed (its other values are the
    /// template's, not the record's).
    pub(super) fn remember_actor_view(
        &self,
        ns: &mut Namespace,
        route: &Route,
        principal: &str,
        out: &super::Out,
    ) {
        let Some(site) = &route.actor_record else {
            return;
        };
        let Some(body) = out.body.json() else {
            return;
        };
        let pk = self.pk_of(&site.entity_type);
        let Some(view) = body.pointer(&site.pointer).filter(|v| v.get(&pk).is_some()) else {
            return;
        };
        let made = out.provenance == crate::Provenance::Template;
        let at = (principal.to_string(), site.entity_type.clone());
        let key = view.get(&pk);
        let held = ns.actor_views.get(&at).filter(|held| held.get(&pk) == key);
        let mut changed: Vec<String> = Vec::new();
        let view = if site.pointer.is_empty() {
            // A rendered answer's values other than its echoes are the template's: they say
            // nothing of a record the session already holds, but are all there is before.
            let seen = held.is_some();
            let held = held.or_else(|| {
                self.model
                    .entity_types
                    .get(&site.entity_type)?
                    .records
                    .get(&fixtures::scalar_key(key?)?)
            });
            let (Some(Value::Object(held)), Value::Object(answer)) = (held, view) else {
                return;
            };
            let mut merged = held.clone();
            for (k, slot) in merged.iter_mut() {
                let Some(v) = answer.get(k) else { continue };
                if made
                    && out.origins.of(&format!("/{k}")) == Some(crate::outbound::FieldOrigin::Echo)
                {
                    *slot = v.clone();
                    changed.push(k.clone());
                } else if !made || !seen {
                    *slot = v.clone();
                }
            }
            Value::Object(merged)
        } else {
            view.clone()
        };
        ns.actor_views.insert(at.clone(), view);
        if !changed.is_empty() {
            ns.actor_views_made.entry(at).or_default().extend(changed);
        }
    }

    /// An answer that is the acting principal's record itself (`actor_record` with an empty
    /// pointer: `GET /api/v1/accounts/verify_credentials`, `PATCH …/update_credentials`) shows
    /// the record the session holds of it (`Namespace::actor_views`):
    /// - rendered from the route's template, in every field it did not echo from its request:
    ///   the template's representative is whichever record the recordings showed most (another
    ///   key, another state), not the principal's. Before the session saw the record, only the
    ///   values the renderer minted (a generated key) take those of the record the recordings
    ///   hold for the request's credential ([`Self::recorded_own_record`]): its other recorded
    ///   values may be older than the template's;
    /// - replayed, in the fields the session changed itself (`Namespace::actor_views_made`: a
    ///   rendered profile update echoed its `display_name`), where the moment is the same
    ///   record. The rest is the moment's own: a record only replayed answers showed is the
    ///   recorded run's, as the replayed answer is.
    ///
    /// Returns whether anything changed.
    pub(super) fn show_own_record(
        &self,
        ns: &Namespace,
        call: &Call<'_>,
        out: &mut super::Out,
    ) -> bool {
        let route = &self.model.routes[call.m.route];
        let Some(site) = route.actor_record.as_ref().filter(|s| s.pointer.is_empty()) else {
            return false;
        };
        if !(200..300).contains(&out.status) {
            return false;
        }
        let Some(principal) = self.principal_of(call) else {
            return false;
        };
        let at = (principal, site.entity_type.clone());
        let rendered = out.provenance == crate::Provenance::Template;
        let recorded;
        let seeded = !ns.actor_views.contains_key(&at);
        let view = match ns.actor_views.get(&at) {
            Some(Value::Object(view)) => view,
            Some(_) => return false,
            None if rendered => match self.recorded_own_record(call, &site.entity_type) {
                Some(Value::Object(record)) => {
                    recorded = record;
                    &recorded
                }
                _ => return false,
            },
            None => return false,
        };
        let made = ns.actor_views_made.get(&at);
        if !rendered && made.is_none() {
            return false;
        }
        let pk = self.pk_of(&site.entity_type);
        let same_record = out
            .body
            .json()
            .is_some_and(|b| b.get(&pk).is_some() && b.get(&pk) == view.get(&pk));
        if !rendered && !same_record {
            return false;
        }
        out.body.materialize();
        let super::OutBody::Json(Value::Object(answer)) = &mut out.body else {
            return false;
        };
        let mut changed = false;
        for (field, slot) in answer.iter_mut() {
            let origin = || out.origins.of(&format!("/{field}"));
            let shown = if seeded {
                origin() == Some(crate::outbound::FieldOrigin::Minted)
            } else if rendered {
                origin() != Some(crate::outbound::FieldOrigin::Echo)
            } else {
                made.is_some_and(|m| m.contains(field))
            };
            if let Some(v) = view.get(field).filter(|v| shown && *v != slot) {
                *slot = v.clone();
                changed = true;
            }
        }
        if changed {
            out.replay = None;
            if rendered {
                // Those positions now hold the record's values, not ones minted here.
                for field in view.keys() {
                    if out.origins.of(&format!("/{field}"))
                        == Some(crate::outbound::FieldOrigin::Minted)
                    {
                        out.origins.clear_under(&format!("/{field}"));
                    }
                }
            }
        }
        changed
    }

    /// The record of `entity_type` the recordings hold under the key an answer that is the
    /// principal's record itself showed for the request's credential (the first such recorded
    /// moment of any such route): what a rendered answer shows before the session saw the
    /// record.
    fn recorded_own_record(&self, call: &Call<'_>, entity_type: &str) -> Option<Value> {
        let principal = call.principal.as_deref()?;
        let pk = self.pk_of(entity_type);
        let records = &self.model.entity_types.get(entity_type)?.records;
        self.model
            .routes
            .iter()
            .filter(|r| {
                r.actor_record
                    .as_ref()
                    .is_some_and(|s| s.pointer.is_empty() && s.entity_type == entity_type)
            })
            .flat_map(|r| r.exact.iter().flat_map(|e| e.moments.iter()))
            .filter(|m| (200..300).contains(&m.status) && m.principal.as_deref() == Some(principal))
            .find_map(|m| match &m.body {
                wraith_model::RecordedBody::Json { value } => {
                    let body: Value = value.parse().ok()?;
                    records.get(&fixtures::scalar_key(body.get(&pk)?)?).cloned()
                }
                _ => None,
            })
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
