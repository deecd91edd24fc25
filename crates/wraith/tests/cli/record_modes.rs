//! Black-box tests of `wraith record --mode forward|mitm`: the real binary is the client's HTTP
//! proxy, in front of in-process upstreams; what it wrote is read back with the recording
//! library.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::record_support;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use record_support::*;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A client that sends every request through the recorder as its HTTP proxy.
fn proxied(rec: &Recording) -> reqwest::Client {
    reqwest::Client::builder()
        .proxy(reqwest::Proxy::all(&rec.url).unwrap())
        .build()
        .unwrap()
}

/// Send `CONNECT authority` to the proxy; the status it answered, its body when it refused,
/// and the connection (a tunnel when the status is 200).
async fn connect(port: u16, authority: &str) -> (u16, String, TcpStream) {
    raw(
        port,
        &format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n"),
    )
    .await
}

/// Send `request` as written to the proxy and read its answer's head (and body, unless 200 to a
/// CONNECT, whose connection then is the tunnel).
async fn raw(port: u16, request: &str) -> (u16, String, TcpStream) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = within("the proxy's answer", stream.read(&mut byte))
            .await
            .unwrap();
        assert_eq!(n, 1, "the proxy closed before answering");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
    let length = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().unwrap())
        })
        .unwrap_or(0);
    let tunnel = status == 200 && request.starts_with("CONNECT");
    let mut body = vec![0u8; if tunnel { 0 } else { length }];
    stream.read_exact(&mut body).await.unwrap();
    (status, String::from_utf8(body).unwrap(), stream)
}

/// GET `path` over HTTP/1.1 on an open connection (plain or TLS); status and body.
async fn get_over<IO>(io: IO, host: &str, path: &str) -> (u16, Value)
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .unwrap();
    tokio::spawn(conn);
    let req = hyper::Request::get(path)
        .header("host", host)
        .body(Empty::<Bytes>::new())
        .unwrap();
    let resp = within("an answer through the tunnel", send.send_request(req))
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap())
}

/// GET `uri` (absolute: HTTP/2 names its authority) over HTTP/2 on an open TLS connection.
async fn get_over_h2<IO>(io: IO, uri: &str) -> (u16, Value)
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut send, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        TokioIo::new(io),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    let req = hyper::Request::get(uri)
        .body(Empty::<Bytes>::new())
        .unwrap();
    let resp = within(
        "an HTTP/2 answer through the tunnel",
        send.send_request(req),
    )
    .await
    .unwrap();
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap())
}

/// A TLS client trusting only the PEM certificates in `ca_pem`.
fn tls_client(ca_pem: &[u8]) -> tokio_rustls::TlsConnector {
    tls_client_alpn(ca_pem, Vec::new())
}

/// [`tls_client`] offering these ALPN protocols.
fn tls_client_alpn(ca_pem: &[u8], alpn: Vec<Vec<u8>>) -> tokio_rustls::TlsConnector {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let mut config = config;
    config.alpn_protocols = alpn;
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

fn ready_field(twin: &Twin, rec: &Recording, field: &str) -> Value {
    // The ready file is the newest `record-ready-*.json` of the twin's temp dir.
    let mut ready: Vec<_> = std::fs::read_dir(twin.tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("record-ready-")
        })
        .collect();
    ready.sort();
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(ready.last().unwrap()).unwrap()).unwrap();
    assert_eq!(doc["record"]["url"], rec.url.as_str());
    doc["record"][field].clone()
}

fn summary(stdout: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(stdout).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forward_mode_records_requests_to_the_upstream_and_passes_other_hosts_through() {
    let upstream = Upstream::start("/api", None).await;
    let other = Upstream::start("", None).await;
    let twin = Twin::init("fwd", &upstream.base_url);
    let rec = Recording::start(&twin, &["--mode", "forward", "--json"]);
    assert_eq!(ready_field(&twin, &rec, "mode"), "forward");
    let http = proxied(&rec);

    // The client keeps the API's own URL; the proxy sees it in absolute form.
    let r = http
        .get(format!("{}/items?limit=2", upstream.base_url))
        // Credentials for the proxy, not for the API.
        .header("proxy-authorization", "Basic cHJveHktdXNlcjpwcm94eS1wYXNz")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["path"], "/api/items", "the path is not prefixed twice");
    assert_eq!(upstream.seen()[0].query, "limit=2");

    // Another host, and a path of the upstream's host outside its base path: passed through
    // as they came, not recorded.
    let r = http
        .post(format!("{}/elsewhere", other.base_url))
        .body("ping")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["path"], "/elsewhere");
    assert_eq!(
        other.seen()[0].header("host"),
        Some(other.authority.as_str())
    );
    let outside = format!("http://{}/health", upstream.authority);
    assert_eq!(http.get(&outside).send().await.unwrap().status(), 200);
    assert_eq!(upstream.seen().len(), 2);
    // A request naming the proxy itself is the recorder's own: answered there, not passed
    // through a second hop (the summary counts no pass-through for it).
    let r = http
        .get(format!("{}/__wraith/health", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["status"], "recording");

    let stdout = rec.stdout_path().to_path_buf();
    let stderr = rec.stop();
    assert!(stderr.contains("through unrecorded"), "{stderr}");
    let summary = summary(&stdout);
    assert_eq!(summary["exchanges"], 1, "{summary}");
    assert_eq!(summary["passed_through"], 2, "{summary}");
    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].manifest.proxy_mode, "forward");
    let ex = &sessions[0].exchanges[0];
    assert_eq!(ex.request.path, "/api/items");
    assert_eq!(ex.request.query, "limit=2");
    assert_eq!(ex.response.status, 200);
    // The client's words to its proxy are neither sent on nor recorded.
    assert_eq!(upstream.seen()[0].header("proxy-authorization"), None);
    assert!(
        !ex.request.headers.contains_key("proxy-authorization"),
        "{:?}",
        ex.request.headers
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forward_mode_answers_400_to_a_target_it_cannot_name_and_records_nothing() {
    let upstream = Upstream::start("/api", None).await;
    let twin = Twin::init("fwd", &upstream.base_url);
    let rec = Recording::start(&twin, &["--mode", "forward"]);
    // A port past 65535 is no port; it used to mean the scheme's default, sending the request
    // to another server than the one named.
    for (request, says) in [
        (
            "GET http://127.0.0.1:99999/api/x HTTP/1.1\r\nHost: 127.0.0.1:99999\r\n\r\n"
                .to_string(),
            "99999",
        ),
        (
            "CONNECT 127.0.0.1:65536 HTTP/1.1\r\nHost: 127.0.0.1:65536\r\n\r\n".to_string(),
            "65536",
        ),
        (
            format!(
                "GET ftp://{a}/api/x HTTP/1.1\r\nHost: {a}\r\n\r\n",
                a = upstream.authority
            ),
            "ftp://",
        ),
    ] {
        let (status, body, _) = raw(rec.port, &request).await;
        assert_eq!(status, 400, "{request}: {body}");
        assert!(body.contains(says), "{request}: {body}");
    }
    let (code, stderr) = rec.interrupt();
    assert!(code.success(), "{stderr}");
    assert!(upstream.seen().is_empty());
    assert!(twin.sessions().is_empty());
}

/// A request for another host that cannot be reached is answered 502 naming that host, the
/// one the recorder tried, not the twin's upstream (which answers fine).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forward_mode_names_the_host_a_failed_pass_through_tried_not_the_upstream() {
    let upstream = Upstream::start("/api", None).await;
    let twin = Twin::init("fwd", &upstream.base_url);
    let rec = Recording::start(&twin, &["--mode", "forward"]);
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let r = proxied(&rec)
        .get(format!("http://127.0.0.1:{closed}/elsewhere"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 502);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "upstream_unreachable");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "could not reach http://127.0.0.1:{closed} (passed through unrecorded: it is not \
             the upstream) for GET /elsewhere"
        )),
        "{message}"
    );
    assert!(!message.contains(&upstream.base_url), "{message}");
    assert!(!message.contains("reach the upstream"), "{message}");
    let (code, stderr) = rec.interrupt();
    assert!(code.success(), "{stderr}");
    assert!(upstream.seen().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forward_mode_refuses_a_connect_tunnel_to_the_upstream_naming_mitm() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("fwd", &upstream.base_url);
    let rec = Recording::start(&twin, &["--mode", "forward", "--json"]);
    let (status, body, _) = connect(rec.port, &upstream.authority).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("--mode mitm"), "{body}");

    let stdout = rec.stdout_path().to_path_buf();
    let (code, stderr) = rec.interrupt();
    assert!(code.success(), "{stderr}");
    assert!(stderr.contains("refused CONNECT"), "{stderr}");
    assert_eq!(summary(&stdout)["refused_tunnels"], 1);
    assert!(upstream.seen().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mitm_mode_records_https_inside_the_tunnel_with_a_ca_written_before_listening() {
    let (upstream_ca, tls) = test_tls();
    let upstream = Upstream::start("/v2", Some(tls)).await;
    let twin = Twin::init("mitm", &upstream.base_url);
    let upstream_ca_file = twin.tmp.path().join("upstream-ca.pem");
    std::fs::write(&upstream_ca_file, upstream_ca).unwrap();
    let ca_file = twin.tmp.path().join("run-ca.pem");
    let rec = Recording::start(
        &twin,
        &[
            "--mode",
            "mitm",
            "--upstream-ca",
            upstream_ca_file.to_str().unwrap(),
            "--ca-cert",
            ca_file.to_str().unwrap(),
        ],
    );
    assert_eq!(ready_field(&twin, &rec, "mode"), "mitm");
    assert_eq!(
        ready_field(&twin, &rec, "ca_cert"),
        ca_file.to_str().unwrap()
    );
    let ca_pem = std::fs::read(&ca_file).unwrap();
    assert!(
        String::from_utf8_lossy(&ca_pem).contains("BEGIN CERTIFICATE"),
        "the CA certificate is written"
    );
    assert!(
        !String::from_utf8_lossy(&ca_pem).contains("PRIVATE KEY"),
        "the CA key is never written"
    );
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();

    // A client trusting the run's CA talks HTTPS to the upstream's host through the proxy.
    let (status, body, tunnel) = connect(rec.port, &upstream.authority).await;
    assert_eq!(status, 200, "{body}");
    let tls = within(
        "the TLS handshake with the proxy",
        tls_client(&ca_pem).connect(name.clone(), tunnel),
    )
    .await
    .unwrap();
    let (status, body) = get_over(tls, &upstream.authority, "/v2/regions?page=2").await;
    assert_eq!(status, 200);
    assert_eq!(body["path"], "/v2/regions");
    assert_eq!(upstream.seen()[0].query, "page=2");

    // The same over HTTP/2, which names the host in `:authority`, not in a header.
    let (status, body, tunnel) = connect(rec.port, &upstream.authority).await;
    assert_eq!(status, 200, "{body}");
    let tls = tls_client_alpn(&ca_pem, vec![b"h2".to_vec()])
        .connect(name.clone(), tunnel)
        .await
        .unwrap();
    let (status, body) =
        get_over_h2(tls, &format!("https://{}/v2/zones", upstream.authority)).await;
    assert_eq!(status, 200);
    assert_eq!(body["path"], "/v2/zones");

    // A client that does not trust it gets no answer: the interception is never silent.
    let (status, _, tunnel) = connect(rec.port, &upstream.authority).await;
    assert_eq!(status, 200);
    let untrusting = tls_client(upstream_ca_file_pem(&twin).as_bytes());
    assert!(
        within("a refused handshake", untrusting.connect(name, tunnel))
            .await
            .is_err()
    );

    let (code, stderr) = rec.interrupt();
    assert!(code.success(), "{stderr}");
    assert!(stderr.contains("make the client trust it"), "{stderr}");
    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].manifest.proxy_mode, "mitm");
    assert_eq!(sessions[0].exchanges.len(), 2);
    assert_eq!(sessions[0].exchanges[0].request.path, "/v2/regions");
    assert_eq!(sessions[0].exchanges[0].request.query, "page=2");
    assert_eq!(sessions[0].exchanges[1].request.path, "/v2/zones");
    // Both recorded with the host they named, as HTTP/1.1 and HTTP/2 clients.
    for ex in &sessions[0].exchanges {
        assert_eq!(
            ex.request.headers.get("host"),
            Some(&vec![upstream.authority.clone()]),
            "{}",
            ex.request.path
        );
    }
    assert!(leftovers(&twin.root).is_empty());
}

fn upstream_ca_file_pem(twin: &Twin) -> String {
    std::fs::read_to_string(twin.tmp.path().join("upstream-ca.pem")).unwrap()
}

/// A `--mode mitm` recorder of an HTTPS upstream with `request_idle_timeout_ms = idle_ms`, and
/// a tunnel to the upstream whose client has sent nothing after `CONNECT`.
async fn mitm_tunnel_left_silent(idle_ms: u64) -> (Upstream, Twin, Recording, TcpStream) {
    let (_upstream_ca, tls) = test_tls();
    let upstream = Upstream::start("/v2", Some(tls)).await;
    let twin = Twin::init("mitm", &upstream.base_url);
    twin.append_config(&format!(
        "[serve.limits]\nrequest_idle_timeout_ms = {idle_ms}\n"
    ));
    let rec = Recording::start(&twin, &["--mode", "mitm"]);
    let (status, body, tunnel) = connect(rec.port, &upstream.authority).await;
    assert_eq!(status, 200, "{body}");
    (upstream, twin, rec, tunnel)
}

/// A client that opens an intercepted tunnel and never begins its TLS handshake is
/// disconnected after `request_idle_timeout_ms`, and the recorder stops without waiting for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mitm_mode_closes_a_tunnel_whose_tls_handshake_never_begins() {
    let (upstream, _twin, rec, mut tunnel) = mitm_tunnel_left_silent(300).await;
    let mut byte = [0u8; 1];
    let read = within("the stalled tunnel to be closed", tunnel.read(&mut byte)).await;
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    let stderr = rec.stop();
    assert!(
        stderr.contains("did not finish its TLS handshake"),
        "{stderr}"
    );
    assert!(!stderr.contains("drain timeout"), "{stderr}");
    assert!(upstream.seen().is_empty());
}

/// A tunnel waiting for its TLS handshake carries no exchange: stopping the recorder closes it
/// at once instead of draining it to the drain timeout (and reporting that timeout reached).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mitm_mode_stops_without_draining_a_tunnel_waiting_for_its_handshake() {
    let (_upstream, _twin, rec, _tunnel) = mitm_tunnel_left_silent(120_000).await;
    let stderr = rec.stop();
    assert!(!stderr.contains("drain timeout"), "{stderr}");
}

/// [`mitm_tunnel_left_silent`], its client then finishing its TLS handshake (offering `alpn`)
/// and sending nothing more.
async fn mitm_tunnel_silent_after_handshake(
    idle_ms: u64,
    alpn: Vec<Vec<u8>>,
) -> (
    Upstream,
    Twin,
    Recording,
    tokio_rustls::client::TlsStream<TcpStream>,
) {
    let (upstream, twin, rec, tunnel) = mitm_tunnel_left_silent(idle_ms).await;
    let ca_file = ready_field(&twin, &rec, "ca_cert");
    // Relative to the folder the recorder runs in.
    let ca_pem = std::fs::read(twin.tmp.path().join(ca_file.as_str().unwrap())).unwrap();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let tls = within(
        "the TLS handshake with the proxy",
        tls_client_alpn(&ca_pem, alpn).connect(name, tunnel),
    )
    .await
    .unwrap();
    (upstream, twin, rec, tls)
}

/// Read from an intercepted tunnel until the recorder closes it (end of stream or an error);
/// fails the test when that takes longer than [`within`] allows.
async fn closed_by_the_recorder(tls: &mut tokio_rustls::client::TlsStream<TcpStream>) {
    let mut buf = [0u8; 256];
    within("the silent tunnel to be closed", async {
        loop {
            match tls.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
}

/// A client that finishes its TLS handshake inside an intercepted tunnel and then sends no
/// request is disconnected after `request_idle_timeout_ms`, whichever protocol it negotiated
/// (none, HTTP/1.1 or HTTP/2, whose preface it never sends), and stopping the recorder then
/// waits for nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mitm_mode_closes_a_tunnel_silent_after_its_tls_handshake() {
    for alpn in [vec![], vec![b"http/1.1".to_vec()], vec![b"h2".to_vec()]] {
        let (upstream, _twin, rec, mut tls) =
            mitm_tunnel_silent_after_handshake(300, alpn.clone()).await;
        closed_by_the_recorder(&mut tls).await;
        let stderr = rec.stop();
        assert!(!stderr.contains("drain timeout"), "{alpn:?}: {stderr}");
        assert!(upstream.seen().is_empty(), "{alpn:?}");
    }
}

/// A client inside an intercepted tunnel that begins the HTTP/2 preface and stops is
/// disconnected too: protocol detection waits for the whole preface, so the deadline lasts
/// until it has arrived.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mitm_mode_closes_a_tunnel_stopped_inside_the_http2_preface() {
    let (upstream, _twin, rec, mut tls) =
        mitm_tunnel_silent_after_handshake(300, vec![b"h2".to_vec()]).await;
    tls.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    tls.flush().await.unwrap();
    closed_by_the_recorder(&mut tls).await;
    let stderr = rec.stop();
    assert!(!stderr.contains("drain timeout"), "{stderr}");
    assert!(upstream.seen().is_empty());
}

/// A tunnel whose client finished its handshake but sent no request carries no exchange:
/// stopping the recorder closes it at once instead of draining it to the drain timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mitm_mode_stops_without_draining_a_tunnel_silent_after_its_handshake() {
    let (_upstream, _twin, rec, _tls) = mitm_tunnel_silent_after_handshake(120_000, vec![]).await;
    let stderr = rec.stop();
    assert!(!stderr.contains("drain timeout"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mitm_mode_tunnels_other_hosts_blind_and_records_nothing_of_them() {
    let upstream = Upstream::start("", None).await;
    let other = Upstream::start("", None).await;
    let twin = Twin::init("mitm", &upstream.base_url);
    let rec = Recording::start(&twin, &["--mode", "mitm", "--json"]);
    // By default the CA certificate goes into the twin's folder.
    let ca = ready_field(&twin, &rec, "ca_cert");
    assert!(
        ca.as_str().unwrap().ends_with("twins/mitm/record-ca.pem"),
        "{ca}"
    );
    assert!(twin.root.join("record-ca.pem").is_file());
    let (status, body, tunnel) = connect(rec.port, &other.authority).await;
    assert_eq!(status, 200, "{body}");
    // The tunnel carries bytes as they are: here plain HTTP, which the proxy never parses.
    let (status, body) = get_over(tunnel, &other.authority, "/through").await;
    assert_eq!(status, 200);
    assert_eq!(body["path"], "/through");

    let stdout = rec.stdout_path().to_path_buf();
    let (code, stderr) = rec.interrupt();
    assert!(code.success(), "{stderr}");
    let summary = summary(&stdout);
    assert_eq!(summary["exchanges"], 0, "{summary}");
    assert_eq!(summary["passed_through"], 1, "{summary}");
    assert!(twin.sessions().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reverse_mode_answers_connect_with_405_naming_the_modes_that_tunnel() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("rev", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);
    assert_eq!(ready_field(&twin, &rec, "mode"), "reverse");
    let (status, body, _) = connect(rec.port, &upstream.authority).await;
    assert_eq!(status, 405, "{body}");
    assert!(body.contains("--mode mitm"), "{body}");
    let (code, stderr) = rec.interrupt();
    assert!(code.success(), "{stderr}");
    assert!(upstream.seen().is_empty());
    assert!(twin.sessions().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_mode_in_wraith_toml_is_the_default_and_the_flag_overrides_it() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("cfg", &upstream.base_url);
    twin.append_config("[proxy]\nmode = \"forward\"\n");
    let rec = Recording::start(&twin, &[]);
    assert_eq!(ready_field(&twin, &rec, "mode"), "forward");
    let (code, stderr) = rec.interrupt();
    assert!(code.success(), "{stderr}");
    let rec = Recording::start(&twin, &["--mode", "reverse"]);
    assert_eq!(ready_field(&twin, &rec, "mode"), "reverse");
    let (code, stderr) = rec.interrupt();
    assert!(code.success(), "{stderr}");
}

#[test]
fn ca_cert_without_mitm_mode_or_onto_a_file_of_the_users_is_a_usage_error() {
    let twin = Twin::init("flags", "http://127.0.0.1:9");
    let ready = twin.tmp.path().join("ready.json");
    let out = twin
        .record_command(&[
            "--port",
            "0",
            "--ready-json",
            ready.to_str().unwrap(),
            "--mode",
            "forward",
            "--ca-cert",
            "ca.pem",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--ca-cert is only used by --mode mitm"),
        "{stderr}"
    );
    assert!(!ready.exists());
    // A file of the user's at that path is not overwritten.
    let notes = twin.tmp.path().join("notes.txt");
    std::fs::write(&notes, "important\n").unwrap();
    let out = twin
        .record_command(&[
            "--port",
            "0",
            "--ready-json",
            ready.to_str().unwrap(),
            "--mode",
            "mitm",
            "--ca-cert",
            notes.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("not a certificate"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "important\n");
    assert!(!ready.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_lets_an_exchange_streaming_inside_an_intercepted_tunnel_finish() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("drain", &upstream.base_url);
    let rec = Recording::start(&twin, &["--mode", "mitm"]);
    let ca_pem = std::fs::read(twin.root.join("record-ca.pem")).unwrap();
    let (status, body, tunnel) = connect(rec.port, &upstream.authority).await;
    assert_eq!(status, 200, "{body}");
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let tls = tls_client(&ca_pem).connect(name, tunnel).await.unwrap();
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .unwrap();
    tokio::spawn(conn);
    let req = hyper::Request::get("/stream")
        .header("host", upstream.authority.as_str())
        .body(Empty::<Bytes>::new())
        .unwrap();
    let mut body = send.send_request(req).await.unwrap().into_body();
    let first = within("first chunk", body.frame()).await.unwrap().unwrap();
    assert_eq!(&first.into_data().unwrap()[..], b"chunk-1;");

    rec.send_sigint();
    while !rec.refuses_connections() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Shutdown has begun; the exchange in flight inside the tunnel may still finish.
    upstream.release();
    let mut rest = Vec::new();
    while let Some(frame) = within("rest of the stream", body.frame()).await {
        if let Ok(data) = frame.unwrap().into_data() {
            rest.extend_from_slice(&data);
        }
    }
    assert_eq!(rest, b"chunk-2;chunk-3\n");
    let (code, stderr) = rec.wait();
    assert!(code.success(), "{stderr}");
    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1);
    assert!(sessions[0].manifest.complete);
    let ex = &sessions[0].exchanges[0];
    assert!(!ex.truncated);
    assert_eq!(ex.response_body(), b"chunk-1;chunk-2;chunk-3\n");
}

/// Forward mode: a URL of the upstream's whose `..` climbs out of the base path (`/api/../other`)
/// is no request under it. It reaches the upstream as sent and is not recorded, like the same
/// resource asked for without the dot segment, which is outside the base path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forward_mode_passes_a_dot_segment_path_through_unrecorded() {
    let upstream = Upstream::start("/api", None).await;
    let twin = Twin::init("fwd", &upstream.base_url);
    let rec = Recording::start(&twin, &["--mode", "forward", "--json"]);
    let a = &upstream.authority;
    for target in [
        format!("http://{a}/api/items"),
        format!("http://{a}/api/../other"),
        format!("http://{a}/api/x/%2e%2e/items"),
    ] {
        let (status, body) = raw_request(rec.port, "GET", &target).await;
        assert_eq!(status, 200, "{target}: {body}");
    }
    let seen: Vec<String> = upstream.seen().into_iter().map(|s| s.path).collect();
    assert_eq!(seen, ["/api/items", "/api/../other", "/api/x/%2e%2e/items"]);
    let stdout = rec.stdout_path().to_path_buf();
    rec.stop();
    let summary = summary(&stdout);
    assert_eq!(summary["exchanges"], 1, "{summary}");
    assert_eq!(summary["dot_segment_paths"], 2, "{summary}");
    assert_eq!(twin.only_session_paths(), ["/api/items"]);
}
