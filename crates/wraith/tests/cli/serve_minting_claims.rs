//! A create several recorded runs made, each minting its own id, is served from the run that
//! recorded the request but without an exactness claim (`X-Wraith-Replay`): another client
//! sending the same request would get other ids, as the other runs show. The request did prove
//! which run answered it, so the record's read, a moment of that run, keeps its claim. A twin
//! of one recorded run claims its creates. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "minting-claims-test-key");
const ORIGIN: &str = "https://api.notes.test";

#[tokio::test]
async fn a_create_several_runs_minted_is_served_without_a_claim() {
    let t = Twin::init("notes", ORIGIN);
    for (n, id) in ["501", "502", "503"].iter().enumerate() {
        let text = format!("note {n}");
        let note = json!({"id": id, "text": text});
        har::import(
            &t,
            &[KEY],
            &format!("s{n}.har"),
            vec![
                har::entry(
                    ORIGIN,
                    "POST",
                    "/v1/notes",
                    Some(&json!({"text": text})),
                    &note,
                ),
                har::entry(ORIGIN, "GET", &format!("/v1/notes/{id}"), None, &note),
            ],
        );
    }
    har::synth(&t, &[KEY]);
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post("/v1/notes", Some("agent-1"), json!({"text": "note 1"}))
        .await;
    assert_eq!(created.status, 200);
    assert_eq!(
        created.json()["id"],
        json!("502"),
        "the run that recorded it"
    );
    assert_eq!(created.header("x-wraith-provenance"), Some("recorded"));
    assert_eq!(created.header("x-wraith-replay"), None);
    let read = server.get("/v1/notes/502", Some("agent-1")).await;
    assert_eq!(read.status, 200);
    assert_eq!(read.json(), json!({"id": "502", "text": "note 1"}));
    assert_eq!(read.header("x-wraith-replay"), Some("series-moment;v=1"));
    // A twin of one recorded run still claims its create.
    let one = Twin::init("notes", ORIGIN);
    har::import(
        &one,
        &[KEY],
        "s0.har",
        vec![
            har::entry(
                ORIGIN,
                "POST",
                "/v1/notes",
                Some(&json!({"text": "a"})),
                &json!({"id": "601", "text": "a"}),
            ),
            har::entry(
                ORIGIN,
                "POST",
                "/v1/notes",
                Some(&json!({"text": "b"})),
                &json!({"id": "602", "text": "b"}),
            ),
        ],
    );
    har::synth(&one, &[KEY]);
    let server = one.serve_env(&[], &[KEY]);
    let created = server
        .post("/v1/notes", Some("agent-1"), json!({"text": "a"}))
        .await;
    assert_eq!(created.json()["id"], json!("601"));
    assert_eq!(created.header("x-wraith-replay"), Some("series-moment;v=1"));
}
