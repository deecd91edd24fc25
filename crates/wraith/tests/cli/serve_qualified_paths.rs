//! `wraith serve` reading, updating and deleting a record its flat collection created at a
//! path that names it under a qualifier (`POST /repos`, then `/repos/:owner/:name`): the
//! owner segment qualifies the record's key, it names no record of its own. Black-box: the
//! real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.repos.test";

fn repo(id: u64, owner: &str, name: &str, description: &str) -> Value {
    json!({
        "id": id, "name": name, "full_name": format!("{owner}/{name}"),
        "owner": {"login": owner}, "description": description
    })
}

/// Three runs, each creating a repository under `POST /repos`, reading it under its owner,
/// updating it, deleting it, and reading it again (`404`).
fn repos_twin() -> Twin {
    let t = Twin::init("repos", ORIGIN);
    for (run, id, owner, name) in [
        ("a", 11, "alice", "amber-compass"),
        ("b", 12, "bob", "frozen-quill"),
        ("c", 13, "alice", "ivory-falcon"),
    ] {
        let path = format!("/repos/{owner}/{name}");
        let created = repo(id, owner, name, "first");
        let edited = repo(id, owner, name, "edited");
        let mut gone = har::entry(ORIGIN, "GET", &path, None, &json!({"message": "Not Found"}));
        gone["response"]["status"] = json!(404);
        let entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/repos",
                Some(&json!({"name": name, "description": "first"})),
                &created,
            ),
            har::entry(ORIGIN, "GET", &path, None, &created),
            har::entry(
                ORIGIN,
                "PATCH",
                &path,
                Some(&json!({"description": "edited"})),
                &edited,
            ),
            har::no_content(har::entry(ORIGIN, "DELETE", &path, None, &json!({}))),
            gone,
        ];
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_record_a_flat_collection_created_is_read_updated_and_deleted_under_its_owner() {
    let t = repos_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let created = server
        .post(
            "/repos",
            s,
            json!({"name": "new-harbor", "description": "first"}),
        )
        .await;
    created.assert_status(200);
    assert_eq!(created.json()["name"], "new-harbor");
    let path = "/repos/alice/new-harbor";
    let read = server.get(path, s).await;
    read.assert_status(200);
    assert_eq!(read.json()["name"], "new-harbor", "{}", read.json());
    let edited = server
        .send(
            "PATCH",
            path,
            s,
            &[],
            Some(json!({"description": "edited"})),
        )
        .await;
    edited.assert_status(200);
    assert_eq!(edited.json()["description"], "edited");
    server.delete(path, s).await.assert_status(204);
    server.get(path, s).await.assert_status(404);
}
