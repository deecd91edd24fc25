//! `wraith serve` listing a record the session created under the parent its answer names in
//! an object: every recorded item of `/accounts/:id/statuses` named that account as its
//! `account.id`, so a status the session posts (a create whose path names no account) is
//! listed first in its author's statuses. Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.posts.test";
const AUTHOR: &str = "7001";

fn status(id: &str, text: &str) -> Value {
    json!({"id": id, "content": text, "account": {"id": AUTHOR, "username": "poster"}})
}

/// Two runs, each posting a status and listing the author's statuses (the new one first).
fn posts_twin() -> Twin {
    let t = Twin::init("posts", ORIGIN);
    for (run, day, id, older) in [("a", 1, "9101", "9001"), ("b", 2, "9202", "9002")] {
        let text = format!("post {run}");
        let mine = status(id, &text);
        let mut entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/v1/statuses",
                Some(&json!({"status": text})),
                &mine,
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/v1/accounts/{AUTHOR}/statuses"),
                None,
                &json!([mine, status(older, "an older post")]),
            ),
        ];
        for e in &mut entries {
            e["startedDateTime"] = json!(format!("2026-06-0{day}T12:00:00.000Z"));
        }
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_posted_status_is_listed_first_in_its_authors_statuses() {
    let t = posts_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let created = server
        .post("/v1/statuses", s, json!({"status": "fresh words"}))
        .await;
    created.assert_status(200);
    let created = created.json();
    assert_eq!(created["account"]["id"], AUTHOR, "{created}");
    let listed = server
        .get(&format!("/v1/accounts/{AUTHOR}/statuses"), s)
        .await;
    listed.assert_status(200);
    let listed = listed.json();
    let first = &listed[0];
    assert_eq!(first["id"], created["id"], "{listed}");
    assert_eq!(first["content"], "fresh words", "{listed}");
    // Another session's list does not show it.
    let other = server
        .get(&format!("/v1/accounts/{AUTHOR}/statuses"), Some("other"))
        .await
        .json();
    assert!(
        other
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["id"] != created["id"]),
        "{other}"
    );
}
