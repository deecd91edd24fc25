//! A list searched by a query parameter (`q=al`) whose recorded answers listed only the
//! records holding the value in their text: a search no recording sent keeps, of the list the
//! twin renders, the records holding it (ignoring letter case) in the fields the recordings
//! found it in. Black-box: the real binary on a HAR run written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.people.test";

/// One run creating three users, listing them whole, then searching them with `q=al` (and
/// asking for a team, which no text holds).
fn people_twin() -> Twin {
    let t = Twin::init("people", ORIGIN);
    let user = |id: u32, name: &str| json!({"id": id.to_string(), "username": name, "age": 30});
    let mut entries: Vec<Value> = [(1, "alice"), (2, "bob"), (3, "alina")]
        .into_iter()
        .map(|(id, name)| {
            let sent = json!({"username": name});
            har::entry(ORIGIN, "POST", "/v1/users", Some(&sent), &user(id, name))
        })
        .collect();
    let all = json!([user(1, "alice"), user(2, "bob"), user(3, "alina")]);
    let found = json!([user(1, "alice"), user(3, "alina")]);
    entries.push(har::entry(ORIGIN, "GET", "/v1/users", None, &all));
    entries.push(har::entry(ORIGIN, "GET", "/v1/users?q=al", None, &found));
    // A parameter whose answer lists a record holding its value nowhere is no search.
    let team = json!([user(2, "bob")]);
    entries.push(har::entry(ORIGIN, "GET", "/v1/users?team=red", None, &team));
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn synth_learns_a_search_parameter_from_answers_holding_its_value() {
    let t = people_twin();
    let list = har::model_route(&t, "GET", "/v1/users");
    assert_eq!(
        list["list"]["search_filters"],
        json!([{"param": "q", "fields": ["username"]}])
    );
}

#[tokio::test]
async fn a_search_no_recording_sent_lists_the_records_holding_its_value() {
    let t = people_twin();
    let server = t.serve(&[]);
    let s = Some("searcher");
    for name in ["carol", "Caroline", "dave"] {
        server
            .post("/v1/users", s, json!({"username": name}))
            .await
            .assert_status(200);
    }
    let found = server.get("/v1/users?q=CAR", s).await;
    found.assert_status(200);
    let mut names: Vec<String> = found
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, vec!["Caroline", "carol"], "{}", found.json());
}
