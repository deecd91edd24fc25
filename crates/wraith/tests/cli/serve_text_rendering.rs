//! A field rendered from the sent text, end to end: recorded sessions post notes whose answer
//! carries the text as HTML (a paragraph, `'` escaped, `#name` a link to the tag). Synth
//! learns the rendering from those recordings, and the served twin answers a note it never
//! saw with its own text rendered, and reads it back so. Black-box: the real binary on HARs
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "text-rendering-test-key");
const ORIGIN: &str = "https://api.notes.test";

const TEXTS: [&str; 5] = [
    "good morning all",
    "it's a #sunny day",
    "lunch at noon",
    "see #you later",
    "back by five",
];

/// What the recorded API made of a text.
fn html(text: &str) -> String {
    let mut out = String::from("<p>");
    for unit in wraith_model::text_units(text, |c| c == '#') {
        match unit {
            wraith_model::TextUnit::Token { word, .. } => out.push_str(&format!(
                "<a href=\"{ORIGIN}/tags/{word}\" rel=\"tag\">#{word}</a>"
            )),
            wraith_model::TextUnit::Char('\'') => out.push_str("&#39;"),
            wraith_model::TextUnit::Char(c) => out.push(c),
        }
    }
    out.push_str("</p>");
    out
}

fn note(id: u64, text: &str) -> Value {
    json!({"id": id, "text": text, "html": html(text)})
}

/// One recorded session: post note `n` (from 1), read it back.
fn session(t: &Twin, n: u64) {
    let id = 7_000 + n;
    let Some(text) = TEXTS.get((n as usize).wrapping_sub(1)) else {
        return;
    };
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/notes",
            Some(&json!({ "text": text })),
            &note(id, text),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/notes/{id}"),
            None,
            &note(id, text),
        ),
    ];
    har::import(t, &[KEY], &format!("s{n}.har"), entries);
}

#[tokio::test]
async fn a_posted_note_answers_and_reads_back_its_own_text_rendered() {
    let t = har::synth_twin("notes", ORIGIN, &[KEY], TEXTS.len() as u64, session);
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post(
            "/v1/notes",
            Some("agent"),
            json!({"text": "what's #new today"}),
        )
        .await;
    created.assert_status(200);
    let created = created.json();
    let base = server.url.trim_end_matches('/').to_string();
    let want = format!("<p>what&#39;s <a href=\"{base}/tags/new\" rel=\"tag\">#new</a> today</p>");
    assert_eq!(created["html"], json!(want), "{created}");

    let id = har::key_text(&created["id"]);
    let read = server.get(&format!("/v1/notes/{id}"), Some("agent")).await;
    read.assert_status(200);
    assert_eq!(read.json()["html"], json!(want));
}
