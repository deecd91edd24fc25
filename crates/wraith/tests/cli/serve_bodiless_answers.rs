//! A recording that holds a body on an answer that carries none on the wire (a 204, a 304):
//! `wraith import` keeps it and says so, the twin answers without it in process as over HTTP
//! (with no replay claim for a moment it did not answer verbatim), and `wraith check` judges
//! it the same way in memory and with `--wire`. Black-box: the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::process::Command;

use serde_json::{Value, json};
use support::Twin;
use support::har::entry;

const ORIGIN: &str = "https://api.things.test";
const ENV: [(&str, &str); 1] = [("WRAITH_HMAC_KEY", "bodiless-answers-key")];

/// `entry` answered `status` with the JSON `answer` as its recorded body.
fn answered(method: &str, path: &str, status: u16, answer: &Value) -> Value {
    let mut e = entry(ORIGIN, method, path, None, answer);
    e["response"]["status"] = json!(status);
    e
}

/// A twin whose one session reads a list and a record, asks a 304 and deletes with a 204, the
/// last two recorded with a body; `wraith import`'s stderr beside it.
fn twin() -> (Twin, String) {
    let t = Twin::init("things", ORIGIN);
    let entries = vec![
        answered("GET", "/things", 200, &json!([{"id": 1, "name": "a"}])),
        answered("GET", "/things/1", 200, &json!({"id": 1, "name": "a"})),
        answered("GET", "/etag", 304, &json!({"cached": true})),
        answered("DELETE", "/things/1", 204, &json!({"deleted": true})),
    ];
    let stderr = support::har::import_warnings(&t, &ENV, "things.har", entries);
    support::har::synth(&t, &ENV);
    (t, stderr)
}

/// `wraith check <twin> --json <extra>`: exit code and the report.
fn check(t: &Twin, extra: &[&str]) -> (Option<i32>, Value) {
    let out = Command::new(support::bin())
        .current_dir(t.tmp.path())
        .envs(ENV)
        .env("TMPDIR", t.tmp.path())
        .args(["check", &t.path_str(), "--json"])
        .args(extra)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check {extra:?} printed no report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), report)
}

#[test]
fn import_warns_that_a_body_recorded_on_a_204_or_304_cannot_be_answered() {
    let (_t, stderr) = twin();
    let warning = stderr
        .lines()
        .find(|l| l.contains("carries none on the wire"))
        .unwrap_or_else(|| panic!("no warning: {stderr}"));
    assert!(warning.starts_with("warning: "), "{warning}");
    assert!(warning.contains("things.har"), "names the file: {warning}");
    assert!(
        warning.contains("log.entries[2] (304), log.entries[3] (204)"),
        "names the entries: {warning}"
    );
}

#[test]
fn check_in_memory_and_over_the_wire_agree_on_a_recorded_204_or_304_body() {
    let (t, _) = twin();
    let (code, in_memory) = check(&t, &[]);
    assert_eq!(code, Some(0), "{:#}", in_memory["divergences"]);
    let (code, wire) = check(&t, &["--wire"]);
    assert_eq!(code, Some(0), "{:#}", wire["divergences"]);
    assert_eq!(in_memory["score_bp"], 10_000);
    assert_eq!(wire["score_bp"], in_memory["score_bp"]);
    assert_eq!(wire["divergences"], in_memory["divergences"]);
    assert_eq!(wire["replay_claims"], in_memory["replay_claims"]);
}

#[tokio::test]
async fn a_served_204_or_304_has_no_body_and_no_replay_claim_for_a_recorded_one() {
    let (t, _) = twin();
    let s = t.serve_env(&[], &ENV);
    let cached = s.get("/etag", Some("a")).await;
    cached.assert_status(304);
    assert!(cached.body.is_empty());
    assert_eq!(cached.provenance(), Some("recorded"));
    assert_eq!(
        cached.header("x-wraith-replay"),
        None,
        "{:?}",
        cached.headers
    );
    let gone = s.delete("/things/1", Some("a")).await;
    gone.assert_status(204);
    assert!(gone.body.is_empty());
    assert_eq!(gone.provenance(), Some("recorded"));
    assert_eq!(gone.header("x-wraith-replay"), None, "{:?}", gone.headers);
    // A recorded body the twin does answer keeps its claim.
    let list = s.get("/things", Some("b")).await;
    assert_eq!(list.header("x-wraith-replay"), Some("series-moment;v=1"));
}

/// A recorded answer to `HEAD` states the length of the body a `GET` would carry, and so does
/// the twin's: its recorded `Content-Length`, not the `0` of the body it does not send.
#[tokio::test]
async fn a_recorded_head_answer_states_its_recorded_content_length() {
    let t = Twin::init("heads", ORIGIN);
    let mut head = entry(ORIGIN, "HEAD", "/files/1", None, &json!({}));
    head["response"]["content"] = json!({"size": 0, "mimeType": "application/json"});
    head["response"]["headers"] = json!([
        {"name": "Content-Type", "value": "application/json"},
        {"name": "Content-Length", "value": "17"}
    ]);
    let get = entry(
        ORIGIN,
        "GET",
        "/files/1",
        None,
        &json!({"id": 1, "n": "ab"}),
    );
    support::har::import(&t, &ENV, "heads.har", vec![get, head]);
    support::har::synth(&t, &ENV);
    let s = t.serve_env(&[], &ENV);
    let r = s.send("HEAD", "/files/1", Some("h"), &[], None).await;
    r.assert_status(200);
    assert_eq!(r.header("x-wraith-route"), Some("HEAD /files/:param"));
    assert_eq!(r.header("content-length"), Some("17"));
    assert!(r.body.is_empty());
    let g = s.get("/files/1", Some("h")).await;
    assert_eq!(g.header("content-length"), Some("17"));
}
