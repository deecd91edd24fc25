//! Random URL-safe base64 tokens (a registered client's pairing token or secret) are generated
//! values: synth learns their shape from the recordings, and the served twin answers a new
//! registration with a fresh token of that shape rather than replaying a recorded one. (The
//! field is not named as a secret, whose value the outbound policy would replace with an
//! envelope.)
//! Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "secret-tokens-test-key");
const ORIGIN: &str = "https://api.clients.test";
const RECORDED: [&str; 2] = [
    "uXrY0Cwg-KRRWz8L9-76lA9DyStb48o0s1VhsLEhmrY",
    "7XPQ9maCOu1tb8LjEThbp0IQP6NejrKjGem9fp6AjtQ",
];

#[tokio::test]
async fn a_served_registration_answers_a_fresh_secret_of_the_recorded_shape() {
    let t = Twin::init("clients", ORIGIN);
    for (n, secret) in RECORDED.iter().enumerate() {
        let name = format!("app {n}");
        har::import(
            &t,
            &[KEY],
            &format!("s{n}.har"),
            vec![har::entry(
                ORIGIN,
                "POST",
                "/v1/clients",
                Some(&json!({"name": name})),
                &json!({"id": format!("{}", n + 2), "name": name, "pairing": secret}),
            )],
        );
    }
    har::synth(&t, &[KEY]);
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post("/v1/clients", Some("agent-1"), json!({"name": "new app"}))
        .await;
    created.assert_status(200);
    let v = created.json();
    let Some(Value::String(secret)) = v.get("pairing") else {
        panic!("no pairing token: {v}")
    };
    assert!(!RECORDED.contains(&secret.as_str()), "replayed {secret}");
    assert_eq!(secret.len(), 43, "{secret}");
    assert!(
        secret
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "{secret}"
    );
}
