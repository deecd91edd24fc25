//! A write to a path without parameters that a read of the same path answers (a singleton such
//! as `/profile`), through `synthesize`: last write wins (`Route::last_write_wins`) where a
//! session read the path after writing it and got the write's answer back, or, where no
//! session did, where every write answers the resource the read answers (by field names).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;
use serde_json::{Value, json};
use wraith_model::Model;

const BASE: &str = "https://api.settings.test";

fn profile(timezone: &str) -> Value {
    json!({"uid": 7, "username": "ann", "timezone": timezone, "email_notifications": true,
           "lish_auth_method": "password_keys"})
}

/// One session reads the profile, another writes it (answered `write_answer`); neither reads
/// it after the write.
fn model_of(write_answer: &Value) -> Model {
    common::synth_runs(
        "settings",
        BASE,
        vec![
            vec![ok_json("GET", "/profile", None, &profile("GMT"))],
            vec![ok_json(
                "PUT",
                "/profile",
                Some(&json!({"timezone": "UTC"})),
                write_answer,
            )],
        ],
    )
}

#[test]
fn a_singleton_write_answering_the_resource_its_read_answers_is_last_write_wins() {
    let m = model_of(&profile("UTC"));
    assert!(common::route(&m, "PUT", "/profile").last_write_wins);
    assert!(!common::route(&m, "GET", "/profile").last_write_wins);
}

#[test]
fn a_singleton_write_answering_something_else_is_not_last_write_wins() {
    // An empty answer, and an answer holding little of what the read answers.
    for answer in [json!({}), json!({"uid": 7, "status": "queued"})] {
        let m = model_of(&answer);
        assert!(
            !common::route(&m, "PUT", "/profile").last_write_wins,
            "{answer}"
        );
    }
}

#[test]
fn a_singleton_read_after_its_write_that_answers_otherwise_is_not_last_write_wins() {
    // The write answers the profile's shape, but the read after it shows another value.
    let m = common::synth_runs(
        "settings",
        BASE,
        vec![vec![
            ok_json(
                "PUT",
                "/profile",
                Some(&json!({"timezone": "UTC"})),
                &profile("UTC"),
            ),
            ok_json("GET", "/profile", None, &profile("GMT")),
        ]],
    );
    assert!(!common::route(&m, "PUT", "/profile").last_write_wins);
}
