//! `wraith serve` keying an upload by the file name the client chose. Clients commonly
//! generate upload names (a timestamp, a random suffix), so an upload is keyed by its bytes
//! and extension; a name two recorded sessions both sent is the client's own choice, and then
//! it keys the upload too. Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.media.test";
const BOUNDARY: &str = "recorded-boundary";

/// An upload of the same image bytes as `filename`, with boundary `b`.
fn upload(b: &str, filename: &str) -> String {
    format!(
        "--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
         Content-Type: image/jpeg\r\n\r\nJPEG image bytes\r\n--{b}--\r\n"
    )
}

/// Runs `g1` and `g2` upload the image under generated names and were both answered media
/// `m_gen`; runs `n1` and `n2` upload it as `avatar.jpg` and were answered `m_n1`, `m_n2`.
fn media_twin() -> Twin {
    let t = Twin::init("media", ORIGIN);
    for (run, day, filename, id) in [
        ("g1", 1, "upload_1760012345_9f2c.jpg", "m_gen"),
        ("g2", 2, "upload_1795987654_65e7.jpg", "m_gen"),
        ("n1", 3, "avatar.jpg", "m_n1"),
        ("n2", 4, "avatar.jpg", "m_n2"),
    ] {
        let answer = json!({"id": id, "type": "image"});
        let mut e = har::entry(ORIGIN, "POST", "/v2/media", None, &answer);
        let form = upload(BOUNDARY, filename);
        let ct = format!("multipart/form-data; boundary={BOUNDARY}");
        e["request"]["headers"] = json!([{"name": "Content-Type", "value": ct}]);
        e["request"]["postData"] = json!({"mimeType": ct, "text": form});
        e["request"]["bodySize"] = json!(form.len());
        e["startedDateTime"] = json!(format!("2026-06-0{day}T12:00:00.000Z"));
        har::import(&t, &[], &format!("{run}.har"), vec![e]);
    }
    har::synth(&t, &[]);
    t
}

async fn post_upload(server: &support::Server, session: &str, filename: &str) -> (Value, String) {
    let b = "client-boundary-7a";
    let r = server
        .post_multipart("/v2/media", session, b, upload(b, filename))
        .await;
    r.assert_status(200);
    (r.json(), r.provenance().unwrap_or_default().to_string())
}

#[tokio::test]
async fn an_upload_under_a_name_two_recorded_sessions_sent_is_answered_from_those_sessions() {
    let t = media_twin();
    let server = t.serve(&[]);
    // Without its name in the key, the two generated-name runs' shared answer would win the
    // vote among all four runs.
    let (named, provenance) = post_upload(&server, "s1", "avatar.jpg").await;
    assert_eq!(provenance, "recorded");
    assert!(
        named["id"] == "m_n1" || named["id"] == "m_n2",
        "answered from a run that sent avatar.jpg: {named}"
    );
}

#[tokio::test]
async fn an_upload_under_a_fresh_generated_name_is_still_keyed_by_its_bytes() {
    let t = media_twin();
    let server = t.serve(&[]);
    let (generated, provenance) = post_upload(&server, "s2", "upload_1801234567_0ab1.jpg").await;
    assert_eq!(provenance, "recorded");
    assert_eq!(generated["id"], "m_gen", "{generated}");
    // The learned name is in the model, and only that one.
    let model: Value =
        serde_json::from_str(&std::fs::read_to_string(t.root.join("model/twin.wir.json")).unwrap())
            .unwrap();
    let route = model["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == "/v2/media")
        .unwrap();
    assert_eq!(route["upload_names"], json!(["avatar"]));
}
