//! Rendering a null-or-embedded-record position ([`wraith_model::WhenAbsent::embeds`]): for a
//! request carrying the field that names the record, the session's stored record of the
//! learned entity type with that key, put where the recorded answers embedded it (the value
//! itself, or inside a recorded wrapper object such as a quote's `{state, quoted_status}`).
//!
//! Not here: the `null` rendered for a request without the field (the hole's `when_absent`
//! value), and any record the session does not hold (the hole then renders as before: a
//! recorded value).

use serde_json::Value;
use wraith_model::{Hole, Node};

use crate::namespace::Origin;
use crate::render::{NsCtx, ReqCtx};
use crate::util::json_pointer_get_mut;

/// The hole's value for this request when it embeds a record the session holds: the stored
/// record (a fixture record, which may be sparse, over the recorded shape) inside `wrapper`,
/// the recorded non-null value the hole would render otherwise. `None` when the hole embeds
/// nothing, the request lacks the field, or the session holds no such live record.
pub(crate) fn render(
    hole: &Hole,
    req: &ReqCtx<'_>,
    ns: &NsCtx<'_>,
    wrapper: impl FnOnce() -> Value,
) -> Option<Value> {
    let w = hole.when_absent.as_deref()?;
    let e = w.embeds.as_deref()?;
    if e.entity_type.is_empty() {
        return None;
    }
    let key = crate::fixtures::scalar_key(&req.echo_source(&w.field)?)?;
    let entity = ns.ns.entity(&e.entity_type, &key)?;
    let mut out = wrapper();
    let slot = json_pointer_get_mut(&mut out, &e.at)?;
    match (entity.origin, &mut *slot, &*entity.value) {
        (Origin::Fixture, Value::Object(s), Value::Object(r)) => {
            for (k, v) in r {
                s.insert(k.clone(), v.clone());
            }
        }
        _ => *slot = (*entity.value).clone(),
    }
    // The record as the recorded answers embedded it: without the fields none of them
    // showed there (a status's `pinned`, which only its author's own reads carry).
    if let (Value::Object(record), Some(Node::Object { fields })) =
        (slot, template_at(&e.template, &e.at))
    {
        record.retain(|k, _| fields.iter().any(|f| f.key == *k));
    }
    Some(out)
}

/// The template a null-or-made-record hole ([`wraith_model::EmbeddedRecord::made`]) renders
/// for a request carrying its field; `None` for other holes and requests without it.
pub(crate) fn made_template<'n>(hole: &'n Hole, req: &ReqCtx<'_>) -> Option<&'n Node> {
    let w = hole.when_absent.as_deref()?;
    let e = w.embeds.as_deref().filter(|e| e.made)?;
    req.echo_source(&w.field)?;
    Some(&e.template)
}

/// The positions (JSON pointers, through objects) of a template's made records that are
/// records of an entity type, with that type: a create stores what it rendered there.
pub(crate) fn made_records(node: &Node) -> Vec<(String, &str)> {
    let mut out = Vec::new();
    made_at(node, String::new(), &mut out);
    out
}

fn made_at<'n>(node: &'n Node, at: String, out: &mut Vec<(String, &'n str)>) {
    match node {
        Node::Object { fields } => {
            for f in fields {
                let key = wraith_model::pointer::escape_token(&f.key);
                made_at(&f.value, format!("{at}/{key}"), out);
            }
        }
        Node::Hole(h) => {
            if let Some(e) = h
                .when_absent
                .as_deref()
                .and_then(|w| w.embeds.as_deref())
                .filter(|e| e.made && !e.entity_type.is_empty())
            {
                out.push((at, e.entity_type.as_str()));
            }
        }
        Node::Const { .. } | Node::Array(_) => {}
    }
}

/// The template node at a pointer through objects.
fn template_at<'n>(node: &'n Node, at: &str) -> Option<&'n Node> {
    if at.is_empty() {
        return Some(node);
    }
    let mut cur = node;
    for raw in at.strip_prefix('/')?.split('/') {
        let token = raw.replace("~1", "/").replace("~0", "~");
        let Node::Object { fields } = cur else {
            return None;
        };
        cur = &fields.iter().find(|f| f.key == token)?.value;
    }
    Some(cur)
}
