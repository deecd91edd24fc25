//! Text rendering (`Route::text_rendering`): a created record's field rendered from its sent
//! text by the learned rule, instead of the recorded example's text; the session's stored
//! record keeps it, so later reads show it, and an edit sending new text renders it again.

use crate::support;

use serde_json::json;
use support::*;
use wraith_model::*;

/// The shop with `POST /v1/notes`, whose recorded answer's `html` is another note's, a read
/// and an edit of a note, and a learned rendering of the create and the edit: `html` is the
/// `text` in a paragraph, `'` escaped, `#name` a link.
fn shop_with_rendered_notes() -> wraith_engine::Engine {
    let mut m = shop_model();
    let note = |id: Node| {
        obj(vec![
            ("id", id),
            ("text", echo_body("/text", JsonType::String)),
            ("html", c(json!("<p>a recorded note</p>"))),
        ])
    };
    let mut create = R::new("POST", "/v1/notes")
        .op(StateOp::Create, "notes")
        .variant(200, Guard::Always, note(gen_id(cus_id())))
        .build();
    create.text_rendering = Some(TextRendering {
        at: "/html".into(),
        text_field: "/text".into(),
        prefix: "<p>".into(),
        suffix: "</p>".into(),
        escapes: [("'".to_string(), "&#39;".to_string())]
            .into_iter()
            .collect(),
        tokens: vec![TokenRendering {
            sigil: "#".into(),
            parts: vec!["<a href=\"/tags/".into(), "\">#".into(), "</a>".into()],
        }],
    });
    let mut update = R::new("PUT", "/v1/notes/:id")
        .op(StateOp::Update, "notes")
        .variant(200, member(true), note(echo_path("id")))
        .build();
    update.text_rendering = create.text_rendering.clone();
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

#[test]
fn a_created_record_renders_its_sent_text() {
    let e = shop_with_rendered_notes();
    let s = Some("rendered-notes");
    let posted = send(&e, s, "POST", "/v1/notes", json!({"text": "it's #rust"}));
    assert_eq!(posted.status, 200);
    let created = body(&posted);
    assert_eq!(
        created["html"],
        json!("<p>it&#39;s <a href=\"/tags/rust\">#rust</a></p>")
    );
    let id = created["id"].as_str().expect("an id").to_string();
    let read = get(&e, s, &format!("/v1/notes/{id}"));
    assert_eq!(
        body(&read)["html"],
        created["html"],
        "the stored record reads back with its rendered text"
    );
}

#[test]
fn a_create_without_the_text_keeps_the_templates_value() {
    let e = shop_with_rendered_notes();
    let posted = send(
        &e,
        Some("textless"),
        "POST",
        "/v1/notes",
        json!({"other": 1}),
    );
    assert_eq!(body(&posted)["html"], json!("<p>a recorded note</p>"));
}

#[test]
fn an_edit_sending_new_text_renders_it_and_one_without_text_keeps_it() {
    let e = shop_with_rendered_notes();
    let s = Some("edited-rendered-notes");
    let posted = send(&e, s, "POST", "/v1/notes", json!({"text": "first"}));
    let id = body(&posted)["id"].as_str().expect("an id").to_string();
    let path = format!("/v1/notes/{id}");

    let edited = send(&e, s, "PUT", &path, json!({"text": "second #take"}));
    assert_eq!(
        body(&edited)["html"],
        json!("<p>second <a href=\"/tags/take\">#take</a></p>")
    );
    let untouched = send(&e, s, "PUT", &path, json!({"other": 2}));
    assert_eq!(body(&untouched)["html"], body(&edited)["html"]);
    assert_eq!(body(&get(&e, s, &path))["html"], body(&edited)["html"]);
}
