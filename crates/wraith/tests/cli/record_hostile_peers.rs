//! `wraith record` between peers that misbehave: an upstream that ends its answer with trailers,
//! frames it twice, never answers or answers something that is not HTTP, and a client that
//! stops sending its request half way. Each is bounded or recorded faithfully, and the proxy
//! goes on recording. Black-box: the real binary, raw-socket peers in this file, recordings read
//! back with the recording library.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::record_support;

use std::time::Duration;

use record_support::*;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// What a raw upstream does once it has read a request's headers.
#[derive(Clone, Copy)]
enum Answer {
    /// Write these bytes and close.
    Bytes(&'static [u8]),
    /// Never answer (keep the connection open).
    Silence,
}

/// A raw-socket upstream on 127.0.0.1 answering every request with `answer`; its base URL.
async fn raw_upstream(answer: Answer) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                match answer {
                    Answer::Bytes(bytes) => {
                        let _ = stream.write_all(bytes).await;
                        let _ = stream.shutdown().await;
                    }
                    Answer::Silence => {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                    }
                }
            });
        }
    });
    format!("http://{addr}")
}

/// Send `request` on a fresh connection to the proxy and read until it closes or `wait` passes.
async fn raw_exchange(port: u16, request: &[u8], wait: Duration) -> (String, bool) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut got = Vec::new();
    let closed = tokio::time::timeout(wait, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .is_ok();
    (String::from_utf8_lossy(&got).into_owned(), closed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_ending_in_trailers_is_recorded_whole_with_its_trailers() {
    let base = raw_upstream(Answer::Bytes(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\
          trailer: x-sum\r\n\r\n2\r\n{}\r\n0\r\nx-sum: abc\r\n\r\n",
    ))
    .await;
    let twin = Twin::init("trailing", &base);
    let rec = Recording::start(&twin, &[]);
    let r = client()
        .get(format!("{}/sums", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "{}");
    rec.stop();
    let sessions = twin.sessions();
    let ex = &sessions[0].exchanges[0];
    assert!(!ex.truncated, "a body ended by its trailers is whole");
    assert_eq!(ex.response_body(), b"{}");
    let trailers = ex.response.trailers.as_ref().expect("trailers recorded");
    assert_eq!(trailers["x-sum"], ["abc"]);
    assert_eq!(ex.response.headers["trailer"], ["x-sum"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_length_beside_chunked_framing_is_dropped_for_the_client_and_the_recording() {
    let base = raw_upstream(Answer::Bytes(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\
          transfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    ))
    .await;
    let twin = Twin::init("framed", &base);
    let rec = Recording::start(&twin, &[]);
    let r = client()
        .get(format!("{}/things", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("content-length").is_none_or(|v| v == "2"));
    assert_eq!(r.text().await.unwrap(), "{}", "the body arrives whole");
    rec.stop();
    let ex = &twin.sessions()[0].exchanges[0];
    assert!(!ex.truncated);
    assert!(
        !ex.response.headers.contains_key("content-length"),
        "{:?}",
        ex.response.headers
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_never_answers_is_given_up_on_with_504_and_nothing_recorded() {
    let base = raw_upstream(Answer::Silence).await;
    let twin = Twin::init("silent", &base);
    twin.append_config("[proxy]\nupstream_timeout_ms = 300\n");
    let rec = Recording::start(&twin, &[]);
    let r = within("the 504", client().get(format!("{}/slow", rec.url)).send())
        .await
        .unwrap();
    assert_eq!(r.status(), 504);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "upstream_timeout");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("GET /slow") && message.contains("upstream_timeout_ms"),
        "{message}"
    );
    rec.stop();
    assert!(twin.sessions().is_empty(), "nothing recorded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_is_not_http_is_told_apart_from_an_unreachable_upstream() {
    let base = raw_upstream(Answer::Bytes(b"\x00\x01 this is not HTTP at all\r\n\r\n")).await;
    let twin = Twin::init("garbled", &base);
    let rec = Recording::start(&twin, &[]);
    let r = client()
        .get(format!("{}/garbled", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 502);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "upstream_bad_response");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("was reached") && message.contains("GET /garbled"),
        "{message}"
    );
    rec.stop();
    assert!(twin.sessions().is_empty(), "nothing recorded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_body_that_stops_arriving_is_answered_408_and_never_forwarded() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("stalled", &upstream.base_url);
    twin.append_config("[serve.limits]\nrequest_idle_timeout_ms = 300\n");
    let rec = Recording::start(&twin, &[]);
    let (answer, _) = raw_exchange(
        rec.port,
        b"POST /things HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
          content-length: 100\r\n\r\n{\"",
        Duration::from_secs(10),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("request_timeout"), "{answer}");
    // The proxy goes on recording whole requests.
    let r = client()
        .post(format!("{}/things", rec.url))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    rec.stop();
    assert_eq!(
        upstream.seen().len(),
        1,
        "the stalled request never went upstream"
    );
    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].exchanges.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_length_over_the_limit_is_refused_before_the_body_arrives() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("huge", &upstream.base_url);
    // Long enough that a 408 could not arrive first.
    twin.append_config("[serve.limits]\nrequest_idle_timeout_ms = 60000\n");
    let rec = Recording::start(&twin, &[]);
    let (answer, _) = raw_exchange(
        rec.port,
        b"POST /things HTTP/1.1\r\nhost: x\r\ncontent-length: 999999999999\r\n\r\n{",
        Duration::from_secs(10),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("request_too_large"), "{answer}");
    rec.stop();
    assert!(upstream.seen().is_empty());
}

/// A client that stops half way through its request headers, connects and never sends a byte,
/// stops inside the HTTP/2 preface (which hyper's protocol detection waits for whole, with no
/// timer), or opens HTTP/2 and answers no ping, is disconnected after `request_idle_timeout_ms`
/// (twice that for the ping), as `wraith serve` does: each would otherwise hold a socket for
/// ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_request_headers_and_silent_connections_are_given_up_on() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("trickle", &upstream.base_url);
    twin.append_config("[serve.limits]\nrequest_idle_timeout_ms = 300\n");
    let rec = Recording::start(&twin, &[]);
    let sent: [&[u8]; 4] = [
        b"GET /things HTTP/1.1\r\nhost: x\r\n",
        b"",
        b"PRI * HTTP/2",
        // The whole preface and an empty SETTINGS frame, then no answer to the proxy's ping.
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0",
    ];
    for request in sent {
        let (got, closed) = raw_exchange(rec.port, request, Duration::from_secs(10)).await;
        let what = String::from_utf8_lossy(request);
        assert!(closed, "the proxy kept the connection after {what:?}");
        assert!(!got.starts_with("HTTP/1.1 2"), "{what:?}: {got}");
    }
    rec.stop();
    assert!(upstream.seen().is_empty());
}

/// A client connected without sending a byte does not hold up the recorder's stop: it is no
/// exchange in flight, so the stop neither waits for it to the drain timeout nor reports one
/// reached, and what was recorded is finalized.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_connection_does_not_hold_up_the_stop() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("silent", &upstream.base_url);
    twin.append_config("[serve.limits]\nrequest_idle_timeout_ms = 120000\n");
    let rec = Recording::start(&twin, &[]);
    let silent = TcpStream::connect(("127.0.0.1", rec.port)).await.unwrap();
    let (answer, _) = raw_exchange(
        rec.port,
        b"GET /things HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        Duration::from_secs(10),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 "), "{answer}");
    let stderr = rec.stop();
    drop(silent);
    assert!(!stderr.contains("drain timeout"), "{stderr}");
    assert_eq!(twin.sessions().len(), 1, "{stderr}");
}

/// The stop summary tells an upstream that timed out (the client got `504 upstream_timeout`)
/// apart from one that gave no usable answer (502), in text and in `--json`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_counts_upstream_timeouts_as_504s_apart_from_502s() {
    let silent = raw_upstream(Answer::Silence).await;
    let twin = Twin::init("silent", &silent);
    twin.append_config("[proxy]\nupstream_timeout_ms = 300\n");
    for json in [true, false] {
        let rec = Recording::start(&twin, if json { &["--json"] } else { &[] });
        let r = within("the 504", client().get(format!("{}/slow", rec.url)).send())
            .await
            .unwrap();
        assert_eq!(r.status(), 504);
        let stdout = rec.stdout_path().to_path_buf();
        let stderr = rec.stop();
        if json {
            let summary: Value =
                serde_json::from_str(&std::fs::read_to_string(stdout).unwrap()).unwrap();
            assert_eq!(summary["upstream_timeouts"], 1, "{summary}");
            assert_eq!(summary["transport_failures"], 0, "{summary}");
        } else {
            assert!(
                stderr.contains("1 request(s) timed out waiting for the upstream's answer (504"),
                "{stderr}"
            );
            assert!(!stderr.contains("(502)"), "a timeout is no 502: {stderr}");
        }
    }
}
