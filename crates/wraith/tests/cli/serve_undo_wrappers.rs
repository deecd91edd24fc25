//! `wraith serve` deleting the record an action made around the record it acted on when a
//! later action undoes it: a reblog is a post wrapping the post, which the session then reads
//! and lists; the unreblog (the post's `reblogged` back to `false`) takes it away again, as
//! the API does, though no recording read the list after an unreblog
//! (`synth/src/undo_wrappers.rs`, `ActionEffect::undoes_wrappers`). Black-box: the real
//! binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "undo-wrappers-test-key");
const ORIGIN: &str = "https://api.posts.test";

fn post(id: u64, text: &str, reblogged: bool, reblog: Value) -> Value {
    json!({"id": id.to_string(), "text": text, "reblogged": reblogged, "reblog": reblog})
}

/// Run `n` posts (key `100n`), lists the posts, reblogs the post (wrapper `100n+1`), reads the
/// wrapper, lists both, unreblogs and reads the post.
fn posts_twin() -> Twin {
    har::synth_twin("posts", ORIGIN, &[KEY], 3, |t, n| {
        let e = |method: &str, p: &str, body: Option<&Value>, answer: &Value| {
            har::entry(ORIGIN, method, p, body, answer)
        };
        let id = 100 * n;
        let text = format!("post {n}");
        let path = format!("/v1/posts/{id}");
        let plain = post(id, &text, false, Value::Null);
        let wrapper = post(id + 1, &text, true, post(id, &text, true, Value::Null));
        let entries = vec![
            e("POST", "/v1/posts", Some(&json!({"text": text})), &plain),
            e("GET", "/v1/posts", None, &json!([plain])),
            e("POST", &format!("{path}/reblog"), None, &wrapper),
            e("GET", &format!("/v1/posts/{}", id + 1), None, &wrapper),
            e(
                "GET",
                "/v1/posts",
                None,
                &json!([wrapper, post(id, &text, true, Value::Null)]),
            ),
            e("POST", &format!("{path}/unreblog"), None, &plain),
            e("GET", &path, None, &plain),
        ];
        har::import(t, &[KEY], &format!("s{n}.har"), entries);
    })
}

#[tokio::test]
async fn an_unreblog_deletes_the_reblog_its_reblog_made() {
    let t = posts_twin();
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-1");
    let created = server.post("/v1/posts", s, json!({"text": "mine"})).await;
    created.assert_status(200);
    let mine = created.json()["id"].as_str().unwrap().to_string();
    let reblogged = server
        .post(&format!("/v1/posts/{mine}/reblog"), s, json!({}))
        .await;
    reblogged.assert_status(200);
    let wrapper = reblogged.json()["id"].as_str().unwrap().to_string();
    assert_ne!(wrapper, mine);
    let listed = support::item_ids(&server.get("/v1/posts", s).await.json());
    assert!(
        listed.contains(&wrapper),
        "the reblog is listed: {listed:?}"
    );
    server
        .get(&format!("/v1/posts/{wrapper}"), s)
        .await
        .assert_status(200);

    let undone = server
        .post(&format!("/v1/posts/{mine}/unreblog"), s, json!({}))
        .await;
    undone.assert_status(200);
    assert_eq!(undone.json()["reblogged"], json!(false));
    let listed = support::item_ids(&server.get("/v1/posts", s).await.json());
    assert!(!listed.contains(&wrapper), "the reblog is gone: {listed:?}");
    assert!(listed.contains(&mine), "the post stays: {listed:?}");
    server
        .get(&format!("/v1/posts/{wrapper}"), s)
        .await
        .assert_status(404);

    // Reblogged again: a new reblog, listed; another session never saw any of it.
    let again = server
        .post(&format!("/v1/posts/{mine}/reblog"), s, json!({}))
        .await;
    let second = again.json()["id"].as_str().unwrap().to_string();
    let listed = support::item_ids(&server.get("/v1/posts", s).await.json());
    assert!(listed.contains(&second), "{listed:?}");
    let other = support::item_ids(&server.get("/v1/posts", Some("agent-2")).await.json());
    assert!(
        !other.contains(&second) && !other.contains(&mine),
        "{other:?}"
    );
}
