//! Null-or-embedded-record positions, through `synthesize`: a create's answer holds `null`
//! where its request named no other record, and that record, embedded, where it did.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::{Value, json};
use wraith_model::{BodyTemplate, EmbeddedRecord, Model, Node};
use wraith_recording::RecordedSession;

/// Session `i`: post note A, read it, post note B naming A in `quoted_id`; B's answer holds
/// `embed(A's record, the key the answer names)` at `quote`.
fn session(i: u64, embed: &dyn Fn(&Value, &str) -> Value) -> RecordedSession {
    let a = format!("11744081739568{i}101");
    let b = format!("11744081740068{i}153");
    let note = |id: &str, text: &str, quote: Value| json!({"id": id, "text": text, "quote": quote});
    let a_text = format!("first {i}");
    let a_rec = note(&a, &a_text, Value::Null);
    common::session(
        &format!("s{i}"),
        1_700_000_000_000_000 + i * 1_000,
        vec![
            ok_json("POST", "/v1/notes", Some(&json!({"text": a_text})), &a_rec),
            ok_json("GET", &format!("/v1/notes/{a}"), None, &a_rec),
            ok_json(
                "POST",
                "/v1/notes",
                Some(&json!({"text": format!("second {i}"), "quoted_id": a})),
                &note(&b, &format!("second {i}"), embed(&a_rec, &a)),
            ),
        ],
    )
}

fn synth(sessions: &[RecordedSession]) -> Model {
    common::synth_model("t", "https://api.example", sessions)
}

/// The `quote` field's embedding in the create's success template.
fn quote_embedding(model: &Model) -> Option<EmbeddedRecord> {
    let route = model
        .routes
        .iter()
        .find(|r| r.method == "POST" && r.path == "/v1/notes")
        .expect("create route");
    let variant = route.variants.iter().find(|v| v.status == 200).unwrap();
    let BodyTemplate::Json {
        root: Node::Object { fields },
    } = &variant.body
    else {
        panic!("object template: {:?}", variant.body);
    };
    let quote = fields
        .iter()
        .find(|f| f.key == "quote")
        .expect("quote field");
    let Node::Hole(hole) = &quote.value else {
        panic!("quote is a hole: {:?}", quote.value);
    };
    let w = hole.when_absent.as_deref().expect("null without the field");
    assert_eq!(w.value, Value::Null);
    w.embeds.as_deref().cloned()
}

#[test]
fn a_position_null_without_the_field_and_the_named_record_with_it_embeds_that_record() {
    let sessions: Vec<_> = (0..3).map(|i| session(i, &|rec, _| rec.clone())).collect();
    let model = synth(&sessions);
    let e = quote_embedding(&model).expect("an embedded record");
    let ty = model.routes.iter().find(|r| r.path == "/v1/notes").unwrap();
    assert_eq!(Some(&e.entity_type), ty.entity_type.as_ref());
    assert_eq!(e.at, "");
}

#[test]
fn a_record_inside_a_wrapper_object_is_embedded_where_the_answers_held_it() {
    let wrap = |rec: &Value, _: &str| json!({"state": "accepted", "quoted": rec});
    let sessions: Vec<_> = (0..3).map(|i| session(i, &wrap)).collect();
    let e = quote_embedding(&synth(&sessions)).expect("an embedded record");
    assert_eq!(e.at, "/quoted");
}

#[test]
fn an_embedded_record_other_than_the_named_one_keeps_the_recorded_hole() {
    // One answer embeds a record the request did not name: the rule does not hold.
    let sessions: Vec<_> = (0..3)
        .map(|i| {
            session(i, &|rec, _| {
                let mut r = rec.clone();
                if i == 1 {
                    r["id"] = json!("117440817395689101");
                }
                r
            })
        })
        .collect();
    assert_eq!(quote_embedding(&synth(&sessions)), None);
}

#[test]
fn an_embedded_key_no_entity_type_knows_is_not_an_embedded_record() {
    // The request names a value no recorded record has as its key: not a reference.
    let sessions: Vec<_> = (0..3)
        .map(|i| {
            let rec_key = format!("99{i}");
            let mut s = session(i, &|_, _| json!({"id": rec_key.clone(), "text": "x"}));
            // The request names `99i`, never created or read.
            let last = s.exchanges.len() - 1;
            let body = json!({"text": format!("second {i}"), "quoted_id": rec_key});
            s.exchanges[last].request.body = body.to_string().into_bytes().into();
            s
        })
        .collect();
    assert_eq!(quote_embedding(&synth(&sessions)), None);
}
