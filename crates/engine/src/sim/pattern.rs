//! Route patterns of fault rules, latency overrides and rate-limit overrides.
//!
//! A pattern is `*` (everything), or an optional method followed by a path glob:
//! `POST /v1/*`, `GET /v1/reports`, `/v1/customers/:id`. In the path, `*` matches any run of
//! characters (including `/`), so `/v1/*` is a prefix glob. A pattern matches a request when it
//! matches either the concrete request path or the path of the matched route template, so both
//! `GET /v1/customers/cus_1` and `GET /v1/customers/:customer_id` select the same requests.
//! Against a template, a `:name` segment matches a parameter segment whatever its name: the
//! names are synth's (`:param`) or an authored route's, not the user's to guess.

/// A parsed route pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutePattern {
    /// Uppercase method; `None` matches every method.
    method: Option<String>,
    /// Path glob; `None` matches every path.
    path: Option<String>,
    /// `path` with each `:name` segment reduced to `:`, for matching route templates.
    template_glob: Option<String>,
    /// The pattern as written, for reports.
    text: String,
}

/// The methods of RFC 9110 and PATCH (RFC 5789), any case: the ones a method alone may name.
fn is_standard_method(word: &str) -> bool {
    const METHODS: [&str; 9] = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
    ];
    METHODS.iter().any(|m| m.eq_ignore_ascii_case(word))
}

impl RoutePattern {
    /// Parse `*`, `METHOD` (a standard method alone), `METHOD /glob`, `/glob` or `* /glob`.
    pub fn parse(text: &str) -> Result<RoutePattern, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err(
                "the route pattern is empty; use `*`, `GET /v1/*` or `POST /v1/charges`".into(),
            );
        }
        let (method, path) = match t.split_once(char::is_whitespace) {
            Some((m, p)) => (Some(m), Some(p.trim())),
            None if t.starts_with('/') => (None, Some(t)),
            None if t == "*" || is_standard_method(t) => (Some(t), None),
            // A word alone that is no standard method is almost always a path without its
            // `/` (`orders`): read as a method it would select nothing, silently.
            None => {
                return Err(format!(
                    "`{t}` is neither a path (it must start with `/`: `/{t}`) nor a standard \
                     HTTP method; write `/path`, `METHOD /path` (e.g. `GET /v1/*`), a method \
                     alone (`GET`) or `*`"
                ));
            }
        };
        let method = match method {
            None | Some("*") => None,
            Some(m) if m.chars().all(|c| c.is_ascii_alphabetic()) => Some(m.to_ascii_uppercase()),
            Some(m) => {
                return Err(format!(
                    "`{m}` is not an HTTP method; write the pattern as `METHOD /path` (e.g. `GET /v1/*`) or `*`"
                ));
            }
        };
        let path = match path {
            None | Some("*") => None,
            Some(p) if p.starts_with('/') => Some(p.to_string()),
            Some(p) => {
                return Err(format!("the path `{p}` must start with `/` (or be `*`)"));
            }
        };
        Ok(RoutePattern {
            method,
            template_glob: path.as_deref().map(unnamed_params),
            path,
            text: t.to_string(),
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the pattern selects a request with `method` (as sent: the pattern's method,
    /// written in any case, is uppercase, and selects only that method) on `path`, whose
    /// matched route template is `route` (`METHOD /template`), if any.
    pub fn matches(&self, method: &str, path: &str, route: Option<&str>) -> bool {
        // A `GET` pattern selects `HEAD` too: a HEAD is the GET without its body (RFC 9110
        // §9.3.2), answered by the GET route, so it meets the same faults and limits.
        if let Some(m) = &self.method
            && m != method
            && !(m == "GET" && method == "HEAD")
        {
            return false;
        }
        let Some(glob) = &self.path else {
            return true;
        };
        if glob_match(glob, path) {
            return true;
        }
        let template_glob = self.template_glob.as_deref().unwrap_or(glob);
        route
            .and_then(|r| r.split_once(' '))
            .is_some_and(|(_, template)| glob_match(template_glob, &unnamed_params(template)))
    }
}

/// `path` with every `:name` segment (no `*` in it) written `:`.
fn unnamed_params(path: &str) -> String {
    path.split('/')
        .map(|seg| {
            if seg.starts_with(':') && !seg.contains('*') {
                ":"
            } else {
                seg
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// `*` matches any run of characters; everything else is literal.
pub(crate) fn glob_match(glob: &str, text: &str) -> bool {
    let parts: Vec<&str> = glob.split('*').collect();
    if parts.len() == 1 {
        return glob == text;
    }
    let mut rest = text;
    let last = parts.len() - 1;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == last {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_segment_matches_the_templates_whatever_its_name() {
        let p = RoutePattern::parse("GET /customers/:id").unwrap();
        assert!(p.matches("GET", "/customers/cus_1", Some("GET /customers/:param")));
        assert!(p.matches("GET", "/customers/cus_1", Some("GET /customers/:id")));
        assert!(!p.matches("GET", "/customers", Some("GET /customers")));
        assert!(!p.matches(
            "GET",
            "/customers/cus_1/summary",
            Some("GET /customers/:param/summary")
        ));
        let p = RoutePattern::parse("GET /customers/:param/summary").unwrap();
        assert!(p.matches(
            "GET",
            "/customers/cus_1/summary",
            Some("GET /customers/:id/summary")
        ));
        // A literal `:` elsewhere in a segment stays literal.
        let p = RoutePattern::parse("GET /a/b:c").unwrap();
        assert!(!p.matches("GET", "/a/x", Some("GET /a/:param")));
    }

    #[test]
    fn star_matches_everything() {
        let p = RoutePattern::parse("*").unwrap();
        assert!(p.matches("DELETE", "/anything", None));
    }

    #[test]
    fn method_and_prefix_glob() {
        let p = RoutePattern::parse("post /v1/*").unwrap();
        assert!(p.matches("POST", "/v1/charges", None));
        assert!(!p.matches("GET", "/v1/charges", None));
        assert!(!p.matches("POST", "/v2/charges", None));
    }

    #[test]
    fn a_patterns_method_is_written_in_any_case_but_selects_the_method_as_sent() {
        let p = RoutePattern::parse("delete /v1/customers/*").unwrap();
        assert!(p.matches("DELETE", "/v1/customers/cus_1", None));
        // `delete` is another method (RFC 9110: the method token is case-sensitive).
        assert!(!p.matches("delete", "/v1/customers/cus_1", None));
        assert!(!p.matches("Delete", "/v1/customers/cus_1", None));
    }

    #[test]
    fn exact_pattern_matches_concrete_path_or_template() {
        let p = RoutePattern::parse("GET /v1/customers/:customer_id").unwrap();
        assert!(p.matches(
            "GET",
            "/v1/customers/cus_1",
            Some("GET /v1/customers/:customer_id")
        ));
        assert!(!p.matches("GET", "/v1/customers/cus_1", None));
        let q = RoutePattern::parse("GET /v1/reports").unwrap();
        assert!(q.matches("GET", "/v1/reports", None));
        assert!(!q.matches("GET", "/v1/reports/1", None));
    }

    #[test]
    fn inner_star_globs() {
        assert!(glob_match("/v1/*/items", "/v1/a/b/items"));
        assert!(!glob_match("/v1/*/items", "/v1/a/b/item"));
        assert!(glob_match("*", ""));
    }

    #[test]
    fn bad_patterns_are_refused_with_a_reason() {
        assert!(RoutePattern::parse("").is_err());
        assert!(RoutePattern::parse("GET v1").is_err());
        assert!(RoutePattern::parse("G3T /x").is_err());
        // A word alone must be a standard method: `orders` is a path missing its `/`.
        let e = RoutePattern::parse("orders").unwrap_err();
        assert!(e.contains("`/orders`"), "{e}");
        assert!(RoutePattern::parse("PURGE").is_err());
    }

    #[test]
    fn a_get_pattern_selects_head_requests_and_a_head_pattern_only_heads() {
        let get = RoutePattern::parse("GET /customers").unwrap();
        assert!(get.matches("HEAD", "/customers", Some("GET /customers")));
        assert!(get.matches("GET", "/customers", None));
        let head = RoutePattern::parse("HEAD /customers").unwrap();
        assert!(head.matches("HEAD", "/customers", None));
        assert!(!head.matches("GET", "/customers", None));
        assert!(!RoutePattern::parse("POST /customers").unwrap().matches(
            "HEAD",
            "/customers",
            None
        ));
    }

    #[test]
    fn a_standard_method_alone_selects_every_path_of_it() {
        let p = RoutePattern::parse("delete").unwrap();
        assert!(p.matches("DELETE", "/v1/x", None));
        assert!(!p.matches("GET", "/v1/x", None));
        // A custom method with a path is still a method.
        let q = RoutePattern::parse("PURGE /cache/*").unwrap();
        assert!(q.matches("PURGE", "/cache/a", None));
    }
}
