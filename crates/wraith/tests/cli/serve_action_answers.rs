//! An action whose answer is the record its path names, answered as the session holds the
//! record: in the recordings a volume's `resize` answers the volume with `status: resizing`
//! and the size each run asked for (the next read shows `active`), and stores nothing else.
//! The served twin answers a session's resize with the session's own volume (its label and
//! region, not a recorded run's), keeping the transient status and the size it asked for,
//! and the next read shows the volume `active` at that size. An `attach` answering the
//! volume with the owner it sent answers the session's volume with the owner the session
//! sent. Black-box: the real binary on
//! HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "action-answers-test-key");
const ORIGIN: &str = "https://api.volumes.test";

/// `volume` attached to `owner`.
fn attached(mut volume: Value, owner: i64) -> Value {
    volume["owner_id"] = json!(owner);
    volume
}

/// Session `i`: create volume `100 + i` labelled `run-i` in `region`, read it, resize it to
/// `size`, read it, attach it to owner `7 + i`, read it.
fn volumes_twin() -> Twin {
    let t = Twin::init("volumes", ORIGIN);
    for (i, region, size) in [(0, "eu-west", 20), (1, "ap-south", 30), (2, "us-east", 40)] {
        let id = 100 + i;
        let path = format!("/v1/volumes/{id}");
        let record = |status: &str, size: i64| {
            json!({"id": id, "label": format!("run-{i}"), "region": region, "size": size,
                   "status": status, "owner_id": null})
        };
        let e = |method: &str, p: &str, body: Option<&Value>, answer: &Value| {
            har::entry(ORIGIN, method, p, body, answer)
        };
        let entries = vec![
            e(
                "POST",
                "/v1/volumes",
                Some(&json!({"label": format!("run-{i}"), "region": region})),
                &record("active", 10),
            ),
            e("GET", &path, None, &record("active", 10)),
            e(
                "POST",
                &format!("{path}/resize"),
                Some(&json!({"size": size})),
                &record("resizing", size),
            ),
            e("GET", &path, None, &record("active", size)),
            e(
                "POST",
                &format!("{path}/attach"),
                Some(&json!({"owner_id": 7 + i})),
                &attached(record("active", size), 7 + i),
            ),
            e("GET", &path, None, &attached(record("active", size), 7 + i)),
        ];
        har::import(&t, &[KEY], &format!("s{i}.har"), entries);
    }
    har::synth(&t, &[KEY]);
    t
}

/// Create the session's own volume, `mine` in `sa-east`: its id and path.
async fn create_mine(server: &support::Server, s: Option<&str>) -> (String, String) {
    let created = server
        .post(
            "/v1/volumes",
            s,
            json!({"label": "mine", "region": "sa-east"}),
        )
        .await;
    created.assert_status(200);
    let id = created.json()["id"].to_string();
    let path = format!("/v1/volumes/{id}");
    (id, path)
}

#[tokio::test]
async fn a_served_resize_answers_the_sessions_volume_with_the_transient_status_and_sent_size() {
    let t = volumes_twin();
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-1");
    let (id, path) = create_mine(&server, s).await;
    let resized = server
        .post(&format!("{path}/resize"), s, json!({"size": 55}))
        .await;
    resized.assert_status(200);
    let body = resized.json();
    assert_eq!(body["id"].to_string(), id, "{body}");
    assert_eq!(body["label"], "mine", "{body}");
    assert_eq!(body["region"], "sa-east", "{body}");
    assert_eq!(body["status"], "resizing", "{body}");
    assert_eq!(body["size"], 55, "{body}");
    let read = server.get(&path, s).await;
    read.assert_status(200);
    let body = read.json();
    assert_eq!(body["label"], "mine", "{body}");
    assert_eq!(body["status"], "active", "{body}");
    assert_eq!(body["size"], 55, "{body}");
}

#[tokio::test]
async fn a_served_attach_answers_the_sessions_volume_with_the_owner_it_sent() {
    let t = volumes_twin();
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-1");
    let (_, path) = create_mine(&server, s).await;
    let attached = server
        .post(&format!("{path}/attach"), s, json!({"owner_id": 4242}))
        .await;
    attached.assert_status(200);
    let body = attached.json();
    assert_eq!(body["label"], "mine", "{body}");
    assert_eq!(body["owner_id"], 4242, "{body}");
    let read = server.get(&path, s).await;
    assert_eq!(read.json()["owner_id"], 4242, "{}", read.json());
}
