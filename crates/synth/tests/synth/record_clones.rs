//! A `POST` under a record's path answering a new record of the same type, which the session
//! then reads as one, with fields equal to the path's record, is learned as a copy of that
//! record; a copy never used as a record, or an answer naming the path's own record, learns
//! nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;
use serde_json::{Value, json};
use wraith_model::{Model, RecordClone};
use wraith_recording::Exchange;

fn volume(id: u64, label: &str, size: u64, region: &str, minute: u64) -> Value {
    json!({"id": id, "label": label, "size": size, "region": region,
        "created": format!("2026-06-01T12:{minute:02}:00")})
}

/// One session: volume `id` created and read, cloned (answered `copy`), the answer's key read
/// back when `read_back`.
fn session(id: u64, copy: Value, read_back: bool) -> Vec<Exchange> {
    let source = volume(id, &format!("vol{id}"), 10 + id, "us-east", 1);
    let mut out = vec![
        ok_json(
            "POST",
            "/v1/volumes",
            Some(&json!({"label": source["label"], "size": source["size"], "region": "us-east"})),
            &source,
        ),
        ok_json("GET", &format!("/v1/volumes/{id}"), None, &source),
        ok_json(
            "POST",
            &format!("/v1/volumes/{id}/clone"),
            Some(&json!({"label": copy["label"]})),
            &copy,
        ),
    ];
    if read_back {
        out.push(ok_json(
            "GET",
            &format!("/v1/volumes/{}", copy["id"]),
            None,
            &copy,
        ));
    }
    out
}

fn clone_rule(sessions: Vec<Vec<Exchange>>) -> Option<RecordClone> {
    let model: Model = common::synth_runs("storage", "https://api.example.com", sessions);
    common::route(&model, "POST", "/v1/volumes/:param/clone")
        .record_clone
        .clone()
}

#[test]
fn a_new_record_copying_the_paths_record_is_learned_as_its_clone() {
    let rule = clone_rule(vec![session(
        1,
        volume(2, "vol1-copy", 11, "us-east", 5),
        true,
    )])
    .unwrap();
    assert_eq!(rule.entity_type, "volumes");
    // Not the key, not the label the request sent, not the copy's own `created`.
    assert_eq!(rule.copies, vec!["region".to_string(), "size".to_string()]);
}

#[test]
fn a_copy_never_used_as_a_record_learns_nothing() {
    let rule = clone_rule(vec![session(
        1,
        volume(2, "vol1-copy", 11, "us-east", 5),
        false,
    )]);
    assert_eq!(rule, None);
}

#[test]
fn an_answer_naming_the_paths_own_record_learns_nothing() {
    let rule = clone_rule(vec![session(
        1,
        volume(1, "vol1-copy", 11, "us-east", 5),
        true,
    )]);
    assert_eq!(rule, None);
}
