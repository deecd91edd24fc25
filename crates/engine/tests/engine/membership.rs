//! Membership actions (`Route::membership`): an action naming records in its body adds them to
//! (or removes them from) a list another route reads under the same path, per session; and
//! last-write-wins writes (`Route::last_write_wins`), whose answer a later read of the path repeats.

use crate::support;

use serde_json::json;
use support::*;
use wraith_model::*;

/// The shop with `POST`/`DELETE /v1/groups/:id/members` (ids in `customer_ids`, empty answer)
/// and `GET /v1/groups/:id/members`, whose recorded answer lists some other recording's member.
fn shop_with_groups() -> wraith_engine::Engine {
    shop_with_groups_opts(det_opts())
}

/// `POST` (adds) or `DELETE` (removes) `/v1/groups/:id/members`, ids in `customer_ids`,
/// answered with an empty object.
fn membership_action(method: &str, adds: bool) -> Route {
    let mut r = R::new(method, "/v1/groups/:id/members")
        .variant(200, Guard::Always, c(json!({})))
        .build();
    r.membership = Some(MembershipEffect {
        list_path: "/v1/groups/:id/members".into(),
        ids_field: "/customer_ids".into(),
        member_type: "customers".into(),
        adds,
    });
    r
}

/// [`shop_with_groups`] served with `opts`.
fn shop_with_groups_opts(opts: wraith_engine::EngineOptions) -> wraith_engine::Engine {
    let mut m = shop_model();
    let add = membership_action("POST", true);
    let remove = membership_action("DELETE", false);
    let list = R::new("GET", "/v1/groups/:id/members")
        .variant(
            200,
            Guard::Always,
            c(json!([{"id": "cus_recorded", "object": "customer"}])),
        )
        // A recorded read of group g9 whose list another route's write emptied.
        .exact(
            "/v1/groups/g9/members",
            "",
            None,
            vec![moment("s1/1", 200, json!([]))],
        )
        .build();
    m.routes.extend([add, remove, list]);
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    engine(m, opts)
}

/// [`shop_with_groups`] whose members list is paged by `Link` cursors over member ids, its
/// recorded answer linking a full one-member page of group `g0` onwards and back.
fn shop_with_linked_groups() -> wraith_engine::Engine {
    let mut m = shop_model();
    let add = membership_action("POST", true);
    let mut list = R::new("GET", "/v1/groups/:id/members")
        .variant(
            200,
            Guard::Always,
            c(json!([{"id": "cus_recorded", "object": "customer"}])),
        )
        .build();
    list.list = Some(ListShape {
        pagination: Pagination::LinkHeader {
            next_param: "max_id".into(),
            prev_param: Some("since_id".into()),
            limit: Some("limit".into()),
            positional: false,
            numbered: false,
        },
        ..bare_array_list()
    });
    list.variants[0].headers.push(HeaderProgram {
        name: "link".into(),
        program: HeaderRule::Constant {
            values: vec![
                "<https://api.shop.test/v1/groups/g0/members?limit=1&max_id=cus_recorded>; \
                 rel=\"next\", <https://api.shop.test/v1/groups/g0/members?limit=1&since_id=7>; \
                 rel=\"prev\""
                    .into(),
            ],
        },
    });
    m.routes.extend([add, list]);
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    engine(m, det_opts())
}

#[test]
fn a_member_list_links_its_own_path_and_members_and_no_page_past_the_last() {
    let e = shop_with_linked_groups();
    let s = Some("linked");
    let path = "/v1/groups/g1/members";
    let link = |query: &str| {
        let r = get(&e, s, &format!("{path}{query}"));
        header(&r.headers, "link").map(str::to_string)
    };
    let created = send(&e, s, "POST", "/v1/customers", json!({"name": "Zoe"}));
    let id = body(&created)["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    send(&e, s, "POST", path, json!({"customer_ids": [id.clone()]}));
    // One member, no limit asked: only the link back, at this group and this member.
    let back = link("").unwrap_or_default();
    assert!(
        back.contains(&format!(
            "/v1/groups/g1/members?since_id={id}>; rel=\"prev\""
        )),
        "{back}"
    );
    assert!(!back.contains("rel=\"next\""), "{back}");
    assert!(
        !back.contains("g0") && !back.contains("cus_recorded"),
        "{back}"
    );
    // A page as full as the limit asked for links onwards too, from its last member.
    let full = link("?limit=1").unwrap_or_default();
    assert!(
        full.contains(&format!("max_id={id}>; rel=\"next\"")),
        "{full}"
    );
    // A page shorter than its limit has nothing after it.
    let short = link("?limit=5").unwrap_or_default();
    assert!(!short.contains("rel=\"next\""), "{short}");
}

fn listed_ids(e: &wraith_engine::Engine, s: Option<&str>, path: &str) -> Vec<String> {
    let page = body(&get(e, s, path));
    page.as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn membership_add_lists_the_named_records_and_remove_drops_them() {
    let e = shop_with_groups();
    let s = Some("members");
    let created = send(&e, s, "POST", "/v1/customers", json!({"name": "Zoe"}));
    let id = body(&created)["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!id.is_empty(), "the create answered an id");
    let path = "/v1/groups/g1/members";

    let added = send(&e, s, "POST", path, json!({"customer_ids": [id.clone()]}));
    assert_eq!(added.status, 200);
    assert_eq!(listed_ids(&e, s, path), vec![id.clone()]);
    let page = body(&get(&e, s, path));
    assert_eq!(
        page[0]["name"],
        json!("Zoe"),
        "the session's record: {page}"
    );

    let removed = send(&e, s, "DELETE", path, json!({"customer_ids": [id.clone()]}));
    assert_eq!(removed.status, 200);
    assert!(listed_ids(&e, s, path).is_empty(), "removed again");

    // Another group and another session keep the recorded answer.
    assert_eq!(
        listed_ids(&e, s, "/v1/groups/g2/members"),
        vec!["cus_recorded"]
    );
    assert_eq!(listed_ids(&e, Some("other"), path), vec!["cus_recorded"]);
}

#[test]
fn member_ids_count_towards_the_sessions_state_limit_and_removing_them_makes_room() {
    let mut opts = det_opts();
    opts.max_state_bytes = 10_000;
    let e = shop_with_groups_opts(opts);
    let s = Some("full");
    let path = "/v1/groups/g1/members";
    // Each add names a new 1,000-byte id: about ten fill the session's 10,000 bytes.
    let id = |n: usize| format!("cus_{n:03}{}", "x".repeat(993));
    let mut refused = None;
    for n in 0..30 {
        let r = send(&e, s, "POST", path, json!({"customer_ids": [id(n)]}));
        if r.status != 200 {
            refused = Some((n, r));
            break;
        }
    }
    let (n, r) = refused.expect("member lists are bounded");
    assert!((9..13).contains(&n), "refused after {n} adds");
    assert_eq!(r.status, 507);
    assert_eq!(body(&r)["error"], json!("state-limit-exceeded"));
    // Removing members is answered, and makes room for another add.
    let removed = send(
        &e,
        s,
        "DELETE",
        path,
        json!({"customer_ids": [id(0), id(1)]}),
    );
    assert_eq!(removed.status, 200);
    let again = send(&e, s, "POST", path, json!({"customer_ids": [id(99)]}));
    assert_eq!(again.status, 200);
    // Another session has room of its own.
    let other = send(
        &e,
        Some("other"),
        "POST",
        path,
        json!({"customer_ids": [id(0)]}),
    );
    assert_eq!(other.status, 200);
}

#[test]
fn membership_list_answers_the_sessions_members_over_a_recorded_answer_to_the_same_request() {
    let e = shop_with_groups();
    let s = Some("recorded");
    let path = "/v1/groups/g9/members";
    assert!(listed_ids(&e, s, path).is_empty(), "the recorded read");
    let added = send(&e, s, "POST", path, json!({"customer_ids": ["cus_1"]}));
    assert_eq!(added.status, 200);
    assert_eq!(
        listed_ids(&e, s, path),
        vec!["cus_1"],
        "the recorded read lists that run's members, not this session's"
    );
}

/// The shop with a last-write-wins `POST /v1/marker` (echoing the body's `last_read_id`) and
/// `GET /v1/marker`, whose recorded answer names some other recording's id.
fn shop_with_marker() -> wraith_engine::Engine {
    let mut m = shop_model();
    let mut write = R::new("POST", "/v1/marker")
        .variant(
            200,
            Guard::Always,
            obj(vec![(
                "last_read_id",
                echo_body("/last_read_id", JsonType::String),
            )]),
        )
        .build();
    write.last_write_wins = true;
    let read = R::new("GET", "/v1/marker")
        .variant(200, Guard::Always, c(json!({"last_read_id": "recorded"})))
        .exact(
            "/v1/marker",
            "",
            None,
            vec![moment("s1/1", 200, json!({"last_read_id": "recorded"}))],
        )
        .build();
    m.routes.extend([write, read]);
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    engine(m, det_opts())
}

#[test]
fn last_write_wins_read_answers_the_sessions_last_write() {
    let e = shop_with_marker();
    let s = Some("marker");
    for id in ["m_1", "m_2"] {
        let written = send(&e, s, "POST", "/v1/marker", json!({"last_read_id": id}));
        assert_eq!(body(&written)["last_read_id"], json!(id));
    }
    let read = get(&e, s, "/v1/marker");
    assert_eq!(read.status, 200);
    assert_eq!(body(&read)["last_read_id"], json!("m_2"), "the last write");
    let other = body(&get(&e, Some("other"), "/v1/marker"));
    assert_eq!(
        other["last_read_id"],
        json!("recorded"),
        "another session replays"
    );
}
