//! The user's `[diff]` rules for `wraith check`, compiled once per run: `[[diff.suppress]]`
//! (divergences removed before scoring, each with its reason), `[diff.fields."<path>"]` (a field
//! class that wins over the model's), and the per-dimension gates `[diff.thresholds]` /
//! `[diff.overrides."METHOD /path"]`.
//!
//! The binary reads `wraith.toml` and hands the entries in as plain values ([`SuppressInput`],
//! [`FieldInput`], [`ThresholdInput`]); [`DiffRules::compile`] validates every entry and returns
//! every problem at once ([`RuleError`]), so `wraith check` can refuse a bad file (exit 1) and
//! `wraith lint` can list each bad entry.
//!
//! Pattern syntax (documented in `docs/conformance.md`, "Configuring the diff"):
//! - a **path** is the report's path syntax (`body.items[2].name`, `body["a.b"]`,
//!   `headers.content-type`, `status`): `body.` is put in front unless it starts with `body`,
//!   `headers`, `status` or `response`; `*` inside a key matches any characters of that key
//!   (`*_at`); a whole segment `*` matches any one key or index; `[*]` and `[]` match any array
//!   index; `**` matches any number of segments, none included.
//! - a **route** is `METHOD /template` as the report names routes (`GET /customers/:param`);
//!   `*` matches any characters (`GET /customers/*`, `* /admin/*`).
//! - a **category** is a report category name; `*` matches any characters.
//!
//! A refusal (`synthesized_refusal`) is never suppressed: a twin that said "I don't know" did not
//! reproduce the API, whatever a rule says.

use serde::Serialize;
use serde_json::Value;

use crate::diff::{Category, Divergence};

/// A problem with one `[diff]` entry: what, where (the entry and its key) and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// Stable rule id for `wraith lint`: `diff-suppress-matcher`, `diff-suppress-reason`,
    /// `diff-route`, `diff-path`,
    /// `diff-category`, `diff-field-class`, `diff-field-enum-values`, `diff-threshold`,
    /// `diff-scoring-version`.
    pub rule: &'static str,
    /// 1-based line of the entry in `wraith.toml` (0 when unknown).
    pub line: usize,
    /// The entry: `[[diff.suppress]] entry 2`, `[diff.fields."body.status"]`.
    pub entry: String,
    /// The key inside the entry: `reason`, `route`, `classify`.
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for RuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: `{}`: {}", self.entry, self.key, self.message)
    }
}

/// One `[[diff.suppress]]` entry as written (empty strings for absent keys).
#[derive(Debug, Clone, Default)]
pub struct SuppressInput {
    pub route: String,
    pub path: String,
    pub category: String,
    pub reason: String,
    pub line: usize,
}

/// One `[diff.fields."<path>"]` entry as written.
#[derive(Debug, Clone, Default)]
pub struct FieldInput {
    /// The table key: a body position.
    pub path: String,
    /// `classify` (empty when absent).
    pub classify: String,
    /// `values`, when given.
    pub values: Option<Vec<Value>>,
    pub line: usize,
}

/// The four dimension thresholds as fractions (`[diff.thresholds]`, or one override where an
/// absent key is `None` and inherits `[diff.thresholds]`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThresholdInput {
    pub body_structure: Option<f64>,
    pub body_values: Option<f64>,
    pub symbol_consistency: Option<f64>,
    pub header_conformance: Option<f64>,
}

/// Everything `[diff]` says beyond the two overall gates.
#[derive(Debug, Clone)]
pub struct RulesInput {
    pub suppress: Vec<SuppressInput>,
    pub fields: Vec<FieldInput>,
    /// `[diff.thresholds]`; absent keys take the defaults (0.90, 0.85, 1.0, 0.80).
    pub thresholds: ThresholdInput,
    pub thresholds_line: usize,
    /// `[diff.overrides."METHOD /path"]`: (route pattern, thresholds, line).
    pub overrides: Vec<(String, ThresholdInput, usize)>,
    /// `[diff] scoring_version` (absent: [`SCORING_VERSION`]) and its line (0 when unknown).
    pub scoring_version: u32,
    pub scoring_version_line: usize,
}

impl Default for RulesInput {
    fn default() -> RulesInput {
        RulesInput {
            suppress: Vec::new(),
            fields: Vec::new(),
            thresholds: ThresholdInput::default(),
            thresholds_line: 0,
            overrides: Vec::new(),
            scoring_version: SCORING_VERSION,
            scoring_version_line: 0,
        }
    }
}

/// The only scoring version there is: how exchanges, routes, sessions and dimensions are scored
/// (`docs/conformance.md`, "Scores"). `[diff] scoring_version` may name it; any other value is
/// a configuration error, so a twin written for another scoring is never silently scored
/// under this one.
pub const SCORING_VERSION: u32 = 1;

/// The scored dimensions of an exchange (`docs/conformance.md`, "Dimensions").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    /// Missing or extra fields, type mismatches, array lengths, body kinds.
    BodyStructure,
    /// Values not acceptable under their field's class.
    BodyValues,
    /// Echoed positions (request values the answer must repeat) that held.
    SymbolConsistency,
    /// The compared headers (`content-type`).
    HeaderConformance,
}

impl Dimension {
    pub const ALL: [Dimension; 4] = [
        Dimension::BodyStructure,
        Dimension::BodyValues,
        Dimension::SymbolConsistency,
        Dimension::HeaderConformance,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::BodyStructure => "body_structure",
            Dimension::BodyValues => "body_values",
            Dimension::SymbolConsistency => "symbol_consistency",
            Dimension::HeaderConformance => "header_conformance",
        }
    }

    /// The documented default threshold, in basis points.
    pub fn default_bp(self) -> u32 {
        match self {
            Dimension::BodyStructure => 9_000,
            Dimension::BodyValues => 8_500,
            Dimension::SymbolConsistency => 10_000,
            Dimension::HeaderConformance => 8_000,
        }
    }
}

/// Required basis points per dimension (as the report shows them), and the fractions as
/// written, which decide the gate ([`DimensionGates::fraction`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DimensionGates {
    pub body_structure: u32,
    pub body_values: u32,
    pub symbol_consistency: u32,
    pub header_conformance: u32,
    /// Per dimension, in [`Dimension::ALL`] order.
    fractions: [f64; 4],
}

impl Default for DimensionGates {
    fn default() -> Self {
        let mut g = DimensionGates {
            body_structure: 0,
            body_values: 0,
            symbol_consistency: 0,
            header_conformance: 0,
            fractions: [0.0; 4],
        };
        for d in Dimension::ALL {
            g.set(d, f64::from(d.default_bp()) / 10_000.0);
        }
        g
    }
}

impl DimensionGates {
    pub fn get(&self, d: Dimension) -> u32 {
        match d {
            Dimension::BodyStructure => self.body_structure,
            Dimension::BodyValues => self.body_values,
            Dimension::SymbolConsistency => self.symbol_consistency,
            Dimension::HeaderConformance => self.header_conformance,
        }
    }

    /// The gate as written in `wraith.toml` (a fraction): a dimension holds when the share of
    /// its exchanges that passed reaches it ([`crate::report::share_reaches`]).
    pub fn fraction(&self, d: Dimension) -> f64 {
        self.fractions[d as usize]
    }

    fn set(&mut self, d: Dimension, fraction: f64) {
        self.fractions[d as usize] = fraction;
        let bp = (fraction * 10_000.0).round() as u32;
        match d {
            Dimension::BodyStructure => self.body_structure = bp,
            Dimension::BodyValues => self.body_values = bp,
            Dimension::SymbolConsistency => self.symbol_consistency = bp,
            Dimension::HeaderConformance => self.header_conformance = bp,
        }
    }
}

fn threshold_of(t: &ThresholdInput, d: Dimension) -> Option<f64> {
    match d {
        Dimension::BodyStructure => t.body_structure,
        Dimension::BodyValues => t.body_values,
        Dimension::SymbolConsistency => t.symbol_consistency,
        Dimension::HeaderConformance => t.header_conformance,
    }
}

/// A field class the user declared for a body position (`[diff.fields]`).
#[derive(Debug, Clone, PartialEq)]
pub enum UserClass {
    /// JSON type only.
    Generated,
    /// JSON type only.
    Timestamp,
    /// Exact.
    Constant,
    /// Equals a value of the request: the model's echo source when the model has an echo hole
    /// there, else any path parameter, query value, header value or body leaf of the request.
    Echoed,
    /// One of `values` (or the recorded value).
    Enum(Vec<Value>),
}

/// A compiled `[diff.fields]` entry.
#[derive(Debug, Clone)]
pub struct FieldRule {
    /// As written (for messages).
    pub path: String,
    /// The pattern below `body`.
    pattern: PathPattern,
    pub class: UserClass,
}

/// A compiled `[[diff.suppress]]` entry.
#[derive(Debug, Clone)]
pub struct SuppressRule {
    /// 1-based position in the file.
    pub number: usize,
    route: Option<String>,
    path: Option<PathPattern>,
    category: Option<String>,
    pub reason: String,
}

impl SuppressRule {
    /// True when the rule removes divergence `d` found under `route`. Never for a refusal.
    pub fn matches(&self, route: &str, d: &Divergence) -> bool {
        self.matches_at(route, d, parse_concrete(&d.path).as_deref())
    }

    /// [`Self::matches`] with the divergence's path already split (`None`: it does not parse,
    /// so no path pattern matches it).
    fn matches_at(&self, route: &str, d: &Divergence, segs: Option<&[OwnedSeg]>) -> bool {
        if d.category == Category::SynthesizedRefusal {
            return false;
        }
        if let Some(r) = &self.route
            && !glob(r, route)
        {
            return false;
        }
        if let Some(c) = &self.category
            && !glob(c, d.category.as_str())
        {
            return false;
        }
        if let Some(p) = &self.path {
            let Some(segs) = segs else {
                return false;
            };
            if !p.matches_owned(segs) {
                return false;
            }
        }
        true
    }
}

/// All `[diff]` rules of a run.
#[derive(Debug, Clone, Default)]
pub struct DiffRules {
    pub suppress: Vec<SuppressRule>,
    /// Most specific first (see [`DiffRules::field_class`]).
    pub fields: Vec<FieldRule>,
    /// `[diff.thresholds]` in basis points.
    pub gates: DimensionGates,
    /// `[diff.overrides]`: route pattern → gates (unset keys inherit `gates`).
    pub overrides: Vec<(String, DimensionGates)>,
}

impl DiffRules {
    /// Validate and compile every entry. All problems are returned, in file order.
    pub fn compile(input: &RulesInput) -> Result<DiffRules, Vec<RuleError>> {
        let mut errors = Vec::new();
        let mut rules = DiffRules::default();
        for (i, s) in input.suppress.iter().enumerate() {
            let entry = format!("[[diff.suppress]] entry {}", i + 1);
            let err = |rule, key: &str, message: String| RuleError {
                rule,
                line: s.line,
                entry: entry.clone(),
                key: key.to_string(),
                message,
            };
            let before = errors.len();
            if [&s.route, &s.path, &s.category]
                .iter()
                .all(|k| k.trim().is_empty())
            {
                errors.push(err(
                    "diff-suppress-matcher",
                    "route",
                    "has no matcher: give at least one of `route`, `path` or `category` (an \
                     entry matching everything would hide every divergence and pass any twin)"
                        .to_string(),
                ));
            }
            if s.reason.trim().is_empty() {
                errors.push(err(
                    "diff-suppress-reason",
                    "reason",
                    "is required: say why this difference is accepted (`wraith check \
                     --show-suppressed` prints it next to every divergence it removes)"
                        .to_string(),
                ));
            }
            let route = match s.route.trim() {
                "" => None,
                r => match check_route_pattern(r) {
                    Ok(()) => Some(r.to_string()),
                    Err(m) => {
                        errors.push(err("diff-route", "route", m));
                        None
                    }
                },
            };
            let path = match s.path.trim() {
                "" => None,
                p => match PathPattern::parse(p, true) {
                    Ok(pat) => Some(pat),
                    Err(m) => {
                        errors.push(err("diff-path", "path", m));
                        None
                    }
                },
            };
            let category = match s.category.trim() {
                "" => None,
                c => {
                    let hits: Vec<Category> = Category::ALL
                        .into_iter()
                        .filter(|k| glob(c, k.as_str()))
                        .collect();
                    if hits.is_empty() {
                        errors.push(err(
                            "diff-category",
                            "category",
                            format!(
                                "`{c}` matches no category; categories: {}",
                                Category::ALL.map(Category::as_str).join(", ")
                            ),
                        ));
                    } else if hits == [Category::SynthesizedRefusal] {
                        errors.push(err(
                            "diff-category",
                            "category",
                            "a `synthesized_refusal` is never suppressed: a twin that refused did \
                             not reproduce the API (add the route to the recordings instead)"
                                .to_string(),
                        ));
                    }
                    Some(c.to_string())
                }
            };
            if errors.len() == before {
                rules.suppress.push(SuppressRule {
                    number: i + 1,
                    route,
                    path,
                    category,
                    reason: s.reason.trim().to_string(),
                });
            }
        }
        for f in &input.fields {
            let entry = format!("[diff.fields.{}]", Value::String(f.path.clone()));
            let err = |rule, key: &str, message: String| RuleError {
                rule,
                line: f.line,
                entry: entry.clone(),
                key: key.to_string(),
                message,
            };
            let before = errors.len();
            let pattern = match PathPattern::parse(&f.path, false) {
                Ok(p) => Some(p),
                Err(m) => {
                    errors.push(err("diff-path", "path", m));
                    None
                }
            };
            let values = f.values.clone();
            let class = match f.classify.trim() {
                "generated" => Some(UserClass::Generated),
                "timestamp" | "timestamp_like" => Some(UserClass::Timestamp),
                "constant" => Some(UserClass::Constant),
                "echoed" => Some(UserClass::Echoed),
                "enum" => match &values {
                    Some(v) if !v.is_empty() => Some(UserClass::Enum(v.clone())),
                    _ => {
                        errors.push(err(
                            "diff-field-enum-values",
                            "values",
                            "`classify = \"enum\"` needs `values`: the accepted values, e.g. \
                             `values = [\"open\", \"closed\"]`"
                                .to_string(),
                        ));
                        None
                    }
                },
                "" => {
                    errors.push(err(
                        "diff-field-class",
                        "classify",
                        "is required: one of generated, timestamp, constant, echoed, enum"
                            .to_string(),
                    ));
                    None
                }
                other => {
                    errors.push(err(
                        "diff-field-class",
                        "classify",
                        format!(
                            "unknown class `{other}`; use one of generated, timestamp, constant, \
                             echoed, enum"
                        ),
                    ));
                    None
                }
            };
            if values.is_some() && !matches!(class, Some(UserClass::Enum(_)) | None) {
                errors.push(err(
                    "diff-field-class",
                    "values",
                    "only applies to `classify = \"enum\"`; remove it or make the class enum"
                        .to_string(),
                ));
            }
            if errors.len() == before
                && let (Some(pattern), Some(class)) = (pattern, class)
            {
                rules.fields.push(FieldRule {
                    path: f.path.clone(),
                    pattern: pattern.below_body(),
                    class,
                });
            }
        }
        // Most specific first: more literal segments, then more segments, then the text.
        rules.fields.sort_by(|a, b| {
            b.pattern
                .specificity()
                .cmp(&a.pattern.specificity())
                .then_with(|| a.path.cmp(&b.path))
        });
        let gates_of = |t: &ThresholdInput,
                        base: DimensionGates,
                        entry: &str,
                        line: usize,
                        errors: &mut Vec<RuleError>| {
            let mut g = base;
            for d in Dimension::ALL {
                if let Some(v) = threshold_of(t, d) {
                    if !(0.0..=1.0).contains(&v) || v.is_nan() {
                        errors.push(RuleError {
                            rule: "diff-threshold",
                            line,
                            entry: entry.to_string(),
                            key: d.as_str().to_string(),
                            message: format!("must be between 0 and 1, got {v}"),
                        });
                    } else {
                        g.set(d, v);
                    }
                }
            }
            g
        };
        if input.scoring_version != SCORING_VERSION {
            errors.push(RuleError {
                rule: "diff-scoring-version",
                line: input.scoring_version_line,
                entry: "[diff]".to_string(),
                key: "scoring_version".to_string(),
                message: format!(
                    "is {}, but this wraith scores only with version {SCORING_VERSION}: set \
                     `scoring_version = {SCORING_VERSION}` or remove the key",
                    input.scoring_version
                ),
            });
        }
        rules.gates = gates_of(
            &input.thresholds,
            DimensionGates::default(),
            "[diff.thresholds]",
            input.thresholds_line,
            &mut errors,
        );
        for (route, t, line) in &input.overrides {
            let entry = format!("[diff.overrides.{}]", Value::String(route.clone()));
            if let Err(m) = check_route_pattern(route.trim()) {
                errors.push(RuleError {
                    rule: "diff-route",
                    line: *line,
                    entry: entry.clone(),
                    key: "route".to_string(),
                    message: m,
                });
                continue;
            }
            let g = gates_of(t, rules.gates, &entry, *line, &mut errors);
            rules.overrides.push((route.trim().to_string(), g));
        }
        if errors.is_empty() {
            Ok(rules)
        } else {
            errors.sort_by_key(|e| e.line);
            Err(errors)
        }
    }

    /// True when there is nothing to apply to a judged exchange (no suppress or field rule).
    pub fn is_inert(&self) -> bool {
        self.suppress.is_empty() && self.fields.is_empty()
    }

    /// True when some field rule declares `echoed` (its verdict then depends on the whole
    /// request, not only on the model's echo sources).
    pub fn has_user_echo(&self) -> bool {
        self.fields.iter().any(|f| f.class == UserClass::Echoed)
    }

    /// The class the user declared for the body position `segs` (below `body`), if any: the
    /// most specific matching `[diff.fields]` entry.
    pub fn field_class(&self, segs: &[PathSeg<'_>]) -> Option<&UserClass> {
        self.fields
            .iter()
            .find(|f| f.pattern.matches(segs))
            .map(|f| &f.class)
    }

    /// The `[diff.overrides]` patterns, and the `[[diff.suppress]]` entries (by number) with a
    /// route pattern, that match no route of `model` (`METHOD /path`, as the report names them):
    /// most often a typo, which would leave a gate or a rule silently doing nothing.
    pub fn unmatched_routes(&self, model: &wraith_model::Model) -> (Vec<&str>, Vec<(usize, &str)>) {
        let routes: Vec<String> = model.routes.iter().map(|r| r.label()).collect();
        let none = |pat: &str| !routes.iter().any(|r| pat == r || glob(pat, r));
        let overrides = self
            .overrides
            .iter()
            .map(|(pat, _)| pat.as_str())
            .filter(|p| none(p))
            .collect();
        let suppress = self
            .suppress
            .iter()
            .filter_map(|r| r.route.as_deref().map(|p| (r.number, p)))
            .filter(|(_, p)| none(p))
            .collect();
        (overrides, suppress)
    }

    /// The gates for `route`: the `[diff.overrides]` entry naming it exactly, else the longest
    /// pattern matching it (ties: the first in key order), if any.
    pub fn route_gates(&self, route: &str) -> Option<DimensionGates> {
        if let Some((_, g)) = self.overrides.iter().find(|(pat, _)| pat == route) {
            return Some(*g);
        }
        self.overrides
            .iter()
            .filter(|(pat, _)| glob(pat, route))
            .fold(None::<&(String, DimensionGates)>, |best, o| match best {
                Some(b) if b.0.len() >= o.0.len() => Some(b),
                _ => Some(o),
            })
            .map(|(_, g)| *g)
    }

    /// Split `divergences` into those kept and those a rule removes (with the rule).
    pub fn suppress<'r>(
        &'r self,
        route: &str,
        divergences: Vec<Divergence>,
    ) -> (Vec<Divergence>, Vec<(Divergence, &'r SuppressRule)>) {
        if self.suppress.is_empty() {
            return (divergences, Vec::new());
        }
        let mut kept = Vec::with_capacity(divergences.len());
        let mut removed = Vec::new();
        for d in divergences {
            if d.category == Category::SynthesizedRefusal {
                kept.push(d);
                continue;
            }
            let segs = parse_concrete(&d.path);
            match self
                .suppress
                .iter()
                .find(|r| r.matches_at(route, &d, segs.as_deref()))
            {
                Some(r) => removed.push((d, r)),
                None => kept.push(d),
            }
        }
        (kept, removed)
    }
}

/// `METHOD /path` with METHOD letters or `*`, and the path starting with `/` or `*`; a route of
/// another origin is `METHOD /path on <origin>`, as the report names it.
fn check_route_pattern(r: &str) -> Result<(), String> {
    let example =
        "write it as the report names routes, e.g. `GET /customers/:param` or `* /admin/*`";
    let Some((method, path)) = r.split_once(' ') else {
        return Err(format!("`{r}` is not `METHOD /path`; {example}"));
    };
    let method_ok = method == "*"
        || (!method.is_empty() && method.chars().all(|c| c.is_ascii_alphabetic() || c == '*'));
    if !method_ok {
        return Err(format!(
            "`{method}` in `{r}` is not an HTTP method; {example}"
        ));
    }
    if method.chars().any(|c| c.is_ascii_lowercase()) {
        return Err(format!(
            "the method in `{r}` must be upper case (`{}`); {example}",
            method.to_ascii_uppercase()
        ));
    }
    let path = path.trim();
    let (path, origin) = match path.split_once(" on ") {
        Some((path, origin)) => (path.trim(), Some(origin.trim())),
        None => (path, None),
    };
    if !(path.starts_with('/') || path.starts_with('*')) || path.contains(char::is_whitespace) {
        return Err(format!("`{path}` in `{r}` is not a path; {example}"));
    }
    if let Some(origin) = origin
        && (origin.is_empty() || origin.contains(char::is_whitespace))
    {
        return Err(format!(
            "`{origin}` in `{r}` is not an origin; write a route of another host as the \
             report names it, e.g. `GET /nodes on https://east.example.com`"
        ));
    }
    Ok(())
}

/// `*` matches any characters (none included); everything else matches itself.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p = pattern.as_bytes();
    let t = text.as_bytes();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}

/// One step of a concrete body position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathSeg<'a> {
    Key(&'a str),
    Index(usize),
}

/// One step of a path pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// A key; `*` inside is a glob unless the key was quoted.
    Key {
        text: String,
        glob: bool,
    },
    Index(usize),
    /// `[*]` / `[]`.
    AnyIndex,
    /// A whole-segment `*`: any one key or index.
    Any,
    /// `**`: any number of segments.
    AnyDepth,
}

/// A compiled path pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPattern {
    toks: Vec<Tok>,
}

/// Roots of report paths that are not body positions.
const ROOTS: [&str; 4] = ["body", "headers", "status", "response"];

impl PathPattern {
    /// Parse a pattern. `any_root`: `headers`, `status` and `response` are roots too (suppress
    /// paths); otherwise only `body` is (field positions). `body.` is put in front otherwise.
    pub fn parse(text: &str, any_root: bool) -> Result<PathPattern, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("is empty; give a position like `body.items[*].id`".to_string());
        }
        let toks = tokenize(text, true)?;
        let rooted = match toks.first() {
            Some(Tok::Key { text: k, glob: _ }) => {
                k == "body" || (any_root && ROOTS.contains(&k.as_str()))
            }
            _ => false,
        };
        let mut all = Vec::with_capacity(toks.len() + 1);
        if !rooted {
            all.push(Tok::Key {
                text: "body".to_string(),
                glob: false,
            });
        }
        all.extend(toks);
        Ok(PathPattern { toks: all })
    }

    /// The same pattern without its leading `body` (field patterns match positions below it).
    fn below_body(mut self) -> PathPattern {
        if matches!(self.toks.first(), Some(Tok::Key { text, .. }) if text == "body") {
            self.toks.remove(0);
        }
        self
    }

    fn specificity(&self) -> (usize, usize) {
        let literal = self
            .toks
            .iter()
            .filter(|t| matches!(t, Tok::Key { glob: false, .. } | Tok::Index(_)))
            .count();
        (literal, self.toks.len())
    }

    /// True when the pattern matches the whole of `segs`.
    pub fn matches(&self, segs: &[PathSeg<'_>]) -> bool {
        match_from(&self.toks, segs)
    }
}

fn match_from(toks: &[Tok], segs: &[PathSeg<'_>]) -> bool {
    let Some((t, rest)) = toks.split_first() else {
        return segs.is_empty();
    };
    if *t == Tok::AnyDepth {
        return (0..=segs.len()).any(|k| match_from(rest, &segs[k..]));
    }
    let Some((s, srest)) = segs.split_first() else {
        return false;
    };
    let one = match (t, s) {
        (Tok::Key { text, glob: true }, PathSeg::Key(k)) => glob(text, k),
        (Tok::Key { text, glob: false }, PathSeg::Key(k)) => text == k,
        (Tok::Index(i), PathSeg::Index(j)) => i == j,
        (Tok::AnyIndex, PathSeg::Index(_)) => true,
        (Tok::Any, _) => true,
        _ => false,
    };
    one && match_from(rest, srest)
}

/// Split a path into tokens. In a pattern (`pattern`), `*`, `**`, `[*]` and `[]` are
/// wildcards; in a concrete report path everything is literal.
fn tokenize(text: &str, pattern: bool) -> Result<Vec<Tok>, String> {
    let mut toks = Vec::new();
    let b = text.as_bytes();
    let mut i = 0usize;
    let mut expect_key = true;
    while i < b.len() {
        match b[i] {
            b'.' => {
                if expect_key {
                    return Err(format!("`{text}`: empty segment before `.` at {i}"));
                }
                expect_key = true;
                i += 1;
            }
            b'[' => {
                let close = text[i..]
                    .find(']')
                    .map(|k| i + k)
                    .ok_or_else(|| format!("`{text}`: `[` at {i} is not closed"))?;
                // A quoted key may itself contain `]`: find the end of the JSON string first.
                let inner_start = i + 1;
                if b.get(inner_start) == Some(&b'"') {
                    let mut de = serde_json::Deserializer::from_str(&text[inner_start..])
                        .into_iter::<String>();
                    let key = match de.next() {
                        Some(Ok(k)) => k,
                        _ => return Err(format!("`{text}`: bad quoted key at {i}")),
                    };
                    let end = inner_start + de.byte_offset();
                    if b.get(end) != Some(&b']') {
                        return Err(format!("`{text}`: expected `]` after the quoted key"));
                    }
                    toks.push(Tok::Key {
                        text: key,
                        glob: false,
                    });
                    i = end + 1;
                } else {
                    let inner = text[inner_start..close].trim();
                    if pattern && (inner.is_empty() || inner == "*") {
                        toks.push(Tok::AnyIndex);
                    } else {
                        let n: usize = inner.parse().map_err(|_| {
                            format!(
                                "`{text}`: `[{inner}]` is not an array index (a number, `[*]` or `[]`)"
                            )
                        })?;
                        toks.push(Tok::Index(n));
                    }
                    i = close + 1;
                }
                expect_key = false;
            }
            b']' | b'"' => return Err(format!("`{text}`: unexpected `{}` at {i}", b[i] as char)),
            _ => {
                if !expect_key {
                    return Err(format!("`{text}`: expected `.` or `[` at {i}"));
                }
                let end = text[i..]
                    .find(['.', '[', ']', '"'])
                    .map_or(text.len(), |k| i + k);
                let key = &text[i..end];
                toks.push(if pattern && key == "**" {
                    Tok::AnyDepth
                } else if pattern && key == "*" {
                    Tok::Any
                } else {
                    Tok::Key {
                        text: key.to_string(),
                        glob: pattern && key.contains('*'),
                    }
                });
                expect_key = false;
                i = end;
            }
        }
    }
    if expect_key && !toks.is_empty() {
        return Err(format!("`{text}` ends with `.`"));
    }
    Ok(toks)
}

/// Owned steps of a concrete report path (`body.items[2]["a.b"]`).
fn parse_concrete(path: &str) -> Option<Vec<OwnedSeg>> {
    let toks = tokenize(path, false).ok()?;
    toks.into_iter()
        .map(|t| match t {
            Tok::Key { text, .. } => Some(OwnedSeg::Key(text)),
            Tok::Index(i) => Some(OwnedSeg::Index(i)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
}

/// The steps of a concrete report path (`body.items[2]["a.b"]`): a key, or `None` for an
/// array index. `None` when the path does not parse. (For `drift.toml`: `crate::drift_types`.)
pub fn path_steps(path: &str) -> Option<Vec<Option<String>>> {
    Some(
        parse_concrete(path)?
            .into_iter()
            .map(|s| match s {
                OwnedSeg::Key(k) => Some(k),
                OwnedSeg::Index(_) => None,
            })
            .collect(),
    )
}

/// [`check_route_pattern`] for `drift.toml` route matchers (`crate::drift_types`).
pub fn validate_route_pattern(r: &str) -> Result<(), String> {
    check_route_pattern(r)
}

impl PathPattern {
    /// True when the pattern matches the concrete report path `path` (`body.items[2].name`);
    /// false when `path` does not parse.
    pub fn matches_path(&self, path: &str) -> bool {
        parse_concrete(path).is_some_and(|segs| self.matches_owned(&segs))
    }
}

impl DiffRules {
    /// The class a `[diff.fields]` entry declares at the report path `path` (`body.a[0].b`),
    /// if any.
    pub fn field_class_at(&self, path: &str) -> Option<&UserClass> {
        let segs = parse_concrete(path)?;
        let (first, rest) = segs.split_first()?;
        if !matches!(first, OwnedSeg::Key(k) if k == "body") {
            return None;
        }
        let below: Vec<PathSeg<'_>> = rest
            .iter()
            .map(|s| match s {
                OwnedSeg::Key(k) => PathSeg::Key(k),
                OwnedSeg::Index(i) => PathSeg::Index(*i),
            })
            .collect();
        self.field_class(&below)
    }
}

#[derive(Debug, Clone)]
enum OwnedSeg {
    Key(String),
    Index(usize),
}

impl PathPattern {
    fn matches_owned(&self, segs: &[OwnedSeg]) -> bool {
        let borrowed: Vec<PathSeg<'_>> = segs
            .iter()
            .map(|s| match s {
                OwnedSeg::Key(k) => PathSeg::Key(k),
                OwnedSeg::Index(i) => PathSeg::Index(*i),
            })
            .collect();
        self.matches(&borrowed)
    }
}

/// A suppressed divergence, as the report lists it under `--show-suppressed`.
#[derive(Debug, Clone, PartialEq)]
pub struct Suppressed {
    pub divergence: Divergence,
    /// 1-based position of the `[[diff.suppress]]` entry that removed it.
    pub rule: usize,
    pub reason: String,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_route_pattern_may_name_another_hosts_route_as_the_report_does() {
        for ok in [
            "GET /api/v1/nodes on https://east.gw.test",
            "* /nodes on *",
            "GET /customers/:param",
        ] {
            assert_eq!(check_route_pattern(ok), Ok(()), "{ok}");
        }
        assert!(glob(
            "GET /api/* on https://east.*",
            "GET /api/v1/nodes on https://east.gw.test"
        ));
        for bad in ["GET /nodes on ", "GET /nodes on https://a b", "GET /a b"] {
            assert!(check_route_pattern(bad).is_err(), "{bad}");
        }
    }

    fn div(path: &str, category: Category) -> Divergence {
        Divergence {
            path: path.to_string(),
            category,
            expected: json!(1),
            actual: json!(2),
        }
    }

    fn pat_matches(p: &str, path: &str) -> bool {
        let pat = PathPattern::parse(p, true).unwrap();
        pat.matches_owned(&parse_concrete(path).unwrap())
    }

    #[test]
    fn globs_match_any_characters_including_none() {
        assert!(glob("*", ""));
        assert!(glob("*_at", "created_at"));
        assert!(!glob("*_at", "created_on"));
        assert!(glob("GET /customers/*", "GET /customers/:param/orders"));
        assert!(glob("* /health", "HEAD /health"));
        assert!(!glob("GET /a", "GET /ab"));
        assert!(glob("a*b*c", "aXbYbZc"));
    }

    #[test]
    fn paths_get_body_prefixed_and_match_segment_wildcards() {
        assert!(pat_matches("id", "body.id"));
        assert!(pat_matches("body.id", "body.id"));
        assert!(!pat_matches("id", "body.user.id"));
        assert!(pat_matches("items[*].id", "body.items[3].id"));
        assert!(pat_matches("items[].id", "body.items[0].id"));
        assert!(pat_matches("items.*.id", "body.items[0].id"));
        assert!(!pat_matches("items[*].id", "body.items.x.id"));
        assert!(pat_matches("items[2].name", "body.items[2].name"));
        assert!(!pat_matches("items[2].name", "body.items[1].name"));
        assert!(pat_matches("*_at", "body.created_at"));
        assert!(pat_matches("**.created_at", "body.created_at"));
        assert!(pat_matches("**.created_at", "body.a[1].b.created_at"));
        assert!(!pat_matches("**.created_at", "body.a.created_on"));
        assert!(pat_matches("**", "body"));
        assert!(pat_matches("[\"a.b\"]", "body[\"a.b\"]"));
        assert!(pat_matches("headers.content-type", "headers.content-type"));
        assert!(pat_matches("status", "status"));
        assert!(!pat_matches("status", "body.status"));
        assert!(pat_matches("body.status", "body.status"));
    }

    #[test]
    fn malformed_paths_are_rejected_with_the_reason() {
        for bad in ["a..b", "a[", "a[x]", "a.", "a]b"] {
            assert!(PathPattern::parse(bad, true).is_err(), "{bad}");
        }
    }

    fn input_suppress(route: &str, path: &str, category: &str, reason: &str) -> RulesInput {
        RulesInput {
            suppress: vec![SuppressInput {
                route: route.into(),
                path: path.into(),
                category: category.into(),
                reason: reason.into(),
                line: 7,
            }],
            ..RulesInput::default()
        }
    }

    #[test]
    fn suppress_rule_matches_route_path_and_category_but_never_a_refusal() {
        let rules =
            DiffRules::compile(&input_suppress("GET /a/*", "meta.*", "value_*", "noise")).unwrap();
        let (kept, removed) = rules.suppress(
            "GET /a/:param",
            vec![
                div("body.meta.x", Category::ValueMismatch),
                div("body.meta.x", Category::MissingField),
                div("body.other", Category::ValueMismatch),
            ],
        );
        assert_eq!(removed.len(), 1);
        assert_eq!(removed[0].0.path, "body.meta.x");
        assert_eq!(removed[0].1.reason, "noise");
        assert_eq!(kept.len(), 2);
        let (kept, removed) =
            rules.suppress("GET /b", vec![div("body.meta.x", Category::ValueMismatch)]);
        assert_eq!((kept.len(), removed.len()), (1, 0));
        assert_eq!(
            DiffRules::compile(&input_suppress("", "", "", "all")).unwrap_err()[0].rule,
            "diff-suppress-matcher",
            "an entry matching everything is refused"
        );
        let everything = DiffRules::compile(&input_suppress("* *", "", "", "all")).unwrap();
        let (kept, removed) = everything.suppress(
            "GET /a",
            vec![
                div("response", Category::SynthesizedRefusal),
                div("status", Category::StatusMismatch),
            ],
        );
        assert_eq!(kept.len(), 1, "a refusal is never suppressed");
        assert_eq!(kept[0].category, Category::SynthesizedRefusal);
        assert_eq!(removed.len(), 1);
    }

    #[test]
    fn suppress_without_reason_names_the_entry_and_key() {
        let errs = DiffRules::compile(&input_suppress("GET /a", "x", "", " ")).unwrap_err();
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].rule, "diff-suppress-reason");
        assert_eq!(errs[0].line, 7);
        let msg = errs[0].to_string();
        assert!(
            msg.starts_with("[[diff.suppress]] entry 1: `reason`"),
            "{msg}"
        );
    }

    #[test]
    fn malformed_route_category_and_refusal_only_rules_are_errors() {
        let e = DiffRules::compile(&input_suppress("/a", "", "", "r")).unwrap_err();
        assert_eq!(e[0].rule, "diff-route");
        let e = DiffRules::compile(&input_suppress("get /a", "", "", "r")).unwrap_err();
        assert!(e[0].message.contains("upper case"), "{}", e[0].message);
        let e = DiffRules::compile(&input_suppress("", "", "value_mismach", "r")).unwrap_err();
        assert_eq!(e[0].rule, "diff-category");
        let e =
            DiffRules::compile(&input_suppress("", "", "synthesized_refusal", "r")).unwrap_err();
        assert!(
            e[0].message.contains("never suppressed"),
            "{}",
            e[0].message
        );
    }

    fn field(path: &str, classify: &str, values: Option<Vec<Value>>) -> FieldInput {
        FieldInput {
            path: path.into(),
            classify: classify.into(),
            values,
            line: 3,
        }
    }

    #[test]
    fn only_scoring_version_1_compiles() {
        assert!(DiffRules::compile(&RulesInput::default()).is_ok());
        let bad = RulesInput {
            scoring_version: 2,
            scoring_version_line: 4,
            ..RulesInput::default()
        };
        let errors = DiffRules::compile(&bad).unwrap_err();
        assert_eq!(errors.len(), 1);
        let e = &errors[0];
        assert_eq!(
            (e.rule, e.line, e.entry.as_str(), e.key.as_str()),
            ("diff-scoring-version", 4, "[diff]", "scoring_version")
        );
        assert!(e.message.contains("is 2") && e.message.contains("scoring_version = 1"));
    }

    #[test]
    fn field_classes_are_validated() {
        let ok = RulesInput {
            fields: vec![
                field("status", "enum", Some(vec![json!("a"), json!("b")])),
                field("items[*].id", "generated", None),
                field("**.at", "timestamp", None),
            ],
            ..RulesInput::default()
        };
        let rules = DiffRules::compile(&ok).unwrap();
        assert_eq!(rules.fields.len(), 3);
        let bad = RulesInput {
            fields: vec![
                field("a", "enum", None),
                field("b", "random", None),
                field("c", "constant", Some(vec![json!(1)])),
                field("d", "", None),
            ],
            ..RulesInput::default()
        };
        let rules: Vec<&str> = DiffRules::compile(&bad)
            .unwrap_err()
            .iter()
            .map(|e| e.rule)
            .collect();
        assert_eq!(
            rules,
            vec![
                "diff-field-enum-values",
                "diff-field-class",
                "diff-field-class",
                "diff-field-class"
            ]
        );
    }

    #[test]
    fn the_most_specific_field_rule_wins() {
        let input = RulesInput {
            fields: vec![
                field("**", "generated", None),
                field("items[*].state", "enum", Some(vec![json!("x")])),
                field("items[0].state", "constant", None),
            ],
            ..RulesInput::default()
        };
        let rules = DiffRules::compile(&input).unwrap();
        let at = |segs: &[PathSeg<'_>]| rules.field_class(segs).cloned();
        assert_eq!(
            at(&[
                PathSeg::Key("items"),
                PathSeg::Index(0),
                PathSeg::Key("state")
            ]),
            Some(UserClass::Constant)
        );
        assert_eq!(
            at(&[
                PathSeg::Key("items"),
                PathSeg::Index(1),
                PathSeg::Key("state")
            ]),
            Some(UserClass::Enum(vec![json!("x")]))
        );
        assert_eq!(at(&[PathSeg::Key("other")]), Some(UserClass::Generated));
    }

    #[test]
    fn thresholds_default_inherit_and_are_range_checked() {
        let input = RulesInput {
            thresholds: ThresholdInput {
                body_values: Some(0.5),
                ..ThresholdInput::default()
            },
            overrides: vec![(
                "GET /a".into(),
                ThresholdInput {
                    body_structure: Some(0.25),
                    ..ThresholdInput::default()
                },
                9,
            )],
            ..RulesInput::default()
        };
        let rules = DiffRules::compile(&input).unwrap();
        assert_eq!(rules.gates.body_values, 5_000);
        assert_eq!(rules.gates.body_structure, 9_000);
        assert_eq!(rules.gates.symbol_consistency, 10_000);
        assert_eq!(rules.gates.header_conformance, 8_000);
        let g = rules.route_gates("GET /a").unwrap();
        assert_eq!((g.body_structure, g.body_values), (2_500, 5_000));
        assert!(rules.route_gates("GET /b").is_none());
        let bad = RulesInput {
            thresholds: ThresholdInput {
                header_conformance: Some(1.5),
                ..ThresholdInput::default()
            },
            overrides: vec![("nope".into(), ThresholdInput::default(), 4)],
            ..RulesInput::default()
        };
        let e = DiffRules::compile(&bad).unwrap_err();
        let rules: Vec<&str> = e.iter().map(|e| e.rule).collect();
        assert_eq!(rules, vec!["diff-threshold", "diff-route"]);
    }
}
