//! `wraith serve` never repeats an `X-Wraith-*` header a recording carries: recorded from an
//! upstream that was itself a twin, an answer holds the upstream twin's provenance, which would
//! stand beside this twin's own with another word (and survive `--no-provenance-headers`).
//! Black-box: the real binary on a HAR run written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.upstream-twin.test";

fn twin_of_a_twin() -> Twin {
    let t = Twin::init("copy", ORIGIN);
    let mut e = har::entry(ORIGIN, "GET", "/v1/things/1", None, &json!({"id": "1"}));
    let headers = e["response"]["headers"].as_array_mut().unwrap();
    headers.push(json!({"name": "X-Wraith-Provenance", "value": "template"}));
    headers.push(json!({"name": "X-Wraith-Route", "value": "GET /v1/things/:id"}));
    har::import(&t, &[], "run.har", vec![e]);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_recorded_control_header_is_never_served() {
    let t = twin_of_a_twin();
    let server = t.serve(&[]);
    let r = server.get("/v1/things/1", Some("agent")).await;
    r.assert_status(200);
    // Exactly one value of each control header: this twin's.
    assert_eq!(
        r.headers.get("x-wraith-provenance"),
        Some(&vec!["recorded".to_string()]),
        "{:?}",
        r.headers
    );
    assert_eq!(
        r.headers.get("x-wraith-route"),
        Some(&vec!["GET /v1/things/:param".to_string()]),
        "{:?}",
        r.headers
    );

    let quiet = t.serve(&["--no-provenance-headers"]);
    let r = quiet.get("/v1/things/1", Some("agent")).await;
    r.assert_status(200);
    assert!(
        !r.headers.contains_key("x-wraith-provenance") && !r.headers.contains_key("x-wraith-route"),
        "{:?}",
        r.headers
    );
}
