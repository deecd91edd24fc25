//! Test-only loaders: HAR corpora → recorded sessions (so synth tests need not wait for the
//! import command), the shared corpora location, a builder for small synthetic exchanges, and the synth call
//! the tests of such exchanges share.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::Value;
use wraith_model::{Model, Route};
use wraith_recording::{
    Content, Correlation, Exchange, Frame, Headers, Manifest, RecordedRequest, RecordedResponse,
    RecordedSession, Safety, Timing,
};
use wraith_synth::{SynthOptions, synthesize};

/// One recorded JSON exchange: `headers` are the request's (lowercase names), `body` its JSON
/// body if any; the answer is `status` with a JSON `answer`.
pub fn json_exchange(
    method: &str,
    path: &str,
    status: u16,
    headers: Headers,
    body: Option<&Value>,
    answer: &Value,
) -> Exchange {
    let mut resp_headers = Headers::new();
    resp_headers.insert("content-type".into(), vec!["application/json".into()]);
    Exchange {
        protocol: "http".into(),
        request: RecordedRequest {
            method: method.to_string(),
            path: path.to_string(),
            query: String::new(),
            headers,
            body: body
                .map(|b| b.to_string().into_bytes())
                .unwrap_or_default()
                .into(),
            content_type: body.map(|_| "application/json".into()),
            origin: None,
        },
        response: RecordedResponse {
            status,
            headers: resp_headers,
            content_type: Some("application/json".into()),
            trailers: None,
        },
        frames: vec![Frame {
            direction: "server".into(),
            timestamp_us: 0,
            body: answer.to_string().into_bytes(),
            frame_type: "data".into(),
        }],
        timing: Timing::default(),
        correlation: Correlation::default(),
        safety: Safety::default(),
        content: Content::default(),
        truncated: false,
    }
}

/// Request headers saying the body is JSON (`content-type: application/json`).
pub fn json_headers() -> Headers {
    let mut h = Headers::new();
    h.insert("content-type".into(), vec!["application/json".into()]);
    h
}

/// A recorded 200 exchange sent with the `Authorization` value `auth` and the JSON request
/// `body`, answered `answer`.
pub fn authed_json(
    method: &str,
    path: &str,
    auth: &str,
    body: Option<Value>,
    answer: Value,
) -> Exchange {
    let mut headers = Headers::new();
    headers.insert("authorization".into(), vec![auth.to_string()]);
    let mut ex = json_exchange(method, path, 200, headers, body.as_ref(), &answer);
    ex.request.content_type = Some("application/json".into());
    ex
}

/// A recorded `200` JSON exchange whose request, if it has a body, sent JSON (see
/// [`json_exchange`]).
pub fn ok_json(method: &str, path: &str, body: Option<&Value>, answer: &Value) -> Exchange {
    json_exchange(method, path, 200, json_headers(), body, answer)
}

/// What synth makes of `sessions` as twin `twin` of `base_url`, every other option its
/// default: the synthetic-recording tests need nothing else set.
pub fn synth_model(twin: &str, base_url: &str, sessions: &[RecordedSession]) -> Model {
    let opts = SynthOptions {
        twin: twin.into(),
        base_url: base_url.into(),
        ..SynthOptions::default()
    };
    synthesize(sessions, &opts).model
}

/// The model's `method path` route (path with synth's parameter names); panics naming the
/// routes there are when it has none.
pub fn route<'m>(m: &'m Model, method: &str, path: &str) -> &'m Route {
    m.routes
        .iter()
        .find(|r| r.method == method && r.path == path)
        .unwrap_or_else(|| {
            let all: Vec<String> = m
                .routes
                .iter()
                .map(|r| format!("{} {}", r.method, r.path))
                .collect();
            panic!("no route {method} {path} in {all:?}")
        })
}

/// The guard of the model's `method path` variant answering `status`; panics when there is
/// none.
pub fn variant_guard(m: &Model, method: &str, path: &str, status: u16) -> wraith_model::Guard {
    route(m, method, path)
        .variants
        .iter()
        .find(|v| v.status == status)
        .unwrap_or_else(|| panic!("no {status} variant of {method} {path}"))
        .guard
        .clone()
}

/// A complete recorded session `id` of `exchanges` (indexed in order), started at `start_us`
/// (each exchange's request then starts a microsecond after the one before); `0`: no time.
/// Synthesize one session per entry of `runs` (`s0`, `s1`, … a second apart, in order).
pub fn synth_runs(twin: &str, base_url: &str, runs: Vec<Vec<Exchange>>) -> Model {
    let sessions: Vec<RecordedSession> = runs
        .into_iter()
        .enumerate()
        .map(|(i, ex)| session(&format!("s{i}"), 1_000_000 * (i as u64 + 1), ex))
        .collect();
    synth_model(twin, base_url, &sessions)
}

/// Session `n`'s owner (alice in even sessions, bob in odd ones), its two repositories'
/// names (`first-n`, `second-n`), and the creates of both, answered `id`s from `first_id` and
/// the `full_name` spelling owner and name.
pub fn two_repositories(n: u64, first_id: u64) -> (&'static str, [String; 2], Vec<Exchange>) {
    let names = [format!("first-{n}"), format!("second-{n}")];
    let owner = if n.is_multiple_of(2) { "alice" } else { "bob" };
    let creates = (first_id..)
        .zip(&names)
        .map(|(id, name)| {
            ok_json(
                "POST",
                "/repos",
                Some(&serde_json::json!({"name": name})),
                &serde_json::json!({
                    "id": id, "name": name,
                    "full_name": format!("{owner}/{name}"), "owner": {"login": owner}
                }),
            )
        })
        .collect();
    (owner, names, creates)
}

pub fn session(id: &str, start_us: u64, exchanges: Vec<Exchange>) -> RecordedSession {
    let exchanges: Vec<Exchange> = exchanges
        .into_iter()
        .enumerate()
        .map(|(i, mut e)| {
            e.correlation.exchange_index = i as u64;
            if start_us > 0 {
                e.timing.request_start_us = start_us + i as u64;
            }
            e
        })
        .collect();
    RecordedSession {
        manifest: Manifest {
            complete: true,
            end_time_us: start_us,
            exchange_count: exchanges.len() as u64,
            policy_hash: String::new(),
            proxy_mode: "reverse".into(),
            schema_version: 1,
            session_id: id.to_string(),
            start_time_us: start_us,
            tags: Vec::new(),
            tool_version: "test".into(),
        },
        exchanges,
    }
}

/// `<repo>/../shared/corpora`.
pub fn corpora() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
}

fn headers(list: &Value) -> Headers {
    let mut h = Headers::new();
    for item in list.as_array().into_iter().flatten() {
        let name = item["name"].as_str().unwrap_or("").to_ascii_lowercase();
        let value = item["value"].as_str().unwrap_or("").to_string();
        h.entry(name).or_default().push(value);
    }
    h
}

/// Split an absolute URL into (scheme://authority, path, query).
fn split_url(url: &str) -> (String, String, String) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let (authority, path_query) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (path, query) = path_query.split_once('?').unwrap_or((path_query, ""));
    (
        format!("{scheme}://{authority}"),
        path.to_string(),
        query.to_string(),
    )
}

fn micros(started: &str) -> u64 {
    started
        .parse::<jiff::Timestamp>()
        .map(|t| t.as_microsecond().max(0) as u64)
        .unwrap_or(0)
}

/// Read one HAR file as a recorded session named after the file.
pub fn load_har(path: &Path, base_origin: &str) -> RecordedSession {
    let text = std::fs::read_to_string(path).expect("read HAR");
    let har: Value = serde_json::from_str(&text).expect("parse HAR");
    let session_id = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("session")
        .to_string();
    let mut exchanges = Vec::new();
    for (i, e) in har["log"]["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let req = &e["request"];
        let resp = &e["response"];
        let (origin, path, query) = split_url(req["url"].as_str().unwrap_or("/"));
        let post = &req["postData"];
        let body = match post["text"].as_str() {
            Some(t) if post["_encoding"].as_str() == Some("base64") => {
                base64::engine::general_purpose::STANDARD
                    .decode(t)
                    .unwrap_or_default()
            }
            Some(t) => t.as_bytes().to_vec(),
            None => Vec::new(),
        };
        let req_ct = post["mimeType"]
            .as_str()
            .filter(|s| !s.is_empty() && !body.is_empty())
            .map(str::to_string);
        let resp_body = resp["content"]["text"]
            .as_str()
            .unwrap_or("")
            .as_bytes()
            .to_vec();
        let start = micros(e["startedDateTime"].as_str().unwrap_or(""));
        let took = (e["time"].as_f64().unwrap_or(0.0) * 1000.0) as u64;
        let resp_headers = headers(&resp["headers"]);
        let resp_ct = resp["content"]["mimeType"]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        exchanges.push(Exchange {
            protocol: "http".into(),
            request: RecordedRequest {
                method: req["method"].as_str().unwrap_or("GET").to_string(),
                path,
                query,
                headers: headers(&req["headers"]),
                body: body.into(),
                content_type: req_ct,
                origin: (origin != base_origin).then_some(origin),
            },
            response: RecordedResponse {
                status: resp["status"].as_u64().unwrap_or(0) as u16,
                headers: resp_headers,
                content_type: resp_ct,
                trailers: None,
            },
            frames: vec![Frame {
                direction: "server".into(),
                timestamp_us: start + took,
                body: resp_body,
                frame_type: "data".into(),
            }],
            timing: Timing {
                request_start_us: start,
                first_byte_us: start + took,
                last_byte_us: start + took,
            },
            correlation: Correlation {
                exchange_index: i as u64,
                tags: Vec::new(),
            },
            safety: Safety::default(),
            content: Content::default(),
            truncated: false,
        });
    }
    let start = exchanges
        .first()
        .map(|e| e.timing.request_start_us)
        .unwrap_or(0);
    let end = exchanges
        .last()
        .map(|e| e.timing.request_start_us)
        .unwrap_or(0);
    RecordedSession {
        manifest: Manifest {
            complete: true,
            end_time_us: end,
            exchange_count: exchanges.len() as u64,
            policy_hash: String::new(),
            proxy_mode: "import".into(),
            schema_version: 1,
            session_id,
            start_time_us: start,
            tags: Vec::new(),
            tool_version: "test".into(),
        },
        exchanges,
    }
}

/// Every HAR of a corpus folder, sorted by file name.
pub fn load_corpus(name: &str, base_origin: &str) -> Vec<RecordedSession> {
    let dir = corpora().join(name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "har"))
        .collect();
    files.sort();
    files.iter().map(|p| load_har(p, base_origin)).collect()
}

/// `e` with its request body replaced by the form `form`, declared as one.
pub fn with_form_body(mut e: Exchange, form: String) -> Exchange {
    e.request.body = form.into_bytes().into();
    e.request.content_type = Some("application/x-www-form-urlencoded".into());
    e.request.headers.insert(
        "content-type".into(),
        vec!["application/x-www-form-urlencoded".into()],
    );
    e
}
