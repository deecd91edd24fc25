//! `wraith serve` finding a record under fewer of its ancestors than its create named: a
//! comment created under its issue (`/repos/:owner/:name/issues/:number/comments`) is edited
//! and deleted under its repository alone (`/repos/:owner/:name/issues/comments/:id`), and not
//! under another repository. Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.repos.test";

/// Three runs, each creating a repository, an issue in it and a comment on the issue, then
/// listing the issue's comments, editing and deleting the comment under the repository, and
/// editing it again (`404`).
fn comments_twin() -> Twin {
    let t = Twin::init("repos", ORIGIN);
    for (run, owner, name, number, id) in [
        ("a", "alice", "amber-compass", 3, 41),
        ("b", "bob", "frozen-quill", 1, 57),
        ("c", "alice", "ivory-falcon", 2, 63),
    ] {
        let repo = format!("/repos/{owner}/{name}");
        let comment = json!({"id": id, "body": "first"});
        let edited = json!({"id": id, "body": "edited"});
        let at = format!("{repo}/issues/comments/{id}");
        let mut gone = har::entry(
            ORIGIN,
            "PATCH",
            &at,
            Some(&json!({"body": "again"})),
            &json!({"message": "Not Found"}),
        );
        gone["response"]["status"] = json!(404);
        let entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/repos",
                Some(&json!({"name": name})),
                &json!({"id": id + 100, "name": name, "full_name": format!("{owner}/{name}")}),
            ),
            har::entry(
                ORIGIN,
                "POST",
                &format!("{repo}/issues"),
                Some(&json!({"title": "broken"})),
                &json!({"number": number, "title": "broken"}),
            ),
            har::entry(
                ORIGIN,
                "POST",
                &format!("{repo}/issues/{number}/comments"),
                Some(&json!({"body": "first"})),
                &comment,
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("{repo}/issues/{number}/comments"),
                None,
                &json!([comment]),
            ),
            har::entry(
                ORIGIN,
                "PATCH",
                &at,
                Some(&json!({"body": "edited"})),
                &edited,
            ),
            har::no_content(har::entry(ORIGIN, "DELETE", &at, None, &json!({}))),
            gone,
        ];
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_comment_created_under_its_issue_is_edited_and_deleted_under_its_repository_alone() {
    let t = comments_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    server
        .post("/repos", s, json!({"name": "new-harbor"}))
        .await
        .assert_status(200);
    let issue = server
        .post(
            "/repos/alice/new-harbor/issues",
            s,
            json!({"title": "slow"}),
        )
        .await;
    issue.assert_status(200);
    let number = har::key_text(&issue.json()["number"]);
    let comment = server
        .post(
            &format!("/repos/alice/new-harbor/issues/{number}/comments"),
            s,
            json!({"body": "first"}),
        )
        .await;
    comment.assert_status(200);
    let id = har::key_text(&comment.json()["id"]);

    let elsewhere = format!("/repos/alice/amber-compass/issues/comments/{id}");
    let body = Some(json!({"body": "edited"}));
    server
        .send("PATCH", &elsewhere, s, &[], body.clone())
        .await
        .assert_status(404);
    let at = format!("/repos/alice/new-harbor/issues/comments/{id}");
    let edited = server.send("PATCH", &at, s, &[], body).await;
    edited.assert_status(200);
    assert_eq!(edited.json()["body"], "edited", "{}", edited.json());
    server.delete(&at, s).await.assert_status(204);
    server
        .send("PATCH", &at, s, &[], Some(json!({"body": "again"})))
        .await
        .assert_status(404);
}
