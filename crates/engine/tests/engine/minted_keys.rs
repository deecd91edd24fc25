//! A key the API minted more than once (recordings that scrub minted ids to one value): each
//! create made a record of its own, so the key answers as many deletes as it had creates.

use crate::support;

use serde_json::json;
use support::*;
use wraith_model::*;

/// Reserve an address (the answer's `id` is one recorded value, whatever the request), read
/// it, release it.
fn addresses(client_keyed: bool) -> wraith_engine::Engine {
    let id = if client_keyed {
        echo_body("/id", JsonType::String)
    } else {
        c(json!("192.0.2.0"))
    };
    let create = R::new("POST", "/v1/addresses")
        .op(StateOp::Create, "addresses")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", id),
                ("region", echo_body("/region", JsonType::String)),
            ]),
        )
        .build();
    let read = R::new("GET", "/v1/addresses/:id")
        .op(StateOp::Read, "addresses")
        .variant(
            404,
            member(false),
            obj(vec![("error", c(json!("Not found")))]),
        )
        .variant(
            200,
            Guard::Always,
            obj(vec![("id", echo_path("id")), ("region", c(json!("x")))]),
        )
        .build();
    let delete = R::new("DELETE", "/v1/addresses/:id")
        .op(StateOp::Delete, "addresses")
        .variant(
            404,
            member(false),
            obj(vec![("error", c(json!("Not found")))]),
        )
        .variant(200, Guard::Always, obj(vec![]))
        .build();
    let mut ty = entity_type(&[], &[], Vec::new());
    ty.id_shape = None;
    engine(
        model(vec![create, read, delete], vec![("addresses", ty)]),
        det_opts(),
    )
}

#[test]
fn a_key_minted_by_three_creates_answers_three_deletes_then_not_found() {
    let e = addresses(false);
    let s = Some("reserve");
    for _ in 0..3 {
        let r = send(&e, s, "POST", "/v1/addresses", json!({"region": "au-mel"}));
        assert_eq!(r.status, 200);
        assert_eq!(body(&r)["id"], json!("192.0.2.0"));
    }
    let del = |e: &wraith_engine::Engine| {
        e.handle(s, &req("DELETE", "/v1/addresses/192.0.2.0", None))
            .status
    };
    assert_eq!(del(&e), 200);
    assert_eq!(del(&e), 200);
    // One record still holds the key: it reads.
    assert_eq!(get(&e, s, "/v1/addresses/192.0.2.0").status, 200);
    assert_eq!(del(&e), 200);
    assert_eq!(del(&e), 404, "every record under the key is gone");
    assert_eq!(get(&e, s, "/v1/addresses/192.0.2.0").status, 404);
}

#[test]
fn a_key_the_client_named_twice_is_one_record_deleted_once() {
    let e = addresses(true);
    let s = Some("named");
    for region in ["au-mel", "us-sea"] {
        let r = send(
            &e,
            s,
            "POST",
            "/v1/addresses",
            json!({"id": "mine", "region": region}),
        );
        assert_eq!(r.status, 200);
        assert_eq!(body(&r)["id"], json!("mine"));
    }
    let first = e.handle(s, &req("DELETE", "/v1/addresses/mine", None));
    assert_eq!(first.status, 200);
    let second = e.handle(s, &req("DELETE", "/v1/addresses/mine", None));
    assert_eq!(second.status, 404, "the second create replaced the first");
}
