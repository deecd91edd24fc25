//! Keyed snapshots and list items: a template answer keyed on the request's value of a field
//! (`Variant::keyed_snapshots`) renders each item of a list with several representatives from
//! the representative whose field set the recorded state of that value shows at the same
//! position, instead of the one the request path's hash picks, and renders an item's optional
//! fields as the state's item at that position had them.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_model::*;

fn field(key: &str, value: Node, optional: bool) -> Field {
    Field {
        key: key.into(),
        value,
        optional,
        present_ratio_bp: if optional { 5_000 } else { 10_000 },
    }
}

/// A part item: a minted id and a label, plus `kind` in the newer shape.
fn part(with_kind: bool) -> Node {
    let mut fields = vec![
        field("id", gen_id(cus_id()), false),
        field("label", c(json!("part")), false),
    ];
    if with_kind {
        fields.push(field("kind", c(json!("standard")), false));
    }
    Node::Object { fields }
}

/// Recorded creates: in `north` the answer carries `policy` and its parts a `kind`; in `south`
/// neither. `reps` orders the list's representatives (the render cycle starts at one the path
/// hashes to, so both orders are tried).
fn servers(reps: Vec<Node>, keyed: bool) -> wraith_engine::Engine {
    let answer = |i: u32, region: &str| {
        if region == "north" {
            json!({"id": i, "region": region, "policy": "migrate",
                   "parts": [{"id": i * 10, "label": "part", "kind": "standard"}]})
        } else {
            json!({"id": i, "region": region, "parts": [{"id": i * 10, "label": "part"}]})
        }
    };
    let recorded = [(1, "north"), (2, "north"), (3, "south"), (4, "south")];
    let mut route = R::new("POST", "/v1/servers").op(StateOp::Create, "servers");
    for (i, region) in recorded {
        let sent = json!({"region": region, "label": format!("recorded-{i}")});
        route = route.exact(
            "/v1/servers",
            "",
            Some(&sent),
            vec![moment(&format!("s{i}/0"), 200, answer(i, region))],
        );
    }
    let root = Node::Object {
        fields: vec![
            field("id", gen_id(cus_id()), false),
            field("region", echo_body("/region", JsonType::String), false),
            field("policy", c(json!("migrate")), true),
            field(
                "parts",
                Node::Array(ArrayNode::List {
                    representatives: reps,
                    target_length: 1,
                    discriminator: None,
                }),
                false,
            ),
        ],
    };
    let mut route = route.variant(200, Guard::Always, root).build();
    if keyed {
        let bucket = |key: &str, ids: &[u32]| SnapshotBucket {
            key: json!(key),
            moments: ids.iter().map(|i| format!("s{i}/0")).collect(),
        };
        route.variants[0].keyed_snapshots = Some(Box::new(KeyedSnapshots {
            field: EchoSource::Body {
                pointer: "/region".into(),
            },
            buckets: vec![bucket("north", &[1, 2]), bucket("south", &[3, 4])],
        }));
    }
    engine(
        model(
            vec![route],
            vec![("servers", entity_type(&[], &[], Vec::new()))],
        ),
        det_opts(),
    )
}

fn create(e: &wraith_engine::Engine, session: &str, region: &str) -> Value {
    let r = send(
        e,
        Some(session),
        "POST",
        "/v1/servers",
        json!({"region": region, "label": "new"}),
    );
    assert_eq!(r.status, 200);
    body(&r)
}

#[test]
fn keyed_list_item_renders_the_representative_of_its_recorded_field_set() {
    for reps in [vec![part(false), part(true)], vec![part(true), part(false)]] {
        let e = servers(reps, true);
        let south = create(&e, "a", "south");
        let item = &south["parts"][0];
        assert!(item.get("kind").is_none(), "{south}");
        assert!(item.get("id").is_some(), "{south}");
        let north = create(&e, "b", "north");
        assert_eq!(north["parts"][0]["kind"], json!("standard"), "{north}");
    }
}

#[test]
fn unkeyed_list_items_keep_the_render_cycle() {
    // Without keyed snapshots both regions render the one item the path's hash picks.
    for reps in [vec![part(false), part(true)], vec![part(true), part(false)]] {
        let e = servers(reps, false);
        let south = create(&e, "a", "south");
        let north = create(&e, "b", "north");
        assert_eq!(
            south["parts"][0].get("kind").is_some(),
            north["parts"][0].get("kind").is_some(),
            "{south} {north}"
        );
    }
}

#[test]
fn keyed_list_item_renders_optional_fields_as_its_recorded_item_had_them() {
    // One representative whose `kind` is optional (half the recorded items had it, so the
    // unkeyed rule renders it).
    let rep = Node::Object {
        fields: vec![
            field("id", gen_id(cus_id()), false),
            field("label", c(json!("part")), false),
            field("kind", c(json!("standard")), true),
        ],
    };
    let e = servers(vec![rep.clone()], true);
    let south = create(&e, "a", "south");
    assert!(south["parts"][0].get("kind").is_none(), "{south}");
    let north = create(&e, "b", "north");
    assert_eq!(north["parts"][0]["kind"], json!("standard"), "{north}");
    let plain = servers(vec![rep], false);
    let south = create(&plain, "a", "south");
    assert_eq!(south["parts"][0]["kind"], json!("standard"), "{south}");
}
