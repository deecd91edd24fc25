//! An action on a record whose answer is another type's record under the same key: muting a
//! person answers the relationship with them (`{"id": <the person's id>, "muting": true}`),
//! which the relationships list shows. The twin stores the action's effect on the session's
//! relationship, so a later list shows the person muted, then unmuted, where it used to answer
//! a recorded relationship (`synth/src/action.rs`, `companion_type`). Black-box: the real
//! binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.people.test";

fn relationship(id: &str, muting: bool) -> Value {
    json!({"id": id, "following": false, "muting": muting, "note": ""})
}

/// Session per person: read them, list the relationship, mute, list, unmute, list.
fn people_twin() -> Twin {
    let t = Twin::init("people", ORIGIN);
    for (i, id) in ["p1", "p2", "p3"].into_iter().enumerate() {
        let e = |method: &str, p: &str, answer: &Value| har::entry(ORIGIN, method, p, None, answer);
        let listed = |muting: bool| json!([relationship(id, muting)]);
        let list = format!("/v1/people/relationships?id[]={id}");
        let entries = vec![
            e(
                "GET",
                &format!("/v1/people/{id}"),
                &json!({"id": id, "name": format!("person {i}"), "locked": false}),
            ),
            e("GET", &list, &listed(false)),
            e(
                "POST",
                &format!("/v1/people/{id}/mute"),
                &relationship(id, true),
            ),
            e("GET", &list, &listed(true)),
            e(
                "POST",
                &format!("/v1/people/{id}/unmute"),
                &relationship(id, false),
            ),
            e("GET", &list, &listed(false)),
        ];
        har::import(&t, &[], &format!("run{i}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn muting_stores_the_relationship_the_action_answers_which_the_list_then_shows() {
    let t = people_twin();
    let route = har::model_route(&t, "POST", "/v1/people/:param/mute");
    assert_eq!(route["action"]["entity_type"], "relationships", "{route}");
    let server = t.serve(&[]);
    // Muted straight away, with no read before: not the recorded order.
    let muted = server
        .post("/v1/people/p2/mute", Some("s1"), json!({}))
        .await;
    muted.assert_status(200);
    assert_eq!(muted.json()["muting"], true);
    let listed = server
        .get("/v1/people/relationships?id[]=p2", Some("s1"))
        .await;
    listed.assert_status(200);
    let items = listed.json();
    let p2 = items
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "p2")
        .unwrap_or_else(|| panic!("{items}"));
    assert_eq!(p2["muting"], true, "{items}");
    // Another session never muted anyone.
    let other = server
        .get("/v1/people/relationships?id[]=p2", Some("s2"))
        .await;
    let items = other.json();
    assert!(
        items
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["muting"] == false),
        "{items}"
    );
}
