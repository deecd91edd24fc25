//! A route copying a record, end to end: a recorded run creates a volume, clones it and reads
//! the copy back. A session's clone of its own volume answers a new volume under a key of its
//! own, with the label it sent and its volume's size and region, which the session's reads and
//! list then show and its delete removes, leaving the original. Black-box: the real binary on
//! a HAR written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "record-clones-test-key");
const ORIGIN: &str = "https://cloud.test";

fn volume(id: u64, label: &str, size: u64, second: u64) -> Value {
    json!({"id": id, "label": label, "size": size, "region": "us-east", "status": "active",
        "device": format!("/dev/disk/by-id/volume{id}"),
        "created": format!("2026-06-01T12:00:{second:02}")})
}

fn twin() -> Twin {
    let t = Twin::init("cloud", ORIGIN);
    let source = volume(501501, "data", 20, 1);
    let copy = volume(502502, "data-copy", 20, 3);
    let mut entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v4/volumes",
            Some(&json!({"label": "data", "size": 20, "region": "us-east"})),
            &source,
        ),
        har::entry(ORIGIN, "GET", "/v4/volumes/501501", None, &source),
        har::entry(
            ORIGIN,
            "POST",
            "/v4/volumes/501501/clone",
            Some(&json!({"label": "data-copy"})),
            &copy,
        ),
        har::entry(ORIGIN, "GET", "/v4/volumes/502502", None, &copy),
        har::entry(
            ORIGIN,
            "GET",
            "/v4/volumes",
            None,
            &json!({"data": [source, copy]}),
        ),
        har::entry(ORIGIN, "DELETE", "/v4/volumes/502502", None, &json!({})),
    ];
    for (n, e) in entries.iter_mut().enumerate() {
        e["startedDateTime"] = json!(format!("2026-06-01T12:00:{n:02}.000Z"));
    }
    har::import(&t, &[KEY], "run.har", entries);
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn a_clone_of_the_sessions_volume_is_a_new_volume_copying_it() {
    let t = twin();
    let server = t.serve_env(&[], &[KEY]);
    let made = server
        .post(
            "/v4/volumes",
            Some("agent"),
            json!({"label": "mine", "size": 77, "region": "eu-west"}),
        )
        .await;
    made.assert_status(200);
    let made = made.json();
    let id = har::key_text(&made["id"]);
    assert_eq!(made["size"], json!(77), "{made}");

    let cloned = server
        .post(
            &format!("/v4/volumes/{id}/clone"),
            Some("agent"),
            json!({"label": "mine-copy"}),
        )
        .await;
    cloned.assert_status(200);
    let copy = cloned.json();
    let copy_id = har::key_text(&copy["id"]);
    assert_ne!(copy_id, id, "a key of its own: {copy}");
    assert_ne!(copy_id, "502502", "not the recorded copy's key: {copy}");
    assert_eq!(copy["label"], json!("mine-copy"));
    assert_eq!(
        copy["size"],
        json!(77),
        "the session's volume's size: {copy}"
    );
    assert_eq!(copy["region"], json!("eu-west"), "and its region: {copy}");
    assert_eq!(
        copy["device"],
        json!(format!("/dev/disk/by-id/volume{copy_id}")),
        "text naming the recorded copy's key names this one: {copy}"
    );

    let read = server
        .get(&format!("/v4/volumes/{copy_id}"), Some("agent"))
        .await;
    read.assert_status(200);
    assert_eq!(read.json()["label"], json!("mine-copy"));
    let listed = server.get("/v4/volumes", Some("agent")).await;
    listed.assert_status(200);
    let ids: Vec<String> = listed.json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| har::key_text(&v["id"]))
        .collect();
    assert!(ids.contains(&id) && ids.contains(&copy_id), "{ids:?}");

    server
        .delete(&format!("/v4/volumes/{copy_id}"), Some("agent"))
        .await
        .assert_status(200);
    server
        .get(&format!("/v4/volumes/{copy_id}"), Some("agent"))
        .await
        .assert_status(404);
    server
        .get(&format!("/v4/volumes/{id}"), Some("agent"))
        .await
        .assert_status(200);
}

/// Three runs each create a volume whose `path` is rendered from its label; the first also
/// clones it, answered as the creates render a label, and reads the copy back.
fn rendered_twin() -> Twin {
    har::synth_twin("cloud", ORIGIN, &[KEY], 3, |t, n| {
        let with_path = |id: u64, label: &str| {
            let mut v = volume(id, label, 20, n);
            v["path"] = json!(format!("/dev/disk/by-label/{label}"));
            v
        };
        let id = 600600 + n;
        let label = format!("data{n}");
        let source = with_path(id, &label);
        let mut entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/v4/volumes",
                Some(&json!({"label": label, "size": 20, "region": "us-east"})),
                &source,
            ),
            har::entry(ORIGIN, "GET", &format!("/v4/volumes/{id}"), None, &source),
        ];
        if n == 1 {
            let copy = with_path(700700, "data1-copy");
            entries.push(har::entry(
                ORIGIN,
                "POST",
                &format!("/v4/volumes/{id}/clone"),
                Some(&json!({"label": "data1-copy"})),
                &copy,
            ));
            entries.push(har::entry(ORIGIN, "GET", "/v4/volumes/700700", None, &copy));
        }
        har::import(t, &[KEY], &format!("run{n}.har"), entries);
    })
}

#[tokio::test]
async fn a_clone_renders_its_label_into_the_text_the_types_creates_render_it_into() {
    let t = rendered_twin();
    let server = t.serve_env(&[], &[KEY]);
    let made = server
        .post(
            "/v4/volumes",
            Some("agent"),
            json!({"label": "mine", "size": 77, "region": "eu-west"}),
        )
        .await;
    made.assert_status(200);
    let id = har::key_text(&made.json()["id"]);
    assert_eq!(made.json()["path"], json!("/dev/disk/by-label/mine"));

    let cloned = server
        .post(
            &format!("/v4/volumes/{id}/clone"),
            Some("agent"),
            json!({"label": "mine-copy"}),
        )
        .await;
    cloned.assert_status(200);
    let copy = cloned.json();
    // Not the recorded copy's `data1-copy`.
    assert_eq!(
        copy["path"],
        json!("/dev/disk/by-label/mine-copy"),
        "{copy}"
    );
    let copy_id = har::key_text(&copy["id"]);
    let read = server
        .get(&format!("/v4/volumes/{copy_id}"), Some("agent"))
        .await;
    read.assert_status(200);
    assert_eq!(read.json()["path"], json!("/dev/disk/by-label/mine-copy"));
}
