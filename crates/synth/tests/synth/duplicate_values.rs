//! Duplicate values (`Guard::DuplicateValue`): a create refused (409) only when it sent, at a
//! top-level field, the value a record its session still held had there is guarded on that
//! duplicate, and its accepted creates on its absence; a refusal also answered to a fresh
//! value, or a value accepted while a record held it, learns nothing of the kind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::json;

use wraith_model::{Guard, Model};
use wraith_recording::{Exchange, Headers, RecordedSession};

/// A widget whose color is its name's first letter: colors repeat only with names.
fn create(name: &str, id: &str) -> Exchange {
    let color = &name[..1];
    common::json_exchange(
        "POST",
        "/v1/widgets",
        201,
        Headers::new(),
        Some(&json!({"name": name, "color": color})),
        &json!({"id": id, "name": name, "color": color}),
    )
}

fn taken(name: &str) -> Exchange {
    common::json_exchange(
        "POST",
        "/v1/widgets",
        409,
        Headers::new(),
        Some(&json!({"name": name, "color": &name[..1]})),
        &json!({"error": "conflict", "message": "name already taken"}),
    )
}

fn delete(id: &str) -> Exchange {
    common::json_exchange(
        "DELETE",
        &format!("/v1/widgets/{id}"),
        204,
        Headers::new(),
        None,
        &json!(null),
    )
}

/// `g` refuses with `status` a `name` the session holds and accepts (201) one it does not.
fn assert_guarded_on_name(g: &[(u16, Guard)], status: u16) {
    let guard = |duplicate| Guard::DuplicateValue {
        pointer: "/name".into(),
        duplicate,
        per_principal: false,
    };
    assert!(g.contains(&(status, guard(true))), "{g:?}");
    assert!(g.contains(&(201, guard(false))), "{g:?}");
}

fn guards(sessions: Vec<Vec<Exchange>>) -> Vec<(u16, Guard)> {
    guards_of(sessions, "/v1/widgets")
}

/// Every variant of `POST path` as (status, guard).
fn guards_of(sessions: Vec<Vec<Exchange>>, path: &str) -> Vec<(u16, Guard)> {
    let sessions: Vec<RecordedSession> = sessions
        .into_iter()
        .enumerate()
        .map(|(n, exchanges)| common::session(&format!("s{n}"), 0, exchanges))
        .collect();
    let m: Model = common::synth_model("widgets", "https://api.widgets.example", &sessions);
    common::route(&m, "POST", path)
        .variants
        .iter()
        .map(|v| (v.status, v.guard.clone()))
        .collect()
}

#[test]
fn a_conflict_answered_only_to_a_name_the_session_held_is_guarded_on_the_duplicate() {
    let g = guards(vec![
        vec![create("alpha", "w1"), taken("alpha"), create("bravo", "w2")],
        vec![create("kilo", "w3"), create("lima", "w4"), taken("kilo")],
        // The same name again after its record's delete is accepted: no record holds it.
        vec![create("mike", "w5"), delete("w5"), create("mike", "w6")],
    ]);
    assert_guarded_on_name(&g, 409);
}

#[test]
fn a_conflict_also_answered_to_a_fresh_name_is_no_duplicate_rule() {
    let g = guards(vec![
        vec![create("alpha", "w1"), taken("alpha")],
        vec![create("kilo", "w3"), taken("zulu"), create("zeta", "w4")],
    ]);
    assert!(!format!("{g:?}").contains("DuplicateValue"), "{g:?}");
}

#[test]
fn a_name_accepted_while_a_record_held_it_refutes_the_duplicate_rule() {
    let g = guards(vec![
        vec![create("alpha", "w1"), taken("alpha")],
        vec![create("kilo", "w3"), create("kilo", "w4")],
    ]);
    assert!(!format!("{g:?}").contains("DuplicateValue"), "{g:?}");
}

/// A project keyed by the name it was created with (read back at `/v1/projects/:name`).
fn project(name: &str) -> Vec<Exchange> {
    let p = json!({"name": name, "description": format!("about {name}")});
    vec![
        common::json_exchange(
            "POST",
            "/v1/projects",
            201,
            Headers::new(),
            Some(&json!({"name": name})),
            &p,
        ),
        common::ok_json("GET", &format!("/v1/projects/{name}"), None, &p),
    ]
}

/// A `422` refusing the create `body`, naming `code` for the field `name`.
fn invalid(body: serde_json::Value, code: &str) -> Exchange {
    common::json_exchange(
        "POST",
        "/v1/projects",
        422,
        Headers::new(),
        Some(&body),
        &json!({"message": "Validation Failed", "errors": [{"field": "name", "code": code}]}),
    )
}

#[test]
fn a_duplicate_key_among_other_refusals_of_its_status_is_guarded_on_the_duplicate() {
    let mut runs = Vec::new();
    for (n, (first, second)) in [("amber", "birch"), ("cedar", "dune"), ("elm", "fern")]
        .into_iter()
        .enumerate()
    {
        let mut run = project(first);
        run.extend(project(second));
        run.push(invalid(
            json!({"description": format!("run {n}")}),
            "missing_field",
        ));
        run.push(invalid(json!({"name": first}), "already_exists"));
        runs.push(run);
    }
    let g = guards_of(runs, "/v1/projects");
    assert_guarded_on_name(&g, 422);
}

/// `e` sent with `Authorization: Bearer <who>`.
fn by(who: &str, mut e: Exchange) -> Exchange {
    e.request
        .headers
        .insert("authorization".into(), vec![format!("Bearer {who}")]);
    e
}

#[test]
fn a_conflict_only_on_a_name_the_same_user_holds_is_a_duplicate_per_principal() {
    let g = guards(vec![
        vec![
            by("alice", create("alpha", "w1")),
            by("bob", create("alpha", "w2")),
            by("alice", taken("alpha")),
        ],
        vec![
            by("bob", create("kilo", "w3")),
            by("alice", create("kilo", "w4")),
            by("bob", taken("kilo")),
            by("alice", create("lima", "w5")),
        ],
    ]);
    let guard = |duplicate| Guard::DuplicateValue {
        pointer: "/name".into(),
        duplicate,
        per_principal: true,
    };
    assert!(g.contains(&(409, guard(true))), "{g:?}");
    assert!(g.contains(&(201, guard(false))), "{g:?}");
}
