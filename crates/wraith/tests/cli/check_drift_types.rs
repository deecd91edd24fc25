//! Drift types and `drift.toml`, black-box: every divergence and drift group of `wraith check`
//! carries a `drift_type`; `drift.toml` accepts (`[[suppress]]`) or renames (`[[reclassify]]`)
//! drifts after scoring, visible but never changing the score; a bad file warns (check) or
//! fails lint with its line; `wraith inspect` and `check.html` show the routes that drifted
//! between recording runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;
use crate::check_support::notes;

use check_support::*;
use notes::entry;
use serde_json::{Value, json};

/// One HAR session recorded on `2026-06-<day>` at `hour`:00: a widget read.
fn session_har(day: u32, hour: u32, widget: &Value) -> Value {
    let id = widget["id"].as_str().unwrap();
    let mut e = entry(
        "GET",
        &format!("https://api.widgets.test/v1/widgets/{id}"),
        None,
        200,
        widget,
    );
    e["startedDateTime"] = json!(format!("2026-06-{day:02}T{hour:02}:00:00.000Z"));
    json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
        "pages": [], "entries": [e]}})
}

fn widget(id: &str, n: u64) -> Value {
    json!({
        "id": id,
        "name": format!("widget {n}"),
        "stock": n * 10,
        "self": format!("https://api.widgets.test/v1/widgets/{id}"),
        "docs": "https://docs.widgets.test/v1/widgets",
        "color": "red",
    })
}

/// A widgets twin of one recorded read, synthesized.
fn widgets_twin() -> DemoTwin {
    let t = DemoTwin::init("widgets", "https://api.widgets.test/v1");
    t.import_har("a", &session_har(1, 12, &widget("wid_a1", 1)));
    t.synth();
    t
}

/// Change the recorded answer the twin replays for the widget read (its exact moment), so the
/// twin answers `edit(answer)` where the recording says otherwise.
fn tamper(t: &DemoTwin, edit: impl Fn(&mut serde_json::Map<String, Value>)) {
    let mut model = t.model();
    let mut done = false;
    for route in model["routes"].as_array_mut().unwrap() {
        if !route["path"].as_str().unwrap().contains("widgets") {
            continue;
        }
        for e in route["exact"].as_array_mut().unwrap() {
            for m in e["moments"].as_array_mut().unwrap() {
                if let Some(obj) = m["body"]["value"].as_object_mut() {
                    edit(obj);
                    done = true;
                }
            }
        }
    }
    assert!(done, "the model replays the widget read");
    t.write_model(&model);
}

/// Every kind of value change the answer can show, one per field.
fn tampered_twin() -> DemoTwin {
    let t = widgets_twin();
    tamper(&t, |o| {
        o.insert("stock".into(), json!(99));
        o.insert(
            "self".into(),
            json!("http://localhost:8081/v1/widgets/wid_a1"),
        );
        o.insert("docs".into(), json!("https://docs.widgets.test/v2/widgets"));
        o.insert("name".into(), json!("renamed"));
        o.remove("color");
        o.insert("weight".into(), json!(3));
    });
    t
}

fn by_path(report: &Value) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = report["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["category"].as_str().unwrap().to_string(),
                d["drift_type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

fn s3(a: &str, b: &str, c: &str) -> (String, String, String) {
    (a.into(), b.into(), c.into())
}

fn write_drift_toml(t: &DemoTwin, text: &str) {
    std::fs::write(t.root.join("drift.toml"), text).unwrap();
}

#[test]
fn every_divergence_and_drift_group_has_its_drift_type() {
    let t = tampered_twin();
    let out = t.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let r = stdout_json(&out);
    assert_eq!(
        by_path(&r),
        [
            s3("body.color", "missing_field", "field_removed"),
            s3("body.docs", "value_mismatch", "url_drift"),
            s3("body.name", "value_mismatch", "value_drift"),
            s3("body.self", "value_mismatch", "host_rewrite"),
            s3("body.stock", "value_mismatch", "numeric_drift"),
            s3("body.weight", "extra_field", "additive_optional_field"),
        ]
    );
    for d in r["drifts"].as_array().unwrap() {
        let same = r["divergences"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["drift_id"] == d["drift_id"])
            .unwrap();
        assert_eq!(d["drift_type"], same["drift_type"]);
        assert_eq!(d["drift_suppressed"], false);
        assert_eq!(d["reclassified_from"], Value::Null);
    }
    assert_eq!(r["drift_suppressed_count"], 0);
    assert_eq!(r["drift_warnings"], json!([]));
    // The status of the answer shifting is a status_code_shift.
    let t = widgets_twin();
    let mut model = t.model();
    for route in model["routes"].as_array_mut().unwrap() {
        for e in route["exact"].as_array_mut().unwrap() {
            for m in e["moments"].as_array_mut().unwrap() {
                m["status"] = json!(410);
            }
        }
    }
    t.write_model(&model);
    let r = stdout_json(&t.run(&["check", "--json"]));
    let status: Vec<&Value> = r["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["category"] == "status_mismatch")
        .collect();
    assert_eq!(status.len(), 1, "{:#}", r["divergences"]);
    assert_eq!(status[0]["drift_type"], "status_code_shift");
}

#[test]
fn drift_toml_suppress_is_visible_counted_and_does_not_change_the_score() {
    let t = tampered_twin();
    let before = stdout_json(&t.run(&["check", "--json"]));
    write_drift_toml(
        &t,
        "# accepted drift\n\
         [[suppress]]\n\
         drift_type = \"host_rewrite\"\n\
         reason = \"the twin serves its own host\"\n\
         \n\
         [[suppress]]\n\
         route = \"GET /v1/widgets/*\"\n\
         path = \"body.stock\"\n\
         reason = \"stock moves\"\n",
    );
    let out = t.run(&["check", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "still failing: scored as before"
    );
    let after = stdout_json(&out);
    for k in [
        "score_bp",
        "passed",
        "divergence_count",
        "categories",
        "exchanges_passed",
    ] {
        assert_eq!(before[k], after[k], "{k}");
    }
    assert_eq!(after["divergences"].as_array().unwrap().len(), 6);
    assert_eq!(after["drift_suppressed_count"], 2);
    // Listed only under --show-suppressed.
    assert_eq!(after["drift_suppressed"], json!([]));
    let mut flagged: Vec<&str> = after["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["drift_suppressed"] == true)
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    flagged.sort_unstable();
    assert_eq!(flagged, ["body.self", "body.stock"]);

    let out = t.run(&["check", "--json", "--show-suppressed"]);
    let r = stdout_json(&out);
    let listed: Vec<(String, u64, String)> = r["drift_suppressed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_string(),
                s["rule"].as_u64().unwrap(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        listed.contains(&("body.self".into(), 1, "the twin serves its own host".into())),
        "{listed:?}"
    );
    assert!(
        listed.contains(&("body.stock".into(), 2, "stock moves".into())),
        "{listed:?}"
    );
    // The text summary says so too.
    let out = t.run(&["check", "--show-suppressed"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("accepted drift: 2 divergence(s) accepted by drift.toml"),
        "{text}"
    );
    assert!(text.contains("stock moves"), "{text}");
}

#[test]
fn drift_toml_reclassify_renames_the_type_before_suppress_matches_it() {
    let t = tampered_twin();
    write_drift_toml(
        &t,
        "[[reclassify]]\n\
         match = { path = \"body.name\" }\n\
         new_drift_type = \"enum_extension\"\n\
         reason = \"names are a documented set\"\n\
         \n\
         [[suppress]]\n\
         drift_type = \"enum_extension\"\n\
         reason = \"accepted extension\"\n",
    );
    let r = stdout_json(&t.run(&["check", "--json"]));
    let name = r["drifts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"] == "body.name")
        .unwrap();
    assert_eq!(name["drift_type"], "enum_extension");
    assert_eq!(name["reclassified_from"], "value_drift");
    assert_eq!(name["drift_suppressed"], true);
    assert_eq!(r["drift_reclassified_count"], 1);
    assert_eq!(r["drift_suppressed_count"], 1);
}

/// A `drift.toml` there but unreadable (a read error of the kernel's own, since the tests may
/// run with every permission) is named once, with no line: the file as a whole is at fault.
#[cfg(target_os = "linux")]
#[test]
fn an_unreadable_drift_toml_is_named_without_a_line() {
    let t = tampered_twin();
    write_drift_toml(&t, "");
    let file = t.root.join("drift.toml");
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink("/proc/self/mem", &file).unwrap();
    let out = t.run(&["check", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: drift.toml: cannot be read ("),
        "{err}"
    );
    assert!(
        !err.contains("line 0") && !err.contains("drift.toml:0"),
        "{err}"
    );
    let out = t.run(&["lint", "--json"]);
    let l = stdout_json(&out);
    let messages: Vec<&str> = l["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"] == "drift.toml")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(messages[0].starts_with("cannot be read ("), "{messages:#?}");
}

#[test]
fn a_bad_drift_toml_warns_in_check_and_fails_lint_with_file_and_line() {
    let t = tampered_twin();
    write_drift_toml(
        &t,
        "[[suppress]]\n\
         rout = \"GET /v1/widgets/*\"\n\
         reason = \"typo\"\n\
         \n\
         [[suppress]]\n\
         path = \"body.stock\"\n\
         \n\
         [[reclassify]]\n\
         match = { path = \"body.name\" }\n\
         new_drift_type = \"enum_extensions\"\n\
         reason = \"r\"\n",
    );
    let before = stdout_json(&t.run(&["check", "--json"]));
    let out = t.run(&["check", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "the scores decide, not drift.toml"
    );
    let r = stdout_json(&out);
    let warnings: Vec<&str> = r["drift_warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(warnings.len(), 3, "{warnings:#?}");
    assert!(
        warnings[0].starts_with("drift.toml:1: [[suppress]] entry 1: `rout`: unknown matcher"),
        "{warnings:#?}"
    );
    assert!(
        warnings[1].starts_with("drift.toml:5: [[suppress]] entry 2: `reason`: is required"),
        "{warnings:#?}"
    );
    assert!(
        warnings[2].starts_with("drift.toml:8: [[reclassify]] entry 1: `new_drift_type`: unknown drift type `enum_extensions`"),
        "{warnings:#?}"
    );
    // No bad entry was applied (a misspelled matcher never widens to everything).
    assert_eq!(r["drift_suppressed_count"], 0);
    assert_eq!(r["drift_reclassified_count"], 0);
    assert_eq!(r["score_bp"], before["score_bp"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning: drift.toml:1:"), "{err}");

    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let l = stdout_json(&out);
    let drift: Vec<(String, String)> = l["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"] == "drift.toml")
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let rules: Vec<&str> = drift.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(
        rules,
        ["drift-matcher", "drift-reason", "drift-type"],
        "{drift:#?}"
    );
    assert!(drift[0].1.starts_with("line 1: "), "{drift:#?}");
    assert!(drift[2].1.starts_with("line 8: "), "{drift:#?}");

    // A file that is not TOML is one warning with its line, never a crash.
    write_drift_toml(&t, "[[suppress]]\nreason = \n");
    let out = t.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let r = stdout_json(&out);
    let w = r["drift_warnings"][0].as_str().unwrap();
    assert!(
        w.starts_with("drift.toml:2: drift.toml: not valid TOML"),
        "{w}"
    );
}

#[test]
fn without_drift_toml_nothing_is_accepted_and_lint_is_silent_about_it() {
    let t = widgets_twin();
    let out = t.run(&["lint", "--json"]);
    let l = stdout_json(&out);
    assert!(
        !l["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["file"] == "drift.toml"),
        "{l}"
    );
    let r = stdout_json(&t.run(&["check", "--json"]));
    assert_eq!(r["drift_suppressed_count"], 0);
    assert_eq!(r["drift_warnings"], json!([]));
}

/// Widgets recorded on the morning of June 1 (two sessions, with `color`) and again that
/// afternoon without it: two runs on one day, so the read drifted.
fn drifted_twin() -> DemoTwin {
    let t = DemoTwin::init("widgets", "https://api.widgets.test/v1");
    t.import_har("a", &session_har(1, 8, &widget("wid_a1", 1)));
    let mut b = session_har(1, 8, &widget("wid_b2", 2));
    b["log"]["entries"][0]["startedDateTime"] = json!("2026-06-01T08:10:00.000Z");
    t.import_har("b", &b);
    let mut later = widget("wid_c3", 3);
    later.as_object_mut().unwrap().remove("color");
    t.import_har("c", &session_har(1, 16, &later));
    t.synth();
    t
}

#[test]
fn inspect_lists_each_drifted_route_with_its_findings() {
    let t = drifted_twin();
    let out = t.run(&["inspect", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v = stdout_json(&out);
    let drifted = v["drifted_routes"].as_array().unwrap();
    assert_eq!(drifted.len(), 1, "{v}");
    assert!(drifted[0]["route"].as_str().unwrap().contains("widgets"));
    let f = &drifted[0]["drift"][0];
    assert_eq!(f["kind"], "field_removed");
    assert_eq!(f["at"], "/color");
    assert_eq!(f["since"], "2026-06-01T16:00:00Z");
    assert_eq!(v["model_routes"], 1);

    let out = t.run(&["inspect"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("drift: 1 of 1 route(s) drifted between recording runs:"),
        "{text}"
    );
    assert!(
        text.contains(
            "field_removed at \"/color\" (2 earlier, 1 newer answer(s), since 2026-06-01T16:00:00Z)"
        ),
        "{text}"
    );

    // Before synth there is no model: null, and the text says how to get one.
    let fresh = DemoTwin::init("widgets", "https://api.widgets.test/v1");
    fresh.import_har("a", &session_har(1, 8, &widget("wid_a1", 1)));
    let v = stdout_json(&fresh.run(&["inspect", "--json"]));
    assert_eq!(v["drifted_routes"], Value::Null);
    assert_eq!(v["model_routes"], Value::Null);
}

#[test]
fn check_html_shows_drifted_routes_and_the_drift_types_of_the_worst_divergences() {
    let t = drifted_twin();
    let out = t.run(&["check", "--json"]);
    assert!(out.status.code().is_some());
    let html = std::fs::read_to_string(t.root.join("reports/check.html")).unwrap();
    assert!(
        html.contains("Drift between recording runs — 1 route(s)"),
        "{html}"
    );
    assert!(html.contains("field_removed"), "{html}");
    assert!(html.contains("/color"), "{html}");

    let t = tampered_twin();
    t.run(&["check"]);
    let html = std::fs::read_to_string(t.root.join("reports/check.html")).unwrap();
    for ty in [
        "numeric_drift",
        "host_rewrite",
        "url_drift",
        "additive_optional_field",
    ] {
        assert!(html.contains(ty), "{ty} missing from the worst divergences");
    }
    assert!(html.contains("Drift between recording runs — 0 route(s)"));
}

#[test]
fn drift_types_are_the_same_for_every_jobs_count() {
    let t = tampered_twin();
    write_drift_toml(
        &t,
        "[[suppress]]\npath = \"body.stock\"\nreason = \"stock moves\"\n",
    );
    let one = t.run(&["check", "--json", "--jobs", "1", "--show-suppressed"]);
    let two = t.run(&["check", "--json", "--jobs", "2", "--show-suppressed"]);
    assert_eq!(one.stdout, two.stdout);
}

/// A widget read recorded four times, its `state` one of two values: the model holds `state`
/// as an observed (enum) position.
fn states_twin() -> DemoTwin {
    let t = DemoTwin::init("widgets", "https://api.widgets.test/v1");
    for (i, state) in ["active", "paused", "active", "paused"].iter().enumerate() {
        let id = format!("wid_{i}x");
        let w = json!({"id": id, "name": "w", "state": state});
        t.import_har(&format!("s{i}"), &session_har(1, 8 + i as u32, &w));
    }
    t.synth();
    t
}

#[test]
fn an_enum_position_answered_outside_its_recorded_values_is_enum_expansion() {
    let t = states_twin();
    assert!(
        t.model().to_string().contains("\"observed\""),
        "the model holds an observed hole"
    );
    tamper(&t, |o| {
        o.insert("state".into(), json!("retired"));
    });
    let r = stdout_json(&t.run(&["check", "--json"]));
    let states: Vec<&Value> = r["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["path"] == "body.state")
        .collect();
    assert!(!states.is_empty(), "{:#}", r["divergences"]);
    for d in &states {
        assert_eq!(d["drift_type"], "enum_expansion", "{d}");
    }

    // Another recorded value (compared exactly under the replay claim) is no expansion.
    let t = states_twin();
    tamper(&t, |o| {
        let other = if o["state"] == "active" {
            "paused"
        } else {
            "active"
        };
        o.insert("state".into(), json!(other));
    });
    let r = stdout_json(&t.run(&["check", "--json"]));
    let types: Vec<&Value> = r["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["path"] == "body.state")
        .map(|d| &d["drift_type"])
        .collect();
    assert!(!types.is_empty(), "{:#}", r["divergences"]);
    assert!(types.iter().all(|t| *t == "value_drift"), "{types:?}");
}
