//! A model synthesized before request keys moved to BLAKE3 holds SHA-256 fingerprints of its
//! recorded request bodies. `wraith serve` keys a request as the model it serves does, so such a
//! model still answers its recorded writes from the recordings, claimed `recorded`, without a
//! new synth. Black-box: the real binary on a HAR written here, its model's keys rewritten to
//! the older hash as an older build wrote them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};
use wraith_model::request_key::{BodyHash, json_fingerprint_hashed};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "sha256-request-keys-test-key");
const ORIGIN: &str = "https://api.notes.test";

/// Two recorded creates of different bodies, each answered its own note.
fn notes_twin() -> Twin {
    let t = Twin::init("notes", ORIGIN);
    let post = |text: &str, id: &str| {
        har::entry(
            ORIGIN,
            "POST",
            "/v1/notes",
            Some(&json!({ "text": text })),
            &json!({"id": id, "text": text}),
        )
    };
    har::import(
        &t,
        &[KEY],
        "notes.har",
        vec![post("alpha", "note_a1"), post("beta", "note_b2")],
    );
    har::synth(&t, &[KEY]);
    t
}

/// The model's exact-replay key bodies, in file order.
fn key_bodies(model: &Value) -> Vec<String> {
    model["routes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["exact"].as_array().unwrap().iter())
        .filter_map(|e| e["key"]["body"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn a_model_with_sha256_request_keys_still_replays_its_recorded_writes() {
    let t = notes_twin();
    let path = t.root.join("model/twin.wir.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let model: Value = serde_json::from_str(&text).unwrap();
    let keys = key_bodies(&model);
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(keys.iter().all(|k| k.starts_with("b3:")), "{keys:?}");

    // The model as a build before BLAKE3 keys wrote it: each body's SHA-256 fingerprint.
    let mut older = text.clone();
    for body_text in ["alpha", "beta"] {
        let body = json!({ "text": body_text });
        let new = json_fingerprint_hashed(&body, BodyHash::Blake3);
        let old = json_fingerprint_hashed(&body, BodyHash::Sha256);
        assert!(older.contains(&new), "{body_text}");
        older = older.replace(&new, &old);
    }
    std::fs::write(&path, &older).unwrap();
    let keys = key_bodies(&serde_json::from_str(&older).unwrap());
    assert!(
        keys.iter().all(|k| k.len() == 64 && !k.contains(':')),
        "{keys:?}"
    );

    let server = t.serve_env(&[], &[KEY]);
    for (text, id) in [("beta", "note_b2"), ("alpha", "note_a1")] {
        let r = server
            .post("/v1/notes", Some("s1"), json!({ "text": text }))
            .await;
        r.assert_status(200);
        assert_eq!(r.json()["id"], json!(id), "{text}");
        assert_eq!(r.header("x-wraith-provenance"), Some("recorded"), "{text}");
    }
    // A body no recording sent is no recording's, under either hash.
    let r = server
        .post("/v1/notes", Some("s2"), json!({"text": "gamma"}))
        .await;
    assert_ne!(r.header("x-wraith-provenance"), Some("recorded"));
    // The file was served as it is, not synthesized again.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), older);
}
