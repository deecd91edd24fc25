//! A position every recorded value of a request field was answered as itself answers a value
//! no recording sent as itself too (`KeyedValues::echoes`): posts sent a content warning of
//! `""` or `"spoilers"` and were answered each, posts without one were answered `""`; a
//! session's own warning is answered as sent, where the twin used to answer a recorded one.
//! Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.posts.test";

/// Eight runs, each posting once: with a warning of `""` or `"spoilers"` (two runs each, twice
/// over), or none.
fn posts_twin() -> Twin {
    let t = Twin::init("posts", ORIGIN);
    let warnings = [
        Some(""),
        Some("spoilers"),
        Some(""),
        Some("spoilers"),
        None,
        None,
        Some(""),
        Some("spoilers"),
    ];
    for (i, cw) in warnings.into_iter().enumerate() {
        let mut sent = json!({"text": format!("post {i}")});
        if let Some(cw) = cw {
            sent["cw"] = json!(cw);
        }
        let answer = json!({"id": 100 + i, "text": format!("post {i}"), "cw": cw.unwrap_or("")});
        let entry = har::entry(ORIGIN, "POST", "/v1/posts", Some(&sent), &answer);
        har::import(&t, &[], &format!("run{i}.har"), vec![entry]);
    }
    har::synth(&t, &[]);
    t
}

async fn posted(server: &support::Server, body: Value) -> Value {
    let r = server.post("/v1/posts", Some("s1"), body).await;
    r.assert_status(200);
    r.json()
}

#[tokio::test]
async fn a_warning_no_recording_sent_is_answered_as_sent() {
    let t = posts_twin();
    let server = t.serve(&[]);
    let mine = posted(&server, json!({"text": "mine", "cw": "my own warning"})).await;
    assert_eq!(mine["cw"], "my own warning", "{mine}");
    let recorded = posted(&server, json!({"text": "again", "cw": "spoilers"})).await;
    assert_eq!(recorded["cw"], "spoilers", "{recorded}");
    let none = posted(&server, json!({"text": "plain"})).await;
    assert_eq!(none["cw"], "", "{none}");
}
