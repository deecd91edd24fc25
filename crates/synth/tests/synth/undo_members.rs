//! An action that undoes another takes its member out of the list the other adds it to,
//! though no recording read the list after the undo: `follow` sets a tag's `following` to
//! `true` and the next read of the followed list lists it; `unfollow` sets it to `false`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};
use wraith_model::{MemberEffect, MemberSource};

fn tag(name: &str, following: bool) -> Value {
    json!({"name": name, "url": format!("https://social.test/tags/{name}"), "following": following})
}

/// Run `n`: read tag `tag-n`, read the followed list (empty), follow the tag, read the list
/// (the tag), unfollow it (answered `unfollowed`), read the tag.
fn run(n: u64, unfollowed: bool) -> Vec<wraith_recording::Exchange> {
    let name = format!("tag-{n}");
    let path = format!("/v1/tags/{name}");
    vec![
        common::ok_json("GET", &path, None, &tag(&name, false)),
        common::ok_json("GET", "/v1/followed_tags", None, &json!([])),
        common::ok_json("POST", &format!("{path}/follow"), None, &tag(&name, true)),
        common::ok_json("GET", "/v1/followed_tags", None, &json!([tag(&name, true)])),
        common::ok_json(
            "POST",
            &format!("{path}/unfollow"),
            None,
            &tag(&name, unfollowed),
        ),
        common::ok_json("GET", &path, None, &tag(&name, false)),
    ]
}

fn effects(unfollowed: bool) -> (Vec<MemberEffect>, Vec<MemberEffect>) {
    let m = common::synth_runs(
        "tags",
        "https://social.test",
        vec![run(1, unfollowed), run(2, unfollowed), run(3, unfollowed)],
    );
    let follow = common::route(&m, "POST", "/v1/tags/:param/follow");
    let unfollow = common::route(&m, "POST", "/v1/tags/:param/unfollow");
    (
        follow.member_effects.clone(),
        unfollow.member_effects.clone(),
    )
}

#[test]
fn an_undo_setting_the_opposite_boolean_removes_what_the_action_added() {
    let (follow, unfollow) = effects(false);
    let added = MemberEffect {
        list_path: "/v1/followed_tags".into(),
        member_type: "tags".into(),
        adds: true,
        member: MemberSource::Param {
            param: "param".into(),
        },
    };
    assert_eq!(follow, vec![added.clone()]);
    assert_eq!(
        unfollow,
        vec![MemberEffect {
            adds: false,
            ..added
        }]
    );
}

#[test]
fn an_action_not_answering_the_opposite_boolean_undoes_nothing() {
    // The second write answers `following: true` too (it is no undo, whatever its name).
    let (follow, unfollow) = effects(true);
    assert_eq!(follow.len(), 1, "{follow:?}");
    assert!(unfollow.is_empty(), "{unfollow:?}");
}
