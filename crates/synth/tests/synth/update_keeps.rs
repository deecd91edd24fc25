//! Timestamps an update leaves as they were (`Route::update_keeps`), through `synthesize`: a
//! widget is created and then renamed a few seconds later; the rename's answer repeats its
//! `created` and shows a new `updated`. Both are clock holes of the update's template; only
//! `created` is kept.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::json;
use wraith_model::HoleKind;
use wraith_recording::RecordedSession;

const START_US: u64 = 1_700_000_000_000_000;

/// ISO 8601 of `START_US` plus `secs` seconds and `n` minutes (one minute per session).
fn at(n: u64, secs: u64) -> String {
    format!("2023-11-14T22:{:02}:{:02}.000Z", 13 + n, 20 + secs)
}

/// Session `n`: create widget `w_n`, read it, then rename it five seconds later. The rename's
/// answer shows `created` as `created_by_update` (the record's own unless a test says else)
/// and `updated` five seconds on; with `sent_created`, the rename's request sends `created`.
fn session(n: u64, created_by_update: Option<&str>, sent_created: bool) -> RecordedSession {
    let id = format!("w_{n}");
    let made = at(n, 0);
    let widget = |name: &str, updated: &str, created: &str| json!({"id": id, "name": name, "created": created, "updated": updated});
    let mut sent = json!({"name": "renamed"});
    if sent_created {
        sent["created"] = json!(at(n, 1));
    }
    common::session(
        &format!("s{n}"),
        START_US + n * 60_000_000,
        vec![
            ok_json(
                "POST",
                "/v1/widgets",
                Some(&json!({"name": format!("w{n}")})),
                &widget(&format!("w{n}"), &made, &made),
            ),
            ok_json(
                "GET",
                &format!("/v1/widgets/{id}"),
                None,
                &widget(&format!("w{n}"), &made, &made),
            ),
            ok_json(
                "PATCH",
                &format!("/v1/widgets/{id}"),
                Some(&sent),
                &widget(
                    "renamed",
                    &at(n, 5),
                    created_by_update.unwrap_or(made.as_str()),
                ),
            ),
        ],
    )
}

fn keeps(sessions: &[RecordedSession]) -> (Vec<String>, Vec<String>) {
    let model = common::synth_model("t", "https://api.example", sessions);
    let update = common::route(&model, "PATCH", "/v1/widgets/:param");
    // Both timestamps are clock holes of the update's answer: the engine would stamp both.
    let wraith_model::BodyTemplate::Json {
        root: wraith_model::Node::Object { fields },
    } = &update.variants[0].body
    else {
        panic!("not a JSON object template");
    };
    let clocks: Vec<String> = fields
        .iter()
        .filter(|f| {
            matches!(&f.value, wraith_model::Node::Hole(h)
                if matches!(h.source, HoleKind::Clock { .. }))
        })
        .map(|f| f.key.clone())
        .collect();
    (update.update_keeps.clone(), clocks)
}

#[test]
fn an_update_repeating_a_timestamp_as_last_seen_keeps_it_and_stamps_the_other() {
    let sessions: Vec<RecordedSession> = (1..=3).map(|n| session(n, None, false)).collect();
    let (kept, clocks) = keeps(&sessions);
    assert_eq!(clocks, ["created", "updated"]);
    assert_eq!(kept, ["created"]);
}

#[test]
fn one_update_showing_another_value_rules_the_field_out() {
    let mut sessions: Vec<RecordedSession> = (1..=2).map(|n| session(n, None, false)).collect();
    let other = at(3, 2);
    sessions.push(session(3, Some(&other), false));
    let (kept, _) = keeps(&sessions);
    assert!(kept.is_empty(), "{kept:?}");
}

#[test]
fn a_timestamp_the_update_sent_is_not_compared() {
    // Every update sent `created` (and the answers still repeat the old one): no update is
    // evidence about it, so nothing is kept.
    let sessions: Vec<RecordedSession> = (1..=3).map(|n| session(n, None, true)).collect();
    let (kept, _) = keeps(&sessions);
    assert!(kept.is_empty(), "{kept:?}");
}

#[test]
fn an_update_of_a_record_its_session_never_saw_teaches_nothing() {
    // Only the updates, each of a record created elsewhere.
    let sessions: Vec<RecordedSession> = (1..=3)
        .map(|n| {
            let mut s = session(n, None, false);
            s.exchanges.drain(..2);
            s
        })
        .collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    let update = common::route(&model, "PATCH", "/v1/widgets/:param");
    assert!(update.update_keeps.is_empty(), "{:?}", update.update_keeps);
}
