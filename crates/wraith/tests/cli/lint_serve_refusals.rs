//! `wraith lint` reads each file as the commands that use it do: what `serve` (or `coverage`)
//! refuses is a lint error in their words, what only `coverage` needs a warning, and a file
//! that is there but cannot be read exits 4. Black-box: the real binary on both sides.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::Value;
use support::{Twin, model};

fn twin() -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t
}

/// `wraith lint <twin> --json`: its exit code and its findings as (rule, severity, file,
/// message).
fn lint(t: &Twin) -> (i32, Vec<(String, String, String, String)>) {
    let out = t.wraith(&["lint", &t.path_str(), "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "lint printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let findings = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("rule"), s("severity"), s("file"), s("message"))
        })
        .collect();
    (out.status.code().unwrap_or(-1), findings)
}

/// The one finding of `rule` with `severity`; panics unless there is exactly one.
fn only(
    findings: &[(String, String, String, String)],
    rule: &str,
    severity: &str,
) -> (String, String) {
    let found: Vec<_> = findings
        .iter()
        .filter(|(r, s, _, _)| r == rule && s == severity)
        .collect();
    assert_eq!(found.len(), 1, "one {severity} {rule}: {findings:#?}");
    (found[0].2.clone(), found[0].3.clone())
}

/// A `child` set on top of a default set holding `cus_001`, whose customers patch adds `add`.
fn child_set_adding(t: &Twin, add: &str) {
    t.write(
        "state/fixtures/default/fixture.json",
        r#"{"entities":{"customers":[{"id":"cus_001"}]}}"#,
    );
    t.write(
        "state/fixtures/child/fixture.json",
        r#"{"parent":"default"}"#,
    );
    t.write(
        "state/fixtures/child/patches/customers.patch.json",
        &format!(r#"{{"add":{add}}}"#),
    );
}

const ID_FORMAT_SCHEMA: &str = r#"{"entity_types":{"customers":{"primary_key":"id","id_format":"cus_[0-9]{3}"}},"schema_version":1}"#;

#[test]
fn lint_fails_a_set_repeating_a_primary_key_in_serves_words_and_keeps_its_other_findings() {
    let t = twin();
    t.write("state/schema.json", ID_FORMAT_SCHEMA);
    t.write(
        "state/fixtures/default/fixture.json",
        r#"{"entities":{"customers":[{"id":"bad","name":"A"},{"id":"cus_001"},{"id":"bad","name":"B"}]}}"#,
    );
    let (code, findings) = lint(&t);
    assert_eq!(code, 1, "{findings:#?}");
    let words = "customers[2] repeats primary key \"bad\" of customers[0]; a set holds one \
                 record per key";
    let (file, message) = only(&findings, "fixture-duplicate-pk", "error");
    assert_eq!(file, "state/fixtures/default/fixture.json");
    assert!(message.contains(words), "{message}");
    // The record's key is still held to the declared id_format.
    let (_, id_format) = only(&findings, "fixture-id-format", "warning");
    assert!(id_format.contains("\"bad\""), "{id_format}");
    let (code, err) = t.serve_expect_exit(&["--port", "0"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(words), "{err}");
}

#[test]
fn lint_fails_a_patch_adding_one_key_twice_in_serves_words() {
    let t = twin();
    child_set_adding(
        &t,
        r#"[{"id":"cus_002","name":"A"},{"id":"cus_002","name":"B"}]"#,
    );
    let (code, findings) = lint(&t);
    assert_eq!(code, 1, "{findings:#?}");
    let words = "add[1]: the set already holds a `customers` record keyed \"cus_002\"";
    let (file, message) = only(&findings, "fixture-duplicate-pk", "error");
    assert_eq!(file, "state/fixtures/child/patches/customers.patch.json");
    assert!(message.contains(words), "{message}");
    let (code, err) = t.serve_expect_exit(&["--port", "0", "--fixture", "child"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(words), "{err}");
}

#[test]
fn lint_fails_a_patch_adding_a_key_its_parent_set_holds() {
    let t = twin();
    child_set_adding(&t, r#"[{"id":"cus_001","name":"B"}]"#);
    let (code, findings) = lint(&t);
    assert_eq!(code, 1, "{findings:#?}");
    let words = "add[0]: the set already holds a `customers` record keyed \"cus_001\"; `add` \
                 appends new records: change it under `replace` instead";
    let (file, message) = only(&findings, "fixture-patch-add-held", "error");
    assert_eq!(file, "state/fixtures/child/patches/customers.patch.json");
    assert!(message.contains(words), "{message}");
    assert!(
        !findings
            .iter()
            .any(|(r, _, _, _)| r == "fixture-duplicate-pk"),
        "{findings:#?}"
    );
    // Every set is resolved at startup: serving another set is refused too.
    let (code, err) = t.serve_expect_exit(&["--port", "0"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(words), "{err}");
}

#[test]
fn lint_fails_the_rate_limit_and_latency_tables_serve_refuses() {
    for (table, words) in [
        (
            "[serve.rate_limits.\"bogus\"]\nlimit = 2\nwindow_seconds = 60\n",
            "[serve.rate_limits.\"bogus\"]: the key is not a route pattern",
        ),
        (
            "[serve.rate_limits.\"GET /customers\"]\nlimit = 0\nwindow_seconds = 0\n",
            "limit = 0 and window_seconds = 0 must both be at least 1",
        ),
        (
            "[serve.latency]\nmode = \"fixed\"\nmin_ms = 9000\nmax_ms = 10\n",
            "[serve.latency] min_ms: min_ms = 9000 is above max_ms = 10",
        ),
        (
            "[serve.latency]\nmode = \"scaled\"\nmultiplier = -1.0\n",
            "[serve.latency] multiplier: must be a finite number >= 0, found -1",
        ),
        (
            "[serve.latency]\nmode = \"scaled\"\nmultiplier = nan\n",
            "[serve.latency] multiplier: must be a finite number >= 0, found NaN",
        ),
    ] {
        let t = twin();
        t.append_toml(table);
        let (code, findings) = lint(&t);
        assert_eq!(code, 1, "{table}: {findings:#?}");
        let (file, message) = only(&findings, "wraith_toml", "error");
        assert_eq!(file, "wraith.toml");
        assert!(message.contains(words), "{table}: {message}");
        assert!(
            !message.contains(&t.path_str()),
            "no machine path: {message}"
        );
        let (code, err) = t.serve_expect_exit(&["--port", "0"]);
        assert_eq!(code, 1, "{table}: {err}");
        assert!(err.contains(words), "{table}: {err}");
    }
}

#[test]
fn lint_warns_of_a_service_spec_naming_a_file_that_is_not_there() {
    let t = twin();
    t.set_toml("service", "spec", "\"missing.yaml\"");
    let (code, findings) = lint(&t);
    assert_eq!(code, 0, "{findings:#?}");
    let (file, message) = only(&findings, "wraith_toml", "warning");
    assert_eq!(file, "wraith.toml");
    assert!(
        message.contains("[service] spec = \"missing.yaml\"")
            && message.contains("`missing.yaml` is not there")
            && message.contains("`wraith coverage` refuses"),
        "{message}"
    );
    let out = t.wraith(&["coverage", &t.path_str()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("[service] spec") && err.contains("missing.yaml"),
        "{err}"
    );
    // A document that is there and reads is no finding.
    t.write(
        "missing.yaml",
        "openapi: 3.0.3\ninfo:\n  title: t\n  version: \"1\"\npaths: {}\n",
    );
    let (code, findings) = lint(&t);
    assert_eq!(code, 0, "{findings:#?}");
    assert!(
        !findings.iter().any(|(r, _, _, _)| r == "wraith_toml"),
        "{findings:#?}"
    );
}

/// A file that is there but cannot be read, even by root (the tests may run as root, which
/// reads past any permission): a link to this process's own memory, which fails to read at
/// offset 0 with an IO error.
#[cfg(target_os = "linux")]
fn make_unreadable(path: &std::path::Path) {
    std::fs::remove_file(path).unwrap();
    std::os::unix::fs::symlink("/proc/self/mem", path).unwrap();
}

/// A Lua file there but unreadable (`lua/routes.toml`, a handler) stops lint with 4, as serve
/// refuses to start on it: not a compile error of the file, nor a finding about the handlers
/// the unread routes file would bind.
#[cfg(target_os = "linux")]
#[test]
fn lint_exits_4_for_a_lua_file_that_cannot_be_read() {
    for file in ["lua/routes.toml", "lua/handlers/get_summary.lua"] {
        let t = support::example_shop_twin();
        assert!(t.wraith(&["synth", &t.path_str()]).status.success());
        make_unreadable(&t.root.join(file));
        let out = t.wraith(&["lint", &t.path_str()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{file}: {err}");
        assert!(err.contains(file.rsplit('/').next().unwrap()), "{err}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn lint_exits_4_for_a_recording_or_scrub_toml_that_cannot_be_read() {
    let t = support::example_shop_twin();
    let session = t.root.join("recordings/sessions/20261129T201217Z-55a4f9");
    let (code, findings) = lint(&t);
    assert_eq!(code, 0, "the example twin lints clean: {findings:#?}");

    make_unreadable(&session.join("000003.wrec.zst"));
    let out = t.wraith(&["lint", &t.path_str()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("000003.wrec.zst"), "{err}");
    // As inspect, which reads the recordings, says.
    let out = t.wraith(&["inspect", &t.path_str()]);
    assert_eq!(out.status.code(), Some(4));
    std::fs::remove_file(session.join("000003.wrec.zst")).unwrap();
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../../examples/twins/shop/recordings/sessions/20261129T201217Z-55a4f9/000003.wrec.zst",
        ),
        session.join("000003.wrec.zst"),
    )
    .unwrap();

    let scrub = t.root.join("scrub.toml");
    make_unreadable(&scrub);
    let out = t.wraith(&["lint", &t.path_str()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("scrub.toml"), "{err}");
    // A folder where the file belongs is the user's to fix: a finding, exit 1.
    std::fs::remove_file(&scrub).unwrap();
    std::fs::create_dir(&scrub).unwrap();
    let (code, findings) = lint(&t);
    assert_eq!(code, 1, "{findings:#?}");
    only(&findings, "scrub_toml", "error");
}
