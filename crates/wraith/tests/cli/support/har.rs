//! HAR recordings written in code, imported and synthesized with the real binary: for
//! black-box tests of what synth learns and serve then answers.

use std::process::Command;

use serde_json::{Value, json};

use super::Twin;

/// `entry` sent with `Authorization: user` and answered `status`: a request of one of a
/// recording's users.
pub fn by(user: &str, status: u16, entry: Value) -> Value {
    with_status(with_header(entry, "Authorization", user), status)
}

/// `entry` sent with the request header `name: value` besides its own.
pub fn with_header(mut entry: Value, name: &str, value: &str) -> Value {
    if let Some(headers) = entry["request"]["headers"].as_array_mut() {
        headers.push(json!({"name": name, "value": value}));
    }
    entry
}

/// `entry` answered with the response header `name: value` besides its own.
pub fn with_response_header(mut entry: Value, name: &str, value: &str) -> Value {
    if let Some(headers) = entry["response"]["headers"].as_array_mut() {
        headers.push(json!({"name": name, "value": value}));
    }
    entry
}

/// One HAR entry: a JSON request (`body` when given) to `origin` + `path`, answered 200 with
/// the JSON `answer`.
pub fn entry(
    origin: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
    answer: &Value,
) -> Value {
    let resp = answer.to_string();
    let mut request = json!({
        "method": method, "url": format!("{origin}{path}"),
        "httpVersion": "HTTP/1.1", "cookies": [], "queryString": [],
        "headers": [{"name": "Content-Type", "value": "application/json"}],
        "headersSize": -1, "bodySize": 0
    });
    if let Some(body) = body {
        let req = body.to_string();
        request["postData"] = json!({"mimeType": "application/json", "text": req});
        request["bodySize"] = json!(req.len());
    }
    json!({
        "startedDateTime": "2026-06-01T12:00:00.000Z", "time": 10,
        "request": request,
        "response": {
            "status": 200, "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": [{"name": "Content-Type", "value": "application/json"}],
            "content": {"size": resp.len(), "mimeType": "application/json", "text": resp},
            "redirectURL": "", "headersSize": -1, "bodySize": resp.len()
        },
        "cache": {}, "timings": {"send": 0, "wait": 10, "receive": 0}
    })
}

/// `entry` answered `status` instead of 200.
pub fn with_status(mut entry: Value, status: u16) -> Value {
    entry["response"]["status"] = json!(status);
    entry
}

/// `entry` answered `204` with no body and no headers.
pub fn no_content(mut entry: Value) -> Value {
    entry["response"]["status"] = json!(204);
    entry["response"]["content"] = json!({"size": 0, "mimeType": "", "text": ""});
    entry["response"]["headers"] = json!([]);
    entry["response"]["bodySize"] = json!(0);
    entry
}

/// The `name` of every item of a JSON array answer, in order.
pub fn names(r: &super::Resp) -> Vec<String> {
    r.json()
        .as_array()
        .expect("an array answer")
        .iter()
        .map(|it| it["name"].as_str().expect("a name").to_string())
        .collect()
}

/// Runs `wraith <args>` in the twin's temp dir with `env`, asserting success.
pub fn run(t: &Twin, env: &[(&str, &str)], args: &[&str]) {
    let out = Command::new(super::bin())
        .current_dir(t.tmp.path())
        .envs(env.iter().copied())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "wraith {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes `entries` as the HAR file `name` (one recorded session) and imports it.
pub fn import(t: &Twin, env: &[(&str, &str)], name: &str, entries: Vec<Value>) {
    import_warnings(t, env, name, entries);
}

/// [`import`], returning what the import printed on stderr (its warnings).
pub fn import_warnings(t: &Twin, env: &[(&str, &str)], name: &str, entries: Vec<Value>) -> String {
    let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
        "pages": [], "entries": entries}});
    let path = t.tmp.path().join(name);
    std::fs::write(&path, har.to_string()).unwrap();
    let out = Command::new(super::bin())
        .current_dir(t.tmp.path())
        .envs(env.iter().copied())
        .args(["import", &t.path_str()])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "wraith import: {stderr}");
    stderr
}

/// Imports each of `runs` as a HAR file of its own (`run<n>.har`), every entry of run `n`
/// started on day `n + 1` of June 2026, so the runs' sessions sort in the order given.
pub fn import_runs(t: &Twin, runs: Vec<Vec<Value>>) {
    for (n, mut entries) in runs.into_iter().enumerate() {
        for e in &mut entries {
            e["startedDateTime"] = json!(format!("2026-06-{:02}T12:00:00.000Z", n + 1));
        }
        import(t, &[], &format!("run{n}.har"), entries);
    }
}

/// A twin `name` of `origin` of `runs` ([`import_runs`]), synthesized.
pub fn runs_twin(name: &str, origin: &str, runs: Vec<Vec<Value>>) -> Twin {
    let t = Twin::init(name, origin);
    import_runs(&t, runs);
    synth(&t, &[]);
    t
}

/// `wraith synth` of the twin.
pub fn synth(t: &Twin, env: &[(&str, &str)]) {
    run(t, env, &["synth", &t.path_str()]);
}

/// The route `method path` of the model synth wrote, as JSON.
pub fn model_route(t: &Twin, method: &str, path: &str) -> Value {
    let text = std::fs::read_to_string(t.root.join("model/twin.wir.json")).expect("a model");
    let model: Value = serde_json::from_str(&text).expect("model JSON");
    model["routes"]
        .as_array()
        .expect("routes")
        .iter()
        .find(|r| r["method"] == method && r["path"] == path)
        .cloned()
        .unwrap_or_else(|| panic!("no route {method} {path}"))
}

/// A twin `name` of `origin` whose recordings `record(&twin, n)` imports for each `n` in
/// `1..=sessions`, synthesized: a model learned from that many recorded sessions alike.
pub fn synth_twin(
    name: &str,
    origin: &str,
    env: &[(&str, &str)],
    sessions: u64,
    record: impl Fn(&Twin, u64),
) -> Twin {
    let t = Twin::init(name, origin);
    for n in 1..=sessions {
        record(&t, n);
    }
    synth(&t, env);
    t
}

/// A record key as text: a string's content, a number's JSON spelling.
pub fn key_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
