//! `--format pretty|text|json` on every command, and the alternate spellings `init --name` and
//! `check --twin`. Black-box: the real binary on a copy of the demo twin.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;

use check_support::*;
use std::process::Command;

/// `--format json` prints what `--json` prints, byte for byte; `--format text` and `--format
/// pretty` what no flag prints; `--json` with another `--format` is a usage error (exit 1).
#[test]
fn format_json_is_json_and_text_or_pretty_the_default_output() {
    let t = DemoTwin::synthesized();
    for cmd in ["inspect", "lint", "coverage", "check"] {
        let json = t.run(&[cmd, "--json"]);
        assert_eq!(json.status.code(), Some(0), "{cmd}");
        let formatted = t.run(&[cmd, "--format", "json"]);
        assert_eq!(formatted.status.code(), Some(0), "{cmd}");
        assert_eq!(formatted.stdout, json.stdout, "{cmd} --format json");
        let plain = t.run(&[cmd]);
        for f in ["text", "pretty"] {
            let out = t.run(&[cmd, "--format", f]);
            assert_eq!(out.stdout, plain.stdout, "{cmd} --format {f}");
        }
        let both = t.run(&[cmd, "--json", "--format", "text"]);
        assert_eq!(both.status.code(), Some(1), "{cmd}");
        let err = String::from_utf8_lossy(&both.stderr);
        assert!(err.contains("cannot be used with"), "{cmd}: {err}");
    }
    let bad = t.run(&["lint", "--format", "xml"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("pretty, text, json"));
}

/// `wraith init --name <name>` is `wraith init <name>`; naming it both ways is a usage error.
#[test]
fn init_takes_the_twin_name_as_a_name_flag_too() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(bin())
            .current_dir(tmp.path())
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&[
        "init",
        "--name",
        "flagged",
        "--base-url",
        "https://api.test",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(tmp.path().join("twins/flagged/wraith.toml").is_file());
    let out = run(&["init", "a", "--name", "b", "--base-url", "https://api.test"]);
    assert_eq!(out.status.code(), Some(1));
    let out = run(&["init", "--base-url", "https://api.test"]);
    assert_eq!(out.status.code(), Some(1));
}

/// `wraith check --twin <twin>` is `wraith check <twin>`.
#[test]
fn check_takes_the_twin_as_a_twin_flag_too() {
    let t = DemoTwin::synthesized();
    let positional = t.run(&["check", "--json"]);
    let flagged = Command::new(bin())
        .args(["check", "--twin"])
        .arg(&t.root)
        .args(["--in-memory", "--format", "json"])
        .env("WRAITH_HMAC_KEY", "check-tests-key")
        .output()
        .unwrap();
    assert_eq!(flagged.status.code(), Some(0));
    assert_eq!(flagged.stdout, positional.stdout);
}
