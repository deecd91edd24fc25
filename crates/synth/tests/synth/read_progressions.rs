//! A field every recorded create answered with one state (`provisioning`) that successive reads
//! of the just-created record showed moving on (`booting`, `running`) is learned as a read
//! progression, with the most common read sequence as its states. A write naming the record in
//! between ends a sequence; a field the creates answered differently, one an update echoes, or
//! a change seen in one session only learns nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;
use serde_json::{Value, json};
use wraith_model::{Model, ReadProgression};
use wraith_recording::Exchange;

/// One session: an instance created `provisioning` (with `region`), then read once per
/// `reads` state; `boot_first` posts a `boot` action on it before the reads.
fn instance_session(i: usize, region: &str, reads: &[&str], boot_first: bool) -> Vec<Exchange> {
    let id = format!("10{i}");
    let record = |status: &str| json!({"id": id, "label": format!("box-{i}"), "region": region, "status": status});
    let mut out = vec![ok_json(
        "POST",
        "/v4/instances",
        Some(&json!({"label": format!("box-{i}"), "region": region})),
        &record("provisioning"),
    )];
    if boot_first {
        out.push(ok_json(
            "POST",
            &format!("/v4/instances/{id}/boot"),
            None,
            &json!({}),
        ));
    }
    for s in reads {
        out.push(ok_json(
            "GET",
            &format!("/v4/instances/{id}"),
            None,
            &record(s),
        ));
    }
    out
}

fn synth(sessions: Vec<Vec<Exchange>>) -> Model {
    common::synth_runs("instances", "https://api.example.com", sessions)
}

fn progressions(model: &Model) -> Vec<ReadProgression> {
    common::route(model, "GET", "/v4/instances/:param")
        .read_progressions
        .clone()
}

fn status(states: &[&str]) -> Vec<ReadProgression> {
    vec![ReadProgression {
        field: "status".into(),
        from: json!("provisioning"),
        states: states.iter().map(|s| Value::from(*s)).collect(),
    }]
}

const BOOTED: &[&str] = &["provisioning", "booting", "running"];

#[test]
fn reads_moving_on_from_the_created_state_learn_the_most_common_sequence() {
    let model = synth(vec![
        instance_session(0, "us-east", BOOTED, false),
        instance_session(
            1,
            "us-west",
            &["provisioning", "provisioning", "running"],
            false,
        ),
        instance_session(2, "eu-west", BOOTED, false),
        // Read once, still provisioning: no change, not a sample.
        instance_session(3, "us-east", &["provisioning"], false),
    ]);
    assert_eq!(progressions(&model), status(BOOTED));
}

#[test]
fn a_write_naming_the_record_before_its_reads_teaches_nothing() {
    let model = synth(vec![
        instance_session(0, "us-east", BOOTED, true),
        instance_session(1, "us-west", BOOTED, true),
        instance_session(2, "eu-west", BOOTED, false),
    ]);
    assert!(
        progressions(&model).is_empty(),
        "one clean sequence is not enough: {:?}",
        progressions(&model)
    );
}

#[test]
fn a_change_seen_in_one_session_only_teaches_nothing() {
    let model = synth(vec![
        instance_session(0, "us-east", BOOTED, false),
        instance_session(1, "us-west", &["provisioning"], false),
    ]);
    assert!(progressions(&model).is_empty());
}

#[test]
fn a_field_the_creates_answered_differently_teaches_nothing() {
    // `region` changes between create and read in neither session, and differs between
    // creates: only `status` is learned.
    let mut moved = instance_session(1, "us-west", BOOTED, false);
    moved[0] = ok_json(
        "POST",
        "/v4/instances",
        Some(&json!({"label": "box-1"})),
        &json!({"id": "101", "label": "box-1", "region": "us-west", "status": "queued"}),
    );
    let model = synth(vec![instance_session(0, "us-east", BOOTED, false), moved]);
    assert!(
        progressions(&model).is_empty(),
        "{:?}",
        progressions(&model)
    );
}

#[test]
fn a_field_an_update_echoes_teaches_nothing() {
    let with_update = |i: usize| {
        let mut s = instance_session(i, "us-east", BOOTED, false);
        let id = format!("10{i}");
        s.push(ok_json(
            "PUT",
            &format!("/v4/instances/{id}"),
            Some(&json!({"status": "stopped"})),
            &json!({"id": id, "label": format!("box-{i}"), "region": "us-east", "status": "stopped"}),
        ));
        s
    };
    let model = synth(vec![with_update(0), with_update(1), with_update(2)]);
    assert!(
        progressions(&model).is_empty(),
        "{:?}",
        progressions(&model)
    );
}
