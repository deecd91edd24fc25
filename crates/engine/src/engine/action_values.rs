//! Values an action takes from its request (`Route::action_values`): after a 2xx answer of an
//! action route, the record its path names stores the request's value of each learned field,
//! so the session's later reads show what it sent (a volume attached to the instance it named,
//! resized to the size it asked for), whatever the action answered; a field the action
//! clears (an empty `from`) stores `null`.

use serde_json::Value;

use super::{Call, Engine};
use crate::namespace::{Namespace, Origin};

impl Engine {
    /// Store the values the call's route takes from its request into the records its path
    /// names, as the session sees them. A request without the field, or a record the session
    /// cannot see, changes nothing.
    pub(super) fn apply_action_values(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        status: u16,
        origin: Origin,
    ) {
        let taken = &self.model.routes[call.m.route].action_values;
        if taken.is_empty() || !(200..300).contains(&status) || call.head {
            return;
        }
        let body = call.body.as_ref().unwrap_or(&Value::Null);
        for t in taken {
            let Some(id) = call
                .m
                .params
                .iter()
                .find(|(n, _)| *n == t.id_param)
                .map(|(_, v)| v.as_str())
            else {
                continue;
            };
            // An empty `from`: the action clears the field.
            let sent = if t.from.is_empty() {
                &Value::Null
            } else {
                match body.pointer(&t.from) {
                    Some(v @ (Value::String(_) | Value::Number(_))) => v,
                    _ => continue,
                }
            };
            let ty = t.entity_type.as_str();
            let Some(mut entity) = self.base_entity(ns, ty, id) else {
                continue;
            };
            let Value::Object(map) = &mut entity else {
                continue;
            };
            // A form string stands for the number the record holds there.
            let value = match (map.get(&t.field), sent) {
                (Some(Value::Number(_)), Value::String(s)) => {
                    crate::util::parse_number(s).unwrap_or_else(|| sent.clone())
                }
                _ => sent.clone(),
            };
            if map.get(&t.field) == Some(&value) {
                continue;
            }
            map.insert(t.field.clone(), value);
            super::put_acted(ns, ty, id, entity, origin);
        }
    }
}
