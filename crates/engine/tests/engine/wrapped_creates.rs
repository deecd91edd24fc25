//! A create whose answer carries its record one key deeper (`Route::record_at`): an upload
//! answering `{"upload_to": …, "file": {…}}` creates the `files` record at `/file`. The engine
//! stores that object as the session's record, so the session's reads, lists and deletes of
//! its id behave as for any other create, and another session does not see it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_model::{Guard, IdCharset, IdShape, JsonType, Model, StateOp};

fn file_id() -> IdShape {
    IdShape::Token {
        prefix: "file_".to_string(),
        charset: IdCharset::LowerAlnum,
        length: 10,
    }
}

fn not_found() -> wraith_model::Node {
    obj(vec![("errors", c(json!([{"reason": "Not found"}])))])
}

/// Files: an upload route answering the new file under `/file` (after `by`, another object
/// carrying an `id`, which is not the record), reads, deletes and a bare list of files.
fn files_model() -> Model {
    let upload = R::new("POST", "/v1/files/upload")
        .op(StateOp::Create, "files")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("by", obj(vec![("id", c(json!("user_1")))])),
                ("upload_to", c(json!("https://uploads.example/put"))),
                (
                    "file",
                    obj(vec![
                        ("id", gen_id(file_id())),
                        ("label", echo_body("/label", JsonType::String)),
                        ("status", c(json!("pending_upload"))),
                    ]),
                ),
            ]),
        )
        .build();
    let mut upload = upload;
    upload.record_at = "/file".to_string();
    let record = obj(vec![
        ("id", echo_path("id")),
        ("label", c(json!("recorded"))),
        ("status", c(json!("available"))),
    ]);
    let read = R::new("GET", "/v1/files/:id")
        .op(StateOp::Read, "files")
        .variant(200, member(true), record.clone())
        .variant(404, member(false), not_found())
        .build();
    let delete = R::new("DELETE", "/v1/files/:id")
        .op(StateOp::Delete, "files")
        .variant(200, member(true), c(json!({})))
        .variant(404, member(false), not_found())
        .build();
    let list = R::new("GET", "/v1/files")
        .op(StateOp::List, "files")
        .list(bare_array_list())
        .variant(200, Guard::Always, c(json!([])))
        .build();
    let mut files = entity_type(&[], &[], vec![]);
    files.id_shape = Some(file_id());
    model(vec![upload, read, delete, list], vec![("files", files)])
}

#[test]
fn a_create_answering_its_record_one_key_deeper_stores_that_record_for_the_session() {
    let e = engine(files_model(), det_opts());
    let up = send(
        &e,
        Some("a"),
        "POST",
        "/v1/files/upload",
        json!({"label": "mine"}),
    );
    assert_eq!(up.status, 200);
    let answer = body(&up);
    assert_eq!(answer["upload_to"], json!("https://uploads.example/put"));
    assert_eq!(answer["by"], json!({"id": "user_1"}), "{answer}");
    let id = answer["file"]["id"]
        .as_str()
        .expect("a minted id")
        .to_string();
    assert!(id.starts_with("file_"), "{answer}");

    let read = get(&e, Some("a"), &format!("/v1/files/{id}"));
    assert_eq!(read.status, 200);
    assert_eq!(
        body(&read),
        answer["file"],
        "the read answers the object the upload answered at /file"
    );
    let listed = body(&get(&e, Some("a"), "/v1/files"));
    assert!(
        listed
            .as_array()
            .is_some_and(|items| items.iter().any(|i| i["id"] == json!(id))),
        "{listed}"
    );
    // The object beside it is no record of the session's.
    assert_eq!(get(&e, Some("a"), "/v1/files/user_1").status, 404);

    // Another session never made it.
    assert_eq!(get(&e, Some("b"), &format!("/v1/files/{id}")).status, 404);
    let theirs: Value = body(&get(&e, Some("b"), "/v1/files"));
    assert_eq!(theirs, json!([]));

    assert_eq!(
        send(
            &e,
            Some("a"),
            "DELETE",
            &format!("/v1/files/{id}"),
            json!({})
        )
        .status,
        200
    );
    assert_eq!(get(&e, Some("a"), &format!("/v1/files/{id}")).status, 404);
}
