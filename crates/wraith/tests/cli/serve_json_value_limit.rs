//! A request body the engine would read as JSON is refused `413 payload-too-large` past a
//! million values: its tree takes memory many times its text, so a few bodies of eight million
//! small values at once once took gigabytes. Black-box: the real binary serving the bundled
//! shop twin.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;

use crate::support;

/// A JSON array of `items` ones: `items + 1` values.
fn ones(items: usize) -> Vec<u8> {
    let mut body = Vec::with_capacity(2 * items + 2);
    body.push(b'[');
    for i in 0..items {
        if i > 0 {
            body.push(b',');
        }
        body.push(b'1');
    }
    body.push(b']');
    body
}

fn gzip(body: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(body).unwrap();
    e.finish().unwrap()
}

#[tokio::test]
async fn a_json_body_of_more_than_a_million_values_is_a_413_payload_too_large() {
    let t = support::example_shop_twin();
    let s = t.serve(&[]);
    let post = |body: Vec<u8>, coding: Option<&str>, ct: &str| {
        let mut rb = s
            .client
            .post(format!("{}/customers", s.url))
            .header("content-type", ct)
            .header("X-Wraith-Session", "many");
        if let Some(c) = coding {
            rb = rb.header("content-encoding", c);
        }
        rb.body(body).send()
    };
    let over = ones(1_000_000);
    for (body, coding) in [(over.clone(), None), (gzip(&over), Some("gzip"))] {
        let r = support::Resp::read(post(body, coding, "application/json").await.unwrap()).await;
        r.assert_status(413);
        assert_eq!(r.json()["error"], "payload-too-large", "{}", r.json());
        let message = r.json()["message"].as_str().unwrap().to_string();
        assert!(message.contains("1000000 JSON values"), "{message}");
        assert_eq!(r.provenance(), Some("miss"));
        assert_eq!(r.header("x-wraith-route"), Some("POST /customers"));
    }
    // Any content type but a form's is read as JSON, so it counts the same.
    let r = support::Resp::read(post(over, None, "text/plain").await.unwrap()).await;
    r.assert_status(413);
    // A body at the limit is the engine's to answer.
    let at =
        support::Resp::read(post(ones(999_999), None, "application/json").await.unwrap()).await;
    assert_ne!(at.status, 413, "{}", String::from_utf8_lossy(&at.body));
    // Nothing the refused bodies sent was stored.
    let list = s.get("/customers", Some("many")).await;
    list.assert_status(200);
}
