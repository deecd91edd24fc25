//! Ids that flow: the check replays a session the way a real client would, naming in each
//! request the ids *the twin* returned earlier in the session instead of the recorded ones.
//!
//! A recorded session that creates an entity and then deletes it names the recorded id in the
//! delete. The twin answered the create with its own id (minted, or another recorded run's),
//! so replaying the recorded delete verbatim asks for an id the twin never issued; a client
//! library would have used the id it was given. Per replayed session an [`IdMap`] learns
//! *recorded value → answered value* after each exchange, at the JSON positions the model marks
//! as generated identifiers (`judge::generated_pairs`), and rewrites whole-token occurrences of
//! recorded values in every later request of the session before it is sent.
//!
//! Not here: judging. Answers are still compared with the recording as before (the answered ids
//! sit at `generated` positions, compared by JSON type), and the twin is told nothing new.

use std::collections::BTreeMap;

use serde_json::Value;
use wraith_engine::Request;

/// One id a replaying client learns from an answer: the recorded value at a `generated`
/// position and what the twin answered there, with the kind of position it was read at
/// ([`IdPair::kind`]).
#[derive(Debug, Clone, PartialEq)]
pub struct IdPair {
    pub recorded: Value,
    pub answered: Value,
    /// The record type and field the position belongs to (`issues:id`, `user.id`): a value
    /// shorter than [`MIN_RENAMED_LEN`] (`1`, `42`) names one entity only together with it,
    /// since an API counting its records from 1 gives an issue, a comment and a user the same
    /// small ids.
    pub kind: Option<String>,
}

impl IdPair {
    /// A pair read at no particular kind of position.
    pub fn new(recorded: Value, answered: Value) -> IdPair {
        IdPair {
            recorded,
            answered,
            kind: None,
        }
    }
}

impl From<(Value, Value)> for IdPair {
    fn from((recorded, answered): (Value, Value)) -> IdPair {
        IdPair::new(recorded, answered)
    }
}

/// Recorded value → answered value, learned within one replayed session.
#[derive(Debug, Default, Clone)]
pub struct IdMap {
    /// By the recorded value's text (a string's contents, a number's decimal form): the same
    /// token names the entity in a path segment, a query or form value, or a JSON body value.
    map: BTreeMap<String, Value>,
    /// Short recorded values (below [`MIN_RENAMED_LEN`]) by the kind of position they were
    /// answered at, then their text: what the symbol check holds such a value to
    /// ([`IdMap::symbol`]).
    kinded: BTreeMap<String, BTreeMap<String, Value>>,
    ambiguities: u64,
}

impl IdMap {
    pub fn new() -> IdMap {
        IdMap::default()
    }

    /// Learn the (recorded, answered) pairs of one answer. Only strings and numbers whose two
    /// sides have the same JSON type and differ are learned; an empty recorded string never is.
    /// A recorded value already mapped to another answered value is re-mapped to the latest one
    /// and counted as an ambiguity.
    ///
    /// A short recorded value read at a known kind of position is also learned under that kind
    /// ([`IdMap::symbol`]).
    pub fn learn<P: Into<IdPair>>(&mut self, pairs: impl IntoIterator<Item = P>) {
        for pair in pairs {
            let IdPair {
                recorded,
                answered,
                kind,
            } = pair.into();
            let same_type = matches!(
                (&recorded, &answered),
                (Value::String(_), Value::String(_)) | (Value::Number(_), Value::Number(_))
            );
            if !same_type || crate::diff::json_eq(&recorded, &answered) {
                continue;
            }
            let Some(key) = token(&recorded) else {
                continue;
            };
            if key.is_empty() {
                continue;
            }
            if let Some(kind) = kind
                && key.len() < MIN_RENAMED_LEN
            {
                self.kinded
                    .entry(kind)
                    .or_default()
                    .insert(key.clone(), answered.clone());
            }
            if let Some(prev) = self.map.get(&key)
                && !crate::diff::json_eq(prev, &answered)
            {
                self.ambiguities += 1;
            }
            self.map.insert(key, answered);
        }
    }

    /// Recorded values mapped so far.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Recorded values that were answered with two different values (the latest was kept).
    pub fn ambiguities(&self) -> u64 {
        self.ambiguities
    }

    /// Map the recorded token `recorded` to `to` as is (no type check, no ambiguity count):
    /// how [`crate::causes`] renames minted ids in request histories.
    pub(crate) fn assign(&mut self, recorded: String, to: Value) {
        self.map.insert(recorded, to);
    }

    /// Rewrite whole mapped JSON values inside `v` (strings and numbers, as in a JSON request
    /// body). True when anything changed. The causes step uses the copy-on-rewrite
    /// `causes::rewritten`; this is its reference in the tests.
    #[cfg(test)]
    pub(crate) fn rewrite_value(&self, v: &mut Value) -> bool {
        !self.map.is_empty() && self.rewrite_json(v, None)
    }

    /// The recorded tokens mapped so far, in order.
    pub fn recorded_tokens(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(String::as_str)
    }

    /// The answered value for a recorded token.
    pub fn get(&self, recorded: &str) -> Option<&Value> {
        self.map.get(recorded)
    }

    /// The answered value the symbol check holds recorded token `recorded` to at a position of
    /// `kind`: a token of at least [`MIN_RENAMED_LEN`] characters names one entity wherever it
    /// shows; a shorter one only where it was answered at the same kind of position, and at a
    /// position of no known kind never.
    pub fn symbol(&self, recorded: &str, kind: Option<&str>) -> Option<&Value> {
        if recorded.len() >= MIN_RENAMED_LEN {
            return self.map.get(recorded);
        }
        self.kinded.get(kind?)?.get(recorded)
    }

    /// Rewrite every whole-token occurrence of a mapped recorded value in `req`: a path segment
    /// equal to it, a query parameter value, a JSON body string or number (the whole value), a
    /// form-encoded body value. Never a substring, a key, or a header. True when anything
    /// changed.
    pub fn rewrite(&self, req: &mut Request) -> bool {
        self.rewrite_with_kinds(req, &|_| None)
    }

    /// [`IdMap::rewrite`], told by `segment_kind` the kind of record a path segment names (by
    /// its position in the path split at `/`, as the route's template names it: `issues:number`):
    /// a short segment answered at that kind of position is renamed to that answer, not to the
    /// latest answer of any kind, so `/issues/comments/1` names the session's comment `1` where
    /// its issue `1` was answered later.
    pub fn rewrite_with_kinds(
        &self,
        req: &mut Request,
        segment_kind: &dyn Fn(usize) -> Option<String>,
    ) -> bool {
        if self.map.is_empty() {
            return false;
        }
        let mut changed = false;
        if let Some(p) = self.rewrite_path(&req.path, segment_kind) {
            req.path = p;
            changed = true;
        }
        if let Some(q) = self.rewrite_form(&req.query) {
            req.query = q;
            changed = true;
        }
        if let Some(b) = self.rewrite_body(req) {
            req.body = bytes::Bytes::from(b);
            changed = true;
        }
        changed
    }

    /// A recorded URL (from its path on: `/lists/5/accounts?max_id=12#top`) in the session's
    /// names, renamed as a request to it would be ([`IdMap::rewrite_with_kinds`]): each path
    /// segment, a short one by the kind of record `segment_kind` says its position names, and
    /// each query value, a short one only under a name that says it is an id. The fragment and
    /// every other byte stay as they were.
    pub fn rename_url(&self, url: &str, segment_kind: &dyn Fn(usize) -> Option<String>) -> String {
        if self.map.is_empty() {
            return url.to_string();
        }
        let (rest, fragment) = match url.find('#') {
            Some(i) => url.split_at(i),
            None => (url, ""),
        };
        let (path, query) = match rest.find('?') {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let mut out = self
            .rewrite_path(path, segment_kind)
            .unwrap_or_else(|| path.to_string());
        if let Some(q) = query {
            out.push('?');
            match self.rewrite_form(q) {
                Some(q) => out.push_str(&q),
                None => out.push_str(q),
            }
        }
        out.push_str(fragment);
        out
    }

    fn text(&self, recorded: &str) -> Option<String> {
        self.map.get(recorded).and_then(token)
    }

    /// [`Self::text`] for a value sent under `name` (a query or form parameter, a JSON key): a
    /// value shorter than [`MIN_RENAMED_LEN`] is an id only under a name that says so, since
    /// `per_page=2&page=1` holds no ids whatever the session's ids `1` and `2` became.
    fn text_named(&self, recorded: &str, name: Option<&str>) -> Option<String> {
        self.get_named(recorded, name).and_then(token)
    }

    /// [`Self::get`] for a value sent under `name` (see [`Self::text_named`]).
    pub(crate) fn get_named(&self, recorded: &str, name: Option<&str>) -> Option<&Value> {
        // Looked up first: most values are no token, and then the name need not be read.
        let v = self.map.get(recorded)?;
        if recorded.len() < MIN_RENAMED_LEN && name.is_some_and(|n| !names_an_id(n)) {
            return None;
        }
        Some(v)
    }

    fn rewrite_path(
        &self,
        path: &str,
        segment_kind: &dyn Fn(usize) -> Option<String>,
    ) -> Option<String> {
        let mut changed = false;
        let segs: Vec<String> = path
            .split('/')
            .enumerate()
            .map(|(i, seg)| {
                if seg.is_empty() {
                    return String::new();
                }
                let decoded = crate::diff::percent_decode(seg);
                let by_kind = if decoded.len() < MIN_RENAMED_LEN && !self.kinded.is_empty() {
                    segment_kind(i)
                        .and_then(|kind| self.kinded.get(&kind)?.get(&decoded))
                        .and_then(token)
                } else {
                    None
                };
                match by_kind.or_else(|| self.text(&decoded)) {
                    Some(t) => {
                        changed = true;
                        encode_segment(&t)
                    }
                    None => seg.to_string(),
                }
            })
            .collect();
        changed.then(|| segs.join("/"))
    }

    /// `a=1&b=2`: values equal to a mapped token are replaced; names, pairs without `=` and
    /// every other byte stay as they were.
    fn rewrite_form(&self, form: &str) -> Option<String> {
        if form.is_empty() {
            return None;
        }
        let mut changed = false;
        let parts: Vec<String> = form
            .split('&')
            .map(|part| {
                let Some((name, value)) = part.split_once('=') else {
                    return part.to_string();
                };
                let decoded: String = form_urlencoded::parse(format!("x={value}").as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default();
                let decoded_name: String = form_urlencoded::parse(format!("{name}=").as_bytes())
                    .next()
                    .map(|(n, _)| n.into_owned())
                    .unwrap_or_default();
                match self.text_named(&decoded, Some(&decoded_name)) {
                    Some(t) => {
                        changed = true;
                        let enc: String = form_urlencoded::byte_serialize(t.as_bytes()).collect();
                        format!("{name}={enc}")
                    }
                    None => part.to_string(),
                }
            })
            .collect();
        changed.then(|| parts.join("&"))
    }

    fn rewrite_body(&self, req: &Request) -> Option<Vec<u8>> {
        if req.body.is_empty() {
            return None;
        }
        let ct = req
            .header("content-type")
            .unwrap_or("")
            .to_ascii_lowercase();
        if ct.starts_with("multipart/") {
            return None;
        }
        if let Ok(mut v) = serde_json::from_slice::<Value>(&req.body) {
            return self
                .rewrite_json(&mut v, None)
                .then(|| serde_json::to_vec(&v).ok())
                .flatten();
        }
        let form = ct.starts_with("application/x-www-form-urlencoded") || ct.is_empty();
        if !form {
            return None;
        }
        let text = std::str::from_utf8(&req.body).ok()?;
        self.rewrite_form(text).map(String::into_bytes)
    }

    /// Whole JSON values only: a string equal to a mapped token, or a number whose decimal form
    /// is one. A number stays a number when the answered value is (or reads as) one.
    fn rewrite_json(&self, v: &mut Value, key: Option<&str>) -> bool {
        match v {
            Value::String(s) => match self.text_named(s, key) {
                Some(t) => {
                    *s = t;
                    true
                }
                None => false,
            },
            Value::Number(n) => match self.get_named(&n.to_string(), key) {
                Some(answered) => {
                    *v = as_number_if_possible(answered);
                    true
                }
                None => false,
            },
            // Every element is visited (no short circuit): each occurrence is rewritten.
            Value::Array(a) => {
                let mut changed = false;
                for x in a {
                    changed |= self.rewrite_json(x, key);
                }
                changed
            }
            Value::Object(m) => {
                let mut changed = false;
                for (k, x) in m.iter_mut() {
                    changed |= self.rewrite_json(x, Some(k));
                }
                changed
            }
            Value::Null | Value::Bool(_) => false,
        }
    }
}

/// Shortest recorded value renamed in a recorded body ([`IdMap::rename_recorded`]): shorter
/// ones (`1`, `42`, `ok`) recur in bodies by chance (a page number, a count), so renaming them
/// would put the session's id where the recording meant something else. The bound synth uses
/// for a value worth finding inside another string. Shorter ids are still held at the
/// template's positions by the symbol rule ([`crate::symbols`]).
pub const MIN_RENAMED_LEN: usize = 4;

/// Characters that start or end a token inside a recorded string: the separators of a URL's
/// path, query and fragment, the places the request rewriting finds whole tokens (a path
/// segment, a query or form value).
const TOKEN_DELIMITERS: &[u8] = b"/?#&=";

/// Characters that end a URL written inside text (an HTML attribute or element, a sentence):
/// they end a token as [`TOKEN_DELIMITERS`] do, but start none, so `href="…/statuses/<id>"`
/// and `…/<id></span>` hold the id as a token while `label <id>` does not.
const URL_END: &[u8] = b"\"'<> \t\r\n";

/// What a recorded body's bytes may mention of an [`IdMap`] ([`IdMap::scan`]). A token JSON
/// may write escaped (quotes, backslashes, slashes, control or non-ASCII characters) is assumed
/// to occur: only the walk that follows is exact.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mentions {
    /// Some mapped token may occur (the symbol check's prefilter).
    pub any: bool,
    /// Some mapped token at least [`MIN_RENAMED_LEN`] long may occur (the judge's rename).
    pub renamable: bool,
}

impl IdMap {
    /// Which mapped tokens `bytes` may hold: one byte search per token, stopping at the first
    /// token long enough to be renamed.
    pub fn scan(&self, bytes: &[u8]) -> Mentions {
        let mut m = Mentions::default();
        for t in self.recorded_tokens() {
            let may_occur = t
                .bytes()
                .any(|b| matches!(b, b'"' | b'\\' | b'/') || !(0x20..0x80).contains(&b))
                || memchr::memmem::find(bytes, t.as_bytes()).is_some();
            if may_occur {
                m.any = true;
                if t.len() >= MIN_RENAMED_LEN {
                    m.renamable = true;
                    break;
                }
            }
        }
        m
    }

    /// Put a recorded response body into the session's names: every value this map holds (at
    /// least [`MIN_RENAMED_LEN`] long) becomes the value the twin answered for it, as a whole
    /// JSON value (a string equal to it, a number whose decimal form it is; a number stays a
    /// number, as in [`IdMap::rewrite`]) and as a whole token inside a string (after a
    /// separator of a URL's path, query and fragment, up to the next one or to where a URL
    /// written in text ends: `/v1/notes/<id>`, `?id=<id>`, `<a href="…/<id>">`). Never a
    /// substring of a token, an object key, or a shorter value. True when anything changed.
    ///
    /// The judge compares the twin's answer with the recording renamed this way, before the
    /// outbound policy transforms it: the client was told the twin's name for each of these
    /// values, so a consistent twin shows that name where the recording shows its own, also
    /// where a value is derived from it (a placeholder seeded by its record's key, a token of a
    /// secret) or embedded in a URL. A twin showing any other value still diverges.
    pub fn rename_recorded(&self, v: &mut Value) -> bool {
        if self.map.is_empty() {
            return false;
        }
        let mut scratch = String::new();
        self.rename_in(v, &mut scratch)
    }

    fn rename_in(&self, v: &mut Value, scratch: &mut String) -> bool {
        match v {
            Value::String(s) => {
                if s.len() < MIN_RENAMED_LEN {
                    return false;
                }
                if let Some(t) = self.text(s) {
                    *s = t;
                    return true;
                }
                match self.rename_tokens(s) {
                    Some(t) => {
                        *s = t;
                        true
                    }
                    None => false,
                }
            }
            Value::Number(n) => {
                use std::fmt::Write;
                scratch.clear();
                // A number's decimal form, written into one buffer for the whole walk.
                let _ = write!(scratch, "{n}");
                if scratch.len() < MIN_RENAMED_LEN {
                    return false;
                }
                match self.map.get(scratch.as_str()) {
                    Some(answered) => {
                        *v = as_number_if_possible(answered);
                        true
                    }
                    None => false,
                }
            }
            Value::Array(a) => {
                let mut changed = false;
                for x in a {
                    changed |= self.rename_in(x, scratch);
                }
                changed
            }
            Value::Object(m) => {
                let mut changed = false;
                for x in m.values_mut() {
                    changed |= self.rename_in(x, scratch);
                }
                changed
            }
            Value::Null | Value::Bool(_) => false,
        }
    }

    /// `s` with every mapped token (at least [`MIN_RENAMED_LEN`] long) replaced by the answered
    /// value's text; `None` when none is. A token starts at the string's start or after one of
    /// [`TOKEN_DELIMITERS`] and ends at the next of those or of [`URL_END`], or at the end.
    fn rename_tokens(&self, s: &str) -> Option<String> {
        let bytes = s.as_bytes();
        if !bytes.iter().any(|b| TOKEN_DELIMITERS.contains(b)) {
            return None;
        }
        let mut out: Option<String> = None;
        // End of the part of `s` already copied to `out`.
        let mut copied = 0;
        // Start of the current token; `None` after a character that ends a URL, until the next
        // URL separator.
        let mut start = Some(0);
        for end in 0..=bytes.len() {
            let at_end = end == bytes.len();
            let separator = !at_end && TOKEN_DELIMITERS.contains(&bytes[end]);
            if !(at_end || separator || URL_END.contains(&bytes[end])) {
                continue;
            }
            if let Some(from) = start {
                let tok = &s[from..end];
                if tok.len() >= MIN_RENAMED_LEN
                    && let Some(t) = self.text(tok)
                {
                    let o = out.get_or_insert_with(|| String::with_capacity(s.len()));
                    o.push_str(&s[copied..from]);
                    o.push_str(&t);
                    copied = end;
                }
            }
            start = separator.then_some(end + 1);
        }
        let mut o = out?;
        o.push_str(&s[copied..]);
        Some(o)
    }
}

/// The JSON value written in place of a recorded number: the answered number, or the answered
/// string read as a number when it is one (a number stays a number), else the answered value.
/// Whether a parameter or key name says its value is an id: `id`, `ids[]`, `uuid`, `number`,
/// or a name ending in one of them after a separator or a capital (`max_id`, `media_ids[]`,
/// `parentId`, `issue_number`).
fn names_an_id(name: &str) -> bool {
    // Read in place, without a lowercased copy: this runs for every short value the judge
    // and the causes step look up under a name.
    let name = name.trim_end_matches("[]").as_bytes();
    const WORDS: [&[u8]; 4] = [b"id", b"ids", b"uuid", b"number"];
    WORDS.iter().any(|w| {
        if name.eq_ignore_ascii_case(w) {
            return true;
        }
        let Some(cut) = name.len().checked_sub(w.len() + 1) else {
            return false;
        };
        let (sep, tail) = (name[cut], &name[cut + 1..]);
        let separated = matches!(sep, b'_' | b'-') && tail.eq_ignore_ascii_case(w);
        // `parentId`: the word capitalized, the rest as written.
        let capitalized = tail.first() == w.first().map(u8::to_ascii_uppercase).as_ref()
            && tail.get(1..) == w.get(1..);
        separated || capitalized
    })
}

fn as_number_if_possible(answered: &Value) -> Value {
    match answered {
        Value::Number(_) => answered.clone(),
        Value::String(s) => match s.parse::<serde_json::Number>() {
            Ok(n) => Value::Number(n),
            Err(_) => Value::String(s.clone()),
        },
        other => other.clone(),
    }
}

/// The text a scalar is written as in a path, query or form: a string's contents, a number's
/// decimal form.
fn token(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Percent-encode a path segment: unreserved characters and `:@!$&'()*+,;=` stay.
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        let keep = b.is_ascii_alphanumeric() || b"-._~:@!$&'()*+,;=".contains(&b);
        if keep {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(method: &str, path: &str, query: &str, ct: Option<&str>, body: &str) -> Request {
        Request {
            method: method.into(),
            path: path.into(),
            query: query.into(),
            headers: ct
                .map(|c| vec![("content-type".to_string(), c.to_string())])
                .unwrap_or_default(),
            body: bytes::Bytes::from(body.to_string()),
        }
    }

    fn map(pairs: &[(Value, Value)]) -> IdMap {
        let mut m = IdMap::new();
        m.learn(pairs.iter().cloned());
        m
    }

    /// `POST /v1/notes` → 201 `{"id": <generated note_…>, "object": "note" (const), "text": <echo
    /// of the body's text>}`, as synth writes it.
    const NOTES_MODEL: &str = r#"{
 "base_url": "https://api.notes.test/v1",
 "diagnostics": [],
 "entity_types": {},
 "recorded_at": "2026-06-05T12:00:02Z",
 "routes": [
  {
   "entity_type": "notes",
   "exact": [],
   "exchange_count": 5,
   "id": "post_v1_notes_0ddb462c",
   "latency": {
    "p50_ms": 10,
    "p90_ms": 10,
    "p99_ms": 10,
    "sample_count": 5
   },
   "method": "POST",
   "params": [],
   "path": "/v1/notes",
   "state_op": "create",
   "variants": [
    {
     "body": {
      "kind": "json",
      "root": {
       "fields": [
        {
         "key": "id",
         "present_ratio_bp": 10000,
         "value": {
          "confidence_bp": 8000,
          "node": "hole",
          "observed_type": "string",
          "source": {
           "kind": "generated",
           "shape": {
            "charset": "lower_alnum",
            "length": 12,
            "prefix": "note_",
            "shape": "token"
           }
          }
         }
        },
        {
         "key": "object",
         "present_ratio_bp": 10000,
         "value": {
          "node": "const",
          "value": "note"
         }
        },
        {
         "key": "text",
         "present_ratio_bp": 10000,
         "value": {
          "confidence_bp": 10000,
          "node": "hole",
          "observed_type": "string",
          "source": {
           "from": {
            "in": "body",
            "pointer": "/text"
           },
           "kind": "echo"
          }
         }
        }
       ],
       "node": "object"
      }
     },
     "evidence": {
      "confidence_bp": 10000,
      "exchange_count": 1,
      "sources": [
       "s/0"
      ]
     },
     "guard": {
      "guard": "always"
     },
     "headers": [
      {
       "name": "content-type",
       "program": {
        "rule": "constant",
        "values": [
         "application/json"
        ]
       }
      }
     ],
     "id": "5070e2e683a278a7",
     "status": 201
    }
   ]
  }
 ],
 "schema_version": 1,
 "sessions": [],
 "tool_version": "0.1.0",
 "twin": "notes"
}"#;

    fn create(answer: Value, status: u16, claim: bool) -> Vec<(Value, Value)> {
        let model: wraith_model::Model = serde_json::from_str(NOTES_MODEL).unwrap();
        let index = crate::judge::ModelIndex::new(&model);
        let recorded = json!({"id": "note_aaaaaaaaaaaa", "object": "note", "text": "milk"});
        let ex = wraith_recording::Exchange {
            protocol: "http".into(),
            request: wraith_recording::exchange::RecordedRequest {
                method: "POST".into(),
                path: "/v1/notes".into(),
                query: String::new(),
                headers: Default::default(),
                body: br#"{"text":"milk"}"#.to_vec().into(),
                content_type: Some("application/json".into()),
                origin: None,
            },
            response: wraith_recording::exchange::RecordedResponse {
                status: 201,
                headers: Default::default(),
                content_type: Some("application/json".into()),
                trailers: None,
            },
            frames: vec![wraith_recording::exchange::Frame {
                direction: "server".into(),
                timestamp_us: 0,
                body: serde_json::to_vec(&recorded).unwrap(),
                frame_type: "data".into(),
            }],
            timing: Default::default(),
            correlation: Default::default(),
            safety: Default::default(),
            content: Default::default(),
            truncated: false,
        };
        let obs = crate::judge::Observed {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: serde_json::to_vec(&answer).unwrap(),
            provenance: Some(wraith_engine::Provenance::Template),
            route: Some("POST /v1/notes".into()),
            replay: claim.then_some(crate::judge::ReplayClaim {
                class: wraith_engine::ReplayClass::SeriesMoment,
                outbound_policy_applied: false,
            }),
        };
        crate::judge::generated_pairs(&index, &ex, &crate::judge::ExpectedBody::of(&ex), &obs)
            .into_iter()
            .map(|p| (p.recorded, p.answered))
            .collect()
    }

    #[test]
    fn learns_ids_only_at_generated_positions_of_the_rendered_template() {
        let answer = json!({"id": "note_bbbbbbbbbbbb", "object": "other", "text": "eggs"});
        assert_eq!(
            create(answer, 201, false),
            vec![(json!("note_aaaaaaaaaaaa"), json!("note_bbbbbbbbbbbb"))],
            "the constant and the echo differ too, but they are not identifiers"
        );
    }

    #[test]
    fn an_exactness_claim_does_not_hide_which_positions_are_ids() {
        let answer = json!({"id": "note_bbbbbbbbbbbb", "object": "note", "text": "milk"});
        assert_eq!(create(answer, 201, true).len(), 1);
    }

    #[test]
    fn nothing_is_learned_from_an_answer_of_another_status_or_an_equal_one() {
        let other = json!({"id": "note_bbbbbbbbbbbb", "object": "note", "text": "milk"});
        assert!(create(other, 200, false).is_empty());
        let same = json!({"id": "note_aaaaaaaaaaaa", "object": "note", "text": "milk"});
        assert!(create(same, 201, false).is_empty());
    }

    #[test]
    fn learns_only_differing_scalars_of_one_type() {
        let m = map(&[
            (json!("111"), json!("999")),
            (json!(5), json!(7)),
            (json!("same"), json!("same")),
            (json!("12"), json!(12)),
            (json!(true), json!(false)),
            (json!(""), json!("x")),
        ]);
        assert_eq!(m.len(), 2);
        assert_eq!(m.get("111"), Some(&json!("999")));
        assert_eq!(m.get("5"), Some(&json!(7)));
        assert_eq!(m.get("same"), None);
        assert_eq!(m.get("12"), None);
        assert_eq!(m.ambiguities(), 0);
    }

    #[test]
    fn a_value_answered_twice_differently_keeps_the_latest_and_counts_it() {
        let mut m = map(&[(json!("111"), json!("a"))]);
        m.learn([(json!("111"), json!("a"))]);
        assert_eq!(m.ambiguities(), 0, "the same answer again is not ambiguous");
        m.learn([(json!("111"), json!("b"))]);
        assert_eq!(m.ambiguities(), 1);
        assert_eq!(m.get("111"), Some(&json!("b")));
    }

    #[test]
    fn rewrites_whole_path_segments_only() {
        let m = map(&[(json!("111"), json!("999"))]);
        let mut r = req("DELETE", "/api/v1/statuses/111", "", None, "");
        assert!(m.rewrite(&mut r));
        assert_eq!(r.path, "/api/v1/statuses/999");
        let mut r = req("GET", "/api/v1/statuses/1111/x111/111.json", "", None, "");
        assert!(!m.rewrite(&mut r), "substrings are never rewritten");
        assert_eq!(r.path, "/api/v1/statuses/1111/x111/111.json");
    }

    #[test]
    fn path_segments_are_compared_decoded_and_written_encoded() {
        let m = map(&[(json!("a b"), json!("c/d"))]);
        let mut r = req("GET", "/things/a%20b/", "", None, "");
        assert!(m.rewrite(&mut r));
        assert_eq!(r.path, "/things/c%2Fd/");
    }

    #[test]
    fn rewrites_query_values_not_names_or_substrings() {
        let m = map(&[(json!("111"), json!("9 9")), (json!(5), json!(6))]);
        let mut r = req(
            "GET",
            "/x",
            "max_id=111&111=a&since=1111&ids[]=5&flag",
            None,
            "",
        );
        assert!(m.rewrite(&mut r));
        assert_eq!(r.query, "max_id=9+9&111=a&since=1111&ids[]=6&flag");
    }

    #[test]
    fn rewrites_whole_json_values_keeping_numbers_numbers() {
        let m = map(&[(json!(42), json!(77)), (json!("111"), json!("999"))]);
        let mut r = req(
            "POST",
            "/x",
            "",
            Some("application/json"),
            r#"{"linode_id":42,"ids":["111","1111",111],"note":"111 and 42","111":1,"n":420}"#,
        );
        assert!(m.rewrite(&mut r));
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(
            v,
            json!({"linode_id":77,"ids":["999","1111",999],"note":"111 and 42","111":1,"n":420})
        );
    }

    #[test]
    fn rewrites_form_values() {
        let m = map(&[(json!("111"), json!("999"))]);
        let mut r = req(
            "POST",
            "/api/v1/statuses",
            "",
            Some("application/x-www-form-urlencoded"),
            "status=111&in_reply_to_id=111&media_ids%5B%5D=111&x=1111",
        );
        assert!(m.rewrite(&mut r));
        // `status` is no id's name, and `111` too short to be an id by itself.
        assert_eq!(
            &r.body[..],
            b"status=111&in_reply_to_id=999&media_ids%5B%5D=999&x=1111"
        );
    }

    /// Comment `1` answered as `21`, then label `1` as `30`: a path segment the route says
    /// names a comment takes the comment's answer, one of no known kind the latest answer.
    #[test]
    fn a_short_path_segment_of_a_known_kind_takes_that_kinds_answer() {
        let mut m = IdMap::new();
        m.learn([
            IdPair {
                recorded: json!(1),
                answered: json!(21),
                kind: Some("comments:id".into()),
            },
            IdPair {
                recorded: json!(1),
                answered: json!(30),
                kind: Some("labels:id".into()),
            },
        ]);
        let comments = |i: usize| (i == 2).then(|| "comments:id".to_string());
        let mut r = req("GET", "/comments/1", "", None, "");
        assert!(m.rewrite_with_kinds(&mut r, &comments));
        assert_eq!(r.path, "/comments/21");
        let mut r = req("GET", "/things/1", "", None, "");
        assert!(m.rewrite(&mut r));
        assert_eq!(r.path, "/things/30");
        // A kind that answered nothing for the value leaves the latest answer.
        let mut r = req("GET", "/issues/1", "", None, "");
        assert!(m.rewrite_with_kinds(&mut r, &|_| Some("issues:id".into())));
        assert_eq!(r.path, "/issues/30");
    }

    /// Ids `1` and `2` the twin answered as `6` and `7`: a page size and a page number are not
    /// them, an id parameter, a JSON id field and a path segment are.
    #[test]
    fn short_values_are_rewritten_only_under_names_of_ids() {
        let m = map(&[(json!(1), json!(6)), (json!(2), json!(7))]);
        let mut r = req(
            "GET",
            "/repos/a/b/issues/1",
            "per_page=2&page=1&since_id=2&parentId=1",
            None,
            "",
        );
        assert!(m.rewrite(&mut r));
        assert_eq!(r.path, "/repos/a/b/issues/6");
        assert_eq!(r.query, "per_page=2&page=1&since_id=7&parentId=6");
        let mut r = req(
            "POST",
            "/links",
            "",
            Some("application/json"),
            r#"{"issue_number":1,"count":2,"ids":[1,2],"note":{"id":2,"size":1}}"#,
        );
        assert!(m.rewrite(&mut r));
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(
            v,
            json!({"issue_number":6,"count":2,"ids":[6,7],"note":{"id":7,"size":1}})
        );
        // A value long enough to be an id by itself is one under any name.
        let m = map(&[(json!(1234), json!(5678))]);
        let mut r = req("GET", "/x", "page=1234", None, "");
        assert!(m.rewrite(&mut r));
        assert_eq!(r.query, "page=5678");
    }

    #[test]
    fn an_unmapped_request_is_left_byte_for_byte() {
        let m = map(&[(json!("111"), json!("999"))]);
        let body = "{ \"a\" : \"222\" }";
        let mut r = req("POST", "/a/222", "b=222", Some("application/json"), body);
        assert!(!m.rewrite(&mut r));
        assert_eq!(&r.body[..], body.as_bytes());
        assert_eq!(r.query, "b=222");
    }

    #[test]
    fn renames_whole_recorded_values_keeping_numbers_numbers() {
        let m = map(&[
            (json!(1774421), json!(1774413)),
            (json!("note_aaaa"), json!("note_bbbb")),
        ]);
        let mut v = json!({"id": 1774421, "ids": ["1774421", "note_aaaa"], "note_aaaa": "x"});
        assert!(m.rename_recorded(&mut v));
        assert_eq!(
            v,
            json!({"id": 1774413, "ids": ["1774413", "note_bbbb"], "note_aaaa": "x"}),
            "values renamed, an object key never"
        );
    }

    #[test]
    fn renames_whole_tokens_inside_recorded_strings() {
        let m = map(&[
            (json!(1774421), json!(1774413)),
            (json!("note_aaaa"), json!("note_bbbb")),
        ]);
        let mut v = json!({
            "url": "/v4/nodebalancers/1774421",
            "link": "https://api.test/notes/note_aaaa?parent=1774421#note_aaaa",
            "kept": ["/v4/nodebalancers/17744210", "note_aaaa-x/1", "label 1774421", "/1774421x/"]
        });
        assert!(m.rename_recorded(&mut v));
        assert_eq!(
            v,
            json!({
                "url": "/v4/nodebalancers/1774413",
                "link": "https://api.test/notes/note_bbbb?parent=1774413#note_bbbb",
                "kept": ["/v4/nodebalancers/17744210", "note_aaaa-x/1", "label 1774421", "/1774421x/"]
            }),
            "only whole tokens between URL separators"
        );
    }

    #[test]
    fn renames_an_id_ending_a_url_written_in_html() {
        let m = map(&[(json!("117440826591388777"), json!("117440813461137764"))]);
        let mut v = json!({
            "content": "<a href=\"http://h/@u/117440826591388777\" x=\"y\"><span>t/117440826591388777</span></a> 117440826591388777 ok",
            "kept": ["id 117440826591388777", "/1174408265913887770\"", "x\"117440826591388777\""]
        });
        assert!(m.rename_recorded(&mut v));
        assert_eq!(
            v,
            json!({
                "content": "<a href=\"http://h/@u/117440813461137764\" x=\"y\"><span>t/117440813461137764</span></a> 117440826591388777 ok",
                "kept": ["id 117440826591388777", "/1174408265913887770\"", "x\"117440826591388777\""]
            }),
            "a token after a URL separator ends at a quote, a tag or a space; one after them is no URL's"
        );
    }

    #[test]
    fn a_short_recorded_value_is_renamed_nowhere() {
        let m = map(&[(json!(42), json!(77)), (json!("abc"), json!("xyz"))]);
        let mut v = json!({"page": 42, "url": "/notes/42", "tag": "abc", "path": "/abc/"});
        let before = v.clone();
        assert!(!m.rename_recorded(&mut v));
        assert_eq!(
            v, before,
            "a page number or a short word is no evidence of the id"
        );
    }

    #[test]
    fn the_scan_tells_apart_bodies_that_may_need_the_rename() {
        let m = map(&[
            (json!(42), json!(77)),
            (json!("note_aaaa"), json!("note_bbbb")),
        ]);
        let hit = m.scan(br#"{"url":"/notes/note_aaaa"}"#);
        assert_eq!((hit.any, hit.renamable), (true, true));
        let short = m.scan(br#"{"page":42}"#);
        assert_eq!((short.any, short.renamable), (true, false));
        let none = m.scan(br#"{"page":7}"#);
        assert_eq!((none.any, none.renamable), (false, false));
    }

    #[test]
    fn multipart_bodies_are_not_rewritten() {
        let m = map(&[(json!("111"), json!("999"))]);
        let mut r = req(
            "POST",
            "/m",
            "",
            Some("multipart/form-data; boundary=x"),
            "\"111\"",
        );
        assert!(!m.rewrite(&mut r));
    }

    #[test]
    fn id_names_are_told_from_other_names() {
        for name in [
            "id",
            "ID",
            "ids[]",
            "uuid",
            "number",
            "max_id",
            "media_ids[]",
            "parentId",
            "issue_number",
            "post-uuid",
            "SINCE_ID",
            "accountIds",
        ] {
            assert!(names_an_id(name), "{name}");
        }
        for name in [
            "", "d", "idx", "valid", "paid", "page", "identity", "Id_x", "void", "_",
        ] {
            assert!(!names_an_id(name), "{name}");
        }
    }

    /// The rule as first written, with lowercased copies: [`names_an_id`] reads in place.
    fn names_an_id_by_copies(name: &str) -> bool {
        let name = name.trim_end_matches("[]");
        let lower = name.to_ascii_lowercase();
        const WORDS: [&str; 4] = ["id", "ids", "uuid", "number"];
        WORDS.contains(&lower.as_str())
            || WORDS.iter().any(|w| {
                lower.ends_with(&format!("_{w}"))
                    || lower.ends_with(&format!("-{w}"))
                    || name.ends_with(&format!("{}{}", w[..1].to_ascii_uppercase(), &w[1..]))
            })
    }

    proptest::proptest! {
        #[test]
        fn names_an_id_reads_as_the_copying_rule(
            name in "[a-zA-Z_\\-\\[\\]é]{0,4}(id|Id|ID|ids|Ids|uuid|Uuid|number|Number)?(\\[\\])?"
        ) {
            proptest::prop_assert_eq!(names_an_id(&name), names_an_id_by_copies(&name));
        }
    }
}
