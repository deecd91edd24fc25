//! Values an action takes from its request (`Route::action_values`): after a 2xx answer, the
//! record the action's path names holds the value the request sent (or `null` for a field the
//! action clears), so the session's next read shows it, whatever the action answered.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_model::*;

fn taken(field: &str, from: &str) -> ActionValue {
    ActionValue {
        entity_type: "volumes".into(),
        id_param: "id".into(),
        field: field.into(),
        from: from.into(),
    }
}

/// Volumes: created with `size` 10 and no `owner_id`; `attach` (answering `{}`) takes
/// `owner_id` from its request, `resize` takes `size`, `detach` clears `owner_id`.
fn volumes(learned: bool) -> wraith_engine::Engine {
    let create = R::new("POST", "/v1/volumes")
        .op(StateOp::Create, "volumes")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("size", c(json!(10))),
                ("owner_id", c(Value::Null)),
            ]),
        )
        .build();
    let read = R::new("GET", "/v1/volumes/:id")
        .op(StateOp::Read, "volumes")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", echo_path("id")),
                ("size", c(json!(10))),
                ("owner_id", c(Value::Null)),
            ]),
        )
        .build();
    let action = |verb: &str, values: Vec<ActionValue>| {
        let mut r = R::new("POST", &format!("/v1/volumes/:id/{verb}"))
            .variant(200, Guard::Always, c(json!({})))
            .build();
        if learned {
            r.action_values = values;
        }
        r
    };
    engine(
        model(
            vec![
                create,
                read,
                action("attach", vec![taken("owner_id", "/owner_id")]),
                action("resize", vec![taken("size", "/size")]),
                action("detach", vec![taken("owner_id", "")]),
            ],
            vec![("volumes", entity_type(&[], &[], Vec::new()))],
        ),
        det_opts(),
    )
}

fn id_of(v: &Value) -> String {
    match &v["id"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Creates a volume in session `a` and returns its id.
fn create(e: &wraith_engine::Engine) -> String {
    id_of(&body(&send(e, Some("a"), "POST", "/v1/volumes", json!({}))))
}

fn read(e: &wraith_engine::Engine, id: &str) -> Value {
    let r = get(e, Some("a"), &format!("/v1/volumes/{id}"));
    assert_eq!(r.status, 200);
    body(&r)
}

#[test]
fn action_stores_the_values_its_request_sent_into_the_record() {
    let e = volumes(true);
    let id = create(&e);
    let attach = send(
        &e,
        Some("a"),
        "POST",
        &format!("/v1/volumes/{id}/attach"),
        json!({"owner_id": 77}),
    );
    assert_eq!(attach.status, 200);
    assert_eq!(read(&e, &id)["owner_id"], json!(77));
    send(
        &e,
        Some("a"),
        "POST",
        &format!("/v1/volumes/{id}/resize"),
        json!({"size": 40}),
    );
    assert_eq!(read(&e, &id)["size"], json!(40));
}

#[test]
fn action_clearing_a_field_stores_null() {
    let e = volumes(true);
    let id = create(&e);
    let path = format!("/v1/volumes/{id}");
    send(
        &e,
        Some("a"),
        "POST",
        &format!("{path}/attach"),
        json!({"owner_id": 77}),
    );
    send(&e, Some("a"), "POST", &format!("{path}/detach"), json!({}));
    assert_eq!(read(&e, &id)["owner_id"], Value::Null);
}

#[test]
fn without_learned_values_the_record_keeps_its_values() {
    let e = volumes(false);
    let id = create(&e);
    send(
        &e,
        Some("a"),
        "POST",
        &format!("/v1/volumes/{id}/attach"),
        json!({"owner_id": 77}),
    );
    assert_eq!(read(&e, &id)["owner_id"], Value::Null);
}
