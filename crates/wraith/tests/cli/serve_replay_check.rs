//! `wraith check --target` against a served twin whose declared outbound policy rewrites
//! recorded bytes: the recordings are put through the same policy before the diff, so a
//! disclosed replay (`;outbound-policy=applied`) compares position by position, with its
//! relaxations dropped, and scores exactly like the in-process check. Black-box: the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::process::Command;

use serde_json::Value;
use support::Twin;

const ENV: [(&str, &str); 1] = [("WRAITH_HMAC_KEY", "serve-replay-test-key")];

/// The example shop twin with a declared rule tokenizing every `object` field.
fn shop_twin_with_rule() -> Twin {
    let twin = support::example_shop_twin();
    let root = &twin.root;
    let scrub = root.join("scrub.toml");
    let mut text = std::fs::read_to_string(&scrub).unwrap();
    text.push_str(
        "\n[[rules]]\nscope = \"jsonpath\"\nmatch = \"$.object\"\naction = \"tokenize\"\n",
    );
    std::fs::write(&scrub, text).unwrap();
    twin
}

fn check(t: &Twin, extra: &[&str]) -> Value {
    let out = Command::new(support::bin())
        .current_dir(t.tmp.path())
        .envs(ENV)
        .args(["check", &t.path_str()])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "check failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(t.path().join("reports/check.json")).unwrap())
        .unwrap()
}

#[tokio::test]
async fn check_target_compares_recordings_in_the_twins_outbound_policy_space() {
    let t = shop_twin_with_rule();
    let s = t.serve_env(&[], &ENV);
    // The served answers really are rewritten: `object` is a token on the wire.
    let list = s.get("/orders", Some("probe")).await.json();
    let id = list["data"][0]["id"].as_str().unwrap().to_string();
    let served = s.get(&format!("/orders/{id}"), Some("probe")).await.json();
    assert!(
        served["object"]
            .as_str()
            .is_some_and(|o| o.starts_with("wraith_tok_")),
        "{served}"
    );
    let over_http = check(&t, &["--target", &s.url]);
    assert!(over_http["replay_claims"].as_u64().unwrap() > 0);
    let divergent: Vec<&str> = over_http["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["path"].as_str())
        .collect();
    assert!(
        !divergent.iter().any(|p| p.ends_with(".object")),
        "the policy's rewrite must not read as divergence: {divergent:?}"
    );
    let in_process = check(&t, &[]);
    assert_eq!(over_http["score_bp"], in_process["score_bp"]);
    assert_eq!(over_http["replay_claims"], in_process["replay_claims"]);
}
