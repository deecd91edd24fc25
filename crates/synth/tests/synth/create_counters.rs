//! Counters a create steps on the record its body names, through `synthesize`: a comment
//! naming a post in `post_id` (or posted under the post's path) steps the post's
//! `comments_count`, as the post's reads before and after the comment showed. A pair that contradicts the step drops it; a field that also
//! changes between reads with no write naming the post is no counter; one pair is too few.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;

use common::ok_json;

use serde_json::{Value, json};
use wraith_model::{CreateCounters, Model};
use wraith_recording::{Exchange, RecordedSession};

/// A post `p` as its reads answer it.
fn post(p: u64, comments: i64, views: i64) -> Value {
    json!({"id": p, "title": format!("post {p}"), "comments_count": comments, "views": views})
}

/// Session `n`: create a post, read it, comment on it, read it again (showing `after`
/// comments), then the `extra` exchanges.
fn commented(n: u64, after: i64, extra: Vec<Exchange>) -> RecordedSession {
    let p = 4_000 + n;
    let c = 9_000 + n;
    let mut exchanges = vec![
        ok_json(
            "POST",
            "/v1/posts",
            Some(&json!({"title": format!("post {p}")})),
            &post(p, 0, 0),
        ),
        ok_json("GET", &format!("/v1/posts/{p}"), None, &post(p, 0, 0)),
        ok_json(
            "POST",
            "/v1/comments",
            Some(&json!({"post_id": p, "body": "nice"})),
            &json!({"id": c, "post_id": p, "body": "nice"}),
        ),
        ok_json("GET", &format!("/v1/posts/{p}"), None, &post(p, after, 0)),
    ];
    exchanges.extend(extra);
    common::session(
        &format!("s{n}"),
        1_700_000_000_000_000 + n * 1_000,
        exchanges,
    )
}

fn synth(sessions: &[RecordedSession]) -> Model {
    common::synth_model("t", "https://api.example", sessions)
}

fn comment_counters(model: &Model) -> &[CreateCounters] {
    &model
        .routes
        .iter()
        .find(|r| r.method == "POST" && r.path == "/v1/comments")
        .expect("comment create route")
        .create_counters
}

fn post_type(model: &Model) -> String {
    model
        .routes
        .iter()
        .find(|r| r.method == "GET" && r.path.starts_with("/v1/posts/"))
        .and_then(|r| r.entity_type.clone())
        .expect("post read route with an entity type")
}

#[test]
fn comment_naming_a_post_steps_its_counter_learned_from_reads_before_and_after() {
    let model = synth(&[commented(1, 1, vec![]), commented(2, 1, vec![])]);
    assert_eq!(
        comment_counters(&model),
        [CreateCounters {
            field: "/post_id".into(),
            param: None,
            entity_type: post_type(&model),
            counters: BTreeMap::from([("comments_count".to_string(), 1)]),
        }]
    );
}

#[test]
fn a_pair_that_does_not_show_the_step_drops_the_counter() {
    let model = synth(&[
        commented(1, 1, vec![]),
        commented(2, 1, vec![]),
        commented(3, 0, vec![]),
    ]);
    assert!(comment_counters(&model).is_empty());
}

#[test]
fn a_field_that_also_changes_without_a_write_is_not_a_counter() {
    // Session 2 reads its post once more, the count moved with nothing naming the post.
    let later = ok_json("GET", "/v1/posts/4002", None, &post(4002, 3, 0));
    let model = synth(&[commented(1, 1, vec![]), commented(2, 1, vec![later])]);
    assert!(comment_counters(&model).is_empty());
}

#[test]
fn one_pair_of_reads_is_too_few_to_learn_a_counter() {
    let model = synth(&[commented(1, 1, vec![])]);
    assert!(comment_counters(&model).is_empty());
}

/// `ex` with its one response frame cut in two inside the first occurrence of `cut_in`, as a
/// streamed answer is recorded.
fn split_response(mut ex: Exchange, cut_in: &str) -> Exchange {
    let i = ex
        .frames
        .iter()
        .position(|f| f.direction == "server")
        .expect("a response frame");
    let body = ex.frames[i].body.clone();
    let at = body
        .windows(cut_in.len())
        .position(|w| w == cut_in.as_bytes())
        .expect("the text to cut in")
        + cut_in.len() / 2;
    let mut tail = ex.frames[i].clone();
    tail.body = body[at..].to_vec();
    ex.frames[i].body = body[..at].to_vec();
    ex.frames.insert(i + 1, tail);
    ex
}

#[test]
fn reads_recorded_in_several_frames_still_show_the_step() {
    // The reads before and after the comment arrive in two frames each, cut inside the post's
    // key: the answers must be read whole, not skipped as naming no record.
    let streamed = |n: u64| {
        let mut s = commented(n, 1, vec![]);
        let key = (4_000 + n).to_string();
        for i in [1, 3] {
            let ex = s.exchanges[i].clone();
            s.exchanges[i] = split_response(ex, &key);
        }
        s
    };
    let (one, two) = (streamed(1), streamed(2));
    let frames = |ex: &Exchange| ex.frames.iter().filter(|f| f.direction == "server").count();
    assert_eq!(frames(&one.exchanges[3]), 2);
    let model = synth(&[one, two]);
    assert_eq!(
        comment_counters(&model),
        [CreateCounters {
            field: "/post_id".into(),
            param: None,
            entity_type: post_type(&model),
            counters: BTreeMap::from([("comments_count".to_string(), 1)]),
        }]
    );
}

/// Session `n`: create a post, read it, comment on it under its path, list its comments, read
/// the post again (showing `after` comments).
fn commented_under_its_path(n: u64, after: i64) -> RecordedSession {
    let p = 4_000 + n;
    let c = 9_000 + n;
    common::session(
        &format!("s{n}"),
        1_700_000_000_000_000 + n * 1_000,
        vec![
            ok_json(
                "POST",
                "/v1/posts",
                Some(&json!({"title": format!("post {p}")})),
                &post(p, 0, 0),
            ),
            ok_json("GET", &format!("/v1/posts/{p}"), None, &post(p, 0, 0)),
            ok_json(
                "POST",
                &format!("/v1/posts/{p}/comments"),
                Some(&json!({"body": "nice"})),
                &json!({"id": c, "post_id": p, "body": "nice"}),
            ),
            ok_json(
                "GET",
                &format!("/v1/posts/{p}/comments"),
                None,
                &json!([{"id": c, "post_id": p, "body": "nice"}]),
            ),
            ok_json("GET", &format!("/v1/posts/{p}"), None, &post(p, after, 0)),
        ],
    )
}

#[test]
fn a_create_under_its_parents_path_steps_the_parents_counter() {
    let model = synth(&[
        commented_under_its_path(1, 1),
        commented_under_its_path(2, 1),
    ]);
    let route = model
        .routes
        .iter()
        .find(|r| r.method == "POST" && r.path.ends_with("/comments"))
        .expect("comment create route under its post");
    let param = route.params.last().cloned().expect("a path parameter");
    assert_eq!(
        route.create_counters,
        [CreateCounters {
            field: String::new(),
            param: Some(param),
            entity_type: post_type(&model),
            counters: BTreeMap::from([("comments_count".to_string(), 1)]),
        }]
    );
    // A pair that does not show the step drops it, as for a body field.
    let model = synth(&[
        commented_under_its_path(1, 1),
        commented_under_its_path(2, 1),
        commented_under_its_path(3, 0),
    ]);
    let route = model
        .routes
        .iter()
        .find(|r| r.method == "POST" && r.path.ends_with("/comments"))
        .unwrap();
    assert!(route.create_counters.is_empty());
}

/// A repository as its reads answer it.
fn repo(n: u64, stars: i64) -> Value {
    json!({"id": n, "name": format!("repo-{n}"), "full_name": format!("alice/repo-{n}"),
        "owner": {"login": "alice"}, "stargazers_count": stars})
}

/// Session `n`: create a repository, star it, read it, star it again (nothing moves), read
/// it, unstar it, read it.
fn starred(n: u64) -> RecordedSession {
    let at = format!("/repos/alice/repo-{n}");
    let star = format!("/user/starred/alice/repo-{n}");
    let exchanges = vec![
        ok_json(
            "POST",
            "/repos",
            Some(&json!({"name": format!("repo-{n}")})),
            &repo(n, 0),
        ),
        ok_json("PUT", &star, None, &json!({})),
        ok_json("GET", &at, None, &repo(n, 1)),
        ok_json("PUT", &star, None, &json!({})),
        ok_json("GET", &at, None, &repo(n, 1)),
        ok_json("DELETE", &star, None, &json!({})),
        ok_json("GET", &at, None, &repo(n, 0)),
    ];
    common::session(
        &format!("s{n}"),
        1_700_000_000_000_000 + n * 1_000,
        exchanges,
    )
}

#[test]
fn a_write_on_a_path_naming_another_record_steps_its_counter_and_a_repeat_moves_nothing() {
    let model = synth(&[starred(1), starred(2)]);
    let counters = |method: &str| {
        model
            .routes
            .iter()
            .find(|r| r.method == method && r.path.starts_with("/user/starred/"))
            .unwrap_or_else(|| panic!("{method} star route"))
            .create_counters
            .clone()
    };
    let stars = |step: i64| {
        vec![CreateCounters {
            field: String::new(),
            // Every recorded owner is alice, but alice joined with each name spells a
            // `full_name` an answer handed out: the owner segment is a parameter too.
            param: Some("param2".into()),
            entity_type: "repos".into(),
            counters: BTreeMap::from([("stargazers_count".to_string(), step)]),
        }]
    };
    assert_eq!(counters("PUT"), stars(1));
    assert_eq!(counters("DELETE"), stars(-1));
}
