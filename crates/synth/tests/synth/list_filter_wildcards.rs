//! Filter wildcards (`ListShape::filter_wildcards`): an equality filter (`state=open`) one of
//! whose values lists every item whatever its field holds (`state=all`), learned from small
//! synthetic recordings; a value answered with items of one other value contradicts the
//! filter as before.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

use wraith_model::{FilterWildcard, ListShape, Model};
use wraith_recording::{Exchange, Headers, RecordedSession};

/// `GET /v1/tickets?query` answering the tickets `(id, state)`.
fn list(query: &str, tickets: &[(u64, &str)]) -> Exchange {
    let items: Vec<Value> = tickets
        .iter()
        .map(|(id, state)| json!({"id": id, "title": format!("t{id}"), "state": state}))
        .collect();
    let mut ex = common::json_exchange(
        "GET",
        "/v1/tickets",
        200,
        Headers::new(),
        None,
        &Value::Array(items),
    );
    ex.request.query = query.to_string();
    ex
}

fn shape(sessions: Vec<Vec<Exchange>>) -> ListShape {
    let sessions: Vec<RecordedSession> = sessions
        .into_iter()
        .enumerate()
        .map(|(n, ex)| common::session(&format!("s{n}"), 0, ex))
        .collect();
    let m: Model = common::synth_model("tickets", "https://api.tickets.example", &sessions);
    common::route(&m, "GET", "/v1/tickets")
        .list
        .clone()
        .expect("a list route")
}

#[test]
fn a_filter_value_listing_items_of_every_value_is_learned_as_a_wildcard() {
    let s = shape(vec![
        vec![
            list("state=open", &[(1, "open"), (2, "open")]),
            list("state=closed", &[(3, "closed")]),
        ],
        vec![
            list("state=all", &[(4, "open"), (5, "closed")]),
            list("state=open", &[(4, "open")]),
        ],
    ]);
    assert_eq!(s.filters, vec!["state".to_string()]);
    assert_eq!(
        s.filter_wildcards,
        vec![FilterWildcard {
            param: "state".into(),
            value: "all".into()
        }]
    );
}

#[test]
fn a_value_answered_with_items_of_one_other_value_contradicts_the_filter() {
    let s = shape(vec![vec![
        list("state=open", &[(1, "open")]),
        list("state=done", &[(2, "closed")]),
    ]]);
    assert!(s.filters.is_empty(), "{:?}", s.filters);
    assert!(s.filter_wildcards.is_empty());
}
