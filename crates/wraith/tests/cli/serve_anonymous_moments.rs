//! `wraith serve` replaying a request sent without credentials from the moments recorded
//! without any: a run reads an item with its token, deletes it, then reads it again without
//! the token (404). Replayed in that order, the tokenless read answers the recorded 404, not
//! the first moment of the request's key (the token-bearing read's 200). Black-box: the real
//! binary on a HAR run written here. A request with credentials no recording sent is still a
//! credentialed one: it is answered from the moments recorded with credentials, never from the
//! `401` recorded for a request that sent none.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.items.test";
const TOKEN: &str = "Bearer sk_live_items_4242";

/// `entry` sent with the token.
fn signed(e: Value) -> Value {
    har::by(TOKEN, 200, e)
}

fn items_twin() -> Twin {
    let t = Twin::init("items", ORIGIN);
    let item = json!({"id": "it_1", "name": "one"});
    let gone = har::with_status(
        har::entry(
            ORIGIN,
            "GET",
            "/v1/items/it_1",
            None,
            &json!({"error": "not found"}),
        ),
        404,
    );
    let entries = vec![
        signed(har::entry(
            ORIGIN,
            "POST",
            "/v1/items",
            Some(&json!({"name": "one"})),
            &item,
        )),
        signed(har::entry(ORIGIN, "GET", "/v1/items/it_1", None, &item)),
        signed(har::entry(
            ORIGIN,
            "DELETE",
            "/v1/items/it_1",
            None,
            &json!({"id": "it_1", "deleted": true}),
        )),
        gone,
    ];
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_read_without_credentials_replays_the_moment_recorded_without_them() {
    let t = items_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let auth = [("Authorization", TOKEN)];
    let created = server
        .send("POST", "/v1/items", s, &auth, Some(json!({"name": "one"})))
        .await;
    created.assert_status(200);
    server
        .send("GET", "/v1/items/it_1", s, &auth, None)
        .await
        .assert_status(200);
    server
        .send("DELETE", "/v1/items/it_1", s, &auth, None)
        .await
        .assert_status(200);
    let again = server.get("/v1/items/it_1", s).await;
    again.assert_status(404);
    assert_eq!(again.provenance(), Some("recorded"));
    assert_eq!(again.json(), json!({"error": "not found"}));
}

#[test]
fn check_replays_the_run_and_passes_every_exchange() {
    let t = items_twin();
    let report = t.check_report();
    assert_eq!(report["exchanges_passed"], 4, "{:#}", report["divergences"]);
}

/// Two recorded runs read the feed: one without a token (`401`, recorded first), one with
/// one (`200`).
fn feed_twin() -> Twin {
    let t = Twin::init("feed", ORIGIN);
    let invalid = json!({"error": "The access token is invalid"});
    let mut refused = har::with_status(har::entry(ORIGIN, "GET", "/v1/feed", None, &invalid), 401);
    refused["startedDateTime"] = json!("2026-05-01T12:00:00.000Z");
    har::import(&t, &[], "anonymous.har", vec![refused]);
    let feed = json!([{"id": "p_1", "text": "hello"}]);
    har::import(
        &t,
        &[],
        "signed.har",
        vec![signed(har::entry(ORIGIN, "GET", "/v1/feed", None, &feed))],
    );
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_request_with_credentials_no_recording_sent_is_answered_as_credentialed_ones_were() {
    let t = feed_twin();
    let server = t.serve(&[]);
    let own = [("Authorization", "Bearer my-own-dev-token")];
    let feed = server
        .send("GET", "/v1/feed", Some("dev"), &own, None)
        .await;
    feed.assert_status(200);
    assert_eq!(feed.provenance(), Some("recorded"));
    assert_eq!(feed.json(), json!([{"id": "p_1", "text": "hello"}]));
    // Without any credentials the request is the recorded anonymous one.
    let anonymous = server.get("/v1/feed", Some("other")).await;
    anonymous.assert_status(401);
}
