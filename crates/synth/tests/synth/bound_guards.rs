//! A client error whose every refused request sent the field its answer names as a number
//! below (or above) every number the accepted requests sent there is guarded on that range
//! (`Guard::BodyFieldBound`); a field the answer does not name, or values that interleave,
//! are not.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{json_exchange, json_headers};
use serde_json::{Value, json};
use wraith_model::Guard;

/// One session per size: a `POST /v1/widgets` sending it, answered 201 when `ok(size)`, else
/// 422 with `refusal`.
fn refusal_guard(sizes: &[i64], ok: impl Fn(i64) -> bool, refusal: &Value) -> Guard {
    let runs = sizes
        .iter()
        .enumerate()
        .map(|(n, size)| {
            let (status, answer) = if ok(*size) {
                (201, json!({"id": format!("w{n}"), "size": size}))
            } else {
                (422, refusal.clone())
            };
            let body = json!({"name": format!("w{n}"), "size": size});
            vec![json_exchange(
                "POST",
                "/v1/widgets",
                status,
                json_headers(),
                Some(&body),
                &answer,
            )]
        })
        .collect();
    let model = common::synth_runs("widgets", "https://api.widgets.test", runs);
    common::variant_guard(&model, "POST", "/v1/widgets", 422)
}

#[test]
fn sizes_below_every_accepted_one_are_guarded_below_the_lowest_accepted() {
    let guard = refusal_guard(
        &[5, -3, 12, -8, 0, 40, -1],
        |s| s >= 0,
        &json!({"error": "invalid", "field": "size"}),
    );
    assert_eq!(
        guard,
        Guard::BodyFieldBound {
            pointer: "/size".into(),
            bound: json!(0),
            below: true
        }
    );
}

#[test]
fn sizes_above_every_accepted_one_are_guarded_above_the_highest_accepted() {
    let guard = refusal_guard(
        &[5, 300, 12, 999, 0, 40, 101],
        |s| s <= 100,
        &json!({"error": "invalid", "field": "size"}),
    );
    assert_eq!(
        guard,
        Guard::BodyFieldBound {
            pointer: "/size".into(),
            bound: json!(40),
            below: false
        }
    );
}

#[test]
fn a_range_the_answer_does_not_blame_or_that_interleaves_is_no_guard() {
    let unnamed = refusal_guard(
        &[5, -3, 12, -8, 0, 40],
        |s| s >= 0,
        &json!({"error": "invalid"}),
    );
    assert!(
        !matches!(unnamed, Guard::BodyFieldBound { .. }),
        "{unnamed:?}"
    );
    let odd = refusal_guard(
        &[5, -3, 12, -8, 7, 40],
        |s| s % 2 == 0,
        &json!({"error": "invalid", "field": "size"}),
    );
    assert!(!matches!(odd, Guard::BodyFieldBound { .. }), "{odd:?}");
}
