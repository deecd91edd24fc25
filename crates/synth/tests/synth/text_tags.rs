//! Text tags (`Route::text_tags`): an answer array with one object per `#name` token of the
//! sent text, learned from small synthetic recordings only when every recorded answer bears it
//! out.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

use wraith_model::{Model, Route, TagField, TagValue, TextTags};
use wraith_recording::{Exchange, Headers, RecordedSession};
use wraith_synth::{SynthOptions, synthesize};

fn post(body: Value, answer: Value) -> Exchange {
    let mut headers = Headers::new();
    headers.insert("authorization".into(), vec!["Bearer a".into()]);
    common::json_exchange("POST", "/v1/notes", 200, headers, Some(&body), &answer)
}

fn tag(name: &str) -> Value {
    json!({"name": name, "url": format!("https://shop.example/tags/{name}"), "kind": "tag"})
}

/// Notes whose answers list their text's `#tokens` (lowercased) under `tags`; `tags_of`
/// gives each note's recorded tags from its text.
fn note_recordings(tags_of: impl Fn(usize, &str) -> Vec<Value>) -> Vec<RecordedSession> {
    let notes = [
        ("nt_3b7e1c9a52", "#Rust is fun"),
        ("nt_8c2a6e4d13", "hi #cats and #Dogs, #cats again"),
        ("nt_5f9d3b7a26", "no tags here"),
        ("nt_2e6c9a1f84", "#birds"),
    ];
    let exchanges = notes
        .iter()
        .enumerate()
        .map(|(n, (id, text))| {
            post(
                json!({"text": text, "visibility": "public"}),
                json!({"id": id, "text": text, "tags": tags_of(n, text)}),
            )
        })
        .collect();
    vec![common::session("notes", 0, exchanges)]
}

fn recorded_tags(_: usize, text: &str) -> Vec<Value> {
    let mut names: Vec<String> = Vec::new();
    for t in wraith_model::hash_tokens(text) {
        let t = t.to_lowercase();
        if !names.contains(&t) {
            names.push(t);
        }
    }
    names.iter().map(|n| tag(n)).collect()
}

fn model(sessions: &[RecordedSession]) -> Model {
    synthesize(
        sessions,
        &SynthOptions {
            twin: "shop".into(),
            base_url: "https://api.shop.example".into(),
            tool_version: "test".into(),
            tag: None,
            request_keying: Default::default(),
            run_gap_us: None,
        },
    )
    .model
}

fn notes_route(m: &Model) -> &Route {
    m.routes
        .iter()
        .find(|r| r.method == "POST" && r.path == "/v1/notes")
        .expect("POST /v1/notes")
}

#[test]
fn a_write_whose_answer_lists_the_hash_tokens_of_its_text_learns_text_tags() {
    let m = model(&note_recordings(recorded_tags));
    let field = |name: &str, value: TagValue| TagField {
        name: name.into(),
        value,
    };
    assert_eq!(
        notes_route(&m).text_tags,
        Some(TextTags {
            at: "/tags".into(),
            text_field: "/text".into(),
            key: "name".into(),
            lowercase: true,
            fields: vec![
                field("name", TagValue::Name),
                field(
                    "url",
                    TagValue::Affixed {
                        prefix: "https://shop.example/tags/".into(),
                        suffix: String::new(),
                    }
                ),
                field(
                    "kind",
                    TagValue::Constant {
                        value: json!("tag")
                    }
                ),
            ],
        })
    );
}

#[test]
fn an_answer_listing_a_tag_its_text_does_not_name_learns_no_text_tags() {
    let m = model(&note_recordings(|n, text| {
        let mut tags = recorded_tags(n, text);
        if n == 3 {
            tags.push(tag("fish"));
        }
        tags
    }));
    assert_eq!(notes_route(&m).text_tags, None);
}

#[test]
fn an_untagged_text_answered_with_tags_learns_no_text_tags() {
    let m = model(&note_recordings(|n, text| {
        if n == 2 {
            vec![tag("rust")]
        } else {
            recorded_tags(n, text)
        }
    }));
    assert_eq!(notes_route(&m).text_tags, None);
}

#[test]
fn tags_kept_as_sent_learn_a_rule_that_does_not_lowercase() {
    let m = model(&note_recordings(|_, text| {
        let mut names: Vec<&str> = Vec::new();
        for t in wraith_model::hash_tokens(text) {
            if !names.contains(&t) {
                names.push(t);
            }
        }
        names.iter().map(|n| tag(n)).collect()
    }));
    let rule = notes_route(&m).text_tags.clone().expect("a rule");
    assert!(!rule.lowercase, "{rule:?}");
}

#[test]
fn a_field_neither_constant_nor_made_from_the_name_learns_no_text_tags() {
    let m = model(&note_recordings(|n, text| {
        recorded_tags(n, text)
            .into_iter()
            .map(|mut t| {
                t["kind"] = json!(format!("kind{n}"));
                t
            })
            .collect()
    }));
    assert_eq!(notes_route(&m).text_tags, None);
}

fn with_reads_and_edits(
    mut sessions: Vec<RecordedSession>,
    edit_tags: Vec<Value>,
) -> Vec<RecordedSession> {
    let mut headers = Headers::new();
    headers.insert("authorization".into(), vec!["Bearer a".into()]);
    let note =
        |text: &str, tags: Vec<Value>| json!({"id": "nt_3b7e1c9a52", "text": text, "tags": tags});
    let mut exchanges = sessions[0].exchanges.clone();
    exchanges.push(common::json_exchange(
        "GET",
        "/v1/notes/nt_3b7e1c9a52",
        200,
        headers.clone(),
        None,
        &note("#Rust is fun", vec![tag("rust")]),
    ));
    exchanges.push(common::json_exchange(
        "PUT",
        "/v1/notes/nt_3b7e1c9a52",
        200,
        headers.clone(),
        Some(&json!({"text": "now plain"})),
        &note("now plain", edit_tags),
    ));
    exchanges.push(common::json_exchange(
        "GET",
        "/v1/notes/nt_3b7e1c9a52",
        200,
        headers,
        None,
        &note("now plain", Vec::new()),
    ));
    sessions[0] = common::session("notes", 0, exchanges);
    sessions
}

fn edit_route(m: &Model) -> &Route {
    m.routes
        .iter()
        .find(|r| r.method == "PUT" && r.path.starts_with("/v1/notes/"))
        .expect("PUT /v1/notes/:id")
}

#[test]
fn an_update_whose_answers_agree_with_the_create_rule_takes_it() {
    let m = model(&with_reads_and_edits(
        note_recordings(recorded_tags),
        Vec::new(),
    ));
    assert_eq!(edit_route(&m).state_op, Some(wraith_model::StateOp::Update));
    assert!(notes_route(&m).text_tags.is_some());
    assert_eq!(edit_route(&m).text_tags, notes_route(&m).text_tags);
}

#[test]
fn an_update_answering_tags_its_text_does_not_name_takes_no_rule() {
    let m = model(&with_reads_and_edits(
        note_recordings(recorded_tags),
        vec![tag("rust")],
    ));
    assert!(notes_route(&m).text_tags.is_some());
    assert_eq!(edit_route(&m).text_tags, None);
}
