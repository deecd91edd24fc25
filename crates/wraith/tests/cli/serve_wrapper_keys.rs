//! `wraith serve` minting the key of a record an action answers around the record it acts
//! on, when the wrapper is a record of the same type (a reblog is a post wrapping the post):
//! the wrapper's key counts in the type's one sequence, above every recorded post, not above
//! only the wrappers the action recorded, which came before most posts
//! (`synth/src/variants.rs`, `mint_wrapper_key`). Black-box: the real binary on HARs written
//! here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "wrapper-keys-test-key");
const ORIGIN: &str = "https://api.posts.test";

fn post(id: u64, text: &str, reblogs: u64, reblog: Value) -> Value {
    json!({"id": id.to_string(), "text": text, "reblogs_count": reblogs, "reblog": reblog})
}

/// Runs 1 and 2 each post (keys 1010, 1020), read the post and reblog it (wrappers 1011,
/// 1021); run 3 posts three times (keys 5000 to 5002).
fn posts_twin() -> Twin {
    har::synth_twin("posts", ORIGIN, &[KEY], 3, |t, n| {
        let e = |method: &str, p: &str, body: Option<&Value>, answer: &Value| {
            har::entry(ORIGIN, method, p, body, answer)
        };
        // A create of post `id` reading `text`.
        let create = |id: u64, text: &str| {
            let sent = json!({"text": text});
            e(
                "POST",
                "/v1/posts",
                Some(&sent),
                &post(id, text, 0, Value::Null),
            )
        };
        let mut entries = Vec::new();
        if n < 3 {
            let id = 1000 + 10 * n;
            let text = format!("post {n}");
            entries.push(create(id, &text));
            let path = format!("/v1/posts/{id}");
            entries.push(e("GET", &path, None, &post(id, &text, 0, Value::Null)));
            let wrapped = post(id, &text, 1, Value::Null);
            entries.push(e(
                "POST",
                &format!("{path}/reblog"),
                None,
                &post(id + 1, &text, 0, wrapped),
            ));
        } else {
            for id in 5000..5003 {
                entries.push(create(id, &format!("later post {id}")));
            }
        }
        har::import(t, &[KEY], &format!("s{n}.har"), entries);
    })
}

fn key(v: &Value) -> u64 {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a key: {v}"))
}

#[tokio::test]
async fn a_reblog_mints_its_wrapper_above_every_recorded_post_in_the_posts_sequence() {
    let t = posts_twin();
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-1");
    let created = server.post("/v1/posts", s, json!({"text": "mine"})).await;
    created.assert_status(200);
    let mine = key(&created.json()["id"]);
    assert!(mine > 5002, "above every recorded post: {mine}");
    let reblogged = server
        .post(&format!("/v1/posts/{mine}/reblog"), s, json!({}))
        .await;
    reblogged.assert_status(200);
    let body = reblogged.json();
    assert_eq!(key(&body["reblog"]["id"]), mine, "{body}");
    let wrapper = key(&body["id"]);
    assert!(wrapper > mine, "the wrapper is the type's next key: {body}");
    let next = server.post("/v1/posts", s, json!({"text": "after"})).await;
    let after = key(&next.json()["id"]);
    assert!(after > wrapper, "one sequence: {after} after {wrapper}");
}
