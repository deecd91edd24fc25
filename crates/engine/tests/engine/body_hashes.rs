//! Request keys of either body hash: a model synthesized before BLAKE3 keys holds SHA-256
//! fingerprints, and the engine keys a request as the model it serves does, so such a model
//! still replays its recordings exactly; a model composed of old and new twins replays both.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_engine::{Engine, Provenance};
use wraith_model::request_key::{BodyHash, json_fingerprint_hashed};
use wraith_model::*;

/// `POST /v1/notes` recorded twice: `{"text": "a"}` answered note `n_a`, `{"text": "b"}` note
/// `n_b`; each entry keyed with the hash given for it. The template answers anything else.
fn notes(hash_a: BodyHash, hash_b: BodyHash) -> Engine {
    let mut route = R::new("POST", "/v1/notes")
        .variant(201, Guard::Always, c(json!({"id": "template"})))
        .exact(
            "/v1/notes",
            "",
            Some(&json!({"text": "a"})),
            vec![moment("s1/0", 201, json!({"id": "n_a"}))],
        )
        .exact(
            "/v1/notes",
            "",
            Some(&json!({"text": "b"})),
            vec![moment("s2/0", 201, json!({"id": "n_b"}))],
        )
        .build();
    for e in &mut route.exact {
        let (text, hash) = if e.moments[0].source == "s1/0" {
            ("a", hash_a)
        } else {
            ("b", hash_b)
        };
        e.key.body = Some(json_fingerprint_hashed(&json!({ "text": text }), hash));
    }
    route.exact.sort_by(|a, b| a.key.cmp(&b.key));
    engine(model(vec![route], vec![]), det_opts())
}

fn post(e: &Engine, text: &str) -> (Value, Provenance) {
    let r = e.handle(
        Some("s"),
        &req("POST", "/v1/notes", Some(json!({ "text": text }))),
    );
    assert_eq!(r.status, 201);
    (body(&r), r.provenance)
}

#[test]
fn this_builds_keys_are_blake3_and_a_sha256_fingerprint_reads_as_the_older_hash() {
    let key = json_fingerprint_hashed(&json!({"text": "a"}), BodyHash::default());
    assert!(key.starts_with("b3:"), "{key}");
    assert_eq!(BodyHash::of_fingerprint(&key), BodyHash::Blake3);
    let old = json_fingerprint_hashed(&json!({"text": "a"}), BodyHash::Sha256);
    assert_eq!(old.len(), 64);
    assert_eq!(BodyHash::of_fingerprint(&old), BodyHash::Sha256);
}

#[test]
fn a_model_keyed_with_sha256_still_replays_its_recorded_bodies_exactly() {
    let e = notes(BodyHash::Sha256, BodyHash::Sha256);
    assert_eq!(post(&e, "a"), (json!({"id": "n_a"}), Provenance::Recorded));
    assert_eq!(post(&e, "b"), (json!({"id": "n_b"}), Provenance::Recorded));
    // A body no recording sent is the template's, under either hash.
    assert_ne!(post(&e, "c").1, Provenance::Recorded);
}

#[test]
fn a_model_composed_of_both_hashes_replays_the_entries_of_each() {
    let e = notes(BodyHash::Sha256, BodyHash::Blake3);
    assert_eq!(post(&e, "a"), (json!({"id": "n_a"}), Provenance::Recorded));
    assert_eq!(post(&e, "b"), (json!({"id": "n_b"}), Provenance::Recorded));
    assert_ne!(post(&e, "c").1, Provenance::Recorded);
}

#[test]
fn a_model_names_the_hashes_of_its_keys_this_builds_first() {
    let keyed = |hashes: &[BodyHash]| {
        let mut route = R::new("POST", "/v1/notes").build();
        for (i, &h) in hashes.iter().enumerate() {
            route.exact.push(ExactEntry {
                key: request_key::request_key("/v1/notes", "", None, b""),
                moments: vec![moment(&format!("s/{i}"), 201, json!({}))],
                session_bound: Vec::new(),
            });
            route.exact[i].key.body = Some(json_fingerprint_hashed(&json!(i), h));
        }
        BodyHash::in_model(&model(vec![route], vec![]))
    };
    assert_eq!(keyed(&[]), vec![BodyHash::Blake3]);
    assert_eq!(keyed(&[BodyHash::Sha256]), vec![BodyHash::Sha256]);
    assert_eq!(keyed(&[BodyHash::Blake3]), vec![BodyHash::Blake3]);
    assert_eq!(
        keyed(&[BodyHash::Sha256, BodyHash::Blake3]),
        vec![BodyHash::Blake3, BodyHash::Sha256]
    );
}
