//! One parsed view of each recorded exchange, built once and shared by every stage.
//!
//! Parsing happens here and only here: the request body becomes a flat list of
//! `(JSON pointer, leaf value)` fields (JSON, form and multipart alike, so echo detection and
//! body guards treat them the same way), the response body becomes JSON, text or bytes.

use serde_json::Value;
use wraith_recording::Exchange;

/// The request body as synth understood it.
#[derive(Debug, Clone, PartialEq)]
pub enum ReqBody {
    None,
    /// A JSON document (any JSON value).
    Json(Value),
    /// `application/x-www-form-urlencoded`.
    Form,
    /// `multipart/form-data` (text parts become fields).
    Multipart,
    /// Claimed JSON (content type) but did not parse.
    InvalidJson,
    /// Anything else (held only as bytes in the exchange).
    Other,
}

/// The response body as synth understood it.
#[derive(Debug, Clone, PartialEq)]
pub enum RespBody {
    Empty,
    /// JSON that parses. The tree is not kept: a stage that needs it parses it again from the
    /// exchange ([`Obs::resp_json`]) and drops it, so synth never holds the trees of every
    /// recorded body at once (about ten times their text, most of its memory on large runs).
    Json,
    Text(String),
    Binary(Vec<u8>),
    /// Claimed JSON but did not parse: kept as text (or bytes) and reported.
    BadJson(Vec<u8>),
}

/// One exchange, parsed.
#[derive(Debug)]
pub struct Obs<'a> {
    pub session: &'a str,
    /// `correlation.exchange_index`.
    pub index: u64,
    /// Position in the session's exchange list (tie-breaker for duplicate indexes).
    pub position: usize,
    pub ex: &'a Exchange,
    /// `<session_id>/<index>`.
    pub source: String,
    /// Uppercase method.
    pub method: String,
    pub origin: Option<&'a str>,
    /// Path segments after the leading `/`, raw (percent-encoding kept): `/a/b/` is
    /// `["a", "b", ""]`, `/` is `[""]`.
    pub segments: Vec<&'a str>,
    /// Query pairs, decoded, in recorded order.
    pub query: Vec<(String, String)>,
    pub req: ReqBody,
    /// Flattened request body fields: `(pointer, leaf)`; form and multipart values are strings.
    pub req_fields: Vec<(String, Value)>,
    pub resp: RespBody,
    pub status: u16,
}

impl<'a> Obs<'a> {
    pub fn new(session: &'a str, position: usize, ex: &'a Exchange) -> Obs<'a> {
        let path = ex.request.path.as_str();
        let trimmed = path.strip_prefix('/').unwrap_or(path);
        let segments: Vec<&str> = trimmed.split('/').collect();
        let query: Vec<(String, String)> = form_urlencoded::parse(ex.request.query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let (req, req_fields) = parse_request_body(ex);
        let resp = parse_response_body(ex);
        Obs {
            session,
            index: ex.correlation.exchange_index,
            position,
            ex,
            source: format!("{session}/{}", ex.correlation.exchange_index),
            method: ex.request.method.to_ascii_uppercase(),
            origin: ex.request.origin.as_deref(),
            segments,
            query,
            req,
            req_fields,
            resp,
            status: ex.response.status,
        }
    }

    /// The request body field at `pointer`, if the request had one.
    pub fn req_field(&self, pointer: &str) -> Option<&Value> {
        self.req_fields
            .iter()
            .find(|(p, _)| p == pointer)
            .map(|(_, v)| v)
    }

    /// The response body's JSON tree, parsed from the exchange on each call (see
    /// [`RespBody::Json`]); `None` when the body is not JSON.
    pub fn resp_json(&self) -> Option<Value> {
        if self.resp != RespBody::Json {
            return None;
        }
        self.parse_response()
    }

    /// The keys (by `pk`) of the items an array answer lists; `None` when the answer is not a
    /// JSON array.
    pub fn listed_keys(&self, pk: &str) -> Option<std::collections::BTreeSet<String>> {
        let body = self.resp_json()?;
        let items = body.as_array()?;
        Some(
            items
                .iter()
                .filter_map(|it| it.get(pk).and_then(crate::values::scalar_key))
                .collect(),
        )
    }

    /// The exact-replay key of the request (`wraith_model::request_key`), the content type
    /// taken from the request's field, else its header.
    pub fn request_key(&self) -> wraith_model::RequestKey {
        let req = &self.ex.request;
        let ct = req
            .content_type
            .as_deref()
            .or_else(|| self.ex.request_header("content-type"));
        wraith_model::request_key::request_key(&req.path, &req.query, ct, &req.body)
    }

    /// The top-level member names of a JSON object response (values skipped, not built);
    /// `None` when the body is not a JSON object.
    pub fn resp_top_level_keys(&self) -> Option<std::collections::BTreeSet<String>> {
        if self.resp != RespBody::Json {
            return None;
        }
        let keys = |bytes: &[u8]| {
            serde_json::from_slice::<std::collections::BTreeMap<String, serde::de::IgnoredAny>>(
                bytes,
            )
            .ok()
            .map(|m| m.into_keys().collect())
        };
        let mut server = self.ex.frames.iter().filter(|f| f.direction == "server");
        match (server.next(), server.next()) {
            (Some(f), None) => keys(&f.body),
            _ => keys(&self.ex.response_body()),
        }
    }

    /// The recorded response body parsed as JSON, whatever `resp` says (which
    /// [`crate::exact::exact_index`] has already taken by then).
    pub fn parse_response(&self) -> Option<Value> {
        let mut server = self.ex.frames.iter().filter(|f| f.direction == "server");
        match (server.next(), server.next()) {
            // The common case borrows the one frame instead of concatenating a copy.
            (Some(f), None) => serde_json::from_slice(&f.body).ok(),
            _ => serde_json::from_slice(&self.ex.response_body()).ok(),
        }
    }

    /// First value of a query parameter.
    pub fn query_value(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// `METHOD /concrete/path` for messages.
    pub fn concrete_name(&self) -> String {
        format!("{} {}", self.method, self.ex.request.path)
    }
}

fn content_type_of(ex: &Exchange) -> String {
    ex.request
        .content_type
        .as_deref()
        .or_else(|| ex.request_header("content-type"))
        .unwrap_or("")
        .to_string()
}

fn parse_request_body(ex: &Exchange) -> (ReqBody, Vec<(String, Value)>) {
    let body = &ex.request.body;
    if body.is_empty() {
        return (ReqBody::None, Vec::new());
    }
    let ct_raw = content_type_of(ex);
    let ct = ct_raw.to_ascii_lowercase();
    if ct.starts_with("application/x-www-form-urlencoded") {
        let pairs: Vec<(String, String)> = form_urlencoded::parse(body)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        return (ReqBody::Form, form_fields(&pairs));
    }
    if ct.starts_with("multipart/form-data") {
        let mut fields = Vec::new();
        if let Some(parts) = wraith_model::request_key::multipart_parts(&ct, &ct_raw, body) {
            let mut pairs = Vec::new();
            for (name, filename, data) in parts {
                if filename.is_empty()
                    && let Ok(text) = String::from_utf8(data)
                {
                    pairs.push((name, text));
                }
            }
            fields = form_fields(&pairs);
        }
        return (ReqBody::Multipart, fields);
    }
    let looks_json = ct.contains("json") || {
        let first = body.iter().find(|b| !b.is_ascii_whitespace());
        matches!(first, Some(b'{') | Some(b'['))
    };
    if looks_json {
        return match serde_json::from_slice::<Value>(body) {
            Ok(v) => {
                let mut fields = Vec::new();
                flatten_json(&v, &mut String::new(), &mut fields);
                (ReqBody::Json(v), fields)
            }
            Err(_) if ct.contains("json") => (ReqBody::InvalidJson, Vec::new()),
            Err(_) => (ReqBody::Other, Vec::new()),
        };
    }
    (ReqBody::Other, Vec::new())
}

fn parse_response_body(ex: &Exchange) -> RespBody {
    let body = ex.response_body();
    if body.is_empty() {
        return RespBody::Empty;
    }
    let ct = ex
        .response
        .content_type
        .as_deref()
        .or_else(|| ex.response_header("content-type"))
        .unwrap_or("")
        .to_ascii_lowercase();
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    let looks_json = ct.contains("json") || matches!(first, Some(b'{') | Some(b'['));
    if looks_json {
        // Checked, not built: the stages parse it where they need it.
        match serde_json::from_slice::<Validated>(&body) {
            Ok(_) => return RespBody::Json,
            Err(_) if ct.contains("json") => return RespBody::BadJson(body),
            Err(_) => {}
        }
    }
    match String::from_utf8(body) {
        Ok(text) => RespBody::Text(text),
        Err(e) => RespBody::Binary(e.into_bytes()),
    }
}

/// A JSON document accepted exactly when it parses as a `serde_json::Value` (numbers are parsed,
/// so one too large for a float is refused as the tree parse refuses it), without building
/// anything. A plain skim (`IgnoredAny`) does not parse numbers.
struct Validated;

impl<'de> serde::Deserialize<'de> for Validated {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Validated, D::Error> {
        d.deserialize_any(ValidatedVisitor)
    }
}

struct ValidatedVisitor;

impl<'de> serde::de::Visitor<'de> for ValidatedVisitor {
    type Value = Validated;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Validated, E> {
        Ok(Validated)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Validated, E> {
        Ok(Validated)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Validated, E> {
        Ok(Validated)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Validated, E> {
        Ok(Validated)
    }
    fn visit_str<E>(self, _: &str) -> Result<Validated, E> {
        Ok(Validated)
    }
    fn visit_unit<E>(self) -> Result<Validated, E> {
        Ok(Validated)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Validated, A::Error> {
        while seq.next_element::<Validated>()?.is_some() {}
        Ok(Validated)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Validated, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, Validated>()?
            .is_some()
        {}
        Ok(Validated)
    }
}

/// Escape one JSON pointer token (RFC 6901).
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Flatten a JSON value into `(pointer, leaf)` pairs; leaves are scalars (and empty containers).
pub fn flatten_json(v: &Value, prefix: &mut String, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (k, child) in map {
                let len = prefix.len();
                prefix.push('/');
                prefix.push_str(&escape_token(k));
                flatten_json(child, prefix, out);
                prefix.truncate(len);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, child) in items.iter().enumerate() {
                let len = prefix.len();
                prefix.push('/');
                prefix.push_str(&i.to_string());
                flatten_json(child, prefix, out);
                prefix.truncate(len);
            }
        }
        _ => out.push((prefix.clone(), v.clone())),
    }
}

/// Form fields as pointers: `name` is `/name`, `a[b]` is `/a/b`, repeated `a[]` is `/a/0`,
/// `/a/1`, ….
pub fn form_fields(pairs: &[(String, String)]) -> Vec<(String, Value)> {
    let mut counters: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(pairs.len());
    for (key, value) in pairs {
        let mut tokens: Vec<String> = Vec::new();
        let (head, rest) = match key.find('[') {
            Some(at) => (&key[..at], &key[at..]),
            None => (key.as_str(), ""),
        };
        tokens.push(head.to_string());
        let mut rest = rest;
        while let Some(stripped) = rest.strip_prefix('[') {
            match stripped.find(']') {
                Some(end) => {
                    let token = &stripped[..end];
                    if token.is_empty() {
                        let base = tokens.join("/");
                        let n = counters.entry(base).or_insert(0);
                        tokens.push(n.to_string());
                        *n += 1;
                    } else {
                        tokens.push(token.to_string());
                    }
                    rest = &stripped[end + 1..];
                }
                None => {
                    // Unbalanced bracket: keep the raw key as one token.
                    tokens = vec![key.clone()];
                    break;
                }
            }
        }
        let pointer: String = tokens
            .iter()
            .map(|t| format!("/{}", escape_token(t)))
            .collect();
        out.push((pointer, Value::String(value.clone())));
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_json_check_accepts_exactly_what_the_tree_parse_accepts() {
        for text in [
            r#"{"a":[1,-2,3.5e10,"x\u00e9",null,true,{}],"b":{"c":[]}}"#,
            "[]",
            "12",
            r#"{"n": 1e999}"#,
            r#"[18446744073709551616]"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            "[1] x",
        ] {
            assert_eq!(
                serde_json::from_str::<Validated>(text).is_ok(),
                serde_json::from_str::<Value>(text).is_ok(),
                "{text}"
            );
        }
    }

    use super::*;

    #[test]
    fn form_brackets_become_pointers() {
        let pairs = vec![
            ("name".to_string(), "a".to_string()),
            ("address[city]".to_string(), "Paris".to_string()),
            ("tags[]".to_string(), "x".to_string()),
            ("tags[]".to_string(), "y".to_string()),
        ];
        let f = form_fields(&pairs);
        let ptrs: Vec<&str> = f.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(ptrs, vec!["/name", "/address/city", "/tags/0", "/tags/1"]);
    }

    #[test]
    fn json_flattens_to_leaf_pointers() {
        let v: Value = serde_json::json!({"a": {"b": 1, "c/d": [true, "x"]}, "e": {}});
        let mut out = Vec::new();
        flatten_json(&v, &mut String::new(), &mut out);
        let ptrs: Vec<&str> = out.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(ptrs, vec!["/a/b", "/a/c~1d/0", "/a/c~1d/1", "/e"]);
    }
}
