//! An update whose recorded answers wrap the record in one envelope key (`{"thing": {...}}`)
//! echoes a boolean the request set at the record's own field: the recordings only ever set
//! `flag` to `true`, and the served twin answers a `false` it is sent as `false`, then reads
//! the record back as the session stored it. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "enveloped-echo-test-key");
const ORIGIN: &str = "https://api.things.test";

/// One recorded session: create a thing, set its flag, read it back.
fn session(t: &Twin, n: u64) {
    let id = format!("{}", 5_000 + n);
    let name = format!("thing {n}");
    let created = json!({"thing": {"id": id, "name": name, "flag": false}});
    let flagged = json!({"thing": {"id": id, "name": name, "flag": true}});
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/things",
            Some(&json!({"name": name})),
            &created,
        ),
        har::entry(
            ORIGIN,
            "PATCH",
            &format!("/v1/things/{id}"),
            Some(&json!({"flag": true})),
            &flagged,
        ),
        har::entry(ORIGIN, "GET", &format!("/v1/things/{id}"), None, &flagged),
    ];
    har::import(t, &[KEY], &format!("s{n}.har"), entries);
}

#[tokio::test]
async fn an_enveloped_update_answers_the_boolean_it_was_sent_and_reads_it_back() {
    let t = har::synth_twin("things", ORIGIN, &[KEY], 3, session);
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post("/v1/things", Some("agent-1"), json!({"name": "mine"}))
        .await;
    created.assert_status(200);
    let id = har::key_text(&created.json()["thing"]["id"]);
    let path = format!("/v1/things/{id}");
    for flag in [true, false] {
        let updated = server
            .send(
                "PATCH",
                &path,
                Some("agent-1"),
                &[],
                Some(json!({"flag": flag})),
            )
            .await;
        updated.assert_status(200);
        let updated = updated.json();
        assert_eq!(updated["thing"]["flag"], json!(flag), "{updated}");
        let read = server.get(&path, Some("agent-1")).await;
        read.assert_status(200);
        let read = read.json();
        assert_eq!(read["thing"]["flag"], json!(flag), "{read}");
    }
}
