//! A create route answering one kind of request with a record of another entity type (a post
//! sent with `publish_at` answers a scheduled post), through `synthesize`: that variant's
//! answers are learned as records of the type whose later reads view them
//! (`Variant::record_type`), and not where the reads say otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;
use serde_json::{Value, json};
use wraith_model::Model;
use wraith_recording::Exchange;

const BASE: &str = "https://api.posts.test";

fn post(id: u64, text: &str) -> Value {
    json!({"id": id.to_string(), "text": text, "visibility": "public",
           "created_at": "2026-01-01T00:00:00.000Z"})
}

fn scheduled(id: u64, text: &str) -> Value {
    json!({"id": id.to_string(), "publish_at": "2030-01-01T00:00:00.000Z",
           "params": {"text": text, "visibility": null}})
}

/// A post published at once, read back.
fn publish(id: u64, text: &str) -> Vec<Exchange> {
    vec![
        ok_json(
            "POST",
            "/v1/posts",
            Some(&json!({"text": text})),
            &post(id, text),
        ),
        ok_json("GET", &format!("/v1/posts/{id}"), None, &post(id, text)),
    ]
}

/// A post scheduled for later (answered as a scheduled post); `read_at`: the path its id is
/// read back under, if any.
fn schedule(id: u64, text: &str, read_at: Option<&str>) -> Vec<Exchange> {
    let sent = json!({"text": text, "publish_at": "2030-01-01T00:00:00Z"});
    let mut run = vec![ok_json(
        "POST",
        "/v1/posts",
        Some(&sent),
        &scheduled(id, text),
    )];
    if let Some(at) = read_at {
        let path = format!("{at}/{id}");
        run.push(ok_json("GET", &path, None, &scheduled(id, text)));
        run.push(ok_json("DELETE", &path, None, &json!({})));
    }
    run
}

fn model_of(scheduled_read_at: [Option<&str>; 2]) -> Model {
    let mut runs = Vec::new();
    for (n, read_at) in scheduled_read_at.into_iter().enumerate() {
        let n = n as u64;
        let mut run = publish(9001 + n, &format!("now {n}"));
        run.extend(schedule(1 + n, &format!("later {n}"), read_at));
        runs.push(run);
    }
    runs.push(publish(9003, "now 2"));
    common::synth_runs("posts", BASE, runs)
}

/// The record types of the 2xx variants of `POST /v1/posts`, in variant order.
fn record_types(m: &Model) -> Vec<Option<String>> {
    common::route(m, "POST", "/v1/posts")
        .variants
        .iter()
        .filter(|v| v.status == 200)
        .map(|v| v.record_type.clone())
        .collect()
}

#[test]
fn a_create_variant_read_back_under_another_type_answers_records_of_that_type() {
    let m = model_of([Some("/v1/scheduled_posts"), None]);
    let reads = common::route(&m, "GET", "/v1/scheduled_posts/:param");
    let ty = reads.entity_type.clone().expect("a typed read");
    assert_ne!(
        Some(&ty),
        common::route(&m, "POST", "/v1/posts").entity_type.as_ref()
    );
    let types = record_types(&m);
    assert_eq!(types.len(), 2, "one variant per kind of answer: {types:?}");
    assert!(types.contains(&Some(ty)), "{types:?}");
    assert!(types.contains(&None), "{types:?}");
}

#[test]
fn a_create_variant_never_read_back_stays_of_its_routes_type() {
    let m = model_of([None, None]);
    assert_eq!(record_types(&m), vec![None, None]);
}

#[test]
fn a_create_variant_read_back_under_its_own_type_too_stays_of_its_routes_type() {
    // The second run reads its scheduled post's id back as a post: the answers are not told
    // apart from the route's own records.
    let m = model_of([Some("/v1/scheduled_posts"), Some("/v1/posts")]);
    assert_eq!(record_types(&m), vec![None, None]);
}
