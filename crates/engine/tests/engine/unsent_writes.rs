//! A recorded page that shows writes the session never sent: a session replaying a run's
//! create and read, then listing, gets that run's page recorded after the run deleted the
//! record, a delete this session did not send. The page is merged with the session's state,
//! so the record the session still holds is listed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::*;

fn item(id: &str) -> Value {
    json!({"id": id, "label": "testing"})
}

/// Run `a`: create `it_a1`, read it, delete it, then list (empty). Run `b`: create `it_b2`,
/// read it, list it, delete it. Both creates send the same body.
fn model() -> wraith_model::Model {
    let create = |n, id: &str| {
        json_exchange(
            n,
            "POST",
            "/v1/items",
            Some(json!({"label": "testing"})),
            item(id),
        )
    };
    let read = |n, id: &str| json_exchange(n, "GET", &format!("/v1/items/{id}"), None, item(id));
    let delete =
        |n, id: &str| json_exchange(n, "DELETE", &format!("/v1/items/{id}"), None, json!({}));
    let list =
        |n, items: Vec<Value>| json_exchange(n, "GET", "/v1/items", None, json!({ "data": items }));
    let a = recorded_session(
        "run-a",
        vec![
            create(0, "it_a1"),
            read(1, "it_a1"),
            delete(2, "it_a1"),
            list(3, vec![]),
        ],
    );
    let b = recorded_session(
        "run-b",
        vec![
            create(0, "it_b2"),
            read(1, "it_b2"),
            list(2, vec![item("it_b2")]),
            delete(3, "it_b2"),
        ],
    );
    synthesize(&[a, b], "items")
}

/// A session `agent` that creates an item and reads it back: the create replays run `a`, and
/// the read of its record ties the session to that run, whose page was recorded after its
/// delete.
fn created_and_read() -> wraith_engine::Engine {
    let e = engine(model(), det_opts());
    let s = Some("agent");
    let created = body(&send(
        &e,
        s,
        "POST",
        "/v1/items",
        json!({"label": "testing"}),
    ));
    assert_eq!(created["id"], json!("it_a1"), "{created}");
    assert_eq!(get(&e, s, "/v1/items/it_a1").status, 200);
    e
}

#[test]
fn a_page_recorded_after_a_delete_the_session_never_sent_lists_the_record_it_holds() {
    let e = created_and_read();
    let page = body(&get(&e, Some("agent"), "/v1/items"));
    let listed: Vec<&Value> = page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a page: {page}"))
        .iter()
        .map(|i| &i["id"])
        .collect();
    assert_eq!(listed, vec![&json!("it_a1")], "{page}");
}

#[test]
fn a_page_recorded_after_the_delete_the_session_sent_too_stays_empty() {
    let e = created_and_read();
    let s = Some("agent");
    assert_eq!(
        send(&e, s, "DELETE", "/v1/items/it_a1", json!(null)).status,
        200
    );
    let page = body(&get(&e, s, "/v1/items"));
    assert_eq!(page["data"], json!([]), "{page}");
}
