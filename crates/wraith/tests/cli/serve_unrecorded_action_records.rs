//! An action on a record neither the session nor the recordings hold, answered by rendering
//! the record: the session holds the record as answered, so its later reads and actions agree
//! with the answer. In the recordings each run follows and unfollows its own tag, reading it
//! between; a session that follows a tag no run recorded reads it followed, and unfollowed
//! after its unfollow. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "unrecorded-action-records-test-key");
const ORIGIN: &str = "https://social.tags.test";

/// Run `n`: read tag `tag-n`, follow it, read it, unfollow it, read it.
fn tags_twin() -> Twin {
    har::synth_twin("tags", ORIGIN, &[KEY], 3, |t, n| {
        let name = format!("tag-{n}");
        let path = format!("/api/v1/tags/{name}");
        let tag = |following: bool| json!({"name": name, "url": format!("{ORIGIN}/tags/{name}"), "following": following});
        let e = |method: &str, p: &str, answer: &serde_json::Value| {
            har::entry(ORIGIN, method, p, None, answer)
        };
        let entries = vec![
            e("GET", &path, &tag(false)),
            e("POST", &format!("{path}/follow"), &tag(true)),
            e("GET", &path, &tag(true)),
            e("POST", &format!("{path}/unfollow"), &tag(false)),
            e("GET", &path, &tag(false)),
        ];
        har::import(t, &[KEY], &format!("s{n}.har"), entries);
    })
}

#[tokio::test]
async fn an_action_on_a_record_no_run_recorded_leaves_it_as_answered_for_later_reads() {
    let t = tags_twin();
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-1");
    let followed = server
        .post("/api/v1/tags/rustlang/follow", s, json!({}))
        .await;
    followed.assert_status(200);
    assert_eq!(followed.json()["name"], "rustlang", "{}", followed.json());
    assert_eq!(followed.json()["following"], true, "{}", followed.json());
    let read = server.get("/api/v1/tags/rustlang", s).await;
    read.assert_status(200);
    assert_eq!(read.json()["following"], true, "{}", read.json());
    let unfollowed = server
        .post("/api/v1/tags/rustlang/unfollow", s, json!({}))
        .await;
    unfollowed.assert_status(200);
    assert_eq!(
        unfollowed.json()["following"],
        false,
        "{}",
        unfollowed.json()
    );
    let read = server.get("/api/v1/tags/rustlang", s).await;
    assert_eq!(read.json()["following"], false, "{}", read.json());
    let other = server.get("/api/v1/tags/rustlang", Some("agent-2")).await;
    assert_eq!(
        other.json()["following"],
        false,
        "another session: {}",
        other.json()
    );
}
