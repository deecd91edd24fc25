//! Action effects seen only in a later read (`ActionEffect::sets`): an action whose answer
//! does not carry the entity (`{}`) still changes it, and the recordings' next read of the
//! entity showed which fields, per value of one request body field. The engine stores those
//! fields into the session's record (a nested object's changed fields inside the record's
//! object there), so the session's later reads show them.

use serde_json::Value;
use wraith_model::ActionEffect;

use super::{Call, Engine};
use crate::fixtures;
use crate::namespace::{Namespace, Origin};

impl Engine {
    /// Store the fields `action.sets` names for this request into the session's record of
    /// entity `id` (as the session sees it). A request whose keying value the recordings never
    /// showed changes nothing.
    pub(super) fn apply_action_sets(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        action: &ActionEffect,
        id: &str,
        origin: Origin,
    ) {
        let value = if action.set_by.is_empty() {
            Some(String::new())
        } else {
            call.body
                .as_ref()
                .and_then(|b| b.pointer(&action.set_by))
                .and_then(fixtures::scalar_key)
        };
        let Some(set) = value.and_then(|v| action.sets.get(&v)) else {
            return;
        };
        let ty = action.entity_type.as_str();
        let Some(mut entity) = self.base_entity(ns, ty, id) else {
            // No record to change yet: the next read of it shows the fields.
            if ns.is_deleted(ty, id).is_none() {
                let pending = ns
                    .pending_sets
                    .entry((ty.to_string(), id.to_string()))
                    .or_default();
                for (f, v) in set {
                    set_field(pending, f, v);
                }
            }
            return;
        };
        let Value::Object(map) = &mut entity else {
            return;
        };
        let mut changed = false;
        for (f, v) in set {
            changed |= set_field(map, f, v);
        }
        if !changed {
            return;
        }
        super::put_acted(ns, ty, id, entity, origin);
    }
}

/// Overlay the fields pending for entity `(ty, id)` (see `Namespace::pending_sets`) on a
/// rendered record; `true` when there were any (they are then consumed).
pub(super) fn take_pending_sets(
    ns: &mut Namespace,
    ty: &str,
    id: &str,
    record: &mut Value,
) -> bool {
    let Value::Object(map) = record else {
        return false;
    };
    let Some(pending) = ns.pending_sets.remove(&(ty.to_string(), id.to_string())) else {
        return false;
    };
    for (f, v) in &pending {
        set_field(map, f, v);
    }
    true
}

/// Set field `f` of a record to `v`; `true` when that changed it. An object value holds only
/// the nested fields the action changed (`backups: {"enabled": true}`): those are set inside
/// the record's object there, its other fields kept; any other value replaces the field.
fn set_field(map: &mut serde_json::Map<String, Value>, f: &str, v: &Value) -> bool {
    match (map.get_mut(f), v) {
        (Some(Value::Object(inner)), Value::Object(nested)) => {
            let mut changed = false;
            for (k, x) in nested {
                changed |= set_field(inner, k, x);
            }
            changed
        }
        (Some(old), _) if old == v => false,
        _ => {
            map.insert(f.to_string(), v.clone());
            true
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn record(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_nested_set_changes_only_its_fields_inside_the_records_object() {
        let mut r = record(json!({
            "status": "offline",
            "backups": {"enabled": false, "schedule": {"day": null, "hour": 2}, "kept": 3},
        }));
        assert!(set_field(&mut r, "status", &json!("running")));
        assert!(!set_field(&mut r, "status", &json!("running")));
        assert!(set_field(
            &mut r,
            "backups",
            &json!({"enabled": true, "schedule": {"day": "Sunday"}}),
        ));
        assert!(!set_field(
            &mut r,
            "backups",
            &json!({"schedule": {"hour": 2}})
        ));
        assert_eq!(
            Value::Object(r),
            json!({
                "status": "running",
                "backups": {"enabled": true, "schedule": {"day": "Sunday", "hour": 2}, "kept": 3},
            })
        );
    }

    #[test]
    fn a_nested_set_where_the_record_holds_no_object_is_written_whole() {
        let mut r = record(json!({"backups": null}));
        set_field(&mut r, "backups", &json!({"enabled": true}));
        set_field(&mut r, "absent", &json!({"on": true}));
        assert_eq!(
            Value::Object(r),
            json!({"backups": {"enabled": true}, "absent": {"on": true}})
        );
    }
}
