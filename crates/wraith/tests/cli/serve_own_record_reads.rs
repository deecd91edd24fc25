//! `wraith serve` answering a "who am I" read (an answer that is the acting principal's own
//! record, `Route::actor_record` with an empty pointer) with what the session changed in that
//! record itself: a profile update's echoed name (at another path than the read's, so no
//! last-write-wins singleton) shows in the next read, whatever run the read replays. Black-box: the real binary on HAR runs written here, from which synth learns both
//! routes as the principal's record because the runs' items name the same user as their owner.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::har;

const ORIGIN: &str = "https://api.items.test";

fn user(id: &str, name: &str) -> Value {
    json!({"id": id, "username": format!("user-{id}"), "display_name": name, "followers": 0})
}

/// `user` as the "who am I" read and the profile update answer it: with its settings.
fn me(id: &str, name: &str) -> Value {
    let mut v = user(id, name);
    v["settings"] = json!({"theme": "dark"});
    v
}

fn by(auth: &str, entry: Value) -> Value {
    har::with_header(entry, "Authorization", auth)
}

/// Principal `n`'s two runs: one creates an item it owns, likes it and lists its likers
/// (itself); the other reads itself, creates an item and renames itself (no list evidence
/// reaches the read or the rename: the create's owner vouches for them).
fn runs(n: usize) -> [Vec<Value>; 2] {
    let (auth, id) = (format!("Bearer tok_{n}"), format!("u_{n}1c9e27"));
    let create = |item: &str| {
        let owned = json!({"id": item, "title": "a thing", "owner": user(&id, "Ann")});
        let sent = json!({"title": "a thing"});
        har::entry(ORIGIN, "POST", "/v1/items", Some(&sent), &owned)
    };
    let (liked, other) = (format!("it_{n}2b7e1a"), format!("it_{n}5c8f2b"));
    let likers = json!([user(&id, "Ann")]);
    let renamed = format!("Name {n}");
    let rename = json!({"display_name": renamed});
    [
        vec![
            har::entry(
                ORIGIN,
                "GET",
                &format!("/v1/users/{id}"),
                None,
                &user(&id, "Ann"),
            ),
            create(&liked),
            har::entry(
                ORIGIN,
                "POST",
                &format!("/v1/items/{liked}/like"),
                None,
                &json!({}),
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/v1/items/{liked}/likers"),
                None,
                &likers,
            ),
        ],
        vec![
            har::entry(ORIGIN, "GET", "/v1/me", None, &me(&id, "Ann")),
            create(&other),
            har::entry(
                ORIGIN,
                "PATCH",
                "/v1/me/profile",
                Some(&rename),
                &me(&id, &renamed),
            ),
        ],
    ]
    .map(|run| run.into_iter().map(|e| by(&auth, e)).collect())
}

#[tokio::test]
async fn a_who_am_i_read_after_a_profile_update_shows_the_updated_name() {
    let t = har::runs_twin("items", ORIGIN, (0..3).flat_map(runs).collect());
    for (method, path) in [("GET", "/v1/me"), ("PATCH", "/v1/me/profile")] {
        let route = har::model_route(&t, method, path);
        assert_eq!(route["actor_record"]["pointer"], "", "{route}");
    }
    let server = t.serve(&[]);
    let auth = [("authorization", "Bearer tok_0")];
    let before = server
        .send("GET", "/v1/me", Some("agent"), &auth, None)
        .await;
    before.assert_status(200);
    assert_eq!(before.json()["display_name"], "Ann");
    let sent = json!({"display_name": "Wraith Tester"});
    let updated = server
        .send("PATCH", "/v1/me/profile", Some("agent"), &auth, Some(sent))
        .await;
    updated.assert_status(200);
    assert_eq!(updated.json()["display_name"], "Wraith Tester");
    let after = server
        .send("GET", "/v1/me", Some("agent"), &auth, None)
        .await;
    after.assert_status(200);
    let body = after.json();
    assert_eq!(body["display_name"], "Wraith Tester", "{body}");
    assert_eq!(
        body["settings"],
        json!({"theme": "dark"}),
        "the read's own fields stay"
    );
    // Another session still reads the recorded profile.
    let other = server
        .send("GET", "/v1/me", Some("other"), &auth, None)
        .await;
    assert_eq!(other.json()["display_name"], "Ann");
}
