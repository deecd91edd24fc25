//! Records a create names by value, through `synthesize`: an issue created with
//! `labels: [...]` answers its repository's label records by `name`, and the labels the
//! repository lacked were created with one color (`Route::records_by_value`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::{Value, json};
use wraith_model::{HoleKind, Model, Node, RecordsByValue};
use wraith_recording::RecordedSession;

const START_US: u64 = 1_700_000_000_000_000;
const ISSUES: &str = "/repos/:param/:param2/issues";

/// Session `n` (alice's in even sessions, bob's in odd ones): create a repository and its
/// label `bug` (id 1), open an issue naming `bug` and a new label (answered as id 2 with the
/// color `fresh`), then one naming nothing, read it, and list the labels.
fn session(n: u64, fresh: &str) -> RecordedSession {
    let owner = if n.is_multiple_of(2) { "alice" } else { "bob" };
    let name = format!("repo-{n}");
    let new_label = format!("new-{n}");
    let labels = format!("/repos/{owner}/{name}/labels");
    let issues = format!("/repos/{owner}/{name}/issues");
    let exchanges = vec![
        ok_json(
            "POST",
            "/repos",
            Some(&json!({"name": name})),
            &json!({"id": 1, "name": name, "full_name": format!("{owner}/{name}"),
                "owner": {"login": owner}}),
        ),
        ok_json(
            "POST",
            &labels,
            Some(&json!({"name": "bug", "color": "d73a4a"})),
            &json!({"id": 1, "name": "bug", "color": "d73a4a"}),
        ),
        ok_json(
            "POST",
            &issues,
            Some(&json!({"title": "t", "labels": ["bug", new_label]})),
            &json!({"id": 1, "title": "t", "labels": [
                {"id": 1, "name": "bug", "color": "d73a4a"},
                {"id": 2, "name": new_label, "color": fresh}
            ]}),
        ),
        ok_json(
            "POST",
            &issues,
            Some(&json!({"title": "u"})),
            &json!({"id": 2, "title": "u", "labels": []}),
        ),
        ok_json(
            "GET",
            &format!("{issues}/2"),
            None,
            &json!({"id": 2, "title": "u", "labels": []}),
        ),
        ok_json(
            "GET",
            &labels,
            None,
            &json!([
                {"id": 1, "name": "bug", "color": "d73a4a"},
                {"id": 2, "name": new_label, "color": fresh}
            ]),
        ),
    ];
    common::session(&format!("s{n}"), START_US + n * 60_000_000, exchanges)
}

fn rules(model: &Model) -> &[RecordsByValue] {
    &common::route(model, "POST", ISSUES).records_by_value
}

#[test]
fn labels_named_by_value_are_the_repositorys_and_the_missing_ones_are_created() {
    let sessions: Vec<RecordedSession> = (0..4).map(|n| session(n, "ededed")).collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    let rules = rules(&model);
    assert_eq!(rules.len(), 1, "{rules:?}");
    let rule = &rules[0];
    assert_eq!(
        (
            rule.field.as_str(),
            rule.at.as_str(),
            rule.entity_type.as_str(),
            rule.by.as_str()
        ),
        ("/labels", "/labels", "labels", "name")
    );
    assert_eq!(
        Value::Object(rule.defaults.clone()),
        json!({"color": "ededed"})
    );
    // The listed records' keys are the twin's to mint, not recorded examples.
    let create = common::route(&model, "POST", ISSUES);
    let ok = create.variants.iter().find(|v| v.status == 200).unwrap();
    let wraith_model::BodyTemplate::Json {
        root: Node::Object { fields },
    } = &ok.body
    else {
        panic!("an object template");
    };
    let labels = &fields.iter().find(|f| f.key == "labels").unwrap().value;
    let Node::Array(wraith_model::ArrayNode::List {
        representatives, ..
    }) = labels
    else {
        panic!("a list: {labels:?}");
    };
    for item in representatives {
        let Node::Object { fields } = item else {
            panic!("an object item");
        };
        let id = &fields.iter().find(|f| f.key == "id").unwrap().value;
        assert!(
            matches!(id, Node::Hole(h) if matches!(h.source, HoleKind::Generated { .. })),
            "{id:?}"
        );
    }
}

#[test]
fn created_records_that_differ_beyond_the_value_give_no_rule() {
    // Each session's new label got a color of its own: nothing says what a new one gets.
    let colors = ["ededed", "a2eeef", "ededed", "0e8a16"];
    let sessions: Vec<RecordedSession> = (0..4).map(|n| session(n, colors[n as usize])).collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    assert!(rules(&model).is_empty(), "{:?}", rules(&model));
}
