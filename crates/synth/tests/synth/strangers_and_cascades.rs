//! Two per-record rules learned from who created what in a session: a refusal answered only to
//! a principal reading another principal's record (`Guard::ForeignRecord`), and a delete that
//! takes the records created under its record's path with it (`Route::cascades`); and what
//! refutes or fails to support each.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::json;

use wraith_model::{Cascade, Guard, Model};
use wraith_recording::{Exchange, Headers, RecordedSession};

fn as_user(user: &str, mut ex: Exchange) -> Exchange {
    ex.request
        .headers
        .insert("authorization".into(), vec![format!("Bearer {user}")]);
    ex
}

fn create_widget(user: &str, id: &str) -> Exchange {
    as_user(
        user,
        common::json_exchange(
            "POST",
            "/v1/widgets",
            201,
            Headers::new(),
            Some(&json!({"name": id})),
            &json!({"id": id, "name": id}),
        ),
    )
}

fn read_widget(user: &str, id: &str, status: u16) -> Exchange {
    let body = match status {
        200 => json!({"id": id, "name": id}),
        403 => json!({"error": "forbidden"}),
        _ => json!({"error": "not_found"}),
    };
    as_user(
        user,
        common::json_exchange(
            "GET",
            &format!("/v1/widgets/{id}"),
            status,
            Headers::new(),
            None,
            &body,
        ),
    )
}

fn create_part(widget: &str, id: &str) -> Exchange {
    as_user(
        "alice",
        common::json_exchange(
            "POST",
            &format!("/v1/widgets/{widget}/parts"),
            201,
            Headers::new(),
            Some(&json!({"label": id})),
            &json!({"id": id, "widget_id": widget, "label": id}),
        ),
    )
}

fn read_part(id: &str, status: u16) -> Exchange {
    let body = if status == 200 {
        json!({"id": id, "label": id})
    } else {
        json!({"error": "not_found"})
    };
    as_user(
        "alice",
        common::json_exchange(
            "GET",
            &format!("/v1/parts/{id}"),
            status,
            Headers::new(),
            None,
            &body,
        ),
    )
}

/// `GET /v1/widgets/{widget}/parts` listing the parts keyed `ids`: with the create at the same
/// path, it makes the parts a collection under their widget.
fn list_parts(widget: &str, ids: &[&str]) -> Exchange {
    let items: Vec<_> = ids
        .iter()
        .map(|id| json!({"id": id, "widget_id": widget, "label": id}))
        .collect();
    as_user(
        "alice",
        common::json_exchange(
            "GET",
            &format!("/v1/widgets/{widget}/parts"),
            200,
            Headers::new(),
            None,
            &json!({"data": items}),
        ),
    )
}

fn delete(path: &str) -> Exchange {
    as_user(
        "alice",
        common::json_exchange("DELETE", path, 204, Headers::new(), None, &json!(null)),
    )
}

fn synth(sessions: Vec<Vec<Exchange>>) -> Model {
    let sessions: Vec<RecordedSession> = sessions
        .into_iter()
        .enumerate()
        .map(|(n, exchanges)| common::session(&format!("s{n}"), 0, exchanges))
        .collect();
    common::synth_model("widgets", "https://api.widgets.example", &sessions)
}

fn guard_of(m: &Model, status: u16) -> Vec<Guard> {
    common::route(m, "GET", "/v1/widgets/:param")
        .variants
        .iter()
        .filter(|v| v.status == status)
        .map(|v| v.guard.clone())
        .collect()
}

#[test]
fn a_refusal_answered_only_to_a_stranger_reading_anothers_record_is_guarded_foreign_record() {
    let m = synth(vec![
        vec![
            create_widget("alice", "w1"),
            read_widget("bob", "w1", 403),
            read_widget("alice", "w1", 200),
        ],
        vec![
            create_widget("alice", "w2"),
            read_widget("alice", "w2", 200),
            read_widget("bob", "w2", 403),
        ],
    ]);
    assert_eq!(
        guard_of(&m, 403),
        vec![Guard::ForeignRecord { foreign: true }]
    );
    let ok = guard_of(&m, 200);
    assert_eq!(ok.len(), 1);
    assert!(
        format!("{:?}", ok[0]).contains("ForeignRecord { foreign: false }"),
        "{ok:?}"
    );
}

#[test]
fn a_refusal_also_answered_to_the_records_creator_is_not_a_strangers() {
    let m = synth(vec![vec![
        create_widget("alice", "w1"),
        read_widget("bob", "w1", 403),
        read_widget("alice", "w1", 403),
        create_widget("alice", "w2"),
        read_widget("alice", "w2", 200),
    ]]);
    assert!(
        !format!("{m:?}").contains("ForeignRecord"),
        "{:?}",
        guard_of(&m, 403)
    );
}

#[test]
fn a_success_answered_to_a_stranger_refutes_the_strangers_refusal() {
    let m = synth(vec![vec![
        create_widget("alice", "w1"),
        read_widget("bob", "w1", 403),
        create_widget("alice", "w2"),
        read_widget("bob", "w2", 200),
    ]]);
    assert!(!format!("{m:?}").contains("ForeignRecord"));
}

#[test]
fn a_404_hiding_anothers_record_gets_a_strangers_variant_and_keeps_the_unknown_record_one() {
    let m = synth(vec![vec![
        create_widget("alice", "w1"),
        read_widget("bob", "w1", 404),
        read_widget("alice", "w1", 200),
        read_widget("alice", "w9", 404),
    ]]);
    let refusals = guard_of(&m, 404);
    assert!(
        refusals.contains(&Guard::ForeignRecord { foreign: true }),
        "{refusals:?}"
    );
    assert!(
        refusals.contains(&Guard::StateMember { member: false }),
        "{refusals:?}"
    );
}

fn cascades(m: &Model) -> Vec<Cascade> {
    common::route(m, "DELETE", "/v1/widgets/:param")
        .cascades
        .clone()
}

#[test]
fn a_child_read_404_after_its_parents_delete_learns_the_cascade() {
    let m = synth(vec![
        vec![
            create_widget("alice", "w1"),
            create_part("w1", "p1"),
            read_part("p1", 200),
            delete("/v1/widgets/w1"),
            read_part("p1", 404),
        ],
        vec![
            create_widget("alice", "w2"),
            create_part("w2", "p2"),
            list_parts("w2", &["p2"]),
            read_part("p2", 200),
            read_part("p9", 404),
        ],
    ]);
    assert_eq!(
        cascades(&m),
        vec![Cascade {
            entity_type: "parts".into(),
            parent_at: 0
        }]
    );
}

#[test]
fn a_child_read_back_after_its_parents_delete_refutes_the_cascade() {
    let m = synth(vec![
        vec![
            create_widget("alice", "w1"),
            create_part("w1", "p1"),
            delete("/v1/widgets/w1"),
            read_part("p1", 404),
        ],
        vec![
            create_widget("alice", "w2"),
            create_part("w2", "p2"),
            list_parts("w2", &["p2"]),
            delete("/v1/widgets/w2"),
            read_part("p2", 200),
        ],
    ]);
    assert!(cascades(&m).is_empty());
}

#[test]
fn a_child_deleted_itself_before_its_parent_says_nothing_of_a_cascade() {
    let m = synth(vec![
        vec![
            create_widget("alice", "w1"),
            create_part("w1", "p1"),
            read_part("p1", 200),
            delete("/v1/parts/p1"),
            delete("/v1/widgets/w1"),
            read_part("p1", 404),
        ],
        vec![
            create_widget("alice", "w2"),
            create_part("w2", "p2"),
            list_parts("w2", &["p2"]),
            read_part("p2", 200),
        ],
    ]);
    assert!(cascades(&m).is_empty());
}
