//! Member effects of a bodiless write on a path naming the member (`PUT
//! /user/starred/:owner/:name`, `204`), through `synthesize`: state planning takes such a write
//! for an update of a type no route creates, which keeps nothing, so what the list read after
//! it shows is learned as for a write with no state operation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::{Value, json};
use wraith_model::{MemberEffect, MemberSource};
use wraith_recording::{Exchange, Headers, RecordedSession};

const START_US: u64 = 1_700_000_000_000_000;

fn repo(n: u64, name: &str) -> Value {
    json!({"id": n, "name": name, "owner": {"login": "alice"}})
}

/// `method path` answered `status` with `answer` (`null`: no body).
fn write(method: &str, path: &str, status: u16, answer: &Value) -> Exchange {
    common::json_exchange(method, path, status, Headers::new(), None, answer)
}

/// Session `n`: create a repository, read it by name, star it (the star answered `answer`
/// with `status`), list the stars, unstar it, list them again.
fn session(n: u64, status: u16, answer: &Value) -> RecordedSession {
    session_unstarring(n, status, answer, 1)
}

/// [`session`], with the unstar sent `unstars` times in a row before the last list.
fn session_unstarring(n: u64, status: u16, answer: &Value, unstars: usize) -> RecordedSession {
    let names = ["amber-compass", "frozen-quill", "ivory-falcon"];
    let name = names[n as usize % names.len()];
    let star = format!("/user/starred/alice/{name}");
    common::session(
        &format!("s{n}"),
        START_US + n * 60_000_000,
        vec![
            ok_json(
                "POST",
                "/repos",
                Some(&json!({"name": name})),
                &repo(n, name),
            ),
            ok_json("GET", &format!("/repos/alice/{name}"), None, &repo(n, name)),
            write("PUT", &star, status, answer),
            ok_json("GET", "/user/starred", None, &json!([repo(n, name)])),
        ]
        .into_iter()
        .chain(std::iter::repeat_n(
            write("DELETE", &star, status, answer),
            unstars,
        ))
        .chain([ok_json("GET", "/user/starred", None, &json!([]))])
        .collect(),
    )
}

fn effects(status: u16, answer: &Value, method: &str) -> Vec<MemberEffect> {
    let sessions: Vec<RecordedSession> = (0..3).map(|n| session(n, status, answer)).collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    let route = model
        .routes
        .iter()
        .find(|r| r.method == method && r.path.starts_with("/user/starred/"))
        .unwrap();
    route.member_effects.clone()
}

#[test]
fn a_bodiless_write_on_a_path_naming_a_record_adds_it_to_the_list_and_its_delete_removes_it() {
    let effect = |adds: bool| MemberEffect {
        list_path: "/user/starred".into(),
        member_type: "repos".into(),
        adds,
        member: MemberSource::Param {
            param: "param2".into(),
        },
    };
    assert_eq!(effects(204, &Value::Null, "PUT"), vec![effect(true)]);
    assert_eq!(effects(204, &Value::Null, "DELETE"), vec![effect(false)]);
}

#[test]
fn a_write_answering_a_record_of_its_own_keeps_it_and_learns_no_member_effect() {
    let answer = json!({"id": 7, "starred_at": "2026-01-01T00:00:00Z"});
    assert_eq!(effects(200, &answer, "PUT"), Vec::<MemberEffect>::new());
}

#[test]
fn a_write_sent_twice_in_a_row_shows_its_effect_across_both() {
    // Each session unstars twice before it lists again: no list sits between the two.
    let sessions: Vec<RecordedSession> = (0..3)
        .map(|n| session_unstarring(n, 204, &Value::Null, 2))
        .collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    let route = model
        .routes
        .iter()
        .find(|r| r.method == "DELETE" && r.path.starts_with("/user/starred/"))
        .unwrap();
    assert_eq!(
        route.member_effects,
        vec![MemberEffect {
            list_path: "/user/starred".into(),
            member_type: "repos".into(),
            adds: false,
            member: MemberSource::Param {
                param: "param2".into(),
            },
        }]
    );
}
