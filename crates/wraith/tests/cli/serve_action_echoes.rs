//! An action whose answer is the record it acts on, rendered from a template that echoes a
//! field the request sent: the answer shows what was sent, not the value the session held
//! before, and the session holds it from then on. In the recordings an item's `label` action
//! answers the item with the label each run sent (no later read shows it), and `star`
//! answers it starred. A session that stars its item and then labels it sees its label and
//! its star in the label's answer, and its label in the next read. Black-box: the real binary
//! on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "action-echoes-test-key");
const ORIGIN: &str = "https://api.items.test";

/// Session `n`: create item `100 + n`, read it, star it, read it, label it `label-n`.
fn items_twin() -> Twin {
    har::synth_twin("items", ORIGIN, &[KEY], 3, |t, n| {
        let id = 100 + n;
        let path = format!("/v1/items/{id}");
        let item = |starred: bool, label: &str| json!({"id": id, "name": format!("item-{n}"), "starred": starred, "label": label});
        let e = |method: &str, p: &str, body: Option<&Value>, answer: &Value| {
            har::entry(ORIGIN, method, p, body, answer)
        };
        let label = format!("label-{n}");
        let entries = vec![
            e(
                "POST",
                "/v1/items",
                Some(&json!({"name": format!("item-{n}")})),
                &item(false, ""),
            ),
            e("GET", &path, None, &item(false, "")),
            e("POST", &format!("{path}/star"), None, &item(true, "")),
            e("GET", &path, None, &item(true, "")),
            e(
                "POST",
                &format!("{path}/label"),
                Some(&json!({"label": label})),
                &item(true, &label),
            ),
        ];
        har::import(t, &[KEY], &format!("s{n}.har"), entries);
    })
}

/// Create the session's item `mine` and star it: its path.
async fn starred_item(server: &support::Server, s: Option<&str>) -> String {
    let created = server.post("/v1/items", s, json!({"name": "mine"})).await;
    created.assert_status(200);
    let path = format!("/v1/items/{}", created.json()["id"]);
    server
        .post(&format!("{path}/star"), s, json!({}))
        .await
        .assert_status(200);
    path
}

#[tokio::test]
async fn an_action_answers_the_sent_value_its_template_echoes_over_the_held_one() {
    let t = items_twin();
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-1");
    let path = starred_item(&server, s).await;
    let labelled = server
        .post(&format!("{path}/label"), s, json!({"label": "urgent"}))
        .await;
    labelled.assert_status(200);
    let body = labelled.json();
    assert_eq!(body["label"], "urgent", "{body}");
    assert_eq!(body["name"], "mine", "the session's item: {body}");
    assert_eq!(body["starred"], true, "as the session holds it: {body}");
}

#[tokio::test]
async fn a_sent_value_an_action_echoes_is_held_for_later_reads() {
    let t = items_twin();
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-1");
    let path = starred_item(&server, s).await;
    server
        .post(&format!("{path}/label"), s, json!({"label": "urgent"}))
        .await
        .assert_status(200);
    let read = server.get(&path, s).await;
    read.assert_status(200);
    let body = read.json();
    assert_eq!(body["label"], "urgent", "{body}");
    assert_eq!(body["starred"], true, "{body}");
    let other = server.get(&path, Some("agent-2")).await;
    assert_ne!(
        other.json()["label"],
        "urgent",
        "another session: {}",
        other.json()
    );
}
