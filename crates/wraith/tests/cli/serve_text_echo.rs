//! An answer whose text names what the request named: every recorded 404 of a customer read
//! said `No such customer: '<the id asked for>'`, so the twin's 404 for an id nobody recorded
//! names that id, not the id of some recording; so does one recorded message naming one
//! key-like id. Black-box: the real binary on a HAR written here and on the bundled twin, and
//! `wraith check` of the same recordings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.shop.test";

fn missing(id: &str) -> Value {
    let mut e = har::entry(
        ORIGIN,
        "GET",
        &format!("/v1/customers/{id}"),
        None,
        &json!({"error": {"type": "not_found", "message": format!("No such customer: '{id}'")}}),
    );
    e["response"]["status"] = json!(404);
    e
}

fn shop_twin() -> Twin {
    let t = Twin::init("shop", ORIGIN);
    let found = har::entry(
        ORIGIN,
        "GET",
        "/v1/customers/cus_ada",
        None,
        &json!({"id": "cus_ada", "name": "Ada"}),
    );
    har::import(
        &t,
        &[],
        "run.har",
        vec![found, missing("cus_gone1"), missing("cus_gone2")],
    );
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_not_found_message_names_the_id_the_request_asked_for() {
    let t = shop_twin();
    let server = t.serve(&[]);
    let r = server.get("/v1/customers/cus_never_seen", Some("s")).await;
    r.assert_status(404);
    assert_eq!(
        r.json()["error"]["message"],
        json!("No such customer: 'cus_never_seen'")
    );
}

#[test]
fn check_passes_the_recorded_messages() {
    let t = shop_twin();
    let report = t.check_report();
    assert_eq!(report["exchanges_passed"], 3, "{:#}", report["divergences"]);
}

#[tokio::test]
async fn one_recorded_message_naming_a_keylike_id_names_the_id_asked_for() {
    // The bundled twin recorded one delete of a missing customer: its message names that one
    // id, which reads as a key, so the twin names the id each delete asks for.
    let t = support::example_shop_twin();
    let server = t.serve(&[]);
    let r = server
        .delete("/customers/cus_Asked00000001", Some("s"))
        .await;
    r.assert_status(404);
    assert_eq!(
        r.json()["error"]["message"],
        json!("No such customer: 'cus_Asked00000001'")
    );
}
