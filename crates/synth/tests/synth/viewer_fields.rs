//! Fields that depend on who is looking (`Route::viewer_fields`), learned from small
//! synthetic recordings: an item's `pinned` shows only to its owner, and its owner's
//! `approval.current` reads per viewer class and per `approval.policy`. A recorded view that
//! contradicts a rule drops it; views by one class only teach nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;

use serde_json::{Value, json};
use wraith_model::{Model, Route, ViewerField, ViewerShown};
use wraith_recording::RecordedSession;

use common::authed_json as ex;

/// A user as `mine` (its own principal) or another principal sees it.
fn user(id: &str, policy: &str, mine: bool) -> Value {
    let current = if mine || policy == "public" {
        "automatic"
    } else {
        "denied"
    };
    json!({"id": id, "name": format!("name of {id}"), "approval": {"policy": [policy], "current": current}})
}

/// An item owned by `owner`, as its owner (`mine`) or another principal sees it.
fn item(id: &str, owner: &str, policy: &str, mine: bool) -> Value {
    let mut v = json!({"id": id, "title": "a thing", "owner": user(owner, policy, mine)});
    if mine {
        v["pinned"] = json!(false);
    }
    v
}

const RUNS: [(&str, &str, &str, &str); 3] = [
    ("Bearer tok_a", "u_8f3a1c9e27", "it_5d2b7e1a90", "followers"),
    ("Bearer tok_b", "u_2e7c4a1b93", "it_9a4f1c6e28", "public"),
    ("Bearer tok_c", "u_5b1d8e3f62", "it_3c8e5a2f71", "followers"),
];

/// One run per principal: it reads its own user, creates an item (answered with its owner,
/// the principal's user), likes it (the likers list then lists the principal: the create's
/// `/owner` is the acting principal's record), reads its item and the next run's item (the
/// other's view, `pinned` shown when `leak` is set).
fn recordings(leak: bool) -> Vec<RecordedSession> {
    (0..RUNS.len())
        .map(|n| {
            let (auth, me, it, policy) = RUNS[n];
            let (_, them, their_item, their_policy) = RUNS[(n + 1) % RUNS.len()];
            let mut theirs = item(their_item, them, their_policy, false);
            if leak && n == 0 {
                theirs["pinned"] = json!(false);
            }
            let exchanges = vec![
                ex(
                    "GET",
                    &format!("/v1/users/{me}"),
                    auth,
                    None,
                    user(me, policy, true),
                ),
                ex(
                    "POST",
                    "/v1/items",
                    auth,
                    Some(json!({"title": "a thing"})),
                    item(it, me, policy, true),
                ),
                ex(
                    "POST",
                    &format!("/v1/items/{it}/like"),
                    auth,
                    None,
                    json!({}),
                ),
                ex(
                    "GET",
                    &format!("/v1/items/{it}/likers"),
                    auth,
                    None,
                    json!([user(me, policy, true)]),
                ),
                ex(
                    "GET",
                    &format!("/v1/items/{it}"),
                    auth,
                    None,
                    item(it, me, policy, true),
                ),
                ex(
                    "GET",
                    &format!("/v1/items/{their_item}"),
                    auth,
                    None,
                    theirs,
                ),
            ];
            common::session(&format!("run{n}"), n as u64 * 1_000, exchanges)
        })
        .collect()
}

fn create(m: &Model) -> &Route {
    m.routes
        .iter()
        .find(|r| r.method == "POST" && r.path == "/v1/items")
        .expect("item create route")
}

fn synth(sessions: &[RecordedSession]) -> Model {
    common::synth_model("shop", "https://api.shop.example", sessions)
}

#[test]
fn fields_shown_by_viewer_class_are_learned_from_owner_and_other_views() {
    let m = synth(&recordings(false));
    let create = create(&m);
    assert!(
        create.actor_record.is_some(),
        "the create carries its owner"
    );
    let rule = create
        .viewer_fields
        .as_ref()
        .expect("viewer fields learned");
    assert_eq!(rule.owner_at, "/owner");
    let k = |s: &str| s.to_string();
    assert_eq!(
        rule.fields,
        vec![
            ViewerField {
                at: "/owner/approval/current".into(),
                shown: ViewerShown::Value {
                    key: "/owner/approval/policy".into(),
                    owner: BTreeMap::from([
                        (k("[\"followers\"]"), json!("automatic")),
                        (k("[\"public\"]"), json!("automatic")),
                    ]),
                    others: BTreeMap::from([
                        (k("[\"followers\"]"), json!("denied")),
                        (k("[\"public\"]"), json!("automatic")),
                    ]),
                },
            },
            ViewerField {
                at: "/pinned".into(),
                shown: ViewerShown::OwnerOnly,
            },
        ]
    );
}

#[test]
fn an_owner_only_field_one_other_view_showed_is_not_learned() {
    let m = synth(&recordings(true));
    let rule = create(&m)
        .viewer_fields
        .as_ref()
        .expect("the value rule stays");
    assert!(
        rule.fields.iter().all(|f| f.at != "/pinned"),
        "{:?}",
        rule.fields
    );
}

#[test]
fn views_by_owners_only_teach_no_viewer_fields() {
    // Without the cross reads, every item view is its owner's.
    let sessions: Vec<RecordedSession> = recordings(false)
        .into_iter()
        .map(|mut s| {
            s.exchanges.pop();
            s
        })
        .collect();
    let m = synth(&sessions);
    assert!(create(&m).actor_record.is_some());
    assert_eq!(create(&m).viewer_fields, None);
}
