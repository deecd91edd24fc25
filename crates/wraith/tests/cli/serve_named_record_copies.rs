//! `wraith serve` answering a create with fields of the record a request field names: an
//! instance created with a plan no recorded create chose answers that plan's memory and cores,
//! as the recorded catalogue of plans holds them, where the twin used to answer a recorded
//! create's (`synth/src/named_record_copies.rs`). Black-box: the real binary on a HAR run
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.machines.test";

fn plan(id: &str, memory: u64, vcpus: u64) -> Value {
    json!({"id": id, "label": id.to_uppercase(), "memory": memory, "vcpus": vcpus, "price": 5})
}

/// A catalogue of three plans and creates choosing two of them.
fn machines(t: &Twin) {
    let mut entries = vec![har::entry(
        ORIGIN,
        "GET",
        "/v4/plans",
        None,
        &json!({"data": [plan("small", 1024, 1), plan("medium", 4096, 2), plan("large", 16384, 6)],
                "page": 1, "pages": 1, "results": 3}),
    )];
    for (i, (label, chosen, memory, vcpus)) in [
        ("a", "small", 1024, 1),
        ("b", "large", 16384, 6),
        ("c", "small", 1024, 1),
        ("d", "small", 1024, 1),
    ]
    .into_iter()
    .enumerate()
    {
        entries.push(har::entry(
            ORIGIN,
            "POST",
            "/v4/instances",
            Some(&json!({"label": label, "type": chosen})),
            &json!({"id": 100 + i, "label": label, "type": chosen, "status": "provisioning",
                    "specs": {"memory": memory, "vcpus": vcpus}}),
        ));
    }
    har::import(t, &[], "run.har", entries);
    har::synth(t, &[]);
}

#[tokio::test]
async fn a_create_naming_a_plan_no_create_chose_answers_that_plans_recorded_fields() {
    let t = Twin::init("machines", ORIGIN);
    machines(&t);
    let server = t.serve(&[]);
    let created = server
        .post(
            "/v4/instances",
            Some("s1"),
            json!({"label": "mine", "type": "medium"}),
        )
        .await;
    created.assert_status(200);
    let body = created.json();
    assert_eq!(body["specs"], json!({"memory": 4096, "vcpus": 2}), "{body}");
    assert_eq!(body["type"], "medium");
    // A plan the recordings never listed keeps the rendered values.
    let unknown = server
        .post(
            "/v4/instances",
            Some("s1"),
            json!({"label": "odd", "type": "huge"}),
        )
        .await;
    unknown.assert_status(200);
    assert!(
        unknown.json()["specs"]["memory"].is_u64(),
        "{}",
        unknown.json()
    );
}

#[tokio::test]
async fn the_copied_positions_are_written_in_the_model() {
    let t = Twin::init("machines", ORIGIN);
    machines(&t);
    let route = har::model_route(&t, "POST", "/v4/instances");
    assert_eq!(
        route["named_record_copies"],
        json!({"field": "type", "entity_type": "plans", "copies": [
            {"at": "/specs/memory", "key": "memory"},
            {"at": "/specs/vcpus", "key": "vcpus"}
        ]}),
        "{route}"
    );
}
