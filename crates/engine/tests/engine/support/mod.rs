//! Builders for small in-code models, and request helpers, shared by the engine tests.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Value, json};
use wraith_engine::{
    ClockConfig, ClockMode, Engine, EngineOptions, FixtureSetFiles, FixtureTree, Request, Response,
};
use wraith_model::*;

/// A route under construction.
pub struct R(pub Route);

impl R {
    pub fn new(method: &str, path: &str) -> R {
        let params = path
            .split('/')
            .filter_map(|s| s.strip_prefix(':'))
            .map(str::to_string)
            .collect();
        R(Route {
            id: format!(
                "{}_{}",
                method.to_lowercase(),
                path.replace(['/', ':'], "_")
            ),
            method: method.to_string(),
            path: path.to_string(),
            params,
            exchange_count: 1,
            ..Route::default()
        })
    }

    pub fn op(mut self, op: StateOp, entity: &str) -> R {
        self.0.state_op = Some(op);
        self.0.entity_type = Some(entity.to_string());
        if matches!(op, StateOp::Read | StateOp::Update | StateOp::Delete) {
            self.0.id_param = self.0.params.last().cloned();
        }
        self
    }

    pub fn origin(mut self, origin: &str) -> R {
        self.0.origin = Some(origin.to_string());
        self
    }

    pub fn parent(mut self, param: &str, ty: &str) -> R {
        self.0.parent_params.push(ParentParam {
            param: param.to_string(),
            entity_type: ty.to_string(),
        });
        self
    }

    pub fn list(mut self, shape: ListShape) -> R {
        self.0.list = Some(shape);
        self
    }

    pub fn tuples(mut self, tuples: &[&[&str]]) -> R {
        self.0.known_param_tuples = tuples
            .iter()
            .map(|t| t.iter().map(|s| s.to_string()).collect())
            .collect();
        self
    }

    pub fn variant(self, status: u16, guard: Guard, body: Node) -> R {
        self.variant_h(status, guard, body, json_headers())
    }

    pub fn variant_h(
        mut self,
        status: u16,
        guard: Guard,
        body: Node,
        headers: Vec<HeaderProgram>,
    ) -> R {
        let id = format!("{:016x}", self.0.variants.len());
        self.0.variants.push(Variant {
            id,
            status,
            guard,
            headers,
            body: BodyTemplate::Json { root: body },
            evidence: Evidence {
                exchange_count: 1,
                confidence_bp: 10_000,
                sources: Vec::new(),
            },
            union: None,
            keyed_snapshots: None,
            record_type: None,
        });
        self
    }

    pub fn variant_empty(mut self, status: u16, guard: Guard) -> R {
        let id = format!("{:016x}", self.0.variants.len());
        self.0.variants.push(Variant {
            id,
            status,
            guard,
            headers: Vec::new(),
            body: BodyTemplate::Empty,
            evidence: Evidence {
                exchange_count: 1,
                confidence_bp: 10_000,
                sources: Vec::new(),
            },
            union: None,
            keyed_snapshots: None,
            record_type: None,
        });
        self
    }

    /// An exact-replay entry for `path?query` with a JSON (or no) request body.
    pub fn exact(
        mut self,
        path: &str,
        query: &str,
        body: Option<&Value>,
        moments: Vec<Moment>,
    ) -> R {
        let bytes = body.map(|b| b.to_string()).unwrap_or_default();
        let key = request_key::request_key(path, query, Some("application/json"), bytes.as_bytes());
        self.0.exact.push(ExactEntry {
            key,
            moments,
            session_bound: Vec::new(),
        });
        self.0.exact.sort_by(|a, b| a.key.cmp(&b.key));
        self
    }

    pub fn build(self) -> Route {
        self.0
    }
}

/// `POST /v1/lists` (creates `lists`, request body `{"title": "t"}`) recorded identically by
/// several runs: one moment per `(source, minted id)`, in order.
pub fn lists_create(moments: &[(&str, &str)]) -> Route {
    lists_create_answered(
        moments
            .iter()
            .map(|(source, id)| moment(source, 200, json!({"id": id, "title": "t"})))
            .collect(),
    )
}

/// `POST /v1/lists` with body `{"title": "t"}`, recorded with the given `moments`.
pub fn lists_create_answered(moments: Vec<Moment>) -> Route {
    let create_body = json!({"title": "t"});
    R::new("POST", "/v1/lists")
        .op(StateOp::Create, "lists")
        .variant(200, Guard::Always, c(json!({"id": "99", "title": "t"})))
        .exact("/v1/lists", "", Some(&create_body), moments)
        .build()
}

/// An engine serving the lists create `post` and `GET /v1/notes`, whose one recording is
/// `page`, answered in run b after its create (`b/1`): where a replayed page names run b's
/// record of a create the session made.
pub fn lists_with_run_b_notes(post: Route, page: Value) -> Engine {
    let notes = R::new("GET", "/v1/notes")
        .variant(200, Guard::Always, c(json!([])))
        .exact("/v1/notes", "", None, vec![moment("b/1", 200, page)])
        .build();
    engine(
        model(
            vec![post, notes],
            vec![("lists", entity_type(&[], &[], vec![]))],
        ),
        det_opts(),
    )
}

/// A list whose body is the bare array of records: no envelope, filters or pagination.
pub fn bare_array_list() -> ListShape {
    ListShape {
        items_pointer: String::new(),
        pagination: Pagination::None,
        filters: vec![],
        filter_header: None,
        envelope: vec![],
        parent_member: None,
        set_filters: Vec::new(),
        lower_bounds: Vec::new(),
        own_records_only: false,
        principal_records_only: false,
        hidden_values: Vec::new(),
        filter_wildcards: Vec::new(),
        sorts: Vec::new(),
        search_filters: Vec::new(),
        untouched_item: None,
    }
}

pub fn json_headers() -> Vec<HeaderProgram> {
    vec![HeaderProgram {
        name: "content-type".to_string(),
        program: HeaderRule::Constant {
            values: vec!["application/json".to_string()],
        },
    }]
}

pub fn moment(source: &str, status: u16, body: Value) -> Moment {
    Moment {
        source: source.to_string(),
        principal: None,
        respelled: false,
        status,
        headers: vec![("content-type".to_string(), "application/json".to_string())],
        body: RecordedBody::json(body),
    }
}

pub fn c(v: Value) -> Node {
    Node::constant(v)
}

pub fn obj(fields: Vec<(&str, Node)>) -> Node {
    Node::object(fields)
}

pub fn hole(source: HoleKind, t: JsonType, examples: Vec<Value>) -> Node {
    Node::hole(source, t, examples, 9_000)
}

pub fn echo_path(param: &str) -> Node {
    hole(
        HoleKind::Echo {
            from: EchoSource::Path {
                param: param.to_string(),
            },
        },
        JsonType::String,
        vec![],
    )
}

pub fn echo_body(pointer: &str, t: JsonType) -> Node {
    hole(
        HoleKind::Echo {
            from: EchoSource::Body {
                pointer: pointer.to_string(),
            },
        },
        t,
        vec![],
    )
}

pub fn cus_id() -> IdShape {
    IdShape::Token {
        prefix: "cus_".to_string(),
        charset: IdCharset::Base62,
        length: 14,
    }
}

pub fn gen_id(shape: IdShape) -> Node {
    hole(HoleKind::Generated { shape }, JsonType::String, vec![])
}

pub fn clock(unit: ClockUnit) -> Node {
    hole(
        HoleKind::Clock { unit, after: None },
        JsonType::Number,
        vec![],
    )
}

pub fn member(m: bool) -> Guard {
    Guard::StateMember { member: m }
}

pub fn entity_type(known: &[&str], missing: &[&str], records: Vec<Value>) -> EntityType {
    EntityType {
        primary_key: "id".to_string(),
        id_shape: Some(cus_id()),
        known_ids: known.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>(),
        known_missing: missing.iter().map(|s| s.to_string()).collect(),
        records: records
            .into_iter()
            .map(|r| (r["id"].as_str().unwrap_or_default().to_string(), r))
            .collect(),
        read_prefixes: Default::default(),
        keyed_per_parent: false,
        alternate_key: None,
    }
}

pub fn model(routes: Vec<Route>, types: Vec<(&str, EntityType)>) -> Model {
    let mut routes = routes;
    routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    Model {
        schema_version: MODEL_SCHEMA_VERSION,
        tool_version: "test".to_string(),
        twin: "shop".to_string(),
        base_url: "https://api.shop.example".to_string(),
        recorded_at: Some("2024-01-01T00:00:00Z".to_string()),
        sessions: vec!["s1".to_string()],
        routes,
        entity_types: types
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect::<BTreeMap<_, _>>(),
        diagnostics: Vec::new(),
        precomputed: None,
    }
}

fn customer_node() -> Node {
    obj(vec![
        ("id", echo_path("id")),
        ("object", c(json!("customer"))),
        (
            "name",
            hole(
                HoleKind::Observed,
                JsonType::String,
                vec![json!("Alice"), json!("Bob")],
            ),
        ),
        ("email", c(json!("someone@example.com"))),
        (
            "address",
            obj(vec![
                ("city", c(json!("Paris"))),
                ("zip", c(json!("75001"))),
            ]),
        ),
        ("tags", c(json!(["a"]))),
        ("created", clock(ClockUnit::EpochSec)),
    ])
}

fn error_node(msg: &str) -> Node {
    obj(vec![(
        "error",
        obj(vec![
            ("type", c(json!("invalid_request_error"))),
            ("message", c(json!(msg))),
        ]),
    )])
}

/// A Stripe-like shop: customers CRUD + list, widgets (read without 4xx), nested orgs/repos.
pub fn shop_model() -> Model {
    let create = R::new("POST", "/v1/customers")
        .op(StateOp::Create, "customers")
        .variant(
            400,
            Guard::BodyValid { valid: false },
            error_node("Invalid request body"),
        )
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("object", c(json!("customer"))),
                ("name", echo_body("/name", JsonType::String)),
                ("email", echo_body("/email", JsonType::String)),
                ("balance", echo_body("/balance", JsonType::Number)),
                (
                    "address",
                    obj(vec![
                        ("city", c(json!("Paris"))),
                        ("zip", c(json!("75001"))),
                    ]),
                ),
                ("tags", c(json!([]))),
                ("created", clock(ClockUnit::EpochSec)),
            ]),
        )
        .exact(
            "/v1/customers",
            "",
            Some(&json!({"name": "Recorded"})),
            vec![moment(
                "s1/5",
                200,
                json!({"id": "cus_rec", "object": "customer", "name": "Recorded", "created": 1}),
            )],
        )
        .build();
    let read = R::new("GET", "/v1/customers/:id")
        .op(StateOp::Read, "customers")
        .variant(200, member(true), customer_node())
        .variant(404, member(false), error_node("No such customer"))
        .exact(
            "/v1/customers/cus_1",
            "",
            None,
            vec![
                moment("s1/1", 200, json!({"id": "cus_1", "object": "customer", "name": "Alice", "url": "https://api.shop.example/v1/customers/cus_1"})),
                moment("s1/3", 200, json!({"id": "cus_1", "object": "customer", "name": "Alice Updated", "url": "https://api.shop.example/v1/customers/cus_1"})),
            ],
        )
        .exact(
            "/v1/customers/cus_gone",
            "",
            None,
            vec![moment(
                "s1/9",
                404,
                json!({"error": {"type": "invalid_request_error", "message": "recorded 404"}}),
            )],
        )
        .build();
    let update = R::new("PATCH", "/v1/customers/:id")
        .op(StateOp::Update, "customers")
        .variant(200, member(true), customer_node())
        .variant(404, member(false), error_node("No such customer"))
        .build();
    let delete = R::new("DELETE", "/v1/customers/:id")
        .op(StateOp::Delete, "customers")
        .variant(
            200,
            member(true),
            obj(vec![
                ("id", echo_path("id")),
                ("object", c(json!("customer"))),
                ("deleted", c(json!(true))),
            ]),
        )
        .variant(404, member(false), error_node("No such customer"))
        .build();
    let list = R::new("GET", "/v1/customers")
        .op(StateOp::List, "customers")
        .list(ListShape {
            items_pointer: "/data".to_string(),
            pagination: Pagination::LimitOffset {
                limit: "limit".to_string(),
                offset: "offset".to_string(),
                default_limit: Some(10),
            },
            filters: vec!["email".to_string()],
            filter_header: Some("x-filter".to_string()),
            envelope: vec![
                EnvelopeField {
                    pointer: "/total".to_string(),
                    meaning: EnvelopeMeaning::Total,
                },
                EnvelopeField {
                    pointer: "/has_more".to_string(),
                    meaning: EnvelopeMeaning::HasMore,
                },
            ],
            parent_member: None,
            set_filters: Vec::new(),
            lower_bounds: Vec::new(),
            own_records_only: false,
            principal_records_only: false,
            hidden_values: Vec::new(),
            filter_wildcards: Vec::new(),
            sorts: Vec::new(),
            search_filters: Vec::new(),
            untouched_item: None,
        })
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("object", c(json!("list"))),
                (
                    "data",
                    Node::Array(ArrayNode::List {
                        representatives: vec![customer_node()],
                        target_length: 2,
                        discriminator: None,
                    }),
                ),
                ("has_more", c(json!(false))),
                ("total", c(json!(2))),
            ]),
        )
        .exact(
            "/v1/customers",
            "",
            None,
            vec![moment(
                "s1/2",
                200,
                json!({"object": "list", "data": [
                    {"id": "cus_1", "object": "customer", "name": "Alice", "email": "alice@example.com"},
                    {"id": "cus_2", "object": "customer", "name": "Bob", "email": "bob@example.com"}
                ], "has_more": false, "total": 2}),
            )],
        )
        .exact(
            "/v1/customers",
            "limit=2",
            None,
            vec![moment(
                "s1/3",
                200,
                json!({"object": "list", "data": [
                    {"id": "cus_1", "object": "customer", "name": "Alice", "email": "alice@example.com"},
                    {"id": "cus_2", "object": "customer", "name": "Bob", "email": "bob@example.com"}
                ], "has_more": false, "total": 2}),
            )],
        )
        .build();
    let widget = R::new("GET", "/v1/widgets/:id")
        .op(StateOp::Read, "widgets")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", c(json!("wid_1"))),
                (
                    "color",
                    hole(
                        HoleKind::Observed,
                        JsonType::String,
                        vec![json!("red"), json!("blue"), json!("green")],
                    ),
                ),
            ]),
        )
        .build();
    let repo = R::new("GET", "/v1/orgs/:org/repos/:repo")
        .op(StateOp::Read, "repos")
        .parent("org", "orgs")
        .tuples(&[&["acme", "rocket"]])
        .variant(
            200,
            Guard::Always,
            obj(vec![("id", echo_path("repo")), ("org", echo_path("org"))]),
        )
        .build();
    let repos = R::new("GET", "/v1/orgs/:org/repos")
        .op(StateOp::List, "repos")
        .parent("org", "orgs")
        .list(ListShape {
            items_pointer: String::new(),
            pagination: Pagination::None,
            filters: vec![],
            filter_header: None,
            envelope: vec![],
            parent_member: None,
            set_filters: Vec::new(),
            lower_bounds: Vec::new(),
            own_records_only: false,
            principal_records_only: false,
            hidden_values: Vec::new(),
            filter_wildcards: Vec::new(),
            sorts: Vec::new(),
            search_filters: Vec::new(),
            untouched_item: None,
        })
        .variant(
            200,
            Guard::Always,
            Node::Array(ArrayNode::List {
                representatives: vec![obj(vec![
                    ("id", c(json!("rocket"))),
                    ("org", echo_path("org")),
                ])],
                target_length: 1,
                discriminator: None,
            }),
        )
        .build();
    let org = R::new("GET", "/v1/orgs/:org")
        .op(StateOp::Read, "orgs")
        .variant(200, Guard::Always, obj(vec![("id", echo_path("org"))]))
        .build();
    let search = R::new("POST", "/v1/customers/search")
        .variant(
            200,
            Guard::Always,
            obj(vec![("object", c(json!("search_result")))]),
        )
        .build();
    model(
        vec![
            create, read, update, delete, list, widget, repo, repos, org, search,
        ],
        vec![
            (
                "customers",
                entity_type(
                    &["cus_1", "cus_2"],
                    &["cus_gone"],
                    vec![
                        json!({"id": "cus_1", "object": "customer", "name": "Alice", "email": "alice@example.com"}),
                        json!({"id": "cus_2", "object": "customer", "name": "Bob", "email": "bob@example.com"}),
                    ],
                ),
            ),
            ("widgets", entity_type(&["wid_1"], &["wid_404"], vec![])),
            ("repos", entity_type(&["rocket"], &[], vec![])),
            ("orgs", entity_type(&["acme"], &[], vec![])),
        ],
    )
}

/// Options with a deterministic clock, as most tests want.
pub fn det_opts() -> EngineOptions {
    EngineOptions {
        clock: ClockConfig {
            mode: ClockMode::Deterministic,
            base_epoch: 1_700_000_000,
        },
        twin_name: Some("shop".to_string()),
        ..EngineOptions::default()
    }
}

pub fn engine(model: Model, opts: EngineOptions) -> Engine {
    match Engine::new(model, None, FixtureTree::default(), opts) {
        Ok(e) => e,
        Err(e) => panic!("engine: {e}"),
    }
}

pub fn engine_with(
    model: Model,
    schema: Option<&str>,
    tree: FixtureTree,
    opts: EngineOptions,
) -> Engine {
    match Engine::new(model, schema, tree, opts) {
        Ok(e) => e,
        Err(e) => panic!("engine: {e}"),
    }
}

/// The model `wraith synth` would make of `sessions` for a twin named `twin`.
pub fn synthesize(sessions: &[wraith_recording::RecordedSession], twin: &str) -> Model {
    wraith_synth::synthesize(
        sessions,
        &wraith_synth::SynthOptions {
            twin: twin.into(),
            base_url: "http://127.0.0.1:18080".into(),
            tool_version: "test".into(),
            tag: None,
            request_keying: Default::default(),
            run_gap_us: None,
        },
    )
    .model
}

pub fn shop() -> Engine {
    engine(shop_model(), det_opts())
}

/// `engine` with the default PII pass off, for tests that pin recorded values (the time axis)
/// rather than the outbound policy.
pub fn without_pii(mut e: Engine) -> Engine {
    let mut policy = e.outbound_policy().clone();
    policy.pii.detect = false;
    if let Err(err) = e.set_outbound_policy(policy) {
        panic!("outbound policy: {err}");
    }
    e
}

pub fn req(method: &str, path_and_query: &str, body: Option<Value>) -> Request {
    let (path, query) = match path_and_query.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (path_and_query.to_string(), String::new()),
    };
    let mut headers = vec![("host".to_string(), "127.0.0.1:8081".to_string())];
    let body = match body {
        Some(b) => {
            headers.push(("content-type".to_string(), "application/json".to_string()));
            bytes::Bytes::from(b.to_string())
        }
        None => bytes::Bytes::new(),
    };
    Request {
        method: method.to_string(),
        path,
        query,
        headers,
        body,
    }
}

pub fn with_header(mut r: Request, name: &str, value: &str) -> Request {
    r.headers.push((name.to_string(), value.to_string()));
    r
}

pub fn get(e: &Engine, session: Option<&str>, path: &str) -> Response {
    e.handle(session, &req("GET", path, None))
}

pub fn send(e: &Engine, session: Option<&str>, method: &str, path: &str, body: Value) -> Response {
    e.handle(session, &req(method, path, Some(body)))
}

/// `POST /v1/posts` with `{"text": text}` as principal `who` (its `Authorization` value) in
/// session `s`; the answer must be a 200, its body is returned.
pub fn post_as(e: &Engine, s: &str, who: &str, text: &str) -> Value {
    let r = e.handle(
        Some(s),
        &with_header(
            req("POST", "/v1/posts", Some(json!({ "text": text }))),
            "authorization",
            who,
        ),
    );
    assert_eq!(r.status, 200);
    body(&r)
}

pub fn body(r: &Response) -> Value {
    serde_json::from_slice(&r.body).unwrap_or(Value::Null)
}

pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

pub fn set(
    fixture_json: Option<&str>,
    flat: &[(&str, &str)],
    patches: &[(&str, &str)],
) -> FixtureSetFiles {
    FixtureSetFiles {
        fixture_json: fixture_json.map(str::to_string),
        flat: flat
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ignored: Vec::new(),
        patches: patches
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

pub fn tree(sets: Vec<(&str, FixtureSetFiles)>, loose: &[(&str, &str)]) -> FixtureTree {
    FixtureTree {
        sets: sets.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        loose: loose
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

pub const SCHEMA: &str = r#"{"schema_version": 1, "entity_types": {
    "customers": {"primary_key": "id"},
    "notes": {"primary_key": "slug"}
}}"#;

pub fn wall(us: i64) -> wraith_engine::WallClock {
    Arc::new(move || us)
}

/// A recorded JSON exchange `n` of a session: `method path` (with a JSON `body` when given)
/// answered 200 with `response`, timed `n` ms after a fixed start.
pub fn json_exchange(
    n: u64,
    method: &str,
    path: &str,
    body: Option<Value>,
    response: Value,
) -> wraith_recording::Exchange {
    let mut resp_headers = wraith_recording::Headers::new();
    resp_headers.insert("content-type".into(), vec!["application/json".into()]);
    let start = 1_700_000_000_000_000 + n * 1_000;
    wraith_recording::Exchange {
        protocol: "http".into(),
        request: wraith_recording::RecordedRequest {
            method: method.into(),
            path: path.into(),
            query: String::new(),
            headers: wraith_recording::Headers::new(),
            body: body
                .as_ref()
                .map(|b| b.to_string().into_bytes())
                .unwrap_or_default()
                .into(),
            content_type: body.map(|_| "application/json".into()),
            origin: None,
        },
        response: wraith_recording::RecordedResponse {
            status: 200,
            headers: resp_headers,
            content_type: Some("application/json".into()),
            trailers: None,
        },
        frames: vec![wraith_recording::Frame {
            direction: "server".into(),
            timestamp_us: start,
            body: response.to_string().into_bytes(),
            frame_type: "data".into(),
        }],
        timing: wraith_recording::Timing {
            request_start_us: start,
            first_byte_us: start,
            last_byte_us: start,
        },
        correlation: wraith_recording::Correlation {
            exchange_index: n,
            tags: Vec::new(),
        },
        safety: wraith_recording::Safety::default(),
        content: wraith_recording::Content::default(),
        truncated: false,
    }
}

/// A complete recorded session `id` of `exchanges`.
pub fn recorded_session(
    id: &str,
    exchanges: Vec<wraith_recording::Exchange>,
) -> wraith_recording::RecordedSession {
    wraith_recording::RecordedSession {
        manifest: wraith_recording::Manifest {
            complete: true,
            end_time_us: 0,
            exchange_count: exchanges.len() as u64,
            policy_hash: String::new(),
            proxy_mode: "reverse".into(),
            schema_version: 1,
            session_id: id.into(),
            start_time_us: 0,
            tags: Vec::new(),
            tool_version: "test".into(),
        },
        exchanges,
    }
}
