//! Hole classes of a list's items learned from the other templates of the items' entity type.
//!
//! A list route's item template is anti-unified from the items its recorded pages showed. When
//! those were one record (or one record listed again and again, agreeing with itself), every
//! field of the item is a constant, its `created_at` included: the recordings cannot tell a
//! record's fixed timestamp from a provider constant. But the items are records of a type the
//! model knows, and that type's creates, reads and updates saw many records: where their
//! templates hold a field of the record as a timestamp (a `Clock` hole), the list's item holds a
//! timestamp there too, whatever one recorded record showed. A page listing the session's own
//! record then shows the record's time (the engine lists the stored record), and the judge
//! compares it as a timestamp, as it does on the type's create and read.
//!
//! Only constants become timestamps, only where the constant is a timestamp of the kind the
//! type's templates record (ISO 8601 text, epoch seconds or milliseconds), and only where no
//! template of the type holds the field as anything but a clock, a constant or an echo (a field
//! one template finds generated or observed is not clearly a timestamp). Not here: other
//! classes (ids and the strings derived from them: a listed record's id is held to the session's
//! name for it by the judge's constant rule already), tagged-union lists (their representatives
//! are one type's each and are left as learned), and records embedded elsewhere than at a list
//! route's items.

use std::collections::BTreeMap;

use wraith_model::{
    ArrayNode, BodyTemplate, ClockUnit, EntityType, Hole, HoleKind, JsonType, Node, Route, StateOp,
};

use crate::values;

/// What the type's single-record templates say about one record field.
#[derive(Debug, Clone, PartialEq)]
enum FieldClass {
    /// Every template that classifies it holds a clock of this unit.
    Clock(ClockUnit),
    /// Some template holds it as another class: left alone.
    Other,
}

/// Turn the constant timestamps of list items into clock holes where the items' entity type's
/// create, read and update templates record the field as a timestamp (see the module doc).
pub fn learn(routes: &mut [Route], entity_types: &BTreeMap<String, EntityType>) {
    let classes = record_field_classes(routes, entity_types);
    for route in routes.iter_mut() {
        if route.state_op != Some(StateOp::List) {
            continue;
        }
        let (Some(shape), Some(ty)) = (&route.list, route.entity_type.as_deref()) else {
            continue;
        };
        let Some(fields) = classes.get(ty) else {
            continue;
        };
        let pointer = shape.items_pointer.clone();
        for v in route
            .variants
            .iter_mut()
            .filter(|v| (200..300).contains(&v.status))
        {
            let BodyTemplate::Json { root } = &mut v.body else {
                continue;
            };
            for item in items_at(root, &pointer) {
                clock_constants(item, fields);
            }
        }
    }
}

/// Per entity type, the class of each top-level record field in the 2xx JSON templates of the
/// type's creates, reads and updates (the record bare, or in a one-key envelope).
fn record_field_classes(
    routes: &[Route],
    entity_types: &BTreeMap<String, EntityType>,
) -> BTreeMap<String, BTreeMap<String, FieldClass>> {
    let mut out: BTreeMap<String, BTreeMap<String, FieldClass>> = BTreeMap::new();
    for route in routes {
        if !matches!(
            route.state_op,
            Some(StateOp::Create | StateOp::Read | StateOp::Update)
        ) {
            continue;
        }
        let Some(ty) = route.entity_type.as_deref() else {
            continue;
        };
        let Some(et) = entity_types.get(ty) else {
            continue;
        };
        for root in route.success_json_roots() {
            let Some(fields) = record_fields(root, &et.primary_key) else {
                continue;
            };
            let classes = out.entry(ty.to_string()).or_default();
            for f in fields {
                let class = match &f.value {
                    Node::Hole(Hole {
                        source: HoleKind::Clock { unit, .. },
                        ..
                    }) => FieldClass::Clock(unit.clone()),
                    Node::Hole(Hole {
                        source: HoleKind::Echo { .. },
                        ..
                    })
                    | Node::Const { .. } => continue,
                    _ => FieldClass::Other,
                };
                let merged = match classes.get(&f.key) {
                    None => class,
                    Some(FieldClass::Clock(seen)) if matches!(&class, FieldClass::Clock(u) if same_kind(u, seen)) => {
                        FieldClass::Clock(seen.clone())
                    }
                    Some(_) => FieldClass::Other,
                };
                classes.insert(f.key.clone(), merged);
            }
        }
    }
    out
}

/// The fields of the record a single-record template holds: the root object when it has the
/// primary key, else the one object member of the root that has it (an envelope such as
/// `{"collection": {...}}`).
fn record_fields<'n>(root: &'n Node, pk: &str) -> Option<&'n [wraith_model::Field]> {
    let Node::Object { fields } = root else {
        return None;
    };
    if fields.iter().any(|f| f.key == pk) {
        return Some(fields);
    }
    let mut inner = fields.iter().filter_map(|f| match &f.value {
        Node::Object { fields } if fields.iter().any(|g| g.key == pk) => Some(fields.as_slice()),
        _ => None,
    });
    let first = inner.next()?;
    inner.next().is_none().then_some(first)
}

/// The item templates of the array at `pointer` (object keys from the root): the
/// representatives of an untagged list, or the items of a fixed-length array.
fn items_at<'n>(root: &'n mut Node, pointer: &str) -> Vec<&'n mut Node> {
    let mut cur = root;
    if !pointer.is_empty() {
        let Some(rest) = pointer.strip_prefix('/') else {
            return Vec::new();
        };
        for token in rest.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            let Node::Object { fields } = cur else {
                return Vec::new();
            };
            let Some(f) = fields.iter_mut().find(|f| f.key == token) else {
                return Vec::new();
            };
            cur = &mut f.value;
        }
    }
    match cur {
        Node::Array(ArrayNode::List {
            representatives,
            discriminator: None,
            ..
        }) => representatives.iter_mut().collect(),
        Node::Array(ArrayNode::Tuple { items }) => items.iter_mut().collect(),
        _ => Vec::new(),
    }
}

/// In one item template, each top-level constant the type records as a timestamp of the same
/// kind becomes a clock hole with that constant as its one example.
fn clock_constants(item: &mut Node, classes: &BTreeMap<String, FieldClass>) {
    let Node::Object { fields } = item else {
        return;
    };
    for f in fields.iter_mut() {
        let Some(FieldClass::Clock(recorded)) = classes.get(&f.key) else {
            continue;
        };
        let Node::Const { value } = &f.value else {
            continue;
        };
        let Some(unit) = values::clock_unit(value, Some(&f.key)) else {
            continue;
        };
        if !same_kind(&unit, recorded) {
            continue;
        }
        let value = value.clone();
        f.value = Node::Hole(Hole {
            source: HoleKind::Clock { unit, after: None },
            observed_type: JsonType::of(&value),
            examples: vec![value],
            more_examples: Vec::new(),
            examples_cut: false,
            // As sure as a timestamp seen once under a time-like key.
            confidence_bp: 5_000,
            when_absent: None,
            keyed: None,
        });
    }
}

/// ISO 8601 text, epoch seconds and epoch milliseconds are different kinds of timestamp.
fn same_kind(a: &ClockUnit, b: &ClockUnit) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::{Value, json};
    use wraith_model::Field;

    fn field(key: &str, value: Node) -> Field {
        Field {
            key: key.into(),
            value,
            optional: false,
            present_ratio_bp: 10_000,
        }
    }

    fn konst(v: Value) -> Node {
        Node::Const { value: v }
    }

    fn iso() -> ClockUnit {
        values::clock_unit(&json!("2026-01-01T00:00:00.000Z"), Some("created_at")).unwrap()
    }

    #[test]
    fn the_record_of_a_template_is_the_root_or_its_one_enveloped_object() {
        let bare = Node::Object {
            fields: vec![field("id", konst(json!("1")))],
        };
        assert_eq!(record_fields(&bare, "id").map(<[Field]>::len), Some(1));
        let enveloped = Node::Object {
            fields: vec![
                field("thing", bare.clone()),
                field("meta", konst(json!({}))),
            ],
        };
        assert_eq!(record_fields(&enveloped, "id").map(<[Field]>::len), Some(1));
        let two = Node::Object {
            fields: vec![field("a", bare.clone()), field("b", bare)],
        };
        assert!(record_fields(&two, "id").is_none());
    }

    #[test]
    fn only_constants_of_the_recorded_timestamp_kind_become_clocks() {
        let mut item = Node::Object {
            fields: vec![
                field("id", konst(json!("5"))),
                field("created_at", konst(json!("2026-02-03T04:05:06.789Z"))),
                field("updated_at", konst(json!(1_700_000_000))),
                field("name", konst(json!("2026-02-03T04:05:06.789Z"))),
            ],
        };
        let classes = BTreeMap::from([
            ("created_at".to_string(), FieldClass::Clock(iso())),
            ("updated_at".to_string(), FieldClass::Clock(iso())),
            ("name".to_string(), FieldClass::Other),
        ]);
        clock_constants(&mut item, &classes);
        let Node::Object { fields } = item else {
            panic!("object")
        };
        let Node::Hole(h) = &fields[1].value else {
            panic!("created_at stays a constant")
        };
        assert!(matches!(h.source, HoleKind::Clock { .. }));
        assert_eq!(h.examples, vec![json!("2026-02-03T04:05:06.789Z")]);
        // Epoch seconds where the type records ISO text, and a field of another class.
        assert_eq!(fields[2].value, konst(json!(1_700_000_000)));
        assert_eq!(fields[3].value, konst(json!("2026-02-03T04:05:06.789Z")));
        assert_eq!(fields[0].value, konst(json!("5")));
    }
}
