//! Values a list hides unless its filter is sent (`ListShape::hidden_values`): of a list of
//! the session's own records with a `status` filter, the `archived` a record's action moved
//! it to, which no unfiltered answer listed while answers without a query left two such
//! records out; and what is not evidence.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

use wraith_model::{HiddenValue, ListShape, Model};
use wraith_recording::{Exchange, Headers, RecordedSession};

fn note(id: &str, status: &str) -> Value {
    json!({"id": id, "text": format!("note {id}"), "status": status})
}

fn create(id: &str) -> Exchange {
    common::json_exchange(
        "POST",
        "/v1/notes",
        201,
        Headers::new(),
        Some(&json!({"text": format!("note {id}")})),
        &note(id, "active"),
    )
}

fn archive(id: &str) -> Exchange {
    common::json_exchange(
        "POST",
        &format!("/v1/notes/{id}/archive"),
        200,
        Headers::new(),
        None,
        &note(id, "archived"),
    )
}

/// `GET /v1/notes?query` answering `{"data": [the notes (key, status)]}`.
fn list(query: &str, notes: &[(&str, &str)]) -> Exchange {
    let items: Vec<Value> = notes.iter().map(|(k, s)| note(k, s)).collect();
    let mut ex = common::json_exchange(
        "GET",
        "/v1/notes",
        200,
        Headers::new(),
        None,
        &json!({"data": items}),
    );
    ex.request.query = query.to_string();
    ex
}

fn shape(sessions: Vec<Vec<Exchange>>) -> ListShape {
    let sessions: Vec<RecordedSession> = sessions
        .into_iter()
        .enumerate()
        .map(|(n, exchanges)| common::session(&format!("s{n}"), 0, exchanges))
        .collect();
    let m: Model = common::synth_model("notes", "https://api.notes.example", &sessions);
    let shape = common::route(&m, "GET", "/v1/notes").list.clone().unwrap();
    assert!(shape.own_records_only, "{shape:?}");
    assert!(shape.filters.contains(&"status".to_string()), "{shape:?}");
    shape
}

/// Session `n`: two notes, the first archived, then the plain list (the second only) and the
/// archived list (the first only).
fn archived_session(n: u32) -> Vec<Exchange> {
    let (a, b) = (format!("n{n}a"), format!("n{n}b"));
    vec![
        create(&a),
        create(&b),
        archive(&a),
        list("", &[(&b, "active")]),
        list("status=archived", &[(&a, "archived")]),
    ]
}

#[test]
fn a_value_records_were_moved_to_and_left_out_for_is_hidden() {
    let s = shape(vec![archived_session(1), archived_session(2)]);
    assert_eq!(
        s.hidden_values,
        [HiddenValue {
            param: "status".into(),
            value: "archived".into()
        }]
    );
}

#[test]
fn one_record_left_out_is_not_enough() {
    let mut other = archived_session(2);
    other.retain(|e| !e.request.path.ends_with("/archive"));
    other[2] = list("", &[("n2a", "active"), ("n2b", "active")]);
    other.pop();
    let s = shape(vec![archived_session(1), other]);
    assert!(s.hidden_values.is_empty(), "{:?}", s.hidden_values);
}

#[test]
fn an_unfiltered_answer_listing_the_value_shows_it() {
    let mut sessions = vec![archived_session(1), archived_session(2)];
    // A third session's plain list shows its archived note.
    sessions.push(vec![
        create("n3a"),
        archive("n3a"),
        list("", &[("n3a", "archived")]),
        list("status=archived", &[("n3a", "archived")]),
    ]);
    let s = shape(sessions);
    assert!(s.hidden_values.is_empty(), "{:?}", s.hidden_values);
}
