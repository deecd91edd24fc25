//! Text tags end to end: recorded creates answer one tag object per `#word` of the sent text
//! (the name lowercased, the url built from it). Synth learns the rule from those recordings,
//! and the served twin answers a create with the tags of the text the session sent, not the
//! recorded example's; the record reads back with them. Black-box: the real binary on HARs
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "text-tags-test-key");
const ORIGIN: &str = "https://api.notes.test";

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
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/notes",
            Some(&json!({"text": text})),
            &note,
        ),
        har::entry(ORIGIN, "GET", &format!("/v1/notes/{id}"), None, &note),
    ];
    har::import(t, &[KEY], &format!("s{n}.har"), entries);
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
    har::synth(&t, &[KEY]);
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
    created.assert_status(200);
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
