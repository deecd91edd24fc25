//! `wraith serve` moving a created record through the states its recorded reads showed: every
//! recorded run created an instance `provisioning` and polled it until `running`, so a client
//! polling the twin for `running` gets it, read after read as the recordings went. Black-box:
//! the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.instances.test";

/// Three runs, each creating an instance and polling it through `booting` to `running`.
fn instances_twin() -> Twin {
    let t = Twin::init("instances", ORIGIN);
    let runs: [(&str, u32, &str, &[&str]); 3] = [
        ("a", 1, "101", &["provisioning", "booting", "running"]),
        (
            "b",
            2,
            "202",
            &["provisioning", "provisioning", "booting", "running"],
        ),
        ("c", 3, "303", &["provisioning", "booting", "running"]),
    ];
    for (run, day, id, reads) in runs {
        let label = format!("box-{run}");
        let record = |status: &str| json!({"id": id, "label": label, "status": status});
        let mut entries = vec![har::entry(
            ORIGIN,
            "POST",
            "/v4/instances",
            Some(&json!({"label": label})),
            &record("provisioning"),
        )];
        for s in reads {
            entries.push(har::entry(
                ORIGIN,
                "GET",
                &format!("/v4/instances/{id}"),
                None,
                &record(s),
            ));
        }
        for e in &mut entries {
            e["startedDateTime"] = json!(format!("2026-06-0{day}T12:00:00.000Z"));
        }
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_polled_instance_reaches_the_state_every_recorded_poll_ended_in() {
    let t = instances_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let created = server
        .post("/v4/instances", s, json!({"label": "mine"}))
        .await;
    created.assert_status(200);
    let created = created.json();
    assert_eq!(created["status"], "provisioning", "{created}");
    let path = format!("/v4/instances/{}", created["id"].as_str().unwrap());
    let mut seen: Vec<Value> = Vec::new();
    for _ in 0..5 {
        let read = server.get(&path, s).await;
        read.assert_status(200);
        let read = read.json();
        assert_eq!(read["label"], "mine", "{read}");
        seen.push(read["status"].clone());
    }
    assert_eq!(
        seen,
        vec![
            json!("provisioning"),
            json!("booting"),
            json!("running"),
            json!("running"),
            json!("running")
        ]
    );
}
