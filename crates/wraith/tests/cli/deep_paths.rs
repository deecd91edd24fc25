//! A recorded path thousands of segments deep: synth builds its route trie one level per
//! segment, so such a path is left out of the model with a warning rather than taking synth
//! (and `serve`'s auto-synth, `check --holdout`) down. Black-box: the real binary on a HAR
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.deep.test";

#[test]
fn a_path_thousands_of_segments_deep_is_left_out_of_the_model_with_a_warning() {
    let t = Twin::init("deep", ORIGIN);
    let deep = format!("/{}b", "a/".repeat(20_000));
    har::import_runs(
        &t,
        vec![
            vec![
                har::entry(ORIGIN, "GET", &deep, None, &json!({})),
                har::entry(ORIGIN, "GET", "/v1/things/t_1", None, &json!({"id": "t_1"})),
            ],
            vec![har::entry(
                ORIGIN,
                "GET",
                "/v1/things/t_2",
                None,
                &json!({"id": "t_2"}),
            )],
        ],
    );
    let twin = t.path_str();
    let out = t.wraith(&["synth", &twin]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "synth: {stderr}");
    assert!(
        stderr.contains("warning:") && stderr.contains("20001 segments"),
        "{stderr}"
    );
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.root.join("model/twin.wir.json")).unwrap())
            .unwrap();
    let paths: Vec<&str> = model["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["/v1/things/:param"]);
    assert!(
        model["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["code"] == "path-too-deep"),
        "{}",
        model["diagnostics"]
    );
    // The route no model holds is shown cut short in check's summary, whole in its report.
    let out = t.wraith(&["check", &twin]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().all(|l| l.len() < 1_000) && stdout.contains("… (400"),
        "{}",
        stdout.chars().take(2_000).collect::<String>()
    );
    // `check --holdout` synthesizes its training half itself, through the same rule.
    let out = t.wraith(&["check", &twin, "--holdout", "2", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check --holdout: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(report["score_bp"].is_u64(), "{report}");
}
