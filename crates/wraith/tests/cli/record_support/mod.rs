//! Shared helpers for the black-box `wraith record` tests: an in-process upstream (plain HTTP or
//! HTTPS with a CA made at test time) that remembers what it received, twin folders made with
//! the real `wraith init`, and the real `wraith record` started on port 0 and stopped with
//! SIGINT.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The HMAC key every test recorder runs with, so tokens are stable.
pub const TEST_HMAC_KEY: &str = "wraith-record-tests-fixed-key";

/// Path of the `wraith` binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_wraith")
}

/// One request as the upstream received it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub query: String,
    pub version: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// An in-process upstream API.
///
/// - `…/stream`: a chunked body sent as `chunk-1;`, then (only after [`Upstream::release`])
///   `chunk-2;` and `chunk-3\n` — a proxy that buffers whole bodies can never deliver the first
///   chunk before the release.
/// - `…/held`: no answer at all (not even the response head) until [`Upstream::release`];
///   then the echo answer below.
/// - `…/oversized`: 200 with a body of [`OVERSIZED_BODY_BYTES`] (`x` repeated), longer than
///   the recorder keeps.
/// - `…/missing`: 404 with a JSON error body.
/// - anything else: 200 (201 for POST) echoing method, path and body as JSON, with a
///   `set-cookie` header. (The query is not echoed: tests read it from [`Upstream::seen`].)
pub struct Upstream {
    /// Base URL including the path prefix given to [`Upstream::start`].
    pub base_url: String,
    pub authority: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    release: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the recorder keeps of a body: 64 MiB.
pub const RECORDER_BODY_LIMIT: usize = 64 * 1024 * 1024;

/// Length of the upstream's `…/oversized` body: one MiB past [`RECORDER_BODY_LIMIT`].
pub const OVERSIZED_BODY_BYTES: usize = RECORDER_BODY_LIMIT + 1024 * 1024;

/// Value of the `set-cookie` the upstream sends on every echo answer.
pub const UPSTREAM_SET_COOKIE: &str = "sid=sc_r3sp0nse_c00kie_v4lue; Path=/; HttpOnly";

impl Upstream {
    /// Start on 127.0.0.1, plain HTTP, or HTTPS when `tls` is given.
    pub async fn start(prefix: &str, tls: Option<Arc<rustls::ServerConfig>>) -> Upstream {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let seen = Arc::new(Mutex::new(Vec::new()));
        let release = Arc::new(Notify::new());
        let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
        let (seen2, release2) = (seen.clone(), release.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (seen, release, acceptor) = (seen2.clone(), release2.clone(), acceptor.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        answer(seen.clone(), release.clone(), req)
                    });
                    let builder =
                        hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    match acceptor {
                        Some(acceptor) => {
                            if let Ok(tls) = acceptor.accept(stream).await {
                                let _ = builder.serve_connection(TokioIo::new(tls), service).await;
                            }
                        }
                        None => {
                            let _ = builder
                                .serve_connection(TokioIo::new(stream), service)
                                .await;
                        }
                    }
                });
            }
        });
        Upstream {
            base_url: format!("{scheme}://{addr}{prefix}"),
            authority: addr.to_string(),
            seen,
            release,
            task,
        }
    }

    /// Let a waiting `/stream` answer send the rest of its body.
    pub fn release(&self) {
        self.release.notify_one();
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// A response body fed from a channel, so the test controls when each chunk is sent.
struct ChanBody(tokio::sync::mpsc::Receiver<Bytes>);

impl Body for ChanBody {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b))))
    }
}

async fn answer(
    seen: Arc<Mutex<Vec<Seen>>>,
    release: Arc<Notify>,
    req: Request<Incoming>,
) -> Result<Response<BoxBody<Bytes, Infallible>>, Infallible> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let record = Seen {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or("").to_string(),
        version: format!("{:?}", parts.version),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| (k.to_string(), String::from_utf8_lossy(v.as_bytes()).into()))
            .collect(),
        body: body.to_vec(),
    };
    seen.lock().unwrap().push(record);

    let path = parts.uri.path();
    if path.ends_with("/held") {
        // No response head at all until the test releases it (or the upstream is dropped).
        release.notified().await;
    }
    if path.ends_with("/stream") {
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::spawn(async move {
            let _ = tx.send(Bytes::from_static(b"chunk-1;")).await;
            release.notified().await;
            let _ = tx.send(Bytes::from_static(b"chunk-2;")).await;
            let _ = tx.send(Bytes::from_static(b"chunk-3\n")).await;
        });
        let resp = Response::builder()
            .header("content-type", "text/plain")
            .body(ChanBody(rx).boxed())
            .unwrap();
        return Ok(resp);
    }
    if path.ends_with("/oversized") {
        // One MiB past what the recorder keeps of a body.
        let body = vec![b'x'; OVERSIZED_BODY_BYTES];
        let resp = Response::builder()
            .header("content-type", "application/octet-stream")
            .body(Full::new(Bytes::from(body)).boxed())
            .unwrap();
        return Ok(resp);
    }
    if path.ends_with("/missing") {
        let resp = Response::builder()
            .status(StatusCode::NOT_FOUND)
            .header("content-type", "application/json")
            .body(full(
                json!({"error": {"type": "not_found", "message": "no such thing"}}),
            ))
            .unwrap();
        return Ok(resp);
    }
    let status = if parts.method == hyper::Method::POST {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let echoed: Value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into()));
    let resp = Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .header("set-cookie", UPSTREAM_SET_COOKIE)
        .body(full(json!({
            "method": parts.method.as_str(),
            "path": path,
            "body": echoed,
        })))
        .unwrap();
    Ok(resp)
}

fn full(v: Value) -> BoxBody<Bytes, Infallible> {
    Full::new(Bytes::from(format!("{v}\n"))).boxed()
}

/// A CA made at test time and a server config for 127.0.0.1 signed by it. Returns the CA
/// certificate as PEM (what `--upstream-ca` takes) and the server config (h2 + http/1.1 ALPN).
pub fn test_tls() -> (String, Arc<rustls::ServerConfig>) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "wraith record test CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf_params =
        CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
        leaf_key.serialize_der(),
    ));
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], key)
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    (ca_cert.pem(), Arc::new(config))
}

/// A twin folder made by `wraith init` inside its own temp dir.
pub struct Twin {
    pub tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub name: String,
}

impl Twin {
    pub fn init(name: &str, base_url: &str) -> Twin {
        let tmp = tempfile::tempdir().unwrap();
        let out = Command::new(bin())
            .current_dir(tmp.path())
            .args(["init", name, "--base-url", base_url])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "wraith init failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let root = tmp.path().join("twins").join(name);
        assert!(root.join("wraith.toml").is_file());
        Twin {
            tmp,
            root,
            name: name.to_string(),
        }
    }

    /// Append TOML to the twin's `wraith.toml`.
    pub fn append_config(&self, toml: &str) {
        let path = self.root.join("wraith.toml");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push('\n');
        text.push_str(toml);
        std::fs::write(path, text).unwrap();
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("recordings").join("sessions")
    }

    /// A `wraith record <twin>` command with a clean, deterministic environment.
    pub fn record_command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin());
        cmd.current_dir(self.tmp.path())
            .arg("record")
            .arg(&self.name)
            .args(args)
            .env_remove("CI")
            .env("WRAITH_HMAC_KEY", TEST_HMAC_KEY)
            .env("HOME", self.tmp.path())
            .env("XDG_CONFIG_HOME", self.tmp.path().join(".config"))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        cmd
    }

    /// Every recorded session, read with the recording library.
    pub fn sessions(&self) -> Vec<wraith_recording::RecordedSession> {
        wraith_recording::session::read_sessions(&self.sessions_dir()).unwrap()
    }

    /// The request paths of the one session recorded (there must be exactly one), in order.
    pub fn only_session_paths(&self) -> Vec<String> {
        let sessions = self.sessions();
        assert_eq!(sessions.len(), 1, "one session recorded");
        sessions[0]
            .exchanges
            .iter()
            .map(|e| e.request.path.clone())
            .collect()
    }
}

/// A running `wraith record`.
pub struct Recording {
    child: Option<Child>,
    pub url: String,
    pub port: u16,
    stderr_path: PathBuf,
    stdout_path: PathBuf,
}

impl Recording {
    /// Start `wraith record <twin> --port 0 --ready-json … <extra>` and wait until it listens.
    pub fn start(twin: &Twin, extra: &[&str]) -> Recording {
        let ready = twin
            .tmp
            .path()
            .join(format!("record-ready-{}.json", unique()));
        let stderr_path = twin
            .tmp
            .path()
            .join(format!("record-stderr-{}.log", unique()));
        let stdout_path = twin
            .tmp
            .path()
            .join(format!("record-stdout-{}.log", unique()));
        let mut args = vec!["--port", "0", "--ready-json"];
        let ready_str = ready.to_str().unwrap().to_string();
        args.push(&ready_str);
        args.extend_from_slice(extra);
        let child = twin
            .record_command(&args)
            .stdout(std::fs::File::create(&stdout_path).unwrap())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .unwrap();
        let mut rec = Recording {
            child: Some(child),
            url: String::new(),
            port: 0,
            stderr_path,
            stdout_path,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(text) = std::fs::read_to_string(&ready)
                && let Ok(v) = serde_json::from_str::<Value>(&text)
            {
                rec.url = v["record"]["url"].as_str().unwrap().to_string();
                rec.port = u16::try_from(v["record"]["port"].as_u64().unwrap()).unwrap();
                return rec;
            }
            if let Some(status) = rec.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("wraith record exited early ({status}): {}", rec.stderr());
            }
            assert!(
                Instant::now() < deadline,
                "wraith record never became ready: {}",
                rec.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// Send SIGINT (as Ctrl-C does) and wait for the process to exit.
    pub fn interrupt(self) -> (ExitStatus, String) {
        self.send_sigint();
        self.wait()
    }

    /// [`Self::interrupt`], which must stop the recorder cleanly (exit 0): its stderr.
    pub fn stop(self) -> String {
        let (status, stderr) = self.interrupt();
        assert!(status.success(), "{stderr}");
        stderr
    }

    /// Send SIGINT without waiting.
    pub fn send_sigint(&self) {
        self.send_signal("INT");
    }

    /// Send the signal `name` (`INT`, `TERM`, `HUP`, ...) without waiting.
    pub fn send_signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{name} failed");
    }

    /// True once the proxy refuses new connections (it stopped accepting).
    pub fn refuses_connections(&self) -> bool {
        std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err()
    }

    /// Wait for the process to exit; returns its status and stderr.
    pub fn wait(mut self) -> (ExitStatus, String) {
        let mut child = self.child.take().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return (status, self.stderr());
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!(
                    "wraith record did not stop after the signal: {}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What the process printed on stdout (only after it exited).
    pub fn stdout_path(&self) -> &Path {
        &self.stdout_path
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// How a `wraith record` that should refuse to start ended.
pub struct Refusal {
    /// Exit code; `None` when it was still running at the deadline (and was killed).
    pub code: Option<i32>,
    pub stderr: String,
    /// It wrote its `--ready-json` file: it started listening.
    pub listened: bool,
}

/// Run `wraith record <twin> --port 0 --ready-json …` and wait (at most 20 s) for it to exit by
/// itself; one that is still running then is killed and reported with `code: None`.
pub fn record_until_exit(twin: &Twin) -> Refusal {
    let ready = twin
        .tmp
        .path()
        .join(format!("record-ready-{}.json", unique()));
    let stderr_path = twin
        .tmp
        .path()
        .join(format!("record-stderr-{}.log", unique()));
    let mut child = twin
        .record_command(&["--port", "0", "--ready-json", ready.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Refusal {
        code,
        stderr: std::fs::read_to_string(&stderr_path).unwrap_or_default(),
        listened: ready.exists(),
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Fail (instead of hanging) when something that should happen promptly does not.
pub async fn within<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), fut)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

/// A plain-HTTP test client that ignores proxy settings from the environment.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// Every file under `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Files a crashed or careless writer would leave under `dir`: temp files (`*.tmp*`) and
/// hidden entries (staging folders, `.name.tmp-…` files).
pub fn leftovers(dir: &Path) -> Vec<PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|p| {
            let rel = p.strip_prefix(dir).unwrap();
            rel.components().any(|c| {
                let s = c.as_os_str().to_string_lossy();
                s.starts_with('.') || s.contains(".tmp")
            })
        })
        .collect()
}

/// Send `METHOD target` to the proxy as written (no client normalizes its path: `/x/../y`
/// stays as it is) on a connection of its own, and read the whole answer; its status and
/// body. `target` may be absolute (`http://host/path`), as a forward-proxy client sends it.
pub async fn raw_request(port: u16, method: &str, target: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!(
        "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    within("the proxy's answer", stream.read_to_end(&mut got))
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&got).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP answer to {method} {target}: {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}
