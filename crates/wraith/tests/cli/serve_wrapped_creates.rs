//! A create whose answer holds its record one key deeper, end to end: in the recordings an
//! upload answers `{"upload_to": …, "file": {…}}` and the session then reads and deletes that
//! file by its id. Synth learns the upload as a create of `files` whose record sits at `/file`
//! (`Route::record_at`), and the served twin stores the object it answered there: the
//! session's read of the new id answers it, another session's read does not find it.
//! Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "wrapped-creates-test-key");
const ORIGIN: &str = "https://api.files.test";

/// Session `i`: upload file `5000 + i`, read it (a field more than the upload showed), read a
/// file that does not exist (404), delete the upload.
fn files_twin() -> Twin {
    let t = Twin::init("files", ORIGIN);
    for i in 1..=2u64 {
        let id = 5000 + i;
        let label = format!("f{i}");
        let file = json!({"id": id, "label": label, "size": 0, "status": "pending_upload"});
        let mut read = file.clone();
        read["checksum"] = Value::Null;
        let e = |method: &str, p: &str, body: Option<&Value>, answer: &Value| {
            har::entry(ORIGIN, method, p, body, answer)
        };
        let mut missing = e(
            "GET",
            "/v2/files/4999",
            None,
            &json!({"errors": [{"reason": "Not found"}]}),
        );
        missing["response"]["status"] = json!(404);
        let entries = vec![
            e(
                "POST",
                "/v2/files/upload",
                Some(&json!({"label": label})),
                &json!({"upload_to": format!("https://uploads.test/put/{id}?sig=s{i}"),
                        "file": file}),
            ),
            e("GET", &format!("/v2/files/{id}"), None, &read),
            missing,
            e("DELETE", &format!("/v2/files/{id}"), None, &json!({})),
        ];
        har::import(&t, &[KEY], &format!("s{i}.har"), entries);
    }
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn a_served_upload_stores_the_record_it_answers_one_key_deeper_for_its_session_only() {
    let t = files_twin();
    let server = t.serve_env(&[], &[KEY]);
    let up = server
        .post(
            "/v2/files/upload",
            Some("agent-1"),
            json!({"label": "mine"}),
        )
        .await;
    up.assert_status(200);
    let answer = up.json();
    assert!(answer["upload_to"].is_string(), "{answer}");
    let id = har::key_text(&answer["file"]["id"]);
    assert!(
        id != "5001" && id != "5002",
        "a fresh record, not a recorded one: {answer}"
    );
    let path = format!("/v2/files/{id}");

    let read = server.get(&path, Some("agent-1")).await;
    read.assert_status(200);
    let read = read.json();
    for field in ["id", "label", "size", "status"] {
        assert_eq!(read[field], answer["file"][field], "{field}: {read}");
    }
    assert_eq!(read["label"], json!("mine"));

    server.get(&path, Some("agent-2")).await.assert_status(404);

    server
        .delete(&path, Some("agent-1"))
        .await
        .assert_status(200);
    server.get(&path, Some("agent-1")).await.assert_status(404);
}
