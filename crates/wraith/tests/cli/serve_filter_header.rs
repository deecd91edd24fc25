//! `wraith serve` filtering a list by a filter-document request header (`X-Filter`) whose keys
//! name nested fields with dots (`entity.type`, `entity.id`): recordings sent such documents,
//! so a document no recording sent still selects the items whose nested field matches (it
//! had selected none at all). Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.cloud.test";

fn event(id: u64, action: &str, kind: &str, entity: u64) -> Value {
    json!({"id": id, "action": action, "entity": {"id": entity, "type": kind, "label": format!("{kind}-{entity}")}})
}

/// A page of events answered to a request sending the filter document `filter`.
fn page(filter: &str, items: Value) -> Value {
    let total = items.as_array().map_or(0, Vec::len);
    let mut e = har::entry(
        ORIGIN,
        "GET",
        "/v4/account/events?page=1",
        None,
        &json!({"data": items, "page": 1, "pages": 1, "results": total}),
    );
    e["request"]["headers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "X-Filter", "value": filter}));
    e
}

/// Two runs polling the events of what they created, by action and entity.
fn events_twin() -> Twin {
    let t = Twin::init("cloud", ORIGIN);
    let runs = [
        ("a", 1, event(11, "linode_create", "linode", 501)),
        ("b", 2, event(21, "volume_create", "volume", 702)),
    ];
    for (run, day, ev) in runs {
        let filter = json!({
            "+order": "desc",
            "+order_by": "created",
            "action": ev["action"],
            "entity.id": ev["entity"]["id"],
            "entity.type": ev["entity"]["type"],
        })
        .to_string();
        let mut entries = vec![
            page("{}", json!([ev.clone()])),
            page(&filter, json!([ev.clone()])),
        ];
        for e in &mut entries {
            e["startedDateTime"] = json!(format!("2026-06-0{day}T12:00:00.000Z"));
        }
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

fn listed(r: &support::Resp) -> Vec<(String, u64)> {
    r.json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["entity"]["type"].as_str().unwrap().to_string(),
                e["entity"]["id"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_filter_document_naming_a_nested_field_selects_the_items_whose_field_matches() {
    let t = events_twin();
    let server = t.serve(&[]);
    let s = Some("events");
    // A page size no recording asked for: the twin filters its collection itself.
    let by_type = server
        .send(
            "GET",
            "/v4/account/events?page=1&page_size=100",
            s,
            &[("X-Filter", r#"{"entity.type": "volume"}"#)],
            None,
        )
        .await;
    by_type.assert_status(200);
    assert_eq!(listed(&by_type), vec![("volume".to_string(), 702)]);

    let by_id = server
        .send(
            "GET",
            "/v4/account/events?page=1&page_size=100",
            s,
            &[(
                "X-Filter",
                r#"{"+order_by": "created", "entity.type": "linode", "entity.id": 501}"#,
            )],
            None,
        )
        .await;
    assert_eq!(listed(&by_id), vec![("linode".to_string(), 501)]);
    assert_eq!(by_id.json()["results"], json!(1));
}

/// One run creating two instances, one tagged `web`, and listing them with a filter document.
fn tagged_twin() -> Twin {
    let t = Twin::init("cloud", ORIGIN);
    let web = json!({"id": 31, "label": "front", "tags": ["web", "prod"]});
    let db = json!({"id": 32, "label": "store", "tags": ["db"]});
    let mut entries = Vec::new();
    for box_ in [&web, &db] {
        let sent = json!({"label": box_["label"], "tags": box_["tags"]});
        entries.push(har::entry(
            ORIGIN,
            "POST",
            "/v4/instances",
            Some(&sent),
            box_,
        ));
    }
    let mut listed = har::entry(
        ORIGIN,
        "GET",
        "/v4/instances?page=1",
        None,
        &json!({"data": [db.clone()], "page": 1, "pages": 1, "results": 1}),
    );
    listed["request"]["headers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "X-Filter", "value": r#"{"label": "store"}"#}));
    entries.push(listed);
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_filter_document_naming_an_array_field_selects_the_items_holding_the_value() {
    let t = tagged_twin();
    let server = t.serve(&[]);
    let s = Some("tags");
    for (label, tags) in [
        ("a", json!(["web"])),
        ("b", json!(["db", "web"])),
        ("c", json!([])),
    ] {
        server
            .post("/v4/instances", s, json!({"label": label, "tags": tags}))
            .await
            .assert_status(200);
    }
    let page = server
        .send(
            "GET",
            "/v4/instances?page=1&page_size=50",
            s,
            &[("X-Filter", r#"{"tags": "web"}"#)],
            None,
        )
        .await;
    page.assert_status(200);
    let body = page.json();
    let mut labels: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    labels.sort_unstable();
    assert_eq!(labels, vec!["a", "b", "front"], "{body}");
}

/// Two lists recorded filtered by `X-Filter`, and volumes, created and listed by two runs
/// without one.
fn volumes_twin() -> Twin {
    let t = Twin::init("volumes", ORIGIN);
    let filtered = |path: &str, filter: Value, item: Value| {
        har::with_header(
            har::entry(
                ORIGIN,
                "GET",
                path,
                None,
                &json!({"data": [item], "page": 1, "pages": 1, "results": 1}),
            ),
            "X-Filter",
            &filter.to_string(),
        )
    };
    let mut entries = vec![
        filtered(
            "/v4/instances",
            json!({"label": "web"}),
            json!({"id": 1, "label": "web"}),
        ),
        filtered(
            "/v4/domains",
            json!({"domain": "a.test"}),
            json!({"id": 5, "domain": "a.test"}),
        ),
    ];
    for (id, label) in [(100, "v1"), (101, "v2")] {
        let volume = json!({"id": id, "label": label, "size": 10});
        entries.push(har::entry(
            ORIGIN,
            "POST",
            "/v4/volumes",
            Some(&json!({"label": label})),
            &volume,
        ));
        entries.push(har::entry(
            ORIGIN,
            "GET",
            "/v4/volumes",
            None,
            &json!({"data": [volume], "page": 1, "pages": 1, "results": 1}),
        ));
    }
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_list_no_recording_filtered_takes_the_filter_header_its_apis_other_lists_did() {
    let t = volumes_twin();
    let route = har::model_route(&t, "GET", "/v4/volumes");
    assert_eq!(route["list"]["filter_header"], "x-filter", "{route}");
    let server = t.serve(&[]);
    let s = Some("vols");
    for label in ["mine", "other"] {
        server
            .post("/v4/volumes", s, json!({"label": label}))
            .await
            .assert_status(200);
    }
    let mine = server
        .send(
            "GET",
            "/v4/volumes",
            s,
            &[("X-Filter", r#"{"label": "mine"}"#)],
            None,
        )
        .await;
    mine.assert_status(200);
    let body = mine.json();
    let labels: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["label"].as_str().unwrap())
        .collect();
    assert!(labels.contains(&"mine"), "{body}");
    assert!(labels.iter().all(|l| *l == "mine"), "{body}");
    assert_eq!(body["results"], labels.len(), "{body}");
}
