//! Drift types: what kind of API change a divergence looks like (`drift_type` on every
//! divergence and every `drifts[]` group), and the twin owner's `drift.toml` rules that accept
//! (`[[suppress]]`) or rename (`[[reclassify]]`) a drift.
//!
//! The type is a pure function of the divergence — its category, its recorded and answered
//! values — and of the class of its position (an `enum` position: a model `observed` hole, or
//! a `[diff.fields]` entry classifying it `enum`, whose recorded or configured values the
//! answer is held to):
//!
//! | category | drift type |
//! | --- | --- |
//! | `status_mismatch` | `status_code_shift` |
//! | `missing_field` | `field_removed` |
//! | `extra_field` | `additive_optional_field` |
//! | `value_mismatch` at an enum position, answered outside its values | `enum_expansion` |
//! | `value_mismatch`, both numbers | `numeric_drift` |
//! | `value_mismatch`, both absolute URLs differing only in scheme and authority | `host_rewrite` |
//! | `value_mismatch`, both absolute URLs (otherwise) | `url_drift` |
//! | `value_mismatch` (any other) | `value_drift` |
//! | `unknown_tag` | `enum_expansion` (a tag outside the recorded set) |
//! | `type_mismatch` | `type_changed` (the word synth's `Route::drift` uses) |
//! | `array_length_mismatch` | `array_length_drift` |
//! | `symbol_mismatch` | `symbol_inconsistency` (the twin contradicted itself, not the API) |
//! | `synthesized_refusal` | `coverage_gap` (the twin did not know the request) |
//!
//! `enum_extension` is never computed: it is the `[[reclassify]]` target for a value set the
//! owner knows was extended on purpose.
//!
//! `drift.toml` is applied **after** scoring (reference §5.3: `[[diff.suppress]]` acts before
//! drift classification and is excluded from the score; `drift.toml` acts after and stays
//! visible): a suppressed drift keeps counting against the score, stays in `divergences[]` and
//! `drifts[]` (flagged `drift_suppressed`), is counted in `drift_suppressed_count` and listed
//! with its reason in `drift_suppressed[]` under `--show-suppressed`. Reclassification runs
//! first, so a `[[suppress]]` entry's `drift_type` matches the reclassified type.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use wraith_model::{ArrayNode, BodyTemplate, HoleKind, Model, Node};
use wraith_twin::{DriftReclassifyEntry, DriftSuppressEntry};

use crate::diff::Category;
use crate::rules::{DiffRules, PathPattern, UserClass, glob, path_steps, validate_route_pattern};

/// What kind of API change a divergence looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DriftType {
    NumericDrift,
    UrlDrift,
    HostRewrite,
    ValueDrift,
    EnumExpansion,
    /// Only by `[[reclassify]]`: an enum extended on purpose.
    EnumExtension,
    AdditiveOptionalField,
    FieldRemoved,
    StatusCodeShift,
    TypeChanged,
    ArrayLengthDrift,
    SymbolInconsistency,
    CoverageGap,
}

impl DriftType {
    /// Every drift type, in documentation order.
    pub const ALL: [DriftType; 13] = [
        DriftType::NumericDrift,
        DriftType::UrlDrift,
        DriftType::HostRewrite,
        DriftType::ValueDrift,
        DriftType::EnumExpansion,
        DriftType::EnumExtension,
        DriftType::AdditiveOptionalField,
        DriftType::FieldRemoved,
        DriftType::StatusCodeShift,
        DriftType::TypeChanged,
        DriftType::ArrayLengthDrift,
        DriftType::SymbolInconsistency,
        DriftType::CoverageGap,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DriftType::NumericDrift => "numeric_drift",
            DriftType::UrlDrift => "url_drift",
            DriftType::HostRewrite => "host_rewrite",
            DriftType::ValueDrift => "value_drift",
            DriftType::EnumExpansion => "enum_expansion",
            DriftType::EnumExtension => "enum_extension",
            DriftType::AdditiveOptionalField => "additive_optional_field",
            DriftType::FieldRemoved => "field_removed",
            DriftType::StatusCodeShift => "status_code_shift",
            DriftType::TypeChanged => "type_changed",
            DriftType::ArrayLengthDrift => "array_length_drift",
            DriftType::SymbolInconsistency => "symbol_inconsistency",
            DriftType::CoverageGap => "coverage_gap",
        }
    }

    /// The type named `s` (as written in reports and `drift.toml`).
    pub fn parse(s: &str) -> Option<DriftType> {
        DriftType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// The drift type of a divergence of `category` from `expected` to `actual`; `at_enum`: its
/// position is an enum position (see the module table).
pub fn classify(category: Category, expected: &Value, actual: &Value, at_enum: bool) -> DriftType {
    match category {
        Category::StatusMismatch => DriftType::StatusCodeShift,
        Category::MissingField => DriftType::FieldRemoved,
        Category::ExtraField => DriftType::AdditiveOptionalField,
        Category::TypeMismatch => DriftType::TypeChanged,
        Category::ArrayLengthMismatch => DriftType::ArrayLengthDrift,
        Category::SymbolMismatch => DriftType::SymbolInconsistency,
        Category::SynthesizedRefusal => DriftType::CoverageGap,
        Category::UnknownTag => DriftType::EnumExpansion,
        Category::ValueMismatch if at_enum => DriftType::EnumExpansion,
        Category::ValueMismatch => match (expected, actual) {
            (Value::Number(_), Value::Number(_)) => DriftType::NumericDrift,
            (Value::String(e), Value::String(a)) => match (split_url(e), split_url(a)) {
                (Some((_, e_rest)), Some((_, a_rest))) if e_rest == a_rest => {
                    DriftType::HostRewrite
                }
                (Some(_), Some(_)) => DriftType::UrlDrift,
                _ => DriftType::ValueDrift,
            },
            _ => DriftType::ValueDrift,
        },
    }
}

/// An absolute URL split into its scheme and authority (`https://api.example.com`) and the
/// rest (path, query, fragment); `None` for anything else.
fn split_url(s: &str) -> Option<(&str, &str)> {
    let (scheme, after) = s.split_once("://")?;
    let mut chars = scheme.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if !first_ok
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        || s.contains(char::is_whitespace)
    {
        return None;
    }
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    if end == 0 {
        return None;
    }
    let split = scheme.len() + 3 + end;
    Some((&s[..split], &s[split..]))
}

type EnumPositions = BTreeMap<Vec<Option<String>>, Vec<Value>>;

/// Knows which positions of which routes are enum positions, to type divergences.
#[derive(Debug, Clone, Default)]
pub struct DriftTyper<'r> {
    /// Route name (`METHOD /path`) → the steps (key, or `None` for any array index) of every
    /// position holding an `observed` hole in one of its JSON templates → the recorded values
    /// there (every such hole's `examples` and `more_examples`).
    enums: BTreeMap<String, EnumPositions>,
    /// `[diff.fields]`: the user's class wins over the model's.
    rules: Option<&'r DiffRules>,
}

impl<'r> DriftTyper<'r> {
    /// A typer for divergences judged under `model` (and the run's `[diff.fields]`).
    pub fn new(model: &Model, rules: Option<&'r DiffRules>) -> DriftTyper<'r> {
        let mut enums: BTreeMap<String, EnumPositions> = BTreeMap::new();
        for r in &model.routes {
            let mut found = EnumPositions::new();
            for v in &r.variants {
                let mut steps = vec![Some("body".to_string())];
                if let BodyTemplate::Json { root } = &v.body {
                    observed_positions(root, &mut steps, &mut found);
                }
                if let Some(u) = &v.union {
                    for t in &u.templates {
                        observed_positions(t, &mut steps, &mut found);
                    }
                }
            }
            if !found.is_empty() {
                let positions = enums.entry(r.label()).or_default();
                for (at, values) in found {
                    positions.entry(at).or_default().extend(values);
                }
            }
        }
        DriftTyper { enums, rules }
    }

    /// The drift type of a divergence found under `route` at `path`.
    pub fn drift_type(
        &self,
        route: &str,
        path: &str,
        category: Category,
        expected: &Value,
        actual: &Value,
    ) -> DriftType {
        let outside = category == Category::ValueMismatch && self.outside_enum(route, path, actual);
        classify(category, expected, actual, outside)
    }

    /// True when `path` is an enum position of `route` and `actual` is none of its recorded
    /// (or, for a `[diff.fields]` enum, configured) values: the set expanded. Another recorded
    /// value there is not an expansion (an exactness claim compares it exactly).
    fn outside_enum(&self, route: &str, path: &str, actual: &Value) -> bool {
        let member = |values: &[Value]| values.iter().any(|v| same_value(v, actual));
        if let Some(class) = self.rules.and_then(|r| r.field_class_at(path)) {
            return match class {
                UserClass::Enum(values) => !member(values),
                _ => false,
            };
        }
        let Some(positions) = self.enums.get(route) else {
            return false;
        };
        path_steps(path)
            .and_then(|steps| positions.get(&steps))
            .is_some_and(|values| !member(values))
    }
}

/// JSON equality with numbers compared as numbers (`50 == 50.0`), as the diff compares them.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn observed_positions(node: &Node, steps: &mut Vec<Option<String>>, out: &mut EnumPositions) {
    match node {
        Node::Hole(h) if matches!(h.source, HoleKind::Observed) => {
            let values = out.entry(steps.clone()).or_default();
            values.extend(h.examples.iter().cloned());
            values.extend(h.more_examples.iter().cloned());
        }
        Node::Hole(_) | Node::Const { .. } => {}
        Node::Object { fields } => {
            for f in fields {
                steps.push(Some(f.key.clone()));
                observed_positions(&f.value, steps, out);
                steps.pop();
            }
        }
        Node::Array(a) => {
            let items = match a {
                ArrayNode::Tuple { items } => items,
                ArrayNode::List {
                    representatives, ..
                } => representatives,
            };
            steps.push(None);
            for n in items {
                observed_positions(n, steps, out);
            }
            steps.pop();
        }
    }
}

/// A problem with one `drift.toml` entry: what, where, and how to fix it. `wraith check`
/// shows it as a warning (the entry is not applied); `wraith lint` as an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriftRuleError {
    /// `drift-matcher`, `drift-reason`, `drift-type`, `drift-route`, `drift-path`, `drift-id`.
    pub rule: &'static str,
    pub line: usize,
    /// `[[suppress]] entry 2`.
    pub entry: String,
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for DriftRuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "drift.toml:{}: {}: `{}`: {}",
            self.line, self.entry, self.key, self.message
        )
    }
}

/// A compiled `[[suppress]]` entry.
#[derive(Debug, Clone)]
struct Suppress {
    number: usize,
    drift_id: Option<String>,
    route: Option<String>,
    path: Option<PathPattern>,
    drift_type: Option<DriftType>,
    reason: String,
}

/// A compiled `[[reclassify]]` entry.
#[derive(Debug, Clone)]
struct Reclassify {
    number: usize,
    route: Option<String>,
    path: Option<PathPattern>,
    to: DriftType,
    reason: String,
}

/// The valid entries of `drift.toml`, in file order.
#[derive(Debug, Clone, Default)]
pub struct DriftRules {
    suppress: Vec<Suppress>,
    reclassify: Vec<Reclassify>,
}

/// What `drift.toml` decided for one drift.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriftDecision {
    /// The type after `[[reclassify]]` (the computed one when no entry matched).
    pub drift_type: DriftType,
    /// The first matching `[[reclassify]]` entry: (its number, its reason).
    pub reclassified: Option<(usize, String)>,
    /// The first matching `[[suppress]]` entry: (its number, its reason).
    pub suppressed: Option<(usize, String)>,
}

fn valid_drift_id(s: &str) -> bool {
    s.strip_prefix("drift-")
        .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

impl DriftRules {
    /// Validate every entry; entries with a problem are left out (and the problem returned),
    /// so a bad entry never accepts more than it says.
    pub fn compile(
        suppress: &[DriftSuppressEntry],
        reclassify: &[DriftReclassifyEntry],
    ) -> (DriftRules, Vec<DriftRuleError>) {
        let mut errors = Vec::new();
        let mut rules = DriftRules::default();
        let types = DriftType::ALL.map(DriftType::as_str).join(", ");
        let route_of = |r: &Option<String>, err: &mut dyn FnMut(&'static str, &str, String)| {
            let r = r.as_deref()?;
            match validate_route_pattern(r) {
                Ok(()) => Some(r.to_string()),
                Err(m) => {
                    err("drift-route", "route", m);
                    None
                }
            }
        };
        let path_of = |p: &Option<String>, err: &mut dyn FnMut(&'static str, &str, String)| {
            let p = p.as_deref()?;
            match PathPattern::parse(p, true) {
                Ok(pat) => Some(pat),
                Err(m) => {
                    err("drift-path", "path", m);
                    None
                }
            }
        };
        for s in suppress {
            let entry = format!("[[suppress]] entry {}", s.number);
            let before = errors.len();
            let mut err = |rule, key: &str, message: String| {
                errors.push(DriftRuleError {
                    rule,
                    line: s.line,
                    entry: entry.clone(),
                    key: key.to_string(),
                    message,
                });
            };
            if s.drift_id.is_none()
                && s.route.is_none()
                && s.path.is_none()
                && s.drift_type.is_none()
            {
                err(
                    "drift-matcher",
                    "",
                    "has no matcher: give at least one of `drift_id`, `route`, `path` or \
                     `drift_type` (an entry matching everything would hide every drift)"
                        .to_string(),
                );
            }
            let reason = s.reason.as_deref().map(str::trim).unwrap_or("");
            if reason.is_empty() {
                err(
                    "drift-reason",
                    "reason",
                    "is required: say why this drift is accepted (`reason = \"…\"`)".to_string(),
                );
            }
            if let Some(id) = &s.drift_id
                && !valid_drift_id(id)
            {
                err(
                    "drift-id",
                    "drift_id",
                    format!(
                        "`{id}` is not a drift id: copy one from the report (`drift-` and 16 hex digits)"
                    ),
                );
            }
            let drift_type = s.drift_type.as_deref().and_then(|t| {
                let parsed = DriftType::parse(t);
                if parsed.is_none() {
                    err(
                        "drift-type",
                        "drift_type",
                        format!("unknown drift type `{t}`; one of: {types}"),
                    );
                }
                parsed
            });
            let route = route_of(&s.route, &mut err);
            let path = path_of(&s.path, &mut err);
            if errors.len() == before {
                rules.suppress.push(Suppress {
                    number: s.number,
                    drift_id: s.drift_id.clone(),
                    route,
                    path,
                    drift_type,
                    reason: reason.to_string(),
                });
            }
        }
        for r in reclassify {
            let entry = format!("[[reclassify]] entry {}", r.number);
            let before = errors.len();
            let mut err = |rule, key: &str, message: String| {
                let key = match key {
                    "route" | "path" => format!("match.{key}"),
                    k => k.to_string(),
                };
                errors.push(DriftRuleError {
                    rule,
                    line: r.line,
                    entry: entry.clone(),
                    key,
                    message,
                });
            };
            if r.route.is_none() && r.path.is_none() {
                err(
                    "drift-matcher",
                    "match",
                    "is required: `match = { route = \"GET /items/:param\", path = \"body.status\" }` \
                     (at least one of the two)"
                        .to_string(),
                );
            }
            let reason = r.reason.as_deref().map(str::trim).unwrap_or("");
            if reason.is_empty() {
                err(
                    "drift-reason",
                    "reason",
                    "is required: say why these drifts are of another type (`reason = \"…\"`)"
                        .to_string(),
                );
            }
            let to = match r.new_drift_type.as_deref() {
                None => {
                    err(
                        "drift-type",
                        "new_drift_type",
                        format!("is required; one of: {types}"),
                    );
                    None
                }
                Some(t) => {
                    let parsed = DriftType::parse(t);
                    if parsed.is_none() {
                        err(
                            "drift-type",
                            "new_drift_type",
                            format!("unknown drift type `{t}`; one of: {types}"),
                        );
                    }
                    parsed
                }
            };
            let route = route_of(&r.route, &mut err);
            let path = path_of(&r.path, &mut err);
            if let (true, Some(to)) = (errors.len() == before, to) {
                rules.reclassify.push(Reclassify {
                    number: r.number,
                    route,
                    path,
                    to,
                    reason: reason.to_string(),
                });
            }
        }
        (rules, errors)
    }

    /// No entry at all.
    pub fn is_empty(&self) -> bool {
        self.suppress.is_empty() && self.reclassify.is_empty()
    }

    /// Apply the rules to one drift: reclassify (first matching entry), then suppress (first
    /// matching entry, against the reclassified type). A refusal (`synthesized_refusal`) is
    /// never suppressed: a twin that did not know the request is no accepted API change.
    pub fn decide(
        &self,
        drift_id: &str,
        route: &str,
        path: &str,
        category: Category,
        computed: DriftType,
    ) -> DriftDecision {
        let route_ok = |r: &Option<String>| r.as_deref().is_none_or(|p| glob(p, route));
        let path_ok = |p: &Option<PathPattern>| p.as_ref().is_none_or(|p| p.matches_path(path));
        let reclassified = self
            .reclassify
            .iter()
            .find(|r| route_ok(&r.route) && path_ok(&r.path));
        let drift_type = reclassified.map_or(computed, |r| r.to);
        let suppressed = if category == Category::SynthesizedRefusal {
            None
        } else {
            self.suppress.iter().find(|s| {
                s.drift_id.as_deref().is_none_or(|id| id == drift_id)
                    && route_ok(&s.route)
                    && path_ok(&s.path)
                    && s.drift_type.is_none_or(|t| t == drift_type)
            })
        };
        DriftDecision {
            drift_type,
            reclassified: reclassified.map(|r| (r.number, r.reason.clone())),
            suppressed: suppressed.map(|s| (s.number, s.reason.clone())),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_category_has_its_drift_type() {
        let t = |c, e: Value, a: Value| classify(c, &e, &a, false);
        assert_eq!(
            t(Category::StatusMismatch, json!(200), json!(404)),
            DriftType::StatusCodeShift
        );
        assert_eq!(
            t(Category::MissingField, json!(1), Value::Null),
            DriftType::FieldRemoved
        );
        assert_eq!(
            t(Category::ExtraField, Value::Null, json!(1)),
            DriftType::AdditiveOptionalField
        );
        assert_eq!(
            t(Category::TypeMismatch, json!(1), json!("1")),
            DriftType::TypeChanged
        );
        assert_eq!(
            t(Category::ArrayLengthMismatch, json!(2), json!(3)),
            DriftType::ArrayLengthDrift
        );
        assert_eq!(
            t(Category::SymbolMismatch, json!("a"), json!("b")),
            DriftType::SymbolInconsistency
        );
        assert_eq!(
            t(Category::SynthesizedRefusal, Value::Null, json!({})),
            DriftType::CoverageGap
        );
        assert_eq!(
            t(Category::UnknownTag, json!("a"), json!("z")),
            DriftType::EnumExpansion
        );
    }

    #[test]
    fn value_changes_are_numeric_url_host_rewrite_or_value_drift() {
        let t = |e: Value, a: Value| classify(Category::ValueMismatch, &e, &a, false);
        assert_eq!(t(json!(3), json!(4.5)), DriftType::NumericDrift);
        assert_eq!(
            t(
                json!("https://api.example.com/v1/items/1?x=1"),
                json!("http://localhost:8081/v1/items/1?x=1")
            ),
            DriftType::HostRewrite
        );
        assert_eq!(
            t(
                json!("https://api.example.com/v1/items/1"),
                json!("https://api.example.com/v2/items/1")
            ),
            DriftType::UrlDrift
        );
        assert_eq!(
            t(json!("https://a.example"), json!("https://b.example")),
            DriftType::HostRewrite
        );
        assert_eq!(t(json!("red"), json!("blue")), DriftType::ValueDrift);
        assert_eq!(
            t(json!("https://a.example/x"), json!("not a url")),
            DriftType::ValueDrift
        );
        assert_eq!(t(json!("1"), json!(1)), DriftType::ValueDrift);
        // An enum position answered outside its set wins over the value's kind.
        assert_eq!(
            classify(Category::ValueMismatch, &json!(1), &json!(7), true),
            DriftType::EnumExpansion
        );
    }

    proptest::proptest! {
        /// Two absolute URLs with the same path, query and fragment are a host rewrite whatever
        /// the hosts and schemes; with another path they are URL drift.
        #[test]
        fn urls_differing_only_in_scheme_and_authority_are_a_host_rewrite(
            s1 in "https?",
            s2 in "https?",
            h1 in "[a-z]{1,8}(\\.[a-z]{2,4})?(:[0-9]{2,5})?",
            h2 in "[a-z]{1,8}(\\.[a-z]{2,4})?(:[0-9]{2,5})?",
            rest in "(/[a-z0-9_]{0,6}){0,3}(\\?[a-z]=[0-9]{1,3})?",
            other in "/[a-z0-9]{1,6}",
        ) {
            let e = json!(format!("{s1}://{h1}{rest}"));
            let a = json!(format!("{s2}://{h2}{rest}"));
            proptest::prop_assume!(e != a);
            proptest::prop_assert_eq!(
                classify(Category::ValueMismatch, &e, &a, false),
                DriftType::HostRewrite
            );
            let moved = json!(format!("{s2}://{h2}{other}{rest}"));
            proptest::prop_assert_eq!(
                classify(Category::ValueMismatch, &e, &moved, false),
                DriftType::UrlDrift
            );
        }
    }

    #[test]
    fn every_drift_type_round_trips_through_its_name() {
        for t in DriftType::ALL {
            assert_eq!(DriftType::parse(t.as_str()), Some(t));
            assert_eq!(serde_json::to_value(t).unwrap(), json!(t.as_str()));
        }
        assert_eq!(DriftType::parse("nope"), None);
    }

    fn sup(number: usize) -> DriftSuppressEntry {
        DriftSuppressEntry {
            number,
            line: number * 4,
            reason: Some("known".into()),
            ..DriftSuppressEntry::default()
        }
    }

    #[test]
    fn bad_drift_entries_are_reported_with_line_and_left_out() {
        let (rules, errors) = DriftRules::compile(
            &[
                DriftSuppressEntry {
                    reason: None,
                    drift_type: Some("numeric_drift".into()),
                    ..sup(1)
                },
                sup(2),
                DriftSuppressEntry {
                    drift_type: Some("numerical".into()),
                    ..sup(3)
                },
                DriftSuppressEntry {
                    route: Some("get /a".into()),
                    ..sup(4)
                },
                DriftSuppressEntry {
                    drift_id: Some("drift-xyz".into()),
                    ..sup(5)
                },
            ],
            &[DriftReclassifyEntry {
                number: 1,
                line: 30,
                route: Some("GET /a".into()),
                new_drift_type: Some("enum_extensions".into()),
                reason: Some("r".into()),
                ..DriftReclassifyEntry::default()
            }],
        );
        assert!(rules.is_empty());
        let got: Vec<(&str, usize, &str)> = errors
            .iter()
            .map(|e| (e.rule, e.line, e.key.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("drift-reason", 4, "reason"),
                ("drift-matcher", 8, ""),
                ("drift-type", 12, "drift_type"),
                ("drift-route", 16, "route"),
                ("drift-id", 20, "drift_id"),
                ("drift-type", 30, "new_drift_type"),
            ]
        );
        assert!(
            errors[2].to_string().contains("one of: numeric_drift"),
            "{}",
            errors[2]
        );
    }

    #[test]
    fn reclassify_runs_before_suppress_and_refusals_are_never_suppressed() {
        let (rules, errors) = DriftRules::compile(
            &[DriftSuppressEntry {
                drift_type: Some("enum_extension".into()),
                ..sup(1)
            }],
            &[DriftReclassifyEntry {
                number: 1,
                line: 9,
                route: Some("GET /items/*".into()),
                path: Some("body.status".into()),
                new_drift_type: Some("enum_extension".into()),
                reason: Some("documented".into()),
            }],
        );
        assert!(errors.is_empty(), "{errors:?}");
        let d = rules.decide(
            "drift-0000000000000000",
            "GET /items/:param",
            "body.status",
            Category::ValueMismatch,
            DriftType::EnumExpansion,
        );
        assert_eq!(d.drift_type, DriftType::EnumExtension);
        assert_eq!(d.reclassified, Some((1, "documented".into())));
        assert_eq!(d.suppressed, Some((1, "known".into())));
        // Another route: neither rule applies.
        let d = rules.decide(
            "drift-0000000000000000",
            "GET /other",
            "body.status",
            Category::ValueMismatch,
            DriftType::EnumExpansion,
        );
        assert_eq!(
            (d.drift_type, d.suppressed),
            (DriftType::EnumExpansion, None)
        );
        // A suppress rule by route never hides a refusal.
        let (rules, _) = DriftRules::compile(
            &[DriftSuppressEntry {
                route: Some("* *".into()),
                ..sup(1)
            }],
            &[],
        );
        let d = rules.decide(
            "drift-0000000000000000",
            "GET /a",
            "response",
            Category::SynthesizedRefusal,
            DriftType::CoverageGap,
        );
        assert_eq!(d.suppressed, None);
    }
}
