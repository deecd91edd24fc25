//! Keyed snapshots: the request field that decides which recorded state a variant's answers
//! show.
//!
//! The engine renders a template answer's observed values and recorded-data lists from one
//! recorded answer (its "snapshot", the most typical of the principal's), and an optional field
//! by the share of observations that carried it. When the answers' field sets depend on what
//! the request asked for (a create in some regions answers a field the other regions never
//! show, and lists capabilities of that region), one global snapshot and one global presence
//! rule answer every request with the majority's state. This stage learns, per variant, the
//! request field that decided, in every recorded observation, whether some optional field of
//! the answer was present, and groups the variant's recorded answers by that field's value
//! ([`KeyedSnapshots`]). The engine then renders a request's answer from the most typical
//! recorded answer of its own value, and its optional fields as that answer had them.
//!
//! Detection is [`crate::request_keying`]'s, applied to presence: the field is a JSON or form
//! body leaf or a query parameter holding a scalar, not named as a reference to a record; it
//! decides an optional field's presence without contradiction, with at least two keys and
//! both outcomes, and (automatic mode) its keys repeat across recording sessions. Of several
//! such fields, the one the most recorded requests sent wins (it picks a state for the most
//! requests), then the one deciding the presence of the most optional fields, then the first in
//! sorted order. Only optional fields reached through objects are considered (not list
//! items, whose presence follows their own item). `[generate.request_keying] mode = "off"`
//! learns none.

use std::collections::BTreeMap;

use serde_json::Value;
use wraith_model::{
    ArrayNode, BodyTemplate, EchoSource, KeyedSnapshots, Node, SnapshotBucket, Variant, key_text,
};

use crate::observe::Obs;
use crate::request_keying::RouteKeying;
use crate::routes::RouteGroup;
use crate::unify::Ctx;

/// Most optional fields of one variant whose presence is examined.
const MAX_OPTIONAL_FIELDS: usize = 64;

/// Learns [`Variant::keyed_snapshots`] for each of the route's variants (see the module doc).
/// Call before exact replay takes the observations' response bodies.
pub fn learn(group: &RouteGroup, variants: &mut [Variant], obs: &[Obs<'_>], keying: &RouteKeying) {
    if !keying.auto && keying.fields.is_empty() {
        return;
    }
    for variant in variants.iter_mut() {
        variant.keyed_snapshots = learn_variant(group, variant, obs, keying);
    }
}

fn learn_variant(
    group: &RouteGroup,
    variant: &Variant,
    obs: &[Obs<'_>],
    keying: &RouteKeying,
) -> Option<Box<KeyedSnapshots>> {
    let BodyTemplate::Json { root } = &variant.body else {
        return None;
    };
    let mut optional: Vec<(Vec<&str>, &str)> = Vec::new();
    optional_fields(root, &mut Vec::new(), &mut optional);
    if optional.is_empty() || optional.len() > MAX_OPTIONAL_FIELDS {
        return None;
    }
    // The variant's recorded answers: its status, and every field it always renders.
    let mut members: Vec<(&Obs<'_>, Value)> = Vec::new();
    for &i in &group.obs {
        let Some(o) = obs.get(i) else { continue };
        if o.status != variant.status {
            continue;
        }
        let Some(body) = o.resp_json() else { continue };
        if fits(root, &body) {
            members.push((o, body));
        }
    }
    if members.len() < 2 {
        return None;
    }
    let ctxs: Vec<Ctx<'_>> = members
        .iter()
        .map(|(o, _)| Ctx {
            params: Vec::new(),
            query: &o.query,
            body: &o.req_fields,
            session: o.session,
            answered: crate::unify::answered_window(o),
            obs: Some(o),
        })
        .collect();
    let present = Value::Bool(true);
    let absent = Value::Bool(false);
    // Per field: how many optional fields' presence it decides.
    let mut decided: BTreeMap<EchoSource, usize> = BTreeMap::new();
    for (parent, key) in &optional {
        let vals: Vec<(&Value, usize)> = members
            .iter()
            .enumerate()
            .filter_map(|(c, (_, body))| {
                let obj = object_at(body, parent)?;
                Some((
                    if obj.contains_key(*key) {
                        &present
                    } else {
                        &absent
                    },
                    c,
                ))
            })
            .collect();
        if let Some(field) = crate::request_keying::learn_field(&vals, &ctxs, keying) {
            *decided.entry(field).or_default() += 1;
        }
    }
    // The field most requests sent wins (it picks a state for the most requests), then the
    // one deciding the most optional fields, then the first in sorted order.
    let mut best: Option<(&EchoSource, (usize, usize))> = None;
    for (field, n) in &decided {
        let carriers = ctxs
            .iter()
            .filter(|c| sent_value(c, field).is_some())
            .count();
        let rank = (carriers, *n);
        if best.is_none_or(|(_, b)| rank > b) {
            best = Some((field, rank));
        }
    }
    let (field, _) = best?;
    let mut buckets: BTreeMap<String, SnapshotBucket> = BTreeMap::new();
    for ((o, _), ctx) in members.iter().zip(&ctxs) {
        let Some(sent) = sent_value(ctx, field) else {
            continue;
        };
        let Some(text) = key_text(&sent) else {
            continue;
        };
        buckets
            .entry(text)
            .or_insert_with(|| SnapshotBucket {
                key: sent,
                moments: Vec::new(),
            })
            .moments
            .push(o.source.clone());
    }
    Some(Box::new(KeyedSnapshots {
        field: field.clone(),
        buckets: buckets.into_values().collect(),
    }))
}

/// The request's scalar value of `field` (a body leaf, or a query parameter as a string).
fn sent_value(ctx: &Ctx<'_>, field: &EchoSource) -> Option<Value> {
    match field {
        EchoSource::Body { pointer } => ctx
            .body
            .iter()
            .find(|(p, _)| p == pointer)
            .map(|(_, v)| v.clone())
            .filter(|v| matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_))),
        EchoSource::Query { name } => ctx
            .query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| Value::String(v.clone())),
        EchoSource::Path { .. }
        | EchoSource::Header { .. }
        | EchoSource::Within { .. }
        | EchoSource::Instant { .. }
        | EchoSource::Trimmed { .. } => None,
    }
}

/// Every optional field reached from `node` through objects only: (its parent object's keys
/// from the root, its key).
fn optional_fields<'n>(
    node: &'n Node,
    path: &mut Vec<&'n str>,
    out: &mut Vec<(Vec<&'n str>, &'n str)>,
) {
    let Node::Object { fields } = node else {
        return;
    };
    for f in fields {
        if f.optional
            && !matches!(
                f.value,
                Node::Hole(wraith_model::Hole {
                    source: wraith_model::HoleKind::Echo { .. },
                    ..
                })
            )
        {
            out.push((path.clone(), f.key.as_str()));
        }
        if matches!(f.value, Node::Object { .. }) {
            path.push(f.key.as_str());
            optional_fields(&f.value, path, out);
            path.pop();
        }
    }
}

/// The object at `keys` from the root of `body`.
fn object_at<'v>(body: &'v Value, keys: &[&str]) -> Option<&'v serde_json::Map<String, Value>> {
    let mut cur = body;
    for k in keys {
        cur = cur.as_object()?.get(*k)?;
    }
    cur.as_object()
}

/// Whether a recorded body has the template's shape: the same JSON kind, and for an object
/// every field the template always renders (the engine picks snapshots by the same rule).
fn fits(root: &Node, body: &Value) -> bool {
    match (root, body) {
        (Node::Object { fields }, Value::Object(map)) => fields
            .iter()
            .filter(|f| !f.optional)
            .all(|f| map.contains_key(&f.key)),
        (Node::Array(ArrayNode::List { .. } | ArrayNode::Tuple { .. }), Value::Array(_)) => true,
        (Node::Object { .. }, _) | (Node::Array(_), _) => false,
        (Node::Const { .. } | Node::Hole(_), _) => true,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;
    use wraith_model::Field;

    fn template(optional: &[&str]) -> Node {
        let mut fields = vec![Field {
            key: "id".into(),
            value: Node::Const { value: json!(1) },
            optional: false,
            present_ratio_bp: 10_000,
        }];
        for k in optional {
            fields.push(Field {
                key: (*k).into(),
                value: Node::Const { value: json!("x") },
                optional: true,
                present_ratio_bp: 5_000,
            });
        }
        Node::Object { fields }
    }

    #[test]
    fn optional_fields_are_found_through_objects_only() {
        let inner = template(&["deep"]);
        let root = Node::Object {
            fields: vec![
                Field {
                    key: "nested".into(),
                    value: inner,
                    optional: false,
                    present_ratio_bp: 10_000,
                },
                Field {
                    key: "items".into(),
                    value: Node::Array(ArrayNode::List {
                        representatives: vec![template(&["in_list"])],
                        target_length: 1,
                        discriminator: None,
                    }),
                    optional: true,
                    present_ratio_bp: 5_000,
                },
            ],
        };
        let mut out = Vec::new();
        optional_fields(&root, &mut Vec::new(), &mut out);
        assert_eq!(out, vec![(vec!["nested"], "deep"), (vec![], "items")]);
    }

    #[test]
    fn object_at_follows_keys() {
        let body = json!({"a": {"b": {"c": 1}}});
        assert!(object_at(&body, &["a", "b"]).unwrap().contains_key("c"));
        assert!(object_at(&body, &["a", "x"]).is_none());
    }
}
