//! A collection recorded only as created, deleted and then read back as not found: each recorded
//! create sends the `id` of another record (the instance a firewall device attaches) and is
//! answered with a key of its own and the sent `id` one level down. The served twin mints the
//! created record's key instead of taking the sent `id` for it, and its read of a record the
//! session holds answers that record, though no recording shows a read of a live one.
//! Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "refusal-only-reads-test-key");
const ORIGIN: &str = "https://api.walls.test";

fn recorded(t: &Twin, n: u64) {
    let (wall, inst, dev) = (100 + n, 9_000 + n, 50_000 + n);
    let devices = format!("/v1/walls/{wall}/devices");
    let made = json!({"id": dev, "created": "2026-06-01T12:00:00",
        "entity": {"id": inst, "type": "instance", "label": format!("inst-{n}")}});
    let mut gone = har::entry(
        ORIGIN,
        "GET",
        &format!("{devices}/{dev}"),
        None,
        &json!({"errors": [{"reason": "Not found"}]}),
    );
    gone["response"]["status"] = json!(404);
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            &devices,
            Some(&json!({"id": inst, "type": "instance"})),
            &made,
        ),
        har::entry(
            ORIGIN,
            "DELETE",
            &format!("{devices}/{dev}"),
            None,
            &json!({}),
        ),
        gone,
    ];
    har::import(t, &[KEY], &format!("walls{n}.har"), entries);
}

/// The twin of three recorded runs, served, and one device attached to instance 555 in
/// session `agent-1`: the server and the create's answer.
async fn attached() -> (Twin, support::Server, Value) {
    let t = har::synth_twin("walls", ORIGIN, &[KEY], 3, recorded);
    let server = t.serve_env(&[], &[KEY]);
    let made = server
        .post(
            "/v1/walls/101/devices",
            Some("agent-1"),
            json!({"id": 555, "type": "instance"}),
        )
        .await;
    made.assert_status(200);
    let made = made.json();
    (t, server, made)
}

#[tokio::test]
async fn a_create_sending_another_records_id_mints_its_own_key() {
    let (_t, _server, made) = attached().await;
    assert_eq!(made["entity"]["id"], json!(555), "{made}");
    assert_ne!(
        made["id"],
        json!(555),
        "the sent id named the instance, not the device: {made}"
    );
}

#[tokio::test]
async fn a_read_recorded_only_as_not_found_answers_the_record_the_session_created() {
    let (_t, server, made) = attached().await;
    let at = format!("/v1/walls/101/devices/{}", har::key_text(&made["id"]));
    let read = server.get(&at, Some("agent-1")).await;
    read.assert_status(200);
    assert_eq!(read.json(), made);
    assert_eq!(read.header("x-wraith-provenance"), Some("template"));
    // Another session holds no such record; a deleted one is gone again.
    server.get(&at, Some("agent-2")).await.assert_status(404);
    server
        .send("DELETE", &at, Some("agent-1"), &[], None)
        .await
        .assert_status(200);
    server.get(&at, Some("agent-1")).await.assert_status(404);
}
