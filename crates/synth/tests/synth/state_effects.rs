//! State effects of writes with no state operation, learned from small synthetic recordings:
//! member effects (a write whose path names the member adds it to, or removes it from, a list
//! another route reads; a write whose member is the acting principal's own record adds it to
//! the list of the entity it acts on) and action effects seen only in a later read (fields an
//! action answering `{}` set, per value of a request body field).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};
use std::collections::BTreeMap;

use wraith_model::{ActorRecord, MemberEffect, MemberSource, Model};
use wraith_recording::{Exchange, RecordedSession};
use wraith_synth::{SynthOptions, synthesize};

use common::authed_json as ex;

fn session(id: &str, exchanges: Vec<Exchange>) -> RecordedSession {
    common::session(id, 0, exchanges)
}

fn user(id: &str) -> Value {
    json!({"id": id, "name": format!("name of {id}"), "bio": "hello", "followers": 3})
}

fn item(id: &str, owner: &str) -> Value {
    json!({"id": id, "title": "a thing", "price": 12, "owner": user(owner)})
}

/// One recorded run per principal: it creates an item (answered with its owner, the
/// principal's own user), stars and unstars it (`GET /v1/starred` lists it in between), likes
/// it (`GET /v1/items/:id/likers` then lists the principal's user), and blocks a user another
/// group listed (after which that group no longer lists it).
fn recordings(likers_list_the_actor: bool) -> Vec<RecordedSession> {
    let runs = [
        (
            "Bearer tok_a",
            "u_8f3a1c9e27",
            "it_5d2b7e1a90",
            "g_4c1e8b2d77",
            "u_1b9d3f6a42",
        ),
        (
            "Bearer tok_b",
            "u_2e7c4a1b93",
            "it_9a4f1c6e28",
            "g_7e2a9c4b15",
            "u_6c3e9a2d81",
        ),
        (
            "Bearer tok_c",
            "u_5b1d8e3f62",
            "it_3c8e5a2f71",
            "g_1f6b3d8e94",
            "u_9e4a2c7b36",
        ),
    ];
    runs.iter()
        .enumerate()
        .map(|(n, (auth, me, it, group, other))| {
            let likers = if likers_list_the_actor {
                json!([user(me)])
            } else {
                json!([])
            };
            session(
                &format!("run{n}"),
                vec![
                    ex("GET", &format!("/v1/users/{me}"), auth, None, user(me)),
                    ex(
                        "GET",
                        &format!("/v1/users/{other}"),
                        auth,
                        None,
                        user(other),
                    ),
                    ex(
                        "POST",
                        "/v1/items",
                        auth,
                        Some(json!({"title": "a thing"})),
                        item(it, me),
                    ),
                    ex("GET", &format!("/v1/items/{it}"), auth, None, item(it, me)),
                    ex(
                        "POST",
                        &format!("/v1/items/{it}/star"),
                        auth,
                        None,
                        json!({}),
                    ),
                    ex("GET", "/v1/starred", auth, None, json!([item(it, me)])),
                    ex(
                        "POST",
                        &format!("/v1/items/{it}/unstar"),
                        auth,
                        None,
                        json!({}),
                    ),
                    ex("GET", "/v1/starred", auth, None, json!([])),
                    ex(
                        "POST",
                        &format!("/v1/items/{it}/like"),
                        auth,
                        None,
                        json!({}),
                    ),
                    ex("GET", &format!("/v1/items/{it}/likers"), auth, None, likers),
                    ex(
                        "GET",
                        &format!("/v1/groups/{group}/members"),
                        auth,
                        None,
                        json!([user(other)]),
                    ),
                    ex(
                        "POST",
                        &format!("/v1/users/{other}/block"),
                        auth,
                        None,
                        json!({}),
                    ),
                    ex(
                        "GET",
                        &format!("/v1/groups/{group}/members"),
                        auth,
                        None,
                        json!([]),
                    ),
                ],
            )
        })
        .collect()
}

fn model(sessions: &[RecordedSession]) -> Model {
    synthesize(
        sessions,
        &SynthOptions {
            twin: "shop".into(),
            base_url: "https://api.shop.example".into(),
            tool_version: "test".into(),
            tag: None,
            request_keying: Default::default(),
            run_gap_us: None,
        },
    )
    .model
}

/// The route's path with its parameter names, as synth named them.
fn path_like(m: &Model, method: &str, prefix: &str, last: &str) -> String {
    m.routes
        .iter()
        .find(|r| r.method == method && r.path.starts_with(prefix) && r.path.ends_with(last))
        .map(|r| r.path.clone())
        .unwrap_or_else(|| panic!("no {method} {prefix}…{last}"))
}

fn param_effect(list_path: &str, member_type: &str, adds: bool, param: &str) -> MemberEffect {
    MemberEffect {
        list_path: list_path.into(),
        member_type: member_type.into(),
        adds,
        member: MemberSource::Param {
            param: param.into(),
        },
    }
}

#[test]
fn a_write_whose_path_record_appears_in_a_list_read_after_it_adds_it_and_its_undo_removes_it() {
    let m = model(&recordings(true));
    let star = path_like(&m, "POST", "/v1/items/", "/star");
    let unstar = path_like(&m, "POST", "/v1/items/", "/unstar");
    let star = common::route(&m, "POST", &star);
    let param = star.params[0].clone();
    let items = common::route(&m, "GET", &path_like(&m, "GET", "/v1/items/", ""))
        .entity_type
        .clone()
        .expect("items are an entity type");
    assert_eq!(
        star.member_effects,
        vec![param_effect("/v1/starred", &items, true, &param)]
    );
    assert_eq!(
        common::route(&m, "POST", &unstar).member_effects,
        vec![param_effect("/v1/starred", &items, false, &param)]
    );
}

#[test]
fn a_write_after_which_a_list_no_longer_lists_its_path_record_removes_it_from_every_list() {
    let m = model(&recordings(true));
    let block = path_like(&m, "POST", "/v1/users/", "/block");
    let block = common::route(&m, "POST", &block);
    let members = path_like(&m, "GET", "/v1/groups/", "/members");
    let users = common::route(&m, "GET", &path_like(&m, "GET", "/v1/users/", ""))
        .entity_type
        .clone()
        .expect("users are an entity type");
    assert_eq!(
        block.member_effects,
        vec![param_effect(&members, &users, false, &block.params[0])]
    );
}

#[test]
fn a_write_after_which_the_sibling_list_lists_the_actors_own_record_adds_the_actor() {
    let m = model(&recordings(true));
    let like = path_like(&m, "POST", "/v1/items/", "/like");
    let likers = path_like(&m, "GET", "/v1/items/", "/likers");
    let users = common::route(&m, "GET", &path_like(&m, "GET", "/v1/users/", ""))
        .entity_type
        .clone()
        .expect("users are an entity type");
    assert_eq!(
        common::route(&m, "POST", &like).member_effects,
        vec![MemberEffect {
            list_path: likers,
            member_type: users.clone(),
            adds: true,
            member: MemberSource::Actor,
        }]
    );
    // The create answers the acting principal's user at `/owner`.
    assert_eq!(
        common::route(&m, "POST", "/v1/items").actor_record,
        Some(ActorRecord {
            entity_type: users,
            pointer: "/owner".into(),
        })
    );
}

#[test]
fn a_sibling_list_that_never_lists_the_actor_learns_no_actor_effect() {
    let m = model(&recordings(false));
    let like = path_like(&m, "POST", "/v1/items/", "/like");
    assert!(common::route(&m, "POST", &like).member_effects.is_empty());
    assert!(m.routes.iter().all(|r| r.actor_record.is_none()));
}

fn account(id: &str, disabled: bool, silenced: bool) -> Value {
    json!({"id": id, "name": format!("name of {id}"), "disabled": disabled, "silenced": silenced})
}

/// One run per account: an action naming what it does in `type` answers `{}`; the next read
/// of the account shows the field that value set; an undo answers the account itself.
fn moderation_recordings() -> Vec<RecordedSession> {
    ["acc_7d1e9b3f50", "acc_2c8a5e1d94", "acc_9f3b6d2a71"]
        .iter()
        .enumerate()
        .map(|(n, id)| {
            let auth = "Bearer admin";
            let path = format!("/v1/accounts/{id}");
            let act = format!("{path}/action");
            session(
                &format!("moderation{n}"),
                vec![
                    ex("GET", &path, auth, None, account(id, false, false)),
                    ex(
                        "POST",
                        &act,
                        auth,
                        Some(json!({"type": "disable", "notify": true})),
                        json!({}),
                    ),
                    ex("GET", &path, auth, None, account(id, true, false)),
                    ex(
                        "POST",
                        &format!("{path}/enable"),
                        auth,
                        None,
                        account(id, false, false),
                    ),
                    ex(
                        "POST",
                        &act,
                        auth,
                        Some(json!({"type": "silence", "notify": true})),
                        json!({}),
                    ),
                    ex("GET", &path, auth, None, account(id, false, true)),
                ],
            )
        })
        .collect()
}

#[test]
fn an_action_answering_nothing_sets_the_fields_the_next_read_showed_per_request_value() {
    let m = model(&moderation_recordings());
    let act = path_like(&m, "POST", "/v1/accounts/", "/action");
    let effect = common::route(&m, "POST", &act)
        .action
        .clone()
        .expect("the action's effect is learned from the reads after it");
    let accounts = common::route(&m, "GET", &path_like(&m, "GET", "/v1/accounts/", ""))
        .entity_type
        .clone()
        .expect("accounts are an entity type");
    assert_eq!(effect.entity_type, accounts);
    assert_eq!(effect.set_by, "/type", "{effect:?}");
    let expected: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::from([
        (
            "disable".to_string(),
            BTreeMap::from([("disabled".to_string(), json!(true))]),
        ),
        (
            "silence".to_string(),
            BTreeMap::from([("silenced".to_string(), json!(true))]),
        ),
    ]);
    assert_eq!(effect.sets, expected);
    assert!(
        effect.fields.is_empty() && effect.counters.is_empty(),
        "{effect:?}"
    );
}

fn person(id: &str, handle: &str) -> Value {
    json!({"id": id, "handle": handle, "url": format!("https://shop.example/@{handle}"), "bio": "hi"})
}

fn mention(id: &str, handle: &str) -> Value {
    json!({"id": id, "handle": handle, "url": format!("https://shop.example/@{handle}")})
}

/// Notes whose text names people as `@handle`; the answer lists them under `mentions`.
fn note_recordings() -> Vec<RecordedSession> {
    let people = [
        ("p_4e8b1d7c92", "bob_1"),
        ("p_7a2f9c3e61", "carol"),
        ("p_1d6e8a4b37", "dave"),
    ];
    let notes = [
        ("nt_3b7e1c9a52", "@bob_1 hello", vec![0]),
        ("nt_8c2a6e4d13", "hi @carol and @dave.", vec![1, 2]),
        ("nt_5f9d3b7a26", "no one here", vec![]),
        ("nt_2e6c9a1f84", "@dave again", vec![2]),
    ];
    let mut exchanges: Vec<Exchange> = people
        .iter()
        .map(|(id, handle)| {
            ex(
                "GET",
                &format!("/v1/people/{id}"),
                "Bearer a",
                None,
                person(id, handle),
            )
        })
        .collect();
    for (id, text, named) in notes {
        let mentions: Vec<Value> = named
            .iter()
            .map(|&n| mention(people[n].0, people[n].1))
            .collect();
        exchanges.push(ex(
            "POST",
            "/v1/notes",
            "Bearer a",
            Some(json!({"text": text, "visibility": "public"})),
            json!({"id": id, "text": text, "mentions": mentions}),
        ));
    }
    vec![session("notes", exchanges)]
}

#[test]
fn an_answer_array_of_the_records_the_sent_text_names_is_learned_as_text_mentions() {
    let m = model(&note_recordings());
    let people = common::route(&m, "GET", &path_like(&m, "GET", "/v1/people/", ""))
        .entity_type
        .clone()
        .expect("people are an entity type");
    assert_eq!(
        common::route(&m, "POST", "/v1/notes").text_mentions,
        Some(wraith_model::TextMentions {
            at: "/mentions".into(),
            text_field: "/text".into(),
            key: "handle".into(),
            entity_type: people,
            item_keys: vec!["id".into(), "handle".into(), "url".into()],
        })
    );
}

#[test]
fn an_answer_array_the_text_does_not_name_learns_no_text_mentions() {
    let mut sessions = note_recordings();
    // The second note's text no longer names the people its answer lists.
    if let Some(e) = sessions[0].exchanges.get_mut(4) {
        e.request.body = json!({"text": "hi everyone", "visibility": "public"})
            .to_string()
            .into_bytes()
            .into();
    }
    let m = model(&sessions);
    assert_eq!(common::route(&m, "POST", "/v1/notes").text_mentions, None);
}
