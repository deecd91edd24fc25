//! The field-by-field diff of one recorded response against the twin's answer.
//!
//! Every position of the recorded body is compared under a *field class* taken from the model's
//! body template at the same JSON position (reference §5.1):
//!
//! | class | rule | comes from |
//! | --- | --- | --- |
//! | `generated` | JSON type only | [`HoleKind::Generated`], [`HoleKind::Counter`] |
//! | `timestamp` | JSON type; a recorded timestamp text needs one | [`HoleKind::Clock`] |
//! | `enum` | member of the recorded set | [`HoleKind::Observed`] (its `examples` and `more_examples`) |
//! | `echoed` | equals the request's value | [`HoleKind::Echo`] |
//! | `constant` | exact | a [`Node::Const`], or no template at that position |
//!
//! A value equal to the recording passes under every class. Numbers compare as numbers
//! (`50 == 50.0`); arrays compare position by position except where the template has an
//! [`ArrayNode::List`], where elements are matched order-independently. When the twin claims an
//! exact replay (`X-Wraith-Replay`), the caller passes no template and every position is exact.

use std::collections::{BTreeMap, HashMap};

use foldhash::HashSet;

use serde_json::Value;
use wraith_model::{ArrayNode, BodyTemplate, EchoSource, Hole, HoleKind, JsonType, Model, Node};

use crate::rules::{DiffRules, UserClass};

/// What kind of difference a divergence is. The report's `category` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// A field the recording has is absent from the twin's answer.
    MissingField,
    /// The twin's answer has a field the recording does not.
    ExtraField,
    /// Same type, different value (under the field's class).
    ValueMismatch,
    /// Different HTTP status.
    StatusMismatch,
    /// Different JSON type (or a different body kind: JSON vs text vs empty).
    TypeMismatch,
    /// Arrays of different lengths.
    ArrayLengthMismatch,
    /// The twin answered with its own refusal (route miss 501, fail-closed `miss`) or leaked a
    /// template placeholder: never a pass, whatever the status.
    SynthesizedRefusal,
    /// At a `generated` position whose recorded value the twin already answered with another
    /// value earlier in the session, the answer names something else than that value: the
    /// client was given one id and now reads another (see `crate::symbols`).
    SymbolMismatch,
    /// An element of a tagged-union list whose tag (its discriminator value) is none of the
    /// recorded ones, under the `reject_unknown` policy (`[[diff.tagged_union_policy]]`).
    UnknownTag,
}

impl Category {
    /// Every category, in report order.
    pub const ALL: [Category; 9] = [
        Category::MissingField,
        Category::ExtraField,
        Category::ValueMismatch,
        Category::StatusMismatch,
        Category::TypeMismatch,
        Category::ArrayLengthMismatch,
        Category::SynthesizedRefusal,
        Category::SymbolMismatch,
        Category::UnknownTag,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::MissingField => "missing_field",
            Category::ExtraField => "extra_field",
            Category::ValueMismatch => "value_mismatch",
            Category::StatusMismatch => "status_mismatch",
            Category::TypeMismatch => "type_mismatch",
            Category::ArrayLengthMismatch => "array_length_mismatch",
            Category::SynthesizedRefusal => "synthesized_refusal",
            Category::SymbolMismatch => "symbol_mismatch",
            Category::UnknownTag => "unknown_tag",
        }
    }
}

/// One difference at one position.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// `status`, `headers.content-type`, `body`, `body.items[2].name`, `body["a.b"]`.
    pub path: String,
    pub category: Category,
    /// The recorded value (`null` when the recording had none there).
    pub expected: Value,
    /// The twin's value (`null` when the twin had none there).
    pub actual: Value,
}

/// How a position is compared.
#[derive(Debug, Clone, Copy)]
pub enum FieldClass<'a> {
    Generated,
    Timestamp,
    Constant,
    /// One of the recorded values: an observed hole's `examples` then `more_examples` (a
    /// user-declared set is the first slice, the second empty).
    Enum(&'a [Value], &'a [Value]),
    Echoed(&'a EchoSource),
}

impl FieldClass<'_> {
    pub fn of(hole: &Hole) -> FieldClass<'_> {
        match &hole.source {
            HoleKind::Echo { from } => FieldClass::Echoed(from),
            HoleKind::Generated { .. } | HoleKind::Counter { .. } => FieldClass::Generated,
            HoleKind::Clock { .. } => FieldClass::Timestamp,
            HoleKind::Observed => FieldClass::Enum(&hole.examples, &hole.more_examples),
        }
    }
}

/// The recorded values of every `enum` position of a model's templates that keeps more than
/// its rendered `examples` (up to 256 in all), so the judge looks an answered value up instead
/// of comparing it with each one.
///
/// A position is keyed by the address of its hole's `more_examples`: the model is borrowed for
/// the index's life, so no other live value has that address, and a template built elsewhere
/// (not the model's) is simply not found and scanned as before.
#[derive(Debug, Default)]
pub struct EnumIndex<'m> {
    by_position: HashMap<usize, EnumMembers<'m>>,
}

/// The members of one indexed position: a string can only equal a string member, anything
/// else only a member that is no string ([`json_eq`]). Every answered string at the position
/// is hashed, so with a hasher that is quick on short strings.
#[derive(Debug, Default)]
struct EnumMembers<'m> {
    strings: HashSet<&'m str>,
    others: Vec<&'m Value>,
}

impl<'m> EnumIndex<'m> {
    /// Index every observed hole with `more_examples` in the body templates of `model`'s
    /// variants (their per-type union templates included).
    pub fn new(model: &'m Model) -> EnumIndex<'m> {
        Self::of_templates(model.routes.iter().flat_map(|r| &r.variants).flat_map(|v| {
            let root = match &v.body {
                BodyTemplate::Json { root } => Some(root),
                _ => None,
            };
            root.into_iter()
                .chain(v.union.iter().flat_map(|u| &u.templates))
        }))
    }

    /// Index the observed holes with `more_examples` in `templates`.
    pub fn of_templates(templates: impl IntoIterator<Item = &'m Node>) -> EnumIndex<'m> {
        let mut index = EnumIndex::default();
        templates.into_iter().for_each(|t| index.note(t));
        index
    }

    fn note(&mut self, node: &'m Node) {
        match node {
            Node::Const { .. } => {}
            Node::Object { fields } => fields.iter().for_each(|f| self.note(&f.value)),
            Node::Array(ArrayNode::Tuple { items }) => items.iter().for_each(|n| self.note(n)),
            Node::Array(ArrayNode::List {
                representatives, ..
            }) => representatives.iter().for_each(|n| self.note(n)),
            Node::Hole(hole) => {
                if let Some(t) = embedded_template(hole) {
                    self.note(t);
                }
                if !matches!(hole.source, HoleKind::Observed) || hole.more_examples.is_empty() {
                    return;
                }
                let mut members = EnumMembers::default();
                for m in hole.examples.iter().chain(&hole.more_examples) {
                    match m {
                        Value::String(s) => {
                            members.strings.insert(s.as_str());
                        }
                        other => members.others.push(other),
                    }
                }
                self.by_position
                    .insert(hole.more_examples.as_ptr() as usize, members);
            }
        }
    }

    /// Whether `actual` is one of the members of the position whose `more_examples` is `more`;
    /// `None` when that position is not indexed.
    fn accepts(&self, more: &[Value], actual: &Value) -> Option<bool> {
        if more.is_empty() {
            return None;
        }
        let members = self.by_position.get(&(more.as_ptr() as usize))?;
        Some(match actual {
            Value::String(s) => members.strings.contains(s.as_str()),
            other => members.others.iter().any(|m| json_eq(m, other)),
        })
    }
}

/// The request values echo holes may copy: resolved lazily from the recorded request.
#[derive(Debug, Default, Clone)]
pub struct EchoContext {
    /// Path parameters by name (from aligning the route template with the concrete path).
    pub path_params: Vec<(String, String)>,
    /// Query parameters, first value per name.
    pub query: Vec<(String, String)>,
    /// The request body parsed as JSON, or form fields folded into a JSON object.
    pub body: Option<Value>,
    /// Request headers, lowercase names.
    pub headers: Vec<(String, String)>,
}

impl EchoContext {
    /// Build the context of a request. `route_path` is the matched template (`/a/:param/b`).
    pub fn new(
        route_path: Option<&str>,
        path: &str,
        query: &str,
        content_type: Option<&str>,
        body: &[u8],
        headers: Vec<(String, String)>,
    ) -> EchoContext {
        let mut path_params = Vec::new();
        if let Some(tpl) = route_path {
            let tsegs: Vec<&str> = tpl.split('/').collect();
            let csegs: Vec<&str> = path.split('/').collect();
            if tsegs.len() == csegs.len() {
                for (t, c) in tsegs.iter().zip(csegs.iter()) {
                    if let Some(name) = t.strip_prefix(':') {
                        let decoded = percent_decode(c);
                        path_params.push((name.to_string(), decoded));
                    }
                }
            }
        }
        let query: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let body = parse_request_body(content_type, body);
        EchoContext {
            path_params,
            query,
            body,
            headers,
        }
    }

    /// True when `v` equals some value the request carries: a path parameter, a query value,
    /// a header value or a scalar leaf of the body (for a position the user declared `echoed`
    /// where the model names no source). `text_ok`: the recording answered a string there, so
    /// a JSON number or boolean of the body may come back as its text (see [`echo_as_text`]).
    pub fn holds(&self, v: &Value, text_ok: bool) -> bool {
        fn leaf_holds(body: &Value, v: &Value, text_ok: bool) -> bool {
            match body {
                Value::Array(a) => a.iter().any(|x| leaf_holds(x, v, text_ok)),
                Value::Object(m) => m.values().any(|x| leaf_holds(x, v, text_ok)),
                leaf => echo_eq(v, leaf) || (text_ok && echo_as_text(v, leaf)),
            }
        }
        let s = |x: &String| echo_eq(v, &Value::String(x.clone()));
        self.path_params.iter().any(|(_, x)| s(x))
            || self.query.iter().any(|(_, x)| s(x))
            || self.headers.iter().any(|(_, x)| s(x))
            || self
                .body
                .as_ref()
                .is_some_and(|b| leaf_holds(b, v, text_ok))
    }

    /// The request's value for an echo source, `None` when the request does not carry it.
    pub fn value(&self, from: &EchoSource) -> Option<Value> {
        match from {
            EchoSource::Path { param } => first(&self.path_params, param),
            EchoSource::Query { name } => first(&self.query, name),
            EchoSource::Header { name } => self
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| Value::String(v.clone())),
            EchoSource::Body { pointer } => self.body.as_ref()?.pointer(pointer).cloned(),
            EchoSource::Within {
                source,
                prefix,
                suffix,
            } => EchoSource::within_text(prefix, &self.value(source)?, suffix).map(Value::String),
            EchoSource::Instant { source, unit } => {
                EchoSource::instant_value(&self.value(source)?, unit)
            }
            EchoSource::Trimmed { source } => EchoSource::trimmed_value(&self.value(source)?),
        }
    }
}

fn first(pairs: &[(String, String)], name: &str) -> Option<Value> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| Value::String(v.clone()))
}

/// A path segment decoded as the engine names it
/// ([`wraith_model::request_key::decode_path_segment`]).
pub(crate) fn percent_decode(s: &str) -> String {
    wraith_model::request_key::decode_path_segment(s)
}

/// A JSON body as a value; a form body as an object (`a[b]=1` → `{"a":{"b":"1"}}`).
fn parse_request_body(content_type: Option<&str>, body: &[u8]) -> Option<Value> {
    if body.is_empty() {
        return None;
    }
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Some(v);
    }
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    if !ct.starts_with("application/x-www-form-urlencoded") && !ct.is_empty() {
        return None;
    }
    let mut root = serde_json::Map::new();
    for (k, v) in form_urlencoded::parse(body) {
        let mut keys: Vec<String> = Vec::new();
        let (head, rest) = match k.find('[') {
            Some(i) => (&k[..i], &k[i..]),
            None => (&k[..], ""),
        };
        keys.push(head.to_string());
        for part in rest.split('[').skip(1) {
            keys.push(part.trim_end_matches(']').to_string());
        }
        insert_path(&mut root, &keys, Value::String(v.into_owned()));
    }
    Some(Value::Object(root))
}

fn insert_path(map: &mut serde_json::Map<String, Value>, keys: &[String], v: Value) {
    let Some((k, rest)) = keys.split_first() else {
        return;
    };
    if rest.is_empty() {
        map.entry(k.clone()).or_insert(v);
        return;
    }
    let child = map
        .entry(k.clone())
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if let Value::Object(m) = child {
        insert_path(m, rest, v);
    }
}

/// Numbers as numbers (exact for integers, f64 otherwise), objects by key, arrays by position.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num_eq(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn num_eq(x: &serde_json::Number, y: &serde_json::Number) -> bool {
    if let (Some(a), Some(b)) = (x.as_i64(), y.as_i64()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (x.as_u64(), y.as_u64()) {
        return a == b;
    }
    match (x.as_f64(), y.as_f64()) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Equality of an echoed value with the request's value. A value that arrived as text (a form
/// field, a query value, a path segment) may echo as the number or boolean it spells, so
/// `"5"` echoes as `5`, `"true"` as `true`; a JSON number or boolean echoes as itself (`1`
/// as `1.0`, never as `"1"`).
fn echo_eq(actual: &Value, request: &Value) -> bool {
    if json_eq(actual, request) {
        return true;
    }
    match (actual, request) {
        (Value::Number(_) | Value::Bool(_), Value::String(s)) => {
            serde_json::from_str::<Value>(s).is_ok_and(|p| json_eq(actual, &p))
        }
        _ => false,
    }
}

/// A JSON number or boolean of the request answered as its text (`21` as `"21"`): an echo
/// only where the recording itself answered a string at that position (the API spells the
/// value it was sent as text); elsewhere a change of type.
fn echo_as_text(actual: &Value, request: &Value) -> bool {
    match (actual, request) {
        (Value::String(s), Value::Number(_) | Value::Bool(_)) => {
            s.as_str() == request.to_string().as_str()
        }
        _ => false,
    }
}

/// One step of a JSON position: the same type `[diff.fields]` patterns match against.
use crate::rules::PathSeg as Seg;

/// The kind of JSON position `segs` names, which a short id is held to only together with
/// (`crate::idmap::IdPair::kind`): for a field of a nested object, the object's key and the
/// field (`user.id`, the same users wherever an issue or a comment embeds them); for a field
/// of the answer's own record (at the top, or an item of a top-level list), the route's
/// entity type and the field (`issues:id`, so a comment's id `1` is not issue `1`).
///
/// Where the model says what records a nested key holds (`nested`, from
/// `Route::records_by_value`: an issue's `labels` are `labels` records), a field of one is
/// that type's field (`labels:id`), as in the type's own answers.
pub(crate) fn position_kind(
    record_type: Option<&str>,
    segs: &[Seg<'_>],
    nested: Option<&BTreeMap<String, String>>,
) -> String {
    let mut keys = segs.iter().filter_map(|s| match s {
        Seg::Key(k) => Some(*k),
        Seg::Index(_) => None,
    });
    let last = keys.next_back();
    match (keys.next_back(), last) {
        (Some(parent), Some(key)) => match nested.and_then(|n| n.get(parent)) {
            Some(ty) => format!("{ty}:{key}"),
            None => format!("{parent}.{key}"),
        },
        (None, Some(key)) => format!("{}:{key}", record_type.unwrap_or("")),
        _ => format!("{}:", record_type.unwrap_or("")),
    }
}

/// Render `root` + segments as `body.a[2]["b.c"]`.
pub(crate) fn render_path(root: &str, segs: &[Seg<'_>]) -> String {
    let mut s = String::from(root);
    for seg in segs {
        match seg {
            Seg::Key(k) => {
                let plain = !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '@');
                if plain {
                    s.push('.');
                    s.push_str(k);
                } else {
                    s.push('[');
                    s.push_str(&Value::String((*k).to_string()).to_string());
                    s.push(']');
                }
            }
            Seg::Index(i) => {
                s.push('[');
                s.push_str(&i.to_string());
                s.push(']');
            }
        }
    }
    s
}

/// Above this many elements a `List` array is matched by position only (the order-independent
/// matching is quadratic).
const MAX_UNORDERED: usize = 256;

/// Diff of two JSON bodies. Collects divergences and counts compared positions.
pub struct BodyDiff<'c> {
    echo: &'c EchoContext,
    segs_root: &'static str,
    /// Every divergence found, in document order.
    pub divergences: Vec<Divergence>,
    /// Leaf positions compared (each divergence counts one).
    pub compared: u64,
    /// When set, only counts are kept (used to score candidate pairings cheaply).
    dry_run: bool,
    dry_count: u64,
    /// In a dry run, stop walking once more than this many divergences were counted.
    dry_limit: u64,
    /// When set, every (recorded, answered) pair of differing scalars of one JSON type at a
    /// `generated` position, in document order (the ids a replaying client learns; see
    /// `crate::idmap`). Never filled by a dry run.
    generated_pairs: Option<Vec<crate::idmap::IdPair>>,
    /// The entity type of the route whose answer is walked: with the field, the kind of a
    /// top-level or list-item position a short id is read at ([`position_kind`]).
    record_type: Option<&'c str>,
    /// The entity type of the records nested keys hold ([`position_kind`]).
    nested_types: Option<&'c BTreeMap<String, String>>,
    /// `[diff.fields]`: user classes that win over the model's at the positions they name
    /// (`None`, or rules with no field entry, leaves the model's classes alone).
    fields: Option<&'c DiffRules>,
    /// Paths of the divergences found at `echoed` positions (the symbol-consistency dimension).
    pub echo_failures: Vec<String>,
    /// When set, the session's id map and what holding the answer to it found so far
    /// (`crate::symbols`). Never filled by a dry run.
    symbols: Option<SymbolWatch<'c>>,
    /// How an element of a tagged-union list whose tag the model never recorded is judged
    /// (`[[diff.tagged_union_policy]]`; `reject_unknown` unless the route's entry says else).
    unknown_tags: UnknownTagPolicy,
    /// The model's indexed `enum` positions, looked up before scanning a position's members.
    enums: Option<&'c EnumIndex<'c>>,
}

/// What the judge does with an element of a tagged-union list ([`ArrayNode::List`] with a
/// `discriminator`) whose tag is none of the recorded ones (`[[diff.tagged_union_policy]]`
/// `policy`). An element equal to the recording passes under every policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnknownTagPolicy {
    /// One `unknown_tag` divergence at the element's tag; the rest of it is not walked.
    #[default]
    RejectUnknown,
    /// Judged against the keys every recorded type has (each under the first type's class);
    /// the tag itself and the keys only some types have are not compared.
    FallbackCommonSchema,
    /// Judged against the representative the pre-union judge would pick for it: the one whose
    /// shape fits it best, ties going to its position in the render cycle; every key compared.
    ReplayRepresentative,
}

impl UnknownTagPolicy {
    /// Every policy, as written in `wraith.toml`.
    pub const ALL: [UnknownTagPolicy; 3] = [
        UnknownTagPolicy::RejectUnknown,
        UnknownTagPolicy::FallbackCommonSchema,
        UnknownTagPolicy::ReplayRepresentative,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            UnknownTagPolicy::RejectUnknown => "reject_unknown",
            UnknownTagPolicy::FallbackCommonSchema => "fallback_common_schema",
            UnknownTagPolicy::ReplayRepresentative => "replay_representative",
        }
    }

    /// The policy spelled `s` (exactly as [`Self::as_str`] writes it).
    pub fn parse(s: &str) -> Option<UnknownTagPolicy> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// What [`BodyDiff::check_symbols`] finds while walking an answer under the session's id map.
#[derive(Debug)]
pub(crate) struct SymbolWatch<'c> {
    ids: &'c crate::idmap::IdMap,
    /// `symbol_mismatch` divergences at `generated` positions, in document order: the recorded
    /// value X the session saw answered as Y, and the answer is not Y.
    pub(crate) mismatches: Vec<Divergence>,
    /// `symbol_mismatch` divergences at exactly compared positions (`constant`, `enum`): the
    /// recorded value X the session saw answered as Y, and the answer still shows X (which the
    /// judge, comparing with the recording, accepted).
    pub(crate) exact_mismatches: Vec<Divergence>,
    /// Exactly compared positions (`constant`, `enum`) whose recorded value X the session saw
    /// answered as Y and whose answer is Y: the value the client was given for X. The judge,
    /// which compares against the recording, flagged them; they agree once X is read as Y.
    pub(crate) translated: Vec<Divergence>,
}

/// How one list element is judged: under a template (or exactly), or, for a tagged-union
/// element with an unrecorded tag, by the route's [`UnknownTagPolicy`].
#[derive(Debug, Clone, Copy)]
enum Elem<'v> {
    Node(Option<&'v Node>),
    /// `reject_unknown`: the element's tag (at `key`) is not recorded.
    Unknown {
        key: &'v str,
    },
    /// `fallback_common_schema`: only the keys every representative has.
    Common {
        key: &'v str,
        reps: &'v [Node],
    },
}

impl<'c> BodyDiff<'c> {
    pub fn new(echo: &'c EchoContext) -> BodyDiff<'c> {
        BodyDiff {
            echo,
            segs_root: "body",
            divergences: Vec::new(),
            compared: 0,
            dry_run: false,
            dry_count: 0,
            dry_limit: u64::MAX,
            generated_pairs: None,
            record_type: None,
            nested_types: None,
            fields: None,
            echo_failures: Vec::new(),
            symbols: None,
            unknown_tags: UnknownTagPolicy::default(),
            enums: None,
        }
    }

    /// Look `enum` positions up in `index` (the model's) instead of scanning their members.
    pub fn with_enums(mut self, index: &'c EnumIndex<'c>) -> BodyDiff<'c> {
        self.enums = Some(index);
        self
    }

    /// Judge tagged-union elements with an unrecorded tag by `policy` (see [`UnknownTagPolicy`]).
    pub fn with_unknown_tags(mut self, policy: UnknownTagPolicy) -> BodyDiff<'c> {
        self.unknown_tags = policy;
        self
    }

    /// Also hold every `generated` position to the session's id map during [`Self::run`]
    /// (read the failures with [`Self::take_symbol_mismatches`]).
    pub(crate) fn check_symbols(&mut self, ids: &'c crate::idmap::IdMap) {
        self.symbols = Some(SymbolWatch {
            ids,
            mismatches: Vec::new(),
            exact_mismatches: Vec::new(),
            translated: Vec::new(),
        });
    }

    /// What holding the answer to the id map found since [`Self::check_symbols`].
    pub(crate) fn take_symbol_watch(&mut self) -> Option<SymbolWatch<'c>> {
        self.symbols.take()
    }

    /// At an exactly compared position (`constant`, `enum`) whose recorded value the session
    /// saw answered as another value: note an answer showing that value (the judge's mismatch
    /// there is the recording's name for it), or a `symbol_mismatch` for an answer still
    /// showing the recorded value. Other answers are the judge's to flag.
    fn watch_exact(&mut self, expected: &Value, actual: &Value, segs: &[Seg<'_>]) {
        if self.dry_run || self.symbols.is_none() {
            return;
        }
        let kind = self.kind_of(expected, segs);
        let Some(watch) = &mut self.symbols else {
            return;
        };
        let Some(mapped) = crate::symbols::mapped(watch.ids, expected, kind.as_deref()) else {
            return;
        };
        if json_eq(mapped, expected) || JsonType::of(mapped) != JsonType::of(expected) {
            return;
        }
        if json_eq(actual, mapped) {
            watch.translated.push(Divergence {
                path: render_path(self.segs_root, segs),
                category: mismatch_category(expected, actual),
                expected: expected.clone(),
                actual: actual.clone(),
            });
        } else if json_eq(actual, expected) {
            watch.exact_mismatches.push(Divergence {
                path: render_path(self.segs_root, segs),
                category: Category::SymbolMismatch,
                expected: mapped.clone(),
                actual: actual.clone(),
            });
        }
    }

    /// Apply the user's `[diff.fields]` classes (most specific pattern first), which win over
    /// the model's class at the positions they name.
    pub fn with_fields(mut self, rules: Option<&'c DiffRules>) -> BodyDiff<'c> {
        self.fields = rules.filter(|r| !r.fields.is_empty());
        self
    }

    /// Also collect the differing scalar pairs at `generated` positions during [`Self::run`]
    /// (read them with [`Self::take_generated_pairs`]).
    pub(crate) fn collect_generated_pairs(&mut self) {
        self.generated_pairs = Some(Vec::new());
    }

    /// The pairs collected since [`Self::collect_generated_pairs`].
    pub(crate) fn take_generated_pairs(&mut self) -> Vec<crate::idmap::IdPair> {
        self.generated_pairs.take().unwrap_or_default()
    }

    /// The entity type of the route whose answer is walked (see [`position_kind`]).
    pub(crate) fn with_record_type(mut self, record_type: Option<&'c str>) -> BodyDiff<'c> {
        self.record_type = record_type;
        self
    }

    /// The entity types of the records nested keys hold (see [`position_kind`]).
    pub(crate) fn with_nested_types(
        mut self,
        nested: &'c BTreeMap<String, String>,
    ) -> BodyDiff<'c> {
        self.nested_types = Some(nested);
        self
    }

    /// The kind of position `segs` names, for a short id (see [`position_kind`]).
    fn kind_of(&self, value: &Value, segs: &[Seg<'_>]) -> Option<String> {
        let short = match value {
            Value::String(s) => s.len() < crate::idmap::MIN_RENAMED_LEN,
            Value::Number(n) => n.to_string().len() < crate::idmap::MIN_RENAMED_LEN,
            _ => false,
        };
        short.then(|| position_kind(self.record_type, segs, self.nested_types))
    }

    /// Only find out whether anything diverges: count without recording, and stop walking at
    /// the first divergence (read the outcome with [`Self::found_any`]). The walk takes the
    /// same decisions as a full one (list pairings are costed with their own limits), so it
    /// finds a divergence exactly when the full walk finds one.
    pub(crate) fn stop_at_first(&mut self) {
        self.dry_run = true;
        self.dry_count = 0;
        self.dry_limit = 0;
    }

    /// After a [`Self::stop_at_first`] run: some position diverged.
    pub(crate) fn found_any(&self) -> bool {
        self.dry_count > 0
    }

    /// Compare `expected` (recorded) against `actual` (twin) under `template`.
    pub fn run(&mut self, template: Option<&Node>, expected: &Value, actual: &Value) {
        let mut segs = Vec::new();
        self.walk(template, expected, actual, &mut segs);
    }

    fn push<'v>(
        &mut self,
        segs: &[Seg<'v>],
        category: Category,
        expected: Option<&Value>,
        actual: Option<&Value>,
    ) {
        if self.dry_run {
            self.dry_count += 1;
            return;
        }
        self.divergences.push(Divergence {
            path: render_path(self.segs_root, segs),
            category,
            expected: expected.cloned().unwrap_or(Value::Null),
            actual: actual.cloned().unwrap_or(Value::Null),
        });
    }

    /// A dry run that has already exceeded its limit: the caller only needs "more than".
    fn over_limit(&self) -> bool {
        self.dry_run && self.dry_count > self.dry_limit
    }

    fn walk<'v>(
        &mut self,
        template: Option<&'v Node>,
        expected: &'v Value,
        actual: &'v Value,
        segs: &mut Vec<Seg<'v>>,
    ) {
        if self.over_limit() {
            return;
        }
        if let Some(class) = self.fields.and_then(|r| r.field_class(segs)) {
            // The user's class wins over the model's.
            match class {
                UserClass::Constant => self.structural(None, expected, actual, segs),
                UserClass::Generated => self.leaf(FieldClass::Generated, expected, actual, segs),
                UserClass::Timestamp => self.leaf(FieldClass::Timestamp, expected, actual, segs),
                UserClass::Enum(values) => {
                    self.leaf(FieldClass::Enum(values, &[]), expected, actual, segs)
                }
                UserClass::Echoed => match template {
                    // The model knows which request value is echoed here: hold it to that one.
                    Some(Node::Hole(hole)) if matches!(hole.source, HoleKind::Echo { .. }) => {
                        self.leaf(FieldClass::of(hole), expected, actual, segs)
                    }
                    _ => self.leaf_echo_any(expected, actual, segs),
                },
            }
            return;
        }
        match template {
            // A null-or-embedded-record position holding a record on both sides: the record is
            // judged under the template of the recorded records (its key held to the request
            // field that named it), still counted as the one position it is.
            Some(Node::Hole(hole))
                if let Some(t) = embedded_template(hole)
                    && expected.is_object()
                    && actual.is_object() =>
            {
                let compared = self.compared;
                self.walk(Some(t), expected, actual, segs);
                self.compared = compared + 1;
            }
            Some(Node::Hole(hole)) => self.leaf(FieldClass::of(hole), expected, actual, segs),
            // A constant subtree is compared exactly, descending so that the divergence names
            // the innermost differing position.
            Some(Node::Const { .. }) | None => self.structural(None, expected, actual, segs),
            Some(node) => self.structural(Some(node), expected, actual, segs),
        }
    }

    /// A position the user declared `echoed` where the model has no echo hole: the answer must
    /// repeat some value of the request (path parameter, query value, header value, body leaf).
    fn leaf_echo_any<'v>(&mut self, expected: &'v Value, actual: &'v Value, segs: &[Seg<'v>]) {
        self.compared += 1;
        if json_eq(expected, actual) || self.echo.holds(actual, expected.is_string()) {
            return;
        }
        let cat = mismatch_category(expected, actual);
        self.push(segs, cat, Some(expected), Some(actual));
        if !self.dry_run {
            self.echo_failures.push(render_path(self.segs_root, segs));
        }
    }

    fn leaf<'v>(
        &mut self,
        class: FieldClass<'_>,
        expected: &'v Value,
        actual: &'v Value,
        segs: &mut Vec<Seg<'v>>,
    ) {
        self.compared += 1;
        let kind = match class {
            FieldClass::Generated if !self.dry_run => self.kind_of(expected, segs),
            _ => None,
        };
        if matches!(class, FieldClass::Generated)
            && !self.dry_run
            && let Some(watch) = &mut self.symbols
            && let Some(mapped) = crate::symbols::mapped(watch.ids, expected, kind.as_deref())
            && !json_eq(actual, mapped)
        {
            watch.mismatches.push(Divergence {
                path: render_path(self.segs_root, segs),
                category: Category::SymbolMismatch,
                expected: mapped.clone(),
                actual: actual.clone(),
            });
        }
        if matches!(class, FieldClass::Enum(..)) {
            self.watch_exact(expected, actual, segs);
        }
        if json_eq(expected, actual) {
            return;
        }
        match class {
            FieldClass::Constant => {
                // Not reached from `walk` (constants descend structurally) but kept total.
                self.structural(None, expected, actual, segs);
            }
            FieldClass::Generated | FieldClass::Timestamp => {
                if JsonType::of(expected) != JsonType::of(actual) {
                    self.push(segs, Category::TypeMismatch, Some(expected), Some(actual));
                } else if matches!(class, FieldClass::Timestamp)
                    && !same_time_structure(expected, actual)
                {
                    self.push(segs, Category::ValueMismatch, Some(expected), Some(actual));
                } else if matches!(class, FieldClass::Generated)
                    && !self.dry_run
                    && matches!(expected, Value::String(_) | Value::Number(_))
                    && let Some(pairs) = &mut self.generated_pairs
                {
                    pairs.push(crate::idmap::IdPair {
                        recorded: expected.clone(),
                        answered: actual.clone(),
                        kind,
                    });
                }
            }
            FieldClass::Enum(members, more) => {
                let member = match self.enums.and_then(|ix| ix.accepts(more, actual)) {
                    Some(known) => known,
                    None => members.iter().chain(more).any(|m| json_eq(m, actual)),
                };
                if !member {
                    let cat = mismatch_category(expected, actual);
                    self.push(segs, cat, Some(expected), Some(actual));
                }
            }
            FieldClass::Echoed(from) => {
                let ok = match self.echo.value(from) {
                    Some(req) => {
                        echo_eq(actual, &req)
                            || (expected.is_string() && echo_as_text(actual, &req))
                    }
                    None => false,
                };
                if !ok {
                    let cat = mismatch_category(expected, actual);
                    self.push(segs, cat, Some(expected), Some(actual));
                    if !self.dry_run {
                        self.echo_failures.push(render_path(self.segs_root, segs));
                    }
                }
            }
        }
    }

    fn structural<'v>(
        &mut self,
        template: Option<&'v Node>,
        expected: &'v Value,
        actual: &'v Value,
        segs: &mut Vec<Seg<'v>>,
    ) {
        match (expected, actual) {
            (Value::Object(e), Value::Object(a)) => {
                let fields = match template {
                    Some(Node::Object { fields }) => Some(fields),
                    _ => None,
                };
                // Keys are looked up in `a` in `e`'s order; two bodies of one shape usually
                // list their keys in the same order, so `a`'s next entry is tried before the
                // hashed lookup (keys are unique: an equal key is the entry `get` finds).
                let mut next_in_a = a.iter().peekable();
                let mut found_in_a = 0usize;
                // The template lists its fields in the recorded key order too: its next field
                // is tried before the scan.
                let mut next_field = 0usize;
                for (k, ev) in e {
                    // A dry run past its limit only needs "more than": stop walking.
                    if self.over_limit() {
                        return;
                    }
                    segs.push(Seg::Key(k));
                    let av = match next_in_a.next_if(|(ak, _)| *ak == k) {
                        Some((_, av)) => Some(av),
                        None => get_key(a, k),
                    };
                    match av {
                        Some(av) => {
                            found_in_a += 1;
                            let t = fields
                                .and_then(|fs| {
                                    let i = match fs.get(next_field) {
                                        Some(f) if f.key == *k => next_field,
                                        _ => fs.iter().position(|f| f.key == *k)?,
                                    };
                                    next_field = i + 1;
                                    fs.get(i)
                                })
                                .map(|f| &f.value);
                            self.walk(t, ev, av, segs);
                        }
                        None => {
                            self.compared += 1;
                            self.push(segs, Category::MissingField, Some(ev), None);
                        }
                    }
                    segs.pop();
                }
                // Every key of `a` is one of `e`'s: no extra field to look for.
                if found_in_a == a.len() {
                    return;
                }
                for (k, av) in a {
                    if self.over_limit() {
                        return;
                    }
                    if !e.contains_key(k) {
                        self.compared += 1;
                        segs.push(Seg::Key(k));
                        self.push(segs, Category::ExtraField, None, Some(av));
                        segs.pop();
                    }
                }
            }
            (Value::Array(e), Value::Array(a)) => match template {
                Some(Node::Array(ArrayNode::List {
                    representatives,
                    discriminator,
                    ..
                })) if e.len().max(a.len()) <= MAX_UNORDERED => {
                    self.unordered(representatives, discriminator.as_deref(), e, a, segs)
                }
                Some(Node::Array(ArrayNode::List {
                    representatives,
                    discriminator,
                    ..
                })) => {
                    let policy = self.unknown_tags;
                    let disc = discriminator.as_deref();
                    self.positional(e, a, segs, |i, av| {
                        elem_for(representatives, disc, policy, av, i)
                    });
                }
                Some(Node::Array(ArrayNode::Tuple { items })) => {
                    self.positional(e, a, segs, |i, _| Elem::Node(items.get(i)));
                }
                _ => self.positional(e, a, segs, |_, _| Elem::Node(None)),
            },
            _ => {
                self.compared += 1;
                self.watch_exact(expected, actual, segs);
                if json_eq(expected, actual) {
                    return;
                }
                let cat = mismatch_category(expected, actual);
                self.push(segs, cat, Some(expected), Some(actual));
            }
        }
    }

    fn positional<'v>(
        &mut self,
        e: &'v [Value],
        a: &'v [Value],
        segs: &mut Vec<Seg<'v>>,
        tpl: impl Fn(usize, &Value) -> Elem<'v>,
    ) {
        if e.len() != a.len() {
            self.compared += 1;
            self.push(
                segs,
                Category::ArrayLengthMismatch,
                Some(&Value::from(e.len())),
                Some(&Value::from(a.len())),
            );
        }
        for (i, (ev, av)) in e.iter().zip(a.iter()).enumerate() {
            if self.over_limit() {
                return;
            }
            segs.push(Seg::Index(i));
            self.walk_elem(tpl(i, av), ev, av, segs);
            segs.pop();
        }
    }

    /// Walk one list element as `elem` says (see [`Elem`]).
    fn walk_elem<'v>(
        &mut self,
        elem: Elem<'v>,
        expected: &'v Value,
        actual: &'v Value,
        segs: &mut Vec<Seg<'v>>,
    ) {
        match elem {
            Elem::Node(t) => self.walk(t, expected, actual, segs),
            // A value equal to the recording passes under every class, so under every policy.
            _ if json_eq(expected, actual) => self.compared += 1,
            Elem::Unknown { key } => {
                self.compared += 1;
                segs.push(Seg::Key(key));
                self.push(
                    segs,
                    Category::UnknownTag,
                    expected.get(key),
                    actual.get(key),
                );
                segs.pop();
            }
            Elem::Common { key, reps } => {
                let (Value::Object(e), Value::Object(a)) = (expected, actual) else {
                    return self.structural(None, expected, actual, segs);
                };
                // The tag is the one thing known to differ: counted, not compared.
                self.compared += 1;
                let Some(Node::Object { fields }) = reps.first() else {
                    return;
                };
                for f in fields {
                    if f.key == key || !reps.iter().all(|r| has_key(r, &f.key)) {
                        continue;
                    }
                    if self.over_limit() {
                        return;
                    }
                    segs.push(Seg::Key(&f.key));
                    match (e.get(&f.key), a.get(&f.key)) {
                        (Some(ev), Some(av)) => self.walk(Some(&f.value), ev, av, segs),
                        (Some(ev), None) => {
                            self.compared += 1;
                            self.push(segs, Category::MissingField, Some(ev), None);
                        }
                        (None, Some(av)) => {
                            self.compared += 1;
                            self.push(segs, Category::ExtraField, None, Some(av));
                        }
                        (None, None) => {}
                    }
                    segs.pop();
                }
            }
        }
    }

    /// Match each recorded element to a twin element regardless of order: first equal elements,
    /// then the pairing with the fewest divergences. Elements left over are covered by the
    /// length divergence.
    fn unordered<'v>(
        &mut self,
        reps: &'v [Node],
        discriminator: Option<&'v str>,
        e: &'v [Value],
        a: &'v [Value],
        segs: &mut Vec<Seg<'v>>,
    ) {
        if e.len() != a.len() {
            self.compared += 1;
            self.push(
                segs,
                Category::ArrayLengthMismatch,
                Some(&Value::from(e.len())),
                Some(&Value::from(a.len())),
            );
            if self.over_limit() {
                return;
            }
        }
        // The representative each answered element was rendered from, picked once (in a
        // tagged union, the one of its own tag).
        let policy = self.unknown_tags;
        let rep: Vec<Elem<'v>> = a
            .iter()
            .enumerate()
            .map(|(j, av)| elem_for(reps, discriminator, policy, av, j))
            .collect();
        let mut used = vec![false; a.len()];
        let mut pair: Vec<Option<usize>> = vec![None; e.len()];
        // Pass 1: the same position, when it matches with no divergence.
        for (i, ev) in e.iter().enumerate() {
            if i < a.len() && self.cost(rep[i], ev, &a[i], 0) == 0 {
                pair[i] = Some(i);
                used[i] = true;
            }
        }
        // Pass 2: any unused element that matches with no divergence (each try stops at the
        // first divergence).
        let mut unmatched = 0u64;
        for (i, ev) in e.iter().enumerate() {
            if pair[i].is_some() {
                continue;
            }
            let mut found = false;
            for (j, av) in a.iter().enumerate() {
                if !used[j] && self.cost(rep[j], ev, av, 0) == 0 {
                    pair[i] = Some(j);
                    used[j] = true;
                    found = true;
                    break;
                }
            }
            // A dry run only needs "more than its limit". With equal lengths every recorded
            // element left unpaired here is paired in pass 3 at a cost of at least one (no
            // unused element matches it with none), so once those alone pass the limit the
            // count is known to exceed it.
            if !found {
                unmatched += 1;
                if self.dry_run
                    && e.len() == a.len()
                    && self.dry_count.saturating_add(unmatched) > self.dry_limit
                {
                    self.dry_count = self.dry_count.saturating_add(unmatched);
                    return;
                }
            }
        }
        // Pass 3: the cheapest remaining pairing (each try stops once it is no better than the
        // best so far). In a dry run a try also stops once it exceeds what is left of the run's
        // own limit: whenever some pairing fits in that budget the first cheapest one is still
        // the one chosen, and when none does the run is over its limit whichever is chosen.
        for (i, ev) in e.iter().enumerate() {
            if pair[i].is_some() {
                continue;
            }
            let budget = if self.dry_run {
                self.dry_limit.saturating_sub(self.dry_count)
            } else {
                u64::MAX
            };
            let mut best: Option<(u64, usize)> = None;
            for (j, av) in a.iter().enumerate() {
                if used[j] {
                    continue;
                }
                let limit = best
                    .map_or(u64::MAX, |(bc, _)| bc.saturating_sub(1))
                    .min(budget);
                let c = self.cost(rep[j], ev, av, limit);
                if best.is_none_or(|(bc, _)| c < bc) {
                    best = Some((c, j));
                }
            }
            if let Some((c, j)) = best {
                pair[i] = Some(j);
                used[j] = true;
                if self.dry_run {
                    // The cost found is what walking the pair adds (exact within the budget).
                    self.dry_count = self.dry_count.saturating_add(c);
                    if self.over_limit() {
                        return;
                    }
                }
            }
        }
        if self.dry_run {
            // Pairs from passes 1 and 2 cost nothing and pass 3 counted its own: no walk left.
            return;
        }
        for (i, ev) in e.iter().enumerate() {
            if let Some(j) = pair[i] {
                segs.push(Seg::Index(i));
                self.walk_elem(rep[j], ev, &a[j], segs);
                segs.pop();
            }
        }
    }

    /// Number of divergences `walk` would report, without recording them; once the count
    /// exceeds `limit` the walk stops (the result is then only known to be `> limit`).
    fn cost<'v>(
        &mut self,
        template: Elem<'v>,
        expected: &'v Value,
        actual: &'v Value,
        limit: u64,
    ) -> u64 {
        let saved = (self.dry_run, self.dry_count, self.dry_limit, self.compared);
        self.dry_run = true;
        self.dry_count = 0;
        self.dry_limit = limit;
        let mut segs = Vec::new();
        self.walk_elem(template, expected, actual, &mut segs);
        let n = self.dry_count;
        (self.dry_run, self.dry_count, self.dry_limit, self.compared) = saved;
        n
    }
}

/// How the answered list element at `index` is judged: in a tagged union (`discriminator`),
/// under the representative of its own tag, or by `policy` when its tag was never recorded;
/// otherwise under [`pick_rep`].
fn elem_for<'v>(
    reps: &'v [Node],
    discriminator: Option<&'v str>,
    policy: UnknownTagPolicy,
    element: &Value,
    index: usize,
) -> Elem<'v> {
    let Some(key) = discriminator else {
        return Elem::Node(pick_rep(reps, element, index));
    };
    if let Some(tag) = element.get(key).and_then(Value::as_str)
        && let Some(rep) = reps.iter().find(|r| ArrayNode::tag_of(r, key) == Some(tag))
    {
        return Elem::Node(Some(rep));
    }
    match policy {
        UnknownTagPolicy::RejectUnknown => Elem::Unknown { key },
        UnknownTagPolicy::FallbackCommonSchema => Elem::Common { key, reps },
        UnknownTagPolicy::ReplayRepresentative => Elem::Node(pick_rep(reps, element, index)),
    }
}

/// Whether a template is an object with a field `key`.
fn has_key(node: &Node, key: &str) -> bool {
    matches!(node, Node::Object { fields } if fields.iter().any(|f| f.key == key))
}

/// The representative a list element was most likely rendered from: the one whose shape fits
/// the element best (same JSON type, most shared keys); ties go to the cycle position.
fn pick_rep<'v>(reps: &'v [Node], element: &Value, index: usize) -> Option<&'v Node> {
    if reps.is_empty() {
        return None;
    }
    if reps.len() == 1 {
        return reps.first();
    }
    let mut best: Option<(i64, &Node)> = None;
    for (k, rep) in reps.iter().enumerate() {
        let mut score = fit(rep, element);
        if k == index % reps.len() {
            score = score * 2 + 1;
        } else {
            score *= 2;
        }
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, rep));
        }
    }
    best.map(|(_, n)| n)
}

/// The template a null-or-embedded-record hole ([`wraith_model::WhenAbsent::embeds`]) judges a
/// recorded record under, named or made by the request; `None` for other holes.
fn embedded_template(hole: &Hole) -> Option<&Node> {
    let e = hole.when_absent.as_deref()?.embeds.as_deref()?;
    (!e.entity_type.is_empty() || e.made).then_some(&e.template)
}

/// Objects of at most this many keys are searched by [`get_key`] entry by entry.
const SCAN_KEYS: usize = 64;

/// `m.get(key)`: a small object's keys are scanned (keys are unique, so the first equal key is
/// the entry `get` finds), which costs less than hashing `key` with the map's SipHash; a
/// larger object's are looked up. An answer's keys are often in another order than the
/// recording's (the twin serves an exact answer with its keys sorted), so the walks above
/// look many keys up.
fn get_key<'v>(m: &'v serde_json::Map<String, Value>, key: &str) -> Option<&'v Value> {
    if m.len() <= SCAN_KEYS {
        m.iter().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        m.get(key)
    }
}

/// How well `value` fits `node`: +1 per matching constant or present key, −1 per contradiction.
pub fn fit(node: &Node, value: &Value) -> i64 {
    match (node, value) {
        (Node::Const { value: c }, v) if json_eq(c, v) => 1,
        (Node::Const { .. }, _) => -1,
        (Node::Hole(h), v)
            if h.observed_type == JsonType::Mixed || h.observed_type == JsonType::of(v) =>
        {
            1
        }
        (Node::Hole(_), _) => -1,
        (Node::Object { fields }, Value::Object(m)) => {
            let mut s = 0;
            // `m`'s next entry is tried before the hashed lookup: a body usually lists its
            // keys in its template's order (keys are unique: an equal key is the entry `get`
            // finds).
            let mut next_in_m = m.iter().peekable();
            let mut found_in_m = 0usize;
            for f in fields {
                let found = match next_in_m.next_if(|(k, _)| **k == f.key) {
                    Some((_, v)) => Some(v),
                    None => get_key(m, &f.key),
                };
                match found {
                    Some(v) => {
                        found_in_m += 1;
                        s += 1 + fit(&f.value, v);
                    }
                    None if f.optional => {}
                    None => s -= 1,
                }
            }
            // Each field found names a different key of `m`: when they are as many as its
            // keys, none is missing from the template.
            if found_in_m != m.len() {
                for k in m.keys() {
                    if !fields.iter().any(|f| f.key == *k) {
                        s -= 1;
                    }
                }
            }
            s
        }
        (Node::Array(ArrayNode::Tuple { items }), Value::Array(a)) => {
            let mut s = if items.len() == a.len() { 1 } else { -1 };
            for (n, v) in items.iter().zip(a) {
                s += fit(n, v);
            }
            s
        }
        (
            Node::Array(ArrayNode::List {
                representatives, ..
            }),
            Value::Array(a),
        ) => {
            let mut s = 1;
            if let (Some(r), Some(v)) = (representatives.first(), a.first()) {
                s += fit(r, v);
            }
            s
        }
        _ => -1,
    }
}

/// A template placeholder in a body: the twin must never send one. Templates are trees, so this
/// only fires on an engine bug (or a hand-edited model). Searches one text; the judge also
/// searches the decoded strings of a JSON answer that spells a marker with escapes.
pub fn leaked_placeholder(body: &str) -> Option<String> {
    for marker in ["$hole_", "$arr_"] {
        if let Some(at) = body.find(marker) {
            let tail: String = body[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                .collect();
            return Some(tail);
        }
    }
    None
}

/// At a `timestamp` position: a recorded text that names an instant (an ISO 8601 / RFC 3339
/// timestamp, a date, epoch digits: [`wraith_model::clock::instant_of`], the reading synth and
/// the engine share) must be answered with a text that names one too; any other recorded value
/// is held to its JSON type only (an epoch number stays a number).
fn same_time_structure(expected: &Value, actual: &Value) -> bool {
    match expected {
        Value::String(_) if wraith_model::clock::instant_of(expected).is_some() => {
            wraith_model::clock::instant_of(actual).is_some()
        }
        _ => true,
    }
}

/// A differing leaf is a `type_mismatch` when the JSON types differ, else a `value_mismatch`.
fn mismatch_category(expected: &Value, actual: &Value) -> Category {
    if JsonType::of(expected) != JsonType::of(actual) {
        Category::TypeMismatch
    } else {
        Category::ValueMismatch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wraith_model::{ClockUnit, Field, IdShape};

    fn hole(source: HoleKind, t: JsonType, examples: Vec<Value>) -> Node {
        Node::Hole(Hole {
            source,
            observed_type: t,
            examples,
            more_examples: Vec::new(),
            examples_cut: false,
            confidence_bp: 10_000,
            when_absent: None,
            keyed: None,
        })
    }

    fn obj(fields: Vec<(&str, Node)>) -> Node {
        Node::Object {
            fields: fields
                .into_iter()
                .map(|(k, v)| Field {
                    key: k.to_string(),
                    value: v,
                    optional: false,
                    present_ratio_bp: 10_000,
                })
                .collect(),
        }
    }

    fn c(v: Value) -> Node {
        Node::Const { value: v }
    }

    fn diff(t: Option<&Node>, e: Value, a: Value, echo: &EchoContext) -> Vec<(String, Category)> {
        let mut d = BodyDiff::new(echo);
        d.run(t, &e, &a);
        d.divergences
            .into_iter()
            .map(|x| (x.path, x.category))
            .collect()
    }

    #[test]
    fn numbers_compare_as_numbers() {
        let echo = EchoContext::default();
        assert!(diff(None, json!({"a": 50}), json!({"a": 50.0}), &echo).is_empty());
        assert_eq!(
            diff(None, json!({"a": 50}), json!({"a": 51}), &echo),
            vec![("body.a".to_string(), Category::ValueMismatch)]
        );
    }

    #[test]
    fn constant_mismatch_names_the_innermost_path() {
        let echo = EchoContext::default();
        let t = obj(vec![("meta", c(json!({"plan": {"tier": "free"}})))]);
        let d = diff(
            Some(&t),
            json!({"meta": {"plan": {"tier": "free"}}}),
            json!({"meta": {"plan": {"tier": "pro"}}}),
            &echo,
        );
        assert_eq!(
            d,
            vec![("body.meta.plan.tier".to_string(), Category::ValueMismatch)]
        );
    }

    #[test]
    fn generated_and_timestamp_fields_compare_type_only() {
        let echo = EchoContext::default();
        let t = obj(vec![
            (
                "id",
                hole(
                    HoleKind::Generated {
                        shape: IdShape::Uuid,
                    },
                    JsonType::String,
                    vec![],
                ),
            ),
            (
                "at",
                hole(
                    HoleKind::Clock {
                        unit: ClockUnit::EpochSec,
                        after: None,
                    },
                    JsonType::Number,
                    vec![],
                ),
            ),
        ]);
        assert!(
            diff(
                Some(&t),
                json!({"id": "a", "at": 1}),
                json!({"id": "b", "at": 2}),
                &echo
            )
            .is_empty()
        );
        assert_eq!(
            diff(
                Some(&t),
                json!({"id": "a", "at": 1}),
                json!({"id": 7, "at": "x"}),
                &echo
            ),
            vec![
                ("body.id".to_string(), Category::TypeMismatch),
                ("body.at".to_string(), Category::TypeMismatch)
            ]
        );
    }

    #[test]
    fn a_timestamp_position_recorded_as_a_timestamp_text_needs_a_timestamp_text() {
        let echo = EchoContext::default();
        let clock =
            |unit: ClockUnit, t: JsonType| hole(HoleKind::Clock { unit, after: None }, t, vec![]);
        let iso = ClockUnit::Iso8601 {
            fraction_digits: 0,
            suffix: "Z".into(),
        };
        let t = obj(vec![
            ("at", clock(iso, JsonType::String)),
            ("epoch", clock(ClockUnit::EpochSec, JsonType::Number)),
        ]);
        let recorded = json!({"at": "2024-01-01T10:00:00Z", "epoch": 1_700_000_000});
        for fine in [
            json!({"at": "2031-05-06T07:08:09Z", "epoch": 1_800_000_000}),
            json!({"at": "1970-01-01T00:00:00.123+02:00", "epoch": 5}),
            json!({"at": "2031-05-06 07:08:09", "epoch": 1.5}),
        ] {
            assert!(
                diff(Some(&t), recorded.clone(), fine.clone(), &echo).is_empty(),
                "{fine}"
            );
        }
        for wrong in ["not a date", "", "2024-13-45T10:00:00Z"] {
            assert_eq!(
                diff(
                    Some(&t),
                    recorded.clone(),
                    json!({"at": wrong, "epoch": 1}),
                    &echo
                ),
                vec![("body.at".to_string(), Category::ValueMismatch)],
                "{wrong}"
            );
        }
        assert_eq!(
            diff(Some(&t), recorded, json!({"at": 0, "epoch": "1"}), &echo),
            vec![
                ("body.at".to_string(), Category::TypeMismatch),
                ("body.epoch".to_string(), Category::TypeMismatch)
            ]
        );
        // A `[diff.fields]` timestamp is held alike; a recorded text that names no instant
        // keeps the type-only rule.
        let rules = user_rules(vec![("at", "timestamp", None)]);
        let at = |v: &str| json!({ "at": v });
        assert_eq!(
            diff_with(&rules, None, at("2024-01-01T10:00:00Z"), at("soon"), &echo).0,
            vec![("body.at".to_string(), Category::ValueMismatch)]
        );
        assert!(
            diff_with(&rules, None, at("yesterday"), at("soon"), &echo)
                .0
                .is_empty()
        );
    }

    #[test]
    fn a_body_listing_its_keys_out_of_the_templates_order_is_judged_by_each_keys_own_node() {
        let echo = EchoContext::default();
        let generated = || {
            hole(
                HoleKind::Generated {
                    shape: IdShape::Uuid,
                },
                JsonType::String,
                vec![],
            )
        };
        let t = obj(vec![
            ("id", generated()),
            ("kind", c(json!("card"))),
            ("ref", generated()),
        ]);
        // Keys in the template's order, reversed, and one the template lacks first.
        for (e, a) in [
            (
                json!({"id": "a", "kind": "card", "ref": "r"}),
                json!({"id": "b", "kind": "card", "ref": "s"}),
            ),
            (
                json!({"ref": "r", "kind": "card", "id": "a"}),
                json!({"ref": "s", "kind": "card", "id": "b"}),
            ),
            (
                json!({"x": 1, "ref": "r", "id": "a", "kind": "card"}),
                json!({"x": 1, "ref": "s", "id": "b", "kind": "card"}),
            ),
        ] {
            assert!(diff(Some(&t), e, a, &echo).is_empty());
        }
        assert_eq!(
            diff(
                Some(&t),
                json!({"ref": "r", "kind": "card", "id": "a"}),
                json!({"ref": "s", "kind": "bank", "id": "b"}),
                &echo
            ),
            vec![("body.kind".to_string(), Category::ValueMismatch)]
        );
    }

    #[test]
    fn fit_takes_one_point_per_key_the_template_lacks_whatever_the_order() {
        let t = obj(vec![("a", c(json!(1))), ("b", c(json!(2)))]);
        // Both fields present and equal: 2 points each.
        assert_eq!(fit(&t, &json!({"a": 1, "b": 2})), 4);
        assert_eq!(fit(&t, &json!({"b": 2, "a": 1})), 4);
        // A key the template lacks costs one, wherever it stands.
        assert_eq!(fit(&t, &json!({"z": 0, "a": 1, "b": 2})), 3);
        assert_eq!(fit(&t, &json!({"b": 2, "z": 0, "a": 1, "y": 0})), 2);
        // A missing required field costs one too.
        assert_eq!(fit(&t, &json!({"a": 1, "z": 0})), 2 - 1 - 1);
    }

    #[test]
    fn enum_fields_must_be_a_recorded_member() {
        let echo = EchoContext::default();
        let t = obj(vec![(
            "state",
            hole(
                HoleKind::Observed,
                JsonType::String,
                vec![json!("open"), json!("closed")],
            ),
        )]);
        assert!(
            diff(
                Some(&t),
                json!({"state": "open"}),
                json!({"state": "closed"}),
                &echo
            )
            .is_empty()
        );
        assert_eq!(
            diff(
                Some(&t),
                json!({"state": "open"}),
                json!({"state": "weird"}),
                &echo
            ),
            vec![("body.state".to_string(), Category::ValueMismatch)]
        );
    }

    #[test]
    fn enum_position_accepts_a_recorded_value_past_the_rendered_examples() {
        // Synth renders from the first 8 recorded values but keeps the rest for the judge: a
        // twin answering the 10th recorded value answered a recorded value.
        let echo = EchoContext::default();
        let recorded: Vec<Value> = (0..10).map(|i| json!(format!("host-{i}"))).collect();
        let Node::Hole(mut h) = hole(HoleKind::Observed, JsonType::String, recorded[..8].to_vec())
        else {
            unreachable!()
        };
        h.more_examples = recorded[8..].to_vec();
        let t = obj(vec![("host_uuid", Node::Hole(h.clone()))]);
        assert!(
            diff(
                Some(&t),
                json!({"host_uuid": "host-0"}),
                json!({"host_uuid": "host-9"}),
                &echo
            )
            .is_empty()
        );
        assert_eq!(
            diff(
                Some(&t),
                json!({"host_uuid": "host-0"}),
                json!({"host_uuid": "host-10"}),
                &echo
            ),
            vec![("body.host_uuid".to_string(), Category::ValueMismatch)]
        );
        // A cut set is not "any value": a value outside the kept ones still fails.
        h.examples_cut = true;
        let t = obj(vec![("host_uuid", Node::Hole(h))]);
        assert_eq!(
            diff(
                Some(&t),
                json!({"host_uuid": "host-0"}),
                json!({"host_uuid": "host-10"}),
                &echo
            ),
            vec![("body.host_uuid".to_string(), Category::ValueMismatch)]
        );
    }

    /// An `enum` hole with `host-0`..`host-{n-1}` recorded (8 rendered, the rest kept), plus the
    /// number `7` and `null`, under `host_uuid`.
    fn wide_enum(n: usize) -> Node {
        let mut recorded: Vec<Value> = (0..n).map(|i| json!(format!("host-{i}"))).collect();
        recorded.extend([json!(7), Value::Null]);
        let Node::Hole(mut h) = hole(HoleKind::Observed, JsonType::Mixed, recorded[..8].to_vec())
        else {
            unreachable!()
        };
        h.more_examples = recorded[8..].to_vec();
        obj(vec![("host_uuid", Node::Hole(h))])
    }

    #[test]
    fn an_indexed_enum_position_accepts_its_recorded_values_and_no_other() {
        let echo = EchoContext::default();
        let t = wide_enum(40);
        let index = EnumIndex::of_templates([&t]);
        let judge = |actual: Value| {
            let mut d = BodyDiff::new(&echo).with_enums(&index);
            d.run(
                Some(&t),
                &json!({"host_uuid": "host-0"}),
                &json!({ "host_uuid": actual }),
            );
            d.divergences.len()
        };
        // A recorded string past the rendered examples, a recorded number (as a number), and
        // a recorded null pass; an unrecorded string, or the number's text, does not.
        assert_eq!(judge(json!("host-39")), 0);
        assert_eq!(judge(json!(7.0)), 0);
        assert_eq!(judge(Value::Null), 0);
        assert_eq!(judge(json!("host-40")), 1);
        assert_eq!(judge(json!("7")), 1);
    }

    #[test]
    fn echoed_fields_must_equal_the_request_value() {
        let echo = EchoContext::new(
            Some("/v1/items/:param"),
            "/v1/items/42",
            "q=hello",
            Some("application/x-www-form-urlencoded"),
            b"name=bob&limit=5&a[b]=deep",
            vec![],
        );
        let t = obj(vec![
            (
                "id",
                hole(
                    HoleKind::Echo {
                        from: EchoSource::Path {
                            param: "param".into(),
                        },
                    },
                    JsonType::String,
                    vec![],
                ),
            ),
            (
                "limit",
                hole(
                    HoleKind::Echo {
                        from: EchoSource::Body {
                            pointer: "/limit".into(),
                        },
                    },
                    JsonType::Number,
                    vec![],
                ),
            ),
            (
                "deep",
                hole(
                    HoleKind::Echo {
                        from: EchoSource::Body {
                            pointer: "/a/b".into(),
                        },
                    },
                    JsonType::String,
                    vec![],
                ),
            ),
            (
                "q",
                hole(
                    HoleKind::Echo {
                        from: EchoSource::Query { name: "q".into() },
                    },
                    JsonType::String,
                    vec![],
                ),
            ),
        ]);
        // The recording was made with other values: the twin echoing this request passes.
        assert!(
            diff(
                Some(&t),
                json!({"id": "1", "limit": 9, "deep": "x", "q": "y"}),
                json!({"id": "42", "limit": 5, "deep": "deep", "q": "hello"}),
                &echo
            )
            .is_empty()
        );
        assert_eq!(
            diff(
                Some(&t),
                json!({"id": "1", "limit": 9, "deep": "x", "q": "y"}),
                json!({"id": "43", "limit": 7, "deep": "deep", "q": "hello"}),
                &echo
            ),
            vec![
                ("body.id".to_string(), Category::ValueMismatch),
                ("body.limit".to_string(), Category::ValueMismatch)
            ]
        );
    }

    #[test]
    fn echoed_json_number_answered_as_string_is_a_type_mismatch() {
        let echo = EchoContext::new(
            Some("/widgets"),
            "/widgets",
            "",
            Some("application/json"),
            br#"{"qty":21,"on":true}"#,
            vec![],
        );
        let body = |pointer: &str, t: JsonType| {
            hole(
                HoleKind::Echo {
                    from: EchoSource::Body {
                        pointer: pointer.into(),
                    },
                },
                t,
                vec![],
            )
        };
        let t = obj(vec![
            ("qty", body("/qty", JsonType::Number)),
            ("on", body("/on", JsonType::Bool)),
        ]);
        let recorded = json!({"qty": 21, "on": true});
        assert!(
            diff(
                Some(&t),
                recorded.clone(),
                json!({"qty": 21.0, "on": true}),
                &echo
            )
            .is_empty()
        );
        assert_eq!(
            diff(
                Some(&t),
                recorded,
                json!({"qty": "21", "on": "true"}),
                &echo
            ),
            vec![
                ("body.qty".to_string(), Category::TypeMismatch),
                ("body.on".to_string(), Category::TypeMismatch)
            ]
        );
        // Where the recording itself answered the sent number as text, its text echoes it.
        let t = obj(vec![("qty", body("/qty", JsonType::String))]);
        assert!(diff(Some(&t), json!({"qty": "9"}), json!({"qty": "21"}), &echo).is_empty());
        assert_eq!(
            diff(Some(&t), json!({"qty": "9"}), json!({"qty": "22"}), &echo),
            vec![("body.qty".to_string(), Category::ValueMismatch)]
        );
    }

    #[allow(clippy::unwrap_used)]
    fn user_rules(fields: Vec<(&str, &str, Option<Vec<Value>>)>) -> crate::rules::DiffRules {
        crate::rules::DiffRules::compile(&crate::rules::RulesInput {
            fields: fields
                .into_iter()
                .map(|(path, classify, values)| crate::rules::FieldInput {
                    path: path.into(),
                    classify: classify.into(),
                    values,
                    line: 1,
                })
                .collect(),
            ..Default::default()
        })
        .unwrap()
    }

    fn diff_with(
        rules: &crate::rules::DiffRules,
        t: Option<&Node>,
        e: Value,
        a: Value,
        echo: &EchoContext,
    ) -> (Vec<(String, Category)>, Vec<String>) {
        let mut d = BodyDiff::new(echo).with_fields(Some(rules));
        d.run(t, &e, &a);
        (
            d.divergences
                .into_iter()
                .map(|x| (x.path, x.category))
                .collect(),
            d.echo_failures,
        )
    }

    #[test]
    fn user_field_classes_win_over_the_model() {
        let echo = EchoContext::default();
        let t = obj(vec![
            (
                "state",
                hole(
                    HoleKind::Observed,
                    JsonType::String,
                    vec![json!("open"), json!("closed")],
                ),
            ),
            ("name", c(json!("a"))),
        ]);
        // The model would accept `closed`; the user says the state is constant.
        let rules = user_rules(vec![
            ("state", "constant", None),
            ("name", "generated", None),
        ]);
        let (d, _) = diff_with(
            &rules,
            Some(&t),
            json!({"state": "open", "name": "a"}),
            json!({"state": "closed", "name": "b"}),
            &echo,
        );
        assert_eq!(d, vec![("body.state".to_string(), Category::ValueMismatch)]);
        // An enum with values accepts exactly those (and the recorded value).
        let rules = user_rules(vec![(
            "items[*].state",
            "enum",
            Some(vec![json!("shipped")]),
        )]);
        let (d, _) = diff_with(
            &rules,
            None,
            json!({"items": [{"state": "new"}, {"state": "new"}, {"state": "new"}]}),
            json!({"items": [{"state": "shipped"}, {"state": "new"}, {"state": "lost"}]}),
            &echo,
        );
        assert_eq!(
            d,
            vec![("body.items[2].state".to_string(), Category::ValueMismatch)]
        );
    }

    #[test]
    fn user_echoed_field_without_a_model_source_accepts_any_request_value() {
        let echo = EchoContext::new(
            Some("/v1/items/:param"),
            "/v1/items/42",
            "q=hello",
            Some("application/json"),
            br#"{"deep": {"n": 5}}"#,
            vec![("x-tenant".into(), "acme".into())],
        );
        let rules = user_rules(vec![("**.ref", "echoed", None)]);
        for ok in [json!("42"), json!("hello"), json!("acme"), json!(5)] {
            let (d, f) = diff_with(
                &rules,
                None,
                json!({"a": {"ref": "x"}}),
                json!({"a": {"ref": ok}}),
                &echo,
            );
            assert!(d.is_empty() && f.is_empty(), "{d:?}");
        }
        let (d, f) = diff_with(
            &rules,
            None,
            json!({"ref": "x"}),
            json!({"ref": "nope"}),
            &echo,
        );
        assert_eq!(d, vec![("body.ref".to_string(), Category::ValueMismatch)]);
        assert_eq!(f, vec!["body.ref".to_string()]);
    }

    #[test]
    fn missing_and_extra_fields_are_reported() {
        let echo = EchoContext::default();
        assert_eq!(
            diff(
                None,
                json!({"a": 1, "b": 2}),
                json!({"a": 1, "c": 3}),
                &echo
            ),
            vec![
                ("body.b".to_string(), Category::MissingField),
                ("body.c".to_string(), Category::ExtraField)
            ]
        );
    }

    #[test]
    fn list_arrays_match_order_independently_and_tuples_by_position() {
        let echo = EchoContext::default();
        let item = obj(vec![("id", c(json!(1))), ("name", c(json!("a")))]);
        let list = Node::Array(ArrayNode::List {
            representatives: vec![item],
            target_length: 2,
            discriminator: None,
        });
        let e = json!([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]);
        let a = json!([{"id": 2, "name": "b"}, {"id": 1, "name": "a"}]);
        assert!(diff(Some(&list), e.clone(), a.clone(), &echo).is_empty());
        // Without a List node the order matters.
        assert_eq!(diff(None, e.clone(), a, &echo).len(), 4);
        // A changed element is reported at the recorded element's position.
        let a2 = json!([{"id": 2, "name": "b"}, {"id": 1, "name": "z"}]);
        assert_eq!(
            diff(Some(&list), e.clone(), a2, &echo),
            vec![("body[0].name".to_string(), Category::ValueMismatch)]
        );
        let a3 = json!([{"id": 1, "name": "a"}]);
        assert_eq!(
            diff(Some(&list), e.clone(), a3, &echo),
            vec![("body".to_string(), Category::ArrayLengthMismatch)]
        );
        // A Tuple node compares by position: the same swap diverges.
        let tuple = Node::Array(ArrayNode::Tuple {
            items: vec![
                obj(vec![("id", c(json!(1))), ("name", c(json!("a")))]),
                obj(vec![("id", c(json!(2))), ("name", c(json!("b")))]),
            ],
        });
        let swapped = json!([{"id": 2, "name": "b"}, {"id": 1, "name": "a"}]);
        assert_eq!(diff(Some(&tuple), e, swapped, &echo).len(), 4);
    }

    /// Where no answered element equals a recorded one, the elements are paired so that the
    /// fewest divergences are reported, not in the order they come.
    #[test]
    fn unmatched_list_elements_are_paired_by_the_fewest_divergences() {
        let echo = EchoContext::default();
        let item = obj(vec![
            ("id", c(json!(1))),
            ("name", c(json!("a"))),
            ("x", c(json!(1))),
        ]);
        let list = Node::Array(ArrayNode::List {
            representatives: vec![item],
            target_length: 2,
            discriminator: None,
        });
        let e = json!([{"id": 1, "name": "a", "x": 1}, {"id": 2, "name": "b", "x": 2}]);
        let a = json!([{"id": 9, "name": "b", "x": 2}, {"id": 1, "name": "a", "x": 7}]);
        assert_eq!(
            diff(Some(&list), e, a, &echo),
            vec![
                ("body[0].x".to_string(), Category::ValueMismatch),
                ("body[1].id".to_string(), Category::ValueMismatch),
            ]
        );
    }

    /// A feed of `mention` (with a status) and `follow` entries, tagged by `type`.
    fn feed_template() -> Node {
        let id = || {
            hole(
                HoleKind::Generated {
                    shape: wraith_model::IdShape::Uuid,
                },
                JsonType::String,
                vec![],
            )
        };
        Node::Array(ArrayNode::List {
            representatives: vec![
                obj(vec![
                    ("id", id()),
                    ("type", c(json!("mention"))),
                    ("status", id()),
                ]),
                obj(vec![("id", id()), ("type", c(json!("follow")))]),
            ],
            target_length: 2,
            discriminator: Some("type".into()),
        })
    }

    fn diff_policy(
        t: &Node,
        e: Value,
        a: Value,
        policy: UnknownTagPolicy,
    ) -> Vec<(String, Category)> {
        let echo = EchoContext::default();
        let mut d = BodyDiff::new(&echo).with_unknown_tags(policy);
        d.run(Some(t), &e, &a);
        d.divergences
            .into_iter()
            .map(|x| (x.path, x.category))
            .collect()
    }

    #[test]
    fn tagged_union_elements_are_judged_under_their_own_tag() {
        let t = feed_template();
        let e =
            json!([{"id": "a", "type": "mention", "status": "s"}, {"id": "b", "type": "follow"}]);
        let a =
            json!([{"id": "y", "type": "follow"}, {"id": "x", "type": "mention", "status": "t"}]);
        assert!(diff_policy(&t, e.clone(), a, UnknownTagPolicy::RejectUnknown).is_empty());
        // An answered follow carrying a status is held to the follow schema: an extra field.
        let a = json!([{"id": "x", "type": "mention", "status": "t"}, {"id": "y", "type": "follow", "status": "u"}]);
        assert_eq!(
            diff_policy(&t, e, a, UnknownTagPolicy::RejectUnknown),
            vec![("body[1].status".to_string(), Category::ExtraField)]
        );
    }

    #[test]
    fn an_unrecorded_tag_is_rejected_by_default() {
        let t = feed_template();
        let e =
            json!([{"id": "a", "type": "mention", "status": "s"}, {"id": "b", "type": "follow"}]);
        let a = json!([{"id": "x", "type": "mention", "status": "t"}, {"id": "y", "type": "poll", "votes": 3}]);
        assert_eq!(
            diff_policy(&t, e.clone(), a.clone(), UnknownTagPolicy::RejectUnknown),
            vec![("body[1].type".to_string(), Category::UnknownTag)]
        );
        // Under the common schema only `id` and `type` are shared: the id is a generated
        // position, the tag is not compared and `votes` is no type's common key.
        assert!(
            diff_policy(
                &t,
                e.clone(),
                a.clone(),
                UnknownTagPolicy::FallbackCommonSchema
            )
            .is_empty()
        );
        // Under the representative it fits best (follow), every key is compared.
        assert_eq!(
            diff_policy(&t, e, a, UnknownTagPolicy::ReplayRepresentative),
            vec![
                ("body[1].type".to_string(), Category::ValueMismatch),
                ("body[1].votes".to_string(), Category::ExtraField)
            ]
        );
    }

    #[test]
    fn the_common_schema_still_reports_a_missing_common_key() {
        let t = feed_template();
        let e = json!([{"id": "b", "type": "follow"}]);
        let a = json!([{"type": "poll"}]);
        assert_eq!(
            diff_policy(&t, e, a, UnknownTagPolicy::FallbackCommonSchema),
            vec![("body[0].id".to_string(), Category::MissingField)]
        );
    }

    #[test]
    fn an_unrecorded_tag_equal_to_the_recording_passes_under_every_policy() {
        let t = feed_template();
        let e = json!([{"id": "a", "type": "poll", "votes": 1}, {"id": "b", "type": "follow"}]);
        for p in UnknownTagPolicy::ALL {
            assert!(diff_policy(&t, e.clone(), e.clone(), p).is_empty(), "{p:?}");
        }
    }

    #[test]
    fn odd_keys_are_quoted_in_paths() {
        let echo = EchoContext::default();
        assert_eq!(
            diff(None, json!({"a.b": 1}), json!({"a.b": 2}), &echo),
            vec![("body[\"a.b\"]".to_string(), Category::ValueMismatch)]
        );
    }

    #[test]
    fn placeholders_are_detected() {
        assert_eq!(
            leaked_placeholder(r#"{"a":"$hole_3"}"#).as_deref(),
            Some("$hole_3")
        );
        assert_eq!(leaked_placeholder(r#"{"a":"fine"}"#), None);
    }

    /// Small values over a tiny alphabet, so that list elements often match partly.
    fn small_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(json!(0)),
            Just(json!(1)),
            Just(json!("x")),
            Just(Value::Null)
        ];
        leaf.prop_recursive(3, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map("[abc]", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// A template with a `List` at every array (so nested lists are matched order-independently
    /// inside the trial pairings) and a hole at every other leaf.
    fn lists_everywhere(v: &Value) -> Node {
        match v {
            Value::Array(a) => Node::Array(ArrayNode::List {
                representatives: a.first().map(lists_everywhere).into_iter().collect(),
                target_length: a.len(),
                discriminator: None,
            }),
            Value::Object(m) => obj(m
                .iter()
                .map(|(k, x)| (k.as_str(), lists_everywhere(x)))
                .collect()),
            leaf => hole(HoleKind::Observed, JsonType::of(leaf), vec![json!(0)]),
        }
    }

    /// Answers at a [`wide_enum`] position: recorded and unrecorded strings, numbers written
    /// either way, `null`, and a number's text.
    fn enum_answer() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        prop_oneof![
            (0usize..40).prop_map(|i| json!(format!("host-{i}"))),
            (0i64..10).prop_map(|i| json!(i)),
            (0i64..10).prop_map(|i| json!(i as f64)),
            Just(Value::Null),
            Just(json!("7")),
        ]
    }

    proptest::proptest! {
        /// Looking an `enum` position up in the model's index judges every answer as scanning
        /// the position's recorded values does.
        #[test]
        fn an_indexed_enum_position_judges_as_the_scan_does(
            n in 9usize..30,
            actual in enum_answer(),
        ) {
            let echo = EchoContext::default();
            let t = wide_enum(n);
            let index = EnumIndex::of_templates([&t]);
            let recorded = json!({"host_uuid": "host-0"});
            let answer = json!({ "host_uuid": actual });
            let mut scanned = BodyDiff::new(&echo);
            scanned.run(Some(&t), &recorded, &answer);
            let mut looked_up = BodyDiff::new(&echo).with_enums(&index);
            looked_up.run(Some(&t), &recorded, &answer);
            proptest::prop_assert_eq!(scanned.divergences, looked_up.divergences);
        }
    }

    proptest::proptest! {
        /// A dry run's count is exact while within its limit and only "more than" beyond it:
        /// the shortcuts that stop a trial pairing early never change which pairing is chosen.
        #[test]
        fn a_dry_run_is_exact_within_its_limit(
            e in proptest::collection::vec(small_value(), 0..7),
            a in proptest::collection::vec(small_value(), 0..7),
            limit in 0u64..6,
        ) {
            let (e, a) = (Value::Array(e), Value::Array(a));
            let echo = EchoContext::default();
            for t in [Some(lists_everywhere(&e)), Some(lists_everywhere(&a)), None] {
                let mut d = BodyDiff::new(&echo);
                d.run(t.as_ref(), &e, &a);
                let full = d.cost(Elem::Node(t.as_ref()), &e, &a, u64::MAX);
                proptest::prop_assert_eq!(full, d.divergences.len() as u64);
                let bounded = d.cost(Elem::Node(t.as_ref()), &e, &a, limit);
                if full <= limit {
                    proptest::prop_assert_eq!(bounded, full);
                } else {
                    proptest::prop_assert!(bounded > limit, "{} <= {}", bounded, limit);
                }
            }
        }
    }

    /// The create request both embedded-record tests answer: a note quoting note `42`.
    fn quoting_create() -> EchoContext {
        EchoContext::new(
            None,
            "/v1/notes",
            "",
            Some("application/json"),
            br#"{"quoted_id": "42", "text": "mine"}"#,
            vec![],
        )
    }

    /// A `quote` position: `null` without `quoted_id`, else `{state, quoted: <note>}` whose
    /// note's `id` echoes `quoted_id` (as synth learns it), with two recorded values.
    fn embedded_quote() -> Node {
        let recorded = vec![
            Value::Null,
            json!({"state": "accepted", "quoted": {"id": "7", "text": "a"}}),
            json!({"state": "accepted", "quoted": {"id": "8", "text": "b"}}),
        ];
        let quoted_id = EchoSource::Body {
            pointer: "/quoted_id".into(),
        };
        let template = obj(vec![
            ("state", c(json!("accepted"))),
            (
                "quoted",
                obj(vec![
                    (
                        "id",
                        hole(
                            HoleKind::Echo {
                                from: quoted_id.clone(),
                            },
                            JsonType::String,
                            vec![],
                        ),
                    ),
                    (
                        "text",
                        hole(
                            HoleKind::Echo {
                                from: EchoSource::Body {
                                    pointer: "/text".into(),
                                },
                            },
                            JsonType::String,
                            vec![json!("a"), json!("b")],
                        ),
                    ),
                ]),
            ),
        ]);
        let Node::Hole(mut h) = hole(HoleKind::Observed, JsonType::Mixed, recorded) else {
            unreachable!()
        };
        h.when_absent = Some(Box::new(wraith_model::WhenAbsent {
            field: quoted_id,
            value: Value::Null,
            embeds: Some(Box::new(wraith_model::EmbeddedRecord {
                entity_type: "notes".into(),
                at: "/quoted".into(),
                template,
                made: false,
            })),
        }));
        obj(vec![("quote", Node::Hole(h))])
    }

    #[test]
    fn an_embedded_record_is_judged_as_the_record_the_request_named() {
        let echo = quoting_create();
        let t = embedded_quote();
        let recorded = json!({"quote": {"state": "accepted", "quoted": {"id": "7", "text": "a"}}});
        // The session's own note (its id the request sent, not the recorded one) passes.
        let mine = json!({"quote": {"state": "accepted", "quoted": {"id": "42", "text": "mine"}}});
        assert!(diff(Some(&t), recorded.clone(), mine, &echo).is_empty());
        // A recorded note other than the one the request named fails, although it is one of
        // the position's recorded values.
        let other = json!({"quote": {"state": "accepted", "quoted": {"id": "8", "text": "b"}}});
        assert_eq!(
            diff(Some(&t), recorded.clone(), other, &echo),
            vec![
                ("body.quote.quoted.id".to_string(), Category::ValueMismatch),
                (
                    "body.quote.quoted.text".to_string(),
                    Category::ValueMismatch
                ),
            ]
        );
        // `null` on one side is judged as before: a recorded value of the position.
        assert_eq!(
            diff(Some(&t), recorded, json!({"quote": null}), &echo),
            Vec::<(String, Category)>::new()
        );
    }

    #[test]
    fn an_embedded_record_counts_as_one_compared_position() {
        let echo = quoting_create();
        let t = embedded_quote();
        let mut d = BodyDiff::new(&echo);
        let mine = json!({"quote": {"state": "accepted", "quoted": {"id": "42", "text": "mine"}}});
        d.run(
            Some(&t),
            &json!({"quote": {"state": "accepted", "quoted": {"id": "7", "text": "a"}}}),
            &mine,
        );
        assert_eq!(d.compared, 1);
    }
    #[test]
    fn a_made_record_is_judged_under_its_template() {
        // A post's poll: `null` without `poll`, else a poll made from it, its key minted and its
        // `multiple` the sent one.
        let echo = EchoContext::new(
            None,
            "/v1/posts",
            "",
            Some("application/json"),
            br#"{"poll": {"multiple": false}}"#,
            vec![],
        );
        let recorded = vec![
            Value::Null,
            json!({"id": "1", "multiple": true}),
            json!({"id": "2", "multiple": false}),
        ];
        let template = obj(vec![
            (
                "id",
                hole(
                    HoleKind::Generated {
                        shape: wraith_model::IdShape::Integer {
                            above: 2,
                            as_string: true,
                        },
                    },
                    JsonType::String,
                    vec![json!("1"), json!("2")],
                ),
            ),
            (
                "multiple",
                hole(
                    HoleKind::Echo {
                        from: EchoSource::Body {
                            pointer: "/poll/multiple".into(),
                        },
                    },
                    JsonType::Bool,
                    vec![json!(true), json!(false)],
                ),
            ),
        ]);
        let Node::Hole(mut h) = hole(HoleKind::Observed, JsonType::Mixed, recorded) else {
            unreachable!()
        };
        h.when_absent = Some(Box::new(wraith_model::WhenAbsent {
            field: EchoSource::Body {
                pointer: "/poll".into(),
            },
            value: Value::Null,
            embeds: Some(Box::new(wraith_model::EmbeddedRecord {
                entity_type: String::new(),
                at: String::new(),
                template,
                made: true,
            })),
        }));
        let t = obj(vec![("poll", Node::Hole(h))]);
        let expected = json!({"poll": {"id": "5", "multiple": false}});
        // A key of the twin's own and the sent choice pass, though neither is a recorded value.
        let mine = json!({"poll": {"id": "9", "multiple": false}});
        assert!(diff(Some(&t), expected.clone(), mine, &echo).is_empty());
        // A recorded poll replayed whole fails where it is not the one the request made.
        let replayed = json!({"poll": {"id": "1", "multiple": true}});
        assert_eq!(
            diff(Some(&t), expected, replayed, &echo),
            vec![("body.poll.multiple".to_string(), Category::ValueMismatch)]
        );
    }
}
