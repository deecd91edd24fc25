//! Lists of records filed under a parent by a member (`ListShape::parent_member`): a list under
//! `/users/:id/` whose items name that user only inside an array of each item (a group's
//! `members[].user_id`), learned from small synthetic recordings, and not learned from a
//! nested value that merely equals the path parameter.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

use wraith_model::Model;
use wraith_recording::{Exchange, Headers, RecordedSession};

fn get(path: &str, answer: Value) -> Exchange {
    common::json_exchange("GET", path, 200, Headers::new(), None, &answer)
}

fn post(path: &str, body: Value, answer: Value) -> Exchange {
    common::json_exchange("POST", path, 200, Headers::new(), Some(&body), &answer)
}

fn group(id: &str, name: &str, members: Value) -> Value {
    json!({"id": id, "name": name, "owner_id": "900", "members": members})
}

fn model(sessions: &[RecordedSession]) -> Model {
    common::synth_model("groups", "https://api.groups.example", sessions)
}

/// Sessions that create a group naming user `user` as a member, then list the user's groups;
/// `revoked` drops the member from the last recorded listing (as after a revocation).
fn group_sessions(user: &str, revoked: bool) -> Vec<RecordedSession> {
    let ids = ["4101", "4102", "4103"];
    ids.iter()
        .enumerate()
        .map(|(n, id)| {
            let name = format!("team {n}");
            let with = group(id, &name, json!([{"id": format!("m{n}"), "user_id": user}]));
            let listed = if revoked && n == ids.len() - 1 {
                group(id, &name, json!([]))
            } else {
                with.clone()
            };
            common::session(
                &format!("s{n}"),
                0,
                vec![
                    post(
                        "/v1/groups",
                        json!({"name": name, "user_ids": [user]}),
                        with,
                    ),
                    get(&format!("/v1/users/{user}/groups"), json!([listed])),
                ],
            )
        })
        .collect()
}

#[test]
fn a_list_whose_items_name_its_parent_in_a_member_array_learns_the_member_pointer() {
    let m = model(&group_sessions("7700123", false));
    let r = common::route(&m, "GET", "/v1/users/:param/groups");
    let shape = r.list.as_ref().expect("a list route");
    assert_eq!(shape.parent_member.as_deref(), Some("/members/*/user_id"));
}

#[test]
fn an_item_whose_member_array_is_empty_does_not_contradict_the_member_pointer() {
    let m = model(&group_sessions("7700123", true));
    let r = common::route(&m, "GET", "/v1/users/:param/groups");
    let shape = r.list.as_ref().expect("a list route");
    assert_eq!(shape.parent_member.as_deref(), Some("/members/*/user_id"));
}

#[test]
fn a_nested_value_that_only_equals_the_path_parameter_is_no_member_pointer() {
    // A list `3`'s users each carry a role whose own id happens to be `3` too: the array
    // (`roles`) and its field (`id`) name no collection of the parent's kind (`lists`).
    let sessions: Vec<RecordedSession> = (0..2)
        .map(|n| {
            let user = json!({"id": format!("55{n}"), "roles": [{"id": "3", "name": "Owner"}]});
            common::session(
                &format!("s{n}"),
                0,
                vec![get("/v1/lists/3/users", json!([user]))],
            )
        })
        .collect();
    let m = model(&sessions);
    let r = common::route(&m, "GET", "/v1/lists/:param/users");
    let shape = r.list.as_ref().expect("a list route");
    assert_eq!(shape.parent_member, None);
}

#[test]
fn a_list_whose_items_name_the_parent_at_a_top_level_field_needs_no_member_pointer() {
    let sessions: Vec<RecordedSession> = (0..2)
        .map(|n| {
            let item = json!({"id": format!("8{n}"), "user_id": "7700123",
                "members": [{"user_id": "7700123"}]});
            common::session(
                &format!("s{n}"),
                0,
                vec![get("/v1/users/7700123/groups", json!([item]))],
            )
        })
        .collect();
    let m = model(&sessions);
    let shape = common::route(&m, "GET", "/v1/users/:param/groups")
        .list
        .clone()
        .unwrap();
    assert_eq!(shape.parent_member, None);
}

/// Sessions that post a status by `author` and list the author's statuses; `stranger` lists
/// a status by someone else as the last listing's second item.
fn status_sessions(author: &str, stranger: bool) -> Vec<RecordedSession> {
    (0..2)
        .map(|n| {
            let status = |id: String, by: &str| {
                json!({"id": id, "content": format!("post {n}"), "account": {"id": by, "username": "u"}})
            };
            let mine = status(format!("61{n}"), author);
            let mut listed = vec![mine.clone(), status(format!("60{n}"), author)];
            if stranger && n == 1 {
                listed[1] = status("599".into(), "4242");
            }
            common::session(
                &format!("s{n}"),
                0,
                vec![
                    post("/v1/statuses", json!({"status": format!("post {n}")}), mine),
                    get(&format!("/v1/accounts/{author}/statuses"), Value::Array(listed)),
                ],
            )
        })
        .collect()
}

#[test]
fn a_list_whose_every_item_names_its_parent_in_an_object_learns_the_object_pointer() {
    let m = model(&status_sessions("7700123", false));
    let shape = common::route(&m, "GET", "/v1/accounts/:param/statuses")
        .list
        .clone()
        .expect("a list route");
    assert_eq!(shape.parent_member.as_deref(), Some("/account/id"));
}

#[test]
fn one_item_naming_another_parent_in_the_object_is_no_object_pointer() {
    let m = model(&status_sessions("7700123", true));
    let shape = common::route(&m, "GET", "/v1/accounts/:param/statuses")
        .list
        .clone()
        .expect("a list route");
    assert_eq!(shape.parent_member, None);
}
