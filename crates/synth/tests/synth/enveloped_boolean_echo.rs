//! An update whose answer wraps the record in one envelope key (`{"thing": {...}}`) echoes a
//! boolean the request set at the record's own field (`/flag` answered at `/thing/flag`), even
//! from one recorded update: the answer reflects what was sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::json;

use wraith_model::{BodyTemplate, EchoSource, HoleKind, Node};
use wraith_recording::Headers;
use wraith_synth::{SynthOptions, synthesize};

#[test]
fn a_boolean_an_enveloped_update_answers_where_the_request_set_it_is_an_echo() {
    let patch = common::json_exchange(
        "PATCH",
        "/v1/things/42",
        200,
        Headers::new(),
        Some(&json!({"flag": true, "name": "n"})),
        &json!({"thing": {"id": "42", "name": "n", "flag": true, "open": false}}),
    );
    let m = synthesize(
        &[common::session("s0", 0, vec![patch])],
        &SynthOptions {
            twin: "things".into(),
            base_url: "https://api.things.example".into(),
            tool_version: "test".into(),
            tag: None,
            request_keying: Default::default(),
            run_gap_us: None,
        },
    )
    .model;
    let r = m
        .routes
        .iter()
        .find(|r| r.method == "PATCH")
        .expect("the update route");
    let BodyTemplate::Json { root } = &r.variants[0].body else {
        panic!("json")
    };
    let Node::Object { fields } = root else {
        panic!("object")
    };
    let Node::Object { fields } = &fields[0].value else {
        panic!("the envelope holds the record")
    };
    let field = |k: &str| fields.iter().find(|f| f.key == k).unwrap().value.clone();
    let Node::Hole(h) = field("flag") else {
        panic!("flag is a constant")
    };
    assert_eq!(
        h.source,
        HoleKind::Echo {
            from: EchoSource::Body {
                pointer: "/flag".into()
            }
        }
    );
    // A boolean the request did not send stays as answered.
    assert_eq!(
        field("open"),
        Node::Const {
            value: json!(false)
        }
    );
}
