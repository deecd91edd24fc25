//! `wraith serve` answering an array as the request sent it where the recorded answers
//! did: a filter created once with `context: ["home", "public"]`, answered with that very
//! array, answers a create sending `["notifications"]` with `["notifications"]`, not the
//! recorded two contexts. An array every run sent alike is echoed too
//! (`synth/src/array_echo.rs`); one some creates sent and the others were answered one default
//! for is echoed where sent and answered the default where not, and one sent as `null` is
//! answered `null`. One every recorded request sent is answered `[]` to a request leaving it
//! out (not another request's array). A scalar echo copies the request value at its own
//! position before another that happened to agree. Black-box: the real binary on HAR runs
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.filters.test";

#[tokio::test]
async fn an_array_the_only_recorded_create_answered_as_sent_is_echoed_from_the_request() {
    let t = Twin::init("filters", ORIGIN);
    let sent = json!({"title": "Spam", "context": ["home", "public"]});
    let answer = json!({"id": "1", "title": "Spam", "context": ["home", "public"]});
    har::import(
        &t,
        &[],
        "run.har",
        vec![har::entry(
            ORIGIN,
            "POST",
            "/v2/filters",
            Some(&sent),
            &answer,
        )],
    );
    har::synth(&t, &[]);
    let server = t.serve(&[]);
    let created = server
        .post(
            "/v2/filters",
            Some("s1"),
            json!({"title": "Eggs", "context": ["notifications"]}),
        )
        .await;
    created.assert_status(200);
    let body = created.json();
    assert_eq!(body["title"], "Eggs", "{body}");
    assert_eq!(body["context"], json!(["notifications"]), "{body}");
}

#[tokio::test]
async fn an_optional_array_answered_as_sent_and_else_empty_echoes_where_sent_and_defaults_where_not()
 {
    let t = Twin::init("filters", ORIGIN);
    let mut entries = Vec::new();
    // Three creates named no tags and were answered `[]`; one named two and got them back.
    for (i, tags) in [None, None, Some(json!(["web", "prod"])), None]
        .into_iter()
        .enumerate()
    {
        let mut sent = json!({"label": format!("box-{i}")});
        if let Some(tags) = &tags {
            sent["tags"] = tags.clone();
        }
        let answer = json!({"id": (i + 1).to_string(), "label": format!("box-{i}"),
                            "tags": tags.unwrap_or(json!([]))});
        entries.push(har::entry(
            ORIGIN,
            "POST",
            "/v1/boxes",
            Some(&sent),
            &answer,
        ));
    }
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    let server = t.serve(&[]);
    let tagged = server
        .post(
            "/v1/boxes",
            Some("s1"),
            json!({"label": "mine", "tags": ["db"]}),
        )
        .await;
    tagged.assert_status(200);
    assert_eq!(tagged.json()["tags"], json!(["db"]), "{}", tagged.json());
    let bare = server
        .post("/v1/boxes", Some("s1"), json!({"label": "plain"}))
        .await;
    bare.assert_status(200);
    assert_eq!(bare.json()["tags"], json!([]), "{}", bare.json());
}

#[tokio::test]
async fn an_array_every_recorded_create_sent_is_answered_empty_when_left_out() {
    let t = Twin::init("filters", ORIGIN);
    // Every recorded create named its tags, each its own.
    let entries = [json!(["web"]), json!(["db", "prod"])]
        .into_iter()
        .enumerate()
        .map(|(i, tags)| {
            let sent = json!({"label": format!("box-{i}"), "tags": tags});
            let answer = json!({"id": (i + 1).to_string(), "label": format!("box-{i}"),
                                "tags": tags});
            har::entry(ORIGIN, "POST", "/v1/boxes", Some(&sent), &answer)
        })
        .collect();
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    let server = t.serve(&[]);
    let bare = server
        .post("/v1/boxes", Some("s1"), json!({"label": "plain"}))
        .await;
    bare.assert_status(200);
    let body = bare.json();
    // Not another create's tags: this one sent none.
    assert_eq!(body["tags"], json!([]), "{body}");
    assert_eq!(body["label"], "plain", "{body}");
    let tagged = server
        .post(
            "/v1/boxes",
            Some("s1"),
            json!({"label": "mine", "tags": ["x"]}),
        )
        .await;
    assert_eq!(tagged.json()["tags"], json!(["x"]), "{}", tagged.json());
}

#[tokio::test]
async fn an_array_every_recorded_create_sent_alike_is_echoed_and_answered_empty_when_left_out() {
    let t = Twin::init("filters", ORIGIN);
    // Every recorded create sent the same tags and got them back.
    let entries = (0..3)
        .map(|i| {
            let sent = json!({"label": format!("k-{i}"), "tags": ["testing"]});
            let answer = json!({"id": (i + 1).to_string(), "label": format!("k-{i}"),
                                "tags": ["testing"]});
            har::entry(ORIGIN, "POST", "/v1/clusters", Some(&sent), &answer)
        })
        .collect();
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    let server = t.serve(&[]);
    let bare = server
        .post("/v1/clusters", Some("s1"), json!({"label": "plain"}))
        .await;
    bare.assert_status(200);
    assert_eq!(bare.json()["tags"], json!([]), "{}", bare.json());
    let tagged = server
        .post(
            "/v1/clusters",
            Some("s1"),
            json!({"label": "mine", "tags": ["prod", "eu"]}),
        )
        .await;
    assert_eq!(
        tagged.json()["tags"],
        json!(["prod", "eu"]),
        "{}",
        tagged.json()
    );
}

/// Firewall creates as a client sends them: most with one outbound rule whose `action` happens
/// to equal the `outbound_policy` sent beside it, some with `outbound: null`.
fn firewall_twin() -> Twin {
    let t = Twin::init("firewalls", ORIGIN);
    let rule = json!({"action": "ACCEPT", "label": "ssh", "ports": "22", "protocol": "TCP"});
    let mut entries = Vec::new();
    for (i, outbound) in [
        json!([rule.clone()]),
        json!(null),
        json!([rule.clone()]),
        json!([rule.clone()]),
        json!(null),
    ]
    .into_iter()
    .enumerate()
    {
        let rules = json!({"inbound_policy": if i % 2 == 0 { "DROP" } else { "ACCEPT" },
                           "outbound": outbound, "outbound_policy": "ACCEPT"});
        let sent = json!({"label": format!("fw-{i}"), "rules": rules});
        let answer = json!({"id": 100 + i, "label": format!("fw-{i}"), "rules": rules});
        entries.push(har::entry(
            ORIGIN,
            "POST",
            "/v4/firewalls",
            Some(&sent),
            &answer,
        ));
    }
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn rules_sent_as_an_array_or_null_are_answered_as_sent() {
    let t = firewall_twin();
    let server = t.serve(&[]);
    for outbound in [json!([]), json!(null)] {
        let created = server
            .post(
                "/v4/firewalls",
                Some("s1"),
                json!({"label": "mine", "rules": {"inbound_policy": "ACCEPT",
                                                   "outbound": outbound,
                                                   "outbound_policy": "ACCEPT"}}),
            )
            .await;
        created.assert_status(200);
        let body = created.json();
        assert_eq!(body["rules"]["outbound"], outbound, "{body}");
    }
}

/// Every recorded `outbound_policy` equalled the first outbound rule's `action` where a rule
/// was sent: the answer still echoes the request's own `outbound_policy`, which every request
/// carried.
#[tokio::test]
async fn a_policy_sent_beside_a_rule_whose_action_agreed_is_echoed_from_its_own_position() {
    let t = firewall_twin();
    let server = t.serve(&[]);
    let rule = json!({"action": "ACCEPT", "label": "web", "ports": "443", "protocol": "TCP"});
    let created = server
        .post(
            "/v4/firewalls",
            Some("s1"),
            json!({"label": "mine", "rules": {"inbound_policy": "ACCEPT", "outbound": [rule],
                                               "outbound_policy": "DROP"}}),
        )
        .await;
    created.assert_status(200);
    let body = created.json();
    assert_eq!(body["rules"]["outbound_policy"], "DROP", "{body}");
}

/// Every recorded create sent outbound rules, as an array or `null`: a create leaving them out
/// sent none, and is answered no rules rather than a recorded create's.
#[tokio::test]
async fn rules_every_recorded_create_sent_as_an_array_or_null_are_answered_empty_when_left_out() {
    let t = firewall_twin();
    let server = t.serve(&[]);
    let created = server
        .post(
            "/v4/firewalls",
            Some("s1"),
            json!({"label": "mine", "rules": {"inbound_policy": "ACCEPT",
                                               "outbound_policy": "ACCEPT"}}),
        )
        .await;
    created.assert_status(200);
    let body = created.json();
    assert_eq!(body["rules"]["outbound"], json!([]), "{body}");
}
