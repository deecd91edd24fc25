//! Singleton resources: a path a POST creates at and GET/PUT/DELETE address without an id.

use crate::support;

use serde_json::json;
use support::*;
use wraith_engine::Engine;
use wraith_model::*;

fn subscription_engine() -> Engine {
    let create = R::new("POST", "/v1/subscription")
        .op(StateOp::Create, "subscription")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                (
                    "id",
                    gen_id(IdShape::Integer {
                        above: 30,
                        as_string: true,
                    }),
                ),
                ("endpoint", echo_body("/endpoint", JsonType::String)),
            ]),
        )
        .build();
    let read = R::new("GET", "/v1/subscription")
        .variant(
            200,
            Guard::Always,
            c(json!({"id": "3", "endpoint": "recorded"})),
        )
        .exact(
            "/v1/subscription",
            "",
            None,
            vec![moment(
                "run/1",
                200,
                json!({"id": "3", "endpoint": "recorded"}),
            )],
        )
        .build();
    let delete = R::new("DELETE", "/v1/subscription")
        .variant(200, Guard::Always, c(json!({})))
        .build();
    let update = R::new("PUT", "/v1/subscription")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", c(json!("3"))),
                ("endpoint", echo_body("/endpoint", JsonType::String)),
            ]),
        )
        .build();
    engine(
        model(
            vec![create, read, delete, update],
            vec![("subscription", entity_type(&[], &[], vec![]))],
        ),
        det_opts(),
    )
}

#[test]
fn a_read_after_a_synthesized_create_answers_the_created_singleton() {
    let e = subscription_engine();
    let created = send(
        &e,
        Some("s"),
        "POST",
        "/v1/subscription",
        json!({"endpoint": "mine"}),
    );
    let c = body(&created);
    assert_eq!(c["endpoint"], json!("mine"));
    let read = get(&e, Some("s"), "/v1/subscription");
    assert_eq!(read.status, 200);
    assert_eq!(
        body(&read),
        c,
        "the session's own subscription, not the recorded one"
    );
    // Another session still gets the recording.
    assert_eq!(
        body(&get(&e, Some("t"), "/v1/subscription"))["id"],
        json!("3")
    );
}

#[test]
fn an_update_of_the_singleton_is_what_later_reads_answer() {
    let e = subscription_engine();
    send(
        &e,
        Some("u"),
        "POST",
        "/v1/subscription",
        json!({"endpoint": "mine"}),
    );
    let updated = send(
        &e,
        Some("u"),
        "PUT",
        "/v1/subscription",
        json!({"endpoint": "new"}),
    );
    assert_eq!(body(&updated)["endpoint"], json!("new"));
    assert_eq!(
        body(&get(&e, Some("u"), "/v1/subscription")),
        body(&updated)
    );
}

#[test]
fn a_deleted_singleton_is_not_found() {
    let e = subscription_engine();
    send(
        &e,
        Some("d"),
        "POST",
        "/v1/subscription",
        json!({"endpoint": "mine"}),
    );
    assert_eq!(
        e.handle(Some("d"), &req("DELETE", "/v1/subscription", None))
            .status,
        200
    );
    assert_eq!(get(&e, Some("d"), "/v1/subscription").status, 404);
}
