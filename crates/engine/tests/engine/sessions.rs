//! Session isolation contract: namespaces keyed by the verbatim `X-Wraith-Session` value, the
//! shared default namespace, what is scoped per session, lifecycle, the cap, resets.

use crate::support;

use proptest::prelude::*;
use serde_json::json;
use support::*;
use wraith_engine::{ClockConfig, ClockMode, EngineOptions, Provision};

fn create(e: &wraith_engine::Engine, s: Option<&str>, name: &str) -> String {
    let r = send(e, s, "POST", "/v1/customers", json!({"name": name}));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    body(&r)["id"].as_str().unwrap_or_default().to_string()
}

#[test]
fn sessions_never_see_each_others_writes() {
    let e = shop();
    let id = create(&e, Some("worker-1"), "Zed");
    assert_eq!(
        get(&e, Some("worker-1"), &format!("/v1/customers/{id}")).status,
        200
    );
    assert_eq!(
        get(&e, Some("worker-2"), &format!("/v1/customers/{id}")).status,
        404
    );
    assert_eq!(get(&e, None, &format!("/v1/customers/{id}")).status, 404);
}

#[test]
fn session_key_is_case_sensitive_and_verbatim() {
    let e = shop();
    let id = create(&e, Some("worker-3"), "Case");
    assert_eq!(
        get(&e, Some("Worker-3"), &format!("/v1/customers/{id}")).status,
        404
    );
    assert_eq!(
        get(&e, Some(" worker-3"), &format!("/v1/customers/{id}")).status,
        404
    );
    assert_eq!(
        get(&e, Some("worker-3"), &format!("/v1/customers/{id}")).status,
        200
    );
}

#[test]
fn headerless_requests_share_one_real_default_namespace() {
    let e = shop();
    let id = create(&e, None, "Shared");
    // A second headerless client sees the first one's write: it is one namespace.
    assert_eq!(get(&e, None, &format!("/v1/customers/{id}")).status, 200);
    assert_eq!(
        get(&e, Some("default-ish"), &format!("/v1/customers/{id}")).status,
        404
    );
    let sessions = e.sessions();
    assert!(sessions.iter().any(|s| s.session.is_none()));
}

#[test]
fn generated_ids_come_from_a_per_session_seeded_generator() {
    let a = shop();
    let b = shop();
    // Same seed + same session id -> same ids, in any engine.
    assert_eq!(create(&a, Some("s"), "x"), create(&b, Some("s"), "x"));
    // Different sessions draw from different generators.
    let a2 = shop();
    assert_ne!(create(&a2, Some("s"), "x"), create(&a2, Some("t"), "x"));
}

#[test]
fn clock_is_scoped_per_session() {
    let e = shop();
    let t1 = body(&send(
        &e,
        Some("a"),
        "POST",
        "/v1/customers",
        json!({"name": "1"}),
    ))["created"]
        .clone();
    let t2 = body(&send(
        &e,
        Some("a"),
        "POST",
        "/v1/customers",
        json!({"name": "2"}),
    ))["created"]
        .clone();
    let t3 = body(&send(
        &e,
        Some("b"),
        "POST",
        "/v1/customers",
        json!({"name": "3"}),
    ))["created"]
        .clone();
    assert_eq!(t1, json!(1_700_000_000));
    assert_eq!(
        t2,
        json!(1_700_000_001),
        "deterministic clock advances one second per reading"
    );
    assert_eq!(
        t3,
        json!(1_700_000_000),
        "another session has its own clock"
    );
}

#[test]
fn namespace_cap_answers_503_with_the_exact_body() {
    let e = engine(
        shop_model(),
        EngineOptions {
            max_namespaces: 2,
            ..det_opts()
        },
    );
    assert_eq!(get(&e, Some("a"), "/v1/customers/cus_1").status, 200);
    assert_eq!(get(&e, Some("b"), "/v1/customers/cus_1").status, 200);
    let r = get(&e, Some("c"), "/v1/customers/cus_1");
    assert_eq!(r.status, 503);
    assert_eq!(
        String::from_utf8_lossy(&r.body),
        r#"{"error":"namespace-unavailable","message":"namespace limit exceeded (max 2)"}"#
    );
    // Existing namespaces keep working: nothing was evicted.
    assert_eq!(get(&e, Some("a"), "/v1/customers/cus_1").status, 200);
    // Deleting one frees its slot.
    assert!(e.delete_session("a").is_ok());
    assert_eq!(get(&e, Some("c"), "/v1/customers/cus_1").status, 200);
}

#[test]
fn provisioning_at_the_cap_is_refused_with_namespace_unavailable() {
    let e = engine(
        shop_model(),
        EngineOptions {
            max_namespaces: 1,
            ..det_opts()
        },
    );
    assert!(
        e.provision(Provision {
            session: "a".into(),
            ..Provision::default()
        })
        .is_ok()
    );
    let err = e
        .provision(Provision {
            session: "b".into(),
            ..Provision::default()
        })
        .err()
        .map(|e| (e.status, e.code));
    assert_eq!(err, Some((503, "namespace-unavailable")));
}

#[test]
fn idle_namespaces_do_not_expire() {
    let e = shop();
    let id = create(&e, Some("idle"), "Sleepy");
    // Lots of traffic elsewhere, no eviction.
    for i in 0..50 {
        get(&e, Some(&format!("other-{i}")), "/v1/customers/cus_1");
    }
    assert_eq!(
        get(&e, Some("idle"), &format!("/v1/customers/{id}")).status,
        200
    );
}

#[test]
fn reset_session_clears_state_but_keeps_provisioning_and_reseeds() {
    let e = engine_with(
        shop_model(),
        Some(SCHEMA),
        tree(
            vec![(
                "baseline",
                set(
                    Some(r#"{"entities":{"customers":[{"id":"cus_fx","name":"Fixture"}]}}"#),
                    &[],
                    &[],
                ),
            )],
            &[],
        ),
        det_opts(),
    );
    let info = e
        .provision(Provision {
            session: "w".into(),
            fixture: Some("baseline".into()),
            seed: Some(7),
            clock: Some(ClockConfig {
                mode: ClockMode::Fixed,
                base_epoch: 5,
            }),
        })
        .map_err(|e| e.to_string());
    let info = info.unwrap_or_else(|m| panic!("{m}"));
    assert!(info.created);
    assert_eq!(info.entities_seeded, 1);
    let id = create(&e, Some("w"), "Temp");
    let del = e.handle(Some("w"), &req("DELETE", "/v1/customers/cus_fx", None));
    assert_eq!(del.status, 200);
    let after = e.reset_session("w").map_err(|e| e.to_string());
    let after = after.unwrap_or_else(|m| panic!("{m}"));
    assert!(after.provisioned);
    assert_eq!(after.seed, 7);
    assert_eq!(after.fixture.as_deref(), Some("baseline"));
    assert_eq!(after.clock.mode, ClockMode::Fixed);
    assert_eq!(
        get(&e, Some("w"), &format!("/v1/customers/{id}")).status,
        404
    );
    assert_eq!(
        get(&e, Some("w"), "/v1/customers/cus_fx").status,
        200,
        "fixture re-seeded"
    );
    // The generator restarts too: the same first id again.
    assert_eq!(create(&e, Some("w"), "Temp"), id);
}

#[test]
fn delete_session_drops_provisioning_and_a_reuse_starts_fresh() {
    let e = shop();
    assert!(
        e.provision(Provision {
            session: "w".into(),
            seed: Some(9),
            ..Provision::default()
        })
        .is_ok()
    );
    let id = create(&e, Some("w"), "Gone");
    assert!(e.delete_session("w").is_ok());
    assert!(
        e.sessions()
            .iter()
            .all(|s| s.session.as_deref() != Some("w"))
    );
    assert_eq!(
        get(&e, Some("w"), &format!("/v1/customers/{id}")).status,
        404
    );
    let s = e
        .sessions()
        .into_iter()
        .find(|s| s.session.as_deref() == Some("w"));
    // Recreated lazily: not provisioned, and no longer the provisioned seed but the one a
    // session of that id draws from the serve seed (42), the same as a fresh `w` gets.
    let s = s.map(|s| (s.provisioned, s.seed));
    assert_eq!(s.map(|s| s.0), Some(false));
    assert_ne!(s.map(|s| s.1), Some(9));
    let fresh = shop();
    get(&fresh, Some("w"), "/v1/customers");
    let fresh_seed = fresh
        .sessions()
        .into_iter()
        .find(|s| s.session.as_deref() == Some("w"))
        .map(|s| s.seed);
    assert_eq!(s.map(|s| s.1), fresh_seed);
    assert_eq!(
        e.delete_session("never").err().map(|e| (e.status, e.code)),
        Some((404, "session-not-found"))
    );
    assert_eq!(
        e.reset_session("never").err().map(|e| e.code),
        Some("session-not-found")
    );
}

#[test]
fn global_reset_clears_every_session() {
    let e = shop();
    let a = create(&e, Some("a"), "A");
    let b = create(&e, None, "B");
    e.reset_all();
    assert_eq!(
        get(&e, Some("a"), &format!("/v1/customers/{a}")).status,
        404
    );
    assert_eq!(get(&e, None, &format!("/v1/customers/{b}")).status, 404);
}

/// The global reset clears provisioned sessions too, and keeps their provisioning: the same
/// settings again find the session already there.
#[test]
fn global_reset_clears_provisioned_sessions_and_keeps_their_provisioning() {
    let e = shop();
    let p = Provision {
        session: "p".into(),
        seed: Some(3),
        ..Provision::default()
    };
    assert_eq!(e.provision(p.clone()).ok().map(|i| i.created), Some(true));
    let id = create(&e, Some("p"), "Provisioned");
    let path = format!("/v1/customers/{id}");
    assert_eq!(get(&e, Some("p"), &path).status, 200);
    e.reset_all();
    assert_eq!(get(&e, Some("p"), &path).status, 404);
    assert_eq!(e.provision(p).ok().map(|i| i.created), Some(false));
}

#[test]
fn provision_conflict_and_unknown_fixture_are_refused() {
    let e = engine_with(
        shop_model(),
        Some(SCHEMA),
        tree(vec![("baseline", set(Some("{}"), &[], &[]))], &[]),
        det_opts(),
    );
    let p = Provision {
        session: "x".into(),
        seed: Some(1),
        ..Provision::default()
    };
    assert!(e.provision(p.clone()).is_ok());
    // Same settings again: fine, not created.
    assert_eq!(e.provision(p).ok().map(|i| i.created), Some(false));
    let conflict = e
        .provision(Provision {
            session: "x".into(),
            seed: Some(2),
            ..Provision::default()
        })
        .err();
    assert_eq!(
        conflict.as_ref().map(|c| (c.status, c.code)),
        Some((409, "session-provision-conflict"))
    );
    let missing = e
        .provision(Provision {
            session: "y".into(),
            fixture: Some("nope".into()),
            ..Provision::default()
        })
        .err();
    let missing = missing.unwrap_or_else(|| panic!("expected fixture-not-found"));
    assert_eq!(missing.code, "fixture-not-found");
    assert_eq!(missing.available, vec!["baseline".to_string()]);
    assert_eq!(
        missing.body(),
        json!({"error": "fixture-not-found", "message": "no fixture set named `nope`", "available": ["baseline"]})
    );
}

#[test]
fn provisioned_clock_and_seed_apply_to_the_session() {
    let e = shop();
    assert!(
        e.provision(Provision {
            session: "p".into(),
            seed: Some(123),
            clock: Some(ClockConfig {
                mode: ClockMode::Fixed,
                base_epoch: 1_000
            }),
            ..Provision::default()
        })
        .is_ok()
    );
    let b1 = body(&send(
        &e,
        Some("p"),
        "POST",
        "/v1/customers",
        json!({"name": "a"}),
    ));
    let b2 = body(&send(
        &e,
        Some("p"),
        "POST",
        "/v1/customers",
        json!({"name": "b"}),
    ));
    assert_eq!(b1["created"], json!(1_000));
    assert_eq!(b2["created"], json!(1_000), "fixed clock is frozen");
    // An explicitly seeded session generates the same ids under any session name.
    assert!(
        e.provision(Provision {
            session: "q".into(),
            seed: Some(123),
            ..Provision::default()
        })
        .is_ok()
    );
    let q1 = body(&send(
        &e,
        Some("q"),
        "POST",
        "/v1/customers",
        json!({"name": "a"}),
    ));
    assert_eq!(q1["id"], b1["id"]);
}

#[test]
fn real_clock_reads_the_wall_clock_handed_in() {
    let e = engine(
        shop_model(),
        EngineOptions {
            wall_clock: wall(1_234_567_000_000),
            ..EngineOptions::default()
        },
    );
    let b = body(&send(
        &e,
        Some("r"),
        "POST",
        "/v1/customers",
        json!({"name": "a"}),
    ));
    assert_eq!(b["created"], json!(1_234_567));
}

#[test]
fn session_state_dump_never_creates_a_namespace() {
    let e = shop();
    assert!(e.session_state("ghost").is_none());
    assert!(e.sessions().is_empty());
    create(&e, Some("real"), "x");
    let dump = e.session_state("real").unwrap_or_default();
    assert_eq!(
        dump["entities"]["customers"]["live"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[test]
fn idempotency_cache_is_scoped_per_session() {
    let e = engine(
        shop_model(),
        EngineOptions {
            idempotency: Some(wraith_engine::IdempotencyOptions::default()),
            ..det_opts()
        },
    );
    let r = |s| {
        e.handle(
            Some(s),
            &with_header(
                req("POST", "/v1/customers", Some(json!({"name": "k"}))),
                "idempotency-key",
                "key-1",
            ),
        )
    };
    let a1 = body(&r("a"));
    let a2 = body(&r("a"));
    let b1 = body(&r("b"));
    assert_eq!(a1, a2, "same key in the same session replays");
    assert_ne!(a1["id"], b1["id"], "another session has its own cache");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Interleaved creates and deletes of two sessions never leak into each other.
    #[test]
    fn interleaved_sessions_never_see_each_others_writes(ops in prop::collection::vec((any::<bool>(), any::<bool>()), 1..24)) {
        let e = shop();
        let mut mine: [Vec<String>; 2] = [Vec::new(), Vec::new()];
        for (who, delete) in ops {
            let s = if who { "left" } else { "right" };
            let idx = usize::from(who);
            if delete && !mine[idx].is_empty() {
                let id = mine[idx].remove(0);
                let r = e.handle(Some(s), &req("DELETE", &format!("/v1/customers/{id}"), None));
                prop_assert_eq!(r.status, 200);
            } else {
                let id = create(&e, Some(s), "p");
                mine[idx].push(id);
            }
        }
        for (idx, s, other) in [(1usize, "left", "right"), (0, "right", "left")] {
            for id in &mine[idx] {
                prop_assert_eq!(get(&e, Some(s), &format!("/v1/customers/{id}")).status, 200);
                prop_assert_eq!(get(&e, Some(other), &format!("/v1/customers/{id}")).status, 404);
            }
            let list = body(&get(&e, Some(s), "/v1/customers?limit=100"));
            let ids: Vec<String> = list["data"].as_array().map(|a| a.iter().filter_map(|i| i["id"].as_str().map(str::to_string)).collect()).unwrap_or_default();
            for id in &mine[1 - idx] {
                prop_assert!(!ids.contains(id), "{} saw {}'s {}", s, other, id);
            }
        }
    }
}
