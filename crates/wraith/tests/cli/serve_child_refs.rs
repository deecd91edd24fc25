//! A create's answer naming a record another create made by itself, end to end: recorded
//! nodes created under a balancer in a subnet answer `profile_id`, the key of the network
//! profile the balancer's create made (its first profile list shows it). The served twin gives
//! a session's balancer its profile under a fresh key, and a node created under that balancer
//! names that profile, in its answer and in later reads; a node of another balancer names
//! that balancer's. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "child-refs-test-key");
const ORIGIN: &str = "https://api.balancers.test";

/// Recorded run `n`: a balancer in a subnet, a node joining the subnet, a read of the node,
/// and the balancer's profile list.
fn in_subnet(t: &Twin, n: u64) {
    let (b, sub, profile, node) = (3_000 + n, 41_000 + n, 60_000 + n, 70_000 + n);
    let node_json = json!({"id": node, "label": "node", "balancer_id": b, "profile_id": profile});
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/balancers",
            Some(&json!({"label": format!("b{n}"), "profiles": [{"subnet_id": sub}]})),
            &json!({"id": b, "label": format!("b{n}")}),
        ),
        har::entry(
            ORIGIN,
            "POST",
            &format!("/v1/balancers/{b}/nodes"),
            Some(&json!({"label": "node", "subnet_id": sub})),
            &node_json,
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/balancers/{b}/nodes/{node}"),
            None,
            &node_json,
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/balancers/{b}/profiles"),
            None,
            &json!({"data": [{"id": profile, "balancer_id": b, "subnet_id": sub}],
                    "results": 1}),
        ),
    ];
    har::import(t, &[KEY], &format!("sub{n}.har"), entries);
}

/// Recorded run `n`: a balancer in no subnet and a node naming no profile.
fn bare(t: &Twin, n: u64) {
    let (b, node) = (4_000 + n, 80_000 + n);
    let node_json = json!({"id": node, "label": "node", "balancer_id": b, "profile_id": null});
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/balancers",
            Some(&json!({"label": format!("p{n}")})),
            &json!({"id": b, "label": format!("p{n}")}),
        ),
        har::entry(
            ORIGIN,
            "POST",
            &format!("/v1/balancers/{b}/nodes"),
            Some(&json!({"label": "node"})),
            &node_json,
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/balancers/{b}/nodes/{node}"),
            None,
            &node_json,
        ),
    ];
    har::import(t, &[KEY], &format!("bare{n}.har"), entries);
}

fn balancers_twin() -> Twin {
    har::synth_twin("balancers", ORIGIN, &[KEY], 3, |t, n| {
        in_subnet(t, n);
        bare(t, n);
    })
}

#[tokio::test]
async fn a_node_names_the_profile_its_own_balancers_create_made() {
    let t = balancers_twin();
    let server = t.serve_env(&[], &[KEY]);
    let session = Some("agent-1");
    let mut made = Vec::new();
    for (label, subnet) in [("first", 51_001), ("second", 51_002)] {
        let b = server
            .post(
                "/v1/balancers",
                session,
                json!({"label": label, "profiles": [{"subnet_id": subnet}]}),
            )
            .await;
        b.assert_status(200);
        let id = b.json()["id"].clone();
        let profiles = server
            .get(&format!("/v1/balancers/{id}/profiles"), session)
            .await;
        profiles.assert_status(200);
        let listed: Vec<Value> = profiles.json()["data"].as_array().cloned().unwrap();
        assert_eq!(listed.len(), 1, "{listed:?}");
        let profile = listed[0]["id"].clone();
        let key = profile.as_u64().expect("integer key");
        assert!(
            !(60_001..=60_003).contains(&key),
            "a fresh key, not a recorded profile's: {profile}"
        );
        made.push((id, subnet, profile));
    }
    assert_ne!(made[0].2, made[1].2);
    // Nodes created in reverse order: each names its own balancer's profile.
    for (id, subnet, profile) in made.iter().rev() {
        let node = server
            .post(
                &format!("/v1/balancers/{id}/nodes"),
                session,
                json!({"label": "node", "subnet_id": subnet}),
            )
            .await;
        node.assert_status(200);
        let answered = node.json();
        assert_eq!(&answered["profile_id"], profile, "{answered}");
        let read = server
            .get(
                &format!("/v1/balancers/{id}/nodes/{}", answered["id"]),
                session,
            )
            .await;
        read.assert_status(200);
        assert_eq!(&read.json()["profile_id"], profile, "{}", read.json());
    }
}
