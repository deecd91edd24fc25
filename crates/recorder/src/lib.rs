//! The recording proxy behind `wraith record`: a proxy in front of a twin's `[service]
//! base_url` that streams every answer back to the client while keeping a copy, then scrubs the
//! finished exchange and appends it to a recording session
//! (`recordings/sessions/<id>/NNNNNN.wrec.zst` + `manifest.json`).
//!
//! ```text
//! client ──HTTP──► Recorder (127.0.0.1:port) ──HTTP/HTTPS──► upstream base_url
//!                     │  /__wraith/* answered here, never forwarded
//!                     └─► tee ─► scrub ─► SessionWriter (atomic files)
//! ```
//!
//! The client reaches it as a reverse proxy (the default), as its HTTP proxy, or as its HTTP
//! proxy that intercepts TLS to the upstream's host: see [`mode`].
//!
//! Decisions worth knowing:
//! - **Paths**: a client request `/regions` to a proxy for `https://api.example.com/v4` is sent
//!   to `https://api.example.com/v4/regions` and recorded with path `/v4/regions` — the full
//!   upstream path, the same way `wraith import` records HAR entries.
//! - **Streaming**: response bodies are forwarded frame by frame as they arrive; the exchange is
//!   written when the body ends. A body cut short (client gone, upstream error, shutdown after the
//!   drain timeout) is still recorded, with `truncated: true`. A request cut at the drain
//!   timeout before the upstream sent its response head has no answer to record: the client
//!   gets `503 recorder_stopping`, nothing is recorded, and the summary counts it apart
//!   (`cut_unrecorded`). A response body longer than
//!   the body limit streams to the client whole and is recorded cut at the limit, also with
//!   `truncated: true`, a warning and a count of its own (`cut_at_limit`). Request bodies are
//!   read whole before forwarding (they are recorded whole anyway).
//! - **Dot segments**: a request whose path has a `.` or `..` segment (percent-encoded too) is
//!   sent on as it came and not recorded, in every mode: `wraith serve` refuses such a path, so
//!   a twin could never answer it (`wraith import` leaves such HAR entries out the same way).
//! - **Transport failures** (upstream unreachable, TLS errors, an answer that is not HTTP)
//!   answer 502 with a JSON error body and record nothing; an upstream that sends no response
//!   head within the upstream timeout, 504. A client that pauses longer than the request idle
//!   timeout while sending its request is cut off (408 for a body); nothing reaches the upstream.
//! - **Sessions**: see [`sessions`](crate::sessions) for when a session opens and closes.
//! - **Headers**: see [`headers`] (hop-by-hop, `X-Wraith-*`, `Host`, `Accept-Encoding`).
//! - **Compressed answers**: an upstream that compresses although asked for `identity` reaches
//!   the client as it sent it; the recording holds the decoded body without `content-encoding`
//!   (gzip, deflate, br, zstd; anything else, or a body that does not decode, is kept with a
//!   warning). A request body the client sent compressed is recorded the same way.
//!
//! Not here: printing, flags, signals (the `wraith` binary does those), the scrub rules and the
//! WREC encoding (`wraith-recording`), and anything about synthesizing or serving.

// Tests may unwrap: a panic there is a test failure with a clear location.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod control;
mod exchange;
pub mod headers;
pub mod intercept;
pub mod mode;
mod proxy;
mod sessions;
mod tee;
mod tunnel;
mod upstream;

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use wraith_recording::scrub::Scrubber;

pub use control::{CONTROL_PREFIX, is_control_path};
pub use intercept::InterceptCa;
pub use mode::ProxyMode;
pub use sessions::{OpenSession, SessionSummary};
pub use upstream::Upstream;

/// Default cap on a recorded body (and on an accepted request body): 64 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// Default bound on letting in-flight exchanges finish at shutdown.
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(5);
/// At the drain timeout, how long the `503 recorder_stopping` answers to requests still
/// waiting for their response head get to be written before their connections are cut.
const STOPPING_ANSWER_GRACE: Duration = Duration::from_millis(500);
/// Default bound on waiting for the upstream's response head (its body may stream for longer).
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(60);
/// Default bound on a client's pause while it sends its request headers or body.
pub const DEFAULT_REQUEST_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the recorder could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    #[error("invalid base URL `{url}`: {why}; fix `[service] base_url` in wraith.toml")]
    BadBaseUrl { url: String, why: String },
    #[error("cannot forward request target `{target}`: {why}")]
    BadRequestTarget { target: String, why: String },
    #[error("--upstream-ca: {0}")]
    UpstreamCa(String),
    #[error("cannot set up TLS for the upstream: {0}")]
    Tls(String),
    #[error("cannot listen on {addr}: {source}; pick another --port (or 0 for any free port)")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(
        "cannot write recordings in {}: {error}; {fix}, then start `wraith record` again",
        path.display()
    )]
    SessionsDir {
        path: PathBuf,
        error: std::io::Error,
        fix: &'static str,
    },
    #[error("the recorder stopped unexpectedly: {0}")]
    Runtime(String),
}

/// Everything the recorder needs to run. The binary builds it from flags and the twin's files.
pub struct RecorderConfig {
    /// How clients reach the proxy; see [`mode`].
    pub mode: ProxyMode,
    /// The TLS identity for intercepted tunnels; required (and only used) in mitm mode.
    pub intercept: Option<InterceptCa>,
    pub upstream: Upstream,
    /// Where to listen; the control plane has no auth, so keep this on loopback.
    pub listen: SocketAddr,
    /// The twin's `recordings/sessions/` folder.
    pub sessions_dir: PathBuf,
    /// Scrubs every exchange before it is written.
    pub scrubber: Scrubber,
    /// Session tags (manifest `tags`, WREC `correlation.tags`).
    pub tags: Vec<String>,
    /// Close the current session after this long without traffic.
    pub idle_timeout: Option<Duration>,
    /// Extra PEM CA certificates trusted for an HTTPS upstream (besides the webpki roots).
    pub upstream_ca_pem: Option<Vec<u8>>,
    /// How long shutdown waits for in-flight exchanges before cutting them.
    pub drain_timeout: Duration,
    /// See [`DEFAULT_MAX_BODY_BYTES`].
    pub max_body_bytes: usize,
    /// See [`DEFAULT_UPSTREAM_TIMEOUT`]: a request still without a response head then is
    /// answered 504 and not recorded.
    pub upstream_timeout: Duration,
    /// See [`DEFAULT_REQUEST_IDLE_TIMEOUT`]: half-sent headers close the connection, a body
    /// that stops arriving is answered 408; neither reaches the upstream.
    pub request_idle_timeout: Duration,
}

impl RecorderConfig {
    /// A config with the defaults for everything but the essentials.
    pub fn new(
        upstream: Upstream,
        listen: SocketAddr,
        sessions_dir: PathBuf,
        scrubber: Scrubber,
    ) -> RecorderConfig {
        RecorderConfig {
            mode: ProxyMode::Reverse,
            intercept: None,
            upstream,
            listen,
            sessions_dir,
            scrubber,
            tags: Vec::new(),
            idle_timeout: None,
            upstream_ca_pem: None,
            drain_timeout: DEFAULT_DRAIN_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            upstream_timeout: DEFAULT_UPSTREAM_TIMEOUT,
            request_idle_timeout: DEFAULT_REQUEST_IDLE_TIMEOUT,
        }
    }
}

/// What a recorder run produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordSummary {
    /// Sessions finalized during the run, in order.
    pub sessions: Vec<SessionSummary>,
    /// Exchanges written over all sessions.
    pub exchanges: u64,
    /// Requests that got no usable upstream answer: answered 502 (`upstream_unreachable`,
    /// `upstream_bad_response`), nothing recorded.
    pub transport_failures: u64,
    /// Requests the upstream sent no response head for within `[proxy] upstream_timeout_ms`:
    /// answered 504 (`upstream_timeout`), nothing recorded.
    pub upstream_timeouts: u64,
    /// Forward and mitm modes: requests and `CONNECT` tunnels to other origins than the
    /// upstream, passed through and not recorded.
    pub passed_through: u64,
    /// Requests whose path has a `.` or `..` segment (percent-encoded ones included): passed
    /// on to the upstream as sent and not recorded, in every mode, since `wraith serve` refuses
    /// such a path (400) and a twin could never answer it.
    pub dot_segment_paths: u64,
    /// Forward mode: `CONNECT` tunnels to the upstream refused (403), since their encrypted
    /// traffic could not have been recorded.
    pub refused_tunnels: u64,
    /// WebSocket upgrade requests refused (501): WebSocket traffic is not recorded.
    pub refused_websockets: u64,
    /// Exchanges whose response was still streaming when the drain timeout ran out: recorded
    /// with `truncated: true` (and counted in `exchanges` once written).
    pub cut_at_shutdown: usize,
    /// Responses whose body was longer than the recorder keeps ([`DEFAULT_MAX_BODY_BYTES`]):
    /// the client got them whole; recorded with the body's first bytes up to the limit, and
    /// `truncated: true`.
    pub cut_at_limit: usize,
    /// Requests still waiting for the upstream's response head when the drain timeout ran
    /// out: cut, and not recorded (there was no answer to record).
    pub cut_unrecorded: usize,
    /// Failures to write recordings; non-empty means some traffic was not recorded.
    pub write_errors: Vec<String>,
}

/// A bound, not yet running recorder.
pub struct Recorder {
    listener: TcpListener,
    local: SocketAddr,
    state: Arc<proxy::ProxyState>,
    idle_timeout: Option<Duration>,
    drain_timeout: Duration,
}

impl Recorder {
    /// Check that the sessions folder takes new sessions, build the upstream client and bind
    /// the listener. Nothing is recorded until [`run`]: a recorder that could not write what
    /// it proxies must not start proxying.
    ///
    /// [`run`]: Recorder::run
    pub async fn bind(config: RecorderConfig) -> Result<Recorder, RecorderError> {
        if config.mode == ProxyMode::Mitm && config.intercept.is_none() {
            return Err(RecorderError::Tls(
                "mitm mode needs an interception CA (InterceptCa::generate)".into(),
            ));
        }
        let dir = config.sessions_dir.clone();
        tokio::task::spawn_blocking(move || check_writable(&dir))
            .await
            .map_err(|e| RecorderError::Runtime(e.to_string()))??;
        let client = upstream::build_client(config.upstream_ca_pem.as_deref())?;
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| RecorderError::Bind {
                    addr: config.listen,
                    source,
                })?;
        let local = listener
            .local_addr()
            .map_err(|source| RecorderError::Bind {
                addr: config.listen,
                source,
            })?;
        let sessions = Arc::new(sessions::Sessions::new(
            config.sessions_dir,
            config.tags,
            config.scrubber,
            config.max_body_bytes,
            config.mode,
        ));
        let state = Arc::new(proxy::ProxyState {
            mode: config.mode,
            intercept: config.intercept,
            upstream: config.upstream,
            client,
            sessions,
            port: local.port(),
            url: format!("http://{local}"),
            max_body_bytes: config.max_body_bytes,
            upstream_timeout: config.upstream_timeout,
            drain_timeout: config.drain_timeout,
            stopping: tokio::sync::watch::Sender::new(false),
            closing: tokio::sync::watch::Sender::new(false),
            request_idle_timeout: config.request_idle_timeout,
            transport_failures: AtomicU64::new(0),
            upstream_timeouts: AtomicU64::new(0),
            passed_through: AtomicU64::new(0),
            dot_segment_paths: AtomicU64::new(0),
            refused_connects: AtomicU64::new(0),
            refused_websockets: AtomicU64::new(0),
            passed_origins: parking_lot::Mutex::new(std::collections::BTreeSet::new()),
            graceful: parking_lot::Mutex::new(Some(GracefulShutdown::new())),
            tunnels: parking_lot::Mutex::new(JoinSet::new()),
        });
        Ok(Recorder {
            listener,
            local,
            state,
            idle_timeout: config.idle_timeout,
            drain_timeout: config.drain_timeout,
        })
    }

    /// The address actually listened on (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// `http://<addr>` of the proxy.
    pub fn url(&self) -> &str {
        &self.state.url
    }

    /// Serve until `shutdown` resolves, then stop accepting, let in-flight exchanges finish
    /// (bounded by the drain timeout; the rest are cut: recorded as truncated when their
    /// response had begun, not recorded when it had not), and finalize every open session.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()>,
    ) -> Result<RecordSummary, RecorderError> {
        let Recorder {
            listener,
            local: _,
            state,
            idle_timeout,
            drain_timeout,
        } = self;
        let mut connections = JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            let idle_wait = match idle_timeout {
                Some(idle) => {
                    let sessions = state.sessions.clone();
                    // May finalize a session (file IO): off the async workers.
                    let next = tokio::task::spawn_blocking(move || sessions.expire_idle(idle))
                        .await
                        .map_err(|e| RecorderError::Runtime(e.to_string()))?;
                    Some(next.unwrap_or(idle))
                }
                None => None,
            };
            let idle_tick = async {
                match idle_wait {
                    Some(d) => tokio::time::sleep(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _peer)) => {
                        let Some(watcher) = state.watcher() else { break };
                        let st = state.clone();
                        let service = hyper::service::service_fn(move |req| {
                            proxy::handle(st.clone(), proxy::Via::Direct, req)
                        });
                        // With upgrades: a forward-proxy client's CONNECT becomes a tunnel.
                        let idle = state.request_idle_timeout;
                        let mut closing = state.closing.subscribe();
                        connections.spawn(async move {
                            // hyper's header timer starts with a request: a client that
                            // connects and sends nothing would hold its socket for ever.
                            let opened = tokio::select! {
                                sent = opening_within(&stream, idle) => sent,
                                _ = closing.wait_for(|c| *c) => false,
                            };
                            if !opened {
                                tracing::debug!("closed a client connection that sent nothing");
                                return;
                            }
                            let conn = client_connections(idle)
                                .serve_connection_with_upgrades(TokioIo::new(stream), service)
                                .into_owned();
                            if let Err(e) = watcher.watch(conn).await {
                                tracing::debug!("client connection ended with an error: {e}");
                            }
                        });
                    }
                    Err(e) => {
                        // Out of file descriptors and the like: log, breathe, keep serving.
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                () = idle_tick => {}
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }

        // Stop accepting, then drain (intercepted tunnels too: they carry recorded exchanges).
        drop(listener);
        state.closing.send_replace(true);
        let graceful = state.graceful.lock().take();
        let drained = match graceful {
            Some(g) => tokio::time::timeout(drain_timeout, g.shutdown())
                .await
                .is_ok(),
            None => true,
        };
        let mut tunnels = std::mem::take(&mut *state.tunnels.lock());
        if !drained {
            tracing::warn!(
                in_flight = state.sessions.in_flight(),
                "drain timeout reached: cutting the exchanges still in flight"
            );
            state.sessions.start_cut();
            // A request still waiting for its response head is answered `503
            // recorder_stopping` (not recorded) rather than left with a closed connection and
            // no answer; give those answers a moment to be written before the cut.
            state.stopping.send_replace(true);
            let _ = tokio::time::timeout(STOPPING_ANSWER_GRACE, async {
                while connections.join_next().await.is_some() {}
            })
            .await;
            connections.abort_all();
        }
        // Blind tunnels record nothing and may stay open for as long as their client likes.
        tunnels.abort_all();
        while connections.join_next().await.is_some() {}
        while tunnels.join_next().await.is_some() {}
        // Every cut exchange is settled now: recorded truncated (its response had begun) or
        // dropped (no response head yet). Say which, truthfully.
        let cut = state.sessions.cut_tally();
        if cut.recorded > 0 {
            tracing::warn!(
                exchanges = cut.recorded,
                "cut while their response was streaming: recorded with truncated=true"
            );
        }
        if cut.unrecorded > 0 {
            tracing::warn!(
                requests = cut.unrecorded,
                "cut before the upstream answered: NOT recorded (no response arrived)"
            );
        }
        // Cut bodies are written on the blocking pool; give those writes time to land.
        if !state.sessions.wait_settled(drain_timeout).await {
            tracing::warn!("some recordings were still being written at shutdown");
        }
        let sessions = state.sessions.clone();
        tokio::task::spawn_blocking(move || sessions.finalize_all())
            .await
            .map_err(|e| RecorderError::Runtime(e.to_string()))?;

        let finalized = state.sessions.finalized();
        Ok(RecordSummary {
            exchanges: finalized.iter().map(|s| s.exchange_count).sum(),
            sessions: finalized,
            transport_failures: state.transport_failures.load(Ordering::Relaxed),
            upstream_timeouts: state.upstream_timeouts.load(Ordering::Relaxed),
            passed_through: state.passed_through.load(Ordering::Relaxed),
            dot_segment_paths: state.dot_segment_paths.load(Ordering::Relaxed),
            refused_tunnels: state.refused_connects.load(Ordering::Relaxed),
            refused_websockets: state.refused_websockets.load(Ordering::Relaxed),
            cut_at_shutdown: cut.recorded,
            cut_unrecorded: cut.unrecorded,
            cut_at_limit: state.sessions.cut_at_limit(),
            write_errors: state.sessions.errors(),
        })
    }
}

/// The HTTP/2 connection preface (RFC 9113 §3.4), which hyper-util's protocol detection reads
/// whole, with no timer of its own.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// How often a connection whose HTTP/2 preface is arriving in pieces is looked at again: a
/// peek answers the same bytes until more arrive, so it cannot wait for them itself.
const PEEK_AGAIN: Duration = Duration::from_millis(10);

/// Whether `stream`'s opening arrives within `idle`, without taking it (the bytes stay for
/// hyper): its first byte, or, for a client that begins the HTTP/2 preface, the whole preface.
/// `true` too when the client closes (hyper sees the end); `false` when it sent nothing, or
/// stopped inside the preface, for that long.
async fn opening_within(stream: &tokio::net::TcpStream, idle: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + idle;
    let mut seen = [0u8; H2_PREFACE.len()];
    loop {
        match tokio::time::timeout_at(deadline, stream.peek(&mut seen)).await {
            Err(_) | Ok(Err(_)) => return false,
            Ok(Ok(n)) if n == 0 || opening_decided(&seen[..n]) => return true,
            // A peek with bytes waiting is ready at once, so the deadline is checked here.
            Ok(Ok(_)) if tokio::time::Instant::now() >= deadline => return false,
            Ok(Ok(_)) => tokio::time::sleep(PEEK_AGAIN).await,
        }
    }
}

/// Whether a connection that began with `seen` has shown which protocol it speaks: a byte that
/// does not continue the HTTP/2 preface, or the whole preface.
fn opening_decided(seen: &[u8]) -> bool {
    seen.len() >= H2_PREFACE.len() || !H2_PREFACE.starts_with(seen)
}

/// [`opening_within`] for a stream that cannot be peeked (the client's side of TLS inside an
/// intercepted tunnel): the opening is read and handed back, to be read again before the
/// rest. Empty when the client closed at once (hyper then sees the end); `None` when it sent
/// nothing, or stopped inside the preface, for `idle`, or the read failed.
pub(crate) async fn read_opening<R: AsyncRead + Unpin>(
    io: &mut R,
    idle: Duration,
) -> Option<Vec<u8>> {
    let deadline = tokio::time::Instant::now() + idle;
    let mut seen = [0u8; H2_PREFACE.len()];
    let mut filled = 0;
    loop {
        match tokio::time::timeout_at(deadline, io.read(&mut seen[filled..])).await {
            Err(_) | Ok(Err(_)) => return None,
            Ok(Ok(0)) => return Some(seen[..filled].to_vec()),
            Ok(Ok(n)) => {
                filled += n;
                if opening_decided(&seen[..filled]) {
                    return Some(seen[..filled].to_vec());
                }
            }
        }
    }
}

/// How client connections are served: HTTP/1.1 or HTTP/2, HTTP/1 request headers must arrive
/// within `idle`, and an HTTP/2 peer must answer a ping after `idle` of silence (a client that
/// does neither would hold its connection, and a file descriptor, for ever).
pub(crate) fn client_connections(idle: Duration) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // A client that shuts its sending side once the request is written still gets (and the
    // recorder still records) the answer.
    builder
        .http1()
        .half_close(true)
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(idle);
    // HTTP/2 has no header timer: a peer silent for `idle` is pinged and dropped when it does
    // not answer within as long, while a live client answers and keeps its connection.
    builder
        .http2()
        .timer(hyper_util::rt::TokioTimer::new())
        .keep_alive_interval(idle)
        .keep_alive_timeout(idle);
    builder
}

/// Make sure `sessions_dir` exists and a session folder with a file in it can be created
/// there, the way [`SessionWriter`](wraith_recording::session::SessionWriter) will: create
/// a hidden probe folder (a Wraith temp name, so a crash leaves nothing a reader lists), write
/// a file in it, remove both.
fn check_writable(sessions_dir: &Path) -> Result<(), RecorderError> {
    let fail = |error: std::io::Error| RecorderError::SessionsDir {
        path: sessions_dir.to_path_buf(),
        error,
        fix: "make the folder writable by this user (or free disk space there)",
    };
    if sessions_dir.exists() && !sessions_dir.is_dir() {
        return Err(RecorderError::SessionsDir {
            path: sessions_dir.to_path_buf(),
            error: std::io::Error::other("it is a file, not a folder"),
            fix: "move the file out of the way",
        });
    }
    std::fs::create_dir_all(sessions_dir).map_err(fail)?;
    let probe = wraith_recording::fsutil::temp_path_beside(&sessions_dir.join("write-check"));
    std::fs::create_dir(&probe).map_err(fail)?;
    let written = std::fs::write(probe.join("probe"), b"wraith\n");
    let _ = std::fs::remove_file(probe.join("probe"));
    let removed = std::fs::remove_dir(&probe);
    written.map_err(fail)?;
    removed.map_err(fail)
}

/// Wall-clock unix microseconds. The recorder is the one place that stamps real time: it
/// records when traffic happened.
pub(crate) fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
