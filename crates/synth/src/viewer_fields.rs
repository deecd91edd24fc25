//! Fields that depend on who is looking ([`wraith_model::Route::viewer_fields`]).
//!
//! A record's owner sees it otherwise than everyone else does: a status shows its `pinned`
//! flag only to its author, and an account's standing towards the viewer reads one value
//! when the viewer is that account and another when not. The session's store holds a record
//! as its owner's create answered it, so an answer for another principal embedding it would
//! show the owner's view. This stage learns, per entity type whose records carry their
//! owner (a route whose own record holds the acting principal's record, `Route::actor_record`
//! at `/account`), which fields differ between the owner's views and other principals' views
//! in the recorded answers: presence (never shown to the other class, shown to this one) or
//! a value that is one function of a sibling field per viewer class, with evidence in both
//! classes and no recorded view contradicting it.
//!
//! Cost: one pass over the observations in recorded order; an answer is parsed only when its
//! bytes hold an owner field name (`"account"`) or it is an answer carrying the acting
//! principal's record. Per record view, every field is visited once, and a nested object's
//! field with every sibling only when that object is small (at most [`SMALL_OBJECT`] keys).
//!
//! Not here: applying them (the engine's rendered creates), and records whose owner is not
//! embedded in them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use wraith_model::{EntityType, Route, ViewerField, ViewerFields, ViewerShown};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::values;

/// A nested object with at most this many keys is searched for a sibling that keys a field.
pub const SMALL_OBJECT: usize = 8;
/// How deep under a record fields are looked at.
const MAX_DEPTH: usize = 3;
/// Longer strings (text, HTML, URLs) are no per-viewer values and are not tallied.
const MAX_VALUE_LEN: usize = 64;

/// The viewer class of one record view.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Owner = 0,
    Other = 1,
}

/// One entity type whose records embed their owner.
struct Site {
    route: usize,
    entity_type: String,
    pk: String,
    owner_type: String,
    owner_pk: String,
    owner_field: String,
}

/// Per viewer class: a key value → the field values seen with it.
type ValueTable = BTreeMap<String, BTreeSet<String>>;

#[derive(Default)]
struct Tally {
    views: [usize; 2],
    /// Top-level field → views carrying it, per class.
    present: BTreeMap<String, [usize; 2]>,
    /// Field pointer → what was seen with it.
    values: BTreeMap<String, FieldTally>,
}

/// What one field was seen with: per key pointer (`""`: none), per class, key value → field
/// values; `None` once some key value was seen with two field values in one class.
#[derive(Default)]
struct FieldTally {
    by_key: BTreeMap<String, Option<[ValueTable; 2]>>,
}

impl FieldTally {
    fn note(&mut self, key: &str, key_value: String, c: usize, val: &str) {
        let slot = match self.by_key.get_mut(key) {
            Some(s) => s,
            None => self
                .by_key
                .entry(key.to_string())
                .or_insert_with(|| Some(Default::default())),
        };
        let Some(tables) = slot else {
            return;
        };
        let seen = tables[c].entry(key_value).or_default();
        if seen.is_empty() {
            seen.insert(val.to_string());
        } else if !seen.contains(val) {
            *slot = None;
        }
    }
}

/// The learned rules, one slot per route (same order as `built`).
pub fn learn(
    groups: &[RouteGroup],
    built: &[Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) -> Vec<Option<ViewerFields>> {
    let mut out: Vec<Option<ViewerFields>> = vec![None; built.len()];
    let pk_of = |t: &str| entity_types.get(t).map(|e| e.primary_key.clone());
    let mut sites: Vec<Site> = Vec::new();
    // Routes carrying the acting principal's record, by observation: (pointer, type).
    let mut actor_at: BTreeMap<usize, (&str, &str)> = BTreeMap::new();
    for (ri, route) in built.iter().enumerate() {
        // Routes answering the principal's record itself (a "who am I" read) are left out:
        // the views are learned from the records a route's own records embed.
        let Some(ar) = route
            .actor_record
            .as_ref()
            .filter(|ar| !ar.pointer.is_empty())
        else {
            continue;
        };
        for &i in groups.get(ri).map(|g| g.obs.as_slice()).unwrap_or(&[]) {
            actor_at.insert(i, (ar.pointer.as_str(), ar.entity_type.as_str()));
        }
        let Some(field) = ar.pointer.strip_prefix('/').filter(|f| !f.contains('/')) else {
            continue;
        };
        let Some(ty) = route.entity_type.as_ref().filter(|t| **t != ar.entity_type) else {
            continue;
        };
        if sites.iter().any(|s| s.entity_type == *ty) {
            continue;
        }
        let (Some(pk), Some(owner_pk)) = (pk_of(ty), pk_of(&ar.entity_type)) else {
            continue;
        };
        sites.push(Site {
            route: ri,
            entity_type: ty.clone(),
            pk,
            owner_type: ar.entity_type.clone(),
            owner_pk,
            owner_field: field.to_string(),
        });
    }
    if sites.is_empty() {
        return out;
    }
    let needles: Vec<String> = sites
        .iter()
        .map(|s| format!("\"{}\"", s.owner_field))
        .collect();
    let mut tallies: Vec<Tally> = sites.iter().map(|_| Tally::default()).collect();
    // (session, principal) → the acting principal's record key, as last seen.
    let mut viewer: BTreeMap<(&str, &str), String> = BTreeMap::new();
    for (i, o) in obs.iter().enumerate() {
        if !values::is_2xx(o.status) {
            continue;
        }
        let Some(principal) = o.principal.as_deref() else {
            continue;
        };
        let actor = actor_at.get(&i);
        if actor.is_none()
            && (!viewer.contains_key(&(o.session, principal)) || !mentions_any(o, &needles))
        {
            continue;
        }
        let Some(body) = o.resp_json() else {
            continue;
        };
        if let Some((pointer, ty)) = actor
            && let Some(key) = body
                .pointer(pointer)
                .and_then(|r| pk_of(ty).and_then(|pk| r.get(&pk).cloned()))
                .and_then(|k| scalar(&k))
        {
            viewer.insert((o.session, principal), key);
        }
        let Some(me) = viewer.get(&(o.session, principal)) else {
            continue;
        };
        walk(&body, &sites, entity_types, me, &mut tallies);
    }
    for (site, tally) in sites.iter().zip(tallies) {
        let fields = decide(&tally);
        if !fields.is_empty() {
            out[site.route] = Some(ViewerFields {
                entity_type: site.entity_type.clone(),
                owner_type: site.owner_type.clone(),
                owner_at: format!("/{}", site.owner_field),
                fields,
            });
        }
    }
    out
}

/// Whether the answer's bytes hold one of the needles (before parsing it).
fn mentions_any(o: &Obs<'_>, needles: &[String]) -> bool {
    o.response_holds_any(needles.iter().map(String::as_str))
}

/// A key as text: strings as they are, numbers in their JSON form.
fn scalar(v: &Value) -> Option<String> {
    key_text(v).map(|k| k.into_owned())
}

/// A key as text without copying a string key.
fn key_text(v: &Value) -> Option<std::borrow::Cow<'_, str>> {
    match v {
        Value::String(s) => Some(std::borrow::Cow::Borrowed(s.as_str())),
        Value::Number(n) => Some(std::borrow::Cow::Owned(n.to_string())),
        _ => None,
    }
}

/// Note every record view of a site in `v`, recursively.
fn walk(
    v: &Value,
    sites: &[Site],
    entity_types: &BTreeMap<String, EntityType>,
    me: &str,
    tallies: &mut [Tally],
) {
    match v {
        Value::Object(map) => {
            for (site, tally) in sites.iter().zip(tallies.iter_mut()) {
                if let Some(class) = view_class(map, site, entity_types, me) {
                    note(map, class, tally);
                }
            }
            for child in map.values() {
                walk(child, sites, entity_types, me, tallies);
            }
        }
        Value::Array(items) => {
            for child in items {
                walk(child, sites, entity_types, me, tallies);
            }
        }
        _ => {}
    }
}

/// Whether `map` is a known record of the site's type with a known owner, and who sees it.
fn view_class(
    map: &Map<String, Value>,
    site: &Site,
    entity_types: &BTreeMap<String, EntityType>,
    me: &str,
) -> Option<Class> {
    // The owner first: most objects carry no owner field, and this is the cheap test.
    let owner_rec = map.get(&site.owner_field)?.as_object()?;
    let key = key_text(map.get(&site.pk)?)?;
    if !entity_types
        .get(&site.entity_type)?
        .known_ids
        .contains(key.as_ref())
    {
        return None;
    }
    let owner = key_text(owner_rec.get(&site.owner_pk)?)?;
    if !entity_types
        .get(&site.owner_type)?
        .known_ids
        .contains(owner.as_ref())
    {
        return None;
    }
    Some(if owner == me {
        Class::Owner
    } else {
        Class::Other
    })
}

fn note(record: &Map<String, Value>, class: Class, tally: &mut Tally) {
    let c = class as usize;
    tally.views[c] += 1;
    for k in record.keys() {
        match tally.present.get_mut(k.as_str()) {
            Some(n) => n[c] += 1,
            None => {
                let mut n = [0, 0];
                n[c] = 1;
                tally.present.insert(k.clone(), n);
            }
        }
    }
    let mut at = String::new();
    let mut key = String::new();
    note_values(record, &mut at, &mut key, 0, c, tally);
}

/// Append a pointer token for `k` to `buf`.
fn push_token(buf: &mut String, k: &str) {
    buf.push('/');
    if k.contains(['~', '/']) {
        buf.push_str(&k.replace('~', "~0").replace('/', "~1"));
    } else {
        buf.push_str(k);
    }
}

/// Record every short string or boolean field under `obj` (`at` its pointer, a reused
/// buffer), keyed by nothing (one value per class) and, in a small nested object, by each
/// sibling. A (field, key) pair once contradicted is dead and skipped.
fn note_values(
    obj: &Map<String, Value>,
    at: &mut String,
    key: &mut String,
    depth: usize,
    c: usize,
    tally: &mut Tally,
) {
    let small = depth > 0 && obj.len() <= SMALL_OBJECT;
    for (k, v) in obj {
        let len = at.len();
        push_token(at, k);
        match v {
            Value::Object(child) if depth < MAX_DEPTH => {
                note_values(child, at, key, depth + 1, c, tally);
            }
            Value::String(text) if text.len() > MAX_VALUE_LEN => {}
            Value::String(_) | Value::Bool(_) => {
                let field = match tally.values.get_mut(at.as_str()) {
                    Some(f) => f,
                    None => tally.values.entry(at.clone()).or_default(),
                };
                // A field whose one value per class is already contradicted, in an object
                // too large to key it by a sibling, teaches nothing more.
                if !small && matches!(field.by_key.get(""), Some(None)) {
                    at.truncate(len);
                    continue;
                }
                let val = v.to_string();
                field.note("", String::new(), c, &val);
                if small {
                    for (sk, sv) in obj {
                        if sk == k || sv.is_object() {
                            continue;
                        }
                        key.clear();
                        key.push_str(&at[..len]);
                        push_token(key, sk);
                        let kv = sv.to_string();
                        if kv.len() <= MAX_VALUE_LEN {
                            field.note(key, kv, c, &val);
                        }
                    }
                }
            }
            _ => {}
        }
        at.truncate(len);
    }
}

/// The rules the tally supports.
fn decide(tally: &Tally) -> Vec<ViewerField> {
    let mut fields: Vec<ViewerField> = Vec::new();
    if tally.views[0] < 2 || tally.views[1] < 2 {
        return fields;
    }
    for (k, [owner, other]) in &tally.present {
        let at = format!("/{}", k.replace('~', "~0").replace('/', "~1"));
        let shown = if *other == 0 && *owner >= 2 {
            ViewerShown::OwnerOnly
        } else if *owner == 0 && *other >= 2 {
            ViewerShown::OthersOnly
        } else {
            continue;
        };
        fields.push(ViewerField { at, shown });
    }
    // Per field, the first key (no sibling first) whose tables hold.
    let mut done: BTreeSet<&str> = fields.iter().map(|f| f.at.as_str()).collect();
    let mut value_rules: Vec<ViewerField> = Vec::new();
    for (at, field) in &tally.values {
        for (key, tables) in &field.by_key {
            let Some([owner, other]) = tables else {
                continue;
            };
            if done.contains(at.as_str()) {
                break;
            }
            let differs = owner
                .iter()
                .any(|(kv, s)| other.get(kv).is_some_and(|o| o != s));
            if !differs {
                continue;
            }
            let table = |t: &ValueTable| -> BTreeMap<String, Value> {
                t.iter()
                    .filter_map(|(kv, s)| {
                        let v = serde_json::from_str(s.iter().next()?).ok()?;
                        Some((kv.clone(), v))
                    })
                    .collect()
            };
            value_rules.push(ViewerField {
                at: at.clone(),
                shown: ViewerShown::Value {
                    key: key.clone(),
                    owner: table(owner),
                    others: table(other),
                },
            });
            done.insert(at.as_str());
        }
    }
    fields.extend(value_rules);
    fields.sort_by(|a, b| a.at.cmp(&b.at));
    fields
}
