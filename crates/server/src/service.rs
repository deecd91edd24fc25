//! The one hyper service function: the control-plane intercept, then the engine for everything
//! else, plus the accept loop and graceful shutdown around it.

use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{self, HeaderName, HeaderValue};
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};

use crate::idle_io::IdleDeadlines;
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};

use wraith_engine::{ControlHeader, ControlValue, Engine, Provision};

use crate::body_budget::{BodyBudget, BodyHold};
use crate::control::{self, ControlRoute};
use crate::effects::{self, AppMeta, Layers, Observation};
use crate::listen::Listeners;
use crate::ready::{self, TwinInfo};

/// The request header that selects the namespace.
pub const SESSION_HEADER: &str = "x-wraith-session";

/// Header fields a request may carry (each value of a repeated header counts): past it the
/// twin answers `431 request-header-fields-too-large` with its error envelope.
pub const MAX_REQUEST_HEADERS: usize = 100;

/// Bytes a request's header fields may take in all, each counted as its name, its value and
/// 4 bytes of framing (`: ` and CRLF): past it, the same `431`. Together with
/// [`MAX_REQUEST_HEADERS`], what hyper accepted by default, now answered by the twin.
pub const MAX_REQUEST_HEADER_BYTES: usize = 400 * 1024;

/// hyper's own HTTP/1 ceilings, set above the twin's limits so that a request past those is
/// still read and answered with the envelope: past these, hyper answers `431` itself, bare
/// (no body, no control headers), and closes the connection. Both bound what one connection
/// holds: the header slots parsed per request and the connection's read buffer.
const HYPER_MAX_HEADERS: usize = 256;
const HYPER_MAX_BUF_BYTES: usize = 1024 * 1024;

/// Serve-wide settings of the HTTP front door.
#[derive(Debug, Clone)]
pub struct ServeSettings {
    /// Bearer token for the protected control endpoints; `None` = no auth (loopback only: the
    /// caller refuses a non-loopback bind without one).
    pub control_token: Option<String>,
    /// Request bodies larger than this are refused with 413 before the engine sees them.
    pub max_body_bytes: usize,
    /// Every request body being read or answered, together (`[serve.limits]
    /// max_pending_body_mb`): a body that would take them past it is refused with 503.
    pub max_pending_body_bytes: usize,
    /// `--debug`: enables `GET /__wraith/session/{id}/state`.
    pub debug: bool,
    /// How long graceful shutdown waits for in-flight requests
    /// (`[serve.limits] request_drain_timeout_ms`).
    pub drain_timeout: Duration,
    /// How long a client may leave a request half sent (`[serve.limits]
    /// request_idle_timeout_ms`): its HTTP/1 headers, or the next bytes of its body.
    pub idle_timeout: Duration,
    /// Base epoch for a provisioned clock that names a mode but no epoch (`--clock-epoch`).
    pub default_clock_epoch: i64,
    /// What `/__wraith/info` reports besides live counts.
    pub info: TwinInfo,
    /// Simulation layers, trace ring and access log (all off by default).
    pub layers: Layers,
}

impl ServeSettings {
    /// Defaults for everything but the twin description: no token, 16 MiB bodies (256 MiB of
    /// them at once), 5 s drain.
    pub fn new(info: TwinInfo) -> ServeSettings {
        ServeSettings {
            control_token: None,
            max_body_bytes: wraith_twin::MAX_REQUEST_BODY_MB as usize * 1024 * 1024,
            max_pending_body_bytes: usize::try_from(
                wraith_twin::LimitsConfig::default().max_pending_body_mb * 1024 * 1024,
            )
            .unwrap_or(usize::MAX),
            debug: false,
            drain_timeout: Duration::from_millis(5000),
            idle_timeout: Duration::from_secs(30),
            default_clock_epoch: wraith_engine::ClockConfig::default().base_epoch,
            info,
            layers: Layers::default(),
        }
    }
}

/// How a [`serve`] run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeOutcome {
    /// Every in-flight connection finished within the drain timeout.
    pub drained: bool,
}

struct Shared {
    engine: Arc<Engine>,
    settings: ServeSettings,
    control_values: ControlValues,
    bodies: BodyBudget,
}

/// `HeaderValue`s of the control headers that are the same on every response of the engine
/// (twin age, recorded-at), built once instead of copied per response. Each is reused only while
/// the engine hands out the same text, so a changed value can never be served stale.
#[derive(Default)]
struct ControlValues {
    twin: [std::sync::OnceLock<(Box<str>, HeaderValue)>; 2],
}

impl ControlValues {
    fn value(
        &self,
        h: ControlHeader,
        value: ControlValue<'_>,
    ) -> Result<HeaderValue, http::header::InvalidHeaderValue> {
        match value {
            ControlValue::Static(s) => Ok(HeaderValue::from_static(s)),
            ControlValue::Twin(s) => {
                let slot = match h {
                    ControlHeader::TwinAge => &self.twin[0],
                    ControlHeader::RecordedAt => &self.twin[1],
                    _ => return HeaderValue::from_str(s),
                };
                if let Some((text, v)) = slot.get() {
                    if **text == *s {
                        return Ok(v.clone());
                    }
                    return HeaderValue::from_str(s);
                }
                let v = HeaderValue::from_str(s)?;
                let _ = slot.set((s.into(), v.clone()));
                Ok(v)
            }
            ControlValue::Response(s) => HeaderValue::from_str(s),
            ControlValue::Owned(s) => HeaderValue::from_maybe_shared(Bytes::from(s)),
        }
    }
}

type Resp = hyper::Response<Full<Bytes>>;

/// Serve until `shutdown` resolves, then stop accepting, let in-flight requests finish (bounded
/// by [`ServeSettings::drain_timeout`]) and return.
pub async fn serve<F>(
    listeners: Listeners,
    engine: Arc<Engine>,
    settings: ServeSettings,
    shutdown: F,
) -> ServeOutcome
where
    F: Future<Output = ()>,
{
    let drain_timeout = settings.drain_timeout;
    let idle_timeout = settings.idle_timeout;
    let shared = Arc::new(Shared {
        engine,
        bodies: BodyBudget::new(settings.max_pending_body_bytes),
        settings,
        control_values: ControlValues::default(),
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // A header read timeout needs a timer; it keeps a slow client from holding a connection
    // forever with a half-sent request.
    // A client may shut its sending side once the request is written (`nc -N`, some probes):
    // half-closed, the request is still answered rather than dropped unread.
    builder
        .http1()
        .half_close(true)
        .timer(TokioTimer::new())
        .header_read_timeout(idle_timeout)
        .max_headers(HYPER_MAX_HEADERS)
        .max_buf_size(HYPER_MAX_BUF_BYTES);
    // HTTP/2 has no header timer: a peer that has sent nothing for the idle timeout is pinged,
    // and dropped when it does not answer within as long. A live client answers and keeps its
    // connection; one that only sent the preface, or stopped reading, no longer holds it.
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(idle_timeout)
        .keep_alive_timeout(idle_timeout);
    let graceful = GracefulShutdown::new();
    let mut next = 0usize;
    let mut accept_warnings = WarnEvery::new(Duration::from_secs(1));
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = accept_any(&listeners.listeners, &mut next) => match accepted {
                Ok(stream) => {
                    // Replies are single small writes; Nagle would only add latency.
                    let _ = stream.set_nodelay(true);
                    let io = TokioIo::new(IdleDeadlines::new(stream, idle_timeout));
                    let sh = Arc::clone(&shared);
                    let svc = hyper::service::service_fn(move |req| {
                        let sh = Arc::clone(&sh);
                        async move { Ok::<_, Infallible>(handle(&sh, req).await) }
                    });
                    let conn = builder.serve_connection(io, svc).into_owned();
                    let fut = graceful.watch(conn);
                    tokio::spawn(async move {
                        if let Err(e) = fut.await {
                            tracing::debug!(error = %e, "connection ended with an error");
                        }
                    });
                }
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning, and
                    // say so once a second, not fifty times.
                    if let Some(suppressed) = accept_warnings.due(Instant::now()) {
                        tracing::warn!(error = %e, suppressed, "accept failed");
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            },
            () = &mut shutdown => break,
        }
    }
    drop(listeners);
    let drained = tokio::time::timeout(drain_timeout, graceful.shutdown())
        .await
        .is_ok();
    ServeOutcome { drained }
}

/// A warning said at most once per `every`: [`WarnEvery::due`] answers how many were held back
/// since the last one said, or `None` while it is too soon.
struct WarnEvery {
    every: Duration,
    last: Option<Instant>,
    held: u64,
}

impl WarnEvery {
    fn new(every: Duration) -> WarnEvery {
        WarnEvery {
            every,
            last: None,
            held: 0,
        }
    }

    fn due(&mut self, now: Instant) -> Option<u64> {
        if self
            .last
            .is_some_and(|last| now.saturating_duration_since(last) < self.every)
        {
            self.held += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.held))
    }
}

/// Accept from whichever listener has a connection first, starting the scan at a rotating
/// index so one busy listener cannot starve the other.
async fn accept_any(listeners: &[TcpListener], next: &mut usize) -> std::io::Result<TcpStream> {
    let n = listeners.len();
    if n == 0 {
        return std::future::pending().await;
    }
    std::future::poll_fn(|cx| {
        for k in 0..n {
            let i = (*next + k) % n;
            if let Poll::Ready(r) = listeners[i].poll_accept(cx) {
                *next = (i + 1) % n;
                return Poll::Ready(r.map(|(s, _)| s));
            }
        }
        Poll::Pending
    })
    .await
}

async fn handle(sh: &Shared, req: hyper::Request<Incoming>) -> Resp {
    let (parts, body) = req.into_parts();
    let is_head = parts.method == Method::HEAD;
    let is_control = control::is_control_path(parts.uri.path());
    let observation =
        (!is_control && sh.settings.layers.observing()).then(|| Observation::begin(&parts));
    let mut resp = if is_control {
        handle_control(sh, &parts, body).await
    } else {
        handle_app(sh, &parts, body).await
    };
    if is_head {
        *resp.body_mut() = Full::new(Bytes::new());
    }
    // Every answer's `Date` reads the twin's clock, never hyper's wall-clock default: under a
    // fixed or deterministic clock the same request sequence answers the same bytes.
    if !resp.headers().contains_key(header::DATE) {
        let date = if is_control {
            sh.engine.serve_http_date()
        } else {
            match parts
                .headers
                .get(SESSION_HEADER)
                .map(|v| std::str::from_utf8(v.as_bytes()))
            {
                None => sh.engine.http_date(None),
                Some(Ok(s)) => sh.engine.http_date(Some(s)),
                Some(Err(_)) => sh.engine.serve_http_date(),
            }
        };
        if let Ok(v) = HeaderValue::from_str(&date) {
            resp.headers_mut().insert(header::DATE, v);
        }
    }
    if let Some(obs) = observation {
        let meta = resp.extensions_mut().remove::<AppMeta>();
        obs.end(
            &sh.settings.layers,
            resp.status().as_u16(),
            meta,
            sh.settings.debug,
        );
    }
    resp
}

/// The route an application request matches, as `X-Wraith-Route` names it on an answer given
/// before the engine dispatched it ([`wraith_engine::Engine::route_label`]).
fn matched_route(sh: &Shared, parts: &http::request::Parts) -> Option<String> {
    let host = parts
        .headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| parts.uri.authority().map(|a| a.as_str()));
    sh.engine
        .route_label(parts.method.as_str(), parts.uri.path(), host)
}

async fn handle_app(sh: &Shared, parts: &http::request::Parts, body: Incoming) -> Resp {
    let bad_session = |message: &str| {
        refused(
            sh,
            json_response(
                StatusCode::BAD_REQUEST,
                &control::error_body("bad-session-header", message),
            ),
            parts.method.as_str(),
            matched_route(sh, parts).as_deref(),
        )
    };
    // Two session headers name two namespaces: answering from either would guess.
    if parts
        .headers
        .get_all(SESSION_HEADER)
        .iter()
        .nth(1)
        .is_some()
    {
        return bad_session(
            "the request carries more than one X-Wraith-Session header; send exactly one",
        );
    }
    let session = match parts.headers.get(SESSION_HEADER) {
        None => None,
        // Verbatim: the value is an opaque, case-sensitive key. UTF-8 is allowed; bytes that are
        // not UTF-8 cannot be a key we can report back, so they are refused rather than mangled.
        Some(v) => match std::str::from_utf8(v.as_bytes()) {
            Ok(s) if s.len() > wraith_engine::MAX_SESSION_ID_BYTES => {
                return bad_session(&format!(
                    "the X-Wraith-Session value is {} bytes long; a session id is at most {} bytes",
                    s.len(),
                    wraith_engine::MAX_SESSION_ID_BYTES
                ));
            }
            // Borrowed from the request head, which outlives the engine call.
            Ok(s) => Some(s),
            Err(_) => return bad_session("the X-Wraith-Session value is not valid UTF-8"),
        },
    };
    // A refusal before the engine answers is still an application answer naming its route.
    let refuse = |resp: Resp| {
        refused(
            sh,
            resp,
            parts.method.as_str(),
            matched_route(sh, parts).as_deref(),
        )
    };
    // After the session header's own checks: an over-long session id is named as such.
    if let Some(resp) = head_over_limits(parts) {
        return refuse(resp);
    }
    // `hold` keeps the body's share of the twin-wide budget until the answer is made.
    let (body, mut hold) = match read_body(sh, parts, body).await {
        Ok(b) => b,
        Err(resp) => return refuse(resp),
    };
    let (body, decoded) =
        match decode_request_body(parts, body, sh.settings.max_body_bytes, &mut hold) {
            Ok(b) => b,
            Err(resp) => return refuse(resp),
        };
    // A decoded body is held at its decoded size from here (shrinking: it cannot fail).
    if decoded {
        hold.resize(body.len());
    }
    if let Some(resp) = too_many_json_values(parts, &body) {
        return refuse(resp);
    }
    let mut headers: Vec<(String, String)> = Vec::with_capacity(parts.headers.len() + 1);
    for (name, value) in &parts.headers {
        // A decoded body is handed on as the recorder stores one: without the coding that
        // described it, and with its decoded length.
        if decoded && name == header::CONTENT_ENCODING {
            continue;
        }
        let value = if decoded && name == header::CONTENT_LENGTH {
            body.len().to_string()
        } else {
            String::from_utf8_lossy(value.as_bytes()).into_owned()
        };
        headers.push((name.as_str().to_string(), value));
    }
    // HTTP/2 carries the host in `:authority`; the engine reads `host` for the self-URL rewrite.
    if !parts.headers.contains_key(header::HOST)
        && let Some(authority) = parts.uri.authority()
    {
        headers.push(("host".to_string(), authority.as_str().to_string()));
    }
    let request = wraith_engine::Request {
        method: parts.method.as_str().to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or("").to_string(),
        headers,
        body,
    };
    let engine = &sh.engine;
    let layers = &sh.settings.layers;
    // Rate limit → fault → latency, decided before dispatch; `None` (no layer) costs nothing.
    let decided = layers
        .simulation
        .as_deref()
        .map(|sim| effects::decide(sim, engine, &request, session));
    let call = || {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            let (r, fault) = match &decided {
                None => (engine.handle(session, &request), None),
                Some(d) => effects::answer(engine, &request, session, d),
            };
            (r, fault)
        }))
    };
    // A call that may run long leaves the async worker first: its other connections (health
    // checks, other sessions' requests) move to another worker instead of waiting behind it.
    let answered = if may_run_long(engine, request.body.len())
        && tokio::runtime::Handle::current().runtime_flavor()
            == tokio::runtime::RuntimeFlavor::MultiThread
    {
        tokio::task::block_in_place(call)
    } else {
        call()
    };
    let (mut r, fault) = match answered {
        Ok(x) => x,
        Err(_) => {
            tracing::error!(method = %request.method, path = %request.path, "the engine panicked");
            return refused(
                sh,
                json_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &control::error_body(
                        "internal-error",
                        "the twin failed while answering this request; please report it with the request that caused it",
                    ),
                ),
                &request.method,
                matched_route(sh, parts).as_deref(),
            );
        }
    };
    let mut resp = match engine_response(sh, &mut r, &request.method) {
        Ok(resp) => resp,
        Err(refusal) => return refused(sh, refusal, &request.method, r.route.as_deref()),
    };
    if let Some(d) = &decided {
        // The engine has answered and released the namespace lock: holding here delays only
        // this response.
        effects::finish(&mut resp, d, parts.version).await;
    }
    if layers.observing() {
        resp.extensions_mut().insert(AppMeta {
            provenance: Some(r.provenance.as_str()),
            route: r.route.clone(),
            fault,
            field_counts: r.field_counts,
            field_origins: r.field_origins.clone(),
            delay_ms: decided.as_ref().map_or(0, |d| d.decision.delay_ms),
        });
    }
    resp
}

/// The engine's answer as the HTTP response the twin writes: status, the engine's headers
/// (framing and hop-by-hop ones dropped), the `X-Wraith-*` control headers and the framing.
/// Shared by application traffic and the handler probe, so a probed answer is written exactly
/// like a served one. `Err` is the 500 for a status that is not valid HTTP.
// Both arms are the response written next, never carried up a `?` chain: boxing one would
// only add an allocation.
#[allow(clippy::result_large_err)]
fn engine_response(
    sh: &Shared,
    r: &mut wraith_engine::Response,
    method: &str,
) -> Result<Resp, Resp> {
    // An interim (1xx) status is no answer: hyper would send a bare 500 or, for a 101, switch
    // protocols the client never asked for.
    let Some(status) = StatusCode::from_u16(r.status)
        .ok()
        .filter(|s| !s.is_informational())
    else {
        tracing::error!(
            status = r.status,
            "the engine produced a status that cannot answer a request"
        );
        return Err(json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &control::error_body(
                "internal-error",
                format!(
                    "the twin produced HTTP status {}, which cannot answer a request (an \
                     answer's status is 200 to 999; 1xx are interim responses)",
                    r.status
                ),
            ),
        ));
    };
    let mut resp = hyper::Response::new(Full::new(r.body.clone()));
    *resp.status_mut() = status;
    // A status with no registered reason phrase (a recorded 520, a handler's 599) would go out
    // as `520 <none>`, hyper's placeholder; HTTP/1.1 lets the phrase be empty.
    if status.canonical_reason().is_none() {
        resp.extensions_mut()
            .insert(hyper::ext::ReasonPhrase::from_static(b""));
    }
    let out = resp.headers_mut();
    // Sized once: growing the map header by header showed up in the serve profile.
    out.reserve(r.headers.len() + 7);
    // The engine's header values move into the response (no copy per header).
    for (name, value) in std::mem::take(&mut r.headers) {
        if is_managed_header(&name) {
            continue;
        }
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_maybe_shared(Bytes::from(value)),
        ) {
            (Ok(n), Ok(v)) => {
                out.append(n, v);
            }
            _ => tracing::debug!(header = %name, "dropped a header that is not valid HTTP"),
        }
    }
    sh.engine.for_each_control_header(r, method, |h, value| {
        match sh.control_values.value(h, value) {
            Ok(v) => {
                out.append(HeaderName::from_static(h.wire_name()), v);
            }
            Err(_) => tracing::debug!(header = h.name(), "dropped a header that is not valid HTTP"),
        }
    });
    if body_allowed(status) {
        let len = r.head_length.unwrap_or(r.body.len());
        out.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    }
    Ok(resp)
}

/// An application request the server answered itself, before or instead of the engine (a
/// session header it cannot read, a body over the cap, a failure): still an application
/// response, so it carries the control headers of an answer the twin invented (`miss`, the
/// route the request matched if any) and the twin's freshness.
fn refused(sh: &Shared, mut resp: Resp, method: &str, route: Option<&str>) -> Resp {
    let mut invented = wraith_engine::Response::plain(
        resp.status().as_u16(),
        Vec::new(),
        Bytes::new(),
        wraith_engine::Provenance::Miss,
    );
    // `X-Wraith-Route` is on every application answer where a route matched, refusals too.
    invented.route = route.map(str::to_string);
    let out = resp.headers_mut();
    sh.engine
        .for_each_control_header(&invented, method, |h, value| {
            if let Ok(v) = sh.control_values.value(h, value) {
                out.append(HeaderName::from_static(h.wire_name()), v);
            }
        });
    resp
}

/// Headers the server owns: framing is recomputed from the served body, and hop-by-hop headers
/// of a recording describe a connection that no longer exists.
fn is_managed_header(name: &str) -> bool {
    const MANAGED: [&str; 8] = [
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "upgrade",
        "proxy-connection",
        "te",
        "trailer",
    ];
    MANAGED.iter().any(|m| name.eq_ignore_ascii_case(m))
}

/// `431 request-header-fields-too-large` for a request carrying more header fields than
/// [`MAX_REQUEST_HEADERS`] or more header bytes than [`MAX_REQUEST_HEADER_BYTES`].
fn head_over_limits(parts: &http::request::Parts) -> Option<Resp> {
    let too_large = |message: String| {
        Some(json_response(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            &control::error_body("request-header-fields-too-large", message),
        ))
    };
    let count = parts.headers.len();
    if count > MAX_REQUEST_HEADERS {
        return too_large(format!(
            "the request carries {count} header fields; the twin reads at most \
             {MAX_REQUEST_HEADERS}"
        ));
    }
    let bytes: usize = parts
        .headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    if bytes > MAX_REQUEST_HEADER_BYTES {
        return too_large(format!(
            "the request's header fields take {bytes} bytes; the twin reads at most \
             {MAX_REQUEST_HEADER_BYTES}"
        ));
    }
    None
}

fn body_allowed(status: StatusCode) -> bool {
    !(status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED)
}

/// The request's body under the twin's size cap and idle timeout (see [`collect_body`]), with
/// its share of the twin-wide [`BodyBudget`]: keep the hold while the body is in use.
async fn read_body<'s>(
    sh: &'s Shared,
    parts: &http::request::Parts,
    body: Incoming,
) -> Result<(Bytes, BodyHold<'s>), Resp> {
    let mut hold = sh.bodies.hold();
    let bytes = collect_body(
        body,
        &parts.headers,
        sh.settings.max_body_bytes,
        sh.settings.idle_timeout,
        &mut hold,
    )
    .await?;
    Ok((bytes, hold))
}

/// `503 server-busy`: a body that would take the request bodies held at once past
/// `[serve.limits] max_pending_body_mb`. Memory, not the request, is the trouble, so the same
/// request may be sent again once others are answered.
fn bodies_busy(hold: &BodyHold<'_>, wanted: usize) -> Resp {
    let mib = |b: usize| b.div_ceil(1024 * 1024);
    let mut resp = json_response(
        StatusCode::SERVICE_UNAVAILABLE,
        &control::error_body(
            "server-busy",
            format!(
                "the twin is holding as many request bodies as it reads at once ({} MiB, \
                 [serve.limits] max_pending_body_mb), and this one needs {} MiB more; send it \
                 again once other requests are answered, or raise the limit",
                mib(hold.cap()),
                mib(wanted.saturating_sub(hold.bytes())),
            ),
        ),
    );
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    resp
}

/// The request body with the content codings its `Content-Encoding` lists undone, as the
/// recorder stores a request body (`wraith_recording::encoding`), so exact replay and templates
/// see what was recorded; `true` when it was decoded. An empty body, or one whose header lists
/// no coding but `identity`, is handed on as it is. Refused with the error envelope: a coding
/// the twin does not decode (`415 unsupported-media-type`), a body that is not what its header
/// says (`400 malformed-body`), one that decodes to more than `cap` bytes (`413
/// payload-too-large`, as a body sent that large). While it decodes, the body holds a whole
/// body's share (`cap`) of the twin-wide budget through `hold`: what it decodes to is not
/// known before, and a few bytes sent may decode to `cap` (`503 server-busy` when that share
/// is not free).
// The refusal is the response written next, never carried up a `?` chain.
#[allow(clippy::result_large_err)]
fn decode_request_body(
    parts: &http::request::Parts,
    body: Bytes,
    cap: usize,
    hold: &mut BodyHold<'_>,
) -> Result<(Bytes, bool), Resp> {
    use wraith_recording::encoding::{DecodeError, decode_body};
    // The codings in the order they were applied, as `encoding::content_codings` lists them.
    let mut codings: Vec<String> = Vec::new();
    for value in &parts.headers.get_all(header::CONTENT_ENCODING) {
        for coding in String::from_utf8_lossy(value.as_bytes()).split(',') {
            let coding = coding.trim().to_ascii_lowercase();
            if !coding.is_empty() && coding != "identity" {
                codings.push(coding);
            }
        }
    }
    if codings.is_empty() || body.is_empty() {
        return Ok((body, false));
    }
    let decoding = cap.max(body.len());
    if !hold.resize(decoding) {
        return Err(bodies_busy(hold, decoding));
    }
    let listed = codings.join(", ");
    // Decompressing up to `cap` bytes takes milliseconds: off the async worker.
    match off_worker(|| decode_body(&codings, &body, cap)) {
        Ok(decoded) => Ok((Bytes::from(decoded), true)),
        Err(DecodeError::Unsupported(coding)) => Err(json_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            &control::error_body(
                "unsupported-media-type",
                format!(
                    "the request body's Content-Encoding `{coding}` is not one the twin decodes \
                     (it decodes gzip, x-gzip, deflate, br and zstd, as the recorder does); send \
                     the body in one of those or uncompressed"
                ),
            ),
        )),
        Err(DecodeError::Corrupt { coding, reason }) => Err(json_response(
            StatusCode::BAD_REQUEST,
            &control::error_body(
                "malformed-body",
                format!(
                    "the request body is not the `{listed}` data its Content-Encoding says: \
                     `{coding}` does not decode ({reason})"
                ),
            ),
        )),
        Err(DecodeError::TooLarge { .. }) => Err(json_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            &control::error_body(
                "payload-too-large",
                format!(
                    "the request body decodes (Content-Encoding `{listed}`) to more than the \
                     twin accepts ({cap} bytes)"
                ),
            ),
        )),
    }
}

/// `413 payload-too-large` for a body the engine would read as JSON (any content type but a
/// form's) that holds more than [`json_values::MAX_JSON_VALUES`] values: its tree would take
/// memory many times its text (see [`json_values`]).
fn too_many_json_values(parts: &http::request::Parts, body: &Bytes) -> Option<Resp> {
    use crate::json_values::{MAX_JSON_VALUES, over_limit};
    if (body.len() as u64) <= MAX_JSON_VALUES {
        return None;
    }
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()));
    // Counting megabytes of JSON takes milliseconds: off the async worker.
    if !wraith_engine::reads_body_as_json(content_type.as_deref())
        || !off_worker(|| over_limit(body, MAX_JSON_VALUES))
    {
        return None;
    }
    Some(json_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        &control::error_body(
            "payload-too-large",
            format!(
                "the request body holds more than {MAX_JSON_VALUES} JSON values, more than the \
                 twin accepts (each value the twin reads takes memory many times its text); send \
                 fewer values"
            ),
        ),
    ))
}

/// Read the whole request body, refusing more than `cap` bytes with 413, and a body whose
/// next bytes take longer than `idle` to arrive with 408: a client that stops half way must not
/// hold its connection (and a task) for ever. The bytes are taken from the twin-wide budget
/// through `hold` before they are kept (a declared `Content-Length` all at once, before any of
/// the body is read), and a body that would take it past its cap is refused with 503.
async fn collect_body(
    body: Incoming,
    headers: &http::HeaderMap,
    cap: usize,
    idle: Duration,
    hold: &mut BodyHold<'_>,
) -> Result<Bytes, Resp> {
    let too_large = || {
        json_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            &control::error_body(
                "payload-too-large",
                format!("the request body is larger than the twin accepts ({cap} bytes)"),
            ),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > cap as u64) {
        return Err(too_large());
    }
    // At most `cap` here, so the conversion holds.
    let declared = declared.map_or(0, |n| usize::try_from(n).unwrap_or(cap));
    if !hold.resize(declared) {
        return Err(bodies_busy(hold, declared));
    }
    let mut body = Limited::new(body, cap);
    let mut collected = bytes::BytesMut::with_capacity(declared);
    loop {
        let frame = match tokio::time::timeout(idle, body.frame()).await {
            Err(_) => {
                return Err(json_response(
                    StatusCode::REQUEST_TIMEOUT,
                    &control::error_body(
                        "request-timeout",
                        format!(
                            "the request body stopped arriving: no bytes for {} ms \
                             ([serve.limits] request_idle_timeout_ms)",
                            idle.as_millis()
                        ),
                    ),
                ));
            }
            Ok(None) => return Ok(collected.freeze()),
            Ok(Some(frame)) => frame,
        };
        match frame {
            Ok(frame) => {
                if let Ok(data) = frame.into_data() {
                    let total = collected.len() + data.len();
                    if total > hold.bytes() && !hold.resize(total) {
                        return Err(bodies_busy(hold, total));
                    }
                    collected.extend_from_slice(&data);
                }
            }
            Err(e) if e.is::<http_body_util::LengthLimitError>() => return Err(too_large()),
            Err(e) => {
                return Err(json_response(
                    StatusCode::BAD_REQUEST,
                    &control::error_body(
                        "bad-request-body",
                        format!("could not read the request body: {e}"),
                    ),
                ));
            }
        }
    }
}

async fn handle_control(sh: &Shared, parts: &http::request::Parts, body: Incoming) -> Resp {
    if let Some(resp) = head_over_limits(parts) {
        return resp;
    }
    let route = control::route(parts.method.as_str(), parts.uri.path());
    // Without a token every local client is trusted: a web page's request is not one.
    if !route.is_public() && sh.settings.control_token.is_none() {
        let header_text = |name| parts.headers.get(name).and_then(|v| v.to_str().ok());
        let host = header_text(header::HOST).or(parts.uri.authority().map(|a| a.as_str()));
        if let Some(why) = control::foreign_caller(host, header_text(header::ORIGIN)) {
            return json_response(
                StatusCode::FORBIDDEN,
                &control::error_body("foreign-caller", why),
            );
        }
    }
    if !route.is_public() {
        let auth = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if !control::authorized(sh.settings.control_token.as_deref(), auth) {
            let mut r = json_response(
                StatusCode::UNAUTHORIZED,
                &control::error_body(
                    "unauthorized",
                    "this control endpoint needs `Authorization: Bearer <token>` with the token wraith serve was started with (--control-token-env / --control-token-file)",
                ),
            );
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return r;
        }
    }
    let engine = &sh.engine;
    match route {
        ControlRoute::Health => json_response(StatusCode::OK, &json!({"status": "ok"})),
        // The service only runs once the listeners are bound, so it is always ready here.
        ControlRoute::Ready => json_response(StatusCode::OK, &json!({"ready": true})),
        ControlRoute::Info => json_response(
            StatusCode::OK,
            &ready::info_document(
                &sh.settings.info,
                engine.route_count(),
                engine.namespace_count(),
            ),
        ),
        ControlRoute::Provision => {
            let (bytes, _hold) = match read_body(sh, parts, body).await {
                Ok(b) => b,
                Err(r) => return r,
            };
            let p = match control::parse_provision(&bytes) {
                Ok(p) => p,
                Err(msg) => {
                    return json_response(
                        StatusCode::BAD_REQUEST,
                        &control::error_body("bad-request", msg),
                    );
                }
            };
            let provision = Provision {
                session: p.session,
                fixture: p.fixture,
                seed: p.seed,
                clock: p
                    .clock
                    .map(|c| c.to_config(sh.settings.default_clock_epoch)),
            };
            match off_worker(|| engine.provision(provision)) {
                Ok(info) => {
                    let status = if info.created {
                        // A new namespace starts with a fresh quota, though requests of its id
                        // answered by a fault or a 429 before it existed spent some.
                        if let Some(sim) = &sh.settings.layers.simulation {
                            sim.clear_session(&info.session);
                        }
                        StatusCode::CREATED
                    } else {
                        StatusCode::OK
                    };
                    json_response(status, &to_value(&info))
                }
                Err(e) => control_error(&e),
            }
        }
        ControlRoute::ListSessions => json_response(
            StatusCode::OK,
            &json!({"sessions": to_value(&off_worker(|| engine.sessions()))}),
        ),
        ControlRoute::ResetSession(id) => {
            let reset = off_worker(|| engine.reset_session(&id));
            clear_counters(sh, &id);
            match reset {
                Ok(info) => json_response(StatusCode::OK, &to_value(&info)),
                Err(e) => control_error(&e),
            }
        }
        ControlRoute::DeleteSession(id) => {
            let deleted = off_worker(|| engine.delete_session(&id));
            // A reused id starts with a fresh rate-limit quota.
            clear_counters(sh, &id);
            match deleted {
                Ok(()) => json_response(StatusCode::OK, &json!({"session": id, "deleted": true})),
                Err(e) => control_error(&e),
            }
        }
        ControlRoute::SessionState(id) => {
            if !sh.settings.debug {
                return json_response(
                    StatusCode::NOT_FOUND,
                    &control::error_body(
                        "not-found",
                        "session state dumps are available only when wraith serve runs with --debug",
                    ),
                );
            }
            match off_worker(|| engine.session_state(&id)) {
                Some(state) => json_response(StatusCode::OK, &state),
                None => json_response(
                    StatusCode::NOT_FOUND,
                    &control::error_body("session-not-found", format!("no session `{id}`")),
                ),
            }
        }
        ControlRoute::ProbeSession(id) => {
            let (bytes, _hold) = match read_body(sh, parts, body).await {
                Ok(b) => b,
                Err(r) => return r,
            };
            match control::parse_probe(&bytes) {
                Ok(request) => probe(sh, parts, &id, request),
                Err(msg) => json_response(
                    StatusCode::BAD_REQUEST,
                    &control::error_body("bad-request", msg),
                ),
            }
        }
        ControlRoute::ResetAll => {
            off_worker(|| engine.reset_all());
            // Counters clear and the fault and latency sequences restart from their seeds.
            if let Some(sim) = &sh.settings.layers.simulation {
                sim.reset();
            }
            json_response(StatusCode::OK, &json!({"reset": "all"}))
        }
        ControlRoute::TraceLog | ControlRoute::TraceGet(_) | ControlRoute::TraceReset => {
            crate::effects::trace_endpoint(
                sh.settings.layers.trace.as_deref(),
                &route,
                parts.uri.query(),
            )
        }
        ControlRoute::MethodNotAllowed { allow } => {
            let mut r = json_response(
                StatusCode::METHOD_NOT_ALLOWED,
                &control::error_body(
                    "method-not-allowed",
                    format!(
                        "{} is not supported on {}; allowed: {allow}",
                        parts.method,
                        parts.uri.path()
                    ),
                ),
            );
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static(allow));
            r
        }
        ControlRoute::NotFound => json_response(
            StatusCode::NOT_FOUND,
            &control::error_body(
                "not-found",
                format!(
                    "no control endpoint at {}; the control plane has /__wraith/health, /__wraith/ready, /__wraith/info, /__wraith/session, /__wraith/session/{{id}}, /__wraith/session/{{id}}/reset, /__wraith/session/{{id}}/state, /__wraith/session/{{id}}/probe, /__wraith/reset and (with --trace) /__wraith/trace/log, /__wraith/trace/{{id}}, /__wraith/trace/reset",
                    parts.uri.path()
                ),
            ),
        ),
        ControlRoute::BadSessionId(why) => json_response(
            StatusCode::BAD_REQUEST,
            &control::error_body("bad-request", why),
        ),
    }
}

/// A request body from which on the engine's work (parsing it, walking it for the session's
/// values) takes long enough to hold up an async worker's other connections.
const LONG_BODY_BYTES: usize = 256 * 1024;

/// Whether answering may take long: a large body, or a twin whose routes run Lua handlers (a
/// handler may use its whole deadline). The rest, most requests, answer in microseconds and
/// stay on the worker, which is cheaper than handing it off.
fn may_run_long(engine: &Engine, body_len: usize) -> bool {
    body_len >= LONG_BODY_BYTES || engine.runs_handlers()
}

/// `POST /__wraith/session/{id}/probe`: what the handler bound to the request's recorded route
/// would answer in session `id` as it is now, written like a served answer plus
/// `X-Wraith-Probe: handler`. The engine runs it on a copy of the namespace
/// ([`Engine::probe_handler`]), so the session keeps no write, counter or clock reading of
/// it; simulation layers, trace and access log do not see a probe (it is control traffic).
/// Nothing to probe is a 404 control answer (`no-route` / `no-handler`) that says whether any
/// recorded route has a handler, so a caller can stop probing altogether.
fn probe(
    sh: &Shared,
    parts: &http::request::Parts,
    session: &str,
    mut request: wraith_engine::Request,
) -> Resp {
    // As if the enveloped request had been sent to this twin: without a host of its own it
    // carries the one the probe was sent to (the engine reads it for origin routing and the
    // self-URL rewrite).
    if !request.headers.iter().any(|(k, _)| k == "host") {
        let host = parts
            .headers
            .get(header::HOST)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .or_else(|| parts.uri.authority().map(|a| a.as_str().to_string()));
        if let Some(h) = host {
            request.headers.push(("host".to_string(), h));
        }
    }
    // As a served request of this session: it carries the session's own `X-Wraith-Session`
    // (a handler may read it), whatever the envelope said; the headerless namespace's none.
    request.headers.retain(|(k, _)| k != SESSION_HEADER);
    if !session.is_empty() {
        request
            .headers
            .push((SESSION_HEADER.to_string(), session.to_string()));
    }
    let engine = &sh.engine;
    let call = || {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            engine.probe_handler(Some(session), &request)
        }))
    };
    // A probe runs a handler: off the async worker, as a served request that runs one.
    let probed = off_worker(call);
    match probed {
        Ok(Err(e)) => control_error(&e),
        Ok(Ok(Some(mut r))) => match engine_response(sh, &mut r, &request.method) {
            Ok(mut resp) => {
                resp.headers_mut().insert(
                    HeaderName::from_static(control::PROBE_HEADER),
                    HeaderValue::from_static("handler"),
                );
                resp
            }
            Err(refusal) => refusal,
        },
        Ok(Ok(None)) => {
            let any = engine.has_recorded_route_handlers();
            let host = request
                .headers
                .iter()
                .find(|(k, _)| k == "host")
                .map(|(_, v)| v.as_str());
            let target = format!("{} {}", request.method, request.path);
            let mut body = match engine.route_template(&request.method, &request.path, host) {
                None => control::error_body(
                    "no-route",
                    format!("{target} matches no route of this twin: nothing to probe"),
                ),
                Some(route) => {
                    let mut b = control::error_body(
                        "no-handler",
                        format!(
                            "{target} matches {route}, but no handler answered the probe: either no Lua handler is bound to that route, it is an authored route (lua/routes.toml, not a recorded one), the fidelity runs no handlers (strict, fuzzy), or the handler failed under [serve.lua] on_error = \"fallback\""
                        ),
                    );
                    b["route"] = Value::String(route.to_string());
                    b
                }
            };
            body["session"] = Value::String(session.to_string());
            body["handlers_on_recorded_routes"] = Value::Bool(any);
            json_response(StatusCode::NOT_FOUND, &body)
        }
        Err(_) => {
            tracing::error!(method = %request.method, path = %request.path, "the engine panicked while probing a handler");
            json_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &control::error_body(
                    "internal-error",
                    "the twin failed while probing the handler for this request; please report it with the request that caused it",
                ),
            )
        }
    }
}

/// Clear session `id`'s rate-limit and throttle counters on a reset or delete of it. A
/// session whose every request a fault or a 429 answered has counters but no namespace (the
/// engine never saw it): its reset or delete answers 404, and still frees its quota.
fn clear_counters(sh: &Shared, id: &str) {
    if let Some(sim) = &sh.settings.layers.simulation {
        sim.clear_session(id);
    }
}

/// Run `f`, which locks namespaces, off the async worker. A namespace stays locked while its
/// session's request runs (a Lua handler may take its whole deadline, or longer inside one
/// long library call): a control call waiting for that lock on a worker would hold up every
/// other connection of the worker, health checks included.
fn off_worker<T>(f: impl FnOnce() -> T) -> T {
    if tokio::runtime::Handle::current().runtime_flavor()
        == tokio::runtime::RuntimeFlavor::MultiThread
    {
        tokio::task::block_in_place(f)
    } else {
        f()
    }
}

fn control_error(e: &wraith_engine::ControlError) -> Resp {
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(status, &e.body())
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or_else(
        |e| json!({"error": "internal-error", "message": format!("cannot render JSON: {e}")}),
    )
}

pub(crate) fn json_response(status: StatusCode, body: &Value) -> Resp {
    let text = serde_json::to_vec(body).unwrap_or_default();
    let len = text.len();
    let mut r = hyper::Response::new(Full::new(Bytes::from(text)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r.headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_failures_are_said_once_a_second_with_the_count_held_back() {
        let mut w = WarnEvery::new(Duration::from_secs(1));
        let t0 = Instant::now();
        assert_eq!(w.due(t0), Some(0));
        for ms in [20, 40, 980] {
            assert_eq!(w.due(t0 + Duration::from_millis(ms)), None);
        }
        assert_eq!(w.due(t0 + Duration::from_millis(1000)), Some(3));
        assert_eq!(w.due(t0 + Duration::from_millis(1020)), None);
        assert_eq!(w.due(t0 + Duration::from_millis(2500)), Some(1));
    }

    #[test]
    fn control_value_cache_reuses_a_twin_constant_only_while_it_is_unchanged() {
        let cache = ControlValues::default();
        let first = cache.value(ControlHeader::TwinAge, ControlValue::Twin("15"));
        let again = cache.value(ControlHeader::TwinAge, ControlValue::Twin("15"));
        let other = cache.value(ControlHeader::TwinAge, ControlValue::Twin("16"));
        assert_eq!(first.ok(), Some(HeaderValue::from_static("15")));
        assert_eq!(again.ok(), Some(HeaderValue::from_static("15")));
        assert_eq!(other.ok(), Some(HeaderValue::from_static("16")));
        assert!(
            cache
                .value(ControlHeader::Route, ControlValue::Response("GET /a\n"))
                .is_err()
        );
    }

    #[test]
    fn control_values_convert_every_kind_verbatim() {
        let cache = ControlValues::default();
        for (h, v, want) in [
            (
                ControlHeader::Provenance,
                ControlValue::Static("recorded"),
                "recorded",
            ),
            (
                ControlHeader::Route,
                ControlValue::Response("GET /v1/x/:param"),
                "GET /v1/x/:param",
            ),
            (
                ControlHeader::RecordedAt,
                ControlValue::Twin("2026-06-01T12:00:05Z"),
                "2026-06-01T12:00:05Z",
            ),
            (
                ControlHeader::ProvenanceCounts,
                ControlValue::Owned("recorded=1 template=0 fixture=0 handler=0".to_string()),
                "recorded=1 template=0 fixture=0 handler=0",
            ),
        ] {
            let got = cache.value(h, v).ok();
            assert_eq!(got.as_ref().and_then(|v| v.to_str().ok()), Some(want));
        }
    }
}
