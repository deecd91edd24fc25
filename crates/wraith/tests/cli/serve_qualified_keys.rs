//! `wraith serve` keeping two owners' repositories of one name apart: the recordings answer
//! every repository with a `full_name` spelling its owner and name as the path
//! `/repos/:owner/:name` does, so that pair is its key (`Route::key_qualifier`), and a star
//! at `/user/starred/:owner/:name` names it the same way. Black-box: the real binary on HAR
//! runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.owners.test";
const ALICE: &str = "token alice-token";
const BOB: &str = "token bob-token";

fn repo(id: u64, owner: &str, name: &str, description: &str) -> Value {
    json!({"id": id, "name": name, "full_name": format!("{owner}/{name}"),
        "owner": {"login": owner}, "description": description})
}

/// Four runs: alice and bob each create a repository of one name and read it; alice stars
/// bob's and lists her stars, stars a repository nobody made (`404`), and deletes hers, whose
/// read then answers `404`.
fn owners_twin() -> Twin {
    let t = Twin::init("owners", ORIGIN);
    for (run, name) in [
        ("a", "amber-compass"),
        ("b", "frozen-quill"),
        ("c", "ivory-falcon"),
        ("d", "olive-otter"),
    ] {
        let mine = repo(1, "alice", name, "alice's");
        let theirs = repo(2, "bob", name, "bob's");
        let create = |who: &str, answer: &Value, description: &str| {
            har::by(
                who,
                200,
                har::entry(
                    ORIGIN,
                    "POST",
                    "/user/repos",
                    Some(&json!({"name": name, "description": description})),
                    answer,
                ),
            )
        };
        let get = |who: &str, owner: &str, answer: &Value, status: u16| {
            har::by(
                who,
                status,
                har::entry(
                    ORIGIN,
                    "GET",
                    &format!("/repos/{owner}/{name}"),
                    None,
                    answer,
                ),
            )
        };
        let star = |path: &str, status: u16| {
            let e = har::by(
                ALICE,
                204,
                har::no_content(har::entry(ORIGIN, "PUT", path, None, &json!({}))),
            );
            if status == 204 {
                e
            } else {
                har::by(
                    ALICE,
                    status,
                    har::entry(ORIGIN, "PUT", path, None, &json!({"message": "Not Found"})),
                )
            }
        };
        let gone = json!({"message": "Not Found"});
        let entries = vec![
            create(ALICE, &mine, "alice's"),
            create(BOB, &theirs, "bob's"),
            get(ALICE, "alice", &mine, 200),
            get(BOB, "bob", &theirs, 200),
            star(&format!("/user/starred/bob/{name}"), 204),
            har::by(
                ALICE,
                200,
                har::entry(ORIGIN, "GET", "/user/starred", None, &json!([theirs])),
            ),
            star(&format!("/user/starred/carol/{name}-gone"), 404),
            har::by(
                ALICE,
                204,
                har::no_content(har::entry(
                    ORIGIN,
                    "DELETE",
                    &format!("/repos/alice/{name}"),
                    None,
                    &json!({}),
                )),
            ),
            get(ALICE, "alice", &gone, 404),
            get(BOB, "bob", &theirs, 200),
        ];
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn two_owners_repositories_of_one_name_are_two_records() {
    let t = owners_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let create = |who: &'static str, description: &'static str| {
        let server = &server;
        async move {
            let r = server
                .send(
                    "POST",
                    "/user/repos",
                    s,
                    &[("authorization", who)],
                    Some(json!({"name": "new-harbor", "description": description})),
                )
                .await;
            r.assert_status(200);
            r.json()
        }
    };
    assert_eq!(
        create(ALICE, "first").await["full_name"],
        "alice/new-harbor"
    );
    assert_eq!(create(BOB, "second").await["full_name"], "bob/new-harbor");
    let read = |who: &'static str, owner: &'static str| {
        let server = &server;
        async move {
            server
                .send(
                    "GET",
                    &format!("/repos/{owner}/new-harbor"),
                    s,
                    &[("authorization", who)],
                    None,
                )
                .await
        }
    };
    let alices = read(ALICE, "alice").await;
    alices.assert_status(200);
    assert_eq!(alices.json()["description"], "first", "{}", alices.json());
    let bobs = read(BOB, "bob").await;
    bobs.assert_status(200);
    assert_eq!(bobs.json()["description"], "second", "{}", bobs.json());
    read(BOB, "carol").await.assert_status(404);
    // Deleting alice's leaves bob's.
    server
        .send(
            "DELETE",
            "/repos/alice/new-harbor",
            s,
            &[("authorization", ALICE)],
            None,
        )
        .await
        .assert_status(204);
    read(ALICE, "alice").await.assert_status(404);
    let bobs = read(BOB, "bob").await;
    bobs.assert_status(200);
    assert_eq!(bobs.json()["description"], "second", "{}", bobs.json());
}
