//! The control plane (`/__wraith/*`): which endpoint a request names, who may call it, and the
//! JSON it answers with. Endpoint semantics live in the engine; this module only routes, checks
//! the bearer token and turns engine answers into HTTP status + JSON.

use percent_encoding::percent_decode_str;
use serde::Deserialize;
use serde_json::{Value, json};

/// Path prefix of every control endpoint.
pub const CONTROL_PREFIX: &str = "/__wraith";

/// A control-plane endpoint, parsed from method + path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlRoute {
    Health,
    Ready,
    Info,
    /// `POST /__wraith/session`
    Provision,
    /// `GET /__wraith/session`
    ListSessions,
    /// `POST /__wraith/session/{id}/reset`
    ResetSession(String),
    /// `DELETE /__wraith/session/{id}`
    DeleteSession(String),
    /// `GET /__wraith/session/{id}/state` (debug only)
    SessionState(String),
    /// `POST /__wraith/session/{id}/probe`: run the handler bound to the enveloped request's
    /// recorded route on a copy of the session (see [`parse_probe`]).
    ProbeSession(String),
    /// `POST /__wraith/reset`
    ResetAll,
    /// `GET /__wraith/trace/log` (the query carries `session` and `last`)
    TraceLog,
    /// `GET /__wraith/trace/{id}`; `None` when the id is not a number
    TraceGet(Option<u64>),
    /// `POST /__wraith/trace/reset`
    TraceReset,
    /// A known path with a method it does not take; `allow` is the `Allow` header value.
    MethodNotAllowed {
        allow: &'static str,
    },
    /// No such control endpoint.
    NotFound,
    /// A session id in the path no `X-Wraith-Session` header could carry (why, in words).
    BadSessionId(String),
}

impl ControlRoute {
    /// Health, ready and info stay open even when a control token is configured.
    pub fn is_public(&self) -> bool {
        matches!(
            self,
            ControlRoute::Health | ControlRoute::Ready | ControlRoute::Info
        )
    }
}

/// True when `path` belongs to the control plane (`/__wraith` or `/__wraith/...`).
pub fn is_control_path(path: &str) -> bool {
    match path.strip_prefix(CONTROL_PREFIX) {
        Some(rest) => rest.is_empty() || rest.starts_with('/'),
        None => false,
    }
}

/// Route a control-plane request. Session ids in the path are percent-decoded: they are opaque
/// keys, so `worker%203` names the session `worker 3` and `Worker-3` stays distinct from
/// `worker-3`.
pub fn route(method: &str, path: &str) -> ControlRoute {
    let rest = path
        .strip_prefix(CONTROL_PREFIX)
        .unwrap_or("")
        .trim_start_matches('/');
    // One trailing slash is tolerated (`/__wraith/session/`), empty inner segments are not.
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let segs: Vec<&str> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split('/').collect()
    };
    let only = |want: &str, allow: &'static str, hit: ControlRoute| {
        if method == want || (want == "GET" && method == "HEAD") {
            hit
        } else {
            ControlRoute::MethodNotAllowed { allow }
        }
    };
    match segs.as_slice() {
        ["health"] => only("GET", "GET, HEAD", ControlRoute::Health),
        ["ready"] => only("GET", "GET, HEAD", ControlRoute::Ready),
        ["info"] => only("GET", "GET, HEAD", ControlRoute::Info),
        ["reset"] => only("POST", "POST", ControlRoute::ResetAll),
        ["trace", "log"] => only("GET", "GET, HEAD", ControlRoute::TraceLog),
        ["trace", "reset"] => only("POST", "POST", ControlRoute::TraceReset),
        ["trace", id] => only("GET", "GET, HEAD", ControlRoute::TraceGet(id.parse().ok())),
        ["session"] => match method {
            "POST" => ControlRoute::Provision,
            "GET" | "HEAD" => ControlRoute::ListSessions,
            _ => ControlRoute::MethodNotAllowed {
                allow: "GET, HEAD, POST",
            },
        },
        ["session", id] => match decode_id(id) {
            Err(why) => ControlRoute::BadSessionId(why),
            Ok(id) => only("DELETE", "DELETE", ControlRoute::DeleteSession(id)),
        },
        ["session", id, "reset"] => match decode_id(id) {
            Err(why) => ControlRoute::BadSessionId(why),
            Ok(id) => only("POST", "POST", ControlRoute::ResetSession(id)),
        },
        ["session", id, "state"] => match decode_id(id) {
            Err(why) => ControlRoute::BadSessionId(why),
            Ok(id) => only("GET", "GET, HEAD", ControlRoute::SessionState(id)),
        },
        ["session", id, "probe"] => match decode_id(id) {
            Err(why) => ControlRoute::BadSessionId(why),
            Ok(id) => only("POST", "POST", ControlRoute::ProbeSession(id)),
        },
        _ => ControlRoute::NotFound,
    }
}

/// The session id a path segment names, or why it names none: a session is named by its
/// `X-Wraith-Session` value, so an id no such header can carry names no session (and a probe
/// must not create one).
fn decode_id(raw: &str) -> Result<String, String> {
    if raw.is_empty() {
        return Err("the session id in the path is empty".to_string());
    }
    let id = percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| "the session id in the path is not valid percent-encoded UTF-8".to_string())?
        .into_owned();
    match session_id_problem(&id) {
        Some(why) => Err(format!("the session id in the path {why}")),
        None => Ok(id),
    }
}

/// Why `id` cannot name a session, completing "the session id …": over
/// [`wraith_engine::MAX_SESSION_ID_BYTES`], or not sendable as an `X-Wraith-Session` value
/// (HTTP strips a header value's surrounding spaces and forbids control characters in it).
pub fn session_id_problem(id: &str) -> Option<String> {
    if id.len() > wraith_engine::MAX_SESSION_ID_BYTES {
        return Some(format!(
            "is {} bytes long; a session id is at most {} bytes",
            id.len(),
            wraith_engine::MAX_SESSION_ID_BYTES
        ));
    }
    if id.trim_matches([' ', '\t']) != id || http::HeaderValue::from_bytes(id.as_bytes()).is_err() {
        return Some(format!(
            "{id:?} cannot be sent as an X-Wraith-Session header value (no control characters, \
             no leading or trailing spaces)"
        ));
    }
    None
}

/// Whether the request may use a protected control endpoint. With no token configured (a
/// loopback bind) everything is allowed; with one, the request must carry
/// `Authorization: Bearer <token>` exactly.
pub fn authorized(token: Option<&str>, authorization: Option<&str>) -> bool {
    let Some(token) = token else {
        return true;
    };
    let Some(value) = authorization else {
        return false;
    };
    let mut parts = value.trim().splitn(2, ' ');
    let scheme = parts.next().unwrap_or("");
    let presented = parts.next().unwrap_or("").trim();
    scheme.eq_ignore_ascii_case("bearer")
        && constant_time_eq(presented.as_bytes(), token.as_bytes())
}

/// Why a protected control request without a configured token is refused as coming from
/// outside this machine, or `None`. Without a token the control plane trusts every local
/// client, which a web page the user opens is not: its browser can send a request to the
/// twin's loopback port (an `Origin` header names the page), and a page whose name a DNS
/// rebinding points at 127.0.0.1 can read the answers too (its `Host` names the page's host).
/// Local clients name this machine in both, or send no `Origin` at all.
pub fn foreign_caller(host: Option<&str>, origin: Option<&str>) -> Option<String> {
    if let Some(origin) = origin
        && !origin_is_local(origin)
    {
        return Some(format!(
            "the request comes from a web page of `{origin}` (its Origin header): without a \
             control token the control plane answers only clients on this machine; start \
             wraith serve with a control token (--control-token-env / --control-token-file) \
             to let others in"
        ));
    }
    if let Some(host) = host
        && !is_local_host(host_name(host))
    {
        return Some(format!(
            "the Host header names `{host}`, not this machine: without a control token the \
             control plane answers only requests addressed to localhost, 127.0.0.1 or [::1] \
             (a page whose name points at this machine must not reach it); address the twin \
             by one of those, or start wraith serve with a control token \
             (--control-token-env / --control-token-file)"
        ));
    }
    None
}

/// An `Origin` of this machine: `http(s)://` and a local host; `null` (a sandboxed or file
/// page) is no local origin.
fn origin_is_local(origin: &str) -> bool {
    let Some((_, rest)) = origin.trim().split_once("://") else {
        return false;
    };
    is_local_host(host_name(rest.split('/').next().unwrap_or("")))
}

/// The host of a `host[:port]` authority (an IPv6 address without its brackets).
fn host_name(authority: &str) -> &str {
    let authority = authority.trim();
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    authority.split(':').next().unwrap_or("")
}

/// `localhost` (and its subdomains, RFC 6761) or a loopback address, an IPv4-mapped one
/// (`::ffff:127.0.0.1`) included, as the bind's own loopback test reads it.
fn is_local_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

/// Compare without an early exit on the first differing byte, so response timing does not
/// reveal how much of a guessed token was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    diff == 0
}

/// The body of `POST /__wraith/session`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvisionBody {
    pub session: String,
    #[serde(default)]
    pub fixture: Option<String>,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default, deserialize_with = "clock_object")]
    pub clock: Option<ClockBody>,
}

/// `clock` as an object only (serde would read a struct from an array by position).
fn clock_object<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<ClockBody>, D::Error> {
    use serde::de::Error;
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v @ serde_json::Value::Object(_)) => ClockBody::deserialize(v)
            .map(Some)
            .map_err(D::Error::custom),
        Some(_) => Err(D::Error::custom(
            "must be an object, e.g. {\"mode\": \"fixed\", \"base_epoch\": 1700000000}",
        )),
    }
}

/// `clock` in a provision body: `{mode, base_epoch | base_epoch_secs}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockBody {
    pub mode: wraith_engine::ClockMode,
    #[serde(default)]
    pub base_epoch: Option<i64>,
    #[serde(default)]
    pub base_epoch_secs: Option<i64>,
}

impl ClockBody {
    /// The clock config it names; a missing epoch takes `default_epoch` (the serve-wide one).
    pub fn to_config(&self, default_epoch: i64) -> wraith_engine::ClockConfig {
        wraith_engine::ClockConfig {
            mode: self.mode,
            base_epoch: self
                .base_epoch
                .or(self.base_epoch_secs)
                .unwrap_or(default_epoch),
        }
    }
}

/// Parse a provision body, or say what is wrong with it (the 400 message).
pub fn parse_provision(body: &[u8]) -> Result<ProvisionBody, String> {
    // serde reads a struct from a JSON array too, by position: `["s1", null, 5]` would provision
    // a session in a form nobody documents. The body and its clock are objects.
    let first = |b: &[u8]| b.iter().copied().find(|c| !c.is_ascii_whitespace());
    if first(body).is_some_and(|c| c == b'[') {
        return Err(
            "invalid session provisioning body: must be a JSON object, e.g. {\"session\": \"<id>\"}"
                .to_string(),
        );
    }
    let de = &mut serde_json::Deserializer::from_slice(body);
    let parsed: ProvisionBody = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            format!(
                "invalid session provisioning body: {}; expected {{\"session\": \"<id>\", \"fixture\"?: \"<set>\", \"seed\"?: <u64>, \"clock\"?: {{\"mode\": \"real|deterministic|fixed\", \"base_epoch\"?: <secs>}}}}",
                e.inner()
            )
        } else {
            format!(
                "invalid session provisioning body at {path}: {}",
                e.inner()
            )
        }
    })?;
    if parsed.session.is_empty() {
        return Err("invalid session provisioning body: `session` must not be empty".to_string());
    }
    // A set is a folder of state/fixtures/ (a composite's `<overlay>:<set>` too), and folder
    // names stop at 255 bytes: a longer name names no set, and is not echoed back whole.
    if let Some(f) = &parsed.fixture
        && f.len() > 255
    {
        return Err(format!(
            "invalid session provisioning body: `fixture` is {} bytes long; a fixture set is a \
             folder of state/fixtures/, whose name is at most 255 bytes",
            f.len()
        ));
    }
    // A session no request can name is of no use.
    if let Some(why) = session_id_problem(&parsed.session) {
        return Err(format!(
            "invalid session provisioning body: `session` {why}"
        ));
    }
    if let Some(c) = &parsed.clock
        && c.base_epoch.is_some()
        && c.base_epoch_secs.is_some()
        && c.base_epoch != c.base_epoch_secs
    {
        return Err(
            "invalid session provisioning body: give `clock.base_epoch` or `clock.base_epoch_secs`, not two different values"
                .to_string(),
        );
    }
    if let Some(c) = &parsed.clock {
        // The `--clock-epoch` flag and `[serve.clock]` refuse an epoch outside the clock range
        // (1970 to 9999); so does a provisioned clock.
        for (key, epoch) in [
            ("base_epoch", c.base_epoch),
            ("base_epoch_secs", c.base_epoch_secs),
        ] {
            if let Some(secs) = epoch {
                wraith_twin::validate_clock_epoch(i128::from(secs)).map_err(|why| {
                    format!("invalid session provisioning body: `clock.{key}` {secs}: {why}")
                })?;
            }
        }
    }
    Ok(parsed)
}

/// Response header that marks a probe answer as the handler's own: present (value `handler`)
/// only when `POST /__wraith/session/{id}/probe` ran a handler, so a caller can tell the
/// handler's 404 from the control plane's "nothing to probe" 404 and from a twin that predates
/// the endpoint.
pub const PROBE_HEADER: &str = "x-wraith-probe";

/// The body of `POST /__wraith/session/{id}/probe`: the application request to probe. Bodies
/// may be binary, so they travel base64-encoded (`body_base64`); `body` is a convenience for
/// UTF-8 text. Headers are a list of `[name, value]` pairs so repeated names keep their order.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeEnvelope {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The request target as the application would see it: path, optionally `?query`.
    pub path: String,
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub body_base64: Option<String>,
}

const PROBE_SHAPE: &str = "expected {\"method\": \"GET\", \"path\": \"/v1/x?q=1\", \"headers\"?: [[\"name\", \"value\"], ...], \"body\"?: \"<utf-8 text>\" | \"body_base64\"?: \"<base64>\"}";

/// Parse a probe envelope into the engine request it describes, or say what is wrong with it
/// (the 400 message). Header names are lowercased, as the server does for application traffic.
pub fn parse_probe(body: &[u8]) -> Result<wraith_engine::Request, String> {
    use base64::Engine as _;
    let de = &mut serde_json::Deserializer::from_slice(body);
    let env: ProbeEnvelope = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            format!("invalid probe body: {}; {PROBE_SHAPE}", e.inner())
        } else {
            format!("invalid probe body at {path}: {}; {PROBE_SHAPE}", e.inner())
        }
    })?;
    if env.method.is_empty() || !env.method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(format!(
            "invalid probe body: `method` must be an HTTP method such as GET, not {:?}",
            env.method
        ));
    }
    if !env.path.starts_with('/') {
        return Err(format!(
            "invalid probe body: `path` must start with `/` (the request target, e.g. /v1/customers/cus_1?expand=x), not {:?}",
            env.path
        ));
    }
    let body = match (env.body, env.body_base64) {
        (Some(_), Some(_)) => {
            return Err(
                "invalid probe body: give `body` (text) or `body_base64` (bytes), not both"
                    .to_string(),
            );
        }
        (Some(text), None) => bytes::Bytes::from(text.into_bytes()),
        (None, Some(b64)) => base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .map(bytes::Bytes::from)
            .map_err(|e| format!("invalid probe body: `body_base64` is not base64: {e}"))?,
        (None, None) => bytes::Bytes::new(),
    };
    // A header no real request could carry would let a probe show an answer no served request
    // gets.
    for (name, value) in &env.headers {
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(format!(
                "invalid probe body: header name {name:?} is not one a request can carry \
                 (letters, digits and !#$%&'*+-.^_`|~ only: no spaces, colons or control \
                 characters)"
            ));
        }
        if http::HeaderValue::from_bytes(value.as_bytes()).is_err() {
            return Err(format!(
                "invalid probe body: the value {value:?} of header `{name}` is not one a request \
                 can carry (no line breaks or other control characters)"
            ));
        }
    }
    let (path, query) = match env.path.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (env.path, String::new()),
    };
    Ok(wraith_engine::Request {
        method: env.method.to_ascii_uppercase(),
        path,
        query,
        headers: env
            .headers
            .into_iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v))
            .collect(),
        body,
    })
}

/// A JSON error body in the control plane's `{"error": code, "message": ...}` shape.
pub fn error_body(code: &str, message: impl Into<String>) -> Value {
    json!({"error": code, "message": message.into()})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every control route but health, ready and info asks for the token. The match has no
    /// wildcard, so a new route does not compile here until someone decides which it is.
    #[test]
    fn only_health_ready_and_info_are_open_without_the_token() {
        let routes = [
            ControlRoute::Health,
            ControlRoute::Ready,
            ControlRoute::Info,
            ControlRoute::Provision,
            ControlRoute::ListSessions,
            ControlRoute::ResetSession("s".into()),
            ControlRoute::DeleteSession("s".into()),
            ControlRoute::SessionState("s".into()),
            ControlRoute::ProbeSession("s".into()),
            ControlRoute::ResetAll,
            ControlRoute::TraceLog,
            ControlRoute::TraceGet(Some(1)),
            ControlRoute::TraceGet(None),
            ControlRoute::TraceReset,
            ControlRoute::MethodNotAllowed { allow: "GET" },
            ControlRoute::NotFound,
            ControlRoute::BadSessionId("why".into()),
        ];
        for route in routes {
            let open = match &route {
                ControlRoute::Health | ControlRoute::Ready | ControlRoute::Info => true,
                ControlRoute::Provision
                | ControlRoute::ListSessions
                | ControlRoute::ResetSession(_)
                | ControlRoute::DeleteSession(_)
                | ControlRoute::SessionState(_)
                | ControlRoute::ProbeSession(_)
                | ControlRoute::ResetAll
                | ControlRoute::TraceLog
                | ControlRoute::TraceGet(_)
                | ControlRoute::TraceReset
                | ControlRoute::MethodNotAllowed { .. }
                | ControlRoute::NotFound
                | ControlRoute::BadSessionId(_) => false,
            };
            assert_eq!(route.is_public(), open, "{route:?}");
        }
    }

    #[test]
    fn local_clients_pass_and_pages_of_other_sites_are_named() {
        for host in [
            "127.0.0.1:8081",
            "localhost:8081",
            "[::1]:8081",
            "LOCALHOST",
            "a.localhost",
        ] {
            assert_eq!(foreign_caller(Some(host), None), None, "{host}");
        }
        for origin in [
            "http://localhost:3000",
            "https://127.0.0.1",
            "http://[::1]:9",
        ] {
            assert_eq!(
                foreign_caller(Some("127.0.0.1:1"), Some(origin)),
                None,
                "{origin}"
            );
        }
        assert_eq!(foreign_caller(None, None), None);
        let page = foreign_caller(Some("127.0.0.1:1"), Some("https://evil.example")).unwrap();
        assert!(page.contains("`https://evil.example`"), "{page}");
        assert!(foreign_caller(Some("127.0.0.1:1"), Some("null")).is_some());
        let rebound = foreign_caller(Some("evil.example:80"), None).unwrap();
        assert!(rebound.contains("`evil.example:80`"), "{rebound}");
        // A name that merely starts like a loopback address is no loopback address.
        assert!(foreign_caller(Some("127.0.0.1.evil.example"), None).is_some());
        assert!(foreign_caller(Some("localhost.evil.example"), None).is_some());
    }

    #[test]
    fn control_paths_are_the_prefix_and_below_only() {
        assert!(is_control_path("/__wraith"));
        assert!(is_control_path("/__wraith/health"));
        assert!(!is_control_path("/__wraithx"));
        assert!(!is_control_path("/v1/__wraith/health"));
    }

    #[test]
    fn endpoints_route_by_method_and_path() {
        assert_eq!(route("GET", "/__wraith/health"), ControlRoute::Health);
        assert_eq!(route("GET", "/__wraith/ready"), ControlRoute::Ready);
        assert_eq!(route("GET", "/__wraith/info"), ControlRoute::Info);
        assert_eq!(route("POST", "/__wraith/reset"), ControlRoute::ResetAll);
        assert_eq!(route("GET", "/__wraith/trace/log"), ControlRoute::TraceLog);
        assert_eq!(
            route("GET", "/__wraith/trace/12"),
            ControlRoute::TraceGet(Some(12))
        );
        assert_eq!(
            route("GET", "/__wraith/trace/x"),
            ControlRoute::TraceGet(None)
        );
        assert_eq!(
            route("POST", "/__wraith/trace/reset"),
            ControlRoute::TraceReset
        );
        assert_eq!(route("POST", "/__wraith/session"), ControlRoute::Provision);
        assert_eq!(
            route("GET", "/__wraith/session"),
            ControlRoute::ListSessions
        );
        assert_eq!(
            route("POST", "/__wraith/session/w-3/reset"),
            ControlRoute::ResetSession("w-3".into())
        );
        assert_eq!(
            route("DELETE", "/__wraith/session/w-3"),
            ControlRoute::DeleteSession("w-3".into())
        );
        assert_eq!(
            route("GET", "/__wraith/session/w-3/state"),
            ControlRoute::SessionState("w-3".into())
        );
        assert_eq!(
            route("POST", "/__wraith/session/w-3/probe"),
            ControlRoute::ProbeSession("w-3".into())
        );
        assert_eq!(
            route("GET", "/__wraith/session/w-3/probe"),
            ControlRoute::MethodNotAllowed { allow: "POST" }
        );
        assert_eq!(route("GET", "/__wraith/nope"), ControlRoute::NotFound);
        assert_eq!(route("GET", "/__wraith"), ControlRoute::NotFound);
        assert_eq!(
            route("GET", "/__wraith/reset"),
            ControlRoute::MethodNotAllowed { allow: "POST" }
        );
    }

    #[test]
    fn session_ids_in_paths_are_percent_decoded_and_case_kept() {
        assert_eq!(
            route("DELETE", "/__wraith/session/worker%203"),
            ControlRoute::DeleteSession("worker 3".into())
        );
        assert_eq!(
            route("DELETE", "/__wraith/session/Worker-3"),
            ControlRoute::DeleteSession("Worker-3".into())
        );
        assert_eq!(
            route("POST", "/__wraith/session/a%2Fb/reset"),
            ControlRoute::ResetSession("a/b".into())
        );
        assert_eq!(
            route("DELETE", "/__wraith/session/%FF"),
            ControlRoute::BadSessionId(
                "the session id in the path is not valid percent-encoded UTF-8".into()
            )
        );
    }

    #[test]
    fn bearer_token_must_match_exactly_when_configured() {
        assert!(authorized(None, None));
        assert!(authorized(Some("s3cret"), Some("Bearer s3cret")));
        assert!(authorized(Some("s3cret"), Some("bearer s3cret")));
        assert!(!authorized(Some("s3cret"), None));
        assert!(!authorized(Some("s3cret"), Some("Bearer s3cre")));
        assert!(!authorized(Some("s3cret"), Some("Bearer s3cretx")));
        assert!(!authorized(Some("s3cret"), Some("Basic s3cret")));
        assert!(!authorized(Some("s3cret"), Some("s3cret")));
    }

    #[test]
    fn session_ids_no_header_could_carry_are_refused_in_every_session_path() {
        for (path, why) in [
            (
                "/__wraith/session/a%0Ab/probe",
                "cannot be sent as an X-Wraith-Session",
            ),
            (
                "/__wraith/session/%20a/reset",
                "cannot be sent as an X-Wraith-Session",
            ),
            (
                "/__wraith/session/a%00/state",
                "cannot be sent as an X-Wraith-Session",
            ),
        ] {
            match route("POST", path) {
                ControlRoute::BadSessionId(m) => assert!(m.contains(why), "{path}: {m}"),
                other => panic!("{path}: {other:?}"),
            }
        }
        let long = format!("/__wraith/session/{}/probe", "z".repeat(1025));
        match route("POST", &long) {
            ControlRoute::BadSessionId(m) => assert!(m.contains("at most 1024 bytes"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            route(
                "POST",
                &format!("/__wraith/session/{}/probe", "z".repeat(1024))
            ),
            ControlRoute::ProbeSession("z".repeat(1024))
        );
    }

    #[test]
    fn provision_body_accepts_both_epoch_spellings() {
        let p = parse_provision(
            br#"{"session":"a","fixture":"f","seed":7,"clock":{"mode":"fixed","base_epoch_secs":5}}"#,
        )
        .unwrap();
        assert_eq!(p.session, "a");
        assert_eq!(p.seed, Some(7));
        let c = p.clock.unwrap().to_config(1);
        assert_eq!(c.base_epoch, 5);
        let p = parse_provision(br#"{"session":"a","clock":{"mode":"deterministic"}}"#).unwrap();
        assert_eq!(p.clock.unwrap().to_config(9).base_epoch, 9);
    }

    #[test]
    fn provision_body_errors_say_where() {
        let e = parse_provision(br#"{"session":"a","seed":"x"}"#).unwrap_err();
        assert!(e.contains("seed"), "{e}");
        let e = parse_provision(br#"{"sesion":"a"}"#).unwrap_err();
        assert!(e.contains("sesion"), "{e}");
        let e = parse_provision(br#"{"session":""}"#).unwrap_err();
        assert!(e.contains("empty"), "{e}");
        for unreachable in [
            r#"" ""#,
            r#"" a""#,
            r#""a\t""#,
            r#""a\u0000b""#,
            r#""a\nb""#,
        ] {
            let body = format!(r#"{{"session":{unreachable}}}"#);
            let e = parse_provision(body.as_bytes()).unwrap_err();
            assert!(e.contains("cannot be sent as an X-Wraith-Session"), "{e}");
        }
        assert!(parse_provision(r#"{"session":"café worker 3"}"#.as_bytes()).is_ok());
        let e = parse_provision(b"not json").unwrap_err();
        assert!(e.contains("expected"), "{e}");
    }

    #[test]
    fn probe_envelope_carries_method_target_headers_and_binary_body() {
        let r = parse_probe(
            br#"{"method":"post","path":"/v1/x/1?a=b&c","headers":[["Content-Type","application/octet-stream"],["x-a","1"],["X-A","2"]],"body_base64":"AP8Q"}"#,
        )
        .unwrap();
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/v1/x/1");
        assert_eq!(r.query, "a=b&c");
        assert_eq!(
            r.headers,
            vec![
                (
                    "content-type".to_string(),
                    "application/octet-stream".to_string()
                ),
                ("x-a".to_string(), "1".to_string()),
                ("x-a".to_string(), "2".to_string()),
            ]
        );
        assert_eq!(&r.body[..], &[0u8, 0xff, 0x10]);
        let r = parse_probe(br#"{"method":"GET","path":"/v1/x","body":"hi"}"#).unwrap();
        assert_eq!(r.query, "");
        assert_eq!(&r.body[..], b"hi");
    }

    #[test]
    fn probe_envelope_errors_say_what_is_wrong() {
        let e = parse_probe(br#"{"method":"GET"}"#).unwrap_err();
        assert!(e.contains("path") && e.contains("expected"), "{e}");
        let e = parse_probe(br#"{"method":"GET","path":"v1/x"}"#).unwrap_err();
        assert!(e.contains("start with `/`"), "{e}");
        let e = parse_probe(br#"{"method":"G T","path":"/x"}"#).unwrap_err();
        assert!(e.contains("method"), "{e}");
        let e = parse_probe(br#"{"method":"GET","path":"/x","body":"a","body_base64":"YQ=="}"#)
            .unwrap_err();
        assert!(e.contains("not both"), "{e}");
        let e = parse_probe(br#"{"method":"GET","path":"/x","body_base64":"!!"}"#).unwrap_err();
        assert!(e.contains("base64"), "{e}");
        let e = parse_probe(br#"{"method":"GET","path":"/x","extra":1}"#).unwrap_err();
        assert!(e.contains("extra"), "{e}");
    }

    #[test]
    fn probe_envelope_refuses_headers_no_request_can_carry() {
        for (headers, named) in [
            (r#"[["bad name","1"]]"#, "\"bad name\""),
            (r#"[["","1"]]"#, "\"\""),
            (r#"[["x:y","1"]]"#, "\"x:y\""),
            (r#"[["x-a","a\nb"]]"#, "`x-a`"),
            (r#"[["x-a","a\rb"]]"#, "`x-a`"),
            (r#"[["x-a","a\u0000b"]]"#, "`x-a`"),
        ] {
            let body = format!(r#"{{"method":"GET","path":"/x","headers":{headers}}}"#);
            let e = parse_probe(body.as_bytes()).unwrap_err();
            assert!(
                e.contains(named) && e.contains("not one a request can carry"),
                "{headers}: {e}"
            );
        }
        // Tabs, spaces and text beyond ASCII are values a request can carry.
        let r = parse_probe(
            r#"{"method":"GET","path":"/x","headers":[["x-a","a\tb c"],["x-b","café"]]}"#
                .as_bytes(),
        )
        .unwrap();
        assert_eq!(r.headers.len(), 2);
    }
}
