//! `wraith record` in front of an upstream that compresses its answers although the recorder
//! asks for `identity`: the client gets the bytes as the upstream sent them, the recording holds
//! the decoded body without `content-encoding`, and the twin synthesized from it answers the
//! plain JSON. A recording an older recorder made of such an answer (the compressed bytes with
//! their `content-encoding`) is served as its JSON too. A request body the client sends
//! compressed reaches the upstream as sent and is recorded decoded and scrubbed. Black-box: the
//! real binary, upstreams in this file and in `record_support`, recordings read and written with
//! the recording library.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::record_support;
use crate::support;

use std::convert::Infallible;
use std::io::Write as _;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::Value;

const WIDGET: &str = r#"{"id":"w_1","name":"sprocket","qty":3}"#;
const PART: &str = r#"{"id":"p_1","kind":"bolt"}"#;
const GADGET: &str = r#"{"id":"g_1","kind":"gear","teeth":12}"#;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn raw_deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn brotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = brotli::CompressorWriter::new(&mut out, 4096, 9, 22);
    w.write_all(data).unwrap();
    drop(w);
    out
}

/// Labelled `gzip`, but not gzip data.
const NOT_GZIP: &[u8] = b"\x1f\x8bthis is not really gzip";

/// What the upstream answers for `path`, whatever `Accept-Encoding` says: `/widgets/w_1` gzip,
/// `/parts/p_1` raw deflate, `/gadgets/g_1` Brotli, `/broken` a body labelled gzip that is not.
fn encoded(path: &str) -> (&'static str, Vec<u8>) {
    match path {
        "/widgets/w_1" => ("gzip", gzip(WIDGET.as_bytes())),
        "/parts/p_1" => ("deflate", raw_deflate(PART.as_bytes())),
        "/gadgets/g_1" => ("br", brotli(GADGET.as_bytes())),
        _ => ("gzip", NOT_GZIP.to_vec()),
    }
}

/// An upstream that always compresses, on 127.0.0.1; returns its base URL.
async fn compressing_upstream() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                let service = hyper::service::service_fn(|req: Request<hyper::body::Incoming>| {
                    let (coding, body) = encoded(req.uri().path());
                    let resp = Response::builder()
                        .header("content-type", "application/json")
                        .header("content-encoding", coding)
                        .header("content-length", body.len())
                        .body(Full::new(Bytes::from(body)))
                        .unwrap();
                    async move { Ok::<_, Infallible>(resp) }
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (format!("http://{addr}"), task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compressed_answer_passes_through_and_is_recorded_and_served_decoded() {
    let (base_url, upstream) = compressing_upstream().await;
    let twin = record_support::Twin::init("gz", &base_url);
    let rec = record_support::Recording::start(&twin, &[]);
    let http = record_support::client();

    // The proxy stays transparent: the client gets the compressed bytes and their header.
    for path in ["/widgets/w_1", "/parts/p_1", "/gadgets/g_1", "/broken"] {
        let r = http.get(format!("{}{path}", rec.url)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        let (coding, sent) = encoded(path);
        assert_eq!(
            r.headers()
                .get("content-encoding")
                .map(|v| v.to_str().unwrap()),
            Some(coding),
            "{path}"
        );
        assert_eq!(r.bytes().await.unwrap().to_vec(), sent, "{path}");
    }
    let (status, stderr) = rec.interrupt();
    assert!(status.success(), "record exited with {status}: {stderr}");
    upstream.abort();
    // The body that does not decode is named in a warning.
    assert!(
        stderr.contains("/broken") && stderr.contains("still `gzip`-encoded"),
        "{stderr}"
    );

    // The recording holds the plain bodies, without content-encoding, with their own length.
    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1);
    let by_path = |p: &str| {
        sessions[0]
            .exchanges
            .iter()
            .find(|e| e.request.path == p)
            .unwrap()
    };
    for (path, plain) in [
        ("/widgets/w_1", WIDGET),
        ("/parts/p_1", PART),
        ("/gadgets/g_1", GADGET),
    ] {
        let ex = by_path(path);
        assert_eq!(
            String::from_utf8_lossy(&ex.response_body()),
            plain,
            "{path}"
        );
        assert_eq!(ex.response_header("content-encoding"), None, "{path}");
        assert_eq!(
            ex.response_header("content-length"),
            Some(plain.len().to_string().as_str()),
            "{path}"
        );
        assert_eq!(ex.response_header("content-type"), Some("application/json"));
    }
    // What does not decode is kept exactly as it came.
    let broken = by_path("/broken");
    assert_eq!(broken.response_body(), NOT_GZIP);
    assert_eq!(broken.response_header("content-encoding"), Some("gzip"));

    // The twin synthesized from the recording answers the plain JSON, not labelled encoded.
    let support_twin = support::Twin {
        tmp: twin.tmp,
        root: twin.root,
        name: twin.name,
    };
    let server = support_twin.serve_env(&[], &[("WRAITH_HMAC_KEY", record_support::TEST_HMAC_KEY)]);
    for (path, plain) in [
        ("/widgets/w_1", WIDGET),
        ("/parts/p_1", PART),
        ("/gadgets/g_1", GADGET),
    ] {
        let r = server.get(path, Some("s")).await;
        r.assert_status(200);
        assert_eq!(r.header("content-encoding"), None, "{path}");
        let want: Value = serde_json::from_str(plain).unwrap();
        assert_eq!(r.json(), want, "{path}");
    }
}

/// A session as a recorder before this fix wrote it: `GET /widgets/w_1` answered with gzip
/// bytes, stored with `content-encoding: gzip` and the compressed `content-length`.
fn write_older_gzip_recording(sessions_dir: &std::path::Path) {
    use wraith_recording::scrub::{HmacKey, ScrubPolicy, Scrubber};
    use wraith_recording::session::{SessionMeta, SessionWriter};
    use wraith_recording::{
        Content, Correlation, Exchange, Frame, Headers, RecordedRequest, RecordedResponse, Safety,
        Timing,
    };
    let body = gzip(WIDGET.as_bytes());
    let mut headers = Headers::new();
    headers.insert("content-encoding".into(), vec!["gzip".into()]);
    headers.insert("content-length".into(), vec![body.len().to_string()]);
    headers.insert("content-type".into(), vec!["application/json".into()]);
    let start_us = 1_767_225_600_000_000;
    let ex = Exchange {
        protocol: "http".into(),
        request: RecordedRequest {
            method: "GET".into(),
            path: "/widgets/w_1".into(),
            query: String::new(),
            headers: Headers::new(),
            body: Default::default(),
            content_type: None,
            origin: None,
        },
        response: RecordedResponse {
            status: 200,
            headers,
            content_type: Some("application/json".into()),
            trailers: None,
        },
        frames: vec![Frame {
            direction: "server".into(),
            timestamp_us: start_us + 1,
            body,
            frame_type: "data".into(),
        }],
        timing: Timing {
            request_start_us: start_us,
            first_byte_us: start_us + 1,
            last_byte_us: start_us + 2,
        },
        correlation: Correlation::default(),
        safety: Safety::default(),
        content: Content::default(),
        truncated: false,
    };
    let scrubber = Scrubber::new(
        ScrubPolicy::builtin_only(),
        HmacKey::from_bytes(record_support::TEST_HMAC_KEY.as_bytes().to_vec()),
    );
    let mut writer = SessionWriter::new(
        sessions_dir,
        SessionMeta {
            session_id: "20260101T000000Z-0a0b0c".into(),
            tags: Vec::new(),
            proxy_mode: "reverse".into(),
            policy_hash: scrubber.policy_hash().to_string(),
        },
    )
    .unwrap();
    writer.append(scrubber.scrub(ex)).unwrap();
    writer.finish().unwrap();
}

#[tokio::test]
async fn an_older_recording_of_a_gzip_answer_is_served_as_its_json() {
    let twin = support::Twin::init("gz", "http://api.test");
    write_older_gzip_recording(&twin.root.join("recordings/sessions"));
    let server = twin.serve_env(&[], &[("WRAITH_HMAC_KEY", record_support::TEST_HMAC_KEY)]);
    let r = server.get("/widgets/w_1", Some("s")).await;
    r.assert_status(200);
    assert_eq!(r.header("content-encoding"), None);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let want: Value = serde_json::from_str(WIDGET).unwrap();
    assert_eq!(r.json(), want);
}

/// `wraith check` judges the twin against the decoded body synth learned from, not against
/// the compressed bytes on disk.
#[test]
fn check_judges_an_older_gzip_recording_by_its_json() {
    let twin = support::Twin::init("gz", "http://api.test");
    write_older_gzip_recording(&twin.root.join("recordings/sessions"));
    let run = |args: &[&str]| {
        std::process::Command::new(support::bin())
            .current_dir(twin.tmp.path())
            .env("WRAITH_HMAC_KEY", record_support::TEST_HMAC_KEY)
            .args(args)
            .arg(twin.path_str())
            .args(["--json"])
            .output()
            .unwrap()
    };
    let synth = run(&["synth"]);
    assert!(
        synth.status.success(),
        "{}",
        String::from_utf8_lossy(&synth.stderr)
    );
    let check = run(&["check"]);
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["exchanges_passed"], 1, "{stdout}");
    assert_eq!(report["divergence_count"], 0, "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compressed_request_body_is_recorded_decoded_and_scrubbed() {
    const PASSWORD: &str = "pw_gz1pp3d_r3qu3st_s3cr3t";
    let login = format!(r#"{{"password":"{PASSWORD}","user":"ann","n":1.50}}"#);
    let upstream = record_support::Upstream::start("", None).await;
    let twin = record_support::Twin::init("gzreq", &upstream.base_url);
    let rec = record_support::Recording::start(&twin, &[]);
    let http = record_support::client();

    // gzip, raw deflate and Brotli decode; `compress` is not supported and is kept as sent,
    // with a warning.
    let sent = [
        ("/logins", "gzip", gzip(login.as_bytes())),
        ("/sessions", "deflate", raw_deflate(login.as_bytes())),
        ("/grants", "br", brotli(login.as_bytes())),
        ("/tokens", "compress", b"\x1f\x9d\x90{}".to_vec()),
    ];
    for (path, coding, body) in &sent {
        let r = http
            .post(format!("{}{path}", rec.url))
            .header("content-type", "application/json")
            .header("content-encoding", *coding)
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201, "{path}");
    }
    let (status, stderr) = rec.interrupt();
    assert!(status.success(), "record exited with {status}: {stderr}");
    assert!(
        stderr.contains("/tokens")
            && stderr.contains("request body recorded still `compress`-encoded"),
        "{stderr}"
    );

    // The upstream got every body exactly as the client sent it.
    let seen = upstream.seen();
    for (path, coding, body) in &sent {
        let got = seen.iter().find(|s| s.path == *path).unwrap();
        assert_eq!(got.header("content-encoding"), Some(*coding), "{path}");
        assert_eq!(&got.body, body, "{path}");
    }

    let sessions = twin.sessions();
    let by_path = |p: &str| {
        sessions[0]
            .exchanges
            .iter()
            .find(|e| e.request.path == p)
            .unwrap()
    };
    for path in ["/logins", "/sessions", "/grants"] {
        let ex = by_path(path);
        assert_eq!(ex.request_header("content-encoding"), None, "{path}");
        // The decoded length (scrubbing then changes the body, as it may any body).
        assert_eq!(
            ex.request_header("content-length"),
            Some(login.len().to_string().as_str()),
            "{path}"
        );
        let body = String::from_utf8(ex.request.body.to_vec()).unwrap();
        let token = body
            .strip_prefix(r#"{"password":""#)
            .and_then(|rest| rest.strip_suffix(r#"","user":"ann","n":1.50}"#))
            .unwrap_or_else(|| panic!("{path}: {body}"));
        assert!(token.starts_with("wraith_tok_"), "{path}: {body}");
    }
    let kept = by_path("/tokens");
    assert_eq!(kept.request.body, sent[3].2);
    assert_eq!(kept.request_header("content-encoding"), Some("compress"));
}
