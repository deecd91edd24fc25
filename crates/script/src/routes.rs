//! `lua/routes.toml`: routes no recording covers, declared by the twin's owner.
//!
//! ```toml
//! schema_version = 1
//! [[route]]
//! method = "GET"
//! path = "/customers/:id/summary"
//! status = 200                      # optional
//! response = '{"status":"queued"}'  # optional JSON string
//! handler = "customer_summary"      # optional explicit handler (lua/handlers/customer_summary.lua)
//!
//! [[binding]]                       # explicit binding of a handler to any route, recorded or authored
//! method = "GET"
//! path = "/customers/:param"
//! handler = "customer_view"         # file stem in lua/handlers/
//! ```
//!
//! An explicit binding wins over the file-name convention for its route. Whether the handler file
//! and the route exist is checked at serve time (the engine's `validate_explicit`), where the
//! handlers and the model are known.
//!
//! The file is read at serve time only; `wraith synth` never touches it and nothing in it is
//! written into the model. The validators here are shared with `wraith route add`.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::Path;

use serde_json::Value;

use crate::ScriptError;
use wraith_engine::AuthoredRoute;
use wraith_engine::handler::ExplicitBinding;

/// Methods an authored route may declare.
pub const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// The only `schema_version` this build reads.
pub const ROUTES_SCHEMA_VERSION: i64 = 1;

/// Keys a `[[route]]` table may carry.
const ROUTE_KEYS: &[&str] = &["method", "path", "status", "response", "handler"];

/// Keys a `[[binding]]` table must carry.
const BINDING_KEYS: &[&str] = &["method", "path", "handler"];

/// Everything `lua/routes.toml` declares.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoutesFile {
    /// `[[route]]` entries, in file order.
    pub routes: Vec<AuthoredRoute>,
    /// `[[binding]]` entries, in file order (an authored route's own `handler` stays on the
    /// route; `wraith_engine::handler::explicit_bindings` merges both).
    pub bindings: Vec<ExplicitBinding>,
}

/// Parse and validate `lua/routes.toml`'s authored routes. The error says which route is wrong
/// and how.
pub fn parse_routes(text: &str) -> Result<Vec<AuthoredRoute>, String> {
    parse_routes_file(text).map(|f| f.routes)
}

/// The text of the `lua/routes.toml` at `path`, `None` when there is none. Bytes that are not
/// UTF-8 are a file to fix ([`ScriptError::Routes`], saying where), not a failed read
/// ([`ScriptError::Io`]).
pub fn read_routes_text(path: &Path) -> Result<Option<String>, ScriptError> {
    let bytes = match wraith_recording::fsutil::read_file(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ScriptError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    String::from_utf8(bytes).map(Some).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        ScriptError::Routes {
            path: path.to_path_buf(),
            message: format!(
                "not UTF-8 text (line {line}, first bad byte at offset {at}); save the file as UTF-8"
            ),
        }
    })
}

/// A TOML parse error as `not valid TOML at line L, column C: <what>`. The parser's own
/// rendering quotes the offending line whole, which for a one-line file of deep nesting is
/// hundreds of kilobytes of stderr.
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let what = e.message().lines().next().unwrap_or("").trim();
    match e.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("not valid TOML at line {line}, column {column}: {what}")
        }
        None => format!("not valid TOML: {what}"),
    }
}

/// Parse and validate all of `lua/routes.toml`: `[[route]]` and `[[binding]]` entries. The
/// error says which entry is wrong and how.
pub fn parse_routes_file(text: &str) -> Result<RoutesFile, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
    for key in doc.keys() {
        if key != "schema_version" && key != "route" && key != "binding" {
            return Err(format!(
                "unknown top-level key `{key}`; the file holds `schema_version = 1`, \
                 `[[route]]` and `[[binding]]` tables"
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
    let empty = Vec::new();
    let routes = match doc.get("route") {
        None => &empty,
        Some(toml::Value::Array(a)) => a,
        Some(_) => {
            return Err(
                "`route` must be an array of tables: write each as `[[route]]`".to_string(),
            );
        }
    };
    let mut out: Vec<AuthoredRoute> = Vec::with_capacity(routes.len());
    // Each declared route by method and shape, so a file of many routes is checked for
    // duplicates in one pass, not against every earlier route.
    let mut declared: HashMap<(String, Vec<String>), usize> = HashMap::with_capacity(routes.len());
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
        validate_status_response(status, response.is_some())
            .map_err(|e| format!("route {name}: {e}"))?;
        let handler = match table.get("handler") {
            None => None,
            Some(toml::Value::String(h)) => {
                validate_handler(h).map_err(|e| format!("route {name}: {e}"))?;
                Some(h.clone())
            }
            Some(_) => {
                return Err(format!(
                    "route {name}: `handler` must be a string naming a file stem in \
                     lua/handlers/ (e.g. handler = \"customer_view\")"
                ));
            }
        };
        let shape = template_shape(&path)
            .into_iter()
            .map(str::to_string)
            .collect();
        match declared.entry((method.clone(), shape)) {
            Entry::Occupied(prev) => {
                let prev = &out[*prev.get()];
                return Err(format!(
                    "route {name} is declared twice (also as {}); keep one",
                    prev.name()
                ));
            }
            Entry::Vacant(slot) => {
                slot.insert(out.len());
            }
        }
        out.push(AuthoredRoute {
            method,
            path,
            status,
            response,
            handler,
        });
    }
    let bindings = parse_bindings(doc.get("binding"), &out)?;
    Ok(RoutesFile {
        routes: out,
        bindings,
    })
}

/// The `[[binding]]` entries. A route may be bound once, by a `[[binding]]` or by its own
/// `handler` key.
fn parse_bindings(
    item: Option<&toml::Value>,
    routes: &[AuthoredRoute],
) -> Result<Vec<ExplicitBinding>, String> {
    let entries = match item {
        None => return Ok(Vec::new()),
        Some(toml::Value::Array(a)) => a,
        Some(_) => {
            return Err(
                "`binding` must be an array of tables: write each as `[[binding]]`".to_string(),
            );
        }
    };
    let mut out: Vec<ExplicitBinding> = Vec::with_capacity(entries.len());
    for (i, b) in entries.iter().enumerate() {
        let entry = format!("[[binding]] #{}", i + 1);
        let table = b
            .as_table()
            .ok_or_else(|| format!("{entry}: must be a table (`[[binding]]`)"))?;
        for key in table.keys() {
            if !BINDING_KEYS.contains(&key.as_str()) {
                return Err(format!(
                    "{entry}: unknown key `{key}` (allowed: {})",
                    BINDING_KEYS.join(", ")
                ));
            }
        }
        let text = |key: &str| -> Result<&str, String> {
            match table.get(key) {
                Some(toml::Value::String(s)) => Ok(s.as_str()),
                Some(_) => Err(format!("{entry}: `{key}` must be a string")),
                None => Err(format!(
                    "{entry}: `{key}` is missing; a binding is {{ method = \"GET\", path = \
                     \"/customers/:param\", handler = \"customer_view\" }}"
                )),
            }
        };
        let method = validate_method(text("method")?).map_err(|e| format!("{entry}: {e}"))?;
        let path = text("path")?.to_string();
        validate_path(&path).map_err(|e| format!("{entry} ({method}): {e}"))?;
        let handler = text("handler")?.to_string();
        validate_handler(&handler).map_err(|e| format!("{entry} ({method} {path}): {e}"))?;
        let binding = ExplicitBinding {
            method,
            path,
            handler,
            entry,
        };
        if let Some(r) = routes.iter().find(|r| {
            r.handler.is_some()
                && r.method == binding.method
                && same_template(&r.path, &binding.path)
        }) {
            return Err(format!(
                "{} binds {} which the [[route]] {} already binds with its `handler` key; keep one",
                binding.entry,
                binding.route(),
                r.name()
            ));
        }
        if let Some(prev) = out
            .iter()
            .find(|p| p.method == binding.method && same_template(&p.path, &binding.path))
        {
            return Err(format!(
                "{} binds {} which {} already binds (to `{}`); a route takes one handler, keep one",
                binding.entry,
                binding.route(),
                prev.entry,
                prev.handler
            ));
        }
        out.push(binding);
    }
    Ok(out)
}

/// A handler name: the file stem of a handler in `lua/handlers/`, without folder or extension.
pub fn validate_handler(h: &str) -> Result<(), String> {
    if h.is_empty() {
        return Err("`handler` is empty; name a file stem in lua/handlers/".to_string());
    }
    if h.contains(['/', '\\']) || h == "." || h == ".." {
        return Err(format!(
            "handler `{h}` must be a file stem in lua/handlers/, not a path"
        ));
    }
    if let Some(stem) = h.strip_suffix(".luau").or_else(|| h.strip_suffix(".lua")) {
        return Err(format!(
            "handler `{h}` names the file, not its stem: write handler = \"{stem}\""
        ));
    }
    if h.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "handler `{h}` contains whitespace; handler file names have none"
        ));
    }
    Ok(())
}

/// Two templates that match the same requests (parameter names aside).
pub fn same_template(a: &str, b: &str) -> bool {
    template_shape(a) == template_shape(b)
}

/// What of a template decides the requests it matches: its non-empty segments, each parameter
/// as `:` whatever its name. Equal shapes are [`same_template`]s.
fn template_shape(p: &str) -> Vec<&str> {
    p.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| if s.starts_with(':') { ":" } else { s })
        .collect()
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
    // The control plane answers everything under its prefix before any route is matched, so
    // a route there would be listed as served and never answer.
    if p.split('/').nth(1) == Some("__wraith") {
        return Err(format!(
            "path `{p}` is under /__wraith, the twin's control plane: `wraith serve` answers it \
             itself and no route there is ever reached; choose another path"
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
    // Requests carry any other byte percent-encoded, and a template is matched against the
    // path as received: a literal `ü` would match no request.
    if let Some(c) = p.chars().find(|c| !c.is_ascii()) {
        let mut buf = [0u8; 4];
        let encoded: String = c
            .encode_utf8(&mut buf)
            .bytes()
            .map(|b| format!("%{b:02X}"))
            .collect();
        return Err(format!(
            "path `{p}` contains {c:?}, which requests carry percent-encoded: write it as \
             `{encoded}`"
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
                    "path `{p}`: parameter `{seg}` must be `:` and a name that starts with a \
                     letter or `_` and holds only letters, digits and `_` (e.g. `:id`)"
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
        .filter(|s| (200..=599).contains(s))
        .ok_or_else(|| {
            format!("status {s} cannot answer a request (200–599; 1xx are interim responses)")
        })
}

/// A declared status and response that can go together: 204 and 304 answers carry no body,
/// so a response declared with one would never be sent.
pub fn validate_status_response(status: Option<u16>, response: bool) -> Result<(), String> {
    match status {
        Some(s @ (204 | 304)) if response => Err(format!(
            "status {s} answers without a body, so `response` would never be sent; drop it or \
             declare another status"
        )),
        _ => Ok(()),
    }
}

/// A declared response body: one JSON document. The error quotes at most the text's first
/// [`QUOTED_CHARS`] characters: the parser's line and column say where it went wrong.
pub fn validate_response(text: &str) -> Result<Value, String> {
    serde_json::from_str::<Value>(text).map_err(|e| {
        let quoted: String = text.chars().take(QUOTED_CHARS).collect();
        let more = if quoted.len() < text.len() { "…" } else { "" };
        format!("response is not valid JSON ({e}): {quoted}{more}")
    })
}

/// How much of an invalid response [`validate_response`] quotes.
const QUOTED_CHARS: usize = 200;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_response_is_quoted_only_in_part() {
        let long = "x".repeat(5000);
        let e = validate_response(&long).unwrap_err();
        assert!(e.contains("column 1") && e.ends_with('…'), "{e}");
        assert!(e.len() < 300, "{e}");
        let e = validate_response("{").unwrap_err();
        assert!(e.ends_with(": {"), "{e}");
    }

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
        for control in ["/__wraith", "/__wraith/health", "/__wraith/x/:id"] {
            assert!(
                one(&format!("method = \"GET\"\npath = \"{control}\""))
                    .unwrap_err()
                    .contains("control plane"),
                "{control}"
            );
        }
        assert!(one("method = \"GET\"\npath = \"/__wraithx\"").is_ok());
        assert!(
            one("method = \"GET\"\npath = \"/a\"\nstatus = 42")
                .unwrap_err()
                .contains("42")
        );
        assert!(
            one("method = \"GET\"\npath = \"/a\"\nstatus = 101")
                .unwrap_err()
                .contains("1xx are interim")
        );
        assert!(
            one("method = \"GET\"\npath = \"/a\"\nresponse = '{nope'")
                .unwrap_err()
                .contains("JSON")
        );
        assert!(
            one("method = \"GET\"\npath = \"/a\"\nhandlr = \"x\"")
                .unwrap_err()
                .contains("unknown key")
        );
        assert!(one("path = \"/a\"").unwrap_err().contains("method"));
        assert!(
            one("method = \"GET\"\npath = \"/a\"\nstatus = 304\nresponse = '{}'")
                .unwrap_err()
                .contains("answers without a body")
        );
        assert!(
            one("method = \"GET\"\npath = \"/caf\u{e9}\"")
                .unwrap_err()
                .contains("`%C3%A9`")
        );
        let dup = "schema_version = 1\n[[route]]\nmethod = \"GET\"\npath = \"/a/:x\"\n\
                   [[route]]\nmethod = \"GET\"\npath = \"/a/:y\"\n";
        assert!(parse_routes(dup).unwrap_err().contains("twice"));
        assert!(
            parse_routes("schema_version = 2")
                .unwrap_err()
                .contains("schema_version")
        );
    }

    /// Routes are told apart by method and shape (parameter names aside) across the whole
    /// file: a duplicate far from its first declaration is found and named with it, while the
    /// same path under another method, or a literal where the other has a parameter, is not one.
    #[test]
    fn a_duplicate_among_many_routes_names_its_first_declaration() {
        let mut file = String::from("schema_version = 1\n");
        for i in 0..2000 {
            file.push_str(&format!(
                "[[route]]\nmethod = \"GET\"\npath = \"/m{i}/:id\"\n"
            ));
        }
        file.push_str("[[route]]\nmethod = \"POST\"\npath = \"/m7/:id\"\n");
        file.push_str("[[route]]\nmethod = \"GET\"\npath = \"/m7/latest\"\n");
        assert_eq!(parse_routes(&file).unwrap().len(), 2002);
        file.push_str("[[route]]\nmethod = \"get\"\npath = \"/m7/:other\"\n");
        let err = parse_routes(&file).unwrap_err();
        assert!(
            err.contains("GET /m7/:other is declared twice (also as GET /m7/:id)"),
            "{err}"
        );
    }

    /// A syntax error names its line and column in a short message, not the offending line
    /// quoted whole (a one-line file of deep nesting would print all of it).
    #[test]
    fn a_toml_syntax_error_names_its_line_and_column_briefly() {
        let e = parse_routes("schema_version = 1\n[[route]]\nmethod = = \"GET\"\n").unwrap_err();
        assert!(
            e.starts_with("not valid TOML at line 3, column 10: "),
            "{e}"
        );
        let deep = format!("x = {}", "[".repeat(200_000));
        let e = parse_routes(&deep).unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        assert!(
            e.len() < 300,
            "{} bytes: {}",
            e.len(),
            &e[..300.min(e.len())]
        );
    }

    #[test]
    fn parses_bindings_and_a_routes_own_handler_key() {
        let file = parse_routes_file(
            "schema_version = 1\n[[route]]\nmethod = \"GET\"\npath = \"/customers/:id/summary\"\n\
             handler = \"summary_v2\"\n[[binding]]\nmethod = \"get\"\n\
             path = \"/customers/:param\"\nhandler = \"customer_view\"\n",
        )
        .unwrap();
        assert_eq!(file.routes[0].handler.as_deref(), Some("summary_v2"));
        assert_eq!(
            file.bindings,
            [ExplicitBinding {
                method: "GET".into(),
                path: "/customers/:param".into(),
                handler: "customer_view".into(),
                entry: "[[binding]] #1".into(),
            }]
        );
        // A file with bindings only is valid, and parse_routes still reads its routes.
        let only = "[[binding]]\nmethod = \"DELETE\"\npath = \"/a/:id\"\nhandler = \"zap\"\n";
        assert_eq!(parse_routes_file(only).unwrap().bindings.len(), 1);
        assert!(parse_routes(only).unwrap().is_empty());
    }

    #[test]
    fn rejects_bindings_with_missing_keys_bad_values_or_a_route_bound_twice() {
        let one = |body: &str| parse_routes_file(&format!("[[binding]]\n{body}")).unwrap_err();
        let err = one("method = \"GET\"\npath = \"/a\"");
        assert!(
            err.contains("[[binding]] #1") && err.contains("`handler` is missing"),
            "{err}"
        );
        let err = one("path = \"/a\"\nhandler = \"h\"");
        assert!(err.contains("`method` is missing"), "{err}");
        let err = one("method = \"GET\"\npath = \"/a\"\nhandler = \"h\"\nstatus = 200");
        assert!(err.contains("unknown key `status`"), "{err}");
        let err = one("method = \"GET\"\npath = \"/a\"\nhandler = \"h.lua\"");
        assert!(err.contains("handler = \"h\""), "{err}");
        let err = one("method = \"GET\"\npath = \"/a\"\nhandler = \"lib/h\"");
        assert!(err.contains("not a path"), "{err}");
        let err = one("method = \"GET\"\npath = \"/a\"\nhandler = \"\"");
        assert!(err.contains("empty"), "{err}");
        let err = one("method = \"GET\"\npath = \"/a\"\nhandler = 3");
        assert!(err.contains("`handler` must be a string"), "{err}");
        let err = one("method = \"FETCH\"\npath = \"/a\"\nhandler = \"h\"");
        assert!(err.contains("FETCH"), "{err}");
        let err = one("method = \"GET\"\npath = \"/a/{id}\"\nhandler = \"h\"");
        assert!(err.contains("[[binding]] #1"), "{err}");
        let err = parse_routes_file("binding = 1").unwrap_err();
        assert!(err.contains("[[binding]]"), "{err}");

        let twice = "[[binding]]\nmethod = \"GET\"\npath = \"/a/:x\"\nhandler = \"h1\"\n\
                     [[binding]]\nmethod = \"GET\"\npath = \"/a/:y\"\nhandler = \"h2\"\n";
        let err = parse_routes_file(twice).unwrap_err();
        assert!(
            err.contains("[[binding]] #2") && err.contains("#1"),
            "{err}"
        );
        let both = "[[route]]\nmethod = \"GET\"\npath = \"/a/:x\"\nhandler = \"h1\"\n\
                    [[binding]]\nmethod = \"GET\"\npath = \"/a/:y\"\nhandler = \"h2\"\n";
        let err = parse_routes_file(both).unwrap_err();
        assert!(err.contains("`handler` key"), "{err}");
        let bad_route_handler = "[[route]]\nmethod = \"GET\"\npath = \"/a\"\nhandler = \"x y\"\n";
        let err = parse_routes_file(bad_route_handler).unwrap_err();
        assert!(
            err.contains("route GET /a") && err.contains("whitespace"),
            "{err}"
        );
    }
}
