//! `wraith inspect`: a deterministic summary of a twin's recordings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn wraith(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wraith"));
    c.current_dir(dir)
        .env("WRAITH_HMAC_KEY", "inspect-test-key")
        .env_remove("CI")
        .env("XDG_CONFIG_HOME", dir.join("config"));
    c
}

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/recording")
        .join(name)
}

fn json_of(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A temp dir holding twin `shop` (made by `wraith init`) with these test HAR files imported.
fn shop_with(hars: &[&str]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    assert!(
        wraith(tmp.path())
            .args(["init", "shop", "--base-url", "https://api.example.com/v1"])
            .status()
            .unwrap()
            .success()
    );
    let imported = wraith(tmp.path())
        .args(["import", "shop"])
        .args(hars.iter().map(|h| testdata(h)))
        .output()
        .unwrap();
    assert!(imported.status.success());
    tmp
}

#[test]
fn inspect_json_summarizes_imported_sessions() {
    let tmp = shop_with(&["small.har", "secrets.har"]);
    let v = json_of(wraith(tmp.path()).args(["inspect", "shop", "--json"]));
    insta::assert_json_snapshot!("inspect_small_and_secrets", v);
    // Same recordings, same bytes: the output does not depend on when or where it runs.
    let again = wraith(tmp.path())
        .args(["inspect", "twins/shop", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&again.stdout).unwrap(),
        v
    );
}

#[test]
fn inspect_text_lists_each_session_with_how_it_was_recorded() {
    let tmp = shop_with(&["small.har"]);
    let out = wraith(tmp.path())
        .args(["inspect", "shop"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("exchange(s)  "))
        .unwrap_or_else(|| panic!("no session line: {text}"));
    assert!(line.contains("  import   small"), "{line}");
}

#[test]
fn inspect_reads_real_wrec_recordings_of_the_demo_twin() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora/wraith-demo");
    let tmp = tempfile::tempdir().unwrap();
    let twin = tmp.path().join("demo");
    let sessions = twin.join("recordings/sessions/20260706T235828Z-a23ed7");
    std::fs::create_dir_all(&sessions).unwrap();
    for f in ["wraith.toml", "scrub.toml"] {
        std::fs::copy(demo.join(f), twin.join(f)).unwrap();
    }
    let src = demo.join("recordings/sessions/20260706T235828Z-a23ed7");
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), sessions.join(e.file_name())).unwrap();
    }
    let out = wraith(tmp.path())
        .args(["inspect", "demo", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Keys this version does not read are warnings, not errors.
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning:"));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["sessions"], 1);
    assert_eq!(v["exchanges"], 6);
    assert_eq!(v["hosts"]["127.0.0.1:18080"], 6);
    assert_eq!(v["statuses"]["201"], 2);
    assert_eq!(v["per_session"][0]["tags"][0], "checkout-contract");
    assert_eq!(v["per_session"][0]["proxy_mode"], "reverse");
    assert_eq!(v["newest_recording"], "2026-07-06T23:58:28.766392Z");
}

#[test]
fn inspect_empty_twin_reports_zero_and_null_newest() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(
        wraith(tmp.path())
            .args(["init", "shop", "--base-url", "https://api.example.com"])
            .status()
            .unwrap()
            .success()
    );
    let v = json_of(wraith(tmp.path()).args(["inspect", "shop", "--json"]));
    assert_eq!(v["sessions"], 0);
    assert_eq!(v["exchanges"], 0);
    assert!(v["newest_recording"].is_null());
}

#[test]
fn inspect_unknown_twin_exits_1_listing_where_it_looked() {
    let tmp = tempfile::tempdir().unwrap();
    let out = wraith(tmp.path())
        .args(["inspect", "ghost"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("twins/ghost/wraith.toml"), "{err}");
}

#[test]
fn inspect_corrupt_recording_exits_4_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(
        wraith(tmp.path())
            .args(["init", "shop", "--base-url", "https://api.example.com"])
            .status()
            .unwrap()
            .success()
    );
    let s = tmp
        .path()
        .join("twins/shop/recordings/sessions/20240101T000000Z-abcdef");
    std::fs::create_dir_all(&s).unwrap();
    std::fs::write(s.join("000000.wrec.zst"), b"not zstd").unwrap();
    let out = wraith(tmp.path())
        .args(["inspect", "shop"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("000000.wrec.zst"));
}

/// `inspect --provenance` lists `fixture` for a read route only when the default set seeds at
/// least one record of the route's type: `"orders": []` seeds none.
#[test]
fn provenance_lists_fixture_only_for_types_the_default_set_seeds_a_record_of() {
    let t = crate::support::example_shop_twin();
    let twin = t.path_str();
    let out = t.wraith(&["synth", &twin]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let can_answer = |route: &str| -> Vec<String> {
        let out = t.wraith(&["inspect", &twin, "--provenance", "--json"]);
        assert!(out.status.success());
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let r = v["routes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["route"] == route)
            .unwrap_or_else(|| panic!("no {route}: {v:#}"))
            .clone();
        serde_json::from_value(r["can_answer"].clone()).unwrap()
    };
    let fixture = |route: &str| can_answer(route).iter().any(|w| w == "fixture");
    assert!(fixture("GET /customers/:param"));
    assert!(!fixture("GET /orders"), "{:?}", can_answer("GET /orders"));
    assert!(!fixture("GET /orders/:param"));
    // One seeded order, and the order reads can answer from it.
    let path = t.root.join("state/fixtures/default/fixture.json");
    let mut set: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    set["entities"]["orders"] = serde_json::json!([
        {"id": "ord_FixtureOrder0001", "customer_id": "cus_FixtureMarg001"}
    ]);
    std::fs::write(&path, set.to_string()).unwrap();
    assert!(fixture("GET /orders"));
    assert!(fixture("GET /orders/:param"));
}
