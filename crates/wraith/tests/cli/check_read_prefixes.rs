//! `wraith check` and a field a create answers whole and later views show as a prefix (a
//! secret shown once): a held-out session reads its record back, and the read shows the first
//! 16 characters of the code the twin's create gave it. Judged in the session's names, the
//! recorded read's prefix is the prefix of the recorded code the twin answered as its own.
//! Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "check-read-prefixes-test-key");
const ORIGIN: &str = "https://api.pairings.test";

fn pairing(id: u64, label: &str, code: &str) -> Value {
    json!({"id": id, "label": label, "code": code})
}

/// A 48-character hex code, different for every `n`.
fn code(n: u64) -> String {
    (0..6)
        .map(|i| format!("{:08x}", (n + 1) * 2_654_435_761 + i * 40_503))
        .collect()
}

/// Recorded session `n` (started at minute `n`, so the fifth is the one `--holdout 5` holds
/// out): create pairing `id`, read it back when `reads`, list the pairings.
fn session(t: &Twin, n: u64, reads: bool) {
    let id = 9_000 + n;
    let whole = code(n);
    let shown = &whole[..16];
    let label = format!("desk {n}");
    let mut entries = vec![har::entry(
        ORIGIN,
        "POST",
        "/v1/pairings",
        Some(&json!({ "label": label })),
        &pairing(id, &label, &whole),
    )];
    if reads {
        entries.push(har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/pairings/{id}"),
            None,
            &pairing(id, &label, shown),
        ));
    }
    entries.push(har::entry(
        ORIGIN,
        "GET",
        "/v1/pairings",
        None,
        &json!({"data": [pairing(id, &label, shown)]}),
    ));
    for e in &mut entries {
        e["startedDateTime"] = json!(format!("2026-06-01T12:{n:02}:00.000Z"));
    }
    har::import(t, &[KEY], &format!("s{n}.har"), entries);
}

#[test]
fn a_held_out_read_of_a_shown_prefix_is_judged_against_the_twins_own_code() {
    // One training session reads its pairing back, so the read's template holds that
    // session's prefix as a constant: only the session's names can make the held-out read pass.
    let t = Twin::init("pairings", ORIGIN);
    for n in 1..=5 {
        session(&t, n, n == 1 || n == 5);
    }
    let out = std::process::Command::new(support::bin())
        .current_dir(t.tmp.path())
        .env(KEY.0, KEY.1)
        .args(["check", &t.path_str(), "--holdout", "5", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let held_out = report["holdout"]["held_out_sessions"]
        .as_array()
        .expect("held-out sessions");
    assert_eq!(held_out.len(), 1, "{:#}", report["holdout"]);
    let read = report["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["session"] == held_out[0] && e["route"] == "GET /v1/pairings/:param")
        .unwrap_or_else(|| panic!("the held-out read: {:#}", report["exchanges"]));
    let at_code: Vec<&Value> = report["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["session"] == held_out[0] && d["path"] == "body.code")
        .collect();
    assert!(at_code.is_empty(), "{at_code:#?}");
    assert_eq!(read["score_bp"], json!(10_000), "{read:#}");
}
