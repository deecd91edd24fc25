//! A read under a record's path answering one item per write of the record, its create
//! first, each showing fields of that write's answer (a post's `history`, whose edits show
//! their `edited_at` as the version's `created_at`), is learned as the record's versions; a
//! history that leaves out a write, or one never read after an edit, learns nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;
use serde_json::{Value, json};
use wraith_model::{Model, RecordVersions, VersionField};
use wraith_recording::Exchange;

/// One session: post `i` created, read, its history read, edited, its history read again
/// (answered `after_edit`, or both versions when `None`).
fn post_session(i: u64, after_edit: Option<Vec<Value>>) -> Vec<Exchange> {
    let id = format!("10{i}");
    let created_at = format!("2026-06-01T12:0{i}:00.000Z");
    let edited_at = format!("2026-06-01T12:0{i}:30.000Z");
    let created = json!({"id": id, "content": format!("<p>first {i}</p>"),
        "created_at": created_at, "edited_at": null});
    let edited = json!({"id": id, "content": format!("<p>second {i}</p>"),
        "created_at": created_at, "edited_at": edited_at});
    let v0 = json!({"content": created["content"], "created_at": created_at});
    let v1 = json!({"content": edited["content"], "created_at": edited_at});
    vec![
        ok_json(
            "POST",
            "/v1/posts",
            Some(&json!({"status": format!("first {i}")})),
            &created,
        ),
        ok_json("GET", &format!("/v1/posts/{id}"), None, &created),
        ok_json(
            "GET",
            &format!("/v1/posts/{id}/history"),
            None,
            &json!([v0]),
        ),
        ok_json(
            "PUT",
            &format!("/v1/posts/{id}"),
            Some(&json!({"status": format!("second {i}")})),
            &edited,
        ),
        ok_json(
            "GET",
            &format!("/v1/posts/{id}/history"),
            None,
            &Value::Array(after_edit.unwrap_or_else(|| vec![v0.clone(), v1.clone()])),
        ),
    ]
}

fn versions(sessions: Vec<Vec<Exchange>>) -> Option<RecordVersions> {
    let model: Model = common::synth_runs("posts", "https://api.example.com", sessions);
    common::route(&model, "GET", "/v1/posts/:param/history")
        .record_versions
        .clone()
}

#[test]
fn a_history_of_each_write_is_learned_as_versions() {
    let rule = versions(vec![post_session(1, None), post_session(2, None)]).unwrap();
    assert_eq!(rule.entity_type, "posts");
    assert_eq!(
        rule.fields,
        vec![
            VersionField {
                key: "content".into(),
                from_create: "content".into(),
                from_update: "content".into(),
            },
            VersionField {
                key: "created_at".into(),
                from_create: "created_at".into(),
                from_update: "edited_at".into(),
            },
        ]
    );
}

#[test]
fn a_history_leaving_out_a_write_learns_nothing() {
    let first_only =
        vec![json!({"content": "<p>first 2</p>", "created_at": "2026-06-01T12:02:00.000Z"})];
    assert_eq!(
        versions(vec![
            post_session(1, None),
            post_session(2, Some(first_only))
        ]),
        None
    );
}

#[test]
fn a_history_never_read_after_an_edit_learns_nothing() {
    let sessions = vec![post_session(1, None), post_session(2, None)]
        .into_iter()
        .map(|s| s.into_iter().take(3).collect())
        .collect();
    assert_eq!(versions(sessions), None);
}
