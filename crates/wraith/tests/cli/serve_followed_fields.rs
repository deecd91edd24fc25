//! An action's answer field that follows a field of the record its path names: following a
//! person answers `requested: true, following: false` when the person is `locked`, and the
//! other way round when not. Recorded runs follow locked and open people; a session following
//! people no run followed (only read) is answered, and stores, the relationship each one's
//! `locked` calls for (`synth/src/action.rs`, `followed`), where the template used to pick a
//! recorded value by the path. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.people.test";

fn person(id: &str, locked: bool) -> Value {
    json!({"id": id, "name": format!("person {id}"), "locked": locked})
}

fn relationship(id: &str, following: bool, requested: bool) -> Value {
    json!({"id": id, "following": following, "requested": requested, "note": ""})
}

/// People `a`–`d` followed in their own runs (`b` and `d` locked); `e`–`h` only read.
fn people_twin() -> Twin {
    let t = Twin::init("people", ORIGIN);
    let followed = [("a", false), ("b", true), ("c", false), ("d", true)];
    for (i, (id, locked)) in followed.into_iter().enumerate() {
        let e = |method: &str, p: &str, answer: &Value| har::entry(ORIGIN, method, p, None, answer);
        let list = format!("/v1/people/relationships?id[]={id}");
        let entries = vec![
            e("GET", &format!("/v1/people/{id}"), &person(id, locked)),
            e("GET", &list, &json!([relationship(id, false, false)])),
            e(
                "POST",
                &format!("/v1/people/{id}/follow"),
                &relationship(id, !locked, locked),
            ),
            e("GET", &list, &json!([relationship(id, !locked, locked)])),
        ];
        har::import(&t, &[], &format!("run{i}.har"), entries);
    }
    let read: Vec<Value> = [("e", true), ("f", false), ("g", true), ("h", false)]
        .into_iter()
        .map(|(id, locked)| {
            har::entry(
                ORIGIN,
                "GET",
                &format!("/v1/people/{id}"),
                None,
                &person(id, locked),
            )
        })
        .collect();
    har::import(&t, &[], "reads.har", read);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn following_answers_and_stores_what_the_persons_lock_calls_for() {
    let t = people_twin();
    let server = t.serve(&[]);
    for (id, locked) in [("e", true), ("f", false), ("g", true), ("h", false)] {
        let followed = server
            .post(&format!("/v1/people/{id}/follow"), Some("s1"), json!({}))
            .await;
        followed.assert_status(200);
        let answer = followed.json();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["requested"], locked, "{id}: {answer}");
        assert_eq!(answer["following"], !locked, "{id}: {answer}");
        let listed = server
            .get(&format!("/v1/people/relationships?id[]={id}"), Some("s1"))
            .await;
        listed.assert_status(200);
        let items = listed.json();
        let held = items
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{items}"));
        assert_eq!(held["requested"], locked, "{id}: {items}");
        assert_eq!(held["following"], !locked, "{id}: {items}");
    }
}
