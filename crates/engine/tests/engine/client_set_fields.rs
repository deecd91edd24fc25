//! A record the session created reads back as stored at a field an update of its type sets
//! from the request (the update's answer echoes it): what the recorded reads showed there was
//! what a recorded client set, not a state the record moves into by itself. Fields no update
//! sets still settle into the recorded reads' state.

use crate::support;

use serde_json::json;
use support::*;
use wraith_model::*;

fn things(update_echoes_flag: bool) -> wraith_engine::Engine {
    let record = |flag: Node, status: Node| {
        obj(vec![
            ("id", gen_id(cus_id())),
            ("flag", flag),
            ("status", status),
        ])
    };
    let create = R::new("POST", "/v1/things")
        .op(StateOp::Create, "things")
        .variant(200, Guard::Always, record(c(json!(false)), c(json!("new"))))
        .build();
    // The one recorded read followed a recorded update that set the flag.
    let read = R::new("GET", "/v1/things/:id")
        .op(StateOp::Read, "things")
        .variant(
            200,
            Guard::Always,
            record(c(json!(true)), c(json!("ready"))),
        )
        .build();
    let flag = if update_echoes_flag {
        echo_body("/flag", JsonType::Bool)
    } else {
        c(json!(true))
    };
    let update = R::new("PATCH", "/v1/things/:id")
        .op(StateOp::Update, "things")
        .variant(200, Guard::Always, record(flag, c(json!("ready"))))
        .build();
    engine(
        model(
            vec![create, read, update],
            vec![("things", entity_type(&[], &[], Vec::new()))],
        ),
        det_opts(),
    )
}

fn created_then_read(e: &wraith_engine::Engine) -> serde_json::Value {
    let s = Some("s");
    let created = body(&send(e, s, "POST", "/v1/things", json!({})));
    assert_eq!(created["flag"], json!(false), "{created}");
    let id = created["id"].as_str().unwrap_or_default().to_string();
    let read = get(e, s, &format!("/v1/things/{id}"));
    assert_eq!(read.status, 200);
    body(&read)
}

#[test]
fn a_field_an_update_echoes_reads_back_as_the_session_stored_it() {
    let b = created_then_read(&things(true));
    assert_eq!(b["flag"], json!(false), "the client never set it: {b}");
    assert_eq!(b["status"], json!("ready"), "no update sets it: it settles");
}

#[test]
fn a_field_no_update_echoes_still_settles_into_the_recorded_reads_state() {
    let b = created_then_read(&things(false));
    assert_eq!(b["flag"], json!(true), "{b}");
    assert_eq!(b["status"], json!("ready"), "{b}");
}
