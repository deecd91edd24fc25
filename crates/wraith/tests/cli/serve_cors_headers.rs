//! An API's CORS headers reach a browser client of its twin as the API sent them: the
//! credential scrubbing that judges a header by the last word of its name leaves the Fetch
//! standard's `Access-Control-*` headers alone (`Access-Control-Allow-Credentials` must read
//! `true`, or a browser refuses the answer).
//! Black-box: the real binary on a HAR written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "cors-headers-test-key");
const ORIGIN: &str = "https://api.cors.test";

const CORS: [(&str, &str); 3] = [
    ("Access-Control-Allow-Origin", "https://app.cors.test"),
    ("Access-Control-Allow-Credentials", "true"),
    (
        "Access-Control-Allow-Headers",
        "Authorization, Content-Type",
    ),
];

#[tokio::test]
async fn cors_headers_naming_credentials_are_recorded_and_served_as_the_api_sent_them() {
    let t = Twin::init("cors", ORIGIN);
    let mut entry = har::entry(
        ORIGIN,
        "GET",
        "/v1/widgets/7",
        None,
        &json!({"id": "7", "name": "gear"}),
    );
    let headers = entry["response"]["headers"].as_array_mut().unwrap();
    for (name, value) in CORS {
        headers.push(json!({"name": name, "value": value}));
    }
    har::import(&t, &[KEY], "cors.har", vec![entry]);
    let sessions = wraith_recording::read_sessions(&t.path().join("recordings/sessions")).unwrap();
    let recorded = &sessions[0].exchanges[0];
    for (name, value) in CORS {
        assert_eq!(
            recorded.response_header(&name.to_ascii_lowercase()),
            Some(value),
            "{name} as recorded"
        );
    }
    har::synth(&t, &[KEY]);
    let server = t.serve_env(&[], &[KEY]);
    let r = server.get("/v1/widgets/7", Some("browser-1")).await;
    r.assert_status(200);
    for (name, value) in CORS {
        assert_eq!(r.header(name), Some(value), "{name} as served");
    }
}
