//! Path filters (`Route::path_filter`): a read whose path value selects the records it lists
//! answers the session's own records carrying that value, ordered and paged as learned, where
//! no recorded answer to the request exists; without such a record, or with a recorded answer
//! to the very request, the route answers as before.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_model::*;

fn note(id: &str, tags: &[&str]) -> Value {
    let tags: Vec<Value> = tags.iter().map(|t| json!({"name": t})).collect();
    json!({"id": id, "tags": tags})
}

/// Notes created with the id and tags the client sends, deleted by id, and `GET
/// /v1/tagged/:tag`, whose template answers one recorded note of another tag and whose one
/// recorded request (`/v1/tagged/recorded`) listed a note of that tag; its path filter lists
/// notes by `tags[].name`, newest (largest id) first, paged by `limit` and `max_id`.
fn tagged_notes() -> wraith_engine::Engine {
    let create = R::new("POST", "/v1/notes")
        .op(StateOp::Create, "notes")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", echo_body("/id", JsonType::String)),
                ("tags", echo_body("/tags", JsonType::Array)),
            ]),
        )
        .build();
    let delete = R::new("DELETE", "/v1/notes/:id")
        .op(StateOp::Delete, "notes")
        .variant(200, member(true), c(json!({})))
        .variant(404, member(false), c(json!({"error": "not found"})))
        .build();
    let mut tagged = R::new("GET", "/v1/tagged/:tag")
        .op(StateOp::Read, "tagged")
        .variant(200, Guard::Always, c(json!([note("900", &["other"])])))
        .exact(
            "/v1/tagged/recorded",
            "",
            None,
            vec![moment("a/1", 200, json!([note("901", &["recorded"])]))],
        )
        .build();
    tagged.path_filter = Some(PathFilter {
        param: "tag".into(),
        entity_type: "notes".into(),
        items_pointer: String::new(),
        member: "/tags/*/name".into(),
        order_by: "id".into(),
        descending: true,
        pagination: Pagination::LinkHeader {
            next_param: "max_id".into(),
            prev_param: Some("min_id".into()),
            limit: Some("limit".into()),
            positional: false,
            numbered: false,
        },
    });
    engine(
        model(
            vec![create, delete, tagged],
            vec![
                ("notes", entity_type(&[], &[], vec![])),
                ("tagged", entity_type(&[], &[], vec![])),
            ],
        ),
        det_opts(),
    )
}

fn post_note(e: &wraith_engine::Engine, s: Option<&str>, id: &str, tags: &[&str]) {
    let posted = send(e, s, "POST", "/v1/notes", note(id, tags));
    assert_eq!(posted.status, 200, "{:?}", body(&posted));
}

fn listed_ids(e: &wraith_engine::Engine, s: Option<&str>, path: &str) -> Vec<String> {
    let r = get(e, s, path);
    assert_eq!(r.status, 200);
    body(&r)
        .as_array()
        .expect("a list")
        .iter()
        .map(|n| n["id"].as_str().expect("an id").to_string())
        .collect()
}

#[test]
fn a_read_its_path_value_selects_lists_the_sessions_records_carrying_it_newest_first() {
    let e = tagged_notes();
    let s = Some("tagged-blue");
    post_note(&e, s, "7", &["blue"]);
    post_note(&e, s, "8", &["red"]);
    post_note(&e, s, "10", &["green", "blue"]);
    let r = get(&e, s, "/v1/tagged/blue");
    assert_eq!(
        body(&r),
        json!([note("10", &["green", "blue"]), note("7", &["blue"])])
    );
    assert_eq!(listed_ids(&e, s, "/v1/tagged/red"), vec!["8"]);
}

#[test]
fn a_session_that_created_no_matching_record_gets_the_routes_answer() {
    let e = tagged_notes();
    let s = Some("tagged-none");
    assert_eq!(listed_ids(&e, s, "/v1/tagged/purple"), vec!["900"]);
    post_note(&e, s, "7", &["blue"]);
    assert_eq!(listed_ids(&e, s, "/v1/tagged/purple"), vec!["900"]);
}

#[test]
fn a_recorded_answer_to_the_same_request_is_replayed_instead_of_the_store() {
    let e = tagged_notes();
    let s = Some("tagged-recorded");
    post_note(&e, s, "7", &["recorded"]);
    assert_eq!(listed_ids(&e, s, "/v1/tagged/recorded"), vec!["901"]);
}

#[test]
fn the_requested_limit_and_max_id_page_the_sessions_records() {
    let e = tagged_notes();
    let s = Some("tagged-pages");
    for id in ["11", "12", "13", "14", "15"] {
        post_note(&e, s, id, &["blue"]);
    }
    assert_eq!(
        listed_ids(&e, s, "/v1/tagged/blue?limit=2"),
        vec!["15", "14"]
    );
    assert_eq!(
        listed_ids(&e, s, "/v1/tagged/blue?limit=2&max_id=14"),
        vec!["13", "12"]
    );
    assert_eq!(
        listed_ids(&e, s, "/v1/tagged/blue?limit=2&max_id=11"),
        Vec::<String>::new()
    );
}

#[test]
fn a_deleted_record_is_listed_no_more() {
    let e = tagged_notes();
    let s = Some("tagged-deleted");
    post_note(&e, s, "7", &["blue"]);
    post_note(&e, s, "9", &["blue"]);
    assert_eq!(
        send(&e, s, "DELETE", "/v1/notes/9", json!(null)).status,
        200
    );
    assert_eq!(listed_ids(&e, s, "/v1/tagged/blue"), vec!["7"]);
    assert_eq!(
        send(&e, s, "DELETE", "/v1/notes/7", json!(null)).status,
        200
    );
    assert_eq!(
        listed_ids(&e, s, "/v1/tagged/blue"),
        vec!["900"],
        "with no matching record left the route answers as before"
    );
}
