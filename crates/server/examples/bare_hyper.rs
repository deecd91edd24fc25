//! The baseline of `bench/load.sh`: a bare hyper server that answers every request with the same
//! small JSON body, built the way `wraith serve` builds its listener (hyper-util auto, HTTP/1.1 +
//! h2c, TCP_NODELAY), so the load figures compare the twin's work against hyper's alone.
//!
//! `cargo run --release -p wraith-server --example bare_hyper -- [PORT]` prints
//! `listening on http://127.0.0.1:PORT` once bound (PORT 0 = any free port).

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;

const BODY: &[u8] = br#"{"id":"cus_1","object":"customer","name":"Alice"}"#;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on http://{}", listener.local_addr()?);
    let builder = auto::Builder::new(TokioExecutor::new());
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let builder = builder.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(|_req| async {
                let mut r = hyper::Response::new(Full::new(Bytes::from_static(BODY)));
                r.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static("application/json"),
                );
                Ok::<_, Infallible>(r)
            });
            let _ = builder.serve_connection(TokioIo::new(stream), svc).await;
        });
    }
}
