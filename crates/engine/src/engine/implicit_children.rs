//! Records a create makes by itself (`Route::implicit_children`): after a create on the
//! synthesized path stores its record, the engine stores the children the recorded API made
//! with it (a machine's volumes and its boot profile), so the session's list of them, and later
//! reads and writes of them, find them. Which children: the learned sample whose create
//! request is nearest the session's (same fields with the same values count most; a field
//! one side sent and the other did not counts against it), its items copied with fresh keys
//! of the child type's id shape; a value naming the recorded parent names the new record, and
//! one naming another chosen child names that child's fresh key (a boot profile naming a volume),
//! and one the sample's create request sent names what the session's request sent at the same
//! place instead (the subnet a profile's interface joins), and one naming a record of another
//! type that the sample's session had created (`ImplicitSample::links`) names the session's one
//! live record of that type holding what its request sent where the recorded record held the
//! recorded request's values (the network owning that subnet). A child naming a record the
//! sample's request named at a place the session's request left unsent is not made: it was
//! made for that record (a firewall's device for the instance its create named). A child
//! holding the key under the name the request sent it under (a node pool's `tags`, sent in
//! the pool the create asked for) carries it and is made. Where the sample's children mirror
//! the objects its request sent in one array (a cluster's node pools, of the type and count
//! each asked for), the session gets one child per object it sent there, as each one asked.
//!
//! A replayed create makes none: the replayed run's own recorded lists show its children.

use std::collections::BTreeMap;

use serde_json::{Number, Value};
use wraith_model::{ChildText, IdShape, ImplicitSample, Route};

use super::{Call, Engine};
use crate::fixtures::scalar_key;
use crate::namespace::{Entity, Namespace, Origin};
use crate::render::generate_id;

impl Engine {
    /// Store the implicit children of the record `key` the call's create just stored.
    pub(super) fn make_implicit_children(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        route: &Route,
        key: &str,
    ) {
        if route.implicit_children.is_empty() {
            return;
        }
        let request = call.body.as_ref().unwrap_or(&Value::Null);
        // Recorded child key → fresh key, over every chosen sample, so children naming each
        // other keep doing so.
        let mut fresh: BTreeMap<String, Value> = BTreeMap::new();
        let mut chosen: Vec<(&str, &str, &IdShape, &ImplicitSample, &[ChildText])> = Vec::new();
        for children in &route.implicit_children {
            let Some(sample) = nearest(&children.samples, request) else {
                continue;
            };
            let Some(ty) = self.model.entity_types.get(&children.entity_type) else {
                continue;
            };
            let Some(shape) = &ty.id_shape else {
                continue;
            };
            for item in &sample.items {
                if let Some(old) = item.get(&ty.primary_key).and_then(scalar_key) {
                    let new = generate_id(shape, ns);
                    fresh.insert(old, new);
                }
            }
            chosen.push((
                &children.entity_type,
                &ty.primary_key,
                shape,
                sample,
                &children.texts,
            ));
        }
        let mut parents: Vec<String> = call.m.params.iter().map(|(_, v)| v.clone()).collect();
        parents.push(key.to_string());
        for (ty, pk, shape, sample, texts) in chosen {
            let echoes = request_echoes(&sample.request, request);
            let linked = self.linked_records(ns, sample, request);
            let unsent = self.unsent_record_keys(&sample.request, request);
            // One child per object the session sent where the sample's were one per sent
            // object; else the sample's children.
            let sent = sent_objects(sample, request);
            let made: Vec<(&Value, Option<&serde_json::Map<String, Value>>)> = match &sent {
                Some(SentObjects { objects, .. }) => objects
                    .iter()
                    .enumerate()
                    .map(|(j, o)| (&sample.items[j.min(sample.items.len() - 1)], Some(*o)))
                    .collect(),
                None => sample.items.iter().map(|i| (i, None)).collect(),
            };
            for (j, (item, object)) in made.into_iter().enumerate() {
                if names_any(item, &unsent) {
                    continue;
                }
                let mut child = item.clone();
                self.respell_texts(ns, &mut child, texts, sample, request);
                rename(&mut child, &sample.parent_key, key, &fresh);
                if !echoes.is_empty() {
                    self.respell_named_copies(ns, &mut child, &echoes);
                    rename_echoes(&mut child, &echoes);
                }
                if !linked.is_empty() {
                    rename_echoes(&mut child, &linked);
                }
                if let (Some(SentObjects { fields, .. }), Some(object), Value::Object(map)) =
                    (&sent, object, &mut child)
                {
                    for f in fields {
                        if let Some(v) = object.get(f).filter(|v| !v.is_null()) {
                            map.insert(f.clone(), v.clone());
                        }
                    }
                    // A copy past the sample's children is a child of its own.
                    if j >= sample.items.len() {
                        map.insert(pk.to_string(), generate_id(shape, ns));
                    }
                }
                let Some(child_key) = child.get(pk).and_then(scalar_key) else {
                    continue;
                };
                ns.put(
                    ty,
                    &child_key,
                    child,
                    Origin::Synthesized,
                    Some(parents.clone()),
                );
            }
        }
    }
}

impl Engine {
    /// Spell each of a copied child's text fields that its sample spelled from the record the
    /// sample's request named (`texts`, see [`ChildText`]) from the record the session's
    /// `request` names there instead: the session's own, else the recorded one. A text the
    /// sample spelled otherwise, or a record the session named that neither holds, keeps the
    /// sample's text.
    fn respell_texts(
        &self,
        ns: &Namespace,
        child: &mut Value,
        texts: &[ChildText],
        sample: &ImplicitSample,
        request: &Value,
    ) {
        for rule in texts {
            let named = |req: &Value| req.pointer(&rule.request_pointer).and_then(scalar_key);
            let (Some(was), Some(now)) = (named(&sample.request), named(request)) else {
                continue;
            };
            if was == now {
                continue;
            }
            let spelled = |record: &Value| {
                record
                    .get(&rule.from)
                    .and_then(Value::as_str)
                    .map(|v| format!("{}{v}{}", rule.prefix, rule.suffix))
            };
            let recorded = self.model.entity_types.get(&rule.entity_type);
            let Some(old) = recorded.and_then(|t| t.records.get(&was)).and_then(spelled) else {
                continue;
            };
            if child.get(&rule.field).and_then(Value::as_str) != Some(old.as_str()) {
                continue;
            }
            let held = ns.entity(&rule.entity_type, &now);
            let new = match &held {
                Some(e) => spelled(&e.value),
                None => recorded.and_then(|t| t.records.get(&now)).and_then(spelled),
            };
            if let (Some(new), Some(slot)) = (new, child.get_mut(&rule.field)) {
                *slot = Value::String(new);
            }
        }
    }

    /// The session's own record for each record the sample's items name through its request
    /// (`ImplicitSample::links`): recorded key → the key of the one live record of the link's
    /// type holding, as whole values, what the session's `request` sent at every one of the
    /// link's pointers. A link whose pointers the request left unsent or non-scalar, or that
    /// finds no record or several, is left out (the recorded value stays).
    pub(super) fn linked_records(
        &self,
        ns: &Namespace,
        sample: &ImplicitSample,
        request: &Value,
    ) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        for link in &sample.links {
            let Some(wanted) = link
                .request_pointers
                .iter()
                .map(|p| request.pointer(p).and_then(scalar_key))
                .collect::<Option<Vec<String>>>()
            else {
                continue;
            };
            let found = self.one_live_key(ns, &link.entity_type, |e| {
                let mut held = Vec::new();
                leaves_of(&e.value, &mut held);
                wanted.iter().all(|w| {
                    held.iter()
                        .any(|(_, h)| scalar_key(h).as_deref() == Some(w))
                })
            });
            if let Some(k) = found {
                out.insert(link.value.clone(), k);
            }
        }
        out
    }

    /// The primary key (a string or number) of the session's one live record of `entity_type`
    /// that `matches`; `None` when no record or several do.
    pub(super) fn one_live_key(
        &self,
        ns: &Namespace,
        entity_type: &str,
        matches: impl Fn(&Entity) -> bool,
    ) -> Option<Value> {
        let store = ns.type_store(entity_type)?;
        let ty = self.model.entity_types.get(entity_type)?;
        let mut found = store.live.values().filter(|e| matches(e));
        let (Some(one), None) = (found.next(), found.next()) else {
            return None;
        };
        one.value
            .get(&ty.primary_key)
            .filter(|k| scalar_key(k).is_some())
            .cloned()
    }
}

impl Engine {
    /// Record keys the sample's create `recorded` request sent (a firewall's `devices.linodes`
    /// naming an instance) at a place where the session's `request` sent nothing: a child
    /// naming one was made for that record (the instance's device), so a create that named
    /// none makes no such child. A key is a value of at least three characters that some
    /// entity type's recorded records hold as their key. Each comes with the name of the
    /// field that sent it (see [`UnsentKey`]).
    fn unsent_record_keys(&self, recorded: &Value, request: &Value) -> Vec<UnsentKey> {
        let mut leaves = Vec::new();
        leaves_of(recorded, &mut leaves);
        leaves
            .into_iter()
            .filter(|(pointer, _)| request.pointer(pointer).is_none_or(Value::is_null))
            .filter_map(|(pointer, v)| {
                let key = scalar_key(v).filter(|t| t.chars().count() >= 3)?;
                Some(UnsentKey {
                    key,
                    field: field_name(&pointer),
                })
            })
            .filter(|u| {
                self.model
                    .entity_types
                    .values()
                    .any(|t| t.records.contains_key(&u.key) || t.known_ids.contains(&u.key))
            })
            .collect()
    }
}

impl Engine {
    /// In a copied child, the copy of a record the sample's request named that the session's
    /// request names another record in place of (`echoes`: recorded key → the session's): in
    /// each object holding the recorded key as a whole value (a device's `entity`), a text
    /// field holding what the recorded record held under the same name (its `label`) takes
    /// the session's record's value there, the session's own else the recorded one; and in
    /// every text of the child, the recorded key as a path segment (`…/instances/97185936`)
    /// becomes the session's key. A record neither holds keeps the sample's texts but for
    /// the path segments.
    fn respell_named_copies(
        &self,
        ns: &Namespace,
        child: &mut Value,
        echoes: &BTreeMap<String, Value>,
    ) {
        for (was, now) in echoes {
            let Some(now_key) = scalar_key(now) else {
                continue;
            };
            let Some((ty, recorded)) = self
                .model
                .entity_types
                .iter()
                .find_map(|(name, t)| t.records.get(was).map(|r| (name.as_str(), r)))
            else {
                continue;
            };
            let session = match ns.entity(ty, &now_key) {
                Some(e) => Some((*e.value).clone()),
                None => self
                    .model
                    .entity_types
                    .get(ty)
                    .and_then(|t| t.records.get(&now_key))
                    .cloned(),
            };
            if let Some(session) = &session {
                respell_copies(child, was, recorded, session);
            }
            respell_segments(child, was, &now_key);
        }
    }
}

/// In every object under `v` holding `key` as a whole value, the text fields equal to the
/// same-named field of `recorded` take `session`'s value there.
fn respell_copies(v: &mut Value, key: &str, recorded: &Value, session: &Value) {
    match v {
        Value::Object(map) => {
            let holds = map
                .values()
                .any(|x| !x.is_object() && !x.is_array() && scalar_key(x).as_deref() == Some(key));
            if holds {
                for (f, x) in map.iter_mut() {
                    if x.is_string()
                        && recorded.get(f) == Some(&*x)
                        && let Some(mine) = session.get(f).filter(|m| m.is_string())
                    {
                        *x = mine.clone();
                    }
                }
            }
            map.values_mut()
                .for_each(|x| respell_copies(x, key, recorded, session));
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|x| respell_copies(x, key, recorded, session)),
        _ => {}
    }
}

/// Every text under `v` holding `was` as a `/`-separated segment gets `now` there instead.
fn respell_segments(v: &mut Value, was: &str, now: &str) {
    match v {
        Value::Object(map) => map.values_mut().for_each(|x| respell_segments(x, was, now)),
        Value::Array(items) => items.iter_mut().for_each(|x| respell_segments(x, was, now)),
        Value::String(s) if s.contains('/') && s.split('/').any(|seg| seg == was) => {
            let respelled: Vec<&str> = s
                .split('/')
                .map(|seg| if seg == was { now } else { seg })
                .collect();
            *s = respelled.join("/");
        }
        _ => {}
    }
}

/// Whether `item` holds one of `keys` as a whole string or number anywhere.
/// A record key the sample's create request sent where the session's sent nothing
/// ([`Engine::unsent_record_keys`]), and the name of the field that sent it (the last
/// non-index segment of its place: `linodes` for `/devices/linodes/0`).
struct UnsentKey {
    key: String,
    field: String,
}

/// The last segment of a JSON pointer that is not an array index, unescaped.
fn field_name(pointer: &str) -> String {
    pointer
        .rsplit('/')
        .find(|seg| !seg.is_empty() && !seg.bytes().all(|b| b.is_ascii_digit()))
        .map(|seg| seg.replace("~1", "/").replace("~0", "~"))
        .unwrap_or_default()
}

/// Whether a copied child names one of `keys` as a reference: held under another field name
/// than the request sent it under. A child holding the value under the same name carries
/// what the request set on it (a node pool's `tags`, sent in the create's `node_pools`), not
/// the record it was made for.
fn names_any(item: &Value, keys: &[UnsentKey]) -> bool {
    if keys.is_empty() {
        return false;
    }
    let mut found = false;
    wraith_model::pointer::for_each_leaf(item, &mut |at, leaf| {
        found |= matches!(leaf, Value::String(_) | Value::Number(_))
            && scalar_key(leaf)
                .is_some_and(|t| keys.iter().any(|u| u.key == t && u.field != field_name(at)));
    });
    found
}

/// The sample whose create request is nearest `request` (the first of equally near ones).
pub(super) fn nearest<'s>(
    samples: &'s [ImplicitSample],
    request: &Value,
) -> Option<&'s ImplicitSample> {
    let mut best: Option<(i64, &ImplicitSample)> = None;
    for s in samples {
        let score = closeness(&s.request, request);
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, s));
        }
    }
    best.map(|(_, s)| s)
}

fn sent<'m>(m: &'m serde_json::Map<String, Value>, k: &str) -> Option<&'m Value> {
    m.get(k).filter(|v| !v.is_null())
}

/// How alike two create requests are, top-level field by field: the same value 2, another
/// value 1, sent by one side only -1 (`null` counts as not sent).
fn closeness(a: &Value, b: &Value) -> i64 {
    let empty = serde_json::Map::new();
    let a = a.as_object().unwrap_or(&empty);
    let b = b.as_object().unwrap_or(&empty);
    let mut score = 0;
    for k in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
        score += match (sent(a, k), sent(b, k)) {
            (Some(x), Some(y)) if x == y => 2,
            (Some(_), Some(_)) => 1,
            (None, None) => 0,
            _ => -1,
        };
    }
    score
}

/// Rename, in a copied child, every scalar naming the recorded parent to `key` and every
/// scalar naming a recorded child to its fresh key (whole values only, keeping a number a
/// number and a string a string).
fn rename(v: &mut Value, parent: &str, key: &str, fresh: &BTreeMap<String, Value>) {
    match v {
        Value::Object(map) => map.values_mut().for_each(|x| rename(x, parent, key, fresh)),
        Value::Array(items) => items.iter_mut().for_each(|x| rename(x, parent, key, fresh)),
        Value::String(_) | Value::Number(_) => {
            let Some(text) = scalar_key(v) else {
                return;
            };
            let new = if text == parent {
                key.to_string()
            } else if let Some(f) = fresh.get(&text).and_then(scalar_key) {
                f
            } else {
                return;
            };
            *v = match v {
                Value::Number(_) => new
                    .parse::<u64>()
                    .map(|n| Value::Number(Number::from(n)))
                    .unwrap_or(Value::String(new)),
                _ => Value::String(new),
            };
        }
        _ => {}
    }
}

/// Values the sample's create request sent that the session's request sent otherwise at the
/// same place: recorded text → the session's value. A child holding one holds what its create
/// was asked for (the subnet an interface joins). Values shorter than three characters are left
/// out (they coincide by chance), and a recorded text sent at two places with different
/// session values is ambiguous and left out too.
pub(super) fn request_echoes(recorded: &Value, sent: &Value) -> BTreeMap<String, Value> {
    let mut leaves = Vec::new();
    leaves_of(recorded, &mut leaves);
    let mut out: BTreeMap<String, Value> = BTreeMap::new();
    let mut ambiguous: Vec<String> = Vec::new();
    for (pointer, value) in leaves {
        let Some(text) = scalar_key(value).filter(|t| t.chars().count() >= 3) else {
            continue;
        };
        let Some(mine) = sent.pointer(&pointer).filter(|m| scalar_key(m).is_some()) else {
            continue;
        };
        if mine == value {
            continue;
        }
        match out.get(&text) {
            Some(prev) if prev != mine => ambiguous.push(text),
            _ => {
                out.insert(text, mine.clone());
            }
        }
    }
    for t in ambiguous {
        out.remove(&t);
    }
    out
}

/// The objects a create request sent in one array that its children mirror one for one (a
/// cluster's `node_pools`, each making a pool of the type and count sent), with the fields
/// each child holds as its object sent them.
struct SentObjects<'r> {
    objects: Vec<&'r serde_json::Map<String, Value>>,
    fields: Vec<String>,
}

/// Where the sample's create request sent, in a top-level field, an array of as many objects
/// as the sample has children, each child holding at least two fields of its object with the
/// values sent (the same fields for all), the session's `request` objects in that field: one
/// child each, with those fields as the session sent them. `None` when the sample's children
/// mirror no sent array, or the session sent no array of objects there.
fn sent_objects<'r>(sample: &ImplicitSample, request: &'r Value) -> Option<SentObjects<'r>> {
    if sample.items.is_empty() {
        return None;
    }
    let recorded = sample.request.as_object()?;
    for (name, sent) in recorded {
        let Some(sent) = sent.as_array().filter(|a| a.len() == sample.items.len()) else {
            continue;
        };
        let mut common: Option<Vec<String>> = None;
        for (object, item) in sent.iter().zip(&sample.items) {
            let (Some(object), Some(item)) = (object.as_object(), item.as_object()) else {
                common = Some(Vec::new());
                break;
            };
            let held: Vec<String> = object
                .iter()
                .filter(|(k, v)| !v.is_null() && item.get(*k) == Some(*v))
                .map(|(k, _)| k.clone())
                .collect();
            common = Some(match common {
                None => held,
                Some(c) => c.into_iter().filter(|k| held.contains(k)).collect(),
            });
        }
        let Some(fields) = common.filter(|c| c.len() >= 2) else {
            continue;
        };
        let objects = request
            .get(name)?
            .as_array()?
            .iter()
            .map(Value::as_object)
            .collect::<Option<Vec<_>>>()?;
        return Some(SentObjects { objects, fields });
    }
    None
}

/// Every string or number leaf under `v`, with its JSON pointer.
fn leaves_of<'v>(v: &'v Value, out: &mut Vec<(String, &'v Value)>) {
    wraith_model::pointer::for_each_leaf(v, &mut |at, leaf| {
        if matches!(leaf, Value::String(_) | Value::Number(_)) {
            out.push((at.to_string(), leaf));
        }
    });
}

/// Replace, in a copied child, every string or number leaf equal to a key of `echoes` with the
/// session's value.
pub(super) fn rename_echoes(v: &mut Value, echoes: &BTreeMap<String, Value>) {
    match v {
        Value::Object(map) => map.values_mut().for_each(|x| rename_echoes(x, echoes)),
        Value::Array(items) => items.iter_mut().for_each(|x| rename_echoes(x, echoes)),
        Value::String(_) | Value::Number(_) => {
            if let Some(mine) = scalar_key(v).and_then(|t| echoes.get(&t)) {
                *v = mine.clone();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample(request: Value, n: usize) -> ImplicitSample {
        ImplicitSample {
            request,
            parent_key: "7".into(),
            items: (0..n).map(|i| json!({"id": i})).collect(),
            links: Vec::new(),
        }
    }

    #[test]
    fn the_sample_whose_request_sent_the_same_fields_is_nearest() {
        let samples = vec![
            sample(json!({"label": "a", "type": "small"}), 0),
            sample(json!({"label": "b", "type": "small", "image": "os-one"}), 2),
        ];
        let got = nearest(
            &samples,
            &json!({"label": "c", "type": "small", "image": "os-two"}),
        );
        assert_eq!(got.map(|s| s.items.len()), Some(2));
        let got = nearest(
            &samples,
            &json!({"label": "c", "type": "small", "image": null}),
        );
        assert_eq!(got.map(|s| s.items.len()), Some(0));
    }

    #[test]
    fn a_copied_child_holds_what_the_sessions_create_request_sent_where_the_recorded_one_did() {
        let recorded = json!({"label": "m1", "links": [{"kind": "net", "net_id": 241175}], "n": 1});
        let sent = json!({"label": "mine", "links": [{"kind": "net", "net_id": 629502}], "n": 2});
        let echoes = request_echoes(&recorded, &sent);
        // `n` and the label `m1` are too short to tell from a coincidence; `kind` was sent
        // alike.
        assert_eq!(echoes, BTreeMap::from([("241175".into(), json!(629502))]));
        let mut child = json!({"id": 5, "links": [{"net_id": 241175, "zone": "m1x"}]});
        rename_echoes(&mut child, &echoes);
        assert_eq!(
            child,
            json!({"id": 5, "links": [{"net_id": 629502, "zone": "m1x"}]})
        );
    }

    #[test]
    fn a_copied_child_names_the_new_parent_and_the_fresh_keys_of_its_siblings() {
        let fresh = BTreeMap::from([("11".to_string(), json!(901)), ("12".into(), json!(902))]);
        let mut v = json!({"id": 11, "machine_id": 7, "slots": {"a": {"part_id": 12}},
                           "label": "7", "size": 512});
        rename(&mut v, "7", "55", &fresh);
        assert_eq!(
            v,
            json!({"id": 901, "machine_id": 55, "slots": {"a": {"part_id": 902}},
                   "label": "55", "size": 512})
        );
    }
}
