//! Items a create answers for the objects its request sent are records of their own when
//! another route lists them under the created record, end to end: recorded runs create
//! filters with `keywords_attributes`, list the filter's keywords, add one, delete one and read
//! the filter back. A session's filter created with keywords lists them as its keywords, under
//! keys that no later keyword create answers again, and the filter's own reads follow the
//! keywords the session adds and deletes. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "mirrored-records-test-key");
const ORIGIN: &str = "https://social.test";

fn keyword(id: u64, word: &str, whole: bool) -> Value {
    json!({"id": id.to_string(), "keyword": word, "whole_word": whole})
}

/// A recorded run: filter `id` created with two keywords keyed from `first`, listed, a third
/// added, the first deleted, the filter read back.
fn run(t: &Twin, minute: u64, id: u64, first: u64, words: [&str; 3]) {
    let [a, b, c] = [
        keyword(first, words[0], true),
        keyword(first + 1, words[1], false),
        keyword(first + 2, words[2], true),
    ];
    let filter = |keywords: Vec<Value>| json!({"id": id.to_string(), "title": format!("filter {minute}"), "keywords": keywords});
    let mut entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/api/v2/filters",
            Some(
                &json!({"title": format!("filter {minute}"), "keywords_attributes": [
                    {"keyword": words[0], "whole_word": true},
                    {"keyword": words[1], "whole_word": false},
                ]}),
            ),
            &filter(vec![a.clone(), b.clone()]),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/api/v2/filters/{id}/keywords"),
            None,
            &json!([a, b]),
        ),
        har::entry(
            ORIGIN,
            "POST",
            &format!("/api/v2/filters/{id}/keywords"),
            Some(&json!({"keyword": words[2], "whole_word": true})),
            &c,
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/api/v2/filters/{id}/keywords"),
            None,
            &json!([a, b, c]),
        ),
        har::entry(
            ORIGIN,
            "DELETE",
            &format!("/api/v2/filters/keywords/{first}"),
            None,
            &json!({}),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/api/v2/filters/{id}"),
            None,
            &filter(vec![b, c]),
        ),
    ];
    for (n, e) in entries.iter_mut().enumerate() {
        e["startedDateTime"] = json!(format!("2026-06-01T12:{minute:02}:{n:02}.000Z"));
    }
    har::import(t, &[KEY], &format!("run{minute}.har"), entries);
}

fn twin() -> Twin {
    let t = Twin::init("social", ORIGIN);
    run(&t, 1, 1, 1, ["spam", "eggs", "ham"]);
    run(&t, 2, 2, 4, ["jam", "toast", "tea"]);
    har::synth(&t, &[KEY]);
    t
}

/// `(id, keyword)` of each item of a keyword array.
fn listed(keywords: &Value) -> Vec<(String, String)> {
    keywords
        .as_array()
        .unwrap_or_else(|| panic!("a keyword list: {keywords}"))
        .iter()
        .map(|k| {
            (
                har::key_text(&k["id"]),
                k["keyword"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// A session's filter created with the keywords `alpha` and `beta`: the answer, its key and
/// its keywords.
async fn filter_of_two(server: &support::Server) -> (Value, String, Vec<(String, String)>) {
    let created = server
        .post(
            "/api/v2/filters",
            Some("agent"),
            json!({"title": "mine", "keywords_attributes": [
                {"keyword": "alpha", "whole_word": false},
                {"keyword": "beta", "whole_word": true},
            ]}),
        )
        .await;
    created.assert_status(200);
    let filter = created.json();
    let fid = har::key_text(&filter["id"]);
    let made = listed(&filter["keywords"]);
    (filter, fid, made)
}

#[tokio::test]
async fn created_keywords_are_listed_and_keep_their_keys_apart_from_later_keywords() {
    let t = twin();
    let server = t.serve_env(&[], &[KEY]);
    let (filter, fid, made) = filter_of_two(&server).await;
    assert_eq!(made.len(), 2, "{filter}");
    assert_ne!(made[0].0, made[1].0, "a key each: {filter}");
    for (id, _) in &made {
        assert!(
            !(1..=6).any(|n| n.to_string() == *id),
            "a key no recorded keyword had: {filter}"
        );
    }

    let list = server
        .get(&format!("/api/v2/filters/{fid}/keywords"), Some("agent"))
        .await;
    list.assert_status(200);
    assert_eq!(
        listed(&list.json()),
        made,
        "the filter's keywords list them"
    );

    let added = server
        .post(
            &format!("/api/v2/filters/{fid}/keywords"),
            Some("agent"),
            json!({"keyword": "gamma", "whole_word": true}),
        )
        .await;
    added.assert_status(200);
    let gamma = har::key_text(&added.json()["id"]);
    assert!(
        made.iter().all(|(id, _)| *id != gamma),
        "a later keyword gets a key of its own: {gamma} among {made:?}"
    );

    let read = server
        .get(&format!("/api/v2/filters/{fid}"), Some("agent"))
        .await;
    read.assert_status(200);
    let mut three = made.clone();
    three.push((gamma.clone(), "gamma".to_string()));
    assert_eq!(listed(&read.json()["keywords"]), three);
}

#[tokio::test]
async fn a_deleted_keyword_leaves_its_filter_and_its_list() {
    let t = twin();
    let server = t.serve_env(&[], &[KEY]);
    let (_, fid, made) = filter_of_two(&server).await;

    server
        .delete(
            &format!("/api/v2/filters/keywords/{}", made[0].0),
            Some("agent"),
        )
        .await
        .assert_status(200);
    let left = vec![made[1].clone()];
    let read = server
        .get(&format!("/api/v2/filters/{fid}"), Some("agent"))
        .await;
    read.assert_status(200);
    assert_eq!(listed(&read.json()["keywords"]), left);
    let list = server
        .get(&format!("/api/v2/filters/{fid}/keywords"), Some("agent"))
        .await;
    list.assert_status(200);
    assert_eq!(listed(&list.json()), left);
}
