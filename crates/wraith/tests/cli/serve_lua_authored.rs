//! Authored routes (`lua/routes.toml`) over HTTP: a handler → `handler`; a declared response →
//! that response with provenance `template`; neither → 501 "authored route has no
//! implementation"; `X-Wraith-Route` names the route; a recorded route with the same method and
//! path wins (serve warns, lint reports `authored-route-shadowed`); never written into the
//! model, surviving re-synth; never replayed or scored by `wraith check`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::process::Command;

use serde_json::json;
use support::{Twin, bin, model};

const ROUTES: &str = r#"schema_version = 1

[[route]]
method = "POST"
path = "/v1/exports"
status = 202
response = '{"status":"queued"}'

[[route]]
method = "GET"
path = "/v1/health"

[[route]]
method = "DELETE"
path = "/v1/sessions/:sid"
status = 204

[[route]]
method = "GET"
path = "/v1/customers/:id/summary"

# Shadowed: the model records GET /v1/customers/:id.
[[route]]
method = "GET"
path = "/v1/customers/:cid"
response = '{"authored":true}'
"#;

fn shop_with_authored() -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t.write("lua/routes.toml", ROUTES);
    t.write(
        "lua/handlers/get_summary.lua",
        r#"local c = state.get("customers", req.params.id)
           if c == nil then emit.error(404, "not_found", "no customer " .. req.params.id) return end
           return { customer = req.params.id, name = c.name, customers = state.count("customers") }"#,
    );
    t
}

#[tokio::test]
async fn authored_routes_answer_from_handler_declaration_or_501() {
    let t = shop_with_authored();
    let s = t.serve(&[]);

    // A route miss lists the authored routes beside the recorded ones.
    let miss = s.get("/v1/nowhere", None).await;
    assert_eq!(miss.status, 501);
    let listed = miss.json()["wraith"]["routes"].to_string();
    assert!(listed.contains("\"POST /v1/exports\""), "{listed}");

    let r = s.post("/v1/exports", None, json!({"what": "all"})).await;
    assert_eq!(r.status, 202);
    assert_eq!(r.provenance(), Some("template"));
    assert_eq!(r.header("x-wraith-route"), Some("POST /v1/exports"));
    assert_eq!(r.json(), json!({"status": "queued"}));

    let r = s.send("DELETE", "/v1/sessions/abc", None, &[], None).await;
    assert_eq!(r.status, 204);
    assert_eq!(r.provenance(), Some("template"));
    assert!(r.body.is_empty());

    let r = s.get("/v1/health", None).await;
    assert_eq!(r.status, 501);
    assert_eq!(r.provenance(), Some("template"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/health"));
    assert_eq!(r.json()["error"], "authored route has no implementation");
    assert_eq!(r.json()["wraith"]["route"], "GET /v1/health");

    let r = s.get("/v1/customers/cus_1/summary", None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.provenance(), Some("handler"));
    assert_eq!(
        r.header("x-wraith-route"),
        Some("GET /v1/customers/:id/summary")
    );
    assert_eq!(r.json()["customer"], "cus_1");
    assert_eq!(
        r.json()["name"],
        "Alice",
        "the handler reads the recorded record"
    );
    let r = s.get("/v1/customers/nobody/summary", None).await;
    assert_eq!((r.status, r.provenance()), (404, Some("handler")));

    let err = s.stderr();
    assert!(
        err.contains(
            "handler lua/handlers/get_summary.lua → GET /v1/customers/:id/summary (authored)"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_recorded_route_with_the_same_method_and_path_wins_and_serve_warns() {
    let t = shop_with_authored();
    let s = t.serve(&[]);
    let r = s.get("/v1/customers/cus_1", None).await;
    assert_eq!(r.provenance(), Some("recorded"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers/:id"));
    assert_ne!(r.json(), json!({"authored": true}));
    let err = s.stderr();
    assert!(
        err.contains("authored route GET /v1/customers/:cid (lua/routes.toml) is shadowed"),
        "{err}"
    );
}

#[test]
fn lint_reports_a_shadowed_authored_route_as_a_warning() {
    let t = shop_with_authored();
    let out = Command::new(bin())
        .current_dir(t.tmp.path())
        .args(["lint", &t.path_str(), "--json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let shadowed: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "authored-route-shadowed")
        .collect();
    assert_eq!(shadowed.len(), 1, "{report}");
    assert_eq!(shadowed[0]["severity"], "warning");
    assert_eq!(shadowed[0]["file"], "lua/routes.toml");
    assert!(
        shadowed[0]["message"]
            .as_str()
            .unwrap()
            .contains("GET /v1/customers/:cid")
    );
}

#[test]
fn an_invalid_routes_toml_refuses_to_serve() {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t.write(
        "lua/routes.toml",
        "schema_version = 1\n[[route]]\nmethod = \"GET\"\npath = \"/x\"\nresponse = '{nope'\n",
    );
    let (code, err) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("routes.toml") && err.contains("not valid JSON"),
        "{err}"
    );
}

/// The example twin (recordings, its authored summary route and handler), copied.
fn example_twin() -> Twin {
    support::example_shop_twin()
}

#[tokio::test]
async fn authored_routes_are_never_written_into_the_model_and_survive_resynth() {
    let t = example_twin();
    let routes_before = std::fs::read_to_string(t.path().join("lua/routes.toml")).unwrap();
    for _ in 0..2 {
        let out = t.wraith(&["synth", &t.path_str()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for file in ["model/twin.wir.json", "model/symbols.json"] {
            let text = std::fs::read_to_string(t.path().join(file)).unwrap();
            assert!(
                !text.contains("/summary"),
                "{file} must not carry the authored route"
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(t.path().join("lua/routes.toml")).unwrap(),
        routes_before,
        "synth never touches the sidecar"
    );
    let s = t.serve(&[]);
    let r = s.get("/customers/cus_FixtureMarg001/summary", None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.provenance(), Some("handler"));
    assert_eq!(r.json()["name"], "Margaret Hamilton");
}

#[test]
fn check_neither_replays_nor_scores_authored_routes() {
    let t = example_twin();
    let synth = t.wraith(&["synth", &t.path_str()]);
    assert!(synth.status.success());
    let with = t.wraith(&["check", &t.path_str(), "--in-memory", "--json"]);
    std::fs::remove_dir_all(t.path().join("lua")).unwrap();
    let without = t.wraith(&["check", &t.path_str(), "--in-memory", "--json"]);
    assert_eq!(with.status.code(), without.status.code());
    let text = String::from_utf8_lossy(&with.stdout);
    assert!(
        !text.contains("/summary"),
        "the authored route is not in the check report"
    );
    let summary = |o: &std::process::Output| {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v["score_bp"].is_u64(), "{v}");
        (
            v["score_bp"].clone(),
            v["exchanges_total"].clone(),
            v["routes"].clone(),
        )
    };
    assert_eq!(summary(&with), summary(&without));
}

#[tokio::test]
async fn strict_fidelity_serves_neither_authored_routes_nor_handlers() {
    let t = shop_with_authored();
    t.write("lua/handlers/get_product.lua", "return { via = 'lua' }");
    let s = t.serve(&["--fidelity", "strict"]);
    let r = s.get("/v1/health", None).await;
    assert_eq!(r.status, 501);
    assert_eq!(r.provenance(), Some("miss"));
    assert_eq!(r.json()["error"], "no matching route");
    let r = s.get("/v1/products/p1", None).await;
    assert_ne!(r.provenance(), Some("handler"));
    let err = s.stderr();
    assert!(err.contains("not served under strict fidelity"), "{err}");
    assert!(
        err.contains("Lua handlers do not run under strict fidelity"),
        "{err}"
    );
}

/// A customer deleted in its own recording (its recorded read answers 404) is not in the
/// world a handler's `state` sees either: the summary handler answers it as the customer read
/// does, and a customer the recordings keep is still there.
#[tokio::test]
async fn a_record_deleted_in_its_recording_is_gone_for_handlers_too() {
    let t = example_twin();
    let s = t.serve(&[]);
    let session = Some("gone");
    let deleted = "cus_DolzNQrqO2mPIG";
    s.get(&format!("/customers/{deleted}"), session)
        .await
        .assert_status(404);
    let r = s
        .get(&format!("/customers/{deleted}/summary"), session)
        .await;
    r.assert_status(404);
    assert_eq!(r.provenance(), Some("handler"));
    let kept = "cus_plbPwCH9lyjhzg";
    s.get(&format!("/customers/{kept}"), session)
        .await
        .assert_status(200);
    s.get(&format!("/customers/{kept}/summary"), session)
        .await
        .assert_status(200);
}

/// Under `on_error = "fallback"` a failing handler of an authored route has no learned answer
/// to fall back to: the 501 says the handler failed (not that there is none), and the serve
/// log names the error.
#[tokio::test]
async fn a_failing_authored_handler_under_fallback_says_it_failed_and_is_logged() {
    let t = shop_with_authored();
    t.write(
        "lua/handlers/get_summary.lua",
        r#"error("summary exploded")"#,
    );
    t.append_toml("[serve.lua]\non_error = \"fallback\"\n");
    let s = t.serve(&[]);
    let r = s.get("/v1/customers/cus_1/summary", None).await;
    assert_eq!(r.status, 501);
    let body = r.json();
    assert_eq!(body["error"], "authored route's handler failed", "{body}");
    assert_eq!(body["wraith"]["handler"], "get_summary", "{body}");
    // The route with no handler at all still says so.
    let r = s.get("/v1/health", None).await;
    assert_eq!(r.json()["error"], "authored route has no implementation");
    let err = s.stderr();
    assert!(
        err.contains("Lua handler failed") && err.contains("summary exploded"),
        "{err}"
    );
}

/// A twin whose handlers mint ids with `state.new_id` (and answer a returned record under an
/// emitted status): `notes` declared with an `id_format`,
/// `tags` declared without one, `customers` route-derived with a learned shape (which wins
/// over its declared format), `orgs` route-derived with no learned shape (its declared format
/// applies) and `products` with neither.
fn twin_minting_ids() -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t.write(
        "state/schema.json",
        r#"{"schema_version":1,"entity_types":{
            "notes":{"primary_key":"id","id_format":"^note_[a-z0-9]{8}$"},
            "tags":{"primary_key":"id"},
            "customers":{"primary_key":"id","id_format":"c[0-9]"},
            "orgs":{"primary_key":"id","id_format":"org-[0-9]{4}"}}}"#,
    );
    t.write(
        "lua/routes.toml",
        r#"schema_version = 1

[[route]]
method = "POST"
path = "/v1/notes"
handler = "make_note"

[[route]]
method = "GET"
path = "/v1/ids"
handler = "ids"
"#,
    );
    t.write(
        "lua/handlers/make_note.lua",
        r#"local id = state.new_id("notes")
           emit.status(201)
           return state.put("notes", id, { text = "hi" })"#,
    );
    t.write(
        "lua/handlers/ids.lua",
        r#"local function fails(ty)
             local ok, err = pcall(state.new_id, ty)
             if ok then return "minted" end
             return tostring(err)
           end
           return { customer = state.new_id("customers"), org = state.new_id("orgs"),
                    tags = fails("tags"),
                    products = fails("products"), nothing = fails("nothing") }"#,
    );
    t
}

#[tokio::test]
async fn state_new_id_mints_ids_of_the_declared_id_format_or_the_learned_shape() {
    let t = twin_minting_ids();
    let s = t.serve(&[]);
    // `^note_[a-z0-9]{8}$`.
    let note_format = |id: &str| {
        id.strip_prefix("note_").is_some_and(|rest| {
            rest.len() == 8
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
    };
    let mut first = Vec::new();
    for _ in 0..3 {
        let r = s.post("/v1/notes", Some("a"), json!({})).await;
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        let id = r.json()["id"].as_str().unwrap().to_string();
        assert!(note_format(&id), "{id}");
        first.push(id);
    }
    assert_eq!(
        first
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        3,
        "fresh each time: {first:?}"
    );
    let ids = s.get("/v1/ids", Some("a")).await.json();
    let customer = ids["customer"].as_str().unwrap();
    assert!(
        customer.strip_prefix("cus_").is_some_and(|rest| rest.len() == 14
            && rest.bytes().all(|b| b.is_ascii_alphanumeric())),
        "a route-derived type takes its learned shape: {ids}"
    );
    let org = ids["org"].as_str().unwrap();
    assert!(
        org.strip_prefix("org-")
            .is_some_and(|n| n.len() == 4 && n.bytes().all(|b| b.is_ascii_digit())),
        "no recorded shape: the declared format applies: {ids}"
    );
    let tags = ids["tags"].as_str().unwrap();
    assert!(tags.contains("declares no id_format"), "{ids}");
    assert!(
        ids["products"]
            .as_str()
            .unwrap()
            .contains("no consistent id shape"),
        "{ids}"
    );
    assert!(
        ids["nothing"].as_str().unwrap().contains("not declared"),
        "{ids}"
    );

    // The same session on a fresh server draws the same ids: the namespace's seeded generator.
    drop(s);
    let again = t.serve(&[]);
    for want in &first {
        let r = again.post("/v1/notes", Some("a"), json!({})).await;
        assert_eq!(r.json()["id"].as_str(), Some(want.as_str()));
    }
}
