//! The per-field origin map under `--debug` (`Response::field_origins`): where every field of
//! a response came from, and its agreement with `X-Wraith-Provenance-Counts`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::BTreeMap;

use serde_json::json;
use support::*;
use wraith_engine::{EngineOptions, FieldCounts, FieldSource, Response};

fn debug_shop() -> wraith_engine::Engine {
    engine(
        shop_model(),
        EngineOptions {
            debug: true,
            ..det_opts()
        },
    )
}

fn words(r: &Response) -> BTreeMap<String, &'static str> {
    r.field_origins
        .as_ref()
        .expect("debug responses carry origins")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str()))
        .collect()
}

fn assert_counts_agree(e: &wraith_engine::Engine, r: &Response, method: &str) {
    let origins = r.field_origins.as_ref().expect("origins");
    let counts = FieldCounts::of_origins(origins);
    assert_eq!(r.field_counts, Some(counts));
    let h = e.control_headers(r, method);
    assert_eq!(
        header(&h, "X-Wraith-Provenance-Counts"),
        Some(
            format!(
                "recorded={} template={} fixture={} handler={}",
                counts.recorded, counts.template, counts.fixture, counts.handler
            )
            .as_str()
        )
    );
}

#[test]
fn debug_rendered_create_names_generated_echo_constant_and_clock_fields() {
    let e = debug_shop();
    let r = send(
        &e,
        None,
        "POST",
        "/v1/customers",
        json!({"name": "Dana", "email": "d@example.com"}),
    );
    assert_eq!(r.status, 200);
    let w = words(&r);
    assert_eq!(w.get("/id"), Some(&"generated"), "{w:?}");
    assert_eq!(w.get("/name"), Some(&"echo"), "{w:?}");
    assert_eq!(w.get("/email"), Some(&"echo"), "{w:?}");
    assert_eq!(w.get("/object"), Some(&"constant"), "{w:?}");
    assert_eq!(w.get("/address/city"), Some(&"constant"), "{w:?}");
    assert_eq!(w.get("/created"), Some(&"clock"), "{w:?}");
    // Every leaf of the body has exactly one entry.
    let b = body(&r);
    for k in w.keys() {
        assert!(b.pointer(k).is_some(), "{k} is not a body position");
    }
    assert_counts_agree(&e, &r, "POST");
}

#[test]
fn a_session_read_of_its_own_entity_is_state_and_a_recorded_moment_is_recorded() {
    let e = debug_shop();
    let created = send(
        &e,
        Some("s"),
        "POST",
        "/v1/customers",
        json!({"name": "Eve"}),
    );
    let id = body(&created)["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let r = get(&e, Some("s"), &format!("/v1/customers/{id}"));
    assert_eq!(r.status, 200);
    let w = words(&r);
    assert_eq!(w.get("/name"), Some(&"state"), "{w:?}");
    assert_counts_agree(&e, &r, "GET");

    let replayed = get(&e, Some("other"), "/v1/customers/cus_1");
    let w = words(&replayed);
    assert!(!w.is_empty());
    assert!(w.values().all(|s| *s == "recorded"), "{w:?}");
    assert_counts_agree(&e, &replayed, "GET");
}

#[test]
fn engine_invented_answers_have_an_empty_origin_map() {
    let e = debug_shop();
    let r = get(&e, None, "/no/such/route");
    assert_eq!(r.status, 501);
    assert_eq!(r.field_origins, Some(BTreeMap::new()));
    assert_eq!(r.field_counts, Some(FieldCounts::default()));
}

#[test]
fn without_debug_or_for_head_there_is_no_origin_map() {
    let e = shop();
    let r = send(&e, None, "POST", "/v1/customers", json!({"name": "Dana"}));
    assert!(r.field_origins.is_none() && r.field_counts.is_none());
    let d = debug_shop();
    let r = d.handle(None, &req("HEAD", "/v1/customers/cus_1", None));
    assert!(r.field_origins.is_none());
    // Its counts are the GET's, as its other headers are.
    let get = d.handle(None, &req("GET", "/v1/customers/cus_1", None));
    assert!(r.field_counts.is_some());
    assert_eq!(r.field_counts, get.field_counts);
}

#[test]
fn a_partial_fault_that_cuts_the_body_drops_the_origins() {
    let e = debug_shop();
    let mut r = send(&e, None, "POST", "/v1/customers", json!({"name": "Dana"}));
    assert!(r.field_origins.is_some());
    assert!(!wraith_engine::sim::apply_partial(&mut r, usize::MAX));
    assert!(r.field_origins.is_some(), "an uncut body keeps its origins");
    assert!(wraith_engine::sim::apply_partial(&mut r, 3));
    assert!(r.field_origins.is_none() && r.field_counts.is_none());
}

#[test]
fn origin_words_are_the_documented_vocabulary() {
    let all = [
        FieldSource::Constant,
        FieldSource::Echo,
        FieldSource::Generated,
        FieldSource::Clock,
        FieldSource::Counter,
        FieldSource::Observed,
        FieldSource::State,
        FieldSource::Fixture,
        FieldSource::Recorded,
        FieldSource::Handler,
        FieldSource::Authored,
    ];
    for s in all {
        assert_eq!(serde_json::to_value(s).unwrap(), json!(s.as_str()));
    }
}
