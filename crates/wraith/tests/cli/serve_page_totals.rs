//! A recorded page of a paged list states the total of its whole collection. Replayed in a
//! session that made the same records, the records on the other pages are already in that
//! total: only records the recording did not have (a fixture's, the session's own) add to it.
//! Black-box: the real binary on a HAR run written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Server, Twin, har};

const ORIGIN: &str = "https://api.items.test";

fn item(n: u32) -> Value {
    json!({"id": format!("it_{n}"), "name": format!("item {n}")})
}

/// `records` creates, then the whole collection read `page` at a time (`?limit=` and
/// `&offset=`), each page stating the total.
fn recorded_pages(records: u32, page: u32) -> Vec<Value> {
    let mut entries: Vec<Value> = (1..=records)
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
    for offset in (0..records).step_by(page as usize) {
        let items: Vec<Value> = (offset + 1..=(offset + page).min(records))
            .map(item)
            .collect();
        let query = if offset == 0 {
            format!("limit={page}")
        } else {
            format!("limit={page}&offset={offset}")
        };
        entries.push(har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/items?{query}"),
            None,
            &json!({"data": items, "has_more": offset + page < records, "total": records}),
        ));
    }
    entries
}

fn twin_of(entries: Vec<Value>) -> Twin {
    let t = Twin::init("items", ORIGIN);
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

/// The default fixture set seeds one item.
fn seed_one_item(t: &Twin) {
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"items": [{"id": "it_fixture", "name": "seeded"}]}}).to_string(),
    );
}

/// Three creates, then the collection read two at a time; then a delete, recorded after the
/// pages, of a record made for it.
fn paged_twin() -> Twin {
    let mut entries = recorded_pages(3, 2);
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
    twin_of(entries)
}

/// The session makes the recorded records `1..=n`, each answered from the recording.
async fn create_all(server: &Server, session: Option<&str>, n: u32) {
    for n in 1..=n {
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
    create_all(&server, s, 3).await;
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
    seed_one_item(&t);
    let server = t.serve(&[]);
    let s = Some("seeded");
    create_all(&server, s, 3).await;
    let page = server.get("/v1/items?limit=2", s).await;
    page.assert_status(200);
    let body = page.json();
    assert_eq!(body["total"], json!(4), "{body}");
    assert_eq!(body["data"].as_array().unwrap().len(), 2, "{body}");
    assert_eq!(body["has_more"], json!(true), "{body}");
    // Counted, though off this page: the fixture shaped the answer.
    assert_eq!(page.provenance(), Some("fixture"));
}

/// The ids `pages` list, in order, each page stating `total`.
async fn page_through(server: &Server, s: Option<&str>, pages: &[&str], total: u64) -> Vec<String> {
    let mut seen = Vec::new();
    for path in pages {
        let page = server.get(path, s).await;
        page.assert_status(200);
        let body = page.json();
        assert_eq!(body["total"], json!(total), "{path}: {body}");
        seen.extend(
            body["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["id"].as_str().unwrap().to_string()),
        );
    }
    seen
}

#[tokio::test]
async fn paging_through_a_replayed_collection_lists_each_record_once() {
    let t = paged_twin();
    seed_one_item(&t);
    let server = t.serve(&[]);
    let s = Some("pages");
    create_all(&server, s, 3).await;
    let seen = page_through(
        &server,
        s,
        &["/v1/items?limit=2", "/v1/items?limit=2&offset=2"],
        4,
    )
    .await;
    // The recorded records where the recorded pages put them, the seeded one after them.
    assert_eq!(seen, ["it_1", "it_2", "it_3", "it_fixture"]);
}

/// Four creates, then the collection read three at a time: the second page holds one
/// record. The default fixture set seeds one more.
fn short_last_page_twin() -> Twin {
    let t = twin_of(recorded_pages(4, 3));
    seed_one_item(&t);
    t
}

#[tokio::test]
async fn a_short_last_page_does_not_repeat_records_of_the_earlier_pages() {
    let t = short_last_page_twin();
    let server = t.serve(&[]);
    let s = Some("short");
    create_all(&server, s, 4).await;
    let seen = page_through(
        &server,
        s,
        &["/v1/items?limit=3", "/v1/items?limit=3&offset=3"],
        5,
    )
    .await;
    assert_eq!(seen, ["it_1", "it_2", "it_3", "it_4", "it_fixture"]);
}
