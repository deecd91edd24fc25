//! Fields counted within each parent, through `synthesize`: an issue's `number` counts from 1
//! in each repository while its `id` counts across them (`Route::parent_sequences`), and where
//! every read answered a `number` equal to its `id` the paths may name either
//! (`EntityType::alternate_key`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::{Value, json};
use wraith_model::Model;
use wraith_recording::RecordedSession;

const START_US: u64 = 1_700_000_000_000_000;
const ISSUES: &str = "/repos/:param/:param2/issues";

/// Session `n`: create two repositories (alice's in even sessions, bob's in odd ones), open
/// issues in them in the order `opened` (which repository, then the `number` the answer
/// carries; `id`s count across both from 1), then read the `read`-th issue opened by its `id`.
fn session(n: u64, opened: &[(usize, Value)], read: usize) -> RecordedSession {
    let (owner, names, mut exchanges) = common::two_repositories(n, 1);
    let mut issues = Vec::new();
    for (id, (repo, number)) in (1u64..).zip(opened) {
        let issue = json!({"id": id, "number": number, "title": "t", "comments": 0});
        exchanges.push(ok_json(
            "POST",
            &format!("/repos/{owner}/{}/issues", names[*repo]),
            Some(&json!({"title": "t"})),
            &issue,
        ));
        issues.push((*repo, issue));
    }
    let (repo, issue) = &issues[read];
    exchanges.push(ok_json(
        "GET",
        &format!("/repos/{owner}/{}/issues/{}", names[*repo], issue["id"]),
        None,
        issue,
    ));
    common::session(&format!("s{n}"), START_US + n * 60_000_000, exchanges)
}

fn learned(model: &Model) -> (&[String], Option<&str>) {
    (
        &common::route(model, "POST", ISSUES).parent_sequences,
        model.entity_types["issues"].alternate_key.as_deref(),
    )
}

#[test]
fn a_number_counted_from_one_in_each_repository_is_a_parent_sequence() {
    // Two issues in the first repository, then one in the second: numbers 1, 2, 1.
    let sessions: Vec<RecordedSession> = (0..4)
        .map(|n| session(n, &[(0, json!(1)), (0, json!(2)), (1, json!(1))], 0))
        .collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    assert_eq!(model.entity_types["issues"].primary_key, "id");
    let (counted, alternate) = learned(&model);
    assert_eq!(counted, ["number".to_string()]);
    // Every read answered its path's value as both the `id` and the `number`.
    assert_eq!(alternate, Some("number"));
}

#[test]
fn numbers_counted_across_repositories_are_no_parent_sequence() {
    // The second repository's issue is number 3: one count across the type, like the ids.
    let sessions: Vec<RecordedSession> = (0..4)
        .map(|n| session(n, &[(0, json!(1)), (0, json!(2)), (1, json!(3))], 0))
        .collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    assert_eq!(learned(&model), (&[][..], None));
}

#[test]
fn numbers_that_skip_within_a_repository_are_no_parent_sequence() {
    let sessions: Vec<RecordedSession> = (0..4)
        .map(|n| session(n, &[(0, json!(1)), (0, json!(3)), (1, json!(1))], 0))
        .collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    assert_eq!(learned(&model), (&[][..], None));
}

#[test]
fn a_field_that_never_rises_is_no_count() {
    // `comments` is 0 under both repositories: it repeats, but never rose; `number` rose.
    let sessions: Vec<RecordedSession> = (0..4)
        .map(|n| session(n, &[(0, json!(1)), (0, json!(2)), (1, json!(1))], 0))
        .collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    assert_eq!(learned(&model).0, ["number".to_string()]);
}

#[test]
fn a_counted_field_no_path_named_is_no_alternate_key() {
    // The second repository's issue opens first, so the first repository's first issue is
    // `id` 2 and `number` 1: its read names the id only.
    let sessions: Vec<RecordedSession> = (0..4)
        .map(|n| session(n, &[(1, json!(1)), (0, json!(1)), (0, json!(2))], 1))
        .collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    assert_eq!(model.entity_types["issues"].primary_key, "id");
    let (counted, alternate) = learned(&model);
    assert_eq!(counted, ["number".to_string()]);
    assert_eq!(alternate, None);
}
