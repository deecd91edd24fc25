//! `[generate.request_keying]` through `synthesize`: `off` learns no keyed position, `manual`
//! keys only the listed fields (and says when one keys nothing), `auto` is the default.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use wraith_model::{EchoSource, Model, Node};
use wraith_recording::{
    Content, Correlation, Exchange, Frame, Headers, Manifest, RecordedRequest, RecordedResponse,
    RecordedSession, Safety, Timing,
};
use wraith_synth::request_keying::{KeyingMode, KeyingRule, RequestKeying};
use wraith_synth::{SynthOptions, synthesize};

const ROUTE: &str = "POST /linode/instances";

fn exchange(index: u64, body: &Value, response: &Value) -> Exchange {
    let mut req_headers = Headers::new();
    req_headers.insert("content-type".into(), vec!["application/json".into()]);
    let mut resp_headers = Headers::new();
    resp_headers.insert("content-type".into(), vec!["application/json".into()]);
    let start = 1_700_000_000_000_000 + index * 1_000;
    Exchange {
        protocol: "http".into(),
        request: RecordedRequest {
            method: "POST".into(),
            path: "/linode/instances".into(),
            query: String::new(),
            headers: req_headers,
            body: serde_json::to_vec(body).unwrap().into(),
            content_type: Some("application/json".into()),
            origin: None,
        },
        response: RecordedResponse {
            status: 200,
            headers: resp_headers,
            content_type: Some("application/json".into()),
            trailers: None,
        },
        frames: vec![Frame {
            direction: "server".into(),
            timestamp_us: start,
            body: serde_json::to_vec(response).unwrap(),
            frame_type: "data".into(),
        }],
        timing: Timing {
            request_start_us: start,
            first_byte_us: start,
            last_byte_us: start,
        },
        correlation: Correlation {
            exchange_index: index,
            tags: Vec::new(),
        },
        safety: Safety::default(),
        content: Content::default(),
        truncated: false,
    }
}

/// Creates naming a plan (`type`) whose answer reports the plan's memory; one create per
/// session when `one_session` is false, else every create in one session.
fn creates(plans: &[&str], one_session: bool) -> Vec<RecordedSession> {
    let mut sessions: Vec<RecordedSession> = Vec::new();
    for (i, plan) in plans.iter().enumerate() {
        let memory = if *plan == "g6-small" { 1024 } else { 16384 };
        let body = json!({"type": plan, "label": format!("web-{i}"), "region": "us-east"});
        let answer = json!({
            "id": 4000 + i,
            "label": format!("web-{i}"),
            "region": "us-east",
            "specs": {"memory": memory}
        });
        let id = if one_session {
            "s0".to_string()
        } else {
            format!("s{i}")
        };
        if sessions.last().is_none_or(|s| s.manifest.session_id != id) {
            sessions.push(RecordedSession {
                manifest: Manifest {
                    complete: true,
                    end_time_us: 0,
                    exchange_count: 0,
                    policy_hash: String::new(),
                    proxy_mode: "reverse".into(),
                    schema_version: 1,
                    session_id: id,
                    start_time_us: 0,
                    tags: Vec::new(),
                    tool_version: "test".into(),
                },
                exchanges: Vec::new(),
            });
        }
        let s = sessions.last_mut().unwrap();
        let index = s.exchanges.len() as u64;
        s.exchanges.push(exchange(index, &body, &answer));
        s.manifest.exchange_count += 1;
    }
    sessions
}

const SIX_SESSIONS: [&str; 6] = [
    "g6-small", "g6-small", "g6-large", "g6-small", "g6-large", "g6-small",
];

fn synth(sessions: &[RecordedSession], keying: RequestKeying) -> Model {
    synthesize(
        sessions,
        &SynthOptions {
            twin: "plans".into(),
            base_url: "http://upstream.test".into(),
            tool_version: "test".into(),
            tag: None,
            request_keying: keying,
            run_gap_us: None,
        },
    )
    .model
}

fn manual(fields: &[EchoSource]) -> RequestKeying {
    RequestKeying {
        mode: KeyingMode::Manual,
        rules: vec![KeyingRule {
            route: ROUTE.into(),
            fields: fields.to_vec(),
        }],
    }
}

fn body(pointer: &str) -> EchoSource {
    EchoSource::Body {
        pointer: pointer.into(),
    }
}

/// The field keying `specs.memory` of the create's answer, if any.
fn memory_key(model: &Model) -> Option<EchoSource> {
    let route = model.routes.iter().find(|r| r.method == "POST").unwrap();
    let wraith_model::BodyTemplate::Json { root } = &route.variants[0].body else {
        panic!("a JSON answer")
    };
    let field = |node: &Node, key: &str| -> Node {
        let Node::Object { fields } = node else {
            panic!("an object")
        };
        fields.iter().find(|f| f.key == key).unwrap().value.clone()
    };
    match field(&field(root, "specs"), "memory") {
        Node::Hole(h) => h.keyed.and_then(|k| k.field),
        other => panic!("memory is not a hole: {other:?}"),
    }
}

fn canonical(model: &Model) -> String {
    wraith_model::to_canonical_json(model).unwrap()
}

fn codes(model: &Model) -> Vec<(String, String)> {
    model
        .diagnostics
        .iter()
        .filter(|d| d.code.starts_with("request-keying"))
        .map(|d| (d.code.clone(), d.message.clone()))
        .collect()
}

#[test]
fn auto_is_the_default_and_keys_the_plan() {
    let sessions = creates(&SIX_SESSIONS, false);
    let default = synth(&sessions, RequestKeying::default());
    assert_eq!(memory_key(&default), Some(body("/type")));
    let auto = synth(
        &sessions,
        RequestKeying {
            mode: KeyingMode::Auto,
            rules: Vec::new(),
        },
    );
    assert_eq!(canonical(&default), canonical(&auto));
    assert!(codes(&default).is_empty(), "{:?}", codes(&default));
}

#[test]
fn off_learns_no_keyed_hole_anywhere() {
    let sessions = creates(&SIX_SESSIONS, false);
    let off = synth(
        &sessions,
        RequestKeying {
            mode: KeyingMode::Off,
            // Entries are not read under `off`.
            rules: manual(&[body("/type")]).rules,
        },
    );
    assert_eq!(memory_key(&off), None);
    assert!(!canonical(&off).contains("\"keyed\""));
    assert!(codes(&off).is_empty(), "{:?}", codes(&off));
}

#[test]
fn manual_keys_the_listed_field_where_auto_lacks_evidence() {
    // One session: automatic detection never trusts keys repeated within one run.
    let sessions = creates(&SIX_SESSIONS, true);
    assert_eq!(
        memory_key(&synth(&sessions, RequestKeying::default())),
        None
    );
    let keyed = synth(&sessions, manual(&[body("/type")]));
    assert_eq!(memory_key(&keyed), Some(body("/type")));
    assert!(codes(&keyed).is_empty(), "{:?}", codes(&keyed));
    // Same input, same setting: the same bytes.
    assert_eq!(
        canonical(&keyed),
        canonical(&synth(&sessions, manual(&[body("/type")])))
    );
    // Auto plus the entry keys it too.
    let mut auto = manual(&[body("/type")]);
    auto.mode = KeyingMode::Auto;
    assert_eq!(memory_key(&synth(&sessions, auto)), Some(body("/type")));
}

#[test]
fn manual_keys_nothing_it_was_not_asked_to() {
    let sessions = creates(&SIX_SESSIONS, false);
    let none = synth(
        &sessions,
        RequestKeying {
            mode: KeyingMode::Manual,
            rules: Vec::new(),
        },
    );
    assert!(!canonical(&none).contains("\"keyed\""));
}

#[test]
fn listed_field_that_decides_nothing_is_a_diagnostic_naming_route_and_field() {
    let sessions = creates(&SIX_SESSIONS, false);
    // Every create named one region: it decides nothing.
    let model = synth(&sessions, manual(&[body("/region"), body("/type")]));
    assert_eq!(memory_key(&model), Some(body("/type")));
    let found = codes(&model);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "request-keying-field-decides-nothing");
    assert!(found[0].1.contains("`$.region`"), "{found:?}");
    let d = model
        .diagnostics
        .iter()
        .find(|d| d.code == "request-keying-field-decides-nothing")
        .unwrap();
    assert_eq!(d.route.as_deref(), Some(ROUTE));
    assert_eq!(d.severity, "warning");
}

#[test]
fn unknown_route_and_unsent_field_are_diagnostics() {
    let sessions = creates(&SIX_SESSIONS, false);
    let keying = RequestKeying {
        mode: KeyingMode::Manual,
        rules: vec![
            KeyingRule {
                route: "POST /linode/volumes".into(),
                fields: vec![body("/size")],
            },
            KeyingRule {
                route: "post /linode/instances".into(),
                fields: vec![
                    body("/image"),
                    EchoSource::Query {
                        name: "plan".into(),
                    },
                ],
            },
        ],
    };
    let model = synth(&sessions, keying);
    let found = codes(&model);
    let named: Vec<(&str, bool)> = found
        .iter()
        .map(|(code, message)| (code.as_str(), message.contains("entry")))
        .collect();
    assert_eq!(
        named,
        [
            ("request-keying-field-unsent", true),
            ("request-keying-field-unsent", true),
            ("request-keying-route-unknown", true),
        ],
        "{found:?}"
    );
    assert!(found[0].1.contains("`$.image`"), "{found:?}");
    assert!(found[1].1.contains("`query.plan`"), "{found:?}");
    // Named as synth names the route, whatever the entry's case.
    let routes: Vec<Option<&str>> = model
        .diagnostics
        .iter()
        .filter(|d| d.code.starts_with("request-keying"))
        .map(|d| d.route.as_deref())
        .collect();
    assert_eq!(
        routes,
        [Some(ROUTE), Some(ROUTE), Some("POST /linode/volumes")]
    );
    assert!(!canonical(&model).contains("\"keyed\""));
}
