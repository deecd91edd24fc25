//! `lua/routes.toml`: routes no recording covers, declared by the twin's owner.
//!
//! ```toml
//! schema_version = 1
//! [[route]]
//! method = "GET"
//! path = "/customers/:id/summary"
//! status = 200                      # optional
//! response = '{"status":"queued"}'  # optional JSON string
//! ```
//!
//! The file is read at serve time only; `wraith synth` never touches it and nothing in it is
//! written into the model. The validators here are shared with `wraith route add`.

use serde_json::Value;
use wraith_engine::AuthoredRoute;

/// Methods an authored route may declare.
pub const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// The only `schema_version` this build reads.
pub const ROUTES_SCHEMA_VERSION: i64 = 1;

/// Keys a `[[route]]` table may carry.
const ROUTE_KEYS: &[&str] = &["method", "path", "status", "response"];

/// Parse and validate `lua/routes.toml`. The error says which route is wrong and how.
pub fn parse_routes(text: &str) -> Result<Vec<AuthoredRoute>, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| format!("not valid TOML: {e}"))?;
    for key in doc.keys() {
        if key != "schema_version" && key != "route" {
            return Err(format!(
                "unknown top-level key `{key}`; the file holds `schema_version = 1` and \
                 `[[route]]` tables"
            ));
        }
    }
    match doc.get("schema_version") {
        None => {}
        Some(toml::Value::Integer(ROUTES_SCHEMA_VERSION)) => {}
        Some(other) => {
            return Err(format!(
                "schema_version = {other} is not supported; this build reads schema_version = 1"
            ));
        }
    }
    let routes = match doc.get("route") {
        None => return Ok(Vec::new()),
        Some(toml::Value::Array(a)) => a,
        Some(_) => {
            return Err(
                "`route` must be an array of tables: write each as `[[route]]`".to_string(),
            );
        }
    };
    let mut out: Vec<AuthoredRoute> = Vec::with_capacity(routes.len());
    for (i, r) in routes.iter().enumerate() {
        let n = i + 1;
        let table = r
            .as_table()
            .ok_or_else(|| format!("route #{n}: must be a table (`[[route]]`)"))?;
        for key in table.keys() {
            if !ROUTE_KEYS.contains(&key.as_str()) {
                return Err(format!(
                    "route #{n}: unknown key `{key}` (allowed: {})",
                    ROUTE_KEYS.join(", ")
                ));
            }
        }
        let method = match table.get("method") {
            Some(toml::Value::String(s)) => {
                validate_method(s).map_err(|e| format!("route #{n}: {e}"))?
            }
            Some(_) => return Err(format!("route #{n}: `method` must be a string")),
            None => return Err(format!("route #{n}: `method` is missing")),
        };
        let path = match table.get("path") {
            Some(toml::Value::String(s)) => {
                validate_path(s).map_err(|e| format!("route #{n} ({method}): {e}"))?;
                s.clone()
            }
            Some(_) => return Err(format!("route #{n}: `path` must be a string")),
            None => return Err(format!("route #{n}: `path` is missing")),
        };
        let name = format!("{method} {path}");
        let status = match table.get("status") {
            None => None,
            Some(toml::Value::Integer(s)) => {
                Some(validate_status(*s).map_err(|e| format!("route {name}: {e}"))?)
            }
            Some(_) => return Err(format!("route {name}: `status` must be an integer")),
        };
        let response = match table.get("response") {
            None => None,
            Some(toml::Value::String(s)) => {
                Some(validate_response(s).map_err(|e| format!("route {name}: {e}"))?)
            }
            Some(_) => {
                return Err(format!(
                    "route {name}: `response` must be a JSON document in a string, e.g. \
                     response = '{{\"status\":\"queued\"}}'"
                ));
            }
        };
        if let Some(prev) = out
            .iter()
            .find(|a| a.method == method && same_template(&a.path, &path))
        {
            return Err(format!(
                "route {name} is declared twice (also as {}); keep one",
                prev.name()
            ));
        }
        out.push(AuthoredRoute {
            method,
            path,
            status,
            response,
        });
    }
    Ok(out)
}

/// Two templates that match the same requests (parameter names aside).
pub fn same_template(a: &str, b: &str) -> bool {
    let shape = |p: &str| -> Vec<String> {
        p.split('/')
            .filter(|s| !s.is_empty())
            .map(|s| {
                if s.starts_with(':') {
                    ":".to_string()
                } else {
                    s.to_string()
                }
            })
            .collect()
    };
    shape(a) == shape(b)
}

/// An HTTP method an authored route may declare, uppercased.
pub fn validate_method(m: &str) -> Result<String, String> {
    let up = m.trim().to_ascii_uppercase();
    if METHODS.contains(&up.as_str()) {
        Ok(up)
    } else {
        Err(format!("method `{m}` is not one of {}", METHODS.join(", ")))
    }
}

/// A route template: `/` followed by literal segments and `:name` parameters.
pub fn validate_path(p: &str) -> Result<(), String> {
    if !p.starts_with('/') {
        return Err(format!("path `{p}` must start with `/`"));
    }
    if p.len() > 1 && p.ends_with('/') {
        return Err(format!(
            "path `{p}` ends with `/`; drop the trailing slash (requests with one still match)"
        ));
    }
    if let Some(c) = p
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || matches!(c, '?' | '#' | '{' | '}'))
    {
        return Err(format!(
            "path `{p}` contains {c:?}; a template holds only the path (no query or fragment) \
             and spells parameters `:name`"
        ));
    }
    let mut names: Vec<&str> = Vec::new();
    for seg in p.split('/').skip(1) {
        if seg.is_empty() && p != "/" {
            return Err(format!("path `{p}` has an empty segment (`//`)"));
        }
        if seg == "." || seg == ".." {
            return Err(format!("path `{p}` has a dot segment (`{seg}`)"));
        }
        if let Some(name) = seg.strip_prefix(':') {
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(format!(
                    "path `{p}`: parameter `{seg}` must be `:` and a name of letters, digits \
                     and `_` (e.g. `:id`)"
                ));
            }
            if names.contains(&name) {
                return Err(format!("path `{p}`: parameter `:{name}` appears twice"));
            }
            names.push(name);
        }
    }
    Ok(())
}

/// A declared status code.
pub fn validate_status(s: i64) -> Result<u16, String> {
    u16::try_from(s)
        .ok()
        .filter(|s| (100..=599).contains(s))
        .ok_or_else(|| format!("status {s} is not an HTTP status code (100–599)"))
}

/// A declared response body: one JSON document.
pub fn validate_response(text: &str) -> Result<Value, String> {
    serde_json::from_str::<Value>(text)
        .map_err(|e| format!("response is not valid JSON ({e}): {text}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let routes = parse_routes(
            "schema_version = 1\n[[route]]\nmethod = \"patch\"\npath = \"/v3/assets/:param\"\n\
             status = 202\nresponse = '{\"status\":\"queued\"}'\n[[route]]\nmethod = \"GET\"\n\
             path = \"/health\"\n",
        )
        .unwrap();
        assert_eq!(routes.len(), 2);
        assert_eq!(routes[0].method, "PATCH");
        assert_eq!(routes[0].status, Some(202));
        assert_eq!(
            routes[0].response,
            Some(serde_json::json!({"status": "queued"}))
        );
        assert!(!routes[1].declares_response());
        assert!(parse_routes("").unwrap().is_empty());
    }

    #[test]
    fn rejects_bad_method_path_status_json_and_duplicates() {
        let one = |body: &str| parse_routes(&format!("schema_version = 1\n[[route]]\n{body}"));
        assert!(
            one("method = \"FETCH\"\npath = \"/a\"")
                .unwrap_err()
                .contains("FETCH")
        );
        assert!(
            one("method = \"GET\"\npath = \"a\"")
                .unwrap_err()
                .contains("start with")
        );
        assert!(one("method = \"GET\"\npath = \"/a?x=1\"").is_err());
        assert!(one("method = \"GET\"\npath = \"/a/{id}\"").is_err());
        assert!(one("method = \"GET\"\npath = \"/a/:\"").is_err());
        assert!(one("method = \"GET\"\npath = \"/a//b\"").is_err());
        assert!(
            one("method = \"GET\"\npath = \"/a\"\nstatus = 42")
                .unwrap_err()
                .contains("42")
        );
        assert!(
            one("method = \"GET\"\npath = \"/a\"\nresponse = '{nope'")
                .unwrap_err()
                .contains("JSON")
        );
        assert!(
            one("method = \"GET\"\npath = \"/a\"\nhandler = \"x\"")
                .unwrap_err()
                .contains("unknown key")
        );
        assert!(one("path = \"/a\"").unwrap_err().contains("method"));
        let dup = "schema_version = 1\n[[route]]\nmethod = \"GET\"\npath = \"/a/:x\"\n\
                   [[route]]\nmethod = \"GET\"\npath = \"/a/:y\"\n";
        assert!(parse_routes(dup).unwrap_err().contains("twice"));
        assert!(
            parse_routes("schema_version = 2")
                .unwrap_err()
                .contains("schema_version")
        );
    }
}
