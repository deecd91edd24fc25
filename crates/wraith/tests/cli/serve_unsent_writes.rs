//! A recorded page that shows writes the session never sent, end to end: one recorded run
//! creates an item, reads it, deletes it and then lists (an empty page); a later one creates,
//! reads and lists its item before deleting it. A session that replays the first run's create
//! and read, then lists, is served that run's page merged with its own records: the item it
//! still holds is listed. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "unsent-writes-test-key");
const ORIGIN: &str = "https://api.items.test";

fn item(id: u64) -> Value {
    json!({"id": id, "label": "testing"})
}

/// Recorded run `minute` (its start orders the runs): create item `id`, then `steps`.
fn run(t: &Twin, minute: u64, id: u64, steps: &[&str]) {
    let mut entries = vec![har::entry(
        ORIGIN,
        "POST",
        "/v1/items",
        Some(&json!({"label": "testing"})),
        &item(id),
    )];
    for step in steps {
        entries.push(match *step {
            "read" => har::entry(ORIGIN, "GET", &format!("/v1/items/{id}"), None, &item(id)),
            "delete" => har::entry(
                ORIGIN,
                "DELETE",
                &format!("/v1/items/{id}"),
                None,
                &json!({}),
            ),
            "list" => har::entry(
                ORIGIN,
                "GET",
                "/v1/items",
                None,
                &json!({"data": [item(id)]}),
            ),
            _ => har::entry(ORIGIN, "GET", "/v1/items", None, &json!({"data": []})),
        });
    }
    for e in &mut entries {
        e["startedDateTime"] = json!(format!("2026-06-01T12:{minute:02}:00.000Z"));
    }
    har::import(t, &[KEY], &format!("run{minute}.har"), entries);
}

#[tokio::test]
async fn a_page_recorded_after_a_delete_the_session_never_sent_lists_its_record() {
    let t = Twin::init("items", ORIGIN);
    run(&t, 1, 7001, &["read", "delete", "empty-list"]);
    run(&t, 2, 7002, &["read", "list", "delete"]);
    har::synth(&t, &[KEY]);
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post("/v1/items", Some("agent"), json!({"label": "testing"}))
        .await;
    created.assert_status(200);
    let id = har::key_text(&created.json()["id"]);
    // The premise: the create replays the first run, and reading its item ties the session
    // to that run, whose page was recorded after its delete.
    assert_eq!(id, "7001");
    server
        .get(&format!("/v1/items/{id}"), Some("agent"))
        .await
        .assert_status(200);
    let page = server.get("/v1/items", Some("agent")).await.json();
    let listed: Vec<String> = page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a page: {page}"))
        .iter()
        .map(|i| har::key_text(&i["id"]))
        .collect();
    assert_eq!(listed, vec![id], "{page}");
}
