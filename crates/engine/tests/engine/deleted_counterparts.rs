//! A list page recorded by another run than the one a session's create was answered from
//! shows the session's record in place of that run's own record of the same create; once the
//! session deleted its record, that run's record stands for a deleted record and is not listed.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_engine::Engine;
use wraith_model::*;

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|i| i["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// `POST /v1/lists` recorded identically by runs a (minting 1) and b (minting 2); run b then
/// listed its record. `DELETE /v1/lists/:id` deletes.
fn lists() -> Engine {
    let post = lists_create(&[("a/0", "1"), ("b/0", "2")]);
    let delete = R::new("DELETE", "/v1/lists/:id")
        .op(StateOp::Delete, "lists")
        .variant(200, Guard::Always, c(json!({})))
        .build();
    let list = R::new("GET", "/v1/lists")
        .op(StateOp::List, "lists")
        .list(bare_array_list())
        .variant(200, Guard::Always, c(json!([])))
        .exact(
            "/v1/lists",
            "",
            None,
            vec![moment("b/1", 200, json!([{"id": "2", "title": "t"}]))],
        )
        .build();
    engine(
        model(
            vec![post, delete, list],
            vec![("lists", entity_type(&[], &[], vec![]))],
        ),
        det_opts(),
    )
}

#[test]
fn another_runs_record_of_a_create_the_session_deleted_is_not_listed() {
    let e = lists();
    let created = send(&e, Some("s"), "POST", "/v1/lists", json!({"title": "t"}));
    let id = body(&created)["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        ids(&body(&get(&e, Some("s"), "/v1/lists"))),
        vec![id.clone()]
    );
    let deleted = send(
        &e,
        Some("s"),
        "DELETE",
        &format!("/v1/lists/{id}"),
        json!(null),
    );
    assert_eq!(deleted.status, 200);
    assert_eq!(
        ids(&body(&get(&e, Some("s"), "/v1/lists"))),
        Vec::<String>::new()
    );
}
