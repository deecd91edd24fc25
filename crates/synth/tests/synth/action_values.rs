//! Values an action takes from its request, through `synthesize`: the next read of the record
//! showed the sent value (`attach` with `owner_id`), or `null` where it held one (`detach`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::{Value, json};
use wraith_model::{ActionValue, Model};
use wraith_recording::RecordedSession;

/// Session `i`: create volume `100 + i`, attach it to owner `owner`, read it, detach it, read
/// it again.
fn session(i: u64, owner: u64) -> RecordedSession {
    let id = 100 + i;
    let path = format!("/v1/volumes/{id}");
    let record = |owner: Value| json!({"id": id, "size": 10, "owner_id": owner});
    common::session(
        &format!("s{i}"),
        1_700_000_000_000_000 + i * 1_000,
        vec![
            ok_json(
                "POST",
                "/v1/volumes",
                Some(&json!({"size": 10})),
                &record(Value::Null),
            ),
            ok_json("GET", &path, None, &record(Value::Null)),
            ok_json(
                "POST",
                &format!("{path}/attach"),
                Some(&json!({"owner_id": owner})),
                &json!({}),
            ),
            ok_json("GET", &path, None, &record(json!(owner))),
            ok_json(
                "POST",
                &format!("{path}/detach"),
                Some(&json!({})),
                &json!({}),
            ),
            ok_json("GET", &path, None, &record(Value::Null)),
        ],
    )
}

fn synth(sessions: &[RecordedSession]) -> Model {
    common::synth_model("t", "https://api.example", sessions)
}

fn values_of<'m>(model: &'m Model, path: &str) -> &'m [ActionValue] {
    &model
        .routes
        .iter()
        .find(|r| r.method == "POST" && r.path == path)
        .expect("action route")
        .action_values
}

#[test]
fn action_takes_the_field_its_next_read_showed_as_sent() {
    let model = synth(&[session(1, 7), session(2, 8), session(3, 9)]);
    let attach = values_of(&model, "/v1/volumes/:param/attach");
    assert_eq!(attach.len(), 1, "{attach:?}");
    assert_eq!(attach[0].field, "owner_id");
    assert_eq!(attach[0].from, "/owner_id");
    assert_eq!(attach[0].entity_type, "volumes");
    let detach = values_of(&model, "/v1/volumes/:param/detach");
    assert_eq!(detach.len(), 1, "{detach:?}");
    assert_eq!(detach[0].field, "owner_id");
    assert_eq!(detach[0].from, "");
}

#[test]
fn one_recorded_call_teaches_no_action_value() {
    let model = synth(&[session(1, 7)]);
    assert!(values_of(&model, "/v1/volumes/:param/attach").is_empty());
}
