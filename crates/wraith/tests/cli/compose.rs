//! `wraith compose` black-box: the bundled example twin (`examples/twins/shop`) as the base and
//! small overlay twins built here with the real `wraith init` + `wraith import` (HAR files under
//! `testdata/compose/`). The composite is served on 127.0.0.1 port 0 and spoken to over HTTP:
//! base and overlay routes answer, the base's authored route (lua/routes.toml) is not composed
//! (warning in the envelope, 501 route miss), overlay fixture sets are namespaced
//! `<overlay>:<set>`; an overlay that changes a base route exits 2 and writes nothing; composing
//! twice gives the same bytes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use support::{Twin, bin, example_shop_twin};

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/compose")
        .join(name)
}

/// Run `wraith` in `cwd` with a fixed scrub key (imports scrub the same way every run).
fn wraith(cwd: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(cwd)
        .env("WRAITH_HMAC_KEY", "compose-test-key")
        .env("XDG_CONFIG_HOME", cwd.join("config"))
        .args(args)
        .output()
        .unwrap()
}

/// `wraith compose --base shop --overlay <overlay> --output <output>` and `extra`, run in `cwd`.
fn compose(cwd: &Path, overlay: &str, output: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "compose",
        "--base",
        "shop",
        "--overlay",
        overlay,
        "--output",
        output,
    ];
    args.extend_from_slice(extra);
    wraith(cwd, &args)
}

/// The one conflict a `compose --json` run into `out` refused with: exit 2, nothing written,
/// the refusal said on stderr, and a `conflict` envelope listing exactly one.
fn the_one_conflict(cwd: &Path, out: &Output) -> Value {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        !cwd.join("out").exists(),
        "nothing is written on a conflict"
    );
    assert!(stderr.contains("nothing was written"), "{stderr}");
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["status"], "conflict");
    let conflicts = envelope["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1, "{conflicts:#?}");
    conflicts[0].clone()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The shop base at `<tmp>/twins/shop` plus an overlay `<tmp>/twins/<name>` made with
/// `wraith init` and `wraith import <har>`.
fn shop_with_overlay(name: &str, har: &str) -> Twin {
    let shop = example_shop_twin();
    add_overlay(&shop, name, har);
    shop
}

fn add_overlay(shop: &Twin, name: &str, har: &str) -> PathBuf {
    let cwd = shop.tmp.path();
    ok(&wraith(
        cwd,
        &["init", name, "--base-url", "http://127.0.0.1:18080"],
    ));
    let har = testdata(har);
    ok(&wraith(cwd, &["import", name, har.to_str().unwrap()]));
    cwd.join("twins").join(name)
}

/// The promotions overlay also declares `coupons` and seeds two fixture sets: `default` and
/// `vip` (whose bare `parent` names the overlay's own default).
fn add_promo_fixtures(overlay: &Path) {
    let write = |rel: &str, text: &str| {
        let p = overlay.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "state/schema.json",
        r#"{"schema_version":1,"entity_types":{"coupons":{"primary_key":"id"}}}"#,
    );
    write(
        "state/fixtures/default/fixture.json",
        r#"{"entities":{"coupons":[{"id":"cpn_FIXTURE2026cccc","object":"coupon","code":"FIXED","percent_off":50}]}}"#,
    );
    write(
        "state/fixtures/vip/fixture.json",
        r#"{"parent":"default","entities":{"coupons":[{"id":"cpn_VIP2026ddddddd","object":"coupon","code":"VIP","percent_off":90}]}}"#,
    );
}

/// A `Twin` handle on the composite folder, for `Twin::serve` (its own temp dir holds the
/// ready file and the server's stderr).
fn composite(root: PathBuf) -> Twin {
    Twin {
        tmp: tempfile::tempdir().unwrap(),
        root,
        name: "composite".into(),
    }
}

/// Every file under `dir` with its bytes, by relative path.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[tokio::test]
async fn composite_serves_base_and_overlay_routes_without_the_authored_sidecar() {
    let shop = shop_with_overlay("promos", "promos.har");
    add_promo_fixtures(&shop.tmp.path().join("twins/promos"));
    let cwd = shop.tmp.path();
    let stdout = ok(&compose(cwd, "promos", "composite", &["--json"]));
    let envelope: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(envelope["status"], "composed");
    let warnings = envelope["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w["code"] == "authored-routes-not-composed" && w["input"] == "shop"),
        "{warnings:?}"
    );
    let out = cwd.join("composite");
    assert!(out.join("wraith.toml").is_file());
    assert!(
        !out.join("lua/routes.toml").exists(),
        "the composite gets no sidecar"
    );
    assert!(
        out.join("lua/handlers/get_summary.lua").is_file(),
        "handlers are kept for a re-declared route"
    );
    let report = std::fs::read_to_string(out.join("reports/compose-report.json")).unwrap();
    assert_eq!(report, stdout, "the printed envelope is the written report");
    let vip = std::fs::read_to_string(out.join("state/fixtures/promos:vip/fixture.json")).unwrap();
    assert!(
        vip.contains(r#""parent":"promos:default""#),
        "a bare parent naming the overlay's own set is namespaced: {vip}"
    );

    let twin = composite(out);
    let server = twin.serve(&[]);
    // A base route.
    let r = server.get("/customers", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-wraith-route"), Some("GET /customers"));
    // Overlay routes: a recorded read, and a create the base never had.
    let r = server.get("/coupons/cpn_SPRING2026aaaa", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-wraith-route"), Some("GET /coupons/:param"));
    assert_eq!(r.json()["code"], "SPRING");
    let r = server
        .post(
            "/coupons",
            Some("s1"),
            serde_json::json!({"code": "AUTUMN", "percent_off": 15}),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["code"], "AUTUMN");
    // The base's authored route was not composed: a route miss.
    let r = server
        .get("/customers/cus_plbPwCH9lyjhzg/summary", None)
        .await;
    assert_eq!(r.status, 501);
    assert_eq!(r.provenance(), Some("miss"));
    assert_eq!(r.header("x-wraith-route"), None);
    assert!(
        !server.stderr().contains("running `wraith synth` first"),
        "the composite's model is not stale: {}",
        server.stderr()
    );
    drop(server);

    // The overlay's fixture sets are selected by their namespaced names.
    let server = twin.serve(&["--fixture", "promos:vip"]);
    let r = server.get("/coupons/cpn_VIP2026ddddddd", Some("v")).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["code"], "VIP");
    let r = server.get("/coupons/cpn_FIXTURE2026cccc", Some("v")).await;
    assert_eq!(r.status, 200, "the parent set is inherited");
    assert_eq!(r.json()["code"], "FIXED");
}

/// An overlay whose default set is loose legacy `<type>.json` files: they become
/// `promos:default`, and a set of the overlay whose bare `parent` is `default` is rewritten to
/// `promos:default` like one naming a `default/` folder, so it inherits the overlay's own
/// default rather than the base's.
#[test]
fn a_bare_parent_naming_an_overlays_loose_default_set_is_namespaced() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    let fixtures = cwd.join("twins/promos/state/fixtures");
    std::fs::create_dir_all(fixtures.join("vip")).unwrap();
    std::fs::write(
        fixtures.join("coupons.json"),
        r#"[{"id":"cpn_LOOSE2026eeeeeee","object":"coupon","code":"LOOSE","percent_off":5}]"#,
    )
    .unwrap();
    std::fs::write(
        fixtures.join("vip/fixture.json"),
        r#"{"parent":"default","entities":{"coupons":[{"id":"cpn_VIP2026ddddddd","object":"coupon","code":"VIP","percent_off":90}]}}"#,
    )
    .unwrap();
    let stdout = ok(&compose(cwd, "promos", "out", &["--json"]));
    let envelope: Value = serde_json::from_str(&stdout).unwrap();
    let mut sets: Vec<&str> = envelope["inputs"][1]["fixture_sets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    sets.sort_unstable();
    assert_eq!(sets, ["promos:default", "promos:vip"]);
    let out = cwd.join("out/state/fixtures");
    assert!(out.join("promos:default/coupons.json").is_file());
    let vip = std::fs::read_to_string(out.join("promos:vip/fixture.json")).unwrap();
    assert!(vip.contains(r#""parent":"promos:default""#), "{vip}");
}

/// An empty folder in an overlay's `recordings/sessions/` is no session: the composite has no
/// such folder, so neither the envelope's counts nor the composite's model list it.
#[test]
fn an_empty_session_folder_is_neither_copied_nor_counted() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    std::fs::create_dir_all(cwd.join("twins/promos/recordings/sessions/empty")).unwrap();
    let stdout = ok(&compose(cwd, "promos", "out", &["--json"]));
    let envelope: Value = serde_json::from_str(&stdout).unwrap();
    let copied = std::fs::read_dir(cwd.join("out/recordings/sessions"))
        .unwrap()
        .count();
    assert_eq!(envelope["composite"]["sessions"], copied);
    assert!(!cwd.join("out/recordings/sessions/empty").exists());
    let listed = envelope["inputs"][1]["sessions"].as_array().unwrap();
    assert!(!listed.iter().any(|s| s == "empty"), "{listed:?}");
    let model: Value = serde_json::from_str(
        &std::fs::read_to_string(cwd.join("out/model/twin.wir.json")).unwrap(),
    )
    .unwrap();
    let sessions = model["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), copied, "{sessions:?}");
    assert!(!sessions.iter().any(|s| s == "empty"), "{sessions:?}");
}

#[test]
fn compose_envelope_lists_each_inputs_contribution() {
    let shop = shop_with_overlay("promos", "promos.har");
    add_promo_fixtures(&shop.tmp.path().join("twins/promos"));
    let stdout = ok(&compose(shop.tmp.path(), "promos", "out", &["--json"]));
    let envelope: Value = serde_json::from_str(&stdout).unwrap();
    insta::assert_json_snapshot!("compose_shop_promos_envelope", envelope);
}

#[test]
fn composing_twice_gives_identical_bytes() {
    let shop = shop_with_overlay("promos", "promos.har");
    add_promo_fixtures(&shop.tmp.path().join("twins/promos"));
    let cwd = shop.tmp.path();
    let args = [
        "compose",
        "--base",
        "shop",
        "--overlay",
        "promos",
        "--output",
        "out",
    ];
    ok(&wraith(cwd, &args));
    let first = tree(&cwd.join("out"));
    let again = wraith(cwd, &args);
    assert_eq!(
        again.status.code(),
        Some(1),
        "a non-empty output needs --force"
    );
    ok(&wraith(cwd, &[&args[..], &["--force"]].concat()));
    let second = tree(&cwd.join("out"));
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        second.keys().collect::<Vec<_>>()
    );
    assert!(
        first == second,
        "compose is not byte-for-byte deterministic"
    );
    assert!(first.contains_key("model/twin.wir.json"));
    // Nothing is left beside the output.
    let leftovers: Vec<String> = std::fs::read_dir(cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn composite_passes_lint_and_check_and_inputs_are_only_read() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    // A current model of an input is read, not re-synthesized.
    ok(&wraith(cwd, &["synth", "promos"]));
    let stdout = ok(&compose(cwd, "promos", "out", &["--json"]));
    let envelope: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(envelope["inputs"][0]["model"], "synthesized");
    assert_eq!(envelope["inputs"][1]["model"], "read");
    assert!(
        !cwd.join("twins/shop/model").exists(),
        "compose never writes into an input"
    );
    ok(&wraith(cwd, &["lint", "out"]));
    // The composite's symbols name the composite's model, not the base's.
    let lint = ok(&wraith(cwd, &["lint", "out", "--json"]));
    assert!(!lint.contains("symbols-stale"), "{lint}");
    let symbols = std::fs::read_to_string(cwd.join("out/model/symbols.json")).unwrap();
    assert!(symbols.contains("\"model_digest\":\"sha256:"), "{symbols}");
    let check = wraith(cwd, &["check", "out", "--json"]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let inspect = ok(&wraith(cwd, &["inspect", "out", "--json"]));
    let v: Value = serde_json::from_str(&inspect).unwrap();
    assert_eq!(v["sessions"], 3, "{v}");
}

#[test]
fn an_overlay_that_changes_a_base_route_exits_2_and_writes_nothing() {
    let shop = shop_with_overlay("clash", "conflicting.har");
    let cwd = shop.tmp.path();
    let out = compose(cwd, "clash", "out", &["--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !cwd.join("out").exists(),
        "nothing is written on a conflict"
    );
    let leftovers: Vec<String> = std::fs::read_dir(cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["status"], "conflict");
    let conflicts = envelope["conflicts"].as_array().unwrap();
    assert!(
        conflicts.iter().any(|c| c["input"] == "clash"
            && c["path"] == "GET /customers"
            && c["reason"].as_str().unwrap().contains("body template")),
        "{conflicts:?}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nothing was written"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two overlays whose composite would carry one variant id twice: `promos` and a copy of it
/// whose `GET /coupons` answer was edited to another status without a new id. The merge
/// matches variants by status and guard, so the edited one is a new variant of the route; the
/// composite would fail `wraith lint` (`duplicate-variant-id`), so compose refuses it as a
/// conflict of the second overlay (exit 2) and writes nothing.
#[test]
fn overlays_whose_composite_would_fail_lint_exit_2_naming_the_overlay() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    ok(&wraith(cwd, &["synth", "promos"]));
    let copy = cwd.join("twins/promos2");
    copy_tree(&cwd.join("twins/promos"), &copy);
    // The model last, so it is newer than the copied recordings and is read, not re-synthesized.
    let model_path = copy.join("model/twin.wir.json");
    let mut model: Value = serde_json::from_slice(&std::fs::read(&model_path).unwrap()).unwrap();
    let route = model["routes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["method"] == "GET" && r["path"] == "/coupons")
        .unwrap();
    let variant = &mut route["variants"][0];
    let id = variant["id"].as_str().unwrap().to_string();
    assert_eq!(variant["status"], 200, "{variant}");
    variant["status"] = 203.into();
    std::fs::write(&model_path, format!("{model}\n")).unwrap();

    let out = wraith(
        cwd,
        &[
            "compose",
            "--base",
            "shop",
            "--overlay",
            "promos",
            "--overlay",
            "promos2",
            "--output",
            "out",
            "--json",
        ],
    );
    let c = &the_one_conflict(cwd, &out);
    assert_eq!(c["input"], "promos2", "{c}");
    assert_eq!(c["path"], "GET /coupons", "{c}");
    let reason = c["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("variant id {id} is used 2 times"))
            && reason.contains("duplicate-variant-id")
            && reason.contains("re-run `wraith synth`"),
        "{reason}"
    );
    // Each overlay alone composes.
    ok(&wraith(
        cwd,
        &[
            "compose",
            "--base",
            "shop",
            "--overlay",
            "promos",
            "--output",
            "one",
        ],
    ));
    let lint = wraith(cwd, &["lint", "one"]);
    assert_eq!(lint.status.code(), Some(0), "{lint:?}");
}

/// An overlay that recorded `GET /customers/` (with a trailing slash) next to the base's
/// `GET /customers`: the merge tells routes apart by their path as written, so it would keep
/// two routes, but the engine's router leaves a trailing slash out and files them as one, and
/// would answer only the base's. Compose refuses it as a conflict of the overlay naming both
/// templates and where each came from (exit 2), and writes nothing.
#[test]
fn compose_refuses_routes_the_router_would_file_as_one() {
    let shop = example_shop_twin();
    let cwd = shop.tmp.path();
    ok(&wraith(
        cwd,
        &["init", "slash", "--base-url", "http://127.0.0.1:18080"],
    ));
    let har = serde_json::json!({"log": {"version": "1.2",
    "creator": {"name": "t", "version": "1"}, "pages": [],
    "entries": [support::har::entry(
        "http://127.0.0.1:18080",
        "GET",
        "/customers/",
        None,
        &serde_json::json!({"object": "list", "data": []}),
    )]}});
    let har_path = cwd.join("slash.har");
    std::fs::write(&har_path, har.to_string()).unwrap();
    ok(&wraith(
        cwd,
        &["import", "slash", har_path.to_str().unwrap()],
    ));

    let out = compose(cwd, "slash", "out", &["--json"]);
    let c = &the_one_conflict(cwd, &out);
    assert_eq!(c["input"], "slash", "{c}");
    assert_eq!(c["path"], "GET /customers/", "{c}");
    let reason = c["reason"].as_str().unwrap();
    assert!(
        reason.contains("GET /customers/ (from slash) and GET /customers (from shop)")
            && reason.contains("one route to the engine's router")
            && reason.contains("would answer only GET /customers"),
        "{reason}"
    );
    // Said on stderr too, without --json.
    let out = compose(cwd, "slash", "out", &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("conflict: slash: GET /customers/: GET /customers/ (from slash)"),
        "{stderr}"
    );
    assert!(!cwd.join("out").exists());
}

/// Fixture sets whose `parent` chain loops only once composed: the base's `default` names
/// `promos:vip` (alone it falls back to the base's own `vip`), and the overlay's `vip` names
/// `shop:default` (alone, its own `default`; composed, the base's). Each input seeds alone;
/// the composite's chain default → promos:vip → default would leave sessions without a
/// starting state, so compose refuses it as a conflict naming the loop (exit 2), and writes
/// nothing.
#[test]
fn compose_refuses_a_fixture_parent_loop_across_base_and_overlay() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    let overlay = cwd.join("twins/promos");
    add_promo_fixtures(&overlay);
    std::fs::write(
        overlay.join("state/fixtures/vip/fixture.json"),
        r#"{"parent":"shop:default","entities":{"coupons":[]}}"#,
    )
    .unwrap();
    let base = cwd.join("twins/shop/state/fixtures");
    let default = base.join("default/fixture.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&default).unwrap()).unwrap();
    doc["parent"] = "promos:vip".into();
    std::fs::write(&default, doc.to_string()).unwrap();
    std::fs::create_dir_all(base.join("vip")).unwrap();
    std::fs::write(base.join("vip/fixture.json"), r#"{"entities":{}}"#).unwrap();
    // Each input alone has no loop.
    for twin in ["shop", "promos"] {
        let lint = wraith(cwd, &["lint", twin, "--json"]);
        let findings: Value = serde_json::from_slice(&lint.stdout).unwrap();
        assert!(
            !findings.to_string().contains("fixture-parent-cycle"),
            "{twin}: {findings}"
        );
    }

    let out = compose(cwd, "promos", "out", &["--json"]);
    let c = &the_one_conflict(cwd, &out);
    assert_eq!(c["input"], "promos", "{c}");
    assert_eq!(c["path"], "state/fixtures/promos:vip", "{c}");
    let reason = c["reason"].as_str().unwrap();
    assert!(
        reason.contains("parent chain loops: default → promos:vip → default")
            && reason.contains("`default` from shop, `promos:vip` from promos"),
        "{reason}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "conflict: promos: state/fixtures/promos:vip: the fixture sets' parent chain loops"
        ),
        "{stderr}"
    );
}

/// Copy a folder's files (a twin, for a hand-edited variant of it).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// An overlay identical to the base but for the name of `GET /orders/:param`'s parameter
/// (`:oid`) is the same route: its parameter is renamed by position everywhere the model names
/// it, including the path echo set inside the 404's text (`No such order: '<oid>'`), so the
/// variants are equal and compose adds nothing rather than reporting a conflict.
#[test]
fn an_overlay_naming_a_routes_parameter_otherwise_is_the_same_route_down_to_text_echoes() {
    let shop = example_shop_twin();
    let cwd = shop.tmp.path();
    ok(&wraith(cwd, &["synth", "shop"]));
    let ovr = cwd.join("twins/ovr");
    copy_tree(&shop.root, &ovr);
    std::fs::remove_file(ovr.join("lua/routes.toml")).unwrap();
    let model_path = ovr.join("model/twin.wir.json");
    let mut model: Value =
        serde_json::from_str(&std::fs::read_to_string(&model_path).unwrap()).unwrap();
    let routes = model["routes"].as_array_mut().unwrap();
    let i = routes
        .iter()
        .position(|r| r["method"] == "GET" && r["path"] == "/orders/:param")
        .unwrap();
    let text = serde_json::to_string(&routes[i]).unwrap();
    assert!(
        text.contains(r#""in":"within""#),
        "the shop's 404 echoes the order id inside its text: {text}"
    );
    let mut renamed: Value =
        serde_json::from_str(&text.replace(r#""param":"param""#, r#""param":"oid""#)).unwrap();
    renamed["path"] = "/orders/:oid".into();
    renamed["params"] = serde_json::json!(["oid"]);
    renamed["id_param"] = "oid".into();
    routes[i] = renamed;
    // Written last, so it is newer than the copied recordings and read as it is.
    std::fs::write(&model_path, serde_json::to_string(&model).unwrap() + "\n").unwrap();

    let stdout = ok(&compose(cwd, "ovr", "out", &["--json"]));
    let envelope: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(envelope["inputs"][1]["model"], "read");
    assert_eq!(envelope["inputs"][1]["routes_added"], serde_json::json!([]));
    assert_eq!(
        envelope["composite"]["routes"],
        envelope["inputs"][0]["routes_added"]
            .as_array()
            .unwrap()
            .len()
    );
}

#[test]
fn an_overlay_handler_shadowing_a_base_handler_is_a_conflict() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    std::fs::write(
        cwd.join("twins/promos/lua/handlers/get_summary.lua"),
        "emit.json({ shadowed = true })\n",
    )
    .unwrap();
    let out = compose(cwd, "promos", "out", &["--json"]);
    assert_eq!(out.status.code(), Some(2));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    let conflicts = envelope["conflicts"].as_array().unwrap();
    assert!(
        conflicts
            .iter()
            .any(|c| c["path"] == "lua/handlers/get_summary.lua" && c["input"] == "promos"),
        "{conflicts:?}"
    );
    assert!(!cwd.join("out").exists());
}

/// Serve loads one file per handler name: an overlay's `get_summary.luau` beside the base's
/// `get_summary.lua` would replace it as surely as a `.lua` of other bytes.
#[test]
fn an_overlay_handler_in_the_other_dialect_is_a_conflict_too() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    std::fs::write(
        cwd.join("twins/promos/lua/handlers/get_summary.luau"),
        "emit.json({ shadowed = true })\n",
    )
    .unwrap();
    let out = compose(cwd, "promos", "out", &["--json"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    let conflicts = envelope["conflicts"].as_array().unwrap();
    assert!(
        conflicts
            .iter()
            .any(|c| c["path"] == "lua/handlers/get_summary.luau"
                && c["input"] == "promos"
                && c["reason"]
                    .as_str()
                    .unwrap()
                    .contains("lua/handlers/get_summary.lua")),
        "{conflicts:?}"
    );
    assert!(!cwd.join("out").exists());
}

/// A symbolic link among an input's files is followed only to a file inside the folder compose
/// copies: one naming a file elsewhere on the host, or a folder (which may loop), exits 1
/// naming the link, and nothing is written.
#[cfg(unix)]
#[test]
fn a_symbolic_link_out_of_an_input_exits_1_naming_it() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    let outside = cwd.join("secret.lua");
    std::fs::write(&outside, "return 'host file'\n").unwrap();
    let link = cwd.join("twins/promos/lua/handlers/get_status.lua");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let out = compose(cwd, "promos", "out", &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("get_status.lua is a symbolic link") && stderr.contains("outside"),
        "{stderr}"
    );
    assert!(!cwd.join("out").exists());

    std::fs::remove_file(&link).unwrap();
    let lib = cwd.join("twins/promos/lua/lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::os::unix::fs::symlink("..", lib.join("cycle")).unwrap();
    let out = compose(cwd, "promos", "out", &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cycle is a symbolic link that names the folder"),
        "{stderr}"
    );

    // A link to a file of the same folder is taken, as the file it names.
    std::fs::remove_file(lib.join("cycle")).unwrap();
    std::fs::write(lib.join("util.lua"), "return {}\n").unwrap();
    std::os::unix::fs::symlink("util.lua", lib.join("alias.lua")).unwrap();
    ok(&compose(cwd, "promos", "out", &[]));
    assert_eq!(
        std::fs::read_to_string(cwd.join("out/lua/lib/alias.lua")).unwrap(),
        "return {}\n"
    );
}

/// The same rule holds on the way to the files compose copies: a session folder, or a whole
/// `lua/`, `state/` or `recordings/sessions/` folder, that is a symbolic link to a folder
/// exits 1 naming the link, and nothing is written (a linked session would be copied under a
/// name its manifest does not carry, and the composite would fail `wraith lint`).
#[cfg(unix)]
#[test]
fn a_symbolic_link_to_a_folder_on_the_way_to_an_inputs_files_exits_1_naming_it() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    let promos = cwd.join("twins/promos");
    let elsewhere = cwd.join("elsewhere");
    copy_tree(&shop.root.join("recordings/sessions"), &elsewhere);
    let session = std::fs::read_dir(&elsewhere)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let link = promos.join("recordings/sessions/20990101T000000Z-aaaaaa");
    std::os::unix::fs::symlink(&session, &link).unwrap();
    let refused = |what: &str| {
        let out = compose(cwd, "promos", "out", &[]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
        assert!(
            stderr.contains(&format!("{what} is a symbolic link that names the folder")),
            "{stderr}"
        );
        assert!(!cwd.join("out").exists(), "{what}: nothing is written");
    };
    refused("20990101T000000Z-aaaaaa");
    std::fs::remove_file(&link).unwrap();

    for dir in ["lua", "state", "recordings/sessions"] {
        let real = cwd.join(format!("moved-{}", dir.replace('/', "-")));
        std::fs::create_dir_all(promos.join(dir)).unwrap();
        std::fs::rename(promos.join(dir), &real).unwrap();
        std::os::unix::fs::symlink(&real, promos.join(dir)).unwrap();
        refused(dir);
        std::fs::remove_file(promos.join(dir)).unwrap();
        std::fs::rename(&real, promos.join(dir)).unwrap();
    }
    ok(&compose(cwd, "promos", "out", &[]));
}

#[test]
fn an_unreadable_input_exits_1_naming_it() {
    let shop = example_shop_twin();
    let cwd = shop.tmp.path();
    let out = compose(cwd, "nosuch", "out", &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("overlay `nosuch`"), "{stderr}");
    assert!(!cwd.join("out").exists());

    let out = compose(cwd, "shop", "out", &[]);
    assert_eq!(out.status.code(), Some(1), "the same twin twice is refused");
}

#[test]
fn a_damaged_recording_in_an_input_exits_1_naming_it_and_writes_nothing() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    // With its model in place compose reads the model and copies the recordings as they are.
    ok(&wraith(cwd, &["synth", "promos"]));
    ok(&wraith(cwd, &["synth", "shop"]));
    let sessions = cwd.join("twins/promos/recordings/sessions");
    let session = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| !n.starts_with('.'))
        .unwrap();
    std::fs::write(sessions.join(&session).join("000000.wrec.zst"), b"not zstd").unwrap();
    let out = compose(cwd, "promos", "out", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("overlay `promos`"), "{err}");
    assert!(
        err.contains(&format!("recordings/sessions/{session}")),
        "{err}"
    );
    assert!(!cwd.join("out").exists());
}

#[test]
fn an_output_inside_an_input_is_refused() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    let out = compose(cwd, "promos", "twins/shop/composite", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("overlaps the input"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!cwd.join("twins/shop/composite").exists());
}

#[test]
fn an_output_where_no_folder_can_be_made_exits_1_naming_the_flag() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    // Not even root can make a folder in /proc.
    let out = compose(cwd, "promos", "/proc/wraith-compose-test", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--output /proc/wraith-compose-test"), "{err}");
    assert!(!err.contains(".compose-"), "no internal folder name: {err}");
}

/// The composite is renamed into place, which would replace a link rather than fill the folder
/// it names: a link is refused before anything is built (exit 1), and `--force` replaces the
/// link itself, leaving the folder it named alone.
#[cfg(unix)]
#[test]
fn an_output_that_is_a_link_is_refused_up_front_and_force_replaces_only_the_link() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    std::fs::create_dir_all(cwd.join("empty")).unwrap();
    std::os::unix::fs::symlink("empty", cwd.join("to-empty")).unwrap();
    std::os::unix::fs::symlink("nowhere", cwd.join("dangling")).unwrap();
    for output in ["to-empty", "dangling"] {
        let out = compose(cwd, "promos", output, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{output}: {err}");
        assert!(
            err.contains(&format!("--output {output} is a symbolic link")),
            "{err}"
        );
        assert!(!err.contains("os error"), "{err}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".compose-"))
        .collect();
    assert!(leftovers.is_empty(), "nothing was built: {leftovers:?}");
    ok(&compose(cwd, "promos", "dangling", &["--force"]));
    assert!(cwd.join("dangling/wraith.toml").is_file());
    assert!(
        !cwd.join("dangling")
            .symlink_metadata()
            .unwrap()
            .is_symlink()
    );
    assert_eq!(std::fs::read_dir(cwd.join("empty")).unwrap().count(), 0);
}

/// A `compose --force` killed after moving the earlier composite aside leaves it in
/// `.<output>.compose-old-<pid>` (a whole twin); the next compose to that output removes it once
/// its process is gone, and leaves another output's alone.
#[test]
fn a_composite_a_killed_force_run_moved_aside_is_removed_by_the_next_compose() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    ok(&compose(cwd, "promos", "out", &[]));
    let mut child = Command::new("true").spawn().unwrap();
    let gone = child.id();
    child.wait().unwrap();
    let aside = cwd.join(format!(".out.compose-old-{gone}"));
    let another = cwd.join(format!(".elsewhere.compose-old-{gone}"));
    for dir in [&aside, &another] {
        std::fs::create_dir_all(dir.join("model")).unwrap();
        std::fs::write(dir.join("model/twin.wir.json"), "{}").unwrap();
    }
    ok(&compose(cwd, "promos", "out", &["--force"]));
    assert!(!aside.exists(), "left behind: {}", aside.display());
    assert!(another.exists(), "another output's folder was touched");
    assert!(cwd.join("out/model/twin.wir.json").is_file());
}

/// `out/.` names the folder `out` to a person but not to the final rename: refused up front
/// (exit 1, naming the folder to pass instead), nothing written.
/// Every name a folder may have is a usable `--output`, up to the 255-byte limit: the hidden
/// staging folder beside it keeps a shortened name rather than overflowing that limit.
#[test]
fn an_output_name_of_255_bytes_is_composed() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    for len in [241, 255] {
        let name = "o".repeat(len);
        ok(&compose(cwd, "promos", &name, &[]));
        assert!(cwd.join(&name).join("model/twin.wir.json").is_file());
        ok(&compose(cwd, "promos", &name, &["--force"]));
    }
    let leftovers: Vec<String> = std::fs::read_dir(cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn an_output_ending_in_a_dot_is_refused_naming_the_folder() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    std::fs::create_dir_all(cwd.join("made")).unwrap();
    for output in ["fresh/.", "made/."] {
        let out = compose(cwd, "promos", output, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{output}: {err}");
        assert!(err.contains("ends in `.`; name the folder itself"), "{err}");
    }
    assert!(!cwd.join("fresh").exists());
    assert_eq!(std::fs::read_dir(cwd.join("made")).unwrap().count(), 0);
}

/// Composes to one new --output at once, without --force: one writes it, every other exits 1
/// saying the folder was filled (or is not empty), and none replaces the composite written.
#[test]
fn concurrent_composes_to_one_output_replace_nothing_without_force() {
    let shop = shop_with_overlay("promos", "promos.har");
    let cwd = shop.tmp.path();
    // A large file to copy keeps every run busy long enough that all of them pass the
    // up-front check before the first one moves its composite into place.
    std::fs::write(
        cwd.join("twins/shop/lua/handlers/notes.txt"),
        vec![b'x'; 32 << 20],
    )
    .unwrap();
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(bin())
                .current_dir(cwd)
                .env("WRAITH_HMAC_KEY", "compose-test-key")
                .env("XDG_CONFIG_HOME", cwd.join("config"))
                .args([
                    "compose",
                    "--base",
                    "shop",
                    "--overlay",
                    "promos",
                    "--output",
                    "race",
                ])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let won = outs.iter().filter(|o| o.status.success()).count();
    assert_eq!(won, 1, "exactly one compose writes the folder");
    for o in outs.iter().filter(|o| !o.status.success()) {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains("was filled while this compose ran") || err.contains("is not empty"),
            "{err}"
        );
    }
    assert!(cwd.join("race/model/twin.wir.json").is_file());
}

/// Folders named `wraith-composite-*` under `dir`.
fn temporary_composites(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("wraith-composite-"))
        .collect()
}

#[tokio::test]
async fn serve_with_overlays_serves_the_composite_and_removes_it_when_stopped() {
    let shop = shop_with_overlay("promos", "promos.har");
    let overlay = shop.tmp.path().join("twins/promos");
    let temp = tempfile::tempdir().unwrap();
    let temp_str = temp.path().to_str().unwrap().to_string();
    let mut server = shop.serve_env(
        &["--overlay", overlay.to_str().unwrap()],
        &[("TMPDIR", temp_str.as_str())],
    );
    assert_eq!(
        temporary_composites(temp.path()).len(),
        1,
        "composed into a temporary folder"
    );
    let r = server.get("/customers", None).await;
    assert_eq!(r.status, 200, "a base route");
    let r = server.get("/coupons/cpn_SPRING2026aaaa", None).await;
    assert_eq!(r.status, 200, "an overlay route");
    assert_eq!(r.json()["code"], "SPRING");
    assert!(
        server.stderr().contains("authored-routes-not-composed"),
        "the compose warnings are shown: {}",
        server.stderr()
    );
    assert_eq!(server.signal("-INT"), 0, "{}", server.stderr());
    assert!(
        temporary_composites(temp.path()).is_empty(),
        "the temporary composite is removed when serve stops"
    );
    // A closed terminal (SIGHUP) stops it as gracefully, composite removed.
    let mut server = shop.serve_env(
        &["--overlay", overlay.to_str().unwrap()],
        &[("TMPDIR", temp_str.as_str())],
    );
    assert_eq!(temporary_composites(temp.path()).len(), 1);
    assert_eq!(server.signal("-HUP"), 0, "{}", server.stderr());
    assert!(temporary_composites(temp.path()).is_empty());
    // A TMPDIR that does not exist is refused, not created.
    let missing = temp.path().join("no-such-folder");
    let (code, stderr) = shop.serve_expect_exit_env(
        &["--overlay", overlay.to_str().unwrap()],
        &[("TMPDIR", missing.to_str().unwrap())],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("TMPDIR"), "{stderr}");
    assert!(!missing.exists());
}

/// A `serve --overlay` interrupted while it composed (before it listened) leaves its staging
/// folder in TMPDIR (`.wraith-composite-<pid>-<n>.compose-<pid>`), one killed outright while
/// serving its whole composite (`wraith-composite-<pid>-<n>`); the next `serve --overlay`
/// removes both once their process is gone, and touches nothing else there.
#[tokio::test]
async fn serve_with_overlays_removes_what_an_interrupted_or_killed_serve_left() {
    let shop = shop_with_overlay("promos", "promos.har");
    let overlay = shop.tmp.path().join("twins/promos");
    let temp = tempfile::tempdir().unwrap();
    let mut child = Command::new("true").spawn().unwrap();
    let gone = child.id();
    child.wait().unwrap();
    let stale = temp
        .path()
        .join(format!(".wraith-composite-{gone}-17.compose-{gone}"));
    let killed = temp.path().join(format!("wraith-composite-{gone}-18"));
    let other = temp.path().join(format!(".unrelated.compose-{gone}"));
    for dir in [&stale, &killed, &other] {
        std::fs::create_dir_all(dir.join("recordings")).unwrap();
    }
    let mut server = shop.serve_env(
        &["--overlay", overlay.to_str().unwrap()],
        &[("TMPDIR", temp.path().to_str().unwrap())],
    );
    assert!(!stale.exists(), "left behind: {}", stale.display());
    assert!(!killed.exists(), "left behind: {}", killed.display());
    assert!(other.exists(), "another program's folder was touched");
    assert_eq!(server.signal("-INT"), 0, "{}", server.stderr());
}

#[tokio::test]
async fn serve_with_overlays_keeps_the_composite_where_asked() {
    let shop = shop_with_overlay("promos", "promos.har");
    let overlay = shop.tmp.path().join("twins/promos");
    let kept = shop.tmp.path().join("kept");
    let mut server = shop.serve(&[
        "--overlay",
        overlay.to_str().unwrap(),
        "--keep-composite",
        kept.to_str().unwrap(),
    ]);
    let r = server.get("/coupons/cpn_SPRING2026aaaa", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(server.signal("-INT"), 0, "{}", server.stderr());
    assert!(kept.join("wraith.toml").is_file());
    assert!(kept.join("model/twin.wir.json").is_file());
    assert!(kept.join("reports/compose-report.json").is_file());
}

#[test]
fn serve_with_a_conflicting_overlay_exits_2_and_serves_nothing() {
    let shop = shop_with_overlay("clash", "conflicting.har");
    let overlay = shop.tmp.path().join("twins/clash");
    let (code, stderr) = shop.serve_expect_exit(&["--overlay", overlay.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("conflict: clash: GET /customers"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing is served"), "{stderr}");
    let (code, stderr) = shop.serve_expect_exit(&["--keep-composite", "x"]);
    assert_eq!(code, 1, "--keep-composite without --overlay: {stderr}");
}

#[test]
fn serve_keep_composite_into_a_used_folder_names_that_flag() {
    let shop = shop_with_overlay("promos", "promos.har");
    let overlay = shop.tmp.path().join("twins/promos");
    let used = shop.tmp.path().join("used");
    std::fs::create_dir(&used).unwrap();
    std::fs::write(used.join("notes.txt"), "keep me").unwrap();
    let (code, stderr) = shop.serve_expect_exit(&[
        "--overlay",
        overlay.to_str().unwrap(),
        "--keep-composite",
        used.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("--keep-composite"), "{stderr}");
    assert!(
        !stderr.contains("--output") && !stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(used.join("notes.txt")).unwrap(),
        "keep me"
    );
}
