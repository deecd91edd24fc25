//! The engine's public surface: configuration, requests, responses and provenance.

use serde::{Deserialize, Serialize};

/// How a response was produced (`X-Wraith-Provenance`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    Recorded,
    Template,
    Handler,
    Fixture,
    Fault,
    Miss,
}

impl Provenance {
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Recorded => "recorded",
            Provenance::Template => "template",
            Provenance::Handler => "handler",
            Provenance::Fixture => "fixture",
            Provenance::Fault => "fault",
            Provenance::Miss => "miss",
        }
    }
}

/// `X-Wraith-Replay` class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayClass {
    SeriesMoment,
    SessionBoundMoment,
}

/// `--fidelity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fidelity {
    Strict,
    #[default]
    Synth,
    Fuzzy,
}

/// `--unknown-entity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownEntity {
    #[default]
    Synthesize,
    NotFound,
}

/// `--clock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockMode {
    /// Wall-clock time, read through the [`WallClock`] the caller hands in.
    #[default]
    Real,
    /// Starts at `base_epoch` and advances one second per reading.
    Deterministic,
    /// Frozen at `base_epoch`.
    Fixed,
}

impl ClockMode {
    /// The mode as `--clock` and `wraith.toml` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            ClockMode::Real => "real",
            ClockMode::Deterministic => "deterministic",
            ClockMode::Fixed => "fixed",
        }
    }
}

/// Clock settings of a namespace. Deserializes `{mode, base_epoch}` (also `base_epoch_secs`),
/// each key optional.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClockConfig {
    pub mode: ClockMode,
    /// Unix seconds; default 1640995200.
    #[serde(alias = "base_epoch_secs")]
    pub base_epoch: i64,
}

impl Default for ClockConfig {
    fn default() -> Self {
        ClockConfig {
            mode: ClockMode::Real,
            base_epoch: 1_640_995_200,
        }
    }
}

/// The caller's source of wall-clock time (unix microseconds), used only by [`ClockMode::Real`].
/// Tests hand in a fake.
pub type WallClock = std::sync::Arc<dyn Fn() -> i64 + Send + Sync>;

/// The longest `X-Wraith-Session` value (and provisioned session id) a twin takes, in bytes.
/// Longer ones are refused: every namespace keeps its id, and a session must stay nameable in
/// a control-plane path (`DELETE /__wraith/session/{id}`, percent-encoded up to three times
/// as long) that HTTP servers accept, or its slot could never be freed.
pub const MAX_SESSION_ID_BYTES: usize = 1024;

/// One request as the engine sees it. Header names are lowercase.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub method: String,
    /// Path without the query, percent-encoding as received.
    pub path: String,
    /// Raw query string without `?`.
    pub query: String,
    pub headers: Vec<(String, String)>,
    pub body: bytes::Bytes,
}

impl Request {
    /// First value of a header, by lowercase name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One response. `headers` excludes the `X-Wraith-*` control headers; the server (or check)
/// adds them from the other fields via [`crate::Engine::control_headers`].
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: bytes::Bytes,
    pub provenance: Provenance,
    /// `METHOD /path` of the matched route (template form under synth fidelity, concrete
    /// recorded path under strict); `None` on a route miss.
    pub route: Option<String>,
    /// `<session_id>/<index>` when the body is a recorded exchange.
    pub exchange: Option<String>,
    /// Exactness claim, when the body is a verbatim recorded moment.
    pub replay: Option<ReplayClass>,
    /// The outbound policy changed some bytes of a replayed moment.
    pub outbound_policy_applied: bool,
    /// Per-field origin counts for `X-Wraith-Provenance-Counts` (debug).
    pub field_counts: Option<FieldCounts>,
    /// Per-field origin map (debug, synth fidelity, not HEAD): JSON pointer (RFC 6901) of
    /// every body position → where its value came from. Leaves, except that a hole's position
    /// is one entry even when its value is an object; `""` names a whole non-JSON body.
    /// Engine-invented bodies (route miss, no variant matched) have no entries. Always agrees
    /// with `field_counts` (see [`FieldSource::counted_as`]). `GET /__wraith/trace/{id}`
    /// serves it as `origins` under `--debug --trace`.
    pub field_origins: Option<std::collections::BTreeMap<String, FieldSource>>,
    /// For an answer to `HEAD` (whose `body` is empty): the length of the body the same `GET`
    /// would carry, which its `Content-Length` states. `None` for every other answer.
    pub head_length: Option<usize>,
}

impl Response {
    /// An answer made outside the model (a fault, a refusal): its status, headers, body and
    /// provenance, no route, no recorded source, no replay claim, no debug origins.
    pub fn plain(
        status: u16,
        headers: Vec<(String, String)>,
        body: bytes::Bytes,
        provenance: Provenance,
    ) -> Response {
        Response {
            status,
            headers,
            body,
            provenance,
            route: None,
            exchange: None,
            replay: None,
            outbound_policy_applied: false,
            field_counts: None,
            field_origins: None,
            head_length: None,
        }
    }
}

/// Whether an answer of `status` can carry a body on the wire: a `204 No Content`, a
/// `304 Not Modified` and an interim (1xx) answer never do (RFC 9110 §15.3.5, §15.4.5;
/// RFC 9112 §6.3), so no HTTP server delivers a body with one, whatever a recording holds.
/// The engine answers such a status without a body, and the check does not compare a
/// recorded one.
pub fn status_carries_body(status: u16) -> bool {
    !matches!(status, 100..=199 | 204 | 304)
}

/// Where one body position's value came from (the per-field origin map under `--debug`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldSource {
    /// A constant of the variant's template (a recorded value every recording agreed on).
    Constant,
    /// Copied from this request (path parameter, query, header or body field).
    Echo,
    /// A fresh id minted for this response.
    Generated,
    /// The namespace clock.
    Clock,
    /// A per-namespace counter.
    Counter,
    /// One of the values the recordings showed at this position (no better source known).
    Observed,
    /// This session's stored state (an entity it wrote, or a list or count computed from it).
    State,
    /// A fixture record.
    Fixture,
    /// A recorded moment or recorded entity record, verbatim.
    Recorded,
    /// Written by a Lua handler.
    Handler,
    /// The declared response of an authored route (`lua/routes.toml`).
    Authored,
}

impl FieldSource {
    pub fn as_str(self) -> &'static str {
        match self {
            FieldSource::Constant => "constant",
            FieldSource::Echo => "echo",
            FieldSource::Generated => "generated",
            FieldSource::Clock => "clock",
            FieldSource::Counter => "counter",
            FieldSource::Observed => "observed",
            FieldSource::State => "state",
            FieldSource::Fixture => "fixture",
            FieldSource::Recorded => "recorded",
            FieldSource::Handler => "handler",
            FieldSource::Authored => "authored",
        }
    }

    /// The `X-Wraith-Provenance-Counts` bucket this origin is counted in: template constants
    /// and recorded values are `recorded`; fixture and handler values their own; everything
    /// the twin synthesized for this response or this session (echo, generated, clock,
    /// counter, observed, state, authored) is `template`.
    pub fn counted_as(self) -> Provenance {
        match self {
            FieldSource::Constant | FieldSource::Recorded => Provenance::Recorded,
            FieldSource::Fixture => Provenance::Fixture,
            FieldSource::Handler => Provenance::Handler,
            _ => Provenance::Template,
        }
    }
}

impl FieldCounts {
    /// The counts of an origin map (one per entry, in its [`FieldSource::counted_as`] bucket).
    pub fn of_origins(origins: &std::collections::BTreeMap<String, FieldSource>) -> FieldCounts {
        let mut c = FieldCounts::default();
        for s in origins.values() {
            match s.counted_as() {
                Provenance::Recorded => c.recorded += 1,
                Provenance::Fixture => c.fixture += 1,
                Provenance::Handler => c.handler += 1,
                _ => c.template += 1,
            }
        }
        c
    }
}

/// Per-field origin counts of a rendered body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldCounts {
    pub recorded: u32,
    pub template: u32,
    pub fixture: u32,
    pub handler: u32,
}

/// `[serve.idempotency]`: replay of `Idempotency-Key` requests within a namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyOptions {
    /// Lowercase request header carrying the key (usually `idempotency-key`).
    pub header: String,
    /// How long a cached answer is replayed, measured on the namespace clock.
    pub ttl_seconds: u64,
}

impl Default for IdempotencyOptions {
    fn default() -> Self {
        IdempotencyOptions {
            header: "idempotency-key".to_string(),
            ttl_seconds: 86_400,
        }
    }
}

/// Freshness of the served twin, stamped on every response (`X-Wraith-Twin-Age`,
/// `X-Wraith-Recorded-At`). Computed once by the caller at startup: it does not tick.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Freshness {
    pub twin_age_seconds: u64,
    /// RFC 3339 UTC time of the newest recording; `None` when the twin has no recordings.
    pub recorded_at: Option<String>,
    /// RFC 3339 UTC time the model was synthesized, when known.
    pub synthesized_at: Option<String>,
}

/// Maps an incoming credential header's value (lowercase name, value: the header
/// `wraith_model::principal::principal_header` picks) to the form recordings hold (scrubbed),
/// so exact replay can prefer moments recorded for the same principal.
pub type PrincipalMap = std::sync::Arc<dyn Fn(&str, &str) -> String + Send + Sync>;

/// Serve-wide settings of an [`crate::Engine`]. Every field is shared by all sessions.
///
/// `Default` gives the documented defaults (synth fidelity, synthesize unknown entities, seed 42,
/// real clock, 1000 namespaces, self-URL rewrite and provenance headers on). Its `wall_clock`
/// reads **no** clock (it returns the clock's `base_epoch`): the engine itself never touches the
/// system time, so a caller that serves with [`ClockMode::Real`] must hand in a real wall clock.
#[derive(Clone)]
pub struct EngineOptions {
    pub fidelity: Fidelity,
    pub unknown_entity: UnknownEntity,
    /// `--seed`: every namespace's RNG is seeded from a hash of (seed, session id).
    pub seed: u64,
    /// Default clock of new namespaces (a provisioned session may pick its own).
    pub clock: ClockConfig,
    pub wall_clock: WallClock,
    /// `[serve.limits] max_namespaces`; creating one more answers 503.
    pub max_namespaces: usize,
    /// `[serve.limits] max_entities_per_type`: a create of a type the session already holds
    /// this many records of answers 507.
    pub max_entities_per_type: usize,
    /// `[serve.limits] max_total_state_mb`, in bytes: a write to a session whose own records
    /// take more answers 507 (deletes still pass, so the session can free room).
    pub max_state_bytes: u64,
    /// `[serve.limits] max_twin_state_mb`, in bytes: a write while every session's records
    /// together take more answers 507 (deletes still pass), so many sessions cannot together
    /// exhaust the machine that each session's own limit leaves room for.
    pub max_twin_state_bytes: u64,
    /// `None` = idempotency replay disabled.
    pub idempotency: Option<IdempotencyOptions>,
    /// Rewrite absolute URLs on the recorded upstream's origin to the twin's own origin.
    pub rewrite_self_urls: bool,
    /// `false` = `--no-provenance-headers`: suppress Provenance, Route, Exchange and Replay.
    pub provenance_headers: bool,
    /// `--debug`: per-field provenance counts and the session state dump.
    pub debug: bool,
    /// Twin name for the route-miss body; `None` renders `"twin": null`.
    pub twin_name: Option<String>,
    /// `--fixture`; `None` = the implicit default set.
    pub fixture: Option<String>,
    pub freshness: Freshness,
    /// See [`PrincipalMap`]; `None` compares the credential header's value verbatim.
    pub principal: Option<PrincipalMap>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        let clock = ClockConfig::default();
        let base_us = clock.base_epoch.saturating_mul(1_000_000);
        EngineOptions {
            fidelity: Fidelity::Synth,
            unknown_entity: UnknownEntity::Synthesize,
            seed: 42,
            clock,
            wall_clock: std::sync::Arc::new(move || base_us),
            max_namespaces: 1000,
            max_entities_per_type: 10_000,
            max_state_bytes: 100 * 1024 * 1024,
            max_twin_state_bytes: 2048 * 1024 * 1024,
            idempotency: None,
            rewrite_self_urls: true,
            provenance_headers: true,
            debug: false,
            twin_name: None,
            fixture: None,
            freshness: Freshness::default(),
            principal: None,
        }
    }
}

impl std::fmt::Debug for EngineOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineOptions")
            .field("fidelity", &self.fidelity)
            .field("unknown_entity", &self.unknown_entity)
            .field("seed", &self.seed)
            .field("clock", &self.clock)
            .field("max_namespaces", &self.max_namespaces)
            .field("idempotency", &self.idempotency)
            .field("rewrite_self_urls", &self.rewrite_self_urls)
            .field("provenance_headers", &self.provenance_headers)
            .field("debug", &self.debug)
            .field("twin_name", &self.twin_name)
            .field("fixture", &self.fixture)
            .field("freshness", &self.freshness)
            .field("principal", &self.principal.as_ref().map(|_| "<fn>"))
            .finish()
    }
}

/// The raw files of `state/fixtures/`, read from disk by the caller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FixtureTree {
    /// One fixture set per subdirectory of `state/fixtures/`, by directory name.
    pub sets: std::collections::BTreeMap<String, FixtureSetFiles>,
    /// `<entity_type>.json` files directly under `state/fixtures/` (stem -> text): the legacy
    /// pre-set layout, treated as the default set when there is no `default/` subdirectory.
    pub loose: std::collections::BTreeMap<String, String>,
}

/// The files of one fixture set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FixtureSetFiles {
    /// `fixture.json` text when present: the set is then in the directory form.
    pub fixture_json: Option<String>,
    /// `<entity_type>.json` files at the top of the set (stem -> text): the legacy form.
    pub flat: std::collections::BTreeMap<String, String>,
    /// `patches/<entity_type>.patch.json` (stem = entity type -> text).
    pub patches: std::collections::BTreeMap<String, String>,
    /// Files of the set that are not read (at its top, not `.json`: a `.yaml` set, notes; in
    /// `patches/`, not `.patch.json`, named `patches/<name>`), sorted, so `wraith lint` can say
    /// that they seed nothing.
    pub ignored: Vec<String>,
}

/// `POST /__wraith/session`: pin a namespace's fixture, seed and clock before traffic arrives.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Provision {
    pub session: String,
    #[serde(default)]
    pub fixture: Option<String>,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub clock: Option<ClockConfig>,
}

/// The answer to a provision request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProvisionInfo {
    pub session: String,
    /// Resolved fixture set name; `None` when the namespace starts empty.
    pub fixture: Option<String>,
    pub seed: u64,
    pub clock: ClockConfig,
    pub entities_seeded: u64,
    /// The namespace was created by this call (201) rather than already provisioned with the
    /// same settings (200). Not serialized.
    #[serde(skip)]
    pub created: bool,
}

/// One live namespace, for `GET /__wraith/session` and reset answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionInfo {
    /// The `X-Wraith-Session` value; `None` for the shared default (headerless) namespace.
    pub session: Option<String>,
    /// Pinned with `POST /__wraith/session` (rather than created lazily by traffic).
    pub provisioned: bool,
    pub fixture: Option<String>,
    pub seed: u64,
    pub clock: ClockConfig,
    /// Entities currently live in the namespace's store (fixtures and session writes).
    pub entities: u64,
    /// Application requests this namespace has answered since it was created or reset.
    pub requests: u64,
}
