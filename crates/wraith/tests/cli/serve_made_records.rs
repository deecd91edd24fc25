//! Null-or-made-record positions end to end: recorded posts answer `poll: null` for a plain
//! post and, for a post whose request sent a `poll` object, a new poll made from it (a key of
//! its own, the sent choice, the sent options). Synth learns the rule from those recordings,
//! and the served twin answers a post with a poll of its own, stored as a record of the polls
//! type a later read finds, instead of replaying a recorded poll. Black-box: the real binary
//! on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://social.polls.test";

fn poll(id: &str, multiple: bool, options: &[&str]) -> Value {
    let options: Vec<Value> = options
        .iter()
        .map(|t| json!({"title": t, "votes_count": 0}))
        .collect();
    json!({"id": id, "multiple": multiple, "expired": false, "votes_count": 0,
           "options": options})
}

/// A recorded post answer holding `poll` (`null` for a plain post).
pub(crate) fn post(id: &str, text: &str, poll: Value) -> Value {
    json!({"id": id, "content": text, "visibility": "public", "poll": poll})
}

/// A post's request: `text`, and a poll of `options` when `p` holds one. Every recorded post
/// sends `sensitive=0` alike.
pub(crate) fn sent_post(text: &str, p: Option<(bool, [&str; 2])>) -> Value {
    let mut body = json!({"status": text, "sensitive": "0"});
    if let Some((multiple, options)) = p {
        body["poll"] = json!({"options": options, "multiple": multiple, "expires_in": 300});
    }
    body
}

/// One run: a read of a recorded poll, then posts with and without polls.
fn polls_twin() -> Twin {
    let t = Twin::init("polls", ORIGIN);
    let first = poll("1", true, &["yes", "no"]);
    let second = poll("2", false, &["up", "down"]);
    // Every recorded poll counted `0` votes.
    let sent = sent_post;
    let entries = vec![
        har::entry(ORIGIN, "GET", "/api/polls/1", None, &first),
        har::entry(
            ORIGIN,
            "POST",
            "/api/statuses",
            Some(&sent("a", Some((true, ["yes", "no"])))),
            &post("100", "a", first.clone()),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/api/statuses",
            Some(&sent("b", None)),
            &post("101", "b", Value::Null),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/api/statuses",
            Some(&sent("c", Some((false, ["up", "down"])))),
            &post("102", "c", second),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/api/statuses",
            Some(&sent("d", None)),
            &post("103", "d", Value::Null),
        ),
    ];
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_posted_poll_is_made_from_the_sent_poll_and_read_back_by_its_key() {
    let t = polls_twin();
    let route = har::model_route(&t, "POST", "/api/statuses");
    let made = route["variants"][0]["body"]["root"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["key"] == "poll")
        .map(|f| f["value"]["when_absent"]["embeds"].clone())
        .unwrap();
    assert_eq!(made["made"], json!(true), "{route}");
    assert_eq!(made["entity_type"], json!("polls"), "{route}");

    let server = t.serve(&[]);
    let s = Some("voter");
    let answer = server
        .post(
            "/api/statuses",
            s,
            json!({"status": "which?", "sensitive": "1",
                   "poll": {"options": ["tea", "coffee"], "multiple": false, "expires_in": 600}}),
        )
        .await;
    answer.assert_status(200);
    let made = answer.json()["poll"].clone();
    let id = made["id"].as_str().unwrap().to_string();
    assert!(
        !["1", "2"].contains(&id.as_str()),
        "a key of its own: {made}"
    );
    assert_eq!(made["multiple"], json!(false), "{made}");
    let titles: Vec<&str> = made["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["tea", "coffee"], "{made}");
    // A new poll counts no votes, whatever else the post sent.
    assert_eq!(made["votes_count"], json!(0), "{made}");

    // Another poll gets another key; a plain post none.
    let other = server
        .post(
            "/api/statuses",
            s,
            json!({"status": "again?", "poll": {"options": ["a", "b"], "multiple": true}}),
        )
        .await
        .json();
    assert_ne!(other["poll"]["id"], made["id"], "{other}");
    assert_eq!(other["poll"]["multiple"], json!(true), "{other}");
    let plain = server
        .post("/api/statuses", s, json!({"status": "plain"}))
        .await
        .json();
    assert_eq!(plain["poll"], Value::Null, "{plain}");

    // The session holds the poll it made.
    let read = server.get(&format!("/api/polls/{id}"), s).await;
    read.assert_status(200);
    assert_eq!(read.json(), made);
}
