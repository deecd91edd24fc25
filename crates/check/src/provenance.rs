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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// A hole object leaf whose source is `source`.
    fn hole(source: Value) -> Value {
        json!({"node": "hole", "observed_type": "number", "confidence_bp": 8000, "source": source})
    }

    /// A model of one route `GET path` carrying `params`, `state_op` and `variants`.
    fn model_of(path: &str, params: &[&str], state_op: Option<&str>, variants: Value) -> Model {
        serde_json::from_value(json!({
            "base_url": "https://api.test",
            "diagnostics": [],
            "entity_types": {},
            "recorded_at": "2026-01-01T00:00:00Z",
            "routes": [{
                "id": "r0", "method": "GET", "path": path, "params": params,
                "state_op": state_op, "entity_type": "notes",
                "exact": [], "exchange_count": 1,
                "latency": {"p50_ms": 1, "p90_ms": 1, "p99_ms": 1, "sample_count": 1},
                "variants": variants,
            }],
            "schema_version": 1, "sessions": [], "tool_version": "0.1.0", "twin": "t",
        }))
        .unwrap()
    }

    /// One 200 variant whose JSON body is `root`.
    fn variant(root: Value) -> Value {
        json!([{
            "body": {"kind": "json", "root": root},
            "evidence": {"confidence_bp": 10000, "exchange_count": 1, "sources": ["s/1"]},
            "guard": {"guard": "always"},
            "headers": [],
            "id": "v1", "status": 200
        }])
    }

    /// A read route naming its entity by a path parameter fails closed (`not_found` mode) on
    /// an id it never saw, even with a template: `miss` belongs in what it can answer.
    #[test]
    fn a_state_reading_route_with_path_params_can_answer_miss() {
        let root = json!({"node": "object", "fields": [
            {"key": "object", "present_ratio_bp": 10000, "value": {"node": "const", "value": "note"}}
        ]});
        let model = model_of(
            "/v1/notes/:param",
            &["param"],
            Some("read"),
            variant(root.clone()),
        );
        let p = static_provenance(&model, &[], &[]);
        assert_eq!(p[0].can_answer, vec!["template", "miss"]);

        // Without path params (or without reading state) a templated route never misses.
        let model = model_of("/v1/notes", &[], Some("read"), variant(root.clone()));
        assert_eq!(
            static_provenance(&model, &[], &[])[0].can_answer,
            vec!["template"]
        );
        let model = model_of("/v1/notes/:param", &["param"], None, variant(root));
        assert_eq!(
            static_provenance(&model, &[], &[])[0].can_answer,
            vec!["template"]
        );
    }

    /// `leaves` keeps one count per hole kind: a counter is not a generated value, a clock is
    /// not an echo, so the counts say how much of the answer each source fills.
    #[test]
    fn leaves_count_each_hole_kind_under_its_own_name() {
        let field = |key: &str, value: Value| json!({"key": key, "present_ratio_bp": 10000, "value": value});
        let root = json!({"node": "object", "fields": [
            field("object", json!({"node": "const", "value": "note"})),
            field("id", hole(json!({"kind": "echo", "from": {"in": "path", "param": "param"}}))),
            field("token", hole(json!({"kind": "generated", "shape": {"charset":
                "lower_alnum", "length": 12, "prefix": "note_", "shape": "token"}}))),
            field("created", hole(json!({"kind": "clock", "unit": {"unit": "epoch_sec"}}))),
            field("seq", hole(json!({"kind": "counter", "name": "seq"}))),
            field("other_seq", hole(json!({"kind": "counter", "name": "other_seq"}))),
            field("mood", hole(json!({"kind": "observed"}))),
            field("items", json!({"node": "array", "array": "tuple", "items": [
                hole(json!({"kind": "counter", "name": "items"})),
            ]})),
        ]});
        let model = model_of("/v1/notes/:param", &["param"], Some("read"), variant(root));
        let p = static_provenance(&model, &[], &[]);
        let want: BTreeMap<String, u64> = [
            ("clock", 1),
            ("constant", 1),
            ("counter", 3),
            ("echo", 1),
            ("generated", 1),
            ("observed", 1),
        ]
        .into_iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect();
        assert_eq!(p[0].leaves, want);
    }
}
