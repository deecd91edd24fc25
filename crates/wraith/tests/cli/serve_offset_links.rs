//! `wraith serve` paging a list whose recorded `Link` headers page by position: the `next`
//! link names `offset` (the request's own offset plus the page's item count, not an item id)
//! and the `prev` link the same parameter one page back. Black-box: the real binary on HAR
//! runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.groups.test";

/// A recorded page: `items`, with the `Link` header the API sent.
fn page(query: &str, items: Value, link: &str) -> Value {
    let mut e = har::entry(ORIGIN, "GET", &format!("/v1/groups{query}"), None, &items);
    if !link.is_empty() {
        e["response"]["headers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "Link", "value": link}));
    }
    e
}

/// Two runs, each creating two groups and paging through them one at a time by offset.
fn groups_twin() -> Twin {
    let t = Twin::init("groups", ORIGIN);
    let next = format!("<{ORIGIN}/v1/groups?limit=1&offset=1>; rel=\"next\"");
    let prev = format!("<{ORIGIN}/v1/groups?limit=1&offset=0>; rel=\"prev\"");
    for (run, day, a, b) in [("a", 1, 101, 102), ("b", 2, 201, 202)] {
        let group = |id: u32, n: &str| json!({"id": id.to_string(), "name": n});
        let mut entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/v1/groups",
                Some(&json!({"name": "one"})),
                &group(a, "one"),
            ),
            har::entry(
                ORIGIN,
                "POST",
                "/v1/groups",
                Some(&json!({"name": "two"})),
                &group(b, "two"),
            ),
            page("?limit=1", json!([group(a, "one")]), &next),
            page("?limit=1&offset=1", json!([group(b, "two")]), &prev),
        ];
        for e in &mut entries {
            e["startedDateTime"] = json!(format!("2026-06-0{day}T12:00:00.000Z"));
        }
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

fn ids(r: &support::Resp) -> Vec<String> {
    support::item_ids(&r.json())
}

#[tokio::test]
async fn synth_learns_that_the_recorded_links_page_by_position() {
    let t = groups_twin();
    let list = har::model_route(&t, "GET", "/v1/groups");
    assert_eq!(
        list["list"]["pagination"],
        json!({"style": "link_header", "next_param": "offset", "prev_param": null,
               "limit": "limit", "positional": true})
    );
}

#[tokio::test]
async fn an_offset_paged_list_pages_by_position_with_offset_links_both_ways() {
    let t = groups_twin();
    let server = t.serve(&[]);
    let s = Some("pager");
    for name in ["t", "u", "v", "w", "x", "y", "z"] {
        server
            .post("/v1/groups", s, json!({"name": name}))
            .await
            .assert_status(200);
    }
    // The session's seven groups (every recorded run listed only the groups it created, so
    // none of theirs), paged two at a time (a page size no recording asked for, so the twin
    // pages the collection itself).
    let first = server.get("/v1/groups?limit=2", s).await;
    first.assert_status(200);
    assert_eq!(ids(&first).len(), 2);
    let link = first.header("link").unwrap_or_default().to_string();
    assert!(
        link.contains("offset=2") && link.contains("rel=\"next\""),
        "{link}"
    );
    assert!(!link.contains("rel=\"prev\""), "{link}");

    let second = server.get("/v1/groups?limit=2&offset=2", s).await;
    assert_eq!(ids(&second).len(), 2);
    assert!(
        ids(&second).iter().all(|id| !ids(&first).contains(id)),
        "the second page holds other groups: {:?} {:?}",
        ids(&first),
        ids(&second)
    );
    let link = second.header("link").unwrap_or_default().to_string();
    assert!(
        link.contains("offset=4") && link.contains("offset=0"),
        "{link}"
    );

    let last = server.get("/v1/groups?limit=2&offset=6", s).await;
    assert_eq!(
        ids(&last).len(),
        1,
        "{}",
        String::from_utf8_lossy(&last.body)
    );
    let link = last.header("link").unwrap_or_default().to_string();
    assert!(
        !link.contains("rel=\"next\""),
        "the last page has no next: {link}"
    );
    assert!(
        link.contains("offset=4") && link.contains("rel=\"prev\""),
        "{link}"
    );

    // Past the end: no items, and `prev` one page back from the offset asked for.
    let past = server.get("/v1/groups?limit=2&offset=100", s).await;
    assert_eq!(ids(&past), Vec::<String>::new());
    let link = past.header("link").unwrap_or_default().to_string();
    assert!(
        link.contains("offset=98") && !link.contains("rel=\"next\""),
        "{link}"
    );
}

#[tokio::test]
async fn the_twins_own_links_carry_the_requests_other_parameters() {
    let t = groups_twin();
    let server = t.serve(&[]);
    // Four groups of the session's own: every recorded run listed only the groups it created.
    for name in ["p", "q", "r", "s"] {
        server
            .post("/v1/groups", Some("sorted"), json!({"name": name}))
            .await
            .assert_status(200);
    }
    // A page size and a parameter no recording sent: the twin pages the collection itself,
    // and following its links asks again for what this page asked.
    let page = server
        .get("/v1/groups?sort=name&limit=2&offset=1", Some("sorted"))
        .await;
    page.assert_status(200);
    let link = page.header("link").unwrap_or_default().to_string();
    assert_eq!(
        link,
        format!(
            "<{origin}/v1/groups?limit=2&offset=3&sort=name>; rel=\"next\", \
             <{origin}/v1/groups?limit=2&offset=0&sort=name>; rel=\"prev\"",
            origin = server.url
        )
    );
}

#[tokio::test]
async fn a_recorded_offset_query_over_the_sessions_own_groups_links_by_position() {
    let t = groups_twin();
    let server = t.serve(&[]);
    let s = Some("writer");
    for name in ["mine", "also mine"] {
        server
            .post("/v1/groups", s, json!({"name": name}))
            .await
            .assert_status(200);
    }
    // A query the recordings sent; every recorded run listed only the groups it created, so
    // the page is the session's second group, its links still by position.
    let r = server.get("/v1/groups?limit=1&offset=1", s).await;
    r.assert_status(200);
    assert_eq!(ids(&r).len(), 1);
    let link = r.header("link").unwrap_or_default().to_string();
    assert!(
        link.contains("/v1/groups?limit=1&offset=0>; rel=\"prev\""),
        "{link}"
    );
}
