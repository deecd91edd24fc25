//! `wraith serve` answering a create whose recorded answers held an object naming the record
//! (a database's `hosts.primary` is `a<id>-…`): the twin's answer names the id the twin gave
//! the record, and reads of the record name it too. Black-box: the real binary on a HAR run
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.dbs.test";

fn database(id: u64, label: &str) -> serde_json::Value {
    json!({
        "id": id,
        "label": label,
        "hosts": {
            "primary": format!("a{id}-east.db.test"),
            "standby": format!("replica-a{id}-east.db.test"),
        },
    })
}

fn databases_twin() -> Twin {
    let t = Twin::init("dbs", ORIGIN);
    let mut entries = Vec::new();
    for (id, label) in [(16774, "first"), (227288, "second"), (31057, "third")] {
        let answer = database(id, label);
        entries.push(har::entry(
            ORIGIN,
            "POST",
            "/v4/databases",
            Some(&json!({"label": label})),
            &answer,
        ));
        entries.push(har::entry(
            ORIGIN,
            "GET",
            &format!("/v4/databases/{id}"),
            None,
            &answer,
        ));
    }
    har::import(&t, &[], "dbs.har", entries);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_created_databases_hosts_name_the_id_the_twin_gave_it() {
    let t = databases_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let created = server
        .post("/v4/databases", s, json!({"label": "mine"}))
        .await
        .json();
    let id = created["id"].as_u64().expect("numeric id");
    assert!(![16774, 227288, 31057].contains(&id), "{created}");
    assert_eq!(
        created["hosts"],
        json!({
            "primary": format!("a{id}-east.db.test"),
            "standby": format!("replica-a{id}-east.db.test"),
        }),
        "{created}"
    );
    let read = server.get(&format!("/v4/databases/{id}"), s).await.json();
    assert_eq!(read["hosts"], created["hosts"], "{read}");
}
