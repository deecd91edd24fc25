//! `drift.toml` (optional, in the twin root): the twin owner's accepted drift.
//!
//! ```toml
//! [[suppress]]                      # at least one matcher, and a reason
//! route = "GET /v1/widgets/:param"
//! path = "body.color"
//! reason = "the API dropped color in v2; clients no longer read it"
//!
//! [[reclassify]]
//! match = { route = "GET /v1/widgets/*", path = "body.status" }
//! new_drift_type = "enum_extension"
//! reason = "new statuses are documented additions"
//! ```
//!
//! This module only reads the file: which keys each entry gives, as written, with the line of
//! the entry. What the values mean (drift types, route and path patterns, a missing matcher or
//! reason) is judged by `wraith_check::drift_types`, which both `wraith check` and `wraith lint`
//! use. A file that does not parse never stops a check: every problem is a [`DriftProblem`]
//! (what, where, how to fix), and an entry with a problem in its keys is left out (so a
//! misspelled matcher never turns into "match everything").

use std::path::{Path, PathBuf};

use crate::dir::TwinDir;

/// The file name, in the twin root.
pub const DRIFT_TOML: &str = "drift.toml";

/// One `[[suppress]]` entry as written (keys absent: `None`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DriftSuppressEntry {
    /// 1-based position among the `[[suppress]]` entries.
    pub number: usize,
    /// 1-based line of the entry (0 when unknown).
    pub line: usize,
    pub drift_id: Option<String>,
    pub route: Option<String>,
    pub path: Option<String>,
    pub drift_type: Option<String>,
    pub reason: Option<String>,
}

/// One `[[reclassify]]` entry as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DriftReclassifyEntry {
    /// 1-based position among the `[[reclassify]]` entries.
    pub number: usize,
    pub line: usize,
    /// `match.route`.
    pub route: Option<String>,
    /// `match.path`.
    pub path: Option<String>,
    pub new_drift_type: Option<String>,
    pub reason: Option<String>,
}

/// A problem with `drift.toml`: what, where (file, line, entry, key) and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriftProblem {
    pub file: PathBuf,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// `[[suppress]] entry 2`, or `drift.toml` for the file as a whole.
    pub entry: String,
    /// The key the problem is about (empty for the entry or file as a whole).
    pub key: String,
    /// Stable id for `wraith lint`: `drift-toml` (syntax, unknown table), `drift-matcher`,
    /// `drift-reason`, `drift-type`, `drift-route`, `drift-path`, `drift-id`.
    pub rule: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl std::fmt::Display for DriftProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.entry)?;
        if !self.key.is_empty() {
            write!(f, ": `{}`", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// `drift.toml` as read: its entries (those whose keys read cleanly) and every problem.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DriftConfig {
    pub file: PathBuf,
    pub suppress: Vec<DriftSuppressEntry>,
    pub reclassify: Vec<DriftReclassifyEntry>,
    pub problems: Vec<DriftProblem>,
}

impl DriftConfig {
    /// Read `<twin>/drift.toml`. `None` when there is none (no drift is accepted); a file that
    /// cannot be read is a problem, not an error: drift acceptance never stops a check.
    pub fn load(twin: &TwinDir) -> Option<DriftConfig> {
        let file = twin.root().join(DRIFT_TOML);
        match crate::read_file_to_string(&file) {
            Ok(text) => Some(DriftConfig::parse(&text, &file)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => Some(DriftConfig {
                problems: vec![DriftProblem {
                    file: file.clone(),
                    line: 0,
                    entry: DRIFT_TOML.to_string(),
                    key: String::new(),
                    rule: "drift-toml",
                    message: format!("cannot be read ({e}); no drift is accepted until it can"),
                }],
                file,
                ..DriftConfig::default()
            }),
        }
    }

    /// Parse `drift.toml` text; `file` names it in problems.
    pub fn parse(text: &str, file: &Path) -> DriftConfig {
        let mut cfg = DriftConfig {
            file: file.to_path_buf(),
            ..DriftConfig::default()
        };
        let problem = |line: usize, entry: &str, key: &str, rule, message: String| DriftProblem {
            file: file.to_path_buf(),
            line,
            entry: entry.to_string(),
            key: key.to_string(),
            rule,
            message,
        };
        let doc = match toml_edit::Document::parse(text) {
            Ok(d) => d,
            Err(e) => {
                let line = e.span().map_or(0, |s| line_of(text, s.start));
                let msg = e.message().lines().next().unwrap_or("").trim().to_string();
                cfg.problems.push(problem(
                    line,
                    DRIFT_TOML,
                    "",
                    "drift-toml",
                    format!(
                        "not valid TOML ({msg}); fix the syntax: entries are `[[suppress]]` and \
                         `[[reclassify]]` tables of string keys. No drift is accepted until it parses"
                    ),
                ));
                return cfg;
            }
        };
        let span_line =
            |span: Option<std::ops::Range<usize>>| span.map_or(0, |s| line_of(text, s.start));
        for (key, item) in doc.as_table().iter() {
            let line = span_line(
                doc.as_table()
                    .key(key)
                    .and_then(|k| k.span())
                    .or_else(|| item.span()),
            );
            let tables = tables_of(item);
            match key {
                "suppress" | "reclassify" => {
                    let Some(tables) = tables else {
                        cfg.problems.push(problem(
                            line,
                            DRIFT_TOML,
                            key,
                            "drift-toml",
                            format!("must be an array of tables: write each entry as `[[{key}]]`"),
                        ));
                        continue;
                    };
                    for (i, (t, span)) in tables.into_iter().enumerate() {
                        let line = span_line(span).max(line);
                        let entry = format!("[[{key}]] entry {}", i + 1);
                        let mut ok = true;
                        let mut values: Vec<(String, String)> = Vec::new();
                        read_strings(t, "", &mut values, &mut |k, msg| {
                            ok = false;
                            cfg.problems
                                .push(problem(line, &entry, k, rule_for(k), msg));
                        });
                        if key == "suppress" {
                            let mut e = DriftSuppressEntry {
                                number: i + 1,
                                line,
                                ..DriftSuppressEntry::default()
                            };
                            for (k, v) in values {
                                match k.as_str() {
                                    "drift_id" => e.drift_id = Some(v),
                                    "route" => e.route = Some(v),
                                    "path" => e.path = Some(v),
                                    "drift_type" => e.drift_type = Some(v),
                                    "reason" => e.reason = Some(v),
                                    other => {
                                        ok = false;
                                        cfg.problems.push(problem(
                                            line,
                                            &entry,
                                            other,
                                            "drift-matcher",
                                            format!(
                                                "unknown matcher `{other}`: a [[suppress]] entry matches by \
                                                 `drift_id`, `route`, `path` or `drift_type` (and needs a `reason`)"
                                            ),
                                        ));
                                    }
                                }
                            }
                            if ok {
                                cfg.suppress.push(e);
                            }
                        } else {
                            let mut e = DriftReclassifyEntry {
                                number: i + 1,
                                line,
                                ..DriftReclassifyEntry::default()
                            };
                            for (k, v) in values {
                                match k.as_str() {
                                    "match.route" => e.route = Some(v),
                                    "match.path" => e.path = Some(v),
                                    "new_drift_type" => e.new_drift_type = Some(v),
                                    "reason" => e.reason = Some(v),
                                    other => {
                                        ok = false;
                                        cfg.problems.push(problem(
                                            line,
                                            &entry,
                                            other,
                                            "drift-matcher",
                                            format!(
                                                "unknown key `{other}`: a [[reclassify]] entry has \
                                                 `match = {{ route = \"…\", path = \"…\" }}`, `new_drift_type` and `reason`"
                                            ),
                                        ));
                                    }
                                }
                            }
                            if ok {
                                cfg.reclassify.push(e);
                            }
                        }
                    }
                }
                other => {
                    let hint = if other == "accept" {
                        " (`[[accept]]` is the older form: write the entries as `[[suppress]]` with \
                         `route`/`path`/`drift_type` matchers and a `reason`)"
                    } else {
                        ""
                    };
                    cfg.problems.push(problem(
                        line,
                        DRIFT_TOML,
                        other,
                        "drift-toml",
                        format!(
                            "unknown table `{other}`: drift.toml holds `[[suppress]]` and `[[reclassify]]` entries{hint}"
                        ),
                    ));
                }
            }
        }
        cfg
    }
}

/// The rule id for a problem with key `k` of an entry.
fn rule_for(k: &str) -> &'static str {
    match k {
        "reason" => "drift-reason",
        "drift_type" | "new_drift_type" => "drift-type",
        "route" | "match.route" => "drift-route",
        "path" | "match.path" => "drift-path",
        "drift_id" => "drift-id",
        _ => "drift-matcher",
    }
}

type Spanned<'d> = (&'d dyn toml_edit::TableLike, Option<std::ops::Range<usize>>);

/// The tables of `[[x]]` (or of `x = [{…}, …]`), with their spans; `None` when `item` is
/// something else.
fn tables_of(item: &toml_edit::Item) -> Option<Vec<Spanned<'_>>> {
    match item {
        toml_edit::Item::ArrayOfTables(a) => Some(
            a.iter()
                .map(|t| (t as &dyn toml_edit::TableLike, t.span()))
                .collect(),
        ),
        toml_edit::Item::Value(toml_edit::Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_inline_table()
                    .map(|t| (t as &dyn toml_edit::TableLike, v.span()))
            })
            .collect(),
        _ => None,
    }
}

/// Every string value of `t` as (dotted key, value); a value of another type, or a nested
/// table other than `match`, is reported through `bad`.
fn read_strings(
    t: &dyn toml_edit::TableLike,
    prefix: &str,
    out: &mut Vec<(String, String)>,
    bad: &mut dyn FnMut(&str, String),
) {
    for (k, item) in t.iter() {
        let key = if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        };
        if let Some(s) = item.as_str() {
            out.push((key, s.to_string()));
        } else if let Some(inner) = item.as_table_like()
            && prefix.is_empty()
            && k == "match"
        {
            read_strings(inner, "match", out, bad);
        } else {
            bad(
                &key,
                "must be a string (in quotes); no drift is accepted by this entry until it is"
                    .to_string(),
            );
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> DriftConfig {
        DriftConfig::parse(text, Path::new("drift.toml"))
    }

    #[test]
    fn suppress_and_reclassify_entries_are_read_with_their_lines() {
        let c = parse(
            "# accepted drift\n\n[[suppress]]\nroute = \"GET /a\"\npath = \"body.x\"\nreason = \"known\"\n\n\
             [[reclassify]]\nmatch = { route = \"GET /a\", path = \"body.s\" }\nnew_drift_type = \"enum_extension\"\nreason = \"documented\"\n",
        );
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(
            c.suppress,
            [DriftSuppressEntry {
                number: 1,
                line: 3,
                route: Some("GET /a".into()),
                path: Some("body.x".into()),
                reason: Some("known".into()),
                ..Default::default()
            }]
        );
        assert_eq!(c.reclassify.len(), 1);
        let r = &c.reclassify[0];
        assert_eq!(r.line, 8);
        assert_eq!(r.route.as_deref(), Some("GET /a"));
        assert_eq!(r.path.as_deref(), Some("body.s"));
        assert_eq!(r.new_drift_type.as_deref(), Some("enum_extension"));
    }

    #[test]
    fn an_unknown_matcher_drops_the_entry_and_names_file_line_and_key() {
        let c = parse("[[suppress]]\nrout = \"GET /a\"\nreason = \"r\"\n");
        assert!(c.suppress.is_empty());
        assert_eq!(c.problems.len(), 1);
        let p = &c.problems[0];
        assert_eq!(
            (p.line, p.rule, p.key.as_str()),
            (1, "drift-matcher", "rout")
        );
        assert!(
            p.to_string()
                .starts_with("drift.toml:1: [[suppress]] entry 1: `rout`: unknown matcher"),
            "{p}"
        );
    }

    #[test]
    fn a_syntax_error_is_one_problem_with_its_line_never_a_panic() {
        let c = parse("[[suppress]]\nroute = \"GET /a\"\nreason = \n");
        assert!(c.suppress.is_empty());
        assert_eq!(c.problems.len(), 1);
        assert_eq!(c.problems[0].rule, "drift-toml");
        assert_eq!(c.problems[0].line, 3);
    }

    #[test]
    fn a_non_string_value_and_an_unknown_table_are_problems() {
        let c =
            parse("[[suppress]]\ndrift_type = 3\nreason = \"r\"\n\n[[accept]]\nroute = \"x\"\n");
        assert!(c.suppress.is_empty());
        let rules: Vec<&str> = c.problems.iter().map(|p| p.rule).collect();
        assert_eq!(rules, ["drift-type", "drift-toml"]);
        assert!(
            c.problems[1].message.contains("older form"),
            "{:?}",
            c.problems
        );
        assert_eq!(c.problems[1].line, 5);
    }
}
