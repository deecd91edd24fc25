//! Counts of the acting principal's own record that each of its creates steps by one
//! (`Route::actor_steps`), learned from small synthetic recordings: every post answers its
//! author with `posts_count` one above the author's previous post. A count the posts left
//! alone, or stepped otherwise, is not learned.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::json;
use wraith_model::Model;
use wraith_recording::RecordedSession;

use common::authed_json as ex;

const RUNS: [(&str, &str); 3] = [
    ("Bearer tok_a", "u_8f3a1c9e27"),
    ("Bearer tok_b", "u_2e7c4a1b93"),
    ("Bearer tok_c", "u_5b1d8e3f62"),
];

/// One run per principal: three posts, each answered with its author whose counts are
/// `counts(n, k)` (run `n`, post `k`), and a like of the first post that lists the author
/// among its likers (the posts' `/author` is the acting principal's record).
fn recordings(counts: impl Fn(usize, usize) -> (i64, i64)) -> Vec<RecordedSession> {
    (0..RUNS.len())
        .map(|n| {
            let (auth, me) = RUNS[n];
            let author = |k: usize| {
                let (posts, followers) = counts(n, k);
                json!({"id": me, "name": format!("name of {me}"),
                       "posts_count": posts, "followers_count": followers})
            };
            let post = |k: usize| format!("p_{n}{k}4c1e9a2b7");
            let mut exchanges = Vec::new();
            for k in 0..3 {
                exchanges.push(ex(
                    "POST",
                    "/v1/posts",
                    auth,
                    Some(json!({"text": format!("post {k}")})),
                    json!({"id": post(k), "text": format!("post {k}"), "author": author(k)}),
                ));
                if k == 0 {
                    exchanges.push(ex(
                        "POST",
                        &format!("/v1/posts/{}/like", post(0)),
                        auth,
                        None,
                        json!({}),
                    ));
                    exchanges.push(ex(
                        "GET",
                        &format!("/v1/posts/{}/likers", post(0)),
                        auth,
                        None,
                        json!([author(0)]),
                    ));
                }
            }
            common::session(&format!("run{n}"), n as u64 * 1_000, exchanges)
        })
        .collect()
}

fn create_steps(m: &Model) -> Vec<String> {
    let create = common::route(m, "POST", "/v1/posts");
    assert!(create.actor_record.is_some(), "the post carries its author");
    create.actor_steps.clone()
}

#[test]
fn a_count_each_post_steps_by_one_is_learned_and_one_left_alone_is_not() {
    let m = common::synth_model(
        "posts",
        "https://api.posts.example",
        &recordings(|n, k| (10 * n as i64 + k as i64, 7)),
    );
    assert_eq!(create_steps(&m), vec!["posts_count".to_string()]);
}

#[test]
fn a_count_the_posts_stepped_by_more_than_one_is_not_learned() {
    let m = common::synth_model(
        "posts",
        "https://api.posts.example",
        &recordings(|n, k| (10 * n as i64 + 2 * k as i64, 7)),
    );
    assert!(create_steps(&m).is_empty());
}
