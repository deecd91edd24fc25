//! `Pagination::LinkHeader::positional`: synth tells `Link` headers that page by position
//! (`offset`) from those that page by item id (`max_id`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{ok_json, session, synth_model};
use serde_json::{Value, json};
use wraith_model::Pagination;

/// A recorded `GET /v1/things<query>` answered `items` with `Link: link`.
fn page(query: &str, items: Value, link: &str) -> wraith_recording::Exchange {
    let mut e = ok_json("GET", "/v1/things", None, &items);
    e.request.query = query.trim_start_matches('?').to_string();
    e.response
        .headers
        .insert("link".into(), vec![link.to_string()]);
    e
}

fn pagination(pages: Vec<wraith_recording::Exchange>) -> Pagination {
    let mut exchanges = vec![
        ok_json(
            "POST",
            "/v1/things",
            Some(&json!({"n": 1})),
            &json!({"id": "5"}),
        ),
        ok_json(
            "POST",
            "/v1/things",
            Some(&json!({"n": 2})),
            &json!({"id": "6"}),
        ),
    ];
    exchanges.extend(pages);
    let model = synth_model(
        "t",
        "https://api.t.test",
        &[session("a", 1_000_000, exchanges)],
    );
    let route = model
        .routes
        .iter()
        .find(|r| r.method == "GET" && r.path == "/v1/things")
        .unwrap();
    route.list.as_ref().unwrap().pagination.clone()
}

fn positional(p: &Pagination) -> bool {
    matches!(
        p,
        Pagination::LinkHeader {
            positional: true,
            numbered: false,
            ..
        }
    )
}

#[test]
fn next_links_naming_the_offset_after_the_page_are_positional() {
    let p = pagination(vec![
        page(
            "?limit=1",
            json!([{"id": "6"}]),
            "<https://api.t.test/v1/things?limit=1&offset=1>; rel=\"next\"",
        ),
        page(
            "?limit=1&offset=1",
            json!([{"id": "5"}]),
            "<https://api.t.test/v1/things?limit=1&offset=0>; rel=\"prev\"",
        ),
    ]);
    assert!(positional(&p), "{p:?}");
}

#[test]
fn next_links_naming_the_pages_last_item_page_by_id() {
    let p = pagination(vec![page(
        "?limit=1",
        json!([{"id": "6"}]),
        "<https://api.t.test/v1/things?limit=1&max_id=6>; rel=\"next\"",
    )]);
    assert!(!positional(&p), "{p:?}");
}

#[test]
fn an_id_cursor_that_happens_to_equal_the_page_size_is_not_a_position() {
    // A one-item first page whose `next` names `max_id=1` (a bookmark id, not an item's key)
    // beside a `min_id` `prev`: the `prev` cursor says these links page by id.
    let p = pagination(vec![page(
        "?limit=1",
        json!([{"id": "6"}]),
        "<https://api.t.test/v1/things?limit=1&max_id=1>; rel=\"next\", \
         <https://api.t.test/v1/things?limit=1&min_id=1>; rel=\"prev\"",
    )]);
    assert!(!positional(&p), "{p:?}");
}

#[test]
fn an_offset_at_the_largest_number_is_read_without_overflow() {
    // A recorded request at u64::MAX: `offset + items` does not fit, so it proves nothing.
    let p = pagination(vec![page(
        "?limit=1&offset=18446744073709551615",
        json!([{"id": "6"}]),
        "<https://api.t.test/v1/things?limit=1&offset=0>; rel=\"next\"",
    )]);
    assert!(!positional(&p), "{p:?}");
}

fn numbered(p: &Pagination) -> bool {
    matches!(
        p,
        Pagination::LinkHeader {
            positional: false,
            numbered: true,
            ..
        }
    )
}

#[test]
fn next_links_naming_the_page_after_the_requests_page_number_it() {
    // GitHub's paging: `page` counts pages from 1, two items to a page.
    let p = pagination(vec![
        page(
            "?per_page=2&page=1",
            json!([{"id": "6"}, {"id": "5"}]),
            "<https://api.t.test/v1/things?per_page=2&page=2>; rel=\"next\", \
             <https://api.t.test/v1/things?per_page=2&page=3>; rel=\"last\"",
        ),
        page(
            "?per_page=2&page=2",
            json!([{"id": "4"}, {"id": "3"}]),
            "<https://api.t.test/v1/things?per_page=2&page=1>; rel=\"prev\", \
             <https://api.t.test/v1/things?per_page=2&page=3>; rel=\"next\"",
        ),
    ]);
    assert!(numbered(&p), "{p:?}");
}

#[test]
fn a_first_page_naming_page_two_reads_either_way_and_page_counts_pages() {
    // No page asked for, two items, `next` names 2: a position (0 + 2) or a page (1 + 1).
    let p = pagination(vec![page(
        "?per_page=2",
        json!([{"id": "6"}, {"id": "5"}]),
        "<https://api.t.test/v1/things?per_page=2&page=2>; rel=\"next\"",
    )]);
    assert!(numbered(&p), "{p:?}");
    let p = pagination(vec![page(
        "?limit=2",
        json!([{"id": "6"}, {"id": "5"}]),
        "<https://api.t.test/v1/things?limit=2&offset=2>; rel=\"next\"",
    )]);
    assert!(positional(&p), "{p:?}");
}
