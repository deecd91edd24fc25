//! An optional field holding an echo hole: rendered when the request carries the source, and,
//! when synth recorded a default (`when_absent`: most requests without the source still got
//! the field), without it too.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_model::*;

fn optional(key: &str, value: Node) -> Field {
    Field {
        key: key.to_string(),
        value,
        optional: true,
        present_ratio_bp: 8_000,
    }
}

/// `POST /v1/disks` answering `{id, encryption?, label?}`: `encryption` echoes the request's
/// and defaults to `"enabled"`; `label` echoes the request's and has no default.
fn disks() -> wraith_engine::Engine {
    let mut encryption = Hole {
        source: HoleKind::Echo {
            from: EchoSource::Body {
                pointer: "/encryption".into(),
            },
        },
        observed_type: JsonType::String,
        examples: vec![json!("enabled"), json!("disabled")],
        more_examples: Vec::new(),
        examples_cut: false,
        confidence_bp: 2_000,
        when_absent: None,
        keyed: None,
    };
    encryption.when_absent = Some(Box::new(WhenAbsent {
        field: EchoSource::Body {
            pointer: "/encryption".into(),
        },
        value: json!("enabled"),
        embeds: None,
    }));
    let root = Node::Object {
        fields: vec![
            Field {
                key: "id".into(),
                value: c(json!(7)),
                optional: false,
                present_ratio_bp: 10_000,
            },
            optional("encryption", Node::Hole(encryption)),
            optional("label", echo_body("/label", JsonType::String)),
        ],
    };
    let create = R::new("POST", "/v1/disks")
        .variant(200, Guard::Always, root)
        .build();
    engine(model(vec![create], Vec::new()), det_opts())
}

fn post(e: &wraith_engine::Engine, b: Value) -> Value {
    let r = send(e, Some("disks"), "POST", "/v1/disks", b);
    assert_eq!(r.status, 200);
    body(&r)
}

#[test]
fn an_optional_echo_field_with_a_default_renders_it_when_the_request_lacks_the_source() {
    let e = disks();
    let b = post(&e, json!({}));
    assert_eq!(b["encryption"], json!("enabled"));
    assert!(
        b.get("label").is_none(),
        "no default: absent without its source"
    );
}

#[test]
fn an_optional_echo_field_echoes_the_request_when_it_carries_the_source() {
    let e = disks();
    let b = post(&e, json!({"encryption": "disabled", "label": "d1"}));
    assert_eq!(b["encryption"], json!("disabled"));
    assert_eq!(b["label"], json!("d1"));
}
