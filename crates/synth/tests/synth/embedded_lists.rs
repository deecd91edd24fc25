//! A create's answer array that lists the records its request named by an array of keys (a
//! post's `media_attachments` for its `media_ids[]`) is learned as an embedded list of that
//! entity type, whether the keys came as a JSON array or as form fields.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;
use serde_json::{Value, json};
use wraith_model::{EmbeddedList, Model};
use wraith_recording::Exchange;

fn media(id: &str) -> Value {
    json!({"id": id, "type": "image", "description": format!("picture {id}")})
}

fn upload(id: &str) -> Exchange {
    ok_json(
        "POST",
        "/v2/media",
        Some(&json!({"description": "x"})),
        &media(id),
    )
}

fn post(id: &str, media_ids: &[&str], listed: &[&str]) -> Exchange {
    let body = json!({"status": format!("post {id}"), "media_ids": media_ids});
    let attached: Vec<Value> = listed.iter().map(|m| media(m)).collect();
    ok_json(
        "POST",
        "/v1/statuses",
        Some(&body),
        &json!({"id": id, "content": format!("post {id}"), "media_attachments": attached}),
    )
}

/// `post` sent as a form (`media_ids[]=…`), answered the same.
fn form_post(id: &str, media_ids: &[&str]) -> Exchange {
    let e = post(id, media_ids, media_ids);
    let mut form = format!("status=post+{id}");
    for m in media_ids {
        form.push_str(&format!("&media_ids%5B%5D={m}"));
    }
    common::with_form_body(e, form)
}

fn lists(model: &Model) -> Vec<EmbeddedList> {
    common::route(model, "POST", "/v1/statuses")
        .embedded_lists
        .clone()
}

fn synth(sessions: Vec<Vec<Exchange>>) -> Model {
    common::synth_runs("social", "https://social.test", sessions)
}

#[test]
fn posts_answering_the_media_they_named_learn_an_embedded_media_list() {
    let model = synth(vec![
        vec![upload("11"), post("1", &["11"], &["11"])],
        vec![upload("12"), upload("13"), form_post("2", &["13", "12"])],
        vec![post("3", &[], &[])],
        vec![post("4", &[], &[])],
    ]);
    assert_eq!(
        lists(&model),
        vec![EmbeddedList {
            field: "/media_ids".into(),
            at: "/media_attachments".into(),
            entity_type: "media".into(),
        }]
    );
}

#[test]
fn a_post_listing_media_it_did_not_name_learns_no_embedded_list() {
    let model = synth(vec![
        vec![upload("11"), post("1", &["11"], &["11"])],
        vec![upload("12"), post("2", &["12"], &["12"])],
        vec![post("3", &[], &["11"])],
    ]);
    assert_eq!(lists(&model), Vec::new());
}

#[test]
fn one_post_with_media_is_too_little_to_learn_from() {
    let model = synth(vec![
        vec![upload("11"), post("1", &["11"], &["11"])],
        vec![post("3", &[], &[])],
    ]);
    assert_eq!(lists(&model), Vec::new());
}

#[test]
fn items_with_fields_their_records_lack_are_not_those_records() {
    // The listed items carry a `url` no media record has: they are something else that
    // happens to share the keys.
    let listed = |id: &str, keys: &[&str]| {
        let mut e = post(id, keys, keys);
        let answer: Value = serde_json::from_slice(&e.frames[0].body).unwrap();
        let mut answer = answer;
        for item in answer["media_attachments"].as_array_mut().unwrap() {
            item["url"] = json!("https://elsewhere.test/x");
        }
        e.frames[0].body = answer.to_string().into_bytes();
        e
    };
    let model = synth(vec![
        vec![upload("11"), listed("1", &["11"])],
        vec![upload("12"), listed("2", &["12"])],
        vec![post("3", &[], &[])],
    ]);
    assert_eq!(lists(&model), Vec::new());
}

fn edit(id: &str, media_ids: &[&str], listed: &[&str]) -> Exchange {
    let body = json!({"status": format!("post {id} edited"), "media_ids": media_ids});
    let attached: Vec<Value> = listed.iter().map(|m| media(m)).collect();
    ok_json(
        "PUT",
        &format!("/v1/statuses/{id}"),
        Some(&body),
        &json!({"id": id, "content": format!("post {id} edited"), "media_attachments": attached}),
    )
}

fn edit_lists(model: &Model) -> Vec<EmbeddedList> {
    common::route(model, "PUT", "/v1/statuses/:param")
        .embedded_lists
        .clone()
}

/// Posts with media in two sessions, the second edited by `second_edit`, and a post without
/// media (edited by `plain_edit` when given).
fn with_edits(second_edit: Exchange, plain_edit: Option<Exchange>) -> Model {
    let mut plain = vec![post("3", &[], &[])];
    plain.extend(plain_edit);
    synth(vec![
        vec![upload("11"), post("1", &["11"], &["11"])],
        vec![
            upload("12"),
            upload("13"),
            post("2", &["12"], &["12"]),
            second_edit,
        ],
        plain,
    ])
}

#[test]
fn an_edit_agreeing_once_takes_the_posts_embedded_list() {
    let model = with_edits(
        edit("2", &["13", "12"], &["13", "12"]),
        Some(edit("3", &[], &[])),
    );
    assert_eq!(edit_lists(&model), lists(&model));
    assert_eq!(lists(&model).len(), 1);
}

#[test]
fn an_edit_whose_answer_ignores_the_keys_it_sent_keeps_no_embedded_list() {
    let model = with_edits(edit("2", &["13"], &["12"]), None);
    assert_eq!(lists(&model).len(), 1);
    assert_eq!(edit_lists(&model), Vec::new());
}
