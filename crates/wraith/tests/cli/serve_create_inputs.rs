//! A create takes the record's defaults its request sends values for (`Route::create_inputs`):
//! every recorded run created a domain without `ttl_sec`, `tags`, `description` or `group`,
//! and was answered the defaults; a session that sends them is answered, and later reads
//! show, its own values — as an update of the domain would store them. A field the recorded
//! creates sent and the API answered otherwise, a default whose type no recording shows, and a
//! value of another type keep the recorded answer. Black-box: the real binary on HARs written
//! here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.domains.test";

/// Domain `id` as the API answers it: the defaults of a create that sent none of them.
fn domain(id: u64, name: &str) -> Value {
    json!({
        "id": id,
        "domain": name,
        "soa_email": "hostmaster@domains.test",
        "ttl_sec": 0,
        "tags": [],
        "description": "",
        "group": null,
        "links": null,
        "status": "active"
    })
}

/// Three runs each create a domain (sending a `soa_email` the API answers as its own, and
/// `tags: null`) and read it back; one more reads a domain made elsewhere, whose `group` is a name and whose `links`
/// an object.
fn domains_twin() -> Twin {
    let t = Twin::init("domains", ORIGIN);
    for i in 0..3u64 {
        let id = 100 + i;
        let name = format!("run{i}.test");
        // A client's unset collection, `tags: null`, sends no value.
        let sent = json!({"domain": name, "soa_email": format!("me{i}@run.test"), "tags": null});
        let entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/v1/domains",
                Some(&sent),
                &domain(id, &name),
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/v1/domains/{id}"),
                None,
                &domain(id, &name),
            ),
        ];
        har::import(&t, &[], &format!("run{i}.har"), entries);
    }
    let mut elsewhere = domain(7, "elsewhere.test");
    elsewhere["group"] = json!("web");
    elsewhere["links"] = json!({"self": "/v1/domains/7"});
    let read = har::entry(ORIGIN, "GET", "/v1/domains/7", None, &elsewhere);
    har::import(&t, &[], "read.har", vec![read]);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_create_answers_and_stores_the_defaults_its_request_sends() {
    let t = domains_twin();
    let server = t.serve(&[]);
    let sent = json!({
        "domain": "mine.test",
        "ttl_sec": 300,
        "tags": ["prod", "dns"],
        "description": "mine",
        "group": "ops"
    });
    let created = server.post("/v1/domains", Some("s1"), sent).await;
    created.assert_status(200);
    let answer = created.json();
    assert_eq!(answer["domain"], "mine.test", "{answer}");
    assert_eq!(answer["ttl_sec"], 300, "{answer}");
    assert_eq!(answer["tags"], json!(["prod", "dns"]), "{answer}");
    assert_eq!(answer["description"], "mine", "{answer}");
    assert_eq!(answer["group"], "ops", "{answer}");
    let id = answer["id"].clone();
    let read = server
        .get(&format!("/v1/domains/{}", har::key_text(&id)), Some("s1"))
        .await;
    read.assert_status(200);
    let stored = read.json();
    for field in ["ttl_sec", "tags", "description", "group"] {
        assert_eq!(stored[field], answer[field], "{field}: {stored}");
    }
}

#[tokio::test]
async fn a_create_keeps_what_the_recordings_answered_where_the_sent_value_is_not_an_input() {
    let t = domains_twin();
    let server = t.serve(&[]);
    let sent = json!({
        "domain": "other.test",
        "soa_email": "me@other.test",
        "ttl_sec": "soon",
        "links": "/elsewhere",
        "tags": [{"name": "prod"}]
    });
    let created = server.post("/v1/domains", Some("s1"), sent).await;
    created.assert_status(200);
    let answer = created.json();
    // Every recorded create sent its own `soa_email` and was answered the API's.
    assert_eq!(answer["soa_email"], "hostmaster@domains.test", "{answer}");
    // A number's default is not taken from text that is no number.
    assert_eq!(answer["ttl_sec"], 0, "{answer}");
    // The recordings show `links` as an object: a string is not its value.
    assert_eq!(answer["links"], Value::Null, "{answer}");
    // Tags are recorded empty: objects are not known to be tags.
    assert_eq!(answer["tags"], json!([]), "{answer}");
}

#[tokio::test]
async fn a_form_create_reads_its_text_as_the_defaults_types() {
    let t = domains_twin();
    let server = t.serve(&[]);
    let r = server
        .client
        .post(format!("{}/v1/domains", server.url))
        .header("X-Wraith-Session", "form")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("domain=form.test&ttl_sec=3600&description=by+form")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let answer: Value = r.json().await.unwrap();
    assert_eq!(answer["ttl_sec"], 3600, "{answer}");
    assert_eq!(answer["description"], "by form", "{answer}");
}
