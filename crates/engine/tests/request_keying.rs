//! Request keying: an observed position whose recorded values were decided by one request
//! field (the plan a create names decides the memory it reports) renders the bucket of the
//! request's value, and the created record reads back with it.

mod support;

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
    memory.keyed = Some(Box::new(KeyedValues {
        field: EchoSource::Body {
            pointer: "/type".into(),
        },
        buckets: vec![
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
    }));
    Node::Hole(memory)
}

fn instances() -> wraith_engine::Engine {
    let create = R::new("POST", "/v1/instances")
        .op(StateOp::Create, "instances")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("type", echo_body("/type", JsonType::String)),
                ("specs", obj(vec![("memory", keyed_memory())])),
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
