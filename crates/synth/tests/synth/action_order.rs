//! Action effects compare each answer with the record as the session last saw it, whichever
//! route acted on it last: an `unstar` after a `star` is compared with the star's answer,
//! even when an earlier `unstar` of the same record was recorded (routes are learned one by
//! one, the comparison goes by the order the session sent them).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

fn item(id: u64, starred: bool) -> Value {
    json!({"id": id, "name": format!("item {id}"), "starred": starred})
}

/// Run `n`: read item `n`, unstar it (it was not starred), star it, unstar it, read it.
fn run(n: u64) -> Vec<wraith_recording::Exchange> {
    let path = format!("/v1/items/{n}");
    vec![
        common::ok_json("GET", &path, None, &item(n, false)),
        common::ok_json("POST", &format!("{path}/unstar"), None, &item(n, false)),
        common::ok_json("POST", &format!("{path}/star"), None, &item(n, true)),
        common::ok_json("POST", &format!("{path}/unstar"), None, &item(n, false)),
        common::ok_json("GET", &path, None, &item(n, false)),
    ]
}

#[test]
fn an_undo_is_compared_with_the_action_the_session_sent_just_before_it() {
    let m = common::synth_runs("items", "https://api.items.test", vec![run(1), run(2)]);
    let star = common::route(&m, "POST", "/v1/items/:param/star");
    let effect = star.action.as_ref().expect("star acts on the item");
    assert_eq!(effect.fields, vec!["starred".to_string()]);
    let unstar = common::route(&m, "POST", "/v1/items/:param/unstar");
    let effect = unstar.action.as_ref().expect("unstar acts on the item");
    assert_eq!(
        effect.fields,
        vec!["starred".to_string()],
        "the second unstar undid the star before it"
    );
}
