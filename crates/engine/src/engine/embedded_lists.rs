//! Answer arrays listing the records a request array named by key (`Route::embedded_lists`):
//! a status created (or edited) with `media_ids[]` answers, in `media_attachments`, the
//! session's uploads of those keys in the order sent, and is stored so for later reads.
//!
//! Runs on the synthesized create and update paths, for requests that sent keys there; with a
//! key the session holds no live record of, the rendered array stays (the twin does not
//! invent the record). Costs nothing on routes without the rule.

use serde_json::Value;
use wraith_model::{ArrayNode, Node, Route, Variant};

use super::{Call, Engine, entity_template};
use crate::fixtures::scalar_key;
use crate::namespace::Namespace;
use crate::util::json_pointer_get_mut;

impl Engine {
    /// Write the session's records into `record` (the created or updated record, at `ptr` in
    /// the variant's answer) where the route lists the records its request names. Returns the
    /// pointers, inside the record, it wrote.
    pub(super) fn embed_lists(
        &self,
        ns: &Namespace,
        call: &Call<'_>,
        route: &Route,
        (variant, ptr): (&Variant, Option<&str>),
        record: &mut Value,
    ) -> Vec<String> {
        let mut wrote = Vec::new();
        for rule in &route.embedded_lists {
            let Some(Value::Array(sent)) = call.body.as_ref().and_then(|b| b.pointer(&rule.field))
            else {
                continue;
            };
            let Some(keys) = sent.iter().map(scalar_key).collect::<Option<Vec<_>>>() else {
                continue;
            };
            if keys.is_empty() {
                continue;
            }
            let Some(records) = keys
                .iter()
                .map(|k| ns.entity(&rule.entity_type, k).map(|e| (*e.value).clone()))
                .collect::<Option<Vec<Value>>>()
            else {
                continue;
            };
            let shown = shown_fields(variant, ptr, &rule.at);
            let Some(slot) = json_pointer_get_mut(record, &rule.at) else {
                continue;
            };
            *slot = Value::Array(
                records
                    .into_iter()
                    .map(|mut r| {
                        // As the recorded answers embedded such records: without the fields
                        // none of them showed there (a summary of a larger record).
                        if let (Some(shown), Value::Object(map)) = (&shown, &mut r) {
                            map.retain(|k, _| shown.contains(k));
                        }
                        r
                    })
                    .collect(),
            );
            wrote.push(rule.at.clone());
        }
        wrote
    }
}

/// The field names the variant's recorded items at `at` (inside the record at `ptr`) showed;
/// `None` when the template holds no object item there.
fn shown_fields(variant: &Variant, ptr: Option<&str>, at: &str) -> Option<Vec<String>> {
    let key = at.strip_prefix('/')?.replace("~1", "/").replace("~0", "~");
    let field = entity_template(variant, ptr)?
        .iter()
        .find(|f| f.key == key)?;
    let items: &[Node] = match &field.value {
        Node::Array(ArrayNode::List {
            representatives, ..
        }) => representatives,
        Node::Array(ArrayNode::Tuple { items }) => items,
        _ => return None,
    };
    let mut names: Vec<String> = Vec::new();
    for item in items {
        if let Node::Object { fields } = item {
            for f in fields {
                if !names.contains(&f.key) {
                    names.push(f.key.clone());
                }
            }
        }
    }
    (!names.is_empty()).then_some(names)
}
