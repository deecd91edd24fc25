//! A path spelled otherwise than any recording (a trailing slash added or left out, a doubled
//! slash) matches its route, but is never the recording of the other spelling: no `recorded`
//! exact replay, no `X-Wraith-Exchange`, no `X-Wraith-Replay`. Under strict fidelity, which
//! serves only recorded paths, it is a route miss. Black-box: the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::Twin;
use support::har::entry;

const ORIGIN: &str = "https://api.things.test";
const ENV: [(&str, &str); 1] = [("WRAITH_HMAC_KEY", "path-spellings-key")];

/// A twin that recorded `GET /things` and `GET /items/` (with its slash), once each.
fn twin() -> Twin {
    let t = Twin::init("things", ORIGIN);
    support::har::import(
        &t,
        &ENV,
        "things.har",
        vec![
            entry(
                ORIGIN,
                "GET",
                "/things",
                None,
                &json!([{"id": 1, "name": "a"}]),
            ),
            entry(
                ORIGIN,
                "GET",
                "/items/",
                None,
                &json!([{"id": 2, "name": "b"}]),
            ),
        ],
    );
    support::har::synth(&t, &ENV);
    t
}

#[tokio::test]
async fn a_path_spelled_unlike_its_recording_matches_the_route_but_is_never_claimed_recorded() {
    let t = twin();
    let s = t.serve_env(&[], &ENV);
    // Each asked first in a session of its own, where the recording's own spelling would be
    // replayed with a series-moment claim.
    for (n, (path, route)) in [
        ("/things/", "GET /things"),
        ("//things", "GET /things"),
        ("/items", "GET /items/"),
        ("//items//", "GET /items/"),
    ]
    .into_iter()
    .enumerate()
    {
        let r = s.get(path, Some(&format!("spelled-{n}"))).await;
        r.assert_status(200);
        assert_eq!(r.header("x-wraith-route"), Some(route), "{path}");
        assert_ne!(r.provenance(), Some("recorded"), "{path}: {:?}", r.headers);
        assert_eq!(r.header("x-wraith-exchange"), None, "{path}");
        assert_eq!(r.header("x-wraith-replay"), None, "{path}");
    }
    for path in ["/things", "/items/"] {
        let r = s.get(path, Some(path)).await;
        r.assert_status(200);
        assert_eq!(r.provenance(), Some("recorded"), "{path}");
        assert_eq!(
            r.header("x-wraith-replay"),
            Some("series-moment;v=1"),
            "{path}"
        );
    }
}

#[tokio::test]
async fn under_strict_fidelity_a_path_spelled_unlike_any_recording_is_a_route_miss() {
    let t = twin();
    let s = t.serve_env(&["--fidelity", "strict"], &ENV);
    for path in ["/things/", "//things", "/items"] {
        let r = s.get(path, Some("strict")).await;
        r.assert_status(501);
        assert_eq!(r.provenance(), Some("miss"), "{path}");
        assert_eq!(r.header("x-wraith-route"), None, "{path}");
        assert_eq!(r.json()["error"], json!("no matching route"), "{path}");
    }
    let r = s.get("/things", Some("strict")).await;
    r.assert_status(200);
    assert_eq!(r.provenance(), Some("recorded"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /things"));
}

/// A dot segment, plain or percent-encoded, is refused with the error envelope's hyphenated
/// code, as an application answer the twin invented. Sent raw: an HTTP client library would
/// resolve the segments before sending.
#[test]
fn a_path_with_a_dot_segment_is_refused_as_invalid_path() {
    use std::io::{Read as _, Write as _};
    let t = twin();
    let s = t.serve_env(&[], &ENV);
    let addr = s.url.trim_start_matches("http://").to_string();
    for path in ["/things/./1", "/items/x/../1", "/things/%2E%2E/things"] {
        let mut conn = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            conn,
            "GET {path} HTTP/1.1\r\nHost: twin\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        conn.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 400 "), "{path}: {answer}");
        let lower = answer.to_ascii_lowercase();
        assert!(
            lower.contains("x-wraith-provenance: miss"),
            "{path}: {answer}"
        );
        assert!(
            answer.contains(r#""error":"invalid-path""#),
            "{path}: {answer}"
        );
    }
}
