//! Records a create names by value (`Route::records_by_value`): an issue created with
//! `labels: ["bug", "slow"]` answers the session's label records of its repository whose
//! `name` is each value, and creates the ones the repository lacks (a fresh key, the name and
//! the recorded defaults), so later lists of labels show them.
//!
//! "Of its repository" is: stored by a create under the same path values as this one. A
//! record the session does not hold (a fixture, the model's recorded records) is not found by
//! value, so one is created beside it.
//!
//! Not here: a value that is not text, a request that sends no array there (the array renders
//! as before).

use serde_json::{Map, Value};
use wraith_model::{RecordsByValue, Route, SegmentMember};

use super::{Call, Engine};
use crate::fixtures::scalar_key;
use crate::namespace::{Namespace, Origin};

impl Engine {
    /// Write into the created `record`, at each rule's array, the records its request names
    /// by value, creating those the session lacks. Returns the pointers (inside the record)
    /// written.
    pub(super) fn list_records_by_value(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        route: &Route,
        record: &mut Value,
    ) -> Vec<String> {
        let mut written = Vec::new();
        for rule in &route.records_by_value {
            let Some(sent) = call
                .body
                .as_ref()
                .and_then(|b| b.pointer(&rule.field))
                .and_then(Value::as_array)
            else {
                continue;
            };
            let Some(values) = sent
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<String>>>()
            else {
                continue;
            };
            let mut items = Vec::with_capacity(values.len());
            for value in &values {
                match self.record_by_value(ns, call, rule, value) {
                    Some(item) => items.push(item),
                    None => break,
                }
            }
            if items.len() != values.len() {
                continue;
            }
            let Some(slot) = slot_at(record, &rule.at) else {
                continue;
            };
            *slot = Value::Array(items);
            written.push(rule.at.clone());
        }
        written
    }

    /// The session's record of the rule's type under the call's path values whose `by` field
    /// holds `value`; created (and stored) when there is none. `None` when no key can be minted.
    fn record_by_value(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        rule: &RecordsByValue,
        value: &str,
    ) -> Option<Value> {
        let parents: Vec<String> = call.m.params.iter().map(|(_, v)| v.clone()).collect();
        let ty = rule.entity_type.as_str();
        if let Some(held) = held_by_value(ns, rule, &parents, value) {
            return Some(held);
        }
        let pk = self.pk_of(ty);
        let key = self.fresh_key(ns, ty, &Value::from(0))?;
        let id = scalar_key(&key)?;
        let mut created = Map::new();
        created.insert(pk, key);
        created.insert(rule.by.clone(), Value::String(value.to_string()));
        for (k, v) in &rule.defaults {
            created.insert(k.clone(), v.clone());
        }
        let created = Value::Object(created);
        ns.put(ty, &id, created.clone(), Origin::Synthesized, Some(parents));
        ns.note_creator(ty, &id, self.principal_of(call));
        Some(created)
    }

    /// The session's record a segment member named `value` is: of the type a create of the
    /// member's record type names by value in that array, stored under `parents` with the
    /// value at the field it is named by (a label an issue's path adds by its name).
    pub(super) fn member_by_value(
        &self,
        ns: &Namespace,
        member: &SegmentMember,
        parents: &[String],
        value: &str,
    ) -> Option<Value> {
        let rule = self.model.members_named_by_value(member)?;
        held_by_value(ns, rule, parents, value)
    }
}

/// The session's record of the rule's type stored under `parents` whose `by` field holds
/// `value`.
fn held_by_value(
    ns: &Namespace,
    rule: &RecordsByValue,
    parents: &[String],
    value: &str,
) -> Option<Value> {
    let store = ns.type_store(&rule.entity_type)?;
    store
        .live
        .values()
        .find(|e| {
            e.parents.as_deref() == Some(parents)
                && e.value.get(&rule.by).and_then(Value::as_str) == Some(value)
        })
        .map(|e| (*e.value).clone())
}

/// The value at `pointer` in `record`, made (as `null`) when its parent object lacks it.
fn slot_at<'v>(record: &'v mut Value, pointer: &str) -> Option<&'v mut Value> {
    let (parent, last) = pointer.rsplit_once('/')?;
    let last = last.replace("~1", "/").replace("~0", "~");
    let Value::Object(map) = (if parent.is_empty() {
        record
    } else {
        record.pointer_mut(parent)?
    }) else {
        return None;
    };
    Some(map.entry(last).or_insert(Value::Null))
}
