//! A list that never listed an archived record unless asked for `?status=archived`
//! (`ListShape::hidden_values`) leaves the session's archived records out of its plain
//! answer and lists them when the filter is sent. Black-box: the real binary on a notes twin
//! built from HARs written here, each a fresh-store session.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "hidden-values-test-key");
const ORIGIN: &str = "https://api.notes.test";

fn note(id: &str, text: &str, status: &str) -> Value {
    json!({"id": id, "text": text, "status": status})
}

/// Recorded session `n`: two notes, the first read, archived and read again; the plain list
/// shows the second, the archived list the first.
fn record(t: &Twin, n: u64) {
    let (a, b) = (
        format!("note_{n:02}aKq9Lm2Rt7x"),
        format!("note_{n:02}bKq9Lm2Rt7x"),
    );
    let (ta, tb) = (format!("first {n}"), format!("second {n}"));
    let create = |id: &str, text: &str| {
        let mut e = har::entry(
            ORIGIN,
            "POST",
            "/v1/notes",
            Some(&json!({"text": text})),
            &note(id, text, "active"),
        );
        e["response"]["status"] = json!(201);
        e
    };
    let read = |id: &str, text: &str, status: &str| {
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/notes/{id}"),
            None,
            &note(id, text, status),
        )
    };
    let entries = vec![
        create(&a, &ta),
        create(&b, &tb),
        read(&a, &ta, "active"),
        har::entry(
            ORIGIN,
            "POST",
            &format!("/v1/notes/{a}/archive"),
            None,
            &note(&a, &ta, "archived"),
        ),
        read(&a, &ta, "archived"),
        har::entry(
            ORIGIN,
            "GET",
            "/v1/notes",
            None,
            &json!({"data": [note(&b, &tb, "active")]}),
        ),
        har::entry(
            ORIGIN,
            "GET",
            "/v1/notes?status=archived",
            None,
            &json!({"data": [note(&a, &ta, "archived")]}),
        ),
    ];
    har::import(t, &[KEY], &format!("s{n}.har"), entries);
}

fn texts(v: &Value) -> Vec<&str> {
    v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["text"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn an_archived_record_leaves_the_plain_list_and_stays_on_the_filtered_one() {
    let t = har::synth_twin("notes", ORIGIN, &[KEY], 3, record);
    let s = t.serve_env(&[], &[KEY]);
    let mut ids = Vec::new();
    for text in ["one", "two", "three"] {
        let made = s.post("/v1/notes", Some("x"), json!({"text": text})).await;
        made.assert_status(201);
        ids.push(made.json()["id"].as_str().unwrap().to_string());
    }
    let archived = s
        .post(
            &format!("/v1/notes/{}/archive", ids[1]),
            Some("x"),
            json!(null),
        )
        .await;
    archived.assert_status(200);
    assert_eq!(archived.json()["status"], "archived");
    let plain = s.get("/v1/notes", Some("x")).await;
    plain.assert_status(200);
    assert_eq!(texts(&plain.json()), ["one", "three"]);
    let filtered = s.get("/v1/notes?status=archived", Some("x")).await.json();
    assert_eq!(texts(&filtered), ["two"]);
}
