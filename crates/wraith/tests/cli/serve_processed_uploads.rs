//! `wraith serve` showing an upload processed when it is read back: every recorded upload
//! answered 202 with `url: null`, and every recorded read of one showed its `url`. A client
//! that polls until `url` is set (as Mastodon clients do for a video) gets an answer instead
//! of polling forever. Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.media.test";

/// Three runs, each uploading a file (202, `url: null`) and reading it back processed.
fn uploads_twin() -> Twin {
    let t = Twin::init("uploads", ORIGIN);
    for (run, day, id) in [("a", 1, "101"), ("b", 2, "202"), ("c", 3, "303")] {
        let name = format!("clip-{run}.mp4");
        let url = format!("https://files.media.test/{id}/{name}");
        let mut upload = har::entry(
            ORIGIN,
            "POST",
            "/v1/media",
            Some(&json!({"name": name})),
            &json!({"id": id, "name": name, "url": null, "text_url": null}),
        );
        upload["response"]["status"] = json!(202);
        let read = har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/media/{id}"),
            None,
            &json!({"id": id, "name": name, "url": url, "text_url": null}),
        );
        let mut entries = vec![upload, read];
        for e in &mut entries {
            e["startedDateTime"] = json!(format!("2026-06-0{day}T12:00:00.000Z"));
        }
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn an_upload_read_back_shows_the_url_every_recorded_read_showed() {
    let t = uploads_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let created = server
        .post("/v1/media", s, json!({"name": "mine.mp4"}))
        .await;
    created.assert_status(202);
    let created = created.json();
    assert_eq!(created["url"], json!(null), "{created}");
    let path = format!("/v1/media/{}", created["id"].as_str().unwrap());
    let read = server.get(&path, s).await;
    read.assert_status(200);
    let read = read.json();
    let url = read["url"].as_str().unwrap_or_default();
    assert!(
        url.starts_with("https://files.media.test/"),
        "processed, as every recorded read showed: {read}"
    );
    assert_eq!(read["name"], "mine.mp4", "the upload's own name: {read}");
    assert_eq!(read["text_url"], json!(null), "{read}");
    assert_eq!(server.get(&path, s).await.json()["url"], read["url"]);
}
