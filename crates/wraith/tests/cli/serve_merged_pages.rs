//! A recorded list page the session's own records are merged into shows each record once, as
//! its own read shows it. The bundled shop twin's `GET /customers` was recorded after a create
//! whose email the page repeats, so the model marks that position session-authored; a session
//! whose create was answered with an id of its own (not replayed) lists its record beside the
//! recorded one, and the recorded one keeps its own values. Before, the recorded customer was
//! given the session's email too: the session saw its email twice, once on a customer whose
//! own read answered another. Black-box: the real binary on the example twin.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;

#[tokio::test]
async fn a_merged_page_shows_the_sessions_record_once_and_recorded_ones_as_they_read() {
    let t = support::example_shop_twin();
    let out = t.wraith(&["synth", &t.path_str()]);
    assert!(out.status.success(), "{out:?}");
    let s = t.serve(&[]);
    let email = "zed@nowhere.example";
    let created = s
        .post(
            "/customers",
            Some("merged"),
            json!({"name": "Zed", "email": email}),
        )
        .await;
    assert!(created.status < 300, "{}", created.status);
    let own_id = created.json()["id"].as_str().unwrap().to_string();

    let page = s.get("/customers", Some("merged")).await;
    page.assert_status(200);
    let items = page.json()["data"].as_array().unwrap().clone();
    let with_email: Vec<&str> = items
        .iter()
        .filter(|c| c["email"] == email)
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(with_email, [own_id.as_str()], "{items:#?}");
    // Every listed record reads back as it is listed.
    for item in &items {
        let id = item["id"].as_str().unwrap();
        let read = s.get(&format!("/customers/{id}"), Some("merged")).await;
        read.assert_status(200);
        assert_eq!(read.json()["email"], item["email"], "{id}");
    }
}
