//! `wraith check` holds ids the twin minted to themselves: once a session's create was answered
//! with the twin's id, a later answer showing that entity must show the same id
//! (`symbol_mismatch`, the `symbol_consistency` dimension). Black-box: the real binary on a small
//! notes twin built from HARs written here (each session creates a note, then lists notes),
//! checked `--target` a tiny HTTP twin written here whose list answers the minted id or
//! another one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;
use crate::check_support::fake_target;
use crate::check_support::notes;

use std::collections::BTreeMap;
use std::sync::Mutex;

use check_support::*;
use serde_json::{Value, json};

/// A twin over HTTP that answers every create with `note_minted000001` and every list with
/// one note of id `list_id` carrying the text the namespace last posted.
fn fake_target(list_id: &'static str) -> String {
    let texts = Mutex::new(BTreeMap::<String, String>::new());
    fake_target::start(move |c| {
        assert!(c.target.starts_with("/v1/notes"), "{}", c.target);
        if c.method == "POST" {
            let text = serde_json::from_slice::<Value>(c.body).unwrap()["text"].clone();
            let t = text.as_str().unwrap_or("").to_string();
            texts.lock().unwrap().insert(c.session.to_string(), t);
            let note = json!({"id": "note_minted000001", "object": "note", "text": text});
            fake_target::Answer {
                status: 201,
                provenance: "template",
                route: "POST /v1/notes".into(),
                body: note,
            }
        } else {
            let text = texts
                .lock()
                .unwrap()
                .get(c.session)
                .cloned()
                .unwrap_or_default();
            let note = json!({"id": list_id, "object": "note", "text": text});
            fake_target::Answer {
                status: 200,
                provenance: "template",
                route: "GET /v1/notes".into(),
                body: json!({"object": "list", "data": [note]}),
            }
        }
    })
}

fn symbol_mismatches(r: &Value) -> Vec<&Value> {
    r["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["category"] == "symbol_mismatch")
        .collect()
}

#[test]
fn check_list_naming_another_id_than_the_twin_minted_is_a_symbol_mismatch() {
    let t = notes::notes_twin();
    let url = fake_target("note_minted000002");
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    // The twin's ids at the list's `generated` id position are of the right type, so only the
    // symbol rule can see that the list names another note than the one just created.
    let found = symbol_mismatches(&r);
    assert_eq!(found.len(), 3, "{:#}", r["divergences"]);
    for d in &found {
        assert_eq!(d["route"], "GET /v1/notes");
        assert_eq!(d["path"], "body.data[0].id");
        assert_eq!(
            d["expected"], "note_minted000001",
            "the id the create answered"
        );
        assert_eq!(d["actual"], "note_minted000002");
    }
    assert_eq!(r["categories"]["symbol_mismatch"], 3);
    assert_eq!(r["exchanges_passed"], 3, "the creates pass, the lists fail");
    // Judged on all six answers, failed by the three lists.
    assert_eq!(r["dimensions"]["symbol_consistency"]["score_bp"], 5_000);
    assert_eq!(r["dimensions_failed"][0]["dimension"], "symbol_consistency");
    assert_eq!(r["dimensions"]["body_values"]["score_bp"], 10_000);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn check_list_naming_the_id_the_twin_minted_is_symbol_consistent() {
    let t = notes::notes_twin();
    let url = fake_target("note_minted000001");
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    assert!(symbol_mismatches(&r).is_empty(), "{:#}", r["divergences"]);
    assert_eq!(r["dimensions"]["symbol_consistency"]["score_bp"], 10_000);
    assert_eq!(r["score_bp"], 10_000, "{:#}", r["divergences"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn check_symbol_mismatch_is_suppressible_with_its_reason() {
    let t = notes::notes_twin();
    let cfg = t.root.join("wraith.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(
        "\n[[diff.suppress]]\ncategory = \"symbol_mismatch\"\nreason = \"lists are served from a fixed page\"\n",
    );
    std::fs::write(&cfg, text).unwrap();
    let url = fake_target("note_minted000002");
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    assert!(symbol_mismatches(&r).is_empty());
    assert_eq!(r["suppressed_count"], 3);
    assert_eq!(out.status.code(), Some(0), "{:#}", r["divergences"]);
}

/// The notes twin, plus `GET /v1/notes/pinned` recorded once, by the first session, answering
/// `{"pinned": <that session's note id>}`: recorded once, its `pinned` is a constant of the
/// template, and it names the note the session created.
fn notes_twin_with_a_pinned_note() -> DemoTwin {
    let t = DemoTwin::init("notes", "https://api.notes.test/v1");
    for (i, (id, text)) in notes::SESSIONS.iter().enumerate() {
        let note = json!({"id": id, "object": "note", "text": text});
        let mut entries = vec![
            notes::entry(
                "POST",
                "https://api.notes.test/v1/notes",
                Some(&json!({"text": text}).to_string()),
                201,
                &note,
            ),
            notes::entry(
                "GET",
                "https://api.notes.test/v1/notes",
                None,
                200,
                &json!({"object": "list", "data": [note]}),
            ),
        ];
        if i == 0 {
            entries.push(notes::entry(
                "GET",
                "https://api.notes.test/v1/notes/pinned",
                None,
                200,
                &json!({"pinned": id}),
            ));
        }
        let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
            "pages": [], "entries": entries}});
        t.import_har(&format!("notes-{i}"), &har);
    }
    t.synth();
    t
}

/// Creates answer `note_minted000001`, lists name it, and the pinned read answers `pinned`.
fn pinned_target(pinned: &'static str) -> String {
    fake_target::start(move |c| {
        let note = json!({"id": "note_minted000001", "object": "note", "text": ""});
        let (status, route, body) = if c.method == "POST" {
            (201, "POST /v1/notes", note)
        } else if c.target.starts_with("/v1/notes/pinned") {
            (200, "GET /v1/notes/pinned", json!({"pinned": pinned}))
        } else {
            (
                200,
                "GET /v1/notes",
                json!({"object": "list", "data": [note]}),
            )
        };
        fake_target::Answer {
            status,
            provenance: "template",
            route: route.into(),
            body,
        }
    })
}

fn pinned_divergences(r: &Value) -> Vec<&Value> {
    r["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["route"] == "GET /v1/notes/pinned")
        .collect()
}

#[test]
fn check_constant_position_naming_the_id_the_twin_gave_for_the_recorded_one_passes() {
    let t = notes_twin_with_a_pinned_note();
    let out = t.run(&[
        "check",
        "--target",
        &pinned_target("note_minted000001"),
        "--json",
    ]);
    let r = stdout_json(&out);
    // The recording says the first session's own note id; the session was given
    // note_minted000001 for it, which is what a real API would answer here.
    assert!(pinned_divergences(&r).is_empty(), "{:#}", r["divergences"]);
}

#[test]
fn check_constant_position_still_naming_the_recorded_id_is_a_symbol_mismatch() {
    let t = notes_twin_with_a_pinned_note();
    let recorded = notes::SESSIONS[0].0;
    let out = t.run(&["check", "--target", &pinned_target(recorded), "--json"]);
    let r = stdout_json(&out);
    let found = pinned_divergences(&r);
    assert_eq!(found.len(), 1, "{:#}", r["divergences"]);
    assert_eq!(found[0]["path"], "body.pinned");
    assert_eq!(found[0]["category"], "symbol_mismatch");
    assert_eq!(
        found[0]["expected"], "note_minted000001",
        "the id the session was given"
    );
    assert_eq!(found[0]["actual"], recorded);
}

/// An issues twin whose recorded sessions each create an issue (ids 1, 2, 3: each recorded
/// test counted from 1) and comment on it; every comment's author is user `2`.
fn issues_twin() -> DemoTwin {
    let t = DemoTwin::init("issues", "https://api.issues.test/v1");
    for (i, issue) in [1, 2, 3].into_iter().enumerate() {
        let created = json!({"id": issue, "title": format!("t{i}")});
        let comment = json!({"id": 10 + i, "body": "b", "user": {"id": 2, "login": "bob"}});
        let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
        "pages": [], "entries": [
            notes::entry("POST", "https://api.issues.test/v1/issues",
                Some(&json!({"title": format!("t{i}")}).to_string()), 201, &created),
            notes::entry("POST", &format!("https://api.issues.test/v1/issues/{issue}/comments"),
                Some(r#"{"body":"b"}"#), 201, &comment),
        ]}});
        t.import_har(&format!("issues-{i}"), &har);
    }
    t.synth();
    t
}

/// An API counting each type's records from 1: the session's issue `2` was answered as `7`,
/// and the comment's author, user `2` as recorded, is another entity, not that issue.
#[test]
fn check_a_short_id_of_another_kind_equal_to_a_renamed_one_is_no_symbol_mismatch() {
    let t = issues_twin();
    let url = fake_target::start(|c| {
        if c.target == "/v1/issues" {
            let title = serde_json::from_slice::<Value>(c.body).unwrap()["title"].clone();
            return fake_target::Answer {
                status: 201,
                provenance: "template",
                route: "POST /v1/issues".into(),
                body: json!({"id": 7, "title": title}),
            };
        }
        // Only the issue the twin gave the session has comments (`/__wraith/info`, the
        // check's probe, included: this twin has none).
        if c.target != "/v1/issues/7/comments" {
            return fake_target::Answer {
                status: 404,
                provenance: "miss",
                route: String::new(),
                body: json!({"error": "not found"}),
            };
        }
        fake_target::Answer {
            status: 201,
            provenance: "template",
            route: "POST /v1/issues/:param/comments".into(),
            body: json!({"id": 21, "body": "b", "user": {"id": 2, "login": "bob"}}),
        }
    });
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    assert!(symbol_mismatches(&r).is_empty(), "{:#}", r["divergences"]);
    assert_eq!(r["exchanges_passed"], 6, "{:#}", r["divergences"]);
}

/// Sessions of an API counting each type's records from 1 whose comment and label ids
/// coincide (session `i` recorded issue `i`, and `i + 3` for both the comment and the label),
/// reading the comment and the issue back by their own paths after the label was created.
fn coinciding_ids_twin() -> DemoTwin {
    let t = DemoTwin::init("tracker", "https://api.tracker.test/v1");
    for i in 1..=3 {
        let base = "https://api.tracker.test/v1";
        let issue = json!({"id": i, "title": format!("t{i}")});
        let comment = json!({"id": i + 3, "body": format!("b{i}")});
        let label = json!({"id": i + 3, "name": format!("l{i}")});
        let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
        "pages": [], "entries": [
            notes::entry("POST", &format!("{base}/issues"),
                Some(&json!({"title": format!("t{i}")}).to_string()), 201, &issue),
            notes::entry("POST", &format!("{base}/comments"),
                Some(&json!({"body": format!("b{i}")}).to_string()), 201, &comment),
            notes::entry("POST", &format!("{base}/labels"),
                Some(&json!({"name": format!("l{i}")}).to_string()), 201, &label),
            notes::entry("GET", &format!("{base}/comments/{}", i + 3), None, 200, &comment),
            notes::entry("GET", &format!("{base}/issues/{i}"), None, 200, &issue),
        ]}});
        t.import_har(&format!("tracker-{i}"), &har);
    }
    t.synth();
    t
}

/// The twin minted comment `21` and label `30` for one recorded `4` (or `5`, `6`): a later
/// path naming a comment names the session's comment, not the label answered last.
#[test]
fn check_renames_a_short_path_id_to_the_answer_of_the_record_type_the_route_names() {
    let t = coinciding_ids_twin();
    let url = fake_target::start(|c| {
        let body: Value = serde_json::from_slice(c.body).unwrap_or(Value::Null);
        let (route, answer) = match (c.method, c.target) {
            ("POST", "/v1/issues") => ("POST /v1/issues", json!({"id": 7, "title": body["title"]})),
            ("POST", "/v1/comments") => {
                ("POST /v1/comments", json!({"id": 21, "body": body["body"]}))
            }
            ("POST", "/v1/labels") => ("POST /v1/labels", json!({"id": 30, "name": body["name"]})),
            ("GET", "/v1/comments/21") => {
                ("GET /v1/comments/:param", json!({"id": 21, "body": "b1"}))
            }
            ("GET", "/v1/issues/7") => ("GET /v1/issues/:param", json!({"id": 7, "title": "t1"})),
            _ => {
                return fake_target::Answer {
                    status: 404,
                    provenance: "miss",
                    route: String::new(),
                    body: json!({"error": "not found"}),
                };
            }
        };
        let status = if c.method == "POST" { 201 } else { 200 };
        fake_target::Answer {
            status,
            provenance: "template",
            route: route.into(),
            body: answer,
        }
    });
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    let statuses: Vec<(&Value, &Value, &Value)> = r["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (&e["path"], &e["expected_status"], &e["actual_status"]))
        .collect();
    let misses: Vec<_> = statuses.iter().filter(|(_, e, a)| e != a).collect();
    assert!(misses.is_empty(), "{misses:?}");
}

/// Sessions of an API numbering issues from 1 in each repository: each creates two
/// repositories (alice's in even sessions, bob's in odd ones), opens issue `1` in each, and
/// reads both back.
fn per_repository_numbers_twin() -> DemoTwin {
    let base = "https://api.repos.test";
    let t = DemoTwin::init("repos", base);
    for n in 0..4u64 {
        let owner = if n.is_multiple_of(2) { "alice" } else { "bob" };
        let mut entries = Vec::new();
        for name in ["first", "second"] {
            let name = format!("{name}-{n}");
            let repo = json!({"id": n * 10 + entries.len() as u64, "name": name,
                "full_name": format!("{owner}/{name}"), "owner": {"login": owner}});
            entries.push(notes::entry(
                "POST",
                &format!("{base}/repos"),
                Some(&json!({"name": name}).to_string()),
                201,
                &repo,
            ));
        }
        for name in ["first", "second"] {
            let issue = json!({"id": n * 100 + entries.len() as u64, "number": 1, "title": name});
            entries.push(notes::entry(
                "POST",
                &format!("{base}/repos/{owner}/{name}-{n}/issues"),
                Some(&json!({"title": name}).to_string()),
                201,
                &issue,
            ));
        }
        for name in ["second", "first"] {
            let issue = json!({"number": 1, "title": name});
            entries.push(notes::entry(
                "GET",
                &format!("{base}/repos/{owner}/{name}-{n}/issues/1"),
                None,
                200,
                &issue,
            ));
        }
        let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
            "pages": [], "entries": entries}});
        t.import_har(&format!("repos-{n}"), &har);
    }
    t.synth();
    t
}

/// The twin numbered the session's two issues `1` as `7` and `8`, one per repository: each
/// is the session's own issue in its repository, read back under its own number.
#[test]
fn check_holds_a_key_counted_per_parent_to_the_answer_under_the_same_parent() {
    let t = per_repository_numbers_twin();
    let url = fake_target::start(|c| {
        let body: Value = serde_json::from_slice(c.body).unwrap_or(Value::Null);
        let path = c.target.to_string();
        let repo = path.split('/').nth(3).unwrap_or("").to_string();
        let number = if repo.starts_with("first") { 7 } else { 8 };
        let (status, route, answer) = match c.method {
            "POST" if path == "/repos" => {
                let name = body["name"].as_str().unwrap_or("");
                let owner = if name.ends_with(['0', '2']) {
                    "alice"
                } else {
                    "bob"
                };
                let repo = json!({"id": 1, "name": name,
                    "full_name": format!("{owner}/{name}"), "owner": {"login": owner}});
                (201, "POST /repos", repo)
            }
            "POST" if path.ends_with("/issues") => (
                201,
                "POST /repos/:param/:param2/issues",
                json!({"id": 50, "number": number, "title": body["title"]}),
            ),
            "GET" if path.ends_with(&format!("/issues/{number}")) => (
                200,
                "GET /repos/:param/:param2/issues/:param3",
                json!({"number": number, "title": repo.split('-').next().unwrap_or("")}),
            ),
            _ => (404, "", json!({"error": "not found"})),
        };
        fake_target::Answer {
            status,
            provenance: if status == 404 { "miss" } else { "template" },
            route: route.into(),
            body: answer,
        }
    });
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    assert!(symbol_mismatches(&r).is_empty(), "{:#}", r["divergences"]);
    assert_eq!(r["exchanges_passed"], 24, "{:#}", r["divergences"]);
}
