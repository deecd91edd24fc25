//! `[serve.limits] max_entities_per_type` and `max_total_state_mb`: a session's writes past
//! them are refused with 507 `state-limit-exceeded` (provenance `miss`, the route named), per
//! session, and a delete makes room again. Black-box: the bundled example twin served on
//! 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Resp, Server, har};

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

/// A twin whose recorded delete answered 200 and whose recorded create answered a record: a
/// delete of any key is answered 200 and leaves a tombstone in the session.
fn items_twin() -> support::Twin {
    const ORIGIN: &str = "https://api.items.test";
    let t = support::Twin::init("items", ORIGIN);
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/items",
            Some(&json!({"name": "one"})),
            &json!({"id": "it_one", "name": "one"}),
        ),
        har::entry(
            ORIGIN,
            "DELETE",
            "/v1/items/it_one",
            None,
            &json!({"id": "it_one", "deleted": true}),
        ),
    ];
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn deletes_of_keys_never_held_count_towards_max_total_state_mb() {
    let t = items_twin();
    t.set_toml("serve.limits", "max_total_state_mb", "1");
    let server = t.serve(&[]);
    let held = server
        .post("/v1/items", Some("a"), json!({"name": "held"}))
        .await;
    held.assert_status(200);
    let held_id = held.json()["id"].as_str().unwrap().to_string();
    // Each delete of a key the session never held leaves a tombstone under an 8,000-byte key:
    // about 131 of them fill a megabyte, and the next is refused.
    let mut refused = None;
    for n in 0..200 {
        let key = format!("it_{n:04}{}", "x".repeat(8000));
        let r = server.delete(&format!("/v1/items/{key}"), Some("a")).await;
        if r.status != 200 {
            refused = Some((n, r));
            break;
        }
    }
    let (n, r) = refused.expect("tombstones are bounded");
    assert!((120..140).contains(&n), "refused after {n} deletes");
    r.assert_status(507);
    assert_eq!(r.json()["error"], json!("state-limit-exceeded"));
    // Deleting a record the session holds is still answered.
    server
        .delete(&format!("/v1/items/{held_id}"), Some("a"))
        .await
        .assert_status(200);
    // Another session is untouched.
    server
        .delete("/v1/items/it_other", Some("b"))
        .await
        .assert_status(200);
}

/// The bundled twin with an authored `GET /bulk` whose handler stores `n` customers of
/// `size` bytes each, keyed from `from`, and answers how many the session holds.
fn bulk_twin() -> support::Twin {
    let t = support::example_shop_twin();
    let routes = t.root.join("lua/routes.toml");
    let mut text = std::fs::read_to_string(&routes).unwrap();
    text.push_str("\n[[route]]\nmethod = \"GET\"\npath = \"/bulk\"\nhandler = \"bulk\"\n");
    t.write("lua/routes.toml", &text);
    t.write(
        "lua/handlers/bulk.lua",
        r#"local from, n = tonumber(req.query.from), tonumber(req.query.n)
           local size = tonumber(req.query.size or "1")
           for i = from, from + n - 1 do
             state.put("customers", "cus_bulk" .. i, { name = string.rep("x", size) })
           end
           return { held = state.count("customers") }"#,
    );
    t
}

#[tokio::test]
async fn a_handler_state_put_past_max_entities_per_type_answers_507_and_keeps_nothing() {
    let t = bulk_twin();
    // The default fixture set seeds two customers into every session: with three stored, one
    // more fits.
    t.set_toml("serve.limits", "max_entities_per_type", "6");
    let server = t.serve(&[]);
    let ok = server.get("/bulk?from=0&n=3", Some("a")).await;
    ok.assert_status(200);
    let held = ok.json()["held"].as_u64().unwrap();
    // The first put fits, the second would be the seventh record the session holds.
    let r = server.get("/bulk?from=3&n=2", Some("a")).await;
    r.assert_status(507);
    assert_eq!(r.json()["error"], json!("state-limit-exceeded"));
    let message = r.json()["message"].as_str().unwrap().to_string();
    assert!(message.contains("max_entities_per_type"), "{message}");
    assert_eq!(r.provenance(), Some("miss"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /bulk"));
    // The failed handler's writes were undone: the one that fitted is not kept either.
    let again = server.get("/bulk?from=0&n=0", Some("a")).await;
    assert_eq!(again.json()["held"].as_u64(), Some(held));
    // It fits alone; at the limit a held record may still be rewritten, another not stored.
    server
        .get("/bulk?from=3&n=1", Some("a"))
        .await
        .assert_status(200);
    server
        .get("/bulk?from=0&n=4", Some("a"))
        .await
        .assert_status(200);
    server
        .get("/bulk?from=4&n=1", Some("a"))
        .await
        .assert_status(507);
    // Another session has room of its own.
    server
        .get("/bulk?from=0&n=4", Some("b"))
        .await
        .assert_status(200);
}

#[tokio::test]
async fn a_handler_state_put_past_max_total_state_mb_answers_507() {
    let t = bulk_twin();
    t.set_toml("serve.limits", "max_total_state_mb", "1");
    let server = t.serve(&[]);
    server
        .get("/bulk?from=0&n=1&size=600000", Some("a"))
        .await
        .assert_status(200);
    let r = server.get("/bulk?from=1&n=1&size=600000", Some("a")).await;
    r.assert_status(507);
    let message = r.json()["message"].as_str().unwrap().to_string();
    assert!(message.contains("max_total_state_mb"), "{message}");
    // A small record still fits, and so does the same in another session.
    server
        .get("/bulk?from=1&n=1&size=10", Some("a"))
        .await
        .assert_status(200);
    server
        .get("/bulk?from=1&n=1&size=600000", Some("b"))
        .await
        .assert_status(200);
}

/// `max_twin_state_mb` bounds every session's records together: each session under its own
/// limit, the twin past its own refuses writes in every session, a delete still passes, and
/// deleting or resetting a session gives its room back to the others.
#[tokio::test]
async fn writes_past_max_twin_state_mb_are_refused_in_every_session_until_one_makes_room() {
    let t = support::example_shop_twin();
    t.set_toml("serve.limits", "max_twin_state_mb", "2");
    let server = t.serve(&[]);
    let big = "x".repeat(700 * 1024);
    // Three sessions of 700 KB each: the third write takes the twin past 2 MB.
    let mut firsts = Vec::new();
    for s in ["a", "b", "c"] {
        let r = create(&server, s, &big).await;
        r.assert_status(201);
        firsts.push(r.json()["id"].as_str().unwrap().to_string());
    }
    for s in ["a", "d"] {
        assert_refused(&create(&server, s, "small").await, "max_twin_state_mb");
    }
    // A delete passes and makes room.
    server
        .delete(&format!("/customers/{}", firsts[0]), Some("a"))
        .await
        .assert_status(200);
    create(&server, "d", "small").await.assert_status(201);
    create(&server, "d", &big).await.assert_status(201);
    assert_refused(&create(&server, "a", "small").await, "max_twin_state_mb");
    // Deleting a session gives its room back; so does resetting one.
    server
        .send("DELETE", "/__wraith/session/b", None, &[], None)
        .await
        .assert_status(200);
    create(&server, "a", "small").await.assert_status(201);
    create(&server, "a", &big).await.assert_status(201);
    assert_refused(&create(&server, "e", "small").await, "max_twin_state_mb");
    server
        .send("POST", "/__wraith/session/c/reset", None, &[], None)
        .await
        .assert_status(200);
    create(&server, "e", "small").await.assert_status(201);
}

/// A handler's `state.put` is held to the twin-wide limit too, and the refused handler's
/// writes are undone without leaving their bytes counted.
#[tokio::test]
async fn a_handler_state_put_past_max_twin_state_mb_answers_507() {
    let t = bulk_twin();
    t.set_toml("serve.limits", "max_twin_state_mb", "1");
    let server = t.serve(&[]);
    server
        .get("/bulk?from=0&n=1&size=600000", Some("a"))
        .await
        .assert_status(200);
    let r = server.get("/bulk?from=0&n=2&size=600000", Some("b")).await;
    r.assert_status(507);
    let message = r.json()["message"].as_str().unwrap().to_string();
    assert!(message.contains("max_twin_state_mb"), "{message}");
    // Session b's rolled-back first put is not counted: a small record still fits.
    server
        .get("/bulk?from=0&n=1&size=300000", Some("b"))
        .await
        .assert_status(200);
}
