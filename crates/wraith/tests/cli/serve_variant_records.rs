//! `wraith serve` holding the record a create answers as the type its variant's answers are
//! records of (`Variant::record_type`): a post sent with `publish_at` is answered a scheduled
//! post, which the session then reads under the scheduled posts' routes. Black-box: the real
//! binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.posts.test";

fn post(id: u64, text: &str) -> Value {
    json!({"id": id.to_string(), "text": text, "visibility": "public",
           "created_at": "2026-01-01T00:00:00.000Z"})
}

fn scheduled(id: u64, text: &str, at: &str) -> Value {
    json!({"id": id.to_string(), "publish_at": at, "params": {"text": text}})
}

/// Three runs: each publishes a post and reads it back; the first two also schedule one,
/// and the first reads its scheduled post back and deletes it.
fn twin() -> Twin {
    let runs = (0..3u64)
        .map(|n| {
            let (text, id) = (format!("now {n}"), 9001 + n);
            let sent = json!({"text": text});
            let mut run = vec![
                har::entry(ORIGIN, "POST", "/v1/posts", Some(&sent), &post(id, &text)),
                har::entry(
                    ORIGIN,
                    "GET",
                    &format!("/v1/posts/{id}"),
                    None,
                    &post(id, &text),
                ),
            ];
            if n < 2 {
                let (later, at) = (format!("later {n}"), format!("203{n}-01-01T00:00:00.000Z"));
                let sent = json!({"text": later, "publish_at": at});
                let answer = scheduled(1 + n, &later, &at);
                run.push(har::entry(
                    ORIGIN,
                    "POST",
                    "/v1/posts",
                    Some(&sent),
                    &answer,
                ));
                if n == 0 {
                    let path = "/v1/scheduled_posts/1";
                    run.push(har::entry(ORIGIN, "GET", path, None, &answer));
                    run.push(har::entry(ORIGIN, "DELETE", path, None, &json!({})));
                }
            }
            run
        })
        .collect();
    har::runs_twin("posts", ORIGIN, runs)
}

/// The entity type of the scheduled posts' routes.
fn scheduled_type(t: &Twin) -> String {
    let route = har::model_route(t, "GET", "/v1/scheduled_posts/:param");
    route["entity_type"].as_str().unwrap().to_string()
}

/// The keys of the records of `ty` session `session` holds (the `--debug` state dump).
async fn held(server: &support::Server, session: &str, ty: &str) -> Vec<String> {
    let dump = server
        .get(&format!("/__wraith/session/{session}/state"), None)
        .await;
    dump.assert_status(200);
    dump.json()["entities"][ty]["live"]
        .as_array()
        .map(|records| {
            records
                .iter()
                .filter_map(|r| r["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_post_scheduled_for_later_reads_back_as_the_sessions_scheduled_post() {
    let t = twin();
    let server = t.serve(&["--debug"]);
    let sent = json!({"text": "mine", "publish_at": "2040-05-05T00:00:00.000Z"});
    let made = server.post("/v1/posts", Some("agent"), sent).await;
    made.assert_status(200);
    let body = made.json();
    let id = body["id"].as_str().unwrap().to_string();
    assert_eq!(body["params"]["text"], "mine", "{body}");
    let read = server
        .get(&format!("/v1/scheduled_posts/{id}"), Some("agent"))
        .await;
    read.assert_status(200);
    assert_eq!(read.json(), body, "the session's own scheduled post");
    let ty = scheduled_type(&t);
    assert_eq!(held(&server, "agent", &ty).await, vec![id.clone()]);
    // A post published at once stays a post.
    let now = server
        .post("/v1/posts", Some("agent"), json!({"text": "now"}))
        .await;
    now.assert_status(200);
    assert_eq!(held(&server, "agent", &ty).await, vec![id]);
}

#[tokio::test]
async fn a_replayed_scheduled_post_is_held_as_a_scheduled_post() {
    let t = twin();
    let server = t.serve(&["--debug"]);
    // The first run's request, byte for byte: its recorded answer is replayed.
    let sent = json!({"text": "later 0", "publish_at": "2030-01-01T00:00:00.000Z"});
    let made = server.post("/v1/posts", Some("agent"), sent).await;
    made.assert_status(200);
    assert_eq!(made.provenance(), Some("recorded"));
    let id = made.json()["id"].as_str().unwrap().to_string();
    assert_eq!(held(&server, "agent", &scheduled_type(&t)).await, vec![id]);
}
