//! A client error whose every refused request sent the field its answer names with a value
//! outside the few values the accepted requests sent there, each set sent often (an enum), is
//! guarded on that set (`Guard::BodyFieldNotIn`); a field whose accepted values differ request
//! by request (names), or a field the answer does not name, is not.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{json_exchange, json_headers};
use serde_json::{Value, json};
use wraith_model::Guard;

/// One session per value: a `PATCH /v1/issues/1` sending `{field: value}`, answered 200 when
/// `ok(value)`, else 422 with `refusal`.
fn refusal_guard(field: &str, sent: &[&str], ok: impl Fn(&str) -> bool, refusal: &Value) -> Guard {
    let runs = sent
        .iter()
        .map(|value| {
            let (status, answer) = if ok(value) {
                (200, json!({"id": 1, field: value}))
            } else {
                (422, refusal.clone())
            };
            let body = json!({ field: value });
            let patch = "/v1/issues/1";
            vec![json_exchange(
                "PATCH",
                patch,
                status,
                json_headers(),
                Some(&body),
                &answer,
            )]
        })
        .collect();
    let model = common::synth_runs("issues", "https://api.issues.test", runs);
    common::variant_guard(&model, "PATCH", "/v1/issues/:param", 422)
}

fn blames(field: &str) -> Value {
    json!({"message": "Validation Failed", "errors": [{"field": field, "code": "invalid"}]})
}

#[test]
fn a_value_outside_the_accepted_enum_is_guarded_on_the_whole_set() {
    let sent = [
        "open", "closed", "merged", "closed", "open", "closed", "merged",
    ];
    let guard = refusal_guard("state", &sent, |v| v != "merged", &blames("state"));
    assert_eq!(
        guard,
        Guard::BodyFieldNotIn {
            pointer: "/state".into(),
            values: vec![json!("closed"), json!("open")],
        }
    );
}

#[test]
fn names_that_differ_request_by_request_are_no_closed_set() {
    let sent = ["alpha", "beta", "x!", "gamma", "delta", "x!"];
    let guard = refusal_guard("title", &sent, |v| v != "x!", &blames("title"));
    assert_eq!(
        guard,
        Guard::BodyFieldEquals {
            pointer: "/title".into(),
            value: json!("x!"),
        }
    );
}

#[test]
fn a_field_the_answer_does_not_name_is_no_closed_set() {
    let sent = [
        "open", "closed", "merged", "closed", "open", "closed", "merged",
    ];
    let guard = refusal_guard("state", &sent, |v| v != "merged", &json!({"message": "no"}));
    assert!(!matches!(guard, Guard::BodyFieldNotIn { .. }), "{guard:?}");
}

#[test]
fn one_accepted_value_is_no_closed_set() {
    // Every accepted update closed the issue: that says nothing of `open`.
    let sent = ["closed", "merged", "closed", "closed", "merged"];
    let guard = refusal_guard("state", &sent, |v| v != "merged", &blames("state"));
    assert_eq!(
        guard,
        Guard::BodyFieldEquals {
            pointer: "/state".into(),
            value: json!("merged"),
        }
    );
}
