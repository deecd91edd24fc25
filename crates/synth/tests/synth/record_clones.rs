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

/// Sessions 1 to 3 create volume `id` whose `path` is rendered from its label, as every create
/// answered; session 1 then clones it, answered `clone_path`, and reads the copy back.
fn rendered_sessions(clone_path: &str) -> Vec<Vec<Exchange>> {
    let with_path = |mut v: Value| {
        v["path"] = json!(format!("/dev/disk/{}", v["label"].as_str().unwrap()));
        v
    };
    (1..=3)
        .map(|id| {
            let copy = if id == 1 {
                let mut c = with_path(volume(10 + id, "vol-copy", 10 + id, "us-east", 5));
                c["path"] = json!(clone_path);
                Some(c)
            } else {
                None
            };
            let mut s = session(id, copy.clone().unwrap_or(json!({})), copy.is_some());
            if copy.is_none() {
                s.truncate(2);
            }
            for e in &mut s {
                if e.request.method == "POST" && e.request.path == "/v1/volumes" {
                    let answer: Value = serde_json::from_slice(&e.response_body()).unwrap();
                    *e = ok_json(
                        "POST",
                        "/v1/volumes",
                        Some(&json!({"label": answer["label"], "size": answer["size"]})),
                        &with_path(answer),
                    );
                }
            }
            s
        })
        .collect()
}

#[test]
fn a_clone_answering_its_text_as_the_types_creates_render_it_takes_their_rendering() {
    let model: Model = common::synth_runs(
        "storage",
        "https://api.example.com",
        rendered_sessions("/dev/disk/vol-copy"),
    );
    let create = common::route(&model, "POST", "/v1/volumes");
    let rule = create
        .text_rendering
        .clone()
        .expect("the creates' rendering");
    assert_eq!(
        (rule.at.as_str(), rule.prefix.as_str()),
        ("/path", "/dev/disk/")
    );
    let clone = common::route(&model, "POST", "/v1/volumes/:param/clone");
    assert!(clone.record_clone.is_some());
    assert_eq!(clone.text_rendering, Some(rule));
}

#[test]
fn a_clone_answering_other_text_keeps_no_rendering() {
    let model: Model = common::synth_runs(
        "storage",
        "https://api.example.com",
        rendered_sessions("/dev/disk/other"),
    );
    assert!(
        common::route(&model, "POST", "/v1/volumes")
            .text_rendering
            .is_some()
    );
    let clone = common::route(&model, "POST", "/v1/volumes/:param/clone");
    assert!(clone.record_clone.is_some());
    assert_eq!(clone.text_rendering, None);
}
