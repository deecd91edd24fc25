//! `wraith check` and fixtures: answers served from a fixture entity (provenance `fixture`) are
//! output the twin's owner wrote, so their shape is judged against the recordings like a Lua
//! handler's (`authored_deviations`, `[[deviations]]`, `deviation_policy`). Black-box: the real
//! binary on a small notes twin (`check_support/notes.rs`), checked `--target` a tiny HTTP twin
//! (`check_support/fake_target.rs`) whose note lists come from a "fixture".

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod check_support;
#[path = "check_support/fake_target.rs"]
mod fake_target;
#[path = "check_support/notes.rs"]
mod notes;

use std::collections::BTreeMap;
use std::sync::Mutex;

use check_support::*;
use serde_json::{Value, json};

/// Creates are answered as a template would (the text echoed, a minted id); lists from a
/// fixture whose note spells `id` as `Id`.
fn fixture_lists_target() -> String {
    let texts = Mutex::new(BTreeMap::<String, String>::new());
    fake_target::start(move |c| {
        if c.method == "POST" {
            let text = serde_json::from_slice::<Value>(c.body).unwrap()["text"].clone();
            let t = text.as_str().unwrap_or("").to_string();
            texts.lock().unwrap().insert(c.session.to_string(), t);
            fake_target::Answer {
                status: 201,
                provenance: "template",
                route: "POST /v1/notes".into(),
                body: json!({"id": "note_minted000001", "object": "note", "text": text}),
            }
        } else {
            let text = texts
                .lock()
                .unwrap()
                .get(c.session)
                .cloned()
                .unwrap_or_default();
            let note = json!({"Id": "note_minted000001", "object": "note", "text": text});
            fake_target::Answer {
                status: 200,
                provenance: "fixture",
                route: "GET /v1/notes".into(),
                body: json!({"object": "list", "data": [note]}),
            }
        }
    })
}

fn config(t: &DemoTwin, toml: &str) {
    let p = t.root.join("wraith.toml");
    let mut text = std::fs::read_to_string(&p).unwrap();
    text.push('\n');
    text.push_str(toml);
    std::fs::write(p, text).unwrap();
}

#[test]
fn check_fixture_answer_unlike_the_recordings_is_an_authored_deviation_that_fails_the_run() {
    let t = notes::notes_twin();
    let url = fixture_lists_target();
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    assert_eq!(r["authored"]["fixture_answers"], 3);
    assert_eq!(r["authored"]["served_answers"], 0);
    assert_eq!(r["fiction"]["authored_answers"], 3);
    let devs = r["authored_deviations"].as_array().unwrap();
    assert_eq!(devs.len(), 3, "{devs:#?}");
    for d in devs {
        assert_eq!(d["rule"], "miscased_key");
        assert_eq!(d["answer"], "fixture");
        assert_eq!(d["route"], "GET /v1/notes");
        assert_eq!(d["path"], "body.data[0].id");
        assert_eq!(d["actual"], "Id");
        assert_eq!(d["severity"], "error");
        assert!(d["reason"].as_str().unwrap().contains("fixture"), "{d}");
    }
    assert_eq!(r["authored"]["gate_passed"], false);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn check_fixture_deviation_under_warn_policy_is_a_warning() {
    let t = notes::notes_twin();
    config(
        &t,
        "[handlers]\ndeviation_policy = \"warn\"\n[diff]\nrequired_score = 0.1\nsession_pass_rate = 0.0\n[diff.thresholds]\nbody_structure = 0.0\n",
    );
    let url = fixture_lists_target();
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    assert_eq!(r["authored"]["unmarked"], 3);
    assert_eq!(r["authored_deviations"][0]["severity"], "warning");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn check_declared_fixture_deviation_is_marked_and_its_divergences_exempt() {
    let t = notes::notes_twin();
    config(
        &t,
        "[[deviations]]\nroute = \"GET /v1/notes\"\npath = \"body.data\"\nreason = \"the demo data names its key Id\"\n",
    );
    let url = fixture_lists_target();
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    assert_eq!(r["authored"]["marked"], 3);
    assert_eq!(r["authored"]["unmarked"], 0);
    let d = &r["authored_deviations"][0];
    assert_eq!(d["marked"], true);
    assert_eq!(d["severity"], "info");
    assert_eq!(d["declared_reason"], "the demo data names its key Id");
    // The list's missing `id` and extra `noteId` are declared: nothing is left to fail.
    assert!(r["authored"]["exempted_divergences"].as_u64().unwrap() >= 3);
    assert_eq!(r["score_bp"], 10_000, "{:#}", r["divergences"]);
    assert_eq!(out.status.code(), Some(0));
}
