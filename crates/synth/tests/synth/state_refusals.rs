//! Refusals the state of the acted-on record decides (`Guard::RecordFieldEquals`), learned
//! from small synthetic recordings: an unsuspend answered the account when it was suspended and
//! refused it when it was not. A refusal of a record the session had not seen before stays
//! unguarded: nothing says what state it was in.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};
use wraith_model::Guard;
use wraith_recording::Exchange;

fn account(id: &str, suspended: bool) -> Value {
    json!({"id": id, "username": format!("user{id}"), "suspended": suspended, "silenced": false})
}

fn read(id: &str, suspended: bool) -> Exchange {
    common::ok_json(
        "GET",
        &format!("/v1/accounts/{id}"),
        None,
        &account(id, suspended),
    )
}

fn suspend(id: &str) -> Exchange {
    common::ok_json(
        "POST",
        &format!("/v1/accounts/{id}/suspend"),
        None,
        &account(id, true),
    )
}

fn unsuspend(id: &str) -> Exchange {
    common::ok_json(
        "POST",
        &format!("/v1/accounts/{id}/unsuspend"),
        None,
        &account(id, false),
    )
}

fn refused_unsuspend(id: &str) -> Exchange {
    common::json_exchange(
        "POST",
        &format!("/v1/accounts/{id}/unsuspend"),
        403,
        common::json_headers(),
        None,
        &json!({"error": "This action is not allowed"}),
    )
}

#[test]
fn an_action_refused_on_a_record_already_in_the_state_it_sets_is_guarded_by_that_state() {
    let m = common::synth_runs(
        "accounts",
        "https://api.accounts.test",
        vec![
            vec![
                read("1", false),
                suspend("1"),
                read("1", true),
                unsuspend("1"),
                refused_unsuspend("1"),
            ],
            vec![read("2", false), suspend("2"), unsuspend("2")],
        ],
    );
    assert_eq!(
        common::variant_guard(&m, "POST", "/v1/accounts/:param/unsuspend", 403),
        Guard::RecordFieldEquals {
            field: "suspended".into(),
            value: json!(false)
        }
    );
    let route = common::route(&m, "POST", "/v1/accounts/:param/unsuspend");
    assert_eq!(route.variants[0].status, 403, "the refusal is tried first");
}

#[test]
fn a_refusal_of_a_record_the_session_had_not_seen_stays_unguarded() {
    let m = common::synth_runs(
        "accounts",
        "https://api.accounts.test",
        vec![
            vec![read("1", true), unsuspend("1")],
            vec![refused_unsuspend("2")],
            vec![read("3", true), unsuspend("3")],
        ],
    );
    assert_eq!(
        common::variant_guard(&m, "POST", "/v1/accounts/:param/unsuspend", 403),
        Guard::Always
    );
}
