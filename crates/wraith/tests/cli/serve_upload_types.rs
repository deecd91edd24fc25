//! `wraith serve` answering an upload by the kind of file it was sent: the recordings answered
//! videos `202` (still processing) and images `200`, with nothing else in the requests to tell
//! them apart, so the media type each file part declares selects the answer for uploads the
//! recordings never saw. Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.media.test";

/// A multipart upload of `bytes` as `filename`, declared `media_type`, with boundary `b`.
fn upload(b: &str, filename: &str, media_type: &str, bytes: &str) -> String {
    format!(
        "--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
         Content-Type: {media_type}\r\n\r\n{bytes}\r\n--{b}--\r\n"
    )
}

/// Four runs: two upload an image (answered 200, a ready URL), two a video (answered 202,
/// no URL yet).
fn media_twin() -> Twin {
    let t = Twin::init("media", ORIGIN);
    let b = "recorded-boundary";
    for (run, day, filename, media_type, status, answer) in [
        (
            "i1",
            1,
            "a.jpg",
            "image/jpeg",
            200,
            json!({"id": "m_i1", "type": "image", "url": "https://files.media.test/a.jpg"}),
        ),
        (
            "v1",
            2,
            "b.mp4",
            "video/mp4",
            202,
            json!({"id": "m_v1", "type": "video", "url": null}),
        ),
        (
            "i2",
            3,
            "c.jpg",
            "image/jpeg",
            200,
            json!({"id": "m_i2", "type": "image", "url": "https://files.media.test/c.jpg"}),
        ),
        (
            "v2",
            4,
            "d.mp4",
            "video/mp4",
            202,
            json!({"id": "m_v2", "type": "video", "url": null}),
        ),
    ] {
        let mut e = har::entry(ORIGIN, "POST", "/v2/media", None, &answer);
        let form = upload(b, filename, media_type, &format!("{run} bytes"));
        let ct = format!("multipart/form-data; boundary={b}");
        e["response"]["status"] = json!(status);
        e["request"]["headers"] = json!([{"name": "Content-Type", "value": ct}]);
        e["request"]["postData"] = json!({"mimeType": ct, "text": form});
        e["request"]["bodySize"] = json!(form.len());
        e["startedDateTime"] = json!(format!("2026-06-0{day}T12:00:00.000Z"));
        har::import(&t, &[], &format!("{run}.har"), vec![e]);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn an_unrecorded_upload_is_answered_as_the_recordings_answered_its_kind_of_file() {
    let t = media_twin();
    let server = t.serve(&[]);
    let b = "client-boundary-7a";
    let video = server
        .post_multipart(
            "/v2/media",
            "uploader",
            b,
            upload(b, "new.mp4", "video/mp4", "bytes never recorded"),
        )
        .await;
    video.assert_status(202);
    assert_eq!(video.json()["type"], "video", "{}", video.json());
    assert_eq!(video.json()["url"], json!(null));

    let image = server
        .post_multipart(
            "/v2/media",
            "uploader",
            b,
            upload(b, "new.jpg", "image/jpeg", "other bytes never recorded"),
        )
        .await;
    image.assert_status(200);
    assert_eq!(image.json()["type"], "image", "{}", image.json());
}
