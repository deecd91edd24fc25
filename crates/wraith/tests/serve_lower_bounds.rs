//! `wraith serve` bounding a list from below by a parameter the recordings show doing so:
//! recorded `since_id=…` reads of a timeline listed only the posts keyed above the value, so a
//! value no recording sent lists just the posts above it (a client polling with the newest id
//! it holds gets nothing new, not the whole timeline again). Black-box: the real binary on HAR
//! runs written here.
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

fn timeline_twin() -> Twin {
    let t = Twin::init("posts", ORIGIN);
    let runs: [(&str, &str, &[&str]); 3] = [
        ("a", "", &["1007", "1005", "1003", "1001"]),
        ("b", "?since_id=1004", &["1007", "1005"]),
        ("c", "?since_id=1006", &["1007"]),
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
    let t = timeline_twin();
    let server = t.serve(&[]);
    let above = server.get("/v1/timeline?since_id=1002", Some("s1")).await;
    above.assert_status(200);
    assert_eq!(keys(&above), ["1007", "1005", "1003"]);
    let newest = server.get("/v1/timeline?since_id=1007", Some("s1")).await;
    newest.assert_status(200);
    assert_eq!(keys(&newest), Vec::<String>::new());
}
