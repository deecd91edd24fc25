//! Anti-unification: many observed JSON bodies → one template tree.
//!
//! Positions where every observation agrees become constants; positions that differ become
//! holes, classified in this order:
//! 1. **echo** — the value equals the same request value (path parameter, query parameter, or
//!    body field, JSON or form) in every observation;
//! 2. **clock** — every value is a timestamp (ISO 8601 strings; epoch seconds/milliseconds under
//!    a time-like key), with the recorded spelling;
//! 3. **counter** — integers that step by exactly one from each observation to the next;
//! 4. **generated** — values sharing an id shape ([`values::learn_id_shape`]) under an
//!    identifier-like key, or all distinct;
//! 5. **observed** — anything else, served as one of the recorded examples.
//!
//! An observed string field that, in every object holding it, embedded the value of a
//! generated or echoed sibling (a `uri` ending with the record's `id`, followed by one of a few
//! recurring suffixes) becomes a derived hole ([`IdShape::Derived`]): it names the id of the
//! same object. So does such a field of an object the record holds (a database's
//! `hosts.primary` embedding the database's `id`), up to two levels down.
//!
//! Objects unify key by key (keys missing from some observations become optional fields with
//! their presence ratio); arrays that had one length in every observation unify position by
//! position (a tuple), others become variable-length lists whose items are clustered by shape,
//! one anti-unified representative per shape (at most 8, first seen first), rendered to the
//! median length.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use rayon::prelude::*;
use serde_json::Value;
use wraith_model::{
    ArrayNode, EchoSource, Field, Hole, HoleKind, IdShape, JsonType, Node, WhenAbsent,
};

use crate::observe::Obs;
use crate::values;

/// Most representatives kept for a variable-length array.
pub const MAX_REPRESENTATIVES: usize = 8;
/// Most examples kept on a hole.
pub const MAX_EXAMPLES: usize = 8;

/// Most distinct recorded values an observed hole keeps in all (`examples` then
/// `more_examples`) for the judge; past it the hole says `examples_cut`.
pub const MAX_RECORDED_VALUES: usize = 256;
/// Fewest observations without a request field that may fix a hole's value when it is absent
/// ([`Hole::when_absent`]): one could be chance.
const MIN_ABSENT_SUPPORT: usize = 2;

/// An echo at the answer's own position holds when at most one in this many requests that
/// carried the source got another value back.
const MAX_MISSED_ECHO_SHARE: usize = 10;

/// The shortest request value an echo within text is learned from: shorter ones (`1`, `ok`)
/// sit inside unrelated text by chance.
const MIN_WITHIN_LEN: usize = 3;

/// The shortest path value an echo within text is learned from when every answer named the
/// same one (a single recorded read of one id).
const MIN_SINGLE_WITHIN_LEN: usize = 8;

/// How far a timestamp may lie outside its exchange's answering window and still be read as
/// stamped then: a whole-second value truncates up to a second, and the upstream's clock may
/// run a little off the recorder's.
const STAMP_SLACK_US: i64 = 2_000_000;
/// Most distinct request fields considered for [`Hole::when_absent`].
const MAX_ABSENT_FIELDS: usize = 32;

/// The top-level member of a flattened request field pointer: `/poll/options/0` → `/poll`.
fn top_level(pointer: &str) -> &str {
    match pointer.get(1..).and_then(|rest| rest.find('/')) {
        Some(at) => &pointer[..at + 1],
        None => pointer,
    }
}

/// An observation's answering window, when its recording carries timing.
pub fn answered_window(obs: &Obs<'_>) -> Option<(u64, u64)> {
    let t = &obs.ex.timing;
    (t.request_start_us > 0).then(|| (t.request_start_us, t.last_byte_us.max(t.request_start_us)))
}

/// The request side of one observation, as echo detection sees it.
#[derive(Debug)]
pub struct Ctx<'o> {
    /// Path parameters: (name, decoded value).
    pub params: Vec<(String, String)>,
    pub query: &'o [(String, String)],
    pub body: &'o [(String, Value)],
    /// The recording session (request keying counts a key seen again in the same session as
    /// no new evidence).
    pub session: &'o str,
    /// When the exchange was answered: its request start and last byte, in unix microseconds
    /// (`None` where the recording has no timing).
    pub answered: Option<(u64, u64)>,
    /// The observation itself, where its answer may be read (the timestamps a clock offset by
    /// a sent number of seconds is measured from, [`crate::clock_after`]).
    pub obs: Option<&'o Obs<'o>>,
}

impl<'o> Ctx<'o> {
    /// A request of only body fields, answered in `answered`: for the learners' unit tests.
    #[cfg(test)]
    pub(crate) fn of_body(body: &'o [(String, Value)], answered: Option<(u64, u64)>) -> Ctx<'o> {
        Ctx {
            params: Vec::new(),
            query: &[],
            body,
            session: "s",
            answered,
            obs: None,
        }
    }

    pub fn new(obs: &'o Obs<'o>, names: &[String], raw_values: &[String]) -> Ctx<'o> {
        Ctx {
            params: names
                .iter()
                .cloned()
                .zip(raw_values.iter().map(|v| values::decode_segment(v)))
                .collect(),
            query: &obs.query,
            body: &obs.req_fields,
            session: obs.session,
            answered: answered_window(obs),
            obs: Some(obs),
        }
    }

    fn lookup(&self, src: &EchoSource) -> Option<ReqVal<'_>> {
        match src {
            EchoSource::Path { param } => self
                .params
                .iter()
                .find(|(n, _)| n == param)
                .map(|(_, v)| ReqVal::Str(v)),
            EchoSource::Query { name } => self
                .query
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| ReqVal::Str(v)),
            EchoSource::Body { pointer } => self
                .body
                .iter()
                .find(|(p, _)| p == pointer)
                .map(|(_, v)| ReqVal::Json(v)),
            EchoSource::Trimmed { source } => match self.lookup(source)? {
                ReqVal::Str(s) => EchoSource::trimmed(s).map(ReqVal::Str),
                ReqVal::Json(Value::String(s)) => EchoSource::trimmed(s).map(ReqVal::Str),
                json => Some(json),
            },
            EchoSource::Header { .. } | EchoSource::Within { .. } | EchoSource::Instant { .. } => {
                None
            }
        }
    }

    /// The request's value of `src` as a JSON value (a path, query or form value as a string).
    pub(crate) fn value_of(&self, src: &EchoSource) -> Option<Value> {
        Some(match self.lookup(src)? {
            ReqVal::Str(s) => Value::String(s.to_string()),
            ReqVal::Json(v) => v.clone(),
        })
    }

    /// Whether the request carried the value an echo of `src` copies.
    pub(crate) fn has(&self, src: &EchoSource) -> bool {
        self.lookup(src).is_some()
    }

    /// Whether the request carried this top-level body field or query parameter.
    pub(crate) fn carries(&self, field: &EchoSource) -> bool {
        match field {
            EchoSource::Body { pointer } => self.body.iter().any(|(p, _)| top_level(p) == pointer),
            EchoSource::Query { name } => self.query.iter().any(|(n, _)| n == name),
            EchoSource::Path { .. }
            | EchoSource::Header { .. }
            | EchoSource::Within { .. }
            | EchoSource::Instant { .. }
            | EchoSource::Trimmed { .. } => false,
        }
    }

    pub(crate) fn candidates(&self, v: &Value) -> Vec<EchoSource> {
        let mut out = Vec::new();
        for (name, value) in &self.params {
            if ReqVal::Str(value).matches(v) {
                out.push(EchoSource::Path {
                    param: name.clone(),
                });
            }
        }
        for (name, value) in self.query {
            if ReqVal::Str(value).matches(v) {
                let src = EchoSource::Query { name: name.clone() };
                if !out.contains(&src) {
                    out.push(src);
                }
            }
        }
        for (pointer, value) in self.body {
            if ReqVal::Json(value).matches(v) {
                out.push(EchoSource::Body {
                    pointer: pointer.clone(),
                });
            }
        }
        out
    }
}

enum ReqVal<'a> {
    Str(&'a str),
    Json(&'a Value),
}

impl ReqVal<'_> {
    /// The value as text, as an [`EchoSource::Within`] sets it.
    fn text(&self) -> Option<String> {
        match self {
            ReqVal::Str(s) => Some((*s).to_string()),
            ReqVal::Json(v) => EchoSource::as_text(v),
        }
    }

    /// Whether a response value is a copy of this request value (form strings match numbers
    /// and booleans spelled the same way).
    fn matches(&self, v: &Value) -> bool {
        match (self, v) {
            (ReqVal::Str(s), Value::String(r)) => !r.is_empty() && s == r,
            (ReqVal::Str(s), Value::Number(n)) => *s == n.to_string(),
            (ReqVal::Json(Value::String(s)), Value::String(r)) => !r.is_empty() && s == r,
            (ReqVal::Json(Value::String(s)), Value::Number(n)) => *s == n.to_string(),
            (ReqVal::Json(Value::Number(a)), Value::Number(b)) => a == b,
            _ => false,
        }
    }
}

/// Anti-unifies observed values; `ctxs[i]` is the request of observation `i`.
pub struct Unifier<'a> {
    pub ctxs: &'a [Ctx<'a>],
    /// Prefix of counter names (the route id).
    pub counter_prefix: String,
    /// What the route's observed positions may be keyed by (`[generate.request_keying]`).
    pub keying: &'a crate::request_keying::RouteKeying,
    /// A list route's items: (JSON pointer, the records' primary key). Items there that are
    /// other records in each answer are a list, even where every answer listed as many.
    pub list_items: Option<(&'a str, &'a str)>,
}

impl Unifier<'_> {
    /// Unify `vals` (each with the index of its observation's [`Ctx`]) found at `pointer`
    /// under object key `key`.
    pub fn unify(&self, vals: &[(&Value, usize)], key: Option<&str>, pointer: &str) -> Node {
        if vals.is_empty() {
            return Node::Const { value: Value::Null };
        }
        if vals.iter().all(|(v, _)| v.is_object()) {
            return self.unify_objects(vals, pointer);
        }
        if vals.iter().all(|(v, _)| v.is_array()) {
            return self.unify_arrays(vals, key, pointer);
        }
        if vals.iter().any(|(v, _)| v.is_object() || v.is_array()) {
            // Arrays or `null`, each as the request sent it there.
            if let Some(hole) = crate::array_echo::learn(vals, self.ctxs, pointer) {
                return Node::Hole(hole);
            }
            // Containers mixed with scalars (an object or null): replay observed values,
            // unless the objects embed the record a request field names.
            let mut hole = self.observed(vals, 2000);
            crate::embedded_records::learn(self, vals, key, pointer, &mut hole);
            return Node::Hole(hole);
        }
        self.unify_scalars(vals, key, pointer)
    }

    fn unify_objects(&self, vals: &[(&Value, usize)], pointer: &str) -> Node {
        let n = vals.len();
        let mut keys: IndexMap<&str, Vec<(&Value, usize)>> = IndexMap::new();
        for (v, c) in vals {
            if let Value::Object(map) = v {
                for (k, child) in map {
                    keys.entry(k.as_str()).or_default().push((child, *c));
                }
            }
        }
        let keys: Vec<(&str, Vec<(&Value, usize)>)> = keys.into_iter().collect();
        let fields = in_order(keys, n, |(k, sub)| {
            let child_ptr = format!("{pointer}/{}", crate::observe::escape_token(k));
            let count = sub.len();
            let mut value = self.unify(&sub, Some(k), &child_ptr);
            if count < n {
                self.echo_default_presence(&mut value, vals, &sub);
            }
            Field {
                key: k.to_string(),
                value,
                optional: count < n,
                present_ratio_bp: ((count as u64 * 10_000) / n as u64) as u32,
            }
        });
        let mut fields = fields;
        derive_embedded(&mut fields, vals);
        Node::Object { fields }
    }

    /// An optional field holding an echo hole is rendered only when the request carries the
    /// source, unless most observations whose request lacked the source carried the field all
    /// the same (with the default `echo` put first: a `disk_encryption` the API reports
    /// whether or not the client asked for one). Then the default is recorded as the hole's
    /// `when_absent`, and the engine renders the field with it for a request without the
    /// source. `all` are the observations of the object, `present` those carrying the field.
    fn echo_default_presence(
        &self,
        node: &mut Node,
        all: &[(&Value, usize)],
        present: &[(&Value, usize)],
    ) {
        let Node::Hole(hole) = node else {
            return;
        };
        let HoleKind::Echo { from } = &hole.source else {
            return;
        };
        let lacks = |c: usize| {
            self.ctxs
                .get(c)
                .is_none_or(|ctx| ctx.lookup(from).is_none())
        };
        let without = all.iter().filter(|(_, c)| lacks(*c)).count();
        let Some(default) = present.iter().find(|(_, c)| lacks(*c)).map(|(v, _)| *v) else {
            return;
        };
        let carried = present.iter().filter(|(_, c)| lacks(*c)).count();
        if carried * 2 <= without {
            return;
        }
        let when_absent = WhenAbsent {
            field: from.clone(),
            value: default.clone(),
            embeds: None,
        };
        hole.when_absent = Some(Box::new(when_absent));
    }

    /// Whether `arrays` sit at the route's list items and, at some position, list records of
    /// different keys from answer to answer: each answer's own records (a session's one
    /// widget), not a fixed catalogue answered item for item.
    fn varying_records(&self, arrays: &[(&Vec<Value>, usize)], pointer: &str) -> bool {
        let Some((items, pk)) = self.list_items else {
            return false;
        };
        if items != pointer || arrays.len() < 2 {
            return false;
        }
        let len = arrays.first().map_or(0, |(a, _)| a.len());
        (0..len).any(|i| {
            let mut keys = arrays.iter().map(|(a, _)| a[i].get(pk));
            let first = keys.next().flatten();
            first.is_some() && keys.any(|k| k != first)
        })
    }

    fn unify_arrays(&self, vals: &[(&Value, usize)], key: Option<&str>, pointer: &str) -> Node {
        // The array the request sent at this very pointer, answered as sent.
        if let Some(hole) = crate::array_echo::learn(vals, self.ctxs, pointer) {
            return Node::Hole(hole);
        }
        let arrays: Vec<(&Vec<Value>, usize)> = vals
            .iter()
            .filter_map(|(v, c)| v.as_array().map(|a| (a, *c)))
            .collect();
        let len0 = arrays.first().map(|(a, _)| a.len()).unwrap_or(0);
        let same_len = arrays.iter().all(|(a, _)| a.len() == len0);
        // Every observation had the same length: a fixed collection (a catalogue of regions,
        // one recorded page), unified position by position so it replays item for item.
        if same_len && !self.varying_records(&arrays, pointer) {
            let columns: Vec<usize> = (0..len0).collect();
            let items = in_order(columns, arrays.len() * len0, |i| {
                let col: Vec<(&Value, usize)> = arrays.iter().map(|(a, c)| (&a[i], *c)).collect();
                self.unify(&col, key, &format!("{pointer}/{i}"))
            });
            return Node::Array(ArrayNode::Tuple { items });
        }
        // Variable length: a tagged union gets one representative per tag value.
        if let Some(list) = self.tagged_list(&arrays, key, pointer) {
            return list;
        }
        // Otherwise cluster items by shape, first seen first.
        let mut clusters: IndexMap<String, Vec<(&Value, usize)>> = IndexMap::new();
        for (a, c) in &arrays {
            for item in a.iter() {
                let sig = shape_signature(item);
                if clusters.len() >= MAX_REPRESENTATIVES && !clusters.contains_key(&sig) {
                    continue;
                }
                clusters.entry(sig).or_default().push((item, *c));
            }
        }
        let listed = clusters.values().map(Vec::len).sum();
        let clusters: Vec<Vec<(&Value, usize)>> = clusters.into_values().collect();
        let representatives = in_order(clusters, listed, |items| {
            self.unify(&items, key, &format!("{pointer}/*"))
        });
        Node::Array(ArrayNode::List {
            representatives,
            target_length: median_length(&arrays),
            discriminator: None,
        })
    }

    /// A variable-length list whose items are a tagged union ([`crate::union::detect`]): one
    /// representative per tag value (first seen first), each holding its tag as a constant.
    fn tagged_list(
        &self,
        arrays: &[(&Vec<Value>, usize)],
        key: Option<&str>,
        pointer: &str,
    ) -> Option<Node> {
        let items: Vec<(&Value, usize)> = arrays
            .iter()
            .flat_map(|(a, c)| a.iter().map(move |item| (item, *c)))
            .collect();
        // Each item with the index of the recorded array it came from.
        let located: Vec<(&Value, usize)> = arrays
            .iter()
            .enumerate()
            .flat_map(|(k, (a, _))| a.iter().map(move |item| (item, k)))
            .collect();
        let found = crate::union::detect(&located)?;
        let representatives = found
            .groups
            .iter()
            .map(|(tag, members)| {
                let group: Vec<(&Value, usize)> = members.iter().map(|&i| items[i]).collect();
                let mut rep = self.unify(&group, key, &format!("{pointer}/*"));
                // The tag is the type's name, never a request echo: a constant, so the judge
                // and a reader find each type by it.
                if let Node::Object { fields } = &mut rep {
                    for f in fields.iter_mut().filter(|f| f.key == found.key) {
                        f.value = Node::Const {
                            value: Value::String((*tag).to_string()),
                        };
                    }
                }
                rep
            })
            .collect();
        Some(Node::Array(ArrayNode::List {
            representatives,
            target_length: median_length(arrays),
            discriminator: Some(found.key),
        }))
    }

    /// A string position every observation answered as one fixed text around its own
    /// request's value of one source (path parameter, query parameter or body field), with at
    /// least two distinct such values, each at least [`MIN_WITHIN_LEN`] characters (or one
    /// key-like path value, or one path value ending a URL): an echo [`EchoSource::Within`]
    /// that text. The sources tried are
    /// the first observation's, in request order; `path_only` tries its path parameters alone.
    fn echo_within(&self, vals: &[(&Value, usize)], path_only: bool) -> Option<Hole> {
        let texts: Vec<&str> = vals
            .iter()
            .map(|(v, _)| v.as_str())
            .collect::<Option<_>>()?;
        let first = self.ctxs.get(vals.first()?.1)?;
        let others = first
            .query
            .iter()
            .map(|(n, _)| EchoSource::Query { name: n.clone() })
            .chain(
                first
                    .body
                    .iter()
                    .filter(|(_, v)| v.is_string() || v.is_number())
                    .map(|(p, _)| EchoSource::Body { pointer: p.clone() }),
            );
        // Where every answer is the same text, only a path value can be what it names (one
        // distinct value): the other sources are not tried.
        let plain: Vec<EchoSource> = first
            .params
            .iter()
            .map(|(n, _)| EchoSource::Path { param: n.clone() })
            .chain(others.take_while(|_| !path_only))
            .collect();
        // Then each one without its leading marks (a tag's URL naming `coolfree` for `#coolfree`).
        let trimmed: Vec<EchoSource> = plain
            .iter()
            .map(|src| EchoSource::Trimmed {
                source: Box::new(src.clone()),
            })
            .collect();
        for src in plain.into_iter().chain(trimmed) {
            let mut affix: Option<(&str, &str)> = None;
            let mut distinct: std::collections::BTreeSet<String> = Default::default();
            let all = vals.iter().zip(&texts).all(|((_, c), text)| {
                let Some(inner) = self
                    .ctxs
                    .get(*c)
                    .and_then(|ctx| ctx.lookup(&src))
                    .and_then(|r| r.text())
                    .filter(|t| t.chars().count() >= MIN_WITHIN_LEN)
                else {
                    return false;
                };
                let Some(at) = text.find(inner.as_str()) else {
                    return false;
                };
                let (prefix, suffix) = (&text[..at], &text[at + inner.len()..]);
                if prefix.is_empty() && suffix.is_empty() {
                    return false;
                }
                if affix.is_some_and(|a| a != (prefix, suffix)) {
                    return false;
                }
                affix = Some((prefix, suffix));
                distinct.insert(inner);
                true
            });
            // One distinct value is enough for a path parameter that reads as a key (long,
            // with a digit: `cus_DolzNQrqO2mPIG`), which text holds by chance far less often
            // than a word, or that is the last segment of a URL (`…/tags/heeho` for the tag
            // the path named): any other source needs two values to tell an echo from a
            // constant.
            let keyed_path_value = matches!(src, EchoSource::Path { .. })
                && distinct.iter().all(|v| {
                    v.chars().count() >= MIN_SINGLE_WITHIN_LEN
                        && v.chars().any(|c| c.is_ascii_digit())
                });
            let last_url_segment = matches!(src, EchoSource::Path { .. })
                && affix.is_some_and(|(prefix, suffix)| {
                    suffix.is_empty()
                        && prefix.ends_with('/')
                        && (prefix.starts_with("http://") || prefix.starts_with("https://"))
                });
            let keyed_path_value = keyed_path_value || last_url_segment;
            if all
                && (distinct.len() >= 2 || (distinct.len() == 1 && keyed_path_value))
                && let Some((prefix, suffix)) = affix
            {
                return Some(recorded_hole(
                    HoleKind::Echo {
                        from: EchoSource::Within {
                            source: Box::new(src),
                            prefix: prefix.to_string(),
                            suffix: suffix.to_string(),
                        },
                    },
                    JsonType::String,
                    vals,
                    8_000,
                ));
            }
        }
        None
    }

    /// An echo of a request string without the marks before its first letter or digit
    /// ([`EchoSource::Trimmed`]): every observation's request carried the source and was
    /// answered it so trimmed, at least one of them had marks to trim (else the plain echo
    /// holds), and the answers held at least two distinct values.
    fn echo_trimmed(&self, vals: &[(&Value, usize)], observed_type: JsonType) -> Option<Hole> {
        if !vals.iter().all(|(v, _)| v.is_string()) || distinct_count_of(vals) < 2 {
            return None;
        }
        let first = self.ctxs.get(vals.first()?.1)?;
        let sources = first
            .params
            .iter()
            .map(|(n, _)| EchoSource::Path { param: n.clone() })
            .chain(
                first
                    .query
                    .iter()
                    .map(|(n, _)| EchoSource::Query { name: n.clone() }),
            )
            .chain(
                first
                    .body
                    .iter()
                    .filter(|(_, v)| v.is_string())
                    .map(|(p, _)| EchoSource::Body { pointer: p.clone() }),
            );
        for plain in sources {
            let src = EchoSource::Trimmed {
                source: Box::new(plain.clone()),
            };
            let mut marked = false;
            let holds = vals.iter().all(|(v, c)| {
                let Some(ctx) = self.ctxs.get(*c) else {
                    return false;
                };
                if !ctx.lookup(&src).is_some_and(|r| r.matches(v)) {
                    return false;
                }
                marked |= !ctx.lookup(&plain).is_some_and(|r| r.matches(v));
                true
            });
            if holds && marked {
                return Some(recorded_hole(
                    HoleKind::Echo { from: src },
                    observed_type,
                    vals,
                    8_000,
                ));
            }
        }
        None
    }

    /// Whether the one timestamp every observation answered lies, for each, within the
    /// window its exchange was answered in (give or take [`STAMP_SLACK_US`], a whole-second
    /// value's truncation and a server clock a little off the recorder's).
    fn stamped_when_answered(
        &self,
        vals: &[(&Value, usize)],
        unit: &wraith_model::ClockUnit,
    ) -> bool {
        let Some(at) = unit.instant_us(vals[0].0) else {
            return false;
        };
        vals.iter().all(|(_, i)| {
            self.ctxs
                .get(*i)
                .and_then(|c| c.answered)
                .is_some_and(|(start, end)| {
                    let (start, end) = (start as i64, end as i64);
                    at >= start.saturating_sub(STAMP_SLACK_US)
                        && at <= end.saturating_add(STAMP_SLACK_US)
                })
        })
    }

    fn unify_scalars(&self, vals: &[(&Value, usize)], key: Option<&str>, pointer: &str) -> Node {
        let n = vals.len();
        let observed_type = common_type(vals);
        let all_equal = vals.iter().all(|(v, _)| *v == vals[0].0);

        // 1. Echo: the value copies one request value wherever the request carried it. When
        //    some requests lacked it, those must all agree on one default value, which leads
        //    the examples (the engine's fallback when the request has no such value).
        if vals
            .iter()
            .any(|(v, _)| matches!(v, Value::String(s) if !s.is_empty()) || v.is_number())
            && let Some(hole) = self.echo(vals, observed_type, pointer)
        {
            return Node::Hole(hole);
        }
        // A boolean the request set at this very position (an update answering what was sent).
        if let Some(hole) = crate::same_path_echo::learn(vals, self.ctxs, pointer) {
            return Node::Hole(hole);
        }
        // A timestamp answered as the instant the request named, in its own spelling.
        if let Some(hole) = crate::instant_echo::learn(vals, self.ctxs, key) {
            return Node::Hole(hole);
        }
        if all_equal {
            // One observation of a timestamp under a time-like key: a clock, not a constant
            // (several observations that agree say the provider really answers a constant) —
            // unless every one of them names the moment its own exchange was answered: a run
            // of requests inside one second stamps one value, and it is still the clock.
            if key.is_some_and(values::is_time_key)
                && let Some(unit) = values::clock_unit(vals[0].0, key)
                && (n == 1 || self.stamped_when_answered(vals, &unit))
            {
                let after = crate::clock_after::learn(vals, self.ctxs, &unit);
                return Node::Hole(recorded_hole(
                    HoleKind::Clock { unit, after },
                    observed_type,
                    vals,
                    if n == 1 { 5_000 } else { 7_000 },
                ));
            }
            // Every answer named the one key its path named, in fixed text: the same echo.
            if let Some(hole) = self.echo_within(vals, true) {
                return Node::Hole(hole);
            }
            return Node::Const {
                value: vals[0].0.clone(),
            };
        }
        // 1b. A request value set in fixed text (an error message naming the requested id).
        if let Some(hole) = self.echo_within(vals, false) {
            return Node::Hole(hole);
        }
        // 1c. A request value without its leading marks (`#coolfree` answered `coolfree`).
        if let Some(hole) = self.echo_trimmed(vals, observed_type) {
            return Node::Hole(hole);
        }
        let plain: Vec<&Value> = vals.iter().map(|(v, _)| *v).collect();

        // 2. Clock.
        if let Some(unit) = values::clock_unit(plain[0], key)
            && plain
                .iter()
                .all(|v| values::clock_unit(v, key).is_some_and(|u| same_unit_kind(&u, &unit)))
        {
            let after = crate::clock_after::learn(vals, self.ctxs, &unit);
            return Node::Hole(recorded_hole(
                HoleKind::Clock { unit, after },
                observed_type,
                vals,
                9_000,
            ));
        }

        // 3. Counter.
        if n >= 3 {
            let ints: Vec<u64> = plain.iter().filter_map(|v| v.as_u64()).collect();
            if ints.len() == n && ints.windows(2).all(|w| w[1] == w[0].wrapping_add(1)) {
                return Node::Hole(recorded_hole(
                    HoleKind::Counter {
                        name: format!("{}{pointer}", self.counter_prefix),
                    },
                    observed_type,
                    vals,
                    7_000,
                ));
            }
        }

        // 4. Generated.
        // Fresh per response: at least half the values are distinct (a recurring handful of
        // ids — who posted — is observed data, not a generator); outside identifier-like keys,
        // every value must be distinct.
        let identifier = key.is_some_and(values::is_identifier_key);
        let distinct = distinct_count(&plain);
        if n >= 2
            && ((identifier && distinct * 2 >= n) || distinct == n)
            && let Some(shape) = values::learn_id_shape(&plain)
        {
            return Node::Hole(recorded_hole(
                HoleKind::Generated { shape },
                observed_type,
                vals,
                8_000,
            ));
        }

        // 5. Observed.
        Node::Hole(self.observed(vals, 3_000))
    }

    fn echo(
        &self,
        vals: &[(&Value, usize)],
        observed_type: JsonType,
        pointer: &str,
    ) -> Option<Hole> {
        let n = vals.len();
        let eligible = |v: &Value| matches!(v, Value::String(s) if !s.is_empty()) || v.is_number();
        // Candidates from the first observation that has any (among the first 64 eligible
        // values: a reply id is `null` in most posts, and those say nothing about its source).
        let mut candidates: Vec<EchoSource> = Vec::new();
        for (v, c) in vals.iter().filter(|(v, _)| eligible(v)).take(64) {
            if let Some(ctx) = self.ctxs.get(*c) {
                candidates = ctx.candidates(v);
                if !candidates.is_empty() {
                    break;
                }
            }
        }
        // Every candidate that holds is weighed, not just the first: one the requests sent at
        // the answer's own position wins, then the one the most requests carried (a firewall's
        // `outbound_policy` is the request's `outbound_policy`, not the first outbound rule's
        // `action` that happened to agree, which some requests did not send at all).
        let same_path = (!pointer.is_empty() && !pointer.split('/').any(|t| t == "*"))
            .then(|| crate::same_path_echo::request_pointer(vals, self.ctxs, pointer))
            .flatten()
            .map(|pointer| EchoSource::Body { pointer });
        let mut best: Option<(bool, usize, EchoSource, Option<&Value>)> = None;
        for src in candidates {
            let mut present = 0usize;
            let mut default: Option<&Value> = None;
            // Requests carrying the source whose answer held another value there.
            let mut missed = 0usize;
            // The answers to requests without the source held different values (a balancer
            // created without a label is named after its id).
            let mut scattered = false;
            // The distinct values the requests sent and got back (up to three).
            let mut sent: Vec<String> = Vec::new();
            for (v, c) in vals {
                match self.ctxs.get(*c).and_then(|ctx| ctx.lookup(&src)) {
                    Some(rv) => {
                        if !rv.matches(v) {
                            missed += 1;
                            continue;
                        }
                        present += 1;
                        if sent.len() < 3
                            && let Some(t) = rv.text()
                            && !sent.contains(&t)
                        {
                            sent.push(t);
                        }
                    }
                    None => match default {
                        None => default = Some(v),
                        Some(d) if d == *v => {}
                        Some(_) => scattered = true,
                    },
                }
            }
            let at_position = same_path.as_ref() == Some(&src);
            // A few requests answered otherwise (a disk's `size` the API adjusted for one
            // image) do not unmake an echo of the request value at the answer's own position
            // that three distinct values or more followed: at most one carrying request in
            // [`MAX_MISSED_ECHO_SHARE`]. Anywhere else one miss does.
            let holds = missed == 0
                || (at_position
                    && sent.len() >= 3
                    && missed * MAX_MISSED_ECHO_SHARE <= present + missed);
            if !holds || (present < n && present < 2) {
                continue;
            }
            // A short value every request sent alike, answered under another name, matched
            // by chance (a poll's `votes_count` of `0` beside a post's `sensitive=0`): nothing
            // shows the answer follows it.
            if let [one] = &sent[..]
                && one.chars().count() <= MAX_CHANCE_LEN
                && !same_name(&src, pointer)
            {
                continue;
            }
            // Without one default, only the request value at the answer's own position, sent
            // by most requests, is taken for an echo; a request without it is answered the
            // first recorded value a request without it got.
            if scattered && !(at_position && present * 2 >= n) {
                continue;
            }
            let better = best
                .as_ref()
                .is_none_or(|(pos, p, _, _)| (at_position, present) > (*pos, *p));
            if better {
                best = Some((at_position, present, src, default));
            }
        }
        best.map(|(_, present, src, default)| {
            let mut examples = Vec::new();
            if let Some(d) = default {
                examples.push(d.clone());
            }
            for e in crate::unify::examples(vals) {
                if examples.len() >= MAX_EXAMPLES {
                    break;
                }
                if !examples.contains(&e) {
                    examples.push(e);
                }
            }
            let confidence_bp = if present == n && n >= 2 {
                10_000
            } else if present == n {
                6_000
            } else {
                ((present as u64 * 10_000) / n as u64) as u32
            };
            Hole {
                source: HoleKind::Echo { from: src },
                observed_type,
                examples,
                more_examples: Vec::new(),
                examples_cut: false,
                confidence_bp,
                when_absent: None,
                keyed: None,
            }
        })
    }

    fn observed(&self, vals: &[(&Value, usize)], confidence_bp: u32) -> Hole {
        // Every distinct recorded value (up to the cap) for the judge; the first
        // `MAX_EXAMPLES` are the ones rendered.
        let (mut recorded, mut cut) = recorded_values(vals);
        let when_absent = self.when_absent(vals);
        // The value rendered for a request without the field must be a rendered example too
        // (it leads them, as it did when only the examples were kept).
        if let Some(w) = &when_absent
            && !recorded.iter().take(MAX_EXAMPLES).any(|v| *v == w.value)
        {
            recorded.retain(|v| *v != w.value);
            recorded.insert(0, w.value.clone());
            if recorded.len() > MAX_RECORDED_VALUES {
                recorded.truncate(MAX_RECORDED_VALUES);
                cut = true;
            }
        }
        let more_examples = recorded.split_off(recorded.len().min(MAX_EXAMPLES));
        Hole {
            source: HoleKind::Observed,
            observed_type: common_type(vals),
            examples: recorded,
            more_examples,
            examples_cut: cut,
            confidence_bp,
            when_absent,
            keyed: crate::request_keying::learn(vals, self.ctxs, self.keying),
        }
    }

    /// The request field whose absence fixed this position's value: among the top-level
    /// body fields and query parameters of the observations' requests, one such that every
    /// observation (at least [`MIN_ABSENT_SUPPORT`]) whose request lacked it held one value
    /// here, while some observation whose request carried it held another. The field lacked by
    /// the most observations wins (then the first in sorted order): a rarer field that also
    /// qualifies explains fewer answers. `None` when no field explains the value.
    fn when_absent(&self, vals: &[(&Value, usize)]) -> Option<Box<WhenAbsent>> {
        let mut fields: std::collections::BTreeSet<EchoSource> = std::collections::BTreeSet::new();
        for (_, c) in vals {
            let Some(ctx) = self.ctxs.get(*c) else {
                continue;
            };
            for (pointer, _) in ctx.body {
                fields.insert(EchoSource::Body {
                    pointer: top_level(pointer).to_string(),
                });
            }
            for (name, _) in ctx.query {
                fields.insert(EchoSource::Query { name: name.clone() });
            }
            if fields.len() > MAX_ABSENT_FIELDS {
                // A request carrying many fields (free-form documents): no one of them is a
                // switch worth learning.
                return None;
            }
        }
        let mut best: Option<(usize, WhenAbsent)> = None;
        for field in fields {
            let mut value: Option<&Value> = None;
            let mut absent = 0usize;
            let mut differs = false;
            let mut holds = true;
            for (v, c) in vals {
                let has = self.ctxs.get(*c).is_some_and(|ctx| ctx.carries(&field));
                if has {
                    continue;
                }
                match value {
                    None => value = Some(v),
                    Some(d) if d == *v => {}
                    Some(_) => {
                        holds = false;
                        break;
                    }
                }
                absent += 1;
            }
            let Some(value) = value else { continue };
            if !holds || absent < MIN_ABSENT_SUPPORT {
                continue;
            }
            for (v, c) in vals {
                if self.ctxs.get(*c).is_some_and(|ctx| ctx.carries(&field)) && *v != value {
                    differs = true;
                    break;
                }
            }
            if differs && best.as_ref().is_none_or(|(n, _)| absent > *n) {
                best = Some((
                    absent,
                    WhenAbsent {
                        field,
                        value: value.clone(),
                        embeds: None,
                    },
                ));
            }
        }
        best.map(|(_, w)| Box::new(w))
    }
}

/// Turn observed string fields that embed a generated or echoed sibling's value into derived
/// holes: fields of the object itself, and fields of the objects it holds, down to
/// [`MAX_DERIVED_DEPTH`] levels (a database's `hosts.primary` names the database's `id`).
fn derive_embedded(fields: &mut [Field], vals: &[(&Value, usize)]) {
    let siblings: Vec<String> = fields
        .iter()
        .filter(|f| match &f.value {
            Node::Hole(Hole {
                source: HoleKind::Generated { shape },
                ..
            }) => !matches!(shape, IdShape::Derived { .. }),
            Node::Hole(Hole {
                source: HoleKind::Echo { .. },
                ..
            }) => true,
            _ => false,
        })
        .map(|f| f.key.clone())
        .collect();
    if siblings.is_empty() {
        return;
    }
    let mut path = Vec::new();
    derive_at(fields, vals, &siblings, &mut path);
}

/// Most object levels below a generated sibling a derived field may sit.
const MAX_DERIVED_DEPTH: usize = 2;

/// [`derive_embedded`] for the fields of the object at `path` below the one holding
/// `siblings` (`path` empty: that object itself).
fn derive_at<'f>(
    fields: &'f mut [Field],
    vals: &[(&Value, usize)],
    siblings: &[String],
    path: &mut Vec<&'f str>,
) {
    for f in fields.iter_mut() {
        match &mut f.value {
            Node::Object { fields: inner } if path.len() < MAX_DERIVED_DEPTH => {
                path.push(f.key.as_str());
                derive_at(inner, vals, siblings, path);
                path.pop();
            }
            Node::Hole(hole)
                if hole.source == HoleKind::Observed && hole.observed_type == JsonType::String =>
            {
                path.push(f.key.as_str());
                let found = siblings
                    .iter()
                    .find_map(|sib| embedding(vals, path, sib).map(|e| (sib.clone(), e)));
                path.pop();
                if let Some((sibling, e)) = found {
                    hole.source = HoleKind::Generated {
                        shape: IdShape::Derived {
                            sibling,
                            prefixes: e.prefixes,
                            suffix: e.suffix,
                            other_suffixes: e.other_suffixes,
                            up: path.len() as u8,
                        },
                    };
                    hole.confidence_bp = 8_000;
                    // The judge holds a generated value to its shape, not to the recorded set.
                    hole.more_examples.clear();
                    hole.examples_cut = false;
                }
            }
            _ => {}
        }
    }
}

/// Shortest sibling value worth finding inside another string (shorter ones match by chance).
const MIN_EMBEDDED_LEN: usize = 4;

/// How the recorded examples of a field embedded a sibling's value.
#[derive(Debug, PartialEq)]
struct Embedding {
    /// Distinct prefixes, first seen first (at most [`MAX_EXAMPLES`]).
    prefixes: Vec<String>,
    /// The most common suffix (the first seen among equally common ones).
    suffix: String,
    /// The other distinct suffixes, first seen first.
    other_suffixes: Vec<String>,
}

/// When every object holding a field at `path` (a key, or keys into the objects it holds) had
/// a string there that embeds its `sibling`'s value (the last occurrence), in at least two objects with distinct sibling values, and what followed
/// the value was one of a few recurring suffixes (at most [`MAX_EXAMPLES`] distinct ones, and
/// fewer than the distinct sibling values, so a suffix is a pattern rather than per-object
/// text): the prefixes and suffixes.
fn embedding(vals: &[(&Value, usize)], path: &[&str], sibling: &str) -> Option<Embedding> {
    let mut prefixes: Vec<String> = Vec::new();
    // Distinct suffixes, first seen first, with how many examples ended with each.
    let mut suffixes: Vec<(&str, usize)> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    for (v, _) in vals {
        let Some(obj) = v.as_object() else {
            continue;
        };
        let Some(field) = path.iter().try_fold(*v, |o: &Value, k| o.get(*k)) else {
            continue;
        };
        let text = field.as_str()?;
        let id = match obj.get(sibling)? {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => return None,
        };
        if id.len() < MIN_EMBEDDED_LEN {
            return None;
        }
        let at = text.rfind(&id)?;
        let rest = &text[at + id.len()..];
        match suffixes.iter_mut().find(|(s, _)| *s == rest) {
            Some((_, n)) => *n += 1,
            None => {
                if suffixes.len() >= MAX_EXAMPLES {
                    return None;
                }
                suffixes.push((rest, 1));
            }
        }
        let prefix = &text[..at];
        if prefixes.len() < MAX_EXAMPLES && !prefixes.iter().any(|p| p == prefix) {
            prefixes.push(prefix.to_string());
        }
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if ids.len() < 2 || (suffixes.len() > 1 && suffixes.len() >= ids.len()) {
        return None;
    }
    // Most common first; `max_by_key` keeps the last maximum, so scan in reverse to keep the
    // first seen among equals.
    let (best, _) = suffixes
        .iter()
        .enumerate()
        .rev()
        .max_by_key(|(_, (_, n))| *n)?;
    let suffix = suffixes[best].0.to_string();
    let other_suffixes = suffixes
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != best)
        .map(|(_, (s, _))| (*s).to_string())
        .collect();
    Some(Embedding {
        prefixes,
        suffix,
        other_suffixes,
    })
}

fn same_unit_kind(a: &wraith_model::ClockUnit, b: &wraith_model::ClockUnit) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

fn common_type(vals: &[(&Value, usize)]) -> JsonType {
    let first = JsonType::of(vals[0].0);
    if vals.iter().all(|(v, _)| JsonType::of(v) == first) {
        first
    } else {
        JsonType::Mixed
    }
}

/// How many distinct JSON texts the values serialize to. A string's text is its content quoted
/// and escaped, so strings are told apart by their content without serializing them (and no
/// other value's text starts with a quote).
/// A hole of `source` whose examples are the values of `vals` (none kept past them, no
/// default, no request keying).
pub(crate) fn recorded_hole(
    source: HoleKind,
    observed_type: JsonType,
    vals: &[(&Value, usize)],
    confidence_bp: u32,
) -> Hole {
    Hole {
        source,
        observed_type,
        examples: examples(vals),
        more_examples: Vec::new(),
        examples_cut: false,
        confidence_bp,
        when_absent: None,
        keyed: None,
    }
}

/// Longest value (in characters) that a request sending it alike every time, under another
/// name than the answer's, may have sent by chance equal to the answer.
const MAX_CHANCE_LEN: usize = 2;

/// Whether a request source has the name of the answer position at `pointer` (its last
/// token): a sent `visibility` answered as `visibility`. A path parameter, a header or a
/// derived source counts as named so: the rule of [`MAX_CHANCE_LEN`] is for body fields and
/// query parameters.
fn same_name(src: &EchoSource, pointer: &str) -> bool {
    let answered = pointer.rsplit('/').next().unwrap_or_default();
    let sent = match src {
        EchoSource::Body { pointer } => pointer.rsplit('/').next().unwrap_or_default(),
        EchoSource::Query { name } => name.trim_end_matches("[]"),
        // A path names the record the answer is (`/polls/1` answered `id: "1"`).
        EchoSource::Path { .. }
        | EchoSource::Header { .. }
        | EchoSource::Within { .. }
        | EchoSource::Instant { .. }
        | EchoSource::Trimmed { .. } => return true,
    };
    sent == answered
}

/// [`distinct_count`] of the values of `vals`.
fn distinct_count_of(vals: &[(&Value, usize)]) -> usize {
    let plain: Vec<&Value> = vals.iter().map(|(v, _)| *v).collect();
    distinct_count(&plain)
}

fn distinct_count(plain: &[&Value]) -> usize {
    let mut strings: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut others: std::collections::HashSet<String> = std::collections::HashSet::new();
    for v in plain {
        match v {
            Value::String(s) => {
                strings.insert(s.as_str());
            }
            other => {
                others.insert(other.to_string());
            }
        }
    }
    strings.len() + others.len()
}

/// Distinct values, first seen first, at most [`MAX_RECORDED_VALUES`], and whether more distinct
/// values were recorded than that. A string equals only a string of the same content, so
/// strings are looked up by content instead of against every value kept.
fn recorded_values(vals: &[(&Value, usize)]) -> (Vec<Value>, bool) {
    let mut out: Vec<Value> = Vec::new();
    let mut strings: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (v, _) in vals {
        let seen = match v {
            Value::String(s) => strings.contains(s.as_str()),
            _ => out.iter().any(|o| o == *v),
        };
        if seen {
            continue;
        }
        if out.len() >= MAX_RECORDED_VALUES {
            return (out, true);
        }
        if let Value::String(s) = v {
            strings.insert(s.as_str());
        }
        out.push((*v).clone());
    }
    (out, false)
}

/// The median length of the observed arrays (the lower one of an even count).
fn median_length(arrays: &[(&Vec<Value>, usize)]) -> usize {
    let mut lengths: Vec<usize> = arrays.iter().map(|(a, _)| a.len()).collect();
    lengths.sort_unstable();
    lengths
        .get(lengths.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0)
}

/// Distinct values, first seen first, at most [`MAX_EXAMPLES`].
fn examples(vals: &[(&Value, usize)]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for (v, _) in vals {
        if out.len() >= MAX_EXAMPLES {
            break;
        }
        if !out.iter().any(|o| o == *v) {
            out.push((*v).clone());
        }
    }
    out
}

/// Below this many values under a node, its children are unified on the calling thread: handing
/// them to other cores costs more than it saves.
const PARALLEL_VALUES: usize = 2048;

/// `items` mapped by `f`, in order; on the cores when the node holds at least
/// [`PARALLEL_VALUES`] values (`values`). The result is the same either way.
fn in_order<T: Send, R: Send>(
    items: Vec<T>,
    values: usize,
    f: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    if values >= PARALLEL_VALUES && items.len() > 1 {
        items.into_par_iter().map(f).collect()
    } else {
        items.into_iter().map(f).collect()
    }
}

/// A signature grouping array items of one shape: objects by their sorted key set,
/// everything else by JSON type.
pub fn shape_signature(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let keys: BTreeMap<&str, ()> = map.keys().map(|k| (k.as_str(), ())).collect();
            let mut s = String::from("{");
            for k in keys.keys() {
                s.push_str(k);
                s.push(',');
            }
            s
        }
        other => format!("{:?}", JsonType::of(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Automatic request keying, for [`unifier`].
    static AUTO_KEYING: crate::request_keying::RouteKeying =
        crate::request_keying::RouteKeying::AUTO;

    /// A unifier over `ctxs` with automatic request keying and no list items.
    fn unifier<'a>(ctxs: &'a [Ctx<'a>]) -> Unifier<'a> {
        Unifier {
            ctxs,
            counter_prefix: "r".into(),
            keying: &AUTO_KEYING,
            list_items: None,
        }
    }

    fn ctx<'a>(
        params: &[(&str, &str)],
        query: &'a [(String, String)],
        body: &'a [(String, Value)],
    ) -> Ctx<'a> {
        Ctx {
            params: params
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            query,
            body,
            session: "s",
            answered: None,
            obs: None,
        }
    }

    #[test]
    fn equal_values_are_constants_and_differing_ids_are_generated() {
        let ctxs = vec![ctx(&[], &[], &[]), ctx(&[], &[], &[])];
        let u = unifier(&ctxs);
        let a = json!({"object": "customer", "id": "cus_0000000001ab"});
        let b = json!({"object": "customer", "id": "cus_0000000002cd"});
        let node = u.unify(&[(&a, 0), (&b, 1)], None, "");
        let Node::Object { fields } = node else {
            panic!("object expected")
        };
        assert_eq!(
            fields[0].value,
            Node::Const {
                value: json!("customer")
            }
        );
        assert!(matches!(
            &fields[1].value,
            Node::Hole(Hole {
                source: HoleKind::Generated { .. },
                ..
            })
        ));
    }

    #[test]
    fn body_field_copies_are_echoes() {
        let b1 = vec![("/email".to_string(), json!("a@x.test"))];
        let b2 = vec![("/email".to_string(), json!("b@x.test"))];
        let ctxs = vec![ctx(&[], &[], &b1), ctx(&[], &[], &b2)];
        let u = unifier(&ctxs);
        let v1 = json!("a@x.test");
        let v2 = json!("b@x.test");
        let node = u.unify(&[(&v1, 0), (&v2, 1)], Some("email"), "/email");
        assert!(matches!(
            node,
            Node::Hole(Hole {
                source: HoleKind::Echo {
                    from: EchoSource::Body { .. }
                },
                ..
            })
        ));
    }

    fn is_echo(node: &Node) -> bool {
        matches!(
            node,
            Node::Hole(Hole {
                source: HoleKind::Echo { .. },
                ..
            })
        )
    }

    /// Ten disks created with the sizes `sizes`, answered `answered`.
    fn sizes_node(sizes: &[i64], answered: &[i64], pointer: &str) -> Node {
        let bodies: Vec<Vec<(String, Value)>> = sizes
            .iter()
            .map(|s| vec![("/size".to_string(), json!(s))])
            .collect();
        let ctxs: Vec<Ctx<'_>> = bodies.iter().map(|b| ctx(&[], &[], b)).collect();
        let u = unifier(&ctxs);
        let vals: Vec<Value> = answered.iter().map(|a| json!(a)).collect();
        let refs: Vec<(&Value, usize)> = vals.iter().enumerate().map(|(i, v)| (v, i)).collect();
        u.unify(&refs, Some(pointer.trim_start_matches('/')), pointer)
    }

    #[test]
    fn an_echo_at_its_own_position_holds_though_one_request_in_ten_got_another_value() {
        let sizes = [512, 512, 18, 1024, 2000, 2000, 2000, 2000, 2000, 2000];
        let mut answered = sizes;
        answered[5] = 1778;
        let node = sizes_node(&sizes, &answered, "/size");
        let Node::Hole(hole) = node else {
            panic!("a hole: {node:?}");
        };
        assert_eq!(
            hole.source,
            HoleKind::Echo {
                from: EchoSource::Body {
                    pointer: "/size".into()
                }
            }
        );
        assert_eq!(hole.confidence_bp, 9_000);
        // Two misses in ten, or one under another name, and the answer does not follow the
        // request there.
        answered[6] = 1779;
        let node = sizes_node(&sizes, &answered, "/size");
        assert!(!is_echo(&node), "{node:?}");
        answered[6] = 2000;
        let node = sizes_node(&sizes, &answered, "/capacity");
        assert!(!is_echo(&node), "{node:?}");
    }

    #[test]
    fn a_short_value_every_request_sent_alike_under_another_name_is_no_echo() {
        // Every post sent `sensitive=0`, and every new poll counted `0` votes.
        let sent = vec![("/sensitive".to_string(), json!("0"))];
        let ctxs = vec![ctx(&[], &[], &sent), ctx(&[], &[], &sent)];
        let u = unifier(&ctxs);
        let zero = json!(0);
        let node = u.unify(
            &[(&zero, 0), (&zero, 1)],
            Some("votes_count"),
            "/votes_count",
        );
        assert_eq!(node, Node::Const { value: json!(0) });
        // Under its own name the same value is answered as sent.
        let node = u.unify(&[(&zero, 0), (&zero, 1)], Some("sensitive"), "/sensitive");
        assert!(matches!(
            node,
            Node::Hole(Hole {
                source: HoleKind::Echo { .. },
                ..
            })
        ));
        // Sent values that differ, each answered, show the answer follows them.
        let other = vec![("/sensitive".to_string(), json!("1"))];
        let ctxs = vec![ctx(&[], &[], &sent), ctx(&[], &[], &other)];
        let u = unifier(&ctxs);
        let one = json!(1);
        let node = u.unify(&[(&zero, 0), (&one, 1)], Some("flagged"), "/flagged");
        assert!(matches!(
            node,
            Node::Hole(Hole {
                source: HoleKind::Echo { .. },
                ..
            })
        ));
    }

    #[test]
    fn an_echo_prefers_the_request_value_at_its_own_position_over_an_earlier_agreeing_one() {
        // Each request sent the policy `ACCEPT` beside a rule whose action was `ACCEPT` too
        // (the rule list comes first); the last sent no rule at all.
        let rule = |policy: &str| {
            vec![
                ("/rules/outbound/0/action".to_string(), json!("ACCEPT")),
                ("/rules/outbound_policy".to_string(), json!(policy)),
            ]
        };
        let (b1, b2) = (rule("ACCEPT"), rule("ACCEPT"));
        let b3 = vec![("/rules/outbound_policy".to_string(), json!("ACCEPT"))];
        let ctxs = vec![ctx(&[], &[], &b1), ctx(&[], &[], &b2), ctx(&[], &[], &b3)];
        let u = unifier(&ctxs);
        let v = json!("ACCEPT");
        let node = u.unify(
            &[(&v, 0), (&v, 1), (&v, 2)],
            Some("outbound_policy"),
            "/rules/outbound_policy",
        );
        let Node::Hole(Hole {
            source: HoleKind::Echo { from },
            ..
        }) = node
        else {
            panic!("not an echo: {node:?}");
        };
        assert_eq!(
            from,
            EchoSource::Body {
                pointer: "/rules/outbound_policy".into()
            }
        );
    }

    #[test]
    fn an_echo_at_its_own_position_holds_though_requests_without_it_got_values_of_their_own() {
        let sent = |label: &str| vec![("/label".to_string(), json!(label))];
        let (b1, b2, b3) = (sent("web"), sent("db"), sent("web"));
        let none: Vec<(String, Value)> = vec![("/region".to_string(), json!("eu"))];
        let ctxs = vec![
            ctx(&[], &[], &b1),
            ctx(&[], &[], &none),
            ctx(&[], &[], &b2),
            ctx(&[], &[], &none),
            ctx(&[], &[], &b3),
        ];
        let u = unifier(&ctxs);
        let (web, db) = (json!("web"), json!("db"));
        let (n1, n2) = (json!("balancer501"), json!("balancer503"));
        let vals = [(&web, 0), (&n1, 1), (&db, 2), (&n2, 3), (&web, 4)];
        let Node::Hole(hole) = u.unify(&vals, Some("label"), "/label") else {
            panic!("a hole");
        };
        assert_eq!(
            hole.source,
            HoleKind::Echo {
                from: EchoSource::Body {
                    pointer: "/label".into()
                }
            }
        );
        // A request without a label gets the first value one without it got.
        assert_eq!(hole.examples[0], n1);
        // Sent by fewer than half the requests: no echo.
        let vals = [(&web, 0), (&n1, 1), (&db, 2), (&n2, 3), (&n1, 1)];
        let node = u.unify(&vals, Some("label"), "/label");
        assert!(
            !matches!(
                node,
                Node::Hole(Hole {
                    source: HoleKind::Echo { .. },
                    ..
                })
            ),
            "{node:?}"
        );
    }

    #[test]
    fn an_echo_source_is_found_past_many_values_that_were_null() {
        // A reply id: `null` in most posts, the request's `in_reply_to_id` in the replies.
        let none: Vec<(String, Value)> = vec![("/status".to_string(), json!("hi"))];
        let r1 = vec![("/in_reply_to_id".to_string(), json!("1001"))];
        let r2 = vec![("/in_reply_to_id".to_string(), json!("1002"))];
        let mut ctxs: Vec<Ctx<'_>> = (0..70).map(|_| ctx(&[], &[], &none)).collect();
        ctxs.push(ctx(&[], &[], &r1));
        ctxs.push(ctx(&[], &[], &r2));
        let u = unifier(&ctxs);
        let null = Value::Null;
        let (a, b) = (json!("1001"), json!("1002"));
        let mut vals: Vec<(&Value, usize)> = (0..70).map(|i| (&null, i)).collect();
        vals.push((&a, 70));
        vals.push((&b, 71));
        let Node::Hole(hole) = u.unify(&vals, Some("in_reply_to_id"), "/in_reply_to_id") else {
            panic!("hole expected")
        };
        assert_eq!(
            hole.source,
            HoleKind::Echo {
                from: EchoSource::Body {
                    pointer: "/in_reply_to_id".into()
                }
            }
        );
        assert_eq!(
            hole.examples.first(),
            Some(&Value::Null),
            "the default leads"
        );
    }

    /// `created` answered as `value` by three creates, each answered inside `window(i)`.
    fn created_of(value: Value, window: impl Fn(u64) -> Option<(u64, u64)>) -> Node {
        let ctxs: Vec<Ctx<'_>> = (0..3)
            .map(|i| Ctx {
                answered: window(i),
                obs: None,
                ..ctx(&[], &[], &[])
            })
            .collect();
        let u = unifier(&ctxs);
        let vals: Vec<(&Value, usize)> = (0..3).map(|i| (&value, i)).collect();
        u.unify(&vals, Some("created"), "/created")
    }

    /// 2026-01-01T00:00:01Z, in unix seconds.
    const STAMPED: u64 = 1_767_225_601;

    #[test]
    fn one_timestamp_every_answer_stamped_inside_its_window_is_a_clock() {
        // Three creates inside one second: the one value they agree on is still "now".
        let at = |i: u64| {
            Some((
                STAMPED * 1_000_000 + i * 1_000,
                STAMPED * 1_000_000 + i * 1_000 + 500,
            ))
        };
        let node = created_of(json!(STAMPED), at);
        assert!(
            matches!(
                &node,
                Node::Hole(Hole {
                    source: HoleKind::Clock {
                        unit: wraith_model::ClockUnit::EpochSec,
                        ..
                    },
                    ..
                })
            ),
            "{node:?}"
        );
        let iso = created_of(json!("2026-01-01T00:00:01.000Z"), at);
        assert!(
            matches!(
                &iso,
                Node::Hole(Hole {
                    source: HoleKind::Clock { .. },
                    ..
                })
            ),
            "{iso:?}"
        );
    }

    #[test]
    fn one_timestamp_far_from_when_it_was_answered_stays_a_constant() {
        // The same value read a day later (a record's creation time), or with no timing.
        let day_later = |_| {
            Some((
                (STAMPED + 86_400) * 1_000_000,
                (STAMPED + 86_400) * 1_000_000,
            ))
        };
        let later = created_of(json!(STAMPED), day_later);
        assert!(matches!(later, Node::Const { .. }), "{later:?}");
        let untimed = created_of(json!(STAMPED), |_| None);
        assert!(matches!(untimed, Node::Const { .. }), "{untimed:?}");
        // One of three answered a day later: not every answer was stamped then.
        let mixed = created_of(json!(STAMPED), |i| {
            let t = if i == 2 { STAMPED + 86_400 } else { STAMPED };
            Some((t * 1_000_000, t * 1_000_000))
        });
        assert!(matches!(mixed, Node::Const { .. }), "{mixed:?}");
    }

    /// `answers` (observation `i` answering the `i`-th) unified at `pointer` under `key`.
    fn unify_strings(ctxs: &[Ctx<'_>], answers: &[String], key: &str, pointer: &str) -> Node {
        let u = unifier(ctxs);
        let values: Vec<Value> = answers.iter().map(|a| json!(a)).collect();
        let vals: Vec<(&Value, usize)> = values.iter().enumerate().map(|(i, v)| (v, i)).collect();
        u.unify(&vals, Some(key), pointer)
    }

    /// `message` answers of reads of `ids`, each request naming its id in the path.
    fn messages_of(ids: &[&str], message: impl Fn(&str) -> String) -> Node {
        let ctxs: Vec<Ctx<'_>> = ids.iter().map(|id| ctx(&[("id", id)], &[], &[])).collect();
        let answers: Vec<String> = ids.iter().map(|id| message(id)).collect();
        unify_strings(&ctxs, &answers, "message", "/error/message")
    }

    #[test]
    fn a_message_naming_each_requested_id_echoes_it_within_its_text() {
        let node = messages_of(&["cus_0001", "cus_0002"], |id| {
            format!("No such customer: '{id}'")
        });
        let Node::Hole(hole) = node else {
            panic!("hole expected: {node:?}")
        };
        assert_eq!(
            hole.source,
            HoleKind::Echo {
                from: EchoSource::Within {
                    source: Box::new(EchoSource::Path { param: "id".into() }),
                    prefix: "No such customer: '".into(),
                    suffix: "'".into(),
                }
            }
        );
    }

    /// `answer(sent)` for each name sent in a form body's `name`, unified at `key`.
    fn named(sent: &[&str], key: &str, answer: impl Fn(&str) -> String) -> Node {
        let bodies: Vec<Vec<(String, Value)>> = sent
            .iter()
            .map(|n| vec![("/name".to_string(), json!(n))])
            .collect();
        let ctxs: Vec<Ctx<'_>> = bodies.iter().map(|b| ctx(&[], &[], b)).collect();
        let answers: Vec<String> = sent.iter().map(|n| answer(n)).collect();
        unify_strings(&ctxs, &answers, key, &format!("/{key}"))
    }

    #[test]
    fn a_name_answered_without_its_leading_marks_echoes_it_trimmed_in_text_too() {
        let strip = |n: &str| n.trim_start_matches('#').to_string();
        let trimmed = EchoSource::Trimmed {
            source: Box::new(EchoSource::Body {
                pointer: "/name".into(),
            }),
        };
        let Node::Hole(name) = named(&["ringtones", "#coolfree"], "name", strip) else {
            panic!("hole expected")
        };
        assert_eq!(
            name.source,
            HoleKind::Echo {
                from: trimmed.clone()
            }
        );
        let url = |n: &str| format!("https://social.test/tagged/{}", strip(n));
        let Node::Hole(url) = named(&["ringtones", "#coolfree"], "url", url) else {
            panic!("hole expected")
        };
        assert_eq!(
            url.source,
            HoleKind::Echo {
                from: EchoSource::Within {
                    source: Box::new(trimmed),
                    prefix: "https://social.test/tagged/".into(),
                    suffix: String::new(),
                }
            }
        );
        // Names sent without marks are a plain echo; a name answered otherwise is no echo.
        let Node::Hole(plain) = named(&["ringtones", "coolfree"], "name", strip) else {
            panic!("hole expected")
        };
        assert_eq!(
            plain.source,
            HoleKind::Echo {
                from: EchoSource::Body {
                    pointer: "/name".into()
                }
            }
        );
        let Node::Hole(other) = named(&["#ringtones", "#coolfree"], "name", |n| {
            if n.contains("ring") { "alpha" } else { "beta" }.to_string()
        }) else {
            panic!("hole expected")
        };
        assert!(
            !matches!(other.source, HoleKind::Echo { .. }),
            "{:?}",
            other.source
        );
    }

    #[test]
    fn a_message_naming_one_keylike_path_value_echoes_it_within_its_text() {
        let node = messages_of(&["cus_DolzNQrqO2mPIG"], |id| {
            format!("No such customer: '{id}'")
        });
        let Node::Hole(hole) = node else {
            panic!("hole expected: {node:?}")
        };
        assert!(
            matches!(&hole.source, HoleKind::Echo { from: EchoSource::Within { prefix, .. } }
                if prefix == "No such customer: '"),
            "{hole:?}"
        );
        // A word, however long, is not a key: one answer does not tell it from a constant.
        let word = messages_of(&["marketing"], |id| format!("Team {id} is full"));
        assert!(matches!(word, Node::Const { .. }), "{word:?}");
    }

    #[test]
    fn a_url_ending_in_one_path_value_echoes_it_within_the_url() {
        let node = messages_of(&["heeho"], |name| {
            format!("http://localhost:3000/tags/{name}")
        });
        let Node::Hole(hole) = node else {
            panic!("hole expected: {node:?}")
        };
        assert_eq!(
            hole.source,
            HoleKind::Echo {
                from: EchoSource::Within {
                    source: Box::new(EchoSource::Path { param: "id".into() }),
                    prefix: "http://localhost:3000/tags/".into(),
                    suffix: String::new(),
                }
            }
        );
        // Inside the URL, or in text that is no URL, one word is not told from a constant.
        let inside = messages_of(&["heeho"], |name| {
            format!("http://localhost:3000/tags/{name}/feed")
        });
        assert!(matches!(inside, Node::Const { .. }), "{inside:?}");
        let text = messages_of(&["heeho"], |name| format!("followed/{name}"));
        assert!(matches!(text, Node::Const { .. }), "{text:?}");
    }

    #[test]
    fn text_around_a_request_value_is_not_learned_from_one_value_or_changing_text() {
        // One distinct short id: nothing tells the id from text that merely contains it.
        let once = messages_of(&["cus_001", "cus_001"], |id| {
            format!("No such customer: '{id}'")
        });
        assert!(matches!(once, Node::Const { .. }), "{once:?}");
        // The text around the id differs between answers.
        let changing = messages_of(&["cus_0001", "cus_0002"], |id| {
            if id.ends_with('1') {
                format!("No such customer: '{id}'")
            } else {
                format!("Customer {id} was deleted")
            }
        });
        assert!(
            !matches!(
                changing,
                Node::Hole(Hole {
                    source: HoleKind::Echo { .. },
                    ..
                })
            ),
            "{changing:?}"
        );
    }

    /// `n` distinct values (`host-0`, ...) each recorded twice, in order, on requests that
    /// carried nothing: an observed hole.
    fn observed_hole_of(n: usize) -> Hole {
        let values: Vec<Value> = (0..n).map(|i| json!(format!("host-{i}"))).collect();
        let vals: Vec<(&Value, usize)> = values
            .iter()
            .flat_map(|v| [v, v])
            .enumerate()
            .map(|(i, v)| (v, i))
            .collect();
        let ctxs: Vec<Ctx<'_>> = (0..vals.len()).map(|_| ctx(&[], &[], &[])).collect();
        let u = unifier(&ctxs);
        let Node::Hole(hole) = u.unify(&vals, Some("host_uuid"), "/host_uuid") else {
            panic!("hole expected")
        };
        assert_eq!(hole.source, HoleKind::Observed);
        hole
    }

    #[test]
    fn an_observed_hole_keeps_every_recorded_value_past_the_rendered_examples() {
        let hole = observed_hole_of(20);
        let name = |i: usize| json!(format!("host-{i}"));
        // The rendered examples are the first 8 seen, as before; the other 12 follow in order.
        assert_eq!(hole.examples, (0..8).map(name).collect::<Vec<_>>());
        assert_eq!(hole.more_examples, (8..20).map(name).collect::<Vec<_>>());
        assert!(!hole.examples_cut);
        // Eight or fewer: nothing more, nothing cut.
        let hole = observed_hole_of(8);
        assert_eq!(hole.examples.len(), 8);
        assert!(hole.more_examples.is_empty() && !hole.examples_cut);
    }

    #[test]
    fn an_observed_hole_with_more_recorded_values_than_the_cap_says_it_was_cut() {
        let hole = observed_hole_of(MAX_RECORDED_VALUES + 1);
        assert_eq!(
            hole.examples.len() + hole.more_examples.len(),
            MAX_RECORDED_VALUES
        );
        assert_eq!(
            hole.more_examples.last(),
            Some(&json!(format!("host-{}", MAX_RECORDED_VALUES - 1)))
        );
        assert!(hole.examples_cut);
        // Exactly the cap: all kept, not cut.
        let hole = observed_hole_of(MAX_RECORDED_VALUES);
        assert_eq!(
            hole.examples.len() + hole.more_examples.len(),
            MAX_RECORDED_VALUES
        );
        assert!(!hole.examples_cut);
    }

    #[test]
    fn an_observed_value_fixed_by_a_missing_request_field_is_learned() {
        // `quote` is null whenever the post named no `quoted_id`, an object when it did; the
        // always-present `status` field explains nothing.
        let plain = vec![("/status".to_string(), json!("hi"))];
        let quoted = vec![
            ("/status".to_string(), json!("look")),
            ("/quoted_id".to_string(), json!("9")),
            ("/poll/options/0".to_string(), json!("a")),
        ];
        let ctxs = vec![
            ctx(&[], &[], &plain),
            ctx(&[], &[], &plain),
            ctx(&[], &[], &plain),
            ctx(&[], &[], &quoted),
        ];
        let u = unifier(&ctxs);
        let (null, q) = (Value::Null, json!({"id": "9"}));
        let vals = [(&null, 0), (&null, 1), (&null, 2), (&q, 3)];
        let Node::Hole(hole) = u.unify(&vals, Some("quote"), "/quote") else {
            panic!("hole expected")
        };
        assert_eq!(hole.source, HoleKind::Observed);
        let w = hole.when_absent.expect("learned");
        assert_eq!(w.value, Value::Null);
        // `/poll` and `/quoted_id` both explain it equally; the first in sorted order wins.
        assert_eq!(
            w.field,
            EchoSource::Body {
                pointer: "/poll".into()
            }
        );
        // Values that differ among requests without the field: nothing learned.
        let other = json!({"id": "8"});
        let vals = [(&null, 0), (&other, 1), (&null, 2), (&q, 3)];
        let Node::Hole(hole) = u.unify(&vals, Some("quote"), "/quote") else {
            panic!("hole expected")
        };
        assert_eq!(hole.when_absent, None);
    }

    #[test]
    fn variable_length_arrays_become_lists_with_median_length() {
        let ctxs = vec![ctx(&[], &[], &[]), ctx(&[], &[], &[]), ctx(&[], &[], &[])];
        let u = unifier(&ctxs);
        let a = json!([{"id": 1}]);
        let b = json!([{"id": 2}, {"id": 3}, {"id": 4}]);
        let c = json!([{"id": 5}, {"id": 6}]);
        let node = u.unify(&[(&a, 0), (&b, 1), (&c, 2)], None, "");
        let Node::Array(ArrayNode::List {
            representatives,
            target_length,
            discriminator,
        }) = node
        else {
            panic!("list expected")
        };
        assert_eq!(representatives.len(), 1);
        assert_eq!(target_length, 2);
        assert_eq!(discriminator, None, "one type of item: no union");
    }

    #[test]
    fn a_union_of_three_types_gets_one_representative_per_type_with_its_rare_fields() {
        let ctxs = vec![ctx(&[], &[], &[]), ctx(&[], &[], &[]), ctx(&[], &[], &[])];
        let u = unifier(&ctxs);
        let mention = |n: u32, pinned: bool| {
            let mut v = json!({"id": n, "type": "mention", "status": {"id": n * 10}});
            if pinned {
                v["pinned"] = json!(true);
            }
            v
        };
        let follow = |n: u32| json!({"id": n, "type": "follow", "account": "a"});
        let poll =
            |n: u32| json!({"id": n, "type": "poll", "poll": {"votes": 3}, "expires_at": "x"});
        // Mentions in two key sets (a rare `pinned`), follows, and one poll.
        let a = json!([mention(1, false), follow(2), mention(3, true)]);
        let b = json!([follow(4), poll(5), mention(6, false), follow(7)]);
        let c = json!([mention(8, false), follow(9)]);
        let list = || u.unify(&[(&a, 0), (&b, 1), (&c, 2)], None, "");
        let node = list();
        let Node::Array(ArrayNode::List {
            representatives,
            discriminator,
            ..
        }) = &node
        else {
            panic!("list expected")
        };
        assert_eq!(discriminator.as_deref(), Some("type"));
        let tags: Vec<Option<&str>> = representatives
            .iter()
            .map(|r| ArrayNode::tag_of(r, "type"))
            .collect();
        assert_eq!(tags, [Some("mention"), Some("follow"), Some("poll")]);
        let field = |rep: &Node, key: &str| -> Option<Field> {
            match rep {
                Node::Object { fields } => fields.iter().find(|f| f.key == key).cloned(),
                _ => None,
            }
        };
        // The mention's rare field is an optional field of the mention, not another shape.
        let pinned = field(&representatives[0], "pinned").expect("pinned kept");
        assert!(pinned.optional);
        // The poll, recorded once, keeps its own fields.
        assert!(field(&representatives[2], "poll").is_some());
        assert!(field(&representatives[2], "expires_at").is_some());
        assert!(field(&representatives[1], "poll").is_none());
        // The same observations give the same list.
        assert_eq!(list(), node);
    }

    /// Five creates: two sent `enc` and got it back; two without it still answered
    /// `"enabled"`, one without it had no such field.
    fn enc_field(answers: &[(Option<&str>, Option<&str>)]) -> Field {
        let bodies: Vec<Vec<(String, Value)>> = answers
            .iter()
            .map(|(sent, _)| {
                sent.map(|v| vec![("/enc".to_string(), json!(v))])
                    .unwrap_or_default()
            })
            .collect();
        let ctxs: Vec<Ctx<'_>> = bodies.iter().map(|b| ctx(&[], &[], b)).collect();
        let u = unifier(&ctxs);
        let objects: Vec<Value> = answers
            .iter()
            .map(|(_, got)| match got {
                Some(v) => json!({"id": 1, "enc": v}),
                None => json!({"id": 1}),
            })
            .collect();
        let vals: Vec<(&Value, usize)> = objects.iter().enumerate().map(|(i, v)| (v, i)).collect();
        let Node::Object { fields } = u.unify(&vals, None, "") else {
            panic!("object expected")
        };
        fields
            .into_iter()
            .find(|f| f.key == "enc")
            .expect("enc field")
    }

    #[test]
    fn an_echo_field_most_requests_without_its_source_still_got_keeps_its_default() {
        let f = enc_field(&[
            (Some("disabled"), Some("disabled")),
            (Some("enabled"), Some("enabled")),
            (None, Some("enabled")),
            (None, Some("enabled")),
            (None, None),
        ]);
        assert!(f.optional);
        let Node::Hole(hole) = &f.value else {
            panic!("echo hole expected")
        };
        assert!(matches!(hole.source, HoleKind::Echo { .. }));
        let w = hole.when_absent.as_deref().expect("default recorded");
        assert_eq!(w.value, json!("enabled"));
        assert_eq!(
            w.field,
            EchoSource::Body {
                pointer: "/enc".into()
            }
        );
    }

    #[test]
    fn an_echo_field_that_appears_only_when_sent_has_no_default() {
        let f = enc_field(&[
            (Some("disabled"), Some("disabled")),
            (Some("enabled"), Some("enabled")),
            (None, Some("enabled")),
            (None, None),
            (None, None),
        ]);
        let Node::Hole(hole) = &f.value else {
            panic!("echo hole expected")
        };
        assert!(matches!(hole.source, HoleKind::Echo { .. }));
        assert!(
            hole.when_absent.is_none(),
            "most requests without it got none"
        );
    }

    fn objs(pairs: &[(&str, &str)]) -> Vec<Value> {
        pairs
            .iter()
            .map(|(id, uri)| json!({"id": id, "uri": uri}))
            .collect()
    }

    fn embedding_of(values: &[Value]) -> Option<Embedding> {
        let vals: Vec<(&Value, usize)> = values.iter().enumerate().map(|(i, v)| (v, i)).collect();
        embedding(&vals, &["uri"], "id")
    }

    #[test]
    fn the_most_common_suffix_is_rendered_and_ties_keep_the_first_seen() {
        let most = objs(&[
            ("1001", "u/1001/activity"),
            ("1002", "u/1002"),
            ("1003", "u/1003"),
        ]);
        let e = embedding_of(&most).expect("derived");
        assert_eq!(e.suffix, "");
        assert_eq!(e.other_suffixes, vec!["/activity".to_string()]);
        let tie = objs(&[
            ("1001", "u/1001/a"),
            ("1002", "u/1002/b"),
            ("1003", "u/1003/a"),
            ("1004", "u/1004/b"),
        ]);
        let e = embedding_of(&tie).expect("derived");
        assert_eq!(e.suffix, "/a");
        assert_eq!(e.other_suffixes, vec!["/b".to_string()]);
    }

    #[test]
    fn a_suffix_per_object_or_a_missing_id_is_not_derived() {
        let per_object = objs(&[("1001", "u/1001/x"), ("1002", "u/1002/y")]);
        assert_eq!(embedding_of(&per_object), None);
        let missing = objs(&[("1001", "u/1001"), ("1002", "u/about")]);
        assert_eq!(embedding_of(&missing), None);
    }

    /// The unified template of `values` (answers to requests that sent nothing).
    fn unify_answers(values: &[Value]) -> Node {
        let ctxs: Vec<Ctx<'_>> = values.iter().map(|_| ctx(&[], &[], &[])).collect();
        let u = unifier(&ctxs);
        let vals: Vec<(&Value, usize)> = values.iter().enumerate().map(|(i, v)| (v, i)).collect();
        u.unify(&vals, None, "")
    }

    /// The hole at `keys` within an object template.
    fn hole_at<'n>(node: &'n Node, keys: &[&str]) -> &'n Hole {
        let mut at = node;
        for k in keys {
            let Node::Object { fields } = at else {
                panic!("object expected at {k}")
            };
            at = &fields.iter().find(|f| f.key == *k).expect("field").value;
        }
        match at {
            Node::Hole(h) => h,
            other => panic!("hole expected, got {other:?}"),
        }
    }

    #[test]
    fn a_field_of_a_held_object_naming_the_records_id_is_derived_from_the_level_above() {
        let host = |id: u64| format!("a{id}-db-default.example.net");
        let share = |id: u64| format!("/images/private/{id}/sharegroups");
        let values: Vec<Value> = [227288u64, 16774, 16776]
            .iter()
            .map(|id| {
                json!({
                    "id": id.to_string(),
                    "num": id + 5,
                    "hosts": {"primary": host(id + 5), "standby": format!("replica-{}", host(id + 5))},
                    "sharing": {"with": {"list_url": share(*id)}},
                })
            })
            .collect();
        let node = unify_answers(&values);
        let primary = hole_at(&node, &["hosts", "primary"]);
        assert_eq!(
            primary.source,
            HoleKind::Generated {
                shape: IdShape::Derived {
                    sibling: "num".into(),
                    prefixes: vec!["a".into()],
                    suffix: "-db-default.example.net".into(),
                    other_suffixes: Vec::new(),
                    up: 1,
                }
            }
        );
        let list_url = hole_at(&node, &["sharing", "with", "list_url"]);
        assert_eq!(
            list_url.source,
            HoleKind::Generated {
                shape: IdShape::Derived {
                    sibling: "id".into(),
                    prefixes: vec!["/images/private/".into()],
                    suffix: "/sharegroups".into(),
                    other_suffixes: Vec::new(),
                    up: 2,
                }
            }
        );
    }

    #[test]
    fn a_held_field_that_once_names_another_record_or_sits_too_deep_stays_observed() {
        let values: Vec<Value> = [(1001u64, 9999u64), (1007, 1007), (1019, 1019)]
            .iter()
            .map(|(id, named)| {
                json!({
                    "id": id,
                    "hosts": {"primary": format!("a{named}.example.net")},
                    "a": {"b": {"c": {"url": format!("/x/{id}/y")}}},
                })
            })
            .collect();
        let node = unify_answers(&values);
        assert_eq!(
            hole_at(&node, &["hosts", "primary"]).source,
            HoleKind::Observed
        );
        assert_eq!(
            hole_at(&node, &["a", "b", "c", "url"]).source,
            HoleKind::Observed
        );
    }

    proptest::proptest! {
        /// Every example is one observed prefix + its sibling's value + one observed suffix.
        #[test]
        fn every_example_is_a_prefix_the_sibling_and_an_observed_suffix(
            rows in proptest::collection::vec((0usize..3, 1000u32..100_000, 0usize..3), 2..12)
        ) {
            let prefixes = ["https://a.test/users/1/statuses/", "https://a.test/@b/", ""];
            let suffixes = ["", "/activity", "?x=1"];
            let values: Vec<Value> = rows
                .iter()
                .map(|(p, id, sfx)| {
                    json!({"id": id.to_string(), "uri": format!("{}{id}{}", prefixes[*p], suffixes[*sfx])})
                })
                .collect();
            if let Some(e) = embedding_of(&values) {
                for v in &values {
                    let id = v["id"].as_str().unwrap_or_default();
                    let uri = v["uri"].as_str().unwrap_or_default();
                    let fits = e.prefixes.iter().any(|p| {
                        std::iter::once(&e.suffix)
                            .chain(e.other_suffixes.iter())
                            .any(|s| uri == format!("{p}{id}{s}"))
                    });
                    proptest::prop_assert!(fits, "{uri} does not fit {e:?}");
                }
            }
        }
    }

    proptest::proptest! {
        /// Looking strings up by content gives the values (and the count) the scan of every
        /// kept value and the count of distinct texts gave.
        #[test]
        fn distinct_values_are_those_of_comparing_every_value(
            picks in proptest::collection::vec(0usize..12, 0..700),
        ) {
            let pool = [
                json!("a"), json!("b"), json!("1"), json!(1), json!(1.0), json!(-0.0),
                json!(0.0), json!(null), json!(true), json!({"k": "a", "j": 1}),
                json!({"j": 1, "k": "a"}), json!(["a"]),
            ];
            // Many distinct strings too, past the cap.
            let many: Vec<Value> = picks.iter().enumerate().map(|(i, p)| json!(format!("s{}", i * p % 300))).collect();
            for vals in [
                picks.iter().map(|p| (&pool[*p], 0)).collect::<Vec<_>>(),
                many.iter().map(|v| (v, 0)).collect::<Vec<_>>(),
            ] {
                let mut naive: Vec<Value> = Vec::new();
                let mut cut = false;
                for (v, _) in &vals {
                    if naive.iter().any(|o| o == *v) {
                        continue;
                    }
                    if naive.len() >= MAX_RECORDED_VALUES {
                        cut = true;
                        break;
                    }
                    naive.push((*v).clone());
                }
                proptest::prop_assert_eq!(recorded_values(&vals), (naive, cut));
                let plain: Vec<&Value> = vals.iter().map(|(v, _)| *v).collect();
                let texts: std::collections::BTreeSet<String> = plain.iter().map(|v| v.to_string()).collect();
                proptest::prop_assert_eq!(distinct_count(&plain), texts.len());
            }
        }
    }
}
