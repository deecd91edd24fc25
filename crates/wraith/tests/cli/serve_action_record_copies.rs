//! An action answering fields of the record its request names (`Route::named_record_copies`
//! on an action): attaching a volume to an instance answers the instance's `label` as the
//! volume's `linode_label`, and later reads of the volume show it. Recorded runs each attach
//! their own volume to their own instance; a session attaching to an instance it made itself
//! is answered, and stores, that instance's label, where the template used to answer some
//! recorded run's. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.volumes.test";

fn volume(id: u64, label: &str, attached: Option<(u64, &str)>, status: &str) -> Value {
    json!({
        "id": id,
        "label": label,
        "size": 20,
        "status": status,
        "linode_id": attached.map(|(i, _)| i),
        "linode_label": attached.map(|(_, l)| l),
    })
}

/// Three runs: each creates an instance and a volume, attaches the volume to the instance
/// (answered `creating`), and reads the volume back attached.
fn volumes_twin() -> Twin {
    let t = Twin::init("volumes", ORIGIN);
    for i in 0..3u64 {
        let (inst, vol) = (100 + i, 500 + i);
        let box_label = format!("box-{i}-{}", ["red", "green", "blue"][i as usize]);
        let vol_label = format!("vol-{i}");
        let attached = Some((inst, box_label.as_str()));
        let entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/v1/instances",
                Some(&json!({"label": box_label})),
                &json!({"id": inst, "label": box_label, "status": "running"}),
            ),
            har::entry(
                ORIGIN,
                "POST",
                "/v1/volumes",
                Some(&json!({"label": vol_label})),
                &volume(vol, &vol_label, None, "active"),
            ),
            har::entry(
                ORIGIN,
                "POST",
                &format!("/v1/volumes/{vol}/attach"),
                Some(&json!({"linode_id": inst})),
                &volume(vol, &vol_label, attached, "creating"),
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/v1/volumes/{vol}"),
                None,
                &volume(vol, &vol_label, attached, "active"),
            ),
        ];
        har::import(&t, &[], &format!("run{i}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn attaching_answers_and_stores_the_named_instances_label() {
    let t = volumes_twin();
    let server = t.serve(&[]);
    let made = server
        .post("/v1/instances", Some("s1"), json!({"label": "my-own-box"}))
        .await;
    made.assert_status(200);
    let inst = made.json()["id"].clone();
    let vol = server
        .post("/v1/volumes", Some("s1"), json!({"label": "my-vol"}))
        .await;
    vol.assert_status(200);
    let vol = har::key_text(&vol.json()["id"]);
    let attached = server
        .post(
            &format!("/v1/volumes/{vol}/attach"),
            Some("s1"),
            json!({"linode_id": inst}),
        )
        .await;
    attached.assert_status(200);
    let answer = attached.json();
    assert_eq!(answer["linode_id"], inst, "{answer}");
    assert_eq!(answer["linode_label"], "my-own-box", "{answer}");
    let read = server.get(&format!("/v1/volumes/{vol}"), Some("s1")).await;
    read.assert_status(200);
    let stored = read.json();
    assert_eq!(stored["linode_id"], inst, "{stored}");
    assert_eq!(stored["linode_label"], "my-own-box", "{stored}");
}

#[tokio::test]
async fn the_learned_copy_names_the_instances_field_under_its_own_name() {
    let t = volumes_twin();
    let attach = har::model_route(&t, "POST", "/v1/volumes/:param/attach");
    let rule = &attach["named_record_copies"];
    assert_eq!(rule["field"], "linode_id", "{attach}");
    assert_eq!(
        rule["copies"],
        json!([{"at": "/linode_label", "key": "label"}]),
        "{attach}"
    );
}
