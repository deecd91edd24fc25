//! Recorded JSON moments are held as canonical text; the engine serves that text unparsed when
//! nothing rewrites it, and every rewrite (outbound passes, self-URL rewrite, policy changes)
//! still applies when it applies.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_engine::{Engine, OutboundPolicy, OutboundRule, RuleAction, RuleTarget};
use wraith_model::*;

/// One read with one moment whose keys were recorded out of order and hold nothing the
/// default outbound passes touch, and one whose body names the recorded upstream.
fn model_plain() -> Model {
    let read = R::new("GET", "/v1/items/:id")
        .op(StateOp::Read, "items")
        .variant(200, Guard::Always, obj(vec![("id", echo_path("id"))]))
        .exact(
            "/v1/items/i_1",
            "",
            None,
            vec![moment(
                "s1/1",
                200,
                json!({"zeta": [3, {"y": 1, "b": null}], "id": "i_1", "alpha": {"b": 2.5, "a": "x y"}}),
            )],
        )
        .exact(
            "/v1/items/i_2",
            "",
            None,
            vec![moment(
                "s1/2",
                200,
                json!({"id": "i_2", "self": "https://api.shop.example/v1/items/i_2"}),
            )],
        )
        .build();
    model(
        vec![read],
        vec![("items", entity_type(&["i_1", "i_2"], &[], vec![]))],
    )
}

fn body_json(r: &wraith_engine::Response) -> Value {
    serde_json::from_slice(&r.body).expect("JSON body")
}

#[test]
fn a_moment_nothing_rewrites_is_served_as_its_canonical_text_every_time() {
    let e = engine(model_plain(), det_opts());
    // A claimed replay, another session's, and a repeat past the recorded axis (no claim).
    for (session, claimed) in [(None, true), (Some("a"), true), (Some("a"), false)] {
        let r = get(&e, session, "/v1/items/i_1");
        assert_eq!(r.status, 200);
        assert_eq!(r.replay.is_some(), claimed);
        assert!(!r.outbound_policy_applied);
        assert_eq!(
            std::str::from_utf8(&r.body).unwrap(),
            r#"{"alpha":{"a":"x y","b":2.5},"id":"i_1","zeta":[3,{"b":null,"y":1}]}"#
        );
        assert_eq!(header(&r.headers, "content-type"), Some("application/json"));
    }
}

#[test]
fn an_unparsed_moment_still_gets_the_self_url_rewrite() {
    let e = engine(model_plain(), det_opts());
    let r = get(&e, None, "/v1/items/i_2");
    assert_eq!(
        body_json(&r)["self"],
        json!("http://127.0.0.1:8081/v1/items/i_2")
    );
    assert!(r.outbound_policy_applied);
}

#[test]
fn a_moment_with_recorded_pii_is_scrubbed_on_every_serve() {
    let read = R::new("GET", "/v1/people/:id")
        .op(StateOp::Read, "people")
        .variant(200, Guard::Always, obj(vec![("id", echo_path("id"))]))
        .exact(
            "/v1/people/p_1",
            "",
            None,
            vec![moment(
                "s1/1",
                200,
                json!({"id": "p_1", "email": "jane.doe@example.com"}),
            )],
        )
        .build();
    let m = model(
        vec![read],
        vec![("people", entity_type(&["p_1"], &[], vec![]))],
    );
    let e = engine(m, det_opts());
    let first = get(&e, Some("a"), "/v1/people/p_1");
    let second = get(&e, Some("b"), "/v1/people/p_1");
    for r in [&first, &second] {
        let text = std::str::from_utf8(&r.body).unwrap();
        assert!(!text.contains("jane.doe@example.com"), "{text}");
        assert!(r.outbound_policy_applied);
    }
    assert_eq!(first.body, second.body, "the envelope is deterministic");
}

#[test]
fn a_new_outbound_policy_redecides_which_moments_are_served_verbatim() {
    let mut e: Engine = engine(model_plain(), det_opts());
    let before = get(&e, Some("a"), "/v1/items/i_1");
    assert_eq!(body_json(&before)["alpha"]["a"], json!("x y"));
    let mut p: OutboundPolicy = e.outbound_policy().clone();
    p.rules.push(OutboundRule {
        id: "mask-alpha".to_string(),
        target: RuleTarget::JsonPath {
            path: "$.alpha.a".to_string(),
        },
        action: RuleAction::Mask {
            replacement: "***".to_string(),
        },
    });
    e.set_outbound_policy(p).expect("policy compiles");
    let after = get(&e, Some("b"), "/v1/items/i_1");
    assert_ne!(body_json(&after)["alpha"]["a"], json!("x y"));
    assert!(after.outbound_policy_applied);
}

#[test]
fn a_value_the_session_supplied_stays_verbatim_in_a_moment_that_needs_the_pii_pass() {
    let read = R::new("GET", "/v1/people/:id")
        .op(StateOp::Read, "people")
        .variant(200, Guard::Always, obj(vec![("id", echo_path("id"))]))
        .exact(
            "/v1/people/p_1",
            "",
            None,
            vec![moment(
                "s1/1",
                200,
                json!({"id": "p_1", "email": "jane.doe@example.com", "backup": "jd@example.org"}),
            )],
        )
        .build();
    let m = model(
        vec![read],
        vec![("people", entity_type(&["p_1"], &[], vec![]))],
    );
    let e = engine(m, det_opts());
    // A fresh session sees both addresses scrubbed (and decides the moment's verdict).
    let other = body_json(&get(&e, Some("other"), "/v1/people/p_1"));
    assert_ne!(other["email"], json!("jane.doe@example.com"));
    // A session that supplied one of them gets that one back verbatim, the other scrubbed.
    e.handle(
        Some("me"),
        &req("GET", "/v1/people/p_1?email=jane.doe%40example.com", None),
    );
    let b = body_json(&get(&e, Some("me"), "/v1/people/p_1"));
    assert_eq!(b["email"], json!("jane.doe@example.com"));
    assert_ne!(b["backup"], json!("jd@example.org"));
}
