//! Text tags end to end: recorded creates answer one tag object per `#word` of the sent text
//! (the name lowercased, the url built from it). Synth learns the rule from those recordings,
//! and the served twin answers a create with the tags of the text the session sent, not the
//! recorded example's; the record reads back with them. Black-box: the real binary on HARs
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};
use support::Twin;

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "text-tags-test-key");
const ORIGIN: &str = "https://api.notes.test";

fn entry(method: &str, path: &str, body: Option<&Value>, answer: &Value) -> Value {
    let resp = answer.to_string();
    let mut request = json!({
        "method": method, "url": format!("{ORIGIN}{path}"),
        "httpVersion": "HTTP/1.1", "cookies": [], "queryString": [],
        "headers": [{"name": "Content-Type", "value": "application/json"}],
        "headersSize": -1, "bodySize": 0
    });
    if let Some(body) = body {
        let req = body.to_string();
        request["postData"] = json!({"mimeType": "application/json", "text": req});
        request["bodySize"] = json!(req.len());
    }
    json!({
        "startedDateTime": "2026-06-01T12:00:00.000Z", "time": 10,
        "request": request,
        "response": {
            "status": 200, "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": [{"name": "Content-Type", "value": "application/json"}],
            "content": {"size": resp.len(), "mimeType": "application/json", "text": resp},
            "redirectURL": "", "headersSize": -1, "bodySize": resp.len()
        },
        "cache": {}, "timings": {"send": 0, "wait": 10, "receive": 0}
    })
}

fn run(t: &Twin, args: &[&str]) {
    let out = Command::new(support::bin())
        .current_dir(t.tmp.path())
        .env(KEY.0, KEY.1)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A tag object as the API at `origin` answers it.
fn tag_at(origin: &str, name: &str) -> Value {
    json!({"name": name, "url": format!("{origin}/tags/{name}")})
}

/// One recorded session: create a note with `text`, then read it back.
fn session(t: &Twin, n: usize, id: &str, text: &str, tags: &[&str]) {
    let note = json!({
        "id": id, "text": text,
        "tags": tags.iter().map(|name| tag_at(ORIGIN, name)).collect::<Vec<_>>()
    });
    let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
    "pages": [], "entries": [
        entry("POST", "/v1/notes", Some(&json!({"text": text})), &note),
        entry("GET", &format!("/v1/notes/{id}"), None, &note),
    ]}});
    let path = t.tmp.path().join(format!("s{n}.har"));
    std::fs::write(&path, har.to_string()).unwrap();
    run(t, &["import", &t.path_str(), &path.to_string_lossy()]);
}

fn notes_twin() -> Twin {
    let t = Twin::init("notes", ORIGIN);
    session(
        &t,
        1,
        "501",
        "off to the #Beach with #friends",
        &["beach", "friends"],
    );
    session(&t, 2, "502", "#coffee first", &["coffee"]);
    session(&t, 3, "503", "nothing to tag", &[]);
    session(&t, 4, "504", "more #Coffee and #rain", &["coffee", "rain"]);
    run(&t, &["synth", &t.path_str()]);
    t
}

#[tokio::test]
async fn a_served_create_lists_the_tags_its_text_names_and_reads_back_with_them() {
    let t = notes_twin();
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post(
            "/v1/notes",
            Some("agent-1"),
            json!({"text": "a #Sunny day, #sunny again, and #hiking"}),
        )
        .await;
    assert_eq!(
        created.status,
        200,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    // The twin answers its own origin where the recordings named the API's (self-URL rewrite).
    let tags = json!([tag_at(&server.url, "sunny"), tag_at(&server.url, "hiking")]);
    let note = created.json();
    assert_eq!(note["tags"], tags, "{note}");
    let id = match &note["id"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let read = server
        .get(&format!("/v1/notes/{id}"), Some("agent-1"))
        .await;
    assert_eq!(read.status, 200);
    assert_eq!(read.json()["tags"], tags);
}

#[tokio::test]
async fn a_served_create_whose_text_names_no_tag_lists_none() {
    let t = notes_twin();
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post("/v1/notes", Some("agent-2"), json!({"text": "plain words"}))
        .await;
    assert_eq!(created.status, 200);
    assert_eq!(created.json()["tags"], json!([]));
}
