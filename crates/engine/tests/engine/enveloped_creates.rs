//! Creates whose answer wraps the new record in a one-key envelope (`{"board": {...}}`):
//! synth takes them for creates of the inner record's type, and the engine stores that record,
//! so the session's later reads and lists show it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_recording::{
    Content, Correlation, Exchange, Frame, Headers, Manifest, RecordedRequest, RecordedResponse,
    RecordedSession, Safety, Timing,
};

fn exchange(n: u64, method: &str, path: &str, body: Option<Value>, response: Value) -> Exchange {
    let mut resp_headers = Headers::new();
    resp_headers.insert("content-type".into(), vec!["application/json".into()]);
    let start = 1_700_000_000_000_000 + n * 1_000;
    Exchange {
        protocol: "http".into(),
        request: RecordedRequest {
            method: method.into(),
            path: path.into(),
            query: String::new(),
            headers: Headers::new(),
            body: body
                .as_ref()
                .map(|b| serde_json::to_vec(b).unwrap())
                .unwrap_or_default(),
            content_type: body.map(|_| "application/json".into()),
            origin: None,
        },
        response: RecordedResponse {
            status: 200,
            headers: resp_headers,
            content_type: Some("application/json".into()),
        },
        frames: vec![Frame {
            direction: "server".into(),
            timestamp_us: start,
            body: serde_json::to_vec(&response).unwrap(),
            frame_type: "data".into(),
        }],
        timing: Timing {
            request_start_us: start,
            first_byte_us: start,
            last_byte_us: start,
        },
        correlation: Correlation {
            exchange_index: n,
            tags: Vec::new(),
        },
        safety: Safety::default(),
        content: Content::default(),
        truncated: false,
    }
}

/// One recorded run: create a board (answered in an envelope), read it (the same envelope,
/// with its members sideloaded beside it), list the user's boards.
fn run(session: &str, id: &str, title: &str) -> RecordedSession {
    let board = json!({"id": id, "title": title, "owner_id": "7"});
    let exchanges = vec![
        exchange(
            0,
            "POST",
            "/v1/boards",
            Some(json!({"title": title})),
            json!({"board": board}),
        ),
        exchange(
            1,
            "GET",
            &format!("/v1/boards/{id}"),
            None,
            json!({"board": board, "members": [{"id": "7"}]}),
        ),
        exchange(
            2,
            "GET",
            "/v1/users/7/boards",
            None,
            json!({"boards": [board]}),
        ),
    ];
    RecordedSession {
        manifest: Manifest {
            complete: true,
            end_time_us: 0,
            exchange_count: exchanges.len() as u64,
            policy_hash: String::new(),
            proxy_mode: "reverse".into(),
            schema_version: 1,
            session_id: session.into(),
            start_time_us: 0,
            tags: Vec::new(),
            tool_version: "test".into(),
        },
        exchanges,
    }
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
