//! Guards on what the session made (`Guard::DuplicateValue`, `Guard::ForeignRecord`) decide an
//! answer even where a recording of the identical request exists: a refusal that recording's
//! run gave (its name was taken there) is not this session's when the session holds no record
//! of that name.

use crate::support;

use serde_json::json;
use support::*;
use wraith_model::*;

fn widgets_engine() -> wraith_engine::Engine {
    let body = json!({"name": "kilo"});
    let create = R::new("POST", "/v1/widgets")
        .op(StateOp::Create, "widgets")
        .variant(
            409,
            Guard::DuplicateValue {
                pointer: "/name".into(),
                duplicate: true,
                per_principal: false,
            },
            obj(vec![("error", c(json!("conflict")))]),
        )
        .variant(
            201,
            Guard::DuplicateValue {
                pointer: "/name".into(),
                duplicate: false,
                per_principal: false,
            },
            obj(vec![
                ("id", gen_id(cus_id())),
                ("name", echo_body("/name", JsonType::String)),
            ]),
        )
        // Run `a` had made a `kilo` before: its only recording of this body is the refusal.
        .exact(
            "/v1/widgets",
            "",
            Some(&body),
            vec![moment("a/1", 409, json!({"error": "conflict"}))],
        )
        .build();
    engine(
        model(
            vec![create],
            vec![("widgets", entity_type(&[], &[], vec![]))],
        ),
        det_opts(),
    )
}

#[test]
fn a_recorded_refusal_of_a_duplicate_is_not_replayed_to_a_session_holding_no_such_record() {
    let e = widgets_engine();
    let first = send(
        &e,
        Some("s"),
        "POST",
        "/v1/widgets",
        json!({"name": "kilo"}),
    );
    assert_eq!(first.status, 201, "{}", body(&first));
    let again = send(
        &e,
        Some("s"),
        "POST",
        "/v1/widgets",
        json!({"name": "kilo"}),
    );
    assert_eq!(again.status, 409, "{}", body(&again));
    let other = send(
        &e,
        Some("t"),
        "POST",
        "/v1/widgets",
        json!({"name": "lima"}),
    );
    assert_eq!(other.status, 201, "{}", body(&other));
}
