//! `wraith serve` walking an offset-paged list page by page in a session that holds records no
//! recording made (a fixture set's, or its own creates): every record shows exactly once, under
//! one total, even where a recorded page listed a record its recording deleted later.
//! Black-box: the real binary on a HAR run written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.items.test";

fn item(id: &str) -> Value {
    json!({"id": id, "object": "item", "name": format!("name of {id}")})
}

fn page(ids: &[&str], has_more: bool, total: u64) -> Value {
    json!({
        "object": "list",
        "data": ids.iter().map(|i| item(i)).collect::<Vec<_>>(),
        "has_more": has_more,
        "total": total
    })
}

/// One run: three items listed whole; a fourth created, listed on the second page, deleted, and
/// read back as gone; the first page listed after the delete.
fn items_twin() -> Twin {
    let t = Twin::init("items", ORIGIN);
    let get = |path: &str, answer: Value| har::entry(ORIGIN, "GET", path, None, &answer);
    let entries = vec![
        get(
            "/v1/items",
            page(&["itm_4kq81zx", "itm_7bn25wd", "itm_2hc93re"], false, 3),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/v1/items",
            Some(&json!({"name": "name of itm_9mv40tp"})),
            &item("itm_9mv40tp"),
        ),
        get(
            "/v1/items?limit=2&offset=2",
            page(&["itm_2hc93re", "itm_9mv40tp"], false, 4),
        ),
        har::entry(
            ORIGIN,
            "DELETE",
            "/v1/items/itm_9mv40tp",
            None,
            &json!({"id": "itm_9mv40tp", "deleted": true}),
        ),
        har::with_status(
            get(
                "/v1/items/itm_9mv40tp",
                json!({"error": {"type": "not_found", "message": "No such item"}}),
            ),
            404,
        ),
        get(
            "/v1/items?limit=2",
            page(&["itm_4kq81zx", "itm_7bn25wd"], true, 3),
        ),
        get("/v1/items/itm_4kq81zx", item("itm_4kq81zx")),
    ];
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

/// Pages `limit=2` from offset 0 until a page says no more follow: the ids in order, and the
/// total each page stated.
async fn walk(server: &support::Server, session: &str) -> (Vec<String>, Vec<u64>) {
    let (mut ids, mut totals) = (Vec::new(), Vec::new());
    for offset in (0..10).step_by(2) {
        let r = server
            .get(&format!("/v1/items?limit=2&offset={offset}"), Some(session))
            .await;
        r.assert_status(200);
        let body = r.json();
        ids.extend(support::item_ids(&body["data"]));
        totals.push(body["total"].as_u64().unwrap());
        if body["has_more"] == json!(false) {
            break;
        }
    }
    (ids, totals)
}

#[tokio::test]
async fn paging_shows_each_fixture_record_once_past_a_record_deleted_in_its_recording() {
    let t = items_twin();
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"items": [item("itm_fixture01"), item("itm_fixture02")]}}).to_string(),
    );
    let server = t.serve(&[]);
    // The record the recording deleted is gone for this session too.
    server
        .get("/v1/items/itm_9mv40tp", Some("walker"))
        .await
        .assert_status(404);
    let (ids, totals) = walk(&server, "walker").await;
    assert_eq!(
        ids,
        [
            "itm_4kq81zx",
            "itm_7bn25wd",
            "itm_2hc93re",
            "itm_fixture01",
            "itm_fixture02"
        ],
        "every record once, none gone: {ids:?}"
    );
    assert!(totals.iter().all(|t| *t == 5), "one total: {totals:?}");
}

#[tokio::test]
async fn paging_shows_the_sessions_own_creates_once_past_a_record_deleted_in_its_recording() {
    let t = items_twin();
    let server = t.serve(&[]);
    for name in ["new one", "new two"] {
        server
            .post("/v1/items", Some("maker"), json!({"name": name}))
            .await
            .assert_status(200);
    }
    let (ids, totals) = walk(&server, "maker").await;
    assert_eq!(ids.len(), 5, "{ids:?}");
    assert!(!ids.contains(&"itm_9mv40tp".to_string()), "{ids:?}");
    let distinct: std::collections::HashSet<_> = ids.iter().collect();
    assert_eq!(distinct.len(), 5, "each once: {ids:?}");
    assert!(totals.iter().all(|t| *t == 5), "one total: {totals:?}");
}

/// A session with nothing of its own is served the recorded pages as they were recorded.
#[tokio::test]
async fn a_session_with_no_records_of_its_own_gets_the_recorded_pages() {
    let t = items_twin();
    let server = t.serve(&[]);
    let r = server
        .get("/v1/items?limit=2&offset=2", Some("reader"))
        .await;
    r.assert_status(200);
    assert_eq!(
        support::item_ids(&r.json()["data"]),
        ["itm_2hc93re", "itm_9mv40tp"]
    );
}
