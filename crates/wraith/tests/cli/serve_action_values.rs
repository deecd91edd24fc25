//! Values an action takes from its request, end to end: in the recordings, a volume's next
//! read after `attach` shows the `owner_id` the attach sent (the attach answers `{}`), and
//! after `detach` shows `null`. Synth learns that from imported HARs, and the served twin
//! stores the value a session's attach sent, an owner no run recorded, into the session's
//! record. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "action-values-test-key");
const ORIGIN: &str = "https://api.volumes.test";

/// Session `i`: create volume `100 + i`, read it, attach it to `owner`, read it, detach it,
/// read it.
fn volumes_twin() -> Twin {
    let t = Twin::init("volumes", ORIGIN);
    for (i, owner) in [(0, 7), (1, 8), (2, 9)] {
        let id = 100 + i;
        let path = format!("/v1/volumes/{id}");
        let record = |owner: Value| json!({"id": id, "size": 10, "owner_id": owner});
        let e = |method: &str, p: &str, body: Option<&Value>, answer: &Value| {
            har::entry(ORIGIN, method, p, body, answer)
        };
        let entries = vec![
            e(
                "POST",
                "/v1/volumes",
                Some(&json!({"size": 10})),
                &record(Value::Null),
            ),
            e("GET", &path, None, &record(Value::Null)),
            e(
                "POST",
                &format!("{path}/attach"),
                Some(&json!({"owner_id": owner})),
                &json!({}),
            ),
            e("GET", &path, None, &record(json!(owner))),
            e(
                "POST",
                &format!("{path}/detach"),
                Some(&json!({})),
                &json!({}),
            ),
            e("GET", &path, None, &record(Value::Null)),
        ];
        har::import(&t, &[KEY], &format!("s{i}.har"), entries);
    }
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn a_served_attach_stores_the_owner_it_sent_and_detach_clears_it() {
    let t = volumes_twin();
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-1");
    let created = server.post("/v1/volumes", s, json!({"size": 10})).await;
    created.assert_status(200);
    let id = created.json()["id"].to_string();
    let path = format!("/v1/volumes/{id}");
    let attached = server
        .post(&format!("{path}/attach"), s, json!({"owner_id": 4242}))
        .await;
    assert_eq!(attached.status, 200);
    let read = server.get(&path, s).await;
    assert_eq!(read.status, 200);
    assert_eq!(read.json()["owner_id"], json!(4242), "{}", read.json());
    server.post(&format!("{path}/detach"), s, json!({})).await;
    let read = server.get(&path, s).await;
    assert_eq!(read.json()["owner_id"], Value::Null, "{}", read.json());
}
