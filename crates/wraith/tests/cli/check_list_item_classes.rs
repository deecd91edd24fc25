//! A list whose recorded pages showed one record (so its item template holds every field as
//! that record's constant) judges a held-out session's own record by the classes the record's
//! entity type records elsewhere: its `created_at` is a timestamp, as on the type's creates.
//! Black-box: the real binary (`import`, `synth`, `check --holdout 5`) on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::process::Command;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "list-item-classes-test-key");
const ORIGIN: &str = "https://api.groups.test";

fn group(n: usize, owner: &str) -> Value {
    json!({"id": format!("410{n}"), "name": format!("team {n}"), "owner_id": owner,
        "created_at": format!("2026-06-0{n}T12:00:0{n}.123Z")})
}

/// Session `n` (recorded on day `n`, so sessions sort by `n`) creates group `n` owned by user
/// `77n`; with `listed`, it then reads that user's groups twice.
fn import_session(t: &Twin, n: usize, listed: bool) {
    let owner = format!("77{n}");
    let g = group(n, &owner);
    let mut entries = vec![har::entry(
        ORIGIN,
        "POST",
        "/v1/groups",
        Some(&json!({"name": format!("team {n}"), "owner_id": owner})),
        &g,
    )];
    if listed {
        for _ in 0..2 {
            entries.push(har::entry(
                ORIGIN,
                "GET",
                &format!("/v1/users/{owner}/groups"),
                None,
                &json!([g]),
            ));
        }
    }
    for e in &mut entries {
        e["startedDateTime"] = json!(format!("2026-06-0{n}T12:00:00.000Z"));
    }
    har::import(t, &[KEY], &format!("s{n}.har"), entries);
}

#[test]
fn a_held_out_sessions_record_listed_under_a_one_record_list_template_passes_its_timestamp() {
    let t = Twin::init("groups", ORIGIN);
    // Only the first session reads a list of groups: the list's item template is that one
    // group, listed twice alike. The fifth session is the held-out one.
    for n in 1..=5 {
        import_session(&t, n, n == 1 || n == 5);
    }
    har::synth(&t, &[KEY]);
    let out = Command::new(support::bin())
        .current_dir(t.tmp.path())
        .env(KEY.0, KEY.1)
        .args(["check", &t.path_str(), "--holdout", "5", "--json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("no JSON report: {}", String::from_utf8_lossy(&out.stderr)));
    let listed: Vec<&Value> = r["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["method"] == "GET")
        .collect();
    assert_eq!(listed.len(), 2, "{:#}", r["exchanges"]);
    // The twin lists the session's own group (created at the twin's time); the recording shows
    // it at the recorded time. Both are timestamps of the group's own creation.
    assert!(
        listed.iter().all(|e| e["divergences"] == 0),
        "{:#}",
        r["divergences"]
    );
    assert_eq!(r["score_bp"], 10_000, "{:#}", r["divergences"]);
}
