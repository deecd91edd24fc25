//! Routes that view one object field of a record, end to end: in the recordings `GET
//! /v4/firewalls/:id/rules` answered the firewall's `rules` as its create (or the last `PUT`
//! of the rules) left them, and the next read after a `PUT` showed what the `PUT` answered.
//! Synth learns both (`synth/src/field_views.rs`), and the served twin answers a session's
//! firewall's rules, stores a `PUT`'s answer there, and shows it in the firewall's own read.
//! A sub-path whose answers are not the record's field stays a template. Black-box: the real
//! binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.firewalls.test";

fn rules(policy: &str, ports: &str, version: i64) -> Value {
    json!({"inbound": [{"action": "ACCEPT", "ports": ports, "protocol": "TCP"}],
           "inbound_policy": policy, "version": version})
}

/// Session `i` creates firewall `100 + i` with its own rules and reads them back; session 1
/// replaces them first; every session reads the firewall's `status`, a sub-path answering an
/// object that is no field of the record.
fn firewalls_twin() -> Twin {
    let t = Twin::init("firewalls", ORIGIN);
    for i in 0..3 {
        let id = 100 + i;
        let path = format!("/v4/firewalls/{id}");
        let created = rules("DROP", &format!("{}", 20 + i), 1);
        let record = |rules: &Value| json!({"id": id, "label": format!("fw-{i}"), "rules": rules});
        let e = |method: &str, p: &str, body: Option<&Value>, answer: &Value| {
            har::entry(ORIGIN, method, p, body, answer)
        };
        let mut entries = vec![
            e(
                "POST",
                "/v4/firewalls",
                Some(&json!({"label": format!("fw-{i}"), "rules": created})),
                &record(&created),
            ),
            e("GET", &path, None, &record(&created)),
        ];
        let mut last = created.clone();
        if i == 1 {
            let replaced = rules("ACCEPT", "443", 2);
            entries.push(e(
                "PUT",
                &format!("{path}/rules"),
                Some(&replaced),
                &replaced,
            ));
            last = replaced;
        }
        entries.push(e("GET", &format!("{path}/rules"), None, &last));
        entries.push(e(
            "GET",
            &format!("{path}/status"),
            None,
            &json!({"state": "ok", "checked": i}),
        ));
        har::import(&t, &[], &format!("s{i}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_served_field_view_reads_and_replaces_the_sessions_record_field() {
    let t = firewalls_twin();
    let server = t.serve(&[]);
    let s = Some("agent-1");
    let mine = rules("DROP", "8080", 1);
    let created = server
        .post("/v4/firewalls", s, json!({"label": "mine", "rules": mine}))
        .await;
    created.assert_status(200);
    let id = created.json()["id"].to_string();
    let path = format!("/v4/firewalls/{id}");
    let read = server.get(&format!("{path}/rules"), s).await;
    read.assert_status(200);
    assert_eq!(read.json(), created.json()["rules"], "{}", created.json());
    assert_eq!(
        read.json()["inbound"][0]["ports"],
        "8080",
        "{}",
        read.json()
    );

    let replaced = server
        .send(
            "PUT",
            &format!("{path}/rules"),
            s,
            &[],
            Some(rules("ACCEPT", "9090", 2)),
        )
        .await;
    replaced.assert_status(200);
    let answered = replaced.json();
    let read = server.get(&format!("{path}/rules"), s).await;
    assert_eq!(read.json(), answered);
    let record = server.get(&path, s).await;
    record.assert_status(200);
    assert_eq!(record.json()["rules"], answered, "{}", record.json());
    assert_eq!(record.json()["label"], "mine", "{}", record.json());
}

#[tokio::test]
async fn a_field_view_is_learned_only_where_the_answers_were_the_records_field() {
    let t = firewalls_twin();
    let view = |method: &str, path: &str| har::model_route(&t, method, path)["field_view"].clone();
    assert_eq!(
        view("GET", "/v4/firewalls/:param/rules"),
        json!({"entity_type": "firewalls", "field": "rules", "record_param": "param",
               "writes": false})
    );
    assert_eq!(view("PUT", "/v4/firewalls/:param/rules")["writes"], true);
    assert_eq!(view("GET", "/v4/firewalls/:param/status"), Value::Null);
}
