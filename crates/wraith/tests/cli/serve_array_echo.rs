//! `wraith serve` answering an array as the request sent it where the one recorded answer
//! did: a filter created once with `context: ["home", "public"]`, answered with that very
//! array, answers a create sending `["notifications"]` with `["notifications"]`, not the
//! recorded two contexts. An array answered as sent by two runs alike stays what was recorded
//! (`synth/src/array_echo.rs`). Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.filters.test";

#[tokio::test]
async fn an_array_the_only_recorded_create_answered_as_sent_is_echoed_from_the_request() {
    let t = Twin::init("filters", ORIGIN);
    let sent = json!({"title": "Spam", "context": ["home", "public"]});
    let answer = json!({"id": "1", "title": "Spam", "context": ["home", "public"]});
    har::import(
        &t,
        &[],
        "run.har",
        vec![har::entry(
            ORIGIN,
            "POST",
            "/v2/filters",
            Some(&sent),
            &answer,
        )],
    );
    har::synth(&t, &[]);
    let server = t.serve(&[]);
    let created = server
        .post(
            "/v2/filters",
            Some("s1"),
            json!({"title": "Eggs", "context": ["notifications"]}),
        )
        .await;
    created.assert_status(200);
    let body = created.json();
    assert_eq!(body["title"], "Eggs", "{body}");
    assert_eq!(body["context"], json!(["notifications"]), "{body}");
}
