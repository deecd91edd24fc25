//! `wraith check` says why exchanges failed and what the recordings allow at best. Black-box:
//! the real binary on tiny twins (`testdata/check/causes/`): one whose two sessions send the
//! same first request and recorded different answers to it, one of them also reading a route
//! only it recorded; one whose second session sends a body field the first never sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;

use std::path::Path;
use std::process::Command;

use check_support::*;
use serde_json::{Value, json};

fn causes_twin() -> DemoTwin {
    twin_of("regions", &["regions-1.har", "regions-2.har"])
}

/// A twin `name` imported from `files` of `testdata/check/causes/`, synthesized.
fn twin_of(name: &str, files: &[&str]) -> DemoTwin {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .current_dir(tmp.path())
        .args(["init", name, "--base-url", "https://api.causes.test/v1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = DemoTwin {
        root: tmp.path().join("twins").join(name),
        tmp,
    };
    for file in files {
        let har = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/check/causes")
            .join(file);
        let out = t.run(&["import", &har.to_string_lossy()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    t.synth();
    t
}

/// The JSON report of `wraith check --holdout 2` on a twin of two sessions: trained on the
/// first, the second held out.
fn held_out_report(t: &DemoTwin) -> Value {
    let r = stdout_json(&t.run(&["check", "--holdout", "2", "--json"]));
    assert_eq!(r["holdout"]["training_sessions"], 1);
    r
}

/// `(path, cause)` of every replayed exchange.
fn causes(r: &Value) -> Vec<(String, Value)> {
    r["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap().to_string(), e["cause"].clone()))
        .collect()
}

#[test]
fn identical_requests_recorded_with_different_answers_fail_as_recordings_disagree() {
    let t = causes_twin();
    let out = t.run(&["check", "--json"]);
    let r = stdout_json(&out);
    // One of the two region lists is answered; the other session's fails, and no twin could
    // do better: 2 of 3 exchanges at most.
    let mut got = causes(&r);
    got.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.to_string().cmp(&b.1.to_string())));
    assert_eq!(
        got,
        vec![
            ("/v1/plans".to_string(), Value::Null),
            ("/v1/regions".to_string(), json!("recordings_disagree")),
            ("/v1/regions".to_string(), Value::Null),
        ],
        "{:#}",
        r["exchanges"]
    );
    assert_eq!(r["causes"], json!({"recordings_disagree": 1}));
    let route = r["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["route"] == "GET /v1/regions")
        .unwrap();
    assert_eq!(route["causes"], json!({"recordings_disagree": 1}));
    assert_eq!(
        r["ceiling"],
        json!({
            "score_bp": 6666, "exchanges": 3, "passable": 2, "lost_unrecorded_route": 0,
            "lost_recordings_disagree": 1, "disagreeing_groups": 1, "method": "exact"
        })
    );
    assert_eq!(r["score_bp"], 6666, "the twin reaches the ceiling here");
    // The text summary names them in one line, and the HTML report shows them.
    let text = String::from_utf8_lossy(&t.run(&["check"]).stdout).to_string();
    assert!(
        text.contains("causes: recordings_disagree 1; ceiling 6666"),
        "{text}"
    );
    assert!(
        text.contains("GET /v1/regions  [array_length_mismatch 1]  causes: recordings_disagree 1"),
        "{text}"
    );
    let html = std::fs::read_to_string(t.root.join("reports/check.html")).unwrap();
    assert!(html.contains("recordings_disagree"), "{html}");
    assert!(html.contains("Ceiling"), "{html}");
}

#[test]
fn held_out_route_only_the_held_out_session_recorded_is_unrecorded_route() {
    let t = causes_twin();
    let r = held_out_report(&t);
    // The held-out session's region list disagrees with the training session's recording of
    // the same request; its plans route was never recorded in training.
    assert_eq!(
        causes(&r),
        vec![
            ("/v1/regions".to_string(), json!("recordings_disagree")),
            ("/v1/plans".to_string(), json!("unrecorded_route")),
        ],
        "{:#}",
        r["exchanges"]
    );
    assert_eq!(
        r["causes"],
        json!({"recordings_disagree": 1, "unrecorded_route": 1})
    );
    // Among the held-out recordings the region list is alone (passable); the plans are lost.
    assert_eq!(r["ceiling"]["score_bp"], 5000);
    assert_eq!(r["ceiling"]["lost_unrecorded_route"], 1);
}

#[test]
fn held_out_request_with_a_field_training_never_sent_is_unrecorded_input() {
    let t = twin_of("notes", &["notes-1.har", "notes-2.har"]);
    let r = held_out_report(&t);
    // The first create sent only a title, as training did: its failure is the twin's. The
    // second sent `pinned`, which no training request of the route carried; that label comes
    // before the earlier failure's.
    let labels: Vec<Value> = r["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["cause"].clone())
        .collect();
    assert_eq!(
        labels,
        vec![json!("twin"), json!("unrecorded_input")],
        "{:#}",
        r["exchanges"]
    );
    assert_eq!(r["causes"], json!({"twin": 1, "unrecorded_input": 1}));
    // The report names the input, so a reader knows what to record.
    assert_eq!(r["exchanges"][1]["unrecorded_inputs"], json!(["/pinned"]));
    assert!(
        r["exchanges"][0].get("unrecorded_inputs").is_none(),
        "written only with the cause: {:#}",
        r["exchanges"][0]
    );
    // Not a bound: a twin could have generalized to the new field.
    assert_eq!(r["ceiling"]["passable"], 2);
    let text = String::from_utf8_lossy(&t.run(&["check", "--holdout", "2"]).stdout).to_string();
    assert!(text.contains("unrecorded_input 1"), "{text}");
    // The HTML report says what the label means.
    let html = std::fs::read_to_string(t.root.join("reports/check.html")).unwrap();
    assert!(
        html.contains("no training request of its route sent"),
        "{html}"
    );
}

#[test]
fn a_failure_after_an_earlier_one_names_it_and_the_report_counts_chains_by_their_first_cause() {
    let t = twin_of("chain", &["chain-1.har", "chain-2.har"]);
    let r = held_out_report(&t);
    // The held-out region list disagrees with the training one; the region read that follows
    // fails too (training showed a `label` this recording lacks), after that first failure.
    assert_eq!(
        causes(&r),
        vec![
            ("/v1/regions".to_string(), json!("recordings_disagree")),
            (
                "/v1/regions/eu-west".to_string(),
                json!("after_earlier_divergence")
            ),
        ],
        "{:#}",
        r["exchanges"]
    );
    let exchanges = r["exchanges"].as_array().unwrap();
    assert_eq!(exchanges[1]["after_exchange"], 0, "{:#}", exchanges[1]);
    assert!(
        exchanges[0].get("after_exchange").is_none(),
        "only an after_earlier_divergence exchange names the failure it follows: {:#}",
        exchanges[0]
    );
    assert_eq!(
        r["after_earlier_divergence_by_first_cause"],
        json!({"recordings_disagree": 1})
    );
    // The text summary and the HTML report say where the chains start.
    let text = String::from_utf8_lossy(&t.run(&["check", "--holdout", "2"]).stdout).to_string();
    assert!(
        text.contains(
            "after_earlier_divergence by its session's first failure: recordings_disagree 1"
        ),
        "{text}"
    );
    let html = std::fs::read_to_string(t.root.join("reports/check.html")).unwrap();
    assert!(
        html.contains("1 after a <span class=cat>recordings_disagree</span>"),
        "{html}"
    );
}

#[test]
fn a_report_without_chains_of_failures_writes_no_first_cause_counts() {
    let t = causes_twin();
    let r = stdout_json(&t.run(&["check", "--json"]));
    assert!(
        r.get("after_earlier_divergence_by_first_cause").is_none(),
        "{:#}",
        r
    );
}
