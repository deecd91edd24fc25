//! Keys spelled across two path segments (`Route::key_qualifier`), through `synthesize`: alice
//! and bob each create a repository named `web` under `POST /user/repos`, and its reads,
//! issues and stars name it as `/…/:owner/:name`. Every answer's `full_name` is the two
//! values joined by `/`, so that is the repositories' key, and the owner qualifies the name
//! on every route that names one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::{Value, json};
use wraith_model::Model;
use wraith_recording::RecordedSession;

fn repo(id: u64, owner: &str, name: &str, stars: u64) -> Value {
    json!({"id": id, "name": name, "full_name": format!("{owner}/{name}"),
        "owner": {"login": owner}, "stargazers_count": stars})
}

/// Session `n`: each owner of `owners` creates a repository named `name` and reads it; the
/// last one files an issue on it, lists its issues, stars it, and lists its stars.
fn session(n: u64, owners: &[&str], name: &str) -> RecordedSession {
    let mut exchanges = Vec::new();
    for (i, owner) in owners.iter().enumerate() {
        let created = repo(i as u64 + 1, owner, name, 0);
        exchanges.push(ok_json(
            "POST",
            "/user/repos",
            Some(&json!({"name": name})),
            &created,
        ));
        exchanges.push(ok_json(
            "GET",
            &format!("/repos/{owner}/{name}"),
            None,
            &created,
        ));
    }
    let (owner, id) = (owners[owners.len() - 1], owners.len() as u64);
    exchanges.push(ok_json(
        "POST",
        &format!("/repos/{owner}/{name}/issues"),
        Some(&json!({"title": "t"})),
        &json!({"id": n, "number": 1, "title": "t"}),
    ));
    exchanges.push(ok_json(
        "GET",
        &format!("/repos/{owner}/{name}/issues"),
        None,
        &json!([{"id": n, "number": 1, "title": "t"}]),
    ));
    exchanges.push(ok_json(
        "PUT",
        &format!("/user/starred/{owner}/{name}"),
        None,
        &json!({}),
    ));
    exchanges.push(ok_json(
        "GET",
        "/user/starred",
        None,
        &json!([repo(id, owner, name, 1)]),
    ));
    common::session(
        &format!("s{n}"),
        1_700_000_000_000_000 + n * 60_000_000,
        exchanges,
    )
}

fn model(sessions: &[RecordedSession]) -> Model {
    common::synth_model("t", "https://api.example", sessions)
}

#[test]
fn a_field_spelling_owner_and_name_keys_records_two_owners_name_alike() {
    let model = model(&[
        session(1, &["alice", "bob"], "web"),
        session(2, &["bob", "alice"], "api"),
        session(3, &["alice", "bob"], "cli"),
        session(4, &["bob"], "ops"),
    ]);
    let repos = &model.entity_types["repos"];
    assert_eq!(repos.primary_key, "full_name");
    for key in ["alice/web", "bob/web", "alice/api", "bob/api", "bob/ops"] {
        assert!(
            repos.known_ids.contains(key),
            "{key} in {:?}",
            repos.known_ids
        );
    }
    for (method, path) in [
        ("GET", "/repos/:param/:param2"),
        ("POST", "/repos/:param/:param2/issues"),
        ("GET", "/repos/:param/:param2/issues"),
        ("PUT", "/user/starred/:param/:param2"),
    ] {
        let route = common::route(&model, method, path);
        assert_eq!(
            route.key_qualifier.as_deref(),
            Some("param"),
            "{method} {path}"
        );
    }
}

#[test]
fn one_owners_names_alone_qualify_nothing() {
    let model = model(&[
        session(1, &["alice"], "web"),
        session(2, &["alice"], "api"),
        session(3, &["alice"], "cli"),
        session(4, &["alice"], "ops"),
    ]);
    assert_ne!(model.entity_types["repos"].primary_key, "full_name");
    assert!(
        model.routes.iter().all(|r| r.key_qualifier.is_none()),
        "{:?}",
        model
            .routes
            .iter()
            .map(|r| (&r.path, &r.key_qualifier))
            .collect::<Vec<_>>()
    );
}
