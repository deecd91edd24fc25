//! A read finding one record by a query parameter, end to end: in the recordings `GET
//! /v1/accounts/lookup?acct=…` answered the account whose `acct` was the name sent (or the name
//! before an `@` and a domain), and an unknown name answered `404`. Synth learns the lookup
//! (`synth/src/query_lookups.rs`); the served twin answers a name no recording looked up with
//! the account holding it, as the session sees it, and an unknown name with the recorded
//! not-found answer, instead of a rendered account under a fresh id. Black-box: the real
//! binary on a HAR run written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://social.lookup.test";

fn account(id: &str, name: &str) -> Value {
    json!({"id": id, "acct": name, "username": name, "display_name": name.to_uppercase(),
           "followers_count": 3})
}

fn accounts_twin() -> Twin {
    let t = Twin::init("social", ORIGIN);
    let e = |path: &str, answer: &Value| har::entry(ORIGIN, "GET", path, None, answer);
    let (alice, bob, carol) = (
        account("101", "alice"),
        account("102", "bob"),
        account("103", "carol"),
    );
    let entries = vec![
        e("/v1/accounts/101", &alice),
        e("/v1/accounts/102", &bob),
        e("/v1/accounts/103", &carol),
        e("/v1/accounts/lookup?acct=alice", &alice),
        e("/v1/accounts/lookup?acct=bob", &bob),
        e(
            "/v1/accounts/lookup?acct=alice%40social.lookup.test",
            &alice,
        ),
        har::with_status(
            e(
                "/v1/accounts/lookup?acct=nobody",
                &json!({"error": "Record not found"}),
            ),
            404,
        ),
    ];
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_lookup_no_recording_made_answers_the_record_holding_the_name() {
    let t = accounts_twin();
    let server = t.serve(&[]);
    let found = server
        .get("/v1/accounts/lookup?acct=carol", Some("s1"))
        .await;
    found.assert_status(200);
    let body = found.json();
    // `display_name` is scrubbed on import; the rest is the record as recorded.
    assert_eq!(body["id"], "103", "{body}");
    assert_eq!(body["acct"], "carol", "{body}");
    assert_eq!(body["username"], "carol", "{body}");
    let missing = server
        .get("/v1/accounts/lookup?acct=dave", Some("s1"))
        .await;
    missing.assert_status(404);
    assert_eq!(missing.json(), json!({"error": "Record not found"}));
}

#[tokio::test]
async fn a_lookup_is_learned_from_the_query_parameter_the_answers_held() {
    let t = accounts_twin();
    let route = har::model_route(&t, "GET", "/v1/accounts/lookup");
    assert_eq!(
        route["query_lookup"],
        json!({"entity_type": "accounts", "field": "acct", "param": "acct"})
    );
}
