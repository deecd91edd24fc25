//! `wraith serve` paging a timeline itself, from the collection its recorded pages make: a
//! parameter the recordings show bounding the list from below (`since_id` reads listed only the
//! posts keyed above the value) lists just the posts above a value no recording sent (a client
//! polling with the newest id it holds gets nothing new, not the whole timeline again); and
//! the posts several runs recorded come newest first, interleaved, as each recorded page
//! lists them, not one run's page after another's. Black-box: the real binary on HAR runs
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.posts.test";

fn posts(keys: &[&str]) -> Value {
    Value::Array(
        keys.iter()
            .map(|k| json!({"id": k, "text": format!("post {k}")}))
            .collect(),
    )
}

/// A twin of the runs `(name, query, keys)`: each one `GET /v1/timeline?query` answering the
/// posts keyed `keys`.
fn timeline_twin(runs: &[(&str, &str, &[&str])]) -> Twin {
    let t = Twin::init("posts", ORIGIN);
    for (run, query, keys) in runs {
        let e = har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/timeline{query}"),
            None,
            &posts(keys),
        );
        har::import(&t, &[], &format!("{run}.har"), vec![e]);
    }
    har::synth(&t, &[]);
    t
}

fn keys(r: &support::Resp) -> Vec<String> {
    r.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_lower_bound_no_recording_sent_lists_only_the_items_above_it() {
    let t = timeline_twin(&[
        ("a", "", &["1007", "1005", "1003", "1001"]),
        ("b", "?since_id=1004", &["1007", "1005"]),
        ("c", "?since_id=1006", &["1007"]),
    ]);
    let server = t.serve(&[]);
    let above = server.get("/v1/timeline?since_id=1002", Some("s1")).await;
    above.assert_status(200);
    assert_eq!(keys(&above), ["1007", "1005", "1003"]);
    let newest = server.get("/v1/timeline?since_id=1007", Some("s1")).await;
    newest.assert_status(200);
    assert_eq!(keys(&newest), Vec::<String>::new());
}

#[tokio::test]
async fn a_collection_recorded_across_runs_is_served_in_key_order() {
    let t = timeline_twin(&[
        ("a", "", &["1005", "1003"]),
        ("b", "?local=1", &["1006", "1004"]),
    ]);
    let server = t.serve(&[]);
    // No recording sent this query: the twin pages the collection itself.
    let page = server.get("/v1/timeline?remote=1", Some("s1")).await;
    page.assert_status(200);
    assert_eq!(page.provenance(), Some("template"));
    assert_eq!(keys(&page), ["1006", "1005", "1004", "1003"]);
}
