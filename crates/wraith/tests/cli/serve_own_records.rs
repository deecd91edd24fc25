//! A list whose every recording showed only the records its own session had created
//! (`ListShape::own_records_only`: each recorded test started from an empty collection) lists
//! a session's own records only: a fresh session lists none, not another recording's; a
//! session that created some lists those, paged from its store; a request the twin refused
//! leaves the list empty. A list or a create under a parent the session does not hold answers
//! the recorded 404, and a read recorded only refusing reads back the session's own part. And
//! `wraith check --holdout` passes the held-out sessions of such an API.
//! Black-box: the real binary on a widgets twin built from HARs written here, each a
//! fresh-store session.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::process::Command;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "own-records-test-key");
const ORIGIN: &str = "https://api.widgets.test";

fn widget(id: &str, name: &str) -> Value {
    json!({"id": id, "object": "widget", "name": name})
}

/// Recorded session `n` of 6, against a store reset before it: creates `n % 3 + 1` widgets
/// (listing after the first), asks for the second page of one, creates and lists a part of
/// its first widget and tries both under a widget nobody made (404), reads that widget (404),
/// lists again; every other session lists once more before creating anything.
fn record(t: &Twin, n: u64) {
    let mut entries = Vec::new();
    let mut made: Vec<Value> = Vec::new();
    if n.is_multiple_of(2) {
        entries.push(har::entry(
            ORIGIN,
            "GET",
            "/v1/widgets",
            None,
            &json!({"data": [], "total": 0}),
        ));
    }
    for k in 0..(n % 3 + 1) {
        let id = format!("wid_{n:02}{k:02}x7Kq9Lm2Rt");
        let name = format!("widget {n}.{k}");
        let w = widget(&id, &name);
        entries.push(har::with_status(
            har::entry(
                ORIGIN,
                "POST",
                "/v1/widgets",
                Some(&json!({"name": name})),
                &w,
            ),
            201,
        ));
        made.push(w);
        if k == 0 {
            entries.push(har::entry(
                ORIGIN,
                "GET",
                "/v1/widgets",
                None,
                &json!({"data": made.clone(), "total": made.len()}),
            ));
        }
    }
    // The second page of one: the session's second widget, when it made one.
    entries.push(har::entry(
        ORIGIN,
        "GET",
        "/v1/widgets?limit=1&offset=1",
        None,
        &json!({"data": made.iter().skip(1).take(1).cloned().collect::<Vec<_>>(),
                "total": made.len()}),
    ));
    let missing = format!("wid_{n:02}99zzzzzzzzzz");
    // A part of the first widget, listed under it; under a widget nobody made, a 404.
    let first = made[0]["id"].as_str().unwrap().to_string();
    let part = json!({"id": format!("prt_{n:02}00Tq3Wn8Ke"), "widget_id": first, "label": "bolt"});
    entries.push(har::with_status(
        har::entry(
            ORIGIN,
            "POST",
            &format!("/v1/widgets/{first}/parts"),
            Some(&json!({"label": "bolt"})),
            &part,
        ),
        201,
    ));
    entries.push(har::entry(
        ORIGIN,
        "GET",
        &format!("/v1/widgets/{first}/parts"),
        None,
        &json!({"data": [part]}),
    ));
    // A part nobody made, read at its own path: the only reads of `/v1/parts/:id` recorded.
    let no_part = format!("prt_{n:02}99Zq8YwXvU");
    entries.push(har::with_status(
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/parts/{no_part}"),
            None,
            &json!({"error": {"message": format!("no part {no_part}")}}),
        ),
        404,
    ));
    for method in ["POST", "GET"] {
        let body = (method == "POST").then(|| json!({"label": "bolt"}));
        entries.push(har::with_status(
            har::entry(
                ORIGIN,
                method,
                &format!("/v1/widgets/{missing}/parts"),
                body.as_ref(),
                &json!({"error": {"message": format!("no widget {missing}")}}),
            ),
            404,
        ));
    }
    entries.push(har::with_status(
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/widgets/{missing}"),
            None,
            &json!({"error": {"message": format!("no widget {missing}")}}),
        ),
        404,
    ));
    entries.push(har::entry(
        ORIGIN,
        "GET",
        "/v1/widgets",
        None,
        &json!({"data": made.clone(), "total": made.len()}),
    ));
    har::import(t, &[KEY], &format!("session-{n}.har"), entries);
}

fn twin() -> Twin {
    har::synth_twin("widgets", ORIGIN, &[KEY], 6, record)
}

fn ids(list: &Value) -> Vec<String> {
    support::item_ids(&list["data"])
}

#[tokio::test]
async fn a_list_every_recording_filled_only_with_its_own_creates_lists_a_sessions_own_records() {
    let t = twin();
    let list_route = har::model_route(&t, "GET", "/v1/widgets");
    assert_eq!(list_route["list"]["own_records_only"], json!(true));

    let s = t.serve_env(&[], &[KEY]);
    // A fresh session lists nothing: every recorded list held only its own session's creates.
    let fresh = s.get("/v1/widgets", Some("fresh")).await;
    fresh.assert_status(200);
    assert_eq!(fresh.json(), json!({"data": [], "total": 0}));

    // A session that refused a read first still lists nothing of another recording's.
    s.get("/v1/widgets/wid_nobodyMadeThis1", Some("refused"))
        .await
        .assert_status(404);
    let after_refusal = s.get("/v1/widgets", Some("refused")).await;
    assert_eq!(ids(&after_refusal.json()), Vec::<String>::new());
    assert_eq!(after_refusal.json()["total"], json!(0));

    // A session that creates lists exactly what it created, in order; another session does
    // not see them.
    let mut mine = Vec::new();
    for name in ["left", "right"] {
        let r = s
            .post("/v1/widgets", Some("maker"), json!({"name": name}))
            .await;
        r.assert_status(201);
        mine.push(r.json()["id"].as_str().unwrap().to_string());
    }
    let listed = s.get("/v1/widgets", Some("maker")).await.json();
    assert_eq!(ids(&listed), mine);
    assert_eq!(listed["total"], json!(2));
    assert_eq!(
        ids(&s.get("/v1/widgets", Some("fresh")).await.json()),
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn a_page_of_a_sessions_own_records_is_paged_from_its_store() {
    let t = twin();
    let s = t.serve_env(&[], &[KEY]);
    let mut mine = Vec::new();
    for name in ["one", "two", "three"] {
        let r = s
            .post("/v1/widgets", Some("pager"), json!({"name": name}))
            .await;
        r.assert_status(201);
        mine.push(r.json()["id"].as_str().unwrap().to_string());
    }
    // No recorded page holds these widgets: the page is the session's second of three.
    let page = s.get("/v1/widgets?limit=1&offset=1", Some("pager")).await;
    page.assert_status(200);
    let page = page.json();
    assert_eq!(ids(&page), vec![mine[1].clone()], "{page}");
    assert_eq!(page["total"], json!(3), "{page}");
}

#[tokio::test]
async fn a_list_or_create_under_a_parent_the_session_does_not_hold_answers_the_recorded_404() {
    let t = twin();
    let s = t.serve_env(&[], &[KEY]);
    let nobody = "/v1/widgets/wid_nobodyMadeThis1/parts";
    let created = s.post(nobody, Some("parts"), json!({"label": "nut"})).await;
    created.assert_status(404);
    assert!(
        created.json()["error"]["message"].is_string(),
        "{:?}",
        created.json()
    );
    s.get(nobody, Some("parts")).await.assert_status(404);

    let widget = s
        .post("/v1/widgets", Some("parts"), json!({"name": "holder"}))
        .await
        .json();
    let under = format!("/v1/widgets/{}/parts", widget["id"].as_str().unwrap());
    let part = s.post(&under, Some("parts"), json!({"label": "nut"})).await;
    part.assert_status(201);
    assert_eq!(part.json()["widget_id"], widget["id"]);
    let listed = s.get(&under, Some("parts")).await;
    listed.assert_status(200);
    assert_eq!(listed.json()["data"][0]["id"], part.json()["id"]);
    // Another session does not hold the widget either.
    s.post(&under, Some("stranger"), json!({"label": "nut"}))
        .await
        .assert_status(404);
}

#[tokio::test]
async fn a_read_recorded_only_refusing_reads_back_the_part_the_session_created() {
    let t = twin();
    let s = t.serve_env(&[], &[KEY]);
    let widget = s
        .post("/v1/widgets", Some("reader"), json!({"name": "holder"}))
        .await
        .json();
    let part = s
        .post(
            &format!("/v1/widgets/{}/parts", widget["id"].as_str().unwrap()),
            Some("reader"),
            json!({"label": "nut"}),
        )
        .await
        .json();
    let id = part["id"].as_str().unwrap();
    // Every recorded `GET /v1/parts/:id` was a 404 for a part nobody made; the ids asked for
    // look like the parts' own, so the route reads them.
    let read = s.get(&format!("/v1/parts/{id}"), Some("reader")).await;
    read.assert_status(200);
    assert_eq!(read.json(), part);
    s.get(&format!("/v1/parts/{id}"), Some("stranger"))
        .await
        .assert_status(404);
    s.get("/v1/parts/prt_01Xx8YwXvUtS", Some("reader"))
        .await
        .assert_status(404);
}

#[test]
fn held_out_sessions_of_an_api_whose_tests_start_empty_pass_check() {
    let t = twin();
    let out = Command::new(support::bin())
        .current_dir(t.tmp.path())
        .env(KEY.0, KEY.1)
        .args(["check", &t.path_str(), "--holdout", "3", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}",
            String::from_utf8_lossy(&out.stderr)
                .chars()
                .take(2000)
                .collect::<String>()
        )
    });
    let failing: Vec<&Value> = report["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["score_bp"] != json!(10000))
        .collect();
    assert!(failing.is_empty(), "{failing:#?}");
    assert_eq!(report["score_bp"], json!(10000));
    assert!(out.status.success());
}
