//! Counterpart requests end to end: two recorded runs create the same list with the same
//! request, each minting its own id; only one run pins its list. A served session whose create
//! was answered from the other run pins *its* list, a request no run recorded under that id:
//! the twin answers the pinning run's recorded pin, renamed to the session's list, as a
//! recorded answer without a replay claim. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "counterpart-requests-test-key");

const ORIGIN: &str = "https://api.lists.test";

fn entry(method: &str, path: &str, body: Option<&Value>, answer: &Value) -> Value {
    har::entry(ORIGIN, method, path, body, answer)
}

fn import(t: &Twin, name: &str, entries: Vec<Value>) {
    har::import(t, &[KEY], name, entries);
}

/// Run `a` creates list 1001 and pins it; run `b` creates list 1002 and reads it. The twin
/// answers a session's first create from run `b` (pinned by the test below).
fn lists_twin() -> Twin {
    let t = Twin::init("lists", ORIGIN);
    let sent = json!({"title": "groceries"});
    let list = |id: &str| json!({"id": id, "title": "groceries", "pinned": false});
    import(
        &t,
        "a.har",
        vec![
            entry("POST", "/v1/lists", Some(&sent), &list("1001")),
            entry(
                "POST",
                "/v1/lists/1001/pin",
                Some(&json!({})),
                &json!({"id": "1001", "title": "groceries", "pinned": true, "pinned_by": "run-a"}),
            ),
        ],
    );
    import(
        &t,
        "b.har",
        vec![
            entry("POST", "/v1/lists", Some(&sent), &list("1002")),
            entry("GET", "/v1/lists/1002", None, &list("1002")),
        ],
    );
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn a_follow_up_only_another_run_recorded_is_answered_from_that_run_with_the_sessions_id() {
    let t = lists_twin();
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post("/v1/lists", Some("agent-1"), json!({"title": "groceries"}))
        .await;
    created.assert_status(200);
    let mine = created.json()["id"].as_str().unwrap().to_string();
    // Run b answered the create, so no run recorded this session's pin request.
    assert_eq!(mine, "1002");
    let pinned = server
        .post(&format!("/v1/lists/{mine}/pin"), Some("agent-1"), json!({}))
        .await;
    pinned.assert_status(200);
    assert_eq!(
        pinned.json(),
        json!({"id": mine, "title": "groceries", "pinned": true, "pinned_by": "run-a"})
    );
    assert_eq!(pinned.provenance(), Some("recorded"));
    // Not the exact recorded request: a recording stood in, so no exactness claim.
    assert_eq!(pinned.header("x-wraith-replay"), None);
}

#[tokio::test]
async fn a_request_naming_a_record_no_run_knows_is_not_answered_from_a_recording() {
    let t = lists_twin();
    let server = t.serve_env(&[], &[KEY]);
    let pinned = server
        .post("/v1/lists/777777/pin", Some("agent-2"), json!({}))
        .await;
    assert_ne!(pinned.provenance(), Some("recorded"));
}

/// A status post sent as `multipart/form-data` with boundary `b`: a text part naming the list
/// it files the status under, and an attached file.
fn multipart_status(b: &str, list_id: &str) -> String {
    format!(
        "--{b}\r\nContent-Disposition: form-data; name=\"status\"\r\n\r\nhello\r\n\
         --{b}\r\nContent-Disposition: form-data; name=\"list_id\"\r\n\r\n{list_id}\r\n\
         --{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cat.png\"\r\n\
         Content-Type: image/png\r\n\r\nPNG bytes\r\n--{b}--\r\n"
    )
}

/// Run `a` reads its flags and creates list 1001; run `b` creates list 1002 and posts a status
/// filed under it as a multipart body (the list id in a text part). A session that reads the
/// flags first is narrowed to run `a`, so its create is answered from `a`.
fn multipart_lists_twin() -> Twin {
    let t = Twin::init("lists", ORIGIN);
    let sent = json!({"title": "groceries"});
    let list = |id: &str| json!({"id": id, "title": "groceries", "pinned": false});
    let boundary = "recorded-boundary-1";
    let mut post = entry(
        "POST",
        "/v1/statuses",
        None,
        &json!({"id": "77001", "content": "hello", "list": {"id": "1002", "title": "groceries"}}),
    );
    let form = multipart_status(boundary, "1002");
    let ct = format!("multipart/form-data; boundary={boundary}");
    post["request"]["headers"] = json!([{"name": "Content-Type", "value": ct}]);
    post["request"]["postData"] = json!({"mimeType": ct, "text": form});
    post["request"]["bodySize"] = json!(form.len());
    import(
        &t,
        "a.har",
        vec![
            entry("GET", "/v1/flags?mode=a", None, &json!({"on": true})),
            entry("POST", "/v1/lists", Some(&sent), &list("1001")),
        ],
    );
    import(
        &t,
        "b.har",
        vec![entry("POST", "/v1/lists", Some(&sent), &list("1002")), post],
    );
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn a_multipart_follow_up_naming_the_sessions_record_in_a_text_part_is_answered_from_that_run()
{
    let t = multipart_lists_twin();
    let server = t.serve_env(&[], &[KEY]);
    server
        .get("/v1/flags?mode=a", Some("agent-1"))
        .await
        .assert_status(200);
    let created = server
        .post("/v1/lists", Some("agent-1"), json!({"title": "groceries"}))
        .await;
    created.assert_status(200);
    let mine = created.json()["id"].as_str().unwrap().to_string();
    assert_eq!(mine, "1001", "run a answers the create");
    // A client's fresh boundary; the session's list in the text part.
    let boundary = "client-boundary-9f";
    let r = server
        .client
        .post(format!("{}/v1/statuses", server.url))
        .header("X-Wraith-Session", "agent-1")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(multipart_status(boundary, &mine))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let provenance = r
        .headers()
        .get("x-wraith-provenance")
        .map(|v| v.to_str().unwrap().to_string());
    assert!(r.headers().get("x-wraith-replay").is_none());
    let answer: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(
        answer,
        json!({"id": "77001", "content": "hello", "list": {"id": mine, "title": "groceries"}})
    );
    assert_eq!(provenance.as_deref(), Some("recorded"));
}
