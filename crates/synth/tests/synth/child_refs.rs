//! Answer fields naming a record another create made by itself, through `synthesize`: a node
//! created under a balancer answers the key of the network profile the balancer's create made
//! (the one holding the subnet the node sent), which the balancer's first profile list shows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::json;
use wraith_model::{HoleKind, Model, Node, Route, SentMatch};
use wraith_recording::RecordedSession;

/// Session `n`: a balancer created in a subnet, a node joining it (answering `profile_id`, or
/// `other` when given), then the balancer's profile list (the profile its create made).
fn session(n: u64, named: Option<u64>) -> RecordedSession {
    let (b, sub, profile) = (3_000 + n, 41_000 + n, 60_000 + n);
    common::session(
        &format!("s{n}"),
        1_700_000_000_000_000 + n * 1_000,
        vec![
            ok_json(
                "POST",
                "/v1/balancers",
                Some(&json!({"label": format!("b{n}"), "profiles": [{"subnet_id": sub}]})),
                &json!({"id": b, "label": format!("b{n}")}),
            ),
            ok_json(
                "POST",
                &format!("/v1/balancers/{b}/nodes"),
                Some(&json!({"label": "node", "subnet_id": sub})),
                &json!({"id": 70_000 + n, "label": "node", "balancer_id": b,
                        "profile_id": named.unwrap_or(profile)}),
            ),
            ok_json(
                "GET",
                &format!("/v1/balancers/{b}/nodes/{}", 70_000 + n),
                None,
                &json!({"id": 70_000 + n, "label": "node", "balancer_id": b,
                        "profile_id": named.unwrap_or(profile)}),
            ),
            ok_json(
                "GET",
                &format!("/v1/balancers/{b}/profiles"),
                None,
                &json!({"data": [{"id": profile, "balancer_id": b, "subnet_id": sub}],
                        "results": 1}),
            ),
        ],
    )
}

/// Session `n`: a balancer in no subnet and a node naming no profile (`profile_id: null`).
fn bare(n: u64) -> RecordedSession {
    let b = 4_000 + n;
    let node = json!({"id": 80_000 + n, "label": "node", "balancer_id": b, "profile_id": null});
    common::session(
        &format!("t{n}"),
        1_700_000_100_000_000 + n * 1_000,
        vec![
            ok_json(
                "POST",
                "/v1/balancers",
                Some(&json!({"label": format!("p{n}")})),
                &json!({"id": b, "label": format!("p{n}")}),
            ),
            ok_json(
                "POST",
                &format!("/v1/balancers/{b}/nodes"),
                Some(&json!({"label": "node"})),
                &node,
            ),
            ok_json(
                "GET",
                &format!("/v1/balancers/{b}/nodes/{}", 80_000 + n),
                None,
                &node,
            ),
        ],
    )
}

/// Three sessions in a subnet (`named`: what the third node answers) and two without.
fn sessions(named: Option<u64>) -> Vec<RecordedSession> {
    vec![
        session(1, None),
        session(2, None),
        session(3, named),
        bare(1),
        bare(2),
    ]
}

fn node_create(model: &Model) -> &Route {
    model
        .routes
        .iter()
        .find(|r| r.method == "POST" && r.path == "/v1/balancers/:param/nodes")
        .expect("node create route")
}

fn profile_hole(route: &Route) -> &HoleKind {
    let v = route.variants.iter().find(|v| v.status == 200).unwrap();
    let wraith_model::BodyTemplate::Json {
        root: Node::Object { fields },
    } = &v.body
    else {
        panic!("object template");
    };
    match &fields.iter().find(|f| f.key == "profile_id").unwrap().value {
        Node::Hole(h) => &h.source,
        other => panic!("profile_id is no hole: {other:?}"),
    }
}

#[test]
fn a_node_naming_its_balancers_own_profile_learns_a_child_ref_matched_by_the_sent_subnet() {
    let model = common::synth_model("t", "https://api.example", &sessions(None));
    let balancer = model
        .routes
        .iter()
        .find(|r| r.method == "POST" && r.path == "/v1/balancers")
        .unwrap();
    assert_eq!(
        balancer.implicit_children.len(),
        1,
        "the profiles are children"
    );
    let node = node_create(&model);
    assert_eq!(node.child_refs.len(), 1, "{:?}", node.child_refs);
    let rule = &node.child_refs[0];
    assert_eq!(rule.pointer, "/profile_id");
    assert_eq!(rule.entity_type, balancer.implicit_children[0].entity_type);
    assert_eq!(rule.parent_param, "param");
    assert_eq!(
        rule.matched_by,
        vec![SentMatch {
            field: "subnet_id".into(),
            request_pointer: "/subnet_id".into()
        }]
    );
    assert!(
        matches!(profile_hole(node), HoleKind::Generated { .. }),
        "an id the twin gives, no longer one of the recorded values: {:?}",
        profile_hole(node)
    );
}

#[test]
fn a_field_that_once_names_no_child_learns_nothing() {
    let model = common::synth_model("t", "https://api.example", &sessions(Some(99_999)));
    let node = node_create(&model);
    assert!(node.child_refs.is_empty(), "{:?}", node.child_refs);
    assert!(
        matches!(profile_hole(node), HoleKind::Observed),
        "{:?}",
        profile_hole(node)
    );
}

#[test]
fn one_recorded_pair_is_not_enough() {
    let model = common::synth_model(
        "t",
        "https://api.example",
        &[session(1, None), bare(1), bare(2)],
    );
    let node = node_create(&model);
    assert!(node.child_refs.is_empty(), "{:?}", node.child_refs);
}
