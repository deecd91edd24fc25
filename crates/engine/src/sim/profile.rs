//! The fault profile (`--fault-profile FILE`): a named list of rules, first match wins.
//!
//! ```toml
//! name = "flaky-payments"
//! [[rules]]
//! route = "POST /v1/*"          # `*`, a method + path glob, or an exact route
//! percentage = 20               # 0..=100, rolled on the fault RNG
//! header_match = ["X-Tenant", "demo"]   # optional: case-insensitive name, exact value
//! count = 3                     # optional: stop after this many triggers
//! [rules.fault_type]
//! type = "error"                # error | delay | timeout | drop | throttle | partial
//! status = 503
//! body = '{"error":"unavailable"}'
//! ```

use serde::Deserialize;

use super::SimError;
use super::pattern::RoutePattern;

/// What a fault rule does to a request it fires on.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultType {
    /// Answer `status` with `body` instead of dispatching.
    Error { status: u16, body: String },
    /// Dispatch normally, then hold the answer for a uniform `min_ms..=max_ms` (replaces the
    /// simulated latency).
    Delay { min_ms: u64, max_ms: u64 },
    /// Hold for `hold_ms`, then answer 504 without dispatching.
    Timeout { hold_ms: u64 },
    /// Answer 499 with an empty body and close the connection.
    Drop,
    /// At most `limit` requests per `window_secs` per session pass; the rest get 429.
    Throttle { limit: u64, window_secs: u64 },
    /// Dispatch normally, then cut the body to `bytes` bytes.
    Partial { bytes: usize },
}

impl FaultType {
    /// The `type` word of the profile.
    pub fn kind(&self) -> FaultKind {
        match self {
            FaultType::Error { .. } => FaultKind::Error,
            FaultType::Delay { .. } => FaultKind::Delay,
            FaultType::Timeout { .. } => FaultKind::Timeout,
            FaultType::Drop => FaultKind::Drop,
            FaultType::Throttle { .. } => FaultKind::Throttle,
            FaultType::Partial { .. } => FaultKind::Partial,
        }
    }
}

/// Which simulation layer affected a response (trace entries and access-log lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    Error,
    Delay,
    Timeout,
    Drop,
    Throttle,
    Partial,
    /// The `--rate-limit` layer answered 429.
    RateLimit,
}

impl FaultKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Error => "error",
            FaultKind::Delay => "delay",
            FaultKind::Timeout => "timeout",
            FaultKind::Drop => "drop",
            FaultKind::Throttle => "throttle",
            FaultKind::Partial => "partial",
            FaultKind::RateLimit => "rate_limit",
        }
    }
}

/// One rule of a profile.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultRule {
    pub route: RoutePattern,
    /// Chance, in percent, that a matching request triggers the fault.
    pub percentage: f64,
    /// `(lowercase header name, exact value)`.
    pub header_match: Option<(String, String)>,
    /// Maximum number of triggers (until the global reset).
    pub count: Option<u64>,
    pub fault: FaultType,
}

/// A parsed fault profile.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FaultProfile {
    pub name: String,
    pub rules: Vec<FaultRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    rules: Vec<toml::Spanned<RawRule>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    route: toml::Spanned<String>,
    #[serde(default = "hundred")]
    percentage: toml::Spanned<f64>,
    #[serde(default)]
    header_match: Option<toml::Spanned<Vec<String>>>,
    #[serde(default)]
    count: Option<u64>,
    fault_type: toml::Spanned<RawFault>,
}

fn hundred() -> toml::Spanned<f64> {
    toml::Spanned::new(0..0, 100.0)
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum RawFault {
    Error {
        status: u16,
        #[serde(default)]
        body: Option<toml::Value>,
    },
    Delay {
        min_ms: u64,
        max_ms: u64,
    },
    Timeout {
        hold_ms: u64,
    },
    /// A struct variant, not a unit one: serde lets a unit variant of an internally tagged
    /// enum ignore every other key, and `deny_unknown_fields` applies to struct variants only.
    Drop {},
    Throttle {
        limit: u64,
        window_secs: u64,
    },
    Partial {
        bytes: u64,
    },
}

/// 1-based line of byte offset `at` in `text`.
pub(crate) fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(at.min(text.len()))
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Where in `text` a TOML error is: its span's start, except that for an unknown key the
/// parser spans the header of the table holding it, so the key's own line in that table is
/// found (`status = 503` under a `drop`, not the `[rules.fault_type]` header above it).
pub(crate) fn error_at(text: &str, e: &toml::de::Error) -> usize {
    let Some(span) = e.span() else { return 0 };
    let key = e
        .message()
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split('`').next());
    let (Some(key), Some(table)) = (key, text.get(span.start..)) else {
        return span.start;
    };
    let mut offset = span.start;
    for (i, line) in table.split_inclusive('\n').enumerate() {
        let t = line.trim_start();
        if i > 0 && t.starts_with('[') {
            break; // the next table: the key is not in this one's lines
        }
        let named = t
            .strip_prefix(key)
            .or_else(|| t.strip_prefix(&format!("\"{key}\"")))
            .is_some_and(|rest| rest.trim_start().starts_with('='));
        if named {
            return offset + (line.len() - t.len());
        }
        offset += line.len();
    }
    span.start
}

impl FaultProfile {
    /// Parse and validate a profile. `file` names the source in errors.
    pub fn parse(file: &str, text: &str) -> Result<FaultProfile, SimError> {
        let err = |at: usize, reason: String| SimError::Profile {
            file: file.to_string(),
            line: line_of(text, at),
            reason,
        };
        let raw: RawProfile = toml::from_str(text)
            .map_err(|e| err(error_at(text, &e), e.message().trim().to_string()))?;
        if raw.rules.is_empty() {
            return Err(err(
                0,
                "the profile has no [[rules]]; add at least one rule with `route`, `percentage` and `[rules.fault_type]`".into(),
            ));
        }
        let mut rules = Vec::with_capacity(raw.rules.len());
        for spanned in raw.rules {
            let rule_at = spanned.span().start;
            let r = spanned.into_inner();
            let route = RoutePattern::parse(r.route.get_ref())
                .map_err(|reason| err(r.route.span().start, format!("route: {reason}")))?;
            let pct = *r.percentage.get_ref();
            if !(0.0..=100.0).contains(&pct) {
                let at = if r.percentage.span().is_empty() {
                    rule_at
                } else {
                    r.percentage.span().start
                };
                return Err(err(
                    at,
                    format!("percentage must be between 0 and 100, found {pct}"),
                ));
            }
            let header_match = match r.header_match {
                None => None,
                Some(h) => {
                    let at = h.span().start;
                    let v = h.into_inner();
                    match v.as_slice() {
                        [name, value] if !name.trim().is_empty() => {
                            Some((name.trim().to_ascii_lowercase(), value.clone()))
                        }
                        _ => {
                            return Err(err(
                                at,
                                "header_match must be [\"Header-Name\", \"exact value\"]".into(),
                            ));
                        }
                    }
                }
            };
            let fault_at = r.fault_type.span().start;
            let fault = match r.fault_type.into_inner() {
                RawFault::Error { status, body } => {
                    if !(200..=999).contains(&status) {
                        return Err(err(
                            fault_at,
                            format!(
                                "error status must be 200..=999, found {status} (1xx are \
                                 interim responses, which cannot answer a request)"
                            ),
                        ));
                    }
                    let body = match body {
                        None => String::new(),
                        Some(toml::Value::String(s)) => s,
                        // A table or array is sent as its JSON rendering.
                        Some(other) => {
                            serde_json::to_string(&toml_to_json(other)).map_err(|e| {
                                err(
                                    fault_at,
                                    format!("the error body cannot be rendered as JSON: {e}"),
                                )
                            })?
                        }
                    };
                    FaultType::Error { status, body }
                }
                RawFault::Delay { min_ms, max_ms } => FaultType::Delay {
                    // Reversed bounds are a typo, not a request for an empty range.
                    min_ms: min_ms.min(max_ms),
                    max_ms: min_ms.max(max_ms),
                },
                RawFault::Timeout { hold_ms } => FaultType::Timeout { hold_ms },
                RawFault::Drop {} => FaultType::Drop,
                RawFault::Throttle { limit, window_secs } => {
                    if limit == 0 || window_secs == 0 {
                        return Err(err(
                            fault_at,
                            "throttle needs limit >= 1 and window_secs >= 1".into(),
                        ));
                    }
                    FaultType::Throttle { limit, window_secs }
                }
                RawFault::Partial { bytes } => FaultType::Partial {
                    bytes: usize::try_from(bytes).unwrap_or(usize::MAX),
                },
            };
            rules.push(FaultRule {
                route,
                percentage: pct,
                header_match,
                count: r.count,
                fault,
            });
        }
        Ok(FaultProfile {
            name: raw.name.unwrap_or_else(|| file.to_string()),
            rules,
        })
    }
}

/// A TOML value as the JSON a client reads: a date or time becomes its TOML text (RFC 3339),
/// not the TOML crate's internal wrapper object; a float JSON cannot hold (`nan`, `inf`) becomes
/// `null`, as serde_json writes it.
fn toml_to_json(v: toml::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        toml::Value::String(s) => J::String(s),
        toml::Value::Integer(i) => J::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map_or(J::Null, J::Number),
        toml::Value::Boolean(b) => J::Bool(b),
        toml::Value::Datetime(d) => J::String(d.to_string()),
        toml::Value::Array(a) => J::Array(a.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => {
            J::Object(t.into_iter().map(|(k, v)| (k, toml_to_json(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fault_type_parses() {
        let text = r#"
name = "all"
[[rules]]
route = "GET /a"
percentage = 50
[rules.fault_type]
type = "error"
status = 503
body = '{"error":"down"}'
[[rules]]
route = "*"
[rules.fault_type]
type = "delay"
min_ms = 30
max_ms = 10
[[rules]]
route = "*"
[rules.fault_type]
type = "timeout"
hold_ms = 5
[[rules]]
route = "*"
count = 2
header_match = ["X-Tenant", "demo"]
[rules.fault_type]
type = "drop"
[[rules]]
route = "*"
[rules.fault_type]
type = "throttle"
limit = 2
window_secs = 60
[[rules]]
route = "*"
[rules.fault_type]
type = "partial"
bytes = 4
"#;
        let p = FaultProfile::parse("f.toml", text).unwrap();
        assert_eq!(p.name, "all");
        assert_eq!(p.rules.len(), 6);
        assert_eq!(
            p.rules[1].fault,
            FaultType::Delay {
                min_ms: 10,
                max_ms: 30
            }
        );
        assert_eq!(p.rules[1].percentage, 100.0);
        assert_eq!(
            p.rules[3].header_match,
            Some(("x-tenant".to_string(), "demo".to_string()))
        );
        assert_eq!(p.rules[3].count, Some(2));
    }

    #[test]
    fn a_table_body_is_sent_as_json_with_dates_as_their_text() {
        let text = r#"
[[rules]]
route = "*"
[rules.fault_type]
type = "error"
status = 500
body = { when = 1979-05-27T07:32:00Z, day = 1979-05-27, n = 1, x = nan, tags = ["a"] }
"#;
        let p = FaultProfile::parse("f.toml", text).unwrap();
        let FaultType::Error { body, .. } = &p.rules[0].fault else {
            panic!("{:?}", p.rules[0].fault);
        };
        assert_eq!(
            body,
            r#"{"day":"1979-05-27","n":1,"tags":["a"],"when":"1979-05-27T07:32:00Z","x":null}"#
        );
    }

    #[test]
    fn unknown_fault_type_reports_file_and_line() {
        let text = "name = \"x\"\n[[rules]]\nroute = \"*\"\npercentage = 10\n[rules.fault_type]\ntype = \"explode\"\n";
        let e = FaultProfile::parse("faults.toml", text).unwrap_err();
        let SimError::Profile { file, line, reason } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(file, "faults.toml");
        assert!(*line >= 5, "line {line}");
        assert!(reason.contains("explode"), "{reason}");
    }

    #[test]
    fn percentage_out_of_range_points_at_its_line() {
        let text =
            "[[rules]]\nroute = \"*\"\npercentage = 140\n[rules.fault_type]\ntype = \"drop\"\n";
        let e = FaultProfile::parse("p.toml", text).unwrap_err();
        assert!(matches!(e, SimError::Profile { line: 3, .. }), "{e:?}");
        assert!(e.to_string().contains("p.toml:3"), "{e}");
    }

    #[test]
    fn bad_route_and_header_match_are_refused() {
        let text = "[[rules]]\nroute = \"GET nope\"\n[rules.fault_type]\ntype = \"drop\"\n";
        assert!(matches!(
            FaultProfile::parse("p", text),
            Err(SimError::Profile { line: 2, .. })
        ));
        let text = "[[rules]]\nroute = \"*\"\nheader_match = [\"x\"]\n[rules.fault_type]\ntype = \"drop\"\n";
        assert!(matches!(
            FaultProfile::parse("p", text),
            Err(SimError::Profile { line: 3, .. })
        ));
    }

    #[test]
    fn every_fault_type_refuses_an_unknown_key_at_its_line() {
        for (fault, stray) in [
            ("type = \"error\"\nstatus = 503", "colour = 1"),
            ("type = \"delay\"\nmin_ms = 1\nmax_ms = 2", "status = 500"),
            ("type = \"timeout\"\nhold_ms = 5", "status = 500"),
            ("type = \"drop\"", "status = 500"),
            (
                "type = \"throttle\"\nlimit = 1\nwindow_secs = 1",
                "status = 500",
            ),
            ("type = \"partial\"\nbytes = 4", "status = 500"),
        ] {
            let text = format!("[[rules]]\nroute = \"*\"\n[rules.fault_type]\n{fault}\n{stray}\n");
            let e = FaultProfile::parse("p.toml", &text).unwrap_err();
            let SimError::Profile { line, reason, .. } = &e else {
                panic!("{fault}: {e:?}")
            };
            assert!(reason.contains("unknown field"), "{fault}: {reason}");
            // The stray key's own line, after the header (3) and the fault's lines.
            let stray_line = 3 + fault.lines().count() + 1;
            assert_eq!(*line, stray_line, "{fault}: {reason}");
        }
    }

    #[test]
    fn empty_profile_is_refused() {
        assert!(FaultProfile::parse("p", "name = \"x\"\n").is_err());
    }
}
