//! Path filters (`Route::path_filter`): a read whose path value selects the records it lists
//! (every listed note carries the requested tag in its `tags[].name`), learned from small
//! synthetic recordings only when they tell the selection apart from a fixed collection.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

use wraith_model::{Model, Pagination, PathFilter, Route};
use wraith_recording::{Exchange, Headers, RecordedSession};

fn get(path: &str, answer: Value) -> Exchange {
    common::json_exchange("GET", path, 200, Headers::new(), None, &answer)
}

fn post(body: Value, answer: Value) -> Exchange {
    common::json_exchange(
        "POST",
        "/v1/notes",
        200,
        Headers::new(),
        Some(&body),
        &answer,
    )
}

fn note(id: &str, tag: &str) -> Value {
    json!({
        "id": id,
        "text": format!("about #{tag} ({id})"),
        "tags": [{"name": tag, "url": format!("https://notes.example/tags/{tag}")}],
    })
}

/// A session creating one note per id, each tagged `tag`, then reading the tag's page, which
/// lists `listed` (newest first) as recorded.
fn tag_session(name: &str, tag: &str, ids: &[&str], listed: Vec<Value>) -> RecordedSession {
    let mut exchanges: Vec<Exchange> = ids
        .iter()
        .map(|id| {
            post(
                json!({"text": format!("about #{tag} ({id})")}),
                note(id, tag),
            )
        })
        .collect();
    exchanges.push(get(&format!("/v1/tagged/{tag}"), Value::Array(listed)));
    common::session(name, 0, exchanges)
}

/// The tag's page as the recordings show it: the session's notes, newest (largest id) first.
fn own_notes(name: &str, tag: &str, ids: &[&str]) -> RecordedSession {
    let listed = ids.iter().rev().map(|id| note(id, tag)).collect();
    tag_session(name, tag, ids, listed)
}

fn model(sessions: &[RecordedSession]) -> Model {
    common::synth_model("notes", "https://api.notes.example", sessions)
}

fn tagged_route(m: &Model) -> &Route {
    m.routes
        .iter()
        .find(|r| r.method == "GET" && r.path.starts_with("/v1/tagged/"))
        .expect("GET /v1/tagged/:tag")
}

fn notes_type(m: &Model) -> String {
    m.routes
        .iter()
        .find(|r| r.method == "POST" && r.path == "/v1/notes")
        .and_then(|r| r.entity_type.clone())
        .expect("the notes create has an entity type")
}

#[test]
fn a_read_listing_the_records_that_carry_its_path_value_learns_a_path_filter() {
    let m = model(&[
        own_notes("blue", "blue", &["5101", "5102", "5109"]),
        own_notes("red", "red", &["5201", "5202"]),
    ]);
    let route = tagged_route(&m);
    assert_eq!(
        route.path_filter,
        Some(PathFilter {
            param: route.params[0].clone(),
            entity_type: notes_type(&m),
            items_pointer: String::new(),
            member: "/tags/*/name".into(),
            order_by: "id".into(),
            descending: true,
            pagination: Pagination::None,
        })
    );
}

#[test]
fn one_path_value_listing_each_sessions_own_records_learns_a_path_filter() {
    let m = model(&[
        own_notes("first", "blue", &["5101", "5102"]),
        own_notes("second", "blue", &["5301", "5302"]),
    ]);
    let filter = tagged_route(&m).path_filter.clone().expect("a path filter");
    assert_eq!(filter.member, "/tags/*/name");
    assert!(filter.descending);
}

#[test]
fn one_path_value_listing_the_same_records_is_no_path_filter() {
    // One value and one collection: nothing shows the value selects what is listed.
    let m = model(&[own_notes("only", "blue", &["5101", "5102"])]);
    assert_eq!(tagged_route(&m).path_filter, None);
}

#[test]
fn an_item_without_the_path_value_is_no_path_filter() {
    let mut listed: Vec<Value> = ["5102", "5101"].iter().map(|id| note(id, "red")).collect();
    listed.push(note("5100", "green"));
    let m = model(&[
        tag_session("red", "red", &["5100", "5101", "5102"], listed),
        own_notes("blue", "blue", &["5201", "5202"]),
    ]);
    assert_eq!(tagged_route(&m).path_filter, None);
}

#[test]
fn items_that_are_no_known_records_are_no_path_filter() {
    // The listed notes were never created, read or listed anywhere else: no record type
    // knows them, so nothing tells the engine what to list.
    let strangers = |name: &str, tag: &str, ids: &[&str]| {
        let listed = ids.iter().map(|id| note(id, tag)).collect();
        common::session(
            name,
            0,
            vec![get(&format!("/v1/tagged/{tag}"), Value::Array(listed))],
        )
    };
    let m = model(&[
        strangers("blue", "blue", &["5102", "5101"]),
        strangers("red", "red", &["5202", "5201"]),
    ]);
    assert_eq!(tagged_route(&m).path_filter, None);
}

#[test]
fn a_page_listed_oldest_first_is_learned_rising() {
    let rising = |name: &str, tag: &str, ids: &[&str]| {
        let listed = ids.iter().map(|id| note(id, tag)).collect();
        tag_session(name, tag, ids, listed)
    };
    let m = model(&[
        rising("blue", "blue", &["5101", "5102"]),
        rising("red", "red", &["5201", "5202", "5210"]),
    ]);
    let filter = tagged_route(&m).path_filter.clone().expect("a path filter");
    assert_eq!((filter.order_by.as_str(), filter.descending), ("id", false));
}
