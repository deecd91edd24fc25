//! The proxy's request handler: control plane, forwarding, teeing the answer into a recording,
//! and (forward and mitm modes) passing other origins through unrecorded.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt as _, Either, Full, Limited};
use hyper::body::Incoming;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use parking_lot::Mutex;
use serde_json::Value;
use tokio::task::JoinSet;
use wraith_recording::{RecordedRequest, RecordedResponse};

use crate::control::{self, error_body, is_control_path};
use crate::exchange::PendingExchange;
use crate::headers::{
    content_type, forward_request_headers, passthrough_request_headers, recorded_request_headers,
    recorded_response_headers, strip_response_hop_by_hop,
};
use crate::intercept::InterceptCa;
use crate::mode::ProxyMode;
use crate::now_us;
use crate::sessions::Sessions;
use crate::tee::TeeBody;
use crate::upstream::{Upstream, UpstreamClient};

/// What the proxy answers with: a streamed upstream body it records, one it made itself, or
/// one it passes through unrecorded.
pub(crate) type ProxyBody = Either<TeeBody, Either<Full<Bytes>, Incoming>>;

/// A response the proxy made itself, as a [`ProxyBody`] response.
pub(crate) fn made(resp: Response<Full<Bytes>>) -> Response<ProxyBody> {
    resp.map(|b| Either::Right(Either::Left(b)))
}

/// Everything a request handler needs, shared by all connections.
pub(crate) struct ProxyState {
    pub(crate) mode: ProxyMode,
    /// The TLS identity answering intercepted `CONNECT`s (mitm mode only).
    pub(crate) intercept: Option<InterceptCa>,
    pub(crate) upstream: Upstream,
    pub(crate) client: UpstreamClient,
    pub(crate) sessions: Arc<Sessions>,
    pub(crate) port: u16,
    pub(crate) url: String,
    /// Largest request body accepted and largest response body recorded (bigger responses
    /// still stream through whole, but are recorded cut and marked truncated).
    pub(crate) max_body_bytes: usize,
    /// How long a request waits for the upstream's response head (504 after).
    pub(crate) upstream_timeout: Duration,
    /// How long shutdown lets in-flight exchanges finish (named in the `recorder_stopping`
    /// answer).
    pub(crate) drain_timeout: Duration,
    /// Set when shutdown's drain timeout ran out: a request still waiting for the upstream's
    /// response head is then answered `503 recorder_stopping` before its connection is cut.
    pub(crate) stopping: tokio::sync::watch::Sender<bool>,
    /// Set when the recorder stops accepting: a connection still waiting for its client's
    /// first byte, or an intercepted tunnel for its TLS handshake, is closed at once (it
    /// carries no exchange, and would otherwise hold the drain).
    pub(crate) closing: tokio::sync::watch::Sender<bool>,
    /// How long a client may pause while sending its request body (408 after).
    pub(crate) request_idle_timeout: Duration,
    /// Requests that got no usable upstream answer: 502, nothing recorded for them.
    pub(crate) transport_failures: AtomicU64,
    /// Requests the upstream sent no response head for within the upstream timeout: 504,
    /// nothing recorded for them.
    pub(crate) upstream_timeouts: AtomicU64,
    /// Requests and tunnels to other origins than the upstream: passed through, not recorded.
    pub(crate) passed_through: AtomicU64,
    /// Requests whose path has a `.` or `..` segment: passed through, not recorded.
    pub(crate) dot_segment_paths: AtomicU64,
    /// `CONNECT`s to the upstream refused in forward mode (their traffic could not be read).
    pub(crate) refused_connects: AtomicU64,
    /// WebSocket upgrade requests refused (501): the recorder records HTTP exchanges only.
    pub(crate) refused_websockets: AtomicU64,
    /// Origins already named in a "passing through" log line (one line each).
    pub(crate) passed_origins: Mutex<BTreeSet<String>>,
    /// Drains client connections at shutdown, intercepted tunnels included; taken when
    /// shutdown begins.
    pub(crate) graceful: Mutex<Option<GracefulShutdown>>,
    /// Tasks serving `CONNECT` tunnels (intercepted or blind), which outlive the request that
    /// opened them.
    pub(crate) tunnels: Mutex<JoinSet<()>>,
}

impl ProxyState {
    /// [`read_body`] within this recorder's limits.
    async fn read_request_body(
        &self,
        body: Incoming,
        headers: &http::HeaderMap,
    ) -> Result<Bytes, Response<Full<Bytes>>> {
        read_body(
            body,
            headers,
            self.max_body_bytes,
            self.request_idle_timeout,
        )
        .await
    }

    /// A watcher for one more connection to drain at shutdown; `None` once shutdown began.
    pub(crate) fn watcher(&self) -> Option<Watcher> {
        self.graceful.lock().as_ref().map(GracefulShutdown::watcher)
    }

    /// Count a request or tunnel the recorder passes on unrecorded, and say so once per origin
    /// and reason (`why`: "not" the upstream, or "outside the base path of" it).
    pub(crate) fn note_passed_through(&self, origin: &str, why: &str) {
        self.passed_through.fetch_add(1, Ordering::Relaxed);
        if self.passed_origins.lock().insert(format!("{why} {origin}")) {
            tracing::info!(
                "passing {origin} through unrecorded: it is {why} the upstream {}",
                self.upstream.base_url()
            );
        }
    }
}

/// Why a request is passed on to where it was going without being recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unrecorded {
    /// Its origin is not the upstream's (forward and mitm modes).
    OtherOrigin,
    /// The upstream's origin, outside its base URL's path (forward and mitm modes).
    OutsideBasePath,
    /// Its path has a `.` or `..` segment (percent-encoded ones included), which `wraith serve`
    /// refuses (400): a twin could never answer it, so it is not recorded in any mode.
    DotSegment,
}

impl Unrecorded {
    /// Why, as the end of "passed through unrecorded: …".
    fn reason(self) -> &'static str {
        match self {
            Unrecorded::OtherOrigin => "it is not the upstream",
            Unrecorded::OutsideBasePath => "it is outside the base path of the upstream",
            Unrecorded::DotSegment => {
                "its path has a `.` or `..` segment, which a twin refuses to answer"
            }
        }
    }
}

/// Which connection a request arrived on, which decides how its target is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// The client's own connection to the proxy.
    Direct,
    /// Inside a `CONNECT` tunnel the recorder answered as the upstream's host (mitm): the
    /// origin-form path is the upstream's full path.
    Intercepted,
}

/// How a forwarded request's path maps to the upstream's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathForm {
    /// The client addressed the proxy as if it were the API: the base URL's prefix goes first.
    Relative,
    /// The client named the API itself: the path already is the upstream's.
    Full,
}

/// A JSON response made by the proxy itself.
pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    let mut text = body.to_string();
    text.push('\n');
    let mut resp = Response::new(Full::new(Bytes::from(text)));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

/// The hyper service function.
pub(crate) async fn handle(
    state: Arc<ProxyState>,
    via: Via,
    req: Request<Incoming>,
) -> Result<Response<ProxyBody>, Infallible> {
    if req.method() == Method::CONNECT {
        let resp = match via {
            Via::Direct => crate::tunnel::connect(state, req).await,
            Via::Intercepted => json_response(
                StatusCode::METHOD_NOT_ALLOWED,
                &error_body("bad_request", "CONNECT inside an intercepted tunnel"),
            ),
        };
        return Ok(made(resp));
    }
    if is_websocket_upgrade(req.headers()) && !is_control_path(req.uri().path()) {
        return Ok(made(refuse_websocket(&state, req.method(), req.uri())));
    }
    // Asterisk form (`OPTIONS *`, RFC 9112 §3.2.4) names the server as a whole, no path.
    if req.uri().path() == "*" {
        return Ok(made(refuse_asterisk_form(req.method())));
    }
    let uri = req.uri();
    // Absolute form (`GET http://host/path`) is how a client talks to its HTTP proxy. One that
    // names the proxy itself is addressed to the recorder, as an origin-form request is; so is
    // an HTTP/2 request sent straight to it (HTTP/2 always names its authority).
    let absolute = uri.authority().is_some() && !names_the_proxy(uri, state.port);
    let resp = match via {
        Via::Direct if !absolute || !state.mode.is_forward() => {
            if is_control_path(uri.path()) {
                made(control::answer(&state, req.method(), uri.path()).await)
            } else {
                forward(state, req, PathForm::Relative).await
            }
        }
        Via::Direct => {
            let scheme = uri.scheme_str().unwrap_or("http");
            if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
                return Ok(made(bad_request(&format!(
                    "the recorder forwards http:// and https:// requests, not {scheme}://"
                ))));
            }
            let port = match uri.authority().map(crate::upstream::explicit_port) {
                Some(Err(p)) => {
                    return Ok(made(bad_request(&format!(
                        "`{p}` in {uri} is not a port (1 to 65535)"
                    ))));
                }
                Some(Ok(p)) => p,
                None => None,
            };
            let same_origin = uri
                .host()
                .is_some_and(|host| state.upstream.is_origin(host, port, Some(scheme)));
            if same_origin && state.upstream.covers_path(uri.path()) {
                forward(state, req, PathForm::Full).await
            } else {
                let target = uri.clone();
                let why = if same_origin {
                    Unrecorded::OutsideBasePath
                } else {
                    Unrecorded::OtherOrigin
                };
                pass_through(state, req, target, why).await
            }
        }
        Via::Intercepted => {
            if state.upstream.covers_path(uri.path()) {
                forward(state, req, PathForm::Full).await
            } else {
                match state
                    .upstream
                    .uri_for_upstream_path(uri.path(), uri.query().unwrap_or(""))
                {
                    Ok(target) => {
                        pass_through(state, req, target, Unrecorded::OutsideBasePath).await
                    }
                    Err(e) => made(bad_request(&e.to_string())),
                }
            }
        }
    };
    Ok(resp)
}

/// Whether a request asks to become a WebSocket (`Upgrade: websocket`, RFC 6455 §4.1).
fn is_websocket_upgrade(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(http::header::UPGRADE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| {
            let name = p.trim().split('/').next().unwrap_or("");
            name.eq_ignore_ascii_case("websocket")
        })
}

/// The answer to a WebSocket upgrade: the recorder records HTTP exchanges only and cannot
/// relay a WebSocket, so the request is neither sent on nor recorded. Forwarded without its
/// `Upgrade` header (hop-by-hop) it would have reached the upstream as a plain `GET` whose
/// answer the client could not use, and been recorded as one.
fn refuse_websocket(state: &ProxyState, method: &Method, uri: &Uri) -> Response<Full<Bytes>> {
    state.refused_websockets.fetch_add(1, Ordering::Relaxed);
    let what = format!("{method} {}", uri.path());
    tracing::warn!(
        "refused the WebSocket upgrade {what}: WebSocket traffic is not recorded (nor relayed); \
         connect the WebSocket client to the API directly"
    );
    json_response(
        StatusCode::NOT_IMPLEMENTED,
        &error_body(
            "websocket_not_recorded",
            &format!(
                "{what} asks for a WebSocket, and wraith record records HTTP request and \
                 response exchanges only: it was neither sent to the upstream nor recorded. \
                 Connect the WebSocket client to the API directly"
            ),
        ),
    )
}

/// The answer to an asterisk-form request (`OPTIONS *`): it asks about the upstream server as
/// a whole, not a resource under the base URL. Sent on with the base path in front it would
/// be another request (`OPTIONS /v1/*`, a resource named `*`), recorded as that, and no twin
/// answers a request without a path; so it is neither sent on nor recorded.
fn refuse_asterisk_form(method: &Method) -> Response<Full<Bytes>> {
    tracing::warn!(
        "refused {method} * (asterisk form): it asks about the server as a whole, which is \
         neither forwarded nor recorded; ask about a path (OPTIONS /path) to record it"
    );
    json_response(
        StatusCode::NOT_IMPLEMENTED,
        &error_body(
            "asterisk_form_not_recorded",
            &format!(
                "{method} * asks about the server as a whole, not a resource of the API: the \
                 recorder cannot send it on as such (with the base URL's path in front it \
                 would be a request for a resource named `*`) and a twin answers requests for \
                 paths, so it was neither sent to the upstream nor recorded. Ask about a path \
                 instead (OPTIONS /path)"
            ),
        ),
    )
}

/// A 400 the proxy answers itself, saying what is wrong with the request.
pub(crate) fn bad_request(message: &str) -> Response<Full<Bytes>> {
    json_response(StatusCode::BAD_REQUEST, &error_body("bad_request", message))
}

/// Whether `uri` names the recorder's own listening address (a loopback host on its port).
fn names_the_proxy(uri: &Uri, port: u16) -> bool {
    let loopback = uri.host().is_some_and(|h| {
        let h = h.trim_start_matches('[').trim_end_matches(']');
        h.eq_ignore_ascii_case("localhost")
            || h.parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.to_canonical().is_loopback())
    });
    loopback && uri.port_u16() == Some(port)
}

/// Read a request body whole, within the recorder's limit; an answer to send instead when it
/// is too big, cannot be read, or stops arriving for `idle` (a client that never finishes its
/// request must not hold a connection, or its session, for ever).
async fn read_body(
    body: Incoming,
    headers: &http::HeaderMap,
    max_body_bytes: usize,
    idle: Duration,
) -> Result<Bytes, Response<Full<Bytes>>> {
    let too_large = || {
        json_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            &error_body(
                "request_too_large",
                &format!(
                    "the request body is larger than the recorder's limit of {max_body_bytes} \
                     bytes"
                ),
            ),
        )
    };
    // A length over the limit is refused at once, not after waiting for bytes that would be
    // refused anyway.
    let declared = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > max_body_bytes as u64) {
        return Err(too_large());
    }
    let mut body = Limited::new(body, max_body_bytes);
    let mut collected = bytes::BytesMut::new();
    loop {
        let frame = match tokio::time::timeout(idle, body.frame()).await {
            Err(_) => {
                return Err(json_response(
                    StatusCode::REQUEST_TIMEOUT,
                    &error_body(
                        "request_timeout",
                        &format!(
                            "the request body stopped arriving: no bytes for {} ms ([serve.limits] \
                             request_idle_timeout_ms); nothing was sent upstream or recorded",
                            idle.as_millis()
                        ),
                    ),
                ));
            }
            Ok(None) => return Ok(collected.freeze()),
            Ok(Some(Ok(frame))) => frame,
            Ok(Some(Err(e))) => {
                let too_big = e
                    .downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some();
                if too_big {
                    return Err(too_large());
                }
                let message = format!("could not read the request body: {e}");
                return Err(json_response(
                    StatusCode::BAD_REQUEST,
                    &error_body("bad_request", &message),
                ));
            }
        };
        if let Some(data) = frame.data_ref() {
            collected.extend_from_slice(data);
        }
    }
}

/// Why a request sent on got no answer to stream back: 502 (or 504 when the answer took too
/// long), with a JSON error body saying which, to `what` (`METHOD /path`) at `target`, the
/// server it was sent to named as a user reads it (`the upstream https://…`, or the host a
/// passed-through request tried).
fn no_answer(
    state: &ProxyState,
    target: &str,
    what: &str,
    outcome: Result<hyper_util::client::legacy::Error, tokio::time::error::Elapsed>,
) -> Response<Full<Bytes>> {
    let (status, kind, message) = match outcome {
        Err(_) => (
            StatusCode::GATEWAY_TIMEOUT,
            "upstream_timeout",
            format!(
                "{target} sent no answer to {what} within {} ms ([proxy] upstream_timeout_ms); \
                 nothing was recorded",
                state.upstream_timeout.as_millis()
            ),
        ),
        Ok(e) if e.is_connect() => (
            StatusCode::BAD_GATEWAY,
            "upstream_unreachable",
            format!(
                "the recorder could not reach {target} for {what}: {}",
                wraith_recording::error::one_line(&e)
            ),
        ),
        Ok(e) => (
            StatusCode::BAD_GATEWAY,
            "upstream_bad_response",
            format!(
                "{target} was reached but gave no usable answer to {what} (it closed the \
                 connection, or sent something that is not HTTP or passes the recorder's \
                 limits): {}; nothing was recorded",
                wraith_recording::error::one_line(&e)
            ),
        ),
    };
    json_response(status, &error_body(kind, &message))
}

/// How sending a request to the upstream ended: its response head, or why there is none
/// (`Err`: the upstream timeout ran out). `None` when the recorder began cutting the requests
/// still in flight at shutdown first.
type Head = Option<
    Result<
        Result<Response<Incoming>, hyper_util::client::legacy::Error>,
        tokio::time::error::Elapsed,
    >,
>;

/// Send `req` and wait for the upstream's response head, under the upstream timeout and until
/// shutdown cuts the requests in flight.
async fn request_head(state: &ProxyState, req: Request<Full<Bytes>>) -> Head {
    let mut stopping = state.stopping.subscribe();
    let stopped = async move {
        // The sender lives as long as the proxy; should it go, never stop here.
        if stopping.wait_for(|s| *s).await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        answered = tokio::time::timeout(state.upstream_timeout, state.client.request(req)) => {
            Some(answered)
        }
        () = stopped => None,
    }
}

/// The answer to a request the upstream had not begun to answer when shutdown's drain timeout
/// ran out: `503 recorder_stopping`, so the client learns why instead of seeing its connection
/// closed without a word. Nothing was recorded for it.
fn stopping_answer(state: &ProxyState, target: &str, what: &str) -> Response<Full<Bytes>> {
    json_response(
        StatusCode::SERVICE_UNAVAILABLE,
        &error_body(
            "recorder_stopping",
            &format!(
                "wraith record is stopping, and {target} had not begun to answer {what} when the \
                 drain timeout ran out ({} ms, [serve.limits] request_drain_timeout_ms): the \
                 request was cut and nothing was recorded; send it again once a recorder is \
                 running",
                state.drain_timeout.as_millis()
            ),
        ),
    )
}

/// Send a request the twin cannot hold (another origin's, or one with a dot segment in its
/// path) on as it came (hop-by-hop and `X-Wraith-*` headers aside) and stream its answer back.
/// Nothing is recorded.
async fn pass_through(
    state: Arc<ProxyState>,
    req: Request<Incoming>,
    target: Uri,
    why: Unrecorded,
) -> Response<ProxyBody> {
    let origin = format!(
        "{}://{}",
        target.scheme_str().unwrap_or("http"),
        target.authority().map_or("", |a| a.as_str())
    );
    match why {
        Unrecorded::OtherOrigin => state.note_passed_through(&origin, "not"),
        Unrecorded::OutsideBasePath => {
            state.note_passed_through(&origin, "outside the base path of")
        }
        Unrecorded::DotSegment => {
            state.dot_segment_paths.fetch_add(1, Ordering::Relaxed);
            // The path only: the query may hold a secret.
            tracing::warn!(
                "passing {} {} through unrecorded: its path has a `.` or `..` segment, which \
                 wraith serve refuses (400), so a twin could never answer it; send the path \
                 without dot segments to record it",
                req.method(),
                req.uri().path()
            );
        }
    }
    // Errors name the host the request went to (for another origin, not the twin's upstream
    // it is not).
    let tried = format!("{origin} (passed through unrecorded: {})", why.reason());
    let (parts, body) = req.into_parts();
    let body = match state.read_request_body(body, &parts.headers).await {
        Ok(b) => b,
        Err(resp) => return made(resp),
    };
    let mut out = Request::new(Full::new(body));
    *out.method_mut() = parts.method.clone();
    *out.uri_mut() = target.clone();
    *out.headers_mut() = passthrough_request_headers(&parts.headers);
    let Some(answered) = request_head(&state, out).await else {
        return made(stopping_answer(
            &state,
            &tried,
            &format!("{} {}", parts.method, target.path()),
        ));
    };
    match answered {
        Ok(Ok(resp)) => {
            let (mut rparts, rbody) = resp.into_parts();
            strip_response_hop_by_hop(&mut rparts.headers);
            rparts.version = parts.version;
            Response::from_parts(rparts, Either::Right(Either::Right(rbody)))
        }
        Ok(Err(e)) => {
            let cause = wraith_recording::error::one_line(&e);
            tracing::warn!(method = %parts.method, uri = %target, "passed-through request failed: {cause}");
            made(no_answer(
                &state,
                &tried,
                &format!("{} {}", parts.method, target.path()),
                Ok(e),
            ))
        }
        Err(elapsed) => {
            tracing::warn!(method = %parts.method, uri = %target, "passed-through request timed out");
            made(no_answer(
                &state,
                &tried,
                &format!("{} {}", parts.method, target.path()),
                Err(elapsed),
            ))
        }
    }
}

async fn forward(
    state: Arc<ProxyState>,
    req: Request<Incoming>,
    form: PathForm,
) -> Response<ProxyBody> {
    let request_start_us = now_us();
    // The full upstream path (base URL prefix included), as `wraith import` records it.
    let upstream_path = match form {
        PathForm::Relative => state.upstream.upstream_path(req.uri().path()),
        PathForm::Full => req.uri().path().to_string(),
    };
    let query = req.uri().query().unwrap_or("").to_string();
    let uri = match state.upstream.uri_for_upstream_path(&upstream_path, &query) {
        Ok(u) => u,
        Err(e) => return made(bad_request(&e.to_string())),
    };
    // A path with a dot segment (`/x/../items`, `/x/%2e%2e/items`, a `/../outside` that climbs
    // out of the base path) is one `wraith serve` refuses: recorded, it would be a route the
    // twin fails its own check on. The upstream still gets it as sent.
    if wraith_recording::har::has_dot_segment(&upstream_path) {
        return pass_through(state, req, uri, Unrecorded::DotSegment).await;
    }
    let (parts, body) = req.into_parts();
    let client_path = parts.uri.path().to_string();

    let body = match state.read_request_body(body, &parts.headers).await {
        Ok(b) => b,
        Err(resp) => return made(resp),
    };
    // Joining the session once the request is whole (not while a slow client is still
    // sending it) pins the session open while the upstream answers and the body streams.
    let ticket = state.sessions.begin(request_start_us);

    let mut upstream_req = Request::new(Full::new(body.clone()));
    *upstream_req.method_mut() = parts.method.clone();
    *upstream_req.uri_mut() = uri.clone();
    *upstream_req.headers_mut() = forward_request_headers(&parts.headers);

    let Some(answered) = request_head(&state, upstream_req).await else {
        // Cut at shutdown: dropping the ticket counts the request as cut unrecorded.
        return made(stopping_answer(
            &state,
            &format!("the upstream {}", state.upstream.base_url()),
            &format!("{} {}", parts.method, client_path),
        ));
    };
    // Nothing is recorded for a transport failure: there is no upstream answer to learn from.
    // Dropping the ticket releases the session.
    let failed = |outcome| {
        match &outcome {
            Ok(_) => &state.transport_failures,
            Err(_) => &state.upstream_timeouts,
        }
        .fetch_add(1, Ordering::Relaxed);
        match &outcome {
            Ok(e) => tracing::warn!(
                method = %parts.method,
                %uri,
                "upstream gave no answer: {}",
                wraith_recording::error::one_line(e)
            ),
            Err(_) => tracing::warn!(method = %parts.method, %uri, "upstream timed out"),
        }
        made(no_answer(
            &state,
            &format!("the upstream {}", state.upstream.base_url()),
            &format!("{} {}", parts.method, client_path),
            outcome,
        ))
    };
    let resp = match answered {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return failed(Ok(e)),
        Err(elapsed) => return failed(Err(elapsed)),
    };
    let first_byte_us = now_us();
    let (mut rparts, rbody) = resp.into_parts();
    strip_response_hop_by_hop(&mut rparts.headers);
    // Answer in the client's protocol version, whatever the upstream spoke.
    rparts.version = parts.version;

    let request = RecordedRequest {
        // Recorded uppercase, as the format says and `wraith import` stores a HAR's method:
        // synth models a route by it, and `serve` matches methods case-sensitively, as sent.
        // The upstream got the method as the client spelled it.
        method: parts.method.as_str().to_ascii_uppercase(),
        path: upstream_path,
        query,
        headers: {
            let mut headers = recorded_request_headers(&parts.headers);
            // HTTP/2 names the host in `:authority`, not in a header: record it as the `host`
            // an HTTP/1.1 client would have sent, so recordings read the same either way.
            if !headers.contains_key("host")
                && let Some(authority) = parts.uri.authority()
            {
                headers.insert("host".to_string(), vec![authority.as_str().to_string()]);
            }
            headers
        },
        content_type: if body.is_empty() {
            None
        } else {
            content_type(&parts.headers)
        },
        body: body.clone(),
        origin: None,
    };
    let response = RecordedResponse {
        status: rparts.status.as_u16(),
        headers: recorded_response_headers(&rparts.headers),
        content_type: content_type(&rparts.headers),
        trailers: None,
    };
    let pending = PendingExchange {
        ticket,
        request,
        response,
        request_start_us,
        first_byte_us,
    };
    let tee = TeeBody::new(rbody, pending, state.max_body_bytes);
    Response::from_parts(rparts, Either::Left(tee))
}
