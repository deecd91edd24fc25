//! `wraith serve` replaying a request sent without credentials from the moments recorded
//! without any: a run reads an item with its token, deletes it, then reads it again without
//! the token (404). Replayed in that order, the tokenless read answers the recorded 404, not
//! the first moment of the request's key (the token-bearing read's 200). Black-box: the real
//! binary on a HAR run written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.items.test";
const TOKEN: &str = "Bearer sk_live_items_4242";

/// `entry` sent with the token.
fn signed(mut e: Value) -> Value {
    e["request"]["headers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "Authorization", "value": TOKEN}));
    e
}

fn items_twin() -> Twin {
    let t = Twin::init("items", ORIGIN);
    let item = json!({"id": "it_1", "name": "one"});
    let mut gone = har::entry(
        ORIGIN,
        "GET",
        "/v1/items/it_1",
        None,
        &json!({"error": "not found"}),
    );
    gone["response"]["status"] = json!(404);
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
