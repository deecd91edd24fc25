//! A create naming another record steps that record's counter, end to end: recorded sessions
//! post a note, post a reply naming it in `in_reply_to_id`, and read the note showing
//! `replies_count` 1. Synth learns the step from those recordings, and the served twin's
//! session sees its own note's count go to 1 after a reply and 2 after a second one, whether
//! it replays the recorded requests (with its own fresh ids) or sends new ones. Black-box:
//! the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "create-counters-test-key");
const ORIGIN: &str = "https://api.notes.test";

fn note(id: &str, text: &str, reply_to: Option<&str>, replies: i64) -> Value {
    json!({"id": id, "text": text, "in_reply_to_id": reply_to, "replies_count": replies})
}

/// One recorded session: post note `a`, post note `b` replying to it, read `a`.
fn session(t: &Twin, n: u64) {
    let (a, b) = (format!("{}", 7_000 + n), format!("{}", 8_000 + n));
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/notes",
            Some(&json!({"text": "first"})),
            &note(&a, "first", None, 0),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/v1/notes",
            Some(&json!({"text": "a reply", "in_reply_to_id": a})),
            &note(&b, "a reply", Some(&a), 0),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/notes/{a}"),
            None,
            &note(&a, "first", None, 1),
        ),
    ];
    har::import(t, &[KEY], &format!("s{n}.har"), entries);
}

fn notes_twin() -> Twin {
    har::synth_twin("notes", ORIGIN, &[KEY], 3, session)
}

/// Post a note (`text`), reply to it twice (`reply`), reading it after each reply: the counts
/// the reads showed.
async fn replies_seen(agent: &str, text: &str, reply: &str) -> (Value, Value) {
    let t = notes_twin();
    let server = t.serve_env(&[], &[KEY]);
    let first = server
        .post("/v1/notes", Some(agent), json!({"text": text}))
        .await;
    first.assert_status(200);
    let id = har::key_text(&first.json()["id"]);
    let mut seen = Vec::new();
    for _ in 0..2 {
        let replied = server
            .post(
                "/v1/notes",
                Some(agent),
                json!({"text": reply, "in_reply_to_id": id}),
            )
            .await;
        replied.assert_status(200);
        let read = server.get(&format!("/v1/notes/{id}"), Some(agent)).await;
        read.assert_status(200);
        let read = read.json();
        assert_eq!(har::key_text(&read["id"]), id, "{read}");
        seen.push(read["replies_count"].clone());
    }
    (seen[0].clone(), seen[1].clone())
}

#[tokio::test]
async fn a_reply_replayed_with_fresh_ids_steps_its_notes_replies_count() {
    let (one, two) = replies_seen("agent-1", "first", "a reply").await;
    assert_eq!(one, json!(1));
    assert_eq!(two, json!(2), "a second reply steps it again");
}

#[tokio::test]
async fn a_new_reply_steps_its_notes_replies_count() {
    let (one, two) = replies_seen("agent-2", "my own words", "my answer").await;
    assert_eq!(one, json!(1));
    assert_eq!(two, json!(2), "a second reply steps it again");
}

const STARS: &str = "https://api.stars.test";

fn repo(id: u64, name: &str, stars: i64) -> Value {
    json!({"id": id, "name": name, "full_name": format!("alice/{name}"),
        "owner": {"login": "alice"}, "stargazers_count": stars})
}

/// One recorded session: create a repository, star it (listing the stars before and after,
/// reading the repository after), star it again (nothing moves), unstar it (listing the stars
/// before and after, reading the repository after).
fn stars_session(t: &Twin, n: u64) {
    let name = format!("repo-{n}");
    let repo = |stars| repo(n, &name, stars);
    let (at, star) = (
        format!("/repos/alice/{name}"),
        format!("/user/starred/alice/{name}"),
    );
    let put = || har::no_content(har::entry(STARS, "PUT", &star, None, &json!({})));
    let entries = vec![
        har::entry(
            STARS,
            "POST",
            "/repos",
            Some(&json!({"name": name})),
            &repo(0),
        ),
        har::entry(STARS, "GET", "/user/starred", None, &json!([])),
        put(),
        har::entry(STARS, "GET", "/user/starred", None, &json!([repo(1)])),
        har::entry(STARS, "GET", &at, None, &repo(1)),
        put(),
        har::entry(STARS, "GET", "/user/starred", None, &json!([repo(1)])),
        har::entry(STARS, "GET", &at, None, &repo(1)),
        har::no_content(har::entry(STARS, "DELETE", &star, None, &json!({}))),
        har::entry(STARS, "GET", "/user/starred", None, &json!([])),
        har::entry(STARS, "GET", &at, None, &repo(0)),
    ];
    har::import(t, &[KEY], &format!("stars{n}.har"), entries);
}

#[tokio::test]
async fn a_star_steps_the_starred_repositorys_count_once_and_the_unstar_steps_it_back() {
    let t = har::synth_twin("stars", STARS, &[KEY], 3, stars_session);
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent");
    server
        .post("/repos", s, json!({"name": "mine"}))
        .await
        .assert_status(200);
    let stars = || async {
        let r = server.get("/repos/alice/mine", s).await;
        r.assert_status(200);
        r.json()["stargazers_count"].clone()
    };
    let star = "/user/starred/alice/mine";
    server
        .send("PUT", star, s, &[], None)
        .await
        .assert_status(204);
    assert_eq!(stars().await, json!(1));
    server
        .send("PUT", star, s, &[], None)
        .await
        .assert_status(204);
    assert_eq!(stars().await, json!(1), "a second star changes nothing");
    server.delete(star, s).await.assert_status(204);
    assert_eq!(stars().await, json!(0));
}
