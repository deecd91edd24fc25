//! The access log (`--access-log compact|json|off`): one line per application request, handed
//! to a sink the caller provides (the `wraith` binary writes to stderr). The library never
//! prints by itself.

use std::sync::Arc;

use serde_json::json;

use crate::trace::TraceEntry;

/// Line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessLogFormat {
    /// `<timestamp> <METHOD> <path> <status> <µs>us session=<s> provenance=<p> route=<r> fault=<f>`
    Compact,
    /// One JSON object per line (the trace entry's fields, without `id`).
    Json,
}

/// Where lines go. Receives one line without the trailing newline.
pub type AccessLogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// An enabled access log.
#[derive(Clone)]
pub struct AccessLog {
    pub format: AccessLogFormat,
    pub sink: AccessLogSink,
}

impl std::fmt::Debug for AccessLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessLog")
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

impl AccessLog {
    /// Write one line for `e`.
    pub fn write(&self, e: &TraceEntry) {
        (self.sink)(&render(self.format, e));
    }
}

/// The line for `e` in `format`.
pub fn render(format: AccessLogFormat, e: &TraceEntry) -> String {
    match format {
        AccessLogFormat::Compact => format!(
            "{} {} {} {} {}us session={} provenance={} route={} fault={}",
            e.timestamp,
            e.method,
            e.path,
            e.status,
            e.duration_us,
            e.session
                .as_deref()
                .map_or(std::borrow::Cow::Borrowed("-"), compact_value),
            e.provenance,
            e.route
                .as_deref()
                .map_or_else(|| "-".to_string(), |r| format!("\"{r}\"")),
            e.fault.as_deref().unwrap_or("-"),
        ),
        AccessLogFormat::Json => json!({
            "delay_ms": e.delay_ms,
            "duration_us": e.duration_us,
            "fault": e.fault,
            "method": e.method,
            "path": e.path,
            "provenance": e.provenance,
            "route": e.route,
            "session": e.session,
            "status": e.status,
            "timestamp": e.timestamp,
        })
        .to_string(),
    }
}

/// A value as one compact-log token: verbatim when it is a plain word, else a JSON string. The
/// session is the client's header value, so a value with spaces, `=`, quotes or line breaks
/// would otherwise forge fields or whole lines of the log.
fn compact_value(v: &str) -> std::borrow::Cow<'_, str> {
    // `-` stands for "no value" (the headerless session, no route): a session named `-` is quoted.
    let plain = !v.is_empty()
        && v != "-"
        && v.chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && c != '"' && c != '=' && c != '\\');
    if plain {
        std::borrow::Cow::Borrowed(v)
    } else {
        std::borrow::Cow::Owned(serde_json::Value::String(v.to_string()).to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_and_json_lines_carry_the_same_facts() {
        let e = TraceEntry {
            id: 7,
            method: "GET".into(),
            path: "/v1/a?x=1".into(),
            status: 429,
            duration_us: 12,
            timestamp: "2026-01-01T00:00:00Z".into(),
            session: Some("w1".into()),
            provenance: "fault".into(),
            route: Some("GET /v1/a".into()),
            fault: Some("rate_limit".into()),
            delay_ms: 0,
            field_counts: None,
            origins: None,
        };
        assert_eq!(
            render(AccessLogFormat::Compact, &e),
            "2026-01-01T00:00:00Z GET /v1/a?x=1 429 12us session=w1 provenance=fault route=\"GET /v1/a\" fault=rate_limit"
        );
        let v: serde_json::Value =
            serde_json::from_str(&render(AccessLogFormat::Json, &e)).unwrap();
        assert_eq!(v["status"], 429);
        assert_eq!(v["fault"], "rate_limit");
        assert_eq!(v["session"], "w1");
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(
            keys, sorted,
            "keys in sorted order, as every JSON Wraith writes"
        );
    }

    /// A `GET /` of `session` answered 200 from a template, no route matched.
    fn plain_entry(session: Option<&str>) -> TraceEntry {
        TraceEntry {
            id: 1,
            method: "GET".into(),
            path: "/".into(),
            status: 200,
            duration_us: 1,
            timestamp: "t".into(),
            session: session.map(Into::into),
            provenance: "template".into(),
            route: None,
            fault: None,
            delay_ms: 0,
            field_counts: None,
            origins: None,
        }
    }

    #[test]
    fn a_session_value_cannot_forge_compact_log_fields_or_lines() {
        let mut e = plain_entry(Some("x provenance=recorded\nforged line"));
        let line = render(AccessLogFormat::Compact, &e);
        assert_eq!(
            line,
            "t GET / 200 1us session=\"x provenance=recorded\\nforged line\" provenance=template route=- fault=-"
        );
        assert!(!line.contains('\n'));
        e.session = Some("worker-3".into());
        assert!(render(AccessLogFormat::Compact, &e).contains(" session=worker-3 "));
    }

    #[test]
    fn the_headerless_namespace_logs_as_no_session_and_a_session_named_dash_is_quoted() {
        let mut e = plain_entry(None);
        assert!(render(AccessLogFormat::Compact, &e).contains(" session=- "));
        let v: serde_json::Value =
            serde_json::from_str(&render(AccessLogFormat::Json, &e)).unwrap();
        assert_eq!(v["session"], serde_json::Value::Null);
        e.session = Some("-".into());
        assert!(render(AccessLogFormat::Compact, &e).contains(" session=\"-\" "));
        e.session = Some("default".into());
        assert!(render(AccessLogFormat::Compact, &e).contains(" session=default "));
    }
}
