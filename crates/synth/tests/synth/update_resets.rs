//! Fields an update resets when its request leaves them out (`Route::update_resets`), through
//! `synthesize`: a widget is created with a color and a size, then replaced with a request
//! that sends only its name; the answer shows the color back to `null` and the size back to
//! `0`, whatever they were.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::{Value, json};
use wraith_model::UpdateReset;
use wraith_recording::RecordedSession;

const START_US: u64 = 1_700_000_000_000_000;

/// Session `n`: create widget `w_n` with a color and a size, then `PUT` it with its new name
/// only; the answer shows `color` and `size` as `answered`.
fn session(n: u64, method: &str, answered: (Value, Value)) -> RecordedSession {
    let id = format!("w_{n}");
    let colors = ["red", "green", "blue", "teal"];
    let color = colors[n as usize % colors.len()];
    let size = n * 3 + 1;
    common::session(
        &format!("s{n}"),
        START_US + n * 60_000_000,
        vec![
            ok_json(
                "POST",
                "/v1/widgets",
                Some(&json!({"name": format!("w{n}"), "color": color, "size": size})),
                &json!({"id": id, "name": format!("w{n}"), "color": color, "size": size, "kind": "plain"}),
            ),
            ok_json(
                method,
                &format!("/v1/widgets/{id}"),
                Some(&json!({"name": format!("renamed{n}")})),
                &json!({"id": id, "name": format!("renamed{n}"), "color": answered.0, "size": answered.1, "kind": "plain"}),
            ),
        ],
    )
}

fn resets(sessions: &[RecordedSession], method: &str) -> Vec<UpdateReset> {
    let model = common::synth_model("t", "https://api.example", sessions);
    common::route(&model, method, "/v1/widgets/:param")
        .update_resets
        .clone()
}

#[test]
fn fields_a_replace_left_out_and_answered_with_one_value_are_resets() {
    let sessions: Vec<RecordedSession> = (1..=3)
        .map(|n| session(n, "PUT", (Value::Null, json!(0))))
        .collect();
    let got = resets(&sessions, "PUT");
    let want = vec![
        UpdateReset {
            field: "color".into(),
            value: Value::Null,
        },
        UpdateReset {
            field: "size".into(),
            value: json!(0),
        },
    ];
    // `kind` never moved: nothing says an update resets it.
    assert_eq!(got, want);
}

#[test]
fn an_update_answering_the_fields_as_they_were_merges() {
    let sessions: Vec<RecordedSession> = (1..=3)
        .map(|n| {
            let colors = ["red", "green", "blue", "teal"];
            let kept = (json!(colors[n as usize % 4]), json!(n * 3 + 1));
            session(n, "PATCH", kept)
        })
        .collect();
    assert!(resets(&sessions, "PATCH").is_empty());
}

#[test]
fn a_field_answered_with_two_values_is_no_reset() {
    // The size comes back as 0 twice and as 7 once: no one value to reset to.
    let mut sessions: Vec<RecordedSession> = (1..=2)
        .map(|n| session(n, "PUT", (Value::Null, json!(0))))
        .collect();
    sessions.push(session(3, "PUT", (Value::Null, json!(7))));
    let got = resets(&sessions, "PUT");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].field, "color");
}

#[test]
fn an_update_of_a_record_its_session_never_saw_teaches_nothing() {
    let sessions: Vec<RecordedSession> = (1..=3)
        .map(|n| {
            let mut s = session(n, "PUT", (Value::Null, json!(0)));
            s.exchanges.remove(0);
            s
        })
        .collect();
    assert!(resets(&sessions, "PUT").is_empty());
}

/// Session `n` of tests that create every widget alike (`red`, size 5): a `PUT` sending `sent`
/// answered `answer`.
fn alike_session(n: u64, sent: Value, answer: Value) -> RecordedSession {
    let id = format!("w_{n}");
    let made = json!({"id": id, "name": "w", "color": "red", "size": 5, "version": 1});
    let mut replaced = made.clone();
    for (k, v) in answer.as_object().unwrap() {
        replaced[k] = v.clone();
    }
    common::session(
        &format!("s{n}"),
        START_US + n * 60_000_000,
        vec![
            ok_json(
                "POST",
                "/v1/widgets",
                Some(&json!({"name": "w", "color": "red", "size": 5})),
                &made,
            ),
            ok_json("PUT", &format!("/v1/widgets/{id}"), Some(&sent), &replaced),
        ],
    )
}

#[test]
fn a_field_other_replaces_sent_is_reset_from_the_one_value_every_test_created() {
    let sessions = vec![
        alike_session(
            1,
            json!({"name": "x"}),
            json!({"name": "x", "color": null, "version": 2}),
        ),
        alike_session(
            2,
            json!({"name": "y", "color": "blue"}),
            json!({"name": "y", "color": "blue", "size": 0, "version": 2}),
        ),
        alike_session(
            3,
            json!({"name": "z"}),
            json!({"name": "z", "color": null, "version": 2}),
        ),
    ];
    let got = resets(&sessions, "PUT");
    // `color` is an input some replace sent; `version`, moved from 1 to 2 by every replace
    // and sent by none, is no reset. `size` moved once, and no replace sent it.
    assert_eq!(
        got,
        vec![UpdateReset {
            field: "color".into(),
            value: Value::Null,
        }]
    );
}
