//! A small notes twin for `wraith check` tests, built from HARs written here: every recorded
//! session creates a note (`POST /v1/notes`, a fresh `note_…` id) and then lists notes
//! (`GET /v1/notes`, `{"object": "list", "data": [the note]}`).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use super::DemoTwin;

pub const SESSIONS: [(&str, &str); 3] = [
    ("note_ujzde8gxd6nc", "buy milk"),
    ("note_k2m9qp4rt7wa", "call bob"),
    ("note_x8v3n6hy1cse", "water plants"),
];

pub fn entry(method: &str, url: &str, req_body: Option<&str>, status: u16, resp: &Value) -> Value {
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
pub fn notes_twin() -> DemoTwin {
    let t = DemoTwin::init("notes", "https://api.notes.test/v1");
    for (i, (id, text)) in SESSIONS.iter().enumerate() {
        let note = json!({"id": id, "object": "note", "text": text});
        let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
        "pages": [], "entries": [
            entry("POST", "https://api.notes.test/v1/notes",
                Some(&json!({"text": text}).to_string()), 201, &note),
            entry("GET", "https://api.notes.test/v1/notes", None, 200,
                &json!({"object": "list", "data": [note]})),
        ]}});
        t.import_har(&format!("notes-{i}"), &har);
    }
    t.synth();
    t
}
