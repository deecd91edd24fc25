//! The authored-output gate: a Lua handler's answer to a recorded request is compared with the
//! *shape* of what the real API answered (reference §5.2, `authored_deviation`), so a twin whose
//! handwritten parts say something the API never would is caught before agents learn from it.
//!
//! Which answers are judged here: every answer of a recorded exchange that came from a handler
//! (provenance `handler`) or from a fixture entity (provenance `fixture`: data the owner wrote,
//! reference §5.2 "Lua/fixture output shape differs from recordings"), and, in process, the answer the bound handler *would* give to a
//! recorded request exact replay answered instead (the engine's `probe_handler`: a request
//! whose exact URL was recorded is replayed verbatim, so without the probe a handler overriding
//! a recorded route would hardly ever be judged).
//!
//! The rules ([`Rule`]), each against the recordings of the route:
//! - `unrecorded_status`: the handler answered a status no recording of the route has;
//! - `miscased_key`: a recorded key is absent and the answer has the same key spelled with other
//!   case or separators (`userId` for `user_id`, `Name` for `name`);
//! - `missing_key`: a key every recording of that object carries is absent;
//! - `wrong_type`: a value of another JSON type than recorded (`null` on either side is never
//!   a deviation: recordings show absent values as `null`), or a non-JSON body where JSON was
//!   recorded.
//!
//! Keys the handler adds are not deviations (an authored answer may say more). The body is
//! compared with the exchange's own recorded body when the handler answered its status; an
//! answer of another status that the route did record is not shape-checked (its status is
//! judged by the normal diff when served). Array elements are compared with the merge of all
//! recorded elements (a key is required when every recorded element has it).
//!
//! `[[deviations]]` in `wraith.toml` mark intentional deviations ([`DeclaredDeviation`]); a
//! marked one is reported with `marked: true` and does not fail the run, and value divergences
//! of a served handler or fixture answer under its path are exempt from scoring ([`AuthoredGate::exempt`]).
//! An unmarked one fails the run (exit 2) unless `[handlers] deviation_policy = "warn"`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use wraith_model::Route;

use wraith_engine::Provenance;
use wraith_recording::Exchange;

use crate::diff::{Category, render_path};
use crate::judge::{Body, ExpectedBody, ModelIndex, Observed, Verdict, parse_body};
use crate::rules::PathSeg as Seg;

/// `[handlers] deviation_policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviationPolicy {
    /// An unmarked authored deviation fails the run.
    #[default]
    Error,
    /// Unmarked authored deviations are reported; the run passes on its scores alone.
    Warn,
}

impl DeviationPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            DeviationPolicy::Error => "error",
            DeviationPolicy::Warn => "warn",
        }
    }
}

/// One valid `[[deviations]]` entry: the owner says the authored output of `route` deviates
/// from the recordings at `path` (and everything under it) on purpose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeclaredDeviation {
    /// `METHOD /path` (method uppercased; parameter names do not matter when matching).
    pub route: String,
    /// `status`, `body`, or a body path as the report writes them (`body.name`,
    /// `body.items[0].id`, `body["a.b"]`).
    pub path: String,
    pub reason: String,
}

/// One `[[deviations]]` entry as written (every field optional so each missing one is named).
#[derive(Debug, Clone, Copy, Default)]
pub struct DeviationInput<'a> {
    pub route: Option<&'a str>,
    pub path: Option<&'a str>,
    pub reason: Option<&'a str>,
}

/// A `[[deviations]]` entry that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[[deviations]] #{entry}: {message}")]
pub struct DeviationEntryError {
    /// 1-based position of the entry in `wraith.toml`.
    pub entry: usize,
    pub message: String,
}

/// Validate `[[deviations]]` entries (used by both `wraith check` and `wraith lint`): the valid
/// ones, and one error per problem of the others.
pub fn parse_deviations(
    entries: &[DeviationInput<'_>],
) -> (Vec<DeclaredDeviation>, Vec<DeviationEntryError>) {
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let entry = i + 1;
        let mut err = |message: String| errors.push(DeviationEntryError { entry, message });
        let route = match e.route.map(str::trim) {
            None | Some("") => {
                err(
                    "`route` is required: the route as `METHOD /path`, e.g. `GET /customers/:id`"
                        .to_string(),
                );
                None
            }
            Some(r) => match normalize_route(r) {
                Ok(r) => Some(r),
                Err(m) => {
                    err(m);
                    None
                }
            },
        };
        let path = match e.path.map(str::trim) {
            None | Some("") => {
                err(
                    "`path` is required: `status`, `body`, or a body path such as `body.name`"
                        .to_string(),
                );
                None
            }
            Some(p) if is_report_path(p) => Some(p.to_string()),
            Some(p) => {
                err(format!(
                    "`path` = `{p}` is not a path of the answer: write `status`, `body`, or a body \
                     path such as `body.name` or `body.items[0].id`"
                ));
                None
            }
        };
        let reason = match e.reason.map(str::trim) {
            None | Some("") => {
                err(
                    "`reason` is required: say why the authored output deviates on purpose"
                        .to_string(),
                );
                None
            }
            Some(r) => Some(r.to_string()),
        };
        if let (Some(route), Some(path), Some(reason)) = (route, path, reason) {
            ok.push(DeclaredDeviation {
                route,
                path,
                reason,
            });
        }
    }
    (ok, errors)
}

/// `GET /a/:id` from `get  /a/:id`; an error naming what is wrong otherwise.
fn normalize_route(r: &str) -> Result<String, String> {
    let Some((method, path)) = r.split_once(char::is_whitespace) else {
        return Err(format!(
            "`route` = `{r}` is not `METHOD /path`, e.g. `GET /customers/:id`"
        ));
    };
    let path = path.trim();
    if method.is_empty() || !method.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(format!("`route` = `{r}`: `{method}` is not an HTTP method"));
    }
    if !path.starts_with('/') || path.contains(char::is_whitespace) {
        return Err(format!(
            "`route` = `{r}`: the path must start with `/` and hold no spaces, e.g. `GET /customers/:id`"
        ));
    }
    Ok(format!("{} {path}", method.to_ascii_uppercase()))
}

fn is_report_path(p: &str) -> bool {
    p == "status"
        || p == "body"
        || (p.len() > 5 && (p.starts_with("body.") || p.starts_with("body[")))
}

/// Same method and template, parameter names aside (`/a/:id` = `/a/:param`).
pub fn same_route(declared: &str, route: &str) -> bool {
    let (Some((dm, dp)), Some((rm, rp))) = (declared.split_once(' '), route.split_once(' ')) else {
        return false;
    };
    if !dm.eq_ignore_ascii_case(rm) {
        return false;
    }
    let (ds, rs): (Vec<&str>, Vec<&str>) = (dp.split('/').collect(), rp.split('/').collect());
    ds.len() == rs.len()
        && ds
            .iter()
            .zip(&rs)
            .all(|(d, r)| d == r || (d.starts_with(':') && r.starts_with(':')))
}

/// `path` is `declared` or lies under it.
fn covers(declared: &str, path: &str) -> bool {
    path.strip_prefix(declared)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
}

/// The gate's settings for one run.
#[derive(Debug, Clone, Default)]
pub struct AuthoredGate {
    pub policy: DeviationPolicy,
    pub declared: Vec<DeclaredDeviation>,
}

impl AuthoredGate {
    /// The declaration marking a deviation of `route` at `path`, if any.
    pub fn marking(&self, route: &str, path: &str) -> Option<&DeclaredDeviation> {
        self.declared
            .iter()
            .find(|d| same_route(&d.route, route) && covers(&d.path, path))
    }

    /// Whether a declaration exempts a divergence of `route` at `path`: the path is at or under
    /// a declared one, comparing keys without case and separators too, so the divergence at
    /// the handler's own spelling of a declared mis-cased key (`body.Name` for `body.name`) is
    /// exempt with it.
    fn exempts(&self, route: &str, path: &str) -> bool {
        self.declared.iter().any(|d| {
            same_route(&d.route, route)
                && (covers(&d.path, path) || covers(&folded(&d.path), &folded(path)))
        })
    }

    /// Remove from the verdict of a *served handler answer* on `route` the divergences a
    /// declaration exempts: value, type, missing/extra field and array-length divergences at or
    /// under a declared body path (see [`Self::exempts`]), and a status mismatch when `status`
    /// is declared. A refusal and the content type are never exempt. Returns how many were removed; the verdict's
    /// score is recomputed from what is left.
    pub fn exempt(&self, route: &str, verdict: &mut Verdict) -> u64 {
        if self.declared.is_empty() || verdict.divergences.is_empty() {
            return 0;
        }
        let before = verdict.divergences.len();
        verdict.divergences.retain(|d| {
            let exemptable = match d.category {
                Category::StatusMismatch => d.path == "status",
                Category::SynthesizedRefusal => false,
                _ => d.path == "body" || d.path.starts_with("body.") || d.path.starts_with("body["),
            };
            !(exemptable && self.exempts(route, &d.path))
        });
        let removed = (before - verdict.divergences.len()) as u64;
        if removed > 0 {
            // The judge's rule: 10000 with nothing left, else the share of compared positions
            // that agreed, capped at 9999 so a divergent exchange never rounds up to a pass.
            let left = verdict.divergences.len() as u64;
            verdict.score_bp = if left == 0 {
                10_000
            } else {
                let agreed = verdict.compared.saturating_sub(left);
                ((agreed * 10_000 / verdict.compared.max(1)) as u32).min(9_999)
            };
        }
        removed
    }
}

/// What an authored answer does that the recordings never do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    UnrecordedStatus,
    MiscasedKey,
    MissingKey,
    WrongType,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::UnrecordedStatus => "unrecorded_status",
            Rule::MiscasedKey => "miscased_key",
            Rule::MissingKey => "missing_key",
            Rule::WrongType => "wrong_type",
        }
    }
}

/// How the judged handler answer was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    /// The twin served it (provenance `handler`).
    Served,
    /// Exact replay served the recording; the bound handler was probed on a copy of the session.
    Probe,
    /// The twin served it from a fixture entity (provenance `fixture`): data the twin's owner
    /// wrote, judged against the recordings like a handler's answer.
    Fixture,
}

impl AnswerKind {
    /// The kind as the JSON report names it (`served`, `probe`, `fixture`).
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerKind::Served => "served",
            AnswerKind::Probe => "probe",
            AnswerKind::Fixture => "fixture",
        }
    }

    /// Who wrote the answer, as the findings name it.
    fn author(self) -> &'static str {
        match self {
            AnswerKind::Served | AnswerKind::Probe => "handler",
            AnswerKind::Fixture => "fixture",
        }
    }
}

/// One authored deviation of one answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuthoredDeviation {
    /// `METHOD /path` of the route the handler is bound to.
    pub route: String,
    /// `status` or a body path (`body.customer.name`).
    pub path: String,
    pub rule: Rule,
    /// The rule's finding in words.
    pub reason: String,
    /// What the recordings have there (statuses, a key, a JSON type).
    pub expected: Value,
    /// What the handler answered there.
    pub actual: Value,
    pub answer: AnswerKind,
    /// A `[[deviations]]` entry declares it.
    pub marked: bool,
    /// That entry's `reason`.
    pub declared_reason: Option<String>,
}

/// At most this many deviations are reported per answer (an array of wrong elements would
/// otherwise repeat one finding per element).
pub const MAX_PER_ANSWER: usize = 20;

/// Judge a handler's answer (`status`, `body`) on `route` against the recordings: the route's
/// recorded statuses (its variants and exact moments, plus `recorded_status`) and this
/// exchange's recorded body.
#[allow(clippy::too_many_arguments)]
pub fn judge_authored(
    gate: &AuthoredGate,
    route_name: &str,
    route: Option<&Route>,
    recorded_status: u16,
    recorded_body: &Body,
    status: u16,
    body: &[u8],
    answer: AnswerKind,
) -> Vec<AuthoredDeviation> {
    let mut found: Vec<(String, Rule, String, Value, Value)> = Vec::new();
    let mut statuses: Vec<u16> = route
        .map(|r| {
            r.variants
                .iter()
                .map(|v| v.status)
                .chain(
                    r.exact
                        .iter()
                        .flat_map(|e| e.moments.iter().map(|m| m.status)),
                )
                .collect()
        })
        .unwrap_or_default();
    statuses.push(recorded_status);
    statuses.sort_unstable();
    statuses.dedup();
    if !statuses.contains(&status) {
        let listed: Vec<String> = statuses.iter().map(u16::to_string).collect();
        found.push((
            "status".to_string(),
            Rule::UnrecordedStatus,
            format!(
                "the {} answered {status}; the recordings of {route_name} only have {}",
                answer.author(),
                listed.join(", ")
            ),
            Value::from(statuses.clone()),
            Value::from(status),
        ));
    } else if status == recorded_status
        && let Body::Json(recorded) = recorded_body
    {
        match parse_body(body) {
            Body::Json(actual) => {
                let shape = Shape::of(recorded);
                let mut segs = Vec::new();
                compare(&shape, &actual, answer.author(), &mut segs, &mut found);
            }
            other => {
                let kind = match other {
                    Body::Empty => "empty",
                    Body::Text(_) => "text",
                    _ => "binary",
                };
                found.push((
                    "body".to_string(),
                    Rule::WrongType,
                    format!(
                        "the {} answered a {kind} body; the recording is JSON",
                        answer.author()
                    ),
                    Value::from("json"),
                    Value::from(kind),
                ));
            }
        }
    }
    found.truncate(MAX_PER_ANSWER);
    found
        .into_iter()
        .map(|(path, rule, reason, expected, actual)| {
            let mark = gate.marking(route_name, &path);
            AuthoredDeviation {
                route: route_name.to_string(),
                path,
                rule,
                reason,
                expected,
                actual,
                answer,
                marked: mark.is_some(),
                declared_reason: mark.map(|d| d.reason.clone()),
            }
        })
        .collect()
}

/// What judging one exchange's handler answer found ([`judge_exchange`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuthoredOutcome {
    /// Which handler answer was judged, if any.
    pub judged: Option<AnswerKind>,
    pub deviations: Vec<AuthoredDeviation>,
    /// Divergences of the served answer exempted by `[[deviations]]`.
    pub exempted: u64,
}

/// Judge the authored answer of one replayed exchange: the served answer when the twin answered
/// from a handler or a fixture (then `verdict`, that answer's, loses the divergences a
/// declaration exempts), else the probed handler answer, if the driver probed the bound handler.
pub fn judge_exchange(
    gate: &AuthoredGate,
    index: &ModelIndex<'_>,
    ex: &Exchange,
    expected: &ExpectedBody,
    served: &Observed,
    probe: Option<&Observed>,
    verdict: &mut Verdict,
) -> AuthoredOutcome {
    let (answer, kind) = if served.provenance == Some(Provenance::Handler) {
        (served, AnswerKind::Served)
    } else if served.provenance == Some(Provenance::Fixture) {
        (served, AnswerKind::Fixture)
    } else if let Some(p) = probe {
        (p, AnswerKind::Probe)
    } else {
        return AuthoredOutcome::default();
    };
    let route_name = answer
        .route
        .clone()
        .unwrap_or_else(|| verdict.route.clone());
    let deviations = judge_authored(
        gate,
        &route_name,
        index.route(&route_name),
        ex.response.status,
        &expected.body,
        answer.status,
        &answer.body,
        kind,
    );
    // A declaration speaks for what the owner authored and the twin served.
    let exempted = if matches!(kind, AnswerKind::Served | AnswerKind::Fixture) {
        gate.exempt(&route_name, verdict)
    } else {
        0
    };
    AuthoredOutcome {
        judged: Some(kind),
        deviations,
        exempted,
    }
}

/// Provenance words whose answers are authored by the twin's owner rather than learned from
/// the recordings: Lua handlers and fixture entities.
pub const AUTHORED_PROVENANCE: [&str; 2] = ["handler", "fixture"];

/// The "fiction ratio": how much of what the twin answered was authored (handlers, fixtures)
/// rather than recorded or synthesized from the recordings (`recorded`, `template`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Fiction {
    /// Replayed exchanges (the report's `exchanges_total`).
    pub answers: u64,
    /// Of those, answered with provenance `handler` or `fixture`.
    pub authored_answers: u64,
    /// `authored_answers × 10000 / answers`, rounded down (0 when nothing was answered).
    pub ratio_bp: u32,
    /// Recorded exchanges on authored-only routes (`lua/routes.toml`, no recording covers the
    /// route): served from authored output only, never replayed nor scored.
    pub authored_only_exchanges: u64,
}

impl Fiction {
    /// From the report's provenance counts.
    pub fn of(provenance: &BTreeMap<String, u64>, authored_only_exchanges: u64) -> Fiction {
        let answers: u64 = provenance.values().sum();
        let authored_answers = authored_answers(provenance);
        Fiction {
            answers,
            authored_answers,
            ratio_bp: fiction_ratio_bp(authored_answers, answers),
            authored_only_exchanges,
        }
    }
}

/// Answers with an authored provenance among `provenance` counts.
pub fn authored_answers(provenance: &BTreeMap<String, u64>) -> u64 {
    AUTHORED_PROVENANCE
        .iter()
        .filter_map(|p| provenance.get(*p))
        .sum()
}

/// `authored × 10000 / answers`, rounded down; 0 for no answers (nothing was invented).
pub fn fiction_ratio_bp(authored: u64, answers: u64) -> u32 {
    (authored * 10_000)
        .checked_div(answers)
        .map_or(0, |v| v as u32)
}

/// One authored deviation in the report (`authored_deviations[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuthoredDeviationRecord {
    /// Always `authored_deviation`.
    pub category: &'static str,
    /// `error` (unmarked, policy `error`: fails the run), `warning` (unmarked, policy `warn`)
    /// or `info` (marked by a `[[deviations]]` entry).
    pub severity: &'static str,
    pub session: String,
    pub exchange: u64,
    #[serde(flatten)]
    pub deviation: AuthoredDeviation,
}

/// The gate's totals (`authored` in the report).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AuthoredSummary {
    /// `[handlers] deviation_policy`: `error` or `warn`.
    pub deviation_policy: DeviationPolicy,
    /// Handler answers judged: served by the twin (provenance `handler`) and probed (exact
    /// replay served the recording; the bound handler was run on a copy of the session).
    pub served_answers: u64,
    pub probed_answers: u64,
    /// Fixture answers judged (served with provenance `fixture`).
    pub fixture_answers: u64,
    /// Authored deviations found (all, listed or not).
    pub deviations: u64,
    pub unmarked: u64,
    pub marked: u64,
    /// Deviations counted but not listed in `authored_deviations` (beyond the report cap).
    pub omitted: u64,
    /// Divergences of served handler answers a `[[deviations]]` entry exempted from scoring.
    pub exempted_divergences: u64,
    /// No unmarked deviation, or policy `warn`.
    pub gate_passed: bool,
}

/// At most this many authored deviations are listed in a report (all are counted).
pub const MAX_LISTED: usize = 10_000;

/// Accumulates authored deviations into the report's `authored` and `authored_deviations`.
#[derive(Debug, Clone, Default)]
pub struct AuthoredAcc {
    summary: AuthoredSummary,
    listed: Vec<AuthoredDeviationRecord>,
}

impl AuthoredAcc {
    pub fn set_policy(&mut self, policy: DeviationPolicy) {
        self.summary.deviation_policy = policy;
    }

    /// Fold in what judging one exchange's handler answer found.
    pub fn add(
        &mut self,
        session: &str,
        exchange: u64,
        judged: Option<AnswerKind>,
        deviations: Vec<AuthoredDeviation>,
        exempted: u64,
    ) {
        match judged {
            Some(AnswerKind::Served) => self.summary.served_answers += 1,
            Some(AnswerKind::Probe) => self.summary.probed_answers += 1,
            Some(AnswerKind::Fixture) => self.summary.fixture_answers += 1,
            None => {}
        }
        self.summary.exempted_divergences += exempted;
        for d in deviations {
            self.summary.deviations += 1;
            let severity = if d.marked {
                self.summary.marked += 1;
                "info"
            } else {
                self.summary.unmarked += 1;
                match self.summary.deviation_policy {
                    DeviationPolicy::Error => "error",
                    DeviationPolicy::Warn => "warning",
                }
            };
            if self.listed.len() >= MAX_LISTED {
                self.summary.omitted += 1;
                continue;
            }
            self.listed.push(AuthoredDeviationRecord {
                category: "authored_deviation",
                severity,
                session: session.to_string(),
                exchange,
                deviation: d,
            });
        }
    }

    /// The summary (with `gate_passed` decided) and the listed deviations.
    pub fn finish(self) -> (AuthoredSummary, Vec<AuthoredDeviationRecord>) {
        let mut summary = self.summary;
        summary.gate_passed =
            summary.unmarked == 0 || summary.deviation_policy == DeviationPolicy::Warn;
        (summary, self.listed)
    }
}

/// The shape of recorded JSON: types, keys, and whether every recording of an object has a key.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    /// Only `null` was recorded here: anything fits.
    Null,
    /// Recordings disagree on the type: anything fits.
    Mixed,
    Bool,
    Number,
    String,
    /// Merged element shape; `None` when every recorded array was empty.
    Array(Option<Box<Shape>>),
    /// Key → (shape, required).
    Object(BTreeMap<String, (Shape, bool)>),
}

impl Shape {
    fn of(v: &Value) -> Shape {
        match v {
            Value::Null => Shape::Null,
            Value::Bool(_) => Shape::Bool,
            Value::Number(_) => Shape::Number,
            Value::String(_) => Shape::String,
            Value::Array(items) => Shape::Array(
                items
                    .iter()
                    .map(Shape::of)
                    .reduce(Shape::merge)
                    .map(Box::new),
            ),
            Value::Object(m) => Shape::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), (Shape::of(v), true)))
                    .collect(),
            ),
        }
    }

    fn merge(self, other: Shape) -> Shape {
        match (self, other) {
            (Shape::Null, x) | (x, Shape::Null) => x,
            (Shape::Mixed, _) | (_, Shape::Mixed) => Shape::Mixed,
            (Shape::Array(a), Shape::Array(b)) => Shape::Array(match (a, b) {
                (Some(a), Some(b)) => Some(Box::new(a.merge(*b))),
                (a, b) => a.or(b),
            }),
            (Shape::Object(mut a), Shape::Object(b)) => {
                for (_, (_, req)) in a.iter_mut().filter(|(k, _)| !b.contains_key(*k)) {
                    *req = false;
                }
                for (k, (s, req)) in b {
                    match a.remove(&k) {
                        Some((prev, prev_req)) => {
                            a.insert(k, (prev.merge(s), prev_req && req));
                        }
                        None => {
                            a.insert(k, (s, false));
                        }
                    }
                }
                Shape::Object(a)
            }
            (a, b) if a == b => a,
            _ => Shape::Mixed,
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Shape::Null => "null",
            Shape::Mixed => "any",
            Shape::Bool => "boolean",
            Shape::Number => "number",
            Shape::String => "string",
            Shape::Array(_) => "array",
            Shape::Object(_) => "object",
        }
    }
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A key without case and separators: `userId`, `user_id` and `UserID` are one spelling.
fn folded(k: &str) -> String {
    k.chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect()
}

type Found = Vec<(String, Rule, String, Value, Value)>;

/// `author` names who wrote the answer in the findings (`handler`, `fixture`).
fn compare<'s>(
    shape: &'s Shape,
    actual: &Value,
    author: &str,
    segs: &mut Vec<Seg<'s>>,
    out: &mut Found,
) {
    if out.len() >= MAX_PER_ANSWER {
        return;
    }
    match (shape, actual) {
        (Shape::Null | Shape::Mixed, _) | (_, Value::Null) => {}
        (Shape::Bool, Value::Bool(_))
        | (Shape::Number, Value::Number(_))
        | (Shape::String, Value::String(_)) => {}
        (Shape::Array(elem), Value::Array(items)) => {
            if let Some(elem) = elem {
                for (i, item) in items.iter().enumerate() {
                    segs.push(Seg::Index(i));
                    compare(elem, item, author, segs, out);
                    segs.pop();
                }
            }
        }
        (Shape::Object(keys), Value::Object(m)) => {
            for (k, (sub, required)) in keys {
                segs.push(Seg::Key(k));
                if let Some(v) = m.get(k) {
                    compare(sub, v, author, segs, out);
                } else if let Some(other) = m
                    .keys()
                    .find(|o| !keys.contains_key(*o) && folded(o) == folded(k))
                {
                    out.push((
                        render_path("body", segs),
                        Rule::MiscasedKey,
                        format!("the {author} spells the recorded key `{k}` as `{other}`"),
                        Value::from(k.as_str()),
                        Value::from(other.as_str()),
                    ));
                } else if *required {
                    out.push((
                        render_path("body", segs),
                        Rule::MissingKey,
                        format!(
                            "every recording has the key `{k}`; the {author}'s answer does not"
                        ),
                        Value::from(k.as_str()),
                        Value::Null,
                    ));
                }
                segs.pop();
            }
        }
        (s, v) => out.push((
            render_path("body", segs),
            Rule::WrongType,
            format!(
                "the {author} answered a {} where the recordings have a {}",
                type_of(v),
                s.type_name()
            ),
            Value::from(s.type_name()),
            Value::from(type_of(v)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn devs(recorded: Value, status: u16, answer: Value) -> Vec<(String, Rule)> {
        let body = serde_json::to_vec(&answer).unwrap_or_default();
        judge_authored(
            &AuthoredGate::default(),
            "GET /c/:id",
            None,
            200,
            &Body::Json(recorded),
            status,
            &body,
            AnswerKind::Served,
        )
        .into_iter()
        .map(|d| (d.path, d.rule))
        .collect()
    }

    #[test]
    fn a_fixture_answer_is_judged_by_the_same_rules_and_named_as_a_fixture() {
        let d = judge_authored(
            &AuthoredGate::default(),
            "GET /c/:id",
            None,
            200,
            &Body::Json(json!({"id": 1, "name": "a"})),
            200,
            br#"{"id": 1, "Name": "a"}"#,
            AnswerKind::Fixture,
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].rule, Rule::MiscasedKey);
        assert_eq!(d[0].answer, AnswerKind::Fixture);
        assert_eq!(
            d[0].reason,
            "the fixture spells the recorded key `name` as `Name`"
        );
        let mut acc = AuthoredAcc::default();
        acc.add("s", 0, Some(AnswerKind::Fixture), d, 0);
        let (summary, listed) = acc.finish();
        assert_eq!(summary.fixture_answers, 1);
        assert_eq!(summary.served_answers + summary.probed_answers, 0);
        assert!(!summary.gate_passed);
        assert_eq!(listed.len(), 1);
    }

    #[test]
    fn a_handler_answer_of_the_recorded_shape_has_no_deviation() {
        let rec = json!({"id": "c1", "name": "Ann", "tags": [{"k": 1}], "note": null});
        let ans = json!({"id": "c9", "name": "Zed", "tags": [], "note": "x", "extra": true});
        assert!(devs(rec, 200, ans).is_empty());
    }

    #[test]
    fn miscased_missing_and_wrongly_typed_keys_are_deviations() {
        let rec = json!({"user_id": "u1", "name": "Ann", "age": 3, "addr": {"city": "X"}});
        let ans = json!({"userId": "u1", "age": "3", "addr": {"City": "X"}});
        assert_eq!(
            devs(rec, 200, ans),
            vec![
                ("body.addr.city".to_string(), Rule::MiscasedKey),
                ("body.age".to_string(), Rule::WrongType),
                ("body.name".to_string(), Rule::MissingKey),
                ("body.user_id".to_string(), Rule::MiscasedKey),
            ]
        );
    }

    #[test]
    fn a_status_no_recording_of_the_route_has_is_a_deviation() {
        assert_eq!(
            devs(json!({"a": 1}), 418, json!({})),
            vec![("status".to_string(), Rule::UnrecordedStatus)]
        );
    }

    #[test]
    fn array_elements_need_only_the_keys_every_recorded_element_has() {
        let rec = json!({"items": [{"id": 1, "opt": "x"}, {"id": 2}]});
        let ans = json!({"items": [{"id": 5}, {"opt": "y"}]});
        assert_eq!(
            devs(rec, 200, ans),
            vec![("body.items[1].id".to_string(), Rule::MissingKey)]
        );
    }

    #[test]
    fn deviations_entries_are_validated_one_problem_at_a_time() {
        let (ok, errors) = parse_deviations(&[
            DeviationInput {
                route: Some("get /c/:id"),
                path: Some("body.name"),
                reason: Some("legacy"),
            },
            DeviationInput {
                route: Some("/c/:id"),
                path: Some("name"),
                reason: None,
            },
        ]);
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].route, "GET /c/:id");
        let msgs: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert!(msgs.iter().all(|m| m.starts_with("[[deviations]] #2: ")));
    }

    #[test]
    fn a_declaration_marks_its_path_and_everything_under_it_on_the_same_route() {
        let gate = AuthoredGate {
            policy: DeviationPolicy::Error,
            declared: vec![DeclaredDeviation {
                route: "GET /c/:param".into(),
                path: "body.addr".into(),
                reason: "r".into(),
            }],
        };
        assert!(gate.marking("GET /c/:id", "body.addr").is_some());
        assert!(gate.marking("GET /c/:id", "body.addr.city").is_some());
        assert!(gate.marking("GET /c/:id", "body.addr[0]").is_some());
        assert!(gate.marking("GET /c/:id", "body.address").is_none());
        assert!(gate.marking("POST /c/:id", "body.addr").is_none());
        assert!(gate.marking("GET /c/:id/x", "body.addr").is_none());
    }

    #[test]
    fn declared_paths_exempt_value_divergences_of_a_served_answer_but_never_refusals() {
        use crate::diff::Divergence;
        let gate = AuthoredGate {
            policy: DeviationPolicy::Error,
            declared: vec![DeclaredDeviation {
                route: "GET /c/:id".into(),
                path: "body.name".into(),
                reason: "r".into(),
            }],
        };
        let d = |path: &str, category| Divergence {
            path: path.into(),
            category,
            expected: json!(1),
            actual: json!(2),
        };
        let mut v = crate::judge::finish(
            "GET /c/:id".into(),
            vec![
                d("body.name", Category::MissingField),
                d("body.Name", Category::ExtraField),
                d("body.id", Category::ValueMismatch),
            ],
            4,
        );
        // The declared key and the handler's own spelling of it are both exempt.
        assert_eq!(gate.exempt("GET /c/:id", &mut v), 2);
        assert_eq!(v.divergences.len(), 1);
        assert_eq!(v.score_bp, 7500);
        let mut r = crate::judge::finish(
            "GET /c/:id".into(),
            vec![d("body.name", Category::SynthesizedRefusal)],
            1,
        );
        assert_eq!(gate.exempt("GET /c/:id", &mut r), 0);
    }
}
