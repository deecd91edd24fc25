//! `Route::upload_names`: the file-name stems of a route's uploads that two recorded sessions
//! or more sent, which then key those uploads by their whole name.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{json_exchange, session, synth_model};
use serde_json::json;
use wraith_recording::{Exchange, Headers};

fn upload(filename: &str, id: &str) -> Exchange {
    let ct = "multipart/form-data; boundary=b";
    let mut headers = Headers::new();
    headers.insert("content-type".into(), vec![ct.into()]);
    let mut e = json_exchange("POST", "/v2/media", 200, headers, None, &json!({"id": id}));
    e.request.body = format!(
        "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
         Content-Type: image/jpeg\r\n\r\nJPEG\r\n--b--\r\n"
    )
    .into_bytes()
    .into();
    e.request.content_type = Some(ct.into());
    e
}

#[test]
fn a_name_two_sessions_sent_is_literal_and_one_session_sending_it_twice_is_not() {
    let sessions = vec![
        session(
            "a",
            1_000_000,
            vec![upload("avatar.jpg", "1"), upload("retried_17.jpg", "2")],
        ),
        session(
            "b",
            2_000_000,
            vec![upload("avatar.jpg", "3"), upload("upload_9f2c.jpg", "4")],
        ),
        session("c", 3_000_000, vec![upload("retried_17.jpg", "5")]),
        session(
            "d",
            4_000_000,
            vec![
                upload("once.jpg", "6"),
                upload("twice_in_d.jpg", "7"),
                upload("twice_in_d.jpg", "8"),
            ],
        ),
    ];
    let model = synth_model("media", "https://api.media.test", &sessions);
    let route = model.routes.iter().find(|r| r.path == "/v2/media").unwrap();
    let names: Vec<&str> = route.upload_names.iter().map(String::as_str).collect();
    assert_eq!(names, ["avatar", "retried_17"]);
    // The two literal names key apart from each other and from every generated name.
    let keys: std::collections::BTreeSet<_> =
        route.exact.iter().map(|e| e.key.body.clone()).collect();
    assert_eq!(keys.len(), 3, "avatar, retried_17, and the rest by bytes");
}

#[test]
fn a_route_without_uploads_has_no_upload_names_and_writes_none() {
    let sessions = vec![session(
        "a",
        1_000_000,
        vec![common::ok_json("GET", "/v1/things", None, &json!([]))],
    )];
    let model = synth_model("t", "https://api.t.test", &sessions);
    assert!(model.routes[0].upload_names.is_empty());
    let text = wraith_model::to_canonical_json(&model).unwrap();
    assert!(!text.contains("upload_names"));
}
