//! Null-or-embedded-record positions: a position whose recorded values are `null` in some
//! answers and, in the others, an object embedding a record of one entity type that the
//! request named (a status's `quote` is `null` for a plain post and embeds the status the
//! post's `quoted_status_id` named otherwise).
//!
//! Anti-unifying an object with `null` gives an observed hole whose examples are whole recorded
//! objects, so the twin would answer some recorded record instead of the one the request
//! names. Here such a hole learns [`WhenAbsent::embeds`], in two steps:
//!
//! 1. [`learn`] (while the route's templates are built, with every observation's request): the
//!    non-null values anti-unify to a template in which some object's field is an echo of one
//!    top-level request field (a JSON or form body field, or a query parameter) in every one of
//!    them, and the position is `null` exactly when the request lacks that field. The rule is
//!    checked on every observation; one that disagrees leaves the hole as it was.
//! 2. [`resolve`] (once entity types are known): the echo is the primary key of an entity type
//!    every recorded embedded key is a known id of. Otherwise the hole loses `embeds`.
//!
//! Not here: rendering (the engine puts the session's stored record there) and judging (the
//! check compares a non-null answer under [`EmbeddedRecord::template`]).

use std::collections::BTreeMap;

use serde_json::Value;
use wraith_model::{
    ArrayNode, BodyTemplate, EchoSource, EmbeddedRecord, EntityType, Hole, HoleKind, Node, Route,
    WhenAbsent,
};

use crate::unify::{MAX_EXAMPLES, Unifier};

/// Fewest recorded non-null values the rule is learned from: one could be chance.
const MIN_EMBEDDED: usize = 2;
/// How deep below the position the embedded record may sit (a record in a wrapper object).
const MAX_DEPTH: usize = 3;

/// Step 1: give `hole` (the observed hole of an object-or-null position at `pointer`) an
/// unresolved [`WhenAbsent::embeds`] when its values follow the rule (see the module doc).
pub(crate) fn learn(
    u: &Unifier<'_>,
    vals: &[(&Value, usize)],
    key: Option<&str>,
    pointer: &str,
    hole: &mut Hole,
) {
    if !vals.iter().all(|(v, _)| v.is_object() || v.is_null()) {
        return;
    }
    let objects: Vec<(&Value, usize)> = vals
        .iter()
        .filter(|(v, _)| v.is_object())
        .copied()
        .collect();
    if objects.len() < MIN_EMBEDDED || objects.len() == vals.len() {
        return;
    }
    // Most such positions (a card, a poll) name nothing the request sent: the first object
    // must hold a value of a top-level request field before the objects are anti-unified.
    if !objects
        .first()
        .is_some_and(|(v, c)| names_a_request_field(u, v, *c, 0))
    {
        learn_made(u, vals, &objects, key, pointer, hole);
        return;
    }
    let template = u.unify(&objects, key, pointer);
    let mut sources = Vec::new();
    echo_sources(&template, 0, &mut sources);
    let Some(field) = sources.into_iter().find(|src| {
        vals.iter().all(|(v, c)| {
            u.ctxs
                .get(*c)
                .is_some_and(|ctx| ctx.has(src) == v.is_object())
        })
    }) else {
        // A value equal to a sent one by chance (a poll's `votes_count` of `0` beside a
        // `sensitive=0`) names nothing: the request may have made the object instead.
        learn_made(u, vals, &objects, key, pointer, hole);
        return;
    };
    hole.when_absent = Some(Box::new(WhenAbsent {
        field,
        value: Value::Null,
        embeds: Some(Box::new(EmbeddedRecord {
            // Resolved by [`resolve`] once entity types are known.
            entity_type: String::new(),
            at: String::new(),
            template,
            made: false,
        })),
    }));
    lead_with_null(hole);
}

/// A null-or-made-record position ([`EmbeddedRecord::made`]): `null` exactly when the request
/// lacks the top-level body field the hole's `when_absent` names, and otherwise an object
/// made from that field: the objects' template mints a field of its own (a key) and echoes at
/// least one of the field's own members (a poll's `multiple` is the sent `poll.multiple`).
/// The template replaces the replay of a recorded object, so a post's poll answers the
/// options, the choice and a key of its own.
fn learn_made(
    u: &Unifier<'_>,
    vals: &[(&Value, usize)],
    objects: &[(&Value, usize)],
    key: Option<&str>,
    pointer: &str,
    hole: &mut Hole,
) {
    let Some(field) = hole
        .when_absent
        .as_deref()
        .filter(|w| w.value.is_null() && w.embeds.is_none())
        .map(|w| w.field.clone())
    else {
        return;
    };
    let EchoSource::Body { pointer: sent } = &field else {
        return;
    };
    let null_without = vals.iter().all(|(v, c)| {
        u.ctxs
            .get(*c)
            .is_some_and(|ctx| ctx.carries(&field) == v.is_object())
    });
    if !null_without {
        return;
    }
    let template = u.unify(objects, key, pointer);
    // A record made here has a key minted for it; an object naming a record by a member of
    // the field (a placement group's sent `id`) is not made.
    let minted = matches!(&template, Node::Object { fields } if fields.iter().any(|f| matches!(
        f.value,
        Node::Hole(Hole { source: HoleKind::Generated { .. }, .. })
    )));
    if !minted || !echoes_under(&template, &format!("{sent}/")) {
        return;
    }
    if let Some(w) = hole.when_absent.as_deref_mut() {
        w.embeds = Some(Box::new(EmbeddedRecord {
            // Resolved by [`resolve`] once entity types are known.
            entity_type: String::new(),
            at: String::new(),
            template,
            made: true,
        }));
    }
    lead_with_null(hole);
}

/// Whether some hole of the template (through objects and arrays) echoes a body pointer
/// starting with `prefix`.
fn echoes_under(node: &Node, prefix: &str) -> bool {
    match node {
        Node::Const { .. } => false,
        Node::Object { fields } => fields.iter().any(|f| echoes_under(&f.value, prefix)),
        Node::Array(ArrayNode::Tuple { items })
        | Node::Array(ArrayNode::List {
            representatives: items,
            ..
        }) => items.iter().any(|n| echoes_under(n, prefix)),
        Node::Hole(Hole {
            source: HoleKind::Echo { from },
            ..
        }) => matches!(from, EchoSource::Body { pointer } if pointer.starts_with(prefix)),
        Node::Hole(_) => false,
    }
}

/// Whether a scalar of `v` (through objects, at most [`MAX_DEPTH`] below) equals the value of
/// a top-level request field of observation `c`.
fn names_a_request_field(u: &Unifier<'_>, v: &Value, c: usize, depth: usize) -> bool {
    let Some(ctx) = u.ctxs.get(c) else {
        return false;
    };
    let Value::Object(map) = v else {
        return false;
    };
    map.values().any(|child| match child {
        Value::String(_) | Value::Number(_) => ctx.candidates(child).iter().any(top_level_field),
        Value::Object(_) if depth < MAX_DEPTH => names_a_request_field(u, child, c, depth + 1),
        _ => false,
    })
}

/// Echo sources of top-level request fields found at fields of the template's objects (not
/// inside arrays), in template order, each once; only echoes that held in every observation.
fn echo_sources(node: &Node, depth: usize, out: &mut Vec<EchoSource>) {
    let Node::Object { fields } = node else {
        return;
    };
    for f in fields {
        match &f.value {
            Node::Hole(Hole {
                source: HoleKind::Echo { from },
                confidence_bp: 10_000,
                ..
            }) if !f.optional && top_level_field(from) && !out.contains(from) => {
                out.push(from.clone());
            }
            child @ Node::Object { .. } if depth < MAX_DEPTH && !f.optional => {
                echo_sources(child, depth + 1, out);
            }
            _ => {}
        }
    }
}

/// A request field whose absence can decide a value: a top-level body field or a query
/// parameter (paths are always present; headers are not what names a record).
fn top_level_field(src: &EchoSource) -> bool {
    match src {
        EchoSource::Body { pointer } => {
            pointer.len() > 1 && pointer.starts_with('/') && !pointer[1..].contains('/')
        }
        EchoSource::Query { .. } => true,
        EchoSource::Path { .. }
        | EchoSource::Header { .. }
        | EchoSource::Within { .. }
        | EchoSource::Instant { .. }
        | EchoSource::Trimmed { .. } => false,
    }
}

/// The engine renders `null` for a request without the field: keep it a rendered example
/// (first), as the observed hole keeps its `when_absent` value.
fn lead_with_null(hole: &mut Hole) {
    if let Some(i) = hole.examples.iter().position(Value::is_null) {
        let null = hole.examples.remove(i);
        hole.examples.insert(0, null);
        return;
    }
    hole.more_examples.retain(|v| !v.is_null());
    hole.examples.insert(0, Value::Null);
    while hole.examples.len() > MAX_EXAMPLES {
        if let Some(last) = hole.examples.pop() {
            hole.more_examples.insert(0, last);
        }
    }
}

/// Step 2: resolve every learned embedding of the routes' templates to the entity type whose
/// primary key the template echoes and whose known ids hold every recorded embedded key;
/// drop the embeddings that resolve to none.
pub fn resolve(routes: &mut [Route], entity_types: &BTreeMap<String, EntityType>) {
    for route in routes {
        for variant in &mut route.variants {
            if let BodyTemplate::Json { root } = &mut variant.body {
                resolve_node(root, entity_types);
            }
            // A tagged union's per-type templates are rendered and judged in its place.
            if let Some(union) = &mut variant.union {
                for t in &mut union.templates {
                    resolve_node(t, entity_types);
                }
            }
        }
    }
}

fn resolve_node(node: &mut Node, types: &BTreeMap<String, EntityType>) {
    match node {
        Node::Const { .. } => {}
        Node::Object { fields } => fields
            .iter_mut()
            .for_each(|f| resolve_node(&mut f.value, types)),
        Node::Array(ArrayNode::Tuple { items }) => {
            items.iter_mut().for_each(|n| resolve_node(n, types))
        }
        Node::Array(ArrayNode::List {
            representatives, ..
        }) => representatives
            .iter_mut()
            .for_each(|n| resolve_node(n, types)),
        Node::Hole(hole) => resolve_hole(hole, types),
    }
}

fn resolve_hole(hole: &mut Hole, types: &BTreeMap<String, EntityType>) {
    let cut = hole.examples_cut;
    let Some(w) = hole.when_absent.as_deref_mut() else {
        return;
    };
    let Some(e) = w.embeds.as_deref_mut() else {
        return;
    };
    // An embedding's own template may hold further ones.
    resolve_node(&mut e.template, types);
    if !e.entity_type.is_empty() {
        return;
    }
    let recorded: Vec<&Value> = hole
        .examples
        .iter()
        .chain(&hole.more_examples)
        .filter(|v| v.is_object())
        .collect();
    if e.made {
        e.entity_type = made_type(&e.template, &recorded, types).unwrap_or_default();
        return;
    }
    // Every recorded key must be checked: a cut list of values cannot show that.
    let found = if cut {
        None
    } else {
        types.iter().find_map(|(name, t)| {
            let at = record_at(&e.template, &t.primary_key, &w.field, "", 0)?;
            let all_known = recorded.iter().all(|v| {
                v.pointer(&format!("{at}/{}", escape(&t.primary_key)))
                    .and_then(scalar_key)
                    .is_some_and(|k| t.known_ids.contains(&k))
            });
            (all_known && !recorded.is_empty()).then(|| (name.clone(), at))
        })
    };
    match found {
        Some((name, at)) => {
            e.entity_type = name;
            e.at = at;
        }
        None => w.embeds = None,
    }
}

/// The pointer (from the template's root, through objects only) to the object whose `pk`
/// field echoes `field`.
fn record_at(node: &Node, pk: &str, field: &EchoSource, at: &str, depth: usize) -> Option<String> {
    let Node::Object { fields } = node else {
        return None;
    };
    let echoes = fields.iter().any(|f| {
        f.key == pk
            && !f.optional
            && matches!(&f.value, Node::Hole(Hole { source: HoleKind::Echo { from }, .. }) if from == field)
    });
    if echoes {
        return Some(at.to_string());
    }
    if depth >= MAX_DEPTH {
        return None;
    }
    fields.iter().filter(|f| !f.optional).find_map(|f| {
        record_at(
            &f.value,
            pk,
            field,
            &format!("{at}/{}", escape(&f.key)),
            depth + 1,
        )
    })
}

/// The entity type a made record is one of: the type whose primary key the template mints,
/// with a recorded record under some recorded object's key that shares at least half of that
/// object's fields (most shared first, then the first type): many types know a key `1`, only
/// one holds a record like the made one under it.
fn made_type(
    template: &Node,
    recorded: &[&Value],
    types: &BTreeMap<String, EntityType>,
) -> Option<String> {
    let Node::Object { fields } = template else {
        return None;
    };
    let mut best: Option<(usize, &String)> = None;
    for (name, t) in types {
        let minted = fields.iter().any(|f| {
            f.key == t.primary_key
                && matches!(
                    f.value,
                    Node::Hole(Hole {
                        source: HoleKind::Generated { .. },
                        ..
                    })
                )
        });
        if !minted {
            continue;
        }
        let shared = recorded
            .iter()
            .filter_map(|v| {
                let obj = v.as_object()?;
                let key = obj.get(&t.primary_key).and_then(scalar_key)?;
                let record = t.records.get(&key)?.as_object()?;
                let shared = obj.keys().filter(|k| record.contains_key(*k)).count();
                (shared * 2 >= obj.len()).then_some(shared)
            })
            .max();
        if let Some(n) = shared
            && best.is_none_or(|(b, _)| n > b)
        {
            best = Some((n, name));
        }
    }
    best.map(|(_, name)| name.clone())
}

fn escape(key: &str) -> String {
    crate::observe::escape_token(key)
}

/// A record key as entity types list it: a string's content, a number's spelling.
fn scalar_key(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
