//! Lists filed under a parent by a member, end to end: recorded groups name a user only in
//! their `members` array, and `GET /v1/users/:id/groups` lists the groups the user is a member
//! of. Synth learns that relation, and the served twin lists the session's own new group under
//! its member (and not under another user, nor on a recorded page past the end). Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "member-lists-test-key");
const ORIGIN: &str = "https://api.groups.test";
const USER: &str = "7700123";

fn group(id: &str, name: &str) -> Value {
    json!({"id": id, "name": name, "owner_id": "900",
        "members": [{"id": format!("m{id}"), "user_id": USER}]})
}

fn groups_twin() -> Twin {
    let t = Twin::init("groups", ORIGIN);
    for (n, id) in ["4101", "4102", "4103"].iter().enumerate() {
        let name = format!("team {n}");
        let g = group(id, &name);
        let entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/v1/groups",
                Some(&json!({"name": name, "user_ids": [USER]})),
                &g,
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/v1/users/{USER}/groups"),
                None,
                &json!([g]),
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/v1/users/{USER}/groups?limit=1&offset=1000"),
                None,
                &json!([]),
            ),
        ];
        har::import(&t, &[KEY], &format!("s{n}.har"), entries);
    }
    har::synth(&t, &[KEY]);
    t
}

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|g| match &g["id"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[tokio::test]
async fn a_list_under_a_member_shows_the_sessions_own_record_naming_that_member() {
    let t = groups_twin();
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post(
            "/v1/groups",
            Some("agent-1"),
            json!({"name": "a brand new team", "user_ids": [USER]}),
        )
        .await;
    created.assert_status(200);
    let g = created.json();
    assert_eq!(g["members"][0]["user_id"], json!(USER), "{g}");
    let id = ids(&json!([g]))[0].clone();
    let listed = server
        .get(&format!("/v1/users/{USER}/groups"), Some("agent-1"))
        .await;
    assert_eq!(listed.status, 200);
    assert!(ids(&listed.json()).contains(&id), "{}", listed.json());
    // Another user is no member of it.
    let other = server
        .get("/v1/users/8800456/groups", Some("agent-1"))
        .await;
    assert_eq!(other.status, 200);
    assert!(!ids(&other.json()).contains(&id), "{}", other.json());
}

#[tokio::test]
async fn a_recorded_page_an_offset_put_past_the_end_stays_empty_after_the_session_adds_a_record() {
    let t = groups_twin();
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post(
            "/v1/groups",
            Some("agent-2"),
            json!({"name": "one more team", "user_ids": [USER]}),
        )
        .await;
    assert_eq!(created.status, 200);
    let past = server
        .get(
            &format!("/v1/users/{USER}/groups?limit=1&offset=1000"),
            Some("agent-2"),
        )
        .await;
    assert_eq!(past.status, 200);
    assert_eq!(past.json(), json!([]));
}
