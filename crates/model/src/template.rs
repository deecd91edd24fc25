//! Body templates: a typed JSON tree whose leaves are constants or [`Hole`]s.
//!
//! A template is a tree, not a JSON document with `"$hole_N"` strings in it, so a placeholder
//! cannot reach the wire by construction: rendering must replace every [`Node::Hole`].
//! Object fields are a list, in the order the recordings showed them, so rendered bodies keep the
//! provider's key order even though the model file itself is canonical (sorted keys).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The body of a variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BodyTemplate {
    /// No body (e.g. 204, or a recorded empty body).
    Empty,
    /// A JSON body rendered from the tree.
    Json { root: Node },
    /// A non-JSON body replayed as recorded (UTF-8 text).
    Text { text: String },
    /// A non-UTF-8 body replayed as recorded.
    Binary { base64: String },
}

/// One node of a JSON template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "node", rename_all = "snake_case")]
pub enum Node {
    /// Every observation agreed on this value.
    Const { value: Value },
    /// A JSON object; fields in recorded order.
    Object { fields: Vec<Field> },
    /// A JSON array, see [`ArrayNode`].
    Array(ArrayNode),
    /// A value chosen at serve time.
    Hole(Hole),
}

impl Node {
    /// A constant leaf.
    pub fn constant(value: Value) -> Node {
        Node::Const { value }
    }

    /// An object whose fields are all present in every observation, in the given order.
    pub fn object<K: Into<String>>(fields: impl IntoIterator<Item = (K, Node)>) -> Node {
        Node::Object {
            fields: fields
                .into_iter()
                .map(|(key, value)| Field {
                    key: key.into(),
                    value,
                    optional: false,
                    present_ratio_bp: full_bp(),
                })
                .collect(),
        }
    }

    /// A hole with its source, observed type, fallback examples and confidence.
    pub fn hole(
        source: HoleKind,
        observed_type: JsonType,
        examples: Vec<Value>,
        confidence_bp: u32,
    ) -> Node {
        Node::Hole(Hole {
            source,
            observed_type,
            examples,
            more_examples: Vec::new(),
            examples_cut: false,
            confidence_bp,
            when_absent: None,
            keyed: None,
        })
    }
}

/// An object field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Field {
    pub key: String,
    pub value: Node,
    /// Present in only some observations. Rendered only when its presence rule holds:
    /// an echo-sourced optional field is rendered when the request carries the source (or,
    /// when its hole has a `when_absent` default, always);
    /// any other optional field is rendered when it was present in the majority of observations
    /// (`present_ratio_bp >= 5000`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub optional: bool,
    /// Share of observations, in basis points, that carried this field (10000 when not optional).
    #[serde(default = "full_bp")]
    pub present_ratio_bp: u32,
}

fn is_false(b: &bool) -> bool {
    !*b
}
fn full_bp() -> u32 {
    10_000
}

/// A JSON array in a template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "array", rename_all = "snake_case")]
pub enum ArrayNode {
    /// Fixed length: every observation had the same length and item `i` is `items[i]`.
    Tuple { items: Vec<Node> },
    /// Variable length: rendered as `target_length` items cycling through `representatives`
    /// (the start of the cycle picked by a hash of the request path, so the same path gives the
    /// same body). Empty `representatives` renders `[]`.
    List {
        representatives: Vec<Node>,
        target_length: usize,
        /// A tagged union: the key of the string field (`type`, `object`, `kind`, ...) whose
        /// value names each element's type. Every representative is then an object holding
        /// that key as a constant, one representative per recorded tag value (see
        /// [`ArrayNode::tag_of`]), so each type keeps its own fields; the judge matches an
        /// element to the representative of its own tag. Absent (and not written) for a list
        /// that is not a tagged union, so older models read unchanged.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        discriminator: Option<String>,
    },
}

impl ArrayNode {
    /// The tag of a tagged-union representative: the constant string its object holds at
    /// `key` (`None` when it is not an object with such a constant).
    pub fn tag_of<'n>(representative: &'n Node, key: &str) -> Option<&'n str> {
        match representative {
            Node::Object { fields } => fields.iter().find(|f| f.key == key).and_then(|f| match &f
                .value
            {
                Node::Const {
                    value: Value::String(s),
                } => Some(s.as_str()),
                _ => None,
            }),
            _ => None,
        }
    }
}

/// A position whose value is decided at serve time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hole {
    pub source: HoleKind,
    /// JSON type every observation had (`mixed` when they differed).
    pub observed_type: JsonType,
    /// A few observed values (at most 8, first seen first); the fallback when the hole cannot be
    /// filled from its source, and the candidates for [`HoleKind::Observed`] the engine renders.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Value>,
    /// For a [`HoleKind::Observed`] hole: the distinct recorded values past `examples`, first
    /// seen first, so `examples` then `more_examples` is every distinct value recorded here (at
    /// most 256 in all; see `examples_cut`). Never rendered (rendering picks among `examples`
    /// only); the judge's `enum` rule accepts any of them, because each was recorded. Empty for
    /// other holes and when `examples` already holds every recorded value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_examples: Vec<Value>,
    /// For a [`HoleKind::Observed`] hole: the position took more distinct values than
    /// `examples` and `more_examples` keep, so a value outside them may still have been
    /// recorded. The judge still accepts only the kept values (it never passes a value it
    /// cannot show was recorded); a reader of a divergence at such a hole knows the answer may
    /// be a recorded value past the cap.
    #[serde(default, skip_serializing_if = "is_false")]
    pub examples_cut: bool,
    /// How sure synth is of the classification, 0..=10000.
    pub confidence_bp: u32,
    /// For a [`HoleKind::Observed`] hole: the value this position held in every recorded
    /// observation whose request lacked one field (a status's `quote` is `null` whenever the
    /// post named no `quoted_status_id`). The engine renders it for a request without that
    /// field instead of picking an example. Absent when no request field explains a value.
    /// For a [`HoleKind::Echo`] hole of an optional field: the echo's source and the value the
    /// observations whose request lacked it held (the default, also `examples[0]`), set when
    /// most of those observations carried the field anyway; the field is then rendered for a
    /// request without the source too, with that value (see [`Field::optional`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_absent: Option<Box<WhenAbsent>>,
    /// For a [`HoleKind::Observed`] hole: request keying. The request field whose value
    /// decided this position's value in every recorded observation that carried it (the plan
    /// a create names decides the memory its answer reports), with one bucket per recorded
    /// field value; or, for a combined key, the listed request fields whose values together
    /// decided it where no one of them alone did, with one bucket per recorded tuple. The
    /// engine renders the bucket of the request's value (values); a request without the field
    /// (any of the fields), or with a value (tuple) never recorded, renders as if this were
    /// absent. Absent when no field explains the values with enough evidence (see the synth's
    /// request keying).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyed: Option<Box<KeyedValues>>,
}

/// See [`Hole::keyed`]: a position's value as a function of one request field, or of several
/// together (a combined key).
///
/// In the model file a single-field key is `{"field": …, "buckets": …}` (as before combined
/// keys existed) and a combined key `{"fields": [a, b, …], "buckets": …}` whose bucket `key`s
/// are arrays of the fields' recorded values in `fields` order. Exactly one of `field` and
/// `fields` is present; a file with neither, both, or a `fields` list of fewer than two
/// entries does not load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "KeyedValuesFile", into = "KeyedValuesFile")]
pub struct KeyedValues {
    /// The request field of a single-field key (a JSON or form body leaf, or a query
    /// parameter; never a path or header); `None` for a combined key (see `fields`).
    pub field: Option<EchoSource>,
    /// The request fields of a combined key (two or more, in the order the configuration
    /// listed them): their values together decide the position where no one of them alone
    /// did. Empty for a single-field key.
    pub fields: Vec<EchoSource>,
    /// One bucket per distinct recorded value of the field (per distinct recorded tuple of
    /// the fields' values for a combined key), ordered by [`key_text`] of the key (by the list
    /// of its elements' texts, compared element by element, for a combined key).
    pub buckets: Vec<KeyBucket>,
}

/// One request-key value and the answer value every observation carrying it held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyBucket {
    /// The request field's value (as recorded: a JSON scalar, or a string for form and query);
    /// for a combined key, the array of the fields' values in [`KeyedValues::fields`] order.
    pub key: Value,
    /// The value this position held in every recorded answer to a request with that key.
    pub value: Value,
    /// How many recorded observations carried this key.
    pub support: u64,
}

/// [`KeyedValues`] as the model file spells it (see there).
#[derive(Serialize, Deserialize)]
struct KeyedValuesFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    field: Option<EchoSource>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    fields: Vec<EchoSource>,
    buckets: Vec<KeyBucket>,
}

impl TryFrom<KeyedValuesFile> for KeyedValues {
    type Error = String;

    fn try_from(f: KeyedValuesFile) -> Result<Self, Self::Error> {
        match (&f.field, f.fields.len()) {
            (Some(_), 0) | (None, 2..) => Ok(KeyedValues {
                field: f.field,
                fields: f.fields,
                buckets: f.buckets,
            }),
            (Some(_), _) => Err(
                "a `keyed` hole has both `field` and `fields`: keep `field` \
                                 for a single-field key, `fields` for a combined one \
                                 (re-run `wraith synth`)"
                    .to_string(),
            ),
            (None, _) => Err(
                "a `keyed` hole needs `field` or a `fields` list of two or more \
                              request fields (re-run `wraith synth`)"
                    .to_string(),
            ),
        }
    }
}

impl From<KeyedValues> for KeyedValuesFile {
    fn from(k: KeyedValues) -> Self {
        KeyedValuesFile {
            field: k.field,
            fields: k.fields,
            buckets: k.buckets,
        }
    }
}

impl KeyedValues {
    /// A key of one request field.
    pub fn single(field: EchoSource, buckets: Vec<KeyBucket>) -> KeyedValues {
        KeyedValues {
            field: Some(field),
            fields: Vec::new(),
            buckets,
        }
    }

    /// A combined key of two or more request fields; each bucket's `key` is the array of the
    /// fields' values in this order.
    pub fn combined(fields: Vec<EchoSource>, buckets: Vec<KeyBucket>) -> KeyedValues {
        KeyedValues {
            field: None,
            fields,
            buckets,
        }
    }

    /// The request fields the key reads: `[field]` for a single-field key, else `fields`.
    pub fn key_fields(&self) -> &[EchoSource] {
        match &self.field {
            Some(f) => std::slice::from_ref(f),
            None => &self.fields,
        }
    }

    /// The bucket value for a request value of the field of a single-field key, compared by
    /// [`key_text`] (so a form field `"1"` finds the key recorded as the JSON number `1`).
    /// `None` for a combined key (see [`KeyedValues::value_for_all`]).
    pub fn value_for(&self, request_value: &Value) -> Option<&Value> {
        self.value_for_all(std::slice::from_ref(request_value))
    }

    /// The bucket value for the request's values of [`KeyedValues::key_fields`], in that order,
    /// each compared by [`key_text`]. `None` when the count differs, a value is no key (null,
    /// an array, an object) or the tuple was never recorded.
    pub fn value_for_all(&self, request_values: &[Value]) -> Option<&Value> {
        if request_values.len() != self.key_fields().len() {
            return None;
        }
        let want: Vec<String> = request_values.iter().map(key_text).collect::<Option<_>>()?;
        let combined = self.field.is_none();
        self.buckets
            .binary_search_by(|b| {
                if combined {
                    let elems = b.key.as_array().map(Vec::as_slice).unwrap_or(&[]);
                    let texts = elems.iter().map(|e| key_text(e).unwrap_or_default());
                    texts.cmp(want.iter().cloned())
                } else {
                    key_text(&b.key)
                        .as_deref()
                        .unwrap_or("")
                        .cmp(want.first().map_or("", String::as_str))
                }
            })
            .ok()
            .map(|i| &self.buckets[i].value)
    }

    /// Whether the position answers the field's value itself: a single-field key with two or
    /// more buckets, each answering its own key's text ([`key_text`]) as a value of one JSON
    /// type (`spoiler_text` sent `""` and `"Content warning"`, answered each). A value no
    /// recording sent is then answered as itself too, where the request sent it.
    pub fn echoes(&self) -> bool {
        let Some(first) = self.buckets.first() else {
            return false;
        };
        self.field.is_some()
            && self.buckets.len() >= 2
            && self.buckets.iter().all(|b| {
                std::mem::discriminant(&b.value) == std::mem::discriminant(&first.value)
                    && key_text(&b.value).is_some()
                    && key_text(&b.value) == key_text(&b.key)
            })
    }
}

/// The text a request-key value is compared by: a string's content, a number's or boolean's
/// JSON spelling; `None` for null, arrays and objects (never keys).
pub fn key_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// See [`Hole::when_absent`]: a request field whose absence fixes a hole's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhenAbsent {
    /// The request field (a top-level body field or a query parameter; never a path or header).
    pub field: EchoSource,
    /// The value every recorded observation without that field held here (one of `examples`).
    pub value: Value,
    /// A null-or-embedded-record position: `value` is `null`, and every recorded observation
    /// whose request carried `field` held an object embedding the record of one entity type
    /// that the field's value names (a status's `quote` embeds the status its post's
    /// `quoted_status_id` names). The engine renders the session's stored record of that type
    /// and key there (`null` without the field, as `value` says); without such a record, the
    /// hole renders as if this were absent. Absent (and not written) otherwise, so models
    /// written before it read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeds: Option<Box<EmbeddedRecord>>,
}

/// See [`WhenAbsent::embeds`]: where in the answers to requests carrying the field the named
/// record sits, and how those answers are judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedRecord {
    /// The entity type whose record the request field names (a key of `Model::entity_types`;
    /// every recorded embedded key is one of its known ids).
    pub entity_type: String,
    /// JSON pointer, within the non-null value, to the embedded record: `""` when the value
    /// is the record itself, `/quoted_status` when the record sits in a wrapper object. Every
    /// object on the way is an object in every recorded non-null value.
    pub at: String,
    /// The template of the recorded non-null values (anti-unified as any object position is),
    /// whose record's primary key is an echo of the field: the judge compares a non-null
    /// answer under it, so the answer must name the record the request named, and the
    /// record's other positions are held to their own classes.
    pub template: Node,
    /// The request's field made the record instead of naming it (a post's `poll` object
    /// answered as a new poll): `template` holds echoes of the field's own members and a
    /// minted key, and the engine renders it there for a request carrying the field, and
    /// stores the rendered record as one of `entity_type` when that is not empty (the type
    /// some recorded key of the position is a known id of), so later reads and actions on
    /// it find it. `at` is then `""`. Absent (false) for a named record, so models written
    /// before it read unchanged.
    #[serde(default, skip_serializing_if = "is_false")]
    pub made: bool,
}

/// Where a hole's value comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HoleKind {
    /// Copy of a request value (verbatim; coerced to `observed_type` for form-encoded numbers).
    Echo { from: EchoSource },
    /// A fresh value of the learned shape from the namespace's seeded generator.
    Generated { shape: IdShape },
    /// The namespace clock in the given unit; with `after`, that many seconds later as the
    /// request sent a number there (a poll's `expires_at`, its `expires_in` after the post).
    /// Without the number in the request, the clock itself. Absent (and not written) for
    /// every other clock, so older models read unchanged.
    Clock {
        unit: ClockUnit,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<EchoSource>,
    },
    /// A per-namespace counter (named by the JSON path), incremented on each render.
    Counter { name: String },
    /// None of the above: one of `examples`, chosen by a hash of the request path.
    Observed,
}

/// A request value an echo hole copies.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "in", rename_all = "snake_case")]
pub enum EchoSource {
    /// A path parameter of the route, by name.
    Path { param: String },
    /// A query parameter, by name.
    Query { name: String },
    /// A request body field, as a JSON pointer into the JSON body or the form fields
    /// (`/name`, `/address/city`; form field `a[b]` is `/a/b`).
    Body { pointer: String },
    /// A request header (lowercase name).
    Header { name: String },
    /// Another source's value set in fixed text: `prefix`, the value as text, `suffix` (an
    /// error message naming what the request named: `No such customer: 'cus_…'`). Every
    /// recorded answer at the position was this text around its own request's value.
    Within {
        source: Box<EchoSource>,
        prefix: String,
        suffix: String,
    },
    /// The instant another source's value names, written as `unit` writes one (a scheduled
    /// post's `scheduled_at` sent as `…T14:33:14+00:00`, answered `…T14:33:14.000Z`). Every
    /// recorded answer at the position was its own request's instant in this spelling.
    Instant {
        source: Box<EchoSource>,
        unit: ClockUnit,
    },
    /// Another source's text without the marks before its first letter or digit (a featured
    /// tag sent as `#coolfree`, answered `coolfree`; `@alice`, `alice`). Every recorded answer
    /// at the position was its own request's value so trimmed, and some request sent marks.
    Trimmed { source: Box<EchoSource> },
}

impl EchoSource {
    /// `value` as the text a [`EchoSource::Within`] sets between its prefix and suffix: a
    /// string as it is, a number or boolean in its JSON spelling; other values are not text.
    pub fn as_text(value: &serde_json::Value) -> Option<String> {
        match value {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            serde_json::Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// The value a [`EchoSource::Instant`] renders for `inner`, its source's value: the
    /// instant `inner` names in `unit`'s spelling, `None` when it names none.
    pub fn instant_value(inner: &serde_json::Value, unit: &ClockUnit) -> Option<serde_json::Value> {
        Some(unit.value_at(crate::clock::instant_of(inner)?))
    }

    /// The value a [`EchoSource::Trimmed`] renders for `inner`, its source's value: a string
    /// from its first letter or digit on (`None` when it holds none), anything else as it is.
    pub fn trimmed_value(inner: &serde_json::Value) -> Option<serde_json::Value> {
        match inner {
            serde_json::Value::String(s) => {
                Some(serde_json::Value::String(Self::trimmed(s)?.to_string()))
            }
            other => Some(other.clone()),
        }
    }

    /// `s` from its first letter or digit on; `None` when it holds none.
    pub fn trimmed(s: &str) -> Option<&str> {
        let t = s.trim_start_matches(|c: char| !c.is_alphanumeric());
        (!t.is_empty()).then_some(t)
    }

    /// The text a [`EchoSource::Within`] renders around `inner`, its source's value.
    pub fn within_text(prefix: &str, inner: &serde_json::Value, suffix: &str) -> Option<String> {
        Some(format!("{prefix}{}{suffix}", Self::as_text(inner)?))
    }
}

/// The learned shape of a generated value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum IdShape {
    /// `prefix` + `length` characters from `charset`, e.g. `cus_` + 14 base62.
    Token {
        prefix: String,
        charset: IdCharset,
        length: usize,
    },
    /// A lowercase hyphenated UUID (v4 layout).
    Uuid,
    /// Groups of `charset` characters joined by `-`, group `i` holding `groups[i]` characters
    /// (`DD873740-C520-49DE-825B296BA2ABCED7`: upper alphanumerics in groups 8, 4, 4, 16): a key
    /// or code that is not a UUID. Every recorded example had exactly these group lengths.
    Grouped {
        charset: IdCharset,
        groups: Vec<usize>,
    },
    /// An integer above every recorded value (`above`), rendered as a JSON number or, when
    /// `as_string`, as a decimal string (snowflake ids are strings in many APIs).
    Integer { above: u64, as_string: bool },
    /// A string that embeds the value of a sibling field of the same object or of an object
    /// enclosing it (a record's `uri` or `url` ending with its generated or echoed id): rendered as one of `prefixes`, the
    /// sibling's rendered value, then `suffix`, so it always names the record's own id. Every
    /// recorded example was `prefix + sibling value + s` for one of the observed prefixes and
    /// one `s` of `suffix` and `other_suffixes`.
    Derived {
        /// The sibling field's key (a [`HoleKind::Generated`] or [`HoleKind::Echo`] field of
        /// the same object).
        sibling: String,
        /// What preceded the sibling's value in the recorded examples, distinct, first seen
        /// first.
        prefixes: Vec<String>,
        /// What followed it in most examples (the first seen among equally common ones): the
        /// suffix rendered.
        suffix: String,
        /// The other suffixes observed (a reblog's `uri` ending `/activity` where statuses end
        /// with the id), distinct, first seen first. Empty when every example had `suffix`;
        /// absent in models written before several suffixes were allowed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        other_suffixes: Vec<String>,
        /// How many objects above the field's own the sibling sits: 0 for a field of the same
        /// object (a status's `uri`), 1 for a field of an object the record holds (a
        /// database's `hosts.primary` naming the database's `id`). Absent (0) in models
        /// written before nested fields were derived.
        #[serde(default, skip_serializing_if = "is_zero")]
        up: u8,
    },
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdCharset {
    /// `0-9`
    Digits,
    /// `0-9a-f`
    Hex,
    /// `0-9A-Z`
    UpperAlnum,
    /// `0-9a-z`
    LowerAlnum,
    /// `0-9A-Za-z`
    Base62,
    /// `0-9A-Za-z` with `-` and `_` (URL-safe base64): random secrets and client ids
    /// (`uXrY0Cwg-KRRWz8L9-76lA9DyStb48o0s1VhsLEhmrY`). Synth learns it only for long values
    /// mixing upper case, lower case and digits.
    Base64Url,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "unit", rename_all = "snake_case")]
pub enum ClockUnit {
    /// Unix seconds as a JSON number.
    EpochSec,
    /// Unix milliseconds as a JSON number.
    EpochMs,
    /// ISO 8601 / RFC 3339 string. `fraction_digits` (0, 3, 6) and `suffix` (`Z`, `+00:00`, or
    /// `""` for a naive timestamp) reproduce the recorded spelling.
    Iso8601 { fraction_digits: u8, suffix: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JsonType {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
    Mixed,
}

impl JsonType {
    pub fn of(v: &Value) -> JsonType {
        match v {
            Value::Null => JsonType::Null,
            Value::Bool(_) => JsonType::Bool,
            Value::Number(_) => JsonType::Number,
            Value::String(_) => JsonType::String,
            Value::Array(_) => JsonType::Array,
            Value::Object(_) => JsonType::Object,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn derived_shape_written_before_other_suffixes_reads_with_none() {
        let old = json!({"shape": "derived", "sibling": "id", "prefixes": ["u/"], "suffix": ""});
        let shape: IdShape = serde_json::from_value(old.clone()).expect("old derived shape");
        assert_eq!(
            shape,
            IdShape::Derived {
                sibling: "id".into(),
                prefixes: vec!["u/".into()],
                suffix: String::new(),
                other_suffixes: Vec::new(),
                up: 0,
            }
        );
        // A single-suffix shape is written exactly as before.
        assert_eq!(serde_json::to_value(&shape).expect("json"), old);
    }

    #[test]
    fn derived_shape_keeps_its_other_suffixes() {
        let shape = IdShape::Derived {
            sibling: "id".into(),
            prefixes: vec!["u/".into()],
            suffix: String::new(),
            other_suffixes: vec!["/activity".into()],
            up: 1,
        };
        let v = serde_json::to_value(&shape).expect("json");
        assert_eq!(v["other_suffixes"], json!(["/activity"]));
        assert_eq!(v["up"], json!(1));
        assert_eq!(serde_json::from_value::<IdShape>(v).expect("back"), shape);
    }

    #[test]
    fn a_key_whose_every_bucket_answers_its_own_text_echoes() {
        let bucket = |key: Value, value: Value| KeyBucket {
            key,
            value,
            support: 2,
        };
        let field = EchoSource::Body {
            pointer: "/cw".into(),
        };
        let text = KeyedValues::single(
            field.clone(),
            vec![bucket(json!(""), json!("")), bucket(json!("a"), json!("a"))],
        );
        assert!(text.echoes());
        // Form text answered as numbers: the same values, in one type.
        let numbers = KeyedValues::single(
            field.clone(),
            vec![bucket(json!("1"), json!(1)), bucket(json!("2"), json!(2))],
        );
        assert!(numbers.echoes());
        // One bucket shows nothing; one bucket answering another value breaks the rule.
        let one = KeyedValues::single(field.clone(), vec![bucket(json!("a"), json!("a"))]);
        assert!(!one.echoes());
        let other = KeyedValues::single(
            field.clone(),
            vec![
                bucket(json!("a"), json!("a")),
                bucket(json!("b"), json!("B")),
            ],
        );
        assert!(!other.echoes());
        // Values of two types are not one field's echo.
        let mixed = KeyedValues::single(
            field,
            vec![bucket(json!("1"), json!(1)), bucket(json!("a"), json!("a"))],
        );
        assert!(!mixed.echoes());
    }

    #[test]
    fn hole_written_before_more_examples_reads_with_none_and_writes_as_before() {
        let old = json!({
            "source": {"kind": "observed"},
            "observed_type": "string",
            "examples": ["a", "b"],
            "confidence_bp": 3000
        });
        let hole: Hole = serde_json::from_value(old.clone()).expect("old hole");
        assert!(hole.more_examples.is_empty());
        assert!(!hole.examples_cut);
        assert_eq!(serde_json::to_value(&hole).expect("json"), old);
    }

    #[test]
    fn hole_keeps_its_more_examples_and_cut_flag() {
        let mut hole = match Node::hole(HoleKind::Observed, JsonType::String, vec![json!("a")], 1) {
            Node::Hole(h) => h,
            _ => unreachable!(),
        };
        hole.more_examples = vec![json!("b")];
        hole.examples_cut = true;
        let v = serde_json::to_value(&hole).expect("json");
        assert_eq!(v["more_examples"], json!(["b"]));
        assert_eq!(v["examples_cut"], json!(true));
        assert_eq!(serde_json::from_value::<Hole>(v).expect("back"), hole);
    }

    #[test]
    fn single_field_key_written_before_combined_keys_reads_and_writes_the_same() {
        let old = json!({"field": {"in": "body", "pointer": "/type"},
            "buckets": [{"key": 1, "value": "s", "support": 2}, {"key": "l", "value": "L", "support": 1}]});
        let keyed: KeyedValues = serde_json::from_value(old.clone()).expect("old keyed");
        assert_eq!(keyed.key_fields().len(), 1);
        assert_eq!(keyed.value_for(&json!("1")), Some(&json!("s")));
        assert_eq!(keyed.value_for(&json!("l")), Some(&json!("L")));
        assert_eq!(serde_json::to_value(&keyed).expect("json"), old);
    }

    #[test]
    fn combined_key_finds_the_bucket_of_the_tuple_of_the_fields_texts() {
        let file = json!({"fields": [{"in": "body", "pointer": "/region"}, {"in": "query", "name": "t"}],
            "buckets": [
                {"key": ["eu", 1], "value": 10, "support": 1},
                {"key": ["eu", "2"], "value": 20, "support": 1},
                {"key": ["us", 1], "value": 30, "support": 2}]});
        let keyed: KeyedValues = serde_json::from_value(file.clone()).expect("combined");
        assert_eq!(keyed.field, None);
        assert_eq!(keyed.key_fields().len(), 2);
        assert_eq!(serde_json::to_value(&keyed).expect("json"), file);
        assert_eq!(
            keyed.value_for_all(&[json!("eu"), json!("1")]),
            Some(&json!(10))
        );
        assert_eq!(
            keyed.value_for_all(&[json!("eu"), json!(2)]),
            Some(&json!(20))
        );
        assert_eq!(
            keyed.value_for_all(&[json!("us"), json!(1)]),
            Some(&json!(30))
        );
        // An unseen tuple, a missing value, a value that is no key: no bucket.
        assert_eq!(keyed.value_for_all(&[json!("us"), json!(2)]), None);
        assert_eq!(keyed.value_for_all(&[json!("us")]), None);
        assert_eq!(keyed.value_for_all(&[json!("us"), Value::Null]), None);
        assert_eq!(keyed.value_for(&json!("us")), None);
    }

    #[test]
    fn keyed_with_neither_or_both_field_forms_does_not_load() {
        let f = json!({"in": "body", "pointer": "/a"});
        for bad in [
            json!({"buckets": []}),
            json!({"fields": [f.clone()], "buckets": []}),
            json!({"field": f.clone(), "fields": [f.clone(), f.clone()], "buckets": []}),
        ] {
            let err = serde_json::from_value::<KeyedValues>(bad).expect_err("refused");
            assert!(err.to_string().contains("wraith synth"), "{err}");
        }
    }

    #[test]
    fn when_absent_written_before_embeds_reads_with_none_and_writes_as_before() {
        let old = json!({"field": {"in": "body", "pointer": "/quoted_id"}, "value": null});
        let w: WhenAbsent = serde_json::from_value(old.clone()).expect("old when_absent");
        assert_eq!(w.embeds, None);
        assert_eq!(serde_json::to_value(&w).expect("json"), old);
    }

    #[test]
    fn when_absent_keeps_its_embedded_record() {
        let w = WhenAbsent {
            field: EchoSource::Body {
                pointer: "/quoted_id".into(),
            },
            value: Value::Null,
            embeds: Some(Box::new(EmbeddedRecord {
                entity_type: "notes".into(),
                at: "/quoted".into(),
                template: Node::object([("state", Node::constant(json!("accepted")))]),
                made: false,
            })),
        };
        let v = serde_json::to_value(&w).expect("json");
        assert_eq!(v["embeds"]["entity_type"], json!("notes"));
        assert_eq!(v["embeds"]["at"], json!("/quoted"));
        assert_eq!(serde_json::from_value::<WhenAbsent>(v).expect("back"), w);
    }
}
