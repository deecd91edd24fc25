//! Counters a create steps on another record its request names (`Route::create_counters`).
//!
//! A create whose body names an existing record in a top-level field often steps a counter of
//! that record: a reply (`in_reply_to_id`) steps its parent's `replies_count`, a comment steps
//! its post's `comments_count`. The recordings show it as the named record seen before the
//! create and again after it: an answer carrying the record (its own create, a read, a list, an
//! embedding in another answer) before, and the next one after (or the create's own answer
//! when it embeds the record). An integer field that moved by one same non-zero step in every
//! such pair (at least two) is learned as the create's counter, unless the field also changed
//! between two views of the record with no write naming it between (it changes by itself, or
//! by something the recordings do not show). Never from route or field names.
//!
//! A create under its parent's path (`POST /widgets/:id/parts`) names the parent there, and
//! is learned the same way (a part steps its widget's `parts_count`). So does another write's
//! path parameter naming a record the write does not keep itself: `PUT
//! /user/starred/:owner/:name` steps the repository's `stargazers_count`, its `DELETE` steps
//! it back (a route's own record, which an action or an update answers, is left to the stages
//! that read those answers).
//!
//! Not learned: counters of a record named deeper in the body (a nested object, an array's
//! item), or of a record the session never saw before the create; what a delete of the created
//! record does to the counter.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use serde_json::{Map, Value};
use wraith_model::{CreateCounters, EntityType, StateOp};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::state::RoutePlan;
use crate::values::{self, scalar_key};

/// Pairs of views a counter needs before it is learned.
pub const MIN_PAIRS: usize = 2;

/// How deep into an answer a view of a named record is looked for (the answer itself is 0: a
/// list's item is 2, an item's embedded record 3).
const MAX_DEPTH: usize = 4;

/// One recorded create that names a record: (route group, field pointer, key, observation).
struct Naming {
    group: usize,
    /// The body field's JSON pointer, or `:` and the path parameter's name (a pointer starts
    /// with `/`, so the two never meet).
    field: String,
    key: String,
    obs: usize,
}

/// Per (route group, field, entity type): the comparable pairs and each integer field's steps.
#[derive(Default)]
struct Tally {
    pairs: usize,
    /// Per field: the steps seen, and in how many pairs it was compared.
    steps: BTreeMap<String, (BTreeSet<i64>, usize)>,
}

/// The create counters of every route (same order as the groups); empty for the others.
pub fn learn(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) -> Vec<Vec<CreateCounters>> {
    let mut out = vec![Vec::new(); groups.len()];
    let namings = namings(groups, plans, obs);
    if namings.is_empty() || entity_types.is_empty() {
        return out;
    }
    // The keys each session's creates named: only records of those keys are looked for, and
    // only keys some type knows as a record's (a label or a text names no record).
    let known = |k: &str| {
        entity_types
            .values()
            .any(|t| t.known_ids.contains(k) || t.records.contains_key(k))
    };
    let mut named: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for n in &namings {
        if known(&n.key) {
            named
                .entry(obs[n.obs].session)
                .or_default()
                .insert(n.key.as_str());
        }
    }
    let shapes = type_shapes(groups, plans, entity_types, obs);
    let views = views(obs, &named, entity_types, &shapes);
    let writes = writes(obs, &named);

    // Whether the write at `w` shows in the view at `j`: it came before, or it is that
    // answer, unless that answer is a `DELETE`'s, which shows the record as the delete found
    // it (a delete of the named record answering it is a view of its last state).
    let changes_view = |w: usize, j: usize| w < j || (w == j && obs[w].method != "DELETE");

    // Fields that changed between two views with no write naming the record between.
    let mut restless: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for ((session, ty, key), seen) in &views {
        let naming = writes.get(&(*session, key.as_str()));
        for pair in seen.windows(2) {
            let ((j1, a), (j2, b)) = (&pair[0], &pair[1]);
            if j1 == j2 || naming.is_some_and(|w| w.iter().any(|w| w > j1 && changes_view(*w, *j2)))
            {
                continue;
            }
            for (k, v) in b {
                if let (Some(x), Some(y)) = (a.get(k).and_then(Value::as_i64), v.as_i64())
                    && x != y
                {
                    restless.entry(ty).or_default().insert(k.clone());
                }
            }
        }
    }

    let mut tallies: BTreeMap<(usize, &str, &str), Tally> = BTreeMap::new();
    for n in &namings {
        let i = n.obs;
        let session = obs[i].session;
        let naming = writes.get(&(session, n.key.as_str()));
        // A write naming the record after `lo` whose effect the view at `hi` shows.
        let between = |lo: usize, hi: usize| {
            naming.is_some_and(|w| w.iter().any(|w| *w != i && *w > lo && changes_view(*w, hi)))
        };
        for (ty, _) in entity_types.iter() {
            let Some(seen) = views.get(&(session, ty.as_str(), n.key.clone())) else {
                continue;
            };
            let before = seen.iter().rev().find(|(j, _)| *j < i);
            let after = seen.iter().find(|(j, _)| *j >= i);
            let (Some((jb, before)), Some((ja, after))) = (before, after) else {
                continue;
            };
            // Another write naming the record between the views: the pair shows more than
            // this create.
            if between(*jb, i) || between(i, *ja) {
                continue;
            }
            // A write other than a create that moved no integer of the record repeated what
            // the session had done (a second star): the pair says nothing of a step, and the
            // engine steps a counter only for a write that changed a member list.
            let moved = after.iter().any(|(k, v)| {
                matches!((before.get(k).and_then(Value::as_i64), v.as_i64()), (Some(x), Some(y)) if x != y)
            });
            if !moved && plans[n.group].state_op != Some(StateOp::Create) {
                continue;
            }
            let tally = tallies
                .entry((n.group, n.field.as_str(), ty.as_str()))
                .or_default();
            tally.pairs += 1;
            for (k, v) in after {
                if let (Some(x), Some(y)) = (before.get(k).and_then(Value::as_i64), v.as_i64()) {
                    let s = tally.steps.entry(k.clone()).or_default();
                    s.0.insert(y - x);
                    s.1 += 1;
                }
            }
        }
    }

    for ((group, field, ty), tally) in tallies {
        if tally.pairs < MIN_PAIRS {
            continue;
        }
        let Some(pk) = entity_types.get(ty).map(|t| t.primary_key.as_str()) else {
            continue;
        };
        let counters: BTreeMap<String, i64> = tally
            .steps
            .iter()
            .filter(|(k, (_, n))| {
                *n == tally.pairs
                    && k.as_str() != pk
                    && !values::is_identifier_key(k)
                    && !restless.get(ty).is_some_and(|r| r.contains(k.as_str()))
            })
            .filter_map(|(k, (steps, _))| match steps.first() {
                Some(d) if steps.len() == 1 && *d != 0 => Some((k.clone(), *d)),
                _ => None,
            })
            .collect();
        if counters.is_empty() {
            continue;
        }
        let (field, param) = match field.strip_prefix(':') {
            Some(name) => (String::new(), Some(name.to_string())),
            None => (field.to_string(), None),
        };
        out[group].push(CreateCounters {
            field,
            param,
            entity_type: ty.to_string(),
            counters,
        });
    }
    out
}

/// Every 2xx create's top-level request fields holding a scalar key, and the path parameters
/// naming its parents; and every other 2xx write's path parameter naming a record it does not
/// keep itself (the repository `PUT /user/starred/:owner/:name` stars, a write of a type no
/// route creates), in observation order.
fn namings(groups: &[RouteGroup], plans: &[RoutePlan], obs: &[Obs<'_>]) -> Vec<Naming> {
    let created: BTreeSet<&str> = plans
        .iter()
        .filter(|p| p.state_op == Some(StateOp::Create))
        .filter_map(|p| p.entity_type.as_deref())
        .collect();
    let mut out = Vec::new();
    for (gi, (g, p)) in groups.iter().zip(plans).enumerate() {
        let create = p.state_op == Some(StateOp::Create);
        if !create && !matches!(g.method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE") {
            continue;
        }
        // A write's own record (an action's, an update's) changes as its answers show, which
        // other stages learn; a record of a type no route creates is no record of its own.
        let keeps_own = p
            .entity_type
            .as_deref()
            .is_some_and(|t| created.contains(t));
        // The path parameters naming the create's parent records, or the write's records.
        let parents: Vec<&str> = g
            .params
            .iter()
            .filter(|name| {
                let own = keeps_own && p.id_param.as_deref() == Some(name.as_str());
                p.parent_params.iter().any(|pp| &pp.param == *name) || !(create || own)
            })
            .map(String::as_str)
            .collect();
        for (k, &i) in g.obs.iter().enumerate() {
            if !values::is_2xx(obs[i].status) {
                continue;
            }
            for &name in &parents {
                // A qualified id names its record with the qualifier (`owner/name`).
                if let Some(key) = g.key_value(k, name, p.key_qualifier.as_deref()) {
                    out.push(Naming {
                        group: gi,
                        field: format!(":{name}"),
                        key,
                        obs: i,
                    });
                }
            }
            if !create {
                continue;
            }
            for (ptr, v) in &obs[i].req_fields {
                // Top-level only: `/field`, not `/a/b` or `/ids/0`.
                if ptr.len() < 2 || ptr[1..].contains('/') {
                    continue;
                }
                let Some(key) = scalar_key(v).filter(|k| !k.is_empty()) else {
                    continue;
                };
                out.push(Naming {
                    group: gi,
                    field: ptr.clone(),
                    key,
                    obs: i,
                });
            }
        }
    }
    out.sort_by_key(|n| n.obs);
    out
}

/// Per entity type, the top-level fields its own routes' 2xx answers showed (read, create,
/// update): what tells a record of the type from another object with the same key.
pub(crate) fn type_shapes<'t>(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    entity_types: &'t BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) -> BTreeMap<&'t str, BTreeSet<String>> {
    let mut out: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (g, p) in groups.iter().zip(plans) {
        if !matches!(
            p.state_op,
            Some(StateOp::Read | StateOp::Create | StateOp::Update)
        ) {
            continue;
        }
        let Some((ty, et)) = p
            .entity_type
            .as_deref()
            .and_then(|t| entity_types.get_key_value(t))
        else {
            continue;
        };
        // A few answers are enough to know the fields.
        for &i in g
            .obs
            .iter()
            .filter(|i| values::is_2xx(obs[**i].status))
            .take(8)
        {
            if let Some(Value::Object(m)) = obs[i].resp_json()
                && m.get(&et.primary_key).and_then(scalar_key).is_some()
            {
                out.entry(ty.as_str())
                    .or_default()
                    .extend(m.keys().cloned());
            }
        }
    }
    out
}

/// Views of named records, per (session, type, key): each answer's first object carrying the
/// key as a type's primary key with mostly that type's fields, in observation order.
#[allow(clippy::type_complexity)]
pub(crate) fn views<'a>(
    obs: &[Obs<'a>],
    named: &BTreeMap<&str, BTreeSet<&str>>,
    entity_types: &'a BTreeMap<String, EntityType>,
    shapes: &BTreeMap<&'a str, BTreeSet<String>>,
) -> BTreeMap<(&'a str, &'a str, String), Vec<(usize, Map<String, Value>)>> {
    let mut out: BTreeMap<(&str, &str, String), Vec<(usize, Map<String, Value>)>> = BTreeMap::new();
    // The types by primary-key field (most share `id`): each object's key is read once per field.
    let mut by_pk: BTreeMap<&str, Vec<(&str, &EntityType)>> = BTreeMap::new();
    for (ty, et) in entity_types {
        by_pk
            .entry(et.primary_key.as_str())
            .or_default()
            .push((ty.as_str(), et));
    }
    // Each answer's views are found on the cores, then kept in observation order.
    let per_answer: Vec<(usize, BTreeMap<(&str, String), Map<String, Value>>)> = obs
        .par_iter()
        .enumerate()
        .filter_map(|(i, o)| {
            let keys = named.get(o.session)?;
            let found = answer_views(o, keys, &by_pk, shapes)?;
            Some((i, found))
        })
        .collect();
    for (i, found) in per_answer {
        for ((ty, key), m) in found {
            out.entry((obs[i].session, ty, key))
                .or_default()
                .push((i, m));
        }
    }
    out
}

/// The views of `keys` one answer holds, by (type, key): its first object carrying the key as
/// a type's primary key with mostly that type's fields. `None` when the answer holds none.
#[allow(clippy::type_complexity)]
fn answer_views<'a>(
    o: &Obs<'_>,
    keys: &BTreeSet<&str>,
    by_pk: &BTreeMap<&str, Vec<(&'a str, &'a EntityType)>>,
    shapes: &BTreeMap<&'a str, BTreeSet<String>>,
) -> Option<BTreeMap<(&'a str, String), Map<String, Value>>> {
    if !values::is_2xx(o.status) || !matches!(o.resp, crate::observe::RespBody::Json) {
        return None;
    }
    // Most answers name none of the keys: those are not parsed.
    if !may_mention(o, keys) {
        return None;
    }
    let body = o.resp_json()?;
    let mut found: BTreeMap<(&str, String), Map<String, Value>> = BTreeMap::new();
    // Breadth first, so an answer's shallowest copy of a record is its view.
    let mut queue = std::collections::VecDeque::from([(&body, 0usize)]);
    while let Some((v, depth)) = queue.pop_front() {
        match v {
            Value::Object(m) => {
                for (pk, types) in by_pk {
                    let Some(key) = m.get(*pk).and_then(scalar_key) else {
                        continue;
                    };
                    if !keys.contains(key.as_str()) {
                        continue;
                    }
                    for (ty, _) in types {
                        let Some(shape) = shapes.get(ty) else {
                            continue;
                        };
                        let common = m.keys().filter(|k| shape.contains(*k)).count();
                        if common < 2 || common * 10 < m.len() * 8 {
                            continue;
                        }
                        found.entry((ty, key.clone())).or_insert_with(|| m.clone());
                    }
                }
                if depth < MAX_DEPTH {
                    queue.extend(m.values().map(|c| (c, depth + 1)));
                }
            }
            Value::Array(a) if depth < MAX_DEPTH => {
                queue.extend(a.iter().map(|c| (c, depth + 1)));
            }
            _ => {}
        }
    }
    (!found.is_empty()).then_some(found)
}

/// Whether the answer's text may hold one of `keys` as a value: false only when none of them
/// stands in its bytes. A key of characters JSON might write escaped (a `/` as `\/`, a quote,
/// a non-ASCII letter) always counts as possibly there.
fn may_mention(o: &Obs<'_>, keys: &BTreeSet<&str>) -> bool {
    let plain = |k: &str| {
        k.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':' | b'+' | b'@')
        })
    };
    if keys.iter().any(|k| !plain(k)) {
        return true;
    }
    o.response_holds_any(keys.iter().copied())
}

/// Writes (not `GET`/`HEAD`) naming a named key in their path or a body field, per (session,
/// key), in observation order.
fn writes<'a>(
    obs: &[Obs<'a>],
    named: &BTreeMap<&str, BTreeSet<&'a str>>,
) -> BTreeMap<(&'a str, &'a str), Vec<usize>> {
    let mut out: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, o) in obs.iter().enumerate() {
        if matches!(o.method.as_str(), "GET" | "HEAD") {
            continue;
        }
        let Some(keys) = named.get(o.session) else {
            continue;
        };
        for key in keys {
            let in_path = o.path_names(key);
            let in_body = o
                .req_fields
                .iter()
                .any(|(_, v)| scalar_key(v).as_deref() == Some(*key));
            if in_path || in_body {
                out.entry((o.session, *key)).or_default().push(i);
            }
        }
    }
    out
}
