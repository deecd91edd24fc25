//! A `scrub.toml` that is there but does not parse is refused by every command that scrubs or
//! answers with the twin's data, alike: `import` and `record` (which would write recordings
//! without its rules), `serve` and `check` (which would answer, or compare, without the
//! outbound rules meant to hide what they name), each with exit 1 and the file's `path:line:`
//! and what is wrong; `lint` fails on it. Black-box: the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use crate::{record_support, support};

/// `[[rules]` (a table header left open) appended to the twin's scrub.toml; returns the line
/// it is on.
fn break_scrub_toml(root: &std::path::Path) -> usize {
    let path = root.join("scrub.toml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("[[rules]\n");
    let line = text.lines().count();
    std::fs::write(&path, text).unwrap();
    line
}

fn wraith(t: &support::Twin, args: &[&str]) -> Output {
    Command::new(support::bin())
        .current_dir(t.tmp.path())
        .args(args)
        .env_remove("CI")
        .env("WRAITH_HMAC_KEY", "scrub-toml-tests-key")
        .output()
        .unwrap()
}

fn assert_refused(what: &str, code: Option<i32>, said: &str, at: &str) {
    assert_eq!(code, Some(1), "{what}: {said}");
    assert!(said.contains(at), "{what} names {at}: {said}");
    assert!(
        said.contains("expected"),
        "{what} says what is wrong: {said}"
    );
    assert!(!said.contains("panicked"), "{what}: {said}");
    assert!(!said.contains("warning: outbound scrub"), "{what}: {said}");
}

#[test]
fn an_unparsable_scrub_toml_is_refused_by_serve_check_import_and_lint_alike() {
    let t = support::example_shop_twin();
    let twin = t.path_str();
    let out = wraith(&t, &["synth", &twin]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let line = break_scrub_toml(&t.root);
    let at = format!("scrub.toml:{line}: ");

    let har = t.tmp.path().join("empty.har");
    std::fs::write(&har, r#"{"log":{"version":"1.2","entries":[]}}"#).unwrap();
    let import = wraith(&t, &["import", &twin, har.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&import.stderr).into_owned();
    assert_refused("import", import.status.code(), &said, &at);
    // The same words and code from every command.
    let words = said.trim().to_string();

    for args in [
        vec!["check", &twin],
        vec!["check", &twin, "--json"],
        vec!["check", &twin, "--wire"],
    ] {
        let out = wraith(&t, &args);
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_refused(&args.join(" "), out.status.code(), &said, &at);
        assert!(said.contains(&words), "{args:?}: {said}");
    }

    let (code, said) = t.serve_expect_exit(&["--port", "0"]);
    assert_refused("serve", Some(code), &said, &at);
    assert!(said.contains(&words), "serve: {said}");

    let lint = wraith(&t, &["lint", &twin, "--json"]);
    assert_eq!(lint.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&lint.stdout).unwrap();
    let finding = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "scrub_toml")
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(finding["severity"], "error");
    assert_eq!(finding["file"], "scrub.toml");
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains(&format!("scrub.toml:{line}: ")),
        "{finding:#}"
    );
}

#[test]
fn an_unparsable_scrub_toml_is_refused_by_record_before_it_listens() {
    let twin = record_support::Twin::init("broken", "http://127.0.0.1:9");
    let line = break_scrub_toml(&twin.root);
    let refusal = record_support::record_until_exit(&twin);
    assert!(!refusal.listened, "{}", refusal.stderr);
    assert_refused(
        "record",
        refusal.code,
        &refusal.stderr,
        &format!("scrub.toml:{line}: "),
    );
}
