//! `wraith serve` answering a read of a singleton path (`/profile`) with what the session last
//! wrote there, learned where every recorded write answered the resource the read answers
//! although no recorded session read the path after writing it (`Route::last_write_wins`).
//! Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.settings.test";

fn profile(timezone: &str) -> Value {
    json!({"uid": 7, "username": "ann", "timezone": timezone, "email_notifications": true})
}

/// One run reads the profile, another writes it; neither reads it after the write.
fn twin() -> Twin {
    let write = har::entry(
        ORIGIN,
        "PUT",
        "/profile",
        Some(&json!({"timezone": "UTC"})),
        &profile("UTC"),
    );
    let read = har::entry(ORIGIN, "GET", "/profile", None, &profile("GMT"));
    har::runs_twin("settings", ORIGIN, vec![vec![read], vec![write]])
}

#[tokio::test]
async fn a_singleton_read_after_the_sessions_write_answers_what_the_write_answered() {
    let t = twin();
    let server = t.serve(&[]);
    let sent = json!({"timezone": "Europe/Berlin"});
    let wrote = server
        .send("PUT", "/profile", Some("agent"), &[], Some(sent))
        .await;
    wrote.assert_status(200);
    assert_eq!(wrote.json()["timezone"], "Europe/Berlin");
    let read = server.get("/profile", Some("agent")).await;
    read.assert_status(200);
    assert_eq!(read.json(), wrote.json());
    // Another session still reads the recorded profile.
    let other = server.get("/profile", Some("other")).await;
    other.assert_status(200);
    assert_eq!(other.json(), profile("GMT"));
}
