//! Engine dispatch micro-benchmarks: an exact-replay GET, and a stateful create followed by a
//! read, each through `Engine::handle` exactly as the server calls it.
//!
//! Run: `cargo bench -p wraith-engine --bench dispatch`.

use std::collections::BTreeMap;

use serde_json::json;
use wraith_engine::{Engine, EngineOptions, FixtureTree, Request};
use wraith_model::*;

fn main() {
    divan::main();
}

fn node_const(v: serde_json::Value) -> Node {
    Node::Const { value: v }
}

fn field(key: &str, value: Node) -> Field {
    Field {
        key: key.to_string(),
        value,
        optional: false,
        present_ratio_bp: 10_000,
    }
}

fn variant(status: u16, guard: Guard, root: Node) -> Variant {
    Variant {
        id: format!("{status:016x}"),
        status,
        guard,
        headers: vec![HeaderProgram {
            name: "content-type".to_string(),
            program: HeaderRule::Constant {
                values: vec!["application/json".to_string()],
            },
        }],
        body: BodyTemplate::Json { root },
        evidence: Evidence {
            exchange_count: 1,
            confidence_bp: 10_000,
            sources: Vec::new(),
        },
        union: None,
        keyed_snapshots: None,
        record_type: None,
    }
}

fn route(method: &str, path: &str, op: StateOp, variants: Vec<Variant>) -> Route {
    Route {
        id: format!("{method}_{path}"),
        method: method.to_string(),
        path: path.to_string(),
        params: path
            .split('/')
            .filter_map(|s| s.strip_prefix(':'))
            .map(str::to_string)
            .collect(),
        state_op: Some(op),
        entity_type: Some("customers".to_string()),
        id_param: path.contains(':').then(|| "id".to_string()),
        variants,
        exchange_count: 1,
        ..Route::default()
    }
}

fn bench_engine() -> Engine {
    let entity = |id: Node| Node::Object {
        fields: vec![
            field("id", id),
            field("object", node_const(json!("customer"))),
            field(
                "name",
                Node::Hole(Hole {
                    source: HoleKind::Echo {
                        from: EchoSource::Body {
                            pointer: "/name".to_string(),
                        },
                    },
                    observed_type: JsonType::String,
                    examples: vec![json!("Alice")],
                    more_examples: Vec::new(),
                    examples_cut: false,
                    confidence_bp: 9_000,
                    when_absent: None,
                    keyed: None,
                }),
            ),
            field(
                "created",
                Node::Hole(Hole {
                    source: HoleKind::Clock {
                        unit: ClockUnit::EpochSec,
                        after: None,
                    },
                    observed_type: JsonType::Number,
                    examples: vec![],
                    more_examples: Vec::new(),
                    examples_cut: false,
                    confidence_bp: 9_000,
                    when_absent: None,
                    keyed: None,
                }),
            ),
        ],
    };
    let gen_id = Node::Hole(Hole {
        source: HoleKind::Generated {
            shape: IdShape::Token {
                prefix: "cus_".to_string(),
                charset: IdCharset::Base62,
                length: 14,
            },
        },
        observed_type: JsonType::String,
        examples: vec![],
        more_examples: Vec::new(),
        examples_cut: false,
        confidence_bp: 9_000,
        when_absent: None,
        keyed: None,
    });
    let echo_id = Node::Hole(Hole {
        source: HoleKind::Echo {
            from: EchoSource::Path {
                param: "id".to_string(),
            },
        },
        observed_type: JsonType::String,
        examples: vec![],
        more_examples: Vec::new(),
        examples_cut: false,
        confidence_bp: 9_000,
        when_absent: None,
        keyed: None,
    });
    let create = route(
        "POST",
        "/v1/customers",
        StateOp::Create,
        vec![variant(200, Guard::Always, entity(gen_id))],
    );
    let mut read = route(
        "GET",
        "/v1/customers/:id",
        StateOp::Read,
        vec![
            variant(200, Guard::StateMember { member: true }, entity(echo_id)),
            variant(
                404,
                Guard::StateMember { member: false },
                node_const(json!({"error": "not found"})),
            ),
        ],
    );
    read.exact.push(ExactEntry {
        key: request_key::request_key("/v1/customers/cus_1", "", None, b""),
        moments: vec![Moment {
            source: "s1/1".to_string(),
            principal: None,
            respelled: false,
            status: 200,
            headers: vec![("content-type".to_string(), "application/json".to_string())],
            body: RecordedBody::json(json!({"id": "cus_1", "object": "customer", "name": "Alice",
                "email": "alice@example.com", "created": 1_700_000_000,
                "address": {"city": "Paris", "line1": "1 rue de Rivoli"}})),
        }],
        session_bound: Vec::new(),
    });
    let mut known = std::collections::BTreeSet::new();
    known.insert("cus_1".to_string());
    let model = Model {
        schema_version: MODEL_SCHEMA_VERSION,
        tool_version: "bench".to_string(),
        twin: "bench".to_string(),
        base_url: "https://api.example.com".to_string(),
        recorded_at: None,
        sessions: vec!["s1".to_string()],
        routes: vec![create, read],
        entity_types: BTreeMap::from([(
            "customers".to_string(),
            EntityType {
                primary_key: "id".to_string(),
                id_shape: None,
                known_ids: known,
                known_missing: Default::default(),
                records: Default::default(),
                read_prefixes: Default::default(),
                keyed_per_parent: false,
                alternate_key: None,
            },
        )]),
        diagnostics: Vec::new(),
        precomputed: None,
    };
    let opts = EngineOptions {
        clock: wraith_engine::ClockConfig {
            mode: wraith_engine::ClockMode::Deterministic,
            base_epoch: 1_700_000_000,
        },
        ..EngineOptions::default()
    };
    match Engine::new(model, None, FixtureTree::default(), opts) {
        Ok(e) => e,
        Err(e) => panic!("bench engine: {e}"),
    }
}

fn request(method: &str, path: &str, body: &str) -> Request {
    Request {
        method: method.to_string(),
        path: path.to_string(),
        query: String::new(),
        headers: vec![
            ("host".to_string(), "127.0.0.1:8081".to_string()),
            ("content-type".to_string(), "application/json".to_string()),
        ],
        body: bytes::Bytes::from(body.to_string()),
    }
}

/// A recorded GET answered by exact replay (past its one moment: last-wins, so every
/// iteration does the same work).
#[divan::bench]
fn exact_replay_get(bencher: divan::Bencher<'_, '_>) {
    let engine = bench_engine();
    let req = request("GET", "/v1/customers/cus_1", "");
    let _ = engine.handle(Some("bench"), &req);
    bencher.bench_local(|| engine.handle(Some("bench"), divan::black_box(&req)));
}

/// A create rendered from the template and stored, then a read of it from the store.
#[divan::bench]
fn create_then_read(bencher: divan::Bencher<'_, '_>) {
    let engine = bench_engine();
    let create = request("POST", "/v1/customers", r#"{"name":"Bench"}"#);
    bencher.bench_local(|| {
        let created = engine.handle(Some("bench"), &create);
        let id = serde_json::from_slice::<serde_json::Value>(&created.body)
            .ok()
            .and_then(|v| v["id"].as_str().map(str::to_string))
            .unwrap_or_default();
        let read = request("GET", &format!("/v1/customers/{id}"), "");
        engine.handle(Some("bench"), &read)
    });
}
