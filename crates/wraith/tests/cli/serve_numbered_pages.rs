//! `wraith serve` paging a list whose recorded `Link` headers count pages from 1 (GitHub's
//! `page` and `per_page`): a page is the collection's `per_page` records from
//! `(page - 1) * per_page`, and its links name the pages before and after it, the last and the
//! first. Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.repos.test";

/// A recorded page: `items`, with the `Link` header the API sent.
fn page(query: &str, items: Value, link: &str) -> Value {
    let mut e = har::entry(ORIGIN, "GET", &format!("/v1/repos{query}"), None, &items);
    if !link.is_empty() {
        e["response"]["headers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "Link", "value": link}));
    }
    e
}

fn link(query: &str, rel: &str) -> String {
    format!("<{ORIGIN}/v1/repos?{query}>; rel=\"{rel}\"")
}

/// Three runs, each starting from no repositories, creating three, listing them whole and
/// paging through them two at a time.
fn repos_twin() -> Twin {
    let t = Twin::init("repos", ORIGIN);
    for (run, day, first) in [("a", 1, 11), ("b", 2, 21), ("c", 3, 31)] {
        let repo = |id: u32| json!({"id": id, "name": format!("{run}-{id}")});
        let mut entries: Vec<Value> = (first..first + 3)
            .map(|id| {
                har::entry(
                    ORIGIN,
                    "POST",
                    "/v1/repos",
                    Some(&json!({"name": format!("{run}-{id}")})),
                    &repo(id),
                )
            })
            .collect();
        let all: Vec<Value> = (first..first + 3).map(repo).collect();
        entries.push(page("", json!(all), ""));
        entries.push(page(
            "?per_page=2",
            json!(all[..2]),
            &format!(
                "{}, {}",
                link("per_page=2&page=2", "next"),
                link("per_page=2&page=2", "last")
            ),
        ));
        entries.push(page(
            "?per_page=2&page=2",
            json!(all[2..]),
            &format!(
                "{}, {}",
                link("per_page=2&page=1", "prev"),
                link("per_page=2&page=1", "first")
            ),
        ));
        for e in &mut entries {
            e["startedDateTime"] = json!(format!("2026-06-0{day}T12:00:00.000Z"));
        }
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

/// The `Link` header's entries as (rel, page), in order.
fn links(r: &support::Resp) -> Vec<(String, String)> {
    let l = r.header("link").unwrap_or_default();
    l.split(", ")
        .filter(|e| !e.is_empty())
        .map(|e| {
            let (url, rel) = e.split_once(">; rel=").unwrap();
            let page = url
                .split(['?', '&'])
                .find_map(|p| p.strip_prefix("page="))
                .unwrap();
            (rel.trim_matches('"').to_string(), page.to_string())
        })
        .collect()
}

fn pairs(want: &[(&str, &str)]) -> Vec<(String, String)> {
    want.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[tokio::test]
async fn a_numbered_page_lists_its_slice_and_links_the_pages_around_it() {
    let t = repos_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    for n in 1..=5 {
        server
            .post("/v1/repos", s, json!({"name": format!("mine-{n}")}))
            .await
            .assert_status(200);
    }
    let first = server.get("/v1/repos?per_page=2", s).await;
    first.assert_status(200);
    assert_eq!(har::names(&first), ["mine-1", "mine-2"]);
    assert_eq!(links(&first), pairs(&[("next", "2"), ("last", "3")]));
    let second = server.get("/v1/repos?per_page=2&page=2", s).await;
    assert_eq!(har::names(&second), ["mine-3", "mine-4"]);
    assert_eq!(
        links(&second),
        pairs(&[("prev", "1"), ("next", "3"), ("last", "3"), ("first", "1")])
    );
    let last = server.get("/v1/repos?per_page=2&page=3", s).await;
    assert_eq!(har::names(&last), ["mine-5"]);
    assert_eq!(links(&last), pairs(&[("prev", "2"), ("first", "1")]));
    let past = server.get("/v1/repos?per_page=2&page=4", s).await;
    assert_eq!(har::names(&past), Vec::<String>::new());
}
