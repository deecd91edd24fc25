//! The replay-bytes cache: an exact-replay answer served from cached bytes is byte-for-byte the
//! answer the engine computes without the cache, for every session and every twin origin.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::*;
use wraith_engine::{Engine, Request, Response};
use wraith_model::*;

/// One read recorded twice (a recorded email, a person's name, and a URL on the upstream
/// origin), and a create whose body a session can use to supply that email itself.
fn model_for_cache() -> Model {
    let read = R::new("GET", "/v1/customers/:id")
        .op(StateOp::Read, "customers")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", echo_path("id")),
                ("object", c(json!("customer"))),
            ]),
        )
        .exact(
            "/v1/customers/cus_1",
            "",
            None,
            vec![
                moment(
                    "s1/1",
                    200,
                    json!({"id": "cus_1", "object": "customer", "name": "Jane Doe",
                        "email": "jane@example.com",
                        "url": "https://api.shop.example/v1/customers/cus_1"}),
                ),
                moment(
                    "s1/2",
                    200,
                    json!({"id": "cus_1", "object": "customer", "name": "Jane Doe",
                        "email": "jane@example.com", "zeta": 2,
                        "url": "https://api.shop.example/v1/customers/cus_1"}),
                ),
            ],
        )
        .build();
    let create = R::new("POST", "/v1/customers")
        .op(StateOp::Create, "customers")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("object", c(json!("customer"))),
            ]),
        )
        .build();
    model(
        vec![read, create],
        vec![("customers", entity_type(&["cus_1"], &[], vec![]))],
    )
}

fn on_and_off() -> (Engine, Engine) {
    let on = engine(model_for_cache(), det_opts());
    let mut off = engine(model_for_cache(), det_opts());
    off.set_replay_cache(false);
    (on, off)
}

fn at_host(r: Request, host: &str) -> Request {
    let mut r = r;
    r.headers.retain(|(k, _)| k != "host");
    r.headers.push(("host".to_string(), host.to_string()));
    r
}

fn same(a: &Response, b: &Response, what: &str) {
    assert_eq!(a.status, b.status, "{what}: status");
    assert_eq!(a.headers, b.headers, "{what}: headers");
    assert_eq!(a.body, b.body, "{what}: body");
    assert_eq!(a.provenance, b.provenance, "{what}: provenance");
    assert_eq!(a.route, b.route, "{what}: route");
    assert_eq!(a.exchange, b.exchange, "{what}: exchange");
    assert_eq!(a.replay, b.replay, "{what}: replay");
    assert_eq!(
        a.outbound_policy_applied, b.outbound_policy_applied,
        "{what}: outbound_policy_applied"
    );
}

#[test]
fn cached_replay_answers_equal_uncached_ones_across_sessions_hosts_and_methods() {
    let (on, off) = on_and_off();
    let get = || req("GET", "/v1/customers/cus_1", None);
    let steps: Vec<(Option<&str>, Request)> = vec![
        (None, get()),
        (None, get()),
        (None, get()),
        (Some("a"), get()),
        (Some("a"), at_host(get(), "Twin.Local:9000")),
        (Some("a"), at_host(get(), "twin.local:9000")),
        (Some("a"), req("HEAD", "/v1/customers/cus_1", None)),
        (Some("a"), get()),
        (
            Some("b"),
            req(
                "POST",
                "/v1/customers",
                Some(json!({"email": "jane@example.com"})),
            ),
        ),
        (Some("b"), get()),
        (Some("b"), get()),
        (Some("b"), get()),
        (Some("a"), get()),
        (None, at_host(get(), "other.test")),
    ];
    for (i, (session, r)) in steps.iter().enumerate() {
        let a = on.handle(*session, r);
        let b = off.handle(*session, r);
        same(
            &a,
            &b,
            &format!("step {i} ({session:?} {} {:?})", r.method, r.header("host")),
        );
    }
}

#[test]
fn a_session_that_supplied_a_recorded_value_gets_it_verbatim_after_another_session_filled_the_cache()
 {
    let (on, _) = on_and_off();
    let get = || req("GET", "/v1/customers/cus_1", None);
    // Session a fills the cache past the recorded run: the email is scrubbed for it.
    for _ in 0..3 {
        let r = on.handle(Some("a"), &get());
        assert_ne!(body(&r)["email"], json!("jane@example.com"));
    }
    // Session b sent the email itself, so the twin echoes it verbatim.
    on.handle(
        Some("b"),
        &req(
            "POST",
            "/v1/customers",
            Some(json!({"email": "jane@example.com"})),
        ),
    );
    for _ in 0..3 {
        let r = on.handle(Some("b"), &get());
        assert_eq!(body(&r)["email"], json!("jane@example.com"));
    }
    let r = on.handle(Some("a"), &get());
    assert_ne!(body(&r)["email"], json!("jane@example.com"));
}

#[test]
fn each_twin_origin_gets_its_own_self_url_rewrite_from_the_cache() {
    let (on, _) = on_and_off();
    let get = || req("GET", "/v1/customers/cus_1", None);
    for _ in 0..3 {
        for host in ["one.test:1", "two.test:2"] {
            let r = on.handle(Some("a"), &at_host(get(), host));
            assert_eq!(
                body(&r)["url"],
                json!(format!("http://{host}/v1/customers/cus_1"))
            );
        }
    }
}

#[test]
fn a_host_that_is_no_authority_is_not_written_into_answers() {
    let (on, _) = on_and_off();
    let get = || req("GET", "/v1/customers/cus_1", None);
    let mut plain = get();
    plain.headers.retain(|(k, _)| k != "host");
    let without_host = body(&on.handle(Some("a"), &plain))["url"].clone();
    for host in ["a/b?c#d", "<script>x</script>", "a b", "evil\"quote"] {
        let r = on.handle(Some("a"), &at_host(get(), host));
        assert_eq!(body(&r)["url"], without_host, "Host: {host}");
    }
    let ipv6 = on.handle(Some("a"), &at_host(get(), "[::1]:8081"));
    assert_eq!(
        body(&ipv6)["url"],
        json!("http://[::1]:8081/v1/customers/cus_1")
    );
}

#[test]
fn a_repeated_recorded_answer_is_served_from_the_cached_bytes() {
    let (on, _) = on_and_off();
    let get = || req("GET", "/v1/customers/cus_1", None);
    // Both recorded moments, then past the run: the last moment without a claim, twice.
    on.handle(Some("a"), &get());
    on.handle(Some("a"), &get());
    let filled = on.handle(Some("a"), &get());
    let again = on.handle(Some("a"), &get());
    assert_eq!(filled.body, again.body);
    // The same buffer, not an equal copy: the second answer came out of the cache.
    assert_eq!(filled.body.as_ptr(), again.body.as_ptr());
}
