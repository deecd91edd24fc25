//! `wraith check --target` judges a served twin exactly as the in-memory check judges the same
//! twin, although `serve` rewrites the recorded upstream origin in its answers to its own
//! (the self-URL rewrite): the answer is read in the recording's origin again before judging.
//! Black-box: the real binary (`import`, `synth`, `serve`, `check`) on HARs written here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;
use crate::check_support::notes;

use check_support::*;
use notes::entry;
use serde_json::{Value, json};

const BASE: &str = "https://api.profiles.test/v1";

/// Three recorded sessions read the same profile with the same request; the server answered
/// each with another avatar URL under the upstream origin (so the twin answers two of them
/// with another run's avatar, a recorded value: passable at an `enum` position).
fn profiles_twin() -> DemoTwin {
    let t = DemoTwin::init("profiles", BASE);
    for n in 1..=3 {
        let me = json!({
            "id": "u_1",
            "name": "Ada",
            "avatar": format!("https://api.profiles.test/avatars/{n}.png"),
            "self": "https://api.profiles.test/v1/me",
        });
        let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
        "pages": [], "entries": [
            entry("GET", &format!("{BASE}/me"), None, 200, &me),
            entry("GET", &format!("{BASE}/me"), None, 200, &me),
        ]}});
        t.import_har(&format!("profile-{n}"), &har);
    }
    t.synth();
    t
}

/// Each exchange's score, by session and position.
fn scores(report: &Value) -> Vec<(String, u64, u64)> {
    report["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["session"].as_str().unwrap().to_string(),
                e["exchange"].as_u64().unwrap(),
                e["score_bp"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn check_target_scores_self_rewritten_urls_as_the_in_memory_check_does() {
    let t = profiles_twin();
    let memory = stdout_json(&t.run(&["check", "--json"]));
    assert_eq!(memory["exchanges_total"], 6);
    // In memory, another run's avatar is one of the recorded values: every exchange passes.
    assert_eq!(memory["score_bp"], 10_000, "{:#}", memory["divergences"]);

    let (mut child, url) = t.serve();
    // The served answer carries the twin's own origin where the recordings had the upstream's.
    let (_, served) = http_get(&format!("{url}/v1/me"));
    let target = t.run(&["check", "--target", &url, "--json"]);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        served.contains(&format!("\"self\":\"{url}/v1/me\"")),
        "serve rewrote the self URL: {served}"
    );
    let target = stdout_json(&target);
    assert_eq!(target["mode"], "target");
    assert_eq!(
        target["score_bp"], memory["score_bp"],
        "{:#}",
        target["divergences"]
    );
    assert_eq!(scores(&target), scores(&memory));
    assert_eq!(target["divergence_count"], 0);
}
