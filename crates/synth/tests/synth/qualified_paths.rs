//! Paths that name a record under a qualifier (`/repos/:owner/:name`), through `synthesize`:
//! repositories created under `POST /repos`, whose answers hand out their `name`, then read,
//! deleted or starred under their owner. The names are one parameter position wherever they
//! were answered, and the owner qualifies the name: it is no parent record.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::json;
use wraith_model::ParentParam;
use wraith_recording::RecordedSession;

const START_US: u64 = 1_700_000_000_000_000;

/// Session `n`: create a repository of `owner`, then `tail` (a read, a delete, a star, an
/// issue) on it.
fn session(n: u64, owner: &str, tail: &str) -> RecordedSession {
    let names = [
        "amber-compass",
        "frozen-quill",
        "ivory-falcon",
        "olive-otter",
    ];
    let name = names[n as usize % names.len()];
    let repo = json!({"id": n, "name": name, "full_name": format!("{owner}/{name}"), "owner": {"login": owner}});
    let path = format!("/repos/{owner}/{name}");
    let next = match tail {
        "read" => ok_json("GET", &path, None, &repo),
        "delete" => ok_json("DELETE", &path, None, &json!({})),
        "star" => ok_json(
            "PUT",
            &format!("/user/starred/{owner}/{name}"),
            None,
            &json!({}),
        ),
        _ => ok_json(
            "POST",
            &format!("{path}/issues"),
            Some(&json!({"title": "t"})),
            &json!({"id": n, "number": 1, "title": "t"}),
        ),
    };
    let mut exchanges = vec![
        ok_json("POST", "/repos", Some(&json!({"name": name})), &repo),
        next,
    ];
    if tail == "issue" {
        let issue = json!({"id": n, "number": 1, "title": "t"});
        exchanges.push(ok_json(
            "GET",
            &format!("{path}/issues"),
            None,
            &json!([issue]),
        ));
    }
    common::session(&format!("s{n}"), START_US + n * 60_000_000, exchanges)
}

fn sessions() -> Vec<RecordedSession> {
    vec![
        session(0, "alice", "read"),
        session(1, "bob", "delete"),
        session(2, "alice", "delete"),
        session(3, "alice", "star"),
        session(4, "bob", "star"),
        session(5, "alice", "issue"),
        session(6, "bob", "issue"),
    ]
}

#[test]
fn names_handed_out_by_a_create_are_one_parameter_wherever_they_are_named() {
    let model = common::synth_model("t", "https://api.example", &sessions());
    let paths: Vec<String> = model
        .routes
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    for want in [
        "GET /repos/:param/:param2",
        "DELETE /repos/:param/:param2",
        "PUT /user/starred/:param/:param2",
        "POST /repos/:param/:param2/issues",
    ] {
        assert!(paths.iter().any(|p| p == want), "{want} in {paths:?}");
    }
    assert!(
        !paths
            .iter()
            .any(|p| p.contains("frozen-quill") || p.contains("olive-otter")),
        "{paths:?}"
    );
}

#[test]
fn an_owner_segment_qualifies_the_name_after_it_and_is_no_parent() {
    let model = common::synth_model("t", "https://api.example", &sessions());
    let read = common::route(&model, "GET", "/repos/:param/:param2");
    assert_eq!(read.entity_type.as_deref(), Some("repos"));
    assert_eq!(read.id_param.as_deref(), Some("param2"));
    assert!(read.parent_params.is_empty(), "{:?}", read.parent_params);
    let delete = common::route(&model, "DELETE", "/repos/:param/:param2");
    assert!(
        delete.parent_params.is_empty(),
        "{:?}",
        delete.parent_params
    );
    let issues = common::route(&model, "POST", "/repos/:param/:param2/issues");
    assert_eq!(
        issues.parent_params,
        vec![ParentParam {
            param: "param2".into(),
            entity_type: "repos".into()
        }]
    );
}
