//! Lower bounds (`ListShape::lower_bounds`): a query parameter whose recorded answers listed
//! only items keyed above its value, where the route's pages show an item at or below it
//! (`since_id` on a timeline), learned from small synthetic recordings; and what is not
//! learned: a flag (`local=1`) no listed item lies at or below, a parameter one answer listed
//! an item at or below, and keys that are not integers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

use wraith_model::{ListShape, Model};
use wraith_recording::{Exchange, Headers, RecordedSession};

/// `GET /v1/timeline?query` answering the items keyed `keys`.
fn get(query: &str, keys: &[&str]) -> Exchange {
    let items: Vec<Value> = keys
        .iter()
        .map(|k| json!({"id": k, "text": format!("post {k}")}))
        .collect();
    let mut ex = common::json_exchange(
        "GET",
        "/v1/timeline",
        200,
        Headers::new(),
        None,
        &Value::Array(items),
    );
    ex.request.query = query.to_string();
    ex
}

/// One recorded session per page.
fn model(pages: Vec<(&str, &[&str])>) -> Model {
    let sessions: Vec<RecordedSession> = pages
        .into_iter()
        .enumerate()
        .map(|(n, (query, keys))| common::session(&format!("s{n}"), 0, vec![get(query, keys)]))
        .collect();
    common::synth_model("posts", "https://api.posts.example", &sessions)
}

fn shape(m: &Model) -> &ListShape {
    common::route(m, "GET", "/v1/timeline")
        .list
        .as_ref()
        .expect("a list route")
}

#[test]
fn a_parameter_whose_answers_list_only_newer_items_is_a_lower_bound() {
    let m = model(vec![
        ("", &["1007", "1005", "1003", "1001"]),
        ("since_id=1004", &["1007", "1005"]),
        ("local=1&since_id=1006", &["1007"]),
    ]);
    assert_eq!(shape(&m).lower_bounds, vec!["since_id".to_string()]);
}

#[test]
fn a_flag_below_every_listed_key_bounds_nothing() {
    // `local=1` lists only keys above 1, but no page lists an item at or below 1.
    let m = model(vec![
        ("", &["1007", "1005", "1003"]),
        ("local=1", &["1007", "1005"]),
    ]);
    assert_eq!(shape(&m).lower_bounds, Vec::<String>::new());
}

#[test]
fn an_answer_listing_an_item_at_or_below_the_value_bounds_nothing() {
    let m = model(vec![
        ("", &["1007", "1005", "1003", "1001"]),
        ("account=1004", &["1007", "1005"]),
        ("account=1002", &["1005", "1001"]),
    ]);
    assert_eq!(shape(&m).lower_bounds, Vec::<String>::new());
}

#[test]
fn keys_that_are_not_integers_bound_nothing() {
    let m = model(vec![
        ("", &["1007", "1005", "abc", "1001"]),
        ("since_id=1004", &["1007", "1005"]),
    ]);
    assert_eq!(shape(&m).lower_bounds, Vec::<String>::new());
}
