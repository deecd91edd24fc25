//! `wraith serve` numbering issues within each repository: the recordings answer every issue
//! a `number` counted from 1 in its repository beside an `id` counted across them
//! (`Route::parent_sequences`), and read issues at paths whose value was both (the type's
//! `alternate_key`), so a path names an issue by its number in its repository. Black-box: the
//! real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.numbers.test";
const TOKEN: &str = "token alice-token";

fn issue(id: u64, number: u64, title: &str, state: &str) -> Value {
    json!({"id": id, "number": number, "title": title, "state": state})
}

/// Four runs, alice's and bob's in turn: create two repositories, open two issues in the
/// first and one in the second (`id` 1–3, `number` 1, 2 and 1), close the first
/// repository's second issue, read its first, and delete its second.
fn numbers_twin() -> Twin {
    let t = Twin::init("numbers", ORIGIN);
    for (run, owner) in [("a", "alice"), ("b", "bob"), ("c", "alice"), ("d", "bob")] {
        let names = [format!("north-{run}"), format!("south-{run}")];
        let at = |repo: usize, rest: &str| format!("/repos/{owner}/{}/issues{rest}", names[repo]);
        let titles = [
            format!("crash {run}"),
            format!("typo {run}"),
            format!("slow {run}"),
        ];
        // `method path` sent `body`, answered `status` with `answer`.
        let call = |status: u16, method: &str, path: &str, body: Option<Value>, answer: Value| {
            har::by(
                TOKEN,
                status,
                har::entry(ORIGIN, method, path, body.as_ref(), &answer),
            )
        };
        let mut entries: Vec<Value> = names
            .iter()
            .map(|name| {
                call(
                    201,
                    "POST",
                    "/repos",
                    Some(json!({"name": name})),
                    json!({"id": 1, "name": name, "full_name": format!("{owner}/{name}"),
                        "owner": {"login": owner}}),
                )
            })
            .collect();
        for (id, (repo, number)) in (1u64..).zip([(0, 1), (0, 2), (1, 1)]) {
            let title = &titles[id as usize - 1];
            entries.push(call(
                201,
                "POST",
                &at(repo, ""),
                Some(json!({"title": title})),
                issue(id, number, title, "open"),
            ));
        }
        entries.push(call(
            200,
            "PATCH",
            &at(0, "/2"),
            Some(json!({"state": "closed"})),
            issue(2, 2, &titles[1], "closed"),
        ));
        entries.push(call(
            200,
            "GET",
            &at(0, "/1"),
            None,
            issue(1, 1, &titles[0], "open"),
        ));
        entries.push(har::by(
            TOKEN,
            204,
            har::no_content(har::entry(ORIGIN, "DELETE", &at(0, "/2"), None, &json!({}))),
        ));
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

/// Open an issue titled `title` in alice's repository `repo` in session `s`; its answer.
async fn open(server: &support::Server, s: Option<&str>, repo: &str, title: &str) -> Value {
    let r = server
        .send(
            "POST",
            &format!("/repos/alice/{repo}/issues"),
            s,
            &[("authorization", TOKEN)],
            Some(json!({"title": title})),
        )
        .await;
    r.assert_status(201);
    r.json()
}

async fn create_repo(server: &support::Server, s: Option<&str>, name: &str) {
    server
        .send(
            "POST",
            "/repos",
            s,
            &[("authorization", TOKEN)],
            Some(json!({"name": name})),
        )
        .await
        .assert_status(201);
}

/// In session `s`, create alice's repositories `east` and `west`, open issues `one` and
/// `two` in `east` and `three` in `west`; their answers.
async fn two_repositories_three_issues(server: &support::Server, s: Option<&str>) -> [Value; 3] {
    create_repo(server, s, "east").await;
    create_repo(server, s, "west").await;
    [
        open(server, s, "east", "one").await,
        open(server, s, "east", "two").await,
        open(server, s, "west", "three").await,
    ]
}

#[tokio::test]
async fn issues_are_numbered_from_one_in_each_repository_of_a_session() {
    let t = numbers_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let [first, second, elsewhere] = two_repositories_three_issues(&server, s).await;
    assert_eq!(
        [&first["number"], &second["number"], &elsewhere["number"]],
        [1, 2, 1],
        "{first} {second} {elsewhere}"
    );
    // The ids still count across the type: three issues, three ids.
    let ids: std::collections::BTreeSet<String> = [&first, &second, &elsewhere]
        .iter()
        .map(|i| i["id"].to_string())
        .collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    // Another session numbers its own issues from one again.
    let other = Some("other-agent");
    create_repo(&server, other, "east").await;
    assert_eq!(open(&server, other, "east", "four").await["number"], 1);
}

#[tokio::test]
async fn a_path_naming_an_issues_number_finds_it_in_its_repository() {
    let t = numbers_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    two_repositories_three_issues(&server, s).await;
    let closed = server
        .send(
            "PATCH",
            "/repos/alice/east/issues/2",
            s,
            &[("authorization", TOKEN)],
            Some(json!({"state": "closed"})),
        )
        .await;
    closed.assert_status(200);
    let closed = closed.json();
    assert_eq!(
        (&closed["title"], &closed["number"], &closed["state"]),
        (&json!("two"), &json!(2), &json!("closed")),
        "{closed}"
    );
    let read = |path: &'static str| {
        let server = &server;
        async move {
            let r = server
                .send("GET", path, s, &[("authorization", TOKEN)], None)
                .await;
            r.assert_status(200);
            r.json()
        }
    };
    // Number 1 is another issue in each repository.
    assert_eq!(read("/repos/alice/east/issues/1").await["title"], "one");
    assert_eq!(read("/repos/alice/west/issues/1").await["title"], "three");
}

#[tokio::test]
async fn a_deleted_issues_number_is_not_given_again() {
    let t = numbers_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    create_repo(&server, s, "east").await;
    open(&server, s, "east", "one").await;
    open(&server, s, "east", "two").await;
    server
        .send(
            "DELETE",
            "/repos/alice/east/issues/2",
            s,
            &[("authorization", TOKEN)],
            None,
        )
        .await
        .assert_status(204);
    assert_eq!(open(&server, s, "east", "three").await["number"], 3);
}
