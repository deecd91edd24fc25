//! A record's minted values stay the session's when another run's recording answers for it:
//! three recorded runs create a client with the same request (each answered a minted
//! `install_code`), one of them also renames it. A session whose create was answered from a
//! run that never renamed gets the rename from the run that did, under the session's key; its
//! install code is the one the session's create gave, not the other run's. Black-box: the
//! real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "minted-fields-test-key");
const ORIGIN: &str = "https://api.agents.test";
const CODES: [&str; 3] = [
    "AACFFDDF-C094-4A3C-8288B2883AEECFC1",
    "67B4F710-089D-4F40-964E6D1002E6CE4F",
    "BD08C3CB-F9E7-4C0B-B1C88256375692C0",
];

fn client(id: u64, label: &str, code: &str) -> Value {
    json!({"id": id, "label": label, "install_code": code})
}

/// The recorded create every run made (`{"label": "x"}`), answered as client `id` minted with
/// install code `code`.
fn create_entry(id: u64, code: &str) -> Value {
    har::entry(
        ORIGIN,
        "POST",
        "/v1/clients",
        Some(&json!({"label": "x"})),
        &client(id, "x", code),
    )
}

fn agents_twin() -> Twin {
    let t = Twin::init("agents", ORIGIN);
    for (n, code) in CODES.iter().enumerate().take(2) {
        let id = 342_800 + n as u64;
        let entries = vec![
            create_entry(id, code),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/v1/clients/{id}"),
                None,
                &client(id, "x", code),
            ),
        ];
        har::import(&t, &[KEY], &format!("a{n}.har"), entries);
    }
    let entries = vec![
        create_entry(342_900, CODES[2]),
        har::entry(
            ORIGIN,
            "PUT",
            "/v1/clients/342900",
            Some(&json!({"label": "y"})),
            &client(342_900, "y", CODES[2]),
        ),
    ];
    har::import(&t, &[KEY], "b0.har", entries);
    har::synth(&t, &[KEY]);
    t
}

async fn put(server: &support::Server, path: &str, session: &str, body: Value) -> support::Resp {
    server
        .send("PUT", path, Some(session), &[], Some(body))
        .await
}

#[tokio::test]
async fn an_update_answered_from_another_run_keeps_the_install_code_the_create_gave() {
    let t = agents_twin();
    let server = t.serve_env(&[], &[KEY]);
    let made = server
        .post("/v1/clients", Some("agent-1"), json!({"label": "x"}))
        .await;
    made.assert_status(200);
    let made = made.json();
    assert_ne!(
        made["id"],
        json!(342_900),
        "answered from a run without the rename: {made}"
    );
    let renamed = put(
        &server,
        &format!("/v1/clients/{}", made["id"]),
        "agent-1",
        json!({"label": "y"}),
    )
    .await;
    renamed.assert_status(200);
    let renamed = renamed.json();
    assert_eq!(renamed["label"], json!("y"), "{renamed}");
    assert_eq!(renamed["id"], made["id"], "{renamed}");
    assert_eq!(renamed["install_code"], made["install_code"], "{renamed}");
}
