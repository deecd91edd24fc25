//! A client that stops half way through a request, or never starts one, does not hold its
//! connection for ever: `[serve.limits] request_idle_timeout_ms` bounds the wait for its first
//! bytes (the connection is closed), for the rest of its headers and
//! for each next part of its body (408 `request-timeout`), while a body that keeps arriving,
//! however slowly, is read whole. Black-box: raw TCP to the real binary on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use support::Server;

fn connect(server: &Server) -> TcpStream {
    let addr = server.url.trim_start_matches("http://");
    let s = TcpStream::connect(addr).unwrap();
    // A bound on the test, not a figure it measures: far above the 300 ms idle timeout.
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// Everything the server sends until it closes the connection or answers once.
fn read_answer(s: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&out);
                if let Some(head_end) = text.find("\r\n\r\n") {
                    let length = text[..head_end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    if out.len() >= head_end + 4 + length {
                        break;
                    }
                }
            }
            Err(e) => panic!("the server neither answered nor closed the connection: {e}"),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn slow_twin() -> support::Twin {
    let t = support::example_shop_twin();
    t.set_toml("serve.limits", "request_idle_timeout_ms", "300");
    t
}

#[test]
fn a_body_that_stops_arriving_is_answered_408_request_timeout() {
    let t = slow_twin();
    let server = t.serve(&[]);
    let mut s = connect(&server);
    s.write_all(
        b"POST /customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
          Content-Length: 100\r\n\r\n{\"n",
    )
    .unwrap();
    let answer = read_answer(&mut s);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"request-timeout\""), "{answer}");
    assert!(answer.contains("request_idle_timeout_ms"), "{answer}");
}

#[test]
fn half_sent_headers_are_given_up_on() {
    let t = slow_twin();
    let server = t.serve(&[]);
    let mut s = connect(&server);
    s.write_all(b"GET /customers HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let answer = read_answer(&mut s);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
}

#[test]
fn a_connection_that_sends_nothing_is_closed() {
    let t = slow_twin();
    let server = t.serve(&[]);
    let mut s = connect(&server);
    let mut buf = [0u8; 16];
    // Closed (0 bytes, or a reset), not the 20 s read timeout of `connect`.
    match s.read(&mut buf) {
        Ok(n) => assert_eq!(n, 0, "nothing to answer, so nothing is sent"),
        Err(e) => assert!(
            !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "the connection was left open: {e}"
        ),
    }
}

#[test]
fn a_body_that_keeps_arriving_slowly_is_read_whole() {
    let t = slow_twin();
    let server = t.serve(&[]);
    let body = br#"{"name": "slow", "email": "slow@example.com"}"#;
    let mut s = connect(&server);
    write!(
        s,
        "POST /customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    // Ten pieces 100 ms apart: about a second in all, each within the 300 ms idle timeout.
    for piece in body.chunks(body.len().div_ceil(10)) {
        s.write_all(piece).unwrap();
        s.flush().unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    let answer = read_answer(&mut s);
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert!(answer.contains("\"slow@example.com\""), "{answer}");
}
