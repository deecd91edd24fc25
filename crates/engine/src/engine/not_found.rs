//! The API's own not-found answer, for a route that recorded none: a read of a record the
//! session deleted answers 404 in the shape the provider answers not-found everywhere else
//! (Linode's `{"errors": [{"reason": "Not found"}]}`), so a client's error parsing works,
//! instead of a body the engine invented.

use serde_json::{Map, Value};
use wraith_model::{ArrayNode, BodyTemplate, Model, Node};

/// The 404 variant whose constant body most routes recorded: `(route, variant)`. Ties go to the
/// body first in canonical JSON text order. `None` when no route recorded a constant 404 body.
pub(super) fn api_not_found(model: &Model) -> Option<(usize, usize)> {
    // Body text → (routes recording it, the first (route, variant) with it).
    let mut seen: std::collections::BTreeMap<String, (usize, (usize, usize))> =
        std::collections::BTreeMap::new();
    for (ri, route) in model.routes.iter().enumerate() {
        let mut bodies: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        for (vi, v) in route.variants.iter().enumerate() {
            if v.status != 404 {
                continue;
            }
            let BodyTemplate::Json { root } = &v.body else {
                continue;
            };
            let Some(body) = constant(root) else {
                continue;
            };
            let text = body.to_string();
            if bodies.insert(text.clone()) {
                seen.entry(text).or_insert((0, (ri, vi))).0 += 1;
            }
        }
    }
    seen.into_iter()
        .min_by(|(ta, (na, _)), (tb, (nb, _))| nb.cmp(na).then(ta.cmp(tb)))
        .map(|(_, (_, at))| at)
}

/// The JSON value a template node always renders, when it holds no hole and no optional field.
fn constant(node: &Node) -> Option<Value> {
    match node {
        Node::Const { value } => Some(value.clone()),
        Node::Object { fields } => {
            let mut map = Map::new();
            for f in fields {
                if f.optional {
                    return None;
                }
                map.insert(f.key.clone(), constant(&f.value)?);
            }
            Some(Value::Object(map))
        }
        Node::Array(ArrayNode::Tuple { items }) => items
            .iter()
            .map(constant)
            .collect::<Option<Vec<_>>>()
            .map(Value::Array),
        Node::Array(_) | Node::Hole(_) => None,
    }
}
