//! A create naming another record steps that record's counter, end to end: recorded sessions
//! post a note, post a reply naming it in `in_reply_to_id`, and read the note showing
//! `replies_count` 1. Synth learns the step from those recordings, and the served twin's
//! session sees its own note's count go to 1 after a reply and 2 after a second one, whether
//! it replays the recorded requests (with its own fresh ids) or sends new ones. Black-box:
//! the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "create-counters-test-key");
const ORIGIN: &str = "https://api.notes.test";

fn note(id: &str, text: &str, reply_to: Option<&str>, replies: i64) -> Value {
    json!({"id": id, "text": text, "in_reply_to_id": reply_to, "replies_count": replies})
}

/// One recorded session: post note `a`, post note `b` replying to it, read `a`.
fn session(t: &Twin, n: u64) {
    let (a, b) = (format!("{}", 7_000 + n), format!("{}", 8_000 + n));
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/notes",
            Some(&json!({"text": "first"})),
            &note(&a, "first", None, 0),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/v1/notes",
            Some(&json!({"text": "a reply", "in_reply_to_id": a})),
            &note(&b, "a reply", Some(&a), 0),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/notes/{a}"),
            None,
            &note(&a, "first", None, 1),
        ),
    ];
    har::import(t, &[KEY], &format!("s{n}.har"), entries);
}

fn notes_twin() -> Twin {
    har::synth_twin("notes", ORIGIN, &[KEY], 3, session)
}

/// Post a note (`text`), reply to it twice (`reply`), reading it after each reply: the counts
/// the reads showed.
async fn replies_seen(agent: &str, text: &str, reply: &str) -> (Value, Value) {
    let t = notes_twin();
    let server = t.serve_env(&[], &[KEY]);
    let first = server
        .post("/v1/notes", Some(agent), json!({"text": text}))
        .await;
    first.assert_status(200);
    let id = har::key_text(&first.json()["id"]);
    let mut seen = Vec::new();
    for _ in 0..2 {
        let replied = server
            .post(
                "/v1/notes",
                Some(agent),
                json!({"text": reply, "in_reply_to_id": id}),
            )
            .await;
        replied.assert_status(200);
        let read = server.get(&format!("/v1/notes/{id}"), Some(agent)).await;
        read.assert_status(200);
        let read = read.json();
        assert_eq!(har::key_text(&read["id"]), id, "{read}");
        seen.push(read["replies_count"].clone());
    }
    (seen[0].clone(), seen[1].clone())
}

#[tokio::test]
async fn a_reply_replayed_with_fresh_ids_steps_its_notes_replies_count() {
    let (one, two) = replies_seen("agent-1", "first", "a reply").await;
    assert_eq!(one, json!(1));
    assert_eq!(two, json!(2), "a second reply steps it again");
}

#[tokio::test]
async fn a_new_reply_steps_its_notes_replies_count() {
    let (one, two) = replies_seen("agent-2", "my own words", "my answer").await;
    assert_eq!(one, json!(1));
    assert_eq!(two, json!(2), "a second reply steps it again");
}
