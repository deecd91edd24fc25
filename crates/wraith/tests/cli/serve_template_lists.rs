//! `wraith serve` rendering an array its template holds as a list (the recorded answers listed
//! different numbers of items) where no recorded state holds the array: each item takes the
//! recorded values in turn, so a VPC created without ranges lists three ranges the recordings
//! showed, as the first recorded VPC listed them, rather than one range three times.
//! Black-box: the real binary serving a model written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::Twin;
use support::model::{self, RouteSpec, echo_body, hole, json_body, obj, variant};
use wraith_model::*;

const RANGES: [&str; 4] = [
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/17",
    "10.118.0.0/20",
];

fn vpcs_twin() -> Twin {
    let t = Twin::init("vpcs", "https://api.vpcs.test");
    let range = hole(
        HoleKind::Observed,
        JsonType::String,
        RANGES.iter().map(|r| json!(r)).collect(),
    );
    let body = obj(vec![
        ("label", echo_body("/label", json!("vpc-1"))),
        (
            "ipv4",
            Node::Array(ArrayNode::List {
                representatives: vec![obj(vec![("range", range)])],
                target_length: 3,
                discriminator: None,
            }),
        ),
    ]);
    let mut m = model::shop("vpcs");
    m.routes.push(model::route(RouteSpec {
        method: "POST",
        path: "/v1/vpcs",
        state_op: None,
        entity_type: None,
        variants: vec![variant("ok", 200, Guard::Always, json_body(body))],
        exact: vec![],
    }));
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    t.write_model(&m);
    t
}

#[tokio::test]
async fn a_template_list_renders_its_items_from_the_recorded_values_in_turn() {
    let t = vpcs_twin();
    let server = t.serve(&[]);
    for label in ["mine", "another"] {
        let made = server
            .post("/v1/vpcs", Some("s1"), json!({ "label": label }))
            .await;
        made.assert_status(200);
        let body = made.json();
        assert_eq!(body["label"], json!(label), "{body}");
        let ranges: Vec<Value> = RANGES[..3].iter().map(|r| json!({ "range": r })).collect();
        assert_eq!(body["ipv4"], Value::Array(ranges), "{body}");
    }
}
