//! A field a create answers whole and later views show as a prefix (a secret shown once), end
//! to end: recorded sessions create a pairing (its `code` answered whole), read it back and
//! list the pairings, the read and the list showing only the code's first 16 characters.
//! Synth learns the prefix from those recordings; the served twin answers its own create's
//! code whole and shows its first 16 characters on the read and in the list; and `wraith
//! check` judges a held-out read of that prefix in the session's names, against the prefix of
//! the code the twin's create gave it. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "read-prefixes-test-key");
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

#[tokio::test]
async fn a_created_code_shows_whole_once_then_as_its_first_16_characters() {
    let t = har::synth_twin("pairings", ORIGIN, &[KEY], 3, |t, n| session(t, n, true));
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post(
            "/v1/pairings",
            Some("agent"),
            json!({"label": "a new desk"}),
        )
        .await;
    created.assert_status(200);
    let created = created.json();
    let whole = created["code"].as_str().expect("a code").to_string();
    assert!(
        whole.len() > 16,
        "the create answers the code whole: {created}"
    );
    assert_eq!(
        created["label"],
        json!("a new desk"),
        "rendered, not replayed: {created}"
    );
    let id = har::key_text(&created["id"]);

    let read = server
        .get(&format!("/v1/pairings/{id}"), Some("agent"))
        .await;
    read.assert_status(200);
    assert_eq!(read.json()["code"], json!(&whole[..16]));

    let listed = server.get("/v1/pairings", Some("agent")).await;
    listed.assert_status(200);
    let listed = listed.json();
    let item = listed["data"]
        .as_array()
        .and_then(|items| items.iter().find(|i| har::key_text(&i["id"]) == id))
        .unwrap_or_else(|| panic!("the list shows the created pairing: {listed}"));
    assert_eq!(item["code"], json!(&whole[..16]));
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
