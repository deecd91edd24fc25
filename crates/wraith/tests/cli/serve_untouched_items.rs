//! `wraith serve` listing, in a list filtered by its items' key, the untouched item of a
//! requested key no record of the list's type holds but a record of another type does: a
//! relationship with an account nobody acted on, as the recordings read one before any write
//! named its account (`synth/src/untouched_items.rs`, `ListShape::untouched_item`). Black-box:
//! the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "untouched-items-test-key");
const ORIGIN: &str = "https://api.social.test";

fn account(id: &str) -> Value {
    json!({"id": id, "username": format!("user-{id}")})
}

fn relationship(id: &str, following: bool) -> Value {
    json!({"id": id, "following": following, "note": ""})
}

/// Run `n` reads accounts `a{n}`, `b{n}` and `c{n}`, reads `a{n}`'s relationship (untouched),
/// follows `b{n}` and reads that relationship.
fn social_twin() -> Twin {
    har::synth_twin("social", ORIGIN, &[KEY], 3, |t, n| {
        let e = |method: &str, p: &str, answer: &Value| har::entry(ORIGIN, method, p, None, answer);
        let (a, b, c) = (format!("a{n}"), format!("b{n}"), format!("c{n}"));
        let entries = vec![
            e("GET", &format!("/v1/accounts/{a}"), &account(&a)),
            e("GET", &format!("/v1/accounts/{b}"), &account(&b)),
            e("GET", &format!("/v1/accounts/{c}"), &account(&c)),
            e(
                "GET",
                &format!("/v1/relationships?id={a}"),
                &json!([relationship(&a, false)]),
            ),
            e(
                "POST",
                &format!("/v1/accounts/{b}/follow"),
                &relationship(&b, true),
            ),
            e(
                "GET",
                &format!("/v1/relationships?id={b}"),
                &json!([relationship(&b, true)]),
            ),
        ];
        har::import(t, &[KEY], &format!("s{n}.har"), entries);
    })
}

#[tokio::test]
async fn a_relationship_with_an_account_no_one_acted_on_is_listed_untouched() {
    let t = social_twin();
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-1");

    // `c1` is a recorded account no recording read a relationship of.
    let listed = server.get("/v1/relationships?id=c1", s).await;
    listed.assert_status(200);
    assert_eq!(listed.json(), json!([relationship("c1", false)]));
    // A key naming no account the twin knows lists nothing.
    let unknown = server.get("/v1/relationships?id=nobody", s).await.json();
    assert_eq!(unknown, json!([]));

    // Several keys in the array spelling: each listed once, the untouched one beside the
    // session's own.
    server
        .post("/v1/accounts/c2/follow", s, json!({}))
        .await
        .assert_status(200);
    let both = server
        .get("/v1/relationships?id[]=c2&id[]=c3&id[]=c3&id[]=nobody", s)
        .await
        .json();
    let items = both.as_array().unwrap();
    assert_eq!(items.len(), 2, "{both}");
    let by_id = |id: &str| items.iter().find(|i| i["id"] == json!(id)).cloned();
    assert_eq!(by_id("c2").unwrap()["following"], json!(true), "{both}");
    assert_eq!(by_id("c3"), Some(relationship("c3", false)), "{both}");
}
