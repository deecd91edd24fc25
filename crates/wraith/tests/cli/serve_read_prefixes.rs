//! A field the create answers whole and later views show as a prefix, end to end: recorded
//! sessions create a pairing (its `code` answered whole), read it and list the pairings, the
//! read and the list showing only the code's first 16 characters. Synth learns the prefix from
//! those recordings, and the served twin answers its own create's code whole and shows the
//! first 16 characters of it on the read and in the list. Black-box: the real binary on HARs
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "read-prefixes-test-key");
const ORIGIN: &str = "https://api.pairings.test";

fn pairing(id: u64, label: &str, code: &str) -> Value {
    json!({"id": id, "label": label, "code": code})
}

/// A 48-character hex code, different for every `n`.
fn code(n: u64) -> String {
    (0..6)
        .map(|i| format!("{:08x}", (n + 1) * 2_654_435_761 + i * 40_503))
        .collect()
}

/// One recorded session: create pairing `id`, read it, list the pairings.
fn session(t: &Twin, n: u64) {
    let id = 9_000 + n;
    let whole = code(n);
    let shown = &whole[..16];
    let label = format!("desk {n}");
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/pairings",
            Some(&json!({ "label": label })),
            &pairing(id, &label, &whole),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/pairings/{id}"),
            None,
            &pairing(id, &label, shown),
        ),
        har::entry(
            ORIGIN,
            "GET",
            "/v1/pairings",
            None,
            &json!({"data": [pairing(id, &label, shown)]}),
        ),
    ];
    har::import(t, &[KEY], &format!("s{n}.har"), entries);
}

#[tokio::test]
async fn a_created_code_shows_whole_once_then_as_its_first_16_characters() {
    let t = har::synth_twin("pairings", ORIGIN, &[KEY], 3, session);
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post(
            "/v1/pairings",
            Some("agent"),
            json!({"label": "a new desk"}),
        )
        .await;
    created.assert_status(200);
    let created = created.json();
    let whole = created["code"].as_str().expect("a code").to_string();
    assert!(
        whole.len() > 16,
        "the create answers the code whole: {created}"
    );
    assert_eq!(
        created["label"],
        json!("a new desk"),
        "rendered, not replayed: {created}"
    );
    let id = har::key_text(&created["id"]);

    let read = server
        .get(&format!("/v1/pairings/{id}"), Some("agent"))
        .await;
    read.assert_status(200);
    assert_eq!(read.json()["code"], json!(&whole[..16]));

    let listed = server.get("/v1/pairings", Some("agent")).await;
    listed.assert_status(200);
    let listed = listed.json();
    let item = listed["data"]
        .as_array()
        .and_then(|items| items.iter().find(|i| har::key_text(&i["id"]) == id))
        .unwrap_or_else(|| panic!("the list shows the created pairing: {listed}"));
    assert_eq!(item["code"], json!(&whole[..16]));
}
