//! A client error whose answer names the request field it refused is guarded on that field:
//! its presence, or the value it held, before any other field the refused request happened
//! to send.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{json_exchange, json_headers, session, synth_model};
use serde_json::{Value, json};
use wraith_model::Guard;

fn guard_of(status: u16, accepted: Value, refused: Value, answer: Value) -> Guard {
    let sessions = vec![
        session(
            "a",
            1_000_000,
            vec![json_exchange(
                "PUT",
                "/v1/nets/1",
                200,
                json_headers(),
                Some(&accepted),
                &json!({"id": 1}),
            )],
        ),
        session(
            "b",
            2_000_000,
            vec![json_exchange(
                "PUT",
                "/v1/nets/2",
                status,
                json_headers(),
                Some(&refused),
                &answer,
            )],
        ),
    ];
    let model = synth_model("nets", "https://api.nets.test", &sessions);
    let route = common::route(&model, "PUT", "/v1/nets/:param");
    let variant = route.variants.iter().find(|v| v.status == status).unwrap();
    variant.guard.clone()
}

#[test]
fn a_refusal_naming_a_field_by_its_dotted_path_is_guarded_on_that_fields_presence() {
    let guard = guard_of(
        400,
        json!({"label": "first", "ipv4": [{"range": "10.0.0.0/8"}]}),
        json!({"label": "second", "description": "mine",
               "ipv4": [{"range": "10.0.0.0/8"}, {"range": "10.1.0.0/16"}, {"range": "10.2.0.0/16"}]}),
        json!({"errors": [{"field": "ipv4[2].range", "reason": "Must not overlap"}]}),
    );
    assert_eq!(
        guard,
        Guard::BodyFieldPresent {
            pointer: "/ipv4/2/range".into(),
            present: true
        }
    );
}

#[test]
fn a_refusal_naming_a_field_every_request_sent_is_guarded_on_its_refused_value() {
    // `second` is shaped like `first`: without the answer naming `label`, its value says
    // nothing, and the description only the refused request sent would guard the refusal.
    let guard = guard_of(
        400,
        json!({"label": "first"}),
        json!({"label": "second", "description": "mine"}),
        json!({"errors": [{"field": "label", "reason": "Label must be unique"}]}),
    );
    assert_eq!(
        guard,
        Guard::BodyFieldEquals {
            pointer: "/label".into(),
            value: json!("second")
        }
    );
}

#[test]
fn an_answer_naming_no_field_keeps_the_first_field_only_the_refused_request_sent() {
    let guard = guard_of(
        400,
        json!({"label": "first"}),
        json!({"label": "second", "description": "mine"}),
        json!({"error": "something went wrong"}),
    );
    assert_eq!(
        guard,
        Guard::BodyFieldPresent {
            pointer: "/description".into(),
            present: true
        }
    );
}

#[test]
fn a_success_naming_a_field_is_not_read_as_blame() {
    // A 2xx of another shape than the primary's is told apart as before: its strings are no
    // refusal.
    let guard = guard_of(
        201,
        json!({"label": "first"}),
        json!({"label": "second", "description": "mine"}),
        json!({"note": "label"}),
    );
    assert_eq!(
        guard,
        Guard::BodyFieldPresent {
            pointer: "/description".into(),
            present: true
        }
    );
}
