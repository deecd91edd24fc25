//! Member effects (`Route::member_effects`): a write whose member is its path's record adds it
//! to a list (or takes it out of every list of the session), and one whose member is the acting
//! principal's own record (`Route::actor_record`) adds that record to the list of the entity it
//! acts on.

use crate::support;

use serde_json::json;
use support::*;
use wraith_engine::Engine;
use wraith_model::*;

const ALICE: &str = "Bearer alice";

fn effect(list_path: &str, adds: bool, member: MemberSource) -> MemberEffect {
    MemberEffect {
        list_path: list_path.into(),
        member_type: "customers".into(),
        adds,
        member,
    }
}

fn by_param() -> MemberSource {
    MemberSource::Param { param: "id".into() }
}

/// A write answering `{}` with the given member effects.
fn action(path: &str, effects: Vec<MemberEffect>) -> Route {
    let mut r = R::new("POST", path)
        .variant(200, Guard::Always, c(json!({})))
        .build();
    r.member_effects = effects;
    r
}

/// A list read whose template and recorded answer list `cus_recorded`.
fn recorded_list(path: &str, concrete: &str) -> Route {
    R::new("GET", path)
        .variant(
            200,
            Guard::Always,
            c(json!([{"id": "cus_recorded", "object": "customer"}])),
        )
        .exact(
            concrete,
            "",
            None,
            vec![moment(
                "s1/7",
                200,
                json!([{"id": "cus_recorded", "object": "customer"}]),
            )],
        )
        .build()
}

/// The shop with starring (`/v1/starred`), groups with membership actions, blocking (which
/// takes the customer out of every group), liking (`/v1/customers/:id/likers` lists who
/// liked) and a "who am I" read answering Alice's own record.
fn shop_with_member_effects() -> Engine {
    shop_with_me_named("Alice")
}

/// [`shop_with_member_effects`] whose "who am I" read answers Alice's record named `name`.
fn shop_with_me_named(name: &str) -> Engine {
    let mut m = shop_model();
    let groups = "/v1/groups/:id/members";
    let membership = |adds| MembershipEffect {
        list_path: groups.into(),
        ids_field: "/customer_ids".into(),
        member_type: "customers".into(),
        adds,
    };
    let mut add = action(groups, Vec::new());
    add.membership = Some(membership(true));
    let mut me = R::new("GET", "/v1/me")
        .variant(
            200,
            Guard::Always,
            c(json!({"id": "cus_1", "object": "customer", "name": name})),
        )
        .build();
    me.actor_record = Some(ActorRecord {
        entity_type: "customers".into(),
        pointer: String::new(),
    });
    m.routes.extend([
        action(
            "/v1/customers/:id/star",
            vec![effect("/v1/starred", true, by_param())],
        ),
        action(
            "/v1/customers/:id/unstar",
            vec![effect("/v1/starred", false, by_param())],
        ),
        recorded_list("/v1/starred", "/v1/starred"),
        add,
        recorded_list(groups, "/v1/groups/g1/members"),
        action(
            "/v1/customers/:id/block",
            vec![effect(groups, false, by_param())],
        ),
        action(
            "/v1/customers/:id/like",
            vec![effect(
                "/v1/customers/:id/likers",
                true,
                MemberSource::Actor,
            )],
        ),
        recorded_list("/v1/customers/:id/likers", "/v1/customers/cus_2/likers"),
        me,
    ]);
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    engine(m, det_opts())
}

fn as_alice(e: &Engine, s: Option<&str>, method: &str, path: &str) -> wraith_engine::Response {
    e.handle(
        s,
        &with_header(req(method, path, None), "authorization", ALICE),
    )
}

fn listed(e: &Engine, s: Option<&str>, path: &str) -> Vec<String> {
    body(&get(e, s, path))
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn path_member_add_lists_the_sessions_record_over_the_recorded_answer_and_remove_drops_it() {
    let e = shop_with_member_effects();
    let s = Some("stars");
    let renamed = send(
        &e,
        s,
        "PATCH",
        "/v1/customers/cus_2",
        json!({"name": "Bobby"}),
    );
    assert_eq!(renamed.status, 200);
    assert_eq!(
        send(&e, s, "POST", "/v1/customers/cus_2/star", json!({})).status,
        200
    );
    let page = body(&get(&e, s, "/v1/starred"));
    assert_eq!(page[0]["id"], json!("cus_2"), "{page}");
    assert_eq!(
        page[0]["name"],
        json!("Bobby"),
        "the record as stored: {page}"
    );
    assert_eq!(page.as_array().map(Vec::len), Some(1), "{page}");

    assert_eq!(
        send(&e, s, "POST", "/v1/customers/cus_2/unstar", json!({})).status,
        200
    );
    assert!(listed(&e, s, "/v1/starred").is_empty());
    assert_eq!(
        listed(&e, Some("other"), "/v1/starred"),
        vec!["cus_recorded"],
        "another session replays the recording"
    );
}

#[test]
fn path_member_remove_takes_the_record_out_of_every_list_of_the_session() {
    let e = shop_with_member_effects();
    let s = Some("blocks");
    for group in ["g1", "g2"] {
        let path = format!("/v1/groups/{group}/members");
        let added = send(
            &e,
            s,
            "POST",
            &path,
            json!({"customer_ids": ["cus_1", "cus_2"]}),
        );
        assert_eq!(added.status, 200);
        assert_eq!(listed(&e, s, &path), vec!["cus_1", "cus_2"], "{path}");
    }
    assert_eq!(
        send(&e, s, "POST", "/v1/customers/cus_1/block", json!({})).status,
        200
    );
    for group in ["g1", "g2"] {
        let path = format!("/v1/groups/{group}/members");
        assert_eq!(listed(&e, s, &path), vec!["cus_2"], "{path}");
    }
}

/// In session `s`, Alice reads who she is, likes Bob, and the likers page is read.
fn likers_after_alice_likes(e: &Engine, s: Option<&str>) -> serde_json::Value {
    assert_eq!(as_alice(e, s, "GET", "/v1/me").status, 200);
    assert_eq!(
        as_alice(e, s, "POST", "/v1/customers/cus_2/like").status,
        200
    );
    body(&get(e, s, "/v1/customers/cus_2/likers"))
}

#[test]
fn actor_member_add_lists_the_acting_principals_own_record() {
    let page = likers_after_alice_likes(&shop_with_member_effects(), Some("likes"));
    assert_eq!(page[0]["id"], json!("cus_1"), "{page}");
    assert_eq!(page[0]["name"], json!("Alice"), "{page}");
    assert_eq!(page.as_array().map(Vec::len), Some(1), "{page}");
}

#[test]
fn actor_member_is_listed_as_the_session_last_saw_its_own_record() {
    // The session saw Alice's record answered with another name than the model records.
    let e = without_pii(shop_with_me_named("Alice Liddell"));
    let page = likers_after_alice_likes(&e, Some("likes-seen"));
    assert_eq!(page[0]["id"], json!("cus_1"), "{page}");
    assert_eq!(page[0]["name"], json!("Alice Liddell"), "{page}");
}

#[test]
fn actor_member_add_without_a_known_actor_leaves_the_list_recorded() {
    let e = shop_with_member_effects();
    let s = Some("anonymous-like");
    // Nothing in this session said who Alice is.
    assert_eq!(
        as_alice(&e, s, "POST", "/v1/customers/cus_2/like").status,
        200
    );
    assert_eq!(
        listed(&e, s, "/v1/customers/cus_2/likers"),
        vec!["cus_recorded"]
    );
}

/// The shop with `PUT /v1/starred/:id` (adds the customer its path names to `/v1/starred`) and
/// `DELETE /v1/starred/:id` (no effect of its own), each `204` for a known customer and `404`
/// otherwise, as recordings show a star of a record that is there and one that is not.
fn shop_with_star_paths() -> Engine {
    let mut m = shop_model();
    let star = |method: &str| {
        R::new(method, "/v1/starred/:id")
            .op(StateOp::Update, "starred")
            .variant(404, member(false), c(json!({"error": "not found"})))
            .variant_empty(204, member(true))
            .build()
    };
    let mut put = star("PUT");
    put.member_effects = vec![effect("/v1/starred", true, by_param())];
    m.routes.extend([put, star("DELETE")]);
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    engine(m, det_opts())
}

#[test]
fn a_path_naming_a_record_a_write_there_adds_asks_the_sessions_store() {
    let e = shop_with_star_paths();
    let s = Some("agent");
    let created = body(&send(
        &e,
        s,
        "POST",
        "/v1/customers",
        json!({"name": "Zoe"}),
    ));
    let id = created["id"].as_str().expect("a minted id").to_string();
    let path = format!("/v1/starred/{id}");
    assert_eq!(as_alice(&e, s, "PUT", &path).status, 204);
    // The delete learned no effect, but names the same record as the write beside it.
    assert_eq!(as_alice(&e, s, "DELETE", &path).status, 204);
    assert_eq!(
        as_alice(&e, s, "DELETE", "/v1/starred/cus_nowhere").status,
        404
    );
    // Another session does not hold the record.
    assert_eq!(as_alice(&e, Some("other"), "DELETE", &path).status, 404);
}
