//! What an update's recorded answers make of the fields it sent (`Route::sent_expansions`):
//! an object sent into a field the answers hold with more keys is merged into the stored
//! object (`devices: {}` keeps the record's slots), and each item of an array the answers
//! expand is answered with a copy of the answered item of the sample whose sent item is
//! nearest, renamed as implicit children are (what the sample's item sent becomes what the
//! session's item sent, a linked record the session's own), with fresh values where the
//! template mints them (an interface's id), and with what the session's item sent at each
//! field, except where the sample's item sent it and its answer turned it into something else. Runs on the synthesized update path only, and
//! costs nothing on routes without expansions.

use serde_json::Value;
use wraith_model::{ArrayNode, HoleKind, IdShape, ItemExpansion, Node, Route, Variant};

use super::Engine;
use super::implicit_children::{nearest, rename_echoes, request_echoes};
use crate::fixtures::scalar_key;
use crate::namespace::Namespace;
use crate::render::generate_id;

impl Engine {
    /// Rewrite the update's `patch` (its JSON body, as it will be merged into `stored`) with the
    /// route's learned expansions.
    pub(super) fn expand_sent(
        &self,
        ns: &mut Namespace,
        route: &Route,
        variant: &Variant,
        ptr: Option<&str>,
        stored: &Value,
        patch: &mut Value,
    ) {
        let Some(exp) = &route.sent_expansions else {
            return;
        };
        let Value::Object(sent) = patch else {
            return;
        };
        for field in &exp.merged_objects {
            if let (Some(Value::Object(part)), Some(Value::Object(held))) =
                (sent.get(field), stored.get(field))
            {
                let mut merged = held.clone();
                for (k, v) in part {
                    merged.insert(k.clone(), v.clone());
                }
                sent.insert(field.clone(), Value::Object(merged));
            }
        }
        for e in &exp.items {
            let answered = match sent.get(&e.field) {
                Some(Value::Array(items)) => self.expand_items(ns, variant, ptr, e, items),
                _ => None,
            };
            if let Some(answered) = answered {
                sent.insert(e.field.clone(), Value::Array(answered));
            }
        }
    }

    /// Fill the answered `entity` of a create with the route's learned array expansions:
    /// each array of objects the request sent, item by item as [`Engine::expand_sent`] does;
    /// a field the request did not send, with what every recorded create without it answered
    /// there. The positions filled; nothing on routes without expansions.
    pub(super) fn expand_created(
        &self,
        ns: &mut Namespace,
        route: &Route,
        variant: &Variant,
        ptr: Option<&str>,
        sent: Option<&Value>,
        entity: &mut Value,
    ) -> Vec<String> {
        let mut filled = Vec::new();
        let Some(exp) = &route.sent_expansions else {
            return filled;
        };
        for e in &exp.items {
            let answered = match sent.and_then(|b| b.get(&e.field)) {
                Some(Value::Array(items)) => self
                    .expand_items(ns, variant, ptr, e, items)
                    .map(Value::Array),
                Some(_) => None,
                None => e.when_absent.clone(),
            };
            if let (Some(v), Value::Object(map)) = (answered, &mut *entity) {
                map.insert(e.field.clone(), v);
                filled.push(e.field.clone());
            }
        }
        filled
    }

    /// The answer to the sent `items` of expansion `e`: each a copy of the answered item of the
    /// sample whose sent item is nearest (the item itself without one). `None` when an item is
    /// not an object.
    fn expand_items(
        &self,
        ns: &mut Namespace,
        variant: &Variant,
        ptr: Option<&str>,
        e: &ItemExpansion,
        items: &[Value],
    ) -> Option<Vec<Value>> {
        if !items.iter().all(Value::is_object) {
            return None;
        }
        let minted = minted_keys(variant, ptr, &e.field);
        let mut answered = Vec::with_capacity(items.len());
        for item in items {
            let Some((sample, copy)) =
                nearest(&e.samples, item).and_then(|s| s.items.first().map(|a| (s, a.clone())))
            else {
                answered.push(item.clone());
                continue;
            };
            let mut copy = copy;
            let echoes = request_echoes(&sample.request, item);
            // A minted value is the item's own: not one the item sent, not `null`, and not
            // a record a link names (those are renamed below).
            if let Value::Object(map) = &mut copy {
                for (key, shape) in &minted {
                    let own = map.get(*key).is_some_and(|v| {
                        let text = scalar_key(v);
                        !v.is_null()
                            && text.as_ref().is_none_or(|t| {
                                !echoes.contains_key(t)
                                    && !sample.links.iter().any(|l| &l.value == t)
                            })
                    });
                    if own && item.get(*key).is_none() {
                        map.insert((*key).to_string(), generate_id(shape, ns));
                    }
                }
            }
            if !echoes.is_empty() {
                rename_echoes(&mut copy, &echoes);
            }
            let linked = self.linked_records(ns, sample, item);
            if !linked.is_empty() {
                rename_echoes(&mut copy, &linked);
            }
            // What the session's item sent comes back as sent (short values and booleans
            // too), except where the sample's item sent the field and its answer gave back
            // something else (an address asked for as `any` answered as the one assigned).
            if let (Value::Object(map), Value::Object(mine), Some(theirs)) =
                (&mut copy, item, sample.items.first())
            {
                for (k, v) in mine {
                    let echoed = match (sample.request.get(k), theirs.get(k)) {
                        (Some(s), Some(a)) => s == a,
                        _ => true,
                    };
                    if echoed {
                        map.insert(k.clone(), v.clone());
                    }
                }
            }
            answered.push(copy);
        }
        Some(answered)
    }
}

/// The keys the template's items of `field` fill with a minted value (a `Generated` hole of
/// an object representative), with the shape to mint.
fn minted_keys<'v>(
    variant: &'v Variant,
    ptr: Option<&str>,
    field: &str,
) -> Vec<(&'v str, &'v IdShape)> {
    let Some(fields) = super::entity_template(variant, ptr) else {
        return Vec::new();
    };
    let Some(Node::Array(array)) = fields.iter().find(|f| f.key == field).map(|f| &f.value) else {
        return Vec::new();
    };
    let reps: &[Node] = match array {
        ArrayNode::Tuple { items } => items,
        ArrayNode::List {
            representatives, ..
        } => representatives,
    };
    let mut out: Vec<(&str, &IdShape)> = Vec::new();
    for rep in reps {
        let Node::Object { fields } = rep else {
            continue;
        };
        for f in fields {
            if let Node::Hole(h) = &f.value
                && let HoleKind::Generated { shape } = &h.source
                && !out.iter().any(|(k, _)| *k == f.key)
            {
                out.push((&f.key, shape));
            }
        }
    }
    out
}
