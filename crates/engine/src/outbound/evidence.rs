//! Per-route column evidence the outbound scrub reads from the model: for every column (a body
//! path with array indices folded to `*`), which string values the recordings showed and on
//! which carriers (the enclosing object's `id`, else the recorded exchange). The same evidence
//! serves synth and strict fidelity, so a leaf is judged the same way in both.
//!
//! What the scrub asks of a column is only two things (is this value one of its recorded enum
//! values; does the column name its carriers), so the evidence is reduced to those answers
//! ([`RouteEvidence`]) as soon as it is gathered. Synth stores the answers of every route in the
//! model ([`wraith_model::Precomputed::columns`], via [`precompute`]); an engine reads them from
//! there and gathers a route's evidence from its recordings only when the model has none for it.
//!
//! The recorded bodies are read from their stored text by a streaming scanner ([`scan`]) that
//! borrows every unescaped string from the text instead of building a tree per body: the
//! evidence was most of a route's first-use time. The scanner gives up (and the body is walked
//! as a parsed tree, [`walk`], exactly as before) on anything it is not sure to read as
//! `serde_json` does: duplicate or unsorted keys, exponents, long numbers, deep nesting.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::OnceLock;

use serde_json::Value;
use wraith_model::{Model, RecordedBody, RouteColumns};

/// Values per column are tracked up to this many; a column past it is high-cardinality.
const MAX_VALUES: usize = 64;
/// Carriers per value are tracked up to this many.
const MAX_CARRIERS: usize = 4;

/// Fixed-key hasher: the engine reads no OS randomness, and the column index is only looked up,
/// never iterated, so nothing depends on its order.
type FixedHasher = foldhash::fast::FixedState;

#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Column {
    /// value → distinct carriers (capped). Ordered: which carriers are kept depends only on
    /// the order values arrive in, and the map stays small (at most [`MAX_VALUES`]).
    values: std::collections::BTreeMap<String, BTreeSet<String>>,
    overflow: bool,
}

impl Column {
    /// A low-cardinality (enum-like) value: the same value recorded on two or more different
    /// carriers, in a column with few distinct values. Kept verbatim by the PII pass.
    fn is_enum_value(&self, v: &str) -> bool {
        !self.overflow && self.values.len() <= 8 && self.values.get(v).is_some_and(|c| c.len() >= 2)
    }

    /// The column names its carriers: at least two distinct values on distinct carriers and no
    /// value shared between carriers.
    fn names_carriers(&self) -> bool {
        let carriers: BTreeSet<&String> = self.values.values().flatten().collect();
        self.values.len() >= 2 && carriers.len() >= 2 && self.values.values().all(|c| c.len() == 1)
    }

    /// One recorded string `v` on `carrier`. Copies the value and carrier only when they are
    /// new to the column: most leaves repeat a value already seen.
    fn add(&mut self, v: &str, carrier: &str) {
        if self.overflow {
            return;
        }
        let full = self.values.len() >= MAX_VALUES;
        match self.values.get_mut(v) {
            Some(set) => {
                if set.len() < MAX_CARRIERS && !set.contains(carrier) {
                    set.insert(carrier.to_string());
                }
            }
            None if full => self.overflow = true,
            None => {
                self.values
                    .insert(v.to_string(), BTreeSet::from([carrier.to_string()]));
            }
        }
    }
}

/// What the PII pass reads of one route's column evidence: its [`RouteColumns`] facts, hashed
/// for lookup (column paths share long prefixes that made each ordered lookup several long
/// compares).
#[derive(Debug, Default, Clone)]
pub(crate) struct RouteEvidence {
    enum_values: HashMap<String, Vec<String>, FixedHasher>,
    names_carriers: HashSet<String, FixedHasher>,
}

impl RouteEvidence {
    /// `v` is one of column `col`'s recorded enum values (kept verbatim by the PII pass).
    pub(crate) fn is_enum_value(&self, col: &str, v: &str) -> bool {
        self.enum_values
            .get(col)
            .is_some_and(|vs| vs.binary_search_by(|x| x.as_str().cmp(v)).is_ok())
    }

    /// Column `col` names its carriers.
    pub(crate) fn names_carriers(&self, col: &str) -> bool {
        self.names_carriers.contains(col)
    }

    fn of_facts(facts: RouteColumns) -> RouteEvidence {
        RouteEvidence {
            enum_values: facts
                .enum_values
                .into_iter()
                .map(|(col, mut vs)| {
                    // Sorted as stored; sorted again so a hand-edited model cannot make the
                    // binary search miss.
                    vs.sort();
                    (col, vs)
                })
                .collect(),
            names_carriers: facts.names_carriers.into_iter().collect(),
        }
    }
}

/// Column evidence of one route as gathered from its recordings, before it is reduced to its
/// [`RouteColumns`] facts.
#[derive(Debug, Default, Clone)]
struct Gathered {
    /// Column path → index into `columns`. Hashed: every recorded leaf looks its column up.
    index: HashMap<String, usize, FixedHasher>,
    columns: Vec<Column>,
}

impl Gathered {
    #[cfg(test)]
    fn column(&self, col: &str) -> Option<&Column> {
        self.index.get(col).and_then(|&i| self.columns.get(i))
    }

    /// The answers the PII pass reads, by column, in column order.
    fn facts(&self) -> RouteColumns {
        let mut facts = RouteColumns::default();
        for (col, &i) in &self.index {
            let Some(c) = self.columns.get(i) else {
                continue;
            };
            // Keys of an ordered map: already sorted.
            let values: Vec<String> = c
                .values
                .keys()
                .filter(|v| c.is_enum_value(v))
                .cloned()
                .collect();
            if !values.is_empty() {
                facts.enum_values.insert(col.clone(), values);
            }
            if c.names_carriers() {
                facts.names_carriers.push(col.clone());
            }
        }
        // The index is a hash map: its order is not the output's.
        facts.names_carriers.sort();
        facts
    }

    /// Index of column `col`, added empty when new. An empty column answers every question as
    /// an absent one does (no enum values, names no carriers).
    fn intern(&mut self, col: &str) -> usize {
        if let Some(&i) = self.index.get(col) {
            return i;
        }
        let i = self.columns.len();
        self.columns.push(Column::default());
        self.index.insert(col.to_string(), i);
        i
    }

    fn add(&mut self, col: &str, v: &str, carrier: &str) {
        let i = self.intern(col);
        if let Some(c) = self.columns.get_mut(i) {
            c.add(v, carrier);
        }
    }

    /// Every non-empty column, by path (tests compare evidence built two ways).
    #[cfg(test)]
    fn view(&self) -> std::collections::BTreeMap<&str, &Column> {
        self.index
            .iter()
            .filter_map(|(k, &i)| {
                let c = self.columns.get(i)?;
                (c.overflow || !c.values.is_empty()).then_some((k.as_str(), c))
            })
            .collect()
    }
}

/// The evidence of one route, read from the model or gathered the first time a leaf needs it. Most served bodies have
/// no leaf the PII pass would rewrite (the only leaves whose column it reads), so most routes
/// never pay for walking every recorded body of theirs; the answers are the same, because a
/// column is read only where its verdict could change the outcome.
#[derive(Clone, Copy)]
pub(crate) struct LazyEvidence<'a> {
    cell: &'a OnceLock<RouteEvidence>,
    model: &'a Model,
    route: usize,
}

impl<'a> LazyEvidence<'a> {
    /// Evidence of route `route` of `model`, kept in `cell` once built.
    pub(crate) fn new(
        cell: &'a OnceLock<RouteEvidence>,
        model: &'a Model,
        route: usize,
    ) -> LazyEvidence<'a> {
        LazyEvidence { cell, model, route }
    }

    /// The evidence, on the first call taken from the model's stored facts for the route or,
    /// when it has none, gathered from the recordings ([`build`]).
    pub(crate) fn get(&self) -> &'a RouteEvidence {
        self.cell.get_or_init(|| {
            let stored = self.model.routes.get(self.route).and_then(|route| {
                self.model
                    .precomputed
                    .as_ref()
                    .and_then(|p| p.columns.get(&route.id))
            });
            match stored {
                Some(facts) => RouteEvidence::of_facts(facts.clone()),
                None => RouteEvidence::of_facts(build(self.model, self.route).facts()),
            }
        })
    }
}

/// The column facts of every route of `model`, by route id ([`wraith_model::Precomputed::columns`]):
/// what the engine would otherwise gather from the recordings on a route's first scrubbed leaf.
pub(crate) fn precompute(model: &Model) -> std::collections::BTreeMap<String, RouteColumns> {
    model
        .routes
        .iter()
        .enumerate()
        .map(|(r, route)| (route.id.clone(), build(model, r).facts()))
        .collect()
}

/// Evidence of route `r` of `model` (empty for an index the model does not have), gathered from
/// its recorded bodies and its entity type's records.
fn build(model: &Model, r: usize) -> Gathered {
    let mut ev = Gathered::default();
    let Some(route) = model.routes.get(r) else {
        return ev;
    };
    let mut scratch = Scratch::default();
    for entry in &route.exact {
        for m in &entry.moments {
            let RecordedBody::Json { value } = &m.body else {
                continue;
            };
            if scan(value.as_str(), &m.source, &mut ev, &mut scratch) {
                continue;
            }
            // Parsed one at a time and dropped: the model keeps only the text.
            if let Ok(value) = value.parse() {
                walk(&value, &mut String::new(), &m.source, &mut ev);
            }
        }
    }
    if let Some(et) = route
        .entity_type
        .as_deref()
        .and_then(|ty| model.entity_types.get(ty))
    {
        for (id, rec) in &et.records {
            walk(rec, &mut String::new(), id, &mut ev);
        }
    }
    ev
}

fn walk(v: &Value, col: &mut String, carrier: &str, ev: &mut Gathered) {
    match v {
        Value::Object(m) => {
            let own = m.get("id").and_then(|id| match id {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            });
            let carrier = own.as_deref().unwrap_or(carrier);
            for (k, child) in m {
                let len = col.len();
                col.push('/');
                col.push_str(k);
                walk(child, col, carrier, ev);
                col.truncate(len);
            }
        }
        Value::Array(a) => {
            let len = col.len();
            col.push_str("/*");
            for item in a {
                walk(item, col, carrier, ev);
            }
            col.truncate(len);
        }
        Value::String(s) => ev.add(col, s, carrier),
        _ => {}
    }
}

/// Reused buffers of [`scan`] (one set per evidence build).
#[derive(Default)]
struct Scratch {
    col: String,
}

/// No enclosing object: the leaf's carrier is the recorded exchange.
const ROOT: usize = usize::MAX;
/// Nesting the scanner reads; deeper bodies go to the parser (whose own limit is 128).
const MAX_DEPTH: usize = 100;
/// Longest number token the scanner accepts (anything longer is left to the parser, which may
/// reject it as out of range).
const MAX_NUMBER: usize = 20;

/// One string leaf, in document order: its column, its value and its enclosing object.
struct Leaf<'t> {
    col: usize,
    value: Cow<'t, str>,
    frame: usize,
}

/// One object: its enclosing object and its own `id` (string, or number as text).
struct Frame<'t> {
    parent: usize,
    id: Option<Cow<'t, str>>,
}

/// What a scanned value was, as far as an enclosing object's `id` cares.
enum Scalar<'t> {
    Str(Cow<'t, str>),
    Num(&'t str),
    Other,
}

/// Add the string leaves of JSON text `text` to `ev` exactly as parsing it and [`walk`]ing the
/// tree would, without building the tree. An object's carrier is its `id`, which canonical
/// text places after the keys sorting before it, so leaves are collected first and given their
/// carriers once the body is read. Returns false, having added nothing, when the text is
/// anything the scanner does not read exactly as the parser (the caller then parses it).
fn scan(text: &str, source: &str, ev: &mut Gathered, scratch: &mut Scratch) -> bool {
    let mut s = Scanner {
        text,
        b: text.as_bytes(),
        i: 0,
        frames: Vec::new(),
        leaves: Vec::new(),
    };
    scratch.col.clear();
    let ok = s.value(ROOT, 0, &mut scratch.col, ev).is_some() && {
        s.ws();
        s.i == s.b.len()
    };
    if !ok {
        return false;
    }
    // Frames are numbered in document order, so a parent's carrier is known before its
    // children's.
    let mut carriers: Vec<&str> = Vec::with_capacity(s.frames.len());
    for f in &s.frames {
        let inherited = if f.parent == ROOT {
            source
        } else {
            carriers.get(f.parent).copied().unwrap_or(source)
        };
        carriers.push(f.id.as_deref().unwrap_or(inherited));
    }
    for leaf in &s.leaves {
        let carrier = if leaf.frame == ROOT {
            source
        } else {
            carriers.get(leaf.frame).copied().unwrap_or(source)
        };
        if let Some(c) = ev.columns.get_mut(leaf.col) {
            c.add(&leaf.value, carrier);
        }
    }
    true
}

struct Scanner<'t> {
    text: &'t str,
    b: &'t [u8],
    i: usize,
    frames: Vec<Frame<'t>>,
    leaves: Vec<Leaf<'t>>,
}

impl<'t> Scanner<'t> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    /// One value at column `col`, inside object `frame`.
    fn value(
        &mut self,
        frame: usize,
        depth: usize,
        col: &mut String,
        ev: &mut Gathered,
    ) -> Option<Scalar<'t>> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match *self.b.get(self.i)? {
            b'{' => {
                self.i += 1;
                let me = self.frames.len();
                self.frames.push(Frame {
                    parent: frame,
                    id: None,
                });
                if self.eat(b'}').is_some() {
                    return Some(Scalar::Other);
                }
                let mut prev: Option<Cow<'t, str>> = None;
                loop {
                    self.ws();
                    let key = self.string()?;
                    // Strictly increasing keys cannot repeat; a repeated key (which the parser
                    // folds into one) or any other order is left to the parser.
                    if prev.as_deref().is_some_and(|p| p >= key.as_ref()) {
                        return None;
                    }
                    self.eat(b':')?;
                    let len = col.len();
                    col.push('/');
                    col.push_str(&key);
                    let child = self.value(me, depth + 1, col, ev)?;
                    col.truncate(len);
                    if key == "id" {
                        let id = match child {
                            Scalar::Str(v) => Some(v),
                            Scalar::Num(n) => Some(Cow::Owned(
                                serde_json::from_str::<serde_json::Number>(n)
                                    .ok()?
                                    .to_string(),
                            )),
                            Scalar::Other => None,
                        };
                        if let Some(f) = self.frames.get_mut(me) {
                            f.id = id;
                        }
                    }
                    prev = Some(key);
                    self.ws();
                    match *self.b.get(self.i)? {
                        b',' => self.i += 1,
                        b'}' => {
                            self.i += 1;
                            return Some(Scalar::Other);
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.i += 1;
                if self.eat(b']').is_some() {
                    return Some(Scalar::Other);
                }
                let len = col.len();
                col.push_str("/*");
                loop {
                    self.value(frame, depth + 1, col, ev)?;
                    self.ws();
                    match *self.b.get(self.i)? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            col.truncate(len);
                            return Some(Scalar::Other);
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => {
                let v = self.string()?;
                let c = ev.intern(col);
                self.leaves.push(Leaf {
                    col: c,
                    value: v.clone(),
                    frame,
                });
                Some(Scalar::Str(v))
            }
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            _ => self.number().map(Scalar::Num),
        }
    }

    fn literal(&mut self, word: &str) -> Option<Scalar<'t>> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word.as_bytes()).then(|| {
            self.i = end;
            Scalar::Other
        })
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, at most [`MAX_NUMBER`] bytes: numbers the parser always
    /// accepts. Exponents and longer numbers are left to the parser.
    fn number(&mut self) -> Option<&'t str> {
        let start = self.i;
        let digits = |s: &mut Self| {
            let from = s.i;
            while s.b.get(s.i).is_some_and(u8::is_ascii_digit) {
                s.i += 1;
            }
            s.i - from
        };
        if self.b.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        let lead = self.i;
        let n = digits(self);
        if n == 0 || (n > 1 && self.b.get(lead) == Some(&b'0')) {
            return None;
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if digits(self) == 0 {
                return None;
            }
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) || self.i - start > MAX_NUMBER {
            return None;
        }
        self.text.get(start..self.i)
    }

    /// A string token at the cursor, unescaped: borrowed from the text when it has no escape,
    /// else decoded by the parser itself.
    fn string(&mut self) -> Option<Cow<'t, str>> {
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        let start = self.i;
        self.i += 1;
        let mut escaped = false;
        loop {
            match *self.b.get(self.i)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    self.i += 2;
                }
                c if c < 0x20 => return None,
                _ => self.i += 1,
            }
        }
        self.i += 1;
        let token = self.text.get(start..self.i)?;
        if escaped {
            serde_json::from_str::<String>(token).ok().map(Cow::Owned)
        } else {
            token.get(1..token.len() - 1).map(Cow::Borrowed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Evidence of `texts` (each recorded on its own exchange) as the parser-only path builds it.
    fn by_parsing(texts: &[String]) -> Gathered {
        let mut ev = Gathered::default();
        for (i, t) in texts.iter().enumerate() {
            if let Ok(v) = serde_json::from_str::<Value>(t) {
                walk(&v, &mut String::new(), &format!("s/{i}"), &mut ev);
            }
        }
        ev
    }

    /// The same with the scanner first, falling back to the parser as [`build`] does.
    fn by_scanning(texts: &[String]) -> (Gathered, usize) {
        let mut ev = Gathered::default();
        let mut scratch = Scratch::default();
        let mut scanned = 0;
        for (i, t) in texts.iter().enumerate() {
            let source = format!("s/{i}");
            if scan(t, &source, &mut ev, &mut scratch) {
                scanned += 1;
            } else if let Ok(v) = serde_json::from_str::<Value>(t) {
                walk(&v, &mut String::new(), &source, &mut ev);
            }
        }
        (ev, scanned)
    }

    fn assert_same(texts: &[String]) -> usize {
        let want = by_parsing(texts);
        let (got, scanned) = by_scanning(texts);
        assert_eq!(got.view(), want.view(), "texts: {texts:?}");
        scanned
    }

    #[test]
    fn scanned_canonical_text_gives_the_parsed_evidence_with_carriers_from_later_ids() {
        // `id` sorts after `email`: the leaf's carrier is only known once the object is read.
        let texts = [
            r#"{"data":[{"email":"a@x.io","id":7,"kind":"user"},{"email":"b@x.io","id":"u2","kind":"user"}],"page":1}"#,
            r#"{"data":[{"email":"c@x.io","id":9,"kind":"user","owner":{"name":"Jo"}}]}"#,
            r#"["top","level"]"#,
        ]
        .map(String::from);
        assert_eq!(assert_same(&texts), 3);
        let (ev, _) = by_scanning(&texts);
        assert!(
            ev.column("/data/*/kind")
                .is_some_and(|c| c.is_enum_value("user"))
        );
    }

    #[test]
    fn text_the_scanner_is_unsure_of_goes_to_the_parser_with_the_same_evidence() {
        let texts = [
            r#"{"id":"a","id":"b","v":"x"}"#, // repeated key: the parser keeps the last
            r#"{"b":"x","a":"y","id":"c"}"#,  // unsorted keys
            r#"{"n":1e400,"v":"never"}"#,     // out of range: the parser rejects the body
            r#"{"n":1.5E3,"id":2.5e1,"v":"x"}"#, // exponents
            r#"{"v":"x"} trailing"#,          // not one value
            r#"{"v":"\ud800"}"#,              // lone surrogate escape
            "{\"v\":\"tab\there\"}",          // raw control character
            r#"{"v":"esc\"aped\u00e9\n","id":"q\\1"}"#,
            r#"{"id":123456789012345678901234,"v":"x"}"#, // integer past u64
            r#"{"id":-0,"v":"y"}"#,
            r#"{"id":01,"v":"z"}"#, // leading zero: invalid
            " {\n \"v\" : [ \"spaced\" , true , null , false , -1.25 ] } ",
        ]
        .map(String::from);
        assert_same(&texts);
        let deep = format!("{}\"x\"{}", "[".repeat(130), "]".repeat(130));
        let deep_ok = format!("{}\"x\"{}", "[".repeat(90), "]".repeat(90));
        assert_same(&[deep, deep_ok]);
    }

    #[test]
    fn columns_past_the_value_cap_overflow_in_the_same_order() {
        let body = |i: usize| {
            let items: Vec<String> = (0..40)
                .map(|j| format!(r#"{{"id":{j},"v":"val{}"}}"#, (i * 7 + j) % 90))
                .collect();
            format!("[{}]", items.join(","))
        };
        let texts: Vec<String> = (0..5).map(body).collect();
        assert_eq!(assert_same(&texts), 5);
    }

    fn arb_string() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("user".to_string()),
            Just("Jane Doe".to_string()),
            Just("a@b.io".to_string()),
            Just("é\u{1}\n\"q\\".to_string()),
            Just(String::new()),
            "[a-c]{1,3}",
        ]
    }

    fn arb_key() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => Just("id".to_string()),
            1 => Just("name".to_string()),
            1 => Just("a/b".to_string()),
            1 => Just("ü".to_string()),
            1 => Just("k\"".to_string()),
            4 => "[a-e]{1,2}",
        ]
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            4 => arb_string().prop_map(Value::String),
            1 => any::<i64>().prop_map(Value::from),
            1 => any::<u64>().prop_map(Value::from),
            1 => (-1e12f64..1e12).prop_map(Value::from),
            1 => any::<f64>().prop_map(Value::from),
            1 => any::<bool>().prop_map(Value::Bool),
            1 => Just(Value::Null),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((arb_key(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// Every question the PII pass can ask of `g` (each column, each recorded value and one
    /// never recorded) gets the same answer from `g` and from its facts after a trip through
    /// the model's JSON.
    fn assert_facts_answer_as_gathered(g: &Gathered) {
        let json = serde_json::to_string(&g.facts()).unwrap_or_default();
        let stored: RouteColumns = serde_json::from_str(&json).unwrap_or_default();
        let ev = RouteEvidence::of_facts(stored);
        for (col, &i) in &g.index {
            let c = &g.columns[i];
            assert_eq!(ev.names_carriers(col), c.names_carriers(), "{col}");
            for v in c
                .values
                .keys()
                .map(String::as_str)
                .chain(["never recorded"])
            {
                assert_eq!(ev.is_enum_value(col, v), c.is_enum_value(v), "{col} {v}");
            }
        }
        assert!(!ev.names_carriers("/no/such/column"));
        assert!(!ev.is_enum_value("/no/such/column", "user"));
    }

    #[test]
    fn stored_column_facts_answer_as_the_gathered_evidence() {
        let texts = [
            r#"{"data":[{"email":"a@x.io","id":7,"kind":"user","name":"Ann"},{"email":"b@x.io","id":"u2","kind":"user","name":"Bo"}]}"#,
            r#"{"data":[{"email":"c@x.io","id":9,"kind":"admin","name":"Cy"},{"id":10,"kind":"admin","name":"Di"}]}"#,
        ]
        .map(String::from);
        let (g, _) = by_scanning(&texts);
        let facts = g.facts();
        assert_eq!(
            facts.enum_values.get("/data/*/kind"),
            Some(&vec!["admin".to_string(), "user".to_string()])
        );
        assert_eq!(facts.names_carriers, vec!["/data/*/email", "/data/*/name"]);
        assert_facts_answer_as_gathered(&g);
    }

    #[test]
    fn an_engine_reads_the_stored_column_facts_instead_of_gathering_them() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/corpora/wraith-demo/recordings/sessions");
        let sessions = wraith_recording::read_sessions(&dir).unwrap_or_default();
        let mut model = wraith_synth::synthesize(
            &sessions,
            &wraith_synth::SynthOptions {
                twin: "demo".into(),
                base_url: "http://127.0.0.1:18080".into(),
                tool_version: "test".into(),
                ..Default::default()
            },
        )
        .model;
        assert!(!model.routes.is_empty());
        let gathered = precompute(&model);
        assert_eq!(gathered.len(), model.routes.len(), "one entry per route");
        let id = model.routes[0].id.clone();
        let col = "/not/recorded/anywhere";
        let mut stored = gathered.clone();
        stored
            .entry(id)
            .or_default()
            .names_carriers
            .push(col.into());
        model.precomputed = Some(wraith_model::Precomputed {
            columns: stored,
            ..Default::default()
        });
        // Nothing recorded says so: only the stored facts can make the column name carriers.
        let cell = OnceLock::new();
        assert!(
            LazyEvidence::new(&cell, &model, 0)
                .get()
                .names_carriers(col)
        );
        model.precomputed = None;
        let cell = OnceLock::new();
        assert!(
            !LazyEvidence::new(&cell, &model, 0)
                .get()
                .names_carriers(col)
        );
    }

    proptest! {
        /// The facts the model stores answer every question exactly as the evidence gathered
        /// from the bodies does.
        #[test]
        fn stored_facts_answer_every_question_as_the_gathered_evidence(bodies in prop::collection::vec(arb_json(), 1..6)) {
            let texts: Vec<String> = bodies
                .iter()
                .map(|b| wraith_model::JsonText::from_value(b.clone()).as_str().to_string())
                .collect();
            assert_facts_answer_as_gathered(&by_scanning(&texts).0);
        }

        /// The scanner (with its parser fallback) builds exactly the evidence parsing every
        /// body builds: canonical text (what the model stores), insertion-ordered text and
        /// pretty-printed text.
        #[test]
        fn scanning_builds_the_evidence_parsing_builds(bodies in prop::collection::vec(arb_json(), 1..6)) {
            let mut texts = Vec::new();
            for b in &bodies {
                texts.push(wraith_model::JsonText::from_value(b.clone()).as_str().to_string());
                texts.push(serde_json::to_string(b).unwrap_or_default());
                texts.push(serde_json::to_string_pretty(b).unwrap_or_default());
            }
            assert_same(&texts);
        }
    }
}
