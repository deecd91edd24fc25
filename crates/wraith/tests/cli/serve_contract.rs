//! The twin response contract over HTTP: route misses, the fail-closed entity gate and its
//! preference order, provenance words, every `X-Wraith-*` header rule, the opt-out, and the
//! fidelity modes. Black-box: the real binary on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Resp, Server, Twin, model};

fn shop_twin() -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"customers": [{"id": "cus_fx", "object": "customer", "name": "Fixture"}]}})
            .to_string(),
    );
    t
}

const SHOP_ROUTES: [&str; 7] = [
    "GET /v1/customers",
    "POST /v1/customers",
    "DELETE /v1/customers/:id",
    "GET /v1/customers/:id",
    "PATCH /v1/customers/:id",
    "GET /v1/orgs/:org/repos",
    "GET /v1/products/:id",
];

fn body_str(r: &Resp) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

fn assert_route_miss_body(r: &Resp, twin: &str) {
    assert_eq!(r.status, 501, "{}", body_str(r));
    let b = r.json();
    assert_eq!(b["error"], "no matching route");
    assert_eq!(b["wraith"]["twin"], twin);
    assert_eq!(
        b["wraith"]["hint"],
        "route not in recorded coverage; see `wraith coverage`"
    );
    let mut routes: Vec<String> = b["wraith"]["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    routes.sort();
    let mut want: Vec<String> = SHOP_ROUTES.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(routes, want);
    assert!(b["wraith"].get("routes_total").is_none());
}

async fn get_nf(s: &Server, path: &str) -> Resp {
    s.get(path, Some("gate")).await
}

// ---------------------------------------------------------------------------------------------
// Route level

#[tokio::test]
async fn route_miss_is_501_with_the_structured_body_and_provenance_miss() {
    let t = shop_twin();
    let s = t.serve(&[]);
    for path in ["/nope", "/v1/customers/cus_1/unknown/deeper"] {
        let r = s.get(path, None).await;
        assert_route_miss_body(&r, "shop");
        assert_eq!(r.provenance(), Some("miss"));
        assert_eq!(r.header("x-wraith-route"), None, "no route matched");
        assert!(r.header("x-wraith-twin-age").is_some());
    }
    // A known path with a method no route has is a route miss too.
    let r = s.send("PUT", "/v1/customers", None, &[], None).await;
    assert_route_miss_body(&r, "shop");
}

#[tokio::test]
async fn route_miss_lists_at_most_20_routes_and_then_the_total() {
    let t = Twin::init("many", "https://api.many.test");
    t.write_model(&model::many_routes("many", 25));
    let s = t.serve(&[]);
    let r = s.get("/nope", None).await;
    assert_eq!(r.status, 501);
    let b = r.json();
    assert_eq!(b["wraith"]["routes"].as_array().unwrap().len(), 20);
    assert_eq!(b["wraith"]["routes_total"], 25);
    assert!(
        b["wraith"]["routes"][0]
            .as_str()
            .unwrap()
            .starts_with("GET /r/")
    );

    let t = Twin::init("twenty", "https://api.many.test");
    t.write_model(&model::many_routes("twenty", 20));
    let s = t.serve(&[]);
    let b = s.get("/nope", None).await.json();
    assert_eq!(b["wraith"]["routes"].as_array().unwrap().len(), 20);
    assert!(b["wraith"].get("routes_total").is_none());
}

// ---------------------------------------------------------------------------------------------
// Entity level: both modes

#[tokio::test]
async fn entity_dispatch_in_synthesize_mode() {
    let t = shop_twin();
    let s = t.serve(&[]);
    // Known id → 200 (here by exact replay).
    let r = s.get("/v1/customers/cus_1", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), model::cus_1());
    // Known-missing id on a route with no 4xx variant → synthesized 200, template.
    let r = s.get("/v1/products/prod_gone", None).await;
    assert_eq!(r.status, 200, "{}", body_str(&r));
    assert_eq!(r.provenance(), Some("template"));
    // Unknown id, no 4xx variant → template clone with the requested id inserted.
    let r = s.get("/v1/products/prod_new", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.provenance(), Some("template"));
    assert_eq!(r.json()["id"], "prod_new");
    assert_eq!(r.json()["object"], "product");
    // Unknown id, route has a 4xx variant → the state_member guard answers 404.
    let r = s.get("/v1/customers/cus_unknown", None).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["error"]["message"], "No such customer");
    // Unknown parent on a parameter-bearing list: synthesized in the default mode.
    let r = s.get("/v1/orgs/ghost-org/repos", None).await;
    assert_eq!(r.status, 200);
}

/// A path id whose percent-encoded bytes are not UTF-8 keeps its spelling: two such ids are
/// two records, never one lossily decoded name.
#[tokio::test]
async fn ids_that_do_not_decode_to_utf8_stay_distinct() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let a = s.get("/v1/products/%FF%FE", None).await;
    let b = s.get("/v1/products/%FE%FF", None).await;
    assert_eq!(a.status, 200, "{}", body_str(&a));
    assert_eq!(a.json()["id"], "%FF%FE");
    assert_eq!(b.json()["id"], "%FE%FF");
    // A UTF-8 spelling is decoded as before.
    let c = s.get("/v1/products/caf%C3%A9", None).await;
    assert_eq!(c.json()["id"], "caf\u{e9}");
}

#[tokio::test]
async fn entity_dispatch_in_not_found_mode_fails_closed() {
    let t = shop_twin();
    let s = t.serve(&["--unknown-entity", "not_found"]);
    // Known id → 200, same as synthesize mode.
    assert_eq!(get_nf(&s, "/v1/customers/cus_1").await.status, 200);
    assert_eq!(get_nf(&s, "/v1/products/prod_1").await.status, 200);
    // Fixture entities and this session's creates are known.
    assert_eq!(get_nf(&s, "/v1/customers/cus_fx").await.status, 200);
    let created = s
        .post("/v1/customers", Some("gate"), json!({"name": "N"}))
        .await
        .json();
    let id = created["id"].as_str().unwrap();
    assert_eq!(get_nf(&s, &format!("/v1/customers/{id}")).await.status, 200);
    // Known-missing on a route without a 4xx variant → tier 3: the structured 501, miss.
    let r = get_nf(&s, "/v1/products/prod_gone").await;
    assert_route_miss_body(&r, "shop");
    assert_eq!(r.provenance(), Some("miss"));
    // Unknown id, no 4xx variant → 501 miss (never a fabricated 200).
    let r = get_nf(&s, "/v1/products/prod_new").await;
    assert_route_miss_body(&r, "shop");
    assert_eq!(r.provenance(), Some("miss"));
    // Unknown id, route has a 4xx variant → that 4xx, provenance miss.
    let r = get_nf(&s, "/v1/customers/cus_unknown").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["error"]["message"], "No such customer");
    assert_eq!(r.provenance(), Some("miss"));
    // Parameter-bearing list routes gate on the parent id.
    let r = get_nf(&s, "/v1/orgs/ghost-org/repos").await;
    assert_eq!(r.status, 501);
    assert_eq!(r.provenance(), Some("miss"));
    assert_eq!(get_nf(&s, "/v1/orgs/acme/repos").await.status, 200);
    // Non-parameterized routes are never gated.
    assert_eq!(get_nf(&s, "/v1/customers").await.status, 200);
}

#[tokio::test]
async fn exact_replay_runs_before_the_gate_in_both_modes() {
    let t = shop_twin();
    for args in [vec![], vec!["--unknown-entity", "not_found"]] {
        let s = t.serve(&args);
        let r = s.get("/v1/customers/cus_missing", None).await;
        assert_eq!(r.status, 404, "{args:?}");
        assert_eq!(r.provenance(), Some("recorded"), "{args:?}");
        assert_eq!(r.header("x-wraith-exchange"), Some("sess-a/000002"));
    }
}

#[tokio::test]
async fn known_missing_fails_closed_once_exact_replay_is_defeated() {
    let t = shop_twin();
    let s = t.serve(&["--unknown-entity", "not_found"]);
    // An added query parameter defeats the exact short-circuit: the gate then answers with the
    // route's own 4xx variant, as a policy decision (miss), not as a recording.
    let r = s.get("/v1/customers/cus_missing?expand=all", None).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.provenance(), Some("miss"));
    assert_eq!(r.header("x-wraith-exchange"), None);
}

// ---------------------------------------------------------------------------------------------
// Provenance words and headers

#[tokio::test]
async fn provenance_words_reachable_today() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let recorded = s.get("/v1/customers/cus_1", None).await;
    assert_eq!(recorded.provenance(), Some("recorded"));
    let template = s.get("/v1/products/prod_new", None).await;
    assert_eq!(template.provenance(), Some("template"));
    let fixture = s.get("/v1/customers/cus_fx", None).await;
    assert_eq!(fixture.status, 200);
    assert_eq!(fixture.provenance(), Some("fixture"));
    assert_eq!(fixture.json()["name"], "Fixture");
    let miss = s.get("/nope", None).await;
    assert_eq!(miss.provenance(), Some("miss"));
    let created = s.post("/v1/customers", None, json!({"name": "Zed"})).await;
    assert_eq!(created.provenance(), Some("template"));
    assert_eq!(created.json()["name"], "Zed");
}

#[tokio::test]
async fn route_header_names_the_matched_template() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let r = s.get("/v1/products/prod_new", None).await;
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/products/:id"));
    let r = s.get("/v1/customers/cus_1", None).await;
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers/:id"));
    let r = s.post("/v1/customers", None, json!({"name": "x"})).await;
    assert_eq!(r.header("x-wraith-route"), Some("POST /v1/customers"));
}

#[tokio::test]
async fn exchange_header_only_on_recorded_responses_with_source_identity() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let r = s.get("/v1/customers/cus_1", None).await;
    assert_eq!(r.header("x-wraith-exchange"), Some("sess-a/000001"));
    let r = s.get("/v1/products/prod_new", None).await;
    assert_eq!(r.header("x-wraith-exchange"), None);
    let r = s.get("/nope", None).await;
    assert_eq!(r.header("x-wraith-exchange"), None);
}

/// "On older models the header is simply omitted, not an error": a model whose recorded
/// moments carry no source identity still replays them, as `recorded`, without the header.
#[tokio::test]
async fn exchange_header_is_omitted_for_a_model_without_source_identity() {
    let t = Twin::init("shop", "https://api.shop.test");
    let mut m = model::shop("shop");
    for route in &mut m.routes {
        for entry in &mut route.exact {
            for moment in &mut entry.moments {
                moment.source.clear();
            }
        }
    }
    t.write_model(&m);
    let s = t.serve(&[]);
    let r = s.get("/v1/customers/cus_1", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.provenance(), Some("recorded"));
    assert_eq!(r.header("x-wraith-exchange"), None);
}

#[tokio::test]
async fn replay_header_claims_only_a_verbatim_recorded_moment() {
    let t = shop_twin();
    let s = t.serve(&[]);
    // The first read of the URL in a session is that moment of the recorded run.
    let r = s.get("/v1/customers/cus_1", Some("replay")).await;
    assert_eq!(r.header("x-wraith-replay"), Some("series-moment;v=1"));
    // Past the recorded moments, GET serves the last-wins recording: recorded, no claim.
    let again = s.get("/v1/customers/cus_1", Some("replay")).await;
    assert_eq!(again.provenance(), Some("recorded"));
    assert_eq!(again.header("x-wraith-replay"), None);
    // A synthesized body never carries it.
    let r = s.get("/v1/products/prod_new", None).await;
    assert_eq!(r.header("x-wraith-replay"), None);
    // A HEAD has no body to replay.
    let h = s
        .send("HEAD", "/v1/customers/cus_1", Some("head"), &[], None)
        .await;
    assert_eq!(h.status, 200);
    assert!(h.body.is_empty());
    assert_eq!(h.header("x-wraith-replay"), None);
}

#[tokio::test]
async fn twin_age_is_always_sent_and_recorded_at_is_omitted_without_recordings() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let age = s.ready["twin_age_seconds"].as_u64().unwrap();
    // No recordings on disk: the age anchors on when the model was synthesized.
    let synthesized = s.ready["synthesized_at"].as_str().unwrap();
    let since_synth = jiff::Timestamp::now().as_second()
        - synthesized.parse::<jiff::Timestamp>().unwrap().as_second();
    let since_synth = u64::try_from(since_synth).unwrap();
    assert!(
        age <= since_synth && since_synth - age < 600,
        "age {age}, synthesized {synthesized} ({since_synth} s ago)"
    );
    let expected_age = age.to_string();
    for path in ["/v1/customers/cus_1", "/v1/products/x", "/nope"] {
        let r = s.get(path, None).await;
        assert_eq!(
            r.header("x-wraith-twin-age"),
            Some(expected_age.as_str()),
            "{path}"
        );
        assert_eq!(r.header("x-wraith-recorded-at"), None, "{path}");
    }
    // Whole seconds at startup: it does not tick.
    let later = s.get("/v1/customers/cus_1", None).await;
    assert_eq!(
        later.header("x-wraith-twin-age"),
        Some(expected_age.as_str())
    );
}

#[tokio::test]
async fn provenance_counts_header_only_with_debug() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let r = s.get("/v1/products/prod_new", None).await;
    assert_eq!(r.header("x-wraith-provenance-counts"), None);
    let d = t.serve(&["--debug"]);
    let r = d.get("/v1/products/prod_new", None).await;
    let counts = r.header("x-wraith-provenance-counts").unwrap();
    for word in ["recorded=", "template=", "fixture=", "handler="] {
        assert!(counts.contains(word), "{counts}");
    }
    // A HEAD carries the counts of the body the same GET carries, as it carries its length.
    let r = d.get("/v1/customers/cus_1", Some("h")).await;
    let head = d
        .send("HEAD", "/v1/customers/cus_1", Some("h"), &[], None)
        .await;
    assert_eq!(
        head.header("x-wraith-provenance-counts"),
        r.header("x-wraith-provenance-counts")
    );
    assert!(head.header("x-wraith-provenance-counts").is_some());
    // Synth fidelity only.
    let strict = t.serve(&["--debug", "--fidelity", "strict"]);
    let r = strict.get("/v1/customers/cus_1", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-wraith-provenance-counts"), None);
}

fn assert_no_provenance_headers(r: &Resp) {
    for h in [
        "x-wraith-provenance",
        "x-wraith-route",
        "x-wraith-exchange",
        "x-wraith-replay",
    ] {
        assert_eq!(r.header(h), None, "{h} must be suppressed");
    }
    assert!(r.header("x-wraith-twin-age").is_some(), "twin age stays");
}

#[tokio::test]
async fn no_provenance_headers_flag_suppresses_the_four_together() {
    let t = shop_twin();
    let s = t.serve(&["--no-provenance-headers"]);
    let r = s.get("/v1/customers/cus_1", Some("s")).await;
    assert_eq!(r.status, 200);
    assert_no_provenance_headers(&r);
    assert_no_provenance_headers(&s.get("/v1/products/p", None).await);
    assert_no_provenance_headers(&s.get("/nope", None).await);
}

#[tokio::test]
async fn provenance_headers_false_in_toml_suppresses_them_too() {
    let t = shop_twin();
    t.set_toml("serve", "provenance_headers", "false");
    let s = t.serve(&[]);
    assert_no_provenance_headers(&s.get("/v1/customers/cus_1", Some("s")).await);
}

// ---------------------------------------------------------------------------------------------
// Fidelity modes

#[tokio::test]
async fn strict_fidelity_serves_only_recorded_exchanges() {
    let t = shop_twin();
    let s = t.serve(&["--fidelity", "strict"]);
    // A recorded exchange: recorded, concrete route path, no replay claim.
    let r = s.get("/v1/customers/cus_1", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), model::cus_1());
    assert_eq!(r.provenance(), Some("recorded"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers/cus_1"));
    assert_eq!(r.header("x-wraith-replay"), None);
    // A route hit with no recording: never synthesized, fail closed (the route's 4xx).
    let r = s.get("/v1/customers/cus_unknown", None).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.provenance(), Some("miss"));
    // No 4xx variant at all: the structured 501, whatever --unknown-entity says.
    let r = s.get("/v1/products/prod_new", None).await;
    assert_eq!(r.status, 501);
    assert_eq!(r.provenance(), Some("miss"));
    assert_eq!(
        r.header("x-wraith-route"),
        None,
        "a strict miss names no route: the request's path is no recording's"
    );
    // Creates have no recording here: not synthesized either.
    let r = s.post("/v1/customers", None, json!({"name": "x"})).await;
    assert_ne!(r.status, 200);
    assert_ne!(r.provenance(), Some("template"));
    // Route miss is the same 501.
    assert_eq!(s.get("/nope", None).await.status, 501);
}

#[tokio::test]
async fn fidelity_flag_wins_over_toml() {
    let t = shop_twin();
    t.set_toml("serve", "fidelity", "\"strict\"");
    let strict = t.serve(&[]);
    assert_eq!(strict.get("/v1/products/prod_new", None).await.status, 501);
    let synth = t.serve(&["--fidelity", "synth"]);
    assert_eq!(synth.get("/v1/products/prod_new", None).await.status, 200);
}

#[tokio::test]
async fn unknown_entity_flag_wins_over_toml() {
    let t = shop_twin();
    t.set_toml("serve", "unknown_entity", "\"not_found\"");
    let nf = t.serve(&[]);
    assert_eq!(nf.get("/v1/products/prod_new", None).await.status, 501);
    let syn = t.serve(&["--unknown-entity", "synthesize"]);
    assert_eq!(syn.get("/v1/products/prod_new", None).await.status, 200);
}

// ---------------------------------------------------------------------------------------------
// CRUD over the wire (the state layer behind entity dispatch)

#[tokio::test]
async fn create_read_update_delete_round_trip() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let c = s
        .post("/v1/customers", Some("crud"), json!({"name": "Ann"}))
        .await
        .json();
    let id = c["id"].as_str().unwrap().to_string();
    let path = format!("/v1/customers/{id}");
    let r = s.get(&path, Some("crud")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["name"], "Ann");
    let p = s
        .send(
            "PATCH",
            &path,
            Some("crud"),
            &[],
            Some(json!({"name": "Bea"})),
        )
        .await;
    assert_eq!(p.status, 200, "{}", body_str(&p));
    assert_eq!(s.get(&path, Some("crud")).await.json()["name"], "Bea");
    let d = s.delete(&path, Some("crud")).await;
    assert_eq!(d.status, 200);
    assert_eq!(d.json()["deleted"], true);
    assert_eq!(s.delete(&path, Some("crud")).await.status, 404);
    assert_eq!(s.get(&path, Some("crud")).await.status, 404);
}

#[tokio::test]
async fn head_has_no_body_but_the_same_headers() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let h = s
        .send("HEAD", "/v1/products/prod_new", None, &[], None)
        .await;
    assert_eq!(h.status, 200);
    assert!(h.body.is_empty());
    assert_eq!(h.provenance(), Some("template"));
    assert_eq!(h.header("x-wraith-route"), Some("GET /v1/products/:id"));
    // Its Content-Length is the length of the body the same GET carries (RFC 9110 §9.3.2).
    let g = s.get("/v1/products/prod_new", None).await;
    assert!(!g.body.is_empty());
    let len = g.body.len().to_string();
    assert_eq!(h.header("content-length"), Some(len.as_str()));
    // A recorded answer too.
    let rh = s
        .send("HEAD", "/v1/customers/cus_1", Some("len"), &[], None)
        .await;
    let rg = s.get("/v1/customers/cus_1", Some("len")).await;
    let len = rg.body.len().to_string();
    assert_eq!(rh.header("content-length"), Some(len.as_str()));
}

/// RFC 9110 §9.1: "The method token is case-sensitive". A method spelled in another letter
/// case than a route's is a method no route has, a route miss like any unknown method: it
/// writes nothing, and only `HEAD` (not `head`) is answered by a `GET` route.
#[tokio::test]
async fn a_method_in_another_letter_case_is_a_route_miss_that_changes_nothing() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let d = s
        .send("delete", "/v1/customers/cus_fx", Some("case"), &[], None)
        .await;
    assert_route_miss_body(&d, "shop");
    assert_eq!(d.provenance(), Some("miss"));
    assert_eq!(d.header("x-wraith-route"), None);
    let read = s.get("/v1/customers/cus_fx", Some("case")).await;
    assert_eq!(
        read.status,
        200,
        "the record was not deleted: {}",
        body_str(&read)
    );
    for method in ["get", "Get", "gET"] {
        let r = s
            .send(method, "/v1/customers/cus_fx", Some("case"), &[], None)
            .await;
        assert_route_miss_body(&r, "shop");
    }
    let p = s
        .send(
            "post",
            "/v1/customers",
            Some("case"),
            &[],
            Some(json!({"name": "Lower"})),
        )
        .await;
    assert_route_miss_body(&p, "shop");
    let list = s.get("/v1/customers", Some("case")).await;
    assert!(!body_str(&list).contains("Lower"), "{}", body_str(&list));
    // `head` is no `HEAD`: it gets the route miss, body and all.
    let h = s
        .send("head", "/v1/customers", Some("case"), &[], None)
        .await;
    assert_route_miss_body(&h, "shop");
    let len = h.body.len().to_string();
    assert_eq!(h.header("content-length"), Some(len.as_str()));
    let head = s
        .send("HEAD", "/v1/customers", Some("case"), &[], None)
        .await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("x-wraith-route"), Some("GET /v1/customers"));
}

/// A simulation pattern's method is read in any case (`delete /v1/customers/*` is
/// `DELETE …`), and selects that method as sent: a `delete` request, a route miss, neither
/// spends the pattern's quota nor is limited by it.
#[tokio::test]
async fn a_patterns_method_in_any_case_selects_only_the_method_spelled_as_routes_are() {
    let t = shop_twin();
    let s = t.serve(&["--rate-limit-override", "delete /v1/customers/*=1/60"]);
    let lower = s
        .send("delete", "/v1/customers/cus_fx", Some("rl"), &[], None)
        .await;
    assert_eq!(lower.status, 501, "{}", body_str(&lower));
    let first = s.delete("/v1/customers/cus_fx", Some("rl")).await;
    assert_eq!(first.status, 200, "{}", body_str(&first));
    let lower = s
        .send("delete", "/v1/customers/cus_fx", Some("rl"), &[], None)
        .await;
    assert_eq!(lower.status, 501, "{}", body_str(&lower));
    let second = s.delete("/v1/customers/cus_fx", Some("rl")).await;
    assert_eq!(second.status, 429, "{}", body_str(&second));
}

#[tokio::test]
async fn self_url_rewrite_is_disclosed_on_the_replay_claim() {
    let t = Twin::init("links", "https://api.shop.test");
    let mut m = model::shop("links");
    let r = m
        .routes
        .iter_mut()
        .find(|r| r.method == "GET" && r.path == "/v1/products/:id")
        .unwrap();
    r.exact = vec![model::exact_get(
        "/v1/products/prod_1",
        "",
        vec![model::moment(
            "sess-a/3",
            200,
            json!({"id": "prod_1", "object": "product", "name": "Lamp",
                   "url": "https://api.shop.test/v1/products/prod_1",
                   "vendor": "https://elsewhere.test/lamp"}),
        )],
    )];
    t.write_model(&m);
    let s = t.serve(&[]);
    let r = s.get("/v1/products/prod_1", Some("links")).await;
    assert_eq!(r.status, 200);
    let host = s.url.trim_start_matches("http://");
    // The recorded upstream's URL now points at the twin; third-party URLs are untouched.
    assert_eq!(r.json()["url"], format!("http://{host}/v1/products/prod_1"));
    assert_eq!(r.json()["vendor"], "https://elsewhere.test/lamp");
    assert_eq!(
        r.header("x-wraith-replay"),
        Some("series-moment;v=1;outbound-policy=applied")
    );
    // Nothing to rewrite: no parameter.
    let plain = s.get("/v1/customers/cus_1", Some("links")).await;
    assert_eq!(plain.header("x-wraith-replay"), Some("series-moment;v=1"));
}

/// A body declaring JSON that the twin cannot read — nested more than 127 levels, not UTF-8, a lone
/// surrogate escape, a number past `f64` — is the same `400 malformed-body` as broken JSON,
/// naming the reason, and creates nothing; a UTF-8 byte order mark before JSON is read past.
#[tokio::test]
async fn a_json_body_the_twin_cannot_read_is_a_400_naming_why_and_a_bom_is_read_past() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let deep = format!(
        "{{\"name\":\"d\",\"meta\":{}{}}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("deep", deep.into_bytes(), "more than 127 levels deep"),
        ("not-utf8", b"{\"name\":\"\xff\xfe\"}".to_vec(), "not UTF-8"),
        ("lone", br#"{"name":"\ud800"}"#.to_vec(), "lone surrogate"),
        (
            "huge",
            br#"{"name":"n","n":1e400}"#.to_vec(),
            "number out of range",
        ),
    ];
    for (session, raw, why) in cases {
        let r = s
            .client
            .post(format!("{}/v1/customers", s.url))
            .header("content-type", "application/json")
            .header("X-Wraith-Session", session)
            .body(raw)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let provenance = r
            .headers()
            .get("x-wraith-provenance")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body: Value = r.json().await.unwrap();
        assert_eq!(status, 400, "{session}: {body}");
        assert_eq!(provenance.as_deref(), Some("miss"), "{session}");
        assert_eq!(body["error"], "malformed-body", "{session}: {body}");
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.contains(why), "{session}: {message}");
        let list = s.get("/v1/customers", Some(session)).await.json();
        assert!(
            !list.to_string().contains("\"d\""),
            "{session}: nothing was stored: {list}"
        );
    }
    let r = s
        .client
        .post(format!("{}/v1/customers", s.url))
        .header("content-type", "application/json")
        .header("X-Wraith-Session", "bom")
        .body(b"\xEF\xBB\xBF{\"name\":\"Bom\"}".to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["name"], "Bom", "the body after the mark was read");
}

/// Strict replay indexes recordings by concrete method and path: a recorded path asked with a
/// query no recording sent is still answered that path's recording, never another path's
/// refusal nor a route miss.
#[tokio::test]
async fn strict_fidelity_answers_a_recorded_path_asked_with_an_unrecorded_query() {
    let t = shop_twin();
    let s = t.serve(&["--fidelity", "strict"]);
    let r = s.get("/v1/customers/cus_1?expand=x", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), model::cus_1());
    assert_eq!(r.provenance(), Some("recorded"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers/cus_1"));
    let plain = s.get("/v1/customers", None).await;
    let r = s.get("/v1/customers?unrecorded=1", None).await;
    assert_eq!(r.status, plain.status);
    assert_eq!(r.json(), plain.json());
    assert_eq!(r.provenance(), Some("recorded"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers"));
}
