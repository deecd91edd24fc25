//! The check report: scores in basis points and every divergence, with a stable schema
//! (documented in `docs/report-format.md`). Serialized as canonical JSON by the caller.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::diff::{Category, Divergence};
use crate::drift_types::{DriftRules, DriftType, DriftTyper, classify};
use crate::rules::{DiffRules, Dimension, DimensionGates};

/// Version of the report schema; bumped on any incompatible change.
pub const REPORT_VERSION: u32 = 1;

/// At most this many divergences are listed per exchange (all are counted).
pub const MAX_DIVERGENCES_PER_EXCHANGE: usize = 50;
/// At most this many divergences are listed in a report (all are counted and grouped in
/// `drifts`).
pub const MAX_DIVERGENCES_LISTED: usize = 10_000;

/// Pass thresholds (`[diff]` of `wraith.toml`): the fractions the gates are decided on, and
/// the basis points the report shows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    /// `[diff] required_score` × 10000, rounded: the report's `required_score_bp`.
    pub required_score_bp: u32,
    /// `[diff] session_pass_rate` × 10000, rounded: the report's
    /// `required_session_pass_rate_bp`.
    pub session_pass_rate_bp: u32,
    /// `[diff] required_score` (0..=1): the share of passing exchanges must reach it, overall
    /// and in a session for the session to pass.
    pub required_score: f64,
    /// `[diff] session_pass_rate` (0..=1): the share of passing sessions must reach it.
    pub session_pass_rate: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds::from_fractions(0.90, 0.95)
    }
}

impl Thresholds {
    /// From the `wraith.toml` fractions (0.90, 0.95), clamped to 0..=1 (`NaN` as 1: nothing
    /// passes a gate no one could read).
    pub fn from_fractions(required_score: f64, session_pass_rate: f64) -> Thresholds {
        let clamp = |f: f64| if f.is_nan() { 1.0 } else { f.clamp(0.0, 1.0) };
        let bp = |f: f64| (clamp(f) * 10_000.0).round() as u32;
        Thresholds {
            required_score_bp: bp(required_score),
            session_pass_rate_bp: bp(session_pass_rate),
            required_score: clamp(required_score),
            session_pass_rate: clamp(session_pass_rate),
        }
    }

    /// `passed` of `total` exchanges reach `[diff] required_score`.
    pub fn score_held(&self, passed: u64, total: u64) -> bool {
        share_reaches(passed, total, self.required_score)
    }

    /// `passed` of `total` sessions reach `[diff] session_pass_rate`.
    pub fn session_rate_held(&self, passed: u64, total: u64) -> bool {
        share_reaches(passed, total, self.session_pass_rate)
    }
}

/// `passed / total >= fraction`, decided on the counts, not on the floored basis points the
/// report shows (2 of 3 reaches 0.66665 though 6666 bp is below its rounded 6667, and 9 of 10
/// does not reach 0.90004 though both show as 9000). An empty set reaches every fraction, as
/// its [`ratio_bp`] is 10000.
pub fn share_reaches(passed: u64, total: u64, fraction: f64) -> bool {
    total == 0 || passed as f64 / total as f64 >= fraction
}

/// `passed × 10000 / total`, rounded down; 10000 for an empty set (nothing failed).
pub fn ratio_bp(passed: u64, total: u64) -> u32 {
    (passed * 10_000)
        .checked_div(total)
        .map_or(10_000, |v| v as u32)
}

/// `drift-<16 hex>`: a fingerprint of route + path + category + expected + actual, stable
/// across runs and machines. The bytes hashed are documented in `docs/report-format.md` ("How
/// `drift_id` is computed"): changing them changes every id.
pub fn drift_id(
    route: &str,
    path: &str,
    category: Category,
    expected: &Value,
    actual: &Value,
) -> String {
    let mut h = Sha256::new();
    for part in [
        route.as_bytes(),
        path.as_bytes(),
        category.as_str().as_bytes(),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    hash_canonical(&mut h, expected);
    hash_canonical(&mut h, actual);
    let digest = h.finalize();
    format!("drift-{}", wraith_model::request_key::hex(&digest[..8]))
}

/// Feed a value to the hash in a canonical, unambiguous encoding (object keys sorted, strings
/// length-prefixed), without building the JSON text: a check can find many divergences.
fn hash_canonical(h: &mut Sha256, v: &Value) {
    match v {
        Value::Null => h.update(b"n"),
        Value::Bool(b) => h.update(if *b { b"t" } else { b"f" }),
        Value::Number(n) => {
            let s = n.to_string();
            h.update(b"#");
            h.update((s.len() as u64).to_le_bytes());
            h.update(s.as_bytes());
        }
        Value::String(s) => {
            h.update(b"s");
            h.update((s.len() as u64).to_le_bytes());
            h.update(s.as_bytes());
        }
        Value::Array(a) => {
            h.update(b"[");
            h.update((a.len() as u64).to_le_bytes());
            for x in a {
                hash_canonical(h, x);
            }
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_unstable();
            h.update(b"{");
            h.update((keys.len() as u64).to_le_bytes());
            for k in keys {
                h.update((k.len() as u64).to_le_bytes());
                h.update(k.as_bytes());
                if let Some(x) = m.get(k) {
                    hash_canonical(h, x);
                }
            }
        }
    }
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub report_version: u32,
    pub twin: String,
    /// `in_memory` or `target`.
    pub mode: String,
    /// The running twin's base URL under `--target`.
    pub target: Option<String>,
    /// Both score gates held ([`Report::scores_held`]) and the authored-output gate held
    /// (`authored.gate_passed`: no unmarked authored deviation, or policy `warn`).
    pub passed: bool,
    /// Both score gates held, decided on the counts (`exchanges_passed / exchanges_total >=
    /// [diff] required_score`, `sessions_passed / sessions_total >= [diff] session_pass_rate`),
    /// not on the rounded basis points shown beside them. Not written to the report.
    #[serde(skip)]
    pub scores_held: bool,
    /// Share of exchanges replayed with no divergence, in basis points.
    pub score_bp: u32,
    pub required_score_bp: u32,
    /// Share of sessions that passed (`session_pass_rate_bp / 10000`).
    pub session_pass_rate: f64,
    pub session_pass_rate_bp: u32,
    pub required_session_pass_rate_bp: u32,
    pub sessions_total: u64,
    pub sessions_passed: u64,
    pub exchanges_total: u64,
    pub exchanges_passed: u64,
    /// Recorded exchanges not replayed (authored routes), by reason.
    pub exchanges_skipped: BTreeMap<String, u64>,
    /// Divergences by category (all of them, not only the listed ones).
    pub categories: BTreeMap<String, u64>,
    /// How the twin produced its answers (`X-Wraith-Provenance`), by word.
    pub provenance: BTreeMap<String, u64>,
    /// Answers that carried an exactness claim (`X-Wraith-Replay`), compared with no relaxation.
    pub replay_claims: u64,
    /// Requests sent with recorded ids replaced by the ids the twin answered earlier in the
    /// same session (ids flow like a real client's), summed over sessions.
    pub requests_rewritten: u64,
    /// Recorded ids the twin answered with two different values within one session (the
    /// latest was used), summed over sessions.
    pub id_ambiguities: u64,
    pub routes: Vec<RouteScore>,
    pub sessions: Vec<SessionScore>,
    pub exchanges: Vec<ExchangeScore>,
    pub divergence_count: u64,
    pub divergences: Vec<DivergenceRecord>,
    /// Divergences counted but not listed (beyond the per-exchange and per-report caps).
    pub divergences_omitted: u64,
    /// Divergences grouped by `drift_id`, most frequent first.
    pub drifts: Vec<Drift>,
    /// Present under `--holdout K`.
    pub holdout: Option<HoldoutSummary>,
    /// Divergences removed by `[[diff.suppress]]` rules before scoring (not in `divergences`,
    /// `categories`, `drifts` or any score).
    pub suppressed_count: u64,
    /// The suppressed divergences with their rule's reason: listed only under
    /// `wraith check --show-suppressed` (else empty), at most 10,000.
    pub suppressed: Vec<SuppressedRecord>,
    /// Per-dimension scores of the whole run, gated by `[diff.thresholds]`.
    pub dimensions: BTreeMap<String, DimensionScore>,
    /// Every dimension gate that failed (top level, or a route's `[diff.overrides]` entry).
    pub dimensions_failed: Vec<DimensionFailure>,
    /// The fixture set every replay namespace was seeded with (`wraith check --fixture`);
    /// `null`: the implicit default set, if the twin has one.
    pub fixture: Option<String>,
    /// The fiction ratio: answers from handlers and fixtures vs recorded and model answers.
    pub fiction: crate::authored::Fiction,
    /// The authored-output gate's totals (`[handlers] deviation_policy`, `[[deviations]]`).
    pub authored: crate::authored::AuthoredSummary,
    /// Every authored deviation (a handler's answer shaped unlike the recordings), in replay
    /// order, up to [`crate::authored::MAX_LISTED`].
    pub authored_deviations: Vec<crate::authored::AuthoredDeviationRecord>,
    /// Cause → failing exchanges labelled with it ([`crate::causes`]).
    pub causes: BTreeMap<String, u64>,
    /// The `after_earlier_divergence` exchanges counted by the cause of the failure each
    /// follows (its session's first failing exchange): whether the chains start where the
    /// recordings bound the twin or where the twin is at fault. Not written when empty.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub after_earlier_divergence_by_first_cause: BTreeMap<String, u64>,
    /// A bound on the score a deterministic twin could reach on these recordings.
    pub ceiling: crate::causes::Ceiling,
    /// The `[freshness]` SLA's verdict (`null` when `wraith.toml` sets none); a `stale` one,
    /// or drift above `max_drift`, fails the run ([`Report::apply_freshness`]).
    pub freshness: Option<crate::freshness::FreshnessReport>,
    /// Divergences whose drift a `drift.toml` `[[suppress]]` entry accepts (applied after
    /// scoring: they are still in `divergences`, `drifts`, `categories` and every score).
    pub drift_suppressed_count: u64,
    /// The accepted drifts with their entry's reason, one per `drift_id`: listed only under
    /// `--show-suppressed` (else empty).
    pub drift_suppressed: Vec<DriftSuppressedRecord>,
    /// Drift groups whose type a `drift.toml` `[[reclassify]]` entry changed.
    pub drift_reclassified_count: u64,
    /// Problems with `drift.toml` (`file:line: entry: key: what and how to fix`); a bad entry
    /// is not applied, and never stops the check.
    pub drift_warnings: Vec<String>,
    /// Recorded sessions none of whose exchanges was replayed (every one skipped: see
    /// `exchanges_skipped`), in replay order. Not in `sessions` nor in any session count, and
    /// not written into the report (the binary names them in a warning).
    #[serde(skip)]
    pub unreplayed_sessions: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RouteScore {
    /// `METHOD /path`.
    pub route: String,
    pub exchanges: u64,
    pub passed: u64,
    pub score_bp: u32,
    /// Mean of the exchanges' own scores.
    pub mean_exchange_score_bp: u32,
    pub divergences: u64,
    pub categories: BTreeMap<String, u64>,
    /// How the twin answered this route's exchanges, by provenance word.
    pub provenance: BTreeMap<String, u64>,
    /// Share of this route's answers from handlers or fixtures, in basis points.
    pub fiction_ratio_bp: u32,
    /// Divergences under the route removed by `[[diff.suppress]]`.
    pub suppressed: u64,
    /// Per-dimension scores of the route; gated only when a `[diff.overrides]` entry names it.
    pub dimensions: BTreeMap<String, DimensionScore>,
    /// Cause → failing exchanges of this route labelled with it ([`crate::causes`]).
    pub causes: BTreeMap<String, u64>,
}

/// One dimension's score: the share of the exchanges judged on it with no divergence of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DimensionScore {
    pub score_bp: u32,
    /// Exchanges the dimension was judged on (the body or header rules ran).
    pub exchanges: u64,
    /// Of those, the ones with no divergence of this dimension.
    pub passed_exchanges: u64,
    /// The gate, in basis points; `null` when nothing gates it.
    pub required_bp: Option<u32>,
    /// `score_bp >= required_bp` (`true` when not gated).
    pub passed: bool,
}

/// A dimension gate that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DimensionFailure {
    /// `null` for the whole run, else the route its `[diff.overrides]` entry gates.
    pub route: Option<String>,
    pub dimension: Dimension,
    pub score_bp: u32,
    pub required_bp: u32,
}

/// A divergence a `[[diff.suppress]]` rule removed.
#[derive(Debug, Clone, Serialize)]
pub struct SuppressedRecord {
    pub route: String,
    pub session: String,
    pub exchange: u64,
    pub path: String,
    pub category: Category,
    pub expected: Value,
    pub actual: Value,
    /// 1-based position of the `[[diff.suppress]]` entry in `wraith.toml`.
    pub rule: usize,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SessionScore {
    /// Recorded session id.
    pub session: String,
    /// `X-Wraith-Session` value it was replayed under.
    pub namespace: String,
    pub exchanges: u64,
    pub passed_exchanges: u64,
    pub score_bp: u32,
    /// `score_bp >= required_score_bp`.
    pub passed: bool,
    /// Requests of this session sent with recorded ids replaced by the twin's.
    pub requests_rewritten: u64,
    /// Recorded ids the twin answered with two different values in this session.
    pub id_ambiguities: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExchangeScore {
    pub session: String,
    pub exchange: u64,
    pub route: String,
    pub method: String,
    pub path: String,
    pub expected_status: u16,
    pub actual_status: u16,
    pub provenance: Option<String>,
    pub replay_claim: bool,
    pub score_bp: u32,
    pub divergences: u64,
    /// Divergences removed by `[[diff.suppress]]`.
    pub suppressed: u64,
    /// Why it failed (`null` when it passed): see [`crate::causes`].
    pub cause: Option<crate::causes::Cause>,
    /// With cause `unrecorded_input`: the inputs (`?name`, body JSON pointers) no training
    /// request of the route sent, sorted. Not written when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unrecorded_inputs: Vec<String>,
    /// With cause `after_earlier_divergence`: the `exchange` index of the session's first
    /// failing exchange, the divergence this one follows. Not written otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_exchange: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DivergenceRecord {
    pub route: String,
    pub session: String,
    pub exchange: u64,
    pub path: String,
    pub category: Category,
    /// Always `error` today: every listed divergence counts against the score.
    pub severity: String,
    pub expected: Value,
    pub actual: Value,
    pub drift_id: String,
    /// What kind of API change it looks like ([`crate::drift_types`]), after `drift.toml`'s
    /// `[[reclassify]]`.
    pub drift_type: DriftType,
    /// A `drift.toml` `[[suppress]]` entry accepts this drift: still listed and scored.
    pub drift_suppressed: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Drift {
    pub drift_id: String,
    pub route: String,
    pub path: String,
    pub category: Category,
    pub count: u64,
    /// First occurrence: `<session>/<index>`.
    pub first_seen: String,
    pub expected: Value,
    pub actual: Value,
    /// What kind of API change it looks like, after `drift.toml`'s `[[reclassify]]`.
    pub drift_type: DriftType,
    /// The computed type when a `[[reclassify]]` entry changed it (`null` otherwise).
    pub reclassified_from: Option<DriftType>,
    /// A `drift.toml` `[[suppress]]` entry accepts this drift (it still counts in the score).
    pub drift_suppressed: bool,
}

/// A drift a `drift.toml` `[[suppress]]` entry accepts, as `--show-suppressed` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct DriftSuppressedRecord {
    pub drift_id: String,
    pub route: String,
    pub path: String,
    pub category: Category,
    pub drift_type: DriftType,
    /// Occurrences (divergences) of the drift.
    pub count: u64,
    /// 1-based position of the `[[suppress]]` entry in `drift.toml`.
    pub rule: usize,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct HoldoutSummary {
    pub k: u32,
    /// Sessions the held-out model was synthesized from.
    pub training_sessions: u64,
    /// Sessions checked against it (every K-th recorded session).
    pub held_out_sessions: Vec<String>,
    /// The training model replaying its own sessions.
    pub in_sample_score_bp: u32,
    pub in_sample_exchanges: u64,
    pub in_sample_session_pass_rate_bp: u32,
    /// The training model replaying the held-out sessions (the report's main figures).
    pub held_out_score_bp: u32,
    pub held_out_exchanges: u64,
    pub held_out_session_pass_rate_bp: u32,
}

impl Report {
    /// Record the `[freshness]` verdict; a `stale` twin (exit 2 `twin-stale`) or one whose
    /// drifted share of routes is above `max_drift` (`twin-drift-exceeded`) fails the run
    /// (`passed: false`) whatever the scores.
    pub fn apply_freshness(&mut self, verdict: crate::freshness::FreshnessReport) {
        self.passed &= !verdict.failed();
        self.freshness = Some(verdict);
    }

    /// Type every drift and apply `drift.toml` (after scoring, so nothing here changes a score
    /// or `passed`): each `drifts[]` group gets the type `typer` gives it, then `rules` may
    /// reclassify it and accept it (`drift_suppressed`); each divergence takes its group's
    /// outcome. `warnings` are `drift.toml`'s problems. The accepted drifts are listed in
    /// `drift_suppressed` only when `show_suppressed`. Call once, on the finished report.
    pub fn apply_drift(
        &mut self,
        typer: &DriftTyper<'_>,
        rules: &DriftRules,
        warnings: Vec<String>,
        show_suppressed: bool,
    ) {
        let mut outcome: BTreeMap<String, (DriftType, bool)> = BTreeMap::new();
        let mut suppressed = Vec::new();
        let mut suppressed_count = 0;
        let mut reclassified = 0;
        for d in &mut self.drifts {
            let computed = typer.drift_type(&d.route, &d.path, d.category, &d.expected, &d.actual);
            let decision = rules.decide(&d.drift_id, &d.route, &d.path, d.category, computed);
            d.drift_type = decision.drift_type;
            d.reclassified_from = decision
                .reclassified
                .as_ref()
                .filter(|_| decision.drift_type != computed)
                .map(|_| computed);
            reclassified += u64::from(d.reclassified_from.is_some());
            d.drift_suppressed = decision.suppressed.is_some();
            if let Some((rule, reason)) = decision.suppressed {
                suppressed_count += d.count;
                suppressed.push(DriftSuppressedRecord {
                    drift_id: d.drift_id.clone(),
                    route: d.route.clone(),
                    path: d.path.clone(),
                    category: d.category,
                    drift_type: d.drift_type,
                    count: d.count,
                    rule,
                    reason,
                });
            }
            outcome.insert(d.drift_id.clone(), (d.drift_type, d.drift_suppressed));
        }
        for d in &mut self.divergences {
            if let Some((t, s)) = outcome.get(&d.drift_id) {
                d.drift_type = *t;
                d.drift_suppressed = *s;
            }
        }
        self.drift_suppressed_count = suppressed_count;
        self.drift_reclassified_count = reclassified;
        self.drift_suppressed = if show_suppressed {
            suppressed
        } else {
            Vec::new()
        };
        self.drift_warnings = warnings;
    }

    /// Apply the `[diff]` rules that act on the finished report: gate every dimension (the run's
    /// by `[diff.thresholds]`, a route's by the first `[diff.overrides]` entry naming it), record
    /// each failed gate in `dimensions_failed` and fail the run on any; keep the `suppressed`
    /// list only when `show_suppressed` (the count stays). Call once.
    pub fn apply_rules(&mut self, rules: &DiffRules, show_suppressed: bool) {
        fn gate(
            dims: &mut BTreeMap<String, DimensionScore>,
            gates: &DimensionGates,
            route: Option<&str>,
            failed: &mut Vec<DimensionFailure>,
        ) {
            for d in Dimension::ALL {
                if let Some(s) = dims.get_mut(d.as_str()) {
                    let required = gates.get(d);
                    s.required_bp = Some(required);
                    // On the counts: a floored score against a rounded gate could go either way.
                    s.passed = share_reaches(s.passed_exchanges, s.exchanges, gates.fraction(d));
                    if !s.passed {
                        failed.push(DimensionFailure {
                            route: route.map(str::to_string),
                            dimension: d,
                            score_bp: s.score_bp,
                            required_bp: required,
                        });
                    }
                }
            }
        }
        let mut failed = Vec::new();
        gate(&mut self.dimensions, &rules.gates, None, &mut failed);
        for r in &mut self.routes {
            if let Some(g) = rules.route_gates(&r.route) {
                gate(&mut r.dimensions, &g, Some(&r.route), &mut failed);
            }
        }
        self.passed &= failed.is_empty();
        self.dimensions_failed = failed;
        if !show_suppressed {
            self.suppressed.clear();
        }
    }
}

/// Accumulates verdicts into a [`Report`].
#[derive(Debug, Default)]
pub struct ReportBuilder {
    routes: BTreeMap<String, RouteAcc>,
    sessions: Vec<SessionScore>,
    exchanges: Vec<ExchangeScore>,
    categories: BTreeMap<String, u64>,
    provenance: BTreeMap<String, u64>,
    skipped: BTreeMap<String, u64>,
    replay_claims: u64,
    divergences: Vec<DivergenceRecord>,
    omitted: u64,
    count: u64,
    drifts: BTreeMap<String, Drift>,
    cur: Option<SessionScore>,
    thresholds: Thresholds,
    authored: crate::authored::AuthoredAcc,
    suppressed: Vec<SuppressedRecord>,
    suppressed_count: u64,
    dims: DimAcc,
    /// Sessions that replayed no exchange (see [`Report::unreplayed_sessions`]).
    unreplayed: Vec<String>,
}

/// Judged / passed exchanges per dimension, in [`Dimension::ALL`] order.
#[derive(Debug, Default, Clone, Copy)]
struct DimAcc([(u64, u64); 4]);

impl DimAcc {
    fn add(&mut self, outcome: [Option<bool>; 4]) {
        for (acc, o) in self.0.iter_mut().zip(outcome) {
            if let Some(passed) = o {
                acc.0 += 1;
                acc.1 += u64::from(passed);
            }
        }
    }

    fn scores(&self) -> BTreeMap<String, DimensionScore> {
        Dimension::ALL
            .iter()
            .zip(self.0)
            .map(|(d, (judged, passed))| {
                (
                    d.as_str().to_string(),
                    DimensionScore {
                        score_bp: ratio_bp(passed, judged),
                        exchanges: judged,
                        passed_exchanges: passed,
                        required_bp: None,
                        passed: true,
                    },
                )
            })
            .collect()
    }
}

/// Whether `path` is a body position (`body`, `body.x`, `body[0]`).
fn is_body_path(path: &str) -> bool {
    path == "body" || path.starts_with("body.") || path.starts_with("body[")
}

/// Per dimension (in [`Dimension::ALL`] order): `None` when the exchange was not judged on it,
/// else whether none of its (unsuppressed) divergences belongs to it.
fn dimension_outcome(v: &crate::judge::Verdict) -> [Option<bool>; 4] {
    let body = v.facets.body_compared;
    let any = |f: &dyn Fn(&Divergence) -> bool| v.divergences.iter().any(f);
    let structure = body.then(|| {
        !any(&|d| {
            is_body_path(&d.path)
                && matches!(
                    d.category,
                    Category::MissingField
                        | Category::ExtraField
                        | Category::TypeMismatch
                        | Category::ArrayLengthMismatch
                        | Category::UnknownTag
                )
        })
    });
    let values =
        body.then(|| !any(&|d| is_body_path(&d.path) && d.category == Category::ValueMismatch));
    let symbols = body.then(|| !any(&|d| v.facets.echo_failures.contains(&d.path)));
    let headers = v
        .facets
        .headers_compared
        .then(|| !any(&|d| d.path.starts_with("headers.")));
    [structure, values, symbols, headers]
}

#[derive(Debug, Default)]
struct RouteAcc {
    exchanges: u64,
    passed: u64,
    score_sum: u64,
    divergences: u64,
    categories: BTreeMap<String, u64>,
    provenance: BTreeMap<String, u64>,
    suppressed: u64,
    dims: DimAcc,
}

/// What the builder needs to know about one replayed exchange.
pub struct ExchangeFacts<'a> {
    pub session: &'a str,
    pub exchange: u64,
    pub method: &'a str,
    pub path: &'a str,
    pub expected_status: u16,
    pub actual_status: u16,
    pub provenance: Option<&'a str>,
    pub replay_claim: bool,
}

impl ReportBuilder {
    pub fn new(thresholds: Thresholds) -> ReportBuilder {
        ReportBuilder {
            thresholds,
            ..ReportBuilder::default()
        }
    }

    /// Start a recorded session (replayed under `namespace`).
    pub fn begin_session(&mut self, session: &str, namespace: &str) {
        self.finish_session();
        self.cur = Some(SessionScore {
            session: session.to_string(),
            namespace: namespace.to_string(),
            exchanges: 0,
            passed_exchanges: 0,
            score_bp: 10_000,
            passed: true,
            requests_rewritten: 0,
            id_ambiguities: 0,
        });
    }

    /// The current session's id flow: requests rewritten with the twin's ids, and recorded ids
    /// answered with two different values.
    pub fn note_id_flow(&mut self, requests_rewritten: u64, id_ambiguities: u64) {
        if let Some(s) = &mut self.cur {
            s.requests_rewritten += requests_rewritten;
            s.id_ambiguities += id_ambiguities;
        }
    }

    /// Close the current session. One that replayed no exchange (all skipped) was not
    /// replayed: it would pass vacuously, so it is neither listed nor counted.
    fn finish_session(&mut self) {
        if let Some(mut s) = self.cur.take() {
            if s.exchanges == 0 {
                self.unreplayed.push(s.session);
                return;
            }
            s.score_bp = ratio_bp(s.passed_exchanges, s.exchanges);
            s.passed = self.thresholds.score_held(s.passed_exchanges, s.exchanges);
            self.sessions.push(s);
        }
    }

    /// A recorded exchange not replayed, with the reason.
    pub fn skip(&mut self, reason: &str) {
        *self.skipped.entry(reason.to_string()).or_default() += 1;
    }

    /// Fold one judged exchange in.
    pub fn add(&mut self, facts: ExchangeFacts<'_>, verdict: crate::judge::Verdict) {
        let passed = verdict.passed();
        if let Some(s) = &mut self.cur {
            s.exchanges += 1;
            s.passed_exchanges += u64::from(passed);
        }
        if let Some(p) = facts.provenance {
            *self.provenance.entry(p.to_string()).or_default() += 1;
        } else {
            *self.provenance.entry("unknown".to_string()).or_default() += 1;
        }
        self.replay_claims += u64::from(facts.replay_claim);
        let r = self.routes.entry(verdict.route.clone()).or_default();
        *r.provenance
            .entry(facts.provenance.unwrap_or("unknown").to_string())
            .or_default() += 1;
        r.exchanges += 1;
        r.passed += u64::from(passed);
        r.score_sum += u64::from(verdict.score_bp);
        r.divergences += verdict.divergences.len() as u64;
        let dims = dimension_outcome(&verdict);
        r.dims.add(dims);
        self.dims.add(dims);
        let suppressed = verdict.facets.suppressed.len() as u64;
        r.suppressed += suppressed;
        self.suppressed_count += suppressed;
        for s in &verdict.facets.suppressed {
            if self.suppressed.len() >= MAX_DIVERGENCES_LISTED {
                break;
            }
            self.suppressed.push(SuppressedRecord {
                route: verdict.route.clone(),
                session: facts.session.to_string(),
                exchange: facts.exchange,
                path: s.divergence.path.clone(),
                category: s.divergence.category,
                expected: s.divergence.expected.clone(),
                actual: s.divergence.actual.clone(),
                rule: s.rule,
                reason: s.reason.clone(),
            });
        }
        self.exchanges.push(ExchangeScore {
            session: facts.session.to_string(),
            exchange: facts.exchange,
            route: verdict.route.clone(),
            method: facts.method.to_string(),
            path: facts.path.to_string(),
            expected_status: facts.expected_status,
            actual_status: facts.actual_status,
            provenance: facts.provenance.map(str::to_string),
            replay_claim: facts.replay_claim,
            score_bp: verdict.score_bp,
            divergences: verdict.divergences.len() as u64,
            suppressed,
            cause: None,
            unrecorded_inputs: Vec::new(),
            after_exchange: None,
        });
        for (i, d) in verdict.divergences.into_iter().enumerate() {
            self.count += 1;
            *self
                .categories
                .entry(d.category.as_str().to_string())
                .or_default() += 1;
            *r.categories
                .entry(d.category.as_str().to_string())
                .or_default() += 1;
            let id = drift_id(&verdict.route, &d.path, d.category, &d.expected, &d.actual);
            // The type from the divergence alone; `Report::apply_drift` refines it with the
            // model's enum positions and `drift.toml`.
            let drift_type = classify(d.category, &d.expected, &d.actual, false);
            self.drifts
                .entry(id.clone())
                .and_modify(|x| x.count += 1)
                .or_insert_with(|| Drift {
                    drift_id: id.clone(),
                    route: verdict.route.clone(),
                    path: d.path.clone(),
                    category: d.category,
                    count: 1,
                    first_seen: format!("{}/{}", facts.session, facts.exchange),
                    expected: d.expected.clone(),
                    actual: d.actual.clone(),
                    drift_type,
                    reclassified_from: None,
                    drift_suppressed: false,
                });
            if i >= MAX_DIVERGENCES_PER_EXCHANGE || self.divergences.len() >= MAX_DIVERGENCES_LISTED
            {
                self.omitted += 1;
                continue;
            }
            let Divergence {
                path,
                category,
                expected,
                actual,
            } = d;
            self.divergences.push(DivergenceRecord {
                route: verdict.route.clone(),
                session: facts.session.to_string(),
                exchange: facts.exchange,
                path,
                category,
                severity: "error".to_string(),
                expected,
                actual,
                drift_id: id,
                drift_type,
                drift_suppressed: false,
            });
        }
    }

    /// `[handlers] deviation_policy` for the authored-output gate.
    pub fn set_deviation_policy(&mut self, policy: crate::authored::DeviationPolicy) {
        self.authored.set_policy(policy);
    }

    /// Fold in the authored-output judgement of one exchange of `session`.
    pub fn add_authored(
        &mut self,
        session: &str,
        exchange: u64,
        outcome: crate::authored::AuthoredOutcome,
    ) {
        self.authored.add(
            session,
            exchange,
            outcome.judged,
            outcome.deviations,
            outcome.exempted,
        );
    }

    /// Close the report.
    pub fn finish(mut self, twin: &str, mode: &str, target: Option<&str>) -> Report {
        self.finish_session();
        let t = self.thresholds;
        let exchanges_total = self.exchanges.len() as u64;
        let exchanges_passed = self.exchanges.iter().filter(|e| e.divergences == 0).count() as u64;
        let score_bp = ratio_bp(exchanges_passed, exchanges_total);
        let sessions_total = self.sessions.len() as u64;
        let sessions_passed = self.sessions.iter().filter(|s| s.passed).count() as u64;
        let session_pass_rate_bp = ratio_bp(sessions_passed, sessions_total);
        let scores_held = t.score_held(exchanges_passed, exchanges_total)
            && t.session_rate_held(sessions_passed, sessions_total);
        let requests_rewritten = self.sessions.iter().map(|s| s.requests_rewritten).sum();
        let id_ambiguities = self.sessions.iter().map(|s| s.id_ambiguities).sum();
        let routes = self
            .routes
            .into_iter()
            .map(|(route, a)| RouteScore {
                route,
                exchanges: a.exchanges,
                passed: a.passed,
                score_bp: ratio_bp(a.passed, a.exchanges),
                mean_exchange_score_bp: a
                    .score_sum
                    .checked_div(a.exchanges)
                    .map_or(10_000, |v| v as u32),
                divergences: a.divergences,
                categories: a.categories,
                fiction_ratio_bp: crate::authored::fiction_ratio_bp(
                    crate::authored::authored_answers(&a.provenance),
                    a.exchanges,
                ),
                provenance: a.provenance,
                suppressed: a.suppressed,
                dimensions: a.dims.scores(),
                causes: BTreeMap::new(),
            })
            .collect();
        let mut drifts: Vec<Drift> = self.drifts.into_values().collect();
        drifts.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| a.drift_id.cmp(&b.drift_id))
        });
        let (authored, authored_deviations) = self.authored.finish();
        let fiction = crate::authored::Fiction::of(
            &self.provenance,
            self.skipped.get("authored_route").copied().unwrap_or(0),
        );
        Report {
            report_version: REPORT_VERSION,
            twin: twin.to_string(),
            mode: mode.to_string(),
            target: target.map(str::to_string),
            // A run that replayed nothing checked nothing: it does not pass vacuously.
            passed: exchanges_total > 0 && scores_held && authored.gate_passed,
            scores_held,
            score_bp,
            required_score_bp: t.required_score_bp,
            session_pass_rate: f64::from(session_pass_rate_bp) / 10_000.0,
            session_pass_rate_bp,
            required_session_pass_rate_bp: t.session_pass_rate_bp,
            sessions_total,
            sessions_passed,
            exchanges_total,
            exchanges_passed,
            exchanges_skipped: self.skipped,
            categories: self.categories,
            provenance: self.provenance,
            replay_claims: self.replay_claims,
            requests_rewritten,
            id_ambiguities,
            routes,
            sessions: self.sessions,
            exchanges: self.exchanges,
            divergence_count: self.count,
            divergences: self.divergences,
            divergences_omitted: self.omitted,
            drifts,
            holdout: None,
            suppressed_count: self.suppressed_count,
            suppressed: self.suppressed,
            dimensions: self.dims.scores(),
            dimensions_failed: Vec::new(),
            fixture: None,
            fiction,
            authored,
            authored_deviations,
            causes: BTreeMap::new(),
            after_earlier_divergence_by_first_cause: BTreeMap::new(),
            ceiling: crate::causes::Ceiling::default(),
            freshness: None,
            drift_suppressed_count: 0,
            drift_suppressed: Vec::new(),
            drift_reclassified_count: 0,
            drift_warnings: Vec::new(),
            unreplayed_sessions: self.unreplayed,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn drift_id_is_stable_and_depends_on_every_part() {
        let a = drift_id(
            "GET /a",
            "body.x",
            Category::ValueMismatch,
            &json!(1),
            &json!(2),
        );
        assert_eq!(
            a,
            drift_id(
                "GET /a",
                "body.x",
                Category::ValueMismatch,
                &json!(1),
                &json!(2)
            )
        );
        assert!(a.starts_with("drift-") && a.len() == 22, "{a}");
        assert_ne!(
            a,
            drift_id(
                "GET /b",
                "body.x",
                Category::ValueMismatch,
                &json!(1),
                &json!(2)
            )
        );
        assert_ne!(
            a,
            drift_id(
                "GET /a",
                "body.y",
                Category::ValueMismatch,
                &json!(1),
                &json!(2)
            )
        );
        assert_ne!(
            a,
            drift_id(
                "GET /a",
                "body.x",
                Category::TypeMismatch,
                &json!(1),
                &json!(2)
            )
        );
        assert_ne!(
            a,
            drift_id(
                "GET /a",
                "body.x",
                Category::ValueMismatch,
                &json!(1),
                &json!(3)
            )
        );
        // Key order inside values does not matter.
        assert_eq!(
            drift_id(
                "r",
                "p",
                Category::ValueMismatch,
                &json!({"a":1,"b":2}),
                &json!(null)
            ),
            drift_id(
                "r",
                "p",
                Category::ValueMismatch,
                &json!({"b":2,"a":1}),
                &json!(null)
            )
        );
    }

    /// The recipe `docs/report-format.md` gives for `drift_id`, written out from the text (not
    /// from [`hash_canonical`]): the two must agree, and ids must never change.
    #[test]
    fn drift_id_is_recomputed_from_the_documented_recipe() {
        fn len(n: usize) -> [u8; 8] {
            (n as u64).to_le_bytes()
        }
        fn encode(v: &Value, out: &mut Vec<u8>) {
            match v {
                Value::Null => out.push(b'n'),
                Value::Bool(true) => out.push(b't'),
                Value::Bool(false) => out.push(b'f'),
                Value::Number(n) => {
                    let text = n.to_string();
                    out.push(b'#');
                    out.extend(len(text.len()));
                    out.extend(text.as_bytes());
                }
                Value::String(s) => {
                    out.push(b's');
                    out.extend(len(s.len()));
                    out.extend(s.as_bytes());
                }
                Value::Array(items) => {
                    out.push(b'[');
                    out.extend(len(items.len()));
                    for x in items {
                        encode(x, out);
                    }
                }
                Value::Object(m) => {
                    let mut keys: Vec<&String> = m.keys().collect();
                    keys.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
                    out.push(b'{');
                    out.extend(len(keys.len()));
                    for k in keys {
                        out.extend(len(k.len()));
                        out.extend(k.as_bytes());
                        encode(&m[k], out);
                    }
                }
            }
        }
        let recipe = |route: &str, path: &str, category: Category, e: &Value, a: &Value| {
            let mut bytes = Vec::new();
            for part in [route, path, category.as_str()] {
                bytes.extend(len(part.len()));
                bytes.extend(part.as_bytes());
            }
            encode(e, &mut bytes);
            encode(a, &mut bytes);
            let digest = Sha256::digest(&bytes);
            format!("drift-{}", wraith_model::request_key::hex(&digest[..8]))
        };
        let cases = [
            (
                "GET /a",
                "body.x",
                Category::ValueMismatch,
                json!(1),
                json!(2),
                "drift-3fdc94c179b639ea",
            ),
            (
                "GET /notes",
                "body.tags",
                Category::TypeMismatch,
                json!({"b": [1, null], "a": "x"}),
                json!(true),
                "drift-215e420f4ba6503d",
            ),
        ];
        for (route, path, category, e, a, pinned) in cases {
            let id = drift_id(route, path, category, &e, &a);
            assert_eq!(id, recipe(route, path, category, &e, &a));
            assert_eq!(id, pinned);
        }
    }

    #[test]
    fn dimensions_are_judged_from_the_divergence_categories() {
        use crate::judge::{Facets, Verdict};
        let d = |path: &str, category| Divergence {
            path: path.into(),
            category,
            expected: json!(1),
            actual: json!(2),
        };
        let v = Verdict {
            divergences: vec![
                d("body.a", Category::ValueMismatch),
                d("body.b", Category::ValueMismatch),
            ],
            facets: Facets {
                headers_compared: true,
                body_compared: true,
                echo_failures: vec!["body.b".into()],
                suppressed: Vec::new(),
            },
            ..Verdict::default()
        };
        // structure, values, symbols, headers
        assert_eq!(
            dimension_outcome(&v),
            [Some(true), Some(false), Some(false), Some(true)]
        );
        // A length or a tag outside the recorded set fails the structure; `content-type` and a
        // challenge header alike fail the header dimension.
        for (body, header) in [
            (
                d("body[0]", Category::ArrayLengthMismatch),
                d("headers.content-type", Category::ValueMismatch),
            ),
            (
                d("body.items[0]", Category::UnknownTag),
                d("headers.www-authenticate", Category::ValueMismatch),
            ),
        ] {
            let v = Verdict {
                divergences: vec![body, header],
                facets: Facets {
                    headers_compared: true,
                    body_compared: true,
                    ..Facets::default()
                },
                ..Verdict::default()
            };
            assert_eq!(
                dimension_outcome(&v),
                [Some(false), Some(true), Some(true), Some(false)],
                "{:?}",
                v.divergences
            );
        }
        // A status mismatch or a refusal judged neither the body nor the headers.
        let v = Verdict {
            divergences: vec![d("status", Category::StatusMismatch)],
            ..Verdict::default()
        };
        assert_eq!(dimension_outcome(&v), [None, None, None, None]);
    }

    #[test]
    fn a_perfect_run_passes_every_default_dimension_gate() {
        let mut r = run_of(Thresholds::default(), &[&[true]]);
        r.apply_rules(&DiffRules::default(), false);
        assert!(r.passed);
        assert!(r.dimensions_failed.is_empty());
        for d in r.dimensions.values() {
            assert_eq!((d.score_bp, d.passed), (10_000, true));
        }
    }

    /// A report of `values` exchanges, each judged on the body (`true`: no divergence, `false`:
    /// a `value_mismatch`), gated by `[diff.thresholds] body_values = fraction`.
    fn body_values_gate(values: &[bool], fraction: f64) -> Report {
        let mut r = run_of(Thresholds::from_fractions(0.0, 0.0), &[values]);
        let rules = DiffRules::compile(&crate::rules::RulesInput {
            thresholds: crate::rules::ThresholdInput {
                body_values: Some(fraction),
                ..Default::default()
            },
            ..Default::default()
        })
        .expect("rules");
        r.apply_rules(&rules, false);
        r
    }

    #[test]
    fn dimension_gates_are_decided_on_the_exact_shares_not_their_rounded_basis_points() {
        // 2 of 3: 0.6667 reaches 0.66665, though 6666 bp is below its rounded 6667.
        let r = body_values_gate(&[true, true, false], 0.66665);
        let d = &r.dimensions["body_values"];
        assert_eq!((d.score_bp, d.required_bp), (6666, Some(6667)));
        assert!(d.passed && r.dimensions_failed.is_empty(), "{d:?}");
        // 9 of 10 is 0.9, below 0.90004, though both show as 9000 bp.
        let mut nine: Vec<bool> = vec![true; 9];
        nine.push(false);
        let r = body_values_gate(&nine, 0.90004);
        let d = &r.dimensions["body_values"];
        assert_eq!((d.score_bp, d.required_bp), (9000, Some(9000)));
        assert!(!d.passed && !r.passed, "{d:?}");
        assert_eq!(r.dimensions_failed.len(), 1);
        // Exactly at the gate holds.
        let r = body_values_gate(&nine, 0.9);
        assert!(r.dimensions["body_values"].passed);
    }

    /// The facts of exchange `exchange` of `session`: a recorded `GET /a` answered 200.
    fn get_a(session: &str, exchange: u64) -> ExchangeFacts<'_> {
        ExchangeFacts {
            session,
            exchange,
            method: "GET",
            path: "/a",
            expected_status: 200,
            actual_status: 200,
            provenance: Some("recorded"),
            replay_claim: false,
        }
    }

    fn passing_exchange(b: &mut ReportBuilder, session: &str) {
        b.add(
            get_a(session, 0),
            crate::judge::Verdict {
                route: "GET /a".into(),
                compared: 1,
                score_bp: 10_000,
                ..Default::default()
            },
        );
    }

    #[test]
    fn a_session_that_replayed_no_exchange_is_neither_listed_nor_counted() {
        let mut b = ReportBuilder::new(Thresholds::default());
        b.begin_session("authored-only", "check-authored-only");
        b.skip("authored_route");
        b.skip("authored_route");
        b.begin_session("s", "check-s");
        passing_exchange(&mut b, "s");
        let r = b.finish("t", "in_memory", None);
        assert_eq!((r.sessions_total, r.sessions_passed), (1, 1));
        let listed: Vec<&str> = r.sessions.iter().map(|s| s.session.as_str()).collect();
        assert_eq!(listed, ["s"]);
        assert_eq!(r.unreplayed_sessions, ["authored-only"]);
        assert_eq!(r.exchanges_skipped.get("authored_route"), Some(&2));
        assert!(r.passed);
        let json = serde_json::to_value(&r).unwrap();
        assert!(json.get("unreplayed_sessions").is_none(), "{json}");
    }

    #[test]
    fn a_run_that_replayed_no_exchange_does_not_pass() {
        let mut b = ReportBuilder::new(Thresholds::default());
        b.begin_session("authored-only", "check-authored-only");
        b.skip("authored_route");
        let r = b.finish("t", "in_memory", None);
        assert_eq!((r.sessions_total, r.sessions_passed), (0, 0));
        assert_eq!(r.exchanges_total, 0);
        assert!(r.sessions.is_empty());
        assert!(!r.passed);
    }

    /// A report of `sessions`, each the pass (`true`) or fail (a `value_mismatch`) of its
    /// exchanges in order, each judged on the body and the headers.
    fn run_of(t: Thresholds, sessions: &[&[bool]]) -> Report {
        let mut b = ReportBuilder::new(t);
        for (i, exchanges) in sessions.iter().enumerate() {
            let session = format!("s{i}");
            b.begin_session(&session, &format!("check-{session}"));
            for (n, &passed) in exchanges.iter().enumerate() {
                let divergences = if passed {
                    Vec::new()
                } else {
                    vec![crate::diff::Divergence {
                        path: "body.a".into(),
                        category: Category::ValueMismatch,
                        expected: Value::from(1),
                        actual: Value::from(2),
                    }]
                };
                b.add(
                    get_a(&session, n as u64),
                    crate::judge::Verdict {
                        route: "GET /a".into(),
                        compared: 2,
                        score_bp: if passed { 10_000 } else { 5_000 },
                        divergences,
                        facets: crate::judge::Facets {
                            headers_compared: true,
                            body_compared: true,
                            ..Default::default()
                        },
                    },
                );
            }
        }
        b.finish("t", "in_memory", None)
    }

    /// A route's `score_bp` is the share of its exchanges that passed, not the mean of their
    /// scores: one of two passing is 5000 however close the other came (that mean is
    /// `mean_exchange_score_bp`).
    #[test]
    fn a_routes_score_is_its_share_of_passing_exchanges_not_their_mean_score() {
        let r = run_of(Thresholds::default(), &[&[true, false]]);
        let route = r
            .routes
            .iter()
            .find(|x| x.route == "GET /a")
            .expect("GET /a");
        assert_eq!((route.exchanges, route.passed), (2, 1));
        assert_eq!(route.score_bp, 5_000);
        assert_eq!(route.mean_exchange_score_bp, 7_500);
        assert_eq!(r.score_bp, 5_000);
    }

    #[test]
    fn the_gates_are_decided_on_the_exact_shares_not_their_rounded_basis_points() {
        // 2 of 3 sessions pass: 0.6667 reaches 0.66665, though 6666 bp is below its 6667.
        let r = run_of(
            Thresholds::from_fractions(0.5, 0.66665),
            &[&[true], &[true], &[false]],
        );
        assert_eq!(
            (r.session_pass_rate_bp, r.required_session_pass_rate_bp),
            (6666, 6667)
        );
        assert!(r.passed && r.scores_held);
        // A session of 2 passing exchanges in 3 reaches a required score of 0.66665.
        let r = run_of(
            Thresholds::from_fractions(0.66665, 1.0),
            &[&[true, true, false]],
        );
        assert_eq!(r.sessions_passed, 1);
        assert!(r.passed);
        // 9 of 10 exchanges is 0.9, below 0.90004, though both show as 9000 bp.
        let r = run_of(
            Thresholds::from_fractions(0.90004, 0.0),
            &[&[true, true, true, true, true, true, true, true, true, false]],
        );
        assert_eq!((r.score_bp, r.required_score_bp), (9000, 9000));
        assert_eq!(r.sessions_passed, 0);
        assert!(!r.passed && !r.scores_held);
        // 9 of 10 sessions is below a session pass rate of 0.90004 too.
        let mut sessions: Vec<&[bool]> = vec![&[true]; 9];
        sessions.push(&[false]);
        let r = run_of(Thresholds::from_fractions(0.5, 0.90004), &sessions);
        assert_eq!(
            (r.session_pass_rate_bp, r.required_session_pass_rate_bp),
            (9000, 9000)
        );
        assert!(!r.passed);
        // Exactly at the threshold passes.
        let r = run_of(Thresholds::from_fractions(0.9, 0.9), &sessions);
        assert!(r.passed);
    }

    #[test]
    fn thresholds_convert_fractions_to_basis_points() {
        let t = Thresholds::from_fractions(0.9, 0.95);
        assert_eq!(t, Thresholds::default());
        assert_eq!(ratio_bp(1, 3), 3333);
        assert_eq!(ratio_bp(0, 0), 10_000);
    }
}
