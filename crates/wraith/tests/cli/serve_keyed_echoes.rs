//! A position every recorded value of a request field was answered as itself answers a value
//! no recording sent as itself too (`KeyedValues::echoes`): posts sent a content warning of
//! `""` or `"spoilers"` and were answered each, posts without one were answered `""`; a
//! session's own warning is answered as sent, where the twin used to answer a recorded one.
//! A type of post recorded too few times to key its own answers (a tagged-union answer's
//! type) keys them as every post's answers do. Black-box: the real binary on HARs written
//! here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.posts.test";

/// The content warnings eight recorded posts sent: `""` or `"spoilers"` three times each, none
/// twice.
const WARNINGS: [Option<&str>; 8] = [
    Some(""),
    Some("spoilers"),
    Some(""),
    Some("spoilers"),
    None,
    None,
    Some(""),
    Some("spoilers"),
];

/// Eight runs, each posting once with one of [`WARNINGS`].
fn posts_twin() -> Twin {
    let t = Twin::init("posts", ORIGIN);
    for (i, cw) in WARNINGS.into_iter().enumerate() {
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

/// Posts answered by type with fields of each type's own: eight text posts (the
/// [`WARNINGS`]) and two link posts, one warned.
fn typed_twin() -> Twin {
    let t = Twin::init("typed", ORIGIN);
    let runs = WARNINGS
        .into_iter()
        .map(|cw| ("text", cw))
        .chain([("link", Some("")), ("link", Some("spoilers"))]);
    for (i, (kind, cw)) in runs.enumerate() {
        let mut sent = json!({"text": format!("post {i}"), "type": kind});
        if let Some(cw) = cw {
            sent["cw"] = json!(cw);
        }
        let mut answer = json!({
            "id": 100 + i,
            "text": format!("post {i}"),
            "type": kind,
            "cw": cw.unwrap_or("")
        });
        if kind == "text" {
            answer["boosts"] = json!(0);
        } else {
            answer["preview"] = json!(null);
        }
        let entry = har::entry(ORIGIN, "POST", "/v1/posts", Some(&sent), &answer);
        har::import(&t, &[], &format!("run{i}.har"), vec![entry]);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_type_recorded_a_few_times_answers_a_new_warning_as_sent() {
    let t = typed_twin();
    let create = har::model_route(&t, "POST", "/v1/posts");
    assert!(
        create["variants"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v.get("union").is_some()),
        "expected a tagged-union answer: {create}"
    );
    let server = t.serve(&[]);
    let sent = json!({"text": "mine", "type": "link", "cw": "my own warning"});
    let mine = posted(&server, sent).await;
    assert!(mine.get("preview").is_some(), "{mine}");
    assert_eq!(mine["cw"], "my own warning", "{mine}");
}
