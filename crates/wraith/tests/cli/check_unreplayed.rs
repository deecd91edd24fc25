//! `wraith check`, black-box: sessions that replay nothing. A recorded exchange on a route
//! declared only in `lua/routes.toml` (recorded after the model was synthesized: once synth
//! learns it, the recorded route wins) is never replayed (`exchanges_skipped.authored_route`),
//! so a session holding only such exchanges is not scored, and a run that replays no exchange
//! at all has nothing to check (exit 1, as a twin without recordings).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;

use check_support::notes::entry;
use check_support::*;
use serde_json::{Value, json};

/// A HAR whose every request falls on the shop's authored route
/// `GET /customers/:id/summary`.
fn authored_only_har() -> Value {
    let url = "http://127.0.0.1:18080/customers/cus_FixtureMarg001/summary";
    let answer = json!({"customer": "cus_FixtureMarg001", "name": "Margaret Hamilton"});
    json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "pages": [],
        "entries": [entry("GET", url, None, 200, &answer), entry("GET", url, None, 200, &answer)]}})
}

fn session_ids(t: &DemoTwin) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(t.root.join("recordings/sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

#[test]
fn a_session_replaying_no_exchange_is_neither_listed_nor_counted_as_passing() {
    let t = DemoTwin::example_shop();
    t.synth();
    let before = session_ids(&t);
    t.import_har("summary", &authored_only_har());
    let added: Vec<String> = session_ids(&t)
        .into_iter()
        .filter(|id| !before.contains(id))
        .collect();
    assert_eq!(added.len(), 1, "{added:?}");
    let out = t.run(&["check", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r = stdout_json(&out);
    assert_eq!(r["exchanges_skipped"]["authored_route"], 2, "{stderr}");
    assert_eq!(r["sessions_total"], before.len(), "{stderr}");
    let listed: Vec<&str> = r["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap())
        .collect();
    assert!(!listed.contains(&added[0].as_str()), "{listed:?}");
    assert_eq!(listed.len(), before.len());
    assert!(
        stderr.contains("1 recorded session(s) replayed no exchange and are not scored")
            && stderr.contains(&added[0]),
        "{stderr}"
    );
}

#[test]
fn a_run_replaying_no_exchange_exits_1_as_a_twin_without_recordings_does() {
    let t = DemoTwin::example_shop();
    t.synth();
    std::fs::remove_dir_all(t.root.join("recordings/sessions")).unwrap();
    let none = t.run(&["check", "--json"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stderr).contains("has no recordings to check"));
    t.import_har("summary", &authored_only_har());
    let out = t.run(&["check", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "no report is printed");
    assert!(stderr.contains("has nothing to check"), "{stderr}");
    assert!(
        stderr.contains("all 2 recorded exchange(s) were skipped")
            && stderr.contains("lua/routes.toml")
            && stderr.contains("wraith import"),
        "{stderr}"
    );
    assert!(!t.root.join("reports/check.json").exists());
    // The summary form says the same, and no run claims `PASS`.
    let out = t.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("PASS"));
}
