//! An update the recordings refused for a value outside the few an enum field accepts, the
//! answer naming the field (`Guard::BodyFieldNotIn`), refuses any value outside them, values
//! no recording sent included, and accepts the accepted ones. Black-box: the real binary on an
//! issues twin built from HARs written here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "closed-set-guards-test-key");
const ORIGIN: &str = "https://api.issues.test";

/// Recorded session `n`: an issue created, then its state set, refused (422) for `merged`.
fn record(t: &Twin, n: u64) {
    let states = [
        "closed", "merged", "open", "closed", "merged", "closed", "open",
    ];
    let state = states[n as usize % states.len()];
    let id = format!("iss_{n:02}Kq9Lm2Rt7x");
    let create = har::entry(
        ORIGIN,
        "POST",
        "/v1/issues",
        Some(&json!({"title": format!("t{n}")})),
        &json!({"id": id, "title": format!("t{n}"), "state": "open"}),
    );
    let mut update = if state == "merged" {
        har::entry(
            ORIGIN,
            "PATCH",
            &format!("/v1/issues/{id}"),
            Some(&json!({"state": state})),
            &json!({"message": "Validation Failed", "errors": [{"field": "state", "code": "invalid"}]}),
        )
    } else {
        har::entry(
            ORIGIN,
            "PATCH",
            &format!("/v1/issues/{id}"),
            Some(&json!({"state": state})),
            &json!({"id": id, "title": format!("t{n}"), "state": state}),
        )
    };
    update["response"]["status"] = json!(if state == "merged" { 422 } else { 200 });
    har::import(t, &[KEY], &format!("s{n}.har"), vec![create, update]);
}

#[tokio::test]
async fn a_value_outside_the_accepted_enum_is_refused_and_the_accepted_ones_are_not() {
    let t = har::synth_twin("issues", ORIGIN, &[KEY], 7, record);
    let s = t.serve_env(&[], &[KEY]);
    let session = Some("x");
    let created = s
        .post("/v1/issues", session, json!({"title": "mine"}))
        .await;
    let id = created.json()["id"].as_str().unwrap().to_string();
    let path = format!("/v1/issues/{id}");
    let refused = s
        .send("PATCH", &path, session, &[], Some(json!({"state": "done"})))
        .await;
    refused.assert_status(422);
    assert_eq!(refused.json()["errors"][0]["field"], "state");
    for state in ["closed", "open"] {
        let accepted = s
            .send("PATCH", &path, session, &[], Some(json!({"state": state})))
            .await;
        accepted.assert_status(200);
        assert_eq!(accepted.json()["state"], state);
    }
}
