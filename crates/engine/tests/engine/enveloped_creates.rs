//! Creates whose answer wraps the new record in a one-key envelope (`{"board": {...}}`):
//! synth takes them for creates of the inner record's type, and the engine stores that record,
//! so the session's later reads and lists show it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_recording::RecordedSession;

/// One recorded run: create a board (answered in an envelope), read it (the same envelope,
/// with its members sideloaded beside it), list the user's boards.
fn run(session: &str, id: &str, title: &str) -> RecordedSession {
    let board = json!({"id": id, "title": title, "owner_id": "7"});
    let exchanges = vec![
        json_exchange(
            0,
            "POST",
            "/v1/boards",
            Some(json!({"title": title})),
            json!({"board": board}),
        ),
        json_exchange(
            1,
            "GET",
            &format!("/v1/boards/{id}"),
            None,
            json!({"board": board, "members": [{"id": "7"}]}),
        ),
        json_exchange(
            2,
            "GET",
            "/v1/users/7/boards",
            None,
            json!({"boards": [board]}),
        ),
    ];
    recorded_session(session, exchanges)
}

#[test]
fn a_record_created_through_an_enveloped_answer_reads_back_and_lists() {
    let sessions = vec![
        run("run-a", "1001", "first"),
        run("run-b", "1002", "second"),
    ];
    let model = synthesize(&sessions, "boards");
    let create = model
        .routes
        .iter()
        .find(|r| r.method == "POST" && r.path == "/v1/boards")
        .expect("create route");
    assert_eq!(create.state_op, Some(wraith_model::StateOp::Create));
    let e = engine(model, det_opts());

    let created = send(
        &e,
        Some("s"),
        "POST",
        "/v1/boards",
        json!({"title": "mine"}),
    );
    assert_eq!(created.status, 200);
    let answer = body(&created);
    let id = answer["board"]["id"]
        .as_str()
        .expect("the answer keeps its envelope")
        .to_string();
    assert!(
        id != "1001" && id != "1002",
        "a fresh record, not a recorded one: {answer}"
    );

    let read = get(&e, Some("s"), &format!("/v1/boards/{id}"));
    assert_eq!(read.status, 200);
    let read = body(&read);
    assert_eq!(
        read["board"]["id"],
        json!(id),
        "read in the same envelope: {read}"
    );
    assert_eq!(read["board"]["title"], answer["board"]["title"]);

    let list = body(&get(&e, Some("s"), "/v1/users/7/boards"));
    let ids: Vec<&Value> = list["boards"]
        .as_array()
        .expect("a list of boards")
        .iter()
        .map(|b| &b["id"])
        .collect();
    assert!(
        ids.contains(&&json!(id)),
        "the session's board lists: {list}"
    );
}
