//! `wraith serve` adding a member to a record's array by a path segment and answering the
//! array: recorded runs label an issue by `PUT /repos/:owner/:name/issues/:number/labels/:label`,
//! answered the issue's labels so far, and take a label off by `DELETE`. A session's issue
//! labelled twice answers both labels, reads back with them, loses one to the `DELETE`, and a
//! `DELETE` of a label it does not hold is refused as recorded. Black-box: the real binary on
//! HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.issues.test";

fn labels(names: &[&str]) -> Value {
    names.iter().map(|n| json!({"name": n})).collect()
}

fn issue(number: u64, names: &[&str]) -> Value {
    json!({"id": number + 100, "number": number, "title": "broken", "labels": labels(names)})
}

/// Run `n`: create a repository and an issue, label it twice (each answer the labels so
/// far), read it, take the first label off, and be refused taking off one it does not hold.
fn run(t: &Twin, n: u64, first: &str, second: &str) {
    let repo = format!("/repos/alice/repo-{n}");
    let at = format!("{repo}/issues/{n}");
    let mut missing = har::entry(
        ORIGIN,
        "DELETE",
        &format!("{at}/labels/absent"),
        None,
        &json!({"message": "Label does not exist"}),
    );
    missing["response"]["status"] = json!(404);
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/repos",
            Some(&json!({"name": format!("repo-{n}")})),
            &json!({"id": n, "name": format!("repo-{n}"), "full_name": format!("alice/repo-{n}"),
                "owner": {"login": "alice"}}),
        ),
        har::entry(
            ORIGIN,
            "POST",
            &format!("{repo}/issues"),
            Some(&json!({"title": "broken"})),
            &issue(n, &[]),
        ),
        har::entry(ORIGIN, "GET", &at, None, &issue(n, &[])),
        har::entry(
            ORIGIN,
            "PUT",
            &format!("{at}/labels/{first}"),
            None,
            &labels(&[first]),
        ),
        har::entry(
            ORIGIN,
            "PUT",
            &format!("{at}/labels/{second}"),
            None,
            &labels(&[first, second]),
        ),
        har::entry(ORIGIN, "GET", &at, None, &issue(n, &[first, second])),
        har::entry(
            ORIGIN,
            "DELETE",
            &format!("{at}/labels/{first}"),
            None,
            &labels(&[second]),
        ),
        missing,
    ];
    har::import(t, &[], &format!("run{n}.har"), entries);
}

fn issues_twin() -> Twin {
    let t = Twin::init("issues", ORIGIN);
    run(&t, 1, "bug", "docs");
    run(&t, 2, "question", "wontfix");
    run(&t, 3, "docs", "bug");
    har::synth(&t, &[]);
    t
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("an array: {v}"))
        .iter()
        .map(|l| l["name"].as_str().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn a_put_on_a_member_segment_adds_it_to_the_records_array_and_answers_the_array() {
    let t = issues_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    server
        .post("/repos", s, json!({"name": "fresh"}))
        .await
        .assert_status(200);
    let created = server
        .post("/repos/alice/fresh/issues", s, json!({"title": "broken"}))
        .await;
    created.assert_status(200);
    let at = format!(
        "/repos/alice/fresh/issues/{}",
        har::key_text(&created.json()["number"])
    );
    let first = server
        .send("PUT", &format!("{at}/labels/help"), s, &[], None)
        .await;
    first.assert_status(200);
    assert_eq!(names(&first.json()), ["help"]);
    let second = server
        .send("PUT", &format!("{at}/labels/wontfix"), s, &[], None)
        .await;
    assert_eq!(names(&second.json()), ["help", "wontfix"]);
    let read = server.get(&at, s).await;
    read.assert_status(200);
    assert_eq!(names(&read.json()["labels"]), ["help", "wontfix"]);
    let off = server.delete(&format!("{at}/labels/help"), s).await;
    off.assert_status(200);
    assert_eq!(names(&off.json()), ["wontfix"]);
    server
        .delete(&format!("{at}/labels/help"), s)
        .await
        .assert_status(404);
}
