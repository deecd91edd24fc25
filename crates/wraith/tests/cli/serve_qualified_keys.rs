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
/// bob's and lists her stars, stars a repository nobody made (`404`), takes both stars back
/// (`204`, `404`), and deletes her repository, whose read then answers `404`.
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
        // A star written (`PUT`) or taken back (`DELETE`): `204`, or `404` for a repository
        // nobody made.
        let star = |method: &str, path: &str, status: u16| {
            let e = har::entry(ORIGIN, method, path, None, &json!({"message": "Not Found"}));
            if status == 204 {
                har::by(ALICE, 204, har::no_content(e))
            } else {
                har::by(ALICE, status, e)
            }
        };
        let gone = json!({"message": "Not Found"});
        let entries = vec![
            create(ALICE, &mine, "alice's"),
            create(BOB, &theirs, "bob's"),
            get(ALICE, "alice", &mine, 200),
            get(BOB, "bob", &theirs, 200),
            star("PUT", &format!("/user/starred/bob/{name}"), 204),
            har::by(
                ALICE,
                200,
                har::entry(ORIGIN, "GET", "/user/starred", None, &json!([theirs])),
            ),
            star("PUT", &format!("/user/starred/carol/{name}-gone"), 404),
            star("DELETE", &format!("/user/starred/bob/{name}"), 204),
            har::by(
                ALICE,
                200,
                har::entry(ORIGIN, "GET", "/user/starred", None, &json!([])),
            ),
            star("DELETE", &format!("/user/starred/carol/{name}-gone"), 404),
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

#[tokio::test]
async fn a_star_of_a_repository_the_session_created_is_accepted_listed_and_taken_back() {
    let t = owners_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let as_ = |who: &'static str| [("authorization", who)];
    server
        .send(
            "POST",
            "/user/repos",
            s,
            &as_(BOB),
            Some(json!({"name": "new-harbor", "description": "bob's"})),
        )
        .await
        .assert_status(200);
    // No recording starred this repository: the session's own record says it is there.
    server
        .send("PUT", "/user/starred/bob/new-harbor", s, &as_(ALICE), None)
        .await
        .assert_status(204);
    let stars = starred(&server, s).await;
    assert!(stars.iter().any(|n| n == "bob/new-harbor"), "{stars:?}");
    // One nobody made is still refused, as recorded.
    server
        .send("PUT", "/user/starred/carol/nowhere", s, &as_(ALICE), None)
        .await
        .assert_status(404);
    // The star is taken back: the record the path names is the session's, as for the `PUT`.
    server
        .send(
            "DELETE",
            "/user/starred/bob/new-harbor",
            s,
            &as_(ALICE),
            None,
        )
        .await
        .assert_status(204);
    let stars = starred(&server, s).await;
    assert!(!stars.iter().any(|n| n == "bob/new-harbor"), "{stars:?}");
    server
        .send(
            "DELETE",
            "/user/starred/carol/nowhere",
            s,
            &as_(ALICE),
            None,
        )
        .await
        .assert_status(404);
}

/// The `full_name` of every repository alice's `GET /user/starred` lists in session `s`.
async fn starred(server: &support::Server, s: Option<&str>) -> Vec<String> {
    let stars = server
        .send("GET", "/user/starred", s, &[("authorization", ALICE)], None)
        .await;
    stars.assert_status(200);
    stars
        .json()
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|r| r["full_name"].as_str().map(str::to_string))
        .collect()
}
