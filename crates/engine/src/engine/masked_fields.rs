//! Masked fields: a list shows a field of its records as one recorded constant that no create
//! ever answered (a client secret a create answers once and every listing shows as
//! `"<REDACTED>"`), so a page listing the session's own record shows that constant too, not
//! the value the session's create answered.
//!
//! The session's record is stored as its create answered it, and a page listing it shows the
//! stored record in place of a recorded item (`list::merge_into_moment`, `list::serve_list`).
//! Where every recorded item of the list route held one constant string or boolean at a
//! top-level field (the template's item representatives, or the items of a list recorded at
//! one length, all hold it as a non-optional constant), and every create of the type that
//! answers the field answered something else there (a minted value, or another constant; never
//! that constant, never an echo of the request, never an observed value listing it), the list
//! never shows what the create answered: the page shows the constant. Not here: reads and
//! updates of one record (their answers are replayed or rendered from their own templates),
//! nested fields, numbers.

use serde_json::Value;
use wraith_model::{ArrayNode, BodyTemplate, Field, Hole, HoleKind, Model, Node, StateOp};

use crate::namespace::Namespace;
use crate::util::json_pointer_get_mut;

/// The masked fields of list route `r` (see the module doc): record key and the constant the
/// list shows there.
pub(super) fn masked_fields(model: &Model, r: usize, pk: &str) -> Vec<(String, Value)> {
    let Some(route) = model.routes.get(r) else {
        return Vec::new();
    };
    let (Some(shape), Some(ty)) = (&route.list, route.entity_type.as_deref()) else {
        return Vec::new();
    };
    // The constant every item representative of every 2xx variant holds, per key.
    let mut shown: Option<Vec<(String, Value)>> = None;
    for v in route
        .variants
        .iter()
        .filter(|v| (200..300).contains(&v.status))
    {
        let BodyTemplate::Json { root } = &v.body else {
            continue;
        };
        let Some(reps) = representatives_at(root, &shape.items_pointer) else {
            continue;
        };
        for rep in reps {
            let Node::Object { fields } = rep else {
                return Vec::new();
            };
            let consts: Vec<(String, Value)> = fields
                .iter()
                .filter(|f| !f.optional && f.key != pk)
                .filter_map(|f| match &f.value {
                    Node::Const { value } if value.is_string() || value.is_boolean() => {
                        Some((f.key.clone(), value.clone()))
                    }
                    _ => None,
                })
                .collect();
            shown = Some(match shown {
                None => consts,
                Some(prev) => prev.into_iter().filter(|c| consts.contains(c)).collect(),
            });
        }
    }
    shown
        .unwrap_or_default()
        .into_iter()
        .filter(|(key, value)| never_created(model, ty, pk, key, value))
        .collect()
}

/// Show each masked field's constant in the items of `body` (at `items_pointer`) that are the
/// session's own records of `ty`.
pub(super) fn mask_session_items(
    body: &mut Value,
    items_pointer: &str,
    ty: &str,
    pk: &str,
    ns: &Namespace,
    masked: &[(String, Value)],
) {
    let Some(store) = ns.type_store(ty) else {
        return;
    };
    let Some(Value::Array(items)) = json_pointer_get_mut(body, items_pointer) else {
        return;
    };
    for item in items.iter_mut() {
        let mine = item
            .get(pk)
            .and_then(crate::fixtures::scalar_key)
            .is_some_and(|k| store.live.contains_key(&k));
        let Value::Object(map) = item else { continue };
        if !mine {
            continue;
        }
        for (key, value) in masked {
            if let Some(slot) = map.get_mut(key) {
                *slot = value.clone();
            }
        }
    }
}

/// The item templates of the list at `pointer` in a template (keys through objects): a list's
/// representatives, or a fixed-length array's items.
fn representatives_at<'n>(root: &'n Node, pointer: &str) -> Option<&'n [Node]> {
    let mut cur = root;
    if !pointer.is_empty() {
        for token in pointer.strip_prefix('/')?.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            let Node::Object { fields } = cur else {
                return None;
            };
            cur = &fields.iter().find(|f| f.key == token)?.value;
        }
    }
    match cur {
        Node::Array(ArrayNode::List {
            representatives,
            discriminator: None,
            ..
        }) => Some(representatives),
        // One recorded length: each recorded item is a template of its own.
        Node::Array(ArrayNode::Tuple { items }) if !items.is_empty() => Some(items),
        _ => None,
    }
}

/// Whether no create of `ty` ever answered `value` at the record's field `key`, and at least
/// one answers the field: each 2xx create answer holding it holds a minted value or another
/// constant there.
fn never_created(model: &Model, ty: &str, pk: &str, key: &str, value: &Value) -> bool {
    let mut answered = false;
    let creates = model
        .routes
        .iter()
        .filter(|r| r.state_op == Some(StateOp::Create) && r.entity_type.as_deref() == Some(ty));
    for route in creates {
        for v in route
            .variants
            .iter()
            .filter(|v| (200..300).contains(&v.status))
        {
            let Some(field) =
                record_fields(&v.body, pk).and_then(|fs| fs.iter().find(|f| f.key == key))
            else {
                continue;
            };
            answered = true;
            let other = match &field.value {
                Node::Const { value: c } => c != value,
                Node::Hole(Hole {
                    source: HoleKind::Generated { .. },
                    ..
                }) => true,
                _ => false,
            };
            if !other {
                return false;
            }
        }
    }
    answered
}

/// The record's top-level fields in a create answer: the root object when it holds the
/// primary key, else the object one level down that does.
fn record_fields<'v>(body: &'v BodyTemplate, pk: &str) -> Option<&'v [Field]> {
    let BodyTemplate::Json {
        root: Node::Object { fields },
    } = body
    else {
        return None;
    };
    if fields.iter().any(|f| f.key == pk) {
        return Some(fields);
    }
    fields.iter().find_map(|f| match &f.value {
        Node::Object { fields } if fields.iter().any(|g| g.key == pk) => Some(fields.as_slice()),
        _ => None,
    })
}

impl super::Engine {
    /// Show the masked fields of list route `r` (see the module doc) in the session's own
    /// records on the page `body`.
    pub(super) fn mask_list_items(&self, ns: &Namespace, r: usize, body: &mut Value) {
        let Some(route) = self.model.routes.get(r) else {
            return;
        };
        let (Some(shape), Some(ty)) = (&route.list, route.entity_type.as_deref()) else {
            return;
        };
        if ns.type_store(ty).is_none_or(|s| s.live.is_empty()) {
            return;
        }
        let pk = self.pk_of(ty);
        let masked = masked_fields(&self.model, r, &pk);
        if !masked.is_empty() {
            mask_session_items(body, &shape.items_pointer, ty, &pk, ns, &masked);
        }
    }
}
