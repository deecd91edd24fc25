//! An action that undoes one answering its record inside a new record of the same type (an
//! unreblog after a reblog) names that action as one whose wrapper it deletes: the reblog
//! stores `reblogged: true` on the post, the unreblog `false`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

fn post(id: u64, reblogged: bool, reblog: Value) -> Value {
    json!({"id": id.to_string(), "text": format!("post {id}"), "reblogged": reblogged, "reblog": reblog})
}

/// Run `n`: read post `10n`, reblog it (wrapper `10n+1`), undo (answered `undone`), read it.
fn run(n: u64, undone: bool) -> Vec<wraith_recording::Exchange> {
    let id = 10 * n;
    let path = format!("/v1/posts/{id}");
    vec![
        common::ok_json("GET", &path, None, &post(id, false, Value::Null)),
        common::ok_json(
            "POST",
            &format!("{path}/reblog"),
            None,
            &post(id + 1, true, post(id, true, Value::Null)),
        ),
        common::ok_json(
            "POST",
            &format!("{path}/unreblog"),
            None,
            &post(id, undone, Value::Null),
        ),
        common::ok_json("GET", &path, None, &post(id, false, Value::Null)),
    ]
}

/// The reblog route's id and what the unreblog route undoes.
fn undoes(undone: bool) -> (String, Vec<String>) {
    let m = common::synth_runs(
        "posts",
        "https://social.test",
        vec![run(1, undone), run(2, undone), run(3, undone)],
    );
    let reblog = common::route(&m, "POST", "/v1/posts/:param/reblog");
    assert_eq!(
        reblog.action.as_ref().map(|a| a.at.as_str()),
        Some("/reblog"),
        "the reblog answers the post inside its wrapper: {:?}",
        reblog.action
    );
    let unreblog = common::route(&m, "POST", "/v1/posts/:param/unreblog");
    let action = unreblog
        .action
        .as_ref()
        .expect("the unreblog acts on the post");
    (reblog.id.clone(), action.undoes_wrappers.clone())
}

#[test]
fn an_undo_setting_the_opposite_boolean_deletes_the_wrapper_the_action_made() {
    let (reblog, undoes) = undoes(false);
    assert_eq!(undoes, vec![reblog]);
}

#[test]
fn an_action_not_answering_the_opposite_boolean_deletes_no_wrapper() {
    // The second write answers `reblogged: true` too: no undo, whatever its name.
    let (_, undoes) = undoes(true);
    assert!(undoes.is_empty(), "{undoes:?}");
}
