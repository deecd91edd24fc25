//! The simulation layers of `wraith serve`: rate limits, faults (a profile or `--chaos-seed`),
//! and latency. Pure decision logic: given a request (and the matched route template) a
//! [`Simulation`] returns a [`Decision`] as data — answer now with this response, dispatch and
//! then cut the body, hold the answer this many milliseconds. It never sleeps, reads no clock
//! but the one handed in, and draws randomness only from its own seeded ChaCha8 generators, so
//! the same seeds and the same request sequence give the same decisions.
//!
//! Order: rate limit → fault → latency. A fault `delay` replaces the simulated latency rather
//! than adding to it. The caller (the server) sleeps and writes; see `wraith-server`'s
//! `effects` module.
//!
//! Not here: sockets, sleeping, the trace ring and the access log.

// Tests may unwrap: a panic there is a test failure with a clear location.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod chaos;
mod latency;
mod pattern;
mod profile;
mod ratelimit;

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use wraith_model::{LatencyProfile, Model, RecordedBody};

pub use chaos::chaos_profile;
pub use latency::{LatencyMode, LatencyPolicy};
pub use pattern::RoutePattern;
pub use profile::{FaultKind, FaultProfile, FaultRule, FaultType};
pub use ratelimit::{Limit, RateAlgorithm, RateOverride, WindowVerdict};

use crate::api::{Provenance, Response};

/// Why a simulation setting was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The fault profile file is malformed.
    #[error("{file}:{line}: invalid fault profile: {reason}")]
    Profile {
        file: String,
        line: usize,
        reason: String,
    },
    /// The latency config file is malformed.
    #[error("{file}:{line}: invalid latency config: {reason}")]
    LatencyConfig {
        file: String,
        line: usize,
        reason: String,
    },
    /// A `--rate-limit` / `--rate-limit-override` value is malformed.
    #[error("invalid rate limit `{value}`: {reason}")]
    RateLimitSpec { value: String, reason: String },
}

/// The source of time for rate-limit windows: unix microseconds, monotonic in the server.
/// Tests hand in a fake.
pub type SimClock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// Rate-limit settings (`--rate-limit`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RateLimitConfig {
    /// The limit every route gets when no override matches (`--rate-limit N/W`); `None` =
    /// only the overrides limit anything.
    pub default: Option<Limit>,
    /// First match wins.
    pub overrides: Vec<RateOverride>,
    pub algorithm: RateAlgorithm,
}

/// Everything the simulation layers are configured with. `Default` = every layer off.
#[derive(Debug, Clone, Default)]
pub struct SimConfig {
    /// `--fault-profile` rules first, then the `--chaos-seed` rules.
    pub faults: Option<FaultProfile>,
    /// `--fault-seed` (default 0).
    pub fault_seed: u64,
    pub latency: LatencyPolicy,
    /// `--latency-seed` (default 0).
    pub latency_seed: u64,
    pub rate_limit: Option<RateLimitConfig>,
}

impl SimConfig {
    /// True when no layer can affect any request: the server then skips the layer entirely.
    pub fn is_off(&self) -> bool {
        self.faults.as_ref().is_none_or(|f| f.rules.is_empty())
            && self.latency.is_off()
            && self.rate_limit.is_none()
    }
}

/// What a request looks like to the simulation layers.
#[derive(Debug, Clone, Copy)]
pub struct SimRequest<'a> {
    /// Uppercase method.
    pub method: &'a str,
    pub path: &'a str,
    /// `METHOD /template` of the route the request matches, if any (see
    /// [`crate::Engine::route_template`]).
    pub route: Option<&'a str>,
    /// Header names lowercase.
    pub headers: &'a [(String, String)],
    /// The `X-Wraith-Session` value (`None` = the default namespace).
    pub session: Option<&'a str>,
}

impl SimRequest<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What to do with a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Let the engine answer.
    Dispatch,
    /// Answer with this response instead of dispatching.
    Respond(SimResponse),
    /// Let the engine answer, then cut the body to this many bytes (see [`apply_partial`]).
    Partial { bytes: usize },
}

/// A response a layer produced itself.
#[derive(Debug, Clone, PartialEq)]
pub struct SimResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    /// The connection closes after this answer (the drop fault).
    pub close_connection: bool,
    /// A refusal's wait until its window frees a slot, in microseconds: what
    /// [`SimResponse::stamp_reset`] re-expresses `X-RateLimit-Reset` from.
    pub reset_wait_us: Option<u64>,
}

impl SimResponse {
    /// Say `X-RateLimit-Reset` on the clock of the session being answered (`now_us`, the
    /// clock its `Date` reads), so a fixed or deterministic clock gives the same header for
    /// the same request sequence and `Reset - Date` is the wait. A response that is no
    /// refusal is left alone.
    pub fn stamp_reset(&mut self, now_us: i64) {
        let Some(wait) = self.reset_wait_us else {
            return;
        };
        // `Date` is the clock's second rounded down and `Retry-After` the wait rounded up (at
        // least 1 on a refusal): their sum, so `Reset - Date` is `Retry-After` on any clock,
        // a real one's fractional second included.
        let retry = i64::try_from(wait.div_ceil(1_000_000).max(1)).unwrap_or(i64::MAX);
        let secs = now_us.div_euclid(1_000_000).saturating_add(retry);
        for (k, v) in &mut self.headers {
            if k.eq_ignore_ascii_case("x-ratelimit-reset") {
                *v = secs.to_string();
            }
        }
    }

    /// As an engine [`Response`] with provenance `fault`, so the caller stamps the control
    /// headers the same way as for any other answer.
    pub fn into_response(self, route: Option<&str>) -> Response {
        Response {
            route: route.map(str::to_string),
            ..Response::plain(self.status, self.headers, self.body, Provenance::Fault)
        }
    }
}

/// The layers' verdict on one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub action: Action,
    /// Hold the answer this long before writing it (latency, a delay fault or a timeout's hold).
    pub delay_ms: u64,
    /// The layer that affected the answer, if any (a partial fault counts only once it cut).
    pub fault: Option<FaultKind>,
}

impl Decision {
    /// No layer did anything.
    pub const PASS: Decision = Decision {
        action: Action::Dispatch,
        delay_ms: 0,
        fault: None,
    };
}

struct Rngs {
    fault: ChaCha8Rng,
    latency: ChaCha8Rng,
    /// Triggers per fault rule, for `count`.
    triggers: Vec<u64>,
}

/// The simulation layers, shared by every session (only rate-limit windows are per session).
pub struct Simulation {
    cfg: SimConfig,
    clock: SimClock,
    recorded_latency: BTreeMap<String, LatencyProfile>,
    /// Recorded 429 answers by route name, for the rate-limit / throttle body.
    recorded_429: BTreeMap<String, (Vec<(String, String)>, Bytes)>,
    rngs: Mutex<Rngs>,
    windows: Mutex<ratelimit::Windows>,
}

impl std::fmt::Debug for Simulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("cfg", &self.cfg)
            .finish()
    }
}

impl Simulation {
    /// Build the layers for `model` (recorded latency profiles and 429 shapes are read from it).
    pub fn new(cfg: SimConfig, model: &Model, clock: SimClock) -> Simulation {
        let rules = cfg.faults.as_ref().map_or(0, |f| f.rules.len());
        let rngs = Rngs {
            fault: ChaCha8Rng::seed_from_u64(cfg.fault_seed),
            latency: ChaCha8Rng::seed_from_u64(cfg.latency_seed),
            triggers: vec![0; rules],
        };
        Simulation {
            recorded_latency: latency::recorded_profiles(model),
            recorded_429: recorded_429s(model),
            cfg,
            clock,
            rngs: Mutex::new(rngs),
            windows: Mutex::new(ratelimit::Windows::default()),
        }
    }

    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    /// Decide what happens to one request: rate limit → fault → latency.
    pub fn decide(&self, req: &SimRequest<'_>) -> Decision {
        // Counters are the namespace's: every spelling of the headerless one shares them.
        let session = crate::namespace::NsKey::named(req.session);
        if let Some(rl) = &self.cfg.rate_limit
            && let Some((key, limit)) = self.rate_limit_for(rl, req)
        {
            let now = (self.clock)();
            let v = self
                .windows
                .lock()
                .check(session, &key, limit, rl.algorithm, now);
            if !v.allowed {
                return Decision {
                    action: Action::Respond(self.too_many(req.route, &v)),
                    delay_ms: 0,
                    fault: Some(FaultKind::RateLimit),
                };
            }
        }
        let mut rngs = self.rngs.lock();
        let mut fault_delay = None;
        if let Some(profile) = &self.cfg.faults
            && let Some(idx) = profile.rules.iter().enumerate().position(|(i, r)| {
                rule_selects(r, req) && r.count.is_none_or(|c| rngs.triggers[i] < c)
            })
        {
            let rule = &profile.rules[idx];
            let fires = rule.percentage >= 100.0
                || (rule.percentage > 0.0 && rngs.fault.random_range(0.0..100.0) < rule.percentage);
            if fires {
                let decided = match &rule.fault {
                    FaultType::Error { status, body } => Some(Decision {
                        action: Action::Respond(error_response(*status, body)),
                        delay_ms: 0,
                        fault: Some(FaultKind::Error),
                    }),
                    FaultType::Delay { min_ms, max_ms } => {
                        fault_delay = Some(rngs.fault.random_range(*min_ms..=*max_ms));
                        None
                    }
                    FaultType::Timeout { hold_ms } => Some(Decision {
                        action: Action::Respond(json_response(
                            504,
                            &json!({
                                "status": 504,
                                "code": "gateway_timeout",
                                "message": format!("the twin held this request for {hold_ms} ms and timed out (fault profile)"),
                            }),
                        )),
                        delay_ms: *hold_ms,
                        fault: Some(FaultKind::Timeout),
                    }),
                    FaultType::Drop => Some(Decision {
                        action: Action::Respond(SimResponse {
                            status: 499,
                            headers: Vec::new(),
                            body: Bytes::new(),
                            close_connection: true,
                            reset_wait_us: None,
                        }),
                        delay_ms: 0,
                        fault: Some(FaultKind::Drop),
                    }),
                    FaultType::Throttle { limit, window_secs } => {
                        let limit = Limit {
                            limit: *limit,
                            window_secs: *window_secs,
                        };
                        let now = (self.clock)();
                        let v = self.windows.lock().check(
                            session,
                            &format!("fault-rule-{idx}"),
                            limit,
                            RateAlgorithm::Fixed,
                            now,
                        );
                        (!v.allowed).then(|| Decision {
                            action: Action::Respond(self.too_many(req.route, &v)),
                            delay_ms: 0,
                            fault: Some(FaultKind::Throttle),
                        })
                    }
                    FaultType::Partial { bytes } => Some(Decision {
                        action: Action::Partial { bytes: *bytes },
                        delay_ms: 0,
                        fault: None,
                    }),
                };
                let triggered = fault_delay.is_some() || decided.is_some();
                if triggered {
                    rngs.triggers[idx] += 1;
                }
                if let Some(mut d) = decided {
                    if matches!(d.action, Action::Partial { .. }) {
                        d.delay_ms = self.latency_ms(&mut rngs.latency, req);
                    }
                    return d;
                }
            }
        }
        if let Some(ms) = fault_delay {
            // Replaces the latency; the latency sequence does not advance for this request.
            return Decision {
                action: Action::Dispatch,
                delay_ms: ms,
                fault: Some(FaultKind::Delay),
            };
        }
        Decision {
            action: Action::Dispatch,
            delay_ms: self.latency_ms(&mut rngs.latency, req),
            fault: None,
        }
    }

    fn latency_ms(&self, rng: &mut ChaCha8Rng, req: &SimRequest<'_>) -> u64 {
        if self.cfg.latency.is_off() {
            return 0;
        }
        let mode = self.cfg.latency.mode_for(req.method, req.path, req.route);
        latency::draw(mode, req.route, &self.recorded_latency, rng)
    }

    fn rate_limit_for(
        &self,
        rl: &RateLimitConfig,
        req: &SimRequest<'_>,
    ) -> Option<(String, Limit)> {
        if let Some((i, o)) = rl
            .overrides
            .iter()
            .enumerate()
            .find(|(_, o)| o.route.matches(req.method, req.path, req.route))
        {
            return Some((format!("override-{i}"), o.limit));
        }
        let limit = rl.default?;
        let key = match req.route {
            Some(r) => r.to_string(),
            None => format!("{} {}", req.method, req.path),
        };
        Some((key, limit))
    }

    /// The 429 answer: the route's recorded 429 if the model has one, else the structured body.
    fn too_many(&self, route: Option<&str>, v: &WindowVerdict) -> SimResponse {
        let mut resp = match route.and_then(|r| self.recorded_429.get(r)) {
            Some((headers, body)) => SimResponse {
                status: 429,
                headers: headers.clone(),
                body: body.clone(),
                close_connection: false,
                reset_wait_us: None,
            },
            None => json_response(
                429,
                &json!({
                    "status": 429,
                    "code": "rate_limited",
                    "message": format!("rate limit of {} requests exceeded; retry after {} s", v.limit, v.retry_after),
                    "retry_after": v.retry_after,
                }),
            ),
        };
        resp.headers.retain(|(k, _)| {
            !k.eq_ignore_ascii_case("retry-after")
                && !k.to_ascii_lowercase().starts_with("x-ratelimit-")
        });
        resp.headers
            .push(("X-RateLimit-Limit".into(), v.limit.to_string()));
        resp.headers
            .push(("X-RateLimit-Remaining".into(), v.remaining.to_string()));
        resp.headers
            .push(("X-RateLimit-Reset".into(), v.reset_unix.to_string()));
        resp.headers
            .push(("Retry-After".into(), v.retry_after.to_string()));
        resp.reset_wait_us = Some(v.wait_us);
        resp
    }

    /// `POST /__wraith/session/{id}/reset` and `DELETE /__wraith/session/{id}`: that session's
    /// rate-limit and throttle counters start over.
    pub fn clear_session(&self, id: &str) {
        self.windows
            .lock()
            .clear_session(crate::namespace::NsKey::named(Some(id)));
    }

    /// `POST /__wraith/reset`: every counter clears and the fault and latency sequences restart
    /// from their seeds (and `count` caps start over).
    pub fn reset(&self) {
        self.windows.lock().clear();
        let mut r = self.rngs.lock();
        r.fault = ChaCha8Rng::seed_from_u64(self.cfg.fault_seed);
        r.latency = ChaCha8Rng::seed_from_u64(self.cfg.latency_seed);
        r.triggers.iter_mut().for_each(|t| *t = 0);
    }
}

fn rule_selects(rule: &FaultRule, req: &SimRequest<'_>) -> bool {
    rule.route.matches(req.method, req.path, req.route)
        && rule
            .header_match
            .as_ref()
            .is_none_or(|(name, value)| req.header(name) == Some(value.as_str()))
}

fn error_response(status: u16, body: &str) -> SimResponse {
    let ct = if serde_json::from_str::<serde_json::Value>(body).is_ok() {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    SimResponse {
        status,
        headers: if body.is_empty() {
            Vec::new()
        } else {
            vec![("content-type".into(), ct.into())]
        },
        body: Bytes::copy_from_slice(body.as_bytes()),
        close_connection: false,
        reset_wait_us: None,
    }
}

fn json_response(status: u16, body: &serde_json::Value) -> SimResponse {
    SimResponse {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: Bytes::from(serde_json::to_vec(body).unwrap_or_default()),
        close_connection: false,
        reset_wait_us: None,
    }
}

/// Cut an engine answer to `bytes` bytes. Returns whether the body changed; when it did, the
/// provenance becomes `fault` and the per-field counts, the origin map and any replay claim are
/// dropped (the wire body is intentionally malformed, so none of them can be kept).
pub fn apply_partial(resp: &mut Response, bytes: usize) -> bool {
    if resp.body.len() <= bytes {
        return false;
    }
    resp.body = resp.body.slice(..bytes);
    resp.provenance = Provenance::Fault;
    resp.field_counts = None;
    resp.field_origins = None;
    resp.replay = None;
    resp.outbound_policy_applied = false;
    true
}

/// The first recorded 429 of each route (exact-replay moments, in key order).
fn recorded_429s(model: &Model) -> BTreeMap<String, (Vec<(String, String)>, Bytes)> {
    let mut out = BTreeMap::new();
    for r in &model.routes {
        let found = r
            .exact
            .iter()
            .flat_map(|e| e.moments.iter())
            .find(|m| m.status == 429);
        let Some(m) = found else { continue };
        let (body, json) = match &m.body {
            RecordedBody::Empty => (Bytes::new(), false),
            RecordedBody::Json { value } => (value.to_bytes(), true),
            RecordedBody::Text { text } => (Bytes::from(text.clone()), false),
            RecordedBody::Binary { base64 } => {
                use base64::Engine as _;
                (
                    Bytes::from(
                        base64::engine::general_purpose::STANDARD
                            .decode(base64)
                            .unwrap_or_default(),
                    ),
                    false,
                )
            }
        };
        let mut headers: Vec<(String, String)> = m
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .cloned()
            .collect();
        if json && headers.is_empty() {
            headers.push(("content-type".into(), "application/json".into()));
        }
        out.insert(format!("{} {}", r.method, r.path), (headers, body));
    }
    out
}
