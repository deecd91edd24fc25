//! Request keying: an observed position whose value is a function of one request field (or,
//! when listed so, of several together).
//!
//! When a create names a plan (`type`) and the answer reports that plan's memory, disk and
//! transfer, one global representative renders one plan's figures for every create. Request
//! keying learns, per observed hole, which request field decided its value across the
//! recordings and keeps one bucket per recorded field value ([`KeyedValues`]); the engine then
//! renders the bucket of the request's value, and the store keeps what the create answered, so
//! the record reads back with the same figures.
//!
//! Detection is automatic and conservative. A field (a JSON or form body leaf, or a query
//! parameter, holding a scalar, not named as a reference to a record: `id`, `uuid`, `*_id`,
//! `*Id`; which record a request names is the store's business, and a replay names the twin's
//! ids, not the recorded ones) keys a position only when:
//! - at least [`MIN_CARRIERS`] observations carried it, with at least two distinct values;
//! - every observation carrying one value held one answer value there (no contradiction);
//! - the buckets hold at least two distinct answer values (else nothing depends on the key);
//! - the recordings repeat keys across sessions: counting each (key value, session) pair once,
//!   at least twice as many pairs as distinct keys, so a field unique per request or per
//!   session (a label, a password, the id of a record the session created) is never mistaken
//!   for a key, however often one session sent it.
//!
//! Among qualifying fields the one with the most (key value, session) pairs wins, then the one
//! with the fewest distinct values (the simpler explanation), then the first in sorted order.
//! This module only learns; it never changes the hole's examples, so the judge's `enum` rule and
//! the fallback rendering (a request without the field, or with a value never recorded) stay
//! as they were — but for keys whose every bucket answered its own key (`KeyedValues::echoes`),
//! where the engine answers a value never recorded as itself.
//!
//! The twin's `[generate.request_keying]` setting ([`RequestKeying`], passed in
//! [`crate::SynthOptions`]) decides what may be keyed: `auto` (the default) as above; `off` learns no keyed position;
//! `manual` keys only the fields `[[generate.request_keying.route]]` lists, on their routes,
//! under relaxed rules (what the user asked for needs no cross-session evidence and may name a
//! record: the field must still decide the position without contradiction, with at least two
//! keys holding at least two distinct values). When no listed field alone decides a position,
//! an entry listing several fields is tried as one combined key: the tuple of those fields'
//! values, counting only the observations that carried all of them, under the same relaxed
//! rules (the hole's `keyed.fields`, buckets keyed by the array of the values). `auto` tries
//! the listed fields (alone, then combined) first too; automatic detection never combines
//! unlisted fields. A listed route or field that keys nothing (alone or combined) is a synth
//! diagnostic ([`diagnose`]), never a silent no-op.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{
    ArrayNode, BodyTemplate, Diagnostic, EchoSource, KeyBucket, KeyedValues, Node, Route, key_text,
};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::unify::Ctx;

/// Fewest observations carrying a field that may key a position, counting each (key value,
/// session) pair once.
pub const MIN_CARRIERS: usize = 4;
/// Most distinct request fields considered; past it the requests are free-form documents and no
/// field is treated as a key.
const MAX_FIELDS: usize = 64;

/// `[generate.request_keying] mode`: which positions synth may key by a request field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyingMode {
    /// No position is keyed: the model has no `keyed` anywhere.
    Off,
    /// Only the fields [`RequestKeying::rules`] lists, on their routes.
    Manual,
    /// Automatic, conservative detection everywhere (see the module doc), plus the listed
    /// fields. The default: measured to raise conformance on the corpora.
    #[default]
    Auto,
}

/// One `[[generate.request_keying.route]]` entry: the request fields that may key the
/// positions of one route's answers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyingRule {
    /// `METHOD /path` as synth names the route (`POST /linode/instances`, `GET /a/:param`);
    /// the method is compared case-insensitively, the path exactly.
    pub route: String,
    /// The fields, tried in this order: the first that decides a position keys it. Body fields
    /// ([`body_field`]) or query parameters; paths and headers never key a position.
    pub fields: Vec<EchoSource>,
}

/// The twin's `[generate.request_keying]` setting.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestKeying {
    pub mode: KeyingMode,
    /// `[[generate.request_keying.route]]`, in file order (ignored under [`KeyingMode::Off`]).
    pub rules: Vec<KeyingRule>,
}

impl RequestKeying {
    /// What the unification of route `method path` may key its positions by.
    pub fn for_route(&self, method: &str, path: &str) -> RouteKeying {
        let mut fields: Vec<EchoSource> = Vec::new();
        if self.mode != KeyingMode::Off {
            for rule in self
                .rules
                .iter()
                .filter(|r| names_route(&r.route, method, path))
            {
                for f in &rule.fields {
                    if !fields.contains(f) {
                        fields.push(f.clone());
                    }
                }
            }
        }
        let mut combined: Vec<Vec<EchoSource>> = Vec::new();
        if self.mode != KeyingMode::Off {
            for rule in self
                .rules
                .iter()
                .filter(|r| names_route(&r.route, method, path))
            {
                let mut together: Vec<EchoSource> = Vec::new();
                for f in &rule.fields {
                    if !together.contains(f) {
                        together.push(f.clone());
                    }
                }
                if together.len() >= 2 && !combined.contains(&together) {
                    combined.push(together);
                }
            }
        }
        RouteKeying {
            auto: self.mode == KeyingMode::Auto,
            fields,
            combined,
        }
    }
}

/// What one route's positions may be keyed by (see [`RequestKeying::for_route`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteKeying {
    /// Automatic detection (after the listed fields).
    pub auto: bool,
    /// Listed fields, tried first and in order, under the relaxed rules.
    pub fields: Vec<EchoSource>,
    /// The fields of each entry listing two or more, together: a combined key, tried (entry
    /// by entry) after every listed field alone and before automatic detection, under the
    /// same relaxed rules.
    pub combined: Vec<Vec<EchoSource>>,
}

impl RouteKeying {
    /// Automatic detection only (the default setting on a route no entry names).
    pub const AUTO: RouteKeying = RouteKeying {
        auto: true,
        fields: Vec::new(),
        combined: Vec::new(),
    };
}

/// Whether a configured `METHOD /path` names the route `method path`.
pub fn names_route(configured: &str, method: &str, path: &str) -> bool {
    configured
        .trim()
        .split_once(char::is_whitespace)
        .is_some_and(|(m, p)| m.eq_ignore_ascii_case(method) && p.trim() == path)
}

/// The body field at these object keys / array indexes (`["region", "id"]` is `/region/id`,
/// as synth flattens JSON and form bodies).
pub fn body_field(segments: &[String]) -> EchoSource {
    let pointer: String = segments
        .iter()
        .map(|s| format!("/{}", crate::observe::escape_token(s)))
        .collect();
    EchoSource::Body { pointer }
}

/// A field as `wraith.toml` spells it: `$.a.b` (a JSON pointer's tokens, unescaped, quoted when
/// they hold a dot or bracket) or `query.name`.
pub fn spell(field: &EchoSource) -> String {
    match field {
        EchoSource::Body { pointer } => {
            let mut out = String::from("$");
            for token in pointer.split('/').skip(1) {
                let token = token.replace("~1", "/").replace("~0", "~");
                if token.is_empty() || token.contains(['.', '[', ']', '"']) {
                    out.push_str(&format!("[\"{token}\"]"));
                } else {
                    out.push('.');
                    out.push_str(&token);
                }
            }
            out
        }
        EchoSource::Query { name } => format!("query.{name}"),
        EchoSource::Path { param } => format!("path.{param}"),
        EchoSource::Header { name } => format!("header.{name}"),
        EchoSource::Within { source, .. }
        | EchoSource::Instant { source, .. }
        | EchoSource::Trimmed { source } => spell(source),
    }
}

/// One observation's value of a candidate field, borrowed from the request (a synth input can
/// hold many observations and fields: nothing is copied until a bucket keeps it).
#[derive(Clone, Copy)]
enum Sent<'a> {
    /// A scalar JSON or form body leaf.
    Body(&'a Value),
    /// A query parameter's value.
    Query(&'a str),
}

impl Sent<'_> {
    /// The key the engine looks the request's value up by (`wraith_model::key_text`).
    fn text(self) -> String {
        match self {
            Sent::Body(v) => key_text(v).unwrap_or_default(),
            Sent::Query(s) => s.to_string(),
        }
    }

    /// The value as recorded, kept in the bucket.
    fn recorded(self) -> Value {
        match self {
            Sent::Body(v) => v.clone(),
            Sent::Query(s) => Value::String(s.to_string()),
        }
    }
}

/// What buckets are keyed by: one field's value, or the values of several fields together (a
/// combined key). Generic so the single-field path (automatic detection runs it over every
/// candidate field of every observed hole) builds no per-sighting list.
trait RequestKey {
    /// What the engine compares a request's value(s) by.
    type Text: Ord + Clone;
    fn text(&self) -> Self::Text;
    /// The bucket's `key` as the model writes it.
    fn recorded(&self) -> Value;
}

impl RequestKey for Sent<'_> {
    type Text = String;
    fn text(&self) -> String {
        Sent::text(*self)
    }
    fn recorded(&self) -> Value {
        Sent::recorded(*self)
    }
}

/// A combined key: the listed fields' values, in the listed order.
impl RequestKey for Vec<Sent<'_>> {
    type Text = Vec<String>;
    fn text(&self) -> Vec<String> {
        self.iter().map(|s| s.text()).collect()
    }
    fn recorded(&self) -> Value {
        Value::Array(self.iter().map(|s| s.recorded()).collect())
    }
}

/// One observation's value of a candidate field (or fields): (sent value, session, answer).
type Sighting<'a, K = Sent<'a>> = (K, &'a str, &'a Value);

/// The request field that keys the values `vals` (each with the index of its observation's
/// request in `ctxs`), with one bucket per recorded key; `None` when no field qualifies (see the
/// module doc).
///
/// The fields `keying` lists are tried first, in order, under the relaxed rules (see the
/// module doc); then each entry's fields together (a combined key, `keying.combined`);
/// automatic detection follows when `keying.auto`.
pub fn learn(
    vals: &[(&Value, usize)],
    ctxs: &[Ctx<'_>],
    keying: &RouteKeying,
) -> Option<Box<KeyedValues>> {
    learn_with(vals, ctxs, keying, true)
}

/// The single request field that keys the values `vals`, as [`learn`] finds it but never
/// trying a combined key (a variant's keyed snapshots are picked by one field).
pub fn learn_field(
    vals: &[(&Value, usize)],
    ctxs: &[Ctx<'_>],
    keying: &RouteKeying,
) -> Option<EchoSource> {
    learn_with(vals, ctxs, keying, false).and_then(|k| k.field)
}

fn learn_with(
    vals: &[(&Value, usize)],
    ctxs: &[Ctx<'_>],
    keying: &RouteKeying,
    combine: bool,
) -> Option<Box<KeyedValues>> {
    if vals.len() < 2 || vals.iter().all(|(v, _)| *v == vals[0].0) {
        return None;
    }
    for field in &keying.fields {
        if let Some(keyed) = learn_listed(field, vals, ctxs) {
            return Some(keyed);
        }
    }
    if combine {
        for fields in &keying.combined {
            if let Some(keyed) = learn_combined(fields, vals, ctxs) {
                return Some(keyed);
            }
        }
    }
    if keying.auto {
        learn_auto(vals, ctxs)
    } else {
        None
    }
}

/// The request's value of a listed field, when it is a scalar (a body leaf) or a query
/// parameter (the first of its name).
fn sent_of<'a>(field: &EchoSource, ctx: &Ctx<'a>) -> Option<Sent<'a>> {
    match field {
        EchoSource::Body { pointer } => ctx
            .body
            .iter()
            .find(|(p, _)| p == pointer)
            .map(|(_, sent)| sent)
            .filter(|sent| matches!(sent, Value::String(_) | Value::Number(_) | Value::Bool(_)))
            .map(Sent::Body),
        EchoSource::Query { name } => ctx
            .query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, sent)| Sent::Query(sent)),
        EchoSource::Path { .. }
        | EchoSource::Header { .. }
        | EchoSource::Within { .. }
        | EchoSource::Instant { .. }
        | EchoSource::Trimmed { .. } => None,
    }
}

/// A listed field keys the values when it decides them: every observation carrying one value
/// held one answer value, with at least two keys holding at least two distinct values.
fn learn_listed(
    field: &EchoSource,
    vals: &[(&Value, usize)],
    ctxs: &[Ctx<'_>],
) -> Option<Box<KeyedValues>> {
    let mut sightings: Vec<Sighting<'_>> = Vec::new();
    for (v, c) in vals {
        let Some(ctx) = ctxs.get(*c) else { continue };
        if let Some(sent) = sent_of(field, ctx) {
            sightings.push((sent, ctx.session, *v));
        }
    }
    let (_, buckets) = keyed_by(sightings, Evidence::Asked)?;
    Some(Box::new(KeyedValues::single(field.clone(), buckets)))
}

/// An entry's listed fields together key the values when their tuple decides them, under the
/// rules of one listed field ([`learn_listed`]): only the observations carrying every field
/// count, every one carrying one tuple held one answer value, and at least two tuples hold at
/// least two distinct values.
fn learn_combined(
    fields: &[EchoSource],
    vals: &[(&Value, usize)],
    ctxs: &[Ctx<'_>],
) -> Option<Box<KeyedValues>> {
    if fields.len() < 2 {
        return None;
    }
    let mut sightings: Vec<Sighting<'_, Vec<Sent<'_>>>> = Vec::new();
    for (v, c) in vals {
        let Some(ctx) = ctxs.get(*c) else { continue };
        let sent: Option<Vec<Sent<'_>>> = fields.iter().map(|f| sent_of(f, ctx)).collect();
        if let Some(sent) = sent {
            sightings.push((sent, ctx.session, *v));
        }
    }
    let (_, buckets) = keyed_by(sightings, Evidence::Asked)?;
    Some(Box::new(KeyedValues::combined(fields.to_vec(), buckets)))
}

/// Automatic detection (see the module doc).
fn learn_auto(vals: &[(&Value, usize)], ctxs: &[Ctx<'_>]) -> Option<Box<KeyedValues>> {
    if vals.len() < MIN_CARRIERS {
        return None;
    }
    // One pass over the requests: every candidate field's sightings, in observation order.
    let mut fields: BTreeMap<EchoSource, Vec<Sighting<'_>>> = BTreeMap::new();
    for (v, c) in vals {
        let Some(ctx) = ctxs.get(*c) else { continue };
        for (pointer, sent) in ctx.body {
            let name = pointer.rsplit('/').next().unwrap_or("");
            if names_a_record(name) {
                continue;
            }
            if !matches!(sent, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
                continue;
            }
            let field = EchoSource::Body {
                pointer: pointer.clone(),
            };
            fields
                .entry(field)
                .or_default()
                .push((Sent::Body(sent), ctx.session, *v));
        }
        // The first query parameter of a name is the one a request is keyed by.
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        for (name, sent) in ctx.query {
            if names_a_record(name) || !seen.insert(name.as_str()) {
                continue;
            }
            let field = EchoSource::Query { name: name.clone() };
            fields
                .entry(field)
                .or_default()
                .push((Sent::Query(sent), ctx.session, *v));
        }
        if fields.len() > MAX_FIELDS {
            return None;
        }
    }
    let mut best: Option<(usize, usize, KeyedValues)> = None;
    for (field, sightings) in fields {
        let Some((evidence, buckets)) = keyed_by(sightings, Evidence::Repeated) else {
            continue;
        };
        let keys = buckets.len();
        let better = match &best {
            None => true,
            Some((e, k, _)) => evidence > *e || (evidence == *e && keys < *k),
        };
        if better {
            best = Some((evidence, keys, KeyedValues::single(field, buckets)));
        }
    }
    best.map(|(_, _, k)| Box::new(k))
}

/// Whether a request field's name says it references a record by id (`id`, `uuid`,
/// `firewall_id`, `linodeId`).
fn names_a_record(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(lower.as_str(), "id" | "uuid" | "guid")
        || lower.ends_with("_id")
        || lower.ends_with("_ids")
        || lower.ends_with("_uuid")
        || name.ends_with("Id")
}

/// How much evidence a field needs beyond deciding the values without contradiction.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Evidence {
    /// Automatic detection: keys repeated across sessions (see the module doc).
    Repeated,
    /// A field the user listed: none.
    Asked,
}

/// A field's buckets (ordered by key text) and its evidence (distinct (key value, session)
/// pairs), when it qualifies.
fn keyed_by<K: RequestKey>(
    sightings: Vec<Sighting<'_, K>>,
    need: Evidence,
) -> Option<(usize, Vec<KeyBucket>)> {
    // key text → (recorded key, answer value, support)
    let mut buckets: BTreeMap<K::Text, (K, &Value, u64)> = BTreeMap::new();
    let mut pairs: BTreeSet<(K::Text, &str)> = BTreeSet::new();
    for (sent, session, answer) in sightings {
        let text = sent.text();
        match buckets.get_mut(&text) {
            Some((_, value, support)) => {
                if *value != answer {
                    return None;
                }
                *support += 1;
            }
            None => {
                buckets.insert(text.clone(), (sent, answer, 1));
            }
        }
        pairs.insert((text, session));
    }
    let keys = buckets.len();
    let evidence = pairs.len();
    if keys < 2 || (need == Evidence::Repeated && (evidence < MIN_CARRIERS || evidence < 2 * keys))
    {
        return None;
    }
    let mut values: Vec<&Value> = Vec::new();
    for (_, value, _) in buckets.values() {
        if !values.contains(value) {
            values.push(value);
        }
    }
    if values.len() < 2 {
        return None;
    }
    let buckets = buckets
        .into_values()
        .map(|(key, value, support)| KeyBucket {
            key: key.recorded(),
            value: value.clone(),
            support,
        })
        .collect();
    Some((evidence, buckets))
}

/// Synth diagnostics for `[[generate.request_keying.route]]` entries that key nothing: a route
/// the recordings do not have, a field no recorded request of the route sent, a field that
/// keyed no position of the route's answers. `groups[i]` is the group `routes[i]` was built
/// from. None under [`KeyingMode::Off`] (the entries are not read then).
pub fn diagnose(
    keying: &RequestKeying,
    groups: &[RouteGroup],
    routes: &[Route],
    obs: &[Obs<'_>],
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if keying.mode == KeyingMode::Off {
        return out;
    }
    let warning = |route: &str, code: &str, message: String| Diagnostic {
        severity: "warning".into(),
        code: code.into(),
        route: Some(route.to_string()),
        message,
    };
    for (i, rule) in keying.rules.iter().enumerate() {
        let name = rule.route.trim();
        let matched: Vec<usize> = groups
            .iter()
            .enumerate()
            .filter(|(_, g)| names_route(name, &g.method, &g.path))
            .map(|(k, _)| k)
            .collect();
        if matched.is_empty() {
            out.push(warning(
                name,
                "request-keying-route-unknown",
                format!(
                    "[[generate.request_keying.route]] entry {} names route `{name}`, which the \
                     recordings do not have: name it as `wraith synth` does (`METHOD /path`, \
                     `:param` for a path parameter) or drop the entry",
                    i + 1
                ),
            ));
            continue;
        }
        // Named as synth names the route (the entry's method may be lowercase).
        let name = groups[matched[0]].name();
        let name = name.as_str();
        for field in &rule.fields {
            let spelled = spell(field);
            let sent = matched.iter().any(|k| {
                groups[*k].obs.iter().any(|o| {
                    obs.get(*o).is_some_and(|o| match field {
                        EchoSource::Body { pointer } => {
                            o.req_fields.iter().any(|(p, _)| p == pointer)
                        }
                        EchoSource::Query { name } => o.query.iter().any(|(n, _)| n == name),
                        EchoSource::Path { .. }
                        | EchoSource::Header { .. }
                        | EchoSource::Within { .. }
                        | EchoSource::Instant { .. }
                        | EchoSource::Trimmed { .. } => false,
                    })
                })
            });
            if !sent {
                out.push(warning(
                    name,
                    "request-keying-field-unsent",
                    format!(
                        "[[generate.request_keying.route]] entry {} lists `{spelled}`, which no \
                         recorded request of `{name}` sent: fix the field (`$.a.b` for a body \
                         field, `query.name` for a query parameter) or drop it",
                        i + 1
                    ),
                ));
                continue;
            }
            let keys = matched
                .iter()
                .filter_map(|k| routes.get(*k))
                .any(|r| keys_a_position(r, field));
            if !keys {
                out.push(warning(
                    name,
                    "request-keying-field-decides-nothing",
                    format!(
                        "[[generate.request_keying.route]] entry {} lists `{spelled}`, which keys \
                         no position of the answers of `{name}`: at no recorded position did \
                         each of its values hold one answer value, with two of them holding \
                         different ones; record requests with other values of it, or drop it",
                        i + 1
                    ),
                ));
            }
        }
    }
    out
}

/// Whether some hole of the route's answers is keyed by `field`.
fn keys_a_position(route: &Route, field: &EchoSource) -> bool {
    fn walk(node: &Node, field: &EchoSource) -> bool {
        match node {
            Node::Hole(h) => h
                .keyed
                .as_ref()
                .is_some_and(|k| k.key_fields().contains(field)),
            Node::Object { fields } => fields.iter().any(|f| walk(&f.value, field)),
            Node::Array(ArrayNode::Tuple { items }) => items.iter().any(|n| walk(n, field)),
            Node::Array(ArrayNode::List {
                representatives, ..
            }) => representatives.iter().any(|n| walk(n, field)),
            Node::Const { .. } => false,
        }
    }
    route.variants.iter().any(|v| {
        matches!(&v.body, BodyTemplate::Json { root } if walk(root, field))
            || v.union
                .as_ref()
                .is_some_and(|u| u.templates.iter().any(|t| walk(t, field)))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    /// One observation's request body fields.
    fn body(fields: &[(&str, Value)]) -> Vec<(String, Value)> {
        fields
            .iter()
            .map(|(p, v)| (p.to_string(), v.clone()))
            .collect()
    }

    /// Observation `i` was recorded in session `sessions[i]`.
    fn ctxs<'a>(bodies: &'a [Vec<(String, Value)>], sessions: &'a [String]) -> Vec<Ctx<'a>> {
        bodies
            .iter()
            .zip(sessions)
            .map(|(b, s)| Ctx {
                params: Vec::new(),
                query: &[],
                body: b,
                session: s,
                answered: None,
                obs: None,
            })
            .collect()
    }

    /// One session per observation.
    fn own_sessions(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("s{i}")).collect()
    }

    fn indexed(answers: &[Value]) -> Vec<(&Value, usize)> {
        answers.iter().enumerate().map(|(i, v)| (v, i)).collect()
    }

    #[test]
    fn answer_value_decided_by_a_request_field_gets_one_bucket_per_key() {
        let plans = ["small", "small", "small", "large", "small", "huge"];
        let bodies: Vec<_> = plans
            .iter()
            .enumerate()
            .map(|(i, p)| body(&[("/type", json!(p)), ("/label", json!(format!("l{i}")))]))
            .collect();
        let memory: Vec<Value> = plans
            .iter()
            .map(|p| match *p {
                "small" => json!(1024),
                "large" => json!(16384),
                _ => json!(65536),
            })
            .collect();
        let sessions = own_sessions(plans.len());
        let keyed = learn(
            &indexed(&memory),
            &ctxs(&bodies, &sessions),
            &RouteKeying::AUTO,
        )
        .expect("keyed by type");
        assert_eq!(
            keyed.field,
            Some(EchoSource::Body {
                pointer: "/type".into()
            })
        );
        assert_eq!(keyed.value_for(&json!("small")), Some(&json!(1024)));
        // A plan recorded once renders the answer recorded with it.
        assert_eq!(keyed.value_for(&json!("large")), Some(&json!(16384)));
        assert_eq!(keyed.value_for(&json!("huge")), Some(&json!(65536)));
        assert_eq!(keyed.value_for(&json!("medium")), None);
        assert_eq!(keyed.buckets[2].support, 4);
    }

    #[test]
    fn field_unique_per_request_never_keys_an_answer() {
        // The label is consistent with the answer trivially (each label once): no evidence.
        let bodies: Vec<_> = (0..8)
            .map(|i| body(&[("/label", json!(format!("l{i}")))]))
            .collect();
        let answers: Vec<Value> = (0..8).map(|i| json!(i % 2)).collect();
        let sessions = own_sessions(8);
        assert_eq!(
            learn(
                &indexed(&answers),
                &ctxs(&bodies, &sessions),
                &RouteKeying::AUTO
            ),
            None
        );
    }

    #[test]
    fn key_sent_again_in_one_session_is_no_evidence() {
        // Each session names its own label three times: consistent, but only within a run.
        let bodies: Vec<_> = (0..9)
            .map(|i| body(&[("/label", json!(format!("run-{}", i / 3)))]))
            .collect();
        let answers: Vec<Value> = (0..9).map(|i| json!(i / 3 == 1)).collect();
        let sessions: Vec<String> = (0..9).map(|i| format!("s{}", i / 3)).collect();
        assert_eq!(
            learn(
                &indexed(&answers),
                &ctxs(&bodies, &sessions),
                &RouteKeying::AUTO
            ),
            None
        );
        // The same requests from nine sessions are evidence.
        let sessions = own_sessions(9);
        assert!(
            learn(
                &indexed(&answers),
                &ctxs(&bodies, &sessions),
                &RouteKeying::AUTO
            )
            .is_some()
        );
    }

    #[test]
    fn field_naming_a_record_never_keys_an_answer() {
        // The same shared firewall in many sessions: which record is named is the store's
        // business, and a replay sends the twin's ids.
        let bodies: Vec<_> = (0..8)
            .map(|i| body(&[("/firewall_id", json!(100 + i % 2))]))
            .collect();
        let answers: Vec<Value> = (0..8).map(|i| json!(i % 2 == 0)).collect();
        let sessions = own_sessions(8);
        assert_eq!(
            learn(
                &indexed(&answers),
                &ctxs(&bodies, &sessions),
                &RouteKeying::AUTO
            ),
            None
        );
    }

    #[test]
    fn one_contradicting_observation_rules_a_field_out() {
        let kinds = ["a", "a", "b", "b", "a", "b"];
        let bodies: Vec<_> = kinds.iter().map(|k| body(&[("/kind", json!(k))])).collect();
        let answers = [1, 1, 2, 2, 2, 2].map(|v| json!(v));
        let sessions = own_sessions(6);
        assert_eq!(
            learn(
                &indexed(&answers),
                &ctxs(&bodies, &sessions),
                &RouteKeying::AUTO
            ),
            None
        );
    }

    #[test]
    fn field_that_changes_nothing_keys_nothing() {
        let kinds = ["a", "a", "b", "b"];
        let bodies: Vec<_> = kinds.iter().map(|k| body(&[("/kind", json!(k))])).collect();
        let answers = [1, 1, 1, 1].map(|v| json!(v));
        let sessions = own_sessions(4);
        assert_eq!(
            learn(
                &indexed(&answers),
                &ctxs(&bodies, &sessions),
                &RouteKeying::AUTO
            ),
            None
        );
    }

    #[test]
    fn form_string_finds_the_key_recorded_as_a_number() {
        let sizes = [1, 1, 2, 2];
        let bodies: Vec<_> = sizes.iter().map(|s| body(&[("/size", json!(s))])).collect();
        let answers = ["s", "s", "m", "m"].map(|v| json!(v));
        let sessions = own_sessions(4);
        let keyed = learn(
            &indexed(&answers),
            &ctxs(&bodies, &sessions),
            &RouteKeying::AUTO,
        )
        .expect("keyed");
        assert_eq!(keyed.value_for(&json!("2")), Some(&json!("m")));
        assert_eq!(keyed.value_for(&json!(1)), Some(&json!("s")));
    }

    fn listed(fields: &[&str]) -> RouteKeying {
        RouteKeying {
            auto: false,
            fields: fields
                .iter()
                .map(|p| EchoSource::Body {
                    pointer: p.to_string(),
                })
                .collect(),
            combined: Vec::new(),
        }
    }

    /// Plans sent in one session (no cross-session evidence) and the memory each answered.
    fn one_session_plans(plans: &[&str]) -> (Vec<Vec<(String, Value)>>, Vec<Value>) {
        let bodies = plans
            .iter()
            .map(|p| body(&[("/type", json!(p)), ("/region_id", json!("r1"))]))
            .collect();
        let memory = plans
            .iter()
            .map(|p| if *p == "small" { json!(1) } else { json!(2) })
            .collect();
        (bodies, memory)
    }

    #[test]
    fn listed_field_keys_without_cross_session_evidence() {
        let (bodies, memory) = one_session_plans(&["small", "large", "small"]);
        let sessions = vec!["s".to_string(); 3];
        let ctxs = ctxs(&bodies, &sessions);
        assert_eq!(learn(&indexed(&memory), &ctxs, &RouteKeying::AUTO), None);
        let keyed = learn(&indexed(&memory), &ctxs, &listed(&["/type"])).expect("keyed");
        assert_eq!(keyed.value_for(&json!("large")), Some(&json!(2)));
        assert_eq!(keyed.buckets.len(), 2);
    }

    #[test]
    fn off_keys_nothing_auto_would_key() {
        let plans = ["small", "large", "small", "large", "small", "large"];
        let (bodies, memory) = one_session_plans(&plans);
        let sessions = own_sessions(plans.len());
        let ctxs = ctxs(&bodies, &sessions);
        assert!(learn(&indexed(&memory), &ctxs, &RouteKeying::AUTO).is_some());
        assert_eq!(learn(&indexed(&memory), &ctxs, &listed(&[])), None);
    }

    #[test]
    fn listed_field_must_still_decide_the_position() {
        let (bodies, _) = one_session_plans(&["small", "large", "small", "large"]);
        let sessions = own_sessions(4);
        let ctxs = ctxs(&bodies, &sessions);
        // A contradiction: `small` answered 1 and 3.
        let answers = [1, 2, 3, 2].map(|v| json!(v));
        assert_eq!(learn(&indexed(&answers), &ctxs, &listed(&["/type"])), None);
        // One key: the field is the same in every request (a listed record reference too).
        let answers = [1, 2, 1, 2].map(|v| json!(v));
        assert_eq!(
            learn(&indexed(&answers), &ctxs, &listed(&["/region_id"])),
            None
        );
        // A field no request sent.
        assert_eq!(learn(&indexed(&answers), &ctxs, &listed(&["/size"])), None);
    }

    #[test]
    fn listed_fields_are_tried_in_order_before_automatic_detection() {
        let plans = ["small", "large", "small", "large", "small", "large"];
        let bodies: Vec<_> = plans
            .iter()
            .map(|p| body(&[("/type", json!(p)), ("/class", json!(format!("c-{p}")))]))
            .collect();
        let memory: Vec<Value> = plans
            .iter()
            .map(|p| if *p == "small" { json!(1) } else { json!(2) })
            .collect();
        let sessions = own_sessions(plans.len());
        let ctxs = ctxs(&bodies, &sessions);
        // Automatic detection picks `/class` (sorted first among equals).
        let auto = learn(&indexed(&memory), &ctxs, &RouteKeying::AUTO).unwrap();
        assert_eq!(
            auto.field,
            Some(EchoSource::Body {
                pointer: "/class".into()
            })
        );
        let mut asked = listed(&["/type", "/class"]);
        asked.auto = true;
        let keyed = learn(&indexed(&memory), &ctxs, &asked).unwrap();
        assert_eq!(
            keyed.field,
            Some(EchoSource::Body {
                pointer: "/type".into()
            })
        );
    }

    /// `[[generate.request_keying.route]] fields = ["$.region", "$.type"]` (manual).
    fn listed_together(fields: &[&str]) -> RouteKeying {
        let mut keying = listed(fields);
        keying.combined = vec![keying.fields.clone()];
        keying
    }

    /// Creates naming a region and a plan, and the price each answered: neither field alone
    /// decides it (`eu` answered 1 and 2, `s` answered 1 and 2), the pair does.
    fn region_plan_prices(rows: &[(&str, &str, i64)]) -> (Vec<Vec<(String, Value)>>, Vec<Value>) {
        let bodies = rows
            .iter()
            .enumerate()
            .map(|(i, (region, plan, _))| {
                body(&[
                    ("/label", json!(format!("l{i}"))),
                    ("/region", json!(region)),
                    ("/type", json!(plan)),
                ])
            })
            .collect();
        let prices = rows.iter().map(|(_, _, p)| json!(p)).collect();
        (bodies, prices)
    }

    /// What [`learn`] finds for the `prices` creates `bodies` answered (one session each) when
    /// the route lists `/region` and `/type` together.
    fn learn_region_plan(
        bodies: &[Vec<(String, Value)>],
        prices: &[Value],
    ) -> Option<Box<KeyedValues>> {
        let sessions = own_sessions(bodies.len());
        let ctxs = ctxs(bodies, &sessions);
        learn(
            &indexed(prices),
            &ctxs,
            &listed_together(&["/region", "/type"]),
        )
    }

    const PRICES: [(&str, &str, i64); 6] = [
        ("eu", "s", 1),
        ("eu", "l", 2),
        ("us", "s", 2),
        ("us", "l", 3),
        ("eu", "s", 1),
        ("us", "l", 3),
    ];

    #[test]
    fn position_decided_only_by_the_listed_pair_gets_a_combined_key() {
        let (bodies, prices) = region_plan_prices(&PRICES);
        let sessions = own_sessions(bodies.len());
        let ctxs = ctxs(&bodies, &sessions);
        // Neither field alone decides the price.
        assert_eq!(learn(&indexed(&prices), &ctxs, &listed(&["/region"])), None);
        assert_eq!(learn(&indexed(&prices), &ctxs, &listed(&["/type"])), None);
        let keyed = learn(
            &indexed(&prices),
            &ctxs,
            &listed_together(&["/region", "/type"]),
        )
        .expect("keyed by the pair");
        assert_eq!(keyed.field, None);
        assert_eq!(
            keyed.fields,
            vec![
                EchoSource::Body {
                    pointer: "/region".into()
                },
                EchoSource::Body {
                    pointer: "/type".into()
                }
            ]
        );
        // One bucket per recorded tuple, ordered by the tuple's texts, keyed in listed order.
        let keys: Vec<&Value> = keyed.buckets.iter().map(|b| &b.key).collect();
        assert_eq!(
            keys,
            [
                &json!(["eu", "l"]),
                &json!(["eu", "s"]),
                &json!(["us", "l"]),
                &json!(["us", "s"])
            ]
        );
        assert_eq!(keyed.buckets[1].support, 2);
        assert_eq!(
            keyed.value_for_all(&[json!("us"), json!("s")]),
            Some(&json!(2))
        );
        assert_eq!(
            keyed.value_for_all(&[json!("eu"), json!("l")]),
            Some(&json!(2))
        );
        // Automatic detection never combines fields.
        assert_eq!(learn(&indexed(&prices), &ctxs, &RouteKeying::AUTO), None);
        // Nor does a single field's keyed-snapshot learner.
        assert_eq!(
            learn_field(
                &indexed(&prices),
                &ctxs,
                &listed_together(&["/region", "/type"])
            ),
            None
        );
    }

    #[test]
    fn contradicting_observation_drops_the_combined_key() {
        let mut rows = PRICES.to_vec();
        rows.push(("us", "s", 9));
        let (bodies, prices) = region_plan_prices(&rows);
        assert_eq!(learn_region_plan(&bodies, &prices), None);
    }

    #[test]
    fn observation_lacking_a_listed_field_does_not_count_against_the_combined_key() {
        let (mut bodies, mut prices) = region_plan_prices(&PRICES);
        bodies.push(body(&[("/region", json!("us"))]));
        prices.push(json!(9));
        let keyed = learn_region_plan(&bodies, &prices).expect("keyed by the pair");
        assert_eq!(keyed.buckets.len(), 4);
        assert_eq!(keyed.value_for_all(&[json!("us")]), None);
    }

    #[test]
    fn a_listed_field_that_decides_alone_wins_over_the_combination() {
        // The price follows the plan alone: the plan keys it, not the pair.
        let rows = [
            ("eu", "s", 1),
            ("us", "s", 1),
            ("eu", "l", 2),
            ("us", "l", 2),
        ];
        let (bodies, prices) = region_plan_prices(&rows);
        let keyed = learn_region_plan(&bodies, &prices).expect("keyed");
        assert_eq!(
            keyed.field,
            Some(EchoSource::Body {
                pointer: "/type".into()
            })
        );
        assert!(keyed.fields.is_empty());
    }

    #[test]
    fn each_entry_listing_several_fields_is_one_combined_key_of_its_route() {
        let f = |p: &str| EchoSource::Body {
            pointer: p.to_string(),
        };
        let keying = RequestKeying {
            mode: KeyingMode::Manual,
            rules: vec![
                KeyingRule {
                    route: "POST /a".into(),
                    fields: vec![f("/region"), f("/type"), f("/region")],
                },
                KeyingRule {
                    route: "POST /a".into(),
                    fields: vec![f("/size")],
                },
                KeyingRule {
                    route: "POST /b".into(),
                    fields: vec![f("/x"), f("/y")],
                },
            ],
        };
        let a = keying.for_route("POST", "/a");
        assert_eq!(a.fields, vec![f("/region"), f("/type"), f("/size")]);
        assert_eq!(a.combined, vec![vec![f("/region"), f("/type")]]);
        let off = RequestKeying {
            mode: KeyingMode::Off,
            ..keying
        };
        assert!(off.for_route("POST", "/b").combined.is_empty());
    }

    #[test]
    fn routes_are_named_as_synth_names_them_and_fields_as_the_config_spells_them() {
        assert!(names_route(
            "POST /linode/instances",
            "POST",
            "/linode/instances"
        ));
        assert!(names_route(" post  /a/:param ", "POST", "/a/:param"));
        assert!(!names_route("POST /a", "GET", "/a"));
        assert!(!names_route("POST /a/", "POST", "/a"));
        let f = body_field(&["a/b".to_string(), "0".to_string(), "x.y".to_string()]);
        assert_eq!(
            f,
            EchoSource::Body {
                pointer: "/a~1b/0/x.y".into()
            }
        );
        assert_eq!(spell(&f), "$.a/b.0[\"x.y\"]");
        assert_eq!(
            spell(&EchoSource::Query {
                name: "page".into()
            }),
            "query.page"
        );
        let keying = RequestKeying {
            mode: KeyingMode::Off,
            rules: vec![KeyingRule {
                route: "POST /a".into(),
                fields: vec![f.clone()],
            }],
        };
        assert_eq!(
            keying.for_route("POST", "/a"),
            RouteKeying {
                auto: false,
                fields: Vec::new(),
                combined: Vec::new()
            }
        );
        let manual = RequestKeying {
            mode: KeyingMode::Manual,
            ..keying
        };
        assert_eq!(manual.for_route("POST", "/a").fields, vec![f]);
        assert!(manual.for_route("POST", "/b").fields.is_empty());
    }
}
