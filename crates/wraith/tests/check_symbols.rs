//! `wraith check` holds ids the twin minted to themselves: once a session's create was answered
//! with the twin's id, a later answer showing that entity must show the same id
//! (`symbol_mismatch`, the `symbol_consistency` dimension). Black-box: the real binary on a small
//! notes twin built from HARs written here (each session creates a note, then lists notes),
//! checked `--target` a tiny HTTP twin written here whose list answers the minted id or
//! another one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod check_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;

use check_support::*;
use serde_json::{Value, json};

const SESSIONS: [(&str, &str); 3] = [
    ("note_ujzde8gxd6nc", "buy milk"),
    ("note_k2m9qp4rt7wa", "call bob"),
    ("note_x8v3n6hy1cse", "water plants"),
];

fn entry(method: &str, url: &str, req_body: Option<&str>, status: u16, resp: &Value) -> Value {
    let mut request = json!({
        "method": method, "url": url, "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": [{"name": "Accept", "value": "application/json"}],
        "queryString": [], "headersSize": -1, "bodySize": 0
    });
    if let Some(b) = req_body {
        request["headers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "Content-Type", "value": "application/json"}));
        request["postData"] = json!({"mimeType": "application/json", "text": b});
        request["bodySize"] = json!(b.len());
    }
    let text = resp.to_string();
    json!({
        "startedDateTime": "2026-06-01T12:00:00.000Z", "time": 10, "request": request,
        "response": {
            "status": status, "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": [{"name": "Content-Type", "value": "application/json"}],
            "content": {"size": text.len(), "mimeType": "application/json", "text": text},
            "redirectURL": "", "headersSize": -1, "bodySize": text.len()
        },
        "cache": {}, "timings": {"send": 0, "wait": 10, "receive": 0}
    })
}

/// A notes twin whose every recorded session creates a note and then lists it.
fn notes_twin() -> DemoTwin {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .current_dir(tmp.path())
        .args(["init", "notes", "--base-url", "https://api.notes.test/v1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let root = tmp.path().join("twins/notes");
    let t = DemoTwin { tmp, root };
    for (i, (id, text)) in SESSIONS.iter().enumerate() {
        let note = json!({"id": id, "object": "note", "text": text});
        let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
        "pages": [], "entries": [
            entry("POST", "https://api.notes.test/v1/notes",
                Some(&json!({"text": text}).to_string()), 201, &note),
            entry("GET", "https://api.notes.test/v1/notes", None, 200,
                &json!({"object": "list", "data": [note]})),
        ]}});
        let path = t.tmp.path().join(format!("notes-{i}.har"));
        std::fs::write(&path, har.to_string()).unwrap();
        let out = t.run(&["import", &path.to_string_lossy()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    t.synth();
    t
}

/// A twin over HTTP that answers every create with `note_minted000001` and every list with
/// one note of id `list_id` carrying the text the namespace last posted.
fn fake_target(list_id: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let texts = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::<
            String,
            String,
        >::new()));
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let texts = std::sync::Arc::clone(&texts);
            std::thread::spawn(move || serve_connection(stream, list_id, &texts));
        }
    });
    url
}

fn serve_connection(
    stream: std::net::TcpStream,
    list_id: &str,
    texts: &std::sync::Mutex<std::collections::BTreeMap<String, String>>,
) {
    let mut out = stream.try_clone().unwrap();
    let mut r = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let (method, path) = (
            parts.next().unwrap_or("").to_string(),
            parts.next().unwrap_or("").to_string(),
        );
        let (mut len, mut session) = (0usize, String::new());
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                match k.trim().to_ascii_lowercase().as_str() {
                    "content-length" => len = v.trim().parse().unwrap_or(0),
                    "x-wraith-session" => session = v.trim().to_string(),
                    _ => {}
                }
            }
        }
        let mut body = vec![0; len];
        r.read_exact(&mut body).unwrap();
        let (status, route, answer) = if method == "POST" {
            let text = serde_json::from_slice::<Value>(&body).unwrap()["text"].clone();
            texts
                .lock()
                .unwrap()
                .insert(session, text.as_str().unwrap_or("").to_string());
            let note = json!({"id": "note_minted000001", "object": "note", "text": text});
            (201, "POST /v1/notes", note)
        } else {
            let text = texts
                .lock()
                .unwrap()
                .get(&session)
                .cloned()
                .unwrap_or_default();
            let note = json!({"id": list_id, "object": "note", "text": text});
            (
                200,
                "GET /v1/notes",
                json!({"object": "list", "data": [note]}),
            )
        };
        assert!(path.starts_with("/v1/notes"), "{path}");
        let text = answer.to_string();
        let head = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\nx-wraith-provenance: template\r\n\
             x-wraith-route: {route}\r\ncontent-length: {}\r\n\r\n",
            text.len()
        );
        if out.write_all(head.as_bytes()).is_err() || out.write_all(text.as_bytes()).is_err() {
            return;
        }
    }
}

fn symbol_mismatches(r: &Value) -> Vec<&Value> {
    r["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["category"] == "symbol_mismatch")
        .collect()
}

#[test]
fn check_list_naming_another_id_than_the_twin_minted_is_a_symbol_mismatch() {
    let t = notes_twin();
    let url = fake_target("note_minted000002");
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    // The twin's ids at the list's `generated` id position are of the right type, so only the
    // symbol rule can see that the list names another note than the one just created.
    let found = symbol_mismatches(&r);
    assert_eq!(found.len(), 3, "{:#}", r["divergences"]);
    for d in &found {
        assert_eq!(d["route"], "GET /v1/notes");
        assert_eq!(d["path"], "body.data[0].id");
        assert_eq!(
            d["expected"], "note_minted000001",
            "the id the create answered"
        );
        assert_eq!(d["actual"], "note_minted000002");
    }
    assert_eq!(r["categories"]["symbol_mismatch"], 3);
    assert_eq!(r["exchanges_passed"], 3, "the creates pass, the lists fail");
    // Judged on all six answers, failed by the three lists.
    assert_eq!(r["dimensions"]["symbol_consistency"]["score_bp"], 5_000);
    assert_eq!(r["dimensions_failed"][0]["dimension"], "symbol_consistency");
    assert_eq!(r["dimensions"]["body_values"]["score_bp"], 10_000);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn check_list_naming_the_id_the_twin_minted_is_symbol_consistent() {
    let t = notes_twin();
    let url = fake_target("note_minted000001");
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    assert!(symbol_mismatches(&r).is_empty(), "{:#}", r["divergences"]);
    assert_eq!(r["dimensions"]["symbol_consistency"]["score_bp"], 10_000);
    assert_eq!(r["score_bp"], 10_000, "{:#}", r["divergences"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn check_symbol_mismatch_is_suppressible_with_its_reason() {
    let t = notes_twin();
    let cfg = t.root.join("wraith.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(
        "\n[[diff.suppress]]\ncategory = \"symbol_mismatch\"\nreason = \"lists are served from a fixed page\"\n",
    );
    std::fs::write(&cfg, text).unwrap();
    let url = fake_target("note_minted000002");
    let out = t.run(&["check", "--target", &url, "--json"]);
    let r = stdout_json(&out);
    assert!(symbol_mismatches(&r).is_empty());
    assert_eq!(r["suppressed_count"], 3);
    assert_eq!(out.status.code(), Some(0), "{:#}", r["divergences"]);
}
