//! Keyed snapshots through `synthesize`: the request field that decided, in every recorded
//! observation, whether an optional field of the answer was present groups the variant's
//! recorded answers by its value (`Variant::keyed_snapshots`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};
use wraith_model::{EchoSource, Model, Variant};
use wraith_recording::{Headers, RecordedSession};
use wraith_synth::request_keying::{KeyingMode, RequestKeying};
use wraith_synth::{SynthOptions, synthesize};

/// One create per session: `(region, answer carries policy)`, each with its own label.
fn sessions(creates: &[(&str, bool)]) -> Vec<RecordedSession> {
    creates
        .iter()
        .enumerate()
        .map(|(i, (region, policy))| {
            let mut headers = Headers::new();
            headers.insert("content-type".into(), vec!["application/json".into()]);
            let sent = json!({"region": region, "label": format!("server-{i}")});
            let mut answer =
                json!({"id": 100 + i, "region": region, "label": format!("server-{i}")});
            if *policy {
                answer["policy"] = json!("migrate");
            }
            let ex =
                common::json_exchange("POST", "/v1/servers", 200, headers, Some(&sent), &answer);
            common::session(&format!("s{i}"), 1_700_000_000_000_000 + i as u64, vec![ex])
        })
        .collect()
}

fn synth(sessions: &[RecordedSession], mode: KeyingMode) -> Model {
    let opts = SynthOptions {
        twin: "t".into(),
        base_url: "https://api.example".into(),
        request_keying: RequestKeying {
            mode,
            rules: Vec::new(),
        },
        ..SynthOptions::default()
    };
    synthesize(sessions, &opts).model
}

fn create_variant(model: &Model) -> &Variant {
    let route = model
        .routes
        .iter()
        .find(|r| r.method == "POST" && r.path == "/v1/servers")
        .expect("create route");
    route
        .variants
        .iter()
        .find(|v| v.status == 200)
        .expect("200 variant")
}

const REGIONS: [(&str, bool); 6] = [
    ("north", true),
    ("south", false),
    ("north", true),
    ("south", false),
    ("north", true),
    ("south", false),
];

#[test]
fn field_deciding_an_optional_fields_presence_keys_the_snapshots() {
    let model = synth(&sessions(&REGIONS), KeyingMode::Auto);
    let keyed = create_variant(&model)
        .keyed_snapshots
        .as_deref()
        .expect("keyed snapshots");
    assert_eq!(
        keyed.field,
        EchoSource::Body {
            pointer: "/region".into()
        }
    );
    let buckets: Vec<(Value, Vec<String>)> = keyed
        .buckets
        .iter()
        .map(|b| (b.key.clone(), b.moments.clone()))
        .collect();
    assert_eq!(
        buckets,
        vec![
            (
                json!("north"),
                vec!["s0/0".into(), "s2/0".into(), "s4/0".into()]
            ),
            (
                json!("south"),
                vec!["s1/0".into(), "s3/0".into(), "s5/0".into()]
            ),
        ]
    );
}

#[test]
fn presence_the_field_contradicts_keys_no_snapshot() {
    let mut creates = REGIONS.to_vec();
    creates.push(("south", true));
    let model = synth(&sessions(&creates), KeyingMode::Auto);
    assert!(create_variant(&model).keyed_snapshots.is_none());
}

#[test]
fn request_keying_off_keys_no_snapshot() {
    let model = synth(&sessions(&REGIONS), KeyingMode::Off);
    assert!(create_variant(&model).keyed_snapshots.is_none());
}
