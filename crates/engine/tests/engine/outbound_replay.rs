//! `X-Wraith-Replay`: when the claim is made, how `outbound-policy=applied` qualifies it, and
//! every rule that keeps it off a response.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::*;
use wraith_engine::{
    Engine, EngineOptions, Fidelity, IdempotencyOptions, Provenance, ReplayClaim, ReplayClass,
    Response,
};
use wraith_model::*;

fn replay_header(e: &Engine, r: &Response, method: &str) -> Option<String> {
    header(&e.control_headers(r, method), "x-wraith-replay").map(str::to_string)
}

/// One read with two recorded moments: the first carries a recorded email (PII), the second
/// nothing the policy touches. Keys recorded out of order.
fn model_two_moments() -> Model {
    let read = R::new("GET", "/v1/items/:id")
        .op(StateOp::Read, "items")
        .variant(
            200,
            Guard::Always,
            obj(vec![("id", echo_path("id")), ("kind", c(json!("item")))]),
        )
        .exact(
            "/v1/items/i_1",
            "",
            None,
            vec![
                moment(
                    "s1/1",
                    200,
                    json!({"zeta": 1, "id": "i_1", "contact": "jane@example.com", "alpha": {"b": 2, "a": 1}}),
                ),
                moment("s1/2", 200, json!({"zeta": 2, "id": "i_1", "alpha": {"b": 3, "a": 1}})),
            ],
        )
        .build();
    let create = R::new("POST", "/v1/items")
        .op(StateOp::Create, "items")
        .variant(
            201,
            Guard::Always,
            obj(vec![("id", gen_id(cus_id())), ("kind", c(json!("item")))]),
        )
        .exact(
            "/v1/items",
            "",
            Some(&json!({"kind": "item"})),
            vec![moment("s1/3", 201, json!({"id": "i_9", "kind": "item"}))],
        )
        .build();
    model(
        vec![read, create],
        vec![("items", entity_type(&["i_1"], &[], vec![]))],
    )
}

#[test]
fn series_moment_is_disclosed_as_policy_applied_when_a_pass_changed_bytes() {
    let e = engine(model_two_moments(), det_opts());
    let r1 = get(&e, None, "/v1/items/i_1");
    assert_eq!(r1.replay, Some(ReplayClass::SeriesMoment));
    assert!(r1.outbound_policy_applied);
    assert_eq!(
        replay_header(&e, &r1, "GET").as_deref(),
        Some("series-moment;v=1;outbound-policy=applied")
    );
    let r2 = get(&e, None, "/v1/items/i_1");
    assert!(
        !r2.outbound_policy_applied,
        "nothing in the second moment changed"
    );
    assert_eq!(
        replay_header(&e, &r2, "GET").as_deref(),
        Some("series-moment;v=1")
    );
}

#[test]
fn a_replayed_moment_is_served_parsed_and_reserialized_with_sorted_keys() {
    let e = engine(model_two_moments(), det_opts());
    get(&e, None, "/v1/items/i_1");
    let r2 = get(&e, None, "/v1/items/i_1");
    assert_eq!(
        std::str::from_utf8(&r2.body).unwrap(),
        r#"{"alpha":{"a":1,"b":3},"id":"i_1","zeta":2}"#
    );
}

#[test]
fn head_never_carries_a_claim() {
    let e = engine(model_two_moments(), det_opts());
    let r = e.handle(None, &req("HEAD", "/v1/items/i_1", None));
    assert!(r.body.is_empty());
    assert!(replay_header(&e, &r, "HEAD").is_none());
}

#[test]
fn strict_fidelity_never_claims_even_when_the_policy_applied() {
    let e = engine(
        model_two_moments(),
        EngineOptions {
            fidelity: Fidelity::Strict,
            ..det_opts()
        },
    );
    let r = get(&e, None, "/v1/items/i_1");
    assert_eq!(r.provenance, Provenance::Recorded);
    assert_ne!(
        serde_json::from_slice::<serde_json::Value>(&r.body).unwrap()["contact"],
        json!("jane@example.com"),
        "the outbound policy still applies under strict"
    );
    assert!(replay_header(&e, &r, "GET").is_none());
}

#[test]
fn no_provenance_headers_suppresses_the_claim() {
    let e = engine(
        model_two_moments(),
        EngineOptions {
            provenance_headers: false,
            ..det_opts()
        },
    );
    let r = get(&e, None, "/v1/items/i_1");
    assert!(r.replay.is_some());
    assert!(replay_header(&e, &r, "GET").is_none());
    assert!(header(&e.control_headers(&r, "GET"), "x-wraith-provenance").is_none());
}

#[test]
fn past_the_recorded_run_last_wins_is_recorded_without_a_claim() {
    let e = engine(model_two_moments(), det_opts());
    get(&e, None, "/v1/items/i_1");
    get(&e, None, "/v1/items/i_1");
    let r3 = get(&e, None, "/v1/items/i_1");
    assert_eq!(r3.provenance, Provenance::Recorded);
    assert!(replay_header(&e, &r3, "GET").is_none());
}

#[test]
fn a_synthesized_answer_carries_no_claim() {
    let e = engine(model_two_moments(), det_opts());
    let r = get(&e, None, "/v1/items/i_other");
    assert_eq!(r.provenance, Provenance::Template);
    assert!(replay_header(&e, &r, "GET").is_none());
}

#[test]
fn an_idempotent_replay_repeats_the_answer_without_the_claim() {
    let e = engine(
        model_two_moments(),
        EngineOptions {
            idempotency: Some(IdempotencyOptions::default()),
            ..det_opts()
        },
    );
    let q = with_header(
        req("POST", "/v1/items", Some(json!({"kind": "item"}))),
        "idempotency-key",
        "k1",
    );
    let first = e.handle(None, &q);
    assert_eq!(first.replay, Some(ReplayClass::SeriesMoment));
    let again = e.handle(None, &q);
    assert_eq!(again.body, first.body);
    assert!(replay_header(&e, &again, "POST").is_none());
}

#[test]
fn the_emitted_value_reads_back_and_unknown_tokens_read_as_no_claim() {
    let e = engine(model_two_moments(), det_opts());
    let r = get(&e, None, "/v1/items/i_1");
    let v = replay_header(&e, &r, "GET").unwrap();
    assert_eq!(
        ReplayClaim::parse(&v),
        Some(ReplayClaim {
            class: ReplayClass::SeriesMoment,
            outbound_policy_applied: true
        })
    );
    for unknown in [
        "series-moment;v=2",
        "replayed-moment;v=1",
        "series-moment;v=1;outbound-policy=applied;extra=1",
        "series-moment;v=1;compressed",
    ] {
        assert_eq!(ReplayClaim::parse(unknown), None, "{unknown}");
    }
}

/// `POST /v1/profiles` (create) and `GET /v1/me`, whose recorded answer the model proved
/// repeats the create's `display_name`.
fn session_bound_model() -> Model {
    let create = R::new("POST", "/v1/profiles")
        .op(StateOp::Create, "profiles")
        .variant(
            201,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("display_name", echo_body("/display_name", JsonType::String)),
            ]),
        )
        .build();
    let mut me = R::new("GET", "/v1/me")
        .variant(200, Guard::Always, obj(vec![("acct", c(json!("admin")))]))
        .exact(
            "/v1/me",
            "",
            None,
            vec![moment(
                "s1/2",
                200,
                json!({"acct": "admin", "display_name": "Recorded Person", "note": "hi"}),
            )],
        )
        .build();
    me.exact[0].session_bound = vec![SessionBoundPath {
        pointer: "/display_name".to_string(),
        create: "POST /v1/profiles".to_string(),
        field: "/display_name".to_string(),
    }];
    model(vec![create, me], vec![])
}

#[test]
fn a_session_bound_read_serves_the_sessions_own_value_with_its_claim() {
    let e = engine(session_bound_model(), det_opts());
    let c = send(
        &e,
        Some("s"),
        "POST",
        "/v1/profiles",
        json!({"display_name": "Mine Own"}),
    );
    assert_eq!(c.status, 201);
    let r = get(&e, Some("s"), "/v1/me");
    assert_eq!(r.replay, Some(ReplayClass::SessionBoundMoment));
    let b: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(
        b["display_name"],
        json!("Mine Own"),
        "verbatim, not scrubbed"
    );
    assert_eq!(b["acct"], json!("admin"));
    assert_eq!(b["note"], json!("hi"));
    let v = replay_header(&e, &r, "GET").unwrap();
    assert!(v.starts_with("session-bound-moment;v=1"), "{v}");
}

#[test]
fn without_the_sessions_create_the_moment_is_a_plain_series_moment() {
    let e = engine(session_bound_model(), det_opts());
    let r = get(&e, Some("fresh"), "/v1/me");
    assert_eq!(r.replay, Some(ReplayClass::SeriesMoment));
    let b: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    // The recorded name went through the PII pass: the claim says so.
    assert_ne!(b["display_name"], json!("Recorded Person"));
    assert_eq!(
        replay_header(&e, &r, "GET").as_deref(),
        Some("series-moment;v=1;outbound-policy=applied")
    );
}

/// `POST /v1/items` (a create minting its `id`) recorded by the runs `runs`, one request body
/// each (`{"kind": "item-<n>"}`).
fn minting_create(runs: &[&str]) -> Model {
    let mut create = R::new("POST", "/v1/items")
        .op(StateOp::Create, "items")
        .variant(
            201,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("kind", echo_body("/kind", JsonType::String)),
            ]),
        );
    for (n, run) in runs.iter().enumerate() {
        let kind = format!("item-{n}");
        create = create.exact(
            "/v1/items",
            "",
            Some(&json!({"kind": kind})),
            vec![moment(
                &format!("{run}/{n}"),
                201,
                json!({"id": format!("i_{n}"), "kind": kind}),
            )],
        );
    }
    model(
        vec![create.build()],
        vec![("items", entity_type(&[], &[], vec![]))],
    )
}

#[test]
fn a_minting_write_several_runs_recorded_is_served_without_a_claim() {
    // Two runs created items: the request recorded by one of them is answered with that run's
    // minted id, which another client sending it would not get.
    let post_item = |e: &Engine| send(e, Some("a"), "POST", "/v1/items", json!({"kind": "item-1"}));
    let e = engine(minting_create(&["s1", "s2"]), det_opts());
    let r = post_item(&e);
    assert_eq!(r.provenance, Provenance::Recorded);
    assert_eq!(body(&r)["id"], json!("i_1"));
    assert_eq!(r.replay, None);
    assert!(replay_header(&e, &r, "POST").is_none());
    // A twin of one recorded run keeps its claim.
    let e = engine(minting_create(&["s1", "s1"]), det_opts());
    let r = post_item(&e);
    assert_eq!(r.provenance, Provenance::Recorded);
    assert_eq!(r.replay, Some(ReplayClass::SeriesMoment));
}
