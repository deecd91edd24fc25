//! Text tags (`Route::text_tags`): a created record lists one object per `#name` token of its
//! sent text, made by the learned rule, instead of the recorded example's tags; the session's
//! stored record keeps them, so later reads show them.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_model::*;

/// The shop with `POST /v1/notes`, whose recorded answer lists the tag `recorded`, a read and
/// an edit of a note, and a learned rule of the create and the edit: `tags` lists the
/// lowercased `#tokens` of the note's `text`.
fn shop_with_tagged_notes() -> wraith_engine::Engine {
    let mut m = shop_model();
    let note = |id: Node| {
        obj(vec![
            ("id", id),
            ("text", echo_body("/text", JsonType::String)),
            (
                "tags",
                c(json!([{"name": "recorded", "url": "https://shop.example/tags/recorded"}])),
            ),
        ])
    };
    let mut create = R::new("POST", "/v1/notes")
        .op(StateOp::Create, "notes")
        .variant(200, Guard::Always, note(gen_id(cus_id())))
        .build();
    create.text_tags = Some(TextTags {
        at: "/tags".into(),
        text_field: "/text".into(),
        key: "name".into(),
        lowercase: true,
        fields: vec![
            TagField {
                name: "name".into(),
                value: TagValue::Name,
            },
            TagField {
                name: "url".into(),
                value: TagValue::Affixed {
                    prefix: "https://shop.example/tags/".into(),
                    suffix: String::new(),
                },
            },
        ],
    });
    let mut update = R::new("PUT", "/v1/notes/:id")
        .op(StateOp::Update, "notes")
        .variant(200, member(true), note(echo_path("id")))
        .build();
    update.text_tags = create.text_tags.clone();
    let read = R::new("GET", "/v1/notes/:id")
        .op(StateOp::Read, "notes")
        .variant(200, member(true), note(echo_path("id")))
        .build();
    m.routes.push(create);
    m.routes.push(read);
    m.routes.push(update);
    m.entity_types
        .insert("notes".into(), entity_type(&[], &[], Vec::new()));
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    without_pii(engine(m, det_opts()))
}

fn tag(name: &str) -> Value {
    json!({"name": name, "url": format!("https://shop.example/tags/{name}")})
}

#[test]
fn a_created_record_lists_the_tags_its_text_names() {
    let e = shop_with_tagged_notes();
    let s = Some("tagged-notes");
    let posted = send(
        &e,
        s,
        "POST",
        "/v1/notes",
        json!({"text": "#Rust and #cats, #rust!"}),
    );
    assert_eq!(posted.status, 200);
    let created = body(&posted);
    assert_eq!(created["tags"], json!([tag("rust"), tag("cats")]));

    let id = created["id"].as_str().expect("an id").to_string();
    let read = get(&e, s, &format!("/v1/notes/{id}"));
    assert_eq!(read.status, 200);
    assert_eq!(
        body(&read)["tags"],
        json!([tag("rust"), tag("cats")]),
        "the stored record reads back with its tags"
    );
}

#[test]
fn a_created_record_whose_text_names_no_tag_lists_none() {
    let e = shop_with_tagged_notes();
    let s = Some("untagged-notes");
    let plain = send(&e, s, "POST", "/v1/notes", json!({"text": "no tags, a#b"}));
    assert_eq!(body(&plain)["tags"], json!([]));
    let textless = send(&e, s, "POST", "/v1/notes", json!({"other": 1}));
    assert_eq!(body(&textless)["tags"], json!([]));
}

#[test]
fn an_edit_sending_new_text_lists_its_tags_and_one_without_text_keeps_them() {
    let e = shop_with_tagged_notes();
    let s = Some("edited-notes");
    let posted = send(&e, s, "POST", "/v1/notes", json!({"text": "#old news"}));
    let id = body(&posted)["id"].as_str().expect("an id").to_string();
    let path = format!("/v1/notes/{id}");

    let edited = send(&e, s, "PUT", &path, json!({"text": "now #New"}));
    assert_eq!(edited.status, 200);
    assert_eq!(body(&edited)["tags"], json!([tag("new")]));
    assert_eq!(body(&get(&e, s, &path))["tags"], json!([tag("new")]));

    let untouched = send(&e, s, "PUT", &path, json!({"other": 1}));
    assert_eq!(body(&untouched)["tags"], json!([tag("new")]));
}
