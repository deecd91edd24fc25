//! `wraith record` between peers that misbehave: an upstream that ends its answer with trailers
//! or frames it twice. Each is recorded faithfully. Black-box: the real binary, raw-socket peers
//! in this file, recordings read back with the recording library.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::record_support;

use record_support::*;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

/// A raw-socket upstream on 127.0.0.1 that answers every request with `answer` and closes;
/// its base URL.
async fn raw_upstream(answer: &'static [u8]) -> String {
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
                let _ = stream.write_all(answer).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_ending_in_trailers_is_recorded_whole_with_its_trailers() {
    let base = raw_upstream(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\
          trailer: x-sum\r\n\r\n2\r\n{}\r\n0\r\nx-sum: abc\r\n\r\n",
    )
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
    let (status, stderr) = rec.interrupt();
    assert!(status.success(), "{stderr}");
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
    let base = raw_upstream(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\
          transfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    )
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
    let (status, stderr) = rec.interrupt();
    assert!(status.success(), "{stderr}");
    let ex = &twin.sessions()[0].exchanges[0];
    assert!(!ex.truncated);
    assert!(
        !ex.response.headers.contains_key("content-length"),
        "{:?}",
        ex.response.headers
    );
}
