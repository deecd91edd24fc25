//! `wraith serve` answering a create with fields of the record a request field or its path
//! names: an instance created with a plan no recorded create chose answers that plan's memory
//! and cores, as the recorded catalogue of plans holds them, where the twin used to answer a
//! recorded create's, and an address allocated under the session's instance answers that
//! instance's region (`synth/src/named_record_copies.rs`). Black-box: the real binary on HAR
//! runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.machines.test";

fn plan(id: &str, memory: u64, vcpus: u64) -> Value {
    json!({"id": id, "label": id.to_uppercase(), "memory": memory, "vcpus": vcpus, "price": 5})
}

/// A catalogue of three plans and creates choosing two of them.
fn machines(t: &Twin) {
    let mut entries = vec![har::entry(
        ORIGIN,
        "GET",
        "/v4/plans",
        None,
        &json!({"data": [plan("small", 1024, 1), plan("medium", 4096, 2), plan("large", 16384, 6)],
                "page": 1, "pages": 1, "results": 3}),
    )];
    for (i, (label, chosen, memory, vcpus)) in [
        ("a", "small", 1024, 1),
        ("b", "large", 16384, 6),
        ("c", "small", 1024, 1),
        ("d", "small", 1024, 1),
    ]
    .into_iter()
    .enumerate()
    {
        entries.push(har::entry(
            ORIGIN,
            "POST",
            "/v4/instances",
            Some(&json!({"label": label, "type": chosen})),
            &json!({"id": 100 + i, "label": label, "type": chosen, "status": "provisioning",
                    "specs": {"memory": memory, "vcpus": vcpus}}),
        ));
    }
    har::import(t, &[], "run.har", entries);
    har::synth(t, &[]);
}

#[tokio::test]
async fn a_create_naming_a_plan_no_create_chose_answers_that_plans_recorded_fields() {
    let t = Twin::init("machines", ORIGIN);
    machines(&t);
    let server = t.serve(&[]);
    let created = server
        .post(
            "/v4/instances",
            Some("s1"),
            json!({"label": "mine", "type": "medium"}),
        )
        .await;
    created.assert_status(200);
    let body = created.json();
    assert_eq!(body["specs"], json!({"memory": 4096, "vcpus": 2}), "{body}");
    assert_eq!(body["type"], "medium");
    // A plan the recordings never listed keeps the rendered values.
    let unknown = server
        .post(
            "/v4/instances",
            Some("s1"),
            json!({"label": "odd", "type": "huge"}),
        )
        .await;
    unknown.assert_status(200);
    assert!(
        unknown.json()["specs"]["memory"].is_u64(),
        "{}",
        unknown.json()
    );
}

#[tokio::test]
async fn the_copied_positions_are_written_in_the_model() {
    let t = Twin::init("machines", ORIGIN);
    machines(&t);
    let route = har::model_route(&t, "POST", "/v4/instances");
    assert_eq!(
        route["named_record_copies"],
        json!({"field": "type", "entity_type": "plans", "copies": [
            {"at": "/specs/memory", "key": "memory"},
            {"at": "/specs/vcpus", "key": "vcpus"}
        ]}),
        "{route}"
    );
}

const SOCIAL: &str = "https://social.test";

fn post(id: &str, author: &str, text: &str, parent: Option<(&str, &str)>) -> Value {
    json!({"id": id, "content": text, "visibility": "public",
           "account": {"id": author, "username": format!("user{author}")},
           "in_reply_to_id": parent.map(|p| p.0),
           "in_reply_to_account_id": parent.map(|p| p.1)})
}

/// Posts by two authors, replies to each naming the parent's author, and reads of both
/// authors (so their ids are known as records' keys).
fn social(t: &Twin) {
    let mut entries = Vec::new();
    for author in ["501", "502"] {
        entries.push(har::entry(
            SOCIAL,
            "GET",
            &format!("/api/accounts/{author}"),
            None,
            &json!({"id": author, "username": format!("user{author}")}),
        ));
    }
    for (id, author, text) in [("1001", "501", "first"), ("1002", "502", "second")] {
        entries.push(har::entry(
            SOCIAL,
            "POST",
            "/api/statuses",
            Some(&json!({"status": text})),
            &post(id, author, text, None),
        ));
    }
    // Every reply is by the other author, so its own author never names the parent's.
    for (id, author, text, parent, parent_author) in [
        ("1003", "502", "re first", "1001", "501"),
        ("1004", "501", "re second", "1002", "502"),
        ("1005", "502", "again first", "1001", "501"),
    ] {
        entries.push(har::entry(
            SOCIAL,
            "POST",
            "/api/statuses",
            Some(&json!({"status": text, "in_reply_to_id": parent})),
            &post(id, author, text, Some((parent, parent_author))),
        ));
    }
    har::import(t, &[], "run.har", entries);
    har::synth(t, &[]);
}

#[tokio::test]
async fn a_reply_names_the_author_of_the_post_it_replies_to() {
    let t = Twin::init("social", SOCIAL);
    social(&t);
    let route = har::model_route(&t, "POST", "/api/statuses");
    assert_eq!(
        route["named_record_copies"],
        json!({"field": "in_reply_to_id", "entity_type": "statuses", "copies": [
            {"at": "/in_reply_to_account_id", "key": "account", "within": "/id"}
        ]}),
        "a field the parent shares by chance (`visibility`) is not copied: {route}"
    );
    let server = t.serve(&[]);
    // Replies to recorded posts, with text no recording sent: each names its parent's author.
    for (parent, author) in [("1002", "502"), ("1001", "501")] {
        let reply = server
            .post(
                "/api/statuses",
                Some("s1"),
                json!({"status": "a new reply", "in_reply_to_id": parent}),
            )
            .await;
        reply.assert_status(200);
        let body = reply.json();
        assert_eq!(body["in_reply_to_id"], parent, "{body}");
        assert_eq!(body["in_reply_to_account_id"], author, "{body}");
    }
    // A reply to the session's own post names the author that post was answered with.
    let mine = server
        .post("/api/statuses", Some("s2"), json!({"status": "my own"}))
        .await;
    mine.assert_status(200);
    let mine = mine.json();
    let reply = server
        .post(
            "/api/statuses",
            Some("s2"),
            json!({"status": "my reply", "in_reply_to_id": mine["id"]}),
        )
        .await;
    reply.assert_status(200);
    assert_eq!(
        reply.json()["in_reply_to_account_id"],
        mine["account"]["id"],
        "{}",
        reply.json()
    );
}

fn account(id: &str, name: &str, locked: bool, note: &str) -> Value {
    json!({"id": id, "username": name, "acct": name, "locked": locked, "note": note,
           "display_name": name.to_uppercase(), "statuses_count": 4})
}

/// One report of a recorded account, whose answer embeds that account as `target_account`,
/// and reads of two accounts (so both are recorded records).
fn reports(t: &Twin) {
    let ann = account("601", "ann", true, "<p>hi</p>");
    let bob = account("602", "bob", false, "<p>yo</p>");
    let mut entries = Vec::new();
    for a in [&ann, &bob] {
        let path = format!("/api/accounts/{}", a["id"].as_str().unwrap());
        entries.push(har::entry(SOCIAL, "GET", &path, None, a));
    }
    entries.push(har::entry(
        SOCIAL,
        "POST",
        "/api/reports",
        Some(&json!({"account_id": "601", "comment": "spam"})),
        &json!({"id": "1", "comment": "spam", "category": "other", "target_account": ann}),
    ));
    har::import(t, &[], "reports.har", entries);
    har::synth(t, &[]);
}

#[tokio::test]
async fn a_report_embeds_the_account_its_account_id_names_from_one_recording() {
    let t = Twin::init("social", SOCIAL);
    reports(&t);
    let route = har::model_route(&t, "POST", "/api/reports");
    assert_eq!(
        route["named_record_copies"]["field"], "account_id",
        "{route}"
    );
    let server = t.serve(&[]);
    let report = server
        .post(
            "/api/reports",
            Some("s1"),
            json!({"account_id": "602", "comment": "rude"}),
        )
        .await;
    report.assert_status(200);
    let target = &report.json()["target_account"];
    assert_eq!(
        *target,
        account("602", "bob", false, "<p>yo</p>"),
        "the named account, not the recorded report's: {}",
        report.json()
    );
}

fn instance(id: u64, region: &str) -> Value {
    json!({"id": id, "label": format!("box{id}"), "region": region})
}

/// Three runs each create an instance in its own region, allocate an address under it
/// (answered with the instance's region) and read the address back.
fn addresses_twin() -> Twin {
    har::synth_twin("machines", ORIGIN, &[], 3, |t, n| {
        let id = 100 + n;
        let region = ["us-east", "eu-west", "ap-south"][(n - 1) as usize];
        let address = json!({"id": 500 + n, "address": format!("192.0.2.{n}"),
                             "region": region, "gateway": "192.0.2.1"});
        let entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/v4/instances",
                Some(&json!({"label": format!("box{id}"), "region": region})),
                &instance(id, region),
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/v4/instances/{id}"),
                None,
                &instance(id, region),
            ),
            har::entry(
                ORIGIN,
                "POST",
                &format!("/v4/instances/{id}/ips"),
                Some(&json!({"type": "ipv4"})),
                &address,
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/v4/instances/{id}/ips/{}", 500 + n),
                None,
                &address,
            ),
        ];
        har::import(t, &[], &format!("run{n}.har"), entries);
    })
}

#[tokio::test]
async fn an_address_allocated_under_the_sessions_instance_answers_that_instances_region() {
    let t = addresses_twin();
    let server = t.serve(&[]);
    let made = server
        .post(
            "/v4/instances",
            Some("s1"),
            json!({"label": "mine", "region": "sa-east"}),
        )
        .await;
    made.assert_status(200);
    let id = har::key_text(&made.json()["id"]);
    let allocated = server
        .post(
            &format!("/v4/instances/{id}/ips"),
            Some("s1"),
            json!({"type": "ipv4"}),
        )
        .await;
    allocated.assert_status(200);
    let body = allocated.json();
    // Not a recorded instance's region.
    assert_eq!(body["region"], json!("sa-east"), "{body}");
}
