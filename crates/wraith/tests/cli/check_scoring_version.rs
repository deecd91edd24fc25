//! `[diff] scoring_version`: version 1 is the only one. Any other value stops `wraith check`
//! with a configuration error (exit 1) naming the file, line and key and how to fix it, before
//! anything is replayed; `wraith lint` reports it under `diff-scoring-version`. Black-box: the
//! real binary on a copy of the demo twin, whose `wraith.toml` writes `scoring_version = 1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;

use check_support::*;

fn with_scoring_version(t: &DemoTwin, v: &str) -> usize {
    let p = t.root.join("wraith.toml");
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains("scoring_version = 1\n"));
    let line = text
        .lines()
        .position(|l| l.starts_with("scoring_version"))
        .unwrap()
        + 1;
    std::fs::write(
        &p,
        text.replace("scoring_version = 1\n", &format!("scoring_version = {v}\n")),
    )
    .unwrap();
    line
}

#[test]
fn check_with_scoring_version_1_runs() {
    let t = DemoTwin::synthesized();
    let out = t.run(&["check", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn check_with_an_unknown_scoring_version_is_a_configuration_error_naming_file_line_and_key() {
    let t = DemoTwin::synthesized();
    let line = with_scoring_version(&t, "2");
    let out = t.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty(),
        "nothing is reported for a run that did not happen"
    );
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains(&format!("wraith.toml:{line}:")), "{e}");
    assert!(e.contains("[diff]: `scoring_version`: is 2"), "{e}");
    assert!(
        e.contains("set `scoring_version = 1` or remove the key"),
        "{e}"
    );
    assert!(!t.root.join("reports/check.json").exists());
}

#[test]
fn lint_reports_an_unknown_scoring_version() {
    let t = DemoTwin::synthesized();
    let line = with_scoring_version(&t, "3");
    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = stdout_json(&out);
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "diff-scoring-version")
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(f["severity"], "error");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.starts_with(&format!("line {line}:")) && msg.contains("is 3"),
        "{msg}"
    );
}
