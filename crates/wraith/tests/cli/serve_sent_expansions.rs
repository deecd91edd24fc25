//! What an update's (and a create's) recorded answers make of the fields it sent, end to end: recorded profile
//! updates send their slots empty and their links as short items, and every recorded answer
//! holds all the slots and each link made a record (an id, a state flag, the network owning
//! the subnet sent). The served twin answers a session's own update the same way, naming the
//! session's network and minting the links' ids, and a later read shows what it stored.
//! Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "sent-expansions-test-key");
const ORIGIN: &str = "https://api.profiles.test";

fn recorded(t: &Twin, n: u64) {
    let (net, sub, p) = (40_000 + n, 41_000 + n, 50_000 + n);
    let slots = json!({"a": null, "b": null});
    let answered = json!({"id": p, "label": format!("p{n}"), "slots": slots,
        "links": [
            {"id": 70_000 + 2 * n, "kind": "public", "active": false,
             "network_id": null, "subnet_id": null},
            {"id": 70_001 + 2 * n, "kind": "net", "active": false,
             "network_id": net, "subnet_id": sub}]});
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
            "/v1/profiles",
            Some(&json!({"label": format!("p{n}")})),
            &json!({"id": p, "label": format!("p{n}"), "slots": slots, "links": []}),
        ),
        har::entry(
            ORIGIN,
            "PUT",
            &format!("/v1/profiles/{p}"),
            Some(&json!({"label": format!("p{n}"), "slots": {},
                         "links": [{"kind": "public"}, {"kind": "net", "subnet_id": sub}]})),
            &answered,
        ),
        har::entry(ORIGIN, "GET", &format!("/v1/profiles/{p}"), None, &answered),
    ];
    har::import(t, &[KEY], &format!("prof{n}.har"), entries);
}

#[tokio::test]
async fn an_update_answers_the_slots_it_sent_empty_and_each_link_made_a_record_of_the_sessions_network()
 {
    let t = har::synth_twin("profiles", ORIGIN, &[KEY], 3, recorded);
    let server = t.serve_env(&[], &[KEY]);
    let net = server
        .post(
            "/v1/networks",
            Some("agent-1"),
            json!({"label": "mine", "subnets": [{"label": "inner"}]}),
        )
        .await;
    net.assert_status(200);
    let (net_id, sub_id) = (
        net.json()["id"].clone(),
        net.json()["subnets"][0]["id"].clone(),
    );
    let made = server
        .post("/v1/profiles", Some("agent-1"), json!({"label": "mine"}))
        .await;
    made.assert_status(200);
    let id = made.json()["id"].clone();
    let put = server
        .send(
            "PUT",
            &format!("/v1/profiles/{id}"),
            Some("agent-1"),
            &[],
            Some(json!({"label": "mine", "slots": {},
                        "links": [{"kind": "public", "active": true},
                                  {"kind": "net", "subnet_id": sub_id, "tag": "x"}]})),
        )
        .await;
    put.assert_status(200);
    let body = put.json();
    assert_eq!(body["slots"], json!({"a": null, "b": null}), "{body}");
    let links = body["links"].as_array().cloned().unwrap_or_default();
    assert_eq!(links.len(), 2, "{body}");
    assert_eq!(links[0]["kind"], json!("public"), "{body}");
    assert_eq!(links[0]["network_id"], Value::Null, "{body}");
    assert_eq!(links[1]["kind"], json!("net"), "{body}");
    assert_eq!(links[1]["subnet_id"], sub_id, "{body}");
    assert_eq!(links[1]["network_id"], net_id, "{body}");
    assert_eq!(links[1]["active"], json!(false), "{body}");
    // What the session's items sent comes back: a flag no recorded item sent, and a field no
    // recorded item had.
    assert_eq!(links[0]["active"], json!(true), "{body}");
    assert_eq!(links[1]["tag"], json!("x"), "{body}");
    for l in &links {
        let key = l["id"].as_u64().expect("an integer id");
        assert!(
            !(70_002..=70_007).contains(&key),
            "a fresh id, not a recorded link's: {l}"
        );
    }
    assert_ne!(links[0]["id"], links[1]["id"]);
    let read = server
        .get(&format!("/v1/profiles/{id}"), Some("agent-1"))
        .await;
    read.assert_status(200);
    assert_eq!(read.json()["links"], body["links"]);
    assert_eq!(read.json()["slots"], body["slots"]);
}

/// Run `n` creates a network, sending two subnets (each answered made a record) except in
/// every third run, which sends none and is answered `[]`, then reads it.
fn with_subnets(n: u64) -> bool {
    !n.is_multiple_of(3)
}

fn recorded_networks(t: &Twin, n: u64) {
    let net = 80_000 + n;
    let (sent, answered) = if with_subnets(n) {
        (
            json!({"label": format!("net-{n}"),
                   "subnets": [{"label": format!("a{n}"), "ipv4": "10.0.0.0/24"},
                               {"label": format!("b{n}")}]}),
            json!({"id": net, "label": format!("net-{n}"),
                   "subnets": [{"id": 81_000 + 2 * n, "label": format!("a{n}"),
                                "ipv4": "10.0.0.0/24", "linodes": []},
                               {"id": 81_001 + 2 * n, "label": format!("b{n}"),
                                "ipv4": null, "linodes": []}]}),
        )
    } else {
        (
            json!({"label": format!("net-{n}")}),
            json!({"id": net, "label": format!("net-{n}"), "subnets": []}),
        )
    };
    let entries = vec![
        har::entry(ORIGIN, "POST", "/v1/networks", Some(&sent), &answered),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/networks/{net}"),
            None,
            &answered,
        ),
    ];
    har::import(t, &[KEY], &format!("net{n}.har"), entries);
}

#[tokio::test]
async fn a_create_answers_each_item_it_sent_made_a_record_and_what_creates_without_them_got() {
    // Most recorded creates answer two subnets: a template alone renders two for any create.
    let t = har::synth_twin("networks", ORIGIN, &[KEY], 6, recorded_networks);
    let server = t.serve_env(&[], &[KEY]);
    let three = server
        .post(
            "/v1/networks",
            Some("agent-1"),
            json!({"label": "mine", "subnets": [
                {"label": "x", "ipv4": "10.9.0.0/24"}, {"label": "y"}, {"label": "z"}]}),
        )
        .await;
    three.assert_status(200);
    let body = three.json();
    let subnets = body["subnets"].as_array().cloned().unwrap_or_default();
    let labels: Vec<&Value> = subnets.iter().map(|s| &s["label"]).collect();
    assert_eq!(labels, [&json!("x"), &json!("y"), &json!("z")], "{body}");
    assert_eq!(subnets[0]["ipv4"], json!("10.9.0.0/24"), "{body}");
    assert_eq!(subnets[2]["linodes"], json!([]), "{body}");
    let mut ids: Vec<u64> = subnets
        .iter()
        .map(|s| s["id"].as_u64().expect("an integer id"))
        .collect();
    assert!(
        ids.iter().all(|i| (1..=6)
            .filter(|n| with_subnets(*n))
            .all(|n| *i != 81_000 + 2 * n && *i != 81_001 + 2 * n)),
        "fresh ids, not recorded subnets': {body}"
    );
    ids.dedup();
    assert_eq!(ids.len(), 3, "{body}");
    let read = server
        .get(&format!("/v1/networks/{}", body["id"]), Some("agent-1"))
        .await;
    read.assert_status(200);
    assert_eq!(read.json()["subnets"], body["subnets"]);

    let none = server
        .post("/v1/networks", Some("agent-1"), json!({"label": "bare"}))
        .await;
    none.assert_status(200);
    assert_eq!(none.json()["subnets"], json!([]), "{}", none.json());
}
