//! A list route whose recordings never showed how it pages in full takes the convention the
//! API's other list routes agree on: the page-size parameter of `Link`-paged lists (a
//! client's `limit=2` on a list no recording asked a size of) and the default page size of
//! `page`-paged lists. Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.paging.test";

fn item(id: u64, name: &str) -> Value {
    json!({"id": id.to_string(), "name": name})
}

/// A run of three `Link`-paged collections, newest first: `notes` and `tags` recorded pages
/// of `limit=1`, `boards` only a whole list with no size asked for.
fn link_twin() -> Twin {
    let t = Twin::init("linked", ORIGIN);
    let mut entries = Vec::new();
    for (i, coll) in ["notes", "tags", "boards"].into_iter().enumerate() {
        let (a, b) = (100 * (i as u64 + 1) + 1, 100 * (i as u64 + 1) + 2);
        for (id, name) in [(a, "one"), (b, "two")] {
            entries.push(har::entry(
                ORIGIN,
                "POST",
                &format!("/v1/{coll}"),
                Some(&json!({"name": name})),
                &item(id, name),
            ));
        }
        let (query, items, next) = if coll == "boards" {
            ("", json!([item(b, "two"), item(a, "one")]), a)
        } else {
            ("?limit=1", json!([item(b, "two")]), b)
        };
        let link = format!(
            "<{ORIGIN}/v1/{coll}?{}max_id={next}>; rel=\"next\", <{ORIGIN}/v1/{coll}?{}min_id={b}>; rel=\"prev\"",
            if query.is_empty() { "" } else { "limit=1&" },
            if query.is_empty() { "" } else { "limit=1&" },
        );
        let page = har::entry(ORIGIN, "GET", &format!("/v1/{coll}{query}"), None, &items);
        entries.push(har::with_response_header(page, "Link", &link));
    }
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect()
}

/// Three boards of the session's own.
async fn create_boards(server: &support::Server, s: Option<&str>) {
    for name in ["x", "y", "z"] {
        server
            .post("/v1/boards", s, json!({"name": name}))
            .await
            .assert_status(200);
    }
}

#[tokio::test]
async fn a_link_paged_list_no_recording_sized_pages_by_the_apis_size_parameter() {
    let t = link_twin();
    let server = t.serve(&[]);
    let s = Some("pager");
    create_boards(&server, s).await;
    let first = server.get("/v1/boards?limit=2", s).await;
    first.assert_status(200);
    let listed = ids(&first.json());
    assert_eq!(listed.len(), 2, "{}", first.json());
    let link = first.header("link").unwrap_or_default().to_string();
    assert!(
        link.contains(&format!("max_id={}", listed[1])) && link.contains("rel=\"next\""),
        "{link}"
    );
    let second = server
        .get(&format!("/v1/boards?limit=2&max_id={}", listed[1]), s)
        .await;
    second.assert_status(200);
    let more = ids(&second.json());
    assert!(
        !more.is_empty() && more.iter().all(|id| !listed.contains(id)),
        "{listed:?} then {more:?}"
    );
}

/// A run of three `page`-paged collections (a `page`/`pages`/`results` envelope): `notes` and
/// `tags` recorded a full first page of two with no size asked for, `boards` one short page.
fn page_twin() -> Twin {
    let t = Twin::init("paged", ORIGIN);
    let mut entries = Vec::new();
    for (i, coll) in ["notes", "tags", "boards"].into_iter().enumerate() {
        let base = 100 * (i as u64 + 1);
        let names = ["one", "two", "three"];
        let made = if coll == "boards" { 1 } else { 3 };
        for (k, name) in names.iter().take(made).enumerate() {
            entries.push(har::entry(
                ORIGIN,
                "POST",
                &format!("/v1/{coll}"),
                Some(&json!({"name": name})),
                &item(base + k as u64 + 1, name),
            ));
        }
        let page = if coll == "boards" {
            json!({"data": [item(base + 1, "one")], "page": 1, "pages": 1, "results": 1})
        } else {
            json!({"data": [item(base + 1, "one"), item(base + 2, "two")],
                   "page": 1, "pages": 2, "results": 3})
        };
        entries.push(har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/{coll}"),
            None,
            &page,
        ));
    }
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_page_paged_list_no_recording_filled_pages_by_the_apis_default_page_size() {
    let t = page_twin();
    let server = t.serve(&[]);
    let s = Some("pager");
    create_boards(&server, s).await;
    let first = server.get("/v1/boards?page=1", s).await;
    first.assert_status(200);
    let body = first.json();
    assert_eq!(body["data"].as_array().unwrap().len(), 2, "{body}");
    assert_eq!(body["pages"], json!(2), "{body}");
    assert_eq!(body["results"], json!(4), "{body}");
    let second = server.get("/v1/boards?page=2", s).await.json();
    assert_eq!(second["data"].as_array().unwrap().len(), 2, "{second}");
}
