//! Recorded text on the terminal: a recorded path or JSON key is whatever a client sent, and
//! the text outputs print it with its control characters (C0, DEL, C1) and bidi overrides
//! escaped, so it can neither command the terminal (`ESC[2J` clears the screen) nor reorder
//! the line. The JSON outputs keep it as recorded (JSON escapes what it must itself).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::check_support::notes::entry;
use crate::check_support::{DemoTwin, fake_target, stdout_json};
use crate::support::has_terminal_controls;

/// A JSON key with an escape sequence (clear the screen) and a right-to-left override.
const KEY: &str = "\u{1b}[2J\u{202e}tag";
/// [`KEY`] as the terminal shows it.
const KEY_SHOWN: &str = "\\u{1b}[2J\\u{202e}tag";

/// A notes twin whose every recorded note has the key [`KEY`].
fn twin_with_a_hostile_key() -> DemoTwin {
    let t = DemoTwin::init("notes", "https://api.notes.test/v1");
    for (i, id) in ["note_ujzde8gxd6nc", "note_k2m9qp4rt7wa"]
        .iter()
        .enumerate()
    {
        let note = json!({"id": id, "object": "note", KEY: "x"});
        let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
        "pages": [], "entries": [
            entry("GET", "https://api.notes.test/v1/notes", None, 200,
                &json!({"object": "list", "data": [note]})),
        ]}});
        t.import_har(&format!("notes-{i}"), &har);
    }
    t.synth();
    t
}

#[test]
fn check_summary_shows_a_recorded_key_in_a_deviation_reason_escaped() {
    let t = twin_with_a_hostile_key();
    // A fixture's list whose note lacks the key every recording has: an authored deviation
    // whose reason quotes the key.
    let url = fake_target::start(|_| fake_target::Answer {
        status: 200,
        provenance: "fixture",
        route: "GET /v1/notes".into(),
        body: json!({"object": "list", "data": [{"id": "note_ujzde8gxd6nc", "object": "note"}]}),
    });
    let out = t.run(&["check", "--target", &url]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("missing_key"), "{text}");
    assert!(!has_terminal_controls(&text), "{text:?}");
    assert!(text.contains(&format!("`{KEY_SHOWN}`")), "{text}");

    // The JSON report keeps the key as recorded.
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r: Value = stdout_json(&out);
    let reason = r["authored_deviations"][0]["reason"].as_str().unwrap();
    assert!(reason.contains(KEY), "{reason:?}");
}

/// A twin whose one route has a recorded path holding a right-to-left override (import
/// refuses control characters in a URL, not bidi characters).
fn twin_with_a_hostile_path() -> DemoTwin {
    let t = DemoTwin::init("notes", "https://api.notes.test/v1");
    let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
    "pages": [], "entries": [
        entry("GET", "https://api.notes.test/v1/\u{202e}notes", None, 200,
            &json!({"object": "list", "data": []})),
    ]}});
    t.import_har("notes", &har);
    t.synth();
    t
}

#[test]
fn coverage_and_provenance_show_a_recorded_route_name_escaped() {
    let t = twin_with_a_hostile_path();
    for args in [
        &["coverage"][..],
        &["inspect", "--provenance"],
        &["inspect"],
    ] {
        let out = t.run(args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {text}");
        assert!(!has_terminal_controls(&text), "{args:?}: {text:?}");
        if args != ["inspect"] {
            assert!(text.contains("/v1/\\u{202e}notes"), "{args:?}: {text}");
        }
    }
    // The JSON outputs keep the route name as recorded.
    let r = stdout_json(&t.run(&["coverage", "--json"]));
    assert!(r.to_string().contains("/v1/\u{202e}notes"), "{r}");
}

#[test]
fn lint_findings_and_checks_duplicate_route_warning_show_a_recorded_route_escaped() {
    let t = twin_with_a_hostile_path();
    // A hand-edited model declaring the recorded route twice (under another id): lint's
    // `duplicate-route` finding and check's warning name the route.
    let model_path = t.root.join("model").join("twin.wir.json");
    let mut model: Value =
        serde_json::from_str(&std::fs::read_to_string(&model_path).unwrap()).unwrap();
    let routes = model["routes"].as_array_mut().unwrap();
    let mut twin_route = routes[0].clone();
    twin_route["id"] = json!("get_copy_00000000");
    routes.push(twin_route);
    std::fs::write(&model_path, format!("{model}\n")).unwrap();

    let out = t.run(&["lint"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("duplicate-route"), "{text}");
    assert!(!has_terminal_controls(&text), "{text:?}");
    assert!(text.contains("/v1/\\u{202e}notes"), "{text}");

    let out = t.run(&["check"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is declared by 2 routes"), "{err}");
    assert!(!has_terminal_controls(&err), "{err:?}");
    assert!(err.contains("/v1/\\u{202e}notes"), "{err}");
}
