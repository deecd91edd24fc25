//! Template rendering: a variant's [`Node`] tree and header programs become a concrete body and
//! headers. Every [`Node::Hole`] is replaced here, so a placeholder cannot reach the wire.

use rand::{Rng, RngExt};
use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};
use wraith_model::{
    ArrayNode, EchoSource, HeaderProgram, HeaderRule, Hole, HoleKind, IdCharset, IdShape, JsonType,
    MirroredList, Node, VolatileKind,
};

use crate::api::{FieldSource, WallClock};
use crate::namespace::Namespace;
use crate::origins::Sources;
use crate::outbound::{FieldOrigin, Origins};
use crate::util::{json_pointer_get, parse_number};

/// What rendering may read from the request.
pub(crate) struct ReqCtx<'a> {
    /// Normalized request path: seeds every hash-based choice, so the same path gives the same
    /// body.
    pub path: &'a str,
    /// Route parameter name → percent-decoded value.
    pub params: &'a [(String, String)],
    /// Decoded query pairs, in request order.
    pub query: &'a [(String, String)],
    /// The body as JSON: parsed JSON, or form fields as a nested object.
    pub body: Option<&'a Value>,
    pub headers: &'a [(String, String)],
    /// A recorded answer of the variant being rendered, for this request's principal (see
    /// `Engine::snapshot`): observed values come from it, so one answer shows one recorded
    /// state (an account's profile as it was at one time) instead of a mix of examples.
    pub snapshot: Option<&'a Value>,
    /// The snapshot is the request's keyed one (`Variant::keyed_snapshots`): an optional field
    /// reached through objects is then rendered exactly when the snapshot has it.
    pub snapshot_keyed: bool,
    /// The route's answer arrays that mirror a request array of objects (set for the route
    /// being rendered).
    pub mirrored: &'a [MirroredList],
}

impl ReqCtx<'_> {
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn query_value(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The snapshot's value at a render path (`/a/b/0`: keys as they are, unescaped).
    pub(crate) fn snapshot_at(&self, json_path: &str) -> Option<&Value> {
        let mut cur = self.snapshot?;
        if json_path.is_empty() {
            return Some(cur);
        }
        for token in json_path.strip_prefix('/')?.split('/') {
            cur = match cur {
                Value::Object(m) => m.get(token)?,
                Value::Array(a) => a.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(cur)
    }

    /// Whether the keyed snapshot has `key` in its object at `json_path` (through objects, and
    /// list items by position: a rendered item has the fields the state's item there had);
    /// `None` when the snapshot is not keyed or has no object there.
    fn keyed_presence(&self, json_path: &str, key: &str) -> Option<bool> {
        if !self.snapshot_keyed {
            return None;
        }
        Some(self.snapshot_at(json_path)?.as_object()?.contains_key(key))
    }

    /// The raw value an echo hole would copy, if the request carries it.
    pub(crate) fn echo_source(&self, from: &EchoSource) -> Option<Value> {
        match from {
            EchoSource::Path { param } => self.param(param).map(|v| Value::String(v.to_string())),
            EchoSource::Query { name } => {
                self.query_value(name).map(|v| Value::String(v.to_string()))
            }
            EchoSource::Body { pointer } => self
                .body
                .and_then(|b| json_pointer_get(b, pointer))
                .cloned(),
            EchoSource::Header { name } => self.header(name).map(|v| Value::String(v.to_string())),
            EchoSource::Within {
                source,
                prefix,
                suffix,
            } => EchoSource::within_text(prefix, &self.echo_source(source)?, suffix)
                .map(Value::String),
            EchoSource::Instant { source, unit } => {
                EchoSource::instant_value(&self.echo_source(source)?, unit)
            }
            EchoSource::Trimmed { source } => EchoSource::trimmed_value(&self.echo_source(source)?),
        }
    }
}

/// Per-request access to the namespace for holes that draw from it.
pub(crate) struct NsCtx<'a> {
    pub ns: &'a mut Namespace,
    pub wall: &'a WallClock,
    /// One clock reading per response, taken lazily, so `created` and `updated` agree.
    pub now_us: Option<i64>,
    /// Derived fields naming a field of an object enclosing theirs ([`IdShape::Derived`]'s
    /// `up` above 0), by body path: rendered from an example first, then again once that
    /// object has rendered the field they name.
    pub enclosed_derived: Vec<(String, Hole)>,
    /// The index of the list item being rendered, in the innermost template list
    /// ([`ArrayNode::List`]) around the current position; `None` outside any.
    pub list_item: Option<usize>,
}

impl NsCtx<'_> {
    pub(crate) fn now(&mut self) -> i64 {
        match self.now_us {
            Some(t) => t,
            None => {
                let t = self.ns.now_us(self.wall);
                self.now_us = Some(t);
                t
            }
        }
    }
}

/// A stable 64-bit hash of a string (SHA-256 prefix): never Rust's randomized hasher.
pub(crate) fn stable_hash(s: &str) -> u64 {
    let d = Sha256::digest(s.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_le_bytes(b)
}

/// Render a template node and report, per body position, which values were echoed from the
/// request or minted for this response (`origins`: the outbound scrub exempts exactly those),
/// and, under `--debug`, where every hole's value came from (`sources`).
pub(crate) fn render_node_traced(
    node: &Node,
    req: &ReqCtx<'_>,
    ns: &mut NsCtx<'_>,
    sources: &mut Sources,
    json_path: &str,
    origins: &mut Origins,
) -> Value {
    match node {
        Node::Const { value } => value.clone(),
        Node::Object { fields } => {
            let mut map = Map::with_capacity(fields.len());
            // Fields that embed a sibling's minted value render once every sibling has.
            let mut derived = Vec::new();
            // Derived fields below this object that may name one of its fields.
            let enclosed_from = ns.enclosed_derived.len();
            for f in fields {
                if f.optional {
                    let keyed = match &f.value {
                        Node::Hole(Hole {
                            source: HoleKind::Echo { .. },
                            ..
                        }) => None,
                        _ => req.keyed_presence(json_path, &f.key),
                    };
                    if !keyed.unwrap_or_else(|| optional_present(&f.value, f.present_ratio_bp, req))
                    {
                        continue;
                    }
                }
                let child_path = format!("{json_path}/{}", f.key);
                if let Node::Hole(
                    hole @ Hole {
                        source:
                            HoleKind::Generated {
                                shape: IdShape::Derived { .. },
                            },
                        ..
                    },
                ) = &f.value
                {
                    derived.push((f.key.clone(), hole, child_path));
                    // Keep the recorded key order: the value is filled in below.
                    map.insert(f.key.clone(), Value::Null);
                    continue;
                }
                let v = render_node_traced(&f.value, req, ns, sources, &child_path, origins);
                map.insert(f.key.clone(), v);
            }
            let enclosed_to = ns.enclosed_derived.len();
            if enclosed_to > enclosed_from {
                fill_enclosed_derived(&mut map, json_path, ns, req, enclosed_from);
            }
            for (key, hole, child_path) in derived {
                let v = render_derived(hole, &map, req);
                if derived_up(hole) > 0 {
                    ns.enclosed_derived.push((child_path.clone(), hole.clone()));
                }
                origins.insert(&child_path, FieldOrigin::Minted);
                sources.set(&child_path, FieldSource::Generated);
                map.insert(key, v);
            }
            Value::Object(map)
        }
        Node::Array(array) => {
            if !req.mirrored.is_empty()
                && let Some((rule, sent)) = mirrored_at(req, json_path)
            {
                let items = match array {
                    ArrayNode::Tuple { items } => items,
                    ArrayNode::List {
                        representatives, ..
                    } => representatives,
                };
                return render_mirrored(rule, &sent, items, req, ns, sources, json_path, origins);
            }
            match array {
                ArrayNode::Tuple { items } => Value::Array(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, n)| {
                            render_node_traced(
                                n,
                                req,
                                ns,
                                sources,
                                &format!("{json_path}/{i}"),
                                origins,
                            )
                        })
                        .collect(),
                ),
                ArrayNode::List {
                    representatives,
                    target_length,
                    discriminator,
                } => {
                    // A list of recorded data only (nothing minted, echoed or timed): the recorded
                    // state's own items, so its length is that state's too; unless the request sent a
                    // list at the same place (the regions a key is limited to), which it may follow.
                    if let Some(items @ Value::Array(_)) = req.snapshot_at(json_path)
                        && representatives.iter().all(observed_only)
                        && req
                            .body
                            .and_then(|b| json_pointer_get(b, json_path))
                            .is_none()
                    {
                        sources.set(json_path, FieldSource::Observed);
                        return items.clone();
                    }
                    if representatives.is_empty() {
                        return Value::Array(Vec::new());
                    }
                    let start = (stable_hash(req.path) % representatives.len() as u64) as usize;
                    // A keyed snapshot's items say which shape goes with the request's value.
                    let keyed_items = match (req.snapshot_keyed, discriminator) {
                        (true, None) => req.snapshot_at(json_path).and_then(Value::as_array),
                        _ => None,
                    };
                    let mut out = Vec::with_capacity(*target_length);
                    let outer = ns.list_item;
                    for i in 0..*target_length {
                        ns.list_item = Some(i);
                        let fit = keyed_items.and_then(|items| items.get(i)).and_then(|item| {
                            crate::list_shape::representative_for(representatives, start + i, item)
                        });
                        let rep =
                            &representatives[fit.unwrap_or((start + i) % representatives.len())];
                        out.push(render_node_traced(
                            rep,
                            req,
                            ns,
                            sources,
                            &format!("{json_path}/{i}"),
                            origins,
                        ));
                    }
                    ns.list_item = outer;
                    Value::Array(out)
                }
            }
        }
        Node::Hole(hole) => {
            // A record the request's field made (a post's poll): its template, in place.
            if let Some(t) = crate::embedded_records::made_template(hole, req) {
                return render_node_traced(t, req, ns, sources, json_path, origins);
            }
            let echoed = match &hole.source {
                HoleKind::Echo { from } => {
                    req.echo_source(from).is_some() || unsent_array_echo(hole)
                }
                _ => false,
            };
            let origin = match &hole.source {
                HoleKind::Echo { .. } => echoed.then_some(FieldOrigin::Echo),
                HoleKind::Generated { .. } | HoleKind::Clock { .. } | HoleKind::Counter { .. } => {
                    Some(FieldOrigin::Minted)
                }
                HoleKind::Observed => None,
            };
            if let Some(o) = origin {
                origins.insert(json_path, o);
            }
            // An echo hole the request does not feed falls back to a recorded example.
            sources.set(
                json_path,
                match &hole.source {
                    HoleKind::Echo { .. } if echoed => FieldSource::Echo,
                    HoleKind::Echo { .. } | HoleKind::Observed => FieldSource::Observed,
                    HoleKind::Generated { .. } => FieldSource::Generated,
                    HoleKind::Clock { .. } => FieldSource::Clock,
                    HoleKind::Counter { .. } => FieldSource::Counter,
                },
            );
            render_hole(hole, req, ns, json_path)
        }
    }
}

/// The mirrored list rendered at `json_path`, with the items the request sent for it (none
/// when it sent nothing there and the rule answers that `[]`); `None` when no rule names the
/// position, or the request sent something else there or nothing the rule answers.
fn mirrored_at<'r>(
    req: &'r ReqCtx<'_>,
    json_path: &str,
) -> Option<(&'r MirroredList, Vec<&'r Value>)> {
    let rule = req
        .mirrored
        .iter()
        .find(|r| unescaped_pointer_is(&r.at, json_path))?;
    let sent = match req.body.and_then(|b| json_pointer_get(b, &rule.field)) {
        None if rule.empty_when_absent => Vec::new(),
        None => return None,
        Some(Value::Array(items)) => items.iter().collect(),
        // A form's `field[0][key]` fields: items by index, from 0 on.
        Some(Value::Object(by_index)) => {
            let mut out = Vec::new();
            while let Some(item) = by_index.get(&out.len().to_string()) {
                out.push(item);
            }
            if out.len() != by_index.len() {
                return None;
            }
            out
        }
        Some(_) => return None,
    };
    // Items of the kind the rule copies from: scalars for the empty `from`, else objects.
    let scalars = rule.fields.iter().any(|f| f.from.is_empty());
    if !sent
        .iter()
        .all(|item| item.is_object() != scalars && !item.is_array())
    {
        return None;
    }
    Some((rule, sent))
}

/// Whether the JSON pointer `pointer` (escaped) names the render path `json_path` (keys as
/// they are).
fn unescaped_pointer_is(pointer: &str, json_path: &str) -> bool {
    if !pointer.contains('~') {
        return pointer == json_path;
    }
    pointer.replace("~1", "/").replace("~0", "~") == json_path
}

/// One item per sent item, rendered from a template item, with the rule's fields copied
/// from the item (object or scalar) sent at its position.
#[allow(clippy::too_many_arguments)]
fn render_mirrored(
    rule: &MirroredList,
    sent: &[&Value],
    items: &[Node],
    req: &ReqCtx<'_>,
    ns: &mut NsCtx<'_>,
    sources: &mut Sources,
    json_path: &str,
    origins: &mut Origins,
) -> Value {
    // Every item from the one template item whose sequential ids start highest: ids minted
    // under one shape follow each other, where items of a recorded tuple each hold their own
    // position's shape and would mint the same ids.
    let template = items
        .iter()
        .enumerate()
        .max_by_key(|(i, n)| (highest_integer_id(n), std::cmp::Reverse(*i)))
        .map(|(_, n)| n);
    // No item to render from: nothing recorded was ever listed there.
    let Some(template) = template else {
        return Value::Array(Vec::new());
    };
    let mut out = Vec::with_capacity(sent.len());
    for (i, sent_item) in sent.iter().enumerate() {
        let item_path = format!("{json_path}/{i}");
        let mut item = render_node_traced(template, req, ns, sources, &item_path, origins);
        copy_mirrored(rule, sent_item, &mut item, &item_path, sources, origins);
        out.push(item);
    }
    Value::Array(out)
}

/// Mirrored lists one object down (`/poll/options`) that the template held inside a replayed
/// value rather than as a list node (a post's `poll`, `null` unless one was sent), so the
/// render never reached them: the rendered array is made one item per item the request sent,
/// each a copy of the rendered item at its position (the last one past the rendered length)
/// with the rule's fields copied from the sent item. Arrays the request sent nothing for keep
/// what was rendered.
pub(crate) fn mirror_nested(
    body: &mut Value,
    req: &ReqCtx<'_>,
    sources: &mut Sources,
    origins: &mut Origins,
) {
    for rule in req.mirrored {
        if !rule.at[1..].contains('/') {
            continue;
        }
        let json_path = rule.at.replace("~1", "/").replace("~0", "~");
        let Some((rule, sent)) = mirrored_at(req, &json_path) else {
            continue;
        };
        if sent.is_empty() {
            continue;
        }
        let Some(Value::Array(rendered)) = body.pointer_mut(&rule.at) else {
            continue;
        };
        let Some(last) = rendered.last().cloned() else {
            continue;
        };
        let mut out = Vec::with_capacity(sent.len());
        for (i, sent_item) in sent.iter().enumerate() {
            let mut item = rendered.get(i).cloned().unwrap_or_else(|| last.clone());
            let item_path = format!("{json_path}/{i}");
            copy_mirrored(rule, sent_item, &mut item, &item_path, sources, origins);
            out.push(item);
        }
        *rendered = out;
    }
}

/// Copy a mirrored list's fields from the item sent into the answer's item at `item_path`.
fn copy_mirrored(
    rule: &MirroredList,
    sent_item: &Value,
    item: &mut Value,
    item_path: &str,
    sources: &mut Sources,
    origins: &mut Origins,
) {
    let Value::Object(map) = item else {
        return;
    };
    for f in &rule.fields {
        let Some(v) = mirrored_source(sent_item, &f.from) else {
            continue;
        };
        let path = format!("{item_path}/{}", f.key);
        origins.insert(&path, FieldOrigin::Echo);
        sources.set(&path, FieldSource::Echo);
        map.insert(f.key.clone(), coerce(v.clone(), f.observed_type));
    }
}

/// What a mirrored field copies from one sent item: the sent object's field `from`, or the
/// sent scalar itself for the empty `from` ([`wraith_model::MirroredField::from`]).
fn mirrored_source<'v>(sent: &'v Value, from: &str) -> Option<&'v Value> {
    match sent {
        Value::Object(obj) => obj.get(from),
        Value::Array(_) => None,
        scalar => from.is_empty().then_some(scalar),
    }
}

/// The highest `above` of the sequential integer ids a template subtree mints (0 for none).
fn highest_integer_id(node: &Node) -> u64 {
    match node {
        Node::Const { .. } => 0,
        Node::Object { fields } => fields
            .iter()
            .map(|f| highest_integer_id(&f.value))
            .max()
            .unwrap_or(0),
        Node::Array(ArrayNode::Tuple { items })
        | Node::Array(ArrayNode::List {
            representatives: items,
            ..
        }) => items.iter().map(highest_integer_id).max().unwrap_or(0),
        Node::Hole(Hole {
            source:
                HoleKind::Generated {
                    shape: IdShape::Integer { above, .. },
                },
            ..
        }) => *above,
        Node::Hole(_) => 0,
    }
}

/// Whether an echo hole answers `[]` to a request without its source: a whole array every
/// recorded request sent (a recorded default would be the hole's `when_absent`), or sent as
/// `null` (a firewall without outbound rules). Its examples are other requests' arrays (a
/// firewall's rules, a create's `tags`), which this request did not send; the array it sent
/// there is the empty one.
fn unsent_array_echo(hole: &Hole) -> bool {
    if hole.when_absent.is_some() {
        return false;
    }
    match hole.observed_type {
        JsonType::Array => true,
        JsonType::Mixed => {
            hole.examples.iter().any(Value::is_array)
                && hole.examples.iter().all(|v| v.is_array() || v.is_null())
        }
        _ => false,
    }
}

/// Whether a template subtree holds recorded data only: constants and observed holes (no
/// minted, echoed, timed or counted value).
fn observed_only(node: &Node) -> bool {
    match node {
        Node::Const { .. } => true,
        Node::Object { fields } => fields.iter().all(|f| observed_only(&f.value)),
        Node::Array(ArrayNode::Tuple { items }) => items.iter().all(observed_only),
        Node::Array(ArrayNode::List {
            representatives, ..
        }) => representatives.iter().all(observed_only),
        Node::Hole(h) => matches!(h.source, HoleKind::Observed),
    }
}

/// The presence rule of an optional field (see [`wraith_model::Field::optional`]).
fn optional_present(node: &Node, ratio_bp: u32, req: &ReqCtx<'_>) -> bool {
    if let Node::Hole(Hole {
        source: HoleKind::Echo { from },
        when_absent,
        ..
    }) = node
    {
        // With a recorded default, the field was there without its source too.
        return when_absent.is_some() || req.echo_source(from).is_some();
    }
    ratio_bp >= 5000
}

fn render_hole(hole: &Hole, req: &ReqCtx<'_>, ns: &mut NsCtx<'_>, json_path: &str) -> Value {
    match &hole.source {
        HoleKind::Echo { from } => match req.echo_source(from) {
            Some(v) => coerce(v, hole.observed_type),
            None if unsent_array_echo(hole) => Value::Array(Vec::new()),
            // Synth puts the value the recorded requests without the source agreed on first.
            None => hole
                .examples
                .first()
                .cloned()
                .unwrap_or_else(|| default_of(hole.observed_type)),
        },
        HoleKind::Generated { shape } => generate_id(shape, ns.ns),
        HoleKind::Clock { unit, after } => {
            let later = after
                .as_ref()
                .and_then(|src| req.echo_source(src))
                .and_then(|v| wraith_model::clock::sent_seconds_us(&v))
                .unwrap_or(0);
            unit.value_at(ns.now().saturating_add(later))
        }
        HoleKind::Counter { name } => {
            let key = if name.is_empty() { json_path } else { name };
            let start = hole
                .examples
                .iter()
                .filter_map(Value::as_i64)
                .max()
                .unwrap_or(0);
            let c = ns.ns.counters.entry(key.to_string()).or_insert(start);
            *c += 1;
            Value::Number(Number::from(*c))
        }
        HoleKind::Observed => match &hole.when_absent {
            // Every recorded request without that field got this value here.
            Some(w) if req.echo_source(&w.field).is_none() => w.value.clone(),
            // The record the request's field names, as the session holds it, where the
            // recorded answers embedded it.
            Some(w)
                if let Some(v) = crate::embedded_records::render(hole, req, ns, || {
                    match req.snapshot_at(json_path) {
                        Some(v) if *v != w.value && recorded_here(hole, v) => v.clone(),
                        _ => observed_except(hole, req, &w.value),
                    }
                }) =>
            {
                v
            }
            // Request keying: every recorded answer to this field value held one value here.
            _ if let Some(v) = keyed_value(hole, req) => v,
            // The request carries the field, so the value its absence fixes is not this
            // answer's (a reply's `in_reply_to_account_id` is not the `null` of most posts).
            Some(w) => match req.snapshot_at(json_path) {
                Some(v) if *v != w.value && recorded_here(hole, v) => v.clone(),
                _ => observed_except(hole, req, &w.value),
            },
            // The recorded state's value, when it is one the hole recorded.
            None => match req.snapshot_at(json_path) {
                Some(v) if recorded_here(hole, v) => v.clone(),
                _ => match ns.list_item {
                    Some(i) => observed_in_list(hole, req, i),
                    None => observed(hole, req),
                },
            },
        },
    }
}

/// Whether `v` is one of the values the hole recorded: its rendered `examples` or the
/// `more_examples` kept past them (a snapshot's value there is a recorded one either way).
fn recorded_here(hole: &Hole, v: &Value) -> bool {
    hole.examples.contains(v) || hole.more_examples.contains(v)
}

/// The bucket of a request-keyed hole ([`Hole::keyed`]) for the request's value of its field
/// (its values of the fields of a combined key); `None` when the hole is not keyed, the request
/// lacks the field (any of the fields), or its value (tuple) was never recorded — unless every
/// recorded value was answered as itself ([`wraith_model::KeyedValues::echoes`]): the request's
/// value then.
fn keyed_value(hole: &Hole, req: &ReqCtx<'_>) -> Option<Value> {
    let keyed = hole.keyed.as_deref()?;
    if let Some(field) = &keyed.field {
        let sent = req.echo_source(field)?;
        if let Some(v) = keyed.value_for(&sent) {
            return Some(v.clone());
        }
        // Every recorded value of the field was answered as itself: so is this one, as a
        // value of the type the answers held.
        if !keyed.echoes() {
            return None;
        }
        let text = wraith_model::key_text(&sent)?;
        return match keyed.buckets.first().map(|b| &b.value) {
            Some(Value::String(_)) => Some(Value::String(text)),
            Some(Value::Number(_)) => crate::util::parse_number(&text),
            Some(Value::Bool(_)) => crate::util::form_bool(&text).map(Value::Bool),
            _ => None,
        };
    }
    let sent: Vec<Value> = keyed
        .fields
        .iter()
        .map(|f| req.echo_source(f))
        .collect::<Option<_>>()?;
    keyed.value_for_all(&sent).cloned()
}

/// A [`IdShape::Derived`] value: a recorded prefix, the sibling's rendered value (minted or
/// echoed), the most common recorded suffix (a rarer recorded suffix is never picked: nothing
/// in the request says when it applies). Without a scalar sibling, an example.
///
/// The prefix is the one that names what the rest of the object rendered (see
/// [`prefix_naming_siblings`]): a status's `uri` prefix holds its author's id, and the author
/// rendered is the one the prefix must name. Else one chosen by a hash of the request path.
fn render_derived(hole: &Hole, siblings: &Map<String, Value>, req: &ReqCtx<'_>) -> Value {
    let HoleKind::Generated {
        shape:
            IdShape::Derived {
                sibling,
                prefixes,
                suffix,
                ..
            },
    } = &hole.source
    else {
        return observed(hole, req);
    };
    let id = match siblings.get(sibling) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => return observed(hole, req),
    };
    let prefix = if prefixes.is_empty() {
        ""
    } else if let Some(i) = prefix_naming_siblings(prefixes, siblings) {
        prefixes[i].as_str()
    } else {
        prefixes[(stable_hash(req.path) % prefixes.len() as u64) as usize].as_str()
    };
    Value::String(format!("{prefix}{id}{suffix}"))
}

/// How many objects above its own the sibling of a derived hole sits.
fn derived_up(hole: &Hole) -> usize {
    match &hole.source {
        HoleKind::Generated {
            shape: IdShape::Derived { up, .. },
        } => usize::from(*up),
        _ => 0,
    }
}

/// Render again, from `map` (the object at `json_path`, every field rendered), the derived
/// fields below it (pushed since `from`) whose sibling is one of its fields, and drop them
/// from the pending list; the others wait for an object further up.
fn fill_enclosed_derived(
    map: &mut Map<String, Value>,
    json_path: &str,
    ns: &mut NsCtx<'_>,
    req: &ReqCtx<'_>,
    from: usize,
) {
    let pending = ns.enclosed_derived.split_off(from);
    for (path, hole) in pending {
        let Some(rel) = path
            .strip_prefix(json_path)
            .and_then(|r| r.strip_prefix('/'))
        else {
            ns.enclosed_derived.push((path, hole));
            continue;
        };
        let keys: Vec<&str> = rel.split('/').collect();
        if keys.len() != derived_up(&hole) + 1 {
            ns.enclosed_derived.push((path, hole));
            continue;
        }
        let value = render_derived(&hole, map, req);
        set_within(map, &keys, value);
    }
}

/// Set the value at `keys` within `map`, where every object on the way is present.
fn set_within(map: &mut Map<String, Value>, keys: &[&str], value: Value) {
    match keys {
        [] => {}
        [last] => {
            if let Some(v) = map.get_mut(*last) {
                *v = value;
            }
        }
        [first, rest @ ..] => {
            if let Some(Value::Object(inner)) = map.get_mut(*first) {
                set_within(inner, rest, value);
            }
        }
    }
}

/// Of several recorded prefixes, the one holding the longest string the rendered siblings
/// hold (at any depth) as a whole token: bounded on both sides by the prefix's ends or by
/// characters that cannot continue a name (`/`, `@`, `:`; not a letter, digit, `_`, `-` or
/// `.`), so `@ann` does not name `@ann_2`. `None` when no prefix holds any, or when the
/// longest is held by several prefixes (nothing tells them apart).
fn prefix_naming_siblings(prefixes: &[String], siblings: &Map<String, Value>) -> Option<usize> {
    /// Shorter strings (`en`, `public`) name nothing in particular.
    const MIN_LEN: usize = 4;
    if prefixes.len() < 2 {
        return None;
    }
    let mut leaves: Vec<&str> = Vec::new();
    fn collect<'a>(v: &'a Value, depth: usize, out: &mut Vec<&'a str>) {
        match v {
            Value::String(s) if s.len() >= MIN_LEN => out.push(s),
            Value::Object(m) if depth > 0 => m.values().for_each(|c| collect(c, depth - 1, out)),
            _ => {}
        }
    }
    siblings.values().for_each(|v| collect(v, 2, &mut leaves));
    let named = |prefix: &str| -> usize {
        leaves
            .iter()
            .filter(|leaf| holds_token(prefix, leaf))
            .map(|leaf| leaf.len())
            .max()
            .unwrap_or(0)
    };
    let scores: Vec<usize> = prefixes.iter().map(|p| named(p)).collect();
    let best = scores.iter().copied().max().filter(|&b| b > 0)?;
    let mut at = (0..scores.len()).filter(|&i| scores[i] == best);
    match (at.next(), at.next()) {
        (Some(i), None) => Some(i),
        _ => None,
    }
}

/// Whether `text` holds `token` bounded on each side by its ends or a character that cannot
/// continue a name.
fn holds_token(text: &str, token: &str) -> bool {
    let continues = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.');
    // The occurrences `text.match_indices(token)` gives (left to right, each search resuming
    // after the last match), found by comparing bytes: the texts are short, and building a
    // substring searcher for every pair cost more than the search. A match of a whole UTF-8
    // token starts and ends on character boundaries.
    let (hay, needle) = (text.as_bytes(), token.as_bytes());
    let Some(&first) = needle.first() else {
        return text.match_indices(token).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at..].chars().next();
            !before.is_some_and(continues) && !after.is_some_and(continues)
        });
    };
    let mut from = 0;
    while from + needle.len() <= hay.len() {
        let Some(at) = hay[from..=hay.len() - needle.len()]
            .iter()
            .position(|&b| b == first)
            .map(|i| from + i)
        else {
            return false;
        };
        if !hay[at..].starts_with(needle) {
            from = at + 1;
            continue;
        }
        let before = text.get(..at).and_then(|t| t.chars().next_back());
        let after = text.get(at + needle.len()..).and_then(|t| t.chars().next());
        if !before.is_some_and(continues) && !after.is_some_and(continues) {
            return true;
        }
        from = at + needle.len();
    }
    false
}

/// One of the hole's examples other than `not`, chosen by a hash of the request path; any
/// example when every one is `not`.
fn observed_except(hole: &Hole, req: &ReqCtx<'_>, not: &Value) -> Value {
    let others: Vec<&Value> = hole.examples.iter().filter(|e| *e != not).collect();
    if others.is_empty() {
        return observed(hole, req);
    }
    let i = (stable_hash(req.path) % others.len() as u64) as usize;
    others[i].clone()
}

/// The hole's value in item `i` of a list the template renders: its examples in turn, first
/// seen first, so the items differ where the recorded items did (a VPC's three `ipv4` ranges,
/// not one range three times) and, at a recorded length, read as the first recorded list.
fn observed_in_list(hole: &Hole, req: &ReqCtx<'_>, i: usize) -> Value {
    if hole.examples.len() < 2 {
        return observed(hole, req);
    }
    hole.examples[i % hole.examples.len()].clone()
}

/// One of the hole's examples, chosen by a hash of the request path; a typed default when none.
fn observed(hole: &Hole, req: &ReqCtx<'_>) -> Value {
    if hole.examples.is_empty() {
        return default_of(hole.observed_type);
    }
    let i = (stable_hash(req.path) % hole.examples.len() as u64) as usize;
    hole.examples[i].clone()
}

fn default_of(t: JsonType) -> Value {
    match t {
        JsonType::Bool => Value::Bool(false),
        JsonType::Number => Value::Number(Number::from(0)),
        JsonType::String => Value::String(String::new()),
        JsonType::Array => Value::Array(Vec::new()),
        JsonType::Object => Value::Object(Map::new()),
        JsonType::Null | JsonType::Mixed => Value::Null,
    }
}

/// Coerce an echoed value to the type the recordings showed (form fields arrive as strings;
/// form booleans are spelled `true`/`false` or `1`/`0`).
pub(crate) fn coerce(v: Value, t: JsonType) -> Value {
    match (t, &v) {
        (JsonType::Number, Value::String(s)) => parse_number(s).unwrap_or(v),
        (JsonType::Bool, Value::String(s)) => match s.as_str() {
            "true" | "1" => Value::Bool(true),
            "false" | "0" => Value::Bool(false),
            _ => v,
        },
        (JsonType::String, Value::Number(n)) => Value::String(n.to_string()),
        (JsonType::String, Value::Bool(b)) => Value::String(b.to_string()),
        _ => v,
    }
}

const DIGITS: &[u8] = b"0123456789";
const HEX: &[u8] = b"0123456789abcdef";
const UPPER_ALNUM: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER_ALNUM: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BASE64URL: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";

/// The characters of a charset, in a fixed order (the generator indexes into it).
fn alphabet_of(charset: IdCharset) -> &'static [u8] {
    match charset {
        IdCharset::Digits => DIGITS,
        IdCharset::Hex => HEX,
        IdCharset::UpperAlnum => UPPER_ALNUM,
        IdCharset::LowerAlnum => LOWER_ALNUM,
        IdCharset::Base62 => BASE62,
        IdCharset::Base64Url => BASE64URL,
    }
}

/// A fresh id of the learned shape from the namespace's generator.
pub(crate) fn generate_id(shape: &IdShape, ns: &mut Namespace) -> Value {
    match shape {
        IdShape::Token {
            prefix,
            charset,
            length,
        } => {
            let alphabet = alphabet_of(*charset);
            let mut s = String::with_capacity(prefix.len() + length);
            s.push_str(prefix);
            for _ in 0..*length {
                let i = ns.rng.random_range(0..alphabet.len());
                s.push(alphabet[i] as char);
            }
            Value::String(s)
        }
        IdShape::Uuid => Value::String(fresh_uuid(ns)),
        IdShape::Grouped { charset, groups } => {
            let alphabet = alphabet_of(*charset);
            let mut s = String::with_capacity(groups.iter().sum::<usize>() + groups.len());
            for (g, len) in groups.iter().enumerate() {
                if g > 0 {
                    s.push('-');
                }
                for _ in 0..*len {
                    let i = ns.rng.random_range(0..alphabet.len());
                    s.push(alphabet[i] as char);
                }
            }
            Value::String(s)
        }
        // Outside an object there is no sibling to embed: a fresh UUID in its place.
        IdShape::Derived {
            prefixes, suffix, ..
        } => Value::String(format!(
            "{}{}{suffix}",
            prefixes.first().map_or("", String::as_str),
            fresh_uuid(ns)
        )),
        IdShape::Integer { above, as_string } => {
            // Sequential per namespace and shape, above every recorded value.
            let key = format!("\u{0}id:{above}");
            let c = ns.counters.entry(key).or_insert(0);
            *c += 1;
            let n = above.saturating_add(*c as u64);
            if *as_string {
                Value::String(n.to_string())
            } else {
                Value::Number(Number::from(n))
            }
        }
    }
}

/// A v4-layout UUID from the namespace RNG.
pub(crate) fn fresh_uuid(ns: &mut Namespace) -> String {
    let mut bytes = [0u8; 16];
    ns.rng.fill_bytes(&mut bytes);
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

/// RFC 9110 IMF-fixdate.
pub(crate) fn http_date(t_us: i64) -> String {
    let ts =
        jiff::Timestamp::from_second(wraith_model::clock::clamped_us(t_us).div_euclid(1_000_000))
            .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    jiff::fmt::rfc2822::DateTimePrinter::new()
        .timestamp_to_rfc9110_string(&ts)
        .unwrap_or_else(|_| "Thu, 01 Jan 1970 00:00:00 GMT".to_string())
}

/// Run a variant's header programs for an answer whose body is `body` (its JSON tree, if
/// any). `Content-Length` is left to the server, which recomputes it from the body actually
/// sent.
pub(crate) fn render_headers(
    programs: &[HeaderProgram],
    ns: &mut NsCtx<'_>,
    body: Option<&Value>,
) -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(programs.len());
    for p in programs {
        match &p.program {
            HeaderRule::Constant { values } => {
                if is_framing_header(&p.name) {
                    continue;
                }
                for v in values {
                    out.push((p.name.clone(), v.clone()));
                }
            }
            HeaderRule::BodyValue { .. } => out.extend(
                body_value_header(&p.program, body)
                    .into_iter()
                    .map(|v| (p.name.clone(), v)),
            ),
            HeaderRule::ContentLength => {}
            HeaderRule::Volatile { kind } => match kind {
                VolatileKind::Date => {
                    let t = ns.now();
                    out.push((p.name.clone(), http_date(t)));
                }
                VolatileKind::RequestId => {
                    let id = fresh_uuid(ns.ns);
                    out.push((p.name.clone(), id));
                }
                VolatileKind::Drop => {}
            },
        }
    }
    out
}

/// The values a [`HeaderRule::BodyValue`] program gives an answer whose body is `body`: the
/// URL its parts make of the body; the recorded values when the body lacks one of its scalars.
/// Nothing for any other program.
pub(crate) fn body_value_header(program: &HeaderRule, body: Option<&Value>) -> Vec<String> {
    let HeaderRule::BodyValue { parts, values } = program else {
        return Vec::new();
    };
    match body.and_then(|b| wraith_model::render_url(parts, b)) {
        Some(url) => vec![url],
        None => values.clone(),
    }
}

/// Headers that describe the recorded message framing, never replayed.
pub(crate) fn is_framing_header(name: &str) -> bool {
    // Compared in place, not lowercased into a copy: asked of every header of every answer.
    [
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "content-encoding",
    ]
    .iter()
    .any(|h| h.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_headers_are_told_apart_in_any_case() {
        for h in [
            "Content-Length",
            "TRANSFER-ENCODING",
            "connection",
            "Keep-Alive",
        ] {
            assert!(is_framing_header(h), "{h}");
        }
        assert!(is_framing_header("content-encoding"));
        for h in [
            "content-type",
            "content-lengthx",
            "",
            "x-connection",
            "Contént-Length",
        ] {
            assert!(!is_framing_header(h), "{h}");
        }
    }

    proptest::proptest! {
        /// The byte search finds a bounded token exactly when `match_indices` does.
        #[test]
        fn holds_token_is_the_match_indices_search(
            text in "[ab/@._é-]{0,12}",
            token in "[ab/@._é-]{0,4}",
        ) {
            let continues = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.');
            let reference = text.match_indices(token.as_str()).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let after = text[at + token.len()..].chars().next();
                !before.is_some_and(continues) && !after.is_some_and(continues)
            });
            proptest::prop_assert_eq!(holds_token(&text, &token), reference);
        }
    }

    #[test]
    fn dates_past_the_last_showable_instant_stop_there_instead_of_wrapping_to_1970() {
        let last_us = jiff::Timestamp::MAX.as_second() * 1_000_000;
        let past = last_us.saturating_add(5_000_000);
        assert_eq!(http_date(past), http_date(last_us));
        assert!(http_date(past).contains("9999"), "{}", http_date(past));
    }
}
