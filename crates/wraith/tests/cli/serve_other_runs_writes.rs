//! `wraith serve` reading a record the session created or deleted itself, where the recorded
//! run the session's answers came from read it only after another number of writes: that
//! moment shows a write the session never made (the run's delete, or its create), so the
//! session's own store answers whether the record is there. Black-box: the real binary on HAR
//! runs written here, each reserving the same address (every run minted the same one, as a
//! scrubbed address reads).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.addresses.test";
const PATH: &str = "/v1/addresses/192.0.2.0";

fn reserved(gateway: &str) -> Value {
    json!({"address": "192.0.2.0", "region": "r1", "gateway": gateway})
}

fn reserve(gateway: &str) -> Value {
    let sent = json!({"region": "r1"});
    har::entry(
        ORIGIN,
        "POST",
        "/v1/addresses",
        Some(&sent),
        &reserved(gateway),
    )
}

fn read(gateway: &str) -> Value {
    har::entry(ORIGIN, "GET", PATH, None, &reserved(gateway))
}

fn read_gone() -> Value {
    let gone = json!({"errors": [{"reason": "Not found"}]});
    har::with_status(har::entry(ORIGIN, "GET", PATH, None, &gone), 404)
}

fn release() -> Value {
    har::entry(ORIGIN, "DELETE", PATH, None, &json!({}))
}

fn twin_of(runs: Vec<Vec<Value>>) -> Twin {
    har::runs_twin("addresses", ORIGIN, runs)
}

#[tokio::test]
async fn a_read_of_a_held_record_ignores_a_404_its_run_recorded_after_a_delete() {
    // Runs 1 and 2 answered the reserve alike (gateway `g-b`), so the session's reserve is
    // answered from them; of the two, only run 1 read the address, after releasing it.
    // Run 0 read it right after reserving it, as the session does.
    let t = twin_of(vec![
        vec![reserve("g-a"), read("g-a"), release()],
        vec![reserve("g-b"), release(), read_gone()],
        vec![reserve("g-b"), release()],
    ]);
    let server = t.serve(&[]);
    let made = server
        .post("/v1/addresses", Some("agent"), json!({"region": "r1"}))
        .await;
    made.assert_status(200);
    assert_eq!(made.json()["gateway"], "g-b");
    let got = server.get(PATH, Some("agent")).await;
    got.assert_status(200);
    assert_eq!(got.json(), reserved("g-b"), "the session's own record");
    // Released, it is gone, as the session's own delete says.
    server
        .send("DELETE", PATH, Some("agent"), &[], None)
        .await
        .assert_status(200);
    server.get(PATH, Some("agent")).await.assert_status(404);
}

#[tokio::test]
async fn a_read_of_a_deleted_record_ignores_a_200_its_run_recorded_before_its_delete() {
    // Runs 1 and 2 answered the reserve alike (gateway `g-c`), and only run 1 read the
    // address: while it still held it. Run 0 read it after releasing it, as the session does.
    let t = twin_of(vec![
        vec![reserve("g-a"), release(), read_gone()],
        vec![reserve("g-c"), read("g-c"), release()],
        vec![reserve("g-c"), release()],
    ]);
    let server = t.serve(&[]);
    let made = server
        .post("/v1/addresses", Some("agent"), json!({"region": "r1"}))
        .await;
    made.assert_status(200);
    assert_eq!(made.json()["gateway"], "g-c");
    server
        .send("DELETE", PATH, Some("agent"), &[], None)
        .await
        .assert_status(200);
    let got = server.get(PATH, Some("agent")).await;
    got.assert_status(404);
}
