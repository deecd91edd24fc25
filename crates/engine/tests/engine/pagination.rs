//! Link-header pagination always terminates: following `next` or `prev` links reaches a page
//! without that link, whether the page is served from the list store or rendered from a
//! variant whose recorded `Link` names another request's page.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_engine::Engine;
use wraith_model::*;

fn link_rel(r: &wraith_engine::Response, rel: &str) -> Option<String> {
    let link = header(&r.headers, "link")?;
    link.split(',').find_map(|part| {
        let part = part.trim();
        if !part.contains(&format!("rel=\"{rel}\"")) {
            return None;
        }
        let url = part.strip_prefix('<')?.split_once('>')?.0;
        // Relative to the twin: keep the path and query only.
        let path = url
            .split_once("://")
            .map_or(url, |(_, rest)| rest.find('/').map_or("/", |i| &rest[i..]));
        Some(path.to_string())
    })
}

/// Follow `rel` links from `start`; the number of pages served, panicking past `max`.
fn follow(e: &Engine, session: &str, start: &str, rel: &str, max: usize) -> usize {
    let mut url = start.to_string();
    for n in 1..=max {
        let r = get(e, Some(session), &url);
        assert_eq!(r.status, 200, "{url}");
        match link_rel(&r, rel) {
            Some(next) => url = next,
            None => return n,
        }
    }
    panic!("following rel=\"{rel}\" from {start} did not end within {max} pages");
}

fn recorded_link(path: &str, first: &str, last: &str) -> HeaderProgram {
    HeaderProgram {
        name: "link".into(),
        program: HeaderRule::Constant {
            values: vec![format!(
                "<http://localhost:3000{path}?max_id={last}>; rel=\"next\", \
                 <http://localhost:3000{path}?min_id={first}>; rel=\"prev\""
            )],
        },
    }
}

/// A non-list route (no state op) whose only variant is a recorded page of another path, with
/// that page's `Link`.
fn rendered_page_engine() -> Engine {
    let mut headers = json_headers();
    headers.push(recorded_link("/api/v1/tags/other", "90", "80"));
    let r = R::new("GET", "/api/v1/tags/:tag")
        .variant_h(
            200,
            Guard::Always,
            c(json!([{"id": "90", "text": "a"}, {"id": "80", "text": "b"}])),
            headers,
        )
        .exact(
            "/api/v1/tags/mine",
            "limit=2",
            None,
            vec![moment("s1/1", 200, json!([{"id": "30"}, {"id": "20"}]))],
        )
        .build();
    engine(model(vec![r], vec![]), det_opts())
}

#[test]
fn following_prev_links_of_a_rendered_page_terminates() {
    let e = rendered_page_engine();
    let pages = follow(&e, "p", "/api/v1/tags/mine?limit=2&min_id=30", "prev", 10);
    assert!(pages <= 2, "at most one extra page: {pages}");
}

#[test]
fn following_next_links_of_a_rendered_page_terminates() {
    let e = rendered_page_engine();
    let pages = follow(&e, "n", "/api/v1/tags/mine?limit=2&max_id=20", "next", 10);
    assert!(pages <= 2, "at most one extra page: {pages}");
}

#[test]
fn rendered_page_links_name_this_request_not_the_recorded_one() {
    let e = rendered_page_engine();
    let r = get(&e, Some("x"), "/api/v1/tags/mine?limit=2&min_id=30");
    let next = link_rel(&r, "next").unwrap_or_default();
    assert_eq!(next, "/api/v1/tags/mine?limit=2&max_id=80");
    let prev = link_rel(&r, "prev").unwrap_or_default();
    assert_eq!(prev, "/api/v1/tags/mine?limit=2&min_id=90");
}

#[test]
fn rendered_empty_page_carries_no_links() {
    let mut headers = json_headers();
    headers.push(recorded_link("/api/v1/tags/other", "90", "80"));
    let r = R::new("GET", "/api/v1/tags/:tag")
        .variant_h(200, Guard::Always, c(json!([])), headers)
        .build();
    let e = engine(model(vec![r], vec![]), det_opts());
    let r = get(&e, Some("e"), "/api/v1/tags/x?min_id=5");
    assert_eq!(body(&r), json!([]));
    assert_eq!(header(&r.headers, "link"), None);
}

fn statuses_list_engine(n: u64) -> Engine {
    let mut headers = json_headers();
    headers.push(recorded_link("/api/v1/statuses", "999", "998"));
    let items: Vec<Value> = (1..=n)
        .rev()
        .map(|i| json!({"id": i.to_string()}))
        .collect();
    let r = R::new("GET", "/api/v1/statuses")
        .op(StateOp::List, "statuses")
        .list(ListShape {
            items_pointer: String::new(),
            pagination: Pagination::LinkHeader {
                next_param: "max_id".into(),
                prev_param: Some("min_id".into()),
                limit: Some("limit".into()),
                positional: false,
                numbered: false,
            },
            filters: vec![],
            filter_header: None,
            envelope: vec![],
            parent_member: None,
            set_filters: Vec::new(),
            lower_bounds: Vec::new(),
            own_records_only: false,
            principal_records_only: false,
            hidden_values: Vec::new(),
            filter_wildcards: Vec::new(),
            sorts: Vec::new(),
            search_filters: Vec::new(),
            untouched_item: None,
        })
        .variant_h(200, Guard::Always, c(json!([])), headers)
        .exact(
            "/api/v1/statuses",
            "",
            None,
            vec![moment("s1/1", 200, json!(items))],
        )
        .build();
    engine(
        model(vec![r], vec![("statuses", entity_type(&[], &[], vec![]))]),
        det_opts(),
    )
}

#[test]
fn following_list_links_both_ways_terminates_and_visits_every_item() {
    let e = statuses_list_engine(7);
    let pages = follow(&e, "l", "/api/v1/statuses?limit=3", "next", 20);
    assert_eq!(pages, 3, "7 items, 3 per page");
    let pages = follow(&e, "l", "/api/v1/statuses?limit=3&max_id=2", "prev", 20);
    assert!(pages <= 4, "{pages}");
}

#[test]
fn an_empty_list_page_drops_the_recorded_link() {
    let e = statuses_list_engine(3);
    let r = get(&e, Some("x"), "/api/v1/statuses?limit=3&min_id=3");
    assert_eq!(body(&r), json!([]));
    assert_eq!(header(&r.headers, "link"), None, "no link on an empty page");
}

#[test]
fn a_window_bounded_on_both_sides_serves_only_the_items_inside_it() {
    let e = statuses_list_engine(7);
    let r = get(&e, Some("w"), "/api/v1/statuses?max_id=6&min_id=2");
    let ids: Vec<Value> = body(&r)
        .as_array()
        .map(|a| a.iter().map(|i| i["id"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(ids, vec![json!("5"), json!("4"), json!("3")]);
}
