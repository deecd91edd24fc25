//! `wraith serve` answering a read of a record the session deleted, on a route that recorded
//! no 4xx, with the API's own not-found body: the one other routes recorded, so a client that
//! reads the provider's error envelope finds it. Black-box: the real binary on a HAR run
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.zones.test";

fn zones_twin() -> Twin {
    let t = Twin::init("zones", ORIGIN);
    let zone = json!({"id": 301, "domain": "example.test", "status": "active"});
    let not_found = json!({"errors": [{"reason": "Not found"}]});
    let mut missing_record = har::entry(ORIGIN, "GET", "/v4/records/999", None, &not_found);
    missing_record["response"]["status"] = json!(404);
    let mut missing_image = har::entry(ORIGIN, "GET", "/v4/images/bad", None, &not_found);
    missing_image["response"]["status"] = json!(404);
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v4/zones",
            Some(&json!({"domain": "example.test"})),
            &zone,
        ),
        har::entry(ORIGIN, "GET", "/v4/zones/301", None, &zone),
        har::entry(ORIGIN, "DELETE", "/v4/zones/301", None, &json!({})),
        missing_record,
        missing_image,
    ];
    har::import(&t, &[], "zones.har", entries);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_deleted_zone_reads_404_in_the_apis_own_error_shape() {
    let t = zones_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let created = server
        .post("/v4/zones", s, json!({"domain": "mine.test"}))
        .await
        .json();
    let path = format!("/v4/zones/{}", created["id"]);
    server.get(&path, s).await.assert_status(200);
    server
        .send("DELETE", &path, s, &[], None)
        .await
        .assert_status(200);
    let gone = server.get(&path, s).await;
    gone.assert_status(404);
    assert_eq!(gone.header("x-wraith-provenance"), Some("miss"));
    assert_eq!(gone.json(), json!({"errors": [{"reason": "Not found"}]}));
}
