//! `wraith serve` listing a collection gathered from several recorded runs in key order: each
//! run's page listed its posts newest first, so a page the twin serves itself interleaves the
//! runs' posts newest first too, instead of one run's page after the other's. Black-box: the
//! real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

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

#[tokio::test]
async fn a_collection_recorded_across_runs_is_served_in_key_order() {
    let t = Twin::init("posts", ORIGIN);
    let runs: [(&str, &str, &[&str]); 2] = [
        ("a", "", &["1005", "1003"]),
        ("b", "?local=1", &["1006", "1004"]),
    ];
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
    let server = t.serve(&[]);
    // No recording sent this query: the twin pages the collection itself.
    let page = server.get("/v1/timeline?remote=1", Some("s1")).await;
    page.assert_status(200);
    assert_eq!(page.provenance(), Some("template"));
    let keys: Vec<String> = page
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(keys, ["1006", "1005", "1004", "1003"]);
}
