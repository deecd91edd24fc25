//! A timestamp answered a sent number of seconds after the answer's own moment (an invite's
//! `expires_at`, its `expires_in` after it was made), end to end: synth learns the clock hole
//! with `after` from recordings whose spans differ, and the served twin answers a create with
//! the span this request sent, not the moment of the request nor a recorded span. Black-box:
//! the real binary on a HAR written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://invites.clock.test";

fn invite(id: &str, created: &str, expires: &str) -> Value {
    json!({"id": id, "created_at": created, "expires_at": expires})
}

fn invites_twin() -> Twin {
    let t = Twin::init("invites", ORIGIN);
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/api/invites",
            Some(&json!({"note": "a", "expires_in": 3600})),
            &invite("1", "2026-05-01T10:00:00.120Z", "2026-05-01T11:00:00.118Z"),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/api/invites",
            Some(&json!({"note": "b", "expires_in": 60})),
            &invite("2", "2026-05-01T10:05:00.500Z", "2026-05-01T10:06:00.499Z"),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/api/invites",
            Some(&json!({"note": "c", "expires_in": 86400})),
            &invite("3", "2026-05-01T10:09:00.000Z", "2026-05-02T10:09:00.000Z"),
        ),
    ];
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

fn instant(v: &Value) -> jiff::Timestamp {
    v.as_str().unwrap().parse().unwrap()
}

#[tokio::test]
async fn an_expiry_lies_the_sent_span_after_the_answer() {
    let t = invites_twin();
    let route = har::model_route(&t, "POST", "/api/invites");
    let text = route.to_string();
    assert!(
        text.contains(r#""after":{"in":"body","pointer":"/expires_in"}"#),
        "{text}"
    );

    let server = t.serve(&[]);
    let made = server
        .post(
            "/api/invites",
            Some("s"),
            json!({"note": "mine", "expires_in": 7200}),
        )
        .await;
    made.assert_status(200);
    let made = made.json();
    let span = instant(&made["expires_at"]).duration_since(instant(&made["created_at"]));
    assert_eq!(span.as_secs(), 7200, "{made}");

    // Without a span sent, the expiry is the clock's own moment.
    let bare = server
        .post("/api/invites", Some("s"), json!({"note": "now"}))
        .await
        .json();
    let span = instant(&bare["expires_at"]).duration_since(instant(&bare["created_at"]));
    assert_eq!(span.as_secs(), 0, "{bare}");
}
