//! An error answer that names the request field it refused picks the guard of its variant,
//! end to end: one recorded create succeeds, one is refused with `{"errors": [{"field":
//! "ipv4[2].range"}]}` and also happened to send a `description` the success did not. A new
//! create with a description and no third range is served the success; one with a third range
//! is refused. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "blamed-fields-test-key");
const ORIGIN: &str = "https://api.nets.test";

fn ranges(n: usize) -> Value {
    json!(
        (0..n)
            .map(|i| json!({"range": format!("10.{i}.0.0/16")}))
            .collect::<Vec<_>>()
    )
}

fn twin() -> Twin {
    let t = Twin::init("nets", ORIGIN);
    let accepted = har::entry(
        ORIGIN,
        "POST",
        "/v1/nets",
        Some(&json!({"label": "first", "ipv4": ranges(1)})),
        &json!({"id": 501, "label": "first", "ipv4": ranges(1)}),
    );
    let mut refused = har::entry(
        ORIGIN,
        "POST",
        "/v1/nets",
        Some(&json!({"label": "second", "description": "mine", "ipv4": ranges(3)})),
        &json!({"errors": [{"field": "ipv4[2].range", "reason": "Must not overlap"}]}),
    );
    refused["response"]["status"] = json!(400);
    refused["startedDateTime"] = json!("2026-06-01T12:05:00.000Z");
    har::import(&t, &[KEY], "accepted.har", vec![accepted]);
    har::import(&t, &[KEY], "refused.har", vec![refused]);
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn a_refusal_is_served_for_the_field_its_answer_names_not_for_another_it_sent() {
    let t = twin();
    let server = t.serve_env(&[], &[KEY]);
    let described = server
        .post(
            "/v1/nets",
            Some("agent"),
            json!({"label": "third", "description": "a new one", "ipv4": ranges(1)}),
        )
        .await;
    described.assert_status(200);
    let overlapping = server
        .post(
            "/v1/nets",
            Some("agent"),
            json!({"label": "fourth", "ipv4": ranges(3)}),
        )
        .await;
    overlapping.assert_status(400);
    assert_eq!(overlapping.json()["errors"][0]["field"], "ipv4[2].range");
}
