//! Path filters end to end: recorded sessions create notes whose text names a `#tag`, then read
//! `/v1/tagged/<tag>`, which lists exactly their notes carrying the tag, newest first. Synth
//! learns that the path value selects the listed notes by their `tags[].name`, and the served
//! twin answers a tag nobody recorded with the session's own notes carrying it, instead of a
//! recorded page of another tag. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "path-filter-test-key");
const ORIGIN: &str = "https://api.notes.test";

fn note(id: &str, text: &str, tags: &[&str]) -> Value {
    json!({
        "id": id, "text": text,
        "tags": tags.iter().map(|name| json!({"name": name})).collect::<Vec<_>>()
    })
}

/// One recorded session: create `notes` (id, text, tags) in order, then read the page of
/// `tag`, which lists the notes carrying it, newest first.
fn session(t: &Twin, n: usize, tag: &str, notes: &[(&str, &str, &[&str])]) {
    let mut entries: Vec<Value> = notes
        .iter()
        .map(|(id, text, tags)| {
            har::entry(
                ORIGIN,
                "POST",
                "/v1/notes",
                Some(&json!({"text": text})),
                &note(id, text, tags),
            )
        })
        .collect();
    let listed: Vec<Value> = notes
        .iter()
        .rev()
        .filter(|(_, _, tags)| tags.contains(&tag))
        .map(|(id, text, tags)| note(id, text, tags))
        .collect();
    entries.push(har::entry(
        ORIGIN,
        "GET",
        &format!("/v1/tagged/{tag}"),
        None,
        &Value::Array(listed),
    ));
    har::import(t, &[KEY], &format!("s{n}.har"), entries);
}

fn notes_twin() -> Twin {
    let t = Twin::init("tagged-notes", ORIGIN);
    session(
        &t,
        1,
        "blue",
        &[
            ("501", "a #blue sky", &["blue"]),
            ("502", "nothing to tag", &[]),
            ("503", "more #blue and #sea", &["blue", "sea"]),
        ],
    );
    session(
        &t,
        2,
        "red",
        &[
            ("601", "#red roses", &["red"]),
            ("602", "#wine, #red", &["wine", "red"]),
        ],
    );
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn a_served_tag_page_lists_the_sessions_notes_carrying_the_tag_newest_first() {
    let t = notes_twin();
    let server = t.serve_env(&[], &[KEY]);
    let mut green = Vec::new();
    for text in ["#green tea", "#blue moon", "a #green light"] {
        let created = server
            .post("/v1/notes", Some("agent-1"), json!({"text": text}))
            .await;
        created.assert_status(200);
        let n = created.json();
        if text.contains("#green") {
            green.push(har::key_text(&n["id"]));
        }
    }
    let page = server.get("/v1/tagged/green", Some("agent-1")).await;
    assert_eq!(page.status, 200);
    let listed: Vec<String> = page
        .json()
        .as_array()
        .expect("a list")
        .iter()
        .map(|n| har::key_text(&n["id"]))
        .collect();
    let mut want = green.clone();
    // Newest first as recorded: the larger id first.
    want.sort_by(|a, b| (b.len(), b).cmp(&(a.len(), a)));
    assert_eq!(listed, want, "{}", page.json());

    // Another session created no green note: the route's recorded answer, not agent-1's notes.
    let other = server.get("/v1/tagged/green", Some("agent-2")).await;
    assert_eq!(other.status, 200);
    let texts: Vec<String> = other
        .json()
        .as_array()
        .expect("a list")
        .iter()
        .map(|n| n["text"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        texts.iter().all(|t| !t.contains("#green")),
        "{}",
        other.json()
    );
}
