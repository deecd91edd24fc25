//! `[freshness]` in `wraith check`: a twin whose newest recording is older than `max_age` fails
//! the run (exit 2, `twin-stale`), older than `warn_age` warns, and *now* is an input
//! (`--now` / `WRAITH_CHECK_NOW`): a check never reads the wall clock, so without it the SLA is
//! reported `unevaluated`. Black-box: the real binary on a copy of the demo twin.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;

use check_support::*;
use serde_json::Value;

const DAY: i64 = 86_400;

/// The newest recording's time (unix seconds), as the manifests say.
fn recorded_at(t: &DemoTwin) -> i64 {
    let dir = t.root.join("recordings/sessions");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let m: Value = serde_json::from_str(
                &std::fs::read_to_string(e.unwrap().path().join("manifest.json")).unwrap(),
            )
            .unwrap();
            let end = m["end_time_us"].as_i64().unwrap_or(0);
            end.max(m["start_time_us"].as_i64().unwrap_or(0)) / 1_000_000
        })
        .max()
        .unwrap()
}

fn with_freshness(toml: &str) -> DemoTwin {
    let t = DemoTwin::synthesized();
    let p = t.root.join("wraith.toml");
    let mut text = std::fs::read_to_string(&p).unwrap();
    text.push_str("\n[freshness]\n");
    text.push_str(toml);
    std::fs::write(&p, text).unwrap();
    t
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn check_twin_older_than_max_age_fails_as_twin_stale() {
    let t = with_freshness("max_age = \"30d\"\nwarn_age = \"14d\"\n");
    let at = recorded_at(&t);
    let now = (at + 31 * DAY).to_string();
    let out = t.run(&["check", "--json", "--now", &now]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("twin-stale"), "{}", stderr(&out));
    let r = stdout_json(&out);
    assert_eq!(
        r["score_bp"], 10_000,
        "the scores held: only the SLA failed"
    );
    assert_eq!(r["passed"], false);
    let f = &r["freshness"];
    assert_eq!(f["status"], "stale");
    assert_eq!(f["twin_age_seconds"], 31 * DAY);
    assert_eq!(f["recorded_at"], at);
    assert_eq!(f["max_age_seconds"], 30 * DAY);
    // One recording run: nothing drifted.
    assert_eq!(f["drift"], 0.0);
    assert_eq!(f["drifted_routes"], serde_json::json!([]));
    let html = std::fs::read_to_string(t.root.join("reports/check.html")).unwrap();
    assert!(
        html.contains("stale") && html.contains("max_age 30 days"),
        "{html}"
    );
    // The same input gives the same bytes: nothing read the clock.
    let first = std::fs::read(t.root.join("reports/check.json")).unwrap();
    let again = t.run(&["check", "--json", "--now", &now]);
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(
        std::fs::read(t.root.join("reports/check.json")).unwrap(),
        first
    );
}

#[test]
fn check_twin_older_than_warn_age_warns_and_passes() {
    let t = with_freshness("max_age = \"30d\"\nwarn_age = \"14d\"\n");
    let at = recorded_at(&t);
    let out = std::process::Command::new(bin())
        .args(["check"])
        .arg(&t.root)
        .arg("--json")
        .env("WRAITH_HMAC_KEY", "check-tests-key")
        .env("WRAITH_CHECK_NOW", (at + 15 * DAY).to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("twin-warn"), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["freshness"]["status"], "warn");
    let fresh = t.run(&["check", "--json", "--now", &(at + DAY).to_string()]);
    assert_eq!(fresh.status.code(), Some(0));
    assert_eq!(stdout_json(&fresh)["freshness"]["status"], "fresh");
}

/// A `--now` before the newest recording (a stale CI variable, a typo in the year) would judge
/// any twin fresh: said, with what to give instead.
#[test]
fn now_before_the_newest_recording_is_said() {
    let t = with_freshness("max_age = \"30d\"\n");
    let at = recorded_at(&t);
    let out = t.run(&["check", "--json", "--now", &(at - DAY).to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is before the newest recording"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout_json(&out)["freshness"]["twin_age_seconds"], 0);
    let later = t.run(&["check", "--json", "--now", &(at + DAY).to_string()]);
    assert!(!stderr(&later).contains("is before the newest recording"));
}

#[test]
fn check_without_now_reports_the_sla_unevaluated_and_never_reads_the_clock() {
    // One second: any real clock would find the demo's recordings stale.
    let t = with_freshness("max_age = \"1s\"\n");
    let out = t.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("--now"), "{}", stderr(&out));
    let r = stdout_json(&out);
    assert_eq!(r["freshness"]["status"], "unevaluated");
    assert_eq!(r["freshness"]["now"], Value::Null);
    // No [freshness]: no verdict at all.
    let plain = DemoTwin::synthesized();
    assert_eq!(
        stdout_json(&plain.run(&["check", "--json", "--now", "0"]))["freshness"],
        Value::Null
    );
}

#[test]
fn bad_freshness_keys_are_configuration_errors_for_check_and_lint() {
    let t = with_freshness("max_age = \"a month\"\nmax_drift = 2.0\n");
    let out = t.run(&["check", "--json", "--now", "2026-11-30T05:00:00Z"]);
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(
        e.contains("wraith.toml") && e.contains("[freshness]: `max_age`"),
        "{e}"
    );
    assert!(e.contains("[freshness]: `max_drift`"), "{e}");
    let lint = t.run(&["lint", "--json"]);
    assert_eq!(lint.status.code(), Some(1));
    let v = stdout_json(&lint);
    let n = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "freshness" && f["severity"] == "error")
        .count();
    assert_eq!(n, 2, "{v:#}");
    let bad_now = with_freshness("max_age = \"30d\"\n").run(&["check", "--now", "yesterday"]);
    assert_eq!(bad_now.status.code(), Some(1));
}

#[test]
fn now_as_unix_seconds_beyond_year_9999_is_out_of_range_not_a_date_error() {
    let t = with_freshness("max_age = \"1s\"\n");
    // A date past the last instant too: out of range, not the date parser's overflow text.
    for now in [
        "99999999999999",
        "18446744073709551615",
        "9999-12-31T23:59:59Z",
    ] {
        let out = t.run(&["check", "--json", "--now", now]);
        assert_eq!(out.status.code(), Some(1), "{now}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("--now (or WRAITH_CHECK_NOW) {now}: out of range")),
            "{}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("overflowed"), "{}", stderr(&out));
    }
    let edge = t.run(&["check", "--json", "--now", "253402207200"]);
    assert_ne!(
        edge.status.code(),
        Some(1),
        "9999-12-30T22:00:00Z is a time: {}",
        stderr(&edge)
    );
}

#[test]
fn now_with_a_month_thirteen_or_a_twenty_fifth_hour_is_not_a_time_not_out_of_range() {
    let t = with_freshness("max_age = \"1s\"\n");
    for (now, field) in [
        ("2026-13-01T00:00:00Z", "month"),
        ("2026-01-01T25:00:00Z", "hour"),
    ] {
        let out = t.run(&["check", "--json", "--now", now]);
        assert_eq!(out.status.code(), Some(1), "{now}: {}", stderr(&out));
        let said = stderr(&out);
        assert!(
            said.contains(&format!("--now (or WRAITH_CHECK_NOW) {now}: not a time")),
            "{said}"
        );
        assert!(said.contains(field), "names the field: {said}");
        assert!(!said.contains("out of range (a time from year"), "{said}");
    }
}

#[test]
fn a_bare_number_of_seconds_is_a_freshness_duration_and_a_negative_one_is_refused() {
    let t = with_freshness("max_age = 3600\nwarn_age = 60\n");
    let at = recorded_at(&t);
    let now = (at + 7_200).to_string();
    let out = t.run(&["check", "--json", "--now", &now]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let f = &stdout_json(&out)["freshness"];
    assert_eq!(f["status"], "stale");
    assert_eq!(f["max_age_seconds"], 3_600);
    assert_eq!(f["warn_age_seconds"], 60);
    let negative = with_freshness("max_age = -3600\n");
    let out = negative.run(&["check", "--json", "--now", &now]);
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(
        e.contains("wraith.toml") && e.contains("max_age") && e.contains("`-3600` is negative"),
        "{e}"
    );
    let lint = negative.run(&["lint", "--json"]);
    assert_eq!(lint.status.code(), Some(1), "{}", stderr(&lint));
}
