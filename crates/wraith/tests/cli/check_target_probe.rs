//! `wraith check --target` judges a Lua handler on recorded requests through the running twin's
//! probe endpoint (`POST /__wraith/session/{id}/probe`), like the in-memory check does with the
//! engine; a target without the endpoint is warned about once and the run goes on judging
//! served answers. Black-box: the real binary (check and serve) on the twin of
//! `testdata/serve/shop-customers.har` with the deviating handler of `testdata/check-lua/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use crate::check_support::fake_target;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::Twin;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn wraith(t: &Twin, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wraith"))
        .current_dir(t.tmp.path())
        .args(args)
        .env("WRAITH_HMAC_KEY", "check-target-probe-test-key")
        .env("XDG_CONFIG_HOME", t.tmp.path().join("config"))
        .env_remove("WRAITH_CONTROL_TOKEN")
        .env_remove("CI")
        .output()
        .unwrap()
}

fn run_ok(t: &Twin, args: &[&str]) {
    let out = wraith(t, args);
    assert!(
        out.status.success(),
        "wraith {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The recorded customers twin, synthesized, with `get_customer.lua` overriding the recorded
/// `GET /v1/customers/:id` in another shape.
fn shop() -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    let har = testdata().join("serve/shop-customers.har");
    run_ok(&t, &["import", "shop", har.to_str().unwrap()]);
    run_ok(&t, &["synth", "shop"]);
    let handler = testdata().join("check-lua/lua/handlers/get_customer.lua");
    t.write(
        "lua/handlers/get_customer.lua",
        &std::fs::read_to_string(handler).unwrap(),
    );
    t
}

/// A session recorded after synthesis (and after serve loaded the model, which would otherwise
/// re-synthesize it in): the handler serves its read of a new customer.
fn import_later_session(t: &Twin) {
    let later = testdata().join("check-lua/later-session.har");
    run_ok(t, &["import", "shop", later.to_str().unwrap()]);
}

fn check(t: &Twin, extra: &[&str]) -> (i32, Value, String) {
    let mut args = vec!["check", "shop", "--json"];
    args.extend_from_slice(extra);
    let out = wraith(t, &args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}): {stderr}"));
    (out.status.code().unwrap(), report, stderr)
}

/// `(answer, route, path, rule)` of every authored deviation, in report order.
fn deviations(r: &Value) -> Vec<(String, String, String, String)> {
    r["authored_deviations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap_or_default().to_string();
            (s("answer"), s("route"), s("path"), s("rule"))
        })
        .collect()
}

#[test]
fn check_target_probes_a_handler_overriding_a_recorded_route_like_the_in_memory_check() {
    let t = shop();
    let s = t.serve(&[]);
    import_later_session(&t);
    let (mem_code, mem, mem_err) = check(&t, &[]);
    let (code, r, stderr) = check(&t, &["--target", &s.url]);

    assert_eq!(r["mode"], "target", "{stderr}");
    let a = &r["authored"];
    // Three recorded reads exact replay answers, each probed; one read the handler served.
    assert_eq!(
        (a["probed_answers"].as_u64(), a["served_answers"].as_u64()),
        (Some(3), Some(1)),
        "{stderr}"
    );
    assert_eq!(a["gate_passed"], false);
    let devs = deviations(&r);
    for rule in ["wrong_type", "miscased_key", "missing_key"] {
        assert!(
            devs.iter()
                .any(|d| d.0 == "probe" && d.1 == "GET /v1/customers/:param" && d.3 == rule),
            "no probed {rule} deviation in {devs:?}"
        );
    }
    assert_eq!(code, 2, "{stderr}");
    assert!(!stderr.contains("probe endpoint"), "{stderr}");

    // The same twin judged in memory: the same authored summary and deviations.
    assert_eq!(mem["mode"], "in_memory");
    assert_eq!(mem_code, 2, "{mem_err}");
    assert_eq!(mem["authored"], r["authored"]);
    assert_eq!(deviations(&mem), devs);

    // The probes changed nothing the replay saw: the served answers score as in memory.
    assert_eq!(mem["provenance"], r["provenance"]);
    assert_eq!(mem["divergence_count"], r["divergence_count"]);
}

#[test]
fn check_target_without_the_probe_endpoint_warns_once_and_judges_served_answers() {
    let t = shop();
    import_later_session(&t);
    // An older twin: the control plane has no probe endpoint (404 not-found), and every
    // application read is answered by the handler.
    let url = fake_target::start(|c| {
        if c.target.starts_with("/__wraith/") {
            return fake_target::Answer {
                status: 404,
                provenance: "miss",
                route: String::new(),
                body: json!({"error": "not-found", "message": "no control endpoint"}),
            };
        }
        let id = c.target.rsplit('/').next().unwrap_or_default().to_string();
        fake_target::Answer {
            status: 200,
            provenance: "handler",
            route: "GET /v1/customers/:param".into(),
            body: json!({"id": id, "Name": "x", "created": "1"}),
        }
    });
    let (code, r, stderr) = check(&t, &["--target", &url]);
    assert_ne!(
        code, 4,
        "a missing probe endpoint never fails the run: {stderr}"
    );
    assert_eq!(
        stderr.matches("has no handler probe endpoint").count(),
        1,
        "{stderr}"
    );
    let a = &r["authored"];
    assert_eq!(a["probed_answers"], 0);
    assert!(a["served_answers"].as_u64().unwrap() > 0, "{a}");
    assert!(
        deviations(&r).iter().all(|d| d.0 == "served"),
        "{:?}",
        deviations(&r)
    );
}
