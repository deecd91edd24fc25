//! A list route whose every recorded answer listed as many items is a fixed collection
//! (answered item for item, `ArrayNode::Tuple`) only when its items are the same records each
//! time; where they are other records in each answer (each recorded test's own one widget),
//! its items are a list (`ArrayNode::List`), so each further item is judged and rendered by
//! the same template.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::json;

use wraith_model::{ArrayNode, BodyTemplate, Model, Node};
use wraith_recording::{Exchange, Headers, RecordedSession};

fn list(items: serde_json::Value) -> Exchange {
    common::json_exchange(
        "GET",
        "/v1/widgets",
        200,
        Headers::new(),
        None,
        &json!({"data": items}),
    )
}

fn create(id: &str) -> Exchange {
    common::json_exchange(
        "POST",
        "/v1/widgets",
        201,
        Headers::new(),
        Some(&json!({"name": id})),
        &json!({"id": id, "name": id, "created_at": "2026-01-01T10:00:00Z"}),
    )
}

fn items_node(sessions: Vec<Vec<Exchange>>) -> Node {
    let sessions: Vec<RecordedSession> = sessions
        .into_iter()
        .enumerate()
        .map(|(n, exchanges)| common::session(&format!("s{n}"), 0, exchanges))
        .collect();
    let m: Model = common::synth_model("widgets", "https://api.widgets.example", &sessions);
    let route = common::route(&m, "GET", "/v1/widgets");
    let BodyTemplate::Json { root } = &route.variants[0].body else {
        panic!("a JSON body");
    };
    let Node::Object { fields } = root else {
        panic!("an object");
    };
    fields
        .iter()
        .find(|f| f.key == "data")
        .unwrap()
        .value
        .clone()
}

#[test]
fn one_item_lists_of_other_records_each_time_are_a_list() {
    let widget = |id: &str| json!({"id": id, "name": id, "created_at": "2026-01-01T10:00:00Z"});
    let node = items_node(vec![
        vec![
            create("wid_aaaa1111"),
            list(json!([widget("wid_aaaa1111")])),
        ],
        vec![
            create("wid_bbbb2222"),
            list(json!([widget("wid_bbbb2222")])),
        ],
        vec![
            create("wid_cccc3333"),
            list(json!([widget("wid_cccc3333")])),
        ],
    ]);
    assert!(
        matches!(node, Node::Array(ArrayNode::List { .. })),
        "{node:?}"
    );
}

#[test]
fn the_same_records_listed_each_time_stay_a_fixed_collection() {
    let region = |id: &str| json!({"id": id, "label": format!("region {id}")});
    let node = items_node(vec![
        vec![
            create("wid_aaaa1111"),
            list(json!([region("us-east"), region("eu-west")])),
        ],
        vec![
            create("wid_bbbb2222"),
            list(json!([region("us-east"), region("eu-west")])),
        ],
    ]);
    assert!(
        matches!(node, Node::Array(ArrayNode::Tuple { .. })),
        "{node:?}"
    );
}
