//! A delete answers the text the record's own create (or last edit) sent, end to end:
//! recorded runs post statuses and delete them, the delete answering the status's source
//! `text`, which the create never answered. A session's post, deleted, answers the words it
//! sent; edited first, the words of the edit. One recorded run also reads its edited post's
//! `source`, whose `text` the delete's evidence vouches for: a session's edited post's source
//! shows the edit's words. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "carried-fields-test-key");
const ORIGIN: &str = "https://social.test";

/// A recorded run: a post of `text`, edited to `edit` when given (its source then read back),
/// read and deleted.
fn run(t: &Twin, minute: u64, id: u64, text: &str, edit: Option<&str>) {
    let status = json!({"id": id.to_string(), "content": format!("<p>{text}</p>")});
    let mut entries = vec![har::entry(
        ORIGIN,
        "POST",
        "/api/v1/statuses",
        Some(&json!({"status": text})),
        &status,
    )];
    let mut status = status;
    if let Some(edit) = edit {
        status["content"] = json!(format!("<p>{edit}</p>"));
        entries.push(har::entry(
            ORIGIN,
            "PUT",
            &format!("/api/v1/statuses/{id}"),
            Some(&json!({"status": edit})),
            &status,
        ));
    }
    if let Some(edit) = edit {
        entries.push(har::entry(
            ORIGIN,
            "GET",
            &format!("/api/v1/statuses/{id}/source"),
            None,
            &json!({"id": id.to_string(), "text": edit, "spoiler_text": ""}),
        ));
    }
    let mut deleted = status.clone();
    deleted["text"] = json!(edit.unwrap_or(text));
    entries.extend([
        har::entry(
            ORIGIN,
            "GET",
            &format!("/api/v1/statuses/{id}"),
            None,
            &status,
        ),
        har::entry(
            ORIGIN,
            "DELETE",
            &format!("/api/v1/statuses/{id}"),
            None,
            &deleted,
        ),
    ]);
    for e in &mut entries {
        e["startedDateTime"] = json!(format!("2026-06-01T12:{minute:02}:00.000Z"));
    }
    har::import(t, &[KEY], &format!("run{minute}.har"), entries);
}

/// The key of a session's new post of `text`.
async fn post(server: &support::Server, text: &str) -> String {
    let created = server
        .post("/api/v1/statuses", Some("agent"), json!({"status": text}))
        .await;
    created.assert_status(200);
    har::key_text(&created.json()["id"])
}

/// Three recorded runs, the second editing its post (and reading its source).
fn twin() -> Twin {
    let t = Twin::init("social", ORIGIN);
    run(&t, 1, 101, "recorded words one", None);
    run(&t, 2, 102, "recorded words two", Some("recorded edit two"));
    run(&t, 3, 103, "recorded words three", None);
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn a_deleted_post_answers_the_text_its_session_sent() {
    let t = twin();
    let server = t.serve_env(&[], &[KEY]);

    let id = post(&server, "never recorded").await;
    let deleted = server
        .delete(&format!("/api/v1/statuses/{id}"), Some("agent"))
        .await;
    deleted.assert_status(200);
    assert_eq!(deleted.json()["text"], json!("never recorded"));

    // An edit's words are the ones a later delete answers.
    let id = post(&server, "first draft").await;
    let edited = server
        .send(
            "PUT",
            &format!("/api/v1/statuses/{id}"),
            Some("agent"),
            &[],
            Some(json!({"status": "second draft"})),
        )
        .await;
    edited.assert_status(200);
    let deleted = server
        .delete(&format!("/api/v1/statuses/{id}"), Some("agent"))
        .await;
    deleted.assert_status(200);
    assert_eq!(deleted.json()["text"], json!("second draft"));
}

#[tokio::test]
async fn an_edited_posts_source_answers_the_edits_text() {
    let t = twin();
    let server = t.serve_env(&[], &[KEY]);

    let id = post(&server, "first draft").await;
    let source = format!("/api/v1/statuses/{id}/source");
    let first = server.get(&source, Some("agent")).await;
    first.assert_status(200);
    assert_eq!(first.json()["text"], json!("first draft"));

    server
        .send(
            "PUT",
            &format!("/api/v1/statuses/{id}"),
            Some("agent"),
            &[],
            Some(json!({"status": "second draft"})),
        )
        .await
        .assert_status(200);
    let edited = server.get(&source, Some("agent")).await;
    edited.assert_status(200);
    assert_eq!(edited.json()["text"], json!("second draft"));
}
