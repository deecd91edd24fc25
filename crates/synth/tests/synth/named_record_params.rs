//! A create under a record's path answering fields of that record (`Route::named_record_copies`
//! with a `param`): an address allocated under an instance answers the instance's `region`.
//! Learned where no body field names a record; a field the answers held as a constant, or as
//! another value than the path's record held, is not copied.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;
use serde_json::{Value, json};
use wraith_model::Model;
use wraith_recording::Exchange;

fn instance(id: u64, region: &str) -> Value {
    json!({"id": id, "label": format!("box{id}"), "region": region})
}

/// Run `n` creates instance `id` in `region`, allocates an address under it, answered with
/// the region `answered`, and reads the address back.
fn run(id: u64, region: &str, answered: &str) -> Vec<Exchange> {
    let address = json!({"id": 500 + id, "address": format!("192.0.2.{id}"), "type": "ipv4",
                         "region": answered, "gateway": "192.0.2.1"});
    vec![
        ok_json(
            "POST",
            "/v1/instances",
            Some(&json!({"label": format!("box{id}"), "region": region})),
            &instance(id, region),
        ),
        ok_json(
            "GET",
            &format!("/v1/instances/{id}"),
            None,
            &instance(id, region),
        ),
        ok_json(
            "POST",
            &format!("/v1/instances/{id}/ips"),
            Some(&json!({"type": "ipv4"})),
            &address,
        ),
        ok_json(
            "GET",
            &format!("/v1/instances/{id}/ips/{}", 500 + id),
            None,
            &address,
        ),
    ]
}

fn synth(runs: Vec<Vec<Exchange>>) -> Model {
    common::synth_runs("cloud", "https://api.cloud.example", runs)
}

#[test]
fn a_create_answering_its_path_records_region_copies_it_from_that_record() {
    let m = synth(vec![
        run(101, "us-east", "us-east"),
        run(102, "eu-west", "eu-west"),
        run(103, "ap-south", "ap-south"),
    ]);
    let rule = common::route(&m, "POST", "/v1/instances/:param/ips")
        .named_record_copies
        .clone()
        .expect("copies from the path's instance");
    assert_eq!(rule.param.as_deref(), Some("param"));
    assert_eq!(rule.field, "");
    assert_eq!(rule.entity_type, "instances");
    let copied: Vec<(&str, &str)> = rule
        .copies
        .iter()
        .map(|c| (c.at.as_str(), c.key.as_str()))
        .collect();
    assert_eq!(copied, vec![("/region", "region")]);
}

#[test]
fn a_region_the_answers_held_otherwise_than_the_path_record_copies_nothing() {
    let m = synth(vec![
        run(101, "us-east", "us-east"),
        run(102, "eu-west", "us-east"),
        run(103, "ap-south", "ap-south"),
    ]);
    assert_eq!(
        common::route(&m, "POST", "/v1/instances/:param/ips").named_record_copies,
        None
    );
}
