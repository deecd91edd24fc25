//! A record's versions, end to end: recorded runs create a post, read its history, edit it and
//! read its history again. A session's own post then lists one version per write of it, oldest
//! first, each as that write answered it (an edit's `edited_at` as the version's
//! `created_at`), and no other session sees them. Black-box: the real binary on HARs written
//! here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "record-versions-test-key");
const ORIGIN: &str = "https://social.test";

/// A recorded run: post `id` created, read, its history read, edited, its history read again.
fn run(t: &Twin, minute: u64, id: u64) {
    let created_at = format!("2026-06-01T12:{minute:02}:00.000Z");
    let edited_at = format!("2026-06-01T12:{minute:02}:30.000Z");
    let created = json!({"id": id.to_string(), "content": format!("<p>first {minute}</p>"),
        "created_at": created_at, "edited_at": null});
    let edited = json!({"id": id.to_string(), "content": format!("<p>second {minute}</p>"),
        "created_at": created_at, "edited_at": edited_at});
    let v0 = json!({"content": created["content"], "created_at": created_at});
    let v1 = json!({"content": edited["content"], "created_at": edited_at});
    let mut entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/api/v1/statuses",
            Some(&json!({"status": format!("first {minute}")})),
            &created,
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/api/v1/statuses/{id}"),
            None,
            &created,
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/api/v1/statuses/{id}/history"),
            None,
            &json!([v0]),
        ),
        har::entry(
            ORIGIN,
            "PUT",
            &format!("/api/v1/statuses/{id}"),
            Some(&json!({"status": format!("second {minute}")})),
            &edited,
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/api/v1/statuses/{id}/history"),
            None,
            &json!([v0, v1]),
        ),
    ];
    for (n, e) in entries.iter_mut().enumerate() {
        e["startedDateTime"] = json!(format!("2026-06-01T12:{minute:02}:{n:02}.000Z"));
    }
    har::import(t, &[KEY], &format!("run{minute}.har"), entries);
}

/// `(content, created_at)` of what a write answered, as a version shows it.
fn version(answer: &Value, stamp: &str) -> (Value, Value) {
    (answer["content"].clone(), answer[stamp].clone())
}

fn versions(history: &Value) -> Vec<(Value, Value)> {
    history
        .as_array()
        .unwrap_or_else(|| panic!("a version list: {history}"))
        .iter()
        .map(|v| (v["content"].clone(), v["created_at"].clone()))
        .collect()
}

#[tokio::test]
async fn a_posts_history_lists_each_of_its_writes_oldest_first() {
    let t = Twin::init("social", ORIGIN);
    run(&t, 1, 101);
    run(&t, 2, 102);
    har::synth(&t, &[KEY]);
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post("/api/v1/statuses", Some("agent"), json!({"status": "one"}))
        .await;
    created.assert_status(200);
    let created = created.json();
    let id = har::key_text(&created["id"]);
    let history = format!("/api/v1/statuses/{id}/history");

    let first = server.get(&history, Some("agent")).await;
    first.assert_status(200);
    assert_eq!(
        versions(&first.json()),
        vec![version(&created, "created_at")]
    );

    let mut expected = vec![version(&created, "created_at")];
    for text in ["two", "three"] {
        let edit = server
            .send(
                "PUT",
                &format!("/api/v1/statuses/{id}"),
                Some("agent"),
                &[],
                Some(json!({"status": text})),
            )
            .await;
        edit.assert_status(200);
        let edited = edit.json();
        assert!(edited["edited_at"].is_string(), "{edited}");
        expected.push(version(&edited, "edited_at"));
    }
    let listed = server.get(&history, Some("agent")).await;
    listed.assert_status(200);
    assert_eq!(versions(&listed.json()), expected);

    // Another session holds no such post, so nothing of this one's versions.
    let other = server.get(&history, Some("other")).await;
    if other.status == 200 {
        assert_ne!(versions(&other.json()), expected);
    }
}
