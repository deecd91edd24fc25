//! A create whose body (or path, for a create under its parent) names a record the session
//! holds steps that record's learned counter (`Route::create_counters`): later reads show the
//! new count, each create steps it again, and a rendered answer embedding the record shows it
//! stepped. A record the session does not hold is left alone.

use crate::support;

use std::collections::BTreeMap;

use serde_json::json;
use support::*;
use wraith_model::*;

/// The shop with `POST /v1/charges` (creates `charges`, naming a customer in `customer_id`),
/// whose answer embeds the named customer at `customer` and which steps the customer's
/// `balance` by `step`.
fn shop_with_charges(step: i64) -> wraith_engine::Engine {
    let mut m = shop_model();
    let mut embedded = hole(
        HoleKind::Observed,
        JsonType::Object,
        vec![json!({"id": "cus_rep", "balance": 9})],
    );
    if let Node::Hole(h) = &mut embedded {
        h.when_absent = Some(Box::new(WhenAbsent {
            field: EchoSource::Body {
                pointer: "/customer_id".into(),
            },
            value: serde_json::Value::Null,
            embeds: Some(Box::new(EmbeddedRecord {
                entity_type: "customers".into(),
                at: String::new(),
                template: obj(vec![
                    ("id", echo_body("/customer_id", JsonType::String)),
                    (
                        "balance",
                        hole(HoleKind::Observed, JsonType::Number, vec![json!(9)]),
                    ),
                ]),
                made: false,
            })),
        }));
    }
    let mut charges = R::new("POST", "/v1/charges")
        .op(StateOp::Create, "charges")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("customer_id", echo_body("/customer_id", JsonType::String)),
                ("customer", embedded),
            ]),
        )
        .build();
    charges.create_counters = vec![CreateCounters {
        field: "/customer_id".into(),
        param: None,
        entity_type: "customers".into(),
        counters: BTreeMap::from([("balance".to_string(), step)]),
    }];
    m.routes.push(charges);
    m.entity_types
        .insert("charges".into(), entity_type(&[], &[], Vec::new()));
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    engine(m, det_opts())
}

fn created_customer(e: &wraith_engine::Engine, s: Option<&str>) -> String {
    let created = send(
        e,
        s,
        "POST",
        "/v1/customers",
        json!({"name": "Zoe", "balance": 0}),
    );
    assert_eq!(created.status, 200);
    body(&created)["id"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_create_naming_a_held_record_steps_its_counter_for_later_reads() {
    let e = shop_with_charges(1);
    let s = Some("charge");
    let id = created_customer(&e, s);
    let charged = send(&e, s, "POST", "/v1/charges", json!({"customer_id": id}));
    assert_eq!(charged.status, 200);
    let answer = body(&charged);
    assert_eq!(
        answer["customer"]["id"],
        json!(id),
        "embeds the session's customer: {answer}"
    );
    assert_eq!(
        answer["customer"]["balance"],
        json!(1),
        "shows the stepped count: {answer}"
    );
    let read = body(&get(&e, s, &format!("/v1/customers/{id}")));
    assert_eq!(read["balance"], json!(1), "{read}");

    send(&e, s, "POST", "/v1/charges", json!({"customer_id": id}));
    let read = body(&get(&e, s, &format!("/v1/customers/{id}")));
    assert_eq!(
        read["balance"],
        json!(2),
        "a second create steps it again: {read}"
    );
}

#[test]
fn a_create_steps_by_the_learned_step() {
    let e = shop_with_charges(-1);
    let s = Some("refund");
    let id = created_customer(&e, s);
    send(&e, s, "POST", "/v1/charges", json!({"customer_id": id}));
    let read = body(&get(&e, s, &format!("/v1/customers/{id}")));
    assert_eq!(read["balance"], json!(-1), "{read}");
}

#[test]
fn a_create_naming_a_record_another_session_holds_steps_nothing_there() {
    let e = shop_with_charges(1);
    let id = created_customer(&e, Some("a"));
    let other = send(
        &e,
        Some("b"),
        "POST",
        "/v1/charges",
        json!({"customer_id": id}),
    );
    assert_eq!(other.status, 200);
    let read = body(&get(&e, Some("a"), &format!("/v1/customers/{id}")));
    assert_eq!(
        read["balance"],
        json!(0),
        "session a's customer is untouched: {read}"
    );
}

/// The shop with `POST /v1/customers/:param/notes` (creates `notes` under the customer its
/// path names), which steps the customer's `balance` by one.
fn shop_with_notes() -> wraith_engine::Engine {
    let mut m = shop_model();
    let mut notes = R::new("POST", "/v1/customers/:param/notes")
        .op(StateOp::Create, "notes")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("text", echo_body("/text", JsonType::String)),
            ]),
        )
        .build();
    notes.parent_params = vec![ParentParam {
        param: "param".into(),
        entity_type: "customers".into(),
    }];
    notes.create_counters = vec![CreateCounters {
        field: String::new(),
        param: Some("param".into()),
        entity_type: "customers".into(),
        counters: BTreeMap::from([("balance".to_string(), 1)]),
    }];
    m.routes.push(notes);
    m.entity_types
        .insert("notes".into(), entity_type(&[], &[], Vec::new()));
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    engine(m, det_opts())
}

#[test]
fn a_create_under_a_held_parents_path_steps_the_parents_counter() {
    let e = shop_with_notes();
    let s = Some("notes");
    let id = created_customer(&e, s);
    for n in 1..=2 {
        let noted = send(
            &e,
            s,
            "POST",
            &format!("/v1/customers/{id}/notes"),
            json!({"text": "hi"}),
        );
        assert_eq!(noted.status, 200);
        let read = body(&get(&e, s, &format!("/v1/customers/{id}")));
        assert_eq!(read["balance"], json!(n), "{read}");
    }
    // Another session's customer is its own.
    let other = created_customer(&e, Some("other"));
    let read = body(&get(&e, Some("other"), &format!("/v1/customers/{other}")));
    assert_eq!(read["balance"], json!(0), "{read}");
}
