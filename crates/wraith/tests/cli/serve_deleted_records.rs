//! A record its own recording deleted is not in the twin's recorded world: a fresh session's
//! read of it answers the recorded 404, so a collection read with a query no recording made
//! does not list it either (the recorded pages that listed it, before the delete, still replay
//! as recorded). Black-box: the real binary on a HAR run written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.items.test";

/// The recorded delete of `it_gone`.
fn delete_gone() -> Value {
    let answer = json!({"id": "it_gone", "deleted": true});
    har::entry(ORIGIN, "DELETE", "/v1/items/it_gone", None, &answer)
}

/// The two records' creates and a list of both.
fn created_and_listed(kept: &Value, gone: &Value) -> Vec<Value> {
    let create = |record: &Value| {
        let sent = json!({"name": record["name"]});
        har::entry(ORIGIN, "POST", "/v1/items", Some(&sent), record)
    };
    let both = json!({"data": [kept, gone], "total": 2});
    vec![
        create(kept),
        create(gone),
        har::entry(ORIGIN, "GET", "/v1/items", None, &both),
    ]
}

fn items_twin() -> Twin {
    let t = Twin::init("items", ORIGIN);
    let kept = json!({"id": "it_kept", "name": "kept"});
    let gone = json!({"id": "it_gone", "name": "gone"});
    let mut missing = har::entry(
        ORIGIN,
        "GET",
        "/v1/items/it_gone",
        None,
        &json!({"error": "not found"}),
    );
    missing["response"]["status"] = json!(404);
    let mut entries = created_and_listed(&kept, &gone);
    entries.extend([
        delete_gone(),
        missing,
        har::entry(
            ORIGIN,
            "GET",
            "/v1/items?limit=1",
            None,
            &json!({"data": [kept.clone()], "total": 1}),
        ),
    ]);
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

fn ids(v: &Value) -> Vec<String> {
    support::item_ids(&v["data"])
}

#[tokio::test]
async fn a_list_no_recording_made_leaves_out_records_deleted_in_their_recording() {
    let t = items_twin();
    let server = t.serve(&[]);
    let s = Some("fresh");
    server.get("/v1/items/it_gone", s).await.assert_status(404);
    let page = server.get("/v1/items?limit=10", s).await;
    page.assert_status(200);
    let body = page.json();
    assert_eq!(ids(&body), vec!["it_kept"], "{body}");
}

/// A run that creates two records, lists them, and deletes one without reading it again (what
/// test suites do at teardown); `read_after` adds a read of the deleted record that answered
/// 200 after the delete, as an API that keeps deleted records readable does.
fn deleted_without_read_twin(read_after: bool) -> Twin {
    let t = Twin::init("items", ORIGIN);
    let kept = json!({"id": "it_kept", "name": "kept"});
    let gone = json!({"id": "it_gone", "name": "gone"});
    let mut entries = created_and_listed(&kept, &gone);
    entries.extend([
        har::entry(ORIGIN, "GET", "/v1/items/it_gone", None, &gone),
        delete_gone(),
    ]);
    if read_after {
        entries.push(har::entry(
            ORIGIN,
            "GET",
            "/v1/items/it_gone",
            None,
            &json!({"id": "it_gone", "name": "gone", "deleted": true}),
        ));
    }
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_list_no_recording_made_leaves_out_records_their_recording_deleted_without_reading_again()
{
    let t = deleted_without_read_twin(false);
    let server = t.serve(&[]);
    let page = server.get("/v1/items?limit=10", Some("fresh")).await;
    page.assert_status(200);
    let body = page.json();
    assert_eq!(ids(&body), vec!["it_kept"], "{body}");
}

#[tokio::test]
async fn a_record_read_back_after_its_recorded_delete_stays_in_the_recorded_world() {
    let t = deleted_without_read_twin(true);
    let server = t.serve(&[]);
    let page = server.get("/v1/items?limit=10", Some("fresh")).await;
    page.assert_status(200);
    let body = page.json();
    let mut listed = ids(&body);
    listed.sort();
    assert_eq!(listed, vec!["it_gone", "it_kept"], "{body}");
}
