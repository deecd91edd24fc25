//! An action that undoes another takes its record out of the list the other put it in, though
//! no recording read the list after the undo. In the recordings a follow answers the tag
//! `following: true` and the next read of the followed list lists it; an unfollow answers it
//! `following: false`. A session that follows a tag and unfollows it lists it no more.
//! Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "undo-members-test-key");
const ORIGIN: &str = "https://social.follows.test";

/// Run `n`: read tag `tag-n`, read the followed list, follow the tag, read the list, unfollow
/// the tag, read it.
fn follows_twin() -> Twin {
    har::synth_twin("follows", ORIGIN, &[KEY], 3, |t, n| {
        let name = format!("tag-{n}");
        let path = format!("/api/v1/tags/{name}");
        let tag = |following: bool| json!({"name": name, "following": following, "uses": n});
        let e = |method: &str, p: &str, answer: &Value| har::entry(ORIGIN, method, p, None, answer);
        let entries = vec![
            e("GET", &path, &tag(false)),
            e("GET", "/api/v1/followed_tags", &json!([])),
            e("POST", &format!("{path}/follow"), &tag(true)),
            e("GET", "/api/v1/followed_tags", &json!([tag(true)])),
            e("POST", &format!("{path}/unfollow"), &tag(false)),
            e("GET", &path, &tag(false)),
        ];
        har::import(t, &[KEY], &format!("s{n}.har"), entries);
    })
}

fn names(list: &Value) -> Vec<Value> {
    list.as_array()
        .unwrap_or_else(|| panic!("a list: {list}"))
        .iter()
        .map(|t| t["name"].clone())
        .collect()
}

#[tokio::test]
async fn an_unfollow_takes_the_tag_out_of_the_followed_list_its_follow_put_it_in() {
    let t = follows_twin();
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-1");
    for name in ["tag-1", "tag-2"] {
        server
            .post(&format!("/api/v1/tags/{name}/follow"), s, json!({}))
            .await
            .assert_status(200);
    }
    let listed = server.get("/api/v1/followed_tags", s).await.json();
    assert_eq!(names(&listed).len(), 2, "{listed}");
    server
        .post("/api/v1/tags/tag-1/unfollow", s, json!({}))
        .await
        .assert_status(200);
    let listed = server.get("/api/v1/followed_tags", s).await.json();
    assert_eq!(names(&listed), vec![json!("tag-2")], "{listed}");
}
