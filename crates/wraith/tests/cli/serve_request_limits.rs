//! What `wraith serve` answers a request head past its limits: more than 100 header fields
//! or more than 400 KiB of them, and an over-long `X-Wraith-Session`, are refused by the twin
//! itself, with its JSON error envelope and the control headers of an answer it invented;
//! only past hyper's own ceilings (256 header fields, a 1 MiB head, a 65,534-byte URI) does
//! hyper answer, bare. Black-box: the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use support::Resp;
use support::model::shop;
use support::{Server, Twin};

fn twin() -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&shop("shop"));
    t
}

/// `GET path` with `n` extra headers `x-extra-<i>: <value>`.
async fn with_headers(s: &Server, path: &str, n: usize, value: &str) -> Resp {
    let headers: Vec<(String, String)> = (0..n)
        .map(|i| (format!("x-extra-{i}"), value.to_string()))
        .collect();
    let refs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    s.send("GET", path, Some("limits"), &refs, None).await
}

#[track_caller]
fn assert_envelope(r: &Resp, status: u16, error: &str) {
    r.assert_status(status);
    assert_eq!(r.json()["error"], error, "{:?}", r.headers);
    assert!(r.json()["message"].is_string());
    assert_eq!(r.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn request_heads_past_the_twins_limits_are_refused_431_with_its_envelope() {
    let t = twin();
    let s = t.serve(&[]);
    let within = with_headers(&s, "/v1/customers/cus_1", 60, "x").await;
    within.assert_status(200);
    // More header fields than the twin reads.
    let many = with_headers(&s, "/v1/customers/cus_1", 120, "x").await;
    assert_envelope(&many, 431, "request-header-fields-too-large");
    assert_eq!(many.provenance(), Some("miss"));
    assert_eq!(many.header("x-wraith-route"), Some("GET /v1/customers/:id"));
    assert!(many.header("x-wraith-twin-age").is_some());
    // More header bytes than the twin reads, in one field.
    let big = "b".repeat(450 * 1024);
    let wide = with_headers(&s, "/v1/customers/cus_1", 1, &big).await;
    assert_envelope(&wide, 431, "request-header-fields-too-large");
    assert_eq!(wide.provenance(), Some("miss"));
    // The control plane answers the same envelope.
    let control = with_headers(&s, "/__wraith/health", 120, "x").await;
    assert_envelope(&control, 431, "request-header-fields-too-large");
    // The server still answers on.
    s.get("/v1/customers/cus_1", Some("limits"))
        .await
        .assert_status(200);
}

#[tokio::test]
async fn an_over_long_session_header_is_a_400_with_the_envelope_up_to_hypers_ceiling() {
    let t = twin();
    let s = t.serve(&[]);
    for len in [1025, 500 * 1024, 900 * 1024] {
        let id = "s".repeat(len);
        let r = s.get("/v1/customers/cus_1", Some(&id)).await;
        assert_envelope(&r, 400, "bad-session-header");
        let message = r.json()["message"].as_str().unwrap().to_string();
        assert!(message.contains(&format!("{len} bytes long")), "{message}");
        assert_eq!(r.provenance(), Some("miss"));
    }
}

#[tokio::test]
async fn past_hypers_own_ceilings_the_answer_is_a_bare_431_or_414() {
    let t = twin();
    let s = t.serve(&[]);
    let many = with_headers(&s, "/v1/customers/cus_1", 300, "x").await;
    many.assert_status(431);
    assert!(many.body.is_empty());
    assert!(many.wraith_headers().is_empty(), "{:?}", many.headers);
    // Past what an HTTP client's URI type holds, so written by hand.
    let long = format!("/v1/customers/{}", "u".repeat(70_000));
    let answer = raw_get(&s, &long);
    assert!(
        answer.starts_with("HTTP/1.1 414 "),
        "{}",
        answer.lines().next().unwrap_or_default()
    );
    assert!(
        !answer.to_ascii_lowercase().contains("x-wraith-"),
        "{answer}"
    );
    assert!(answer.ends_with("\r\n\r\n"), "no body: {answer}");
}

/// `GET target` written on a fresh connection, and everything the server sent back until it
/// closed the connection.
fn raw_get(s: &Server, target: &str) -> String {
    use std::io::{Read, Write};
    let addr = s.url.trim_start_matches("http://");
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    write!(
        conn,
        "GET {target} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    conn.read_to_end(&mut out).unwrap();
    String::from_utf8_lossy(&out).into_owned()
}
