//! What an action does to arrays of the record it acts on, learned from small synthetic
//! recordings: a vote appends the sent choices to the poll's `own_votes` (`appends`) and steps
//! `votes_count` of the options at the sent positions (`indexed_counters`), compared with the
//! poll as the post that made it showed it when no read of the poll came first.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};
use wraith_model::{ActionEffect, IndexedCounter, Model, SentAppend};
use wraith_recording::Exchange;

fn poll(id: &str, counts: [u64; 2], own: &[u64]) -> Value {
    json!({"id": id, "expired": false, "votes_count": own.len(), "own_votes": own,
           "options": [{"title": format!("yes {id}"), "votes_count": counts[0]},
                       {"title": format!("no {id}"), "votes_count": counts[1]}]})
}

fn post(id: &str, poll: Value) -> Exchange {
    common::ok_json(
        "POST",
        "/v1/statuses",
        Some(&json!({"status": id, "poll": {"options": ["yes", "no"]}})),
        &json!({"id": id, "content": id, "poll": poll}),
    )
}

/// A vote sent as a form (`choices[]=1`) answered `answer`.
fn vote(id: &str, choices: &[&str], answer: Value) -> Exchange {
    let form: Vec<String> = choices
        .iter()
        .map(|c| format!("choices%5B%5D={c}"))
        .collect();
    common::with_form_body(
        common::ok_json("POST", &format!("/v1/polls/{id}/votes"), None, &answer),
        form.join("&"),
    )
}

fn read(id: &str, answer: Value) -> Exchange {
    common::ok_json("GET", &format!("/v1/polls/{id}"), None, &answer)
}

fn vote_action(m: &Model) -> ActionEffect {
    m.routes
        .iter()
        .find(|r| r.method == "POST" && r.path.ends_with("/votes"))
        .and_then(|r| r.action.clone())
        .expect("the vote route is an action on polls")
}

/// Two runs: each posts a poll and votes on it twice, the second time after reading it; the
/// first vote's only earlier view of the poll is the post that made it. `answer` builds each
/// vote's answer from (poll id, counts, own votes) as the run recorded it.
fn runs(answer: impl Fn(&str, [u64; 2], &[u64]) -> Value) -> Model {
    let run = |id: &str, first: &str, second: &str| {
        let (a, b): (usize, usize) = (first.parse().unwrap(), second.parse().unwrap());
        let mut once = [0u64; 2];
        once[a] += 1;
        let mut twice = once;
        twice[b] += 1;
        let own1 = [a as u64];
        let own2 = [a as u64, b as u64];
        vec![
            post(&format!("p{id}"), poll(id, [0, 0], &[])),
            vote(id, &[first], answer(id, once, &own1)),
            read(id, poll(id, once, &own1)),
            vote(id, &[second], answer(id, twice, &own2)),
        ]
    };
    common::synth_runs(
        "polls",
        "https://api.example.test",
        vec![run("11", "1", "0"), run("12", "0", "0")],
    )
}

#[test]
fn a_vote_appends_its_choices_and_steps_the_options_it_chose_from_the_poll_its_post_showed() {
    let m = runs(poll);
    let action = vote_action(&m);
    assert_eq!(
        action.appends,
        [SentAppend {
            field: "own_votes".into(),
            from: "choices".into(),
            numbers: true,
        }],
        "{action:?}"
    );
    assert_eq!(
        action.indexed_counters,
        [IndexedCounter {
            field: "options".into(),
            member: "votes_count".into(),
            by: "choices".into(),
            step: 1,
        }],
        "{action:?}"
    );
    assert_eq!(action.counters.get("votes_count"), Some(&1), "{action:?}");
    // Neither array is answered from a template any more.
    assert!(action.answered_fields.is_empty(), "{action:?}");
    assert!(
        !action.fields.contains(&"own_votes".to_string()),
        "{action:?}"
    );
}

#[test]
fn an_array_that_took_other_values_than_the_sent_ones_appends_nothing() {
    // Every vote's own_votes shows a fixed value, not the sent choice.
    let m = runs(|id, counts, own| {
        let mut p = poll(id, counts, own);
        p["own_votes"] = json!(vec![9; own.len()]);
        p
    });
    let action = vote_action(&m);
    assert!(action.appends.is_empty(), "{action:?}");
}

#[test]
fn a_counter_moved_at_a_position_no_request_sent_is_no_indexed_counter() {
    // The answers count every vote on the first option, whatever was chosen.
    let m = runs(|id, _, own| poll(id, [own.len() as u64, 0], own));
    let action = vote_action(&m);
    assert!(action.indexed_counters.is_empty(), "{action:?}");
}
