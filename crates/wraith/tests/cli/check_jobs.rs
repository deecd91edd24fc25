//! `wraith check --jobs N`, black-box: sessions replayed on several threads give the very
//! report (JSON and HTML bytes, stdout, exit code) that `--jobs 1` gives.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

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

/// The most threads the process `pid` had at once while it ran, sampled from `/proc` until it
/// exits; then its exit code.
#[cfg(target_os = "linux")]
fn peak_threads(child: &mut std::process::Child) -> (usize, Option<i32>) {
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (peak, status.code());
        }
        let threads = std::fs::read_to_string(&status)
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("Threads:"))
                    .and_then(|n| n.trim().parse::<usize>().ok())
            })
            .unwrap_or(0);
        peak = peak.max(threads);
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the check did not end; {peak} threads at most");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// `--jobs N` far above the number of sessions replays on one thread per session, not on N
/// threads (each costs its stack and its twin: `--jobs 100000` ran out of memory), and the
/// report is still the one `--jobs 1` gives.
#[cfg(target_os = "linux")]
#[test]
fn check_jobs_above_the_session_count_uses_no_more_threads_than_sessions() {
    let twin = support::example_shop_twin();
    let run = |args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wraith"));
        cmd.current_dir(twin.tmp.path())
            .env("WRAITH_HMAC_KEY", "check-jobs-test-key")
            .env_remove("CI")
            .env("XDG_CONFIG_HOME", twin.tmp.path().join("config"))
            // Rayon's global pool (reading the recordings) has a fixed size on any machine.
            .env("RAYON_NUM_THREADS", "2")
            .args(args);
        cmd
    };
    ok(&run(&["synth", "shop"]).output().unwrap());
    let report = || std::fs::read(twin.root.join("reports/check.json")).unwrap();
    let one = run(&["check", "shop", "--json", "--jobs", "1"])
        .output()
        .unwrap();
    let sequential = report();
    let sessions = std::fs::read_dir(twin.root.join("recordings/sessions"))
        .unwrap()
        .count();
    assert_eq!(sessions, 2);

    let stdout = twin.tmp.path().join("many.json");
    let mut child = run(&["check", "shop", "--json", "--jobs", "4000"])
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (peak, code) = peak_threads(&mut child);
    assert_eq!(code, one.status.code());
    // The main thread, rayon's global pool (2) and one pool of at most one thread per
    // session at a time; a few more would still be far from 4000.
    assert!(peak >= 1, "no thread count read from /proc");
    assert!(peak <= 8, "{peak} threads for {sessions} sessions");
    assert!(
        std::fs::read(&stdout).unwrap() == one.stdout,
        "stdout differs"
    );
    assert!(report() == sequential, "reports/check.json differs");
}
