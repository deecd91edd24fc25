//! One parsed view of each recorded exchange, built once and shared by every stage.
//!
//! Parsing happens here and only here: the request body becomes a flat list of
//! `(JSON pointer, leaf value)` fields (JSON, form and multipart alike, so echo detection and
//! body guards treat them the same way), the response body becomes JSON, text or bytes.
//!
//! Every stage reads an exchange through its [`Obs`], so a response body the upstream
//! compressed anyway (recorded before `wraith record` decoded such bodies) is decoded once,
//! before any [`Obs`] is made ([`decoded_exchanges`]).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_recording::{Exchange, RecordedSession};

/// The exchanges of `sessions` whose response body is compressed (a `content-encoding` of
/// gzip, deflate, br or zstd) and decodes, by (position in `sessions`, position in its exchanges),
/// decoded the way the recorder stores such a body now (`wraith_recording::decoded_exchange`).
/// One that does not decode is left out and read as it is, as bytes.
pub fn decoded_exchanges(sessions: &[&RecordedSession]) -> BTreeMap<(usize, usize), Exchange> {
    let mut out = BTreeMap::new();
    for (si, session) in sessions.iter().enumerate() {
        for (xi, ex) in session.exchanges.iter().enumerate() {
            let decoded = wraith_recording::decoded_exchange(
                ex,
                wraith_recording::encoding::DEFAULT_MAX_DECODED_BYTES,
            );
            if let Some(d) = decoded {
                out.insert((si, xi), d);
            }
        }
    }
    out
}

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

/// A forward walk over some exchanges of `obs` (sorted by session, then recorded order) that
/// reads each earlier exchange of their sessions once: [`SessionCursor::advance`] to exchange
/// `i` (ascending) says whether `i` starts another session and which exchanges of its session
/// lie between the last one read and `i`.
#[derive(Debug, Default)]
pub struct SessionCursor<'s> {
    current: Option<(&'s str, usize)>,
}

impl<'s> SessionCursor<'s> {
    /// Move to exchange `i`: (a new session began, the earlier exchanges to read now).
    pub fn advance(&mut self, obs: &[Obs<'s>], i: usize) -> (bool, std::ops::Range<usize>) {
        let session = obs[i].session;
        let (fresh, from) = match self.current {
            Some((s, next)) if s == session => (false, next),
            _ => {
                let mut start = i;
                while start > 0 && obs[start - 1].session == session {
                    start -= 1;
                }
                (true, start)
            }
        };
        self.current = Some((session, i.max(from)));
        (fresh, from..i.max(from))
    }
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
    /// The acting principal's key (`wraith_model::principal`): the recorded `Authorization`,
    /// else the recorded value of another credential header; `None` without credentials.
    pub principal: Option<String>,
}

impl<'a> Obs<'a> {
    /// Whether the request path names record key `key`: as one segment, or, a qualified key
    /// (`alice/web`, see `wraith_model::Route::key_qualifier`), as two segments in a row.
    pub fn path_names(&self, key: &str) -> bool {
        self.segments.contains(&key)
            || key
                .split_once('/')
                .is_some_and(|(q, k)| self.segments.windows(2).any(|w| w[0] == q && w[1] == k))
    }

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
            principal: wraith_model::principal::recorded_principal(
                ex.request
                    .headers
                    .iter()
                    .filter_map(|(k, vs)| vs.first().map(|v| (k.as_str(), v.as_str()))),
            ),
        }
    }

    /// The file parts of a multipart request as (part name, declared media type), read from
    /// the exchange when asked: only a status no other request feature explains needs them.
    pub fn upload_media_types(&self) -> Vec<(String, String)> {
        if self.req != ReqBody::Multipart {
            return Vec::new();
        }
        let ct = content_type_of(self.ex);
        wraith_model::request_key::upload_media_types(Some(&ct), &self.ex.request.body)
    }

    /// The request's flattened fields folded by top-level field: `step` gets the field's
    /// accumulator, the pointer's tokens below the field and the leaf, and returns `false` to
    /// leave the whole field out (it held something the caller does not read).
    pub fn fold_top_level_fields<T: Default>(
        &self,
        mut step: impl FnMut(&mut T, &mut std::str::Split<'_, char>, &Value) -> bool,
    ) -> BTreeMap<String, T> {
        let mut fields: BTreeMap<String, Option<T>> = BTreeMap::new();
        for (pointer, value) in &self.req_fields {
            let Some(rest) = pointer.strip_prefix('/') else {
                continue;
            };
            let mut tokens = rest.split('/');
            let Some(field) = tokens.next() else {
                continue;
            };
            let slot = fields
                .entry(field.to_string())
                .or_insert_with(|| Some(T::default()));
            if let Some(acc) = slot
                && !step(acc, &mut tokens, value)
            {
                *slot = None;
            }
        }
        fields
            .into_iter()
            .filter_map(|(f, acc)| Some((f, acc?)))
            .collect()
    }

    /// The request body field at `pointer`, if the request had one.
    pub fn req_field(&self, pointer: &str) -> Option<&Value> {
        self.req_fields
            .iter()
            .find(|(p, _)| p == pointer)
            .map(|(_, v)| v)
    }

    /// Whether the request body holds anything at `pointer`: a leaf there or one below it. An
    /// empty array or object is a leaf of its own, while a non-empty one is only its items, so
    /// `/tags` is sent by `{"tags": []}` and by `{"tags": [5]}` alike, as the engine reads a
    /// presence guard.
    pub fn sends(&self, pointer: &str) -> bool {
        self.req_fields.iter().any(|(p, _)| {
            p.strip_prefix(pointer)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }

    /// The response body's JSON tree, parsed from the exchange on each call (see
    /// [`RespBody::Json`]); `None` when the body is not JSON.
    pub fn resp_json(&self) -> Option<Value> {
        if self.resp != RespBody::Json {
            return None;
        }
        self.parse_response()
    }

    /// The response body's JSON tree down to `levels` levels ([`json_levels`]). For a stage
    /// that reads only the top of a body (the items pointer of a list, a page's size): it skips
    /// the records' contents instead of building them. `None` when the body is not JSON.
    pub fn resp_json_levels(&self, levels: usize) -> Option<Value> {
        if self.resp != RespBody::Json {
            return None;
        }
        json_levels(&self.response_bytes(), levels)
    }

    /// The keys (by `pk`) of the items an array answer lists; `None` when the answer is not a
    /// JSON array.
    pub fn listed_keys(&self, pk: &str) -> Option<std::collections::BTreeSet<String>> {
        // Reads the items' own scalars (level 2): their nested records stay empty.
        let body = self.resp_json_levels(2)?;
        let items = body.as_array()?;
        Some(
            items
                .iter()
                .filter_map(|it| it.get(pk).and_then(crate::values::scalar_key))
                .collect(),
        )
    }

    /// The exact-replay key of the request (`wraith_model::request_key`), with its route's
    /// literal upload names (`Route::upload_names`).
    pub fn request_key(
        &self,
        upload_names: &std::collections::BTreeSet<String>,
    ) -> wraith_model::RequestKey {
        let req = &self.ex.request;
        wraith_model::request_key::request_key_with(
            &req.path,
            &req.query,
            self.request_content_type(),
            &req.body,
            upload_names,
        )
    }

    /// The request's content type: its field, else its header.
    pub fn request_content_type(&self) -> Option<&str> {
        self.ex
            .request
            .content_type
            .as_deref()
            .or_else(|| self.ex.request_header("content-type"))
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
        keys(&self.response_bytes())
    }

    /// The recorded response body parsed as JSON, whatever `resp` says (which
    /// [`crate::exact::exact_indexes`] has already taken by then).
    pub fn parse_response(&self) -> Option<Value> {
        serde_json::from_slice(&self.response_bytes()).ok()
    }

    /// The recorded response body's bytes: the common case borrows its one frame instead of
    /// concatenating a copy.
    pub fn response_bytes(&self) -> std::borrow::Cow<'a, [u8]> {
        let mut server = self.ex.frames.iter().filter(|f| f.direction == "server");
        match (server.next(), server.next()) {
            (Some(f), None) => std::borrow::Cow::Borrowed(&f.body),
            _ => std::borrow::Cow::Owned(self.ex.response_body()),
        }
    }

    /// Whether the response body's bytes hold one of `needles` (a cheap test before parsing).
    pub fn response_holds_any<'n>(&self, needles: impl IntoIterator<Item = &'n str>) -> bool {
        let body = self.response_bytes();
        needles
            .into_iter()
            .any(|n| memchr::memmem::find(&body, n.as_bytes()).is_some())
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

/// Observations whose response bodies [`parsed_in_order`] parses together on the cores: enough
/// to keep them busy, few enough that one chunk's trees stay a small part of memory.
const PARSE_CHUNK: usize = 2048;

/// Feeds `each` the response trees of `indices`, in order, as `(position in indices, tree)`:
/// the tree `parse` makes of the observation, parsed on the cores a chunk at a time (only one
/// chunk's trees are alive at once). For a stage that reads many bodies one after another:
/// what it does with each stays on the calling thread, in order, so its result is the one a
/// plain loop gives.
pub fn parsed_in_order<'o, 'a: 'o>(
    obs: &'o [Obs<'a>],
    indices: &[usize],
    parse: impl Fn(&Obs<'a>) -> Option<Value> + Sync,
    mut each: impl FnMut(usize, Option<Value>),
) {
    use rayon::prelude::*;
    for (chunk_no, chunk) in indices.chunks(PARSE_CHUNK).enumerate() {
        let trees: Vec<Option<Value>> = if chunk.len() < 8 {
            chunk.iter().map(|i| parse(&obs[*i])).collect()
        } else {
            chunk.par_iter().map(|i| parse(&obs[*i])).collect()
        };
        for (j, tree) in trees.into_iter().enumerate() {
            each(chunk_no * PARSE_CHUNK + j, tree);
        }
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

/// A JSON document's tree down to `levels` levels: the document's own members (or items) are
/// level 1, theirs level 2, and so on. Every value down to level `levels` is as
/// `serde_json::from_slice` builds it, except that a container at level `levels` is left empty
/// (an object stays an object, an array an array); the rest is skimmed, not built. `None`
/// when the text is not one JSON document. Not a validator: a number in a skimmed part is
/// not parsed (`1e999` there passes), so callers use it on bodies already known to be JSON
/// ([`RespBody::Json`]).
pub fn json_levels(bytes: &[u8], levels: usize) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = serde::de::DeserializeSeed::deserialize(Levels(levels), &mut de).ok()?;
    de.end().ok()?;
    Some(v)
}

/// Builds a [`Value`] as `serde_json` does (a repeated key keeps its first place and its last
/// value), keeping the contents of this many levels of containers (see
/// [`Obs::resp_json_levels`]).
#[derive(Clone, Copy)]
struct Levels(usize);

impl<'de> serde::de::DeserializeSeed<'de> for Levels {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Levels {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        match self.0.checked_sub(1) {
            None => while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {},
            Some(inner) => {
                while let Some(v) = seq.next_element_seed(Levels(inner))? {
                    items.push(v);
                }
            }
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = serde_json::Map::new();
        match self.0.checked_sub(1) {
            None => {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
            }
            Some(inner) => {
                while let Some(k) = map.next_key::<String>()? {
                    let v = map.next_value_seed(Levels(inner))?;
                    members.insert(k, v);
                }
            }
        }
        Ok(Value::Object(members))
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
/// `/a/1`, …; `a[][b]=1&a[][c]=2&a[][b]=3` is `/a/0/b`, `/a/0/c`, `/a/1/b`: a field goes into
/// the array's last item unless that item already holds it, as Rack (and the engine) read it.
pub fn form_fields(pairs: &[(String, String)]) -> Vec<(String, Value)> {
    let mut counters: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    // Per array (its pointer): the item its `[][field]` names fill, and the fields it holds.
    let mut items: std::collections::HashMap<String, (usize, BTreeSet<String>)> =
        std::collections::HashMap::new();
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
                    let after = &stripped[end + 1..];
                    if token.is_empty() && !after.starts_with('[') {
                        let base = tokens.join("/");
                        items.remove(&base);
                        let n = counters.entry(base).or_insert(0);
                        tokens.push(n.to_string());
                        *n += 1;
                    } else if token.is_empty() {
                        // The field is the rest of the name up to its next `[]`.
                        let field = after.split("[]").next().unwrap_or(after).to_string();
                        let base = tokens.join("/");
                        let open = items
                            .get(&base)
                            .map(|(i, held)| (*i, held.contains(&field)));
                        let index = match open {
                            Some((i, false)) => i,
                            _ => {
                                let n = counters.entry(base.clone()).or_insert(0);
                                let fresh = *n;
                                *n += 1;
                                items.insert(base.clone(), (fresh, BTreeSet::new()));
                                fresh
                            }
                        };
                        if let Some((_, held)) = items.get_mut(&base) {
                            held.insert(field);
                        }
                        tokens.push(index.to_string());
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

    /// The full tree with every container at level `levels` emptied.
    fn cut_at(v: &serde_json::Value, levels: usize) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::Array(_) if levels == 0 => Value::Array(Vec::new()),
            Value::Object(_) if levels == 0 => Value::Object(serde_json::Map::new()),
            Value::Array(a) => Value::Array(a.iter().map(|x| cut_at(x, levels - 1)).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| (k.clone(), cut_at(x, levels - 1)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn json_strategy() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        use serde_json::{Value, json};
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            (-1e6f64..1e6).prop_map(|f| json!(f)),
            "[a-z\\\"é]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            let key = prop_oneof![
                Just("id".to_string()),
                Just("data".to_string()),
                Just("page".to_string()),
                "[a-z_/~]{1,5}",
            ];
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::vec((key, inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn a_parse_to_some_levels_is_the_full_tree_cut_at_that_level(
            v in json_strategy(),
            levels in 0usize..6,
        ) {
            let text = serde_json::to_vec(&v).expect("a tree serializes");
            let full: serde_json::Value = serde_json::from_slice(&text).expect("its text parses");
            proptest::prop_assert_eq!(super::json_levels(&text, levels), Some(cut_at(&full, levels)));
            proptest::prop_assert_eq!(super::json_levels(&text, usize::MAX), Some(full));
        }

        #[test]
        fn the_items_pointer_of_three_levels_is_that_of_the_full_tree(
            bodies in proptest::collection::vec(json_strategy(), 1..4),
        ) {
            let texts: Vec<Vec<u8>> = bodies.iter().map(|b| serde_json::to_vec(b).expect("a tree serializes")).collect();
            let full: Vec<serde_json::Value> = texts.iter().map(|t| serde_json::from_slice(t).expect("its text parses")).collect();
            let cut: Vec<serde_json::Value> = texts.iter().map(|t| super::json_levels(t, 3).expect("its text parses")).collect();
            proptest::prop_assert_eq!(
                crate::state::items_pointer(&cut.iter().collect::<Vec<_>>()),
                crate::state::items_pointer(&full.iter().collect::<Vec<_>>())
            );
        }
    }

    proptest::proptest! {
        /// What the primary-key votes read of a record's answer (the record, bare or in its
        /// envelope, and its scalar fields) is the same in two levels as in the full tree.
        #[test]
        fn the_record_of_two_levels_is_that_of_the_full_tree(v in json_strategy()) {
            let text = serde_json::to_vec(&v).expect("a tree serializes");
            let full: serde_json::Value = serde_json::from_slice(&text).expect("its text parses");
            let cut = super::json_levels(&text, 2).expect("its text parses");
            let record = |b: &serde_json::Value| {
                let (key, r) = crate::state::envelope_of(b).map_or(("", b), |(k, r)| (k, r));
                let scalars: Vec<(String, Option<String>)> = r
                    .as_object()
                    .map(|m| m.iter().map(|(k, x)| (k.clone(), crate::values::scalar_key(x))).collect())
                    .unwrap_or_default();
                (key.to_string(), r.is_object(), scalars)
            };
            proptest::prop_assert_eq!(record(&cut), record(&full));
        }

        /// What the list readers take of an array answer (each item's keys and scalar values:
        /// the listed keys, the member type's field overlap) is the same in two levels.
        #[test]
        fn the_items_of_two_levels_are_those_of_the_full_tree(v in json_strategy()) {
            let text = serde_json::to_vec(&v).expect("a tree serializes");
            let full: serde_json::Value = serde_json::from_slice(&text).expect("its text parses");
            let cut = super::json_levels(&text, 2).expect("its text parses");
            type Fields = Vec<(String, Option<String>)>;
            let items = |b: &serde_json::Value| -> Option<Vec<Option<Fields>>> {
                Some(b.as_array()?.iter().map(|it| {
                    it.as_object().map(|m| m.iter().map(|(k, x)| (k.clone(), crate::values::scalar_key(x))).collect())
                }).collect())
            };
            proptest::prop_assert_eq!(items(&cut), items(&full));
        }
    }

    #[test]
    fn a_parse_to_some_levels_refuses_malformed_text() {
        for text in [r#"{"a":1,}"#, r#"{"a" 1}"#, "[1] x", r#"[[[[1,]]]]"#] {
            assert_eq!(super::json_levels(text.as_bytes(), 1), None, "{text}");
        }
        // A repeated key keeps its first place and its last value, as the tree parse does.
        let text = br#"{"b":1,"a":[2],"b":[3]}"#;
        let full: serde_json::Value = serde_json::from_slice(text).expect("the text parses");
        assert_eq!(super::json_levels(text, 1), Some(cut_at(&full, 1)));
    }

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
    fn form_array_items_gather_their_fields_until_one_repeats() {
        let pairs: Vec<(String, String)> = [
            ("kw[][keyword]", "spam"),
            ("kw[][whole_word]", "true"),
            ("kw[][keyword]", "eggs"),
            ("kw[][x][y]", "1"),
            ("kw[][x][y]", "2"),
            ("kw[]", "plain"),
            ("kw[][keyword]", "ham"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let f = form_fields(&pairs);
        let ptrs: Vec<&str> = f.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            ptrs,
            vec![
                "/kw/0/keyword",
                "/kw/0/whole_word",
                "/kw/1/keyword",
                "/kw/1/x/y",
                "/kw/2/x/y",
                "/kw/3",
                "/kw/4/keyword"
            ]
        );
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
