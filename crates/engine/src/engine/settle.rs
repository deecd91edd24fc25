//! A stored record read back shows the state every recorded read showed, where the record
//! still holds the state every recorded create answered.
//!
//! A create answers a record in its first state (a volume `creating`, every recorded create
//! alike) and the record moves on by itself (every recorded read of it said `active`). The
//! store keeps what the create answered, so without this a read of a record the session
//! created would show it stuck in its first state, which no recorded read ever did.

use serde_json::Value;
use wraith_model::{BodyTemplate, Field, Hole, HoleKind, Model, Node, StateOp, Variant};

/// The top-level fields of the record in a template answer: the root object when it holds
/// the primary key, else the object one level down that does.
pub(super) fn record_fields<'v>(variant: &'v Variant, pk: &str) -> Option<&'v [Field]> {
    let BodyTemplate::Json {
        root: Node::Object { fields },
    } = &variant.body
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

/// The constant every successful create of `ty` answered at the record's field `key`: every
/// 2xx variant of every create route of the type holds that field as one and the same
/// non-optional constant. `None` otherwise.
fn create_constant<'m>(model: &'m Model, ty: &str, pk: &str, key: &str) -> Option<&'m Value> {
    let mut found: Option<&Value> = None;
    for variant in create_answers(model, ty) {
        let field = record_fields(variant, pk)?.iter().find(|f| f.key == key)?;
        let Node::Const { value } = &field.value else {
            return None;
        };
        if field.optional || found.is_some_and(|f| f != value) {
            return None;
        }
        found = Some(value);
    }
    found
}

/// The 2xx variants of every create route of entity type `ty`: what a successful create of
/// the type answers.
pub(super) fn create_answers<'m>(model: &'m Model, ty: &str) -> impl Iterator<Item = &'m Variant> {
    model
        .routes
        .iter()
        .filter(move |r| {
            r.state_op == Some(StateOp::Create) && r.entity_type.as_deref() == Some(ty)
        })
        .flat_map(|r| r.variants.iter())
        .filter(|v| (200..300).contains(&v.status))
}

/// Whether the record's field `key` holds a `null` a create answered as its first state: some
/// successful create of `ty` answered `null` there as a constant (a video's `url` before it is
/// processed), and none echoed it from its request (a client's own `null`).
fn created_null(model: &Model, ty: &str, pk: &str, key: &str) -> bool {
    let mut null = false;
    for variant in create_answers(model, ty) {
        let Some(field) = record_fields(variant, pk).and_then(|f| f.iter().find(|f| f.key == key))
        else {
            continue;
        };
        match &field.value {
            Node::Const { value: Value::Null } if !field.optional => null = true,
            Node::Hole(Hole {
                source: HoleKind::Echo { .. },
                ..
            }) => return false,
            _ => {}
        }
    }
    null
}

/// Whether an update of `ty` answers the record's field `key` as an echo of its request: the
/// client sets that field, so what the recorded reads showed there may be what a recorded
/// client set (a collection marked `sensitive`), not a state the record moves into by itself.
fn client_set(model: &Model, ty: &str, pk: &str, key: &str) -> bool {
    model
        .routes
        .iter()
        .filter(|r| r.state_op == Some(StateOp::Update) && r.entity_type.as_deref() == Some(ty))
        .flat_map(|r| r.variants.iter())
        .filter(|v| (200..300).contains(&v.status))
        .filter_map(|v| record_fields(v, pk))
        .flatten()
        .any(|f| {
            f.key == key
                && matches!(
                    &f.value,
                    Node::Hole(Hole {
                        source: HoleKind::Echo { .. },
                        ..
                    })
                )
        })
}

/// Most examples synth keeps on a hole: a hole with fewer lists every value recorded there.
const ALL_EXAMPLES_BELOW: usize = 8;

/// Settle `record` (a stored record of `ty`, as a read of it answers it) under the read's
/// record template `read`, whose render for this request was `rendered`. At each
/// non-optional top-level field where the record still holds the constant string or boolean
/// every create answered, or the `null` a create answered as its first state
/// ([`created_null`]), and no recorded read ever showed that value:
/// - the read holds another constant there: the record takes it;
/// - the read holds an observed hole listing every value recorded there (fewer than 8): the
///   record takes the read's rendered pick.
///
/// A field an update of the type echoes from its request is left as stored: the client sets it.
///
/// Returns the keys changed.
pub(super) fn settle(
    model: &Model,
    ty: &str,
    pk: &str,
    read: &[Field],
    rendered: &Value,
    record: &mut Value,
) -> Vec<String> {
    let Value::Object(map) = record else {
        return Vec::new();
    };
    let mut changed = Vec::new();
    for f in read {
        if f.optional || f.key == pk {
            continue;
        }
        let Some(stored) = map.get(&f.key) else {
            continue;
        };
        // A state is a name or a flag; a constant list or number in the recorded reads is
        // more likely data of the records that happened to be read (their `tags`).
        if !(stored.is_string() || stored.is_boolean() || stored.is_null()) {
            continue;
        }
        let shown = match &f.value {
            Node::Const { value } if value != stored => value,
            Node::Hole(Hole {
                source: HoleKind::Observed,
                examples,
                ..
            }) if examples.len() < ALL_EXAMPLES_BELOW && !examples.contains(stored) => {
                match rendered.get(&f.key) {
                    Some(pick) if examples.contains(pick) => pick,
                    _ => continue,
                }
            }
            _ => continue,
        };
        let first_state = if stored.is_null() {
            created_null(model, ty, pk, &f.key)
        } else {
            create_constant(model, ty, pk, &f.key) == Some(stored)
        };
        if !(shown.is_string() || shown.is_boolean())
            || !first_state
            || client_set(model, ty, pk, &f.key)
        {
            continue;
        }
        map.insert(f.key.clone(), shown.clone());
        changed.push(f.key.clone());
    }
    changed
}
