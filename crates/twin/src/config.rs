//! `wraith.toml`: every section Wraith reads, as serde structs with the documented defaults.
//!
//! Unknown keys are not errors: twins written by other Wraith versions carry keys this one does
//! not read, so [`TwinConfig::load`] returns them as [`ConfigWarning`]s for the CLI to show.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::dir::{TwinDir, TwinError};

/// The whole of `wraith.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TwinConfig {
    #[serde(default = "one")]
    pub schema_version: u32,
    pub service: ServiceConfig,
    #[serde(default)]
    pub proxy: ProxyConfig,
    #[serde(default)]
    pub serve: ServeConfig,
    #[serde(default)]
    pub diff: DiffConfig,
    /// `[handlers]`: the authored-output gate of `wraith check`.
    #[serde(default)]
    pub handlers: HandlersConfig,
    /// `[[deviations]]`: declared intentional deviations of authored output (Lua handlers) from
    /// the recordings. Entries are kept as written; `wraith check` and `wraith lint` validate
    /// them (`wraith_check::authored::parse_deviations`), so lint can name every bad entry.
    #[serde(default)]
    pub deviations: Vec<DeviationEntry>,
    /// `[freshness]`: the staleness SLA `wraith check` gates on. Durations are kept as written
    /// (`"30d"`); `wraith check` and `wraith lint` validate them (`wraith_check::freshness`).
    #[serde(default)]
    pub freshness: FreshnessConfig,
    /// `[generate]`: how `wraith synth` builds the model. Only `request_keying` is read; the
    /// other keys of older files load as unknown-key warnings.
    #[serde(default)]
    pub generate: GenerateConfig,
    /// Warnings found while loading (unknown keys, deprecated values). Not part of the file.
    #[serde(skip)]
    pub warnings: Vec<ConfigWarning>,
}

/// Something in the file that loads but deserves the user's attention.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigWarning {
    pub path: PathBuf,
    /// 1-based line, 0 when unknown.
    pub line: usize,
    /// Dotted key, e.g. `generate.llm.model`.
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: `{}`: {}",
            self.path.display(),
            self.line,
            self.key,
            self.message
        )
    }
}

/// `[service]`: what the twin stands in for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceConfig {
    pub name: String,
    /// Upstream root, e.g. `https://api.example.com/v1`. Recorded paths keep its path prefix.
    pub base_url: String,
    #[serde(default)]
    pub spec: Option<String>,
    #[serde(default)]
    pub user_agent: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProxyMode {
    #[default]
    Reverse,
    Forward,
    Mitm,
}

/// `[proxy]`: `wraith record`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProxyConfig {
    pub port: u16,
    pub mode: ProxyMode,
    /// How long a recorded request waits for the upstream's response head before the client
    /// is answered 504 (nothing recorded). The body may stream for longer.
    pub upstream_timeout_ms: u64,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            port: 8080,
            mode: ProxyMode::Reverse,
            upstream_timeout_ms: 60_000,
        }
    }
}

/// Response mode of `serve` (see the twin response contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fidelity {
    Strict,
    #[default]
    Synth,
    /// `permissive` is the deprecated spelling; it loads with a warning.
    #[serde(alias = "permissive")]
    Fuzzy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownEntity {
    #[default]
    Synthesize,
    NotFound,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionMode {
    #[default]
    Header,
    Cookie,
    Path,
}

/// `[serve]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    pub port: u16,
    pub session_mode: SessionMode,
    pub fidelity: Fidelity,
    pub deterministic_seed: u64,
    pub debug: bool,
    pub strip_headers: bool,
    pub rewrite_self_urls: bool,
    pub provenance_headers: bool,
    pub unknown_entity: UnknownEntity,
    pub latency: LatencyConfig,
    pub limits: LimitsConfig,
    /// `[serve.rate_limits."METHOD /path"]`.
    pub rate_limits: BTreeMap<String, RateLimit>,
    pub clock: ClockConfig,
    pub idempotency: IdempotencyConfig,
    pub lua: LuaConfig,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            port: 8081,
            session_mode: SessionMode::Header,
            fidelity: Fidelity::Synth,
            deterministic_seed: 42,
            debug: false,
            strip_headers: true,
            rewrite_self_urls: true,
            provenance_headers: true,
            unknown_entity: UnknownEntity::Synthesize,
            latency: LatencyConfig::default(),
            limits: LimitsConfig::default(),
            rate_limits: BTreeMap::new(),
            clock: ClockConfig::default(),
            idempotency: IdempotencyConfig::default(),
            lua: LuaConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LatencyMode {
    #[default]
    None,
    Recorded,
    Scaled,
    Fixed,
}

/// `[serve.latency]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LatencyConfig {
    pub mode: LatencyMode,
    pub min_ms: u64,
    pub max_ms: u64,
    pub multiplier: f64,
}

impl Default for LatencyConfig {
    fn default() -> Self {
        LatencyConfig {
            mode: LatencyMode::None,
            min_ms: 0,
            max_ms: 5000,
            multiplier: 1.0,
        }
    }
}

/// The largest request body `wraith serve` reads, in MiB (sent, or decoded from what was sent).
pub const MAX_REQUEST_BODY_MB: u64 = 16;

/// `[serve.limits]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    pub max_namespaces: u64,
    pub max_entities_per_type: u64,
    pub max_total_state_mb: u64,
    /// Every session's records together: past it, writes answer 507 in every session.
    pub max_twin_state_mb: u64,
    /// Every request body `wraith serve` reads or answers at once, together: a body that would
    /// take them past it is refused 503. At least [`MAX_REQUEST_BODY_MB`], one whole body.
    pub max_pending_body_mb: u64,
    pub request_drain_timeout_ms: u64,
    /// How long `wraith serve` waits for more of a request (its headers, the next bytes of its
    /// body) before giving up on the client.
    pub request_idle_timeout_ms: u64,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_namespaces: 1000,
            max_entities_per_type: 10000,
            max_total_state_mb: 100,
            max_twin_state_mb: 2048,
            max_pending_body_mb: 256,
            request_drain_timeout_ms: 5000,
            request_idle_timeout_ms: 30_000,
        }
    }
}

/// One `[serve.rate_limits."METHOD /path"]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    pub limit: u64,
    pub window_seconds: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockMode {
    #[default]
    Real,
    Deterministic,
    Fixed,
}

/// `[serve.clock]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClockConfig {
    pub mode: ClockMode,
    /// Unix seconds: start of the deterministic clock, or the frozen value, within
    /// [`CLOCK_EPOCH_RANGE`].
    pub base_epoch: i64,
}

/// The clock epochs (unix seconds) a twin can start at: 1970-01-01T00:00:00Z to
/// 9999-12-30T22:00:00Z. An HTTP `Date` and an RFC 3339 timestamp both spell the year with four
/// digits, so a clock past year 9999 has no date to put on an answer (the end is the last
/// instant the date library renders: it keeps a day of year 9999 for UTC offsets); before 1970
/// a clock position in unix seconds or milliseconds would be negative, which no API answers,
/// and the dates clients parse stop making sense (year 0, which many date libraries cannot
/// hold). Recordings start after 1970 too (`wraith import` refuses an earlier one).
pub const CLOCK_EPOCH_RANGE: std::ops::RangeInclusive<i64> = 0..=253_402_207_200;

/// Check that `secs` lies in [`CLOCK_EPOCH_RANGE`]; the error says why and what to give instead.
/// Takes an `i128` so any integer a caller holds is judged whole.
pub fn validate_clock_epoch(secs: i128) -> Result<(), String> {
    let (first, last) = (*CLOCK_EPOCH_RANGE.start(), *CLOCK_EPOCH_RANGE.end());
    let in_range = |s: i128| (i128::from(first)..=i128::from(last)).contains(&s);
    if in_range(secs) {
        return Ok(());
    }
    let side = if secs > i128::from(last) {
        "after 9999-12-30T22:00:00Z, past any date an HTTP `Date` or RFC 3339 timestamp can show"
    } else {
        "before 1970-01-01T00:00:00Z, where a clock in unix seconds would be negative"
    };
    // A value a thousand times too large is most often milliseconds.
    let hint = if secs > i128::from(last) && in_range(secs / 1000) {
        format!(" (if it is milliseconds, give {} seconds)", secs / 1000)
    } else {
        String::new()
    };
    Err(format!(
        "{secs} is {side}{hint}; give unix seconds from {first} (1970-01-01T00:00:00Z) to \
         {last} (9999-12-30T22:00:00Z), e.g. 1700000000"
    ))
}

impl Default for ClockConfig {
    fn default() -> Self {
        ClockConfig {
            mode: ClockMode::Real,
            base_epoch: 1_640_995_200,
        }
    }
}

/// `[serve.idempotency]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IdempotencyConfig {
    pub enabled: bool,
    pub header: String,
    pub ttl_seconds: u64,
}

impl Default for IdempotencyConfig {
    fn default() -> Self {
        IdempotencyConfig {
            enabled: false,
            header: "Idempotency-Key".to_string(),
            ttl_seconds: 86400,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LuaOnError {
    #[default]
    Fail,
    Fallback,
}

/// `[serve.lua]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LuaConfig {
    pub on_error: LuaOnError,
    /// Memory budget per handler VM; zero is rejected at load.
    pub max_memory_kb: u64,
}

impl Default for LuaConfig {
    fn default() -> Self {
        LuaConfig {
            on_error: LuaOnError::Fail,
            max_memory_kb: 1024,
        }
    }
}

/// `[freshness]`: how old the newest recording may be (`max_age`; `warn_age` only warns) and
/// how much drift is tolerated (`max_drift`, a fraction). All unset by default: no SLA.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FreshnessConfig {
    #[serde(deserialize_with = "duration_text")]
    pub max_age: Option<String>,
    #[serde(deserialize_with = "duration_text")]
    pub warn_age: Option<String>,
    pub max_drift: Option<f64>,
}

/// A duration key as `wraith.toml` may write it: text (`"30d"`, `"3600"`), or a TOML integer,
/// which is seconds (`3600`). Kept as text: an integer becomes its digits, which
/// [`crate::duration::parse_duration`] reads as seconds. A negative integer is refused here,
/// naming the key (the caller adds it).
fn duration_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    struct Text;
    impl serde::de::Visitor<'_> for Text {
        type Value = Option<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a duration such as \"30d\", or a whole number of seconds")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Some(v.to_string()))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(v.to_string()))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            if v < 0 {
                return Err(E::custom(format!(
                    "`{v}` is negative: a duration is a whole number of seconds from 0 \
                     (`3600`) or text with a unit (\"30d\", \"12h\", \"90m\")"
                )));
            }
            Ok(Some(v.to_string()))
        }
    }
    d.deserialize_any(Text)
}

/// `[handlers]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HandlersConfig {
    /// What an unmarked authored deviation does to `wraith check`.
    pub deviation_policy: DeviationPolicy,
}

/// `[handlers] deviation_policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviationPolicy {
    /// An unmarked authored deviation fails the check (exit 2).
    #[default]
    Error,
    /// It is reported as a warning; the check passes on its scores alone.
    Warn,
}

/// One `[[deviations]]` entry as written: `route` (`METHOD /path`), `path` (`body.name`,
/// `status`) and `reason` are required, but checked by the consumer so every bad entry can be
/// reported with its number.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeviationEntry {
    pub route: Option<String>,
    pub path: Option<String>,
    pub reason: Option<String>,
}

/// `[diff]`: `wraith check` gates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiffConfig {
    pub required_score: f64,
    pub session_pass_rate: f64,
    pub scoring_version: u32,
    /// Extra response headers to ignore when comparing.
    pub ignore_headers: Vec<String>,
    pub split_variants: bool,
    pub thresholds: DiffThresholds,
    /// `[diff.overrides."METHOD /path"]`: per-route thresholds; an absent key inherits
    /// `[diff.thresholds]`.
    pub overrides: BTreeMap<String, ThresholdOverride>,
    /// `[diff.fields."<path>"]`: `classify`, `values`. Validated by `wraith check` and
    /// `wraith lint` (`wraith_check::rules`), so every bad entry can be named.
    pub fields: BTreeMap<String, FieldClassRule>,
    /// `[[diff.suppress]]`, validated like `fields`.
    pub suppress: Vec<SuppressRule>,
    /// `[[diff.tagged_union_policy]]`.
    pub tagged_union_policy: Vec<TaggedUnionPolicy>,
    /// 1-based line of the `[diff.thresholds]` table (0 when absent). Not part of the file.
    #[serde(skip)]
    pub thresholds_line: usize,
    /// 1-based line of `[diff] scoring_version` (0 when absent), so `wraith check` and
    /// `wraith lint` can point at an unsupported version. Not part of the file.
    #[serde(skip)]
    pub scoring_version_line: usize,
}

impl Default for DiffConfig {
    fn default() -> Self {
        DiffConfig {
            required_score: 0.90,
            session_pass_rate: 0.95,
            scoring_version: 1,
            ignore_headers: Vec::new(),
            split_variants: false,
            thresholds: DiffThresholds::default(),
            overrides: BTreeMap::new(),
            fields: BTreeMap::new(),
            suppress: Vec::new(),
            tagged_union_policy: Vec::new(),
            thresholds_line: 0,
            scoring_version_line: 0,
        }
    }
}

/// `[diff.thresholds]` (and each `[diff.overrides."…"]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiffThresholds {
    /// Removed upstream in v0.21 but still found in files; read and ignored by scoring.
    pub status_exact_match: bool,
    pub body_structure: f64,
    pub body_values: f64,
    pub symbol_consistency: f64,
    pub header_conformance: f64,
}

impl Default for DiffThresholds {
    fn default() -> Self {
        DiffThresholds {
            status_exact_match: true,
            body_structure: 0.90,
            body_values: 0.85,
            symbol_consistency: 1.0,
            header_conformance: 0.80,
        }
    }
}

/// One `[[diff.suppress]]` entry: a difference removed before scoring. `reason` is required,
/// but checked by the consumer (empty when absent) so every bad entry can be named.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuppressRule {
    #[serde(default)]
    pub route: String,
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub category: String,
    #[serde(default)]
    pub reason: String,
    /// 1-based line of the entry (0 when unknown). Not part of the file.
    #[serde(skip)]
    pub line: usize,
}

/// One `[diff.fields."<path>"]` entry as written: `classify` and, for `enum`, `values`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldClassRule {
    #[serde(default)]
    pub classify: String,
    #[serde(default)]
    pub values: Option<Vec<serde_json::Value>>,
    /// 1-based line of the entry (0 when unknown). Not part of the file.
    #[serde(skip)]
    pub line: usize,
}

/// One `[diff.overrides."METHOD /path"]` entry: the keys given replace `[diff.thresholds]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThresholdOverride {
    /// Removed upstream in v0.21; read and ignored.
    pub status_exact_match: Option<bool>,
    pub body_structure: Option<f64>,
    pub body_values: Option<f64>,
    pub symbol_consistency: Option<f64>,
    pub header_conformance: Option<f64>,
    /// 1-based line of the entry (0 when unknown). Not part of the file.
    #[serde(skip)]
    pub line: usize,
}

/// One `[[diff.tagged_union_policy]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaggedUnionPolicy {
    pub route: String,
    #[serde(default = "reject_unknown")]
    pub policy: String,
}

/// `[generate]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GenerateConfig {
    pub request_keying: RequestKeyingConfig,
    /// `[generate] run_gap`: a pause between two consecutive sessions' starts longer than this
    /// (a duration: `"1h"`, `"90m"`, `"2d"`) begins a new recording run, which synth compares
    /// with the earlier runs to find drift. Unset: one hour. A TOML integer is seconds.
    #[serde(deserialize_with = "duration_text")]
    pub run_gap: Option<String>,
}

impl GenerateConfig {
    /// `run_gap` in microseconds, as `wraith synth` takes it; `None` when unset (or invalid:
    /// [`TwinConfig::load`] refuses that).
    pub fn run_gap_us(&self) -> Option<u64> {
        let secs = crate::duration::parse_duration(self.run_gap.as_deref()?).ok()?;
        secs.checked_mul(1_000_000).filter(|us| *us > 0)
    }
}

/// `[generate.request_keying]`: which answer positions synth may key by a request field (one
/// recorded answer value per recorded value of the field, e.g. the memory a create's plan
/// decides).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RequestKeyingConfig {
    pub mode: RequestKeyingMode,
    /// `[[generate.request_keying.route]]` entries, in file order.
    pub route: Vec<RequestKeyingRoute>,
}

/// `[generate.request_keying] mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKeyingMode {
    /// No position is keyed.
    Off,
    /// Only the listed routes' listed fields.
    Manual,
    /// Conservative automatic detection, plus the listed fields. The default (the original
    /// product defaulted to `off`; detection is conservative and measured to raise
    /// conformance).
    #[default]
    Auto,
}

/// One `[[generate.request_keying.route]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestKeyingRoute {
    /// `METHOD /path` as `wraith synth` names the route (`POST /linode/instances`).
    pub route: String,
    /// Request fields as written: `$.a.b` for a JSON or form body field (see
    /// [`KeyingField::parse`]), `query.name` for a query parameter. Each is tried alone, in
    /// order; two or more are then tried together as one combined key (their values' tuple),
    /// so a field may be listed only once.
    pub fields: Vec<String>,
    /// 1-based line of the entry (0 when unknown). Not part of the file.
    #[serde(skip)]
    pub line: usize,
}

impl RequestKeyingRoute {
    /// The entry's fields, parsed (validated at load, so an error here is only for a
    /// hand-built config).
    pub fn parsed_fields(&self) -> Result<Vec<KeyingField>, String> {
        self.fields.iter().map(|f| KeyingField::parse(f)).collect()
    }
}

/// A request field a `[[generate.request_keying.route]]` entry lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyingField {
    /// A JSON or form body field: object keys and array indexes from the root
    /// (`$.region.id` is `["region", "id"]`; `$.items[0].type` is `["items", "0", "type"]`).
    Body { path: Vec<String> },
    /// A query parameter, by name (`query.page` is `page`).
    Query { name: String },
}

impl KeyingField {
    /// Parse a field as written. `query.NAME` is the query parameter `NAME` (the rest of the
    /// text, verbatim). Otherwise a body path: `$` followed by one or more `.key`, `[N]`
    /// (array index) or `["key"]` (a key holding dots, brackets or spaces) steps. The error
    /// says what is wrong and how to write it.
    pub fn parse(text: &str) -> Result<KeyingField, String> {
        const HOW: &str = "write `$.a.b` for a body field (`$.items[0].type`, `$[\"odd.key\"]`) \
                           or `query.name` for a query parameter";
        if let Some(name) = text.strip_prefix("query.") {
            if name.is_empty() {
                return Err(format!("`{text}` names no query parameter; {HOW}"));
            }
            return Ok(KeyingField::Query {
                name: name.to_string(),
            });
        }
        let Some(mut rest) = text.strip_prefix('$') else {
            return Err(format!("`{text}` is not a field; {HOW}"));
        };
        let mut path = Vec::new();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('.') {
                let end = after.find(['.', '[']).unwrap_or(after.len());
                let key = &after[..end];
                if key.is_empty() || key.contains([']', '"']) || key.contains(char::is_whitespace) {
                    return Err(format!("`{text}` has an empty or malformed key; {HOW}"));
                }
                path.push(key.to_string());
                rest = &after[end..];
            } else if let Some(after) = rest.strip_prefix("[\"") {
                let Some(end) = after.find("\"]") else {
                    return Err(format!("`{text}` has an unclosed `[\"`; {HOW}"));
                };
                path.push(after[..end].to_string());
                rest = &after[end + 2..];
            } else if let Some(after) = rest.strip_prefix('[') {
                let end = after.find(']').unwrap_or(after.len());
                let index = &after[..end];
                if end == after.len()
                    || index.is_empty()
                    || !index.bytes().all(|b| b.is_ascii_digit())
                {
                    return Err(format!(
                        "`{text}` has a bad array index `[{index}`: write `[0]`; {HOW}"
                    ));
                }
                path.push(index.to_string());
                rest = &after[end + 1..];
            } else {
                return Err(format!(
                    "`{text}` has `{rest}` where a step was expected; {HOW}"
                ));
            }
        }
        if path.is_empty() {
            return Err(format!("`{text}` names no field; {HOW}"));
        }
        Ok(KeyingField::Body { path })
    }
}

fn one() -> u32 {
    1
}
fn reject_unknown() -> String {
    "reject_unknown".to_string()
}

impl TwinConfig {
    /// Read and parse `<twin>/wraith.toml`.
    pub fn load(twin: &TwinDir) -> Result<TwinConfig, TwinError> {
        let path = twin.wraith_toml();
        let bytes = crate::read_file(&path).map_err(|source| TwinError::Io {
            path: path.clone(),
            source,
        })?;
        // Bytes that are not UTF-8 are a configuration to fix, not a failed read.
        let text = String::from_utf8(bytes).map_err(|e| TwinError::Config {
            path: path.clone(),
            line: line_of(
                &String::from_utf8_lossy(e.as_bytes()),
                e.utf8_error().valid_up_to(),
            ),
            message: format!(
                "not UTF-8 text (first bad byte at offset {}); save the file as UTF-8",
                e.utf8_error().valid_up_to()
            ),
        })?;
        Self::parse(&text, &path)
    }

    /// Parse `wraith.toml` text; `path` is used in messages only.
    pub fn parse(text: &str, path: &Path) -> Result<TwinConfig, TwinError> {
        let doc = toml_edit::Document::parse(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(0);
            let message = first_line(e.message());
            TwinError::Config {
                path: path.to_path_buf(),
                line,
                message: explain_duplicate(&message, text, line),
            }
        })?;
        // Strip unknown keys first so they warn instead of failing `deny_unknown_fields` (which is
        // there so a key in a wrong place inside a known table is still reported precisely).
        let mut warnings = Vec::new();
        let mut known = toml::Table::new();
        filter_known(
            doc.as_table(),
            &schema(),
            "",
            text,
            path,
            &mut known,
            &mut warnings,
        );
        let known_text = toml::to_string(&known).map_err(|e| TwinError::Config {
            path: path.to_path_buf(),
            line: 0,
            message: e.to_string(),
        })?;
        let mut cfg: TwinConfig = toml::from_str(&known_text).map_err(|e| {
            // Spans refer to the filtered text; map them back through the key they name.
            let message = plain_tables(&plain_number_ranges(&first_line(e.message())));
            let key = e.span().and_then(|s| key_at(&known_text, s.start));
            let line = key
                .as_deref()
                .and_then(|k| find_key_line(&doc, text, k))
                .unwrap_or(0);
            // Name the key too: a line number alone makes the reader open the file to find it.
            let message = match key {
                Some(k) if !k.is_empty() => format!("`{k}`: {message}"),
                _ => message,
            };
            TwinError::Config {
                path: path.to_path_buf(),
                line,
                message,
            }
        })?;
        if let Some(item) = doc.get("serve").and_then(|s| s.get("fidelity"))
            && item.as_str() == Some("permissive")
        {
            warnings.push(ConfigWarning {
                path: path.to_path_buf(),
                line: find_key_line(&doc, text, "serve.fidelity").unwrap_or(0),
                key: "serve.fidelity".to_string(),
                message: "`permissive` is deprecated; it means `fuzzy`, write that instead"
                    .to_string(),
            });
        }
        cfg.validate(&doc, text, path)?;
        cfg.diff.fill_lines(&doc, text);
        cfg.generate.request_keying.fill_lines(&doc, text);
        if cfg.generate.request_keying.mode == RequestKeyingMode::Manual
            && cfg.generate.request_keying.route.is_empty()
        {
            warnings.push(ConfigWarning {
                path: path.to_path_buf(),
                line: find_key_line(&doc, text, "generate.request_keying.mode").unwrap_or(0),
                key: "generate.request_keying.mode".to_string(),
                message: "`manual` with no `[[generate.request_keying.route]]` entry keys \
                          nothing; list routes and fields, or write `off`"
                    .to_string(),
            });
        }
        if cfg.service.user_agent.is_some() {
            warnings.push(ConfigWarning {
                path: path.to_path_buf(),
                line: find_key_line(&doc, text, "service.user_agent").unwrap_or(0),
                key: "service.user_agent".to_string(),
                message: "not read: wraith sends the API no request of its own (`record` \
                          forwards the client's User-Agent, `check` replays the recorded one); \
                          remove the key"
                    .to_string(),
            });
        }
        cfg.warnings = warnings;
        Ok(cfg)
    }

    fn validate(
        &self,
        doc: &toml_edit::Document<&str>,
        text: &str,
        path: &Path,
    ) -> Result<(), TwinError> {
        let err = |key: &str, message: String| TwinError::Config {
            path: path.to_path_buf(),
            line: find_key_line(doc, text, key).unwrap_or(0),
            message: format!("`{key}`: {message}"),
        };
        if self.schema_version != 1 {
            let why = if self.schema_version > 1 {
                "a newer wraith wrote this file: use that wraith, or set `schema_version = 1` if \
                 the number was changed by hand"
            } else {
                "set `schema_version = 1`"
            };
            return Err(err(
                "schema_version",
                format!(
                    "{} is not a version this wraith reads (it reads 1); {why}",
                    self.schema_version
                ),
            ));
        }
        if self.service.name.trim().is_empty() {
            return Err(err("service.name", "must not be empty".to_string()));
        }
        if let Err(m) = validate_base_url(&self.service.base_url) {
            return Err(err("service.base_url", m));
        }
        if let Err(m) = validate_clock_epoch(i128::from(self.serve.clock.base_epoch)) {
            return Err(err("serve.clock.base_epoch", m));
        }
        if self.serve.limits.max_namespaces == 0 {
            return Err(err(
                "serve.limits.max_namespaces",
                "must be at least 1: it is how many sessions the twin holds at once, and 0 \
                 would refuse every one; remove the key for the default of 1000"
                    .to_string(),
            ));
        }
        if self.serve.limits.max_pending_body_mb < MAX_REQUEST_BODY_MB {
            return Err(err(
                "serve.limits.max_pending_body_mb",
                format!(
                    "must be at least {MAX_REQUEST_BODY_MB}: it bounds every request body the \
                     twin holds at once, and one body may take {MAX_REQUEST_BODY_MB} MiB; \
                     remove the key for the default of 256"
                ),
            ));
        }
        if self.proxy.upstream_timeout_ms == 0 {
            return Err(err(
                "proxy.upstream_timeout_ms",
                "must be at least 1: it is how long `wraith record` waits for the upstream to \
                 start answering, and 0 would give up on every request; remove the key for the \
                 default of 60000"
                    .to_string(),
            ));
        }
        if self.serve.limits.request_idle_timeout_ms == 0 {
            return Err(err(
                "serve.limits.request_idle_timeout_ms",
                "must be at least 1: it is how long the twin waits for the rest of a request, and \
                 0 would give up on every client; remove the key for the default of 30000"
                    .to_string(),
            ));
        }
        let idem = &self.serve.idempotency;
        if let Err(m) = validate_header_name(&idem.header) {
            return Err(err(
                "serve.idempotency.header",
                format!(
                    "{m}; it names the request header carrying the idempotency key, e.g. \
                     `Idempotency-Key` (the default, when the key is removed)"
                ),
            ));
        }
        if idem.ttl_seconds == 0 {
            return Err(err(
                "serve.idempotency.ttl_seconds",
                "must be at least 1: it is how long a keyed answer is replayed, and 0 would \
                 replay nothing; remove the key for the default of 86400 (one day), or set \
                 `enabled = false`"
                    .to_string(),
            ));
        }
        if self.serve.lua.max_memory_kb == 0 {
            return Err(err(
                "serve.lua.max_memory_kb",
                "must be greater than zero (it is the memory budget of a handler)".to_string(),
            ));
        }
        self.generate.request_keying.validate(doc, text, path)?;
        if let Some(gap) = &self.generate.run_gap {
            match crate::duration::parse_duration(gap) {
                Err(m) => return Err(err("generate.run_gap", m)),
                Ok(0) => {
                    return Err(err(
                        "generate.run_gap",
                        "must be longer than zero (every session would be a run of its own); \
                         remove the key for the default of one hour"
                            .to_string(),
                    ));
                }
                Ok(secs) if secs.checked_mul(1_000_000).is_none() => {
                    return Err(err("generate.run_gap", format!("`{gap}` is too long")));
                }
                Ok(_) => {}
            }
        }
        for (key, v) in [
            ("diff.required_score", self.diff.required_score),
            ("diff.session_pass_rate", self.diff.session_pass_rate),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(err(key, format!("must be between 0 and 1, got {v}")));
            }
        }
        Ok(())
    }
}

impl DiffConfig {
    /// Record where each `[diff]` entry starts, for messages that name it.
    fn fill_lines(&mut self, doc: &toml_edit::Document<&str>, text: &str) {
        let Some(diff) = doc.get("diff").and_then(|d| d.as_table_like()) else {
            return;
        };
        let span_line =
            |span: Option<std::ops::Range<usize>>| span.map_or(0, |s| line_of(text, s.start));
        match diff.get("suppress") {
            Some(toml_edit::Item::ArrayOfTables(a)) => {
                for (rule, t) in self.suppress.iter_mut().zip(a.iter()) {
                    rule.line = span_line(t.span());
                }
            }
            Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => {
                for (rule, v) in self.suppress.iter_mut().zip(a.iter()) {
                    rule.line = span_line(v.span());
                }
            }
            _ => {}
        }
        let key_line = |table: &str, key: &str| {
            diff.get(table)
                .and_then(|t| t.as_table_like())
                .and_then(|t| t.key(key))
                .and_then(|k| k.span())
                .map_or(0, |s| line_of(text, s.start))
        };
        for (k, f) in &mut self.fields {
            f.line = key_line("fields", k);
        }
        for (k, o) in &mut self.overrides {
            o.line = key_line("overrides", k);
        }
        self.thresholds_line = diff
            .key("thresholds")
            .and_then(|k| k.span())
            .map_or(0, |s| line_of(text, s.start));
        self.scoring_version_line = diff
            .key("scoring_version")
            .and_then(|k| k.span())
            .map_or(0, |s| line_of(text, s.start));
    }
}

impl RequestKeyingConfig {
    /// The `[[generate.request_keying.route]]` entries as the document holds them (tables or
    /// inline tables), for their lines.
    fn entry_items<'d>(doc: &'d toml_edit::Document<&str>) -> Vec<&'d dyn toml_edit::TableLike> {
        let routes = doc
            .get("generate")
            .and_then(|g| g.get("request_keying"))
            .and_then(|k| k.get("route"));
        match routes {
            Some(toml_edit::Item::ArrayOfTables(a)) => {
                a.iter().map(|t| t as &dyn toml_edit::TableLike).collect()
            }
            Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => a
                .iter()
                .filter_map(|v| v.as_inline_table())
                .map(|t| t as &dyn toml_edit::TableLike)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Every entry's route must be `METHOD /path` and list at least one well-formed field; the
    /// error names the entry's line (of `fields` for a bad field).
    fn validate(
        &self,
        doc: &toml_edit::Document<&str>,
        text: &str,
        path: &Path,
    ) -> Result<(), TwinError> {
        let items = Self::entry_items(doc);
        for (i, entry) in self.route.iter().enumerate() {
            let item = items.get(i);
            let line_of_key = |key: &str| {
                item.and_then(|t| t.key(key))
                    .and_then(|k| k.span())
                    .map(|s| line_of(text, s.start))
                    .or_else(|| find_key_line(doc, text, "generate.request_keying.route"))
                    .unwrap_or(0)
            };
            let err = |key: &str, message: String| TwinError::Config {
                path: path.to_path_buf(),
                line: line_of_key(key),
                message: format!(
                    "[[generate.request_keying.route]] entry {}: `{key}`: {message}",
                    i + 1
                ),
            };
            let route_ok = entry
                .route
                .trim()
                .split_once(char::is_whitespace)
                .is_some_and(|(m, p)| {
                    !m.is_empty()
                        && m.bytes().all(|b| b.is_ascii_alphabetic())
                        && p.trim().starts_with('/')
                });
            if !route_ok {
                return Err(err(
                    "route",
                    format!(
                        "`{}` is not a route; write `METHOD /path` as `wraith synth` names it, \
                         e.g. `POST /linode/instances` or `GET /accounts/:param`",
                        entry.route
                    ),
                ));
            }
            if entry.fields.is_empty() {
                return Err(err(
                    "fields",
                    "lists no field; write e.g. `fields = [\"$.type\"]`".to_string(),
                ));
            }
            let mut parsed: Vec<(&str, KeyingField)> = Vec::new();
            for f in &entry.fields {
                let field = KeyingField::parse(f).map_err(|m| err("fields", m))?;
                // Listed together the fields are one combined key: a field twice is a typo,
                // never a different key.
                if let Some((first, _)) = parsed.iter().find(|(_, p)| *p == field) {
                    return Err(err(
                        "fields",
                        format!(
                            "`{f}` names the same request field as `{first}` listed before it; \
                             list each field once"
                        ),
                    ));
                }
                parsed.push((f, field));
            }
        }
        Ok(())
    }

    fn fill_lines(&mut self, doc: &toml_edit::Document<&str>, text: &str) {
        let items = Self::entry_items(doc);
        for (entry, item) in self.route.iter_mut().zip(items) {
            entry.line = item
                .key("route")
                .and_then(|k| k.span())
                .map_or(0, |s| line_of(text, s.start));
        }
    }
}

/// Check that `name` is an HTTP header name (an RFC 9110 token: letters, digits and
/// ``!#$%&'*+-.^_`|~``); the error says what is wrong.
pub fn validate_header_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("is empty, which names no header".to_string());
    }
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    match name.chars().find(|&c| !tchar(c)) {
        None => Ok(()),
        Some(c) => Err(format!(
            "`{name}` is not a header name: {c:?} cannot appear in one (letters, digits and \
             !#$%&'*+-.^_`|~ only)"
        )),
    }
}

/// Check that `url` is an absolute `http`/`https` URL with a host; the error says what is wrong.
pub fn validate_base_url(url: &str) -> Result<(), String> {
    let rest = if let Some(r) = url.strip_prefix("http://") {
        r
    } else if let Some(r) = url.strip_prefix("https://") {
        r
    } else {
        return Err(format!(
            "`{url}` is not an http(s) URL; write it like `https://api.example.com/v1`"
        ));
    };
    if let Some(c) = url.chars().find(|c| c.is_control() || c.is_whitespace()) {
        return Err(format!(
            "`{}` holds {c:?}, which no URL can carry; write a space as `%20`",
            url.escape_debug()
        ));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() {
        return Err(format!(
            "`{url}` has no host; write it like `https://api.example.com/v1`"
        ));
    }
    if let Some((_, host)) = authority.rsplit_once('@') {
        // Never repeat the credentials in a message: it may end up in a CI log.
        let scheme = &url[..url.len() - rest.len()];
        let shown = format!("{scheme}…@{host}{}", &rest[authority.len()..]);
        return Err(format!(
            "`{shown}` carries credentials before `@`, and the base URL is written into \
             wraith.toml; remove them (write `{scheme}{host}`): the client sends its own \
             credentials through `wraith record`, which tokenizes them (scrub.toml) before \
             anything is written"
        ));
    }
    // The port, when given: after `]` for a bracketed IPv6 host, else after the last `:`.
    let port = match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((_, "")) => None,
            Some((_, after)) => match after.strip_prefix(':') {
                Some(p) => Some(p),
                None => {
                    return Err(format!(
                        "`{url}` has text after its bracketed IPv6 host; write it like \
                         `http://[::1]:8080`"
                    ));
                }
            },
            None => {
                return Err(format!(
                    "`{url}` opens an IPv6 host with `[` but never closes it with `]`"
                ));
            }
        },
        None => authority.rsplit_once(':').map(|(_, p)| p),
    };
    if let Some(p) = port
        && !matches!(p.parse::<u16>(), Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(format!(
            "`{url}` has port `{p}`; a port is a number from 1 to 65535 (or leave it out for the \
             scheme's default)"
        ));
    }
    if rest.contains(['?', '#']) {
        return Err(format!("`{url}` must not carry a query or fragment"));
    }
    let host = match authority.strip_prefix('[') {
        Some(_) => None,
        None => Some(authority.rsplit_once(':').map_or(authority, |(h, _)| h)),
    };
    if let Some(host) = host {
        check_host(url, host)?;
    }
    let path = &rest[authority.len()..];
    if path
        .split('/')
        .any(|seg| matches!(seg, "." | "..") || seg.eq_ignore_ascii_case("%2e%2e"))
    {
        return Err(format!(
            "`{url}` has a dot segment (`.` or `..`) in its path, which a client resolves away; \
             write the path it stands for"
        ));
    }
    let bytes = path.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'%'
            && !(bytes.get(i + 1..i + 3)).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
        {
            return Err(format!(
                "`{url}` has a `%` that starts no escape; a `%` is followed by two hex digits \
                 (`%20`), and a literal one is `%25`"
            ));
        }
    }
    let path_char = |c: char| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/%".contains(c);
    if let Some(c) = path.chars().find(|c| !path_char(*c)) {
        return Err(format!(
            "`{url}` has {c:?} in its path, which a URL carries only percent-encoded (`%{:02X}` \
             for an ASCII one)",
            u32::from(c).min(0xFF)
        ));
    }
    Ok(())
}

/// A base URL's host: an IPv4 address written in full (`127.0.0.1`), or a name whose dot-separated
/// labels are letters, digits, `-` and `_`, none empty (a trailing dot, a fully qualified
/// name, is allowed).
fn check_host(url: &str, host: &str) -> Result<(), String> {
    let name = host.strip_suffix('.').unwrap_or(host);
    if name.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return match name.parse::<std::net::Ipv4Addr>() {
            Ok(_) => Ok(()),
            Err(_) => Err(format!(
                "`{url}` has host `{host}`, which is no IPv4 address (four numbers from 0 to 255)"
            )),
        };
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if !name.split('.').all(label_ok) {
        return Err(format!(
            "`{url}` has host `{host}`, which is not a host name (labels of letters, digits and \
             `-`, separated by single dots)"
        ));
    }
    Ok(())
}

/// What keys each known table accepts. `Open` tables take any key (maps keyed by the user).
enum Shape {
    Leaf,
    Table(Vec<(&'static str, Shape)>),
    Open,
}

fn schema() -> Shape {
    use Shape::*;
    let leaves = |keys: &[&'static str]| Table(keys.iter().map(|k| (*k, Leaf)).collect());
    let thresholds = || {
        leaves(&[
            "status_exact_match",
            "body_structure",
            "body_values",
            "symbol_consistency",
            "header_conformance",
        ])
    };
    Table(vec![
        ("schema_version", Leaf),
        (
            "service",
            leaves(&["name", "base_url", "spec", "user_agent"]),
        ),
        ("proxy", leaves(&["port", "mode", "upstream_timeout_ms"])),
        (
            "serve",
            Table(vec![
                ("port", Leaf),
                ("session_mode", Leaf),
                ("fidelity", Leaf),
                ("deterministic_seed", Leaf),
                ("debug", Leaf),
                ("strip_headers", Leaf),
                ("rewrite_self_urls", Leaf),
                ("provenance_headers", Leaf),
                ("unknown_entity", Leaf),
                (
                    "latency",
                    leaves(&["mode", "min_ms", "max_ms", "multiplier"]),
                ),
                (
                    "limits",
                    leaves(&[
                        "max_namespaces",
                        "max_entities_per_type",
                        "max_total_state_mb",
                        "max_twin_state_mb",
                        "max_pending_body_mb",
                        "request_drain_timeout_ms",
                        "request_idle_timeout_ms",
                    ]),
                ),
                ("rate_limits", Open),
                ("clock", leaves(&["mode", "base_epoch"])),
                ("idempotency", leaves(&["enabled", "header", "ttl_seconds"])),
                ("lua", leaves(&["on_error", "max_memory_kb"])),
            ]),
        ),
        ("handlers", leaves(&["deviation_policy"])),
        (
            "generate",
            Table(vec![
                ("request_keying", leaves(&["mode", "route"])),
                ("run_gap", Leaf),
            ]),
        ),
        ("freshness", leaves(&["max_age", "warn_age", "max_drift"])),
        ("deviations", Leaf),
        (
            "diff",
            Table(vec![
                ("required_score", Leaf),
                ("session_pass_rate", Leaf),
                ("scoring_version", Leaf),
                ("ignore_headers", Leaf),
                ("split_variants", Leaf),
                ("thresholds", thresholds()),
                ("overrides", Open),
                ("fields", Open),
                ("suppress", Leaf),
                ("tagged_union_policy", Leaf),
            ]),
        ),
    ])
}

/// Copy the keys of `table` that `shape` knows into `out`; record the others as warnings.
fn filter_known(
    table: &dyn toml_edit::TableLike,
    shape: &Shape,
    prefix: &str,
    text: &str,
    path: &Path,
    out: &mut toml::Table,
    warnings: &mut Vec<ConfigWarning>,
) {
    let Shape::Table(fields) = shape else { return };
    for (key, item) in table.iter() {
        let dotted = if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}.{key}")
        };
        match fields.iter().find(|(k, _)| *k == key) {
            None => {
                let line = table
                    .key(key)
                    .and_then(|k| k.span())
                    .map(|s| line_of(text, s.start))
                    .unwrap_or(0);
                warnings.push(ConfigWarning {
                    path: path.to_path_buf(),
                    line,
                    key: dotted,
                    message: "unknown key, ignored (not read by this version of wraith)"
                        .to_string(),
                });
            }
            Some((_, sub @ Shape::Table(_))) => {
                if let Some(t) = item.as_table_like() {
                    let mut inner = toml::Table::new();
                    filter_known(t, sub, &dotted, text, path, &mut inner, warnings);
                    out.insert(key.to_string(), toml::Value::Table(inner));
                } else if let Some(v) = item_to_value(item) {
                    // Wrong type: keep it so deserialization reports it with its line.
                    out.insert(key.to_string(), v);
                }
            }
            Some(_) => {
                if let Some(v) = item_to_value(item) {
                    out.insert(key.to_string(), v);
                }
            }
        }
    }
}

/// Convert a toml_edit item to a plain `toml::Value` by re-parsing its text form.
fn item_to_value(item: &toml_edit::Item) -> Option<toml::Value> {
    match item {
        toml_edit::Item::None => None,
        toml_edit::Item::Value(v) => {
            let s = format!("x = {}", v.to_string().trim());
            toml::from_str::<toml::Table>(&s).ok()?.remove("x")
        }
        toml_edit::Item::Table(t) => {
            let mut doc = toml_edit::DocumentMut::new();
            for (k, v) in t.iter() {
                doc.insert(k, v.clone());
            }
            toml::from_str::<toml::Table>(&doc.to_string())
                .ok()
                .map(toml::Value::Table)
        }
        toml_edit::Item::ArrayOfTables(a) => {
            let mut doc = toml_edit::DocumentMut::new();
            doc.insert("x", toml_edit::Item::ArrayOfTables(a.clone()));
            toml::from_str::<toml::Table>(&doc.to_string())
                .ok()?
                .remove("x")
        }
    }
}

/// 1-based line of byte offset `pos` in `text`.
fn line_of(text: &str, pos: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(pos.min(text.len()))
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}

/// A type error's Rust integer type (`expected u16`) in the words and range a reader of
/// `wraith.toml` needs: `expected a whole number from 0 to 65535`.
fn plain_number_ranges(message: &str) -> String {
    const RANGES: [(&str, &str); 8] = [
        ("u8", "from 0 to 255"),
        ("u16", "from 0 to 65535"),
        ("u32", "from 0 to 4294967295"),
        ("u64", "of 0 or more"),
        ("usize", "of 0 or more"),
        ("i32", "from -2147483648 to 2147483647"),
        ("i64", "(negative allowed)"),
        ("isize", "(negative allowed)"),
    ];
    for (ty, range) in RANGES {
        let jargon = format!("expected {ty}");
        if let Some(at) = message.find(&jargon)
            && !message[at + jargon.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
        {
            let mut out = message.to_string();
            out.replace_range(
                at..at + jargon.len(),
                &format!("expected a whole number {range}"),
            );
            return out;
        }
    }
    message.to_string()
}

/// The parser's bare "duplicate key" with what was written twice: a table header (`[diff]`
/// twice, first at line 61) or a key set twice in one table.
fn explain_duplicate(message: &str, text: &str, line: usize) -> String {
    if message != "duplicate key" || line == 0 {
        return message.to_string();
    }
    let here = text.lines().nth(line - 1).unwrap_or("").trim();
    if let Some(header) = here.strip_prefix('[').and_then(|h| h.split(']').next()) {
        let first = text
            .lines()
            .position(|l| {
                l.trim().strip_prefix('[').and_then(|h| h.split(']').next()) == Some(header)
            })
            .map(|i| i + 1)
            .filter(|&i| i < line);
        return match first {
            Some(first) => format!(
                "`[{header}]` appears twice (first at line {first}); put its keys in one table"
            ),
            None => format!("`[{header}]` is defined twice; put its keys in one table"),
        };
    }
    let key = here.split('=').next().unwrap_or("").trim();
    if key.is_empty() {
        return message.to_string();
    }
    format!("`{key}` is set twice in the same table; keep one")
}

/// A type error's Rust struct name (`expected struct ThresholdOverride`) as what to write:
/// a table, with its keys where one table is meant.
fn plain_tables(message: &str) -> String {
    const JARGON: &str = "expected struct ";
    let Some(at) = message.find(JARGON) else {
        return message.to_string();
    };
    let rest = &message[at + JARGON.len()..];
    let name_len = rest
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(rest.len());
    let words = match &rest[..name_len] {
        "ThresholdOverride" => {
            "expected a table of thresholds (`body_structure`, `body_values`, \
             `symbol_consistency`, `header_conformance`, each 0 to 1), e.g. \
             `[diff.overrides.\"GET /customers\"]` then `body_structure = 0.99`"
        }
        _ => "expected a table (a `[section]` of keys)",
    };
    let mut out = message.to_string();
    out.replace_range(at..at + JARGON.len() + name_len, words);
    out
}

/// The dotted key whose value starts on the line holding `pos` in the filtered text.
fn key_at(known_text: &str, pos: usize) -> Option<String> {
    let mut table = String::new();
    let mut offset = 0;
    for line in known_text.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            table = trimmed
                .trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                .to_string();
        }
        if pos >= offset && pos < offset + line.len() {
            let key = trimmed.split('=').next().unwrap_or("").trim();
            if trimmed.starts_with('[') || key.is_empty() {
                return Some(table);
            }
            return Some(if table.is_empty() {
                key.to_string()
            } else {
                format!("{table}.{key}")
            });
        }
        offset += line.len();
    }
    None
}

/// Line of a dotted key in the original document (the deepest part of it that exists).
fn find_key_line(doc: &toml_edit::Document<&str>, text: &str, dotted: &str) -> Option<usize> {
    let mut table: &dyn toml_edit::TableLike = doc.as_table();
    let mut line = None;
    for part in dotted.split('.') {
        let part = part.trim_matches('"');
        let key = table.key(part)?;
        if let Some(span) = key.span() {
            line = Some(line_of(text, span.start));
        }
        match table.get(part).and_then(|i| i.as_table_like()) {
            Some(t) => table = t,
            None => break,
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo_path() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora/wraith-demo")
    }

    #[test]
    fn an_integer_out_of_range_is_told_in_numbers_not_rust_types() {
        let text =
            "[service]\nname = \"x\"\nbase_url = \"https://a.example\"\n\n[serve]\nport = 70000\n";
        let e = TwinConfig::parse(text, Path::new("wraith.toml")).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("a whole number from 0 to 65535"), "{msg}");
        assert!(!msg.contains("u16"), "{msg}");
        assert!(msg.contains("wraith.toml:6"), "{msg}");
        assert_eq!(plain_number_ranges("expected u64x"), "expected u64x");
        let twice = "[diff]\nrequired_score = 0.5\n\n[diff]\nsession_pass_rate = 0.5\n";
        assert_eq!(
            explain_duplicate("duplicate key", twice, 4),
            "`[diff]` appears twice (first at line 1); put its keys in one table"
        );
        let key_twice = "[diff]\nrequired_score = 0.5\nrequired_score = 0.6\n";
        assert_eq!(
            explain_duplicate("duplicate key", key_twice, 3),
            "`required_score` is set twice in the same table; keep one"
        );
        assert!(
            plain_tables("invalid type: float `0.5`, expected struct ThresholdOverride")
                .ends_with("then `body_structure = 0.99`"),
        );
        assert_eq!(
            plain_tables("invalid type: string \"x\", expected struct Other"),
            "invalid type: string \"x\", expected a table (a `[section]` of keys)"
        );
    }

    #[test]
    fn loads_demo_twin_config_with_unknown_keys_as_warnings() {
        let cfg = TwinConfig::load(&TwinDir::at(demo_path())).unwrap();
        assert_eq!(cfg.service.name, "wraith-demo");
        assert_eq!(cfg.service.base_url, "http://127.0.0.1:18080");
        assert_eq!(cfg.serve.fidelity, Fidelity::Synth);
        assert_eq!(cfg.serve.deterministic_seed, 42);
        assert_eq!(cfg.serve.unknown_entity, UnknownEntity::Synthesize);
        assert_eq!(cfg.diff.required_score, 0.9);
        let keys: Vec<_> = cfg.warnings.iter().map(|w| w.key.as_str()).collect();
        // `[generate]` is read for `request_keying` only; its other keys still warn.
        assert!(keys.contains(&"generate.max_iterations"), "{keys:?}");
        assert!(keys.contains(&"generate.llm"), "{keys:?}");
        assert!(
            !keys
                .iter()
                .any(|k| k.starts_with("generate.request_keying")),
            "{keys:?}"
        );
        assert_eq!(cfg.generate.request_keying.mode, RequestKeyingMode::Off);
        assert!(
            cfg.warnings.iter().all(|w| w.line > 0),
            "{:?}",
            cfg.warnings
        );
    }

    #[test]
    fn minimal_config_gets_documented_defaults() {
        let text = "[service]\nname = \"x\"\nbase_url = \"https://api.example.com/v1\"\n";
        let cfg = TwinConfig::parse(text, Path::new("wraith.toml")).unwrap();
        assert_eq!(cfg.schema_version, 1);
        let newer = TwinConfig::parse(
            "schema_version = 2\n[service]\nname = \"x\"\nbase_url = \"http://h\"\n",
            Path::new("wraith.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            newer.contains("wraith.toml:1") && newer.contains("`schema_version`: 2"),
            "{newer}"
        );
        assert_eq!(cfg.proxy.port, 8080);
        assert_eq!(cfg.proxy.mode, ProxyMode::Reverse);
        assert_eq!(cfg.proxy.upstream_timeout_ms, 60_000);
        assert_eq!(cfg.serve.port, 8081);
        assert!(cfg.serve.strip_headers && cfg.serve.rewrite_self_urls);
        assert!(cfg.serve.provenance_headers && !cfg.serve.debug);
        assert_eq!(cfg.serve.limits.max_namespaces, 1000);
        assert_eq!(cfg.serve.limits.max_entities_per_type, 10000);
        assert_eq!(cfg.serve.limits.max_total_state_mb, 100);
        assert_eq!(cfg.serve.limits.request_drain_timeout_ms, 5000);
        assert_eq!(cfg.serve.limits.request_idle_timeout_ms, 30_000);
        assert_eq!(cfg.serve.clock.mode, ClockMode::Real);
        assert_eq!(cfg.serve.clock.base_epoch, 1_640_995_200);
        assert!(!cfg.serve.idempotency.enabled);
        assert_eq!(cfg.serve.idempotency.header, "Idempotency-Key");
        assert_eq!(cfg.serve.idempotency.ttl_seconds, 86400);
        assert_eq!(cfg.serve.lua.on_error, LuaOnError::Fail);
        assert_eq!(cfg.serve.lua.max_memory_kb, 1024);
        assert_eq!(cfg.diff.session_pass_rate, 0.95);
        assert!(cfg.diff.ignore_headers.is_empty());
        assert!(cfg.warnings.is_empty());
    }

    #[test]
    fn a_schema_version_not_1_says_how_to_fix_it() {
        let refused = |v: u32| {
            TwinConfig::parse(
                &format!(
                    "schema_version = {v}\n[service]\nname = \"x\"\nbase_url = \"http://h\"\n"
                ),
                Path::new("wraith.toml"),
            )
            .unwrap_err()
            .to_string()
        };
        let newer = refused(2);
        assert!(newer.contains("a newer wraith wrote this file"), "{newer}");
        let older = refused(0);
        assert!(older.contains("set `schema_version = 1`"), "{older}");
        assert!(!older.contains("newer"), "{older}");
    }

    #[test]
    fn a_duration_written_as_a_toml_integer_is_seconds_and_a_negative_one_is_refused() {
        let base = "[service]\nname = \"x\"\nbase_url = \"http://h\"\n";
        let text = format!(
            "{base}[freshness]\nmax_age = 3600\nwarn_age = \"60\"\n[generate]\nrun_gap = 90\n"
        );
        let cfg = TwinConfig::parse(&text, Path::new("wraith.toml")).unwrap();
        assert_eq!(cfg.freshness.max_age.as_deref(), Some("3600"));
        assert_eq!(cfg.freshness.warn_age.as_deref(), Some("60"));
        assert_eq!(cfg.generate.run_gap_us(), Some(90_000_000));
        let text = format!("{base}[freshness]\nmax_age = -3600\n");
        let err = TwinConfig::parse(&text, Path::new("wraith.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("wraith.toml:5")
                && err.contains("max_age")
                && err.contains("`-3600` is negative"),
            "{err}"
        );
        let text = format!("{base}[freshness]\nmax_age = 1.5\n");
        let err = TwinConfig::parse(&text, Path::new("wraith.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("a whole number of seconds"), "{err}");
    }

    #[test]
    fn permissive_fidelity_loads_as_fuzzy_with_warning() {
        let text = "[service]\nname = \"x\"\nbase_url = \"http://h\"\n[serve]\nfidelity = \"permissive\"\n";
        let cfg = TwinConfig::parse(text, Path::new("wraith.toml")).unwrap();
        assert_eq!(cfg.serve.fidelity, Fidelity::Fuzzy);
        assert_eq!(cfg.warnings.len(), 1);
        assert_eq!(cfg.warnings[0].line, 5);
    }

    #[test]
    fn a_user_agent_is_warned_of_as_not_read() {
        let text = "[service]\nname = \"x\"\nbase_url = \"http://h\"\nuser_agent = \"me/1\"\n";
        let cfg = TwinConfig::parse(text, Path::new("wraith.toml")).unwrap();
        assert_eq!(cfg.warnings.len(), 1);
        assert_eq!(cfg.warnings[0].key, "service.user_agent");
        assert_eq!(cfg.warnings[0].line, 4);
        assert!(cfg.warnings[0].message.starts_with("not read"));
    }

    #[test]
    fn bad_value_error_names_file_line_and_key() {
        let text = "[service]\nname = \"x\"\nbase_url = \"http://h\"\n\n[serve]\nport = 1\nfidelity = \"loose\"\n";
        let err = TwinConfig::parse(text, Path::new("t/wraith.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("t/wraith.toml:7:"), "{err}");
        assert!(err.contains("loose"), "{err}");
    }

    #[test]
    fn run_gap_is_read_as_microseconds_and_a_bad_or_zero_gap_names_its_line() {
        let head = "[service]\nname = \"x\"\nbase_url = \"http://h\"\n[generate]\n";
        let cfg = TwinConfig::parse(head, Path::new("wraith.toml")).unwrap();
        assert_eq!(cfg.generate.run_gap_us(), None);
        let cfg = TwinConfig::parse(
            &format!("{head}run_gap = \"90m\"\n"),
            Path::new("wraith.toml"),
        )
        .unwrap();
        assert_eq!(cfg.generate.run_gap_us(), Some(5_400_000_000));
        assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
        for (bad, says) in [("soon", "not a duration"), ("0h", "longer than zero")] {
            let err = TwinConfig::parse(
                &format!("{head}run_gap = \"{bad}\"\n"),
                Path::new("t/wraith.toml"),
            )
            .unwrap_err()
            .to_string();
            assert!(err.starts_with("t/wraith.toml:5:"), "{err}");
            assert!(
                err.contains("generate.run_gap") && err.contains(says),
                "{err}"
            );
        }
    }

    #[test]
    fn missing_base_url_is_an_error_naming_it() {
        let text = "[service]\nname = \"x\"\n";
        let err = TwinConfig::parse(text, Path::new("wraith.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("base_url"), "{err}");
    }

    #[test]
    fn invalid_base_url_and_zero_lua_memory_rejected() {
        let text = "[service]\nname = \"x\"\nbase_url = \"ftp://h\"\n";
        let err = TwinConfig::parse(text, Path::new("wraith.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("wraith.toml:3:") && err.contains("service.base_url"),
            "{err}"
        );
        let text =
            "[service]\nname = \"x\"\nbase_url = \"http://h\"\n[serve.lua]\nmax_memory_kb = 0\n";
        let err = TwinConfig::parse(text, Path::new("wraith.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(":5:") && err.contains("max_memory_kb"),
            "{err}"
        );
    }

    #[test]
    fn a_zero_upstream_timeout_is_refused_naming_its_line() {
        let text =
            "[service]\nname = \"x\"\nbase_url = \"http://h\"\n[proxy]\nupstream_timeout_ms = 0\n";
        let err = TwinConfig::parse(text, Path::new("wraith.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(":5:") && err.contains("upstream_timeout_ms") && err.contains("60000"),
            "{err}"
        );
        let text = "[service]\nname = \"x\"\nbase_url = \"http://h\"\n[proxy]\nupstream_timeout_ms = 250\n";
        let cfg = TwinConfig::parse(text, Path::new("wraith.toml")).unwrap();
        assert_eq!(cfg.proxy.upstream_timeout_ms, 250);
    }

    #[test]
    fn syntax_error_names_line() {
        let text = "[service]\nname = \"x\"\nbase_url = \n";
        let err = TwinConfig::parse(text, Path::new("wraith.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("wraith.toml:3:"), "{err}");
    }

    #[test]
    fn idempotency_header_and_ttl_that_disable_the_feature_are_refused_at_their_line() {
        for (entry, key) in [
            ("header = \"\"", "serve.idempotency.header"),
            ("header = \"Bad Header:\"", "serve.idempotency.header"),
            ("ttl_seconds = 0", "serve.idempotency.ttl_seconds"),
        ] {
            let text = format!(
                "[service]\nname = \"x\"\nbase_url = \"http://h\"\n[serve.idempotency]\nenabled = true\n{entry}\n"
            );
            let e = TwinConfig::parse(&text, Path::new("wraith.toml")).unwrap_err();
            let TwinError::Config { line, message, .. } = &e else {
                panic!("{entry}: {e:?}")
            };
            assert_eq!(*line, 6, "{entry}: {message}");
            assert!(message.contains(key), "{entry}: {message}");
        }
        let ok = "[service]\nname = \"x\"\nbase_url = \"http://h\"\n[serve.idempotency]\nheader = \"X-Request-Key\"\nttl_seconds = 1\n";
        assert!(TwinConfig::parse(ok, Path::new("wraith.toml")).is_ok());
    }

    #[test]
    fn rate_limits_and_overrides_are_open_maps() {
        let text = "[service]\nname = \"x\"\nbase_url = \"http://h\"\n[serve.rate_limits.\"GET /a\"]\nlimit = 3\nwindow_seconds = 60\n[diff.overrides.\"GET /a\"]\nbody_values = 0.5\n[[diff.suppress]]\nroute = \"GET /a\"\nreason = \"noise\"\n";
        let cfg = TwinConfig::parse(text, Path::new("wraith.toml")).unwrap();
        assert_eq!(cfg.serve.rate_limits["GET /a"].limit, 3);
        assert_eq!(cfg.diff.overrides["GET /a"].body_values, Some(0.5));
        assert_eq!(cfg.diff.overrides["GET /a"].body_structure, None);
        assert_eq!(cfg.diff.overrides["GET /a"].line, 7);
        assert_eq!(cfg.diff.suppress[0].reason, "noise");
        assert_eq!(cfg.diff.suppress[0].line, 9);
        assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    }

    #[test]
    fn handlers_policy_and_deviation_entries_load_as_written() {
        let text = "[service]\nname = \"x\"\nbase_url = \"http://h\"\n[handlers]\ndeviation_policy = \"warn\"\n[[deviations]]\nroute = \"GET /a/:id\"\npath = \"body.Name\"\nreason = \"legacy casing\"\n[[deviations]]\nroute = \"GET /b\"\n";
        let cfg = TwinConfig::parse(text, Path::new("wraith.toml")).unwrap();
        assert_eq!(cfg.handlers.deviation_policy, DeviationPolicy::Warn);
        assert_eq!(cfg.deviations.len(), 2);
        assert_eq!(cfg.deviations[0].path.as_deref(), Some("body.Name"));
        // An incomplete entry loads: `wraith check` and `wraith lint` name what it misses.
        assert_eq!(cfg.deviations[1].reason, None);
        assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
        let bad = "[service]\nname = \"x\"\nbase_url = \"http://h\"\n[handlers]\ndeviation_policy = \"maybe\"\n";
        let err = TwinConfig::parse(bad, Path::new("wraith.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("deviation_policy"), "{err}");
        assert_eq!(
            TwinConfig::parse(
                "[service]\nname = \"x\"\nbase_url = \"http://h\"\n",
                Path::new("w")
            )
            .unwrap()
            .handlers
            .deviation_policy,
            DeviationPolicy::Error
        );
    }

    #[test]
    fn diff_entries_load_as_written_with_their_lines() {
        let text = "[service]\nname = \"x\"\nbase_url = \"http://h\"\n\n[diff.thresholds]\nbody_values = 0.5\n\n[diff.fields.\"items[*].state\"]\nclassify = \"enum\"\nvalues = [\"open\", 2]\n\n[[diff.suppress]]\npath = \"x\"\n";
        let cfg = TwinConfig::parse(text, Path::new("wraith.toml")).unwrap();
        assert_eq!(cfg.diff.thresholds.body_values, 0.5);
        assert_eq!(cfg.diff.thresholds_line, 5);
        let f = &cfg.diff.fields["items[*].state"];
        assert_eq!(f.classify, "enum");
        assert_eq!(
            f.values,
            Some(vec![serde_json::json!("open"), serde_json::json!(2)])
        );
        assert_eq!(f.line, 8);
        // A suppress entry without a reason loads: check and lint name what it misses.
        assert_eq!(cfg.diff.suppress[0].reason, "");
        assert_eq!(cfg.diff.suppress[0].line, 12);
    }

    const SERVICE: &str = "[service]\nname = \"x\"\nbase_url = \"http://h\"\n";

    #[test]
    fn request_keying_defaults_to_auto_with_no_entries() {
        let cfg = TwinConfig::parse(SERVICE, Path::new("wraith.toml")).unwrap();
        assert_eq!(cfg.generate.request_keying.mode, RequestKeyingMode::Auto);
        assert!(cfg.generate.request_keying.route.is_empty());
    }

    #[test]
    fn request_keying_entries_load_with_their_fields_and_lines() {
        let text = format!(
            "{SERVICE}\n[generate.request_keying]\nmode = \"manual\"\n\n[[generate.request_keying.route]]\nroute = \"POST /linode/instances\"\nfields = [\"$.type\", \"$.region\"]\n\n[[generate.request_keying.route]]\nroute = \"GET /search\"\nfields = [\"query.q\", \"$.items[0][\\\"odd.key\\\"]\"]\n"
        );
        let cfg = TwinConfig::parse(&text, Path::new("wraith.toml")).unwrap();
        let rk = &cfg.generate.request_keying;
        assert_eq!(rk.mode, RequestKeyingMode::Manual);
        assert_eq!(rk.route.len(), 2);
        assert_eq!(rk.route[0].route, "POST /linode/instances");
        assert_eq!(rk.route[0].line, 9);
        assert_eq!(rk.route[1].line, 13);
        assert_eq!(
            rk.route[0].parsed_fields().unwrap(),
            vec![
                KeyingField::Body {
                    path: vec!["type".into()]
                },
                KeyingField::Body {
                    path: vec!["region".into()]
                },
            ]
        );
        assert_eq!(
            rk.route[1].parsed_fields().unwrap(),
            vec![
                KeyingField::Query { name: "q".into() },
                KeyingField::Body {
                    path: vec!["items".into(), "0".into(), "odd.key".into()]
                },
            ]
        );
        // `[generate]` keys this version does not read still only warn.
        let text = format!("{SERVICE}[generate]\nmax_iterations = 10\n");
        let cfg = TwinConfig::parse(&text, Path::new("wraith.toml")).unwrap();
        assert_eq!(cfg.warnings.len(), 1);
        assert_eq!(cfg.warnings[0].key, "generate.max_iterations");
    }

    #[test]
    fn bad_request_keying_mode_names_file_line_and_the_modes() {
        let text = format!("{SERVICE}\n[generate.request_keying]\nmode = \"sometimes\"\n");
        let err = TwinConfig::parse(&text, Path::new("t/wraith.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("t/wraith.toml:6:"), "{err}");
        assert!(err.contains("generate.request_keying.mode"), "{err}");
        assert!(
            err.contains("sometimes") && err.contains("off") && err.contains("manual"),
            "{err}"
        );
    }

    #[test]
    fn bad_request_keying_field_names_the_entry_line_and_the_syntax() {
        for bad in [
            "type",
            "$",
            "$.a..b",
            "$.a[x]",
            "$.a[\\\"b",
            "query.",
            "$.a b",
        ] {
            let text = format!(
                "{SERVICE}\n[[generate.request_keying.route]]\nroute = \"POST /a\"\n\nfields = [\"$.ok\", \"{bad}\"]\n"
            );
            let err = TwinConfig::parse(&text, Path::new("wraith.toml"))
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("wraith.toml:8:"), "{bad}: {err}");
            assert!(
                err.contains("entry 1") && err.contains("`$.a.b`") && err.contains("query.name"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn request_keying_fields_listing_one_field_twice_is_an_error_naming_the_line() {
        for (first, again) in [
            ("$.region", "$.region"),
            ("$.region", "$[\\\"region\\\"]"),
            ("query.q", "query.q"),
        ] {
            let text = format!(
                "{SERVICE}\n[[generate.request_keying.route]]\nroute = \"POST /a\"\n\nfields = [\"{first}\", \"$.type\", \"{again}\"]\n"
            );
            let err = TwinConfig::parse(&text, Path::new("t/wraith.toml"))
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("t/wraith.toml:8:"), "{again}: {err}");
            assert!(
                err.contains("entry 1")
                    && err.contains("same request field")
                    && err.contains("once"),
                "{again}: {err}"
            );
        }
        // Different fields listed together load: one combined key.
        let text = format!(
            "{SERVICE}\n[[generate.request_keying.route]]\nroute = \"POST /a\"\nfields = [\"$.region\", \"$.type\", \"query.region\"]\n"
        );
        let cfg = TwinConfig::parse(&text, Path::new("wraith.toml")).unwrap();
        assert_eq!(cfg.generate.request_keying.route[0].fields.len(), 3);
    }

    #[test]
    fn request_keying_entry_needs_a_route_and_a_field() {
        let text = format!(
            "{SERVICE}\n[[generate.request_keying.route]]\nroute = \"/a\"\nfields = [\"$.t\"]\n"
        );
        let err = TwinConfig::parse(&text, Path::new("wraith.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("wraith.toml:6:") && err.contains("METHOD /path"),
            "{err}"
        );
        let text = format!(
            "{SERVICE}\n[[generate.request_keying.route]]\nroute = \"POST /a\"\nfields = []\n"
        );
        let err = TwinConfig::parse(&text, Path::new("wraith.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("wraith.toml:7:") && err.contains("lists no field"),
            "{err}"
        );
        let text = format!(
            "{SERVICE}\n[[generate.request_keying.route]]\nroute = \"POST /a\"\nfield = [\"$.t\"]\n"
        );
        let err = TwinConfig::parse(&text, Path::new("wraith.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("field"), "{err}");
    }

    #[test]
    fn manual_request_keying_without_entries_warns() {
        let text = format!("{SERVICE}[generate.request_keying]\nmode = \"manual\"\n");
        let cfg = TwinConfig::parse(&text, Path::new("wraith.toml")).unwrap();
        assert_eq!(cfg.warnings.len(), 1, "{:?}", cfg.warnings);
        assert_eq!(cfg.warnings[0].key, "generate.request_keying.mode");
        assert_eq!(cfg.warnings[0].line, 5);
    }
}
