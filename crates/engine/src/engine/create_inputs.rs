//! Fields a create takes from its request though no recording sent them
//! (`Route::create_inputs`): a domain created with `ttl_sec: 300` answers, and stores, 300 —
//! not the `0` every recorded create (none of which sent it) was answered.
//!
//! The sent value is taken only where it has the rendered value's JSON type: form text is
//! first read as that type (`"300"` as a number), an object is taken key by key (each key one
//! the rendered object holds, each value fitting in turn), an array whole when its items are
//! scalars of the rendered items' type, and a scalar where the rendered value was `null`. A
//! value of another shape is the API's to refuse or transform, which the recordings do not
//! show: the rendered default stays. A `null` sent is a client's unset field, not a value.

use serde_json::Value;

use crate::util;

/// Set each of `inputs` the request body sent, fitting, on the created `record`; the keys
/// taken, in `inputs` order.
pub(super) fn take<'i>(
    inputs: &'i [String],
    sent: Option<&Value>,
    record: &mut Value,
) -> Vec<&'i str> {
    let (Some(Value::Object(sent)), Value::Object(record)) = (sent, record) else {
        return Vec::new();
    };
    let mut taken = Vec::new();
    for key in inputs {
        let (Some(value), Some(slot)) = (sent.get(key), record.get_mut(key)) else {
            continue;
        };
        let mut value = value.clone();
        util::coerce_like(&mut value, slot);
        if fit(&mut value, slot) {
            *slot = value;
            taken.push(key.as_str());
        }
    }
    taken
}

/// Whether `sent` fits where `rendered` is; an object that fits is completed with the rendered
/// keys it left out, so it replaces `rendered` whole.
fn fit(sent: &mut Value, rendered: &Value) -> bool {
    match (sent, rendered) {
        (Value::Null, _) => false,
        (Value::String(_), Value::String(_) | Value::Null)
        | (Value::Number(_), Value::Number(_) | Value::Null)
        | (Value::Bool(_), Value::Bool(_) | Value::Null) => true,
        (Value::Array(items), Value::Array(like)) => items.iter().all(|item| match like.first() {
            Some(l) => scalar(item) && same_type(item, l),
            None => scalar(item),
        }),
        (Value::Object(fields), Value::Object(like)) => {
            let fits = fields.iter_mut().all(|(k, v)| {
                like.get(k).is_some_and(|l| {
                    util::coerce_like(v, l);
                    fit(v, l)
                })
            });
            if fits {
                for (k, v) in like {
                    fields.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            fits
        }
        _ => false,
    }
}

fn scalar(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_))
}

fn same_type(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::json;

    use super::*;

    fn inputs(keys: &[&str]) -> Vec<String> {
        keys.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn a_sent_value_of_the_rendered_type_is_taken() {
        let mut record =
            json!({"id": 7, "ttl_sec": 0, "tags": [], "description": "", "service": null});
        let sent =
            json!({"ttl_sec": 300, "tags": ["a"], "description": "d", "service": "_sip", "id": 9});
        let keys = inputs(&["description", "service", "tags", "ttl_sec"]);
        let taken = take(&keys, Some(&sent), &mut record);
        assert_eq!(taken, ["description", "service", "tags", "ttl_sec"]);
        assert_eq!(
            record,
            json!({"id": 7, "ttl_sec": 300, "tags": ["a"], "description": "d", "service": "_sip"})
        );
    }

    #[test]
    fn form_text_is_read_as_the_rendered_type() {
        let mut record = json!({"ttl_sec": 0, "locked": false});
        let sent = json!({"ttl_sec": "300", "locked": "true"});
        take(&inputs(&["locked", "ttl_sec"]), Some(&sent), &mut record);
        assert_eq!(record, json!({"ttl_sec": 300, "locked": true}));
    }

    #[test]
    fn a_value_of_another_shape_leaves_the_default() {
        let mut record = json!({
            "ttl_sec": 0,
            "tags": [],
            "options": [{"title": "a", "votes": 0}],
            "alerts": {"cpu": 90, "io": 10000},
            "note": "x"
        });
        let before = record.clone();
        let sent = json!({
            "ttl_sec": "soon",
            "tags": [{"name": "a"}],
            "options": ["b"],
            "alerts": {"cpu": 80, "disk": 1},
            "note": null
        });
        let keys = inputs(&["alerts", "note", "options", "tags", "ttl_sec"]);
        assert!(take(&keys, Some(&sent), &mut record).is_empty());
        assert_eq!(record, before);
    }

    #[test]
    fn an_object_is_taken_key_by_key_and_keeps_the_keys_it_left_out() {
        let mut record = json!({"alerts": {"cpu": 90, "io": 10000}});
        let sent = json!({"alerts": {"cpu": "80"}});
        take(&inputs(&["alerts"]), Some(&sent), &mut record);
        assert_eq!(record, json!({"alerts": {"cpu": 80, "io": 10000}}));
    }

    #[test]
    fn only_the_learned_inputs_are_taken() {
        let mut record = json!({"status": "active", "ttl_sec": 0});
        let sent = json!({"status": "disabled", "ttl_sec": 5});
        take(&inputs(&["ttl_sec"]), Some(&sent), &mut record);
        assert_eq!(record, json!({"status": "active", "ttl_sec": 5}));
    }
}
