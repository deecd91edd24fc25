//! A status told apart only by the kind of file an upload sent gets an `upload_type` guard.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{json_exchange, session, synth_model};
use serde_json::json;
use wraith_model::Guard;
use wraith_recording::{Exchange, Headers, RecordedSession};

fn upload(media_type: &str, status: u16, id: &str) -> Exchange {
    described(media_type, status, id, None)
}

/// An upload, with a `description` text part when `description` is given.
fn described(media_type: &str, status: u16, id: &str, description: Option<&str>) -> Exchange {
    let ct = "multipart/form-data; boundary=b";
    let mut headers = Headers::new();
    headers.insert("content-type".into(), vec![ct.into()]);
    let kind = media_type.split('/').next().unwrap_or("");
    let mut e = json_exchange(
        "POST",
        "/v2/media",
        status,
        headers,
        None,
        &json!({"id": id, "type": kind}),
    );
    let text = description.map_or(String::new(), |d| {
        format!("--b\r\nContent-Disposition: form-data; name=\"description\"\r\n\r\n{d}\r\n")
    });
    e.request.body = format!(
        "{text}--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"up_{id}\"\r\n\
         Content-Type: {media_type}\r\n\r\nbytes of {id}\r\n--b--\r\n"
    )
    .into_bytes()
    .into();
    e.request.content_type = Some(ct.into());
    e
}

fn guards(sessions: &[RecordedSession]) -> Vec<(u16, Guard)> {
    let model = synth_model("media", "https://api.media.test", sessions);
    let route = model.routes.iter().find(|r| r.path == "/v2/media").unwrap();
    route
        .variants
        .iter()
        .map(|v| (v.status, v.guard.clone()))
        .collect()
}

#[test]
fn a_status_only_the_uploaded_files_media_type_explains_is_guarded_by_it() {
    let sessions = vec![
        session("a", 1_000_000, vec![upload("image/jpeg", 200, "1")]),
        session("b", 2_000_000, vec![upload("video/mp4", 202, "2")]),
        session("c", 3_000_000, vec![upload("image/png", 200, "3")]),
        session("d", 4_000_000, vec![upload("video/mp4", 202, "4")]),
    ];
    let guards = guards(&sessions);
    assert!(
        guards.contains(&(
            202,
            Guard::UploadType {
                part: "file".into(),
                media_type: "video/mp4".into(),
            }
        )),
        "{guards:?}"
    );
    assert!(guards.contains(&(200, Guard::Always)), "{guards:?}");
}

#[test]
fn a_media_type_both_statuses_uploaded_guards_nothing() {
    let sessions = vec![
        session("a", 1_000_000, vec![upload("image/jpeg", 200, "1")]),
        session("b", 2_000_000, vec![upload("image/jpeg", 202, "2")]),
        session("c", 3_000_000, vec![upload("video/mp4", 202, "3")]),
    ];
    let guards = guards(&sessions);
    assert!(
        !guards
            .iter()
            .any(|(_, g)| matches!(g, Guard::UploadType { .. })),
        "{guards:?}"
    );
}

#[test]
fn the_uploaded_files_media_type_outranks_a_text_every_such_upload_repeated() {
    let sessions = vec![
        session(
            "a",
            1_000_000,
            vec![described("image/jpeg", 200, "1", Some("a dog"))],
        ),
        session(
            "b",
            2_000_000,
            vec![described("video/mp4", 202, "2", Some("me when a cat"))],
        ),
        session(
            "c",
            3_000_000,
            vec![described("image/png", 200, "3", Some("a tree"))],
        ),
        session(
            "d",
            4_000_000,
            vec![described("video/mp4", 202, "4", Some("me when a cat"))],
        ),
    ];
    let guards = guards(&sessions);
    assert_eq!(
        guards.iter().find(|(status, _)| *status == 202),
        Some(&(
            202,
            Guard::UploadType {
                part: "file".into(),
                media_type: "video/mp4".into(),
            }
        )),
        "{guards:?}"
    );
}
