//! The proxy's request handler: control plane, forwarding, teeing the answer into a recording,
//! and (forward and mitm modes) passing other origins through unrecorded.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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
    /// Requests that got no upstream answer (nothing recorded for them).
    pub(crate) transport_failures: AtomicU64,
    /// Requests and tunnels to other origins than the upstream: passed through, not recorded.
    pub(crate) passed_through: AtomicU64,
    /// `CONNECT`s to the upstream refused in forward mode (their traffic could not be read).
    pub(crate) refused_connects: AtomicU64,
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
                    "outside the base path of"
                } else {
                    "not"
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
                        pass_through(state, req, target, "outside the base path of").await
                    }
                    Err(e) => made(bad_request(&e.to_string())),
                }
            }
        }
    };
    Ok(resp)
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
                .is_ok_and(|ip| ip.is_loopback())
    });
    loopback && uri.port_u16() == Some(port)
}

/// Read a request body whole, within the recorder's limit; an answer to send instead when it
/// is too big or cannot be read.
async fn read_body(body: Incoming, max_body_bytes: usize) -> Result<Bytes, Response<Full<Bytes>>> {
    match Limited::new(body, max_body_bytes).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) => {
            let too_big = e
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some();
            let (status, kind, message) = if too_big {
                (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "request_too_large",
                    format!(
                        "the request body is larger than the recorder's limit of \
                         {max_body_bytes} bytes"
                    ),
                )
            } else {
                (
                    StatusCode::BAD_REQUEST,
                    "bad_request",
                    format!("could not read the request body: {e}"),
                )
            };
            Err(json_response(status, &error_body(kind, &message)))
        }
    }
}

/// Send a request for another origin on as it came (hop-by-hop and `X-Wraith-*` headers
/// aside) and stream its answer back. Nothing is recorded: it is not the twin's API.
async fn pass_through(
    state: Arc<ProxyState>,
    req: Request<Incoming>,
    target: Uri,
    why: &str,
) -> Response<ProxyBody> {
    let origin = format!(
        "{}://{}",
        target.scheme_str().unwrap_or("http"),
        target.authority().map_or("", |a| a.as_str())
    );
    state.note_passed_through(&origin, why);
    let (parts, body) = req.into_parts();
    let body = match read_body(body, state.max_body_bytes).await {
        Ok(b) => b,
        Err(resp) => return made(resp),
    };
    let mut out = Request::new(Full::new(body));
    *out.method_mut() = parts.method.clone();
    *out.uri_mut() = target.clone();
    *out.headers_mut() = passthrough_request_headers(&parts.headers);
    match state.client.request(out).await {
        Ok(resp) => {
            let (mut rparts, rbody) = resp.into_parts();
            strip_response_hop_by_hop(&mut rparts.headers);
            rparts.version = parts.version;
            Response::from_parts(rparts, Either::Right(Either::Right(rbody)))
        }
        Err(e) => {
            let cause = wraith_recording::error::one_line(&e);
            tracing::warn!(method = %parts.method, uri = %target, "passed-through request failed: {cause}");
            made(json_response(
                StatusCode::BAD_GATEWAY,
                &error_body(
                    "upstream_unreachable",
                    &format!(
                        "the recorder could not reach {origin} for {} {}: {cause}",
                        parts.method,
                        target.path()
                    ),
                ),
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
    // Joining the session now (not when the body ends) pins it open while this exchange runs.
    let ticket = state.sessions.begin(request_start_us);
    let (parts, body) = req.into_parts();
    let client_path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or("").to_string();

    let body = match read_body(body, state.max_body_bytes).await {
        Ok(b) => b,
        Err(resp) => return made(resp),
    };

    // The full upstream path (base URL prefix included), as `wraith import` records it.
    let upstream_path = match form {
        PathForm::Relative => state.upstream.upstream_path(&client_path),
        PathForm::Full => client_path.clone(),
    };
    let uri = match state.upstream.uri_for_upstream_path(&upstream_path, &query) {
        Ok(u) => u,
        Err(e) => return made(bad_request(&e.to_string())),
    };
    let mut upstream_req = Request::new(Full::new(body.clone()));
    *upstream_req.method_mut() = parts.method.clone();
    *upstream_req.uri_mut() = uri.clone();
    *upstream_req.headers_mut() = forward_request_headers(&parts.headers);

    let resp = match state.client.request(upstream_req).await {
        Ok(r) => r,
        Err(e) => {
            // Nothing is recorded for a transport failure: there is no upstream answer to learn
            // from. Dropping the ticket releases the session.
            state.transport_failures.fetch_add(1, Ordering::Relaxed);
            let cause = wraith_recording::error::one_line(&e);
            tracing::warn!(method = %parts.method, %uri, "upstream unreachable: {cause}");
            return made(json_response(
                StatusCode::BAD_GATEWAY,
                &error_body(
                    "upstream_unreachable",
                    &format!(
                        "the recorder could not reach the upstream {} for {} {}: {cause}",
                        state.upstream.base_url(),
                        parts.method,
                        client_path
                    ),
                ),
            ));
        }
    };
    let first_byte_us = now_us();
    let (mut rparts, rbody) = resp.into_parts();
    strip_response_hop_by_hop(&mut rparts.headers);
    // Answer in the client's protocol version, whatever the upstream spoke.
    rparts.version = parts.version;

    let request = RecordedRequest {
        method: parts.method.as_str().to_string(),
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
        body: body.to_vec(),
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
