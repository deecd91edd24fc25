//! A list whose every recording listed only the requesting user's records, leaving out what
//! the other user of the session had created (`ListShape::principal_records_only`), lists each
//! user's own records in a session where both created some. Black-box: the real binary on a
//! notes twin built from HARs written here, each a fresh-store session with two users.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::Twin;
use support::har::{self, by};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "principal-lists-test-key");
const ORIGIN: &str = "https://api.notes.test";
const ALICE: &str = "Bearer alice-token-1111";
const BOB: &str = "Bearer bob-token-2222";

/// Recorded session `n`: alice and bob each write a note, then each lists the notes and sees
/// only their own.
fn record(t: &Twin, n: u64) {
    let note = |who: &str| json!({"id": format!("note_{n:02}{who}Kq9Lm2Rt7x"), "text": format!("{who} {n}")});
    let create = |user: &str, who: &str| {
        by(
            user,
            201,
            har::entry(
                ORIGIN,
                "POST",
                "/v1/notes",
                Some(&json!({"text": format!("{who} {n}")})),
                &note(who),
            ),
        )
    };
    let list = |user: &str, who: &str| {
        by(
            user,
            200,
            har::entry(
                ORIGIN,
                "GET",
                "/v1/notes",
                None,
                &json!({"data": [note(who)]}),
            ),
        )
    };
    let entries = vec![
        create(ALICE, "a"),
        create(BOB, "b"),
        list(ALICE, "a"),
        list(BOB, "b"),
    ];
    har::import(t, &[KEY], &format!("s{n}.har"), entries);
}

#[tokio::test]
async fn each_user_lists_only_the_records_they_created() {
    let t = har::synth_twin("notes", ORIGIN, &[KEY], 3, record);
    let s = t.serve_env(&[], &[KEY]);
    let as_user = |user: &'static str| [("Authorization", user)];
    for (user, text) in [(ALICE, "one"), (BOB, "two"), (ALICE, "three")] {
        s.send(
            "POST",
            "/v1/notes",
            Some("x"),
            &as_user(user),
            Some(json!({"text": text})),
        )
        .await
        .assert_status(201);
    }
    let texts = |v: Value| -> Vec<String> {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["text"].as_str().unwrap().to_string())
            .collect()
    };
    let alice = s
        .send("GET", "/v1/notes", Some("x"), &as_user(ALICE), None)
        .await;
    alice.assert_status(200);
    assert_eq!(texts(alice.json()), ["one", "three"]);
    let bob = s
        .send("GET", "/v1/notes", Some("x"), &as_user(BOB), None)
        .await;
    bob.assert_status(200);
    assert_eq!(texts(bob.json()), ["two"]);
}
