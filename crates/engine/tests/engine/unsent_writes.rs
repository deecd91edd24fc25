//! A recorded page that shows writes the session never sent: a session replaying a run's
//! create and read, then listing, gets that run's page recorded after the run deleted the
//! record, a delete this session did not send. The page is merged with the session's state,
//! so the record the session still holds is listed.
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

fn session(id: &str, exchanges: Vec<Exchange>) -> RecordedSession {
    RecordedSession {
        manifest: Manifest {
            complete: true,
            end_time_us: 0,
            exchange_count: exchanges.len() as u64,
            policy_hash: String::new(),
            proxy_mode: "reverse".into(),
            schema_version: 1,
            session_id: id.into(),
            start_time_us: 0,
            tags: Vec::new(),
            tool_version: "test".into(),
        },
        exchanges,
    }
}

fn item(id: &str) -> Value {
    json!({"id": id, "label": "testing"})
}

/// Run `a`: create `it_a1`, read it, delete it, then list (empty). Run `b`: create `it_b2`,
/// read it, list it, delete it. Both creates send the same body.
fn model() -> wraith_model::Model {
    let create = |n, id: &str| {
        exchange(
            n,
            "POST",
            "/v1/items",
            Some(json!({"label": "testing"})),
            item(id),
        )
    };
    let read = |n, id: &str| exchange(n, "GET", &format!("/v1/items/{id}"), None, item(id));
    let delete = |n, id: &str| exchange(n, "DELETE", &format!("/v1/items/{id}"), None, json!({}));
    let list =
        |n, items: Vec<Value>| exchange(n, "GET", "/v1/items", None, json!({ "data": items }));
    let a = session(
        "run-a",
        vec![
            create(0, "it_a1"),
            read(1, "it_a1"),
            delete(2, "it_a1"),
            list(3, vec![]),
        ],
    );
    let b = session(
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

#[test]
fn a_page_recorded_after_a_delete_the_session_never_sent_lists_the_record_it_holds() {
    let e = engine(model(), det_opts());
    let s = Some("agent");
    let created = body(&send(
        &e,
        s,
        "POST",
        "/v1/items",
        json!({"label": "testing"}),
    ));
    // The premise: the create replays run `a`, and the read of its record ties the session
    // to that run, whose page was recorded after its delete.
    assert_eq!(created["id"], json!("it_a1"), "{created}");
    let read = get(&e, s, "/v1/items/it_a1");
    assert_eq!(read.status, 200);
    let page = body(&get(&e, s, "/v1/items"));
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
    assert_eq!(
        send(&e, s, "DELETE", "/v1/items/it_a1", json!(null)).status,
        200
    );
    let page = body(&get(&e, s, "/v1/items"));
    assert_eq!(page["data"], json!([]), "{page}");
}
