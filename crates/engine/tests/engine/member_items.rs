//! A session's member list shows a member it holds no record of as the list's own recorded
//! answers showed it, not as the model's merged record of the member (whose latest recorded
//! state another route may have shown).

use crate::support;

use serde_json::json;
use support::*;
use wraith_engine::Engine;
use wraith_model::*;

/// The shop with `POST /v1/customers/:id/star` adding the path's customer to `/v1/starred`,
/// a list route whose one recorded answer listed Bob as a short view (`name` only, no
/// `email`), with his name as it was then.
fn shop_with_starred_list() -> Engine {
    let mut m = shop_model();
    let mut star = R::new("POST", "/v1/customers/:id/star")
        .variant(200, Guard::Always, c(json!({})))
        .build();
    star.member_effects = vec![MemberEffect {
        list_path: "/v1/starred".into(),
        member_type: "customers".into(),
        adds: true,
        member: MemberSource::Param { param: "id".into() },
    }];
    let starred = R::new("GET", "/v1/starred")
        .op(StateOp::List, "customers")
        .list(bare_array_list())
        .variant(200, Guard::Always, c(json!([])))
        .exact(
            "/v1/starred",
            "",
            None,
            vec![moment(
                "s1/4",
                200,
                json!([{"id": "cus_2", "object": "customer", "name": "Bobby"}]),
            )],
        )
        .build();
    m.routes.extend([star, starred]);
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    engine(m, det_opts())
}

#[test]
fn a_member_the_session_holds_no_record_of_is_listed_as_the_recorded_list_showed_it() {
    let e = shop_with_starred_list();
    let s = Some("stars");
    assert_eq!(
        send(&e, s, "POST", "/v1/customers/cus_2/star", json!({})).status,
        200
    );
    assert_eq!(
        body(&get(&e, s, "/v1/starred")),
        json!([{"id": "cus_2", "object": "customer", "name": "Bobby"}])
    );
}

#[test]
fn a_member_the_session_stored_is_listed_as_stored() {
    let e = shop_with_starred_list();
    let s = Some("renamed");
    let renamed = send(
        &e,
        s,
        "PATCH",
        "/v1/customers/cus_2",
        json!({"name": "Rob"}),
    );
    assert_eq!(renamed.status, 200);
    send(&e, s, "POST", "/v1/customers/cus_2/star", json!({}));
    let page = body(&get(&e, s, "/v1/starred"));
    assert_eq!(page[0]["name"], json!("Rob"), "{page}");
}

#[test]
fn a_member_no_recorded_list_showed_is_listed_as_the_model_records_it() {
    let e = shop_with_starred_list();
    let s = Some("alice");
    send(&e, s, "POST", "/v1/customers/cus_1/star", json!({}));
    let page = body(&get(&e, s, "/v1/starred"));
    assert_eq!(page[0]["id"], json!("cus_1"), "{page}");
    // The model's record, with the fields the list's recorded items did not show.
    assert_eq!(page[0]["name"], json!("Alice"), "{page}");
    assert!(page[0].get("email").is_some(), "{page}");
}
