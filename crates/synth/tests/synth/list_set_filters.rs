//! Set filters (`ListShape::set_filters`): a repeated query parameter named unlike the item
//! field it filters (`types[]` keeps the items whose `type` is one of its values,
//! `exclude_types[]` drops them), learned from small synthetic recordings; and what is not
//! learned: a flag whose values coincide with a count, a parameter two fields fit. A
//! top-level collection's records count as what a filter of it left out.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

use wraith_model::{ListShape, Model, SetFilter};
use wraith_recording::{Exchange, Headers, RecordedSession};

/// `GET path?query` answering `answer`.
fn get(path: &str, query: &str, answer: Value) -> Exchange {
    let mut ex = common::json_exchange("GET", path, 200, Headers::new(), None, &answer);
    ex.request.query = query.to_string();
    ex
}

/// One recorded session per page: `GET path?query` answering its items.
fn pages(path: &str, pages: Vec<(&str, Value)>) -> Vec<RecordedSession> {
    pages
        .into_iter()
        .enumerate()
        .map(|(n, (query, answer))| {
            common::session(&format!("s{n}"), 0, vec![get(path, query, answer)])
        })
        .collect()
}

fn note(id: &str, kind: &str) -> Value {
    json!({"id": id, "type": kind, "created_at": "2026-10-14T19:05:28.486Z"})
}

fn model(sessions: &[RecordedSession]) -> Model {
    common::synth_model("notes", "https://api.notes.example", sessions)
}

fn shape<'m>(m: &'m Model, path: &str) -> &'m ListShape {
    common::route(m, "GET", path)
        .list
        .as_ref()
        .expect("a list route")
}

fn keep(param: &str, field: &str) -> SetFilter {
    SetFilter {
        param: param.into(),
        field: field.into(),
        exclude: false,
    }
}

fn drop_(param: &str, field: &str) -> SetFilter {
    SetFilter {
        param: param.into(),
        field: field.into(),
        exclude: true,
    }
}

/// Sessions listing notifications unfiltered, by kinds kept and by kinds left out.
fn notification_sessions() -> Vec<RecordedSession> {
    let all = json!([
        note("1", "mention"),
        note("2", "follow"),
        note("3", "favourite")
    ]);
    let others = json!([note("2", "follow"), note("3", "favourite")]);
    pages(
        "/v1/notifications",
        vec![
            ("", all),
            ("types%5B%5D=mention", json!([note("1", "mention")])),
            ("types%5B%5D=follow&types%5B%5D=favourite", others.clone()),
            ("exclude_types%5B%5D=mention", others),
        ],
    )
}

#[test]
fn a_repeated_parameter_keeping_the_items_of_its_values_is_learned_as_a_set_filter() {
    let m = model(&notification_sessions());
    let s = shape(&m, "/v1/notifications");
    assert!(
        s.set_filters.contains(&keep("types[]", "type")),
        "{:?}",
        s.set_filters
    );
}

#[test]
fn a_parameter_leaving_out_the_items_of_its_values_is_learned_as_an_excluding_set_filter() {
    let m = model(&notification_sessions());
    let s = shape(&m, "/v1/notifications");
    assert!(
        s.set_filters.contains(&drop_("exclude_types[]", "type")),
        "{:?}",
        s.set_filters
    );
    assert_eq!(s.set_filters.len(), 2, "{:?}", s.set_filters);
}

#[test]
fn a_parameter_whose_answers_left_nothing_out_is_no_set_filter() {
    // Every recorded notification is a mention: `types[]=mention` kept all there was.
    let sessions = pages(
        "/v1/notifications",
        vec![
            ("", json!([note("1", "mention")])),
            ("types%5B%5D=mention", json!([note("1", "mention")])),
        ],
    );
    let m = model(&sessions);
    assert_eq!(shape(&m, "/v1/notifications").set_filters, Vec::new());
}

#[test]
fn a_flag_whose_values_coincide_with_a_count_is_no_set_filter() {
    // `following=1` answered the one account with one follower, `following=0` the others with
    // none: numbers are compared only at the key, so the count is not taken for a filter.
    let acct = |id: &str, followers: u64| json!({"id": id, "acct": format!("a{id}"), "followers_count": followers});
    let sessions = pages(
        "/v1/accounts/search",
        vec![
            ("q=a&following=0", json!([acct("11", 0), acct("12", 0)])),
            ("q=a&following=1", json!([acct("11", 1)])),
        ],
    );
    let m = model(&sessions);
    assert_eq!(shape(&m, "/v1/accounts/search").set_filters, Vec::new());
}

#[test]
fn a_parameter_two_fields_fit_is_no_set_filter() {
    // `kinds[]` keeps items whose `type` and whose `category` both equal its value: which one
    // it filters, the recordings cannot say.
    let item = |id: &str, kind: &str| json!({"id": id, "type": kind, "category": kind});
    let sessions = pages(
        "/v1/items",
        vec![
            ("", json!([item("1", "red"), item("2", "blue")])),
            ("kinds%5B%5D=red", json!([item("1", "red")])),
        ],
    );
    let m = model(&sessions);
    assert_eq!(shape(&m, "/v1/items").set_filters, Vec::new());
}

#[test]
fn a_multi_get_recorded_once_filters_the_collection_its_records_make() {
    // `GET /v1/accounts?id[]=…` was recorded once, naming both accounts its answer listed; the
    // accounts the sessions created are the collection it left the third out of.
    let acct = |id: &str| json!({"id": id, "acct": format!("user{id}")});
    let create = |id: &str| {
        common::ok_json(
            "POST",
            "/v1/accounts",
            Some(&json!({"acct": format!("user{id}")})),
            &acct(id),
        )
    };
    let sessions = vec![
        common::session("s0", 0, vec![create("101"), create("102"), create("103")]),
        common::session(
            "s1",
            0,
            vec![get(
                "/v1/accounts",
                "id%5B%5D=101&id%5B%5D=102",
                json!([acct("101"), acct("102")]),
            )],
        ),
    ];
    let m = model(&sessions);
    assert_eq!(
        shape(&m, "/v1/accounts").set_filters,
        vec![keep("id[]", "id")]
    );
}
