//! Request bodies a client sends compressed: `wraith serve` undoes the codings its
//! `Content-Encoding` lists, as the recorder does before it stores a request body, so a
//! compressed request is answered as the recording of its decoded body; a body that does not
//! decode as labelled, a coding the twin does not know, or one decoding past the body cap is
//! refused with the error envelope. Black-box: the real binary serving the bundled shop twin.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::Write;

use support::{Resp, Server};

/// The body of a recorded create the API refused (no email): exchange 000007.
const RECORDED_BODY: &[u8] = br#"{"name":"Nobody"}"#;

fn gzip(body: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(body).unwrap();
    e.finish().unwrap()
}

fn zlib(body: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(body).unwrap();
    e.finish().unwrap()
}

fn brotli(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
    w.write_all(body).unwrap();
    drop(w);
    out
}

fn zstd(body: &[u8]) -> Vec<u8> {
    zstd::encode_all(body, 3).unwrap()
}

/// `POST /customers` with `body` as it is and `Content-Encoding: coding` (none when `None`).
async fn post_encoded(s: &Server, session: &str, coding: Option<&str>, body: Vec<u8>) -> Resp {
    let mut rb = s
        .client
        .post(format!("{}/customers", s.url))
        .header("content-type", "application/json")
        .header("X-Wraith-Session", session);
    if let Some(c) = coding {
        rb = rb.header("content-encoding", c);
    }
    Resp::read(rb.body(body).send().await.unwrap()).await
}

#[track_caller]
fn assert_refused(r: &Resp, status: u16, error: &str) {
    r.assert_status(status);
    assert_eq!(r.json()["error"], error, "{}", r.json());
    assert!(r.json()["message"].is_string());
    assert_eq!(r.provenance(), Some("miss"));
    assert_eq!(r.header("x-wraith-route"), Some("POST /customers"));
}

#[tokio::test]
async fn a_compressed_body_is_answered_as_the_recording_of_its_decoded_body() {
    let t = support::example_shop_twin();
    let s = t.serve(&[]);
    let plain = post_encoded(&s, "plain", None, RECORDED_BODY.to_vec()).await;
    plain.assert_status(400);
    assert_eq!(plain.provenance(), Some("recorded"));
    let exchange = plain.header("x-wraith-exchange").unwrap().to_string();
    let cases: [(&str, Vec<u8>); 7] = [
        ("identity", RECORDED_BODY.to_vec()),
        ("gzip", gzip(RECORDED_BODY)),
        ("x-gzip", gzip(RECORDED_BODY)),
        ("deflate", zlib(RECORDED_BODY)),
        ("br", brotli(RECORDED_BODY)),
        ("zstd", zstd(RECORDED_BODY)),
        // Applied in the order listed, so undone last first.
        ("gzip, identity, BR", brotli(&gzip(RECORDED_BODY))),
    ];
    for (coding, body) in cases {
        let r = post_encoded(&s, coding, Some(coding), body).await;
        assert_eq!(
            r.status,
            400,
            "{coding}: {}",
            String::from_utf8_lossy(&r.body)
        );
        assert_eq!(r.provenance(), Some("recorded"), "{coding}");
        assert_eq!(
            r.header("x-wraith-exchange"),
            Some(exchange.as_str()),
            "{coding}"
        );
        assert_eq!(r.body, plain.body, "{coding}");
    }
}

#[tokio::test]
async fn a_compressed_create_stores_and_answers_its_decoded_body() {
    let t = support::example_shop_twin();
    let s = t.serve(&[]);
    let sent = br#"{"name":"Zed Zipped","email":"zed@example.com"}"#;
    let r = post_encoded(&s, "zip", Some("gzip"), gzip(sent)).await;
    r.assert_status(201);
    let created = r.json();
    assert_eq!(created["name"], "Zed Zipped", "{created}");
    assert_eq!(created["email"], "zed@example.com", "{created}");
    let id = created["id"].as_str().unwrap();
    let read = s.get(&format!("/customers/{id}"), Some("zip")).await;
    read.assert_status(200);
    assert_eq!(read.json()["name"], "Zed Zipped");
}

#[tokio::test]
async fn a_body_not_decoding_as_labelled_is_a_400_and_an_unknown_coding_a_415() {
    let t = support::example_shop_twin();
    let s = t.serve(&[]);
    let sent = br#"{"name":"Not Compressed","email":"plain@example.com"}"#;
    // A plain body labelled Brotli is not read as plain.
    let r = post_encoded(&s, "bad", Some("br"), sent.to_vec()).await;
    assert_refused(&r, 400, "malformed-body");
    assert!(r.json()["message"].as_str().unwrap().contains("`br`"));
    // A gzip body cut short does not decode either.
    let full = gzip(sent);
    let cut = full[..full.len() - 8].to_vec();
    let r = post_encoded(&s, "bad", Some("gzip"), cut).await;
    assert_refused(&r, 400, "malformed-body");
    // A coding the twin does not decode, even under one it does.
    for coding in ["compress", "gzip, snappy"] {
        let r = post_encoded(&s, "bad", Some(coding), gzip(sent)).await;
        assert_refused(&r, 415, "unsupported-media-type");
        let message = r.json()["message"].as_str().unwrap().to_string();
        assert!(
            message.contains("`compress`") || message.contains("`snappy`"),
            "{message}"
        );
    }
    // Nothing was stored.
    let list = s.get("/customers", Some("bad")).await;
    list.assert_status(200);
    assert!(!String::from_utf8_lossy(&list.body).contains("Not Compressed"));
}

#[tokio::test]
async fn a_body_decoding_past_the_body_cap_is_a_413_payload_too_large() {
    let t = support::example_shop_twin();
    let s = t.serve(&[]);
    let mut big = br#"{"name":""#.to_vec();
    big.resize(16 * 1024 * 1024 + 1, b' ');
    let r = post_encoded(&s, "big", Some("gzip"), gzip(&big)).await;
    assert_refused(&r, 413, "payload-too-large");
    // The server answers on.
    let ok = post_encoded(&s, "big", Some("gzip"), gzip(RECORDED_BODY)).await;
    ok.assert_status(400);
    assert_eq!(ok.provenance(), Some("recorded"));
}
