//! A post naming the session's uploads by key answers them in its media list, end to end:
//! recorded runs upload media and post with `media_ids`, answered with those uploads listed
//! in `media_attachments`. A session's own upload, named by a new post, is listed there and
//! stays listed when the post is read back, and an edit naming two lists both in its order; a session holding no such upload gets no record it
//! does not hold. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "embedded-lists-test-key");
const ORIGIN: &str = "https://social.test";

fn media(id: u64, description: &str) -> Value {
    json!({"id": id.to_string(), "type": "image", "description": description})
}

fn run(t: &Twin, minute: u64, uploads: &[u64], post: u64) {
    let mut entries: Vec<Value> = uploads
        .iter()
        .map(|id| {
            let description = format!("recorded picture {id}");
            har::entry(
                ORIGIN,
                "POST",
                "/api/v2/media",
                Some(&json!({"description": description})),
                &media(*id, &description),
            )
        })
        .collect();
    let ids: Vec<String> = uploads.iter().map(u64::to_string).collect();
    let listed: Vec<Value> = uploads
        .iter()
        .map(|id| media(*id, &format!("recorded picture {id}")))
        .collect();
    entries.push(har::entry(
        ORIGIN,
        "POST",
        "/api/v1/statuses",
        Some(&json!({"status": format!("run {minute}"), "media_ids": ids})),
        &json!({"id": post.to_string(), "content": format!("run {minute}"), "media_attachments": listed}),
    ));
    entries.push(har::entry(
        ORIGIN,
        "GET",
        &format!("/api/v1/statuses/{post}"),
        None,
        &json!({"id": post.to_string(), "content": format!("run {minute}"), "media_attachments": listed}),
    ));
    // An edit naming the uploads in the other order lists them so.
    let reversed: Vec<String> = ids.iter().rev().cloned().collect();
    let relisted: Vec<Value> = listed.iter().rev().cloned().collect();
    entries.push(har::entry(
        ORIGIN,
        "PUT",
        &format!("/api/v1/statuses/{post}"),
        Some(&json!({"status": format!("run {minute} edited"), "media_ids": reversed})),
        &json!({"id": post.to_string(), "content": format!("run {minute} edited"), "media_attachments": relisted}),
    ));
    for e in &mut entries {
        e["startedDateTime"] = json!(format!("2026-06-01T12:{minute:02}:00.000Z"));
    }
    har::import(t, &[KEY], &format!("run{minute}.har"), entries);
}

fn twin() -> Twin {
    let t = Twin::init("social", ORIGIN);
    run(&t, 1, &[9001], 501);
    run(&t, 2, &[9002, 9003], 502);
    run(&t, 3, &[], 503);
    run(&t, 4, &[], 504);
    har::synth(&t, &[KEY]);
    t
}

fn listed_ids(answer: &Value) -> Vec<String> {
    answer["media_attachments"]
        .as_array()
        .unwrap_or_else(|| panic!("a media list: {answer}"))
        .iter()
        .map(|m| har::key_text(&m["id"]))
        .collect()
}

#[tokio::test]
async fn a_post_naming_the_sessions_uploads_lists_them_and_reads_back_with_them() {
    let t = twin();
    let server = t.serve_env(&[], &[KEY]);
    let uploaded = server
        .post(
            "/api/v2/media",
            Some("agent"),
            json!({"description": "a picture of my own"}),
        )
        .await;
    uploaded.assert_status(200);
    let media_id = har::key_text(&uploaded.json()["id"]);
    let posted = server
        .post(
            "/api/v1/statuses",
            Some("agent"),
            json!({"status": "look at this", "media_ids": [media_id]}),
        )
        .await;
    posted.assert_status(200);
    let post = posted.json();
    assert_eq!(listed_ids(&post), vec![media_id.clone()]);
    assert_eq!(
        post["media_attachments"][0]["description"],
        "a picture of my own"
    );
    let read = server
        .get(
            &format!("/api/v1/statuses/{}", har::key_text(&post["id"])),
            Some("agent"),
        )
        .await;
    read.assert_status(200);
    assert_eq!(listed_ids(&read.json()), vec![media_id.clone()]);

    // An edit naming a second upload first lists both in that order.
    let second = server
        .post(
            "/api/v2/media",
            Some("agent"),
            json!({"description": "another picture of mine"}),
        )
        .await;
    let second_id = har::key_text(&second.json()["id"]);
    let edited = server
        .send(
            "PUT",
            &format!("/api/v1/statuses/{}", har::key_text(&post["id"])),
            Some("agent"),
            &[],
            Some(json!({"status": "look at these", "media_ids": [second_id, media_id]})),
        )
        .await;
    edited.assert_status(200);
    assert_eq!(
        listed_ids(&edited.json()),
        vec![second_id.clone(), media_id.clone()]
    );

    // Another session holds no such upload: the twin does not invent it.
    let elsewhere = server
        .post(
            "/api/v1/statuses",
            Some("other"),
            json!({"status": "look at this", "media_ids": [media_id]}),
        )
        .await;
    elsewhere.assert_status(200);
    assert!(!listed_ids(&elsewhere.json()).contains(&media_id));
}
