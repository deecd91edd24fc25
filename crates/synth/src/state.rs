//! State inference: which routes create, read, list, update or delete which entity type, and
//! what the recordings say about each entity type (primary key, id shape, known ids, records).
//!
//! Rules (reference §4.6):
//! - `GET …/:id` reads; `GET …/collection` lists when its body is a list (a bare array of
//!   objects, or an object with exactly one top-level array of objects);
//! - `POST …/collection` creates when the answer is an object carrying a fresh primary key (not
//!   one of the path's ids), the last segment is not search-like (`search`, `query`, `count`,
//!   `aggregate`, `summarize`, `lookup`, `…/actions/<verb>`), and the collection is a collection:
//!   it has no parent parameter, or the recordings also address `…/collection/:id`, or list it;
//!   action sub-resources (`/:id/cancel`, `/:id/follow`) therefore never mutate. An answer may
//!   hold the record in a one-key envelope (see [`envelope_of`]): such a POST creates when the
//!   reads by id of the same type answer the record bare or in the same envelope;
//! - `PUT`/`PATCH …/:id` and Stripe-style `POST …/:id` update; `DELETE …/:id` deletes.
//!
//! The entity type is the collection segment as recorded (`customers`). When two different
//! collections end in the same segment (`/linode/instances` and `/databases/mysql/instances`),
//! the shortest keeps the bare name and the others are qualified by the segment before them
//! (`mysql_instances`), unless their records share most field names with the bare-named ones
//! (`/accounts/:id/statuses` lists `statuses`); version prefixes do not count (`/v1/x` and
//! `/v2/x` are one type).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{EntityType, ParentParam, StateOp};

use crate::observe::Obs;
use crate::routes::{RouteGroup, Seg};
use crate::values;

/// Last segments of POSTs that query rather than create.
pub(crate) const SEARCH_LIKE: &[&str] = &[
    "search",
    "query",
    "count",
    "aggregate",
    "summarize",
    "lookup",
];

/// What synth decided about one route's state.
#[derive(Debug, Clone, Default)]
pub struct RoutePlan {
    pub state_op: Option<StateOp>,
    pub entity_type: Option<String>,
    pub id_param: Option<String>,
    /// The parameter qualifying `id_param`'s value into the record's key
    /// ([`wraith_model::Route::key_qualifier`]).
    pub key_qualifier: Option<String>,
    pub parent_params: Vec<ParentParam>,
    /// For list routes: the JSON pointer of the items.
    pub items_pointer: Option<String>,
    /// Primary key of the entity type.
    pub primary_key: Option<String>,
    /// For a create whose answer carries another collection's record one key deeper (see
    /// [`crate::wrapped_creates`]): the JSON pointer of that record; empty otherwise.
    pub record_at: String,
}

/// Plans for every route (same order as the route groups) and the entity types' keys.
#[derive(Debug, Default)]
pub struct Plans {
    pub routes: Vec<RoutePlan>,
    pub primary_keys: BTreeMap<String, String>,
    /// Per entity type, the other fields that held the path's id in every read and update
    /// answer the primary key held it in (an issue's `number` beside its `id`, where each
    /// issue's two were equal): the paths may name either.
    pub tied_keys: BTreeMap<String, BTreeSet<String>>,
}

/// Literal path words before position `end` (exclusive), version prefixes and empty
/// segments left out: the identity of a collection.
fn collection_key(segs: &[Seg], end: usize) -> Vec<String> {
    segs[..end]
        .iter()
        .filter_map(|s| match s {
            Seg::Lit(l) if !l.is_empty() && !values::is_version_prefix(l) => Some(l.clone()),
            _ => None,
        })
        .collect()
}

/// Position of the last literal (non-empty, non-version) segment before `pos`.
fn literal_pos_before(segs: &[Seg], pos: usize) -> Option<usize> {
    (0..pos).rev().find(|i| match &segs[*i] {
        Seg::Lit(l) => !l.is_empty() && !values::is_version_prefix(l),
        Seg::Param(_) => false,
    })
}

/// Whether two collections hold the same kind of record: their field sets overlap by at least
/// 60% (Jaccard), so `/accounts/:id/statuses` lists `statuses` while `/filters/:id/statuses`
/// (filter entries) does not.
fn same_records(a: Option<&BTreeSet<String>>, b: Option<&BTreeSet<String>>) -> bool {
    let (Some(a), Some(b)) = (a, b) else {
        return false;
    };
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let common = a.intersection(b).count();
    let union = a.union(b).count();
    common * 10 >= union * 6
}

/// Names for collection keys (see the module doc). `fields` holds the record field names each
/// collection showed.
fn name_collections(
    keys: &BTreeSet<Vec<String>>,
    fields: &BTreeMap<Vec<String>, BTreeSet<String>>,
) -> BTreeMap<Vec<String>, String> {
    let mut by_last: BTreeMap<&str, Vec<&Vec<String>>> = BTreeMap::new();
    for k in keys {
        if let Some(last) = k.last() {
            by_last.entry(last.as_str()).or_default().push(k);
        }
    }
    let mut names = BTreeMap::new();
    for (last, mut group) in by_last {
        group.sort_by_key(|k| (k.len(), (*k).clone()));
        let shortest_unique = group.len() == 1 || group[0].len() < group[1].len();
        let anchor = fields.get(group[0]);
        for (i, k) in group.iter().enumerate() {
            let name = if i == 0 && shortest_unique {
                last.to_string()
            } else if shortest_unique && same_records(fields.get(*k), anchor) {
                // A nested view of the same records (`/accounts/:id/statuses`).
                last.to_string()
            } else if k.len() >= 2 {
                format!("{}_{}", k[k.len() - 2], last)
            } else {
                last.to_string()
            };
            names.insert((*k).clone(), name);
        }
    }
    names
}

/// The items pointer of a list body: `""` for a bare array of objects (or empty arrays),
/// `/key` for an object with exactly one top-level array of objects.
pub fn items_pointer(bodies: &[&Value]) -> Option<String> {
    if bodies.is_empty() {
        return None;
    }
    // Items are objects, and (when there are any) some item names itself with an
    // identifier-like key: `[{"rel":…,"href":…}]` is a document, not a collection.
    let objecty = |a: &Vec<Value>| a.iter().all(Value::is_object);
    let identified = |a: &Vec<Value>| {
        a.iter().any(|item| {
            item.as_object()
                .is_some_and(|m| m.keys().any(|k| values::is_identifier_key(k)))
        })
    };
    let all_items: Vec<&Vec<Value>> = bodies
        .iter()
        .filter_map(|b| match b {
            Value::Array(a) => Some(a),
            Value::Object(m) => m.values().find_map(Value::as_array),
            _ => None,
        })
        .collect();
    if all_items.iter().any(|a| !a.is_empty()) && !all_items.iter().any(|a| identified(a)) {
        return None;
    }
    if bodies.iter().all(|b| b.as_array().is_some_and(objecty)) {
        return Some(String::new());
    }
    if !bodies.iter().all(|b| b.is_object()) {
        return None;
    }
    let mut candidate: Option<&str> = None;
    let first = bodies[0].as_object()?;
    for (k, v) in first {
        if v.is_array() {
            if candidate.is_some() {
                return None;
            }
            candidate = Some(k.as_str());
        }
    }
    let key = candidate?;
    for b in bodies {
        match b.get(key) {
            Some(Value::Array(items)) => {
                if !objecty(items) {
                    return None;
                }
                // Exactly one array at top level in every body.
                let arrays = b
                    .as_object()
                    .map(|m| m.values().filter(|v| v.is_array()).count())
                    .unwrap_or(0);
                if arrays != 1 {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(format!("/{}", crate::observe::escape_token(key)))
}

/// The JSON trees of a route's 2xx answers, parsed for the caller (see
/// [`crate::observe::RespBody::Json`]).
fn ok_json_bodies(g: &RouteGroup, obs: &[Obs<'_>]) -> Vec<Value> {
    ok_json_bodies_first(g, obs, usize::MAX)
}

/// The JSON trees of a route's first `n` 2xx answers down to `levels` levels
/// ([`crate::observe::json_levels`]): for reads of a body's top only.
fn ok_json_tops(g: &RouteGroup, obs: &[Obs<'_>], n: usize, levels: usize) -> Vec<Value> {
    let ok: Vec<usize> = g
        .obs
        .iter()
        .copied()
        .filter(|i| values::is_2xx(obs[*i].status))
        .collect();
    if n >= ok.len() {
        // Every one of them: parsed on the cores.
        let mut out = Vec::with_capacity(ok.len());
        crate::observe::parsed_in_order(
            obs,
            &ok,
            |o| o.resp_json_levels(levels),
            |_, tree| out.extend(tree),
        );
        return out;
    }
    ok.iter()
        .filter_map(|i| obs[*i].resp_json_levels(levels))
        .take(n)
        .collect()
}

/// The first `n` of [`ok_json_bodies`], parsing no more than those.
fn ok_json_bodies_first(g: &RouteGroup, obs: &[Obs<'_>], n: usize) -> Vec<Value> {
    g.obs
        .iter()
        .filter(|i| values::is_2xx(obs[**i].status))
        .filter_map(|i| obs[*i].resp_json())
        .take(n)
        .collect()
}

pub(crate) fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The record a body holds: the body itself when it carries `pk`, else the object of the
/// body's envelope (see [`envelope_of`]) when that carries `pk`.
pub(crate) fn record_in<'v>(body: &'v Value, pk: &str) -> Option<&'v Value> {
    if body.get(pk).is_some_and(|v| scalar_string(v).is_some()) {
        return Some(body);
    }
    let (_, inner) = envelope_of(body)?;
    inner.get(pk).and_then(scalar_string).map(|_| inner)
}

/// A one-key envelope around a record (`{"collection": {"id": …}}`), recognised from the data
/// alone, never from the key's name: the body is an object with no identifier-like key of its
/// own whose one object-valued member names itself with an identifier-like key; the other
/// members are metadata (scalars, or lists sideloaded beside the record, as a collection's
/// accounts). Returns the key and the record.
pub fn envelope_of(body: &Value) -> Option<(&str, &Value)> {
    let map = body.as_object()?;
    if map.keys().any(|k| values::is_identifier_key(k)) {
        return None;
    }
    let mut objects = map.iter().filter(|(_, v)| v.is_object());
    let (key, inner) = objects.next()?;
    if objects.next().is_some() {
        return None;
    }
    let fields = inner.as_object()?;
    fields
        .iter()
        .any(|(k, v)| values::is_identifier_key(k) && scalar_string(v).is_some())
        .then_some((key.as_str(), inner))
}

/// Decide state ops, entity types and primary keys for every route.
/// Collections that are only ever listed (nothing addresses `…/coll/:id`, nothing is created
/// in them, no parameter sits under them) and whose items share most field names with an
/// addressable collection's records are views of those records (`/timelines/home` lists
/// `statuses`): they take that collection's entity type, so what a session creates or changes
/// shows in them too. `shapes`: per route, its collection position and whether its last
/// segment is a parameter.
fn adopt_record_types(
    names: &mut BTreeMap<Vec<String>, String>,
    groups: &[RouteGroup],
    shapes: &[(Option<usize>, bool)],
    fields: &BTreeMap<Vec<String>, BTreeSet<String>>,
) {
    let mut addressable: BTreeSet<Vec<String>> = BTreeSet::new();
    // Collections whose records are read, updated or deleted by id (`…/coll/:id`).
    let mut by_id: BTreeSet<Vec<String>> = BTreeSet::new();
    for (g, (coll_pos, last_is_param)) in groups.iter().zip(shapes) {
        if *last_is_param && let Some(p) = coll_pos {
            by_id.insert(collection_key(&g.segs, p + 1));
        }
        for (i, s) in g.segs.iter().enumerate() {
            if matches!(s, Seg::Param(_))
                && let Some(p) = literal_pos_before(&g.segs, i)
            {
                addressable.insert(collection_key(&g.segs, p + 1));
            }
        }
        if g.method != "GET"
            && !*last_is_param
            && let Some(p) = coll_pos
        {
            addressable.insert(collection_key(&g.segs, p + 1));
        }
    }
    let jaccard = |a: &BTreeSet<String>, b: &BTreeSet<String>| -> f64 {
        let union = a.union(b).count();
        if union == 0 {
            return 0.0;
        }
        a.intersection(b).count() as f64 / union as f64
    };
    let keys: Vec<Vec<String>> = names.keys().cloned().collect();
    for k in keys {
        if addressable.contains(&k) {
            continue;
        }
        let Some(mine) = fields.get(&k) else { continue };
        let best = by_id
            .iter()
            .filter(|a| same_records(Some(mine), fields.get(*a)))
            .filter_map(|a| Some((jaccard(mine, fields.get(a)?), a)))
            .max_by(|x, y| x.0.total_cmp(&y.0).then_with(|| y.1.cmp(x.1)));
        if let Some((_, a)) = best
            && let Some(name) = names.get(a).cloned()
        {
            names.insert(k, name);
        }
    }
}

pub fn plan_routes(groups: &[RouteGroup], obs: &[Obs<'_>]) -> Plans {
    // 1. Collection keys of every route (and of the parents of its parameters).
    struct Shape {
        last_is_param: bool,
        coll_pos: Option<usize>,
    }
    let mut shapes = Vec::with_capacity(groups.len());
    let mut keys: BTreeSet<Vec<String>> = BTreeSet::new();
    for g in groups {
        let n = g.segs.len();
        let last_is_param = matches!(g.segs.last(), Some(Seg::Param(_)));
        let coll_pos = if last_is_param {
            literal_pos_before(&g.segs, n - 1)
        } else {
            literal_pos_before(&g.segs, n)
        };
        if let Some(p) = coll_pos {
            keys.insert(collection_key(&g.segs, p + 1));
        }
        for (i, s) in g.segs.iter().enumerate() {
            if matches!(s, Seg::Param(_))
                && let Some(p) = literal_pos_before(&g.segs, i)
            {
                keys.insert(collection_key(&g.segs, p + 1));
            }
        }
        shapes.push(Shape {
            last_is_param,
            coll_pos,
        });
    }
    // The record fields each collection showed: objects answered by reads, updates and
    // creates, items of lists.
    let mut fields: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    // The items pointer of each collection GET, found here and kept for its plan (step 4).
    let mut list_pointers: Vec<Option<String>> = vec![None; groups.len()];
    for (gi, (g, shape)) in groups.iter().zip(&shapes).enumerate() {
        let Some(pos) = shape.coll_pos else { continue };
        let set = fields.entry(collection_key(&g.segs, pos + 1)).or_default();
        // Parsed only as far as read below: 64 bodies of a record route, every body of a
        // collection GET (its items pointer weighs them all) down to an item's keys (level 3),
        // none otherwise.
        let trees: Vec<Value> = if shape.last_is_param || g.method == "POST" {
            ok_json_bodies_first(g, obs, 64)
        } else if g.method == "GET" {
            ok_json_tops(g, obs, usize::MAX, 3)
        } else {
            Vec::new()
        };
        let bodies: Vec<&Value> = trees.iter().collect();
        let mut take = |v: &Value| {
            // An enveloped record shows its own fields, not the envelope's key.
            let v = envelope_of(v).map_or(v, |(_, inner)| inner);
            if let Value::Object(m) = v {
                set.extend(m.keys().cloned());
            }
        };
        if shape.last_is_param || g.method == "POST" {
            bodies.iter().take(64).for_each(|b| take(b));
        } else if g.method == "GET" {
            list_pointers[gi] = items_pointer(&bodies);
            if let Some(ptr) = &list_pointers[gi] {
                // The fields taken read down to the values of an enveloped item's record:
                // level 4.
                for b in &ok_json_tops(g, obs, 64, 4) {
                    if let Some(Value::Array(items)) = b.pointer(ptr) {
                        items.iter().take(64).for_each(&mut take);
                    }
                }
            }
        }
    }
    let mut names = name_collections(&keys, &fields);
    let shape_info: Vec<(Option<usize>, bool)> = shapes
        .iter()
        .map(|s| (s.coll_pos, s.last_is_param))
        .collect();
    adopt_record_types(&mut names, groups, &shape_info, &fields);
    let name_at = |g: &RouteGroup, pos: usize| -> Option<String> {
        names.get(&collection_key(&g.segs, pos + 1)).cloned()
    };

    // 2. Primary keys: the response field whose value equals the path id of the same
    //    exchange most often; `id` when nothing matches.
    let mut pk_votes: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    // Where the id follows another parameter (`/repos/:owner/:name`): per entity, how many
    // answers voted, under which qualifier values, and per field how many held the two values
    // joined by `/` (`full_name`).
    #[derive(Default)]
    struct QualifiedVotes {
        answers: u64,
        qualifiers: BTreeSet<String>,
        fields: BTreeMap<String, u64>,
    }
    let mut qualified_votes: BTreeMap<String, QualifiedVotes> = BTreeMap::new();
    let mut seen_entities: BTreeSet<String> = BTreeSet::new();
    for (g, shape) in groups.iter().zip(&shapes) {
        let Some(pos) = shape.coll_pos else { continue };
        let Some(entity) = name_at(g, pos) else {
            continue;
        };
        seen_entities.insert(entity.clone());
        if !(shape.last_is_param && matches!(g.method.as_str(), "GET" | "PUT" | "PATCH")) {
            continue;
        }
        // Parsed only where it votes (see `RespBody::Json`), and only as far as read: an
        // enveloped record's own values (level 2).
        let parse = |o: &Obs<'_>| {
            values::is_2xx(o.status)
                .then(|| o.resp_json_levels(2))
                .flatten()
        };
        crate::observe::parsed_in_order(obs, &g.obs, parse, |k, body| {
            let Some(body) = body else {
                return;
            };
            let Some(raw) = g.param_values[k].last() else {
                return;
            };
            let id = values::decode_segment(raw);
            // An enveloped answer votes with its record's fields.
            let record = envelope_of(&body).map_or(&body, |(_, inner)| inner);
            let Value::Object(map) = record else {
                return;
            };
            for (field, v) in map {
                if scalar_string(v).is_some_and(|s| s == id) {
                    *pk_votes
                        .entry(entity.clone())
                        .or_default()
                        .entry(field.clone())
                        .or_insert(0) += 1;
                }
            }
            if let Some(joined) = g.qualified_id(k) {
                let votes = qualified_votes.entry(entity.clone()).or_default();
                votes.answers += 1;
                if let Some((q, _)) = joined.split_once('/') {
                    votes.qualifiers.insert(q.to_string());
                }
                for (field, v) in map {
                    if scalar_string(v).is_some_and(|s| s == joined) {
                        *votes.fields.entry(field.clone()).or_insert(0) += 1;
                    }
                }
            }
        });
    }
    // Entities no read/update answer identifies: vote with create answers whose field value
    // was later (or earlier) used as the entity's path id (`POST /tags` → `{"label": "x"}`,
    // `DELETE /tags/x`).
    let mut path_ids: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (g, shape) in groups.iter().zip(&shapes) {
        if !shape.last_is_param {
            continue;
        }
        let Some(entity) = shape.coll_pos.and_then(|pos| name_at(g, pos)) else {
            continue;
        };
        let ids = path_ids.entry(entity).or_default();
        for vals in &g.param_values {
            if let Some(raw) = vals.last() {
                ids.insert(values::decode_segment(raw));
            }
        }
    }
    let mut create_votes: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for (g, shape) in groups.iter().zip(&shapes) {
        if shape.last_is_param || g.method != "POST" {
            continue;
        }
        let Some(entity) = shape.coll_pos.and_then(|pos| name_at(g, pos)) else {
            continue;
        };
        if pk_votes.contains_key(&entity) {
            continue;
        }
        let Some(ids) = path_ids.get(&entity) else {
            continue;
        };
        for body in ok_json_bodies(g, obs) {
            if let Value::Object(map) = &body {
                for (field, v) in map {
                    if scalar_string(v).is_some_and(|s| ids.contains(&s)) {
                        *create_votes
                            .entry(entity.clone())
                            .or_default()
                            .entry(field.clone())
                            .or_insert(0) += 1;
                    }
                }
            }
        }
    }
    for (entity, votes) in create_votes {
        pk_votes.entry(entity).or_insert(votes);
    }

    let mut primary_keys: BTreeMap<String, String> = BTreeMap::new();
    // Entities keyed by a qualified pair: a field held the pair in every answer of a qualified
    // path, under at least two qualifier values (one owner's names alone say nothing of
    // another's), so two owners' records of one name are two keys.
    let mut qualified_keyed: BTreeSet<String> = BTreeSet::new();
    for (entity, votes) in &qualified_votes {
        if votes.answers < 2 || votes.qualifiers.len() < 2 {
            continue;
        }
        if let Some((field, _)) = votes.fields.iter().find(|(_, n)| **n == votes.answers) {
            primary_keys.insert(entity.clone(), field.clone());
            qualified_keyed.insert(entity.clone());
        }
    }
    let mut tied_keys: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entity in &seen_entities {
        if qualified_keyed.contains(entity) {
            continue;
        }
        let pk = pk_votes
            .get(entity)
            .and_then(|votes| {
                let best = votes.values().copied().max()?;
                if votes.get("id") == Some(&best) {
                    return Some("id".to_string());
                }
                votes
                    .iter()
                    .find(|(_, n)| **n == best)
                    .map(|(k, _)| k.clone())
            })
            .unwrap_or_else(|| "id".to_string());
        if let Some(votes) = pk_votes.get(entity)
            && let Some(&n) = votes.get(&pk)
        {
            let tied: BTreeSet<String> = votes
                .iter()
                .filter(|(field, v)| **v == n && **field != pk)
                .map(|(field, _)| field.clone())
                .collect();
            if !tied.is_empty() {
                tied_keys.insert(entity.clone(), tied);
            }
        }
        primary_keys.insert(entity.clone(), pk);
    }

    // 3. Which paths have an addressable child (`…/coll/:id`) or a list.
    let mut has_child: BTreeSet<(Option<String>, Vec<Seg>)> = BTreeSet::new();
    for g in groups {
        if let Some((Seg::Param(_), head)) = g.segs.split_last() {
            has_child.insert((g.origin.clone(), head.to_vec()));
        }
    }

    // Whether a read by id of entity type `e` answers its record bare or in the envelope `key`
    // (an enveloped create is a create only where the reads agree on what the record is).
    let reads_answer = |e: &str, pk: &str, key: &str| -> bool {
        groups.iter().zip(&shapes).any(|(o, s)| {
            o.method == "GET"
                && s.last_is_param
                && s.coll_pos.and_then(|p| name_at(o, p)).as_deref() == Some(e)
                && ok_json_bodies_first(o, obs, 8).iter().any(|b| {
                    b.get(pk).is_some()
                        || envelope_of(b)
                            .is_some_and(|(k, inner)| k == key && inner.get(pk).is_some())
                })
        })
    };

    // 4. The plan of each route.
    let mut plans = Vec::with_capacity(groups.len());
    for (gi, (g, shape)) in groups.iter().zip(&shapes).enumerate() {
        let mut plan = RoutePlan::default();
        let Some(pos) = shape.coll_pos else {
            plans.push(plan);
            continue;
        };
        let entity = name_at(g, pos);
        let pk = entity
            .as_ref()
            .and_then(|e| primary_keys.get(e).cloned())
            .unwrap_or_else(|| "id".to_string());
        // Only collection-level POSTs read the bodies below: parse only for them (a GET's
        // items pointer was found with the record fields).
        let trees = match (g.method.as_str(), shape.last_is_param) {
            ("POST", false) => ok_json_bodies(g, obs),
            _ => Vec::new(),
        };
        let bodies: Vec<&Value> = trees.iter().collect();
        let last_lit = match g.segs.last() {
            Some(Seg::Lit(l)) => Some(l.as_str()),
            _ => None,
        };
        let op = match (g.method.as_str(), shape.last_is_param) {
            ("GET", true) => Some(StateOp::Read),
            ("PUT" | "PATCH" | "POST", true) => Some(StateOp::Update),
            ("DELETE", true) => Some(StateOp::Delete),
            ("GET", false) => {
                plan.items_pointer = list_pointers[gi].clone();
                plan.items_pointer.as_ref().map(|_| StateOp::List)
            }
            ("POST", false) => {
                let search_like = last_lit.is_some_and(|l| SEARCH_LIKE.contains(&l))
                    || g.literal_before(g.segs.len().saturating_sub(1)) == Some("actions");
                // Every answer holds its record the same way: bare, or in one same
                // envelope that the reads of the entity also answer (or answer bare).
                let wraps: BTreeSet<Option<&str>> = bodies
                    .iter()
                    .map(|b| {
                        if b.get(&pk).is_some() {
                            None
                        } else {
                            envelope_of(b).map(|(k, _)| k)
                        }
                    })
                    .collect();
                // A body holding its record bare (or holding none) decides as before; only
                // answers that all wrap their record in one same envelope need the reads' word.
                let consistent = wraps.contains(&None)
                    || (wraps.len() == 1
                        && wraps.iter().flatten().next().is_some_and(|key| {
                            entity.as_ref().is_some_and(|e| reads_answer(e, &pk, key))
                        }));
                let fresh_key = !bodies.is_empty()
                    && consistent
                    && bodies.iter().all(|b| b.is_object())
                    && g.obs.iter().enumerate().any(|(k, i)| {
                        let o = &obs[*i];
                        values::is_2xx(o.status)
                            && o.resp_json()
                                .and_then(|b| record_in(&b, &pk)?.get(&pk).and_then(scalar_string))
                                .is_some_and(|id| {
                                    !g.param_values[k]
                                        .iter()
                                        .any(|p| values::decode_segment(p) == id)
                                })
                    });
                let collection_like = g.params.is_empty()
                    || has_child.contains(&(g.origin.clone(), g.segs.clone()))
                    || groups.iter().any(|other| {
                        other.method == "GET" && other.segs == g.segs && other.origin == g.origin
                    });
                (!search_like && fresh_key && collection_like).then_some(StateOp::Create)
            }
            _ => None,
        };
        if let Some(op) = op {
            plan.state_op = Some(op);
            plan.entity_type = entity.clone();
            plan.primary_key = Some(pk);
            let last_param = if shape.last_is_param {
                g.params.last().cloned()
            } else {
                None
            };
            plan.id_param = last_param.clone();
            // Two parameters in a row under a collection keyed by such pairs: the first
            // qualifies the second, on the record's own routes and on those nested under it.
            plan.key_qualifier = g.segs.windows(2).enumerate().find_map(|(i, w)| match w {
                [Seg::Param(qualifier), Seg::Param(_)] => literal_pos_before(&g.segs, i)
                    .and_then(|p| name_at(g, p))
                    .filter(|e| qualified_keyed.contains(e))
                    .map(|_| qualifier.clone()),
                _ => None,
            });
            for (i, s) in g.segs.iter().enumerate() {
                if let Seg::Param(name) = s {
                    if Some(name) == last_param.as_ref() {
                        continue;
                    }
                    // A parameter followed by another one qualifies that one's key (an owner
                    // in `/repos/:owner/:name`): it names no record of the collection before
                    // it.
                    if matches!(g.segs.get(i + 1), Some(Seg::Param(_))) {
                        continue;
                    }
                    if let Some(p) = literal_pos_before(&g.segs, i)
                        && let Some(parent) = name_at(g, p)
                    {
                        plan.parent_params.push(ParentParam {
                            param: name.clone(),
                            entity_type: parent,
                        });
                    }
                }
            }
        }
        plans.push(plan);
    }
    qualify_other_routes(groups, &mut plans);
    Plans {
        routes: plans,
        primary_keys,
        tied_keys,
    }
}

/// A route of another type whose path ends in two parameters spelling, joined, the key of a
/// record whose own routes are qualified (a star at `/user/starred/:owner/:name` names a
/// repository as `owner/name`) is qualified too: its id names that record.
fn qualify_other_routes(groups: &[RouteGroup], plans: &mut [RoutePlan]) {
    let keys: BTreeSet<String> = groups
        .iter()
        .zip(plans.iter())
        .filter(|(_, p)| p.key_qualifier.is_some())
        .flat_map(|(g, _)| (0..g.obs.len()).filter_map(|k| g.qualified_id(k)))
        .collect();
    if keys.is_empty() {
        return;
    }
    for (g, plan) in groups.iter().zip(plans.iter_mut()) {
        if plan.key_qualifier.is_some() || plan.id_param.is_none() {
            continue;
        }
        let [.., Seg::Param(qualifier), Seg::Param(_)] = g.segs.as_slice() else {
            continue;
        };
        if (0..g.obs.len()).any(|k| g.qualified_id(k).is_some_and(|id| keys.contains(&id))) {
            plan.key_qualifier = Some(qualifier.clone());
        }
    }
}

/// Entity types with their indexes and records, from the planned routes.
pub fn entity_types(
    groups: &[RouteGroup],
    plans: &Plans,
    obs: &[Obs<'_>],
) -> BTreeMap<String, EntityType> {
    #[derive(Default)]
    struct Acc {
        known: BTreeSet<String>,
        four_xx: BTreeSet<String>,
        /// id → (observation index, record) of the latest observation showing it. Kept
        /// latest-only as it fills: every item of every body would otherwise be cloned here
        /// first, a second copy of most recorded bodies.
        records: BTreeMap<String, (usize, Value)>,
        create_ids: Vec<Value>,
        body_ids: Vec<Value>,
    }
    let mut accs: BTreeMap<String, Acc> = BTreeMap::new();
    for (g, plan) in groups.iter().zip(&plans.routes) {
        let (Some(op), Some(entity)) = (plan.state_op, plan.entity_type.as_ref()) else {
            continue;
        };
        let pk = plan.primary_key.clone().unwrap_or_else(|| "id".to_string());
        let acc = accs.entry(entity.clone()).or_default();
        // A delete's answer shows no record: only the others are parsed.
        let parse = |o: &Obs<'_>| {
            (values::is_2xx(o.status) && op != StateOp::Delete)
                .then(|| o.resp_json())
                .flatten()
        };
        crate::observe::parsed_in_order(obs, &g.obs, parse, |k, body| {
            let i = &g.obs[k];
            let o = &obs[*i];
            if let Some(param) = plan.id_param.as_deref()
                && let Some(id) = g.key_value(k, param, plan.key_qualifier.as_deref())
            {
                if values::is_4xx(o.status) {
                    acc.four_xx.insert(id);
                } else {
                    acc.known.insert(id);
                }
            }
            let Some(body) = body else { return };
            let body = &body;
            let take = |item: &Value, acc: &mut Acc, is_create: bool| {
                if let Some(idv) = item.get(&pk)
                    && let Some(id) = scalar_string(idv)
                {
                    if is_create {
                        acc.create_ids.push(idv.clone());
                    } else if acc.body_ids.len() < 1024 {
                        acc.body_ids.push(idv.clone());
                    }
                    acc.known.insert(id.clone());
                    match acc.records.entry(id) {
                        std::collections::btree_map::Entry::Vacant(slot) => {
                            slot.insert((*i, item.clone()));
                        }
                        // A later observation (or a later item of the same body) wins.
                        std::collections::btree_map::Entry::Occupied(mut slot)
                            if slot.get().0 <= *i =>
                        {
                            slot.insert((*i, item.clone()));
                        }
                        std::collections::btree_map::Entry::Occupied(_) => {}
                    }
                }
            };
            match op {
                StateOp::Create if !plan.record_at.is_empty() => {
                    if let Some(record) = body.pointer(&plan.record_at) {
                        take(record, acc, true);
                    }
                }
                StateOp::Create => take(record_in(body, &pk).unwrap_or(body), acc, true),
                StateOp::Read | StateOp::Update => {
                    if body.is_object() {
                        take(record_in(body, &pk).unwrap_or(body), acc, false);
                    }
                }
                StateOp::List => {
                    let pointer = plan.items_pointer.as_deref().unwrap_or("");
                    if let Some(Value::Array(items)) = body.pointer(pointer) {
                        for item in items {
                            take(item, acc, false);
                        }
                    }
                }
                StateOp::Delete => {}
            }
        });
    }
    let mut out = BTreeMap::new();
    for (entity, acc) in accs {
        let records: BTreeMap<String, Value> = acc
            .records
            .into_iter()
            .map(|(id, (_, rec))| (id, rec))
            .collect();
        let shape_from: Vec<&Value> = if acc.create_ids.is_empty() {
            acc.body_ids.iter().collect()
        } else {
            acc.create_ids.iter().collect()
        };
        let id_shape = values::learn_id_shape(&shape_from);
        let known_missing = acc
            .four_xx
            .difference(&acc.known)
            .cloned()
            .collect::<BTreeSet<_>>();
        out.insert(
            entity.clone(),
            EntityType {
                primary_key: plans
                    .primary_keys
                    .get(&entity)
                    .cloned()
                    .unwrap_or_else(|| "id".to_string()),
                id_shape,
                known_ids: acc.known,
                known_missing,
                records,
                // Filled by `synthesize` (see `read_prefixes`).
                read_prefixes: BTreeMap::new(),
                keyed_per_parent: false,
                alternate_key: None,
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_views_of_the_same_records_share_the_entity_type() {
        let statuses = vec!["statuses".to_string()];
        let by_account = vec!["accounts".to_string(), "statuses".to_string()];
        let filter_statuses = vec!["filters".to_string(), "statuses".to_string()];
        let keys: BTreeSet<Vec<String>> = [
            statuses.clone(),
            by_account.clone(),
            filter_statuses.clone(),
        ]
        .into_iter()
        .collect();
        let set = |ks: &[&str]| ks.iter().map(|k| k.to_string()).collect::<BTreeSet<_>>();
        let fields = BTreeMap::from([
            (
                statuses.clone(),
                set(&["id", "content", "account", "created_at"]),
            ),
            (
                by_account.clone(),
                set(&["id", "content", "account", "created_at", "pinned"]),
            ),
            (filter_statuses.clone(), set(&["id", "status_id"])),
        ]);
        let names = name_collections(&keys, &fields);
        assert_eq!(names[&statuses], "statuses");
        assert_eq!(names[&by_account], "statuses");
        assert_eq!(names[&filter_statuses], "filters_statuses");
    }

    #[test]
    fn an_envelope_is_one_object_member_holding_an_identified_record() {
        let wrapped = json!({"collection": {"id": "1", "name": "x"}, "accounts": [{"id": "2"}]});
        assert_eq!(
            envelope_of(&wrapped).map(|(k, _)| k),
            Some("collection"),
            "sideloaded lists beside the record are metadata"
        );
        assert_eq!(
            record_in(&wrapped, "id").and_then(|r| r.get("name")),
            Some(&json!("x"))
        );
        // A one-key object whose member is not a record, a record itself, and two objects.
        assert_eq!(envelope_of(&json!({"result": {"ok": true}})), None);
        assert_eq!(envelope_of(&json!({"id": "1", "owner": {"id": "2"}})), None);
        assert_eq!(
            envelope_of(&json!({"a": {"id": "1"}, "b": {"id": "2"}})),
            None
        );
        assert_eq!(record_in(&json!({"result": {"ok": true}}), "id"), None);
    }

    #[test]
    fn items_pointer_finds_bare_arrays_and_single_envelopes() {
        let bare = json!([{"id": 1}]);
        assert_eq!(items_pointer(&[&bare]), Some(String::new()));
        let env = json!({"data": [{"id": 1}], "page": 1, "pages": 1, "results": 1});
        assert_eq!(items_pointer(&[&env]), Some("/data".to_string()));
        let multi = json!({"accounts": [], "statuses": []});
        assert_eq!(items_pointer(&[&multi]), None);
        let strings = json!(["a", "b"]);
        assert_eq!(items_pointer(&[&strings]), None);
    }

    #[test]
    fn colliding_collections_are_qualified_by_their_parent() {
        let keys: BTreeSet<Vec<String>> = [
            vec!["linode".to_string(), "instances".to_string()],
            vec![
                "databases".to_string(),
                "mysql".to_string(),
                "instances".to_string(),
            ],
            vec!["customers".to_string()],
        ]
        .into_iter()
        .collect();
        let names = name_collections(&keys, &BTreeMap::new());
        assert_eq!(names[&vec!["customers".to_string()]], "customers");
        assert_eq!(
            names[&vec!["linode".to_string(), "instances".to_string()]],
            "instances"
        );
        assert_eq!(
            names[&vec![
                "databases".to_string(),
                "mysql".to_string(),
                "instances".to_string()
            ]],
            "mysql_instances"
        );
    }
}
