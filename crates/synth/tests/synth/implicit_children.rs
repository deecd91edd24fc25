//! Records a create makes by itself, through `synthesize`: a machine created from an image
//! lists volumes its session never created; one created without an image lists only what the
//! session made. Synth keeps each first child list after a create as a sample of the create's
//! implicit children.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::{Value, json};
use wraith_model::Model;
use wraith_recording::RecordedSession;

/// Session `n`: create a machine from an image and list its volumes (a boot and a swap
/// volume, created by the machine create itself).
fn imaged(n: u64) -> RecordedSession {
    let m = 5_000 + n;
    let vol =
        |k: u64, label: &str| json!({"id": 90_000 + 10 * n + k, "machine_id": m, "label": label});
    common::session(
        &format!("img{n}"),
        1_700_000_000_000_000 + n * 1_000,
        vec![
            ok_json(
                "POST",
                "/v1/machines",
                Some(&json!({"label": format!("m{n}"), "image": "os/one"})),
                &json!({"id": m, "label": format!("m{n}"), "image": "os/one"}),
            ),
            ok_json(
                "GET",
                &format!("/v1/machines/{m}/volumes"),
                None,
                &json!({"data": [vol(0, "boot"), vol(1, "swap")], "results": 2}),
            ),
        ],
    )
}

/// Session `n`: create a machine without an image, create a volume under it, list them.
fn bare(n: u64) -> RecordedSession {
    let m = 6_000 + n;
    let v = json!({"id": 80_000 + n, "machine_id": m, "label": "data"});
    common::session(
        &format!("bare{n}"),
        1_700_000_100_000_000 + n * 1_000,
        vec![
            ok_json(
                "POST",
                "/v1/machines",
                Some(&json!({"label": format!("b{n}")})),
                &json!({"id": m, "label": format!("b{n}"), "image": null}),
            ),
            ok_json(
                "POST",
                &format!("/v1/machines/{m}/volumes"),
                Some(&json!({"label": "data"})),
                &v,
            ),
            ok_json(
                "GET",
                &format!("/v1/machines/{m}/volumes"),
                None,
                &json!({"data": [v], "results": 1}),
            ),
        ],
    )
}

fn synth(sessions: &[RecordedSession]) -> Model {
    common::synth_model("t", "https://api.example", sessions)
}

fn create_route(model: &Model) -> &wraith_model::Route {
    model
        .routes
        .iter()
        .find(|r| r.method == "POST" && r.path == "/v1/machines")
        .expect("create route")
}

#[test]
fn a_child_list_after_a_create_teaches_the_children_the_create_made_by_itself() {
    let sessions: Vec<RecordedSession> = (1..=3).map(imaged).chain((1..=2).map(bare)).collect();
    let model = synth(&sessions);
    let route = create_route(&model);
    assert_eq!(
        route.implicit_children.len(),
        1,
        "{:?}",
        route.implicit_children
    );
    let children = &route.implicit_children[0];
    assert_eq!(children.list_path, "/v1/machines/:param/volumes");
    let counts: Vec<(Option<&Value>, usize)> = children
        .samples
        .iter()
        .map(|s| (s.request.get("image"), s.items.len()))
        .collect();
    // Sessions in id order: the bare ones list only the volume they created themselves.
    assert_eq!(
        counts,
        vec![
            (None, 0),
            (None, 0),
            (Some(&json!("os/one")), 2),
            (Some(&json!("os/one")), 2),
            (Some(&json!("os/one")), 2),
        ]
    );
    let first = &children.samples[2];
    assert_eq!(first.parent_key, "5001");
    assert_eq!(first.items[0]["label"], json!("boot"));
}

#[test]
fn a_listed_record_the_session_met_before_the_create_is_no_implicit_child() {
    // The session creates a volume elsewhere first and names it in the machine create: the
    // machine's list shows it, but the create did not make it.
    let attached = |n: u64| {
        let m = 7_000 + n;
        let v = json!({"id": 70_000 + n, "machine_id": m, "label": "attached"});
        common::session(
            &format!("att{n}"),
            1_700_000_200_000_000 + n * 1_000,
            vec![
                ok_json(
                    "POST",
                    "/v1/volumes",
                    Some(&json!({"label": "attached"})),
                    &json!({"id": 70_000 + n, "label": "attached"}),
                ),
                ok_json(
                    "POST",
                    "/v1/machines",
                    Some(&json!({"label": format!("a{n}"), "volume_id": 70_000 + n})),
                    &json!({"id": m, "label": format!("a{n}"), "image": null}),
                ),
                ok_json(
                    "GET",
                    &format!("/v1/machines/{m}/volumes"),
                    None,
                    &json!({"data": [v], "results": 1}),
                ),
            ],
        )
    };
    let model = synth(&[attached(1), attached(2), attached(3)]);
    assert!(
        create_route(&model).implicit_children.is_empty(),
        "{:?}",
        create_route(&model).implicit_children
    );
}

/// Session `n`: create a network with one subnet, then a machine from an image joining that
/// subnet; the machine's first profile list shows a boot profile the create made, whose link
/// names the network (which the machine create named only through its subnet).
fn networked(n: u64, zone: &str) -> RecordedSession {
    let (net, sub, m) = (40_000 + n, 41_000 + n, 8_000 + n);
    common::session(
        &format!("net{n}"),
        1_700_000_300_000_000 + n * 1_000,
        vec![
            ok_json(
                "POST",
                "/v1/networks",
                Some(&json!({"label": format!("net-{n}"), "zone": zone,
                             "subnets": [{"label": "inner"}]})),
                &json!({"id": net, "label": format!("net-{n}"), "zone": zone,
                        "subnets": [{"id": sub, "label": "inner"}]}),
            ),
            ok_json(
                "POST",
                "/v1/machines",
                Some(
                    &json!({"label": format!("m{n}"), "image": "os/one", "zone": zone,
                             "links": [{"subnet_id": sub}]}),
                ),
                &json!({"id": m, "label": format!("m{n}"), "image": "os/one"}),
            ),
            ok_json(
                "GET",
                &format!("/v1/machines/{m}/profiles"),
                None,
                &json!({"data": [{"id": 60_000 + n, "machine_id": m, "label": "boot",
                                  "links": [{"subnet_id": sub, "network_id": net}]}],
                        "results": 1}),
            ),
        ],
    )
}

#[test]
fn an_implicit_child_naming_a_record_its_session_created_links_it_through_the_request() {
    let model = synth(&[
        networked(1, "zone-a"),
        networked(2, "zone-b"),
        networked(3, "zone-a"),
    ]);
    let route = create_route(&model);
    let children = route
        .implicit_children
        .iter()
        .find(|c| c.list_path == "/v1/machines/:param/profiles")
        .expect("profiles are implicit children");
    let links: Vec<_> = children.samples.iter().map(|s| s.links.clone()).collect();
    let ty = children.samples[0].links[0].entity_type.clone();
    assert!(ty.contains("network"), "{ty}");
    // The network is found again through the subnet the request sent (and the zone both
    // held); the profile's own key, the new machine and the subnet (an echo of the request)
    // are no links.
    let expected = |n: u64| {
        vec![wraith_model::ImplicitLink {
            value: (40_000 + n).to_string(),
            entity_type: ty.clone(),
            request_pointers: vec!["/zone".into(), "/links/0/subnet_id".into()],
        }]
    };
    assert_eq!(links, vec![expected(1), expected(2), expected(3)]);
}

#[test]
fn a_value_no_earlier_create_of_the_session_answered_is_no_link() {
    // The profile names a network the session never created (another run's, or a fixed one):
    // nothing ties it to the request, so the copy keeps it.
    let mut sessions: Vec<RecordedSession> = (1..=3).map(|n| networked(n, "zone-a")).collect();
    for s in &mut sessions {
        s.exchanges.remove(0);
    }
    let model = synth(&sessions);
    let route = create_route(&model);
    for c in &route.implicit_children {
        for s in &c.samples {
            assert!(s.links.is_empty(), "{:?}", s.links);
        }
    }
}

/// Session `n`: create a balancer, add a node whose answer names the network profile the
/// balancer create made, then list the balancer's profiles. With `named`, a request between
/// the create and the list names the profile (the session knew it otherwise).
fn balanced(n: u64, named: bool) -> RecordedSession {
    let (b, p) = (3_000 + n, 30_000 + n);
    let mut exchanges = vec![
        ok_json(
            "POST",
            "/v1/balancers",
            Some(&json!({"label": format!("b{n}"), "zone": "zone-a"})),
            &json!({"id": b, "label": format!("b{n}"), "zone": "zone-a"}),
        ),
        ok_json(
            "POST",
            &format!("/v1/balancers/{b}/nodes"),
            Some(&json!({"label": "node"})),
            &json!({"id": 90_000 + n, "balancer_id": b, "label": "node", "profile_id": p}),
        ),
    ];
    if named {
        exchanges.push(ok_json(
            "PUT",
            &format!("/v1/balancers/{b}/nodes/{}", 90_000 + n),
            Some(&json!({"profile_id": p})),
            &json!({"id": 90_000 + n, "balancer_id": b, "label": "node", "profile_id": p}),
        ));
    }
    exchanges.push(ok_json(
        "GET",
        &format!("/v1/balancers/{b}/profiles"),
        None,
        &json!({"data": [{"id": p, "balancer_id": b, "zone": "zone-a"}], "results": 1}),
    ));
    common::session(
        &format!("bal{n}"),
        1_700_000_400_000_000 + n * 1_000,
        exchanges,
    )
}

fn balancer_samples(model: &Model) -> Vec<usize> {
    model
        .routes
        .iter()
        .filter(|r| r.method == "POST" && r.path == "/v1/balancers")
        .flat_map(|r| &r.implicit_children)
        .filter(|c| c.list_path == "/v1/balancers/:param/profiles")
        .flat_map(|c| c.samples.iter().map(|s| s.items.len()))
        .collect()
}

#[test]
fn a_child_an_answer_named_after_the_create_is_still_an_implicit_child() {
    let model = synth(&(1..=3).map(|n| balanced(n, false)).collect::<Vec<_>>());
    assert_eq!(balancer_samples(&model), vec![1, 1, 1]);
}

#[test]
fn a_child_a_request_named_after_the_create_is_no_implicit_child() {
    let model = synth(&(1..=3).map(|n| balanced(n, true)).collect::<Vec<_>>());
    assert_eq!(balancer_samples(&model), Vec::<usize>::new());
}
