//! Read prefixes (`EntityType::read_prefixes`): a field a create answers whole and every later
//! read, update answer and list item of the same record shows as its first characters, learned
//! from small synthetic recordings only when every later view agrees on one length.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;

use serde_json::{Value, json};

use wraith_model::Model;
use wraith_recording::{Exchange, Headers, RecordedSession};

fn exchange(method: &str, path: &str, body: Option<Value>, answer: Value) -> Exchange {
    common::json_exchange(method, path, 200, Headers::new(), body.as_ref(), &answer)
}

fn key(id: u64, secret: &str, label: &str) -> Value {
    json!({"id": id, "label": label, "secret": secret, "scopes": "*"})
}

/// A session creating key `id` (answered with `secret` whole), then reading it, updating its
/// label and listing the keys, each later view showing `shown` in place of the secret.
fn key_session(name: &str, id: u64, secret: &str, shown: &str) -> RecordedSession {
    let path = format!("/v1/keys/{id}");
    common::session(
        name,
        0,
        vec![
            exchange(
                "POST",
                "/v1/keys",
                Some(json!({"label": "ci"})),
                key(id, secret, "ci"),
            ),
            exchange("GET", &path, None, key(id, shown, "ci")),
            exchange(
                "PUT",
                &path,
                Some(json!({"label": "deploy"})),
                key(id, shown, "deploy"),
            ),
            exchange(
                "GET",
                "/v1/keys",
                None,
                json!({"data": [key(id, shown, "deploy")], "page": 1}),
            ),
        ],
    )
}

fn model(sessions: &[RecordedSession]) -> Model {
    common::synth_model("keys", "https://api.keys.example", sessions)
}

fn prefixes(m: &Model) -> BTreeMap<String, u64> {
    let ty = m
        .routes
        .iter()
        .find(|r| r.method == "POST" && r.path == "/v1/keys")
        .and_then(|r| r.entity_type.clone())
        .expect("the keys create has an entity type");
    m.entity_types[&ty].read_prefixes.clone()
}

const SECRET_A: &str = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6";
const SECRET_B: &str = "f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5";

#[test]
fn a_secret_later_views_show_as_a_fixed_prefix_is_learned_with_its_length() {
    let m = model(&[
        key_session("one", 101, SECRET_A, &SECRET_A[..16]),
        key_session("two", 102, SECRET_B, &SECRET_B[..16]),
    ]);
    assert_eq!(prefixes(&m), BTreeMap::from([("secret".to_string(), 16)]));
}

#[test]
fn a_secret_later_views_answer_whole_learns_no_prefix() {
    let m = model(&[
        key_session("one", 101, SECRET_A, SECRET_A),
        key_session("two", 102, SECRET_B, SECRET_B),
    ]);
    assert!(prefixes(&m).is_empty());
}

#[test]
fn prefixes_of_different_lengths_learn_nothing() {
    let m = model(&[
        key_session("one", 101, SECRET_A, &SECRET_A[..16]),
        key_session("two", 102, SECRET_B, &SECRET_B[..12]),
    ]);
    assert!(prefixes(&m).is_empty());
}

#[test]
fn one_record_showing_a_prefix_is_not_enough() {
    let m = model(&[key_session("one", 101, SECRET_A, &SECRET_A[..16])]);
    assert!(prefixes(&m).is_empty());
}

#[test]
fn a_field_an_update_sent_is_not_taken_for_a_prefix() {
    // The update sends `label` "c": later views show "c", a prefix of the created "ci", but
    // it is the request's value, not a cut of the created one.
    let session = |name: &str, id: u64| {
        let path = format!("/v1/keys/{id}");
        common::session(
            name,
            0,
            vec![
                exchange(
                    "POST",
                    "/v1/keys",
                    Some(json!({"label": "ci"})),
                    key(id, SECRET_A, "ci"),
                ),
                exchange(
                    "PUT",
                    &path,
                    Some(json!({"label": "c"})),
                    key(id, SECRET_A, "c"),
                ),
                exchange("GET", &path, None, key(id, SECRET_A, "c")),
            ],
        )
    };
    let m = model(&[session("one", 101), session("two", 102)]);
    assert!(prefixes(&m).is_empty());
}
