//! `wraith serve` applying an equality filter one of whose values filters nothing: recorded
//! runs list their tickets with `?state=open`, `?state=closed` and `?state=all`, the last
//! answered with open and closed tickets alike. A session's `?state=all` lists every ticket it
//! holds, `?state=closed` only the one it closed. Black-box: the real binary on HAR runs
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.tickets.test";

fn ticket(id: u64, state: &str) -> Value {
    json!({"id": id, "title": format!("ticket {id}"), "state": state})
}

/// A `GET /v1/tickets` with `query`, answered `items`.
fn list(query: &str, items: Vec<Value>) -> Value {
    let path = if query.is_empty() {
        "/v1/tickets".to_string()
    } else {
        format!("/v1/tickets?{query}")
    };
    let mut e = har::entry(ORIGIN, "GET", &path, None, &Value::Array(items));
    if let Some((name, value)) = query.split_once('=') {
        e["request"]["queryString"] = json!([{"name": name, "value": value}]);
    }
    e
}

/// Three runs, each creating two tickets, closing the first, and listing them unfiltered and
/// by each state.
fn tickets_twin() -> Twin {
    let t = Twin::init("tickets", ORIGIN);
    for run in 1..=3u64 {
        let (a, b) = (run * 10, run * 10 + 1);
        let create = |id: u64| {
            har::entry(
                ORIGIN,
                "POST",
                "/v1/tickets",
                Some(&json!({"title": format!("ticket {id}")})),
                &ticket(id, "open"),
            )
        };
        let entries = vec![
            create(a),
            create(b),
            har::entry(
                ORIGIN,
                "PATCH",
                &format!("/v1/tickets/{a}"),
                Some(&json!({"state": "closed"})),
                &ticket(a, "closed"),
            ),
            list("", vec![ticket(a, "closed"), ticket(b, "open")]),
            list("state=open", vec![ticket(b, "open")]),
            list("state=closed", vec![ticket(a, "closed")]),
            list("state=all", vec![ticket(a, "closed"), ticket(b, "open")]),
        ];
        har::import(&t, &[], &format!("run{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

fn ids(r: &support::Resp) -> Vec<String> {
    r.json()
        .as_array()
        .unwrap_or_else(|| panic!("a list: {}", r.json()))
        .iter()
        .map(|t| har::key_text(&t["id"]))
        .collect()
}

#[tokio::test]
async fn a_filter_value_that_filters_nothing_lists_every_ticket_of_the_session() {
    let t = tickets_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let mut made = Vec::new();
    for title in ["first", "second", "third"] {
        let r = server.post("/v1/tickets", s, json!({"title": title})).await;
        r.assert_status(200);
        made.push(har::key_text(&r.json()["id"]));
    }
    server
        .send(
            "PATCH",
            &format!("/v1/tickets/{}", made[0]),
            s,
            &[],
            Some(json!({"state": "closed"})),
        )
        .await
        .assert_status(200);
    let mut all = ids(&server.get("/v1/tickets?state=all", s).await);
    all.sort();
    let mut want = made.clone();
    want.sort();
    assert_eq!(all, want);
    assert_eq!(
        ids(&server.get("/v1/tickets?state=closed", s).await),
        vec![made[0].clone()]
    );
    assert_eq!(ids(&server.get("/v1/tickets?state=open", s).await).len(), 2);
}
