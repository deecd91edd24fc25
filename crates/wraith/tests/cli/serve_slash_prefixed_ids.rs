//! Ids with a path-like prefix, end to end: in the recordings a create answers records whose
//! ids are `private/<digits>` (a constant word and `/`, then a varying number), and the
//! session reads them back with the `/` percent-encoded in the path, as the client sends it
//! (`/v2/images/private%2F26427531`). Synth learns the id shape `private/` + digits, so the
//! served twin mints a fresh id of that shape for every create (two creates of one session
//! never share an id) and each one reads back through the one-segment path parameter.
//! Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "slash-prefixed-ids-test-key");
const ORIGIN: &str = "https://api.images.test";

/// Session `i`: create image `private/<n>`, read it back (percent-encoded slash), read an
/// image that does not exist (404), delete the created one.
fn images_twin() -> Twin {
    let t = Twin::init("images", ORIGIN);
    for (i, n) in [(1u64, 26427531u64), (2, 38637317), (3, 33812167)] {
        let id = format!("private/{n}");
        let encoded = format!("/v2/images/private%2F{n}");
        let label = format!("img{i}");
        let created = json!({"id": id, "label": label, "status": "creating"});
        let mut read = created.clone();
        read["status"] = json!("available");
        let e = |method: &str, p: &str, body: Option<&Value>, answer: &Value| {
            har::entry(ORIGIN, method, p, body, answer)
        };
        let mut missing = e(
            "GET",
            "/v2/images/private%2F10000000",
            None,
            &json!({"errors": [{"reason": "Not found"}]}),
        );
        missing["response"]["status"] = json!(404);
        let entries = vec![
            e(
                "POST",
                "/v2/images",
                Some(&json!({"label": label})),
                &created,
            ),
            e("GET", &encoded, None, &read),
            missing,
            e("DELETE", &encoded, None, &json!({})),
        ];
        har::import(&t, &[KEY], &format!("s{i}.har"), entries);
    }
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn creates_mint_fresh_slash_prefixed_ids_that_read_back_percent_encoded() {
    let t = images_twin();
    let server = t.serve_env(&[], &[KEY]);
    let mut ids = Vec::new();
    for label in ["first", "second"] {
        let created = server
            .post("/v2/images", Some("agent-1"), json!({"label": label}))
            .await;
        created.assert_status(200);
        let answer = created.json();
        let id = answer["id"].as_str().expect("a string id").to_string();
        let tail = id.strip_prefix("private/").unwrap_or_default();
        assert!(
            tail.len() == 8 && tail.bytes().all(|b| b.is_ascii_digit()),
            "an id of the recorded shape private/<8 digits>: {answer}"
        );
        assert!(
            !["private/26427531", "private/38637317", "private/33812167"].contains(&id.as_str()),
            "a fresh id, not a recorded one: {answer}"
        );
        ids.push(id);
    }
    assert_ne!(ids[0], ids[1], "two creates of one session get two ids");

    for id in &ids {
        let path = format!("/v2/images/{}", id.replace('/', "%2F"));
        let read = server.get(&path, Some("agent-1")).await;
        read.assert_status(200);
        assert_eq!(read.json()["id"], json!(id), "{path}");
        server.get(&path, Some("agent-2")).await.assert_status(404);
    }
}
