//! `wraith check` runs the twin's Lua handlers and gates authored output; `wraith lint` checks
//! the handlers and `[[deviations]]`. Black-box: the real binary on a twin built from
//! `testdata/serve/shop-customers.har` plus the files of `testdata/check-lua/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

struct Shop {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

impl Shop {
    fn wraith(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_wraith"))
            .current_dir(&self.dir)
            .args(args)
            .env("WRAITH_HMAC_KEY", "check-lua-test-key")
            .env("XDG_CONFIG_HOME", self.dir.join("config"))
            .env_remove("CI")
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) {
        let out = self.wraith(args);
        assert!(
            out.status.success(),
            "wraith {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn twin(&self) -> PathBuf {
        self.dir.join("twins/shop")
    }

    /// The recorded customers twin, synthesized, with the deviating `get_customer.lua`; with
    /// `later_session`, a session recorded after synthesis whose read of a new customer the
    /// handler answers (served), besides the probes of the recorded reads.
    fn new(later_session: bool) -> Shop {
        let tmp = tempfile::tempdir().unwrap();
        let shop = Shop {
            dir: tmp.path().to_path_buf(),
            _tmp: tmp,
        };
        shop.ok(&["init", "shop", "--base-url", "https://api.shop.test"]);
        let har = testdata().join("serve/shop-customers.har");
        shop.ok(&["import", "shop", har.to_str().unwrap()]);
        shop.ok(&["synth", "shop"]);
        shop.copy(
            "lua/handlers/get_customer.lua",
            "lua/handlers/get_customer.lua",
        );
        if later_session {
            let later = testdata().join("check-lua/later-session.har");
            shop.ok(&["import", "shop", later.to_str().unwrap()]);
        }
        shop
    }

    fn copy(&self, from: &str, to: &str) {
        let dest = self.twin().join(to);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(testdata().join("check-lua").join(from), dest).unwrap();
    }

    fn append_toml(&self, text: &str) {
        let p = self.twin().join("wraith.toml");
        let mut s = std::fs::read_to_string(&p).unwrap();
        s.push_str(text);
        std::fs::write(p, s).unwrap();
    }

    fn check(&self) -> (i32, Value, String) {
        let out = self.wraith(&["check", "shop", "--json"]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let report = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("no JSON report ({e}): {stderr}"));
        (out.status.code().unwrap(), report, stderr)
    }
}

/// `(answer, path, rule)` of every authored deviation, sorted and deduplicated.
fn deviations(r: &Value) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = r["authored_deviations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["answer"].as_str().unwrap().to_string(),
                d["path"].as_str().unwrap().to_string(),
                d["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

fn owned(v: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    v.iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect()
}

#[test]
fn a_handler_overriding_a_recorded_route_with_another_shape_fails_check_with_authored_deviations() {
    let shop = Shop::new(true);
    let (code, r, stderr) = shop.check();
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(r["passed"], false);
    assert_eq!(
        deviations(&r),
        owned(&[
            ("probe", "body.created", "wrong_type"),
            ("probe", "body.name", "miscased_key"),
            ("probe", "body.object", "missing_key"),
            ("served", "body.created", "wrong_type"),
            ("served", "body.name", "miscased_key"),
            ("served", "body.object", "missing_key"),
        ])
    );
    let d = &r["authored_deviations"][0];
    assert_eq!(d["category"], "authored_deviation");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["marked"], false);
    assert_eq!(d["route"], "GET /v1/customers/:param");
    let a = &r["authored"];
    assert_eq!(a["gate_passed"], false);
    assert_eq!(a["deviation_policy"], "error");
    assert_eq!(
        (a["served_answers"].as_u64(), a["probed_answers"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(a["unmarked"], a["deviations"]);
    // The served handler answer is also scored: its divergences count.
    assert_eq!(r["provenance"]["handler"], 1);
    assert!(r["divergence_count"].as_u64().unwrap() > 0);
    // Fiction ratio: 1 of the 8 replayed answers came from the handler.
    assert_eq!(r["fiction"]["answers"], 8);
    assert_eq!(r["fiction"]["authored_answers"], 1);
    assert_eq!(r["fiction"]["ratio_bp"], 1250);
    let route = r["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["route"] == "GET /v1/customers/:param")
        .unwrap();
    assert_eq!(route["provenance"]["handler"], 1);
    assert_eq!(route["fiction_ratio_bp"], 2500);
    assert!(stderr.contains("unmarked authored deviation"), "{stderr}");
    let html = std::fs::read_to_string(shop.twin().join("reports/check.html")).unwrap();
    assert!(
        html.contains("Authored output") && html.contains("miscased_key"),
        "the HTML report lists the authored deviations"
    );
}

#[test]
fn declared_deviations_are_marked_exempt_the_served_answers_divergences_and_pass() {
    let shop = Shop::new(true);
    shop.append_toml(
        &std::fs::read_to_string(testdata().join("check-lua/deviations.toml")).unwrap(),
    );
    let (code, r, stderr) = shop.check();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(r["passed"], true);
    let all = r["authored_deviations"].as_array().unwrap();
    assert!(!all.is_empty());
    assert!(
        all.iter()
            .all(|d| d["marked"] == true && d["severity"] == "info")
    );
    assert!(
        all.iter()
            .any(|d| d["declared_reason"] == "the handler answers created as text")
    );
    let a = &r["authored"];
    assert_eq!(
        (a["unmarked"].as_u64(), a["gate_passed"].as_bool()),
        (Some(0), Some(true))
    );
    // `body.name`, `body.object`, `body.created` and the handler's own `body.Name`.
    assert_eq!(a["exempted_divergences"], 4);
    assert_eq!(r["score_bp"], 10000);
}

#[test]
fn deviation_policy_warn_reports_unmarked_deviations_and_passes() {
    let shop = Shop::new(false);
    shop.append_toml("\n[handlers]\ndeviation_policy = \"warn\"\n");
    let (code, r, stderr) = shop.check();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(r["authored"]["gate_passed"], true);
    assert_eq!(r["authored"]["deviation_policy"], "warn");
    assert_eq!(r["authored"]["unmarked"], 6);
    assert!(
        r["authored_deviations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["severity"] == "warning" && d["answer"] == "probe")
    );
    assert!(
        stderr.contains("warning: 6 unmarked authored deviation(s)"),
        "{stderr}"
    );
}

#[test]
fn without_handlers_the_report_has_no_authored_output() {
    let shop = Shop::new(false);
    std::fs::remove_file(shop.twin().join("lua/handlers/get_customer.lua")).unwrap();
    let (code, r, stderr) = shop.check();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(r["authored_deviations"], serde_json::json!([]));
    assert_eq!(r["authored"]["probed_answers"], 0);
    assert_eq!(r["fiction"]["ratio_bp"], 0);
}

#[test]
fn an_incomplete_deviations_entry_is_a_configuration_error_for_check_and_lint() {
    let shop = Shop::new(false);
    shop.append_toml("\n[[deviations]]\nroute = \"GET /v1/customers/:id\"\n");
    let out = shop.wraith(&["check", "shop"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[[deviations]] #1: `path` is required")
            && stderr.contains("[[deviations]] #1: `reason` is required"),
        "{stderr}"
    );
    let out = shop.wraith(&["lint", "shop", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rules: Vec<(&str, &str)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "deviations")
        .map(|f| (f["severity"].as_str().unwrap(), f["file"].as_str().unwrap()))
        .collect();
    assert_eq!(
        rules,
        vec![("error", "wraith.toml"), ("error", "wraith.toml")]
    );
}

#[test]
fn lint_finds_a_handler_that_does_not_compile_and_lists_the_override() {
    let shop = Shop::new(false);
    let out = shop.wraith(&["lint", "shop", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let info: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "info")
        .collect();
    assert!(
        info.iter()
            .any(|f| f["rule"] == "handler-overrides-recorded-route"
                && f["file"] == "lua/handlers/get_customer.lua"
                && f["message"]
                    .as_str()
                    .unwrap()
                    .contains("GET /v1/customers/:param")),
        "{info:?}"
    );
    assert!(info.iter().any(|f| f["rule"] == "lua_handlers_valid"));
    assert_eq!(v["info"].as_u64(), Some(info.len() as u64));

    shop.copy("broken.lua", "lua/handlers/broken.lua");
    let out = shop.wraith(&["lint", "shop", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let broken: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "lua-compile")
        .collect();
    assert_eq!(broken.len(), 1, "{v}");
    assert_eq!(broken[0]["severity"], "error");
    assert_eq!(broken[0]["file"], "lua/handlers/broken.lua");
    assert!(
        broken[0]["message"]
            .as_str()
            .unwrap()
            .contains("does not compile")
    );
    // check installs the handlers as serve does: one that does not compile refuses to run.
    let out = shop.wraith(&["check", "shop"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not compile"));
}

#[test]
fn lint_warns_of_a_handler_no_route_binds_and_of_a_second_file_of_one_handler() {
    let shop = Shop::new(false);
    let warnings = |shop: &Shop| -> Vec<(String, String, String)> {
        let out = shop.wraith(&["lint", "shop", "--json"]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "warning")
            .map(|f| {
                (
                    f["rule"].as_str().unwrap().to_string(),
                    f["file"].as_str().unwrap_or("").to_string(),
                    f["message"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert!(
        !warnings(&shop).iter().any(|w| w.0.starts_with("handler-")),
        "{:?}",
        warnings(&shop)
    );
    // A handler whose name matches no route, and a second file of the bound handler.
    let handlers = shop.twin().join("lua/handlers");
    std::fs::write(handlers.join("get_widget.lua"), "return {}").unwrap();
    std::fs::write(handlers.join("get_customer.luau"), "return {}").unwrap();
    let found = warnings(&shop);
    let unbound: Vec<_> = found.iter().filter(|w| w.0 == "handler-unbound").collect();
    assert_eq!(unbound.len(), 1, "{found:?}");
    assert_eq!(unbound[0].1, "lua/handlers/get_widget.lua");
    assert!(unbound[0].2.contains("binds no route"), "{}", unbound[0].2);
    let dup: Vec<_> = found
        .iter()
        .filter(|w| w.0 == "handler-duplicate")
        .collect();
    assert_eq!(dup.len(), 1, "{found:?}");
    assert_eq!(dup[0].1, "lua/handlers/get_customer.luau");
    assert!(
        dup[0]
            .2
            .contains("already loaded from lua/handlers/get_customer.lua"),
        "{}",
        dup[0].2
    );
    // A [[binding]] that gives get_customer's route to get_widget: now get_customer is the one
    // that never runs, and the warning names the binding rather than the naming convention.
    std::fs::write(
        shop.twin().join("lua/routes.toml"),
        "schema_version = 1\n[[binding]]\nmethod = \"GET\"\npath = \"/v1/customers/:id\"\n\
         handler = \"get_widget\"\n",
    )
    .unwrap();
    let found = warnings(&shop);
    let unbound: Vec<_> = found.iter().filter(|w| w.0 == "handler-unbound").collect();
    assert_eq!(unbound.len(), 1, "{found:?}");
    assert_eq!(unbound[0].1, "lua/handlers/get_customer.lua");
    assert!(
        unbound[0].2.contains(
            "its file name matches GET /v1/customers/:param, which a [[binding]] in \
             lua/routes.toml gives to `get_widget`"
        ),
        "{}",
        unbound[0].2
    );
}

/// A `lua/routes.toml` nested past what the parser takes (one line of ten thousand brackets)
/// is refused by check as serve refuses it: naming the file and the place, not quoting the
/// line, which runs to kilobytes.
#[test]
fn check_refuses_an_over_nested_routes_toml_naming_the_file_and_where() {
    let shop = Shop::new(false);
    let routes = shop.twin().join("lua/routes.toml");
    std::fs::write(
        &routes,
        format!("deep = {}{}\n", "[".repeat(10_000), "]".repeat(10_000)),
    )
    .unwrap();
    let out = shop.wraith(&["check", "shop"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("routes.toml"), "names the file: {stderr}");
    assert!(stderr.contains("line 1, column"), "says where: {stderr}");
    assert!(
        stderr.len() < 2_000,
        "no quoted line: {} bytes",
        stderr.len()
    );
}
