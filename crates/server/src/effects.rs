//! The simulation layers at the HTTP front door: ask the engine's [`Simulation`] what to do
//! with a request, carry it out (answer now, dispatch, cut the body), hold the answer for the
//! decided delay after the engine released the namespace lock, close the connection for a
//! drop, and hand each answered request to the trace ring and the access log.
//!
//! With every layer off the server never calls in here beyond one `Option` check per request:
//! no route lookup, no clock read, no lock and no allocation.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http_body_util::Full;
use wraith_engine::sim::{Action, Decision, FaultKind, SimRequest, Simulation, apply_partial};
use wraith_engine::{Engine, FieldCounts, FieldSource, Request, Response};

use crate::access_log::AccessLog;
use crate::trace::{TraceEntry, TraceRing};

/// The optional layers of a serve run. `Default` = everything off.
#[derive(Debug, Clone, Default)]
pub struct Layers {
    /// Rate limits, faults, chaos and latency; `None` when all of them are off.
    pub simulation: Option<Arc<Simulation>>,
    /// `--trace`.
    pub trace: Option<Arc<TraceRing>>,
    /// `--access-log compact|json`; `None` = off.
    pub access_log: Option<AccessLog>,
}

impl Layers {
    /// Whether each request must be timed and described afterwards.
    pub(crate) fn observing(&self) -> bool {
        self.trace.is_some() || self.access_log.is_some()
    }
}

/// A simulation decision for one request.
#[derive(Debug, Clone)]
pub(crate) struct Decided {
    pub decision: Decision,
}

/// What the observers need to know about an answered application request; stored in the
/// response's extensions only while observing.
#[derive(Debug, Clone, Default)]
pub(crate) struct AppMeta {
    pub provenance: Option<&'static str>,
    pub route: Option<String>,
    pub fault: Option<FaultKind>,
    pub field_counts: Option<FieldCounts>,
    /// The per-field origin map (`--debug`); `None` once a partial fault cut the body.
    pub field_origins: Option<std::collections::BTreeMap<String, FieldSource>>,
    /// The decided simulated delay.
    pub delay_ms: u64,
}

/// Ask the layers about `req`.
pub(crate) fn decide(
    sim: &Simulation,
    engine: &Engine,
    req: &Request,
    session: Option<&str>,
) -> Decided {
    // As sent: the method token is case-sensitive, so a pattern's `DELETE` (written in any
    // case) selects `DELETE` requests, never a `delete` no route has.
    // A session past the namespace cap is refused (503) before any layer: its requests would
    // otherwise leave rate-limit windows behind, one per refused id, with no bound.
    if !engine.admits(session) {
        return Decided {
            decision: Decision::PASS,
        };
    }
    let method = req.method.as_str();
    let route = engine
        .route_template(method, &req.path, req.header("host"))
        .map(str::to_string);
    let decision = sim.decide(&SimRequest {
        method,
        path: &req.path,
        route: route.as_deref(),
        headers: &req.headers,
        session,
    });
    Decided { decision }
}

/// Produce the answer the decision calls for; the fault kind is set when a layer actually
/// affected the answer (a partial fault only when it cut the body).
pub(crate) fn answer(
    engine: &Engine,
    req: &Request,
    session: Option<&str>,
    decided: &Decided,
) -> (Response, Option<FaultKind>) {
    match &decided.decision.action {
        Action::Respond(r) => {
            let label = engine.route_label(&req.method, &req.path, req.header("host"));
            let mut r = r.clone();
            r.stamp_reset(engine.session_clock_us(session));
            let mut resp = r.into_response(label.as_deref());
            if req.method == "HEAD" {
                resp.body = Bytes::new();
            }
            (resp, decided.decision.fault)
        }
        Action::Dispatch => (engine.handle(session, req), decided.decision.fault),
        Action::Partial { bytes } => {
            let mut resp = engine.handle(session, req);
            let cut = apply_partial(&mut resp, *bytes);
            (resp, cut.then_some(FaultKind::Partial))
        }
    }
}

/// Carry out the rest of a decision on a built response: hold it for the decided delay and
/// mark a dropped connection. Runs after the engine returned, so no namespace lock is held.
pub(crate) async fn finish(
    resp: &mut hyper::Response<Full<Bytes>>,
    decided: &Decided,
    version: http::Version,
) {
    if decided.decision.delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(decided.decision.delay_ms)).await;
    }
    if let Action::Respond(r) = &decided.decision.action
        && r.close_connection
        && version <= http::Version::HTTP_11
    {
        // hyper closes an HTTP/1 connection after a response saying so; HTTP/2 has no
        // connection header (the stream simply ends).
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        // 499 has no reason phrase of its own (hyper would write `499 <none>`); nginx's
        // "Client Closed Request" is the one clients and log tools know.
        if resp.status().as_u16() == 499 {
            resp.extensions_mut()
                .insert(hyper::ext::ReasonPhrase::from_static(
                    b"Client Closed Request",
                ));
        }
    }
}

/// What the trace ring and the access log keep of a request's query: the value of every
/// parameter named like a credential (`access_token`, `api_key`, `key`, `X-Amz-Signature`, by
/// the recorder's own rule, `wraith_model::secret_names`) is `[REDACTED]`. A client may send
/// the real credential in its URL, and a log is no place for it.
fn masked_query(query: &str) -> std::borrow::Cow<'_, str> {
    let secret = |pair: &str| {
        let name = pair.split_once('=').map_or(pair, |(n, _)| n);
        let name = percent_encoding::percent_decode_str(name).decode_utf8_lossy();
        wraith_model::secret_names::is_secret_param_name(&name.replace('+', " "))
    };
    if !query.split('&').any(|p| p.contains('=') && secret(p)) {
        return std::borrow::Cow::Borrowed(query);
    }
    let masked: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if secret(pair) => format!("{name}=[REDACTED]"),
            _ => pair.to_string(),
        })
        .collect();
    std::borrow::Cow::Owned(masked.join("&"))
}

/// Start of an observed request.
#[derive(Debug)]
pub(crate) struct Observation {
    start: Instant,
    timestamp: String,
    method: String,
    path: String,
    /// `None` for the headerless namespace (no header or an empty value).
    session: Option<String>,
}

impl Observation {
    pub(crate) fn begin(parts: &http::request::Parts) -> Observation {
        let session = parts
            .headers
            .get(crate::service::SESSION_HEADER)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .filter(|s| !s.is_empty());
        let path = match parts.uri.query() {
            Some(q) => format!("{}?{}", parts.uri.path(), masked_query(q)),
            None => parts.uri.path().to_string(),
        };
        Observation {
            start: Instant::now(),
            timestamp: jiff::Timestamp::now().to_string(),
            method: parts.method.as_str().to_string(),
            path,
            session,
        }
    }

    /// Record the answered request in the trace ring and the access log.
    pub(crate) fn end(self, layers: &Layers, status: u16, mut meta: Option<AppMeta>, debug: bool) {
        let origins = if debug {
            meta.as_mut().and_then(|m| m.field_origins.take())
        } else {
            None
        };
        let meta = meta.as_ref();
        let entry = TraceEntry {
            id: 0,
            method: self.method,
            path: self.path,
            status,
            duration_us: u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX),
            timestamp: self.timestamp,
            session: self.session,
            provenance: meta
                .and_then(|m| m.provenance)
                .unwrap_or("miss")
                .to_string(),
            route: meta.and_then(|m| m.route.clone()),
            fault: meta.and_then(|m| m.fault).map(|f| f.as_str().to_string()),
            delay_ms: meta.map_or(0, |m| m.delay_ms),
            field_counts: if debug {
                meta.and_then(|m| m.field_counts)
            } else {
                None
            },
            origins,
        };
        if let Some(log) = &layers.access_log {
            log.write(&entry);
        }
        if let Some(ring) = &layers.trace {
            ring.push(entry);
        }
    }
}

/// `GET /__wraith/trace/log?session=&last=`, `GET /__wraith/trace/{id}` and
/// `POST /__wraith/trace/reset`. Without `--trace` they answer 404 saying how to enable it.
pub(crate) fn trace_endpoint(
    ring: Option<&TraceRing>,
    route: &crate::control::ControlRoute,
    query: Option<&str>,
) -> hyper::Response<Full<Bytes>> {
    use crate::control::{ControlRoute, error_body};
    use crate::service::json_response;
    use http::StatusCode;
    use serde_json::json;

    let Some(ring) = ring else {
        return json_response(
            StatusCode::NOT_FOUND,
            &error_body(
                "trace-disabled",
                "request tracing is off; start wraith serve with --trace (and optionally --trace-capacity N)",
            ),
        );
    };
    match route {
        ControlRoute::TraceLog => {
            let mut session = None;
            let mut last = None;
            for (k, v) in query_pairs(query.unwrap_or("")) {
                match k.as_str() {
                    "session" => session = Some(v),
                    "last" => match v.parse::<usize>() {
                        Ok(n) => last = Some(n),
                        Err(_) => {
                            return json_response(
                                StatusCode::BAD_REQUEST,
                                &error_body(
                                    "bad-request",
                                    format!("`last` must be a non-negative integer, found `{v}`"),
                                ),
                            );
                        }
                    },
                    _ => {}
                }
            }
            let entries = ring.log(session.as_deref(), last);
            json_response(
                StatusCode::OK,
                &json!({"capacity": ring.capacity(), "count": entries.len(), "entries": entries}),
            )
        }
        ControlRoute::TraceGet(Some(id)) => match ring.get(*id) {
            Some(e) => json_response(
                StatusCode::OK,
                &serde_json::to_value(&e).unwrap_or_else(|_| json!({})),
            ),
            None => json_response(
                StatusCode::NOT_FOUND,
                &error_body(
                    "trace-not-found",
                    format!(
                        "no trace entry {id} (it may have been evicted; see GET /__wraith/trace/log)"
                    ),
                ),
            ),
        },
        ControlRoute::TraceGet(None) => json_response(
            StatusCode::BAD_REQUEST,
            &error_body(
                "bad-request",
                "a trace id is a number, as listed by GET /__wraith/trace/log",
            ),
        ),
        _ => {
            let cleared = ring.clear();
            json_response(
                StatusCode::OK,
                &json!({"reset": "trace", "cleared": cleared}),
            )
        }
    }
}

/// `application/x-www-form-urlencoded` pairs of a query string.
fn query_pairs(q: &str) -> Vec<(String, String)> {
    let decode = |s: &str| {
        let s = s.replace('+', " ");
        percent_encoding::percent_decode_str(&s)
            .decode_utf8_lossy()
            .into_owned()
    };
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (decode(k), decode(v)),
            None => (decode(p), String::new()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn credentials_in_a_query_are_masked_for_the_log_and_the_rest_kept() {
        assert_eq!(masked_query("page=2&sort=name"), "page=2&sort=name");
        assert_eq!(
            masked_query("access_token=LIVE&page=2&api%5Fkey=K&user%5Bpassword%5D=P&key=G&flag"),
            "access_token=[REDACTED]&page=2&api%5Fkey=[REDACTED]&user%5Bpassword%5D=[REDACTED]\
             &key=[REDACTED]&flag"
        );
        assert_eq!(
            masked_query("X-Amz-Signature=abc&X-Amz-Date=1&token_type=bearer"),
            "X-Amz-Signature=[REDACTED]&X-Amz-Date=1&token_type=bearer"
        );
    }
}
