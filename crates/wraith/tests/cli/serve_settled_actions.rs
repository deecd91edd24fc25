//! `wraith serve` applying what an action answering `{}` did to the record its path names, as
//! the reads after it showed: compared with the session's latest view before the action,
//! whichever route answered that view. Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.servers.test";

fn server_record(id: &str, label: &str, status: &str) -> Value {
    json!({"id": id, "label": label, "status": status})
}

/// Runs of HAR entries, one file per run, each entry stamped on its run's day.
fn twin_of(runs: Vec<Vec<Value>>) -> Twin {
    let t = Twin::init("servers", ORIGIN);
    for (n, mut entries) in runs.into_iter().enumerate() {
        for e in &mut entries {
            e["startedDateTime"] = json!(format!("2026-06-0{}T12:00:00.000Z", n + 1));
        }
        har::import(&t, &[], &format!("run{n}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

/// Three runs, each creating a server (`active`), reading and renaming it, suspending it (the
/// next read shows `suspended`) and asking to resume it (the one read after that still shows
/// `suspended`: the resume had not taken effect yet).
fn suspend_resume_twin() -> Twin {
    let runs = [("a", "101"), ("b", "202"), ("c", "303")]
        .iter()
        .map(|(run, id)| {
            let path = format!("/v1/servers/{id}");
            let label = format!("srv-{run}");
            let renamed = format!("srv-{run}-2");
            vec![
                har::entry(
                    ORIGIN,
                    "POST",
                    "/v1/servers",
                    Some(&json!({"label": label})),
                    &server_record(id, &label, "active"),
                ),
                har::entry(
                    ORIGIN,
                    "GET",
                    &path,
                    None,
                    &server_record(id, &label, "active"),
                ),
                har::entry(
                    ORIGIN,
                    "PUT",
                    &path,
                    Some(&json!({"label": renamed})),
                    &server_record(id, &renamed, "active"),
                ),
                har::entry(ORIGIN, "POST", &format!("{path}/suspend"), None, &json!({})),
                har::entry(
                    ORIGIN,
                    "GET",
                    &path,
                    None,
                    &server_record(id, &renamed, "suspended"),
                ),
                har::entry(ORIGIN, "POST", &format!("{path}/resume"), None, &json!({})),
                har::entry(
                    ORIGIN,
                    "GET",
                    &path,
                    None,
                    &server_record(id, &renamed, "suspended"),
                ),
            ]
        })
        .collect();
    twin_of(runs)
}

async fn record_of(server: &support::Server, id: &str, s: Option<&str>) -> Value {
    let read = server.get(&format!("/v1/servers/{id}"), s).await;
    read.assert_status(200);
    read.json()
}

async fn status_of(server: &support::Server, id: &str, s: Option<&str>) -> Value {
    record_of(server, id, s).await["status"].clone()
}

#[tokio::test]
async fn a_bodiless_action_is_compared_with_the_latest_read_before_it_not_an_earlier_update() {
    let t = suspend_resume_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let created = server
        .post("/v1/servers", s, json!({"label": "mine"}))
        .await;
    created.assert_status(200);
    let id = created.json()["id"].as_str().unwrap().to_string();
    server
        .post(&format!("/v1/servers/{id}/suspend"), s, json!({}))
        .await
        .assert_status(200);
    assert_eq!(status_of(&server, &id, s).await, "suspended");
    // Every recorded resume left the server as the read before it showed it: resuming a
    // server that is not suspended leaves it alone, and never suspends it.
    let other = server
        .post("/v1/servers", s, json!({"label": "other"}))
        .await;
    let other = other.json()["id"].as_str().unwrap().to_string();
    server
        .post(&format!("/v1/servers/{other}/resume"), s, json!({}))
        .await
        .assert_status(200);
    assert_eq!(status_of(&server, &other, s).await, "active");
}

/// Three runs, each creating a server (`provisioning`) and booting it. The first run's one
/// read after the boot shows it `running`, then it shuts the server down (`offline`); the
/// other two poll it through `provisioning` and `booting` to `running`.
fn power_twin() -> Twin {
    let runs = [("a", "101"), ("b", "202"), ("c", "303")]
        .iter()
        .map(|(run, id)| {
            let path = format!("/v1/servers/{id}");
            let label = format!("srv-{run}");
            let read = |status: &str| {
                har::entry(
                    ORIGIN,
                    "GET",
                    &path,
                    None,
                    &server_record(id, &label, status),
                )
            };
            let mut entries = vec![
                har::entry(
                    ORIGIN,
                    "POST",
                    "/v1/servers",
                    Some(&json!({"label": label})),
                    &server_record(id, &label, "provisioning"),
                ),
                har::entry(ORIGIN, "POST", &format!("{path}/boot"), None, &json!({})),
            ];
            if *run == "a" {
                entries.extend([
                    read("running"),
                    har::entry(
                        ORIGIN,
                        "POST",
                        &format!("{path}/shutdown"),
                        None,
                        &json!({}),
                    ),
                    read("offline"),
                ]);
            } else {
                entries.extend(["provisioning", "booting", "running"].map(read));
            }
            entries
        })
        .collect();
    twin_of(runs)
}

#[tokio::test]
async fn a_boot_leaves_the_server_running_as_every_recorded_poll_ended() {
    let t = power_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let created = server
        .post("/v1/servers", s, json!({"label": "mine"}))
        .await;
    created.assert_status(200);
    let id = created.json()["id"].as_str().unwrap().to_string();
    let act = |what: &str| format!("/v1/servers/{id}/{what}");
    server
        .post(&act("boot"), s, json!({}))
        .await
        .assert_status(200);
    assert_eq!(status_of(&server, &id, s).await, "running");
    server
        .post(&act("shutdown"), s, json!({}))
        .await
        .assert_status(200);
    assert_eq!(status_of(&server, &id, s).await, "offline");
    // Booted again after the shutdown: running again, not left `offline`.
    server
        .post(&act("boot"), s, json!({}))
        .await
        .assert_status(200);
    assert_eq!(status_of(&server, &id, s).await, "running");
}

/// Three runs, each creating a server without backups, enabling them (the read after shows
/// `backups.enabled` and its schedule set) and cancelling them (`enabled` false again, the
/// schedule kept).
fn backups_twin() -> Twin {
    let runs = [("a", "101"), ("b", "202"), ("c", "303")]
        .iter()
        .map(|(run, id)| {
            let path = format!("/v1/servers/{id}");
            let label = format!("srv-{run}");
            let with_backups = |enabled: bool, day: Value| {
                let mut r = server_record(id, &label, "running");
                r["backups"] = json!({"enabled": enabled, "schedule": {"day": day, "hour": 2}});
                r
            };
            vec![
                har::entry(
                    ORIGIN,
                    "POST",
                    "/v1/servers",
                    Some(&json!({"label": label})),
                    &with_backups(false, Value::Null),
                ),
                har::entry(
                    ORIGIN,
                    "POST",
                    &format!("{path}/backups/enable"),
                    None,
                    &json!({}),
                ),
                har::entry(
                    ORIGIN,
                    "GET",
                    &path,
                    None,
                    &with_backups(true, json!("Sunday")),
                ),
                har::entry(
                    ORIGIN,
                    "POST",
                    &format!("{path}/backups/cancel"),
                    None,
                    &json!({}),
                ),
                har::entry(
                    ORIGIN,
                    "GET",
                    &path,
                    None,
                    &with_backups(false, json!("Sunday")),
                ),
            ]
        })
        .collect();
    twin_of(runs)
}

#[tokio::test]
async fn an_action_sets_the_nested_fields_it_changed_and_keeps_the_others() {
    let t = backups_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let created = server
        .post("/v1/servers", s, json!({"label": "mine"}))
        .await;
    created.assert_status(200);
    let id = created.json()["id"].as_str().unwrap().to_string();
    let enable = format!("/v1/servers/{id}/backups/enable");
    server.post(&enable, s, json!({})).await.assert_status(200);
    let enabled = record_of(&server, &id, s).await;
    assert_eq!(
        enabled["backups"],
        json!({"enabled": true, "schedule": {"day": "Sunday", "hour": 2}}),
        "{enabled}"
    );
    assert_eq!(enabled["label"], "mine", "{enabled}");
    let cancel = format!("/v1/servers/{id}/backups/cancel");
    server.post(&cancel, s, json!({})).await.assert_status(200);
    let cancelled = record_of(&server, &id, s).await;
    assert_eq!(cancelled["backups"]["enabled"], false, "{cancelled}");
    assert_eq!(
        cancelled["backups"]["schedule"]["day"], "Sunday",
        "{cancelled}"
    );
}
