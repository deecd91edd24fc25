//! `wraith serve` answering the records an issue's create names by value: the recordings
//! answer an issue created with `labels: [...]` with its repository's label records of those
//! names, the missing ones created with one color and listed afterwards
//! (`Route::records_by_value`); a label an issue's path adds by name is that record too. And
//! `wraith check` follows the keys the twin gave such records. Black-box: the real binary on
//! HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.labels.test";
const TOKEN: &str = "token alice-token";

fn label(id: u64, name: &str, color: &str) -> Value {
    json!({"id": id, "name": name, "color": color})
}

/// Four runs, alice's and bob's in turn: create a repository and its label `bug`, open an
/// issue naming `bug` and a label the repository lacks (created: `ededed`), list the labels,
/// add `bug` to a second issue by its path, and read that issue.
fn labels_twin() -> Twin {
    let t = Twin::init("labels", ORIGIN);
    for (run, owner) in [("a", "alice"), ("b", "bob"), ("c", "alice"), ("d", "bob")] {
        let repo = format!("garden-{run}");
        let fresh = format!("area-{run}");
        let base = format!("/repos/{owner}/{repo}");
        let call = |status: u16, method: &str, path: &str, body: Option<Value>, answer: Value| {
            har::by(
                TOKEN,
                status,
                har::entry(ORIGIN, method, path, body.as_ref(), &answer),
            )
        };
        let bug = label(1, "bug", "d73a4a");
        let created = label(2, &fresh, "ededed");
        let entries = vec![
            call(
                201,
                "POST",
                "/repos",
                Some(json!({"name": repo})),
                json!({"id": 1, "name": repo, "full_name": format!("{owner}/{repo}"),
                    "owner": {"login": owner}}),
            ),
            call(
                201,
                "POST",
                &format!("{base}/labels"),
                Some(json!({"name": "bug", "color": "d73a4a"})),
                bug.clone(),
            ),
            call(
                201,
                "POST",
                &format!("{base}/issues"),
                Some(json!({"title": "leak", "labels": ["bug", fresh]})),
                json!({"id": 1, "title": "leak", "labels": [bug, created]}),
            ),
            call(
                200,
                "GET",
                &format!("{base}/labels"),
                None,
                json!([bug, created]),
            ),
            call(
                201,
                "POST",
                &format!("{base}/issues"),
                Some(json!({"title": "typo"})),
                json!({"id": 2, "title": "typo", "labels": []}),
            ),
            call(
                200,
                "PUT",
                &format!("{base}/issues/2/labels/bug"),
                None,
                json!([bug]),
            ),
            call(
                200,
                "GET",
                &format!("{base}/issues/2"),
                None,
                json!({"id": 2, "title": "typo", "labels": [bug]}),
            ),
        ];
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

async fn send(
    server: &support::Server,
    method: &str,
    path: &str,
    body: Option<Value>,
    status: u16,
) -> Value {
    let r = server
        .send(
            method,
            path,
            Some("agent"),
            &[("authorization", TOKEN)],
            body,
        )
        .await;
    r.assert_status(status);
    r.json()
}

/// Create alice's repository `shed` and its label `name`; the label's answer.
async fn shed_with_label(server: &support::Server, name: &str, color: &str) -> Value {
    send(server, "POST", "/repos", Some(json!({"name": "shed"})), 201).await;
    send(
        server,
        "POST",
        "/repos/alice/shed/labels",
        Some(json!({"name": name, "color": color})),
        201,
    )
    .await
}

#[tokio::test]
async fn an_issue_naming_labels_answers_the_repositorys_and_creates_the_missing_ones() {
    let t = labels_twin();
    let server = t.serve(&[]);
    let ours = shed_with_label(&server, "urgent", "b60205").await;
    let issue = send(
        &server,
        "POST",
        "/repos/alice/shed/issues",
        Some(json!({"title": "roof", "labels": ["urgent", "windows"]})),
        201,
    )
    .await;
    let labels = issue["labels"].as_array().expect("labels").clone();
    assert_eq!(labels.len(), 2, "{issue}");
    // The session's own label, as it was created.
    assert_eq!(labels[0], ours, "{issue}");
    // A label the repository lacked: created with the recorded color and a key of its own.
    assert_eq!(labels[1]["name"], "windows");
    assert_eq!(labels[1]["color"], "ededed");
    assert_ne!(labels[1]["id"], ours["id"]);
    let listed = send(&server, "GET", "/repos/alice/shed/labels", None, 200).await;
    assert_eq!(listed, json!([ours, labels[1]]), "{listed}");
    // Named again, the created label is the same record, not another.
    let again = send(
        &server,
        "POST",
        "/repos/alice/shed/issues",
        Some(json!({"title": "door", "labels": ["windows"]})),
        201,
    )
    .await;
    assert_eq!(again["labels"], json!([labels[1]]), "{again}");
    let listed = send(&server, "GET", "/repos/alice/shed/labels", None, 200).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(2), "{listed}");
}

#[tokio::test]
async fn a_label_an_issues_path_adds_by_name_is_the_repositorys_record() {
    let t = labels_twin();
    let server = t.serve(&[]);
    let ours = shed_with_label(&server, "bug", "123456").await;
    let issue = send(
        &server,
        "POST",
        "/repos/alice/shed/issues",
        Some(json!({"title": "roof"})),
        201,
    )
    .await;
    let added = send(
        &server,
        "PUT",
        &format!("/repos/alice/shed/issues/{}/labels/bug", issue["id"]),
        None,
        200,
    )
    .await;
    assert_eq!(added, json!([ours]), "{added}");
}

#[test]
fn check_follows_the_keys_the_twin_gave_labels_it_created_by_name() {
    // Held out, the twin mints its own label keys: the check follows them from the issue's
    // answer to the label list and to the label an issue's path adds.
    let t = labels_twin();
    let out = std::process::Command::new(support::bin())
        .current_dir(t.path())
        .args(["check", &t.path_str(), "--holdout", "2", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check printed no report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(
        report["holdout"]["held_out_score_bp"], 10000,
        "{:#}",
        report["divergences"]
    );
}
