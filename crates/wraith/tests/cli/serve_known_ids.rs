//! `wraith serve --unknown-entity not_found` judging an id known from every recorded non-4xx
//! outcome of its entity type: a parameter pair an update and a delete answered is known to
//! the read of the same path, and a parent's id (or pair of ids) answered only under its
//! children is known to the parent's own routes. Ids no recording answered still fail closed.
//! Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.balancers.test";

/// `GET path` on `s` in a session of its own: the status and the provenance.
async fn answer(s: &support::Server, path: &str) -> (u16, Option<String>) {
    let r = s.get(path, Some("gate")).await;
    (r.status, r.provenance().map(str::to_string))
}

#[tokio::test]
async fn a_pair_answered_by_an_update_and_a_delete_is_known_to_the_read_of_its_path() {
    let t = Twin::init("balancers", ORIGIN);
    let config = |id: u64, port: u64| json!({"id": id, "port": port});
    har::import(
        &t,
        &[],
        "configs.har",
        vec![
            har::entry(
                ORIGIN,
                "GET",
                "/v4/balancers/7/configs/70",
                None,
                &config(70, 80),
            ),
            har::entry(
                ORIGIN,
                "PUT",
                "/v4/balancers/8/configs/81",
                Some(&json!({"port": 443})),
                &config(81, 443),
            ),
            har::entry(
                ORIGIN,
                "DELETE",
                "/v4/balancers/8/configs/81",
                None,
                &json!({}),
            ),
        ],
    );
    har::synth(&t, &[]);
    let s = t.serve(&["--unknown-entity", "not_found"]);
    let (status, provenance) = answer(&s, "/v4/balancers/8/configs/81").await;
    assert_eq!(
        status, 200,
        "a pair answered 200 is known to every method of its path"
    );
    assert_ne!(provenance.as_deref(), Some("miss"));
    // The pair is the identity: the config's id under another balancer was never answered.
    let (status, provenance) = answer(&s, "/v4/balancers/7/configs/81").await;
    assert_eq!(status, 501);
    assert_eq!(provenance.as_deref(), Some("miss"));
}

#[tokio::test]
async fn a_parent_id_answered_only_under_its_children_is_known_to_the_parents_routes() {
    let t = Twin::init("balancers", ORIGIN);
    let page = |items: serde_json::Value| json!({"data": items, "page": 1, "pages": 1});
    har::import(
        &t,
        &[],
        "balancers.har",
        vec![
            har::entry(
                ORIGIN,
                "GET",
                "/v4/balancers/5",
                None,
                &json!({"id": 5, "label": "a"}),
            ),
            har::entry(
                ORIGIN,
                "GET",
                "/v4/balancers/5/configs",
                None,
                &page(json!([{"id": 50, "port": 80}])),
            ),
            // Balancer 6 is only ever answered under its config's nodes.
            har::entry(
                ORIGIN,
                "GET",
                "/v4/balancers/6/configs/60/nodes",
                None,
                &page(json!([{"id": 600, "address": "192.0.2.1:80"}])),
            ),
            har::entry(
                ORIGIN,
                "DELETE",
                "/v4/balancers/6/configs/60/nodes/600",
                None,
                &json!({}),
            ),
        ],
    );
    har::synth(&t, &[]);
    let s = t.serve(&["--unknown-entity", "not_found"]);
    for path in ["/v4/balancers/6", "/v4/balancers/6/configs"] {
        let (status, provenance) = answer(&s, path).await;
        assert_eq!(
            status, 200,
            "{path}: a parent answered under its children is known"
        );
        assert_ne!(provenance.as_deref(), Some("miss"), "{path}");
    }
    // A balancer no recording answered still fails closed.
    for path in ["/v4/balancers/99", "/v4/balancers/99/configs"] {
        let (status, provenance) = answer(&s, path).await;
        assert_eq!(status, 501, "{path}");
        assert_eq!(provenance.as_deref(), Some("miss"), "{path}");
    }
}

#[tokio::test]
async fn a_parent_pair_answered_only_under_its_children_is_known_to_the_parents_read() {
    let t = Twin::init("balancers", ORIGIN);
    let page = |items: serde_json::Value| json!({"data": items, "page": 1, "pages": 1});
    har::import(
        &t,
        &[],
        "configs.har",
        vec![
            har::entry(
                ORIGIN,
                "GET",
                "/v4/balancers/7/configs/70",
                None,
                &json!({"id": 70, "port": 80}),
            ),
            // Config 60 of balancer 6 is only ever answered under its nodes.
            har::entry(
                ORIGIN,
                "GET",
                "/v4/balancers/6/configs/60/nodes",
                None,
                &page(json!([{"id": 600, "address": "192.0.2.1:80"}])),
            ),
            har::entry(
                ORIGIN,
                "POST",
                "/v4/balancers/6/configs/60/nodes",
                Some(&json!({"address": "192.0.2.2:80"})),
                &json!({"id": 601, "address": "192.0.2.2:80"}),
            ),
        ],
    );
    har::synth(&t, &[]);
    let s = t.serve(&["--unknown-entity", "not_found"]);
    let (status, provenance) = answer(&s, "/v4/balancers/6/configs/60").await;
    assert_eq!(
        status, 200,
        "a pair answered under its children is known to its read"
    );
    assert_ne!(provenance.as_deref(), Some("miss"));
    // The pair is the identity: config 60 under another balancer was never answered.
    let (status, provenance) = answer(&s, "/v4/balancers/7/configs/60").await;
    assert_eq!(status, 501);
    assert_eq!(provenance.as_deref(), Some("miss"));
}
