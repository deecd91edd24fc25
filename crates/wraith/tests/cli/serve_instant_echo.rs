//! `wraith serve` answering a time the request sent as the instant it names, in the API's own
//! spelling: a post scheduled with `publish_at: …+02:00` is answered, stored and read back as
//! the recorded answers wrote such times (`….000Z`), where the twin used to answer the clock
//! (`synth/src/instant_echo.rs`). Black-box: the real binary on a HAR run written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.posts.test";

/// Two scheduled creates, an update of the first's time and reads, each answering the time
/// sent with an offset as UTC with milliseconds.
fn scheduled_posts(t: &Twin) {
    let post = |id: &str, text: &str, sent: &str, answered: &str| {
        har::entry(
            ORIGIN,
            "POST",
            "/v1/posts",
            Some(&json!({"text": text, "publish_at": sent})),
            &json!({"id": id, "text": text, "publish_at": answered}),
        )
    };
    let entries = vec![
        post(
            "p1",
            "first",
            "4000-01-01T14:33:14+00:00",
            "4000-01-01T14:33:14.000Z",
        ),
        har::entry(
            ORIGIN,
            "GET",
            "/v1/posts/p1",
            None,
            &json!({"id": "p1", "text": "first", "publish_at": "4000-01-01T14:33:14.000Z"}),
        ),
        har::entry(
            ORIGIN,
            "PUT",
            "/v1/posts/p1",
            Some(&json!({"publish_at": "4000-01-01T16:23:14+02:00"})),
            &json!({"id": "p1", "text": "first", "publish_at": "4000-01-01T14:23:14.000Z"}),
        ),
        har::entry(
            ORIGIN,
            "GET",
            "/v1/posts/p1",
            None,
            &json!({"id": "p1", "text": "first", "publish_at": "4000-01-01T14:23:14.000Z"}),
        ),
        post(
            "p2",
            "second",
            "2031-05-06T07:08:09-05:00",
            "2031-05-06T12:08:09.000Z",
        ),
    ];
    har::import(t, &[], "run.har", entries);
    har::synth(t, &[]);
}

#[tokio::test]
async fn a_scheduled_time_is_answered_stored_and_read_as_the_instant_sent_in_the_apis_spelling() {
    let t = Twin::init("posts", ORIGIN);
    scheduled_posts(&t);
    let server = t.serve(&[]);
    let created = server
        .post(
            "/v1/posts",
            Some("s1"),
            json!({"text": "mine", "publish_at": "2030-01-01T00:30:00+02:00"}),
        )
        .await;
    created.assert_status(200);
    let body = created.json();
    assert_eq!(body["publish_at"], "2029-12-31T22:30:00.000Z", "{body}");
    let id = body["id"].as_str().unwrap().to_string();
    let read = server.get(&format!("/v1/posts/{id}"), Some("s1")).await;
    assert_eq!(read.json()["publish_at"], "2029-12-31T22:30:00.000Z");

    let moved = server
        .send(
            "PUT",
            &format!("/v1/posts/{id}"),
            Some("s1"),
            &[],
            Some(json!({"publish_at": "2030-02-03T04:05:06Z"})),
        )
        .await;
    moved.assert_status(200);
    assert_eq!(moved.json()["publish_at"], "2030-02-03T04:05:06.000Z");
    let read = server.get(&format!("/v1/posts/{id}"), Some("s1")).await;
    assert_eq!(read.json()["publish_at"], "2030-02-03T04:05:06.000Z");
    assert_eq!(read.json()["text"], "mine");
}

#[tokio::test]
async fn an_instant_echo_is_written_in_the_model_with_its_source_and_spelling() {
    let t = Twin::init("posts", ORIGIN);
    scheduled_posts(&t);
    let route = har::model_route(&t, "POST", "/v1/posts");
    let hole = &route["variants"][0]["body"]["root"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["key"] == "publish_at")
        .unwrap()["value"];
    assert_eq!(
        hole["source"],
        json!({"kind": "echo", "from": {
            "in": "instant",
            "source": {"in": "body", "pointer": "/publish_at"},
            "unit": {"unit": "iso8601", "fraction_digits": 3, "suffix": "Z"}
        }}),
        "{hole}"
    );
}
