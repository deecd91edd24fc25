//! A create the recordings refused for a number out of range, the answer naming the field
//! (`Guard::BodyFieldBound`), refuses any value past the accepted ones and accepts the others,
//! values no recording sent included. Black-box: the real binary on a widgets twin built
//! from HARs written here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "bound-guards-test-key");
const ORIGIN: &str = "https://api.widgets.test";

/// Recorded session `n`: a widget created with a size, refused (422) when it is negative.
fn record(t: &Twin, n: u64) {
    let sizes = [4, -2, 17, -9, 0, 33, -5];
    let size = sizes[n as usize % sizes.len()];
    let mut e = if size < 0 {
        har::entry(
            ORIGIN,
            "POST",
            "/v1/widgets",
            Some(&json!({"name": format!("w{n}"), "size": size})),
            &json!({"error": "invalid", "field": "size"}),
        )
    } else {
        har::entry(
            ORIGIN,
            "POST",
            "/v1/widgets",
            Some(&json!({"name": format!("w{n}"), "size": size})),
            &json!({"id": format!("wid_{n:02}Kq9Lm2Rt7x"), "name": format!("w{n}"), "size": size}),
        )
    };
    e["response"]["status"] = json!(if size < 0 { 422 } else { 201 });
    har::import(t, &[KEY], &format!("s{n}.har"), vec![e]);
}

#[tokio::test]
async fn a_value_below_every_accepted_one_is_refused_and_others_are_accepted() {
    let t = har::synth_twin("widgets", ORIGIN, &[KEY], 7, record);
    let s = t.serve_env(&[], &[KEY]);
    let refused = s
        .post(
            "/v1/widgets",
            Some("x"),
            json!({"name": "mine", "size": -40}),
        )
        .await;
    refused.assert_status(422);
    assert_eq!(refused.json()["field"], "size");
    let accepted = s
        .post(
            "/v1/widgets",
            Some("x"),
            json!({"name": "mine", "size": 250}),
        )
        .await;
    accepted.assert_status(201);
    assert_eq!(accepted.json()["size"], 250);
}
