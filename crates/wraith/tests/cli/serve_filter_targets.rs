//! `wraith serve` answering an event feed polled with a filter document that names the record
//! the session just created (`X-Filter: {"action": "database_create", "entity.id": <id>}`, as
//! linodego's `WaitForEventFinished` polls): the replayed page's event names the session's
//! record (its id, its label, a url embedding its id), not the recorded run's, so a client
//! waiting for it finds it. Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Resp, Server, Twin, har};

const ORIGIN: &str = "https://api.dbs.test";

fn filter(id: &Value) -> String {
    filter_for("database_create", id)
}

fn filter_for(action: &str, id: &Value) -> String {
    json!({"+order_by": "created", "action": action, "entity.id": id}).to_string()
}

/// A recorded event of `action` on the record `id` of `kind`, read at `/v4/<path>/<id>`.
fn event_of(ev: u64, action: &str, kind: &str, path: &str, id: u64, label: &str) -> Value {
    json!({
        "id": ev,
        "action": action,
        "status": "notification",
        "entity": {"id": id, "label": label, "type": kind, "url": format!("/v4/{path}/{id}")},
    })
}

/// One recorded run: create the record `id` labelled `label` at `/v4/<path>`, read it, then
/// poll the event feed for its `action`.
fn run_of(path: &str, action: &str, kind: &str, id: u64, label: &str, ev: u64) -> Vec<Value> {
    let created = json!({"id": id, "label": label, "status": "provisioning"});
    let answer = event_of(ev, action, kind, path, id, label);
    let mut poll = har::entry(
        ORIGIN,
        "GET",
        "/v4/account/events?page=1",
        None,
        &json!({"data": [answer], "page": 1, "pages": 1, "results": 1}),
    );
    poll["request"]["queryString"] = json!([{"name": "page", "value": "1"}]);
    poll["request"]["headers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "X-Filter", "value": filter_for(action, &json!(id))}));
    let sent = json!({"label": label});
    vec![
        har::entry(
            ORIGIN,
            "POST",
            &format!("/v4/{path}"),
            Some(&sent),
            &created,
        ),
        har::entry(ORIGIN, "GET", &format!("/v4/{path}/{id}"), None, &created),
        poll,
    ]
}

fn run(id: u64, label: &str, ev: u64) -> Vec<Value> {
    run_of("databases", "database_create", "database", id, label, ev)
}

fn feed_twin() -> Twin {
    let t = Twin::init("dbs", ORIGIN);
    har::import(&t, &[], "first.har", run(227300, "go-db-first", 952748475));
    har::import(&t, &[], "second.har", run(16774, "go-db-second", 31679112));
    let instance = run_of(
        "instances",
        "linode_create",
        "linode",
        60303116,
        "go-ins",
        952700001,
    );
    har::import(&t, &[], "third.har", instance);
    har::synth(&t, &[]);
    t
}

/// The session's record created at `/v4/<path>` with `label`.
async fn create(server: &Server, s: &str, path: &str, label: &str) -> Value {
    server
        .post(&format!("/v4/{path}"), Some(s), json!({"label": label}))
        .await
        .json()
}

/// The event feed's first page, polled with the filter document `doc`.
async fn poll(server: &Server, s: &str, doc: &str) -> Resp {
    server
        .send(
            "GET",
            "/v4/account/events?page=1",
            Some(s),
            &[("X-Filter", doc)],
            None,
        )
        .await
}

#[tokio::test]
async fn an_event_feed_filtered_on_the_sessions_record_names_that_record() {
    let t = feed_twin();
    let server = t.serve(&[]);
    let created = create(&server, "agent", "databases", "mine").await;
    let id = created["id"].clone();
    assert!(![json!(227300), json!(16774)].contains(&id), "{created}");
    let polled = poll(&server, "agent", &filter(&id)).await;
    polled.assert_status(200);
    let page = polled.json();
    let events = page["data"].as_array().expect("data");
    assert_eq!(events.len(), 1, "{page}");
    assert_eq!(events[0]["action"], json!("database_create"), "{page}");
    assert_eq!(
        events[0]["entity"],
        json!({
            "id": id,
            "label": "mine",
            "type": "database",
            "url": format!("/v4/databases/{id}"),
        }),
        "{page}"
    );
    // Not the recorded bytes any more: no exactness claim.
    assert_eq!(polled.header("x-wraith-replay"), None);
}

#[tokio::test]
async fn a_feed_filtered_on_a_record_the_session_did_not_create_replays_as_recorded() {
    let t = feed_twin();
    let server = t.serve(&[]);
    let page = poll(&server, "agent", &filter(&json!(424242))).await.json();
    let recorded = [json!(227300), json!(16774), json!(60303116)];
    for e in page["data"].as_array().expect("data") {
        assert!(recorded.contains(&e["entity"]["id"]), "{page}");
    }
}

#[tokio::test]
async fn a_recorded_event_the_document_rules_out_otherwise_is_not_renamed() {
    let t = feed_twin();
    let server = t.serve(&[]);
    let created = create(&server, "agent", "databases", "mine").await;
    let other_action = filter_for("database_delete", &created["id"]);
    let page = poll(&server, "agent", &other_action).await.json();
    for e in page["data"].as_array().expect("data") {
        assert_ne!(e["entity"]["id"], created["id"], "{page}");
        assert_ne!(e["entity"]["label"], json!("mine"), "{page}");
    }
}

#[tokio::test]
async fn a_poll_for_another_kind_of_event_takes_a_recorded_page_of_that_kind() {
    let t = feed_twin();
    let server = t.serve(&[]);
    // Several sessions: whichever recorded page a session's position picks, each is answered
    // a page of the kind its document asks for.
    for s in ["a", "b", "c"] {
        let label = format!("mine-{s}");
        let id = create(&server, s, "instances", &label).await["id"].clone();
        let page = poll(&server, s, &filter_for("linode_create", &id))
            .await
            .json();
        let events = page["data"].as_array().expect("data");
        assert_eq!(events.len(), 1, "{page}");
        assert_eq!(events[0]["action"], json!("linode_create"), "{page}");
        assert_eq!(
            events[0]["entity"],
            json!({"id": id, "label": label, "type": "linode", "url": format!("/v4/instances/{id}")}),
            "{page}"
        );
        assert_eq!(page["results"], json!(1), "{page}");
    }
}

/// A run whose first poll came before the event existed (an empty page), then found it.
fn run_polled_early(id: u64, label: &str, ev: u64) -> Vec<Value> {
    let mut entries = run(id, label, ev);
    let mut early = entries[2].clone();
    let empty = json!({"data": [], "page": 1, "pages": 1, "results": 0}).to_string();
    early["response"]["content"]["text"] = json!(empty);
    early["response"]["content"]["size"] = json!(empty.len());
    early["response"]["bodySize"] = json!(empty.len());
    entries.insert(2, early);
    entries
}

#[tokio::test]
async fn a_poll_answered_before_the_event_existed_stays_empty_then_finds_it() {
    let t = Twin::init("dbs", ORIGIN);
    har::import(
        &t,
        &[],
        "first.har",
        run_polled_early(227300, "go-a", 952748475),
    );
    har::import(
        &t,
        &[],
        "second.har",
        run_polled_early(16774, "go-b", 31679112),
    );
    har::synth(&t, &[]);
    let server = t.serve(&[]);
    let created = create(&server, "agent", "databases", "mine").await;
    let doc = filter(&created["id"]);
    let first = poll(&server, "agent", &doc).await.json();
    assert_eq!(first["data"], json!([]), "{first}");
    let second = poll(&server, "agent", &doc).await.json();
    assert_eq!(second["data"][0]["entity"]["id"], created["id"], "{second}");
    assert_eq!(
        second["data"][0]["entity"]["label"],
        json!("mine"),
        "{second}"
    );
}
