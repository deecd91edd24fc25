//! `[serve.limits] max_entities_per_type` and `max_total_state_mb`: a session's writes past
//! them are refused with 507 `state-limit-exceeded` (provenance `miss`, the route named), per
//! session, and a delete makes room again. Black-box: the bundled example twin served on
//! 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Resp, Server};

async fn create(server: &Server, session: &str, name: &str) -> Resp {
    server
        .post(
            "/customers",
            Some(session),
            json!({"name": name, "email": "a@example.com"}),
        )
        .await
}

fn assert_refused(r: &Resp, limit: &str) {
    r.assert_status(507);
    assert_eq!(r.json()["error"], json!("state-limit-exceeded"));
    let message = r.json()["message"].as_str().unwrap().to_string();
    assert!(message.contains(limit), "{message}");
    assert_eq!(r.provenance(), Some("miss"));
    assert_eq!(r.header("x-wraith-route"), Some("POST /customers"));
}

#[tokio::test]
async fn a_create_past_max_entities_per_type_is_refused_until_a_delete_makes_room() {
    let t = support::example_shop_twin();
    // The default fixture set seeds two customers into every session.
    t.set_toml("serve.limits", "max_entities_per_type", "4");
    let server = t.serve(&[]);
    let first = create(&server, "a", "one").await;
    first.assert_status(201);
    create(&server, "a", "two").await.assert_status(201);
    assert_refused(
        &create(&server, "a", "three").await,
        "max_entities_per_type",
    );
    // Another session has room of its own.
    create(&server, "b", "one").await.assert_status(201);
    // Reads and updates of a full type still work; a delete frees a place.
    let id = first.json()["id"].as_str().unwrap().to_string();
    server
        .get(&format!("/customers/{id}"), Some("a"))
        .await
        .assert_status(200);
    server
        .delete(&format!("/customers/{id}"), Some("a"))
        .await
        .assert_status(200);
    create(&server, "a", "three").await.assert_status(201);
}

#[tokio::test]
async fn at_max_entities_per_type_an_update_may_change_a_held_record_but_not_store_another() {
    let t = support::example_shop_twin();
    // The default fixture set seeds two customers into every session.
    t.set_toml("serve.limits", "max_entities_per_type", "3");
    let server = t.serve(&[]);
    let held = create(&server, "a", "one").await;
    held.assert_status(201);
    let id = held.json()["id"].as_str().unwrap().to_string();
    let patch = |path: String| {
        let server = &server;
        async move {
            server
                .send(
                    "PATCH",
                    &path,
                    Some("a"),
                    &[],
                    Some(json!({"name": "renamed"})),
                )
                .await
        }
    };
    patch(format!("/customers/{id}")).await.assert_status(200);
    // A key the full session does not hold: the update would store one more record.
    let refused = patch("/customers/cus_NotHeld000001".to_string()).await;
    refused.assert_status(507);
    assert_eq!(refused.json()["error"], json!("state-limit-exceeded"));
    assert_eq!(
        refused.header("x-wraith-route"),
        Some("PATCH /customers/:param")
    );
    server
        .get(&format!("/customers/{id}"), Some("a"))
        .await
        .assert_status(200);
}

#[tokio::test]
async fn writes_past_max_total_state_mb_are_refused_until_a_delete_makes_room() {
    let t = support::example_shop_twin();
    t.set_toml("serve.limits", "max_total_state_mb", "1");
    let server = t.serve(&[]);
    let big = "x".repeat(600 * 1024);
    let first = create(&server, "a", &big).await;
    first.assert_status(201);
    // 600 KB held: under the limit, so one more write passes and takes the session over it.
    create(&server, "a", &big).await.assert_status(201);
    assert_refused(&create(&server, "a", "small").await, "max_total_state_mb");
    create(&server, "b", &big).await.assert_status(201);
    let id = first.json()["id"].as_str().unwrap().to_string();
    server
        .delete(&format!("/customers/{id}"), Some("a"))
        .await
        .assert_status(200);
    create(&server, "a", "small").await.assert_status(201);
}
