//! Request keying: an observed position whose recorded values were decided by one request
//! field (the plan a create names decides the memory it reports) renders the bucket of the
//! request's value, and the created record reads back with it.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_model::*;

/// `memory`: observed 1024 or 16384, keyed by the request's `type` (`small` → 1024,
/// `large` → 16384).
fn keyed_memory() -> Node {
    let Node::Hole(mut memory) = hole(
        HoleKind::Observed,
        JsonType::Number,
        vec![json!(16384), json!(1024)],
    ) else {
        unreachable!("hole() builds a hole")
    };
    memory.keyed = Some(Box::new(KeyedValues::single(
        EchoSource::Body {
            pointer: "/type".into(),
        },
        vec![
            KeyBucket {
                key: json!("large"),
                value: json!(16384),
                support: 1,
            },
            KeyBucket {
                key: json!("small"),
                value: json!(1024),
                support: 9,
            },
        ],
    )));
    Node::Hole(memory)
}

/// `memory`: observed 1024, 2048 or 16384, keyed by the request's `region` and `type`
/// together (neither decides it alone): `eu`+`small` → 1024, `us`+`small` → 2048,
/// `us`+`large` → 16384.
fn memory_keyed_by_region_and_plan() -> Node {
    let Node::Hole(mut memory) = hole(
        HoleKind::Observed,
        JsonType::Number,
        vec![json!(16384), json!(2048), json!(1024)],
    ) else {
        unreachable!("hole() builds a hole")
    };
    let bucket = |region: &str, plan: &str, value: u64| KeyBucket {
        key: json!([region, plan]),
        value: json!(value),
        support: 2,
    };
    memory.keyed = Some(Box::new(KeyedValues::combined(
        vec![
            EchoSource::Body {
                pointer: "/region".into(),
            },
            EchoSource::Body {
                pointer: "/type".into(),
            },
        ],
        vec![
            bucket("eu", "small", 1024),
            bucket("us", "large", 16384),
            bucket("us", "small", 2048),
        ],
    )));
    Node::Hole(memory)
}

fn instances() -> wraith_engine::Engine {
    instances_with(keyed_memory())
}

/// A create answering `memory` and the read of what it created.
fn instances_with(memory: Node) -> wraith_engine::Engine {
    let create = R::new("POST", "/v1/instances")
        .op(StateOp::Create, "instances")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("type", echo_body("/type", JsonType::String)),
                ("specs", obj(vec![("memory", memory)])),
            ]),
        )
        .build();
    let read = R::new("GET", "/v1/instances/:id")
        .op(StateOp::Read, "instances")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", echo_path("id")),
                ("type", c(json!("small"))),
                (
                    "specs",
                    obj(vec![(
                        "memory",
                        hole(
                            HoleKind::Observed,
                            JsonType::Number,
                            vec![json!(16384), json!(1024)],
                        ),
                    )]),
                ),
            ]),
        )
        .build();
    engine(
        model(
            vec![create, read],
            vec![("instances", entity_type(&[], &[], Vec::new()))],
        ),
        det_opts(),
    )
}

fn create(e: &wraith_engine::Engine, session: &str, b: Value) -> Value {
    let r = send(e, Some(session), "POST", "/v1/instances", b);
    assert_eq!(r.status, 200);
    body(&r)
}

#[test]
fn keyed_position_renders_the_bucket_of_the_requests_value() {
    let e = instances();
    let small = create(&e, "a", json!({"type": "small"}));
    assert_eq!(small["specs"]["memory"], json!(1024));
    let large = create(&e, "b", json!({"type": "large"}));
    assert_eq!(large["specs"]["memory"], json!(16384));
}

#[test]
fn created_record_reads_back_with_its_keyed_values() {
    let e = instances();
    let created = create(&e, "a", json!({"type": "small"}));
    let id = created["id"].as_str().unwrap_or_default().to_string();
    let read = get(&e, Some("a"), &format!("/v1/instances/{id}"));
    assert_eq!(read.status, 200);
    assert_eq!(body(&read)["specs"]["memory"], json!(1024));
}

#[test]
fn unrecorded_key_value_renders_as_an_unkeyed_hole() {
    let e = instances();
    // The hash pick over the examples for this path, as without keying.
    let unkeyed = create(&e, "a", json!({"type": "medium"}));
    let absent = create(&e, "b", json!({}));
    let picks = [json!(16384), json!(1024)];
    assert!(picks.contains(&unkeyed["specs"]["memory"]));
    assert_eq!(unkeyed["specs"]["memory"], absent["specs"]["memory"]);
}

#[test]
fn combined_key_renders_the_bucket_of_the_requests_tuple_and_reads_back_with_it() {
    let e = instances_with(memory_keyed_by_region_and_plan());
    let us_small = create(&e, "a", json!({"region": "us", "type": "small"}));
    assert_eq!(us_small["specs"]["memory"], json!(2048));
    let eu_small = create(&e, "b", json!({"type": "small", "region": "eu"}));
    assert_eq!(eu_small["specs"]["memory"], json!(1024));
    let us_large = create(&e, "c", json!({"region": "us", "type": "large"}));
    assert_eq!(us_large["specs"]["memory"], json!(16384));
    let id = us_small["id"].as_str().unwrap_or_default().to_string();
    let read = get(&e, Some("a"), &format!("/v1/instances/{id}"));
    assert_eq!(read.status, 200);
    assert_eq!(body(&read)["specs"]["memory"], json!(2048));
}

#[test]
fn combined_key_with_a_field_missing_or_an_unseen_tuple_renders_as_an_unkeyed_hole() {
    let e = instances_with(memory_keyed_by_region_and_plan());
    let plain = instances_with(hole(
        HoleKind::Observed,
        JsonType::Number,
        vec![json!(16384), json!(2048), json!(1024)],
    ));
    for (session, sent) in [
        ("a", json!({"region": "eu", "type": "large"})),
        ("b", json!({"region": "us"})),
        ("c", json!({"type": "small"})),
        ("d", json!({"region": ["us"], "type": "small"})),
    ] {
        let keyed = create(&e, session, sent.clone());
        let unkeyed = create(&plain, session, sent.clone());
        assert_eq!(
            keyed["specs"]["memory"], unkeyed["specs"]["memory"],
            "{sent}"
        );
    }
}
