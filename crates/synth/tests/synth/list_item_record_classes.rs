//! A list item template learned from one recorded record holds its timestamps as timestamps
//! when the record's entity type records them so elsewhere (`record_classes`): the creates of
//! the type saw many records, each with its own `created_at`, so the one record the list
//! showed (listed twice, agreeing with itself) does not make that field a constant.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

use wraith_model::{ArrayNode, BodyTemplate, HoleKind, Model, Node, Route};
use wraith_recording::{Exchange, Headers, RecordedSession};

fn get(path: &str, answer: Value) -> Exchange {
    common::json_exchange("GET", path, 200, Headers::new(), None, &answer)
}

fn post(path: &str, body: Value, answer: Value) -> Exchange {
    common::json_exchange("POST", path, 200, Headers::new(), Some(&body), &answer)
}

fn model(sessions: &[RecordedSession]) -> Model {
    common::synth_model("groups", "https://api.groups.example", sessions)
}

fn group(id: &str, name: &str, created_at: Value) -> Value {
    json!({"id": id, "name": name, "created_at": created_at,
        "members": [{"user_id": "7700123"}]})
}

/// Three runs create a group (each at its own time); a fourth lists the user's groups twice
/// and sees the one group it created both times.
fn sessions(created: [Value; 4]) -> Vec<RecordedSession> {
    let mut out: Vec<RecordedSession> = (0..3)
        .map(|n| {
            let name = format!("team {n}");
            common::session(
                &format!("s{n}"),
                0,
                vec![post(
                    "/v1/groups",
                    json!({"name": name}),
                    group(&format!("410{n}"), &name, created[n].clone()),
                )],
            )
        })
        .collect();
    let listed = group("4109", "team 9", created[3].clone());
    out.push(common::session(
        "s9",
        0,
        vec![
            post("/v1/groups", json!({"name": "team 9"}), listed.clone()),
            get("/v1/users/7700123/groups", json!([listed.clone()])),
            get("/v1/users/7700123/groups", json!([listed])),
        ],
    ));
    out
}

/// The list route's item template field `key`.
fn item_field(r: &Route, key: &str) -> Node {
    let v = r.variants.iter().find(|v| v.status == 200).expect("200");
    let BodyTemplate::Json { root } = &v.body else {
        panic!("json body")
    };
    let item = match root {
        Node::Array(ArrayNode::Tuple { items }) => &items[0],
        Node::Array(ArrayNode::List {
            representatives, ..
        }) => &representatives[0],
        other => panic!("not an array: {other:?}"),
    };
    let Node::Object { fields } = item else {
        panic!("item is no object")
    };
    fields
        .iter()
        .find(|f| f.key == key)
        .map(|f| f.value.clone())
        .unwrap_or_else(|| panic!("no field {key}"))
}

fn list_route(m: &Model) -> &Route {
    m.routes
        .iter()
        .find(|r| r.method == "GET" && r.path == "/v1/users/:param/groups")
        .expect("the list route")
}

#[test]
fn a_list_item_seen_as_one_record_holds_a_timestamp_its_types_creates_record() {
    let m = model(&sessions([
        json!("2026-03-01T10:00:00.000Z"),
        json!("2026-03-02T11:00:00.000Z"),
        json!("2026-03-03T12:00:00.000Z"),
        json!("2026-03-04T13:00:00.000Z"),
    ]));
    let r = list_route(&m);
    assert_eq!(r.entity_type.as_deref(), Some("groups"));
    let Node::Hole(h) = item_field(r, "created_at") else {
        panic!("created_at is a constant")
    };
    assert!(matches!(h.source, HoleKind::Clock { .. }), "{h:?}");
    assert_eq!(h.examples, vec![json!("2026-03-04T13:00:00.000Z")]);
    // The record's other fields stay as that record showed them.
    assert_eq!(
        item_field(r, "name"),
        Node::Const {
            value: json!("team 9")
        }
    );
}

#[test]
fn a_timestamp_the_types_creates_answer_as_one_constant_stays_constant_in_the_list() {
    // Every create answered the same time: a provider constant, not a record's own.
    let same = json!("2026-03-01T10:00:00.000Z");
    let m = model(&sessions([
        same.clone(),
        same.clone(),
        same.clone(),
        same.clone(),
    ]));
    assert_eq!(
        item_field(list_route(&m), "created_at"),
        Node::Const { value: same }
    );
}
