//! Keyed snapshots (`Variant::keyed_snapshots`): a template answer shows the recorded state of
//! the request's own value of the field that decided the recorded answers' field sets: its
//! optional fields as that state had them, its recorded-data lists at that state's length.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_model::*;

/// Five recorded creates: three in `north` answered with `policy` and two `features`, two in
/// `south` answered without `policy` and with no `features`. `policy` is optional (present in
/// 3 of 5, so the unkeyed rule renders it) and `features` a list of recorded strings.
fn servers(keyed: bool) -> wraith_engine::Engine {
    let answer = |i: u32, region: &str| {
        if region == "north" {
            json!({"id": i, "region": region, "policy": "migrate", "features": ["a", "b"]})
        } else {
            json!({"id": i, "region": region, "features": []})
        }
    };
    let recorded = [
        (1, "north"),
        (2, "north"),
        (3, "north"),
        (4, "south"),
        (5, "south"),
    ];
    let mut route = R::new("POST", "/v1/servers").op(StateOp::Create, "servers");
    for (i, region) in recorded {
        let sent = json!({"region": region, "label": format!("recorded-{i}")});
        route = route.exact(
            "/v1/servers",
            "",
            Some(&sent),
            vec![moment(&format!("s{i}/0"), 200, answer(i, region))],
        );
    }
    let features = Node::Array(ArrayNode::List {
        representatives: vec![hole(
            HoleKind::Observed,
            JsonType::String,
            vec![json!("a"), json!("b")],
        )],
        target_length: 2,
        discriminator: None,
    });
    let root = Node::Object {
        fields: vec![
            Field {
                key: "id".into(),
                value: gen_id(cus_id()),
                optional: false,
                present_ratio_bp: 10_000,
            },
            Field {
                key: "region".into(),
                value: echo_body("/region", JsonType::String),
                optional: false,
                present_ratio_bp: 10_000,
            },
            Field {
                key: "policy".into(),
                value: c(json!("migrate")),
                optional: true,
                present_ratio_bp: 6_000,
            },
            Field {
                key: "features".into(),
                value: features,
                optional: false,
                present_ratio_bp: 10_000,
            },
        ],
    };
    let mut route = route.variant(200, Guard::Always, root).build();
    if keyed {
        let bucket = |key: &str, ids: &[u32]| SnapshotBucket {
            key: json!(key),
            moments: ids.iter().map(|i| format!("s{i}/0")).collect(),
        };
        route.variants[0].keyed_snapshots = Some(Box::new(KeyedSnapshots {
            field: EchoSource::Body {
                pointer: "/region".into(),
            },
            buckets: vec![bucket("north", &[1, 2, 3]), bucket("south", &[4, 5])],
        }));
    }
    let read = R::new("GET", "/v1/servers/:id")
        .op(StateOp::Read, "servers")
        .variant(
            200,
            Guard::Always,
            obj(vec![("id", echo_path("id")), ("region", c(json!("north")))]),
        )
        .build();
    engine(
        model(
            vec![route, read],
            vec![("servers", entity_type(&[], &[], Vec::new()))],
        ),
        det_opts(),
    )
}

fn create(e: &wraith_engine::Engine, session: &str, region: &str) -> Value {
    let r = send(
        e,
        Some(session),
        "POST",
        "/v1/servers",
        json!({"region": region, "label": "new"}),
    );
    assert_eq!(r.status, 200);
    body(&r)
}

#[test]
fn keyed_snapshot_renders_optional_fields_as_the_requests_recorded_state_had_them() {
    let e = servers(true);
    let south = create(&e, "a", "south");
    assert!(south.get("policy").is_none(), "{south}");
    assert_eq!(south["features"], json!([]));
    let north = create(&e, "b", "north");
    assert_eq!(north["policy"], json!("migrate"));
    assert_eq!(north["features"], json!(["a", "b"]));
}

#[test]
fn created_record_reads_back_in_its_keyed_state() {
    let e = servers(true);
    let south = create(&e, "a", "south");
    let id = match &south["id"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let read = get(&e, Some("a"), &format!("/v1/servers/{id}"));
    assert_eq!(read.status, 200);
    assert!(body(&read).get("policy").is_none(), "{}", body(&read));
}

#[test]
fn unrecorded_key_value_keeps_the_majority_presence_rule() {
    let e = servers(true);
    let west = create(&e, "a", "west");
    assert_eq!(west["policy"], json!("migrate"));
    // Without keyed snapshots every region renders the majority state.
    let plain = servers(false);
    let south = create(&plain, "a", "south");
    assert_eq!(south["policy"], json!("migrate"));
}

/// Ten recorded posts, each in a run of its own. Eight without credentials: six `public` and
/// two `direct`; the author's `name` was `Ann` in every run but two `direct` ones, which
/// recorded an older state, `Old`. Two by principal `tok-b`, both `public`, by `Bea`. The
/// variant is keyed on `visibility`.
fn posts() -> wraith_engine::Engine {
    let recorded = [
        (1, "public", "Ann", None),
        (2, "public", "Ann", None),
        (3, "public", "Ann", None),
        (4, "public", "Ann", None),
        (5, "public", "Ann", None),
        (6, "direct", "Ann", None),
        (7, "direct", "Old", None),
        (8, "direct", "Old", None),
        (9, "public", "Bea", Some("tok-b")),
        (10, "public", "Bea", Some("tok-b")),
    ];
    let mut route = R::new("POST", "/v1/posts").op(StateOp::Create, "posts");
    for (i, visibility, name, principal) in recorded {
        let sent = json!({"visibility": visibility, "text": format!("recorded-{i}")});
        let mut answer = moment(
            &format!("s{i}/0"),
            200,
            json!({"id": i, "visibility": visibility, "author": {"name": name}}),
        );
        answer.principal = principal.map(str::to_string);
        route = route.exact("/v1/posts", "", Some(&sent), vec![answer]);
    }
    let root = obj(vec![
        ("id", gen_id(cus_id())),
        ("visibility", echo_body("/visibility", JsonType::String)),
        (
            "author",
            obj(vec![(
                "name",
                hole(
                    HoleKind::Observed,
                    JsonType::String,
                    vec![json!("Old"), json!("Ann"), json!("Bea")],
                ),
            )]),
        ),
    ]);
    let mut route = route.variant(200, Guard::Always, root).build();
    let bucket = |key: &str, ids: &[u32]| SnapshotBucket {
        key: json!(key),
        moments: ids.iter().map(|i| format!("s{i}/0")).collect(),
    };
    route.variants[0].keyed_snapshots = Some(Box::new(KeyedSnapshots {
        field: EchoSource::Body {
            pointer: "/visibility".into(),
        },
        buckets: vec![
            bucket("public", &[1, 2, 3, 4, 5, 9, 10]),
            bucket("direct", &[6, 7, 8]),
        ],
    }));
    engine(
        model(
            vec![route],
            vec![("posts", entity_type(&[], &[], Vec::new()))],
        ),
        det_opts(),
    )
}

fn post(e: &wraith_engine::Engine, who: Option<&str>, visibility: &str) -> Value {
    let mut r = req(
        "POST",
        "/v1/posts",
        Some(json!({"visibility": visibility, "text": "new"})),
    );
    if let Some(who) = who {
        r = with_header(r, "authorization", who);
    }
    let answer = e.handle(Some("a"), &r);
    assert_eq!(answer.status, 200);
    body(&answer)
}

#[test]
fn keyed_snapshot_shows_the_state_most_runs_recorded_not_the_buckets_majority() {
    let b = post(&posts(), None, "direct");
    assert_eq!(b["visibility"], json!("direct"));
    // Two of the three `direct` runs recorded `Old`, but six of the eight runs recorded `Ann`:
    // the bucket picks among its own answers, typical of all of them.
    assert_eq!(b["author"]["name"], json!("Ann"), "{b}");
}

#[test]
fn keyed_bucket_without_the_principals_answers_keeps_the_principals_own_state() {
    let e = posts();
    // `tok-b` never posted `direct`: its post shows its own author, not another principal's.
    let b = post(&e, Some("tok-b"), "direct");
    assert_eq!(b["author"]["name"], json!("Bea"), "{b}");
    assert_eq!(
        post(&e, Some("tok-b"), "public")["author"]["name"],
        json!("Bea")
    );
    // A principal the recordings never saw gets the bucket's answer over every principal.
    assert_eq!(
        post(&e, Some("tok-new"), "direct")["author"]["name"],
        json!("Ann")
    );
}
