//! Text rendering (`Route::text_rendering`): an answer field made from the sent text (wrapped,
//! some characters escaped, tokens turned into links), learned from small synthetic
//! recordings only when the recorded answers bear it out.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

use wraith_model::{Model, Route, TextRendering, TokenRendering};
use wraith_recording::{Exchange, Headers, RecordedSession};
use wraith_synth::{SynthOptions, synthesize};

fn headers() -> Headers {
    let mut headers = Headers::new();
    headers.insert("authorization".into(), vec!["Bearer a".into()]);
    headers
}

fn post(body: Value, answer: Value) -> Exchange {
    common::json_exchange("POST", "/v1/notes", 200, headers(), Some(&body), &answer)
}

/// What the recorded API made of a text: a paragraph, `'` as `&#39;`, `#name` as a link.
fn html(text: &str) -> String {
    let mut out = String::from("<div>");
    for unit in wraith_model::text_units(text, |c| c == '#') {
        match unit {
            wraith_model::TextUnit::Token { word, .. } => out.push_str(&format!(
                "<a href=\"https://notes.example/tags/{word}\">#{word}</a>"
            )),
            wraith_model::TextUnit::Char('\'') => out.push_str("&#39;"),
            wraith_model::TextUnit::Char(c) => out.push(c),
        }
    }
    out.push_str("</div>");
    out
}

const TEXTS: [&str; 6] = [
    "good morning",
    "#Rust is fun",
    "it's raining",
    "hi #cats and #dogs",
    "see you later",
    "lunch at noon",
];

/// Notes whose answers render their text under `html`, as `render` says for the n-th.
fn note_recordings(render: impl Fn(usize, &str) -> String) -> Vec<RecordedSession> {
    let exchanges = TEXTS
        .iter()
        .enumerate()
        .map(|(n, text)| {
            post(
                json!({"text": text, "visibility": "public"}),
                json!({
                    "id": format!("nt_{n}b7e1c9a52"),
                    "text": text,
                    "html": render(n, text),
                    "visibility": "public",
                }),
            )
        })
        .collect();
    vec![common::session("notes", 0, exchanges)]
}

fn model(sessions: &[RecordedSession]) -> Model {
    synthesize(
        sessions,
        &SynthOptions {
            twin: "notes".into(),
            base_url: "https://api.notes.example".into(),
            tool_version: "test".into(),
            tag: None,
            request_keying: Default::default(),
            run_gap_us: None,
        },
    )
    .model
}

fn route<'m>(m: &'m Model, method: &str) -> &'m Route {
    m.routes
        .iter()
        .find(|r| r.method == method)
        .unwrap_or_else(|| panic!("a {method} route"))
}

#[test]
fn a_write_whose_answer_renders_its_text_learns_the_rendering() {
    let m = model(&note_recordings(|_, text| html(text)));
    assert_eq!(
        route(&m, "POST").text_rendering,
        Some(TextRendering {
            at: "/html".into(),
            text_field: "/text".into(),
            prefix: "<div>".into(),
            suffix: "</div>".into(),
            escapes: [("'".to_string(), "&#39;".to_string())]
                .into_iter()
                .collect(),
            tokens: vec![TokenRendering {
                sigil: "#".into(),
                parts: vec![
                    "<a href=\"https://notes.example/tags/".into(),
                    "\">#".into(),
                    "</a>".into(),
                ],
            }],
        })
    );
}

#[test]
fn a_field_that_echoes_the_text_verbatim_is_no_rendering() {
    // `text` is the sent text itself: an echo, not a rendering (nor is `html` here).
    let m = model(&note_recordings(|_, text| text.to_string()));
    assert_eq!(route(&m, "POST").text_rendering, None);
}

#[test]
fn answers_that_disagree_with_every_rendering_learn_none() {
    // Three of six answers hold other texts: no rule reproduces 90% of them.
    let m = model(&note_recordings(|n, text| {
        if n % 2 == 1 {
            html("something else entirely")
        } else {
            html(text)
        }
    }));
    assert_eq!(route(&m, "POST").text_rendering, None);
}

#[test]
fn an_update_whose_answers_agree_takes_the_creates_rendering() {
    let mut sessions = note_recordings(|_, text| html(text));
    let note = |text: &str| json!({"id": "nt_0b7e1c9a52", "text": text, "html": html(text)});
    sessions[0].exchanges.push(common::json_exchange(
        "GET",
        "/v1/notes/nt_0b7e1c9a52",
        200,
        headers(),
        None,
        &note("good morning"),
    ));
    sessions[0].exchanges.push(common::json_exchange(
        "PUT",
        "/v1/notes/nt_0b7e1c9a52",
        200,
        headers(),
        Some(&json!({"text": "now it's #late"})),
        &note("now it's #late"),
    ));
    let sessions = vec![common::session("notes", 0, sessions[0].exchanges.clone())];
    let m = model(&sessions);
    let create = route(&m, "POST").text_rendering.clone();
    assert!(create.is_some());
    assert_eq!(route(&m, "PUT").text_rendering, create);
}
