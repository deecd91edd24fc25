//! A tiny HTTP twin for `wraith check --target` tests: every request is answered by a plain
//! function, with the provenance and route headers a real twin sends. Keep-alive connections,
//! `content-length` bodies only.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

use serde_json::Value;

/// One request as the fake twin sees it.
pub struct Call<'a> {
    pub method: &'a str,
    /// Path and query as sent.
    pub target: &'a str,
    /// The `X-Wraith-Session` header.
    pub session: &'a str,
    pub body: &'a [u8],
}

/// What the fake twin answers: status, `X-Wraith-Provenance`, `X-Wraith-Route`, JSON body.
pub struct Answer {
    pub status: u16,
    pub provenance: &'static str,
    pub route: String,
    pub body: Value,
}

/// Start the fake twin on 127.0.0.1 (a free port); returns its base URL. The listener thread
/// lives as long as the test process.
pub fn start(answer: impl Fn(&Call<'_>) -> Answer + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let answer = Arc::clone(&answer);
            std::thread::spawn(move || serve_connection(stream, &*answer));
        }
    });
    url
}

fn serve_connection(stream: std::net::TcpStream, answer: &dyn Fn(&Call<'_>) -> Answer) {
    let mut out = stream.try_clone().unwrap();
    let mut r = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let target = parts.next().unwrap_or("").to_string();
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
        if r.read_exact(&mut body).is_err() {
            return;
        }
        let a = answer(&Call {
            method: &method,
            target: &target,
            session: &session,
            body: &body,
        });
        let text = a.body.to_string();
        let head = format!(
            "HTTP/1.1 {} X\r\ncontent-type: application/json\r\nx-wraith-provenance: {}\r\n\
             x-wraith-route: {}\r\ncontent-length: {}\r\n\r\n",
            a.status,
            a.provenance,
            a.route,
            text.len()
        );
        if out.write_all(head.as_bytes()).is_err() || out.write_all(text.as_bytes()).is_err() {
            return;
        }
    }
}
