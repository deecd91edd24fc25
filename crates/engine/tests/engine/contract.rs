//! Twin response contract: route misses, exact replay and its time axis, the fail-closed gate,
//! fidelity modes, provenance and every `X-Wraith-*` header rule.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_engine::{
    EngineOptions, Fidelity, Freshness, Provenance, ReplayClass, Response, UnknownEntity,
};
use wraith_model::*;

fn not_found_mode() -> wraith_engine::Engine {
    engine(
        shop_model(),
        EngineOptions {
            unknown_entity: UnknownEntity::NotFound,
            ..det_opts()
        },
    )
}

fn ctl(e: &wraith_engine::Engine, r: &Response, method: &str) -> Vec<(String, String)> {
    e.control_headers(r, method)
}

// ------------------------------------------------------------------ route level

#[test]
fn route_miss_is_501_with_the_structured_body_and_no_route_header() {
    let e = shop();
    let r = get(&e, None, "/nonexistent");
    assert_eq!(r.status, 501);
    assert_eq!(r.provenance, Provenance::Miss);
    assert!(r.route.is_none());
    let b = body(&r);
    assert_eq!(b["error"], json!("no matching route"));
    assert_eq!(b["wraith"]["twin"], json!("shop"));
    assert_eq!(
        b["wraith"]["hint"],
        json!("route not in recorded coverage; see `wraith coverage`")
    );
    assert!(
        b["wraith"]["routes"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("GET /v1/customers/:id")))
    );
    assert!(
        b["wraith"].get("routes_total").is_none(),
        "only when more than 20"
    );
    let h = ctl(&e, &r, "GET");
    assert_eq!(header(&h, "x-wraith-provenance"), Some("miss"));
    assert!(header(&h, "x-wraith-route").is_none());
}

#[test]
fn route_miss_lists_a_route_recorded_on_two_origins_once() {
    let mut other = R::new("GET", "/v1/nodes")
        .variant(200, Guard::Always, c(json!({"on": "other"})))
        .build();
    other.origin = Some("https://other.example".into());
    let own = R::new("GET", "/v1/nodes")
        .variant(200, Guard::Always, c(json!({"on": "own"})))
        .build();
    let e = engine(model(vec![own, other], vec![]), det_opts());
    let b = body(&get(&e, None, "/nope"));
    assert_eq!(b["wraith"]["routes"], json!(["GET /v1/nodes"]));
    // `/__wraith/info` and the serve banner count the routes the same way.
    assert_eq!(e.route_count(), 1);
}

#[test]
fn route_miss_caps_routes_at_20_and_reports_routes_total() {
    let routes = (0..25)
        .map(|i| {
            R::new("GET", &format!("/r{i:02}"))
                .variant(200, Guard::Always, c(json!({})))
                .build()
        })
        .collect();
    let e = engine(
        model(routes, vec![]),
        EngineOptions {
            twin_name: None,
            ..det_opts()
        },
    );
    let b = body(&get(&e, None, "/nope"));
    assert_eq!(b["wraith"]["routes"].as_array().map(Vec::len), Some(20));
    assert_eq!(b["wraith"]["routes_total"], json!(25));
    assert_eq!(
        b["wraith"]["twin"],
        Value::Null,
        "null when no twin name is injected"
    );
}

#[test]
fn method_mismatch_is_a_route_miss() {
    let e = shop();
    assert_eq!(
        e.handle(None, &req("PUT", "/v1/customers", None)).status,
        501
    );
}

/// RFC 9110 §9.1: "The method token is case-sensitive": `get`, `Get` and `delete` are methods
/// no route has, and `head` is not `HEAD` (which alone falls back to the `GET` route).
#[test]
fn a_method_in_another_letter_case_is_a_route_miss() {
    let e = shop();
    for method in ["get", "Get", "head", "delete"] {
        let r = e.handle(None, &req(method, "/v1/customers", None));
        assert_eq!(r.status, 501, "{method}");
        assert_eq!(r.route, None, "{method}");
        assert_eq!(e.route_template(method, "/v1/customers", None), None);
    }
    let head = e.handle(None, &req("HEAD", "/v1/customers", None));
    assert_eq!(head.status, 200);
    assert_eq!(head.route.as_deref(), Some("GET /v1/customers"));
}

#[test]
fn dot_segments_are_refused_with_400() {
    let e = shop();
    assert_eq!(get(&e, None, "/v1/./customers").status, 400);
    assert_eq!(get(&e, None, "/v1/customers/..").status, 400);
}

#[test]
fn double_slashes_collapse_onto_the_route() {
    let e = shop();
    let r = get(&e, None, "/v1//customers//");
    assert_eq!(r.status, 200);
    assert_eq!(r.route.as_deref(), Some("GET /v1/customers"));
}

#[test]
fn literal_segments_beat_parameters() {
    let e = shop();
    let r = send(&e, None, "POST", "/v1/customers/search", json!({}));
    assert_eq!(r.route.as_deref(), Some("POST /v1/customers/search"));
    assert_eq!(body(&r)["object"], json!("search_result"));
}

#[test]
fn head_uses_the_get_route_and_returns_no_body_and_no_replay_claim() {
    let e = without_pii(shop());
    let r = e.handle(None, &req("HEAD", "/v1/customers/cus_1", None));
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty());
    assert_eq!(r.route.as_deref(), Some("GET /v1/customers/:id"));
    assert!(r.replay.is_none());
    assert!(header(&ctl(&e, &r, "HEAD"), "x-wraith-replay").is_none());
    // HEAD does not consume a moment of the time axis.
    let g = get(&e, None, "/v1/customers/cus_1");
    assert_eq!(body(&g)["name"], json!("Alice"));
}

#[test]
fn a_recorded_body_on_a_204_or_304_is_not_answered_and_drops_the_replay_claim() {
    let gone = R::new("DELETE", "/v1/things/:id")
        .variant(204, Guard::Always, c(json!({"deleted": true})))
        .exact(
            "/v1/things/1",
            "",
            None,
            vec![moment("s1/1", 204, json!({"deleted": true}))],
        )
        .build();
    let cached = R::new("GET", "/v1/etag")
        .variant(304, Guard::Always, c(json!({"cached": true})))
        .exact(
            "/v1/etag",
            "",
            None,
            vec![moment("s1/2", 304, json!({"cached": true}))],
        )
        .build();
    let e = engine(model(vec![gone, cached], vec![]), det_opts());
    for (method, path, status) in [("DELETE", "/v1/things/1", 204), ("GET", "/v1/etag", 304)] {
        // The recorded moment, then the route's template past it: neither has a body.
        for _ in 0..2 {
            let (r, tree) = e.handle_with_tree(Some("s"), &req(method, path, None));
            assert_eq!(r.status, status);
            assert!(r.body.is_empty(), "{method} {path}: {:?}", r.body);
            assert!(tree.is_none());
            assert!(
                r.replay.is_none(),
                "{method} {path}: the body is not the moment's"
            );
            assert!(header(&ctl(&e, &r, method), "x-wraith-replay").is_none());
        }
    }
    let first = e.handle(Some("t"), &req("GET", "/v1/etag", None));
    assert_eq!(first.provenance, Provenance::Recorded);
    assert_eq!(first.exchange.as_deref(), Some("s1/2"));
}

#[test]
fn an_empty_recorded_204_keeps_its_replay_claim() {
    let mut empty = moment("s1/1", 204, json!(null));
    empty.body = RecordedBody::Empty;
    let gone = R::new("DELETE", "/v1/things/:id")
        .variant_empty(204, Guard::Always)
        .exact("/v1/things/1", "", None, vec![empty])
        .build();
    let e = engine(model(vec![gone], vec![]), det_opts());
    let r = e.handle(Some("s"), &req("DELETE", "/v1/things/1", None));
    assert_eq!(r.status, 204);
    assert!(r.body.is_empty());
    assert_eq!(r.replay, Some(ReplayClass::SeriesMoment));
}

#[test]
fn routes_with_another_origin_match_only_that_host() {
    let other = R::new("GET", "/status")
        .origin("https://status.other.example")
        .variant(200, Guard::Always, c(json!({"ok": "other"})))
        .build();
    let own = R::new("GET", "/status")
        .variant(200, Guard::Always, c(json!({"ok": "own"})))
        .build();
    let only_other = R::new("GET", "/elsewhere")
        .origin("https://status.other.example")
        .variant(200, Guard::Always, c(json!({})))
        .build();
    let e = engine(model(vec![other, own, only_other], vec![]), det_opts());
    assert_eq!(body(&get(&e, None, "/status"))["ok"], json!("own"));
    let mut q = req("GET", "/status", None);
    q.headers = vec![("host".into(), "status.other.example".into())];
    assert_eq!(body(&e.handle(None, &q))["ok"], json!("other"));
    assert_eq!(get(&e, None, "/elsewhere").status, 501);
}

#[test]
fn no_variant_guard_holding_is_a_route_no_match_404_miss() {
    let r = R::new("POST", "/v1/auth")
        .variant(
            200,
            Guard::HeaderPresent {
                name: "authorization".into(),
                present: true,
            },
            c(json!({"ok": true})),
        )
        .build();
    let e = engine(model(vec![r], vec![]), det_opts());
    let miss = send(&e, None, "POST", "/v1/auth", json!({}));
    assert_eq!(miss.status, 404);
    assert_eq!(miss.provenance, Provenance::Miss);
    assert_eq!(body(&miss)["error"], json!("route-no-match"));
    let hit = e.handle(
        None,
        &with_header(
            req("POST", "/v1/auth", Some(json!({}))),
            "authorization",
            "Bearer x",
        ),
    );
    assert_eq!(hit.status, 200);
}

#[test]
fn body_guards_select_variants() {
    let r = R::new("POST", "/v1/signup")
        .variant(
            400,
            Guard::BodyFieldEquals {
                pointer: "/email".into(),
                value: json!("not-an-email"),
            },
            c(json!({"error": "bad email"})),
        )
        .variant(
            422,
            Guard::BodyFieldPresent {
                pointer: "/email".into(),
                present: false,
            },
            c(json!({"error": "missing"})),
        )
        .variant(
            400,
            Guard::BodyValid { valid: false },
            c(json!({"error": "malformed"})),
        )
        .variant(201, Guard::Always, c(json!({"ok": true})))
        .build();
    let e = engine(model(vec![r], vec![]), det_opts());
    assert_eq!(
        send(
            &e,
            None,
            "POST",
            "/v1/signup",
            json!({"email": "not-an-email"})
        )
        .status,
        400
    );
    assert_eq!(
        send(&e, None, "POST", "/v1/signup", json!({"name": "x"})).status,
        422
    );
    assert_eq!(
        send(&e, None, "POST", "/v1/signup", json!({"email": "a@b.c"})).status,
        201
    );
    let mut bad = req("POST", "/v1/signup", None);
    bad.headers
        .push(("content-type".into(), "application/json".into()));
    bad.body = bytes::Bytes::from_static(b"{broken");
    assert_eq!(
        e.handle(None, &bad).status,
        422,
        "no parsed body: the email field is absent"
    );
}

#[test]
fn a_json_body_that_does_not_parse_is_a_400_malformed_body_miss_when_no_variant_covers_it() {
    let r = R::new("POST", "/v1/things")
        .op(StateOp::Create, "things")
        .variant(201, Guard::Always, obj(vec![("id", gen_id(cus_id()))]))
        .build();
    let e = engine(
        model(vec![r], vec![("things", entity_type(&[], &[], vec![]))]),
        det_opts(),
    );
    let sent = |ct: &str, raw: &'static [u8]| {
        let mut r = req("POST", "/v1/things", None);
        r.headers.push(("content-type".into(), ct.into()));
        r.body = bytes::Bytes::from_static(raw);
        e.handle(Some("s"), &r)
    };
    for raw in [
        &b"{\"email\": broken"[..],
        b"not json at all",
        b"{",
        b"[1,2",
    ] {
        let resp = sent("application/json; charset=utf-8", raw);
        assert_eq!(resp.status, 400, "{}", String::from_utf8_lossy(raw));
        assert_eq!(resp.provenance, Provenance::Miss);
        assert_eq!(resp.route.as_deref(), Some("POST /v1/things"));
        assert_eq!(body(&resp)["error"], json!("malformed-body"));
    }
    assert_eq!(
        e.session_state("s").unwrap_or_default()["entities"],
        json!({}),
        "nothing was stored from a body that does not parse"
    );
    // What parses, is empty or declares no JSON is the variant's to answer.
    assert_eq!(sent("application/json", b"").status, 201);
    assert_eq!(sent("application/json", b"[1,2]").status, 201);
    assert_eq!(sent("application/vnd.api+json", b"{}").status, 201);
    assert_eq!(sent("text/plain", b"{broken").status, 201);
    assert_eq!(sent("application/vnd.api+json", b"{broken").status, 400);
}

#[test]
fn a_json_body_the_engine_cannot_hold_is_a_400_malformed_body_naming_why() {
    let r = R::new("POST", "/v1/things")
        .op(StateOp::Create, "things")
        .variant(
            201,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("name", echo_body("/name", JsonType::String)),
            ]),
        )
        .build();
    let e = engine(
        model(vec![r], vec![("things", entity_type(&[], &[], vec![]))]),
        det_opts(),
    );
    let sent = |raw: Vec<u8>| {
        let mut r = req("POST", "/v1/things", None);
        r.headers
            .push(("content-type".into(), "application/json".into()));
        r.body = bytes::Bytes::from(raw);
        e.handle(Some("s"), &r)
    };
    let deep = format!(
        "{{\"name\":\"d\",\"m\":{}{}}}",
        "[".repeat(128),
        "]".repeat(128)
    );
    for (raw, why) in [
        (deep.into_bytes(), "more than 127 levels deep"),
        (
            b"{\"name\":\"\xff\"}".to_vec(),
            "not UTF-8: the byte at offset 9",
        ),
        (br#"{"name":"\udc00"}"#.to_vec(), "surrogate"),
        (
            br#"{"name":"n","n":-1e400}"#.to_vec(),
            "number out of range",
        ),
    ] {
        let resp = sent(raw);
        assert_eq!(resp.status, 400, "{why}");
        assert_eq!(resp.provenance, Provenance::Miss);
        assert_eq!(body(&resp)["error"], json!("malformed-body"));
        let message = body(&resp)["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(message.contains(why), "{why}: {message}");
    }
    assert_eq!(
        e.session_state("s").unwrap_or_default()["entities"],
        json!({}),
        "nothing was stored"
    );
    // 127 levels is JSON the engine holds; a byte order mark before JSON is read past.
    let ok = format!(
        "{{\"name\":\"d\",\"m\":{}{}}}",
        "[".repeat(126),
        "]".repeat(126)
    );
    assert_eq!(sent(ok.into_bytes()).status, 201);
    let bom = sent(b"\xEF\xBB\xBF{\"name\":\"bom\"}".to_vec());
    assert_eq!(bom.status, 201);
    assert_eq!(body(&bom)["name"], json!("bom"));
}

// ------------------------------------------------------------------ exact replay

#[test]
fn exact_replay_serves_successive_moments_with_a_series_moment_claim() {
    let e = without_pii(shop());
    let r1 = get(&e, Some("s"), "/v1/customers/cus_1");
    assert_eq!(r1.provenance, Provenance::Recorded);
    assert_eq!(r1.exchange.as_deref(), Some("s1/1"));
    assert_eq!(r1.replay, Some(ReplayClass::SeriesMoment));
    assert_eq!(body(&r1)["name"], json!("Alice"));
    let r2 = get(&e, Some("s"), "/v1/customers/cus_1");
    assert_eq!(r2.exchange.as_deref(), Some("s1/3"));
    assert_eq!(body(&r2)["name"], json!("Alice Updated"));
    assert_eq!(r2.replay, Some(ReplayClass::SeriesMoment));
    // Past the last moment: last wins, recorded, no claim.
    let r3 = get(&e, Some("s"), "/v1/customers/cus_1");
    assert_eq!(r3.provenance, Provenance::Recorded);
    assert_eq!(r3.exchange.as_deref(), Some("s1/3"));
    assert!(r3.replay.is_none());
    assert!(header(&ctl(&e, &r3, "GET"), "x-wraith-replay").is_none());
    // Each session has its own time axis.
    assert_eq!(
        body(&get(&e, Some("other"), "/v1/customers/cus_1"))["name"],
        json!("Alice")
    );
}

#[test]
fn exact_replay_of_a_recorded_404_runs_before_the_gate_in_both_modes() {
    for e in [shop(), not_found_mode()] {
        let r = get(&e, None, "/v1/customers/cus_gone");
        assert_eq!(r.status, 404);
        assert_eq!(r.provenance, Provenance::Recorded);
        assert_eq!(body(&r)["error"]["message"], json!("recorded 404"));
    }
}

#[test]
fn exact_replay_keys_ignore_query_order_and_json_key_order() {
    let r = R::new("GET", "/v1/things")
        .variant(200, Guard::Always, c(json!({"from": "template"})))
        .exact(
            "/v1/things",
            "a=1&b=2",
            None,
            vec![moment("s1/1", 200, json!({"from": "recording"}))],
        )
        .build();
    let e = engine(model(vec![r], vec![]), det_opts());
    assert_eq!(
        body(&get(&e, None, "/v1/things?b=2&a=1"))["from"],
        json!("recording")
    );
    assert_eq!(
        body(&get(&e, None, "/v1/things?a=1&b=3"))["from"],
        json!("template")
    );
}

#[test]
fn non_get_past_the_last_moment_falls_through_to_fresh_state() {
    let e = shop();
    let first = send(
        &e,
        Some("s"),
        "POST",
        "/v1/customers",
        json!({"name": "Recorded"}),
    );
    assert_eq!(first.provenance, Provenance::Recorded);
    assert_eq!(body(&first)["id"], json!("cus_rec"));
    let second = send(
        &e,
        Some("s"),
        "POST",
        "/v1/customers",
        json!({"name": "Recorded"}),
    );
    assert_eq!(second.provenance, Provenance::Template);
    assert_ne!(
        body(&second)["id"],
        json!("cus_rec"),
        "a repeated create mints a fresh entity"
    );
    // The exact-replayed create also stored its entity.
    assert_eq!(get(&e, Some("s"), "/v1/customers/cus_rec").status, 200);
}

#[test]
fn moments_recorded_for_the_same_principal_are_preferred() {
    let mut m1 = moment("s1/1", 200, json!({"who": "alice"}));
    m1.principal = Some("Bearer tok_alice".into());
    let mut m2 = moment("s2/1", 200, json!({"who": "bob"}));
    m2.principal = Some("Bearer tok_bob".into());
    // A principal recorded by an API-key header of its own (`wraith_model::principal`).
    let mut m3 = moment("s3/1", 200, json!({"who": "carol"}));
    m3.principal = Some("x-api-key: tok_carol".into());
    let r = R::new("GET", "/v1/me")
        .variant(200, Guard::Always, c(json!({"who": "template"})))
        .exact("/v1/me", "", None, vec![m1, m2, m3])
        .build();
    let e = engine(
        model(vec![r], vec![]),
        EngineOptions {
            principal: Some(std::sync::Arc::new(|_name: &str, raw: &str| {
                raw.replace("secret", "tok")
            })),
            ..det_opts()
        },
    );
    let carol = e.handle(
        Some("z"),
        &with_header(req("GET", "/v1/me", None), "X-Api-Key", "secret_carol"),
    );
    assert_eq!(body(&carol)["who"], json!("carol"));
    // The same text in another header is another principal's (here nobody's recorded one).
    let other = e.handle(
        Some("w"),
        &with_header(req("GET", "/v1/me", None), "Private-Token", "secret_carol"),
    );
    assert_ne!(body(&other)["who"], json!("carol"));
    let bob = e.handle(
        Some("x"),
        &with_header(
            req("GET", "/v1/me", None),
            "authorization",
            "Bearer secret_bob",
        ),
    );
    assert_eq!(body(&bob)["who"], json!("bob"));
    let anon = e.handle(Some("y"), &req("GET", "/v1/me", None));
    assert_eq!(body(&anon)["who"], json!("alice"));
}

#[test]
fn state_wins_over_exact_replay_when_the_session_changed_the_entity() {
    let e = shop();
    let patched = send(
        &e,
        Some("s"),
        "PATCH",
        "/v1/customers/cus_1",
        json!({"name": "Mine"}),
    );
    assert_eq!(patched.status, 200);
    let r = get(&e, Some("s"), "/v1/customers/cus_1");
    assert_eq!(body(&r)["name"], json!("Mine"));
    assert_ne!(r.provenance, Provenance::Recorded);
    assert!(r.replay.is_none());
    // Deleting it makes the recorded URL answer 404.
    assert_eq!(
        e.handle(Some("s"), &req("DELETE", "/v1/customers/cus_1", None))
            .status,
        200
    );
    assert_eq!(get(&e, Some("s"), "/v1/customers/cus_1").status, 404);
    // Other sessions still get the recording.
    assert_eq!(
        get(&e, Some("t"), "/v1/customers/cus_1").provenance,
        Provenance::Recorded
    );
}

#[test]
fn recorded_list_moment_is_merged_with_session_writes_without_a_claim() {
    let e = shop();
    let untouched = get(&e, Some("s"), "/v1/customers");
    assert_eq!(untouched.replay, Some(ReplayClass::SeriesMoment));
    let id = body(&send(
        &e,
        Some("s"),
        "POST",
        "/v1/customers",
        json!({"name": "New", "email": "n@x"}),
    ))["id"]
        .clone();
    assert_eq!(
        e.handle(Some("s"), &req("DELETE", "/v1/customers/cus_2", None))
            .status,
        200
    );
    let r = get(&e, Some("s"), "/v1/customers");
    assert_eq!(r.provenance, Provenance::Recorded);
    assert!(r.replay.is_none());
    let b = body(&r);
    let ids: Vec<Value> = b["data"]
        .as_array()
        .map(|a| a.iter().map(|i| i["id"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(ids, vec![json!("cus_1"), id]);
    assert_eq!(b["total"], json!(2), "envelope total follows the merge");
}

#[test]
fn session_writes_merged_into_a_recorded_page_never_grow_it_past_the_requested_size() {
    let e = shop();
    let full = get(&e, Some("p"), "/v1/customers?limit=2");
    assert_eq!(full.replay, Some(ReplayClass::SeriesMoment));
    send(
        &e,
        Some("p"),
        "POST",
        "/v1/customers",
        json!({"name": "New", "email": "n@x"}),
    );
    let r = get(&e, Some("p"), "/v1/customers?limit=2");
    assert_eq!(r.provenance, Provenance::Recorded);
    assert!(r.replay.is_none());
    let b = body(&r);
    assert_eq!(
        b["data"].as_array().map(Vec::len),
        Some(2),
        "limit=2 serves two items"
    );
    assert_eq!(
        b["total"],
        json!(3),
        "the total still counts the session's write"
    );
    assert_eq!(
        b["has_more"],
        json!(true),
        "the write pushed an item onto a later page"
    );
}

// ------------------------------------------------------------------ the gate

#[test]
fn not_found_mode_fails_closed_with_the_routes_4xx_variant_as_miss() {
    let e = not_found_mode();
    let r = get(&e, None, "/v1/customers/cus_unknown");
    assert_eq!(r.status, 404);
    assert_eq!(r.provenance, Provenance::Miss);
    assert_eq!(body(&r)["error"]["message"], json!("No such customer"));
    assert_eq!(r.route.as_deref(), Some("GET /v1/customers/:id"));
}

#[test]
fn not_found_mode_without_a_4xx_variant_answers_the_structured_501() {
    let e = not_found_mode();
    let r = get(&e, None, "/v1/widgets/wid_unknown");
    assert_eq!(r.status, 501);
    assert_eq!(r.provenance, Provenance::Miss);
    assert_eq!(body(&r)["error"], json!("no matching route"));
    // Known ids pass the gate.
    assert_eq!(get(&e, None, "/v1/widgets/wid_1").status, 200);
}

#[test]
fn known_missing_ids_fail_closed_in_not_found_mode_and_synthesize_in_default_mode() {
    let nf = not_found_mode();
    assert_eq!(get(&nf, None, "/v1/widgets/wid_404").status, 501);
    // Defeat exact replay with a query param: the gate still consults known-missing.
    let r = get(&nf, None, "/v1/customers/cus_gone?expand=x");
    assert_eq!((r.status, r.provenance), (404, Provenance::Miss));
    let syn = shop();
    let w = get(&syn, None, "/v1/widgets/wid_404");
    assert_eq!((w.status, w.provenance), (200, Provenance::Template));
}

#[test]
fn synthesize_mode_clones_the_template_with_the_requested_id() {
    let e = shop();
    let a = get(&e, None, "/v1/widgets/wid_new");
    assert_eq!(a.status, 200);
    assert_eq!(a.provenance, Provenance::Template);
    assert_eq!(body(&a)["id"], json!("wid_new"));
    // The same path always yields the same body (hash-seeded representative).
    let again = shop();
    assert_eq!(get(&again, Some("z"), "/v1/widgets/wid_new").body, a.body);
}

#[test]
fn unknown_id_with_a_4xx_variant_gets_it_via_the_state_member_guard_in_both_modes() {
    let syn = get(&shop(), None, "/v1/customers/cus_unknown");
    assert_eq!(syn.status, 404);
    assert_eq!(syn.provenance, Provenance::Template);
    let nf = get(&not_found_mode(), None, "/v1/customers/cus_unknown");
    assert_eq!(nf.status, 404);
    assert_eq!(
        body(&nf),
        body(&syn),
        "the gate and the guard select the same variant"
    );
}

#[test]
fn ids_created_this_session_pass_the_gate() {
    let e = not_found_mode();
    let id = body(&send(
        &e,
        Some("s"),
        "POST",
        "/v1/customers",
        json!({"name": "N", "id": "cus_client"}),
    ))["id"]
        .clone();
    assert_eq!(
        id,
        json!("cus_client"),
        "a client-supplied primary key is kept"
    );
    assert_eq!(get(&e, Some("s"), "/v1/customers/cus_client").status, 200);
    assert_eq!(
        get(&e, Some("other"), "/v1/customers/cus_client").status,
        404
    );
}

#[test]
fn multi_param_routes_gate_on_the_full_tuple() {
    let e = not_found_mode();
    assert_eq!(get(&e, None, "/v1/orgs/acme/repos/rocket").status, 200);
    // `rocket` is a known repo id, but never under `other`.
    let r = get(&e, None, "/v1/orgs/other/repos/rocket");
    assert_eq!((r.status, r.provenance), (501, Provenance::Miss));
    // Synthesize mode is unchanged.
    assert_eq!(
        get(&shop(), None, "/v1/orgs/other/repos/rocket").status,
        200
    );
}

#[test]
fn parameterized_list_routes_gate_on_their_last_param() {
    let e = not_found_mode();
    assert_eq!(get(&e, None, "/v1/orgs/acme/repos").status, 200);
    let r = get(&e, None, "/v1/orgs/nobody/repos");
    assert_eq!((r.status, r.provenance), (501, Provenance::Miss));
    // Non-parameterized list routes are never gated.
    assert_eq!(get(&e, None, "/v1/customers?limit=1").status, 200);
}

// ------------------------------------------------------------------ fidelity

#[test]
fn strict_fidelity_serves_only_recordings_and_fails_closed_otherwise() {
    let e = engine(
        shop_model(),
        EngineOptions {
            fidelity: Fidelity::Strict,
            ..det_opts()
        },
    );
    let hit = get(&e, None, "/v1/customers/cus_1");
    assert_eq!(hit.provenance, Provenance::Recorded);
    assert_eq!(
        hit.route.as_deref(),
        Some("GET /v1/customers/cus_1"),
        "concrete recorded path"
    );
    assert!(hit.replay.is_none());
    let h = ctl(&e, &hit, "GET");
    assert!(
        header(&h, "x-wraith-replay").is_none(),
        "strict never claims"
    );
    assert_eq!(header(&h, "x-wraith-exchange"), Some("s1/000001"));
    // Unknown id: the recorded 4xx of the route.
    let miss = get(&e, None, "/v1/customers/cus_other");
    assert_eq!((miss.status, miss.provenance), (404, Provenance::Miss));
    assert_eq!(body(&miss)["error"]["message"], json!("recorded 404"));
    // No recorded 4xx but a synthesized one.
    let upd = send(
        &e,
        None,
        "PATCH",
        "/v1/customers/cus_1",
        json!({"name": "x"}),
    );
    assert_eq!((upd.status, upd.provenance), (404, Provenance::Miss));
    // Neither: 501, a route miss under strict fidelity, so no route is named (the request's
    // own path is no recording's).
    let w = get(&e, None, "/v1/widgets/wid_1");
    assert_eq!((w.status, w.provenance), (501, Provenance::Miss));
    assert_eq!(w.route, None);
    // Route misses stay structured misses.
    assert_eq!(get(&e, None, "/nope").status, 501);
    // Never a template, even for creates.
    let create = send(
        &e,
        None,
        "POST",
        "/v1/customers",
        json!({"name": "brand new"}),
    );
    assert_ne!(create.provenance, Provenance::Template);
}

#[test]
fn fuzzy_fidelity_answers_501_for_everything_and_warns() {
    let e = engine(
        shop_model(),
        EngineOptions {
            fidelity: Fidelity::Fuzzy,
            ..det_opts()
        },
    );
    assert_eq!(get(&e, None, "/v1/customers/cus_1").status, 501);
    assert_eq!(get(&e, None, "/nope").status, 501);
    assert!(e.warnings().iter().any(|w| w.contains("fuzzy")));
}

// ------------------------------------------------------------------ headers

#[test]
fn control_headers_follow_the_contract() {
    let e = engine(
        shop_model(),
        EngineOptions {
            freshness: Freshness {
                twin_age_seconds: 86_400,
                recorded_at: Some("2026-06-01T12:00:00Z".into()),
                synthesized_at: None,
            },
            ..det_opts()
        },
    );
    let rec = get(&e, None, "/v1/customers/cus_1");
    let h = ctl(&e, &rec, "GET");
    assert_eq!(header(&h, "X-Wraith-Provenance"), Some("recorded"));
    assert_eq!(header(&h, "X-Wraith-Route"), Some("GET /v1/customers/:id"));
    assert_eq!(header(&h, "X-Wraith-Exchange"), Some("s1/000001"));
    assert_eq!(
        header(&h, "X-Wraith-Replay"),
        Some("series-moment;v=1;outbound-policy=applied")
    );
    assert_eq!(header(&h, "X-Wraith-Twin-Age"), Some("86400"));
    assert_eq!(
        header(&h, "X-Wraith-Recorded-At"),
        Some("2026-06-01T12:00:00Z")
    );
    assert!(
        header(&h, "X-Wraith-Provenance-Counts").is_none(),
        "debug only"
    );
    let tpl = send(&e, None, "POST", "/v1/customers", json!({"name": "t"}));
    let h = ctl(&e, &tpl, "POST");
    assert_eq!(header(&h, "X-Wraith-Provenance"), Some("template"));
    assert!(
        header(&h, "X-Wraith-Exchange").is_none(),
        "exchange only with recorded"
    );
    assert!(header(&h, "X-Wraith-Replay").is_none());
}

#[test]
fn no_provenance_headers_suppresses_the_four_together_but_not_freshness() {
    let e = engine(
        shop_model(),
        EngineOptions {
            provenance_headers: false,
            ..det_opts()
        },
    );
    let r = get(&e, None, "/v1/customers/cus_1");
    let h = ctl(&e, &r, "GET");
    for name in [
        "X-Wraith-Provenance",
        "X-Wraith-Route",
        "X-Wraith-Exchange",
        "X-Wraith-Replay",
    ] {
        assert!(header(&h, name).is_none(), "{name}");
    }
    assert_eq!(header(&h, "X-Wraith-Twin-Age"), Some("0"));
    assert!(
        header(&h, "X-Wraith-Recorded-At").is_none(),
        "omitted without recordings"
    );
}

#[test]
fn debug_adds_provenance_counts_under_synth_fidelity_only() {
    let e = engine(
        shop_model(),
        EngineOptions {
            debug: true,
            ..det_opts()
        },
    );
    let r = send(&e, None, "POST", "/v1/customers", json!({"name": "d"}));
    let h = ctl(&e, &r, "POST");
    let counts = header(&h, "X-Wraith-Provenance-Counts")
        .unwrap_or_default()
        .to_string();
    assert!(
        counts.starts_with("recorded=")
            && counts.contains(" template=")
            && counts.ends_with(" handler=0"),
        "{counts}"
    );
    let strict = engine(
        shop_model(),
        EngineOptions {
            debug: true,
            fidelity: Fidelity::Strict,
            ..det_opts()
        },
    );
    let r = get(&strict, None, "/v1/customers/cus_1");
    assert!(header(&ctl(&strict, &r, "GET"), "X-Wraith-Provenance-Counts").is_none());
    // Without `--debug`, synth fidelity sends no counts either.
    let plain = shop();
    let r = send(&plain, None, "POST", "/v1/customers", json!({"name": "d"}));
    assert!(header(&ctl(&plain, &r, "POST"), "X-Wraith-Provenance-Counts").is_none());
}

#[test]
fn self_urls_are_rewritten_to_the_twins_own_origin() {
    let e = shop();
    let r = get(&e, None, "/v1/customers/cus_1");
    assert_eq!(
        body(&r)["url"],
        json!("http://127.0.0.1:8081/v1/customers/cus_1")
    );
    assert!(r.outbound_policy_applied);
    // Without a Host header the bound URL is the fallback.
    e.set_self_url("http://127.0.0.1:9999");
    let mut q = req("GET", "/v1/customers/cus_1", None);
    q.headers.clear();
    let r = e.handle(Some("nohost"), &q);
    assert_eq!(
        body(&r)["url"],
        json!("http://127.0.0.1:9999/v1/customers/cus_1")
    );
    // Opt-out keeps the recorded bytes and makes no policy disclosure.
    let off = without_pii(engine(
        shop_model(),
        EngineOptions {
            rewrite_self_urls: false,
            ..det_opts()
        },
    ));
    let r = get(&off, None, "/v1/customers/cus_1");
    assert_eq!(
        body(&r)["url"],
        json!("https://api.shop.example/v1/customers/cus_1")
    );
    assert!(!r.outbound_policy_applied);
    assert_eq!(
        header(&ctl(&off, &r, "GET"), "x-wraith-replay"),
        Some("series-moment;v=1")
    );
}

#[test]
fn location_and_link_headers_are_rewritten() {
    let mut m = moment("s1/1", 201, json!({"id": "x"}));
    m.headers.push((
        "location".into(),
        "https://api.shop.example/v1/things/x".into(),
    ));
    let r = R::new("POST", "/v1/things")
        .variant(201, Guard::Always, c(json!({})))
        .exact("/v1/things", "", Some(&json!({"a": 1})), vec![m])
        .build();
    let e = engine(model(vec![r], vec![]), det_opts());
    let resp = send(&e, None, "POST", "/v1/things", json!({"a": 1}));
    assert_eq!(
        header(&resp.headers, "location"),
        Some("http://127.0.0.1:8081/v1/things/x")
    );
}

#[test]
fn volatile_headers_are_fresh_and_content_length_is_not_replayed() {
    let headers = vec![
        HeaderProgram {
            name: "content-type".into(),
            program: HeaderRule::Constant {
                values: vec!["application/json".into()],
            },
        },
        HeaderProgram {
            name: "content-length".into(),
            program: HeaderRule::ContentLength,
        },
        HeaderProgram {
            name: "date".into(),
            program: HeaderRule::Volatile {
                kind: VolatileKind::Date,
            },
        },
        HeaderProgram {
            name: "x-request-id".into(),
            program: HeaderRule::Volatile {
                kind: VolatileKind::RequestId,
            },
        },
        HeaderProgram {
            name: "etag".into(),
            program: HeaderRule::Volatile {
                kind: VolatileKind::Drop,
            },
        },
    ];
    let r = R::new("GET", "/v1/h")
        .variant_h(200, Guard::Always, c(json!({"a": 1})), headers)
        .build();
    let e = engine(model(vec![r], vec![]), det_opts());
    let a = get(&e, Some("s"), "/v1/h");
    let b = get(&e, Some("s"), "/v1/h");
    assert_eq!(
        header(&a.headers, "date"),
        Some("Tue, 14 Nov 2023 22:13:20 GMT")
    );
    assert_eq!(
        header(&b.headers, "date"),
        Some("Tue, 14 Nov 2023 22:13:21 GMT")
    );
    assert!(header(&a.headers, "content-length").is_none());
    assert!(header(&a.headers, "etag").is_none());
    assert_ne!(
        header(&a.headers, "x-request-id"),
        header(&b.headers, "x-request-id")
    );
    assert_eq!(header(&a.headers, "x-request-id").map(str::len), Some(36));
}

#[test]
fn not_found_mode_warns_when_the_model_has_nothing_to_gate() {
    let r = R::new("GET", "/v1/ping")
        .variant(200, Guard::Always, c(json!({})))
        .build();
    let e = engine(
        model(vec![r], vec![]),
        EngineOptions {
            unknown_entity: UnknownEntity::NotFound,
            ..det_opts()
        },
    );
    assert!(
        e.warnings().iter().any(|w| w.contains("not_found")),
        "{:?}",
        e.warnings()
    );
    assert!(not_found_mode().warnings().is_empty());
}

#[test]
fn model_of_another_schema_version_is_refused() {
    let mut m = shop_model();
    m.schema_version = 99;
    let e = wraith_engine::Engine::new(m, None, Default::default(), det_opts());
    assert!(matches!(
        e,
        Err(wraith_engine::EngineError::ModelVersion { found: 99, .. })
    ));
}

#[test]
fn known_missing_is_consulted_before_known() {
    // A (hand-built) model claiming an id is both known and known-missing: the gate must
    // consult known-MISSING first and fail closed.
    let mut m = shop_model();
    if let Some(t) = m.entity_types.get_mut("widgets") {
        t.known_ids.insert("wid_both".into());
        t.known_missing.insert("wid_both".into());
    }
    let e = engine(
        m,
        EngineOptions {
            unknown_entity: UnknownEntity::NotFound,
            ..det_opts()
        },
    );
    let r = get(&e, None, "/v1/widgets/wid_both");
    assert_eq!((r.status, r.provenance), (501, Provenance::Miss));
}

fn two_runs() -> wraith_engine::Engine {
    let a = R::new("GET", "/v1/account")
        .variant(200, Guard::Always, c(json!({})))
        .exact(
            "/v1/account",
            "",
            None,
            vec![
                moment("run-a/0", 200, json!({"balance": 1})),
                moment("run-b/0", 200, json!({"balance": 2})),
                moment("run-b/2", 200, json!({"balance": 3})),
                moment("run-c/0", 200, json!({"balance": 2})),
            ],
        )
        .build();
    let pay = R::new("POST", "/v1/pay")
        .variant(200, Guard::Always, c(json!({})))
        .exact(
            "/v1/pay",
            "",
            Some(&json!({"amount": 5})),
            vec![moment("run-b/1", 200, json!({"paid": 5}))],
        )
        .build();
    engine(model(vec![a, pay], vec![]), det_opts())
}

#[test]
fn time_axis_follows_the_recorded_run_the_session_is_consistent_with() {
    let e = two_runs();
    // Ambiguous first request: runs disagree, so no claim; the majority answer is served.
    let first = get(&e, Some("s"), "/v1/account");
    assert_eq!(body(&first)["balance"], json!(2));
    assert_eq!(first.provenance, Provenance::Recorded);
    assert!(
        first.replay.is_none(),
        "no claim while the recorded runs disagree"
    );
    // Only run-b recorded this payment: from now on the session follows run-b.
    let paid = send(&e, Some("s"), "POST", "/v1/pay", json!({"amount": 5}));
    assert_eq!(paid.replay, Some(ReplayClass::SeriesMoment));
    let second = get(&e, Some("s"), "/v1/account");
    assert_eq!(body(&second)["balance"], json!(3));
    assert_eq!(second.exchange.as_deref(), Some("run-b/2"));
    assert_eq!(second.replay, Some(ReplayClass::SeriesMoment));
}

#[test]
fn recorded_refusals_stay_refusals() {
    let r = R::new("POST", "/v1/customers")
        .op(StateOp::Create, "customers")
        .variant(200, Guard::Always, obj(vec![("id", gen_id(cus_id()))]))
        .exact(
            "/v1/customers",
            "",
            Some(&json!({"email": "taken@x"})),
            vec![moment("s1/1", 409, json!({"error": "email already taken"}))],
        )
        .build();
    let e = engine(model(vec![r], vec![]), det_opts());
    for _ in 0..3 {
        let resp = send(
            &e,
            Some("s"),
            "POST",
            "/v1/customers",
            json!({"email": "taken@x"}),
        );
        assert_eq!(
            resp.status, 409,
            "a repeated refused write is refused again"
        );
        assert_eq!(resp.provenance, Provenance::Recorded);
    }
    // Another body is a fresh create.
    assert_eq!(
        send(
            &e,
            Some("s"),
            "POST",
            "/v1/customers",
            json!({"email": "new@x"})
        )
        .status,
        200
    );
}

#[test]
fn a_recorded_record_under_another_tuple_of_the_path_is_not_served_for_an_unknown_tuple() {
    let r = R::new("GET", "/v1/orgs/:org/repos/:repo")
        .op(StateOp::Read, "repos")
        .tuples(&[&["o1", "r1"]])
        .variant(
            200,
            Guard::Always,
            obj(vec![("id", echo_path("repo")), ("org", echo_path("org"))]),
        )
        .build();
    let repos = entity_type(
        &["r1"],
        &[],
        vec![json!({"id": "r1", "org": "o1", "name": "recorded"})],
    );
    let e = engine(model(vec![r], vec![("repos", repos)]), det_opts());
    let known = get(&e, Some("s"), "/v1/orgs/o1/repos/r1");
    assert_eq!(known.provenance, Provenance::Recorded);
    assert_eq!(body(&known)["name"], json!("recorded"));
    // Another org's repo of that id: a template clone of the requested ids, not o1's record.
    let other = get(&e, Some("s"), "/v1/orgs/o2/repos/r1");
    assert_eq!(other.status, 200);
    assert_eq!(other.provenance, Provenance::Template);
    assert_eq!(body(&other), json!({"id": "r1", "org": "o2"}));
}

#[test]
fn a_parent_id_answered_under_a_child_route_passes_the_gate() {
    let balancer = R::new("GET", "/v4/balancers/:id")
        .op(StateOp::Read, "balancers")
        .variant(200, Guard::Always, obj(vec![("id", echo_path("id"))]))
        .build();
    let configs = R::new("GET", "/v4/balancers/:id/configs")
        .op(StateOp::List, "configs")
        .parent("id", "balancers")
        .variant(200, Guard::Always, obj(vec![("data", c(json!([])))]))
        .build();
    // Balancer 6 is answered only under its configs' nodes; balancer 8 only with a 404 there.
    let nodes = R::new("GET", "/v4/balancers/:id/configs/:config/nodes")
        .op(StateOp::List, "nodes")
        .parent("id", "balancers")
        .parent("config", "configs")
        .variant(200, Guard::Always, obj(vec![("data", c(json!([])))]))
        .exact(
            "/v4/balancers/6/configs/60/nodes",
            "",
            None,
            vec![moment("s1/000001", 200, json!({"data": []}))],
        )
        .exact(
            "/v4/balancers/8/configs/80/nodes",
            "",
            None,
            vec![moment("s1/000002", 404, json!({"errors": []}))],
        )
        .build();
    let balancers = entity_type(&["5"], &[], vec![]);
    let e = engine(
        model(
            vec![balancer, configs, nodes],
            vec![("balancers", balancers)],
        ),
        EngineOptions {
            unknown_entity: UnknownEntity::NotFound,
            ..det_opts()
        },
    );
    for path in ["/v4/balancers/6", "/v4/balancers/6/configs"] {
        assert_eq!(get(&e, None, path).status, 200, "{path}");
    }
    // A 4xx under a parent says nothing of it, and an id no recording answered stays unknown.
    for path in ["/v4/balancers/8", "/v4/balancers/9/configs"] {
        let r = get(&e, None, path);
        assert_eq!((r.status, r.provenance), (501, Provenance::Miss), "{path}");
    }
}
