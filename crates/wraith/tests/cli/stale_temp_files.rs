//! Temp files an interrupted write left behind (`.<name>.tmp-<pid>-<n>`, its writer gone) are
//! removed when `wraith synth`, `wraith import` or `wraith record` starts (an exchange file
//! written whole is put in place instead), and so are the
//! staging folders of an interrupted import (`.<id>.staging-<pid>`) or compose
//! (`.<output>.compose-<pid>`); nothing else is touched.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::record_support;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The id of a process that has exited (no running process has it, until it is reused).
fn gone_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// Plant what a killed writer leaves under `twin` (in a session folder and in `model/`) and
/// files that must survive: a live writer's temp file, a look-alike name, a real recording.
/// Returns (stale, kept).
fn plant(twin: &Path, session: &str) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let dead = gone_pid();
    let alive = std::process::id();
    let session = twin.join("recordings/sessions").join(session);
    let model = twin.join("model");
    std::fs::create_dir_all(&session).unwrap();
    std::fs::create_dir_all(&model).unwrap();
    let stale = vec![
        session.join(format!(".000099.wrec.zst.tmp-{dead}-0")),
        session.join(format!(".manifest.json.tmp-{dead}-3")),
        model.join(format!(".twin.wir.json.tmp-{dead}-1")),
    ];
    let kept = vec![
        session.join(format!(".000098.wrec.zst.tmp-{alive}-0")),
        model.join(format!(".twin.wir.json.tmp-{dead}")),
        model.join("notes.tmp-1-2"),
    ];
    for p in stale.iter().chain(&kept) {
        std::fs::write(p, b"partial").unwrap();
    }
    (stale, kept)
}

/// `wraith synth` of the bundled shop twin `twin`, which must succeed: its stderr.
fn synth_shop(twin: &support::Twin) -> String {
    let out = Command::new(support::bin())
        .current_dir(twin.tmp.path())
        .args(["synth", "shop"])
        .env("WRAITH_HMAC_KEY", "stale-temp-files-test-key")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

#[test]
fn synth_removes_temp_files_of_interrupted_writes_and_keeps_everything_else() {
    let twin = support::example_shop_twin();
    let session = std::fs::read_dir(twin.root.join("recordings/sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .min()
        .unwrap();
    let (stale, kept) = plant(&twin.root, &session);
    let stderr = synth_shop(&twin);
    for p in &stale {
        assert!(!p.exists(), "left behind: {}", p.display());
    }
    for p in &kept {
        assert!(p.exists(), "removed: {}", p.display());
    }
    assert!(
        stderr.contains("removed 3 temporary file(s) left by interrupted writes"),
        "{stderr}"
    );
}

/// A recorder killed outright after answering a client, before renaming the exchange file it
/// wrote whole, leaves that file under a temp name: the next command puts it in place instead
/// of sweeping it, so the answered exchange is kept.
#[test]
fn synth_puts_in_place_an_exchange_a_killed_recorder_wrote_whole() {
    let twin = support::example_shop_twin();
    let sessions = twin.root.join("recordings/sessions");
    let session = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .min()
        .unwrap();
    let last = std::fs::read_dir(&session)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".wrec.zst"))
        .max()
        .unwrap();
    let file = session.join(&last);
    let bytes = std::fs::read(&file).unwrap();
    let left = session.join(format!(".{last}.tmp-{}-4", gone_pid()));
    std::fs::rename(&file, &left).unwrap();
    let stderr = synth_shop(&twin);
    assert!(!left.exists(), "left as a temp file");
    assert_eq!(std::fs::read(&file).unwrap(), bytes, "the exchange is back");
    assert!(
        stderr.contains("recovered 1 exchange file(s) an interrupted recorder had written"),
        "{stderr}"
    );
    assert!(!stderr.contains("removed"), "{stderr}");
}

#[test]
fn record_removes_temp_files_of_interrupted_writes_at_startup() {
    let twin = record_support::Twin::init("leftovers", "http://127.0.0.1:9");
    let (stale, kept) = plant(&twin.root, "20260101T000000Z-abcdef");
    let rec = record_support::Recording::start(&twin, &[]);
    // Listening means startup is over.
    for p in &stale {
        assert!(!p.exists(), "left behind: {}", p.display());
    }
    for p in &kept {
        assert!(p.exists(), "removed: {}", p.display());
    }
    rec.stop();
}

#[test]
fn import_removes_the_session_folders_an_interrupted_import_left_and_keeps_a_running_ones() {
    let twin = support::Twin::init("leftovers", "https://api.leftovers.test");
    let sessions = twin.path().join("recordings/sessions");
    let dead = gone_pid();
    let stale = sessions.join(format!(".20260101T000000Z-abcdef.staging-{dead}"));
    let running = sessions.join(format!(
        ".20260101T000000Z-fedcba.staging-{}",
        std::process::id()
    ));
    for dir in [&stale, &running] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("000000.wrec.zst"), b"partial").unwrap();
    }
    let answer = serde_json::json!({"id": "1"});
    let e = support::har::entry(
        "https://api.leftovers.test",
        "GET",
        "/things/1",
        None,
        &answer,
    );
    support::har::import(&twin, &[], "one.har", vec![e]);
    assert!(!stale.exists(), "left behind: {}", stale.display());
    assert!(running.exists(), "a running import's folder was removed");
}

#[test]
fn compose_removes_what_an_interrupted_compose_of_the_same_output_left() {
    let base = support::example_shop_twin();
    let parent = base.tmp.path();
    let dead = gone_pid();
    let stale = parent.join(format!(".composite.compose-{dead}"));
    let other = parent.join(format!(".elsewhere.compose-{dead}"));
    for dir in [&stale, &other] {
        std::fs::create_dir_all(dir.join("recordings")).unwrap();
    }
    let overlay = support::Twin::init("promos", "http://127.0.0.1:18080");
    let answer = serde_json::json!({"id": "promo_1"});
    let e = support::har::entry(
        "http://127.0.0.1:18080",
        "GET",
        "/promos/promo_1",
        None,
        &answer,
    );
    support::har::import(&overlay, &[], "promos.har", vec![e]);
    let out = Command::new(support::bin())
        .current_dir(parent)
        .args([
            "compose",
            "--base",
            "shop",
            "--overlay",
            &overlay.path_str(),
        ])
        .args(["--output", "composite"])
        .env("WRAITH_HMAC_KEY", "stale-temp-files-test-key")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stale.exists(), "left behind: {}", stale.display());
    assert!(other.exists(), "another output's folder was touched");
}
