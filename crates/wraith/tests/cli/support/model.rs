//! Models written in code for the serve tests, built from `wraith_model` types only: a small
//! "shop" API with a CRUD collection (`customers`), a read-only collection with no 4xx variant
//! (`products`), a nested collection (`/v1/orgs/:org/repos`), exact recorded moments with source
//! identity, and helpers to add many routes.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use wraith_model::*;

pub fn konst(v: Value) -> Node {
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

pub fn echo_body(pointer: &str, example: Value) -> Node {
    hole(
        HoleKind::Echo {
            from: EchoSource::Body {
                pointer: pointer.to_string(),
            },
        },
        JsonType::of(&example),
        vec![example],
    )
}

pub fn json_body(root: Node) -> BodyTemplate {
    BodyTemplate::Json { root }
}

pub fn variant(id: &str, status: u16, guard: Guard, body: BodyTemplate) -> Variant {
    Variant {
        id: id.to_string(),
        status,
        guard,
        headers: vec![HeaderProgram {
            name: "content-type".to_string(),
            program: HeaderRule::Constant {
                values: vec!["application/json".to_string()],
            },
        }],
        body,
        evidence: Evidence {
            exchange_count: 1,
            confidence_bp: 9_000,
            sources: vec![],
        },
        union: None,
        keyed_snapshots: None,
        record_type: None,
    }
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

pub fn exact_get(path: &str, query: &str, moments: Vec<Moment>) -> ExactEntry {
    ExactEntry {
        key: wraith_model::request_key::request_key(path, query, None, b""),
        moments,
        session_bound: Vec::new(),
    }
}

pub struct RouteSpec<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub state_op: Option<StateOp>,
    pub entity_type: Option<&'a str>,
    pub variants: Vec<Variant>,
    pub exact: Vec<ExactEntry>,
}

pub fn route(spec: RouteSpec<'_>) -> Route {
    let params: Vec<String> = spec
        .path
        .split('/')
        .filter_map(|s| s.strip_prefix(':'))
        .map(str::to_string)
        .collect();
    let words: String = spec
        .path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_start_matches(':'))
        .collect::<Vec<_>>()
        .join("_");
    let id_param = match spec.state_op {
        Some(StateOp::Read | StateOp::Update | StateOp::Delete) => params.last().cloned(),
        _ => None,
    };
    let list = match spec.state_op {
        Some(StateOp::List) => Some(ListShape {
            items_pointer: "/data".to_string(),
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
        }),
        _ => None,
    };
    Route {
        id: format!(
            "{}_{}_{:08x}",
            spec.method.to_lowercase(),
            words,
            words.len()
        ),
        method: spec.method.to_string(),
        path: spec.path.to_string(),
        params,
        state_op: spec.state_op,
        entity_type: spec.entity_type.map(str::to_string),
        id_param,
        list,
        variants: spec.variants,
        exact: spec.exact,
        exchange_count: 1,
        ..Route::default()
    }
}

fn customer_read_body() -> Node {
    obj(vec![
        ("id", echo_path("id")),
        ("object", konst(json!("customer"))),
        (
            "name",
            hole(HoleKind::Observed, JsonType::String, vec![json!("Alice")]),
        ),
    ])
}

/// The recorded representation of `cus_1`.
pub fn cus_1() -> Value {
    json!({"id": "cus_1", "object": "customer", "name": "Alice"})
}

/// The shop model. Routes (sorted by path, method):
/// - `GET /v1/customers` list (exact: recorded collection with `cus_1`)
/// - `POST /v1/customers` create (generated `cus_` id, echoed name, clock `created`)
/// - `GET /v1/customers/:id` read: 200 for members, 404 for non-members (state_member guard);
///   exact moments for `/v1/customers/cus_1` and the 404-only `/v1/customers/cus_missing`
/// - `PATCH /v1/customers/:id` update, `DELETE /v1/customers/:id` delete
/// - `GET /v1/orgs/:org/repos` parameter-bearing list with no 4xx variant
/// - `GET /v1/products/:id` read with no 4xx variant
pub fn shop(twin: &str) -> Model {
    let not_found = json_body(obj(vec![(
        "error",
        obj(vec![
            ("type", konst(json!("invalid_request_error"))),
            ("message", konst(json!("No such customer"))),
        ]),
    )]));
    let routes = vec![
        route(RouteSpec {
            method: "GET",
            path: "/v1/customers",
            state_op: Some(StateOp::List),
            entity_type: Some("customers"),
            variants: vec![variant(
                "0000000000000001",
                200,
                Guard::Always,
                json_body(obj(vec![
                    ("object", konst(json!("list"))),
                    (
                        "data",
                        Node::Array(ArrayNode::List {
                            representatives: vec![konst(cus_1())],
                            target_length: 1,
                            discriminator: None,
                        }),
                    ),
                ])),
            )],
            exact: vec![exact_get(
                "/v1/customers",
                "",
                vec![moment(
                    "sess-a/0",
                    200,
                    json!({"object": "list", "data": [cus_1()]}),
                )],
            )],
        }),
        route(RouteSpec {
            method: "POST",
            path: "/v1/customers",
            state_op: Some(StateOp::Create),
            entity_type: Some("customers"),
            variants: vec![variant(
                "0000000000000002",
                200,
                Guard::Always,
                json_body(obj(vec![
                    (
                        "id",
                        hole(
                            HoleKind::Generated {
                                shape: IdShape::Token {
                                    prefix: "cus_".to_string(),
                                    charset: IdCharset::Base62,
                                    length: 14,
                                },
                            },
                            JsonType::String,
                            vec![json!("cus_AAAAAAAAAAAAAA")],
                        ),
                    ),
                    ("object", konst(json!("customer"))),
                    ("name", echo_body("/name", json!("Bob"))),
                    (
                        "created",
                        hole(
                            HoleKind::Clock {
                                unit: ClockUnit::EpochSec,
                                after: None,
                            },
                            JsonType::Number,
                            vec![json!(1_700_000_000)],
                        ),
                    ),
                ])),
            )],
            exact: vec![],
        }),
        route(RouteSpec {
            method: "GET",
            path: "/v1/customers/:id",
            state_op: Some(StateOp::Read),
            entity_type: Some("customers"),
            variants: vec![
                variant(
                    "0000000000000003",
                    200,
                    Guard::StateMember { member: true },
                    json_body(customer_read_body()),
                ),
                variant(
                    "0000000000000004",
                    404,
                    Guard::StateMember { member: false },
                    not_found.clone(),
                ),
            ],
            exact: vec![
                exact_get(
                    "/v1/customers/cus_1",
                    "",
                    vec![moment("sess-a/1", 200, cus_1())],
                ),
                exact_get(
                    "/v1/customers/cus_missing",
                    "",
                    vec![moment(
                        "sess-a/2",
                        404,
                        json!({"error": {"type": "invalid_request_error", "message": "No such customer"}}),
                    )],
                ),
            ],
        }),
        route(RouteSpec {
            method: "PATCH",
            path: "/v1/customers/:id",
            state_op: Some(StateOp::Update),
            entity_type: Some("customers"),
            variants: vec![
                variant(
                    "0000000000000005",
                    200,
                    Guard::StateMember { member: true },
                    json_body(customer_read_body()),
                ),
                variant(
                    "0000000000000006",
                    404,
                    Guard::StateMember { member: false },
                    not_found.clone(),
                ),
            ],
            exact: vec![],
        }),
        route(RouteSpec {
            method: "DELETE",
            path: "/v1/customers/:id",
            state_op: Some(StateOp::Delete),
            entity_type: Some("customers"),
            variants: vec![
                variant(
                    "0000000000000007",
                    200,
                    Guard::StateMember { member: true },
                    json_body(obj(vec![
                        ("id", echo_path("id")),
                        ("object", konst(json!("customer"))),
                        ("deleted", konst(json!(true))),
                    ])),
                ),
                variant(
                    "0000000000000008",
                    404,
                    Guard::StateMember { member: false },
                    not_found,
                ),
            ],
            exact: vec![],
        }),
        route(RouteSpec {
            method: "GET",
            path: "/v1/orgs/:org/repos",
            state_op: Some(StateOp::List),
            entity_type: Some("repos"),
            variants: vec![variant(
                "0000000000000009",
                200,
                Guard::Always,
                json_body(obj(vec![(
                    "data",
                    Node::Array(ArrayNode::List {
                        representatives: vec![konst(json!({"id": "repo_1", "name": "wraith"}))],
                        target_length: 1,
                        discriminator: None,
                    }),
                )])),
            )],
            exact: vec![],
        }),
        route(RouteSpec {
            method: "GET",
            path: "/v1/products/:id",
            state_op: Some(StateOp::Read),
            entity_type: Some("products"),
            variants: vec![variant(
                "000000000000000a",
                200,
                Guard::Always,
                json_body(obj(vec![
                    ("id", echo_path("id")),
                    ("object", konst(json!("product"))),
                    (
                        "name",
                        hole(HoleKind::Observed, JsonType::String, vec![json!("Lamp")]),
                    ),
                ])),
            )],
            exact: vec![exact_get(
                "/v1/products/prod_1",
                "",
                vec![moment(
                    "sess-a/3",
                    200,
                    json!({"id": "prod_1", "object": "product", "name": "Lamp"}),
                )],
            )],
        }),
    ];
    let mut entity_types = BTreeMap::new();
    entity_types.insert(
        "customers".to_string(),
        EntityType {
            primary_key: "id".to_string(),
            id_shape: Some(IdShape::Token {
                prefix: "cus_".to_string(),
                charset: IdCharset::Base62,
                length: 14,
            }),
            known_ids: BTreeSet::from(["cus_1".to_string()]),
            known_missing: BTreeSet::from(["cus_missing".to_string()]),
            records: BTreeMap::from([("cus_1".to_string(), cus_1())]),
            read_prefixes: BTreeMap::new(),
            keyed_per_parent: false,
            alternate_key: None,
        },
    );
    entity_types.insert(
        "products".to_string(),
        EntityType {
            primary_key: "id".to_string(),
            id_shape: None,
            known_ids: BTreeSet::from(["prod_1".to_string()]),
            known_missing: BTreeSet::from(["prod_gone".to_string()]),
            records: BTreeMap::new(),
            read_prefixes: BTreeMap::new(),
            keyed_per_parent: false,
            alternate_key: None,
        },
    );
    entity_types.insert(
        "orgs".to_string(),
        EntityType {
            primary_key: "id".to_string(),
            id_shape: None,
            known_ids: BTreeSet::from(["acme".to_string()]),
            known_missing: BTreeSet::new(),
            records: BTreeMap::new(),
            read_prefixes: BTreeMap::new(),
            keyed_per_parent: false,
            alternate_key: None,
        },
    );
    entity_types.insert(
        "repos".to_string(),
        EntityType {
            primary_key: "id".to_string(),
            id_shape: None,
            known_ids: BTreeSet::from(["repo_1".to_string()]),
            known_missing: BTreeSet::new(),
            records: BTreeMap::new(),
            read_prefixes: BTreeMap::new(),
            keyed_per_parent: false,
            alternate_key: None,
        },
    );
    let mut routes = routes;
    for r in &mut routes {
        if r.path == "/v1/orgs/:org/repos" {
            r.parent_params = vec![ParentParam {
                param: "org".to_string(),
                entity_type: "orgs".to_string(),
            }];
        }
    }
    routes.sort_by(|a, b| (&a.path, &a.method).cmp(&(&b.path, &b.method)));
    Model {
        schema_version: MODEL_SCHEMA_VERSION,
        tool_version: "test".to_string(),
        twin: twin.to_string(),
        base_url: "https://api.shop.test".to_string(),
        recorded_at: Some("2026-01-01T00:00:00Z".to_string()),
        sessions: vec!["sess-a".to_string()],
        routes,
        entity_types,
        diagnostics: vec![],
        precomputed: None,
    }
}

/// A model with `n` literal `GET /r/<i>` routes (for the route-miss cap of 20).
pub fn many_routes(twin: &str, n: usize) -> Model {
    let mut routes: Vec<Route> = (0..n)
        .map(|i| {
            let path = format!("/r/{i:03}");
            route(RouteSpec {
                method: "GET",
                path: &path,
                state_op: None,
                entity_type: None,
                variants: vec![variant(
                    &format!("{i:016x}"),
                    200,
                    Guard::Always,
                    json_body(konst(json!({"i": i}))),
                )],
                exact: vec![],
            })
        })
        .collect();
    routes.sort_by(|a, b| (&a.path, &a.method).cmp(&(&b.path, &b.method)));
    Model {
        schema_version: MODEL_SCHEMA_VERSION,
        tool_version: "test".to_string(),
        twin: twin.to_string(),
        base_url: "https://api.many.test".to_string(),
        recorded_at: None,
        sessions: vec![],
        routes,
        entity_types: BTreeMap::new(),
        diagnostics: vec![],
        precomputed: None,
    }
}
