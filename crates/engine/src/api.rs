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

/// Clock settings of a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockConfig {
    pub mode: ClockMode,
    /// Unix seconds; default 1640995200.
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
/// adds them from the other fields via [`Response::control_headers`].
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
}

/// Per-field origin counts of a rendered body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldCounts {
    pub recorded: u32,
    pub template: u32,
    pub fixture: u32,
    pub handler: u32,
}
