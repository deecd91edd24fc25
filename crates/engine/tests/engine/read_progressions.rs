//! A record the session created moves through its read progression read after read
//! (`Route::read_progressions`): an instance created `provisioning` reads `provisioning`,
//! `booting`, then `running` for good; each state is stored (the list shows it), and a record
//! an update changed meanwhile is left as the update left it.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_model::*;

fn instance_fields(status: Node) -> Node {
    obj(vec![
        ("id", gen_id(cus_id())),
        ("label", echo_body("/label", JsonType::String)),
        ("status", status),
    ])
}

fn instances() -> wraith_engine::Engine {
    let create = R::new("POST", "/v4/instances")
        .op(StateOp::Create, "instances")
        .variant(
            200,
            Guard::Always,
            instance_fields(c(json!("provisioning"))),
        )
        .build();
    let observed = hole(
        HoleKind::Observed,
        JsonType::String,
        vec![json!("provisioning"), json!("booting"), json!("running")],
    );
    let mut read = R::new("GET", "/v4/instances/:id")
        .op(StateOp::Read, "instances")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", echo_path("id")),
                (
                    "label",
                    hole(HoleKind::Observed, JsonType::String, vec![json!("box")]),
                ),
                ("status", observed.clone()),
            ]),
        )
        .build();
    read.read_progressions = vec![ReadProgression {
        field: "status".into(),
        from: json!("provisioning"),
        states: vec![json!("provisioning"), json!("booting"), json!("running")],
    }];
    let update = R::new("PUT", "/v4/instances/:id")
        .op(StateOp::Update, "instances")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", echo_path("id")),
                ("label", echo_body("/label", JsonType::String)),
                ("status", echo_body("/status", JsonType::String)),
            ]),
        )
        .build();
    let item = obj(vec![
        ("id", c(json!("1"))),
        ("label", c(json!("box"))),
        ("status", observed.clone()),
    ]);
    let list = R::new("GET", "/v4/instances")
        .op(StateOp::List, "instances")
        .list(bare_array_list())
        .variant(
            200,
            Guard::Always,
            Node::Array(ArrayNode::Tuple { items: vec![item] }),
        )
        .build();
    engine(
        model(
            vec![create, read, update, list],
            vec![("instances", entity_type(&[], &[], Vec::new()))],
        ),
        det_opts(),
    )
}

fn create(e: &wraith_engine::Engine, s: Option<&str>) -> String {
    let created = body(&send(
        e,
        s,
        "POST",
        "/v4/instances",
        json!({"label": "mine"}),
    ));
    assert_eq!(created["status"], json!("provisioning"));
    created["id"].as_str().unwrap_or_default().to_string()
}

fn status(e: &wraith_engine::Engine, s: Option<&str>, id: &str) -> Value {
    body(&get(e, s, &format!("/v4/instances/{id}")))["status"].clone()
}

fn listed_status(e: &wraith_engine::Engine, s: Option<&str>, id: &str) -> Value {
    let page = body(&get(e, s, "/v4/instances"));
    page.as_array()
        .and_then(|items| items.iter().find(|i| i["id"] == json!(id)))
        .map(|i| i["status"].clone())
        .unwrap_or(Value::Null)
}

#[test]
fn a_created_record_moves_through_its_read_progression_and_stays_in_the_last_state() {
    let e = instances();
    let s = Some("poller");
    let id = create(&e, s);
    let seen: Vec<Value> = (0..5).map(|_| status(&e, s, &id)).collect();
    assert_eq!(
        seen,
        vec![
            json!("provisioning"),
            json!("booting"),
            json!("running"),
            json!("running"),
            json!("running")
        ]
    );
    assert_eq!(
        body(&get(&e, s, &format!("/v4/instances/{id}")))["label"],
        json!("mine"),
        "the rest of the record is the session's"
    );
}

#[test]
fn each_read_state_is_stored_with_the_record() {
    let e = instances();
    let s = Some("poller");
    let id = create(&e, s);
    assert_eq!(listed_status(&e, s, &id), json!("provisioning"));
    assert_eq!(status(&e, s, &id), json!("provisioning"));
    assert_eq!(status(&e, s, &id), json!("booting"));
    assert_eq!(listed_status(&e, s, &id), json!("booting"));
    // Another session's reads move its own records only.
    let other = create(&e, Some("other"));
    assert_eq!(status(&e, Some("other"), &other), json!("provisioning"));
    assert_eq!(listed_status(&e, s, &id), json!("booting"));
}

#[test]
fn a_record_an_update_changed_keeps_the_update_state() {
    let e = instances();
    let s = Some("poller");
    let id = create(&e, s);
    status(&e, s, &id);
    let path = format!("/v4/instances/{id}");
    let updated = body(&send(&e, s, "PUT", &path, json!({"status": "stopped"})));
    assert_eq!(updated["status"], json!("stopped"));
    assert_eq!(status(&e, s, &id), json!("stopped"));
    assert_eq!(status(&e, s, &id), json!("stopped"));
}
