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

/// `path` read in session `gate` passes the gate: 200, and not a fail-closed miss.
async fn passes(s: &support::Server, path: &str, why: &str) {
    let r = s.get(path, Some("gate")).await;
    assert_eq!(r.status, 200, "{path}: {why}");
    assert_ne!(r.provenance(), Some("miss"), "{path}");
}

/// `path` read in session `gate` fails closed: the structured 501 miss.
async fn fails_closed(s: &support::Server, path: &str) {
    let r = s.get(path, Some("gate")).await;
    assert_eq!(r.status, 501, "{path}");
    assert_eq!(r.provenance(), Some("miss"), "{path}");
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
    passes(
        &s,
        "/v4/balancers/8/configs/81",
        "a pair answered 200 is known to every method of its path",
    )
    .await;
    // The pair is the identity: the config's id under another balancer was never answered.
    fails_closed(&s, "/v4/balancers/7/configs/81").await;
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
        passes(&s, path, "a parent answered under its children is known").await;
    }
    // A balancer no recording answered still fails closed.
    for path in ["/v4/balancers/99", "/v4/balancers/99/configs"] {
        fails_closed(&s, path).await;
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
    passes(
        &s,
        "/v4/balancers/6/configs/60",
        "a pair answered under its children is known to its read",
    )
    .await;
    // The pair is the identity: config 60 under another balancer was never answered.
    fails_closed(&s, "/v4/balancers/7/configs/60").await;
}
