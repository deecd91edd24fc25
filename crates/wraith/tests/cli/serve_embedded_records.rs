//! Null-or-embedded-record positions end to end: recorded creates answer `quote: null` for a
//! plain note and, for a note whose request named another one (`quoted_id`), that note's
//! record inside `{state, quoted}`. Synth learns the rule from those recordings, and the served
//! twin answers a quoting create with the session's own note that the request named, not a
//! recorded one. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "embedded-records-test-key");
const ORIGIN: &str = "https://api.notes.test";

/// One recorded session: post note `a`, read it, post note `b` quoting it.
fn session(t: &Twin, n: u64) {
    let (a, b) = (format!("{}", 7_000 + n), format!("{}", 8_000 + n));
    let a_note = json!({"id": a, "text": format!("plain {n}"), "quote": null});
    let b_note = json!({
        "id": b, "text": format!("quoting {n}"),
        "quote": {"state": "accepted", "quoted": a_note.clone()}
    });
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/notes",
            Some(&json!({"text": format!("plain {n}")})),
            &a_note,
        ),
        har::entry(ORIGIN, "GET", &format!("/v1/notes/{a}"), None, &a_note),
        har::entry(
            ORIGIN,
            "POST",
            "/v1/notes",
            Some(&json!({"text": format!("quoting {n}"), "quoted_id": a})),
            &b_note,
        ),
    ];
    har::import(t, &[KEY], &format!("s{n}.har"), entries);
}

fn notes_twin() -> Twin {
    har::synth_twin("notes", ORIGIN, &[KEY], 3, session)
}

#[tokio::test]
async fn a_quoting_create_embeds_the_sessions_note_its_request_named() {
    let t = notes_twin();
    let server = t.serve_env(&[], &[KEY]);
    let mine = server
        .post(
            "/v1/notes",
            Some("agent-1"),
            json!({"text": "my own words"}),
        )
        .await;
    mine.assert_status(200);
    let mine = mine.json();
    assert_eq!(mine["quote"], Value::Null, "{mine}");
    let id = har::key_text(&mine["id"]);
    let quoting = server
        .post(
            "/v1/notes",
            Some("agent-1"),
            json!({"text": "look at this", "quoted_id": id}),
        )
        .await;
    quoting.assert_status(200);
    let quoting = quoting.json();
    assert_eq!(quoting["quote"]["quoted"], mine, "{quoting}");
    assert_eq!(quoting["quote"]["state"], json!("accepted"), "{quoting}");
}

#[tokio::test]
async fn a_quote_of_a_note_the_session_does_not_hold_answers_a_recorded_one() {
    let t = notes_twin();
    let server = t.serve_env(&[], &[KEY]);
    let quoting = server
        .post(
            "/v1/notes",
            Some("agent-2"),
            json!({"text": "look at this", "quoted_id": "99999"}),
        )
        .await;
    quoting.assert_status(200);
    let quoted = &quoting.json()["quote"]["quoted"];
    let recorded: Vec<Value> = (1..=3).map(|n| json!(format!("{}", 7_000 + n))).collect();
    assert!(recorded.contains(&quoted["id"]), "{quoted}");
}
