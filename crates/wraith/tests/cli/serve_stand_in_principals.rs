//! Credentials no recording sent (a developer's own token, a token the twin minted) stand in
//! for a recorded principal, so a session speaking with them sees one consistent user: its
//! first such credential plays the recordings' most active principal it has not spoken as,
//! the next the one after. Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.people.test";
const ALICE: &str = "Bearer tok_alice_recorded";
const BOB: &str = "Bearer tok_bob_recorded";

fn me(name: &str) -> Value {
    json!({"id": format!("u_{name}"), "username": name})
}

/// Alice's runs read who she is three times, Bob's once: Alice is the most active.
fn people_twin() -> Twin {
    let t = Twin::init("people", ORIGIN);
    for (n, (token, name)) in [
        (ALICE, "alice"),
        (ALICE, "alice"),
        (ALICE, "alice"),
        (BOB, "bob"),
    ]
    .into_iter()
    .enumerate()
    {
        // Each run an hour apart: one run recorded again is not a copy of another.
        let mut e = har::by(
            token,
            200,
            har::entry(ORIGIN, "GET", "/v1/me", None, &me(name)),
        );
        e["startedDateTime"] = json!(format!("2026-06-01T1{n}:00:00.000Z"));
        har::import(&t, &[], &format!("run{n}.har"), vec![e]);
    }
    har::synth(&t, &[]);
    t
}

async fn who(server: &support::Server, session: &str, token: &str) -> Value {
    let r = server
        .send(
            "GET",
            "/v1/me",
            Some(session),
            &[("Authorization", token)],
            None,
        )
        .await;
    r.assert_status(200);
    r.json()["username"].clone()
}

#[tokio::test]
async fn a_sessions_unrecorded_credentials_play_the_recorded_principals_most_active_first() {
    let t = people_twin();
    let server = t.serve(&[]);
    // The first unrecorded token is Alice, and stays Alice; the second is Bob.
    assert_eq!(who(&server, "dev", "Bearer my-token").await, "alice");
    assert_eq!(who(&server, "dev", "Bearer my-token").await, "alice");
    assert_eq!(who(&server, "dev", "Bearer my-other-token").await, "bob");
    assert_eq!(who(&server, "dev", "Bearer my-token").await, "alice");
    // Recorded tokens are who they were recorded as.
    assert_eq!(who(&server, "dev", BOB).await, "bob");
    // A session that spoke as Alice first gets Bob for its unrecorded token.
    assert_eq!(who(&server, "mixed", ALICE).await, "alice");
    assert_eq!(who(&server, "mixed", "Bearer my-token").await, "bob");
    // Past the recorded principals, a token is a principal of its own, served from the
    // recorded credentialed answers.
    let third = who(&server, "mixed", "Bearer third-token").await;
    assert!(third == "alice" || third == "bob", "{third}");
}
