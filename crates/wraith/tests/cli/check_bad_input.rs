//! Bad input to `wraith check`, `coverage`, `inspect` (`--provenance` too) and `lint`, black-box:
//! a synthesized copy of the demo twin damaged one way per test. Every run must end with the
//! documented exit code (README, docs/conformance.md, the commands' `--help`), name what is
//! wrong and where, never panic, and leave the twin's files as they were (`reports/` aside).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use check_support::*;

const SESSION: &str = "20260706T235828Z-a23ed7";

/// The demo twin with a second copy of its session (so `--holdout 2` has one to hold out),
/// synthesized.
fn twin() -> DemoTwin {
    let t = DemoTwin::copy();
    t.add_session_copies(1);
    t.synth();
    t
}

/// Every file under `root` except `reports/`, with its bytes.
fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            if rel == Path::new("reports") {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Run `wraith <cmd> <twin> <args>` on `t` and check the exit code, that every needle is in
/// the output (stderr, where a command reports errors and warnings; lint's findings are on
/// stdout), that nothing panicked, and that no file of the twin outside `reports/` changed.
fn expect(t: &DemoTwin, cmd_and_args: &[&str], code: i32, needles: &[&str]) -> Output {
    let before = files(&t.root);
    let out = t.run(cmd_and_args);
    assert_output(cmd_and_args, &out, code, needles);
    assert!(
        before == files(&t.root),
        "`wraith {}` changed the twin's files",
        cmd_and_args.join(" ")
    );
    out
}

fn assert_output(cmd_and_args: &[&str], out: &Output, code: i32, needles: &[&str]) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let what = format!(
        "`wraith {}`\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        cmd_and_args.join(" ")
    );
    assert!(
        !stdout.contains("panicked at") && !stderr.contains("panicked at"),
        "panicked: {what}"
    );
    assert_eq!(out.status.code(), Some(code), "exit code of {what}");
    let searched = if cmd_and_args.first() == Some(&"lint") {
        format!("{stdout}{stderr}")
    } else {
        stderr.into_owned()
    };
    for n in needles {
        assert!(searched.contains(n), "missing {n:?} in {what}");
    }
}

/// The runs of `check` that read the model the twin folder holds (a `--holdout` run
/// synthesizes its own).
const CHECK_FORMS: &[&[&str]] = &[&["check"], &["check", "--json"], &["check", "--jobs", "1"]];

/// `check --target` at a port where nothing listens: a model that does not load stops the
/// run before any connection.
fn dead_target() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}")
}

fn write(t: &DemoTwin, rel: &str, bytes: impl AsRef<[u8]>) {
    let p = t.root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// Every command that loads the model fails with exit 1 naming the model file, `needle` and
/// `wraith synth`; lint reports it under `rule`.
fn model_refused_everywhere(t: &DemoTwin, needle: &str, rule: &str) {
    let target = dead_target();
    let mut runs: Vec<Vec<&str>> = CHECK_FORMS.iter().map(|f| f.to_vec()).collect();
    runs.push(vec!["check", "--target", &target]);
    runs.push(vec!["coverage"]);
    runs.push(vec!["coverage", "--json"]);
    runs.push(vec!["inspect"]);
    runs.push(vec!["inspect", "--provenance"]);
    runs.push(vec!["inspect", "--provenance", "--json"]);
    for run in &runs {
        expect(t, run, 1, &["model/twin.wir.json", needle, "wraith synth"]);
    }
    expect(t, &["lint"], 1, &["model/twin.wir.json", rule]);
}

#[test]
fn truncated_model_is_refused_as_not_json_naming_where_it_stops() {
    let t = twin();
    let text = std::fs::read(t.model_path()).unwrap();
    write(&t, "model/twin.wir.json", &text[..text.len() / 2]);
    model_refused_everywhere(&t, "not JSON (EOF while parsing", "model-parse");
}

#[test]
fn model_that_is_not_json_is_refused_naming_line_and_column() {
    let t = twin();
    write(&t, "model/twin.wir.json", "<html>not a model</html>\n");
    model_refused_everywhere(&t, "at line 1 column 1", "model-parse");
}

/// A model overwritten with bytes that are not text is damaged, not unreadable: exit 1 with
/// the fix, as a truncated one is (it was exit 4, "stream did not contain valid UTF-8").
#[test]
fn model_of_bytes_that_are_not_text_is_refused_as_damaged() {
    let t = twin();
    write(&t, "model/twin.wir.json", b"\x89PNG\r\n\x1a\n\xff\xfe\x00");
    let target = dead_target();
    for run in [
        &["check"][..],
        &["check", "--target", &target],
        &["coverage"],
        &["inspect", "--provenance"],
    ] {
        expect(
            &t,
            run,
            1,
            &["model/twin.wir.json", "not UTF-8", "wraith synth"],
        );
    }
    expect(&t, &["lint"], 1, &["model/twin.wir.json", "model-parse"]);
}

#[test]
fn empty_model_file_is_refused_as_not_json() {
    let t = twin();
    write(&t, "model/twin.wir.json", "");
    model_refused_everywhere(&t, "not JSON", "model-parse");
}

#[test]
fn model_of_another_schema_version_is_refused_with_both_versions() {
    let t = twin();
    let mut model = t.model();
    model["schema_version"] = 99.into();
    t.write_model(&model);
    model_refused_everywhere(&t, "schema_version 99", "schema_version");
}

#[test]
fn json_that_is_no_model_is_refused() {
    let t = twin();
    write(&t, "model/twin.wir.json", "[1,2,3]\n");
    model_refused_everywhere(&t, "not a Wraith model", "model-parse");
}

#[test]
fn model_of_the_wrong_shape_is_refused_naming_the_field() {
    let t = twin();
    let mut model = t.model();
    model["routes"] = 7.into();
    t.write_model(&model);
    model_refused_everywhere(&t, "routes", "model-parse");
}

#[test]
fn model_naming_a_route_twice_loads_with_a_warning_and_fails_lint() {
    let t = twin();
    let mut model = t.model();
    let routes = model["routes"].as_array_mut().unwrap();
    let mut again = routes[0].clone();
    again["id"] = "route-again".into();
    let named = format!(
        "{} {}",
        again["method"].as_str().unwrap(),
        again["path"].as_str().unwrap()
    );
    // The same method and path on another origin is another route (synth writes those).
    let mut elsewhere = again.clone();
    elsewhere["id"] = "route-elsewhere".into();
    elsewhere["origin"] = "https://other.example".into();
    routes.push(again);
    routes.push(elsewhere);
    t.write_model(&model);
    let warning = format!("{named} is declared by 2 routes");
    for run in CHECK_FORMS {
        expect(&t, run, 0, &[&warning, "wraith synth"]);
    }
    expect(&t, &["coverage"], 0, &[&warning]);
    expect(&t, &["inspect", "--provenance"], 0, &[&warning]);
    expect(&t, &["inspect"], 0, &[&warning]);
    expect(&t, &["lint"], 1, &["duplicate-route", &named]);
}

#[test]
fn missing_model_with_recordings_says_to_run_synth() {
    let t = twin();
    std::fs::remove_dir_all(t.root.join("model")).unwrap();
    let target = dead_target();
    for run in
        CHECK_FORMS
            .iter()
            .map(|f| f.to_vec())
            .chain([vec!["check", "--target", target.as_str()]])
    {
        expect(&t, &run, 1, &["does not exist: run `wraith synth`"]);
    }
    expect(&t, &["coverage"], 1, &["run `wraith synth`"]);
    expect(&t, &["inspect", "--provenance"], 1, &["run `wraith synth`"]);
    // inspect describes recordings first: no model is not an error there.
    let out = expect(&t, &["inspect"], 0, &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("no model yet (run `wraith synth"));
    expect(&t, &["lint"], 0, &[]);
    // A model that is a folder is of the wrong kind: the user's to fix (1), naming it.
    std::fs::create_dir_all(t.model_path()).unwrap();
    expect(
        &t,
        &["check"],
        1,
        &["model/twin.wir.json", "Is a directory"],
    );
}

/// Every command that reads the recordings fails with exit 4 naming the file and how to fix
/// it; `inspect --provenance` and `lint` do not read recordings.
fn recording_refused_everywhere(t: &DemoTwin, file: &str, needle: &str) {
    let fix = "move its session folder out of recordings/sessions/";
    for run in CHECK_FORMS.iter().copied().chain([
        &["check", "--holdout", "2"][..],
        &["coverage"],
        &["inspect"],
    ]) {
        expect(t, run, 4, &[file, needle, fix]);
    }
    expect(t, &["inspect", "--provenance"], 0, &[]);
    // Lint decodes every exchange file: the damaged one is its error too.
    expect(
        t,
        &["lint"],
        1,
        &[file, "recording-exchange", "cannot be read"],
    );
}

#[test]
fn truncated_recording_is_a_runtime_failure_naming_the_file() {
    let t = twin();
    let rel = format!("recordings/sessions/{SESSION}/000002.wrec.zst");
    let bytes = std::fs::read(t.root.join(&rel)).unwrap();
    write(&t, &rel, &bytes[..bytes.len() / 2]);
    recording_refused_everywhere(&t, "000002.wrec.zst", "corrupt recording");
}

#[test]
fn recording_that_is_not_zstd_is_a_runtime_failure_naming_the_file() {
    let t = twin();
    write(
        &t,
        &format!("recordings/sessions/{SESSION}/000003.wrec.zst"),
        "{\"not\": \"zstd\"}",
    );
    recording_refused_everywhere(&t, "000003.wrec.zst", "not a WREC exchange");
}

#[test]
fn recording_with_a_non_utf8_header_is_a_runtime_failure_naming_the_file() {
    let t = twin();
    let rel = format!("recordings/sessions/{SESSION}/000001.wrec.zst");
    let cbor = zstd::stream::decode_all(&std::fs::read(t.root.join(&rel)).unwrap()[..]).unwrap();
    let needle = b"application/json";
    let at = cbor
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the recorded exchange names a JSON content type");
    let mut damaged = cbor.clone();
    damaged[at..at + needle.len()].fill(0xff);
    write(&t, &rel, zstd::stream::encode_all(&damaged[..], 3).unwrap());
    recording_refused_everywhere(&t, "000001.wrec.zst", "corrupt recording");
}

#[test]
fn recording_whose_status_is_no_http_status_is_a_runtime_failure_naming_the_file() {
    let t = twin();
    let rel = format!("recordings/sessions/{SESSION}/000004.wrec.zst");
    let mut ex =
        wraith_recording::read_exchange(&std::fs::read(t.root.join(&rel)).unwrap()).unwrap();
    ex.response.status = 0;
    write(&t, &rel, wraith_recording::encode_exchange(&ex).unwrap());
    recording_refused_everywhere(&t, "000004.wrec.zst", "response.status 0");
    // synth too: a model must not hold an answer nothing can send.
    expect(&t, &["synth"], 4, &["000004.wrec.zst", "response.status 0"]);
}

/// Exchange 4 of the demo session, rewritten by `edit` (and still decodable CBOR), is refused
/// by every reader (synth too) with exit 4, naming the file and `needle`, and lint's error.
fn edited_recording_refused_everywhere(
    edit: impl Fn(&mut wraith_recording::Exchange),
    needle: &str,
) {
    let t = twin();
    let rel = format!("recordings/sessions/{SESSION}/000004.wrec.zst");
    let mut ex =
        wraith_recording::read_exchange(&std::fs::read(t.root.join(&rel)).unwrap()).unwrap();
    edit(&mut ex);
    write(&t, &rel, wraith_recording::encode_exchange(&ex).unwrap());
    recording_refused_everywhere(&t, "000004.wrec.zst", needle);
    expect(&t, &["synth"], 4, &["000004.wrec.zst", needle]);
}

#[test]
fn recording_whose_method_is_no_http_token_is_a_runtime_failure_naming_the_file() {
    edited_recording_refused_everywhere(
        |ex| ex.request.method = "GE T".into(),
        "request.method \"GE T\" is not an HTTP method",
    );
}

#[test]
fn recording_whose_path_does_not_start_with_a_slash_is_a_runtime_failure_naming_the_file() {
    edited_recording_refused_everywhere(
        |ex| ex.request.path = ex.request.path.trim_start_matches('/').to_string(),
        "does not start with `/`",
    );
}

/// A route name is a recorded path, printed by lint, coverage and check: one holding an escape
/// sequence is refused on reading, as import refuses it in a HAR's URL.
#[test]
fn recording_whose_path_holds_a_control_character_is_a_runtime_failure_naming_the_file() {
    edited_recording_refused_everywhere(
        |ex| ex.request.path = "/v1/\u{1b}[2Jcustomers".into(),
        "request.path \"/v1/\\u{1b}[2Jcustomers\" has a control character (U+001B)",
    );
}

#[test]
fn recording_with_a_header_that_would_split_a_message_is_a_runtime_failure_naming_the_file() {
    edited_recording_refused_everywhere(
        |ex| {
            ex.request
                .headers
                .insert("x-a".into(), vec!["a\r\nInjected: 1".into()]);
        },
        "request.headers[\"x-a\"] holds \\r",
    );
    edited_recording_refused_everywhere(
        |ex| {
            ex.response
                .headers
                .insert("bad name".into(), vec!["v".into()]);
        },
        "response.headers has the name \"bad name\", which is not a header name",
    );
}

#[test]
fn recording_whose_exchange_index_is_not_its_file_names_is_a_runtime_failure_naming_the_file() {
    edited_recording_refused_everywhere(
        |ex| ex.correlation.exchange_index = 5,
        "correlation.exchange_index is 5, not 4",
    );
}

/// Replace the recorded bodies of exchange `index` (request and response) with bytes that are
/// not UTF-8.
fn non_utf8_bodies(t: &DemoTwin, session: &str, index: usize) {
    let rel = format!("recordings/sessions/{session}/{index:06}.wrec.zst");
    let mut ex =
        wraith_recording::read_exchange(&std::fs::read(t.root.join(&rel)).unwrap()).unwrap();
    let bad = b"{\"name\":\"\xff\xfe\xc3\x28\"}".to_vec();
    if !ex.request.body.is_empty() {
        ex.request.body = bad.clone().into();
    }
    for f in &mut ex.frames {
        f.body = bad.clone();
    }
    write(t, &rel, wraith_recording::encode_exchange(&ex).unwrap());
}

#[test]
fn non_utf8_recorded_bodies_are_judged_not_panicked_on() {
    let t = twin();
    // The create (a request and a response body) of both sessions: a fresh synth and the
    // held-out check both read them.
    let copy = format!("{SESSION}-copy0");
    for session in [SESSION, copy.as_str()] {
        for index in 0..6 {
            non_utf8_bodies(&t, session, index);
        }
    }
    // The model still holds the clean answers: the replay diverges (exit 2), naming the report.
    for run in CHECK_FORMS {
        expect(
            &t,
            run,
            2,
            &["conformance below threshold", "reports/check.html"],
        );
    }
    let out = expect(&t, &["check", "--holdout", "2"], 0, &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("holdout k=2"));
    expect(&t, &["coverage"], 0, &[]);
    expect(&t, &["inspect"], 0, &[]);
    expect(&t, &["inspect", "--provenance"], 0, &[]);
    expect(&t, &["lint"], 0, &[]);
    assert!(t.run(&["synth"]).status.success());
    for run in CHECK_FORMS {
        expect(&t, run, 0, &[]);
    }
}

#[test]
fn empty_session_folder_and_stray_files_are_skipped_with_a_warning() {
    let t = twin();
    write(&t, "recordings/sessions/README.txt", "notes");
    write(
        &t,
        &format!("recordings/sessions/{SESSION}/notes.txt"),
        "notes",
    );
    std::fs::create_dir_all(t.root.join("recordings/sessions/20260801T000000Z-0a0a0a")).unwrap();
    for run in CHECK_FORMS {
        let out = expect(&t, run, 0, &["20260801T000000Z-0a0a0a", "no exchanges"]);
        if run.contains(&"--json") {
            assert_eq!(stdout_json(&out)["sessions_total"], 2);
        }
    }
    // The empty folder is never the held-out half.
    let out = expect(
        &t,
        &["check", "--holdout", "2", "--json"],
        0,
        &["no exchanges"],
    );
    assert_eq!(stdout_json(&out)["holdout"]["held_out_exchanges"], 6);
    expect(&t, &["coverage"], 0, &[]);
    expect(&t, &["inspect"], 0, &[]);
    expect(&t, &["lint"], 0, &[]);
}

#[test]
fn invalid_wraith_toml_is_a_configuration_error_naming_the_line() {
    let t = twin();
    let mut text = std::fs::read_to_string(t.root.join("wraith.toml")).unwrap();
    text.push_str("[service\n");
    let line = text.lines().count();
    write(&t, "wraith.toml", &text);
    let at = format!("wraith.toml:{line}");
    // coverage and the static provenance too: they read the config as every command does.
    for run in CHECK_FORMS.iter().copied().chain([
        &["check", "--holdout", "2"][..],
        &["inspect"],
        &["coverage"],
        &["inspect", "--provenance"],
    ]) {
        expect(&t, run, 1, &[&at, "unclosed table"]);
    }
    expect(&t, &["lint"], 1, &["wraith_toml", "unclosed table"]);
}

fn set_diff_key(t: &DemoTwin, key: &str, value: &str) -> usize {
    let text = std::fs::read_to_string(t.root.join("wraith.toml")).unwrap();
    let mut out = String::new();
    let mut line_no = 0;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with(&format!("{key} =")) {
            out.push_str(&format!("{key} = {value}\n"));
            line_no = i + 1;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(line_no > 0, "the demo wraith.toml sets {key}");
    write(t, "wraith.toml", out);
    line_no
}

#[test]
fn required_score_outside_zero_to_one_or_not_a_number_is_a_configuration_error() {
    for (value, needle) in [
        ("7", "must be between 0 and 1, got 7"),
        ("-1", "must be between 0 and 1, got -1"),
        ("\"high\"", "invalid type: string \"high\""),
    ] {
        let t = twin();
        let line = set_diff_key(&t, "required_score", value);
        let at = format!("wraith.toml:{line}: `diff.required_score`");
        for run in CHECK_FORMS
            .iter()
            .copied()
            .chain([&["check", "--holdout", "2"][..]])
        {
            expect(&t, run, 1, &[&at, needle]);
        }
        expect(&t, &["lint"], 1, &["diff.required_score", needle]);
    }
}

#[test]
fn unknown_diff_key_is_a_warning_naming_the_line_and_key() {
    let t = twin();
    let line = set_diff_key(&t, "split_variants", "false\nrequired_scroe = 0.99");
    let warning = format!(
        "wraith.toml:{}: `diff.required_scroe`: unknown key",
        line + 1
    );
    for run in CHECK_FORMS {
        expect(&t, run, 0, &[&warning]);
    }
    // lint names the file in its own column and the line in the message.
    let finding = format!(
        "wraith.toml: line {}: `diff.required_scroe`: unknown key",
        line + 1
    );
    expect(&t, &["lint"], 0, &[&finding]);
}

#[test]
fn invalid_scrub_toml_is_refused_by_check_and_fails_lint() {
    let t = twin();
    let mut text = std::fs::read_to_string(t.root.join("scrub.toml")).unwrap();
    text.push_str("[[rules]\n");
    let line = text.lines().count();
    write(&t, "scrub.toml", &text);
    let at = format!("scrub.toml:{line}");
    // The check compares in the outbound space `serve` answers in, which the file's rules
    // shape: refused, as `serve` and `import` refuse it, never compared without them.
    for run in CHECK_FORMS {
        expect(&t, run, 1, &[&at]);
    }
    expect(&t, &["lint"], 1, &["scrub_toml", &at]);
}

#[test]
fn invalid_state_schema_is_named_and_the_twin_checks_with_a_route_only_schema() {
    let t = twin();
    write(&t, "state/schema.json", "{\"entity_types\": ");
    for run in CHECK_FORMS {
        expect(
            &t,
            run,
            0,
            &["state/schema.json is unusable", "route-only schema"],
        );
    }
    // Serving goes on without it, but every declaration in it is dropped: lint's error.
    expect(&t, &["lint"], 1, &["schema-json", "does not parse"]);
}

#[test]
fn state_schema_that_is_not_utf8_is_named_and_the_twin_checks_with_a_route_only_schema() {
    let t = twin();
    write(
        &t,
        "state/schema.json",
        b"{\"schema_version\": 1, \"entity_types\": {\"a\xff\": {}}}",
    );
    for run in CHECK_FORMS {
        expect(
            &t,
            run,
            0,
            &[
                "state/schema.json is unusable (not UTF-8",
                "route-only schema",
            ],
        );
    }
    expect(&t, &["lint"], 1, &["not-utf8"]);
}

#[test]
fn fixture_that_is_not_json_is_a_configuration_error_naming_the_file() {
    let t = twin();
    write(&t, "state/fixtures/default/fixture.json", "{oops");
    for run in CHECK_FORMS {
        expect(
            &t,
            run,
            1,
            &[
                "state/fixtures",
                "`fixture.json`",
                "not valid JSON",
                "wraith lint",
            ],
        );
    }
    expect(
        &t,
        &["check", "--holdout", "2", "--fixture", "default"],
        1,
        &["`fixture.json`", "not valid JSON"],
    );
    expect(
        &t,
        &["inspect", "--provenance"],
        0,
        &["state/fixtures/default/fixture.json: not valid JSON"],
    );
    expect(&t, &["lint"], 1, &["fixture"]);
}

#[test]
fn a_folder_where_a_fixture_file_belongs_is_a_usage_error_naming_it() {
    let t = twin();
    write(
        &t,
        "state/fixtures/default/fixture.json/entities.json",
        "{}",
    );
    let needles = &["state/fixtures/default/fixture.json is a folder, not a file"];
    for run in CHECK_FORMS {
        expect(&t, run, 1, needles);
    }
    expect(&t, &["inspect", "--provenance"], 1, needles);
    expect(&t, &["lint"], 1, needles);
}

/// The two reports are written both or neither: when `check.html` cannot be replaced (a
/// folder in its place), `check.json` keeps the previous run's bytes instead of disagreeing
/// with the HTML beside it.
#[test]
fn reports_are_replaced_both_or_neither() {
    let t = twin();
    let first = expect(&t, &["check", "--json"], 0, &[]).stdout;
    let json = t.root.join("reports/check.json");
    assert_eq!(std::fs::read(&json).unwrap(), first);
    t.drop_route("/health");
    let html = t.root.join("reports/check.html");
    std::fs::remove_file(&html).unwrap();
    std::fs::create_dir(&html).unwrap();
    let out = t.run(&["check", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("the reports there are the previous run's"),
        "{err}"
    );
    assert_eq!(std::fs::read(&json).unwrap(), first, "check.json untouched");
    assert!(html.is_dir());
}

#[test]
fn reports_path_that_is_a_dangling_link_is_a_runtime_failure_naming_its_target() {
    let t = twin();
    std::fs::remove_dir_all(t.root.join("reports")).unwrap();
    std::os::unix::fs::symlink(t.root.join("gone"), t.root.join("reports")).unwrap();
    let out = expect(
        &t,
        &["check"],
        4,
        &["reports is a symbolic link to", "which does not exist"],
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("os error 17"));
}

#[test]
fn reports_path_that_is_a_file_is_a_runtime_failure_naming_it() {
    let t = twin();
    std::fs::remove_dir_all(t.root.join("reports")).unwrap();
    write(&t, "reports", "not a folder");
    for run in CHECK_FORMS
        .iter()
        .copied()
        .chain([&["check", "--holdout", "2"][..]])
    {
        let out = expect(&t, run, 4, &["reports is a file, not a folder"]);
        assert!(
            out.stdout.is_empty(),
            "no report printed when none was written"
        );
    }
    assert_eq!(
        std::fs::read(t.root.join("reports")).unwrap(),
        b"not a folder"
    );
}

#[test]
fn twin_path_that_does_not_exist_is_a_file_or_is_empty_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("wraith.toml");
    std::fs::write(&file, "").unwrap();
    let missing = tmp.path().join("nowhere");
    for (path, needle) in [
        (missing.as_path(), "no twin"),
        (file.as_path(), "is a file, not a twin folder"),
        // An unset shell variable: said as such, not "no twin ``: looked for ;".
        (std::path::Path::new(""), "the twin argument is empty"),
    ] {
        for args in [
            &["check"][..],
            &["check", "--json"],
            &["coverage"],
            &["inspect"],
            &["inspect", "--provenance"],
            &["lint"],
        ] {
            let out = Command::new(bin())
                .arg(args[0])
                .arg(path)
                .args(&args[1..])
                .output()
                .unwrap();
            assert_output(args, &out, 1, &[needle]);
        }
    }
}

#[test]
fn out_of_range_holdout_and_jobs_are_usage_errors() {
    let t = twin();
    expect(
        &t,
        &["check", "--holdout", "0"],
        1,
        &["K must be at least 2"],
    );
    expect(
        &t,
        &["check", "--holdout", "1"],
        1,
        &["K must be at least 2"],
    );
    expect(
        &t,
        &["check", "--holdout", "3"],
        1,
        &["only 2 recorded session(s)", "use a K from 2 to 2"],
    );
    expect(
        &t,
        &["check", "--holdout", "99999999999"],
        1,
        &["--holdout"],
    );
    expect(
        &t,
        &["check", "--jobs", "0"],
        1,
        &["--jobs", "must be at least 1"],
    );
    expect(
        &t,
        &["check", "--jobs", "many"],
        1,
        &["--jobs", "not a count"],
    );
    for bad in ["0", "0.5", "3601"] {
        expect(
            &t,
            &["check", "--timeout", bad, "--target", "http://127.0.0.1:1"],
            1,
            &["--timeout", "whole number of seconds from 1 to 3600"],
        );
    }
    expect(
        &t,
        &["check", "--target", "https://127.0.0.1:1"],
        1,
        &["plain-HTTP base URL"],
    );
    for bad in ["http://[::1", "http://127.0.0.1:99999"] {
        expect(
            &t,
            &["check", "--target", bad],
            1,
            &["is not a host with an optional port"],
        );
    }
}

/// A URL's scheme is case-insensitive: `HTTP://` is taken like `http://` (here nothing
/// listens there, so the run fails reaching the twin, not on the URL).
#[test]
fn target_url_scheme_in_capitals_is_taken_as_http() {
    let t = twin();
    let url = dead_target().replacen("http://", "HTTP://", 1);
    let out = t.run(&["check", "--target", &url, "--timeout", "1"]);
    assert_output(&["check"], &out, 4, &["Connection refused"]);
}

/// `--target ""` (an unset shell variable): the message says the value is empty and where a
/// running twin writes its URL, rather than quoting nothing.
#[test]
fn empty_target_url_is_a_usage_error_saying_where_the_url_is_written() {
    let t = twin();
    for empty in ["", "  "] {
        expect(
            &t,
            &["check", "--target", empty],
            1,
            &["--target is empty", "plain-HTTP base URL", ".serve.url"],
        );
    }
}

/// `--target http://127.0.0.1:8081/api` where `/api` is the recorded API's own base path: the
/// twin's routes carry it already, so every request would miss. Refused before anything is sent.
#[test]
fn target_url_ending_in_the_apis_own_base_path_is_a_usage_error() {
    let t = twin();
    let mut model = t.model();
    let base = model["base_url"].as_str().unwrap().trim_end_matches('/');
    model["base_url"] = serde_json::Value::String(format!("{base}/api"));
    t.write_model(&model);
    for path in ["/api", "/api/"] {
        let target = format!("{}{path}", dead_target());
        expect(
            &t,
            &["check", "--target", &target],
            1,
            &["`/api` is the recorded API's own base path"],
        );
    }
}

/// `--target http://user:pass@host:port`: a twin reads no credentials, and the URL would be
/// written into `reports/check.json` and `check.html` (often kept as CI artifacts). Refused
/// before anything is sent or written, without repeating the password.
#[test]
fn target_url_with_credentials_is_a_usage_error_that_keeps_them_out_of_reports() {
    let t = twin();
    let target = dead_target().replace("http://", "http://ci:hunter2secret@");
    let out = expect(
        &t,
        &["check", "--target", &target],
        1,
        &["--target", "credentials", "http://127.0.0.1:"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("hunter2secret"), "{stderr}");
    assert!(!t.root.join("reports/check.json").exists());
}

/// A listener on 127.0.0.1 whose every connection is handed to `serve` on its own thread;
/// returns the base URL.
fn raw_target(serve: fn(std::net::TcpStream)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            std::thread::spawn(move || serve(stream));
        }
    });
    url
}

/// Read one request (head and `content-length` body) and discard it; `false` once the client
/// closed the connection.
fn read_request(r: &mut impl BufRead) -> bool {
    let mut len = 0;
    let mut first = true;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return false;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
        if line.trim().is_empty() && !first {
            let mut body = vec![0; len];
            return r.read_exact(&mut body).is_ok();
        }
        first = false;
    }
}

fn reader(s: &std::net::TcpStream) -> BufReader<std::net::TcpStream> {
    BufReader::new(s.try_clone().unwrap())
}

fn check_target(t: &DemoTwin, url: &str, code: i32, needles: &[&str]) {
    let start = std::time::Instant::now();
    expect(
        t,
        &["check", "--target", url, "--timeout", "1"],
        code,
        needles,
    );
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "the run took {:?}",
        start.elapsed()
    );
}

#[test]
fn target_that_does_not_speak_http_is_a_runtime_failure_saying_what_it_did() {
    let t = twin();
    let (exchange, hint) = ("did not answer exchange", "check that the twin is running");
    check_target(
        &t,
        &dead_target(),
        4,
        &[exchange, "Connection refused", hint],
    );
    let closes = raw_target(drop);
    check_target(&t, &closes, 4, &[exchange, hint]);
    let garbage = raw_target(|mut s| {
        read_request(&mut reader(&s));
        let _ = s.write_all(b"\x00\x01 SSH-2.0 not http\r\n\r\n");
    });
    check_target(&t, &garbage, 4, &[exchange, "invalid HTTP"]);
}

/// A twin with handlers makes the check probe for them before each exchange. When nothing
/// listens at the target, the run fails on its first exchange and says so; a warning about the
/// probe that failed just before would only mislead.
#[test]
fn unreachable_target_of_a_twin_with_handlers_fails_without_a_probe_warning() {
    let t = DemoTwin::example_shop();
    t.synth();
    let out = t.run(&["check", "--target", &dead_target(), "--timeout", "1"]);
    assert_output(
        &["check"],
        &out,
        4,
        &[
            "did not answer exchange",
            "Connection refused",
            "check that the twin is running",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("handler probe"), "{stderr}");
}

/// A target that accepts connections and never answers fails the run on the check's first
/// request (`GET /__wraith/info`), after one `--timeout`: not again on the handler probe and
/// the exchange that would follow.
#[test]
fn a_silent_target_fails_the_run_after_one_timeout() {
    static REQUESTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let t = DemoTwin::example_shop();
    t.synth();
    let silent = raw_target(|s| {
        if read_request(&mut reader(&s)) {
            REQUESTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        std::thread::sleep(std::time::Duration::from_secs(60));
    });
    let out = t.run(&["check", "--target", &silent, "--timeout", "1"]);
    assert_output(
        &["check"],
        &out,
        4,
        &[
            "did not answer GET /__wraith/info",
            "no answer within 1 s (--timeout)",
        ],
    );
    assert_eq!(REQUESTS.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// A twin that answers the check's first request, then goes silent: the handler probe sent
/// before the first exchange gets no answer within `--timeout`, and the exchange fails at once
/// instead of waiting as long again.
#[test]
fn a_target_silent_after_its_first_answer_fails_the_run_after_one_more_timeout() {
    static SILENCED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let t = DemoTwin::example_shop();
    t.synth();
    let target = raw_target(|mut s| {
        let mut r = reader(&s);
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            // The rest of the head (these requests carry no body worth reading).
            let mut len = 0usize;
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; len];
            let _ = std::io::Read::read_exact(&mut r, &mut body);
            if line.starts_with("GET /__wraith/info ") {
                let _ = s.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                      content-length: 15\r\n\r\n{\"twin\":\"shop\"}",
                );
                continue;
            }
            SILENCED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
    });
    let out = t.run(&["check", "--target", &target, "--timeout", "1"]);
    assert_output(
        &["check"],
        &out,
        4,
        &["handler probe got no answer within 1 s (--timeout)"],
    );
    assert_eq!(SILENCED.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn target_that_never_answers_times_out_after_the_timeout() {
    let t = twin();
    let silent = raw_target(|s| {
        read_request(&mut reader(&s));
        std::thread::sleep(std::time::Duration::from_secs(60));
    });
    check_target(&t, &silent, 4, &["no answer within 1 s (--timeout)"]);
    let stalls = raw_target(|mut s| {
        read_request(&mut reader(&s));
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"a\"");
        std::thread::sleep(std::time::Duration::from_secs(60));
    });
    check_target(
        &t,
        &stalls,
        4,
        &["the body did not arrive within 1 s (--timeout)"],
    );
}

#[test]
fn target_answering_an_endless_body_fails_the_run_at_the_answer_body_cap() {
    let t = twin();
    // Chunks as fast as the socket takes them and never the last one: 80 MiB, then it stalls
    // (an endless stream, as far as a reader that stops at the cap can tell).
    let endless = raw_target(|mut s| {
        read_request(&mut reader(&s));
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                    transfer-encoding: chunked\r\n\r\n";
        if s.write_all(head.as_bytes()).is_err() {
            return;
        }
        let chunk = format!("10000\r\n{}\r\n", "a".repeat(0x10000));
        for _ in 0..80 * 16 {
            if s.write_all(chunk.as_bytes()).is_err() {
                return;
            }
        }
        std::thread::sleep(std::time::Duration::from_secs(120));
    });
    let start = std::time::Instant::now();
    expect(
        &t,
        &["check", "--target", &endless, "--timeout", "30"],
        4,
        &["did not answer exchange", "larger than 64 MiB"],
    );
    assert!(
        start.elapsed() < std::time::Duration::from_secs(60),
        "the run read until the timeout: {:?}",
        start.elapsed()
    );
}

#[test]
fn target_answering_a_body_that_is_not_json_fails_the_conformance_gate() {
    let t = twin();
    let html = raw_target(|mut s| {
        let mut r = reader(&s);
        while read_request(&mut r) {
            let body = b"<html>maintenance</html>";
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            if s.write_all(head.as_bytes()).is_err() || s.write_all(body).is_err() {
                return;
            }
        }
    });
    let out = t.run(&["check", "--target", &html, "--timeout", "1", "--json"]);
    assert_output(&["check"], &out, 2, &["conformance below threshold"]);
    let r = stdout_json(&out);
    assert_eq!(r["passed"], false);
    assert!(r["divergence_count"].as_u64().unwrap() > 0, "{r:#}");
}

/// A target that is no twin (a web server answering every request with an HTML error page)
/// gets one warning line about the handler probe, quoting the start of the page, not the whole
/// page spread over many lines of stderr.
#[test]
fn target_answering_an_html_error_page_to_the_probe_is_warned_about_in_one_line() {
    // The bundled twin has a Lua handler, so the check probes the target for it.
    let t = DemoTwin::example_shop();
    t.synth();
    let server = raw_target(|mut s| {
        let mut r = reader(&s);
        while read_request(&mut r) {
            let mut body = String::from(
                "<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\n        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n",
            );
            for i in 0..40 {
                body.push_str(&format!("        <p>line {i} of the page</p>\n"));
            }
            body.push_str("        <p>END-OF-PAGE</p>\n    </body>\n</html>\n");
            let head = format!(
                "HTTP/1.1 501 Not Implemented\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            if s.write_all(head.as_bytes()).is_err() || s.write_all(body.as_bytes()).is_err() {
                return;
            }
        }
    });
    let out = t.run(&["check", "--target", &server, "--timeout", "5"]);
    assert_output(&["check"], &out, 2, &["a handler probe answered 501"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warning = stderr
        .lines()
        .find(|l| l.contains("a handler probe answered 501"))
        .unwrap();
    assert!(
        warning.contains("<!DOCTYPE HTML> <html lang=\"en\"> <head>")
            && warning.contains('…')
            && warning.contains("handler answers are judged only where the twin served them"),
        "{warning}"
    );
    assert!(!stderr.contains("END-OF-PAGE"), "{stderr}");
    assert!(!stderr.contains("line 3 of the page"), "{stderr}");
}

/// An IO error is said once: the library error names it and also returns it as its source, and
/// the printed chain must not repeat it (`Not a directory (os error 20): Not a directory (os
/// error 20)`).
#[test]
fn an_io_error_is_printed_once() {
    let t = twin();
    let sessions = t.root.join("recordings/sessions");
    std::fs::remove_dir_all(&sessions).unwrap();
    std::fs::write(&sessions, b"not a folder\n").unwrap();
    for cmd in [&["inspect"][..], &["synth"], &["check"], &["coverage"]] {
        let out = t.run(cmd);
        // A file where the folder belongs is of the wrong kind: exit 1.
        assert_output(cmd, &out, 1, &["recordings/sessions", "(os error "]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.matches("(os error ").count(), 1, "{cmd:?}: {stderr}");
    }
}
