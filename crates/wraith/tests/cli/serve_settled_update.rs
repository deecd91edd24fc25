//! `wraith serve` answering an update of a record the session created in the state every
//! recorded update showed it in, where the create answered another (a volume created
//! `creating` is `active` by the time anything updates it). Black-box: the real binary on HAR
//! runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.volumes.test";

/// Two runs, each creating a volume (`creating`), reading it (`active`) and renaming it.
fn volumes_twin() -> Twin {
    let t = Twin::init("volumes", ORIGIN);
    for (run, day, id) in [("a", 1, "101"), ("b", 2, "202")] {
        let label = format!("vol-{run}");
        let renamed = format!("vol-{run}-2");
        let mut entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/v1/volumes",
                Some(&json!({"label": label})),
                &json!({"id": id, "label": label, "status": "creating"}),
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/v1/volumes/{id}"),
                None,
                &json!({"id": id, "label": label, "status": "active"}),
            ),
            har::entry(
                ORIGIN,
                "PUT",
                &format!("/v1/volumes/{id}"),
                Some(&json!({"label": renamed})),
                &json!({"id": id, "label": renamed, "status": "active"}),
            ),
        ];
        for e in &mut entries {
            e["startedDateTime"] = json!(format!("2026-06-0{day}T12:00:00.000Z"));
        }
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn an_update_of_a_created_volume_answers_it_in_the_state_recorded_updates_showed() {
    let t = volumes_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let created = server
        .post("/v1/volumes", s, json!({"label": "mine"}))
        .await;
    created.assert_status(200);
    let created = created.json();
    assert_eq!(created["status"], "creating", "{created}");
    let id = created["id"].as_str().unwrap().to_string();
    // No read in between: the update alone answers the state the volume moved into.
    let updated = server
        .send(
            "PUT",
            &format!("/v1/volumes/{id}"),
            s,
            &[],
            Some(json!({"label": "mine-2"})),
        )
        .await;
    updated.assert_status(200);
    let updated = updated.json();
    assert_eq!(updated["status"], "active", "{updated}");
    assert_eq!(updated["label"], "mine-2");
    assert_eq!(updated["id"], json!(id));
}
