//! `wraith serve` reading the text parts of a `multipart/form-data` request as fields, the
//! way synth read them when it learned the route: a field the recorded answers echoed is
//! echoed from the request's own part, and a variant guarded on a field holds when the part
//! is sent. Before, the engine saw no fields in a multipart body at all, so an upload's
//! `description` came back as a recorded one and a refusal guarded on a part never matched.
//! Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.media.test";

/// A multipart body with boundary `b`: the text parts `fields`, then an image file part.
fn upload(b: &str, fields: &[(&str, &str)]) -> String {
    let mut body = String::new();
    for (name, value) in fields {
        body.push_str(&format!(
            "--{b}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str(&format!(
        "--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cat.jpg\"\r\n\
         Content-Type: image/jpeg\r\n\r\nJPEG image bytes\r\n--{b}--\r\n"
    ));
    body
}

/// One recorded run: name, day of June, the text parts sent, the answer's status and body.
type Run = (
    &'static str,
    u32,
    &'static [(&'static str, &'static str)],
    u16,
    Value,
);

/// Runs `a` and `b` upload an image with a description, answered with the media echoing it;
/// run `c` sends a focus point as well and is refused.
fn media_twin() -> Twin {
    let t = Twin::init("media", ORIGIN);
    let runs: [Run; 3] = [
        (
            "a",
            1,
            &[("description", "A cat asleep")],
            200,
            json!({"id": "m_a", "type": "image", "description": "A cat asleep"}),
        ),
        (
            "b",
            2,
            &[("description", "Two dogs running")],
            200,
            json!({"id": "m_b", "type": "image", "description": "Two dogs running"}),
        ),
        (
            "c",
            3,
            &[("description", "A bird"), ("focus", "9,9")],
            422,
            json!({"error": "focus must lie between -1.0 and 1.0"}),
        ),
    ];
    for (run, day, fields, status, answer) in runs {
        let boundary = format!("recorded-boundary-{run}");
        let mut e = har::entry(ORIGIN, "POST", "/v2/media", None, &answer);
        let form = upload(&boundary, fields);
        let ct = format!("multipart/form-data; boundary={boundary}");
        e["request"]["headers"] = json!([{"name": "Content-Type", "value": ct}]);
        e["request"]["postData"] = json!({"mimeType": ct, "text": form});
        e["request"]["bodySize"] = json!(form.len());
        e["response"]["status"] = json!(status);
        e["startedDateTime"] = json!(format!("2026-06-0{day}T12:00:00.000Z"));
        har::import(&t, &[], &format!("{run}.har"), vec![e]);
    }
    har::synth(&t, &[]);
    t
}

async fn post_upload(
    server: &support::Server,
    session: &str,
    fields: &[(&str, &str)],
) -> (u16, Value) {
    let b = "client-boundary-7a";
    let r = server
        .post_multipart("/v2/media", session, b, upload(b, fields))
        .await;
    (r.status, r.json())
}

#[tokio::test]
async fn a_multipart_text_part_the_answers_echoed_is_echoed_from_the_request() {
    let t = media_twin();
    let server = t.serve(&[]);
    let (status, media) = post_upload(&server, "s1", &[("description", "A fox at dusk")]).await;
    assert_eq!(status, 200, "{media}");
    assert_eq!(media["description"], "A fox at dusk", "{media}");
}

#[tokio::test]
async fn a_variant_guarded_on_a_multipart_part_answers_when_the_part_is_sent() {
    let t = media_twin();
    let server = t.serve(&[]);
    let (status, refusal) = post_upload(
        &server,
        "s2",
        &[("description", "A horse"), ("focus", "5,5")],
    )
    .await;
    assert_eq!(status, 422, "{refusal}");
    assert_eq!(refusal["error"], "focus must lie between -1.0 and 1.0");
}
