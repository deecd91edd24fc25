//! A field a record's delete answers with, holding what the record's create (or last edit)
//! sent though the create never answered it (a status's source `text`), is learned as a
//! carried field; a field the create answers, a sample that disagrees, or one value seen
//! twice learns nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;
use serde_json::json;
use wraith_model::{CarriedField, CarriedRecord, Model};
use wraith_recording::Exchange;

/// One session: a post created with `text` (answered with `text` too when `create_echoes`),
/// optionally edited to `edit`, then deleted, the delete answering `deleted_text`.
fn post_session(
    i: usize,
    text: &str,
    edit: Option<&str>,
    deleted_text: &str,
    create_echoes: bool,
) -> Vec<Exchange> {
    let id = format!("10{i}");
    let mut created = json!({"id": id, "content": format!("<p>{text}</p>")});
    if create_echoes {
        created["text"] = json!(text);
    }
    let mut out = vec![ok_json(
        "POST",
        "/v1/posts",
        Some(&json!({"status": text, "visibility": "public"})),
        &created,
    )];
    let mut content = format!("<p>{text}</p>");
    if let Some(edit) = edit {
        content = format!("<p>{edit}</p>");
        out.push(ok_json(
            "PUT",
            &format!("/v1/posts/{id}"),
            Some(&json!({"status": edit})),
            &json!({"id": id, "content": content}),
        ));
    }
    out.push(ok_json(
        "GET",
        &format!("/v1/posts/{id}"),
        None,
        &json!({"id": id, "content": content}),
    ));
    out.push(ok_json(
        "DELETE",
        &format!("/v1/posts/{id}"),
        None,
        &json!({"id": id, "content": content, "text": deleted_text}),
    ));
    out
}

fn synth(sessions: Vec<Vec<Exchange>>) -> Model {
    common::synth_runs("posts", "https://api.example.com", sessions)
}

fn carried(model: &Model) -> Vec<CarriedField> {
    common::route(model, "DELETE", "/v1/posts/:param")
        .carried_fields
        .clone()
}

fn text_from_status() -> Vec<CarriedField> {
    vec![CarriedField {
        field: "text".into(),
        from: "/status".into(),
    }]
}

#[test]
fn delete_answering_what_the_create_sent_learns_a_carried_field() {
    let model = synth(vec![
        post_session(0, "first words", None, "first words", false),
        post_session(1, "second words", None, "second words", false),
        post_session(2, "third words", None, "third words", false),
    ]);
    assert_eq!(carried(&model), text_from_status());
    // The read never answered the field: nothing to carry there.
    assert!(
        common::route(&model, "GET", "/v1/posts/:param")
            .carried_fields
            .is_empty()
    );
}

#[test]
fn an_edit_in_between_is_the_write_the_delete_carries() {
    let model = synth(vec![
        post_session(0, "first words", Some("edited once"), "edited once", false),
        post_session(1, "second words", None, "second words", false),
        post_session(
            2,
            "third words",
            Some("edited twice"),
            "edited twice",
            false,
        ),
    ]);
    assert_eq!(carried(&model), text_from_status());
}

#[test]
fn a_field_the_create_answers_is_not_carried() {
    let model = synth(vec![
        post_session(0, "first words", None, "first words", true),
        post_session(1, "second words", None, "second words", true),
    ]);
    assert!(carried(&model).is_empty());
}

#[test]
fn a_disagreeing_or_repeated_value_learns_nothing() {
    let disagreeing = synth(vec![
        post_session(0, "first words", None, "first words", false),
        post_session(1, "second words", None, "second words", false),
        post_session(2, "third words", None, "something else", false),
    ]);
    assert!(carried(&disagreeing).is_empty());
    let repeated = synth(vec![
        post_session(0, "same words", None, "same words", false),
        post_session(1, "same words", None, "same words", false),
    ]);
    assert!(carried(&repeated).is_empty());
}

/// `session` with its post's source read (`GET /v1/posts/:id/source`) before the delete,
/// answered `text`.
fn with_source(mut session: Vec<Exchange>, i: usize, text: &str) -> Vec<Exchange> {
    let id = format!("10{i}");
    let at = session.len() - 1;
    session.insert(
        at,
        ok_json(
            "GET",
            &format!("/v1/posts/{id}/source"),
            None,
            &json!({"id": id, "text": text}),
        ),
    );
    session
}

fn source_route(model: &Model) -> &wraith_model::Route {
    common::route(model, "GET", "/v1/posts/:param/source")
}

#[test]
fn a_sub_resource_read_once_showing_what_the_record_carries_carries_it_too() {
    let model = synth(vec![
        with_source(
            post_session(0, "first words", Some("edited once"), "edited once", false),
            0,
            "edited once",
        ),
        post_session(1, "second words", None, "second words", false),
        post_session(2, "third words", None, "third words", false),
    ]);
    let source = source_route(&model);
    assert_eq!(source.carried_fields, text_from_status());
    assert_eq!(
        source.carried_record,
        Some(CarriedRecord {
            entity_type: "posts".into(),
            record_param: "param".into(),
        })
    );
}

#[test]
fn a_sub_resource_read_once_showing_a_field_no_route_carries_learns_nothing() {
    // The delete answers no `text`: nothing vouches for the one sample.
    let model = synth(vec![
        with_source(
            post_session(0, "first words", None, "", false),
            0,
            "first words",
        ),
        post_session(1, "second words", None, "", false),
    ]);
    let source = source_route(&model);
    assert!(source.carried_fields.is_empty());
    assert_eq!(source.carried_record, None);
}
