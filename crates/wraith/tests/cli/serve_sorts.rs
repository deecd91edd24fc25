//! A list the recordings answered ordered by the field a query value names (`sort=name`,
//! `sort=-rank`) lists the session's records in that order; without it, in the order they
//! were made. Black-box: the real binary on a widgets twin built from HARs written here, each
//! a fresh-store session.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "sorts-test-key");
const ORIGIN: &str = "https://api.widgets.test";

/// Recorded session `n`: creates three widgets (names and ranks in no order), lists them as
/// made, by name and by rank, largest first.
fn record(t: &Twin, n: u64) {
    let names = [("mike", 2), ("alpha", 7), ("kilo", 4)];
    let mut made: Vec<Value> = Vec::new();
    let mut entries = Vec::new();
    for (k, (name, rank)) in names.iter().enumerate() {
        let name = format!("{name}-{n}");
        let rank = rank + n;
        let w = json!({"id": format!("wid_{n:02}{k:02}Kq9Lm2Rt"), "name": name, "rank": rank});
        let mut e = har::entry(
            ORIGIN,
            "POST",
            "/v1/widgets",
            Some(&json!({"name": name, "rank": rank})),
            &w,
        );
        e["response"]["status"] = json!(201);
        entries.push(e);
        made.push(w);
    }
    let list = |query: &str, items: &[Value]| {
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/widgets{query}"),
            None,
            &json!({"data": items}),
        )
    };
    entries.push(list("", &made));
    let mut by_name = made.clone();
    by_name.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    entries.push(list("?sort=name", &by_name));
    let mut by_rank = made.clone();
    by_rank.sort_by(|a, b| b["rank"].as_u64().cmp(&a["rank"].as_u64()));
    entries.push(list("?sort=-rank", &by_rank));
    har::import(t, &[KEY], &format!("session-{n}.har"), entries);
}

fn names(v: &Value) -> Vec<&str> {
    v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_learned_sort_orders_the_sessions_records_and_no_sort_keeps_their_order() {
    let t = har::synth_twin("widgets", ORIGIN, &[KEY], 4, record);
    let s = t.serve_env(&[], &[KEY]);
    for (name, rank) in [("papa", 1), ("echo", 9), ("golf", 5), ("zulu", 3)] {
        s.post(
            "/v1/widgets",
            Some("x"),
            json!({"name": name, "rank": rank}),
        )
        .await
        .assert_status(201);
    }
    let plain = s.get("/v1/widgets", Some("x")).await;
    plain.assert_status(200);
    assert_eq!(names(&plain.json()), ["papa", "echo", "golf", "zulu"]);
    let by_name = s.get("/v1/widgets?sort=name", Some("x")).await.json();
    assert_eq!(names(&by_name), ["echo", "golf", "papa", "zulu"]);
    let by_rank = s.get("/v1/widgets?sort=-rank", Some("x")).await.json();
    assert_eq!(names(&by_rank), ["echo", "golf", "zulu", "papa"]);
}

#[tokio::test]
async fn records_tied_on_a_descending_sort_list_newest_first() {
    // Ranks tie as timestamps stamped within one clock tick do: a descending sort lists the
    // later-made record first, an ascending one the earlier.
    let t = har::synth_twin("widgets", ORIGIN, &[KEY], 4, record);
    let s = t.serve_env(&[], &[KEY]);
    for (name, rank) in [("papa", 4), ("echo", 4), ("golf", 8)] {
        s.post(
            "/v1/widgets",
            Some("x"),
            json!({"name": name, "rank": rank}),
        )
        .await
        .assert_status(201);
    }
    let by_rank = s.get("/v1/widgets?sort=-rank", Some("x")).await.json();
    assert_eq!(names(&by_rank), ["golf", "echo", "papa"]);
}
