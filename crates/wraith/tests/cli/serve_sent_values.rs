//! `wraith serve` answering a value a create sent where the recorded answers did, even where
//! the creates that sent none were answered values of their own: most recorded balancers were
//! created with a `label` and answered it, the others named after their id. A create sending
//! its own label is answered that label, and one sending none a recorded default
//! (`synth/src/unify.rs`, echo). Black-box: the real binary on a HAR run written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.balancers.test";

#[tokio::test]
async fn a_label_most_creates_sent_is_echoed_though_the_others_got_one_each() {
    let t = Twin::init("balancers", ORIGIN);
    let mut entries = Vec::new();
    for (i, label) in [
        Some("web"),
        None,
        Some("db"),
        Some("web"),
        None,
        Some("cache"),
    ]
    .into_iter()
    .enumerate()
    {
        let id = 500 + i;
        let mut sent = json!({"region": "eu"});
        if let Some(label) = label {
            sent["label"] = json!(label);
        }
        let named = label.map_or_else(|| format!("balancer{id}"), str::to_string);
        let answer = json!({"id": id, "label": named, "region": "eu"});
        entries.push(har::entry(
            ORIGIN,
            "POST",
            "/v4/balancers",
            Some(&sent),
            &answer,
        ));
    }
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    let server = t.serve(&[]);
    let created = server
        .post(
            "/v4/balancers",
            Some("s1"),
            json!({"label": "mine", "region": "eu"}),
        )
        .await;
    created.assert_status(200);
    assert_eq!(created.json()["label"], "mine", "{}", created.json());
    let bare = server
        .post("/v4/balancers", Some("s1"), json!({"region": "eu"}))
        .await;
    bare.assert_status(200);
    let label = bare.json()["label"].as_str().unwrap().to_string();
    assert!(label.starts_with("balancer"), "{}", bare.json());
}
