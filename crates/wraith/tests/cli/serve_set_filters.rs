//! `wraith serve` filtering a list by a repeated query parameter named unlike the field it
//! filters: recorded `types[]=…` pages listed only the events of those types and
//! `exclude_types[]=…` pages none of them, so a combination no recording sent lists the
//! session's collection (recorded events and its own) filtered the same way; and a multi-get
//! by ids (`id[]=…`) recorded once answers any other set of ids with just those records. A
//! parameter sent in the other spelling than recorded (`id[]=…` where the list knows `id`,
//! `id=…` where it knows `id[]`) filters the same way.
//! Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.events.test";

fn event(id: u32, kind: &str) -> Value {
    json!({"id": id.to_string(), "type": kind, "note": format!("{kind} {id}")})
}

/// Two runs, each creating a mention and a follow, then listing them (beside a mention and a
/// follow there before any recording) whole, by type kept and by type left out.
fn events_twin() -> Twin {
    let t = Twin::init("events", ORIGIN);
    for (run, day, m, f) in [("a", 1, 101, 102), ("b", 2, 201, 202)] {
        let list = |query: &str, items: Value| {
            har::entry(ORIGIN, "GET", &format!("/v1/events{query}"), None, &items)
        };
        let mut entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/v1/events",
                Some(&json!({"type": "mention"})),
                &event(m, "mention"),
            ),
            har::entry(
                ORIGIN,
                "POST",
                "/v1/events",
                Some(&json!({"type": "follow"})),
                &event(f, "follow"),
            ),
            list(
                "",
                json!([
                    event(11, "mention"),
                    event(12, "follow"),
                    event(m, "mention"),
                    event(f, "follow")
                ]),
            ),
            list(
                "?types%5B%5D=mention",
                json!([event(11, "mention"), event(m, "mention")]),
            ),
            list(
                "?exclude_types%5B%5D=mention",
                json!([event(12, "follow"), event(f, "follow")]),
            ),
        ];
        for e in &mut entries {
            e["startedDateTime"] = json!(format!("2026-06-0{day}T12:00:00.000Z"));
        }
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

fn kinds_and_ids(r: &support::Resp) -> Vec<(String, String)> {
    r.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_string(),
                e["id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Creates a `favourite` event in session `s`; its id.
async fn create_favourite(server: &support::Server, s: Option<&str>) -> String {
    let created = server
        .post("/v1/events", s, json!({"type": "favourite"}))
        .await;
    created.assert_status(200);
    created.json()["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_list_keeps_only_the_types_a_repeated_parameter_names() {
    let t = events_twin();
    let server = t.serve(&[]);
    let s = Some("filtering");
    let mine = create_favourite(&server, s).await;

    // No recording sent this combination.
    let page = server
        .get("/v1/events?types%5B%5D=favourite&types%5B%5D=follow", s)
        .await;
    page.assert_status(200);
    let listed = kinds_and_ids(&page);
    assert!(
        listed
            .iter()
            .all(|(k, _)| k == "favourite" || k == "follow"),
        "{listed:?}"
    );
    assert!(listed.iter().any(|(_, id)| *id == mine), "{listed:?}");
    assert!(listed.iter().any(|(k, _)| k == "follow"), "{listed:?}");
}

#[tokio::test]
async fn a_list_leaves_out_the_types_an_excluding_parameter_names() {
    let t = events_twin();
    let server = t.serve(&[]);
    let s = Some("excluding");
    let mine = create_favourite(&server, s).await;

    let page = server
        .get(
            "/v1/events?exclude_types%5B%5D=favourite&exclude_types%5B%5D=follow",
            s,
        )
        .await;
    page.assert_status(200);
    let listed = kinds_and_ids(&page);
    assert!(!listed.is_empty(), "the recorded mentions stay listed");
    assert!(listed.iter().all(|(k, _)| k == "mention"), "{listed:?}");
    assert!(listed.iter().all(|(_, id)| *id != mine), "{listed:?}");

    // Unfiltered, the session's own event is listed with the rest.
    let all = kinds_and_ids(&server.get("/v1/events", s).await);
    assert!(all.iter().any(|(_, id)| *id == mine), "{all:?}");
}

#[tokio::test]
async fn a_recorded_filtered_page_takes_in_only_the_session_records_its_filter_keeps() {
    let t = events_twin();
    let server = t.serve(&[]);
    let s = Some("merging");
    let mine = create_favourite(&server, s).await;
    // A query the recordings sent: its recorded page is replayed with the session's writes
    // merged in, and a favourite is no mention.
    let page = server.get("/v1/events?types%5B%5D=mention", s).await;
    page.assert_status(200);
    let listed = kinds_and_ids(&page);
    assert!(!listed.is_empty(), "{listed:?}");
    assert!(listed.iter().all(|(k, _)| k == "mention"), "{listed:?}");
    assert!(listed.iter().all(|(_, id)| *id != mine), "{listed:?}");
    let page = server
        .get("/v1/events?exclude_types%5B%5D=mention", s)
        .await;
    let listed = kinds_and_ids(&page);
    assert!(listed.iter().any(|(_, id)| *id == mine), "{listed:?}");
    assert!(listed.iter().all(|(k, _)| k != "mention"), "{listed:?}");
}

/// Two runs, `a` on day 1 and `b` on day 2, each creating three records at `path` (keys from
/// 301 and from 401), then sending what `then(run, first key, record)` lists.
fn two_runs_of_three(
    twin: &str,
    path: &str,
    field: &str,
    then: impl Fn(&str, u32, &dyn Fn(u32) -> Value) -> Vec<Value>,
) -> Twin {
    let t = Twin::init(twin, ORIGIN);
    let record = |id: u32| json!({"id": id.to_string(), field: format!("r{id}")});
    for (run, day, first) in [("a", 1, 301), ("b", 2, 401)] {
        let mut entries: Vec<Value> = (first..first + 3)
            .map(|id| {
                let sent = json!({field: format!("r{id}")});
                har::entry(ORIGIN, "POST", path, Some(&sent), &record(id))
            })
            .collect();
        entries.extend(then(run, first, &record));
        for e in &mut entries {
            e["startedDateTime"] = json!(format!("2026-06-0{day}T12:00:00.000Z"));
        }
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

/// Two runs creating three accounts each; one multi-get by two ids, recorded once.
fn accounts_twin() -> Twin {
    two_runs_of_three("accounts", "/v1/accounts", "acct", |run, _, acct| {
        if run != "a" {
            return Vec::new();
        }
        let query = "/v1/accounts?id%5B%5D=301&id%5B%5D=302";
        vec![har::entry(
            ORIGIN,
            "GET",
            query,
            None,
            &json!([acct(301), acct(302)]),
        )]
    })
}

#[tokio::test]
async fn a_multi_get_by_ids_no_recording_sent_lists_just_those_records() {
    let t = accounts_twin();
    let server = t.serve(&[]);
    let s = Some("multi-get");
    let created = server
        .post("/v1/accounts", s, json!({"acct": "newcomer"}))
        .await;
    created.assert_status(200);
    let mine = created.json()["id"].as_str().unwrap().to_string();

    let page = server
        .get(&format!("/v1/accounts?id%5B%5D=402&id%5B%5D={mine}"), s)
        .await;
    page.assert_status(200);
    let mut want = vec!["402".to_string(), mine];
    want.sort();
    assert_eq!(sorted_ids(&page), want);
}

/// Two runs creating three widgets each, listing them whole and by one `id` (an equality
/// filter: the list was never asked with `id[]`).
fn widgets_twin() -> Twin {
    two_runs_of_three("widgets", "/v1/widgets", "name", |_, first, widget| {
        let all = json!([widget(first), widget(first + 1), widget(first + 2)]);
        let by_id = format!("/v1/widgets?id={}", first + 1);
        vec![
            har::entry(ORIGIN, "GET", "/v1/widgets", None, &all),
            har::entry(ORIGIN, "GET", &by_id, None, &json!([widget(first + 1)])),
        ]
    })
}

fn sorted_ids(r: &support::Resp) -> Vec<String> {
    let mut ids: Vec<String> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn a_filter_parameter_spelled_as_an_array_filters_by_every_value_sent() {
    let t = widgets_twin();
    let server = t.serve(&[]);
    let s = Some("brackets");
    let mut mine = Vec::new();
    for name in ["x", "y", "z"] {
        let created = server.post("/v1/widgets", s, json!({"name": name})).await;
        created.assert_status(200);
        mine.push(created.json()["id"].as_str().unwrap().to_string());
    }
    let page = server
        .get(
            &format!("/v1/widgets?id%5B%5D={}&id%5B%5D={}", mine[0], mine[2]),
            s,
        )
        .await;
    page.assert_status(200);
    let mut want = vec![mine[0].clone(), mine[2].clone()];
    want.sort();
    assert_eq!(sorted_ids(&page), want);
    let none = server.get("/v1/widgets?id%5B%5D=999", s).await;
    none.assert_status(200);
    assert!(sorted_ids(&none).is_empty(), "{}", none.json());
}

#[tokio::test]
async fn a_set_filter_sent_without_its_brackets_filters_by_the_bare_parameter() {
    let t = accounts_twin();
    let server = t.serve(&[]);
    let page = server.get("/v1/accounts?id=402", Some("bare")).await;
    page.assert_status(200);
    assert_eq!(sorted_ids(&page), vec!["402"]);
}
