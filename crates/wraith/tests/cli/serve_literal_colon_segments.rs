//! A path segment a client sent starting with `:` (a URL template it forgot to fill in,
//! `/v1/:me`) is a literal of its route, never a parameter: the model spells it `%3Ame`, the
//! twin answers that path from its recording and every other path of the shape with the
//! route-miss refusal, and `check` and `coverage` attribute the recorded exchanges to their
//! routes. Before, the segment was copied into the template as is, where it reads as a
//! parameter, and every `/v1/<anything>` got a made-up 200. Black-box: the real binary on a
//! HAR written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "literal-colon-segments-test-key");
const ORIGIN: &str = "https://api.colon.test";

fn colon_twin() -> Twin {
    let t = Twin::init("colon", ORIGIN);
    let e = |p: &str, answer: serde_json::Value| har::entry(ORIGIN, "GET", p, None, &answer);
    let entries = vec![
        e("/v1/:me", json!({"user": "me"})),
        e("/v1/items", json!({"items": []})),
        e("/v1/:me", json!({"user": "me"})),
    ];
    har::import(&t, &[KEY], "colon.har", entries);
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn a_recorded_colon_segment_is_a_literal_not_a_catch_all_parameter() {
    let t = colon_twin();
    let model: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.root.join("model/twin.wir.json")).unwrap())
            .unwrap();
    let mut paths: Vec<&str> = model["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(paths, ["/v1/%3Ame", "/v1/items"]);

    let server = t.serve_env(&[], &[KEY]);
    let me = server.get("/v1/:me", Some("a")).await;
    me.assert_status(200);
    assert_eq!(me.json(), json!({"user": "me"}));
    assert_eq!(me.header("x-wraith-provenance"), Some("recorded"));
    assert_eq!(me.header("x-wraith-route"), Some("GET /v1/%3Ame"));
    for other in ["/v1/users", "/v1/anything-at-all", "/v1/:you"] {
        let miss = server.get(other, Some("a")).await;
        miss.assert_status(501);
        assert_eq!(miss.header("x-wraith-provenance"), Some("miss"), "{other}");
    }

    let report = t.check_report();
    assert_eq!(report["score_bp"], 10000, "{report:#}");
    let coverage = t.wraith(&["coverage", &t.path_str(), "--json"]);
    let coverage: serde_json::Value = serde_json::from_slice(&coverage.stdout).unwrap();
    assert_eq!(coverage["routes_exercised"], 2, "{coverage:#}");
}
