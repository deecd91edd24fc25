//! `wraith check` and `wraith lint` with the `[diff]` configuration users write: suppress
//! rules, field classes, per-dimension thresholds and overrides, and `--fixture`. Black-box: the
//! real binary on a copy of the bundled example twin (`examples/twins/shop`, whose default
//! fixture set adds two customers to every session, so its customer list answers differ from
//! the recordings; the copy leaves out the `[[deviations]]` the twin ships declaring that) and
//! of the demo twin.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use check_support::{DemoTwin, bin, stdout_json};
use serde_json::Value;

/// A synthesized copy of the example shop twin in a temp dir.
struct Shop {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Shop {
    fn new() -> Shop {
        let DemoTwin { tmp, root } = DemoTwin::example_shop();
        without_declared_deviations(&root.join("wraith.toml"));
        let s = Shop { _tmp: tmp, root };
        let out = s.run(&["synth"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        s
    }

    fn run(&self, cmd_and_args: &[&str]) -> Output {
        let (cmd, rest) = cmd_and_args.split_first().unwrap();
        Command::new(bin())
            .arg(cmd)
            .arg(&self.root)
            .args(rest)
            .env("WRAITH_HMAC_KEY", "check-tests-key")
            .output()
            .unwrap()
    }

    /// Start `wraith serve` on a free port; returns the child and its base URL.
    fn serve(&self) -> (std::process::Child, String) {
        check_support::serve_twin(&self.root, &self._tmp.path().join("ready.json"))
    }

    /// Append TOML to `wraith.toml`.
    fn config(&self, toml: &str) {
        let p = self.root.join("wraith.toml");
        let mut text = std::fs::read_to_string(&p).unwrap();
        text.push('\n');
        text.push_str(toml);
        std::fs::write(p, text).unwrap();
    }
}

/// Cut the shipped `[[deviations]]` (and the comment above them) from `wraith.toml`, so the
/// fixture's customer lists diverge as answers nothing declared.
fn without_declared_deviations(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let Some(at) = text.find("[[deviations]]") else {
        return;
    };
    let mut kept: Vec<&str> = text[..at].lines().collect();
    while kept
        .last()
        .is_some_and(|l| l.starts_with('#') || l.is_empty())
    {
        kept.pop();
    }
    std::fs::write(path, kept.join("\n") + "\n").unwrap();
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn route<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["route"] == name)
        .unwrap_or_else(|| panic!("no route {name} in {:#}", r["routes"]))
}

#[test]
fn check_suppress_rule_turns_a_failing_check_into_a_passing_one_and_lists_it_with_its_reason() {
    let t = Shop::new();
    // Every exchange must pass: the customer lists (default fixtures added) fail the run.
    t.config("[diff]\nrequired_score = 1.0\n");
    let out = t.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let before = stdout_json(&out);
    let diverged = before["divergence_count"].as_u64().unwrap();
    assert!(diverged > 0);
    assert_eq!(before["suppressed_count"], 0);

    t.config(
        "[[diff.suppress]]\nroute = \"GET /customers\"\npath = \"**\"\nreason = \"the default fixture set adds two customers to every list\"\n",
    );
    let out = t.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = stdout_json(&out);
    assert_eq!(r["score_bp"], 10_000);
    assert_eq!(r["divergence_count"], 0);
    assert_eq!(r["categories"], serde_json::json!({}));
    assert_eq!(r["suppressed_count"], diverged);
    assert_eq!(route(&r, "GET /customers")["suppressed"], diverged);
    // Listed only when asked for.
    assert_eq!(r["suppressed"], serde_json::json!([]));

    let out = t.run(&["check", "--json", "--show-suppressed"]);
    assert_eq!(out.status.code(), Some(0));
    let r = stdout_json(&out);
    let listed = r["suppressed"].as_array().unwrap();
    assert_eq!(listed.len() as u64, diverged);
    for s in listed {
        assert_eq!(s["route"], "GET /customers");
        assert_eq!(s["rule"], 1);
        assert_eq!(
            s["reason"],
            "the default fixture set adds two customers to every list"
        );
        assert!(s["path"].as_str().unwrap().starts_with("body."), "{s}");
    }
    insta::assert_json_snapshot!(
        "shop_suppressed_report_fields",
        serde_json::json!({
            "passed": r["passed"], "score_bp": r["score_bp"],
            "suppressed_count": r["suppressed_count"], "suppressed": r["suppressed"],
            "dimensions": r["dimensions"], "dimensions_failed": r["dimensions_failed"],
            "customers_route": route(&r, "GET /customers"),
        })
    );
    let html = std::fs::read_to_string(t.root.join("reports/check.html")).unwrap();
    assert!(html.contains("<h2>Dimensions</h2>") && html.contains("adds two customers"));
    let out = t.run(&["check", "--show-suppressed"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("PASS"), "{text}");
    assert!(
        text.contains("suppressed: ") && text.contains("adds two customers to every list"),
        "{text}"
    );
}

#[test]
fn check_suppress_entry_without_reason_is_a_configuration_error_naming_file_entry_and_key() {
    let t = Shop::new();
    t.config(
        "[[diff.suppress]]\nroute = \"GET /customers\"\nreason = \"ok\"\n\n[[diff.suppress]]\nroute = \"GET /customers\"\npath = \"total\"\n",
    );
    let out = t.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(e.contains("wraith.toml:"), "{e}");
    assert!(e.contains("[[diff.suppress]] entry 2"), "{e}");
    assert!(e.contains("`reason`"), "{e}");
    assert!(!e.contains("entry 1"), "{e}");
}

/// An entry with a reason and nothing to match would remove every divergence and pass any twin.
#[test]
fn check_suppress_entry_without_a_matcher_is_a_configuration_error() {
    let t = Shop::new();
    t.config("[[diff.suppress]]\nreason = \"known noise\"\n");
    let out = t.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(e.contains("[[diff.suppress]] entry 1"), "{e}");
    assert!(e.contains("has no matcher"), "{e}");
    let lint = stdout_json(&t.run(&["lint", "--json"]));
    assert!(
        lint["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "diff-suppress-matcher" && f["severity"] == "error"),
        "{lint:#}"
    );
}

#[test]
fn check_field_enum_with_values_accepts_the_listed_values_only() {
    let t = Shop::new();
    let out = t.run(&["check", "--json"]);
    let r = stdout_json(&out);
    let totals: Vec<&Value> = r["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["path"] == "body.total")
        .collect();
    assert!(!totals.is_empty(), "{:#}", r["divergences"]);
    let answered: Vec<Value> = totals.iter().map(|d| d["actual"].clone()).collect();
    let others = r["divergence_count"].as_u64().unwrap() - totals.len() as u64;

    // Every answered total listed: the position is an enum of those values, and passes.
    t.config(&format!(
        "[diff.fields.\"total\"]\nclassify = \"enum\"\nvalues = {}\n",
        serde_json::to_string(&answered).unwrap()
    ));
    let r = stdout_json(&t.run(&["check", "--json"]));
    assert_eq!(
        r["divergence_count"].as_u64().unwrap(),
        others,
        "{:#}",
        r["divergences"]
    );
    assert!(
        !r["divergences"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["path"] == "body.total")
    );
}

#[test]
fn check_field_enum_value_outside_the_list_still_diverges() {
    let t = Shop::new();
    t.config("[diff.fields.\"body.total\"]\nclassify = \"enum\"\nvalues = [-1]\n");
    let r = stdout_json(&t.run(&["check", "--json"]));
    assert!(
        r["divergences"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["path"] == "body.total" && d["category"] == "value_mismatch"),
        "{:#}",
        r["divergences"]
    );
}

#[test]
fn check_dimension_below_its_threshold_fails_the_run_and_says_which() {
    let t = Shop::new();
    let r = stdout_json(&t.run(&["check", "--json"]));
    assert_eq!(r["passed"], true);
    let values = r["dimensions"]["body_values"]["score_bp"].as_u64().unwrap();
    assert!(values < 10_000);
    assert_eq!(r["dimensions"]["body_values"]["required_bp"], 8_500);
    assert_eq!(r["dimensions"]["symbol_consistency"]["required_bp"], 10_000);

    t.config(&format!(
        "[diff.thresholds]\nbody_values = {}\n",
        (values as f64 + 1.0) / 10_000.0
    ));
    let out = t.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let r = stdout_json(&out);
    assert_eq!(r["passed"], false);
    assert_eq!(r["dimensions"]["body_values"]["passed"], false);
    assert_eq!(
        r["dimensions_failed"],
        serde_json::json!([{"route": null, "dimension": "body_values", "score_bp": values, "required_bp": values + 1}])
    );
    let e = stderr(&out);
    assert!(e.contains("dimension") && e.contains("body_values"), "{e}");
    let text = String::from_utf8_lossy(&t.run(&["check"]).stdout).into_owned();
    assert!(
        text.contains("body_values") && text.contains("BELOW"),
        "{text}"
    );
}

/// A misspelt route in `[diff.overrides]` would leave that route ungated without a word: a
/// configuration error. A `[[diff.suppress]]` route matching nothing removes nothing: a
/// warning. Lint says both.
#[test]
fn rules_naming_no_route_of_the_model_are_said_and_an_override_refused() {
    let t = Shop::new();
    t.config(
        "[[diff.suppress]]\nroute = \"GET /customerz\"\nreason = \"noise\"\n\n[diff.overrides.\"GET /customerz\"]\nbody_structure = 0.99\n",
    );
    let out = t.run(&["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(
        e.contains("[diff.overrides.\"GET /customerz\"] matches no route of the model"),
        "{e}"
    );
    assert!(
        e.contains("[[diff.suppress]] entry 1: route `GET /customerz` matches no route"),
        "{e}"
    );
    let lint = stdout_json(&t.run(&["lint", "--json"]));
    let severities: Vec<&str> = lint["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "diff-route-unmatched")
        .map(|f| f["severity"].as_str().unwrap())
        .collect();
    assert_eq!(severities, ["error", "warning"], "{lint:#}");
    // A glob matching some route is fine.
    let t = Shop::new();
    t.config("[diff.overrides.\"GET /customers*\"]\nbody_structure = 0.5\n");
    assert_ne!(t.run(&["check"]).status.code(), Some(1));
}

#[test]
fn check_route_override_gates_that_route_only() {
    let t = Shop::new();
    t.config("[diff.overrides.\"GET /customers\"]\nbody_structure = 0.99\n");
    let out = t.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let r = stdout_json(&out);
    let failed = r["dimensions_failed"].as_array().unwrap();
    // Only that route is gated (the run's own dimensions pass).
    assert!(!failed.is_empty());
    assert!(
        failed.iter().all(|f| f["route"] == "GET /customers"),
        "{failed:#?}"
    );
    assert!(
        failed
            .iter()
            .any(|f| f["dimension"] == "body_structure" && f["required_bp"] == 9_900),
        "{failed:#?}"
    );
    let c = route(&r, "GET /customers");
    // Unset keys inherit [diff.thresholds].
    assert_eq!(c["dimensions"]["body_values"]["required_bp"], 8_500);
    // Routes without an override are reported, not gated.
    assert_eq!(
        route(&r, "DELETE /customers/:param")["dimensions"]["body_values"]["required_bp"],
        Value::Null
    );
    assert!(stderr(&out).contains("GET /customers: body_structure"));
}

#[test]
fn check_fixture_seeds_every_replay_namespace_with_that_set() {
    let t = Shop::new();
    let r = stdout_json(&t.run(&["check", "--json"]));
    assert!(
        route(&r, "GET /customers")["passed"].as_u64()
            < route(&r, "GET /customers")["exchanges"].as_u64()
    );
    assert_eq!(r["fixture"], Value::Null);
    // A set with no customers: the lists come back as recorded.
    let dir = t.root.join("state/fixtures/no-customers");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("fixture.json"), "{\"entities\": {}}\n").unwrap();
    let out = t.run(&["check", "--json", "--fixture", "no-customers"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = stdout_json(&out);
    assert_eq!(r["fixture"], "no-customers");
    assert_eq!(r["score_bp"], 10_000, "{:#}", r["divergences"]);

    let out = t.run(&["check", "--fixture", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(
        e.contains("nope") && e.contains("default") && e.contains("no-customers"),
        "{e}"
    );
    // `--fixture` combines with `--holdout` (check_fixture.rs pins what it seeds).
    let out = t.run(&["check", "--json", "--fixture", "default", "--holdout", "2"]);
    assert_ne!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["fixture"], "default");
}

#[test]
fn lint_reports_every_bad_diff_entry_under_its_rule() {
    let t = Shop::new();
    t.config(
        "[diff.fields.\"a\"]\nclassify = \"random\"\n\n[diff.fields.\"b\"]\nclassify = \"enum\"\n\n[diff.overrides.\"customers\"]\nbody_values = 0.5\n\n[[diff.suppress]]\npath = \"x\"\n",
    );
    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = stdout_json(&out);
    let rules: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    for want in [
        "diff-field-class",
        "diff-field-enum-values",
        "diff-route",
        "diff-suppress-reason",
    ] {
        assert!(rules.contains(&want), "{want} missing from {rules:?}");
    }
}

/// An exactness claim drops every relaxation, the user's field classes included; a suppress
/// rule still applies (it is a reporting rule, not a comparison relaxation).
#[test]
fn check_replay_claim_drops_user_field_classes_but_not_suppress_rules() {
    let t = DemoTwin::synthesized();
    let mut model = t.model();
    let mut key = None;
    'routes: for route in model["routes"].as_array_mut().unwrap() {
        if route["method"] != "GET" || route["path"] != "/customers/:param" {
            continue;
        }
        for entry in route["exact"].as_array_mut().unwrap() {
            for moment in entry["moments"].as_array_mut().unwrap() {
                if let Some(obj) = moment["body"]["value"].as_object_mut()
                    && obj.get("name").is_some_and(Value::is_string)
                {
                    obj.insert("name".into(), Value::String("tampered".into()));
                    key = Some("name");
                    break 'routes;
                }
            }
        }
    }
    assert!(
        key.is_some(),
        "the demo model replays a customer with a name"
    );
    t.write_model(&model);
    let toml = t.root.join("wraith.toml");
    let mut text = std::fs::read_to_string(&toml).unwrap();
    text = text.replace(
        "[diff.fields]\n",
        "[diff.fields.\"name\"]\nclassify = \"generated\"\n",
    );
    std::fs::write(&toml, &text).unwrap();
    let out = t.run(&["check", "--json"]);
    let r = stdout_json(&out);
    assert_eq!(out.status.code(), Some(2), "{:#}", r["divergences"]);
    assert_eq!(r["divergences"][0]["path"], "body.name");

    text = text.replace(
        "suppress = []\n",
        "suppress = [{ path = \"name\", reason = \"renamed upstream\" }]\n",
    );
    std::fs::write(&toml, &text).unwrap();
    let out = t.run(&["check", "--json"]);
    let r = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{:#}", r["divergences"]);
    assert_eq!(r["suppressed_count"], 1);
}

#[test]
fn check_fixture_under_target_provisions_every_namespace_with_that_set() {
    let t = Shop::new();
    let dir = t.root.join("state/fixtures/no-customers");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("fixture.json"), "{\"entities\": {}}\n").unwrap();
    let (mut child, url) = t.serve();
    let plain = t.run(&["check", "--json", "--target", &url]);
    let seeded = t.run(&[
        "check",
        "--json",
        "--target",
        &url,
        "--fixture",
        "no-customers",
    ]);
    let unknown = t.run(&["check", "--target", &url, "--fixture", "nope"]);
    let _ = child.kill();
    let _ = child.wait();
    // The served twin seeds its sessions from the default set unless told otherwise.
    assert!(stdout_json(&plain)["score_bp"].as_u64().unwrap() < 10_000);
    assert_eq!(seeded.status.code(), Some(0), "{}", stderr(&seeded));
    let r = stdout_json(&seeded);
    assert_eq!(r["score_bp"], 10_000, "{:#}", r["divergences"]);
    assert_eq!(r["fixture"], "no-customers");
    assert_eq!(unknown.status.code(), Some(1));
    let e = stderr(&unknown);
    assert!(e.contains("nope") && e.contains("no-customers"), "{e}");
}
