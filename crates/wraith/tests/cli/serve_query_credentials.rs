//! A credential sent in the query (`?api_key=…`) is a credential, not an input: recordings
//! hold it tokenized and the twin validates none, so a client's own key (or the real one) is
//! replayed from the recording its other parameters name. Black-box: the real binary on a
//! HAR written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "query-credentials-test-key");
const ORIGIN: &str = "https://api.weather.test";

#[tokio::test]
async fn a_clients_own_query_key_replays_the_recorded_answer() {
    let t = Twin::init("weather", ORIGIN);
    let current = |city: &str, temp: i64| {
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/current?api_key=REAL-KEY-123&city={city}"),
            None,
            &json!({"city": city, "temp": temp}),
        )
    };
    har::import(
        &t,
        &[KEY],
        "w.har",
        vec![current("paris", 12), current("oslo", -3)],
    );
    har::synth(&t, &[KEY]);
    let server = t.serve_env(&[], &[KEY]);
    for query in [
        "api_key=my-own-key&city=oslo",
        "city=oslo&api_key=REAL-KEY-123",
        "city=oslo",
    ] {
        let r = server
            .get(&format!("/v1/current?{query}"), Some("dev"))
            .await;
        r.assert_status(200);
        assert_eq!(r.provenance(), Some("recorded"), "{query}");
        assert_eq!(r.json(), json!({"city": "oslo", "temp": -3}), "{query}");
    }
}

#[test]
fn the_exact_key_leaves_out_the_query_parameters_the_scrubber_tokenizes() {
    let names = wraith_recording::scrub::BUILTIN_SECRET_PARAMS
        .iter()
        .chain(&["key", "sig", "X-Amz-Signature", "apiKey", "user[password]"]);
    for name in names {
        assert!(
            wraith_recording::scrub::is_secret_param_name(name),
            "{name}"
        );
        let query = format!("city=oslo&{name}=REAL-KEY-123");
        assert_eq!(
            wraith_model::request_key::normalize_query(&query),
            "city=oslo",
            "{name}"
        );
    }
    for kept in ["page_token", "idempotency_key", "token_type"] {
        assert!(
            !wraith_recording::scrub::is_secret_param_name(kept),
            "{kept}"
        );
        let query = format!("{kept}=v");
        assert_eq!(wraith_model::request_key::normalize_query(&query), query);
    }
}
