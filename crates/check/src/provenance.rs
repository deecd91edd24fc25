//! Static per-route provenance (`wraith inspect --provenance`): without serving anything, what
//! each route can answer from — verbatim recordings, templates (and how many of their leaves are
//! holes of which kind), fixtures, handlers — and when it would say `miss`.

use std::collections::BTreeMap;

use serde::Serialize;
use wraith_model::{ArrayNode, BodyTemplate, HoleKind, Model, Node, StateOp};

#[derive(Debug, Clone, Serialize)]
pub struct RouteProvenance {
    /// The route's name as the check report gives it ([`wraith_model::Route::label`]):
    /// `METHOD /path`, with ` on <origin>` for a route of another origin than the base URL.
    pub route: String,
    pub route_id: String,
    /// The origin the route was recorded on when it is not the twin's base URL (also named in
    /// `route`, so a path recorded on two hosts is two distinct names).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Distinct concrete requests with a recorded answer (exact replay → `recorded`).
    pub exact_requests: u64,
    /// Recorded answers over all of them.
    pub moments: u64,
    pub variants: u64,
    pub statuses: Vec<u16>,
    /// Template leaves over all variants: `constant` and one count per hole kind
    /// (`echo`, `generated`, `clock`, `counter`, `observed`).
    pub leaves: BTreeMap<String, u64>,
    /// Provenance words this route can answer with, in contract order.
    pub can_answer: Vec<&'static str>,
}

/// Per-route static provenance. `fixture_types`: entity types the default fixture set seeds;
/// `handler_routes`: `METHOD /path` of routes with a Lua handler.
pub fn static_provenance(
    model: &Model,
    fixture_types: &[String],
    handler_routes: &[String],
) -> Vec<RouteProvenance> {
    model
        .routes
        .iter()
        .map(|r| {
            let name = format!("{} {}", r.method, r.path);
            let mut leaves: BTreeMap<String, u64> = BTreeMap::new();
            for v in &r.variants {
                if let BodyTemplate::Json { root } = &v.body {
                    count_leaves(root, &mut leaves);
                }
            }
            let mut statuses: Vec<u16> = r.variants.iter().map(|v| v.status).collect();
            statuses.sort_unstable();
            statuses.dedup();
            let mut can = Vec::new();
            if !r.exact.is_empty() {
                can.push("recorded");
            }
            if !r.variants.is_empty() {
                can.push("template");
            }
            if handler_routes.contains(&name) {
                can.push("handler");
            }
            let reads_state = matches!(r.state_op, Some(StateOp::Read | StateOp::List));
            if reads_state
                && r.entity_type
                    .as_ref()
                    .is_some_and(|t| fixture_types.contains(t))
            {
                can.push("fixture");
            }
            // No variant at all, or a read route that can fail closed (not_found mode).
            if r.variants.is_empty() || (reads_state && !r.params.is_empty()) {
                can.push("miss");
            }
            RouteProvenance {
                route: r.label(),
                route_id: r.id.clone(),
                origin: r.origin.clone(),
                exact_requests: r.exact.len() as u64,
                moments: r.exact.iter().map(|e| e.moments.len() as u64).sum(),
                variants: r.variants.len() as u64,
                statuses,
                leaves,
                can_answer: can,
            }
        })
        .collect()
}

fn count_leaves(node: &Node, out: &mut BTreeMap<String, u64>) {
    match node {
        Node::Const { .. } => *out.entry("constant".into()).or_default() += 1,
        Node::Hole(h) => {
            let k = match h.source {
                HoleKind::Echo { .. } => "echo",
                HoleKind::Generated { .. } => "generated",
                HoleKind::Clock { .. } => "clock",
                HoleKind::Counter { .. } => "counter",
                HoleKind::Observed => "observed",
            };
            *out.entry(k.into()).or_default() += 1;
        }
        Node::Object { fields } => fields.iter().for_each(|f| count_leaves(&f.value, out)),
        Node::Array(ArrayNode::Tuple { items }) => items.iter().for_each(|n| count_leaves(n, out)),
        Node::Array(ArrayNode::List {
            representatives, ..
        }) => representatives.iter().for_each(|n| count_leaves(n, out)),
    }
}
