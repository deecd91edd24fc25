//! A `scrub.toml` that is there but does not parse is refused by every command that scrubs or
//! answers with the twin's data, alike: `import` and `record` (which would write recordings
//! without its rules), `serve` and `check` (which would answer, or compare, without the
//! outbound rules meant to hide what they name), each with exit 1 and the file's `path:line:`
//! and what is wrong; `lint` fails on it. A missing one is refused (exit 3) by the commands
//! that write recordings and warned of by those that only read them. Black-box: the real
//! binary.
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

/// `wraith lint <twin> --json` fails (exit 1); its `scrub_toml` error finding.
fn lint_scrub_toml_error(t: &support::Twin, twin: &str) -> serde_json::Value {
    let lint = wraith(t, &["lint", twin, "--json"]);
    assert_eq!(lint.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&lint.stdout).unwrap();
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "scrub_toml" && f["severity"] == "error")
        .cloned()
        .unwrap_or_else(|| panic!("{v:#}"))
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

    let finding = lint_scrub_toml_error(&t, &twin);
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

/// `wraith check --holdout` reads `scrub.toml` as the in-sample check does: both halves are
/// judged under the twin's outbound policy, so its reports hold the values that policy serves,
/// never the ones it hides, and one that does not parse is refused before anything is
/// synthesized, with the in-sample check's words and exit 1. Two sessions record
/// `GET /status` with another `shard` each, which no twin trained on one can answer for the
/// other; a rule added after the import rewrites it on the way out.
#[test]
fn check_holdout_reads_scrub_toml_as_the_in_sample_check_does() {
    const ORIGIN: &str = "https://api.shards.test";
    let env = [("WRAITH_HMAC_KEY", "scrub-toml-tests-key")];
    let t = support::Twin::init("shards", ORIGIN);
    for (n, shard) in ["eu-3", "us-1"].into_iter().enumerate() {
        support::har::import(
            &t,
            &env,
            &format!("session-{n}.har"),
            vec![support::har::entry(
                ORIGIN,
                "GET",
                "/status",
                None,
                &serde_json::json!({"ok": true, "shard": shard}),
            )],
        );
    }
    // A model too, for the in-sample check the refusal is compared with.
    support::har::synth(&t, &env);
    let twin = t.path_str();
    let holdout = |json: bool| {
        let mut args = vec!["check", twin.as_str(), "--holdout", "2"];
        if json {
            args.push("--json");
        }
        wraith(&t, &args)
    };
    // The held-out `shard` divergence, as (expected, actual).
    let shard = |out: &Output| -> (String, String) {
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["holdout"]["training_sessions"], 1, "{report:#}");
        let d = report["divergences"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["path"] == "body.shard")
            .unwrap_or_else(|| panic!("{report:#}"));
        let s = |k: &str| d[k].as_str().unwrap().to_string();
        (s("expected"), s("actual"))
    };
    // Without a rule the values are compared, and reported, as recorded.
    let (expected, actual) = shard(&holdout(true));
    let mut raw = [expected.as_str(), actual.as_str()];
    raw.sort_unstable();
    assert_eq!(raw, ["eu-3", "us-1"]);

    let scrub = t.root.join("scrub.toml");
    let mut text = std::fs::read_to_string(&scrub).unwrap();
    text.push_str("\n[[rules]]\nscope = \"jsonpath\"\nmatch = \"$.shard\"\naction = \"redact\"\n");
    std::fs::write(&scrub, &text).unwrap();
    // With it, both halves compare in the space the twin serves: the values the rule rewrites.
    let (expected, actual) = shard(&holdout(true));
    assert!(
        expected.starts_with("wraith_tok_") && actual.starts_with("wraith_tok_"),
        "{expected} {actual}"
    );
    assert_ne!(expected, actual);
    let written = std::fs::read_to_string(t.root.join("reports/check.json")).unwrap();
    assert!(
        !written.contains("eu-3") && !written.contains("us-1"),
        "{written}"
    );

    // Broken: refused with the in-sample check's words, before anything is synthesized.
    let line = break_scrub_toml(&t.root);
    let at = format!("scrub.toml:{line}: ");
    let in_sample = wraith(&t, &["check", &twin]);
    let words = String::from_utf8_lossy(&in_sample.stderr)
        .trim()
        .to_string();
    assert_refused("check", in_sample.status.code(), &words, &at);
    for json in [false, true] {
        let out = holdout(json);
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_refused("check --holdout", out.status.code(), &said, &at);
        assert!(said.contains(&words), "{said}");
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// A missing `scrub.toml` is treated by what a command does with the data. `import` and
/// `record` write recordings, and must not store any without the rules meant to scrub them:
/// exit 3 (a policy refusal), nothing written, `record` never listening. `serve` and `check`
/// only read recordings scrubbed when they were written: they warn, naming the file, and go on
/// under the default outbound pass. `lint` fails the twin (`scrub_toml`).
#[tokio::test]
async fn a_missing_scrub_toml_is_refused_by_import_and_record_and_only_warned_of_by_serve_and_check()
 {
    let t = support::example_shop_twin();
    let twin = t.path_str();
    let out = wraith(&t, &["synth", &twin]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    std::fs::remove_file(t.root.join("scrub.toml")).unwrap();
    let sessions = || {
        std::fs::read_dir(t.root.join("recordings/sessions"))
            .unwrap()
            .count()
    };
    let before = sessions();

    let har = t.tmp.path().join("one.har");
    let entry = support::har::entry(
        "http://127.0.0.1:18080",
        "GET",
        "/customers",
        None,
        &serde_json::json!({"object": "list", "data": []}),
    );
    let doc = serde_json::json!({"log": {"version": "1.2", "entries": [entry]}});
    std::fs::write(&har, doc.to_string()).unwrap();
    let import = wraith(&t, &["import", &twin, har.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&import.stderr).into_owned();
    assert_eq!(import.status.code(), Some(3), "{said}");
    assert!(
        said.contains("no scrub policy at") && said.contains("scrub.toml"),
        "{said}"
    );
    assert_eq!(sessions(), before, "nothing is imported");

    let rec = record_support::Twin::init("bare", "http://127.0.0.1:9");
    std::fs::remove_file(rec.root.join("scrub.toml")).unwrap();
    let refusal = record_support::record_until_exit(&rec);
    assert_eq!(refusal.code, Some(3), "{}", refusal.stderr);
    assert!(!refusal.listened, "{}", refusal.stderr);
    assert!(
        refusal.stderr.contains("no scrub policy at"),
        "{}",
        refusal.stderr
    );

    let check = wraith(&t, &["check", &twin]);
    let said = String::from_utf8_lossy(&check.stderr).into_owned();
    assert_eq!(check.status.code(), Some(0), "{said}");
    assert!(
        said.contains("warning: outbound scrub uses only the default PII pass")
            && said.contains("no scrub policy at"),
        "{said}"
    );

    let s = t.serve_env(&[], &[("WRAITH_HMAC_KEY", "scrub-toml-tests-key")]);
    s.get("/customers", Some("missing-scrub"))
        .await
        .assert_status(200);
    let said = s.stderr();
    assert!(
        said.contains("outbound scrub uses only the default PII pass")
            && said.contains("no scrub policy at"),
        "{said}"
    );

    lint_scrub_toml_error(&t, &twin);
}

/// A section `scrub.toml` does not know is refused, not skipped: a misspelled `[[rule]]` would
/// otherwise drop the rule it holds and `import` would store the value it names. Every command
/// that reads the policy refuses it with the section's line and the likely spelling; nothing
/// is recorded.
#[test]
fn a_misspelled_scrub_toml_section_is_refused_before_anything_is_recorded() {
    let t = support::example_shop_twin();
    let twin = t.path_str();
    let out = wraith(&t, &["synth", &twin]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let path = t.root.join("scrub.toml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("[[rule]]\nscope = \"jsonpath\"\nmatch = \"$.note\"\naction = \"redact\"\n");
    let line = text.lines().count() - 3;
    std::fs::write(&path, text).unwrap();
    let at = format!("scrub.toml:{line}: unknown section `rule` (did you mean `[[rules]]`?)");

    let sessions = t.root.join("recordings/sessions");
    let before = std::fs::read_dir(&sessions).unwrap().count();
    let har = t.tmp.path().join("note.har");
    let entry = serde_json::json!({
        "startedDateTime": "2026-01-01T00:00:00Z", "time": 1,
        "request": {"method": "GET", "url": "http://shop.test/notes/1", "httpVersion": "HTTP/1.1",
            "headers": [], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
            "headers": [{"name": "Content-Type", "value": "application/json"}], "cookies": [],
            "content": {"size": 32, "mimeType": "application/json",
                "text": "{\"note\":\"TOPSECRET-42\"}"},
            "redirectURL": "", "headersSize": -1, "bodySize": 32},
        "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}
    });
    let doc = serde_json::json!({"log": {"version": "1.2", "entries": [entry]}});
    std::fs::write(&har, serde_json::to_vec(&doc).unwrap()).unwrap();
    let import = wraith(&t, &["import", &twin, har.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&import.stderr).into_owned();
    assert_eq!(import.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&at),
        "import names the section and its line: {said}"
    );
    assert_eq!(std::fs::read_dir(&sessions).unwrap().count(), before);

    let (code, said) = t.serve_expect_exit(&["--port", "0"]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains(&at), "serve: {said}");

    let finding = lint_scrub_toml_error(&t, &twin);
    let message = finding["message"].as_str().unwrap();
    assert!(message.contains(&at), "{message}");
}
