//! Keyed snapshots end to end: in the recordings, the `region` a create sent decides whether
//! its answer carries the optional `policy` field and which fields the items of its `parts`
//! list have (`kind` only in `north`). Synth learns that from imported HARs, and the served
//! twin renders a new create (one no run recorded) in the recorded state of the region it was
//! sent, its list items included. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "keyed-snapshots-test-key");
const ORIGIN: &str = "https://api.servers.test";

/// Six recorded sessions, one create each: `north` answers carry `policy` and parts with a
/// `kind`, `south` ones neither.
fn servers_twin() -> Twin {
    let t = Twin::init("servers", ORIGIN);
    for i in 0..6 {
        let region = if i % 2 == 0 { "north" } else { "south" };
        let label = format!("server-{i}");
        let mut part = json!({"id": 9000 + 37 * i, "label": format!("part-{i}")});
        let mut answer = json!({"id": 100 + i, "region": region, "label": label});
        if region == "north" {
            answer["policy"] = json!("migrate");
            part["kind"] = json!("standard");
        }
        answer["parts"] = json!([part]);
        let sent = json!({"region": region, "label": label});
        har::import(
            &t,
            &[KEY],
            &format!("s{i}.har"),
            vec![har::entry(
                ORIGIN,
                "POST",
                "/v1/servers",
                Some(&sent),
                &answer,
            )],
        );
    }
    har::synth(&t, &[KEY]);
    t
}

/// A new create (a label no run recorded) in `region`, on `session`: its answer.
async fn create(server: &support::Server, session: &str, region: &str) -> serde_json::Value {
    let created = server
        .post(
            "/v1/servers",
            Some(session),
            json!({"region": region, "label": "brand-new"}),
        )
        .await;
    created.assert_status(200);
    created.json()
}

#[tokio::test]
async fn a_served_create_shows_the_optional_fields_its_sent_region_was_recorded_with() {
    let t = servers_twin();
    let server = t.serve_env(&[], &[KEY]);
    for (session, region, has_policy) in [("agent-n", "north", true), ("agent-s", "south", false)] {
        let answer = create(&server, session, region).await;
        assert_eq!(
            answer.get("policy").is_some(),
            has_policy,
            "{region}: {answer}"
        );
        assert_eq!(answer["region"], json!(region), "{answer}");
    }
}

#[tokio::test]
async fn a_served_create_lists_items_in_the_shape_its_sent_region_was_recorded_with() {
    let t = servers_twin();
    let server = t.serve_env(&[], &[KEY]);
    for (session, region, has_kind) in [("agent-n", "north", true), ("agent-s", "south", false)] {
        let answer = create(&server, session, region).await;
        let part = &answer["parts"][0];
        assert!(part.get("id").is_some(), "{region}: {answer}");
        assert_eq!(part.get("kind").is_some(), has_kind, "{region}: {answer}");
    }
}
