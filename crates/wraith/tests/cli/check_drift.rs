//! Drift between recording runs, black-box: a twin whose later recordings answer a route in
//! another shape shows it as drifted in `wraith serve`'s `--ready-json` and `/__wraith/info`
//! (`drifted_routes`), and `wraith check` reports the drifted share of routes against
//! `[freshness] max_drift` (above it: exit 2, `twin-drift-exceeded`). Runs are split by
//! `[generate] run_gap` (default one hour).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;
use crate::check_support::notes;

use check_support::*;
use notes::entry;
use serde_json::{Value, json};

/// One HAR session recorded on `day` (`2026-06-<day>`): a health read and a widget read.
fn session_har(day: u32, widget: &Value) -> Value {
    session_har_at(&format!("2026-06-{day:02}T12:00"), widget)
}

/// The same session started at `minute` (`YYYY-MM-DDTHH:MM`, UTC).
fn session_har_at(minute: &str, widget: &Value) -> Value {
    let id = widget["id"].as_str().unwrap();
    let mut entries = vec![
        entry(
            "GET",
            "https://api.widgets.test/v1/health",
            None,
            200,
            &json!({"ok": true}),
        ),
        entry(
            "GET",
            &format!("https://api.widgets.test/v1/widgets/{id}"),
            None,
            200,
            widget,
        ),
    ];
    for (i, e) in entries.iter_mut().enumerate() {
        e["startedDateTime"] = json!(format!("{minute}:0{i}.000Z"));
    }
    json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
        "pages": [], "entries": entries}})
}

/// Widgets recorded on June 1 and 2 with a `color`; the June 10 recording has it or not.
fn widgets_twin(later_has_color: bool) -> DemoTwin {
    let t = DemoTwin::init("widgets", "https://api.widgets.test/v1");
    t.import_har(
        "a",
        &session_har(1, &json!({"id": "wid_a1", "name": "one", "color": "red"})),
    );
    t.import_har(
        "b",
        &session_har(2, &json!({"id": "wid_b2", "name": "two", "color": "blue"})),
    );
    let later = if later_has_color {
        json!({"id": "wid_c3", "name": "three", "color": "green"})
    } else {
        json!({"id": "wid_c3", "name": "three"})
    };
    t.import_har("c", &session_har(10, &later));
    t.synth();
    t
}

fn with_max_drift(t: &DemoTwin, max_drift: &str) {
    let p = t.root.join("wraith.toml");
    let mut text = std::fs::read_to_string(&p).unwrap();
    text.push_str(&format!("\n[freshness]\nmax_drift = {max_drift}\n"));
    std::fs::write(&p, text).unwrap();
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The name of the model's widget read route (`GET /v1/widgets/:param`).
fn widget_route(t: &DemoTwin) -> String {
    let m = t.model();
    let r = m["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"].as_str().unwrap().contains("widgets"))
        .expect("widget route");
    format!(
        "{} {}",
        r["method"].as_str().unwrap(),
        r["path"].as_str().unwrap()
    )
}

#[test]
fn synth_marks_a_field_the_later_recording_dropped_as_field_removed() {
    let t = widgets_twin(false);
    let m = t.model();
    let drifted: Vec<&Value> = m["routes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("drift").is_some())
        .collect();
    assert_eq!(drifted.len(), 1, "{m}");
    let d = &drifted[0]["drift"][0];
    assert_eq!(d["kind"], "field_removed");
    assert_eq!(d["at"], "/color");
    assert_eq!(d["since"], "2026-06-10T12:00:00Z");
}

#[test]
fn check_fails_with_twin_drift_exceeded_when_the_drifted_share_is_above_max_drift() {
    let t = widgets_twin(false);
    with_max_drift(&t, "0.0");
    let out = t.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("twin-drift-exceeded"), "{err}");
    assert!(err.contains(&widget_route(&t)), "{err}");
    let r = stdout_json(&out);
    assert_eq!(r["score_bp"], 10_000, "only the drift gate failed: {r}");
    assert_eq!(r["passed"], false);
    let f = &r["freshness"];
    assert_eq!(f["drift"], 0.5, "{f}");
    assert_eq!(f["routes_total"], 2);
    assert_eq!(f["drifted_routes"], json!([widget_route(&t)]));
    assert_eq!(f["drift_exceeded"], true);
    // Judged without a *now*: the age is unevaluated, the drift is not.
    assert_eq!(f["status"], "unevaluated");
}

#[test]
fn check_passes_when_the_drifted_share_is_within_max_drift_and_prints_it() {
    let t = widgets_twin(false);
    with_max_drift(&t, "1.0");
    let out = t.run(&["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("drift: 0.500 (1 of 2 routes"), "{text}");
    assert!(
        text.contains(&format!("drifted: {}", widget_route(&t))),
        "{text}"
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(t.root.join("reports/check.json")).unwrap())
            .unwrap();
    assert_eq!(report["freshness"]["drift_exceeded"], false);
    assert_eq!(report["passed"], true);
}

#[test]
fn recordings_that_agree_in_shape_have_no_drift() {
    let t = widgets_twin(true);
    assert!(
        t.model()["routes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r.get("drift").is_none())
    );
    with_max_drift(&t, "0.0");
    let out = t.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let f = &stdout_json(&out)["freshness"];
    assert_eq!(f["drift"], 0.0);
    assert_eq!(f["drifted_routes"], json!([]));
}

/// Widgets recorded in one afternoon: at 12:00 and 12:05 with a `color`, at 12:40 without.
fn widgets_afternoon(run_gap: Option<&str>) -> DemoTwin {
    let t = DemoTwin::init("widgets", "https://api.widgets.test/v1");
    if let Some(gap) = run_gap {
        let p = t.root.join("wraith.toml");
        let mut text = std::fs::read_to_string(&p).unwrap();
        text.push_str(&format!("\n[generate]\nrun_gap = \"{gap}\"\n"));
        std::fs::write(&p, text).unwrap();
    }
    for (name, minute, widget) in [
        (
            "a",
            "12:00",
            json!({"id": "wid_a1", "name": "one", "color": "red"}),
        ),
        (
            "b",
            "12:05",
            json!({"id": "wid_b2", "name": "two", "color": "blue"}),
        ),
        ("c", "12:40", json!({"id": "wid_c3", "name": "three"})),
    ] {
        t.import_har(
            name,
            &session_har_at(&format!("2026-06-01T{minute}"), &widget),
        );
    }
    t
}

fn drift_kinds(t: &DemoTwin) -> Vec<String> {
    t.model()["routes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r.get("drift"))
        .flat_map(|d| d.as_array().unwrap().iter())
        .map(|d| {
            format!(
                "{} {}",
                d["kind"].as_str().unwrap(),
                d["at"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn sessions_of_one_sitting_are_one_run_so_a_field_they_disagree_on_is_no_drift() {
    let t = widgets_afternoon(None);
    t.synth();
    assert_eq!(drift_kinds(&t), Vec::<String>::new());
}

#[test]
fn a_run_gap_shorter_than_a_pause_makes_the_later_sessions_a_newer_run() {
    let t = widgets_afternoon(Some("20m"));
    t.synth();
    assert_eq!(drift_kinds(&t), vec!["field_removed /color".to_string()]);
    let m = t.model();
    let d = &m["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|r| r.get("drift"))
        .unwrap()[0];
    assert_eq!(d["since"], "2026-06-01T12:40:00Z");
}

#[test]
fn a_run_gap_that_is_not_a_duration_is_refused_naming_the_file_and_line() {
    let t = widgets_afternoon(None);
    let p = t.root.join("wraith.toml");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, format!("{text}\n[generate]\nrun_gap = \"soon\"\n")).unwrap();
    let out = t.run(&["synth"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("wraith.toml:") && err.contains("generate.run_gap") && err.contains("soon"),
        "{err}"
    );
    assert!(!t.root.join("model/twin.wir.json").exists());
}

fn ready_and_info(t: &DemoTwin) -> (Value, Value) {
    let (mut child, url) = t.serve();
    let ready: Value =
        serde_json::from_str(&std::fs::read_to_string(t.tmp.path().join("ready.json")).unwrap())
            .unwrap();
    let info = ureq_get(&format!("{url}/__wraith/info"));
    let _ = child.kill();
    let _ = child.wait();
    (ready, info)
}

/// A plain HTTP/1.1 GET on 127.0.0.1 (no client crate needed for one request).
fn ureq_get(url: &str) -> Value {
    let (head, body) = http_get(url);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    serde_json::from_str(&body).unwrap()
}

#[test]
fn serve_lists_drifted_routes_in_ready_json_and_info() {
    let t = widgets_twin(false);
    let (ready, info) = ready_and_info(&t);
    let want = json!([widget_route(&t)]);
    assert_eq!(ready["drifted_routes"], want, "{ready}");
    assert_eq!(info["drifted_routes"], want, "{info}");
}

#[test]
fn serve_lists_no_drifted_routes_when_recordings_agree() {
    let t = widgets_twin(true);
    let (ready, info) = ready_and_info(&t);
    assert_eq!(ready["drifted_routes"], json!([]));
    assert_eq!(info["drifted_routes"], json!([]));
}

#[test]
fn coverage_lists_the_drifted_route_with_its_findings() {
    let t = widgets_twin(false);
    let out = t.run(&["coverage", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let drifted = c["drifted_routes"].as_array().unwrap();
    assert_eq!(drifted.len(), 1, "{c}");
    assert_eq!(drifted[0]["route"], widget_route(&t).as_str());
    assert_eq!(drifted[0]["drift"][0]["kind"], "field_removed");
    assert_eq!(drifted[0]["drift"][0]["at"], "/color");

    let out = t.run(&["coverage"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("drifted between recording runs (1):"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{}: field_removed at \"/color\" since 2026-06-10T12:00:00Z",
            widget_route(&t)
        )),
        "{text}"
    );

    let agreeing = widgets_twin(true);
    let out = agreeing.run(&["coverage", "--json"]);
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["drifted_routes"], json!([]));
}
