//! A `POST` whose answer carries, under one wrapping key, a new record of another collection's
//! entity type (an upload answering `{"upload_to": …, "file": {…}}`), through `synthesize`:
//! learned as a create of that type at that key (`Route::record_at`) when the session reads
//! the record's id back, and not otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::{Value, json};
use wraith_model::{BodyTemplate, HoleKind, Model, Node, Route, StateOp};
use wraith_recording::RecordedSession;

const UPLOAD: &str = "/v2/files/upload";

/// The file session `n` uploads.
fn file(n: u64) -> Value {
    json!({"id": 5000 + n, "label": format!("f{n}"), "size": 0, "status": "pending_upload"})
}

/// Session `n`: an upload answering the new file under `file`, then, with `read_back`, a read
/// of it (a field more) and its delete; without, a read of an older file only.
fn upload_session(n: u64, read_back: bool) -> RecordedSession {
    let id = 5000 + n;
    let mut exchanges = vec![ok_json(
        "POST",
        UPLOAD,
        Some(&json!({"label": format!("f{n}")})),
        &json!({"upload_to": format!("https://uploads.example/put/{id}?sig=s{n}"), "file": file(n)}),
    )];
    if read_back {
        let mut read = file(n);
        read["checksum"] = Value::Null;
        exchanges.push(ok_json("GET", &format!("/v2/files/{id}"), None, &read));
        exchanges.push(ok_json(
            "DELETE",
            &format!("/v2/files/{id}"),
            None,
            &json!({}),
        ));
    } else {
        exchanges.push(ok_json(
            "GET",
            &format!("/v2/files/{}", 4000 + n),
            None,
            &json!({"id": 4000 + n, "label": "old", "size": 9, "status": "available"}),
        ));
    }
    common::session(
        &format!("up{n}"),
        1_700_000_000_000_000 + n * 1_000,
        exchanges,
    )
}

fn route<'m>(model: &'m Model, method: &str, path: &str) -> &'m Route {
    model
        .routes
        .iter()
        .find(|r| r.method == method && r.path == path)
        .expect("route")
}

/// The template node at `/file/id` of the route's 2xx variant.
fn wrapped_id(route: &Route) -> &Node {
    let v = route
        .variants
        .iter()
        .find(|v| v.status == 200)
        .expect("2xx variant");
    let BodyTemplate::Json {
        root: Node::Object { fields },
    } = &v.body
    else {
        panic!("an object answer")
    };
    let Node::Object { fields } = &fields.iter().find(|f| f.key == "file").unwrap().value else {
        panic!("file is an object")
    };
    &fields.iter().find(|f| f.key == "id").unwrap().value
}

#[test]
fn an_upload_whose_wrapped_record_the_session_reads_back_creates_that_type_at_its_key() {
    let model = common::synth_model(
        "t",
        "https://api.example",
        &[upload_session(1, true), upload_session(2, true)],
    );
    let up = route(&model, "POST", UPLOAD);
    assert_eq!(up.state_op, Some(StateOp::Create));
    assert_eq!(up.entity_type.as_deref(), Some("files"));
    assert_eq!(up.record_at, "/file");
    assert!(
        matches!(wrapped_id(up), Node::Hole(h) if matches!(h.source, HoleKind::Generated { .. })),
        "the wrapped record's key is minted: {:?}",
        wrapped_id(up)
    );
    let files = &model.entity_types["files"];
    assert!(files.known_ids.contains("5001") && files.known_ids.contains("5002"));
    assert_eq!(files.records["5001"]["label"], json!("f1"));
    // The reads stay reads of the same type.
    assert_eq!(
        route(&model, "GET", "/v2/files/:param")
            .entity_type
            .as_deref(),
        Some("files")
    );
}

#[test]
fn an_upload_whose_wrapped_record_is_never_read_back_learns_nothing() {
    let model = common::synth_model(
        "t",
        "https://api.example",
        &[upload_session(1, false), upload_session(2, false)],
    );
    let up = route(&model, "POST", UPLOAD);
    assert_eq!(up.state_op, None);
    assert_eq!(up.record_at, "");
    assert!(!model.entity_types["files"].known_ids.contains("5001"));
}

#[test]
fn a_wrapped_record_other_sessions_also_read_is_no_create() {
    // A sign-in answering the same account every time, which every session then reads: the
    // account existed before, nothing is created.
    let session = |n: u64| {
        let account = json!({"id": 77, "username": "ann", "note": ""});
        common::session(
            &format!("in{n}"),
            1_700_000_000_000_000 + n * 1_000,
            vec![
                ok_json(
                    "POST",
                    "/v2/sessions/open",
                    Some(&json!({"username": "ann"})),
                    &json!({"token": format!("t{n}"), "account": account}),
                ),
                ok_json("GET", "/v2/accounts/77", None, &account),
            ],
        )
    };
    let model = common::synth_model("t", "https://api.example", &[session(1), session(2)]);
    let open = route(&model, "POST", "/v2/sessions/open");
    assert_eq!(open.state_op, None);
    assert_eq!(open.record_at, "");
}
