//! Retried writes end to end: every recorded run sent its migration several times as the
//! identical request and was refused ("busy") until it was accepted. Synth keeps the route's
//! recorded runs, and the served twin answers a migration of a server no run recorded with the
//! recorded series: refused, then accepted. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "retried-writes-test-key");
const ORIGIN: &str = "https://api.servers.test";

/// One migrate request answered `status` (a refusal carries the API's error body).
fn migrate(id: u32, region: &str, status: u16) -> Value {
    let answer = if status == 200 {
        json!({})
    } else {
        json!({"errors": [{"reason": "Server busy."}]})
    };
    let mut e = har::entry(
        ORIGIN,
        "POST",
        &format!("/v1/servers/{id}/migrate"),
        Some(&json!({"region": region})),
        &answer,
    );
    e["response"]["status"] = json!(status);
    e
}

/// Three recorded sessions, each migrating its own server until accepted.
fn servers_twin() -> Twin {
    let t = Twin::init("servers", ORIGIN);
    for (i, (id, region, statuses)) in [
        (7, "north", &[400, 400, 200][..]),
        (8, "south", &[400, 400, 200][..]),
        (9, "east", &[400, 200, 200][..]),
    ]
    .into_iter()
    .enumerate()
    {
        let entries = statuses.iter().map(|s| migrate(id, region, *s)).collect();
        har::import(&t, &[KEY], &format!("s{i}.har"), entries);
    }
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn a_served_write_every_run_retried_until_accepted_is_refused_then_accepted() {
    let t = servers_twin();
    let server = t.serve_env(&[], &[KEY]);
    let mut statuses = Vec::new();
    for _ in 0..4 {
        let r = server
            .post(
                "/v1/servers/42/migrate",
                Some("agent"),
                json!({"region": "west"}),
            )
            .await;
        statuses.push(r.status);
    }
    // The runs' series, each refused first and accepted last: [400, 400, 200] twice and
    // [400, 200, 200]; the median (by length, then order) is [400, 400, 200], its last repeated.
    assert_eq!(statuses, vec![400, 400, 200, 200]);
}
