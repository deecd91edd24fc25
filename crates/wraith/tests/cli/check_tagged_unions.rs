//! Tagged unions end to end: `wraith synth` models a recorded feed of several element types
//! (tagged by `type`) with one representative per type, and `wraith check` judges each answered
//! element under its own type; an answered element of a type never recorded fails under the
//! default `reject_unknown` and is judged by the keys every type has under
//! `fallback_common_schema` (`[[diff.tagged_union_policy]]`). `wraith lint` holds the policy
//! entries against the model. Black-box: the real binary on a twin imported from HARs written
//! here, checked in memory or against a small HTTP twin answering the recorded pages with one
//! element's type renamed (an answer the twin makes no exactness claim for, so it is judged
//! under the model's templates). A route whose top-level answers are typed objects gets one
//! template per type, which `[diff] split_variants = true` judges each answer under, by the
//! recording's type, and which `wraith serve` renders by the type a create names.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;
use crate::check_support::fake_target;
use crate::check_support::notes;

use check_support::{DemoTwin, stdout_json};
use notes::entry;
use serde_json::{Value, json};

fn mention(n: u32) -> Value {
    json!({"id": format!("evt_{n:04}"), "type": "mention",
           "status": {"id": format!("st_{n:04}"), "text": format!("hello {n}")}})
}

fn follow(n: u32) -> Value {
    json!({"id": format!("evt_{n:04}"), "type": "follow", "account": format!("acc_{n:04}")})
}

/// The rare type: recorded once, with fields no other type has.
fn poll(n: u32) -> Value {
    json!({"id": format!("evt_{n:04}"), "type": "poll",
           "poll": {"votes": 3, "options": ["a", "b"]}, "expires_at": "2026-06-02T12:00:00Z"})
}

/// The recorded pages of the feed (of different lengths, so the feed is a variable-length list).
fn pages() -> [Vec<Value>; 3] {
    [
        vec![mention(1), follow(2), mention(3)],
        vec![follow(4), poll(5), mention(6), follow(7)],
        vec![mention(8), follow(9)],
    ]
}

/// Three sessions, each reading one page of the feed and the account (an object with no
/// union).
fn feed_twin() -> DemoTwin {
    let t = DemoTwin::init("feed", "https://api.feed.test/v1");
    for (i, page) in pages().iter().enumerate() {
        let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
        "pages": [], "entries": [
            entry("GET", &format!("https://api.feed.test/v1/events?page={i}"), None, 200,
                &Value::Array(page.clone())),
            entry("GET", "https://api.feed.test/v1/me", None, 200,
                &json!({"id": "acc_0001", "name": "me"})),
        ]}});
        t.import_har(&format!("feed-{i}"), &har);
    }
    t.synth();
    t
}

fn route<'m>(model: &'m Value, method: &str, path: &str) -> &'m Value {
    model["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["method"] == method && r["path"] == path)
        .unwrap_or_else(|| panic!("no route {method} {path}"))
}

/// The feed route's 200 template root.
fn feed_list(model: &Value) -> &Value {
    let r = route(model, "GET", "/v1/events");
    let v = r["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["status"] == 200)
        .unwrap();
    &v["body"]["root"]
}

fn config(t: &DemoTwin, toml: &str) {
    let p = t.root.join("wraith.toml");
    let mut text = std::fs::read_to_string(&p).unwrap();
    text.push('\n');
    text.push_str(toml);
    std::fs::write(p, text).unwrap();
}

/// A twin over HTTP answering every recorded request as recorded, except that the `poll`
/// element is answered as a `quiz` (a type the recordings never showed).
fn tampered_target() -> String {
    fake_target::start(|c| {
        if let Some(page) = c.target.strip_prefix("/v1/events?page=") {
            let i: usize = page.parse().unwrap();
            let mut items = pages()[i].clone();
            for item in &mut items {
                if item["type"] == "poll" {
                    item["type"] = json!("quiz");
                }
            }
            fake_target::Answer {
                status: 200,
                provenance: "template",
                route: "GET /v1/events".into(),
                body: Value::Array(items),
            }
        } else {
            assert_eq!(c.target, "/v1/me");
            fake_target::Answer {
                status: 200,
                provenance: "template",
                route: "GET /v1/me".into(),
                body: json!({"id": "acc_0001", "name": "me"}),
            }
        }
    })
}

#[test]
fn synth_models_a_recorded_union_with_one_representative_per_type() {
    let t = feed_twin();
    let model = t.model();
    let list = feed_list(&model);
    assert_eq!(list["array"], "list", "{list:#}");
    assert_eq!(list["discriminator"], "type");
    let reps = list["representatives"].as_array().unwrap();
    let tags: Vec<&Value> = reps
        .iter()
        .map(|r| {
            &r["fields"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["key"] == "type")
                .unwrap()["value"]["value"]
        })
        .collect();
    let mut tags: Vec<&str> = tags.iter().map(|t| t.as_str().unwrap()).collect();
    tags.sort_unstable();
    assert_eq!(tags, ["follow", "mention", "poll"]);
    insta::assert_json_snapshot!("tagged_union_feed_list", list);
    // A route with no union writes no discriminator anywhere.
    let me = serde_json::to_string(route(&model, "GET", "/v1/me")).unwrap();
    assert!(!me.contains("discriminator"), "{me}");
    // The in-sample replay passes.
    let out = t.run(&["check", "--json"]);
    let r = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{:#}", r["divergences"]);
}

#[test]
fn check_rejects_an_answered_element_of_an_unrecorded_type_by_default() {
    let t = feed_twin();
    let url = tampered_target();
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    assert_eq!(out.status.code(), Some(2), "{:#}", r["divergences"]);
    let divergences = r["divergences"].as_array().unwrap();
    assert_eq!(divergences.len(), 1, "{divergences:#?}");
    let d = &divergences[0];
    assert_eq!(d["category"], "unknown_tag", "{r:#}");
    assert_eq!(d["path"], "body[1].type");
    assert_eq!(d["expected"], "poll");
    assert_eq!(d["actual"], "quiz");
    assert_eq!(r["categories"]["unknown_tag"], 1);
}

#[test]
fn check_judges_an_unrecorded_type_by_the_common_keys_when_the_route_says_so() {
    let t = feed_twin();
    let url = tampered_target();
    config(
        &t,
        "[[diff.tagged_union_policy]]\nroute = \"GET /v1/events\"\npolicy = \"fallback_common_schema\"\n",
    );
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    // `id` (every type has it) agrees; the tag and the poll's own fields are not compared.
    assert_eq!(out.status.code(), Some(0), "{:#}", r["divergences"]);
    assert_eq!(r["divergence_count"], 0);

    // Another route's policy does not apply to the feed.
    let t = feed_twin();
    config(
        &t,
        "[[diff.tagged_union_policy]]\nroute = \"GET /v1/me\"\npolicy = \"fallback_common_schema\"\n",
    );
    let out = t.run(&["check", "--target", &url, "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout_json(&out)["categories"]["unknown_tag"], 1);
}

#[test]
fn check_refuses_and_lint_reports_a_policy_that_does_not_exist() {
    let t = feed_twin();
    config(
        &t,
        "[[diff.tagged_union_policy]]\nroute = \"GET /v1/events\"\npolicy = \"lenient\"\n",
    );
    let out = t.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("lenient") && err.contains("reject_unknown"),
        "{err}"
    );
    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let findings = stdout_json(&out)["findings"].clone();
    assert!(
        findings
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "diff-tagged-union-policy" && f["severity"] == "error"),
        "{findings:#}"
    );
}

#[test]
fn lint_warns_on_a_policy_for_a_missing_route_or_a_route_without_a_union() {
    let t = feed_twin();
    config(
        &t,
        "[[diff.tagged_union_policy]]\nroute = \"GET /v1/events\"\npolicy = \"reject_unknown\"\n\n\
         [[diff.tagged_union_policy]]\nroute = \"GET /nowhere\"\npolicy = \"reject_unknown\"\n\n\
         [[diff.tagged_union_policy]]\nroute = \"GET /v1/me\"\npolicy = \"replay_representative\"\n",
    );
    let out = t.run(&["lint", "--json"]);
    let r = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{:#}", r["findings"]);
    let ours: Vec<(String, String)> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"].as_str().unwrap().starts_with("tagged-union"))
        .map(|f| {
            assert_eq!(f["severity"], "warning");
            (
                f["rule"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(ours.len(), 2, "{ours:#?}");
    assert!(
        ours.iter()
            .any(|(rule, m)| rule == "tagged-union-route-unknown" && m.contains("GET /nowhere"))
    );
    assert!(
        ours.iter()
            .any(|(rule, m)| rule == "tagged-union-none" && m.contains("GET /v1/me"))
    );
    for (_, m) in &ours {
        assert!(!m.contains("  "), "a message reads as one sentence: {m:?}");
    }
}

/// Four recorded reads of items of two types (`type` book or song), each type with its own
/// field.
fn items() -> Vec<Value> {
    vec![
        json!({"id": "it_1", "type": "book", "title": "A", "pages": 100}),
        json!({"id": "it_2", "type": "song", "title": "B", "seconds": 180}),
        json!({"id": "it_3", "type": "book", "title": "C", "pages": 200}),
        json!({"id": "it_4", "type": "song", "title": "D", "seconds": 240}),
    ]
}

fn items_twin() -> DemoTwin {
    let t = DemoTwin::init("items", "https://api.items.test/v1");
    let entries: Vec<Value> = items()
        .iter()
        .map(|item| {
            let id = item["id"].as_str().unwrap();
            entry(
                "GET",
                &format!("https://api.items.test/v1/items/{id}"),
                None,
                200,
                item,
            )
        })
        .collect();
    let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
        "pages": [], "entries": entries}});
    t.import_har("items", &har);
    t.synth();
    t
}

/// A twin over HTTP answering every item as recorded, except that the book `it_1` is answered
/// with the type `song` (a type the recordings have, for other items).
fn retyped_target() -> String {
    fake_target::start(|c| {
        let id = c.target.strip_prefix("/v1/items/").unwrap().to_string();
        let mut body = items()
            .into_iter()
            .find(|i| i["id"] == id.as_str())
            .unwrap();
        if id == "it_1" {
            body["type"] = json!("song");
        }
        fake_target::Answer {
            status: 200,
            provenance: "template",
            route: "GET /v1/items/:param".into(),
            body,
        }
    })
}

#[test]
fn split_variants_judges_a_typed_answer_under_the_recorded_type() {
    let t = items_twin();
    let model = t.model();
    let r = route(&model, "GET", "/v1/items/:param");
    let v = r["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["status"] == 200)
        .unwrap();
    assert_eq!(v["union"]["discriminator"], "type", "{:#}", v);
    assert_eq!(v["union"]["templates"].as_array().unwrap().len(), 2);
    let url = retyped_target();
    // The variant's one template has seen both types at `type`: the wrong type passes.
    let out = t.run(&["check", "--target", &url, "--json"]);
    let report = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{:#}", report["divergences"]);
    // Judged under the template of the recording's type (book), `type` is that type's constant.
    config(&t, "[diff]\nsplit_variants = true\n");
    let out = t.run(&["check", "--target", &url, "--json"]);
    let report = stdout_json(&out);
    assert_eq!(out.status.code(), Some(2), "{:#}", report["divergences"]);
    let divergences = report["divergences"].as_array().unwrap();
    assert_eq!(divergences.len(), 1, "{divergences:#?}");
    assert_eq!(divergences[0]["path"], "body.type");
    assert_eq!(divergences[0]["category"], "value_mismatch");
    assert_eq!(divergences[0]["expected"], "book");
    assert_eq!(divergences[0]["actual"], "song");
}

/// One recorded session creating two books and two songs (`POST /v1/items` naming its
/// `type`), each type answered with a field of its own.
fn creates_twin() -> DemoTwin {
    let t = DemoTwin::init("shelf", "https://api.shelf.test/v1");
    let created = [
        ("book", "A", "pages", 100),
        ("song", "B", "seconds", 180),
        ("book", "C", "pages", 200),
        ("song", "D", "seconds", 240),
    ];
    let entries: Vec<Value> = created
        .iter()
        .enumerate()
        .map(|(i, (ty, title, own, n))| {
            let sent = json!({"type": ty, "title": title}).to_string();
            let mut answer = json!({"id": format!("it_{i}"), "type": ty, "title": title});
            answer[*own] = json!(n);
            entry(
                "POST",
                "https://api.shelf.test/v1/items",
                Some(&sent),
                200,
                &answer,
            )
        })
        .collect();
    let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
        "pages": [], "entries": entries}});
    t.import_har("shelf", &har);
    t.synth();
    t
}

#[tokio::test]
async fn serve_answers_a_create_naming_its_type_with_that_types_fields() {
    let t = creates_twin();
    let model = t.model();
    let v = route(&model, "POST", "/v1/items")["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["status"] == 200)
        .unwrap()
        .clone();
    assert_eq!(v["union"]["discriminator"], "type", "{v:#}");
    let (mut child, url) = t.serve();
    let client = reqwest::Client::new();
    let mut answers = Vec::new();
    for ty in ["song", "book"] {
        let r = client
            .post(format!("{url}/v1/items"))
            .header("content-type", "application/json")
            .body(json!({"type": ty, "title": "new"}).to_string())
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        answers.push((status, r.json::<Value>().await.unwrap()));
    }
    let _ = child.kill();
    let _ = child.wait();
    let keys = |b: &Value| {
        let mut k: Vec<String> = b.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    let (status, song) = &answers[0];
    assert_eq!(*status, 200, "{song}");
    assert_eq!(song["type"], "song", "{song}");
    assert_eq!(song["title"], "new", "{song}");
    assert_eq!(keys(song), ["id", "seconds", "title", "type"], "{song}");
    let (status, book) = &answers[1];
    assert_eq!(*status, 200, "{book}");
    assert_eq!(keys(book), ["id", "pages", "title", "type"], "{book}");
}
