//! `[generate.request_keying]` end to end: a twin whose recorded creates name a plan (`type`)
//! and answer that plan's memory. With `mode = "off"` a create naming the rarer plan answers
//! the common plan's figures; with `auto` (the default) or `manual` naming the field it answers
//! its own plan's; an entry listing two fields keys a position neither decides alone by their
//! pair. A bad entry is a configuration error naming file and line (exit 1), a listed
//! field that keys nothing is a synth diagnostic, and `wraith lint` warns about an entry naming
//! a route the model does not have. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::process::{Command, Output};

use serde_json::{Value, json};
use support::Twin;

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "request-keying-test-key");

/// Recorded plans, one create per session; the first and most common is `g6-small`.
const PLANS: [&str; 6] = [
    "g6-small", "g6-small", "g6-large", "g6-small", "g6-large", "g6-small",
];

fn memory_of(plan: &str) -> u64 {
    if plan == "g6-small" { 1024 } else { 16384 }
}

fn wraith(t: &Twin, args: &[&str]) -> Output {
    Command::new(support::bin())
        .current_dir(t.tmp.path())
        .env(KEY.0, KEY.1)
        .args(args)
        .output()
        .unwrap()
}

fn har_entry(body: &Value, answer: &Value) -> Value {
    let (req, resp) = (body.to_string(), answer.to_string());
    json!({
        "startedDateTime": "2026-06-01T12:00:00.000Z", "time": 10,
        "request": {
            "method": "POST", "url": "https://api.plans.test/v4/linode/instances",
            "httpVersion": "HTTP/1.1", "cookies": [], "queryString": [],
            "headers": [{"name": "Content-Type", "value": "application/json"}],
            "postData": {"mimeType": "application/json", "text": req},
            "headersSize": -1, "bodySize": req.len()
        },
        "response": {
            "status": 200, "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": [{"name": "Content-Type", "value": "application/json"}],
            "content": {"size": resp.len(), "mimeType": "application/json", "text": resp},
            "redirectURL": "", "headersSize": -1, "bodySize": resp.len()
        },
        "cache": {}, "timings": {"send": 0, "wait": 10, "receive": 0}
    })
}

/// A twin with the recorded creates imported (one HAR, so one session, per create) and the
/// given `[generate.request_keying]` TOML appended.
fn plans_twin(keying_toml: &str) -> Twin {
    let creates: Vec<(&str, &str, u64)> = PLANS
        .iter()
        .map(|plan| ("us-east", *plan, memory_of(plan)))
        .collect();
    creates_twin(&creates, keying_toml)
}

/// A twin whose recorded creates (one HAR, so one session, each) name `(region, plan)` and
/// answer `memory`, with the given `[generate.request_keying]` TOML appended.
fn creates_twin(creates: &[(&str, &str, u64)], keying_toml: &str) -> Twin {
    let t = Twin::init("plans", "https://api.plans.test/v4");
    for (i, (region, plan, memory)) in creates.iter().enumerate() {
        let body = json!({"type": plan, "label": format!("web-{i}"), "region": region});
        let answer = json!({
            "id": 40_000 + i * 7,
            "label": format!("web-{i}"),
            "type": plan,
            "region": region,
            "specs": {"memory": memory, "vcpus": 1}
        });
        let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
            "pages": [], "entries": [har_entry(&body, &answer)]}});
        let path = t.tmp.path().join(format!("create-{i}.har"));
        std::fs::write(&path, har.to_string()).unwrap();
        let out = wraith(&t, &["import", &t.path_str(), &path.to_string_lossy()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    t.append_toml(keying_toml);
    t
}

fn synth(t: &Twin) -> Value {
    let out = wraith(t, &["synth", &t.path_str(), "--json"]);
    assert!(
        out.status.success(),
        "synth failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(t.root.join("model/twin.wir.json")).unwrap())
        .unwrap()
}

/// The codes of the model's `request-keying-*` diagnostics, in model order.
fn request_keying_codes(model: &Value) -> Vec<&str> {
    model["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["code"].as_str())
        .filter(|c| c.starts_with("request-keying"))
        .collect()
}

/// The memory a served create naming `g6-large` (a new label: no recorded request matches it
/// exactly) answers.
async fn served_memory(t: &Twin) -> Value {
    let server = t.serve(&[]);
    memory_of_create(&server, "us-east", "g6-large").await
}

/// The memory a create naming `region` and `plan` (a new label: no recorded request matches
/// it exactly) answers.
async fn memory_of_create(server: &support::Server, region: &str, plan: &str) -> Value {
    let r = server
        .post(
            "/v4/linode/instances",
            Some("buyer"),
            json!({"type": plan, "label": "web-new", "region": region}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["specs"]["memory"].clone()
}

#[tokio::test]
async fn off_answers_the_common_plans_figures_auto_and_manual_the_plans_own() {
    let off = plans_twin("[generate.request_keying]\nmode = \"off\"\n");
    let model = synth(&off);
    assert!(!model.to_string().contains("\"keyed\""));
    assert_eq!(served_memory(&off).await, json!(1024));

    // The default is `auto`: no `[generate.request_keying]` at all.
    let auto = plans_twin("");
    synth(&auto);
    assert_eq!(served_memory(&auto).await, json!(16384));

    let manual = plans_twin(
        "[generate.request_keying]\nmode = \"manual\"\n\n[[generate.request_keying.route]]\nroute = \"POST /v4/linode/instances\"\nfields = [\"$.type\"]\n",
    );
    let model = synth(&manual);
    let keyed = request_keying_codes(&model);
    assert!(keyed.is_empty(), "{keyed:?}");
    assert_eq!(served_memory(&manual).await, json!(16384));
}

#[test]
fn listed_field_that_keys_nothing_is_a_diagnostic_and_an_unknown_route_a_lint_warning() {
    let t = plans_twin(
        "[generate.request_keying]\nmode = \"manual\"\n\n[[generate.request_keying.route]]\nroute = \"POST /v4/linode/instances\"\nfields = [\"$.region\"]\n\n[[generate.request_keying.route]]\nroute = \"POST /v4/volumes\"\nfields = [\"$.size\"]\n",
    );
    let model = synth(&t);
    let found: Vec<(String, String, String)> = model["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"].as_str().unwrap().starts_with("request-keying"))
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["route"].as_str().unwrap().to_string(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].0, "request-keying-field-decides-nothing");
    assert_eq!(found[0].1, "POST /v4/linode/instances");
    assert!(found[0].2.contains("`$.region`"), "{found:?}");
    assert_eq!(found[1].0, "request-keying-route-unknown");
    assert_eq!(found[1].1, "POST /v4/volumes");
    assert!(!model.to_string().contains("\"keyed\""));

    let out = wraith(&t, &["lint", &t.path_str(), "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    let warnings: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "request-keying-route-unknown")
        .collect();
    assert_eq!(warnings.len(), 1, "{report}");
    assert_eq!(warnings[0]["severity"], "warning");
    assert_eq!(warnings[0]["file"], "wraith.toml");
    let message = warnings[0]["message"].as_str().unwrap();
    assert!(
        message.contains("entry 2") && message.contains("`POST /v4/volumes`"),
        "{message}"
    );
}

#[test]
fn bad_field_syntax_is_a_configuration_error_naming_file_and_line() {
    synth_refuses_fields_line(
        "[[generate.request_keying.route]]\nroute = \"POST /v4/linode/instances\"\nfields = [\"type\"]\n",
        "`$.a.b`",
    );
}

/// A twin with `keying_toml` appended (see [`plans_twin`]) whose synth is a configuration
/// error (exit 1) naming the `fields` line of `wraith.toml` and `named`, writing no model;
/// the twin and that line, for what the caller checks next.
fn synth_refuses_fields_line(keying_toml: &str, named: &str) -> (Twin, usize) {
    let t = plans_twin(keying_toml);
    let toml = std::fs::read_to_string(t.root.join("wraith.toml")).unwrap();
    let line = toml.lines().position(|l| l.starts_with("fields")).unwrap() + 1;
    let out = wraith(&t, &["synth", &t.path_str()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("wraith.toml:{line}:")) && err.contains(named),
        "{err}"
    );
    assert!(!t.root.join("model/twin.wir.json").exists());
    (t, line)
}

/// Every `keyed` object of the model's templates, in document order.
fn keyed_holes(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(map) => {
            if let Some(k) = map.get("keyed") {
                out.push(k.clone());
            }
            map.values().for_each(|x| keyed_holes(x, out));
        }
        Value::Array(items) => items.iter().for_each(|x| keyed_holes(x, out)),
        _ => {}
    }
}

/// Recorded creates whose memory neither the region nor the plan decides alone (`us-east`
/// answered 1024 and 16384, `g6-small` 1024 and 2048), the pair does.
const REGION_PLANS: [(&str, &str, u64); 6] = [
    ("us-east", "g6-small", 1024),
    ("us-east", "g6-large", 16384),
    ("eu-west", "g6-small", 2048),
    ("eu-west", "g6-large", 32768),
    ("us-east", "g6-small", 1024),
    ("eu-west", "g6-large", 32768),
];

#[tokio::test]
async fn listed_fields_together_key_a_position_neither_decides_alone() {
    let t = creates_twin(
        &REGION_PLANS,
        "[generate.request_keying]\nmode = \"manual\"\n\n[[generate.request_keying.route]]\nroute = \"POST /v4/linode/instances\"\nfields = [\"$.region\", \"$.type\"]\n",
    );
    let model = synth(&t);
    let mut keyed = Vec::new();
    keyed_holes(&model["routes"], &mut keyed);
    assert_eq!(
        keyed,
        vec![json!({
            "fields": [{"in": "body", "pointer": "/region"}, {"in": "body", "pointer": "/type"}],
            "buckets": [
                {"key": ["eu-west", "g6-large"], "value": 32768, "support": 2},
                {"key": ["eu-west", "g6-small"], "value": 2048, "support": 1},
                {"key": ["us-east", "g6-large"], "value": 16384, "support": 1},
                {"key": ["us-east", "g6-small"], "value": 1024, "support": 2}
            ]
        })],
        "{model}"
    );
    let codes = request_keying_codes(&model);
    assert!(codes.is_empty(), "{codes:?}");

    let server = t.serve(&[]);
    for (region, plan, memory) in REGION_PLANS {
        assert_eq!(
            memory_of_create(&server, region, plan).await,
            json!(memory),
            "{region} {plan}"
        );
    }

    // Without the entry nothing is keyed: automatic detection never combines fields.
    let auto = creates_twin(&REGION_PLANS, "");
    let mut keyed = Vec::new();
    keyed_holes(&synth(&auto)["routes"], &mut keyed);
    assert!(keyed.is_empty(), "{keyed:?}");
}

#[test]
fn a_field_listed_twice_is_a_configuration_error_naming_file_and_line() {
    let (t, line) = synth_refuses_fields_line(
        "[[generate.request_keying.route]]\nroute = \"POST /v4/linode/instances\"\nfields = [\"$.type\", \"$.region\", \"$.type\"]\n",
        "`$.type`",
    );
    // `wraith lint` reports it as an error finding of the file, with the line.
    let out = wraith(&t, &["lint", &t.path_str(), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{report}");
    assert_eq!(errors[0]["file"], "wraith.toml");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("wraith.toml:{line}:")) && message.contains("listed before"),
        "{message}"
    );
}
