//! Data-driven tests of each inference rule: every `testdata/synth/<rule>/<case>.json` holds a
//! few small exchanges and the excerpts of the synthesized model they must produce.
//!
//! Case format (see `testdata/synth/README.md`): `exchanges` (session, method, path, query,
//! headers, `body` JSON | `form` | `raw`, status, response_headers, `response` JSON |
//! `response_text` with an optional `response_content_type`) and `expect`, a list of checks. A check selects a value — the whole model,
//! an `entity` type, a `route` (`"METHOD /path"`), then optionally a variant by `status` and a
//! body `field` (dotted keys) — applies a JSON `pointer`, and compares with `equals`; or
//! compares the whole route list with `routes` (`METHOD path state_op entity_type`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use crate::common;
use serde_json::{Value, json};
use wraith_model::Model;
use wraith_recording::{
    Content, Correlation, Exchange, Frame, Headers, RecordedRequest, RecordedResponse,
    RecordedSession, Safety, Timing,
};
use wraith_synth::{SynthOptions, synthesize};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/synth")
}

fn headers(v: &Value) -> Headers {
    let mut h = Headers::new();
    if let Some(map) = v.as_object() {
        for (k, val) in map {
            let values = match val {
                Value::Array(items) => items
                    .iter()
                    .map(|x| x.as_str().unwrap_or_default().to_string())
                    .collect(),
                other => vec![other.as_str().unwrap_or_default().to_string()],
            };
            h.insert(k.to_ascii_lowercase(), values);
        }
    }
    h
}

/// Build sessions from the case's exchange list (index = position within its session).
fn sessions(case: &Value) -> Vec<RecordedSession> {
    let mut by_session: std::collections::BTreeMap<String, Vec<Exchange>> = Default::default();
    for (n, e) in case["exchanges"].as_array().unwrap().iter().enumerate() {
        let session = e["session"].as_str().unwrap_or("s1").to_string();
        let list = by_session.entry(session).or_default();
        let (body, ct) = if let Some(form) = e.get("form") {
            (
                form.as_str().unwrap().as_bytes().to_vec(),
                Some("application/x-www-form-urlencoded".to_string()),
            )
        } else if let Some(raw) = e.get("raw") {
            (
                raw.as_str().unwrap().as_bytes().to_vec(),
                e["content_type"].as_str().map(str::to_string),
            )
        } else if let Some(b) = e.get("body") {
            (
                serde_json::to_vec(b).unwrap(),
                Some("application/json".to_string()),
            )
        } else {
            (Vec::new(), None)
        };
        let (resp_body, resp_ct) = if let Some(t) = e.get("response_text") {
            (
                t.as_str().unwrap().as_bytes().to_vec(),
                e["response_content_type"].as_str().unwrap_or("text/plain"),
            )
        } else if let Some(r) = e.get("response") {
            (serde_json::to_vec(r).unwrap(), "application/json")
        } else {
            (Vec::new(), "application/json")
        };
        let mut resp_headers = headers(&e["response_headers"]);
        if !resp_body.is_empty() && !resp_headers.contains_key("content-type") {
            resp_headers.insert("content-type".into(), vec![resp_ct.to_string()]);
        }
        let start = 1_700_000_000_000_000 + n as u64 * 1_000;
        let latency = e["latency_us"].as_u64().unwrap_or(0);
        list.push(Exchange {
            protocol: "http".into(),
            request: RecordedRequest {
                method: e["method"].as_str().unwrap_or("GET").to_string(),
                path: e["path"].as_str().unwrap().to_string(),
                query: e["query"].as_str().unwrap_or("").to_string(),
                headers: headers(&e["headers"]),
                body: body.into(),
                content_type: ct,
                origin: e["origin"].as_str().map(str::to_string),
            },
            response: RecordedResponse {
                status: e["status"].as_u64().unwrap_or(200) as u16,
                headers: resp_headers,
                content_type: Some(resp_ct.to_string()),
                trailers: None,
            },
            frames: vec![Frame {
                direction: "server".into(),
                timestamp_us: start + latency,
                body: resp_body,
                frame_type: "data".into(),
            }],
            timing: Timing {
                request_start_us: start,
                first_byte_us: start + latency,
                last_byte_us: start + latency,
            },
            correlation: Correlation {
                exchange_index: list.len() as u64,
                tags: Vec::new(),
            },
            safety: Safety::default(),
            content: Content::default(),
            truncated: false,
        });
    }
    by_session
        .into_iter()
        .map(|(id, exchanges)| common::session(&id, 0, exchanges))
        .collect()
}

fn route_list(model: &Model) -> Vec<String> {
    model
        .routes
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {}",
                r.method,
                r.path,
                r.state_op.map(|s| s.as_str()).unwrap_or("-"),
                r.entity_type.as_deref().unwrap_or("-")
            )
        })
        .collect()
}

/// Resolve a check's selection to a JSON value (see the module doc).
fn select(model: &Value, check: &Value, what: &str) -> Value {
    let mut v = model.clone();
    if let Some(entity) = check["entity"].as_str() {
        v = v["entity_types"][entity].clone();
        assert!(!v.is_null(), "{what}: no entity type {entity}");
    }
    if let Some(route) = check["route"].as_str() {
        let (method, path) = route.split_once(' ').unwrap();
        v = model["routes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["method"] == method && r["path"] == path)
            .unwrap_or_else(|| panic!("{what}: no route {route}"))
            .clone();
        if let Some(status) = check["status"].as_u64() {
            v = v["variants"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["status"] == status)
                .unwrap_or_else(|| panic!("{what}: no {status} variant on {route}"))
                .clone();
            if let Some(field) = check["field"].as_str() {
                let mut node = v["body"]["root"].clone();
                for key in field.split('.') {
                    node = node["fields"]
                        .as_array()
                        .unwrap_or_else(|| panic!("{what}: {field}: not an object node"))
                        .iter()
                        .find(|f| f["key"] == key)
                        .unwrap_or_else(|| panic!("{what}: no field {field}"))["value"]
                        .clone();
                }
                v = node;
            }
        }
    }
    let pointer = check["pointer"].as_str().unwrap_or("");
    v.pointer(pointer)
        .unwrap_or_else(|| panic!("{what}: pointer {pointer} not found in {v}"))
        .clone()
}

fn run_case(path: &Path) {
    let what = path.display().to_string();
    let case: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let out = synthesize(
        &sessions(&case),
        &SynthOptions {
            twin: "case".into(),
            base_url: "http://upstream.test".into(),
            tool_version: "test".into(),
            tag: None,
            request_keying: Default::default(),
            run_gap_us: None,
        },
    );
    let model = serde_json::to_value(&out.model).unwrap();
    for (i, check) in case["expect"].as_array().unwrap().iter().enumerate() {
        let what = format!("{what} check #{i}");
        if let Some(routes) = check.get("routes") {
            let expected: Vec<String> = routes
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap().to_string())
                .collect();
            assert_eq!(route_list(&out.model), expected, "{what}");
            continue;
        }
        let got = select(&model, check, &what);
        assert_eq!(got, check["equals"], "{what}: {}", json!(check));
    }
}

fn run_rule(rule: &str) {
    let dir = testdata().join(rule);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no cases under {}", dir.display());
    for f in files {
        run_case(&f);
    }
}

#[test]
fn route_templating() {
    run_rule("route_templating");
}

#[test]
fn id_shape_learning() {
    run_rule("id_shape");
}

#[test]
fn echo_detection() {
    run_rule("echo");
}

#[test]
fn clock_and_counter_detection() {
    run_rule("clock");
}

#[test]
fn state_ops() {
    run_rule("state_ops");
}

#[test]
fn guards() {
    run_rule("guards");
}

#[test]
fn pagination_detection() {
    run_rule("pagination");
}

#[test]
fn header_programs() {
    run_rule("headers");
}

#[test]
fn exact_replay_index() {
    run_rule("exact");
}

#[test]
fn arrays_and_optional_fields() {
    run_rule("arrays");
}

#[test]
fn diagnostics() {
    run_rule("diagnostics");
}

#[test]
fn latency_profiles() {
    run_rule("latency");
}
