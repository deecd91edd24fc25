//! `wraith check` replays like a real client: an id the twin answered earlier in a session is
//! the id the session's later requests name. Black-box: the real binary on a small notes twin
//! (`testdata/check/idflow/`) whose every session creates a note, deletes it by the id the
//! create answered, then deletes it again (404).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;

use std::path::{Path, PathBuf};

use check_support::*;
use serde_json::Value;

fn har(i: usize) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../testdata/check/idflow/notes-{i}.har"))
}

/// `wraith init notes`, then the recorded sessions `sessions` imported (one HAR each).
fn notes_twin(sessions: &[usize]) -> DemoTwin {
    let t = DemoTwin::init("notes", "https://api.notes.test/v1");
    for &i in sessions {
        import(&t, i);
    }
    t
}

fn import(t: &DemoTwin, i: usize) {
    let out = t.run(&["import", &har(i).to_string_lossy()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `(method, expected status, actual status)` of every replayed exchange of `session`.
fn statuses(r: &Value, session: &str) -> Vec<(String, u64, u64)> {
    r["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["session"] == session)
        .map(|e| {
            (
                e["method"].as_str().unwrap().to_string(),
                e["expected_status"].as_u64().unwrap(),
                e["actual_status"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn held_out_delete_names_the_id_the_twin_answered_and_passes() {
    let t = notes_twin(&[1, 2, 3, 4, 5]);
    t.synth();
    let out = t.run(&["check", "--holdout", "5", "--json"]);
    let r = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{:#}", r["divergences"]);
    let held = r["holdout"]["held_out_sessions"][0].as_str().unwrap();
    // The held-out create was answered with an id the twin minted; the recorded delete named
    // the recorded id, which the twin never issued (404). Sent with the twin's id, it is the
    // recorded 200, and the second delete the recorded 404.
    assert_eq!(
        statuses(&r, held),
        vec![
            ("POST".to_string(), 201, 201),
            ("DELETE".to_string(), 200, 200),
            ("DELETE".to_string(), 404, 404),
        ]
    );
    assert_eq!(r["score_bp"], 10_000);
    let s = &r["sessions"][0];
    assert_eq!(s["session"], held);
    assert_eq!(
        s["requests_rewritten"], 2,
        "both deletes name the twin's id"
    );
    assert_eq!(s["id_ambiguities"], 0);
    assert_eq!(r["requests_rewritten"], 2);
}

#[test]
fn in_sample_answers_with_the_recorded_ids_rewrite_nothing() {
    let t = notes_twin(&[1, 2, 3, 4, 5]);
    t.synth();
    let out = t.run(&["check", "--json"]);
    let r = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{:#}", r["divergences"]);
    assert_eq!(r["score_bp"], 10_000);
    // Every create is answered with its own recorded id: nothing to map.
    assert_eq!(r["requests_rewritten"], 0);
    for s in r["sessions"].as_array().unwrap() {
        assert_eq!(s["requests_rewritten"], 0);
    }
}

#[test]
fn target_run_rewrites_in_the_driver_like_the_in_memory_run() {
    // The running twin is synthesized from sessions 1-4; session 5 is recorded afterwards, so
    // against the running twin it is held out.
    let t = notes_twin(&[1, 2, 3, 4]);
    t.synth();
    let (mut child, url) = t.serve();
    import(&t, 5);
    let out = t.run(&["check", "--target", &url, "--json"]);
    let _ = child.kill();
    let _ = child.wait();
    let r = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{:#}", r["divergences"]);
    assert_eq!(r["mode"], "target");
    assert_eq!(r["score_bp"], 10_000, "{:#}", r["divergences"]);
    let last = r["sessions"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["requests_rewritten"], 2, "{last:#}");
    assert_eq!(r["requests_rewritten"], 2);
}

/// A request no route of the model matches is named `METHOD /concrete/path (no route)` by the
/// path it was recorded with: the replay sends it with the id the twin answered earlier in the
/// session, but the report's name (which `[[diff.suppress]]` patterns match) does not depend on
/// ids the twin minted.
#[test]
fn a_request_no_route_matches_is_named_by_its_recorded_path_not_the_id_sent() {
    let t = notes_twin(&[1, 2, 3, 4]);
    t.synth();
    // Recorded after the model: the create is answered with a minted id, which the pin (a route
    // the model does not have) is sent with.
    let note = serde_json::json!({"id": "note_1u33xtplpft7", "object": "note", "text": "pin me"});
    let har = serde_json::json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
    "pages": [], "entries": [
        check_support::notes::entry("POST", "https://api.notes.test/v1/notes",
            Some(r#"{"text": "pin me"}"#), 201, &note),
        check_support::notes::entry("POST",
            "https://api.notes.test/v1/notes/note_1u33xtplpft7/pin", None, 200, &note),
    ]}});
    t.import_har("pin", &har);
    let r = stdout_json(&t.run(&["check", "--json"]));
    let pin: Vec<&Value> = r["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["path"].as_str().unwrap().ends_with("/pin"))
        .collect();
    assert_eq!(pin.len(), 1, "{r:#}");
    assert_eq!(pin[0]["path"], "/v1/notes/note_1u33xtplpft7/pin", "{r:#}");
    assert_eq!(
        pin[0]["route"], "POST /v1/notes/note_1u33xtplpft7/pin (no route)",
        "{r:#}"
    );
    // The id was rewritten on the way out: the create's minted id is what the twin was sent.
    let s = r["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["requests_rewritten"].as_u64() > Some(0))
        .unwrap_or_else(|| panic!("no session rewrote a request: {r:#}"));
    assert_eq!(s["requests_rewritten"], 1, "{s:#}");
    let rows: Vec<&str> = r["routes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|row| row["route"].as_str())
        .filter(|name| name.ends_with("(no route)"))
        .collect();
    assert_eq!(
        rows,
        ["POST /v1/notes/note_1u33xtplpft7/pin (no route)"],
        "{r:#}"
    );
}
