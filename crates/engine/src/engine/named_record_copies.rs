//! Creates and actions that answer fields of the record a request field or path parameter
//! names (`Route::named_record_copies`): an instance created with `type: g6-standard-2`
//! answers that plan's `memory` and `vcpus`, as the session sees the plan or, failing that,
//! as the recordings hold it (a catalogue listed every plan, though creates chose few). An
//! action (attaching a volume to an instance) fills the acted-on record the same way, and the
//! engine stores it (`apply_action_effect`). An address allocated under an instance answers
//! the instance's `region`, named by the path.
//!
//! Not here: a request naming no record the session or the recordings hold keeps the rendered
//! values; a position the template did not render is not added.

use serde_json::Value;

use super::{Call, Engine};
use crate::fixtures;
use crate::namespace::Namespace;
use crate::util::json_pointer_get_mut;

impl Engine {
    /// Fill the created `entity`'s positions the rule copies from the named record; the
    /// positions filled (JSON pointers within the entity).
    pub(super) fn copy_named_record_fields(
        &self,
        ns: &Namespace,
        call: &Call<'_>,
        route: &wraith_model::Route,
        entity: &mut Value,
    ) -> Vec<String> {
        let Some(rule) = &route.named_record_copies else {
            return Vec::new();
        };
        let key = match &rule.param {
            Some(param) => call
                .m
                .params
                .iter()
                .find(|(n, _)| n == param)
                .map(|(_, v)| v.clone()),
            None => call
                .body
                .as_ref()
                .and_then(|b| b.get(&rule.field))
                .and_then(fixtures::scalar_key),
        };
        let Some(key) = key else {
            return Vec::new();
        };
        let stored = ns.entity(&rule.entity_type, &key).map(|e| e.value.clone());
        let record = match &stored {
            Some(v) => Some(&**v),
            None => self
                .model
                .entity_types
                .get(&rule.entity_type)
                .and_then(|t| t.records.get(&key)),
        };
        let Some(record) = record else {
            return Vec::new();
        };
        let mut filled = Vec::new();
        for copy in &rule.copies {
            if let Some(held) = copy.held_in(record)
                && let Some(slot) = json_pointer_get_mut(entity, &copy.at)
            {
                *slot = held.clone();
                filled.push(copy.at.clone());
            }
        }
        filled
    }
}
