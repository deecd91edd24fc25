//! Masked fields: a list shows a field of its records as one recorded constant that no create
//! ever answered (a client secret a create answers once and every listing shows as
//! `"<REDACTED>"`), so a page listing the session's own record shows that constant too, not
//! the value the session's create answered.
//!
//! The session's record is stored as its create answered it, and a page listing it shows the
//! stored record in place of a recorded item (`list::merge_into_moment`, `list::serve_list`).
//! Where every recorded item of the list route held one constant at a top-level field (a
//! string or boolean, or an object of them: the template's item representatives, or the items
//! of a list recorded at one length, all hold it as a non-optional constant), and every create
//! of the type that answers the field answered something else there (a minted value, or another
//! constant: flags a create answers as `0` and every listing as `false`; never that constant,
//! never an echo of the request, never an observed value listing it), the list never shows
//! what the create answered: the page shows the constant. Not here: reads and updates of one
//! record (their answers are replayed or rendered from their own templates), numbers and lists
//! (data of the records listed).

use serde_json::Value;
use wraith_model::{ArrayNode, Hole, HoleKind, IdCharset, IdShape, Model, Node};

use super::settle::{create_answers, record_fields};
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
    for root in route.success_json_roots() {
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
                .filter_map(|f| Some((f.key.clone(), shown_constant(&f.value)?)))
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

/// The constant a list shows at a field: a string or boolean, or an object of such constants
/// at every depth (a record's feature flags, `{"nginx": false}`); numbers and lists are data of
/// the records listed, not a masked state.
fn shown_constant(node: &Node) -> Option<Value> {
    match node {
        Node::Const { value } if value.is_string() || value.is_boolean() => Some(value.clone()),
        Node::Object { fields } if !fields.is_empty() => {
            let mut map = serde_json::Map::new();
            for f in fields {
                if f.optional {
                    return None;
                }
                map.insert(f.key.clone(), shown_constant(&f.value)?);
            }
            Some(Value::Object(map))
        }
        _ => None,
    }
}

/// Whether `value` could be minted by `shape` (a derived value is assumed to be).
pub(super) fn minted_shape(shape: &IdShape, value: &Value) -> bool {
    let in_charset = |s: &str, charset: &IdCharset| {
        s.chars().all(|c| match charset {
            IdCharset::Digits => c.is_ascii_digit(),
            IdCharset::Hex => c.is_ascii_digit() || ('a'..='f').contains(&c),
            IdCharset::UpperAlnum => c.is_ascii_digit() || c.is_ascii_uppercase(),
            IdCharset::LowerAlnum => c.is_ascii_digit() || c.is_ascii_lowercase(),
            IdCharset::Base62 => c.is_ascii_alphanumeric(),
            IdCharset::Base64Url => c.is_ascii_alphanumeric() || c == '-' || c == '_',
        })
    };
    match (shape, value) {
        (IdShape::Integer { .. }, Value::Number(_)) => true,
        (IdShape::Integer { as_string, .. }, Value::String(s)) => {
            *as_string && !s.is_empty() && s.chars().all(|c| c.is_ascii_digit())
        }
        (IdShape::Derived { .. }, _) => true,
        (_, Value::String(s)) => match shape {
            IdShape::Token {
                prefix,
                charset,
                length,
            } => s
                .strip_prefix(prefix.as_str())
                .is_some_and(|rest| rest.chars().count() == *length && in_charset(rest, charset)),
            IdShape::Uuid => {
                let groups: Vec<&str> = s.split('-').collect();
                groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
                    && groups.iter().all(|g| in_charset(g, &IdCharset::Hex))
            }
            IdShape::Grouped { charset, groups } => {
                let parts: Vec<&str> = s.split('-').collect();
                parts.iter().map(|g| g.len()).eq(groups.iter().copied())
                    && parts.iter().all(|g| in_charset(g, charset))
            }
            IdShape::Integer { .. } | IdShape::Derived { .. } => true,
        },
        _ => false,
    }
}

/// The value a template subtree always renders: constants, and objects of them.
fn constant_of(node: &Node) -> Option<Value> {
    match node {
        Node::Const { value } => Some(value.clone()),
        Node::Object { fields } => {
            let mut map = serde_json::Map::new();
            for f in fields {
                if f.optional {
                    return None;
                }
                map.insert(f.key.clone(), constant_of(&f.value)?);
            }
            Some(Value::Object(map))
        }
        _ => None,
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
/// one answers the field: each 2xx create answer holding it holds a minted value, another
/// constant, or observed values that are all recorded (not cut) and none of them `value`.
fn never_created(model: &Model, ty: &str, pk: &str, key: &str, value: &Value) -> bool {
    let mut answered = false;
    for v in create_answers(model, ty) {
        let Some(field) = record_fields(v, pk).and_then(|fs| fs.iter().find(|f| f.key == key))
        else {
            continue;
        };
        answered = true;
        let other = match &field.value {
            // A value of the minted shape may be one record's own (a single recorded page
            // lists the one record its run created): only a value no mint could give masks.
            Node::Hole(Hole {
                source: HoleKind::Generated { shape },
                ..
            }) => !minted_shape(shape, value),
            // Values the creates answered, kept in full: masking when none was the constant
            // (secrets the recordings hold scrubbed are told apart only as observed values).
            Node::Hole(
                h @ Hole {
                    source: HoleKind::Observed,
                    ..
                },
            ) => {
                !h.examples_cut
                    && !h
                        .examples
                        .iter()
                        .chain(&h.more_examples)
                        .any(|e| e == value)
            }
            node => constant_of(node).is_some_and(|c| c != *value),
        };
        if !other {
            return false;
        }
    }
    answered
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
