//! A path of many id segments (`/a/1/b/2/…`, as some file and tree APIs nest) synthesizes
//! into a route template with one parameter per id. The router's trie takes at most 25
//! parameters per template and used to panic on the 26th, taking `check` and `serve` down
//! with it; longer templates are matched segment by segment instead. Black-box: the real
//! binary on a HAR written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.deep-paths.test";

/// `/seg0/<id>/seg1/<id>/…`, `params` literal-and-id pairs, ids starting at `first`.
fn path(params: usize, first: usize) -> String {
    (0..params)
        .map(|i| format!("/seg{i}/{}", first + i))
        .collect()
}

fn long_twin(params: usize) -> Twin {
    let t = Twin::init("deep-paths", ORIGIN);
    let entries = (0..4)
        .map(|run| {
            let p = path(params, 1000 * (run + 1));
            har::entry(ORIGIN, "GET", &p, None, &json!({"path": p}))
        })
        .collect();
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

#[test]
fn a_route_of_thirty_path_parameters_is_checked_without_a_panic() {
    let t = long_twin(30);
    let model = std::fs::read_to_string(t.path().join("model/twin.wir.json")).unwrap();
    assert!(
        model.contains("/seg29/:"),
        "the template holds the last segment's parameter"
    );
    let out = std::process::Command::new(support::bin())
        .current_dir(t.path())
        .args(["check", &t.path_str()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn serve_matches_a_route_of_thirty_path_parameters() {
    let t = long_twin(30);
    let server = t.serve(&[]);
    let recorded = path(30, 1000);
    let r = server.get(&recorded, Some("s")).await;
    r.assert_status(200);
    assert_eq!(r.provenance(), Some("recorded"));
    // A path of the same shape no recording made is matched to the route too.
    let unseen = path(30, 7000);
    let r = server.get(&unseen, Some("s")).await;
    assert_ne!(
        r.status,
        501,
        "matched no route: {}",
        String::from_utf8_lossy(&r.body)
    );
    // One segment fewer matches nothing.
    let short = path(30, 1000);
    let short = &short[..short.rfind('/').unwrap()];
    let r = server.get(short, Some("s")).await;
    r.assert_status(501);
}
