//! `wraith check` and fixtures: answers served from a fixture entity (provenance `fixture`) are
//! output the twin's owner wrote, so their shape is judged against the recordings like a Lua
//! handler's (`authored_deviations`, `[[deviations]]`, `deviation_policy`); and `--fixture`
//! seeds every namespace of a `--holdout` run. Black-box: the real binary on a small notes twin
//! (`check_support/notes.rs`), checked `--target` a tiny HTTP twin
//! (`check_support/fake_target.rs`) whose note lists come from a "fixture"; and on a copy of
//! the bundled example shop twin.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;
use crate::check_support::fake_target;
use crate::check_support::notes;

use std::collections::BTreeMap;
use std::sync::Mutex;

use check_support::*;
use serde_json::{Value, json};

/// Creates are answered as a template would (the text echoed, a minted id); lists from a
/// fixture whose note spells `id` as `Id`.
fn fixture_lists_target() -> String {
    let texts = Mutex::new(BTreeMap::<String, String>::new());
    fake_target::start(move |c| {
        if c.method == "POST" {
            let text = serde_json::from_slice::<Value>(c.body).unwrap()["text"].clone();
            let t = text.as_str().unwrap_or("").to_string();
            texts.lock().unwrap().insert(c.session.to_string(), t);
            fake_target::Answer {
                status: 201,
                provenance: "template",
                route: "POST /v1/notes".into(),
                body: json!({"id": "note_minted000001", "object": "note", "text": text}),
            }
        } else {
            let text = texts
                .lock()
                .unwrap()
                .get(c.session)
                .cloned()
                .unwrap_or_default();
            let note = json!({"Id": "note_minted000001", "object": "note", "text": text});
            fake_target::Answer {
                status: 200,
                provenance: "fixture",
                route: "GET /v1/notes".into(),
                body: json!({"object": "list", "data": [note]}),
            }
        }
    })
}

fn config(t: &DemoTwin, toml: &str) {
    let p = t.root.join("wraith.toml");
    let mut text = std::fs::read_to_string(&p).unwrap();
    text.push('\n');
    text.push_str(toml);
    std::fs::write(p, text).unwrap();
}

#[test]
fn check_fixture_answer_unlike_the_recordings_is_an_authored_deviation_that_fails_the_run() {
    let t = notes::notes_twin();
    let url = fixture_lists_target();
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    assert_eq!(r["authored"]["fixture_answers"], 3);
    assert_eq!(r["authored"]["served_answers"], 0);
    assert_eq!(r["fiction"]["authored_answers"], 3);
    let devs = r["authored_deviations"].as_array().unwrap();
    assert_eq!(devs.len(), 3, "{devs:#?}");
    for d in devs {
        assert_eq!(d["rule"], "miscased_key");
        assert_eq!(d["answer"], "fixture");
        assert_eq!(d["route"], "GET /v1/notes");
        assert_eq!(d["path"], "body.data[0].id");
        assert_eq!(d["actual"], "Id");
        assert_eq!(d["severity"], "error");
        assert!(d["reason"].as_str().unwrap().contains("fixture"), "{d}");
    }
    assert_eq!(r["authored"]["gate_passed"], false);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn check_html_report_labels_fixture_answers_as_the_json_does() {
    let t = notes::notes_twin();
    let url = fixture_lists_target();
    t.run(&["check", "--target", &url]);
    let html = std::fs::read_to_string(t.root.join("reports/check.html")).unwrap();
    assert!(html.contains("miscased_key"), "{html}");
    assert!(html.contains("(fixture)"), "{html}");
    assert!(!html.contains("(probe)"), "{html}");
}

#[test]
fn check_fixture_deviation_under_warn_policy_is_a_warning() {
    let t = notes::notes_twin();
    config(
        &t,
        "[handlers]\ndeviation_policy = \"warn\"\n[diff]\nrequired_score = 0.1\nsession_pass_rate = 0.0\n[diff.thresholds]\nbody_structure = 0.0\n",
    );
    let url = fixture_lists_target();
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    assert_eq!(r["authored"]["unmarked"], 3);
    assert_eq!(r["authored_deviations"][0]["severity"], "warning");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn check_declared_fixture_deviation_is_marked_and_its_divergences_exempt() {
    let t = notes::notes_twin();
    config(
        &t,
        "[[deviations]]\nroute = \"GET /v1/notes\"\npath = \"body.data\"\nreason = \"the demo data names its key Id\"\n",
    );
    let url = fixture_lists_target();
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    assert_eq!(r["authored"]["marked"], 3);
    assert_eq!(r["authored"]["unmarked"], 0);
    let d = &r["authored_deviations"][0];
    assert_eq!(d["marked"], true);
    assert_eq!(d["severity"], "info");
    assert_eq!(d["declared_reason"], "the demo data names its key Id");
    // The list's missing `id` and extra `noteId` are declared: nothing is left to fail.
    assert!(r["authored"]["exempted_divergences"].as_u64().unwrap() >= 3);
    assert_eq!(r["score_bp"], 10_000, "{:#}", r["divergences"]);
    assert_eq!(out.status.code(), Some(0));
}

/// The example shop twin (two recorded sessions, a default fixture set adding two customers)
/// with its first session recorded a second time, so that under `--holdout 2` the held-out
/// session is one the training sessions also recorded, and a set with one order.
fn shop_with_a_repeated_session() -> DemoTwin {
    let t = DemoTwin::example_shop();
    t.add_session_copies(1);
    let set = t.root.join("state/fixtures/one-order");
    std::fs::create_dir_all(&set).unwrap();
    std::fs::write(
        set.join("fixture.json"),
        r#"{"entities": {"orders": [{"id": "ord_FixtureOrd0001", "object": "order", "amount": 100, "currency": "usd", "status": "pending"}]}}"#,
    )
    .unwrap();
    t
}

#[test]
fn check_holdout_with_fixture_seeds_its_namespaces_and_exits_by_the_held_out_half() {
    let t = shop_with_a_repeated_session();
    let plain = stdout_json(&t.run(&["check", "--holdout", "2", "--json"]));
    let h = &plain["holdout"];
    assert_eq!(h["held_out_sessions"].as_array().unwrap().len(), 1);
    // Without --fixture nothing is seeded, not even the default set: both halves replay
    // exactly what the recordings teach.
    assert_eq!(h["in_sample_score_bp"], 10_000, "{h:#}");
    assert_eq!(h["held_out_score_bp"], 10_000, "{h:#}");
    assert_eq!(plain["fixture"], Value::Null);

    let out = t.run(&[
        "check",
        "--holdout",
        "2",
        "--fixture",
        "one-order",
        "--json",
    ]);
    let r = stdout_json(&out);
    assert_eq!(r["fixture"], "one-order");
    let h = &r["holdout"];
    // The seeded order shows up in the training half's order lists. The held-out session
    // lists orders only by its own customer, which the seeded order does not name, so its
    // lists keep the order out: that half replays as recorded.
    assert!(h["in_sample_score_bp"].as_u64().unwrap() < 10_000, "{h:#}");
    assert_eq!(h["held_out_score_bp"], 10_000, "{h:#}");
    // The held-out half decides the exit code.
    assert_eq!(out.status.code(), Some(0));

    let out = t.run(&["check", "--holdout", "2", "--fixture", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("nope") && e.contains("one-order"), "{e}");
}

/// The bundled example twin as shipped: its default fixture set adds two customers to every
/// session, so its customer lists are fixture answers that show and count them, and its
/// `wraith.toml` declares exactly that. Everything else reproduces the recordings.
#[test]
fn the_bundled_shop_twin_checks_clean_with_its_fixture_lists_declared() {
    let t = DemoTwin::example_shop();
    assert!(t.run(&["synth"]).status.success());
    let out = t.run(&["check", "--json"]);
    let r = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{:#}", r["divergences"]);
    assert_eq!(r["score_bp"], 10_000, "{:#}", r["divergences"]);
    // The exemption is the declaration's doing, on fixture answers only.
    assert!(
        r["authored"]["fixture_answers"].as_u64().unwrap() > 0,
        "{:#}",
        r["authored"]
    );
    assert!(
        r["authored"]["exempted_divergences"].as_u64().unwrap() > 0,
        "{:#}",
        r["authored"]
    );
    let lint = t.run(&["lint", "--json"]);
    let text = String::from_utf8_lossy(&lint.stdout);
    assert!(!text.contains("deviation-unbound-route"), "{text}");
}

/// A declaration is bound (lint says nothing) when a fixture set's records reach its route: a
/// fixture answer, like a handler's, is authored output that can deviate there.
#[test]
fn lint_binds_a_deviation_to_a_route_whose_records_a_fixture_set_seeds() {
    let t = notes::notes_twin();
    assert!(t.run(&["synth"]).status.success());
    config(
        &t,
        "[[deviations]]\nroute = \"GET /v1/notes\"\npath = \"body.data\"\nreason = \"seeded notes\"\n",
    );
    let unbound = |t: &DemoTwin| {
        let out = t.run(&["lint", "--json"]);
        String::from_utf8_lossy(&out.stdout).contains("deviation-unbound-route")
    };
    assert!(
        unbound(&t),
        "no handler and no fixture: nothing can deviate there"
    );
    let set = t.root.join("state/fixtures/default");
    std::fs::create_dir_all(&set).unwrap();
    std::fs::write(
        set.join("fixture.json"),
        r#"{"entities": {"notes": [{"id": "note_seeded", "object": "note", "text": "hi"}]}}"#,
    )
    .unwrap();
    assert!(!unbound(&t));
    // A set naming the type with no record seeds none: nothing can deviate there.
    std::fs::write(set.join("fixture.json"), r#"{"entities": {"notes": []}}"#).unwrap();
    assert!(unbound(&t), "an empty list of records seeds nothing");
}

/// Without a model, which routes a handler or a fixture set answers is unknown: lint says
/// nothing of a declaration's route (the bundled twin's are bound once synthesized).
#[test]
fn lint_says_nothing_of_a_deviations_route_before_the_twin_is_synthesized() {
    let t = DemoTwin::example_shop();
    let out = t.run(&["lint", "--json"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("deviation-unbound-route"), "{text}");
}
