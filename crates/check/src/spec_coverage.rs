//! `wraith coverage --openapi <spec>`: how many of the operations an OpenAPI document describes
//! the twin answers from recordings, which it does not, and which twin routes the document
//! does not describe.
//!
//! Matching is by method and path shape: a `{name}` segment of the document and a `:param`
//! segment of the model each stand for any one segment. The document's paths are taken as they
//! are and below each server's path (`servers[].url`, OpenAPI 3; `basePath`, Swagger 2), since
//! recordings hold the full path the client sent.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;
use wraith_model::Model;

/// The document's operations against the model's routes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpecCoverage {
    /// `info.title`.
    pub api_title: String,
    /// `info.version`.
    pub api_version: String,
    pub total_count: u64,
    pub covered_count: u64,
    /// `covered_count / total_count` in basis points (0 for a document without operations).
    pub coverage_bp: u32,
    /// The same share in percent, two decimals.
    pub percentage: f64,
    /// Operations no model route answers, in document path order then method order.
    pub uncovered_operations: Vec<SpecOperation>,
    /// Model routes (`METHOD /path`) that fall on no operation of the document.
    pub routes_not_in_spec: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct SpecOperation {
    /// Uppercase.
    pub method: String,
    /// As the document writes it (`/customers/{id}`).
    pub path: String,
}

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Why a document cannot be judged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(String);

/// Compare an OpenAPI 3 or Swagger 2 document (already parsed) with the model's routes.
pub fn spec_coverage(doc: &Value, model: &Model) -> Result<SpecCoverage, SpecError> {
    let Some(top) = doc.as_object() else {
        return Err(SpecError("the document is not an object".into()));
    };
    if !top.contains_key("openapi") && !top.contains_key("swagger") {
        return Err(SpecError(
            "no `openapi` or `swagger` key: not an OpenAPI document".into(),
        ));
    }
    let Some(paths) = top.get("paths").and_then(Value::as_object) else {
        return Err(SpecError("`paths` is missing or not an object".into()));
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    let info = top.get("info");
    let mut prefixes: Vec<Vec<String>> = vec![Vec::new()];
    let mut server_path = |url: &str| {
        // The path of `https://host/v4` or of a relative `/v4`; `{var}` segments stay wildcards.
        let rest = url
            .split_once("://")
            .map_or(url, |(_, r)| r.find('/').map_or("", |i| &r[i..]));
        let segs = segments(rest);
        if !segs.is_empty() && !prefixes.contains(&segs) {
            prefixes.push(segs);
        }
    };
    if let Some(servers) = top.get("servers").and_then(Value::as_array) {
        for s in servers {
            if let Some(url) = s.get("url").and_then(Value::as_str) {
                server_path(url);
            }
        }
    }
    if let Some(base) = top.get("basePath").and_then(Value::as_str) {
        server_path(base);
    }

    let routes: Vec<(String, Vec<String>)> = model
        .routes
        .iter()
        .map(|r| (r.method.to_ascii_uppercase(), segments(&r.path)))
        .collect();
    let mut used: BTreeSet<usize> = BTreeSet::new();
    let mut total = 0u64;
    let mut covered = 0u64;
    let mut uncovered = Vec::new();
    for (path, item) in paths {
        let Some(item) = item.as_object() else {
            continue;
        };
        let spec_segs = segments(path);
        for m in METHODS {
            if !item.contains_key(m) {
                continue;
            }
            total += 1;
            let method = m.to_ascii_uppercase();
            // Routes the operation falls on; those that meet each of its literal segments
            // with a literal are the ones its requests reach (the router prefers literals:
            // `/orders/summary` is not `/orders/:param`'s), the rest only where none does.
            let mut literal: Vec<usize> = Vec::new();
            let mut loose: Vec<usize> = Vec::new();
            for (i, (rm, rsegs)) in routes.iter().enumerate() {
                if *rm != method {
                    continue;
                }
                let best = prefixes
                    .iter()
                    .filter_map(|p| {
                        let full: Vec<&str> = p
                            .iter()
                            .chain(spec_segs.iter())
                            .map(String::as_str)
                            .collect();
                        shape_match(&full, rsegs)
                    })
                    .max();
                match best {
                    Some(true) => literal.push(i),
                    Some(false) => loose.push(i),
                    None => {}
                }
            }
            let reached = if literal.is_empty() { loose } else { literal };
            if !reached.is_empty() {
                used.extend(reached);
                covered += 1;
            } else {
                uncovered.push(SpecOperation {
                    method,
                    path: path.clone(),
                });
            }
        }
    }
    let coverage_bp = (covered * 10_000)
        .checked_div(total)
        .map_or(0, |bp| u32::try_from(bp).unwrap_or(10_000));
    let routes_not_in_spec = model
        .routes
        .iter()
        .enumerate()
        .filter(|(i, _)| !used.contains(i))
        .map(|(_, r)| format!("{} {}", r.method, r.path))
        .collect();
    Ok(SpecCoverage {
        api_title: text(info.and_then(|i| i.get("title"))),
        api_version: text(info.and_then(|i| i.get("version"))),
        total_count: total,
        covered_count: covered,
        coverage_bp,
        percentage: f64::from(coverage_bp) / 100.0,
        uncovered_operations: uncovered,
        routes_not_in_spec,
    })
}

fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Segment by segment: equal literals, or a wildcard on either side (`{name}` in the document,
/// `:param` in the model). `Some(true)` when every literal of the document met a literal,
/// `Some(false)` when a model parameter stood in for one, `None` when the shapes differ.
fn shape_match(spec: &[&str], route: &[String]) -> Option<bool> {
    if spec.len() != route.len() {
        return None;
    }
    let mut literal = true;
    for (s, r) in spec.iter().zip(route) {
        let spec_param = s.starts_with('{') && s.ends_with('}');
        if spec_param || *s == r.as_str() {
            continue;
        }
        if r.starts_with(':') {
            literal = false;
        } else {
            return None;
        }
    }
    Some(literal)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn template_segments_match_either_way_and_lengths_must_agree() {
        let r = |p: &str| segments(p);
        let m = |spec: &[&str], route: &str| shape_match(spec, &r(route));
        assert_eq!(
            m(&["v4", "linodes", "{id}"], "/v4/linodes/:param"),
            Some(true)
        );
        assert_eq!(m(&["v4", "linodes", "{id}"], "/v4/linodes/123"), Some(true));
        assert_eq!(
            m(&["v4", "linodes", "123"], "/v4/linodes/:param"),
            Some(false)
        );
        assert_eq!(m(&["v4", "linodes"], "/v4/linodes/:param"), None);
        assert_eq!(m(&["v4", "volumes", "{id}"], "/v4/linodes/:param"), None);
    }
}
