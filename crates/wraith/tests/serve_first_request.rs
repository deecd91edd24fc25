//! A session's first request answered from the recorded runs that began with it: two runs read
//! a page after another request and got one answer, one run read it first and got another.
//! A fresh session reading it first has that one run's history (none) and gets its answer,
//! though the majority answered otherwise; a session that sent the other request first gets
//! the majority's. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "first-request-test-key");
const ORIGIN: &str = "https://api.stock.test";

fn stock_twin() -> Twin {
    let t = Twin::init("stock", ORIGIN);
    let shelves = json!({"data": [{"id": "s1"}], "results": 1});
    let later = json!({"data": [], "results": 0});
    let first = json!({"data": [{"item": "bolt"}, {"item": "nut"}], "results": 2});
    for n in 1..=2 {
        let entries = vec![
            har::entry(ORIGIN, "GET", "/v1/shelves", None, &shelves),
            har::entry(ORIGIN, "GET", "/v1/stock", None, &later),
        ];
        har::import(&t, &[KEY], &format!("after{n}.har"), entries);
    }
    let entries = vec![
        har::entry(ORIGIN, "GET", "/v1/stock", None, &first),
        har::entry(ORIGIN, "GET", "/v1/shelves", None, &shelves),
    ];
    har::import(&t, &[KEY], "first.har", entries);
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn a_first_request_gets_the_answer_of_the_run_that_began_with_it() {
    let t = stock_twin();
    let server = t.serve_env(&[], &[KEY]);
    let stock = server.get("/v1/stock", Some("fresh")).await;
    stock.assert_status(200);
    assert_eq!(stock.json()["results"], json!(2), "{}", stock.json());

    let shelves = server.get("/v1/shelves", Some("browsing")).await;
    shelves.assert_status(200);
    let stock = server.get("/v1/stock", Some("browsing")).await;
    stock.assert_status(200);
    assert_eq!(stock.json()["results"], json!(0), "{}", stock.json());
}
