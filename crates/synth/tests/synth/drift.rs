//! Drift between recording runs (`Route::drift`): what synth reports, and what it must not.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};
use wraith_model::{DriftKind, Model, RouteDrift};
use wraith_recording::{Exchange, Headers, RecordedSession};
use wraith_synth::{SynthOptions, synthesize};

const DAY_US: u64 = 86_400_000_000;
/// 2026-01-01T00:00:00Z.
const JAN1_US: u64 = 1_767_225_600_000_000;

fn ex(method: &str, path: &str, status: u16, answer: Value) -> Exchange {
    common::json_exchange(method, path, status, Headers::new(), None, &answer)
}

/// A session started `day` days after 2026-01-01 (plus `minute` minutes).
fn session(id: &str, day: u64, minute: u64, exchanges: Vec<Exchange>) -> RecordedSession {
    common::session(id, JAN1_US + day * DAY_US + minute * 60_000_000, exchanges)
}

fn synth(sessions: &[RecordedSession]) -> Model {
    synthesize(
        sessions,
        &SynthOptions {
            twin: "t".into(),
            base_url: "http://api.test".into(),
            tool_version: "test".into(),
            ..SynthOptions::default()
        },
    )
    .model
}

fn drift_of<'m>(model: &'m Model, method: &str, path: &str) -> &'m [RouteDrift] {
    &model
        .routes
        .iter()
        .find(|r| r.method == method && (r.path == path || r.path.starts_with(path)))
        .unwrap_or_else(|| panic!("no route {method} {path}"))
        .drift
}

fn kinds(drift: &[RouteDrift]) -> Vec<(DriftKind, &str)> {
    drift.iter().map(|d| (d.kind, d.at.as_str())).collect()
}

fn widget(id: u64, extra: Value) -> Value {
    let mut w = json!({"id": id, "name": format!("w{id}"), "tags": [{"k": "a", "v": 1}]});
    if let (Some(o), Some(e)) = (w.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            o.insert(k.clone(), v.clone());
        }
    }
    w
}

fn read(id: u64, answer: Value) -> Exchange {
    ex("GET", &format!("/widgets/{id}"), 200, answer)
}

#[test]
fn a_field_every_earlier_answer_had_and_the_newest_run_lacks_is_field_removed() {
    let old = |id| widget(id, json!({"color": "red"}));
    let model = synth(&[
        session("a", 0, 0, vec![read(1, old(1))]),
        session("b", 1, 0, vec![read(2, old(2))]),
        session("c", 9, 0, vec![read(3, widget(3, json!({})))]),
    ]);
    let d = drift_of(&model, "GET", "/widgets/");
    assert_eq!(kinds(d), [(DriftKind::FieldRemoved, "/color")]);
    assert_eq!((d[0].earlier_answers, d[0].newer_answers), (2, 1));
    assert_eq!(d[0].since, "2026-01-10T00:00:00Z");
}

#[test]
fn a_field_only_the_newest_run_has_is_additive_and_array_elements_are_pooled() {
    let new = |id| json!({"id": id, "name": "n", "tags": [{"k": "a", "v": 1, "since": "x"}, {"k": "b", "v": 2, "since": "y"}]});
    let model = synth(&[
        session("a", 0, 0, vec![read(1, widget(1, json!({})))]),
        session("b", 0, 5, vec![read(2, widget(2, json!({})))]),
        session("c", 3, 0, vec![read(3, new(3)), read(4, new(4))]),
    ]);
    let d = drift_of(&model, "GET", "/widgets/");
    assert_eq!(
        kinds(d),
        [(DriftKind::AdditiveOptionalField, "/tags/[]/since")]
    );
    assert_eq!(d[0].newer_answers, 2);
}

#[test]
fn a_type_that_changed_between_runs_is_type_changed_but_null_is_a_value() {
    let model = synth(&[
        session("a", 0, 0, vec![read(1, widget(1, json!({"size": 3})))]),
        session("b", 1, 0, vec![read(2, widget(2, json!({"size": 4})))]),
        session("c", 2, 0, vec![read(3, widget(3, json!({"size": "L"})))]),
        session("d", 2, 1, vec![ex("GET", "/other", 200, json!({"v": "x"}))]),
        session("e", 3, 0, vec![ex("GET", "/other", 200, json!({"v": "y"}))]),
        session(
            "f",
            4,
            0,
            vec![ex("GET", "/other", 200, json!({"v": null}))],
        ),
    ]);
    let d = drift_of(&model, "GET", "/widgets/");
    assert_eq!(kinds(d), [(DriftKind::TypeChanged, "/size")]);
    assert_eq!(d[0].earlier.as_deref(), Some("number"));
    assert_eq!(d[0].newer.as_deref(), Some("string"));
    assert!(drift_of(&model, "GET", "/other").is_empty());
}

#[test]
fn the_same_request_answered_with_another_status_later_is_a_status_code_shift() {
    let ping = |status| ex("GET", "/ping", status, json!({"ok": status == 200}));
    let model = synth(&[
        session("a", 0, 0, vec![ping(200)]),
        session("b", 1, 0, vec![ping(503), ping(200)]),
        session("c", 2, 0, vec![ping(410)]),
    ]);
    let d = drift_of(&model, "GET", "/ping");
    assert_eq!(kinds(d), [(DriftKind::StatusCodeShift, "GET /ping")]);
    assert_eq!(d[0].earlier.as_deref(), Some("200"));
    assert_eq!(d[0].newer.as_deref(), Some("410"));
}

#[test]
fn sessions_recorded_without_an_hour_pause_are_one_run_and_never_drift() {
    let model = synth(&[
        session("a", 0, 0, vec![read(1, widget(1, json!({"color": "red"})))]),
        session("b", 0, 1, vec![read(2, widget(2, json!({"color": "red"})))]),
        session("c", 0, 55, vec![read(3, widget(3, json!({})))]),
    ]);
    assert!(drift_of(&model, "GET", "/widgets/").is_empty());
}

#[test]
fn two_runs_recorded_on_one_day_are_two_runs() {
    // Morning and afternoon of the same UTC day, ten hours apart.
    let model = synth(&[
        session("a", 0, 0, vec![read(1, widget(1, json!({"color": "red"})))]),
        session("b", 0, 1, vec![read(2, widget(2, json!({"color": "red"})))]),
        session("c", 0, 600, vec![read(3, widget(3, json!({})))]),
    ]);
    let d = drift_of(&model, "GET", "/widgets/");
    assert_eq!(kinds(d), [(DriftKind::FieldRemoved, "/color")]);
    assert_eq!(d[0].since, "2026-01-01T10:00:00Z");
}

#[test]
fn one_run_spanning_midnight_is_one_run() {
    // 23:30, 23:50 and 00:20 the next day: one sitting, no pause longer than an hour.
    let model = synth(&[
        session(
            "a",
            0,
            23 * 60 + 30,
            vec![read(1, widget(1, json!({"color": "red"})))],
        ),
        session(
            "b",
            0,
            23 * 60 + 50,
            vec![read(2, widget(2, json!({"color": "red"})))],
        ),
        session("c", 1, 20, vec![read(3, widget(3, json!({})))]),
    ]);
    assert!(drift_of(&model, "GET", "/widgets/").is_empty());
}

#[test]
fn a_run_is_named_after_its_first_session_even_when_a_route_joins_it_later() {
    // The newest run starts at day 3 00:00 with another route; the widget read comes 40 minutes
    // later in the same run.
    let model = synth(&[
        session("a", 0, 0, vec![read(1, widget(1, json!({"color": "red"})))]),
        session("b", 1, 0, vec![read(2, widget(2, json!({"color": "red"})))]),
        session(
            "c",
            3,
            0,
            vec![ex("GET", "/ping", 200, json!({"ok": true}))],
        ),
        session("d", 3, 40, vec![read(3, widget(3, json!({})))]),
    ]);
    let d = drift_of(&model, "GET", "/widgets/");
    assert_eq!(kinds(d), [(DriftKind::FieldRemoved, "/color")]);
    assert_eq!(d[0].since, "2026-01-04T00:00:00Z");
}

#[test]
fn one_earlier_answer_is_not_enough_evidence() {
    let model = synth(&[
        session("a", 0, 0, vec![read(1, widget(1, json!({"color": "red"})))]),
        session("c", 5, 0, vec![read(3, widget(3, json!({})))]),
    ]);
    assert!(drift_of(&model, "GET", "/widgets/").is_empty());
}

#[test]
fn a_field_some_earlier_answers_lacked_is_optional_not_removed() {
    let model = synth(&[
        session("a", 0, 0, vec![read(1, widget(1, json!({"color": "red"})))]),
        session("b", 1, 0, vec![read(2, widget(2, json!({})))]),
        session(
            "c",
            1,
            1,
            vec![read(4, widget(4, json!({"color": "blue"})))],
        ),
        session("d", 5, 0, vec![read(3, widget(3, json!({})))]),
    ]);
    assert!(drift_of(&model, "GET", "/widgets/").is_empty());
}

#[test]
fn error_answers_do_not_count_for_shape_and_sessions_without_a_time_take_no_part() {
    let mut untimed = session("z", 0, 0, vec![read(9, widget(9, json!({"color": "red"})))]);
    untimed.manifest.start_time_us = 0;
    let model = synth(&[
        session(
            "a",
            0,
            0,
            vec![ex("GET", "/widgets/1", 404, json!({"error": "x"}))],
        ),
        untimed,
        session("b", 1, 0, vec![read(2, widget(2, json!({"color": "red"})))]),
        session("c", 5, 0, vec![read(3, widget(3, json!({})))]),
    ]);
    assert!(drift_of(&model, "GET", "/widgets/").is_empty());
}

#[test]
fn drift_is_the_same_whatever_order_the_sessions_arrive_in() {
    let old = |id| widget(id, json!({"color": "red"}));
    let mut sessions = vec![
        session("a", 0, 0, vec![read(1, old(1))]),
        session("b", 1, 0, vec![read(2, old(2))]),
        session("c", 9, 0, vec![read(3, widget(3, json!({"size": 1})))]),
    ];
    let a = wraith_model::to_canonical_json(&synth(&sessions)).unwrap();
    sessions.reverse();
    let b = wraith_model::to_canonical_json(&synth(&sessions)).unwrap();
    assert_eq!(a, b);
    assert!(a.contains("\"drift\":"), "{a}");
}

#[test]
fn an_undrifted_route_writes_no_drift_key() {
    let model = synth(&[
        session("a", 0, 0, vec![read(1, widget(1, json!({})))]),
        session("b", 1, 0, vec![read(2, widget(2, json!({})))]),
        session("c", 2, 0, vec![read(3, widget(3, json!({})))]),
    ]);
    let text = wraith_model::to_canonical_json(&model).unwrap();
    assert!(!text.contains("\"drift\""), "{text}");
}

/// What the shared corpora show (run with `--ignored --nocapture`; the figures go into reports).
#[test]
#[ignore = "synthesizes whole corpora; run with --ignored --nocapture"]
fn print_corpora_drift() {
    let demo =
        wraith_recording::read_sessions(&common::corpora().join("wraith-demo/recordings/sessions"))
            .unwrap();
    for (name, sessions) in [
        (
            "mastodon",
            common::load_corpus("mastodon", "http://localhost:3000"),
        ),
        (
            "linode",
            common::load_corpus("linode", "https://api.linode.com"),
        ),
        ("wraith-demo", demo),
    ] {
        let model = synth(&sessions);
        let drifted: Vec<_> = model
            .routes
            .iter()
            .filter(|r| !r.drift.is_empty())
            .collect();
        println!(
            "== {name}: {} of {} routes drifted",
            drifted.len(),
            model.routes.len()
        );
        for r in drifted {
            for d in &r.drift {
                println!(
                    "  {} {}  {} {} {:?}->{:?} ({} earlier, {} newer, since {})",
                    r.method,
                    r.path,
                    d.kind.as_str(),
                    d.at,
                    d.earlier,
                    d.newer,
                    d.earlier_answers,
                    d.newer_answers,
                    d.since
                );
            }
        }
    }
}

/// The Mastodon corpus was recorded against one server version: however its sessions are
/// split into an earlier and a newer run, nothing drifted (what the request or the session's
/// own state decided is not drift).
#[test]
fn one_server_versions_recordings_split_into_two_runs_show_no_drift() {
    let mut sessions = common::load_corpus("mastodon", "http://localhost:3000");
    for (i, s) in sessions.iter_mut().enumerate() {
        s.manifest.start_time_us = JAN1_US + if i % 3 == 0 { 5 * DAY_US } else { 0 };
    }
    let model = synth(&sessions);
    let drifted: Vec<String> = model
        .routes
        .iter()
        .filter(|r| !r.drift.is_empty())
        .map(|r| format!("{} {}: {:?}", r.method, r.path, r.drift))
        .collect();
    assert!(drifted.is_empty(), "{drifted:#?}");
}
