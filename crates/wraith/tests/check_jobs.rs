//! `wraith check --jobs N`, black-box: sessions replayed on several threads give the very
//! report (JSON and HTML bytes, stdout, exit code) that `--jobs 1` gives.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn corpora() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
}

/// The binary with a fixed key and no CI, its machine key kept inside `dir`.
fn wraith(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wraith"))
        .current_dir(dir)
        .env("WRAITH_HMAC_KEY", "check-jobs-test-key")
        .env_remove("CI")
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A twin imported from the first `n` Mastodon HAR sessions and synthesized.
fn mastodon_twin(n: usize) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    ok(&wraith(
        tmp.path(),
        &["init", "masto", "--base-url", "http://localhost:3000"],
    ));
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpora().join("mastodon"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "har"))
        .collect();
    files.sort();
    files.truncate(n);
    let mut args = vec!["import".to_string(), "masto".to_string()];
    args.extend(files.iter().map(|f| f.to_str().unwrap().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&wraith(tmp.path(), &args));
    ok(&wraith(tmp.path(), &["synth", "masto"]));
    tmp
}

/// Exit code, stdout, `reports/check.json` and `reports/check.html` of one check.
fn check(dir: &Path, extra: &[&str]) -> (Option<i32>, Vec<u8>, Vec<u8>, Vec<u8>) {
    let mut args = vec!["check", "masto", "--json"];
    args.extend_from_slice(extra);
    let out = wraith(dir, &args);
    let reports = dir.join("twins/masto/reports");
    (
        out.status.code(),
        out.stdout,
        std::fs::read(reports.join("check.json")).unwrap(),
        std::fs::read(reports.join("check.html")).unwrap(),
    )
}

#[test]
fn check_jobs_gives_the_sequential_report_bytes() {
    let tmp = mastodon_twin(36);
    let one = check(tmp.path(), &["--jobs", "1"]);
    assert!(matches!(one.0, Some(0 | 2)), "exit {:?}", one.0);
    let r: serde_json::Value = serde_json::from_slice(&one.1).unwrap();
    assert_eq!(r["sessions_total"], 36);
    for jobs in ["2", "5"] {
        assert!(
            check(tmp.path(), &["--jobs", jobs]) == one,
            "--jobs {jobs} wrote another report than --jobs 1"
        );
    }
    // The default (one job per core) too.
    assert!(check(tmp.path(), &[]) == one);
}

#[test]
fn check_holdout_jobs_gives_the_sequential_report_bytes() {
    let tmp = mastodon_twin(24);
    let one = check(tmp.path(), &["--holdout", "3", "--jobs", "1"]);
    assert!(matches!(one.0, Some(0 | 2)), "exit {:?}", one.0);
    assert!(check(tmp.path(), &["--holdout", "3", "--jobs", "4"]) == one);
}

#[test]
fn check_jobs_zero_or_with_target_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        &["check", "masto", "--jobs", "0"][..],
        &["check", "masto", "--jobs", "x"][..],
        &[
            "check",
            "masto",
            "--jobs",
            "2",
            "--target",
            "http://127.0.0.1:9",
        ][..],
    ] {
        let out = wraith(tmp.path(), args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--jobs"),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
