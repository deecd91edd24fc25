//! Routes whose answer is the acting principal's own record itself (a "who am I" read, a
//! profile update), through `synthesize`: learned as `Route::actor_record` with an empty
//! pointer where, for the same principal in the same session, they answer the record a
//! create's embedded owner showed (that owner learned from a likers list listing the principal
//! in other sessions), and not where they answer another record.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::authed_json as ex;
use serde_json::{Value, json};
use wraith_model::{ActorRecord, Model};

fn user(id: &str) -> Value {
    json!({"id": id, "name": format!("name of {id}"), "bio": "hello", "followers": 3})
}

/// Two runs per principal: one creates an item it owns, likes it and lists its likers
/// (itself); the other reads itself (`/v1/me`) and the service's one admin (`/v1/admin`) and
/// creates an item, but likes nothing: no list evidence reaches `/v1/me`, the create vouches.
fn model() -> Model {
    let mut runs = Vec::new();
    for (n, (auth, me)) in [
        ("Bearer tok_a", "u_8f3a1c9e27"),
        ("Bearer tok_b", "u_2e7c4a1b93"),
    ]
    .iter()
    .enumerate()
    {
        let create = |it: &str| {
            let owned = json!({"id": it, "title": "a thing", "owner": user(me)});
            ex(
                "POST",
                "/v1/items",
                auth,
                Some(json!({"title": "a thing"})),
                owned,
            )
        };
        let (liked, other) = (format!("it_{n}d2b7e1a90"), format!("it_{n}e5c8f2b31"));
        runs.push(vec![
            ex("GET", &format!("/v1/users/{me}"), auth, None, user(me)),
            create(&liked),
            ex(
                "POST",
                &format!("/v1/items/{liked}/like"),
                auth,
                None,
                json!({}),
            ),
            ex(
                "GET",
                &format!("/v1/items/{liked}/likers"),
                auth,
                None,
                json!([user(me)]),
            ),
        ]);
        runs.push(vec![
            ex("GET", "/v1/me", auth, None, user(me)),
            ex("GET", "/v1/admin", auth, None, user("u_0a0a0a0a00")),
            create(&other),
        ]);
    }
    common::synth_runs("items", "https://api.items.test", runs)
}

#[test]
fn a_read_answering_the_principals_own_record_is_an_actor_site_of_the_whole_answer() {
    let m = model();
    let users = common::route(&m, "GET", "/v1/users/:param")
        .entity_type
        .clone()
        .unwrap();
    assert_eq!(
        common::route(&m, "GET", "/v1/me").actor_record,
        Some(ActorRecord {
            entity_type: users,
            pointer: String::new(),
        })
    );
}

#[test]
fn a_read_answering_another_record_for_every_principal_is_no_actor_site() {
    let m = model();
    assert_eq!(common::route(&m, "GET", "/v1/admin").actor_record, None);
}
