//! `wraith synth` as a command, black-box: the real binary on a copy of the wraith-demo twin
//! and on HAR files imported with `wraith import`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A writable copy of the wraith-demo twin (config + WREC recordings).
fn demo_twin() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let twin = tmp.path().join("demo");
    copy_dir(&shared().join("corpora/wraith-demo"), &twin);
    (tmp, twin)
}

fn wraith(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wraith"))
        .current_dir(dir)
        .env("WRAITH_HMAC_KEY", "synth-cli-test-key")
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn synth_writes_canonical_model_files_and_prints_one_summary_line() {
    let (tmp, twin) = demo_twin();
    let out = wraith(tmp.path(), &["synth", twin.to_str().unwrap()]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "one summary line, got {text:?}");
    assert!(
        lines[0].starts_with("synth  wraith-demo  6 routes  ")
            && lines[0].contains("  2 entity types  4 state-ops  ")
            && lines[0].ends_with(" diagnostics"),
        "{}",
        lines[0]
    );
    for name in ["twin.wir.json", "symbols.json"] {
        let written = std::fs::read_to_string(twin.join("model").join(name)).unwrap();
        assert!(
            wraith_model::canonical::is_canonical(&written),
            "{name} is not canonical JSON"
        );
    }
    let model: wraith_model::Model = wraith_model::from_json_str(
        &std::fs::read_to_string(twin.join("model/twin.wir.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(model.schema_version, wraith_model::MODEL_SCHEMA_VERSION);
    assert_eq!(model.twin, "wraith-demo");
    assert_eq!(model.base_url, "http://127.0.0.1:18080");
    assert_eq!(
        model.route_names(),
        vec![
            "POST /customers",
            "GET /customers/:param",
            "GET /health",
            "POST /orders",
            "GET /orders/:param",
            "GET /orders/summary"
        ]
    );
    // No temp files left beside the model.
    let leftovers: Vec<String> = std::fs::read_dir(twin.join("model"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "twin.wir.json" && n != "symbols.json")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_synth_that_cannot_write_the_symbols_leaves_the_old_model_in_place() {
    let (tmp, twin) = demo_twin();
    let out = wraith(tmp.path(), &["synth", twin.to_str().unwrap()]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    // The model of an earlier run, and a folder where the symbols file goes.
    let model = twin.join("model/twin.wir.json");
    let earlier = "{\"earlier\": \"run\"}\n";
    std::fs::write(&model, earlier).unwrap();
    let symbols = twin.join("model/symbols.json");
    std::fs::remove_file(&symbols).unwrap();
    std::fs::create_dir(&symbols).unwrap();

    let out = wraith(tmp.path(), &["synth", twin.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(4), "stderr: {}", stderr(&out));
    assert!(stderr(&out).contains("symbols.json"), "{}", stderr(&out));
    assert!(stderr(&out).contains("nothing in"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&model).unwrap(), earlier);
    let left: Vec<String> = std::fs::read_dir(twin.join("model"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 2, "no temp or backup file left: {left:?}");
}

#[test]
fn synth_twice_writes_identical_bytes() {
    let (tmp, twin) = demo_twin();
    let read = |name: &str| std::fs::read(twin.join("model").join(name)).unwrap();
    assert!(
        wraith(tmp.path(), &["synth", twin.to_str().unwrap()])
            .status
            .success()
    );
    let (model, symbols) = (read("twin.wir.json"), read("symbols.json"));
    assert!(
        wraith(tmp.path(), &["synth", twin.to_str().unwrap()])
            .status
            .success()
    );
    assert_eq!(model, read("twin.wir.json"));
    assert_eq!(symbols, read("symbols.json"));
}

#[test]
fn synth_json_prints_the_summary_document() {
    let (tmp, twin) = demo_twin();
    let out = wraith(tmp.path(), &["synth", twin.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["twin"], "wraith-demo");
    assert_eq!(v["routes"], 6);
    assert_eq!(v["entity_types"], 2);
    assert_eq!(v["state_ops"], 4);
    assert_eq!(v["exchanges"], 6);
    assert_eq!(v["sessions"], 1);
    assert!(v["variants"].as_u64().unwrap() >= 6);
    assert!(v["diagnostics"].is_u64());
}

#[test]
fn synth_tag_selects_sessions_and_an_unknown_tag_is_a_usage_error() {
    let (tmp, twin) = demo_twin();
    let ok = wraith(
        tmp.path(),
        &[
            "synth",
            twin.to_str().unwrap(),
            "--tag",
            "checkout-contract",
        ],
    );
    assert!(ok.status.success(), "stderr: {}", stderr(&ok));
    let bad = wraith(
        tmp.path(),
        &["synth", twin.to_str().unwrap(), "--tag", "no-such-tag"],
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("no recorded exchanges tagged `no-such-tag`"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn synth_without_recordings_exits_1_and_says_how_to_get_some() {
    let tmp = tempfile::tempdir().unwrap();
    let init = wraith(
        tmp.path(),
        &["init", "empty", "--base-url", "https://api.example.test"],
    );
    assert!(init.status.success(), "stderr: {}", stderr(&init));
    let out = wraith(tmp.path(), &["synth", "empty"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("no recorded exchanges"), "{err}");
    assert!(err.contains("wraith import"), "{err}");
    assert!(!tmp.path().join("twins/empty/model/twin.wir.json").exists());
}

#[test]
fn synth_of_an_unknown_twin_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let out = wraith(tmp.path(), &["synth", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no twin `nope`"), "{}", stderr(&out));
}

#[test]
fn imported_har_sessions_synthesize_into_a_stateful_model() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(
        wraith(
            tmp.path(),
            &["init", "masto", "--base-url", "http://localhost:3000"]
        )
        .status
        .success()
    );
    let har = shared().join("corpora/mastodon");
    let files = [
        har.join("test_status.har"),
        har.join("test_status_missing.har"),
    ];
    let mut args = vec!["import", "masto"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let imported = wraith(tmp.path(), &args);
    assert!(imported.status.success(), "stderr: {}", stderr(&imported));
    let out = wraith(tmp.path(), &["synth", "masto", "--json"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let model: wraith_model::Model = wraith_model::from_json_str(
        &std::fs::read_to_string(tmp.path().join("twins/masto/model/twin.wir.json")).unwrap(),
    )
    .unwrap();
    let read = model
        .routes
        .iter()
        .find(|r| r.method == "GET" && r.path == "/api/v1/statuses/:param")
        .expect("read route");
    assert_eq!(read.state_op, Some(wraith_model::StateOp::Read));
    assert!(
        read.variants
            .iter()
            .any(|v| v.status == 404
                && v.guard == wraith_model::Guard::StateMember { member: false })
    );
    assert!(model.entity_types["statuses"].known_missing.contains("0"));
}

/// A body labelled JSON that the parser cannot hold is served as recorded text, and synth's
/// `unparseable-body` diagnostic, printed on stderr as well as kept in the model, says why it
/// did not parse, so a reader can tell valid JSON past a 64-bit float (`1e400`) from a body
/// cut short.
#[test]
fn an_unparseable_json_body_is_diagnosed_with_the_parsers_reason() {
    use crate::support::{Twin, har};
    let key = ("WRAITH_HMAC_KEY", "unparseable-body-test-key");
    let origin = "https://api.numbers.test";
    let t = Twin::init("numbers", origin);
    let mut entry = har::entry(origin, "GET", "/v1/huge", None, &serde_json::json!({}));
    entry["response"]["content"]["text"] = serde_json::json!("{\"a\":1e400}");
    har::import(&t, &[key], "huge.har", vec![entry]);
    let out = std::process::Command::new(crate::support::bin())
        .current_dir(t.tmp.path())
        .args(["synth", &t.path_str()])
        .env(key.0, key.1)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // Said on stderr too: the body is served as text, not modelled.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: GET /v1/huge:") && stderr.contains("(unparseable-body)"),
        "{stderr}"
    );
    let model: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.root.join("model/twin.wir.json")).unwrap())
            .unwrap();
    let diagnostic = model["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "unparseable-body")
        .unwrap_or_else(|| panic!("{:#}", model["diagnostics"]));
    let message = diagnostic["message"].as_str().unwrap();
    assert!(message.contains("number out of range"), "{message}");
    assert!(message.contains("served as recorded text"), "{message}");
}
