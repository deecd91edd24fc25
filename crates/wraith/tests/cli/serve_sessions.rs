//! The session isolation contract over HTTP: `X-Wraith-Session` namespaces, what each one
//! scopes, the shared default namespace, lifecycle, the namespace cap, resets, and that nothing
//! persists. Black-box: the real binary on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};
use support::model::{self, RouteSpec, hole, json_body, obj, route, variant};
use support::{Server, Twin};
use wraith_model::{Guard, HoleKind, JsonType};

/// The shop model plus `POST /v1/tickets`, whose body carries a named counter hole.
fn shop_twin() -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    let mut m = model::shop("shop");
    m.routes.push(route(RouteSpec {
        method: "POST",
        path: "/v1/tickets",
        state_op: None,
        entity_type: None,
        variants: vec![variant(
            "00000000000000aa",
            200,
            Guard::Always,
            json_body(obj(vec![(
                "number",
                hole(
                    HoleKind::Counter {
                        name: "tickets.number".to_string(),
                    },
                    JsonType::Number,
                    vec![json!(1)],
                ),
            )])),
        )],
        exact: vec![],
    }));
    m.routes
        .sort_by(|a, b| (&a.path, &a.method).cmp(&(&b.path, &b.method)));
    t.write_model(&m);
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"customers": [{"id": "cus_fx", "object": "customer", "name": "Fixture"}]}})
            .to_string(),
    );
    t.write(
        "state/fixtures/other/fixture.json",
        &json!({"entities": {"customers": [{"id": "cus_other", "object": "customer", "name": "Other"}]}})
            .to_string(),
    );
    t
}

async fn create(s: &Server, session: Option<&str>, name: &str) -> Value {
    let r = s
        .post("/v1/customers", session, json!({"name": name}))
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

async fn create_id(s: &Server, session: Option<&str>, name: &str) -> String {
    create(s, session, name).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn read_status(s: &Server, session: Option<&str>, id: &str) -> u16 {
    s.get(&format!("/v1/customers/{id}"), session).await.status
}

fn list_ids(v: &Value) -> BTreeSet<String> {
    v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn two_sessions_cannot_see_each_others_writes() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let id = create_id(&s, Some("alpha"), "A").await;
    assert_eq!(read_status(&s, Some("alpha"), &id).await, 200);
    assert_eq!(read_status(&s, Some("beta"), &id).await, 404);
    // Deleting in beta (where it does not exist) does not touch alpha's copy.
    assert_eq!(
        s.delete(&format!("/v1/customers/{id}"), Some("beta"))
            .await
            .status,
        404
    );
    assert_eq!(read_status(&s, Some("alpha"), &id).await, 200);
}

#[tokio::test]
async fn session_key_is_exact_and_case_sensitive() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let id = create_id(&s, Some("worker-3"), "W").await;
    assert_eq!(read_status(&s, Some("worker-3"), &id).await, 200);
    // (Surrounding whitespace is not part of an HTTP field value, so it cannot name a session.)
    for other in ["Worker-3", "worker-3x", "worker_3", "WORKER-3", "worker"] {
        assert_eq!(read_status(&s, Some(other), &id).await, 404, "{other:?}");
    }
    // Any bytes work as a key, no format requirement.
    let odd = "ci/run 42:worker#7";
    let id2 = create_id(&s, Some(odd), "O").await;
    assert_eq!(read_status(&s, Some(odd), &id2).await, 200);
}

#[tokio::test]
async fn headerless_requests_share_one_real_default_namespace() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let id = create_id(&s, None, "shared").await;
    // Another connection without the header sees it: one shared namespace.
    let other_client = reqwest::Client::new();
    let r = other_client
        .get(format!("{}/v1/customers/{id}", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    // It is a namespace, not a bypass: sessions do not see it, and it does not see theirs.
    assert_eq!(read_status(&s, Some("s1"), &id).await, 404);
    let sid = create_id(&s, Some("s1"), "mine").await;
    assert_eq!(read_status(&s, None, &sid).await, 404);
    // It is seeded from the fixture like any namespace.
    assert_eq!(read_status(&s, None, "cus_fx").await, 200);
}

#[tokio::test]
async fn a_session_named_default_is_its_own_namespace_and_an_empty_value_is_headerless() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let id = create_id(&s, None, "shared").await;
    // The value is the key, verbatim: a worker called `default` does not join the world of
    // every client that forgot the header, nor does it see theirs.
    assert_eq!(read_status(&s, Some("default"), &id).await, 404);
    let mine = create_id(&s, Some("default"), "via-header").await;
    assert_eq!(read_status(&s, None, &mine).await, 404);
    assert_eq!(read_status(&s, Some("default"), &mine).await, 200);
    // An empty value names no session: it is the headerless world.
    assert_eq!(read_status(&s, Some(""), &id).await, 200);
    let live = s.get("/__wraith/session", None).await.json();
    let names: Vec<&Value> = live["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| &x["session"])
        .collect();
    assert_eq!(names, [&Value::Null, &json!("default")], "{live}");
    // `/__wraith/session/default` names that session only; the headerless namespace is left.
    assert_eq!(
        s.delete("/__wraith/session/default", None).await.status,
        200
    );
    assert_eq!(
        s.delete("/__wraith/session/default", None).await.status,
        404
    );
    assert_eq!(read_status(&s, None, &id).await, 200);
    assert_eq!(read_status(&s, Some("default"), &mine).await, 404);
}

#[tokio::test]
async fn generated_ids_come_from_a_per_session_seeded_generator() {
    let t = shop_twin();
    // Run 1: alpha creates twice.
    let s1 = t.serve(&["--seed", "99"]);
    let a1 = create_id(&s1, Some("alpha"), "x").await;
    let a2 = create_id(&s1, Some("alpha"), "x").await;
    drop(s1);
    // Run 2: same seed, but beta creates in between alpha's two creates.
    let s2 = t.serve(&["--seed", "99"]);
    let b1 = create_id(&s2, Some("alpha"), "x").await;
    for _ in 0..3 {
        create_id(&s2, Some("beta"), "y").await;
    }
    create_id(&s2, None, "z").await;
    let b2 = create_id(&s2, Some("alpha"), "x").await;
    assert_eq!(
        (a1.clone(), a2.clone()),
        (b1, b2),
        "alpha's ids depend only on alpha"
    );
    assert_ne!(a1, a2);
    // The id has the learned shape.
    assert!(a1.starts_with("cus_") && a1.len() == 18, "{a1}");
}

#[tokio::test]
async fn seed_flag_changes_the_generated_ids() {
    let t = shop_twin();
    let s1 = t.serve(&["--seed", "1"]);
    let a = create_id(&s1, Some("alpha"), "x").await;
    let s2 = t.serve(&["--seed", "2"]);
    let b = create_id(&s2, Some("alpha"), "x").await;
    assert_ne!(a, b);
}

#[tokio::test]
async fn clock_mode_and_base_epoch_are_per_namespace() {
    let t = shop_twin();
    let s = t.serve(&["--clock", "fixed", "--clock-epoch", "1700000000"]);
    let r = s
        .post(
            "/__wraith/session",
            None,
            json!({"session": "early", "clock": {"mode": "fixed", "base_epoch": 1000}}),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(create(&s, Some("early"), "e").await["created"], 1000);
    assert_eq!(create(&s, Some("early"), "e").await["created"], 1000);
    // Unprovisioned sessions use the serve-wide clock.
    assert_eq!(
        create(&s, Some("late"), "l").await["created"],
        1_700_000_000
    );
    // A deterministic clock advances per reading, in its own namespace only.
    s.post(
        "/__wraith/session",
        None,
        json!({"session": "ticking", "clock": {"mode": "deterministic", "base_epoch": 5000}}),
    )
    .await;
    let c1 = create(&s, Some("ticking"), "t").await["created"]
        .as_i64()
        .unwrap();
    let c2 = create(&s, Some("ticking"), "t").await["created"]
        .as_i64()
        .unwrap();
    assert!(c1 >= 5000 && c2 > c1, "{c1} {c2}");
    assert_eq!(create(&s, Some("early"), "e").await["created"], 1000);
}

#[tokio::test]
async fn named_counters_are_per_namespace() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let n = |r: support::Resp| r.json()["number"].as_i64().unwrap();
    let a1 = n(s.post("/v1/tickets", Some("a"), json!({})).await);
    let a2 = n(s.post("/v1/tickets", Some("a"), json!({})).await);
    let b1 = n(s.post("/v1/tickets", Some("b"), json!({})).await);
    assert_ne!(a1, a2, "the counter advances within a session");
    assert_eq!(a1, b1, "another session starts its own counter");
}

#[tokio::test]
async fn idempotency_cache_is_keyed_within_the_session() {
    let t = shop_twin();
    t.set_toml("serve.idempotency", "enabled", "true");
    let s = t.serve(&[]);
    let post = |session: &'static str, key: &'static str| {
        let s = &s;
        async move {
            s.send(
                "POST",
                "/v1/customers",
                Some(session),
                &[("idempotency-key", key)],
                Some(json!({"name": "I"})),
            )
            .await
            .json()["id"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    let a1 = post("a", "k1").await;
    let a2 = post("a", "k1").await;
    assert_eq!(a1, a2, "same key in the same session replays");
    let a3 = post("a", "k2").await;
    assert_ne!(a1, a3, "another key creates anew");
    let b1 = post("b", "k1").await;
    assert_eq!(read_status(&s, Some("b"), &b1).await, 200);
    assert_eq!(
        read_status(&s, Some("b"), &a1).await,
        404,
        "b's k1 is its own"
    );
}

#[tokio::test]
async fn an_idempotency_key_names_one_post_and_an_empty_key_names_none() {
    let t = shop_twin();
    t.set_toml("serve.idempotency", "enabled", "true");
    let s = t.serve(&[]);
    let post = |key: &'static str, name: &'static str| {
        let s = &s;
        async move {
            s.send(
                "POST",
                "/v1/customers",
                Some("k"),
                &[("idempotency-key", key)],
                Some(json!({"name": name})),
            )
            .await
        }
    };
    let first = post("k1", "Ann").await;
    let again = post("k1", "Ann").await;
    assert_eq!(
        first.json()["id"],
        again.json()["id"],
        "the same request replays"
    );
    // The key reused with another body is refused, the twin's own answer.
    let other = post("k1", "Bob").await;
    assert_eq!(
        other.status,
        422,
        "{}",
        String::from_utf8_lossy(&other.body)
    );
    assert_eq!(other.provenance(), Some("miss"));
    assert_eq!(
        other.json()["error"],
        "idempotency key reused with another request"
    );
    // An empty (or blank) value names no key: two creates.
    let a = post("", "Cy").await;
    let b = post("  ", "Cy").await;
    assert_ne!(a.json()["id"], b.json()["id"]);
    // Only POSTs are keyed: a repeated DELETE answers what the session's state says.
    let id = first.json()["id"].as_str().unwrap().to_string();
    let path = format!("/v1/customers/{id}");
    let key = [("idempotency-key", "d1")];
    let deleted = s.send("DELETE", &path, Some("k"), &key, None).await;
    assert_eq!(deleted.status, 200);
    assert_eq!(read_status(&s, Some("k"), &id).await, 404);
    let again = s.send("DELETE", &path, Some("k"), &key, None).await;
    assert_ne!(
        again.status, 200,
        "a second delete is not the first one's replay"
    );
}

#[test]
fn idempotency_header_or_ttl_that_would_disable_the_feature_is_refused_naming_the_key() {
    for (key, value, named) in [
        ("header", "\"\"", "serve.idempotency.header"),
        ("header", "\"Bad Header:\"", "serve.idempotency.header"),
        ("ttl_seconds", "0", "serve.idempotency.ttl_seconds"),
    ] {
        let t = shop_twin();
        t.set_toml("serve.idempotency", "enabled", "true");
        t.set_toml("serve.idempotency", key, value);
        let (code, err) = t.serve_expect_exit(&[]);
        assert_eq!(code, 1, "{key} = {value}: {err}");
        assert!(err.contains(named), "{key} = {value}: {err}");
        assert!(err.contains("wraith.toml:"), "{key} = {value}: {err}");
    }
}

#[tokio::test]
async fn fixture_is_seeded_once_when_the_namespace_is_created() {
    let t = shop_twin();
    let s = t.serve(&[]);
    assert_eq!(read_status(&s, Some("a"), "cus_fx").await, 200);
    assert_eq!(
        s.delete("/v1/customers/cus_fx", Some("a")).await.status,
        200
    );
    // Later requests reuse the seeded namespace: the fixture is not re-seeded.
    assert_eq!(read_status(&s, Some("a"), "cus_fx").await, 404);
    // Every new session gets its own seeded copy.
    assert_eq!(read_status(&s, Some("b"), "cus_fx").await, 200);
}

#[tokio::test]
async fn list_routes_merge_this_sessions_writes_into_the_recorded_collection() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let id = create_id(&s, Some("a"), "new").await;
    let a = s.get("/v1/customers", Some("a")).await;
    assert_eq!(a.status, 200);
    let ids = list_ids(&a.json());
    assert!(ids.contains("cus_1"), "recorded item kept: {ids:?}");
    assert!(ids.contains(&id), "own write merged: {ids:?}");
    let b = list_ids(&s.get("/v1/customers", Some("b")).await.json());
    assert!(b.contains("cus_1"));
    assert!(!b.contains(&id), "other session's write not merged: {b:?}");
}

#[tokio::test]
async fn namespaces_are_created_lazily_on_first_request_or_eagerly_by_provisioning() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let names = |v: Value| -> BTreeSet<String> {
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["session"].as_str().map(str::to_string))
            .collect()
    };
    assert!(names(s.get("/__wraith/session", None).await.json()).is_empty());
    s.get("/v1/customers/cus_1", Some("lazy")).await;
    assert!(names(s.get("/__wraith/session", None).await.json()).contains("lazy"));
    let r = s
        .post(
            "/__wraith/session",
            None,
            json!({"session": "eager", "fixture": "other", "seed": 5}),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["entities_seeded"], 1);
    assert!(names(s.get("/__wraith/session", None).await.json()).contains("eager"));
    // The pinned fixture is what the first request sees.
    assert_eq!(read_status(&s, Some("eager"), "cus_other").await, 200);
    assert_eq!(read_status(&s, Some("eager"), "cus_fx").await, 404);
}

#[tokio::test]
async fn namespace_cap_fails_closed_with_503_and_never_evicts() {
    let t = shop_twin();
    t.set_toml("serve.limits", "max_namespaces", "3");
    let s = t.serve(&[]);
    let first = create_id(&s, Some("s1"), "first").await;
    create_id(&s, Some("s2"), "x").await;
    create_id(&s, Some("s3"), "x").await;
    let r = s.get("/v1/customers/cus_1", Some("s4")).await;
    assert_eq!(r.status, 503);
    assert_eq!(
        r.json(),
        json!({"error": "namespace-unavailable", "message": "namespace limit exceeded (max 3)"})
    );
    // The route matched, so the refusal names it like every answer where one did.
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers/:id"));
    assert_eq!(r.provenance(), Some("miss"));
    // Provisioning a new session at the cap is refused the same way.
    let p = s
        .post("/__wraith/session", None, json!({"session": "s5"}))
        .await;
    assert_eq!(p.status, 503);
    assert_eq!(p.json()["error"], "namespace-unavailable");
    // Nothing was evicted: the oldest, idle session still holds its state.
    assert_eq!(read_status(&s, Some("s1"), &first).await, 200);
    // Deleting a session frees its slot.
    assert_eq!(s.delete("/__wraith/session/s2", None).await.status, 200);
    assert_eq!(s.get("/v1/customers/cus_1", Some("s4")).await.status, 200);
}

#[tokio::test]
async fn session_reset_keeps_provisioning_and_reseeds_the_fixture() {
    let t = shop_twin();
    let s = t.serve(&[]);
    s.post(
        "/__wraith/session",
        None,
        json!({"session": "w", "fixture": "other", "seed": 3,
               "clock": {"mode": "fixed", "base_epoch": 4242}}),
    )
    .await;
    let first = create_id(&s, Some("w"), "x").await;
    s.delete("/v1/customers/cus_other", Some("w")).await;
    let r = s
        .send("POST", "/__wraith/session/w/reset", None, &[], None)
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let info = r.json();
    assert_eq!(info["fixture"], "other");
    assert_eq!(info["seed"], 3);
    // Writes are gone, the fixture is back immediately, the clock and seed are kept.
    assert_eq!(read_status(&s, Some("w"), &first).await, 404);
    assert_eq!(read_status(&s, Some("w"), "cus_other").await, 200);
    let again = create(&s, Some("w"), "x").await;
    assert_eq!(again["created"], 4242);
    assert_eq!(
        again["id"],
        json!(first),
        "same seed after reset: same first id"
    );
}

#[tokio::test]
async fn session_delete_drops_provisioning_and_frees_the_slot() {
    let t = shop_twin();
    let s = t.serve(&[]);
    s.post(
        "/__wraith/session",
        None,
        json!({"session": "w", "fixture": "other"}),
    )
    .await;
    let id = create_id(&s, Some("w"), "x").await;
    let r = s.delete("/__wraith/session/w", None).await;
    assert_eq!(r.status, 200);
    let list = s.get("/__wraith/session", None).await.json();
    assert!(!list.to_string().contains("\"w\""), "{list}");
    // Reused later, the id starts fresh from the serve-wide defaults (default fixture).
    assert_eq!(read_status(&s, Some("w"), &id).await, 404);
    assert_eq!(read_status(&s, Some("w"), "cus_fx").await, 200);
    assert_eq!(read_status(&s, Some("w"), "cus_other").await, 404);
    // Deleting an unknown session says so.
    let r = s.delete("/__wraith/session/never", None).await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn global_reset_clears_every_session() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let a = create_id(&s, Some("a"), "x").await;
    let b = create_id(&s, Some("b"), "x").await;
    let d = create_id(&s, None, "x").await;
    let r = s.send("POST", "/__wraith/reset", None, &[], None).await;
    assert_eq!(r.status, 200);
    assert_eq!(read_status(&s, Some("a"), &a).await, 404);
    assert_eq!(read_status(&s, Some("b"), &b).await, 404);
    assert_eq!(read_status(&s, None, &d).await, 404);
    assert_eq!(read_status(&s, Some("a"), "cus_fx").await, 200);
}

/// A session provisioned before the global reset forgets what it wrote and keeps its
/// provisioning: its fixture is seeded again and the same settings find it already there.
#[tokio::test]
async fn global_reset_clears_provisioned_sessions_and_keeps_their_provisioning() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let settings = json!({"session": "p", "seed": 3});
    let r = s.post("/__wraith/session", None, settings.clone()).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = create_id(&s, Some("p"), "x").await;
    assert_eq!(read_status(&s, Some("p"), &id).await, 200);
    let r = s.send("POST", "/__wraith/reset", None, &[], None).await;
    assert_eq!(r.status, 200);
    assert_eq!(read_status(&s, Some("p"), &id).await, 404);
    assert_eq!(read_status(&s, Some("p"), "cus_fx").await, 200);
    let again = s.post("/__wraith/session", None, settings).await;
    assert_eq!(
        again.status,
        200,
        "{}",
        String::from_utf8_lossy(&again.body)
    );
}

fn tree(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            let meta = std::fs::metadata(&p).unwrap();
            out.insert(format!(
                "{} {} {:?}",
                p.strip_prefix(root).unwrap().display(),
                meta.len(),
                meta.modified().unwrap()
            ));
        }
    }
    out
}

#[tokio::test]
async fn nothing_about_sessions_persists_and_a_restart_is_a_clean_slate() {
    let t = shop_twin();
    let before = tree(t.path());
    let mut s = t.serve(&[]);
    let id = create_id(&s, Some("a"), "x").await;
    s.delete("/v1/customers/cus_fx", Some("a")).await;
    assert_eq!(s.terminate(), 0);
    assert_eq!(tree(t.path()), before, "serve wrote into the twin folder");
    let s2 = t.serve(&[]);
    assert_eq!(read_status(&s2, Some("a"), &id).await, 404);
    assert_eq!(read_status(&s2, Some("a"), "cus_fx").await, 200);
}

#[tokio::test]
async fn the_same_session_id_on_two_twins_gets_two_independent_namespaces() {
    let t1 = shop_twin();
    let t2 = shop_twin();
    let s1 = t1.serve(&["--seed", "7"]);
    let s2 = t2.serve(&["--seed", "7"]);
    let id = create_id(&s1, Some("agent-1"), "x").await;
    assert_eq!(read_status(&s1, Some("agent-1"), &id).await, 200);
    assert_eq!(read_status(&s2, Some("agent-1"), &id).await, 404);
}

#[tokio::test]
async fn serve_wide_flags_apply_to_every_session_alike() {
    let t = shop_twin();
    let s = t.serve(&["--unknown-entity", "not_found"]);
    // No session can opt out of the serve-wide fail-closed gate, and all share one model.
    for session in [None, Some("a"), Some("b")] {
        let r = s.get("/v1/products/prod_new", session).await;
        assert_eq!(r.status, 501, "{session:?}");
        assert_eq!(r.provenance(), Some("miss"));
        assert_eq!(s.get("/v1/products/prod_1", session).await.status, 200);
    }
}

#[tokio::test]
async fn session_writes_merged_into_a_recorded_page_keep_the_requested_page_size() {
    // The example twin recorded `GET /customers?limit=2`; its default fixture set seeds two more
    // customers and this session creates a third. The page stays two items long.
    let twin = support::example_shop_twin();
    let server = twin.serve(&[]);
    let s = Some("page-size");
    let created = server
        .post(
            "/customers",
            s,
            serde_json::json!({"name": "Page Size", "email": "page@example.test"}),
        )
        .await;
    assert!(created.status < 300, "create: {}", created.status);
    let page = server.get("/customers?limit=2", s).await;
    assert_eq!(page.status, 200);
    let body = page.json();
    assert_eq!(body["data"].as_array().map(Vec::len), Some(2), "{body}");
    assert_eq!(body["has_more"], serde_json::json!(true), "{body}");
}

/// A session's cached idempotent answers are held to `[serve.limits] max_total_state_mb`: a
/// client that uses a fresh key for every create (as it should) does not grow the cache for
/// the whole TTL. Past the budget the oldest answers are forgotten first, so a retry with the
/// oldest key runs again, while the newest still replays.
#[tokio::test]
async fn the_oldest_idempotent_answers_are_forgotten_past_the_sessions_state_budget() {
    let t = shop_twin();
    t.set_toml("serve.idempotency", "enabled", "true");
    t.set_toml("serve.limits", "max_total_state_mb", "1");
    let s = t.serve(&[]);
    // 400 KB per answer: three of them pass the 1 MiB budget.
    let name = "n".repeat(400 * 1024);
    let post = |key: &'static str| {
        let (s, name) = (&s, name.clone());
        async move {
            let r = s
                .send(
                    "POST",
                    "/v1/customers",
                    Some("idem"),
                    &[("idempotency-key", key)],
                    Some(json!({ "name": name })),
                )
                .await;
            assert!(r.status < 300, "{key}: {}", r.status);
            r.json()["id"].as_str().unwrap().to_string()
        }
    };
    let mut ids = Vec::new();
    for key in ["k1", "k2", "k3"] {
        let id = post(key).await;
        // Delete the record again: only the cached answers take the session's memory.
        let gone = s.delete(&format!("/v1/customers/{id}"), Some("idem")).await;
        assert!(gone.status < 300, "{}", gone.status);
        ids.push(id);
    }
    let (first, second, third) = (ids[0].clone(), ids[1].clone(), ids[2].clone());
    assert_eq!(post("k3").await, third, "the newest answer still replays");
    assert_ne!(
        post("k1").await,
        first,
        "the oldest answer was forgotten: the create ran again"
    );
    assert_ne!(first, second);
}
