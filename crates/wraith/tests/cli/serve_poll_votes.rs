//! Votes on a poll the session made, end to end: the recordings post polls (each made from the
//! sent poll, see `serve_made_records`) and vote on them, each vote answering the poll with the
//! sent choices appended to `own_votes` and the chosen options' `votes_count` stepped. Synth
//! learns those effects from the poll as the post that made it showed it (no read of the poll
//! came before the first vote), and the served twin answers a vote on the session's own poll
//! with the session's options and counts, not a recorded poll's. A second vote on a poll of one
//! choice was refused, and the twin refuses it where the session's own poll is in that state
//! (`Guard::RecordFieldEmpty` with `Guard::RecordFieldEquals`). Black-box: the real binary on a
//! HAR written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use crate::serve_made_records::{post, sent_post as sent};
use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://social.votes.test";

/// A poll as the recorded API answers it: `counts` per option, `own` the voter's choices.
fn poll(id: &str, multiple: bool, options: &[(&str, u64)], own: &[u64]) -> Value {
    let options: Vec<Value> = options
        .iter()
        .map(|(t, n)| json!({"title": t, "votes_count": n}))
        .collect();
    let total: u64 = own.len() as u64;
    json!({"id": id, "multiple": multiple, "expired": false, "votes_count": total,
           "own_votes": own, "options": options})
}

/// A vote as a form sends it: the chosen positions as texts.
fn vote(choices: &[&str]) -> Value {
    json!({ "choices": choices })
}

/// One run: posts with and without polls, and votes on the two polls it made.
fn votes_twin() -> Twin {
    let t = Twin::init("votes", ORIGIN);
    let yes_no = |counts: [u64; 2], own: &[u64]| {
        poll("1", true, &[("yes", counts[0]), ("no", counts[1])], own)
    };
    let up_down = |counts: [u64; 2], own: &[u64]| {
        poll("2", false, &[("up", counts[0]), ("down", counts[1])], own)
    };
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/api/statuses",
            Some(&sent("a", Some((true, ["yes", "no"])))),
            &post("100", "a", yes_no([0, 0], &[])),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/api/polls/1/votes",
            Some(&vote(&["1"])),
            &yes_no([0, 1], &[1]),
        ),
        har::entry(ORIGIN, "GET", "/api/polls/1", None, &yes_no([0, 1], &[1])),
        har::entry(
            ORIGIN,
            "POST",
            "/api/polls/1/votes",
            Some(&vote(&["0"])),
            &yes_no([1, 1], &[1, 0]),
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
            &post("102", "c", up_down([0, 0], &[])),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/api/polls/2/votes",
            Some(&vote(&["0"])),
            &up_down([1, 0], &[0]),
        ),
        // A second vote on a poll of one choice is refused.
        har::with_status(
            har::entry(
                ORIGIN,
                "POST",
                "/api/polls/2/votes",
                Some(&vote(&["1"])),
                &json!({"error": "You have already voted on this poll"}),
            ),
            422,
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

fn titles_and_counts(poll: &Value) -> Vec<(String, u64)> {
    poll["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["title"].as_str().unwrap().to_string(),
                o["votes_count"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_vote_on_the_sessions_poll_answers_its_options_with_the_chosen_ones_counted() {
    let t = votes_twin();
    let action = har::model_route(&t, "POST", "/api/polls/:param/votes")["action"].clone();
    assert_eq!(
        action["appends"],
        json!([{"field": "own_votes", "from": "choices", "numbers": true}]),
        "{action}"
    );
    assert_eq!(
        action["indexed_counters"],
        json!([{"field": "options", "member": "votes_count", "by": "choices", "step": 1}]),
        "{action}"
    );

    let server = t.serve(&[]);
    let s = Some("voter");
    let made = server
        .post(
            "/api/statuses",
            s,
            json!({"status": "which?", "sensitive": "0",
                   "poll": {"options": ["tea", "coffee", "water"], "multiple": true,
                            "expires_in": 600}}),
        )
        .await
        .json()["poll"]
        .clone();
    let id = made["id"].as_str().unwrap().to_string();
    let votes = format!("/api/polls/{id}/votes");

    let first = server.post(&votes, s, vote(&["2"])).await;
    first.assert_status(200);
    let first = first.json();
    assert_eq!(first["id"], json!(id), "{first}");
    assert_eq!(
        titles_and_counts(&first),
        [("tea".into(), 0), ("coffee".into(), 0), ("water".into(), 1)],
        "the session's options, the chosen one counted: {first}"
    );
    assert_eq!(first["own_votes"], json!([2]), "{first}");
    assert_eq!(first["votes_count"], json!(1), "{first}");
    assert_eq!(first["multiple"], json!(true), "{first}");

    let second = server.post(&votes, s, vote(&["0"])).await.json();
    assert_eq!(
        titles_and_counts(&second),
        [("tea".into(), 1), ("coffee".into(), 0), ("water".into(), 1)],
        "{second}"
    );
    assert_eq!(second["own_votes"], json!([2, 0]), "{second}");
    assert_eq!(second["votes_count"], json!(2), "{second}");

    // The session holds the poll as its votes left it; another session's poll is untouched.
    let read = server.get(&format!("/api/polls/{id}"), s).await;
    read.assert_status(200);
    assert_eq!(read.json(), second);
    let other = server.get(&format!("/api/polls/{id}"), Some("other")).await;
    assert_ne!(other.json().get("own_votes"), Some(&json!([2, 0])));
}

#[tokio::test]
async fn a_second_vote_on_the_sessions_poll_of_one_choice_is_refused() {
    let t = votes_twin();
    let variants = har::model_route(&t, "POST", "/api/polls/:param/votes")["variants"].clone();
    assert_eq!(
        variants[0]["guard"],
        json!({"guard": "all", "all": [
            {"guard": "record_field_empty", "field": "own_votes", "empty": false},
            {"guard": "record_field_equals", "field": "multiple", "value": false},
        ]}),
        "{variants}"
    );

    let server = t.serve(&[]);
    let make = |s| {
        let server = &server;
        async move {
            server
                .post(
                    "/api/statuses",
                    Some(s),
                    json!({"status": "one?", "sensitive": "0",
                           "poll": {"options": ["red", "blue"], "multiple": false,
                                    "expires_in": 600}}),
                )
                .await
                .json()["poll"]["id"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    let id = make("voter").await;
    let votes = format!("/api/polls/{id}/votes");
    server
        .post(&votes, Some("voter"), vote(&["1"]))
        .await
        .assert_status(200);
    let again = server.post(&votes, Some("voter"), vote(&["0"])).await;
    again.assert_status(422);
    assert_eq!(
        again.json(),
        json!({"error": "You have already voted on this poll"})
    );
    // The refusal changed nothing, and another session's first vote on its poll counts.
    let read = server.get(&format!("/api/polls/{id}"), Some("voter")).await;
    assert_eq!(read.json()["own_votes"], json!([1]), "{}", read.json());
    let theirs = make("other").await;
    server
        .post(
            &format!("/api/polls/{theirs}/votes"),
            Some("other"),
            vote(&["0"]),
        )
        .await
        .assert_status(200);
}

#[tokio::test]
async fn a_replayed_vote_leaves_the_poll_as_it_answered_for_later_reads_and_votes() {
    let t = votes_twin();
    let server = t.serve(&[]);
    let s = Some("again");
    // The recorded post and vote, sent as recorded: both replayed.
    let made = server
        .post("/api/statuses", s, sent("c", Some((false, ["up", "down"]))))
        .await;
    assert_eq!(made.header("x-wraith-provenance"), Some("recorded"));
    let voted = server.post("/api/polls/2/votes", s, vote(&["0"])).await;
    voted.assert_status(200);
    assert_eq!(voted.header("x-wraith-provenance"), Some("recorded"));
    let read = server.get("/api/polls/2", s).await;
    read.assert_status(200);
    assert_eq!(read.json()["own_votes"], json!([0]), "{}", read.json());
    assert_eq!(
        titles_and_counts(&read.json()),
        [("up".into(), 1), ("down".into(), 0)]
    );
    server
        .post("/api/polls/2/votes", s, vote(&["1"]))
        .await
        .assert_status(422);
}

#[tokio::test]
async fn a_recorded_refusal_of_a_vote_on_a_poll_the_session_never_saw_is_replayed() {
    let t = votes_twin();
    let server = t.serve(&[]);
    // The session knows nothing of poll 2, so its state decides nothing: the recorded answer
    // to this very request stands.
    let refused = server
        .post("/api/polls/2/votes", Some("stranger"), vote(&["1"]))
        .await;
    refused.assert_status(422);
    assert_eq!(refused.header("x-wraith-provenance"), Some("recorded"));
}
