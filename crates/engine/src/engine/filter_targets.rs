//! A recorded list page replayed for a filter document that names one of the session's records
//! at a nested field (`X-Filter: {"action": "database_create", "entity.id": 227301}`: an event
//! feed polled for the record the session just created), where the page names another record
//! of the same type there. The recorded request named its own run's record and the page
//! answered that one; replayed as is, a client waiting for its record's event (linodego's
//! `WaitForEventFinished`) is shown another record's and waits forever.
//!
//! The page's items naming that record stand for the session's: the reference is renamed to
//! the session's key, its fields holding the recorded record's values (its `label`) take the
//! session's record's, and its strings embedding the recorded key as a whole token (a `url`)
//! embed the session's. Only when
//! - the field is nested (a dotted key): a top-level one is the item's own attribute;
//! - its last segment is the primary key of the type of a record the session created with
//!   that key (one type only);
//! - no item on the page names the session's record there already;
//! - the item meets every other equality condition of the document;
//! - the named value is a record of that type the model recorded, so the page's reference is
//!   to one of that type's records.
//!
//! Only the first recorded record so named is renamed; items naming others stay as recorded.
//! A page none of whose items meets the rest of the document (the session's position picked
//! a page of `database_create` events for a `linode_create` poll) is replaced by the first
//! recorded page of the route that has one, keeping only the items the document asks for. An
//! empty page stays empty: the recordings answered polls before the event existed so.
//! Not here: the template path (`list::serve_list`), which keeps only the items matching the
//! document.

use serde_json::{Map, Value};

use wraith_model::{EnvelopeMeaning, RecordedBody};

use super::{Call, Engine, Out, OutBody};
use crate::embedded_counterparts;
use crate::fixtures::scalar_key;
use crate::list::{filter_field, meets_condition};
use crate::namespace::Namespace;
use crate::util::json_pointer_get_mut;

impl Engine {
    /// See the module documentation.
    pub(super) fn retarget_filtered_items(&self, ns: &Namespace, call: &Call<'_>, out: &mut Out) {
        if !(200..300).contains(&out.status) {
            return;
        }
        let route = &self.model.routes[call.m.route];
        let Some(shape) = &route.list else {
            return;
        };
        let Some(doc) = shape
            .filter_header
            .as_deref()
            .and_then(|h| call.req.header(h))
            .and_then(|h| serde_json::from_str::<Value>(h).ok())
        else {
            return;
        };
        let Value::Object(conds) = doc else {
            return;
        };
        for (field, want) in &conds {
            let Some((parent, leaf)) = field.rsplit_once('.') else {
                continue;
            };
            if field.starts_with('+') {
                continue;
            }
            let Some(mine) = scalar_key(want) else {
                continue;
            };
            let Some((ty, record)) = ns.created_record(&mine) else {
                continue;
            };
            if self.pk_of(ty) != leaf {
                continue;
            }
            let mut only_matching = false;
            let Some(recorded) = self.model.entity_types.get(ty).map(|et| &et.records) else {
                continue;
            };
            let others_hold = |item: &Value| {
                conds
                    .iter()
                    .all(|(k, v)| k == field || meets_condition(item, k, v))
            };
            let named = |item: &Value| filter_field(item, field).and_then(scalar_key);
            // The recorded record the page's items name (the first meeting the rest of the
            // document): on the page served, else on the first recorded page of the route that
            // has one, which is served instead (the page served was for another kind of item).
            let names_theirs = |items: &[Value]| {
                items
                    .iter()
                    .filter(|it| others_hold(it))
                    .filter_map(named)
                    .find(|k| recorded.contains_key(k))
            };
            let theirs = {
                let Some(Value::Array(items)) = out
                    .body
                    .json()
                    .and_then(|b| b.pointer(&shape.items_pointer).cloned())
                else {
                    continue;
                };
                if items
                    .iter()
                    .any(|it| named(it).as_deref() == Some(mine.as_str()))
                {
                    continue;
                }
                match names_theirs(&items) {
                    Some(theirs) => theirs,
                    // An empty page is an answer of its own: no such item yet.
                    None if items.is_empty() => continue,
                    None => {
                        let wanted: Vec<&str> = conds
                            .iter()
                            .filter(|(k, _)| *k != field && !k.starts_with('+'))
                            .filter_map(|(_, v)| v.as_str())
                            .collect();
                        let Some((page, source, theirs)) = self.page_naming(
                            call.m.route,
                            &shape.items_pointer,
                            &wanted,
                            |items| names_theirs(items),
                        ) else {
                            continue;
                        };
                        out.body = OutBody::Json(page);
                        out.exchange = Some(source);
                        only_matching = true;
                        theirs
                    }
                }
            };
            let Some(their_record) = recorded.get(&theirs) else {
                continue;
            };
            out.body.materialize();
            let OutBody::Json(body) = &mut out.body else {
                return;
            };
            let Some(Value::Array(items)) = json_pointer_get_mut(body, &shape.items_pointer) else {
                continue;
            };
            let parent_keys: Vec<&str> = parent.split('.').collect();
            let mut changed = false;
            for item in items.iter_mut() {
                if !others_hold(item) || named(item).as_deref() != Some(theirs.as_str()) {
                    continue;
                }
                let Some(Value::Object(reference)) = parent_keys
                    .iter()
                    .try_fold(&mut *item, |v, k| v.get_mut(*k))
                else {
                    continue;
                };
                rename_reference(reference, leaf, &theirs, &mine, their_record, record);
                changed = true;
            }
            if only_matching {
                // A page recorded for other records: only the items the document asks for.
                let before = items.len();
                items.retain(|it| others_hold(it) && named(it).as_deref() == Some(mine.as_str()));
                let after = items.len();
                for f in &shape.envelope {
                    if f.meaning == EnvelopeMeaning::Total
                        && let Some(slot) = json_pointer_get_mut(body, &f.pointer)
                        && slot.as_u64() == Some(before as u64)
                    {
                        *slot = Value::from(after);
                    }
                }
            }
            if changed {
                // No longer the recorded bytes.
                out.replay = None;
            }
        }
    }
}

impl Engine {
    /// The first recorded JSON answer of route `r` (in model order) whose text holds every
    /// string in `wanted` (quoted) and whose items at `items_pointer` `pick` names a record in:
    /// the page, its source and the record.
    fn page_naming(
        &self,
        r: usize,
        items_pointer: &str,
        wanted: &[&str],
        pick: impl Fn(&[Value]) -> Option<String>,
    ) -> Option<(Value, String, String)> {
        let quoted: Vec<String> = wanted
            .iter()
            .map(|w| Value::String((*w).to_string()).to_string())
            .collect();
        for entry in &self.model.routes[r].exact {
            for moment in &entry.moments {
                if !(200..300).contains(&moment.status) {
                    continue;
                }
                let RecordedBody::Json { value } = &moment.body else {
                    continue;
                };
                let text = value.as_str();
                if !quoted.iter().all(|q| text.contains(q.as_str())) {
                    continue;
                }
                let Ok(page) = value.parse() else {
                    continue;
                };
                let Some(Value::Array(items)) = page.pointer(items_pointer) else {
                    continue;
                };
                if let Some(theirs) = pick(items) {
                    return Some((page, moment.source.clone(), theirs));
                }
            }
        }
        None
    }
}

/// Rename the embedded reference `reference` from the recorded record `theirs` (recorded as
/// `their_record`) to the session's `mine` (stored as `record`): the key (keeping its JSON
/// type), each field holding the recorded record's value there (the session's record's
/// value), and each whole-token occurrence of the recorded key in a string.
fn rename_reference(
    reference: &mut Map<String, Value>,
    pk: &str,
    theirs: &str,
    mine: &str,
    their_record: &Value,
    record: &Value,
) {
    for (k, v) in reference.iter_mut() {
        if k == pk {
            *v = match (&*v, record.get(pk)) {
                (_, Some(stored)) => stored.clone(),
                (Value::Number(_), None) => mine
                    .parse::<serde_json::Number>()
                    .map_or_else(|_| Value::String(mine.to_string()), Value::Number),
                _ => Value::String(mine.to_string()),
            };
            continue;
        }
        if let (Some(was), Some(now)) = (their_record.get(k), record.get(k))
            && was == v
        {
            *v = now.clone();
            continue;
        }
        embedded_counterparts::rename_tokens(v, theirs, mine);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::rename_reference;

    fn renamed(reference: Value, their_record: Value, record: Value) -> Value {
        let Value::Object(mut map) = reference else {
            panic!("object expected")
        };
        rename_reference(&mut map, "id", "227300", "391081", &their_record, &record);
        Value::Object(map)
    }

    #[test]
    fn the_key_the_recorded_records_fields_and_embedded_keys_name_the_sessions_record() {
        let got = renamed(
            json!({"id": 227300, "label": "go-db", "type": "database",
                   "url": "/v4/databases/227300", "note": "227300x"}),
            json!({"id": 227300, "label": "go-db"}),
            json!({"id": 391081, "label": "mine"}),
        );
        assert_eq!(
            got,
            json!({"id": 391081, "label": "mine", "type": "database",
                   "url": "/v4/databases/391081", "note": "227300x"})
        );
    }

    #[test]
    fn a_field_the_recorded_record_held_otherwise_keeps_the_recorded_value() {
        // The event's label is of another moment than the record's latest recorded state.
        let got = renamed(
            json!({"id": "227300", "label": "old-name"}),
            json!({"id": "227300", "label": "new-name"}),
            json!({"label": "mine"}),
        );
        assert_eq!(got, json!({"id": "391081", "label": "old-name"}));
    }
}
