//! Records a create makes by itself, end to end: recorded machines created from an image list
//! a boot and a swap volume their sessions never created, machines created without one list
//! only the volumes their sessions made. The served twin gives a session's own machine the
//! volumes the nearest recorded create made, under fresh keys naming the new machine, and its
//! later reads find them. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "implicit-children-test-key");
const ORIGIN: &str = "https://api.machines.test";

fn imaged(t: &Twin, n: u64) {
    let m = 5_000 + n;
    let vol = |k: u64, label: &str| json!({"id": 90_000 + 10 * n + k, "machine_id": m, "label": label, "size": 100 + k});
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/machines",
            Some(&json!({"label": format!("m{n}"), "image": "os/one"})),
            &json!({"id": m, "label": format!("m{n}"), "image": "os/one"}),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/machines/{m}/volumes"),
            None,
            &json!({"data": [vol(0, "boot"), vol(1, "swap")], "results": 2}),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/machines/{m}/volumes/{}", 90_000 + 10 * n),
            None,
            &vol(0, "boot"),
        ),
    ];
    har::import(t, &[KEY], &format!("img{n}.har"), entries);
}

fn bare(t: &Twin, n: u64) {
    let m = 6_000 + n;
    let v = json!({"id": 80_000 + n, "machine_id": m, "label": "data", "size": 50});
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/machines",
            Some(&json!({"label": format!("b{n}")})),
            &json!({"id": m, "label": format!("b{n}"), "image": null}),
        ),
        har::entry(
            ORIGIN,
            "POST",
            &format!("/v1/machines/{m}/volumes"),
            Some(&json!({"label": "data", "size": 50})),
            &v,
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/machines/{m}/volumes"),
            None,
            &json!({"data": [v], "results": 1}),
        ),
    ];
    har::import(t, &[KEY], &format!("bare{n}.har"), entries);
}

fn machines_twin() -> Twin {
    har::synth_twin("machines", ORIGIN, &[KEY], 3, |t, n| {
        imaged(t, n);
        bare(t, n);
    })
}

fn items(v: &Value) -> Vec<Value> {
    v["data"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn a_created_machine_lists_the_volumes_its_create_made_under_fresh_keys() {
    let t = machines_twin();
    let server = t.serve_env(&[], &[KEY]);
    let made = server
        .post(
            "/v1/machines",
            Some("agent-1"),
            json!({"label": "mine", "image": "os/two"}),
        )
        .await;
    made.assert_status(200);
    let id = made.json()["id"].clone();
    let listed = server
        .get(&format!("/v1/machines/{id}/volumes"), Some("agent-1"))
        .await;
    listed.assert_status(200);
    let vols = items(&listed.json());
    let labels: Vec<&Value> = vols.iter().map(|v| &v["label"]).collect();
    assert_eq!(labels, vec![&json!("boot"), &json!("swap")], "{vols:?}");
    for v in &vols {
        assert_eq!(v["machine_id"], id, "{v}");
        let key = v["id"].as_u64().expect("integer key");
        assert!(
            !(90_000..90_100).contains(&key),
            "a fresh key, not a recorded child's: {v}"
        );
    }
    assert_ne!(vols[0]["id"], vols[1]["id"]);
    // The children are the session's records: a read of one finds it.
    let boot = server
        .get(
            &format!("/v1/machines/{id}/volumes/{}", vols[0]["id"]),
            Some("agent-1"),
        )
        .await;
    boot.assert_status(200);
    assert_eq!(boot.json(), vols[0]);
}

#[tokio::test]
async fn a_machine_created_without_an_image_lists_only_its_own_volumes() {
    let t = machines_twin();
    let server = t.serve_env(&[], &[KEY]);
    let made = server
        .post("/v1/machines", Some("agent-2"), json!({"label": "plain"}))
        .await;
    made.assert_status(200);
    let id = made.json()["id"].clone();
    let listed = server
        .get(&format!("/v1/machines/{id}/volumes"), Some("agent-2"))
        .await;
    listed.assert_status(200);
    assert_eq!(
        items(&listed.json()),
        Vec::<Value>::new(),
        "{}",
        listed.json()
    );
}

/// Recorded run `n`: a network with one subnet, then a machine from an image joining the
/// subnet, whose first profile list shows the boot profile the create made, linked to the
/// network the create named only through its subnet.
fn networked(t: &Twin, n: u64) {
    let (net, sub, m) = (40_000 + n, 41_000 + n, 8_000 + n);
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/networks",
            Some(&json!({"label": format!("net-{n}"), "subnets": [{"label": "inner"}]})),
            &json!({"id": net, "label": format!("net-{n}"),
                    "subnets": [{"id": sub, "label": "inner"}]}),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/v1/machines",
            Some(&json!({"label": format!("m{n}"), "image": "os/one",
                         "links": [{"subnet_id": sub}]})),
            &json!({"id": m, "label": format!("m{n}"), "image": "os/one"}),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/machines/{m}/profiles"),
            None,
            &json!({"data": [{"id": 60_000 + n, "machine_id": m, "label": "boot",
                              "links": [{"subnet_id": sub, "network_id": net}]}],
                    "results": 1}),
        ),
    ];
    har::import(t, &[KEY], &format!("net{n}.har"), entries);
}

#[tokio::test]
async fn an_implicit_profile_names_the_sessions_network_holding_the_subnet_its_create_sent() {
    let t = har::synth_twin("networks", ORIGIN, &[KEY], 3, networked);
    let server = t.serve_env(&[], &[KEY]);
    let mut nets = Vec::new();
    for label in ["first", "second"] {
        let made = server
            .post(
                "/v1/networks",
                Some("agent-3"),
                json!({"label": label, "subnets": [{"label": "inner"}]}),
            )
            .await;
        made.assert_status(200);
        let v = made.json();
        nets.push((v["id"].clone(), v["subnets"][0]["id"].clone()));
    }
    assert_ne!(nets[0], nets[1]);
    // The machine joins the second network's subnet: its profile names that network, not
    // the first one, nor the recorded run's.
    let (net, sub) = nets[1].clone();
    let made = server
        .post(
            "/v1/machines",
            Some("agent-3"),
            json!({"label": "mine", "image": "os/one", "links": [{"subnet_id": sub}]}),
        )
        .await;
    made.assert_status(200);
    let id = made.json()["id"].clone();
    let listed = server
        .get(&format!("/v1/machines/{id}/profiles"), Some("agent-3"))
        .await;
    listed.assert_status(200);
    let profiles = items(&listed.json());
    assert_eq!(profiles.len(), 1, "{profiles:?}");
    assert_eq!(profiles[0]["machine_id"], id, "{profiles:?}");
    assert_eq!(
        profiles[0]["links"],
        json!([{"subnet_id": sub, "network_id": net}]),
        "{profiles:?}"
    );
}

/// Recorded run `n`: a balancer create, a node whose answer names the network profile the
/// balancer create made, then the balancer's profile list.
fn balanced(t: &Twin, n: u64) {
    let (b, p) = (3_000 + n, 30_000 + n);
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/balancers",
            Some(&json!({"label": format!("b{n}"), "zone": "zone-a"})),
            &json!({"id": b, "label": format!("b{n}"), "zone": "zone-a"}),
        ),
        har::entry(
            ORIGIN,
            "POST",
            &format!("/v1/balancers/{b}/nodes"),
            Some(&json!({"label": format!("node-{n}")})),
            &json!({"id": 90_000 + n, "balancer_id": b, "label": format!("node-{n}"),
                    "profile_id": p}),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/balancers/{b}/profiles"),
            None,
            &json!({"data": [{"id": p, "balancer_id": b, "zone": "zone-a"}], "results": 1}),
        ),
    ];
    har::import(t, &[KEY], &format!("bal{n}.har"), entries);
}

#[tokio::test]
async fn a_balancer_lists_the_profile_its_create_made_though_recorded_answers_named_it_first() {
    let t = har::synth_twin("balancers", ORIGIN, &[KEY], 3, balanced);
    let server = t.serve_env(&[], &[KEY]);
    let made = server
        .post(
            "/v1/balancers",
            Some("agent-4"),
            json!({"label": "mine", "zone": "zone-a"}),
        )
        .await;
    made.assert_status(200);
    let id = made.json()["id"].clone();
    let listed = server
        .get(&format!("/v1/balancers/{id}/profiles"), Some("agent-4"))
        .await;
    listed.assert_status(200);
    let profiles = items(&listed.json());
    assert_eq!(profiles.len(), 1, "{}", listed.json());
    assert_eq!(profiles[0]["balancer_id"], id, "{profiles:?}");
    assert_eq!(profiles[0]["zone"], json!("zone-a"), "{profiles:?}");
}

/// The images every run lists, by key: only `one` and `two` were ever created from.
const IMAGES: [(&str, &str); 3] = [
    ("one", "First OS"),
    ("two", "Second OS"),
    ("three", "Third OS"),
];

/// Run `n`: lists the images, then creates a machine from image `one` (odd runs) or `two`
/// (even runs), whose boot volume the API labelled after the image's label.
fn labelled(t: &Twin, n: u64) {
    let m = 7_000 + n;
    let (image, label) = IMAGES[usize::from(n.is_multiple_of(2))];
    let images: Vec<Value> = IMAGES
        .iter()
        .map(|(id, label)| json!({"id": id, "label": label, "vendor": "acme"}))
        .collect();
    let vol =
        |k: u64, label: &str| json!({"id": 70_000 + 10 * n + k, "machine_id": m, "label": label});
    let entries = vec![
        har::entry(
            ORIGIN,
            "GET",
            "/v1/images",
            None,
            &json!({"data": images, "results": 3}),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/v1/machines",
            Some(&json!({"label": format!("l{n}"), "image": image})),
            &json!({"id": m, "label": format!("l{n}"), "image": image}),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/machines/{m}/volumes"),
            None,
            &json!({"data": [vol(0, &format!("{label} Boot")), vol(1, "acme swap")], "results": 2}),
        ),
    ];
    har::import(t, &[KEY], &format!("labelled{n}.har"), entries);
}

#[tokio::test]
async fn an_implicit_volume_is_labelled_after_the_image_the_sessions_create_named() {
    let t = har::synth_twin("labelled", ORIGIN, &[KEY], 4, labelled);
    let create = har::model_route(&t, "POST", "/v1/machines");
    let texts = &create["implicit_children"][0]["texts"];
    // The label is spelled from the image's label; the swap's `acme` (every image's vendor,
    // one value) is no rule.
    assert_eq!(
        texts,
        &json!([{"field": "label", "request_pointer": "/image", "entity_type": "images",
                 "from": "label", "suffix": " Boot"}]),
        "{create}"
    );
    let server = t.serve_env(&[], &[KEY]);
    for (image, boot) in [("three", "Third OS Boot"), ("one", "First OS Boot")] {
        let made = server
            .post(
                "/v1/machines",
                Some("agent-4"),
                json!({"label": "mine", "image": image}),
            )
            .await;
        made.assert_status(200);
        let id = made.json()["id"].clone();
        let listed = server
            .get(&format!("/v1/machines/{id}/volumes"), Some("agent-4"))
            .await;
        listed.assert_status(200);
        let labels: Vec<Value> = items(&listed.json())
            .iter()
            .map(|v| v["label"].clone())
            .collect();
        assert_eq!(labels, [json!(boot), json!("acme swap")], "{image}");
    }
}

/// Recorded run `n`: a host create, then a firewall create naming the host in its
/// `devices`, whose device list shows the device the create made for that host.
fn guarded(t: &Twin, n: u64) {
    let (host, fw, dev) = (70_000 + n, 71_000 + n, 72_000 + n);
    let label = format!("host-{n}");
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/hosts",
            Some(&json!({"label": label})),
            &json!({"id": host, "label": label, "status": "running"}),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/v1/firewalls",
            Some(&json!({"label": format!("fw-{n}"), "devices": {"hosts": [host]}})),
            &json!({"id": fw, "label": format!("fw-{n}")}),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/firewalls/{fw}/devices"),
            None,
            &json!({"data": [{"id": dev, "entity": {"id": host, "label": label,
                                                    "url": format!("/v1/hosts/{host}")}}],
                    "results": 1}),
        ),
    ];
    har::import(t, &[KEY], &format!("fw{n}.har"), entries);
}

#[tokio::test]
async fn an_implicit_device_is_not_made_where_the_sessions_create_named_no_record() {
    let t = har::synth_twin("firewalls", ORIGIN, &[KEY], 3, guarded);
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-4");
    // Every recorded firewall named a host; this one names none, so it has no device.
    let bare = server
        .post("/v1/firewalls", s, json!({"label": "empty"}))
        .await
        .json()["id"]
        .clone();
    let listed = server
        .get(&format!("/v1/firewalls/{bare}/devices"), s)
        .await
        .json();
    assert_eq!(items(&listed), Vec::<Value>::new(), "{listed}");
}

#[tokio::test]
async fn an_implicit_device_names_the_sessions_record_as_the_session_holds_it() {
    let t = har::synth_twin("firewalls", ORIGIN, &[KEY], 3, guarded);
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-5");
    let host = server
        .post("/v1/hosts", s, json!({"label": "mine"}))
        .await
        .json()["id"]
        .clone();
    let fw = server
        .post(
            "/v1/firewalls",
            s,
            json!({"label": "guard", "devices": {"hosts": [host]}}),
        )
        .await
        .json()["id"]
        .clone();
    let listed = items(
        &server
            .get(&format!("/v1/firewalls/{fw}/devices"), s)
            .await
            .json(),
    );
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(
        listed[0]["entity"],
        json!({"id": host, "label": "mine", "url": format!("/v1/hosts/{host}")}),
        "{listed:?}"
    );
}

/// Recorded run `n`: a read of the tag `prod` (a record keyed by its label), then a cluster
/// create whose one sent node pool is tagged `prod`, whose pool list shows the pool the
/// create made with what was sent for it.
fn pooled(t: &Twin, n: u64) {
    let (cluster, pool) = (80_000 + n, 81_000 + n);
    let entries = vec![
        har::entry(
            ORIGIN,
            "GET",
            "/v1/tags/prod",
            None,
            &json!({"label": "prod", "count": n}),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/v1/clusters",
            Some(&json!({"label": format!("c{n}"),
                         "node_pools": [{"type": "small-node", "count": 2, "tags": ["prod"]}]})),
            &json!({"id": cluster, "label": format!("c{n}")}),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/clusters/{cluster}/pools"),
            None,
            &json!({"data": [{"id": pool, "type": "small-node", "count": 2, "tags": ["prod"]}],
                    "results": 1}),
        ),
    ];
    har::import(t, &[KEY], &format!("pool{n}.har"), entries);
}

#[tokio::test]
async fn an_implicit_child_carrying_a_sent_records_key_under_the_same_name_is_still_made() {
    let t = har::synth_twin("clusters", ORIGIN, &[KEY], 3, pooled);
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-6");
    // The recorded pools carry the tag their create sent for them; this create sends none,
    // and its pool is made all the same (a tag on a pool is not what the pool was made for).
    let cluster = server
        .post(
            "/v1/clusters",
            s,
            json!({"label": "mine", "node_pools": [{"type": "large-node", "count": 2}]}),
        )
        .await
        .json()["id"]
        .clone();
    let listed = items(
        &server
            .get(&format!("/v1/clusters/{cluster}/pools"), s)
            .await
            .json(),
    );
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["type"], "large-node", "{listed:?}");
}

#[tokio::test]
async fn a_create_makes_one_implicit_child_per_object_it_sent_as_each_object_asked() {
    let t = har::synth_twin("clusters", ORIGIN, &[KEY], 3, pooled);
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-7");
    // Every recorded create sent one pool and listed one, of the type and count it sent.
    let cluster = server
        .post(
            "/v1/clusters",
            s,
            json!({"label": "mine", "node_pools": [
                {"type": "large-node", "count": 3, "tags": ["edge"]},
                {"type": "tiny-node", "count": 1}
            ]}),
        )
        .await
        .json()["id"]
        .clone();
    let listed = items(
        &server
            .get(&format!("/v1/clusters/{cluster}/pools"), s)
            .await
            .json(),
    );
    assert_eq!(listed.len(), 2, "{listed:?}");
    let mut pools: Vec<(Value, Value)> = listed
        .iter()
        .map(|p| (p["type"].clone(), p["count"].clone()))
        .collect();
    pools.sort_by_key(|(t, _)| t.to_string());
    assert_eq!(
        pools,
        vec![
            (json!("large-node"), json!(3)),
            (json!("tiny-node"), json!(1))
        ],
        "{listed:?}"
    );
    let large = listed.iter().find(|p| p["type"] == "large-node").unwrap();
    assert_eq!(large["tags"], json!(["edge"]), "{listed:?}");
    assert_ne!(listed[0]["id"], listed[1]["id"], "{listed:?}");
}
