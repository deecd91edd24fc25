//! A create answers one item per object its request sent, end to end: recorded runs create
//! filters with `keywords_attributes`, answered with one keyword per object sent. A session's
//! filter created with three keywords answers three, each with its own text and flag and an id
//! of its own, and reads back so, as a form's indexed objects do; one created with none
//! answers none. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "mirrored-lists-test-key");
const ORIGIN: &str = "https://social.test";

fn run(t: &Twin, minute: u64, id: u64, keywords: &[(&str, bool)]) {
    let sent: Vec<Value> = keywords
        .iter()
        .map(|(k, w)| json!({"keyword": k, "whole_word": w}))
        .collect();
    let listed: Vec<Value> = keywords
        .iter()
        .enumerate()
        .map(|(i, (k, w))| json!({"id": format!("{id}{i}"), "keyword": k, "whole_word": w}))
        .collect();
    let filter =
        json!({"id": id.to_string(), "title": format!("filter {minute}"), "keywords": listed});
    let mut entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/api/v2/filters",
            Some(&json!({"title": format!("filter {minute}"), "keywords_attributes": sent})),
            &filter,
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/api/v2/filters/{id}"),
            None,
            &filter,
        ),
    ];
    for e in &mut entries {
        e["startedDateTime"] = json!(format!("2026-06-01T12:{minute:02}:00.000Z"));
    }
    har::import(t, &[KEY], &format!("run{minute}.har"), entries);
}

fn twin() -> Twin {
    let t = Twin::init("social", ORIGIN);
    run(&t, 1, 101, &[("spam", true), ("eggs", false)]);
    run(&t, 2, 102, &[("ham", false), ("jam", true)]);
    har::synth(&t, &[KEY]);
    t
}

fn keywords(filter: &Value) -> Vec<(String, bool)> {
    filter["keywords"]
        .as_array()
        .unwrap_or_else(|| panic!("a keyword list: {filter}"))
        .iter()
        .map(|k| {
            (
                k["keyword"].as_str().unwrap_or_default().to_string(),
                k["whole_word"].as_bool().unwrap_or_else(|| panic!("{k}")),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_create_answers_one_item_per_object_sent_and_reads_back_with_them() {
    let t = twin();
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post(
            "/api/v2/filters",
            Some("agent"),
            json!({"title": "mine", "keywords_attributes": [
                {"keyword": "alpha", "whole_word": false},
                {"keyword": "beta", "whole_word": true},
                {"keyword": "gamma", "whole_word": false},
            ]}),
        )
        .await;
    created.assert_status(200);
    let filter = created.json();
    let expected = vec![
        ("alpha".to_string(), false),
        ("beta".to_string(), true),
        ("gamma".to_string(), false),
    ];
    assert_eq!(keywords(&filter), expected);
    let mut ids: Vec<String> = filter["keywords"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| har::key_text(&k["id"]))
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "each keyword has an id of its own: {filter}");

    let read = server
        .get(
            &format!("/api/v2/filters/{}", har::key_text(&filter["id"])),
            Some("agent"),
        )
        .await;
    read.assert_status(200);
    assert_eq!(keywords(&read.json()), expected);

    let bare = server
        .post("/api/v2/filters", Some("agent"), json!({"title": "bare"}))
        .await;
    bare.assert_status(200);
    assert_eq!(bare.json()["keywords"], json!([]));
}

/// A filter created on the recorded twin by a form sending `body`, answered 200.
async fn form_filter(body: &'static str) -> Value {
    let t = twin();
    let server = t.serve_env(&[], &[KEY]);
    let r = server
        .client
        .post(format!("{}/api/v2/filters", server.url))
        .header("X-Wraith-Session", "agent")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    r.json().await.unwrap()
}

#[tokio::test]
async fn a_form_create_answers_one_item_per_indexed_object_with_its_flags_as_booleans() {
    let filter = form_filter(
        "title=form&keywords_attributes%5B0%5D%5Bkeyword%5D=delta\
         &keywords_attributes%5B0%5D%5Bwhole_word%5D=1\
         &keywords_attributes%5B1%5D%5Bkeyword%5D=epsilon\
         &keywords_attributes%5B1%5D%5Bwhole_word%5D=0\
         &keywords_attributes%5B2%5D%5Bkeyword%5D=zeta\
         &keywords_attributes%5B2%5D%5Bwhole_word%5D=1",
    )
    .await;
    assert_eq!(
        keywords(&filter),
        vec![
            ("delta".to_string(), true),
            ("epsilon".to_string(), false),
            ("zeta".to_string(), true)
        ]
    );
}

#[tokio::test]
async fn a_form_create_of_unindexed_objects_answers_one_item_per_object_as_rack_groups_them() {
    // `keywords_attributes[][keyword]` starts a new object each time the last one holds it.
    let filter = form_filter(
        "title=form&keywords_attributes%5B%5D%5Bkeyword%5D=delta\
         &keywords_attributes%5B%5D%5Bwhole_word%5D=1\
         &keywords_attributes%5B%5D%5Bkeyword%5D=epsilon\
         &keywords_attributes%5B%5D%5Bwhole_word%5D=0",
    )
    .await;
    assert_eq!(
        keywords(&filter),
        vec![("delta".to_string(), true), ("epsilon".to_string(), false)]
    );
}

/// A recorded run opening an issue with the label names `names`, answered one `{id, name}`
/// object per name, then reading it back.
fn labelled_run(t: &Twin, minute: u64, id: u64, names: &[&str]) {
    let labels: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| json!({"id": id * 10 + i as u64, "name": n}))
        .collect();
    let issue = json!({"id": id, "title": format!("issue {minute}"), "labels": labels});
    let mut entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/repos/acme/widgets/issues",
            Some(&json!({"title": format!("issue {minute}"), "labels": names})),
            &issue,
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/repos/acme/widgets/issues/{id}"),
            None,
            &issue,
        ),
    ];
    for e in &mut entries {
        e["startedDateTime"] = json!(format!("2026-06-01T12:{minute:02}:00.000Z"));
    }
    har::import(t, &[KEY], &format!("issues{minute}.har"), entries);
}

fn names(issue: &Value) -> Vec<&str> {
    issue["labels"]
        .as_array()
        .unwrap_or_else(|| panic!("a label list: {issue}"))
        .iter()
        .map(|l| l["name"].as_str().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn a_create_sending_names_answers_one_named_object_per_name_and_reads_back_with_them() {
    let t = Twin::init("tracker", ORIGIN);
    labelled_run(&t, 1, 7, &["bug", "docs"]);
    labelled_run(&t, 2, 8, &["question"]);
    har::synth(&t, &[KEY]);
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post(
            "/repos/acme/widgets/issues",
            Some("agent"),
            json!({"title": "mine", "labels": ["wontfix", "bug", "help wanted"]}),
        )
        .await;
    created.assert_status(200);
    let issue = created.json();
    assert_eq!(names(&issue), vec!["wontfix", "bug", "help wanted"]);

    let read = server
        .get(
            &format!("/repos/acme/widgets/issues/{}", har::key_text(&issue["id"])),
            Some("agent"),
        )
        .await;
    read.assert_status(200);
    assert_eq!(names(&read.json()), vec!["wontfix", "bug", "help wanted"]);

    let bare = server
        .post(
            "/repos/acme/widgets/issues",
            Some("agent"),
            json!({"title": "bare"}),
        )
        .await;
    bare.assert_status(200);
    assert_eq!(bare.json()["labels"], json!([]));
}

/// Posts with and without a poll: a poll's `options` answer one object per option sent, inside
/// the `poll` a post without one answers `null`.
fn polls_twin() -> Twin {
    let t = Twin::init("polls", ORIGIN);
    let mut entries = Vec::new();
    for (i, options) in [
        Some(vec!["four twenty", "sixty-nine"]),
        None,
        Some(vec!["four twenty", "sixty-nine"]),
        None,
        Some(vec!["four twenty", "sixty-nine"]),
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("{}", 500 + i);
        let mut sent = json!({"status": format!("post {i}")});
        let mut answer = json!({"id": id, "content": format!("post {i}"), "poll": null});
        if let Some(options) = options {
            sent["poll"] = json!({"options": options, "expires_in": 300});
            let listed: Vec<Value> = options
                .iter()
                .map(|o| json!({"title": o, "votes_count": 0}))
                .collect();
            answer["poll"] = json!({"id": format!("{}", 70 + i), "options": listed});
        }
        entries.push(har::entry(
            ORIGIN,
            "POST",
            "/api/v1/statuses",
            Some(&sent),
            &answer,
        ));
    }
    har::import(&t, &[KEY], "polls.har", entries);
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn a_polls_options_answer_one_object_per_option_sent_inside_the_poll() {
    let t = polls_twin();
    let route = har::model_route(&t, "POST", "/api/v1/statuses");
    assert_eq!(route["mirrored_lists"][0]["at"], "/poll/options", "{route}");
    let server = t.serve_env(&[], &[KEY]);
    let posted = server
        .post(
            "/api/v1/statuses",
            Some("s1"),
            json!({"status": "mine", "poll": {"options": ["yes", "no", "maybe"], "expires_in": 60}}),
        )
        .await;
    posted.assert_status(200);
    let body = posted.json();
    let titles: Vec<&str> = body["poll"]["options"]
        .as_array()
        .unwrap_or_else(|| panic!("{body}"))
        .iter()
        .map(|o| o["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["yes", "no", "maybe"], "{body}");
    assert!(
        body["poll"]["options"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["votes_count"] == 0),
        "{body}"
    );
    // A post without a poll answers none.
    let bare = server
        .post("/api/v1/statuses", Some("s1"), json!({"status": "plain"}))
        .await;
    assert_eq!(bare.json()["poll"], Value::Null, "{}", bare.json());
}
