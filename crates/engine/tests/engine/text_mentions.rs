//! Text mentions (`Route::text_mentions`): a created record lists the records its sent text
//! names as `@name`, as this session has seen them, instead of some recording's.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_model::*;

/// The shop with `POST /v1/notes`, whose recorded answer mentions `cus_rec`, and a learned
/// rule: `mentions` lists the customers the note's `text` names by `name`.
fn shop_with_notes() -> wraith_engine::Engine {
    let mut m = shop_model();
    let mut notes = R::new("POST", "/v1/notes")
        .op(StateOp::Create, "notes")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("text", echo_body("/text", JsonType::String)),
                (
                    "mentions",
                    c(json!([{"id": "cus_rec", "name": "Recorded"}])),
                ),
            ]),
        )
        .build();
    notes.text_mentions = Some(TextMentions {
        at: "/mentions".into(),
        text_field: "/text".into(),
        key: "name".into(),
        entity_type: "customers".into(),
        item_keys: vec!["id".into(), "name".into()],
    });
    m.routes.push(notes);
    m.entity_types
        .insert("notes".into(), entity_type(&[], &[], Vec::new()));
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    without_pii(engine(m, det_opts()))
}

fn mentions(e: &wraith_engine::Engine, s: Option<&str>, text: &str) -> Value {
    let posted = send(e, s, "POST", "/v1/notes", json!({"text": text}));
    assert_eq!(posted.status, 200);
    body(&posted)["mentions"].clone()
}

#[test]
fn a_created_record_mentions_the_records_its_text_names() {
    let e = shop_with_notes();
    let s = Some("notes");
    assert_eq!(
        mentions(&e, s, "@Alice and @Bob, hi!"),
        json!([{"id": "cus_1", "name": "Alice"}, {"id": "cus_2", "name": "Bob"}])
    );
    assert_eq!(mentions(&e, s, "no names here"), json!([]));
    assert_eq!(
        mentions(&e, s, "@Nobody there"),
        json!([]),
        "a name no record holds is left out"
    );
}

#[test]
fn a_mention_names_the_record_this_session_created_first() {
    let e = shop_with_notes();
    let s = Some("notes-own");
    let created = send(&e, s, "POST", "/v1/customers", json!({"name": "Zoe"}));
    let id = body(&created)["id"].clone();
    assert!(id.is_string(), "{id}");
    assert_eq!(
        mentions(&e, s, "hello @Zoe"),
        json!([{"id": id, "name": "Zoe"}])
    );
}
