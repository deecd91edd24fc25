//! A recorded page of a paged list states the total of its whole collection. Replayed in a
//! session that made the same records, the records on the other pages are already in that
//! total: only records the recording did not have (a fixture's, the session's own) add to it.
//! Black-box: the real binary on a HAR run written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use support::{Server, Twin, har};

const ORIGIN: &str = "https://api.items.test";

fn item(n: u32) -> Value {
    json!({"id": format!("it_{n}"), "name": format!("item {n}")})
}

/// Three creates, then the collection read two at a time.
fn paged_twin() -> Twin {
    let t = Twin::init("items", ORIGIN);
    let mut entries: Vec<Value> = (1..=3)
        .map(|n| {
            har::entry(
                ORIGIN,
                "POST",
                "/v1/items",
                Some(&json!({"name": format!("item {n}")})),
                &item(n),
            )
        })
        .collect();
    entries.push(har::entry(
        ORIGIN,
        "GET",
        "/v1/items?limit=2",
        None,
        &json!({"data": [item(1), item(2)], "has_more": true, "total": 3}),
    ));
    entries.push(har::entry(
        ORIGIN,
        "GET",
        "/v1/items?limit=2&offset=2",
        None,
        &json!({"data": [item(3)], "has_more": false, "total": 3}),
    ));
    // A delete, recorded after the pages, of a record made for it.
    entries.push(har::entry(
        ORIGIN,
        "POST",
        "/v1/items",
        Some(&json!({"name": "item 4"})),
        &item(4),
    ));
    entries.push(har::entry(
        ORIGIN,
        "DELETE",
        "/v1/items/it_4",
        None,
        &json!({"id": "it_4", "deleted": true}),
    ));
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

async fn create_all(server: &Server, session: Option<&str>) {
    for n in 1..=3 {
        let r = server
            .post("/v1/items", session, json!({"name": format!("item {n}")}))
            .await;
        r.assert_status(200);
    }
}

#[tokio::test]
async fn a_replayed_page_counts_the_sessions_records_on_other_pages_once() {
    let t = paged_twin();
    let server = t.serve(&[]);
    let s = Some("replay");
    create_all(&server, s).await;
    server.delete("/v1/items/it_1", s).await;
    // The first page loses the deleted record and takes the third from the next page: two
    // records, as the session left them.
    let page = server.get("/v1/items?limit=2", s).await;
    page.assert_status(200);
    let body = page.json();
    assert_eq!(body["total"], json!(2), "{body}");
    let ids: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["it_2", "it_3"], "{body}");
    assert_eq!(body["has_more"], json!(false), "{body}");
}

#[tokio::test]
async fn a_fixture_record_adds_itself_to_a_replayed_pages_total() {
    let t = paged_twin();
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"items": [{"id": "it_fixture", "name": "seeded"}]}}).to_string(),
    );
    let server = t.serve(&[]);
    let s = Some("seeded");
    create_all(&server, s).await;
    let page = server.get("/v1/items?limit=2", s).await;
    page.assert_status(200);
    let body = page.json();
    assert_eq!(body["total"], json!(4), "{body}");
    assert_eq!(body["data"].as_array().unwrap().len(), 2, "{body}");
    assert_eq!(body["has_more"], json!(true), "{body}");
    // Counted, though off this page: the fixture shaped the answer.
    assert_eq!(page.provenance(), Some("fixture"));
}

#[tokio::test]
async fn paging_through_a_replayed_collection_lists_each_record_once() {
    let t = paged_twin();
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"items": [{"id": "it_fixture", "name": "seeded"}]}}).to_string(),
    );
    let server = t.serve(&[]);
    let s = Some("pages");
    create_all(&server, s).await;
    let mut seen = Vec::new();
    for path in ["/v1/items?limit=2", "/v1/items?limit=2&offset=2"] {
        let page = server.get(path, s).await;
        page.assert_status(200);
        let body = page.json();
        assert_eq!(body["total"], json!(4), "{path}: {body}");
        seen.extend(
            body["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["id"].as_str().unwrap().to_string()),
        );
    }
    // The recorded records where the recorded pages put them, the seeded one after them.
    assert_eq!(seen, ["it_1", "it_2", "it_3", "it_fixture"]);
}

/// Four creates, then the collection read three at a time: the second page holds one record.
fn short_last_page_twin() -> Twin {
    let t = Twin::init("items", ORIGIN);
    let mut entries: Vec<Value> = (1..=4)
        .map(|n| {
            har::entry(
                ORIGIN,
                "POST",
                "/v1/items",
                Some(&json!({"name": format!("item {n}")})),
                &item(n),
            )
        })
        .collect();
    entries.push(har::entry(
        ORIGIN,
        "GET",
        "/v1/items?limit=3",
        None,
        &json!({"data": [item(1), item(2), item(3)], "has_more": true, "total": 4}),
    ));
    entries.push(har::entry(
        ORIGIN,
        "GET",
        "/v1/items?limit=3&offset=3",
        None,
        &json!({"data": [item(4)], "has_more": false, "total": 4}),
    ));
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"items": [{"id": "it_fixture", "name": "seeded"}]}}).to_string(),
    );
    t
}

#[tokio::test]
async fn a_short_last_page_does_not_repeat_records_of_the_earlier_pages() {
    let t = short_last_page_twin();
    let server = t.serve(&[]);
    let s = Some("short");
    for n in 1..=4 {
        server
            .post("/v1/items", s, json!({"name": format!("item {n}")}))
            .await
            .assert_status(200);
    }
    let mut seen = Vec::new();
    for path in ["/v1/items?limit=3", "/v1/items?limit=3&offset=3"] {
        let page = server.get(path, s).await;
        page.assert_status(200);
        let body = page.json();
        assert_eq!(body["total"], json!(5), "{path}: {body}");
        seen.extend(
            body["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["id"].as_str().unwrap().to_string()),
        );
    }
    assert_eq!(seen, ["it_1", "it_2", "it_3", "it_4", "it_fixture"]);
}
