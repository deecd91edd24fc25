//! `wraith check` judges each recording in the session's names: a value the twin told the
//! session another name for (a key its create answered) is renamed in the recording before the
//! twin's outbound policy transforms it, as a whole value and as a whole token inside a string
//! (a URL). So a list showing the session's own key, with the secret placeholder seeded by that
//! key and a URL naming it, passes; a list naming any other value fails. Black-box: the real
//! binary on a keys twin built from HARs written here (every recorded run creates a key with the
//! same request, lists keys, deletes its key).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support::fake_target;
use crate::support;

use std::process::{Command, Output};

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "session-names-test-key");
const ORIGIN: &str = "https://api.keys.test";

/// The key run `n` created, as lists show it: with `secret`, its secret recorded redacted;
/// its URL naming it.
fn key(id: u64, secret: bool) -> Value {
    let mut k = json!({"id": id, "label": "ci", "url": format!("/v1/keys/{id}")});
    if secret {
        k["secret"] = json!("[REDACTED]");
    }
    k
}

/// The create's answer: the secret (with `secret`) shown once, sanitized by the recorder; no
/// URL, so the session learns the key alone, never a URL as a whole value.
fn created(id: u64, secret: bool) -> Value {
    let mut k = json!({"id": id, "label": "ci"});
    if secret {
        k["secret"] = json!("[SANITIZED]");
    }
    k
}

/// Run `n`: create a key (the same request in every run), list keys, delete the key. The
/// in-memory twin's records carry a secret; `--target` runs compare the recording without the
/// outbound policy, so theirs carry none, and run 1 also reads `GET /v1/keys/recent` after
/// its create (recorded by this run alone, so every value of its answer is a constant of the
/// template, the created key's URL included).
fn record(t: &Twin, n: u64, target: bool) {
    let id = 7_000 + n;
    let secret = !target;
    let mut entries = vec![har::entry(
        ORIGIN,
        "POST",
        "/v1/keys",
        Some(&json!({"label": "ci"})),
        &created(id, secret),
    )];
    // Before the list, whose URLs (a derived id there) would teach the session the URL as a
    // whole value.
    if target && n == 1 {
        entries.push(har::entry(
            ORIGIN,
            "GET",
            "/v1/keys/recent",
            None,
            &json!({"data": [key(id, false)]}),
        ));
    }
    entries.push(har::entry(
        ORIGIN,
        "GET",
        "/v1/keys",
        None,
        &json!({"data": [key(id, secret)], "results": 1}),
    ));
    entries.push(har::entry(
        ORIGIN,
        "DELETE",
        &format!("/v1/keys/{id}"),
        None,
        &json!({}),
    ));
    har::import(t, &[KEY], &format!("keys{n}.har"), entries);
}

fn check(t: &Twin, extra: &[&str]) -> (Output, Value) {
    let out = Command::new(support::bin())
        .current_dir(t.tmp.path())
        .env(KEY.0, KEY.1)
        .args(["check", &t.path_str(), "--json"])
        .args(extra)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check --json printed no report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, report)
}

#[test]
fn check_list_showing_the_secret_of_the_sessions_own_key_passes_in_memory() {
    let t = har::synth_twin("keys", ORIGIN, &[KEY], 3, |t, n| record(t, n, false));
    let (out, r) = check(&t, &[]);
    // Three runs created their keys with the same request: the twin answers them with one
    // key, so at least two sessions were told another key than they recorded (their deletes
    // name it), and their lists carry that key's secret placeholder, seeded by the key.
    assert!(
        r["requests_rewritten"].as_u64().unwrap() >= 2,
        "{}",
        r["requests_rewritten"]
    );
    assert_eq!(r["score_bp"], 10_000, "{:#}", r["divergences"]);
    assert_eq!(out.status.code(), Some(0));
}

/// A twin over HTTP answering every create with key 9001, and lists with it; its
/// `/v1/keys/recent` names key `recent`.
fn fake_target(recent: u64) -> String {
    fake_target::start(move |c| {
        let (status, route, body) = match (c.method, c.target.split('?').next().unwrap_or("")) {
            ("POST", _) => (200, "POST /v1/keys", created(9_001, false)),
            ("DELETE", _) => (200, "DELETE /v1/keys/:param", json!({})),
            (_, "/v1/keys/recent") => (
                200,
                "GET /v1/keys/recent",
                json!({"data": [{"id": 9_001, "label": "ci", "url": format!("/v1/keys/{recent}")}]}),
            ),
            _ => (
                200,
                "GET /v1/keys",
                json!({"data": [key(9_001, false)], "results": 1}),
            ),
        };
        fake_target::Answer {
            status,
            provenance: "template",
            route: route.into(),
            body,
        }
    })
}

fn recent_twin() -> Twin {
    har::synth_twin("keys", ORIGIN, &[KEY], 3, |t, n| record(t, n, true))
}

fn recent_divergences(r: &Value) -> Vec<&Value> {
    r["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["route"] == "GET /v1/keys/recent")
        .collect()
}

#[test]
fn check_url_embedding_the_key_the_twin_gave_the_session_passes() {
    let t = recent_twin();
    let (_, r) = check(&t, &["--target", &fake_target(9_001)]);
    assert!(recent_divergences(&r).is_empty(), "{:#}", r["divergences"]);
    assert_eq!(
        r["exchanges_passed"], r["exchanges_total"],
        "{:#}",
        r["divergences"]
    );
}

#[test]
fn check_url_embedding_another_key_than_the_twin_gave_the_session_fails() {
    let t = recent_twin();
    for other in [9_002, 7_001] {
        let (out, r) = check(&t, &["--target", &fake_target(other)]);
        let found = recent_divergences(&r);
        assert_eq!(found.len(), 1, "{other}: {:#}", r["divergences"]);
        assert_eq!(found[0]["path"], "body.data[0].url");
        assert_eq!(
            found[0]["expected"], "/v1/keys/9001",
            "the recording in the session's names"
        );
        assert_eq!(found[0]["actual"], format!("/v1/keys/{other}"));
        assert_eq!(out.status.code(), Some(2));
    }
}
