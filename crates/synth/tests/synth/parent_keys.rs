//! Keys counted per parent, through `synthesize`: issues numbered from 1 in each repository.
//! A session that opened an issue in each of two repositories and was answered one number for
//! both marks the type keyed per parent; numbers that never repeat within a session do not.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::json;
use wraith_model::Model;
use wraith_recording::RecordedSession;

const START_US: u64 = 1_700_000_000_000_000;

/// Session `n`: create two repositories (alice's in even sessions, bob's in odd ones), open an
/// issue in each, answered `numbers`, and list the first repository's issues.
fn session(n: u64, numbers: [u64; 2]) -> RecordedSession {
    let (owner, names, mut exchanges) = common::two_repositories(n, n * 10);
    for (name, number) in names.iter().zip(numbers) {
        exchanges.push(ok_json(
            "POST",
            &format!("/repos/{owner}/{name}/issues"),
            Some(&json!({"title": "t"})),
            &json!({"id": n * 100 + number, "number": number, "title": "t"}),
        ));
    }
    exchanges.push(ok_json(
        "GET",
        &format!("/repos/{owner}/{}/issues", names[0]),
        None,
        &json!([{"id": n * 100 + numbers[0], "number": numbers[0], "title": "t"}]),
    ));
    common::session(&format!("s{n}"), START_US + n * 60_000_000, exchanges)
}

fn keyed_per_parent(model: &Model, ty: &str) -> bool {
    model.entity_types[ty].keyed_per_parent
}

#[test]
fn one_number_answered_in_two_repositories_of_a_session_keys_issues_per_parent() {
    let sessions: Vec<RecordedSession> = (0..4).map(|n| session(n, [1, 1])).collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    let create = common::route(&model, "POST", "/repos/:param/:param2/issues");
    assert_eq!(create.entity_type.as_deref(), Some("issues"));
    assert!(keyed_per_parent(&model, "issues"));
    assert!(!keyed_per_parent(&model, "repos"));
}

#[test]
fn numbers_that_never_repeat_within_a_session_are_not_keyed_per_parent() {
    let sessions: Vec<RecordedSession> = (0..4).map(|n| session(n, [1, 2])).collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    assert_eq!(
        common::route(&model, "POST", "/repos/:param/:param2/issues")
            .entity_type
            .as_deref(),
        Some("issues")
    );
    assert!(!keyed_per_parent(&model, "issues"));
}
