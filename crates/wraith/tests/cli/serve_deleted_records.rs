//! A record its own recording deleted is not in the twin's recorded world: a fresh session's
//! read of it answers the recorded 404, so a collection read with a query no recording made
//! does not list it either (the recorded pages that listed it, before the delete, still replay
//! as recorded). Black-box: the real binary on a HAR run written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.items.test";

fn items_twin() -> Twin {
    let t = Twin::init("items", ORIGIN);
    let kept = json!({"id": "it_kept", "name": "kept"});
    let gone = json!({"id": "it_gone", "name": "gone"});
    let mut missing = har::entry(
        ORIGIN,
        "GET",
        "/v1/items/it_gone",
        None,
        &json!({"error": "not found"}),
    );
    missing["response"]["status"] = json!(404);
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/items",
            Some(&json!({"name": "kept"})),
            &kept,
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/v1/items",
            Some(&json!({"name": "gone"})),
            &gone,
        ),
        har::entry(
            ORIGIN,
            "GET",
            "/v1/items",
            None,
            &json!({"data": [kept.clone(), gone.clone()], "total": 2}),
        ),
        har::entry(
            ORIGIN,
            "DELETE",
            "/v1/items/it_gone",
            None,
            &json!({"id": "it_gone", "deleted": true}),
        ),
        missing,
        har::entry(
            ORIGIN,
            "GET",
            "/v1/items?limit=1",
            None,
            &json!({"data": [kept.clone()], "total": 1}),
        ),
    ];
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

fn ids(v: &Value) -> Vec<String> {
    v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_list_no_recording_made_leaves_out_records_deleted_in_their_recording() {
    let t = items_twin();
    let server = t.serve(&[]);
    let s = Some("fresh");
    server.get("/v1/items/it_gone", s).await.assert_status(404);
    let page = server.get("/v1/items?limit=10", s).await;
    page.assert_status(200);
    let body = page.json();
    assert_eq!(ids(&body), vec!["it_kept"], "{body}");
}
