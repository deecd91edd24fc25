//! `wraith serve` answering an update with the record's creation time as the session holds it
//! and its modification time from the session's clock, where both are clock holes of the
//! update's template: every recorded rename repeated `created` and showed a new `updated`
//! (`Route::update_keeps`). Black-box: the real binary on HAR runs written here, served with a
//! deterministic clock (one second per reading), so the two requests read different times.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.widgets.test";

/// Three runs, each creating a widget, renaming it five seconds later and reading it.
fn widgets_twin() -> Twin {
    let t = Twin::init("widgets", ORIGIN);
    for (run, day, id) in [("a", 1, "w1"), ("b", 2, "w2"), ("c", 3, "w3")] {
        let made = format!("2026-06-0{day}T12:00:00.000Z");
        let renamed_at = format!("2026-06-0{day}T12:00:05.000Z");
        let mut entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/v1/widgets",
                Some(&json!({"name": run})),
                &json!({"id": id, "name": run, "created": made, "updated": made}),
            ),
            har::entry(
                ORIGIN,
                "PATCH",
                &format!("/v1/widgets/{id}"),
                Some(&json!({"name": "renamed"})),
                &json!({"id": id, "name": "renamed", "created": made, "updated": renamed_at}),
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/v1/widgets/{id}"),
                None,
                &json!({"id": id, "name": "renamed", "created": made, "updated": renamed_at}),
            ),
        ];
        entries[0]["startedDateTime"] = json!(made);
        entries[1]["startedDateTime"] = json!(renamed_at);
        entries[2]["startedDateTime"] = json!(renamed_at);
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn an_update_keeps_the_creation_time_and_stamps_the_modification_time() {
    let t = widgets_twin();
    let server = t.serve(&["--clock", "deterministic"]);
    let s = Some("agent");
    let created = server.post("/v1/widgets", s, json!({"name": "mine"})).await;
    created.assert_status(200);
    let created = created.json();
    let id = created["id"].as_str().unwrap().to_string();
    let updated = server
        .send(
            "PATCH",
            &format!("/v1/widgets/{id}"),
            s,
            &[],
            Some(json!({"name": "mine-2"})),
        )
        .await;
    updated.assert_status(200);
    let updated = updated.json();
    assert_eq!(updated["name"], "mine-2");
    assert_eq!(
        updated["created"], created["created"],
        "{created} then {updated}"
    );
    assert_ne!(
        updated["updated"], created["updated"],
        "{created} then {updated}"
    );
    // A later read shows the record as the update left it.
    let read = server.get(&format!("/v1/widgets/{id}"), s).await.json();
    assert_eq!(read["created"], created["created"], "{read}");
    assert_eq!(read["updated"], updated["updated"], "{read}");
}

/// Three runs, each creating a task (its answer without `synced_at`), reading it (`synced_at`
/// set by then) and renaming it: every rename repeats `synced_at` as the read showed it.
fn tasks_twin() -> Twin {
    let t = Twin::init("tasks", ORIGIN);
    for (run, day, id) in [("a", 1, "t1"), ("b", 2, "t2"), ("c", 3, "t3")] {
        let made = format!("2026-06-0{day}T12:00:00.000Z");
        let synced = format!("2026-06-0{day}T12:00:02.000Z");
        let renamed_at = format!("2026-06-0{day}T12:00:05.000Z");
        let task = |name: &str| json!({"id": id, "name": name, "synced_at": synced});
        let mut entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/v1/tasks",
                Some(&json!({"name": run})),
                &json!({"id": id, "name": run}),
            ),
            har::entry(ORIGIN, "GET", &format!("/v1/tasks/{id}"), None, &task(run)),
            har::entry(
                ORIGIN,
                "PATCH",
                &format!("/v1/tasks/{id}"),
                Some(&json!({"name": "renamed"})),
                &task("renamed"),
            ),
        ];
        entries[0]["startedDateTime"] = json!(made);
        entries[1]["startedDateTime"] = json!(synced);
        entries[2]["startedDateTime"] = json!(renamed_at);
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_kept_timestamp_the_stored_record_lacks_is_still_answered() {
    let t = tasks_twin();
    let server = t.serve(&["--clock", "deterministic"]);
    let s = Some("agent");
    let created = server.post("/v1/tasks", s, json!({"name": "mine"})).await;
    created.assert_status(200);
    let created = created.json();
    assert!(created.get("synced_at").is_none(), "{created}");
    let id = created["id"].as_str().unwrap().to_string();
    // No read between: the session's record has no `synced_at` to keep.
    let updated = server
        .send(
            "PATCH",
            &format!("/v1/tasks/{id}"),
            s,
            &[],
            Some(json!({"name": "mine-2"})),
        )
        .await;
    updated.assert_status(200);
    let updated = updated.json();
    assert_eq!(updated["name"], "mine-2");
    assert!(updated["synced_at"].is_string(), "{updated}");
}
