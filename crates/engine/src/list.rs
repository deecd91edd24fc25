//! List routes: the recorded collection merged with this session's writes, filtered and paged
//! in the recorded style.
//!
//! The recorded collection of each list route is gathered once at startup (items of the recorded
//! answers, per concrete path, plus the entity type's records for top-level collections). A
//! request then works over references to those items and the session's store; only the served
//! page is copied.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use serde_json::{Number, Value};
use wraith_model::{
    EntityType, EnvelopeMeaning, ListShape, Model, Pagination, RecordedBody, Route, StateOp,
};

use crate::fixtures::{Schema, scalar_key};
use crate::namespace::{Entity, Namespace, Origin, TypeStore};
use crate::util::{json_pointer_get, json_pointer_get_mut};

/// The recorded collection of one list route.
pub(crate) struct ListBase {
    /// Normalized concrete path → recorded items, deduplicated by key: in key order where every
    /// key is an integer (newest first in a descending list), else first seen first.
    by_path: HashMap<String, Vec<(String, Arc<Value>)>>,
    /// The recordings list newest first (ids decrease), so session creates go in front.
    descending: bool,
    /// Every key of `by_path`, whatever the path, and the records deleted in their recordings.
    members: HashSet<String>,
    /// For offset-paged lists: run → the keys any recorded page of that run listed. A recorded
    /// page past the first does not take in a record its run listed on another page.
    run_pages: HashMap<String, HashSet<String>>,
}

/// One cell per record of an entity type, in the model's map order, for the list items copied
/// from those records: every top-level list route of the type lists them (Mastodon's home and
/// public timelines and bookmarks each list the recorded statuses their pages do not show),
/// so an engine copies a record at most once, on first use, and its routes share the copy.
pub(crate) type SharedRecords = Vec<OnceLock<Arc<Value>>>;

/// Empty cells for `et`'s records (see [`SharedRecords`]).
pub(crate) fn shared_records(et: &EntityType) -> SharedRecords {
    et.records.values().map(|_| OnceLock::new()).collect()
}

/// Gather a list route's recorded collection.
/// `records` is the [`SharedRecords`] of the route's entity type, when the caller keeps them: a
/// top-level collection lists the copies there instead of copying the records again.
pub(crate) fn build_base(
    route: &Route,
    model: &Model,
    schema: &Schema,
    records: Option<&[OnceLock<Arc<Value>>]>,
) -> Option<ListBase> {
    if route.state_op != Some(StateOp::List) {
        return None;
    }
    let shape = route.list.as_ref()?;
    let ty = route.entity_type.as_deref()?;
    let pk = schema.primary_key(ty).unwrap_or("id");
    let mut by_path: HashMap<String, Vec<(String, Arc<Value>)>> = HashMap::new();
    let mut seen: HashMap<String, HashSet<String>> = HashMap::new();
    let mut descending_votes = (0u32, 0u32);
    let gone = deleted_in_recording(model, ty);
    for entry in &route.exact {
        // The newest successful moment with an items array; parsed here, dropped after.
        let Some(mut body) = entry.moments.iter().rev().find_map(|m| match &m.body {
            RecordedBody::Json { value } if (200..300).contains(&m.status) => value
                .parse()
                .ok()
                .filter(|b| json_pointer_get(b, &shape.items_pointer).is_some_and(Value::is_array)),
            _ => None,
        }) else {
            continue;
        };
        // Moved out of the parsed body (dropped right after) instead of cloning every item:
        // the copies were most of a list route's first-use time.
        let Some(Value::Array(items)) =
            json_pointer_get_mut(&mut body, &shape.items_pointer).map(Value::take)
        else {
            continue;
        };
        let path = crate::util::normalize_path(&entry.key.path).unwrap_or_default();
        let keys: Vec<f64> = items
            .iter()
            .filter_map(|i| i.get(pk).and_then(scalar_key))
            .filter_map(|k| k.parse::<f64>().ok())
            .collect();
        if keys.len() >= 2 {
            if keys[0] > keys[keys.len() - 1] {
                descending_votes.0 += 1;
            } else {
                descending_votes.1 += 1;
            }
        }
        let list = by_path.entry(path.clone()).or_default();
        let seen = seen.entry(path).or_default();
        for item in items {
            if let Some(k) = item.get(pk).and_then(scalar_key)
                && !gone.contains(k.as_str())
                && seen.insert(k.clone())
            {
                list.push((k, Arc::new(item)));
            }
        }
    }
    if !route.path.contains("/:")
        && let Some(et) = model.entity_types.get(ty)
    {
        let path = crate::util::normalize_path(&route.path).unwrap_or_default();
        let list = by_path.entry(path.clone()).or_default();
        let seen = seen.entry(path).or_default();
        // Each record with its position in the map, where `records` holds its shared copy.
        let mut ordered: Vec<(usize, &String, &Value)> = et
            .records
            .iter()
            .enumerate()
            .map(|(i, (k, v))| (i, k, v))
            .collect();
        // Numeric ids in numeric order; others keep their (sorted) map order.
        if ordered.iter().all(|(_, k, _)| k.parse::<u64>().is_ok()) {
            ordered.sort_by_key(|(_, k, _)| k.parse::<u64>().unwrap_or(0));
        }
        if descending_votes.0 > descending_votes.1 {
            ordered.reverse();
        }
        for (i, k, v) in ordered {
            if gone.contains(k.as_str()) {
                continue;
            }
            if seen.insert(k.clone()) {
                let item = match records.and_then(|r| r.get(i)) {
                    Some(cell) => Arc::clone(cell.get_or_init(|| Arc::new(v.clone()))),
                    None => Arc::new(v.clone()),
                };
                list.push((k.clone(), item));
            }
        }
    }
    let descending = descending_votes.0 > descending_votes.1;
    // Pages of different runs, then the records, were appended one after another: where
    // every key is an integer the collection is put in key order, as each recorded page lists
    // it, so a twin-served page interleaves the runs' items as the API would.
    for list in by_path.values_mut() {
        let keys: Option<Vec<u128>> = list.iter().map(|(k, _)| k.parse().ok()).collect();
        if let Some(keys) = keys {
            let mut order: Vec<usize> = (0..list.len()).collect();
            order.sort_by_key(|&i| keys[i]);
            if descending {
                order.reverse();
            }
            let mut taken: Vec<Option<(String, Arc<Value>)>> =
                std::mem::take(list).into_iter().map(Some).collect();
            list.extend(order.into_iter().filter_map(|i| taken[i].take()));
        }
    }
    // Records deleted later in their recordings were members when the earlier pages counted.
    let members = by_path
        .values()
        .flat_map(|l| l.iter().map(|(k, _)| k.clone()))
        .chain(gone.iter().map(|k| k.to_string()))
        .collect();
    let run_pages = match shape.pagination {
        Pagination::LimitOffset { .. } => run_pages(route, shape, pk),
        _ => HashMap::new(),
    };
    Some(ListBase {
        by_path,
        descending,
        members,
        run_pages,
    })
}

/// Run → the keys of every item its recorded pages of `route` listed (every successful moment
/// of every recorded request, parsed here once).
fn run_pages(route: &Route, shape: &ListShape, pk: &str) -> HashMap<String, HashSet<String>> {
    let mut out: HashMap<String, HashSet<String>> = HashMap::new();
    for m in route.exact.iter().flat_map(|e| &e.moments) {
        let RecordedBody::Json { value } = &m.body else {
            continue;
        };
        if !(200..300).contains(&m.status) {
            continue;
        }
        let Some(run) = m.source.rsplit_once('/').map(|(run, _)| run) else {
            continue;
        };
        let Ok(body) = value.parse() else {
            continue;
        };
        if let Some(Value::Array(items)) = json_pointer_get(&body, &shape.items_pointer) {
            out.entry(run.to_string())
                .or_default()
                .extend(items.iter().filter_map(|i| i.get(pk).and_then(scalar_key)));
        }
    }
    out
}

/// Per entity type, the keys of its records deleted in their own recordings (see
/// [`deleted_in_recording`]).
pub(crate) type GoneRecords = HashMap<String, HashSet<String>>;

/// [`GoneRecords`] of every entity type of `model`.
pub(crate) fn gone_records(model: &Model) -> GoneRecords {
    model
        .entity_types
        .keys()
        .map(|ty| {
            let gone = deleted_in_recording(model, ty);
            (ty.clone(), gone.into_iter().map(str::to_string).collect())
        })
        .filter(|(_, gone): &(String, HashSet<String>)| !gone.is_empty())
        .collect()
}

/// Records of `ty` the recordings' last word on shows gone: a known record (one that had a
/// non-4xx answer: created, read or listed) whose own path's newest recorded read (no query)
/// answered a 4xx, or whose recorded `DELETE` succeeded with no successful read of it after
/// (deleted in its recording: test suites delete what they create without reading it again).
/// A collection read no recording made does not list them, as the read of each answers 404.
fn deleted_in_recording<'m>(model: &'m Model, ty: &str) -> HashSet<&'m str> {
    let mut gone = HashSet::new();
    let Some(known) = model.entity_types.get(ty).map(|et| &et.known_ids) else {
        return gone;
    };
    let of_type = |op: StateOp| {
        model
            .routes
            .iter()
            .filter(move |r| r.entity_type.as_deref() == Some(ty) && r.state_op == Some(op))
            .flat_map(|r| &r.exact)
            .filter(|e| e.key.query.is_empty())
    };
    let record_id = |path: &'m str| path.rsplit('/').next().filter(|id| known.contains(*id));
    // Successful reads of each record: where (session, exchange) they were recorded.
    let mut read_ok: HashMap<&str, Vec<(&str, u64)>> = HashMap::new();
    for entry in of_type(StateOp::Read).filter(|e| e.key.body.is_none()) {
        let Some(id) = record_id(&entry.key.path) else {
            continue;
        };
        if entry
            .moments
            .last()
            .is_some_and(|last| (400..500).contains(&last.status))
        {
            gone.insert(id);
        }
        read_ok.entry(id).or_default().extend(
            entry
                .moments
                .iter()
                .filter(|m| (200..300).contains(&m.status))
                .filter_map(|m| source_position(&m.source)),
        );
    }
    // Successful deletes per record, by session: the last exchange that deleted it.
    let mut deleted: HashMap<&str, HashMap<&str, u64>> = HashMap::new();
    for entry in of_type(StateOp::Delete) {
        let Some(id) = record_id(&entry.key.path) else {
            continue;
        };
        for (session, index) in entry
            .moments
            .iter()
            .filter(|m| (200..300).contains(&m.status))
            .filter_map(|m| source_position(&m.source))
        {
            let at = deleted
                .entry(id)
                .or_default()
                .entry(session)
                .or_insert(index);
            *at = (*at).max(index);
        }
    }
    for (id, by_session) in deleted {
        // A read that succeeded after the delete in its session, or in a session that deleted
        // nothing (sessions of one run carry no order), says the record outlived the delete
        // (a soft delete, or an id used again).
        let read_after = read_ok.get(id).is_some_and(|reads| {
            reads.iter().any(|(session, index)| {
                by_session
                    .get(session)
                    .is_none_or(|deleted_at| index > deleted_at)
            })
        });
        if !read_after {
            gone.insert(id);
        }
    }
    gone
}

/// `<session id>/<exchange index>` of a moment's source, split.
fn source_position(source: &str) -> Option<(&str, u64)> {
    let (session, index) = source.rsplit_once('/')?;
    Some((session, index.parse().ok()?))
}

/// Whether a stored entity belongs in the collection named by `params` (its parents);
/// `member` is the list's learned [`ListShape::parent_member`] pattern.
fn belongs(e: &Entity, params: &[(String, String)], member: Option<&str>) -> bool {
    let wanted: Vec<&str> = params.iter().map(|(_, v)| v.as_str()).collect();
    if let Some(parents) = &e.parents
        && parents
            .iter()
            .map(String::as_str)
            .eq(wanted.iter().copied())
    {
        return true;
    }
    let Some(last) = wanted.last() else {
        // A top-level collection holds every entity of its type.
        return true;
    };
    // An entity whose parents are unknown (fixtures) or differ belongs when one of its
    // top-level fields names the parent, or, for a list whose items name it inside an array
    // (`/items/*/account_id`), when the record holds it there.
    e.value
        .as_object()
        .is_some_and(|o| o.values().any(|v| scalar_key(v).as_deref() == Some(*last)))
        || member.is_some_and(|m| {
            let tokens: Vec<String> = m
                .split('/')
                .skip(1)
                .map(|t| t.replace("~1", "/").replace("~0", "~"))
                .collect();
            pattern_names(&e.value, &tokens, last)
        })
}

/// The item's value a filter document's key names: the top-level field of that name, else,
/// for a dotted key (`entity.id`), the field reached through the nested objects it spells.
pub(crate) fn filter_field<'v>(item: &'v Value, key: &str) -> Option<&'v Value> {
    item.get(key).or_else(|| {
        key.contains('.')
            .then(|| key.split('.').try_fold(item, |v, k| v.get(k)))
            .flatten()
    })
}

/// Whether `item` meets the condition `field: want` of a filter document: the field (a dotted
/// key names a nested one) equals `want`, or is an array holding it. Operators (`+and`,
/// `+gt`) and nested documents are not supported: no condition.
pub(crate) fn meets_condition(item: &Value, field: &str, want: &Value) -> bool {
    if field.starts_with('+') || want.is_object() || want.is_array() {
        return true;
    }
    let equal = |v: &Value| v == want || scalar_key(v) == scalar_key(want);
    // An array field can never equal a scalar: the document asks for the items holding it
    // (`{"tags": "web"}`), as filter languages over JSON documents read it.
    filter_field(item, field).is_some_and(|v| match v {
        Value::Array(values) => values.iter().any(equal),
        v => equal(v),
    })
}

/// Whether some value at the pointer pattern `tokens` (`*` = every array element) under `v`
/// is the scalar `want`.
pub(crate) fn pattern_names(v: &Value, tokens: &[String], want: &str) -> bool {
    let Some((first, rest)) = tokens.split_first() else {
        return scalar_key(v).as_deref() == Some(want);
    };
    match v {
        Value::Array(a) if first == "*" => a.iter().any(|x| pattern_names(x, rest, want)),
        Value::Object(o) => o
            .get(first.as_str())
            .is_some_and(|x| pattern_names(x, rest, want)),
        _ => false,
    }
}

/// Whether an item key lies inside the id window a Link-header paged request asked for
/// (`max_id`-like next parameter: strictly past it in list order; `min_id`-like prev
/// parameter: strictly before it). Keys or bounds that are not numbers are always inside.
pub(crate) fn in_id_window(
    key: &str,
    pagination: &Pagination,
    query: &[(String, String)],
    descending: bool,
) -> bool {
    let Pagination::LinkHeader {
        next_param,
        prev_param,
        positional: false,
        numbered: false,
        ..
    } = pagination
    else {
        // Positions (`offset`) and page numbers bound no ids.
        return true;
    };
    let Ok(k) = key.parse::<f64>() else {
        return true;
    };
    let bound = |name: &str| q(query, name).and_then(|v| v.trim().parse::<f64>().ok());
    // In a newest-first list `next` goes to smaller keys and `prev` to larger ones.
    if let Some(b) = bound(next_param)
        && (if descending { k >= b } else { k <= b })
    {
        return false;
    }
    if let Some(b) = prev_param.as_deref().and_then(bound)
        && (if descending { k <= b } else { k >= b })
    {
        return false;
    }
    true
}

/// Whether the item key `key` lies above every lower bound ([`ListShape::lower_bounds`]) the
/// request sent (`since_id`); a key or a value that is not an integer is not judged.
pub(crate) fn above_lower_bounds(key: &str, shape: &ListShape, query: &[(String, String)]) -> bool {
    shape.lower_bounds.iter().all(|b| {
        let bound = q(query, b).and_then(|v| v.trim().parse::<u128>().ok());
        match (bound, key.parse::<u128>().ok()) {
            (Some(v), Some(k)) => k > v,
            _ => true,
        }
    })
}

/// Whether `item` passes the list's query filters the request sends: each equality filter
/// (the same-named field holds the value sent, or the value is one that filters nothing,
/// [`ListShape::filter_wildcards`]) and each set filter (the field takes one of the
/// values a repeated parameter sent, or, excluding, none of them).
fn passes_query_filters(item: &Value, shape: &ListShape, query: &[(String, String)]) -> bool {
    let equal = shape.filters.iter().all(|f| {
        let Some(wanted) = equality_values(shape, query, f) else {
            return true;
        };
        let everything = wanted.iter().any(|want| {
            shape
                .filter_wildcards
                .iter()
                .any(|w| w.param == *f && w.value == *want)
        });
        everything
            || item
                .get(f.as_str())
                .and_then(scalar_key)
                .is_some_and(|v| wanted.contains(&v.as_str()))
    });
    equal
        && shape.set_filters.iter().all(|f| {
            let sent = set_values(shape, query, &f.param);
            if sent.is_empty() {
                return true;
            }
            let value = item.get(f.field.as_str()).and_then(scalar_key);
            let named = value.is_some_and(|v| sent.contains(&v.as_str()));
            named != f.exclude
        })
}

/// Whether `item` holds, ignoring letter case, the value of every search parameter the
/// request sent ([`ListShape::search_filters`]) inside one of that search's fields.
fn passes_searches(item: &Value, shape: &ListShape, query: &[(String, String)]) -> bool {
    shape.search_filters.iter().all(|search| {
        let Some(needle) = q(query, &search.param)
            .map(str::to_lowercase)
            .filter(|n| !n.is_empty())
        else {
            return true;
        };
        search.fields.iter().any(|f| {
            item.get(f.as_str())
                .and_then(Value::as_str)
                .is_some_and(|text| text.to_lowercase().contains(&needle))
        })
    })
}

/// The values an equality filter `f` asks for: its first value, or, when the request spells
/// it as an array (`id[]=a&id[]=b`, as Rails and PHP clients do) and the list knows no such
/// parameter of its own, every value of that spelling (an item matching any passes).
pub(crate) fn equality_values<'q>(
    shape: &ListShape,
    query: &'q [(String, String)],
    f: &str,
) -> Option<Vec<&'q str>> {
    if let Some(v) = q(query, f) {
        return Some(vec![v]);
    }
    let array = format!("{f}[]");
    if shape.set_filters.iter().any(|s| s.param == array) {
        return None;
    }
    let values = all_values(query, &array);
    (!values.is_empty()).then_some(values)
}

/// The values a set filter `param` (`types[]`) was sent: under its own name, or, when the
/// request spells it without the brackets and the list knows no equality filter of that name,
/// under the bare name.
fn set_values<'q>(shape: &ListShape, query: &'q [(String, String)], param: &str) -> Vec<&'q str> {
    let sent = all_values(query, param);
    if !sent.is_empty() {
        return sent;
    }
    match param.strip_suffix("[]") {
        Some(bare) if !shape.filters.iter().any(|f| f == bare) => all_values(query, bare),
        _ => sent,
    }
}

fn all_values<'q>(query: &'q [(String, String)], name: &str) -> Vec<&'q str> {
    query
        .iter()
        .filter(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .collect()
}

/// Whether `item` holds a value the list hides from a request that does not send its filter
/// ([`ListShape::hidden_values`]).
fn hidden(item: &Value, shape: &ListShape, query: &[(String, String)]) -> bool {
    shape.hidden_values.iter().any(|h| {
        q(query, &h.param).is_none()
            && item
                .get(h.param.as_str())
                .and_then(scalar_key)
                .is_some_and(|v| v == h.value)
    })
}

/// The conditions of a filter-document header's value (`{"label": "web"}`), where it is a JSON
/// object.
fn filter_document(header: Option<&str>) -> Option<serde_json::Map<String, Value>> {
    match serde_json::from_str::<Value>(header?).ok()? {
        Value::Object(conds) => Some(conds),
        _ => None,
    }
}

/// Whether `item` meets every condition of a filter document.
fn passes_filter_document(item: &Value, conds: &serde_json::Map<String, Value>) -> bool {
    conds
        .iter()
        .all(|(field, want)| meets_condition(item, field, want))
}

/// Whether a list shows store record `k` to `principal`: where every recording listed only
/// the requesting principal's records ([`ListShape::principal_records_only`]), a record this
/// session created under another principal is not listed. A record the session did not create
/// (replayed, seeded) has no known creator and stays.
fn listed_to(shape: &ListShape, store: &TypeStore, k: &str, principal: Option<&str>) -> bool {
    !shape.principal_records_only || store.creator(k).is_none_or(|c| c == principal)
}

/// Merge this session's state into a recorded list moment. Returns whether the body changed.
/// Session items the request's id window excludes (`query`) are not added, and no item its
/// filter document (`filter_header`, the value of the list's filter header) excludes is
/// listed; none is added when
/// `add_writes` is false (the page then only loses the records the session deleted and, for
/// a list of [`ListShape::own_records_only`], those not in its store).
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge_into_moment(
    body: &mut Value,
    shape: &ListShape,
    ty: &str,
    pk: &str,
    ns: &Namespace,
    params: &[(String, String)],
    query: &[(String, String)],
    base: Option<&ListBase>,
    run: Option<&str>,
    add_writes: bool,
    principal: Option<&str>,
    filter_header: Option<&str>,
    gone: Option<&HashSet<String>>,
) -> Merged {
    // A session that never wrote the type has nothing to merge, unless every recording listed
    // only its own records: then it has nothing of the recorded page either.
    let empty = TypeStore::default();
    let store = match ns.type_store(ty) {
        Some(store) => store,
        None if shape.own_records_only => &empty,
        None => return Merged::default(),
    };
    let recorded_total = shape
        .envelope
        .iter()
        .find(|f| f.meaning == EnvelopeMeaning::Total)
        .and_then(|f| json_pointer_get(body, &f.pointer))
        .and_then(Value::as_i64);
    let Some(Value::Array(items)) = json_pointer_get_mut(body, &shape.items_pointer) else {
        return Merged::default();
    };
    let before = items.len() as i64;
    // A fixture record on the recorded page or merged in (see `Merged::fixture`).
    let mut fixture = false;
    let mut changed = false;
    let mut present = HashSet::new();
    // A session holding records no recording made (a fixture set's, or creates the twin
    // answered itself) lives in a world of its own: a record its recording deleted later is
    // not in it, as its own read answers 404. Listed on a recorded page, it would take the
    // place of the session's records, which paging then never shows.
    let own_world = add_writes
        && (store.has_synth_writes() || store.live.values().any(|e| e.origin == Origin::Fixture));
    items.retain(|item| {
        let keep = item.get(pk).and_then(scalar_key).is_none_or(|k| {
            // The recorded run's own record of a create this session made stands for the
            // session's record (see below), and, deleted, for the deleted record too.
            let counterpart = run.and_then(|run| {
                ns.counterparts
                    .get(&(ty.to_string(), run.to_string(), k.clone()))
            });
            let counterpart_deleted =
                counterpart.is_some_and(|mine| store.deleted.contains_key(mine));
            // Where every recording listed only its own records, another recording's record
            // is not this session's.
            let foreign = shape.own_records_only
                && !store.live.contains_key(&k)
                && !counterpart.is_some_and(|mine| store.live.contains_key(mine));
            let stale = own_world
                && gone.is_some_and(|g| g.contains(&k))
                && !store.live.contains_key(&k)
                && !counterpart.is_some_and(|mine| store.live.contains_key(mine));
            !store.deleted.contains_key(&k) && !counterpart_deleted && !foreign && !stale
        });
        changed |= !keep;
        keep
    });
    for item in items.iter_mut() {
        if let Some(mut k) = item.get(pk).and_then(scalar_key) {
            // The recorded run's own record of a create this session made (answered from
            // another run) stands for the session's record.
            if let Some(run) = run
                && let Some(mine) =
                    ns.counterparts
                        .get(&(ty.to_string(), run.to_string(), k.clone()))
                && store.live.contains_key(mine)
                && !present.contains(mine)
            {
                k = mine.clone();
            }
            if let Some(e) = store.live.get(&k) {
                fixture |= e.origin == Origin::Fixture;
                // Only a page that takes the session's writes shows its versions of the records.
                if add_writes && *e.value != *item {
                    *item = (*e.value).clone();
                    changed = true;
                }
            }
            present.insert(k);
        }
    }
    // A filter document the request sent holds for the recorded page's items too, as the
    // session holds them: the recording may have answered another document, or none.
    let filter_doc = filter_document(filter_header);
    if let Some(doc) = &filter_doc {
        let len = items.len();
        items.retain(|item| passes_filter_document(item, doc));
        changed |= items.len() != len;
    }
    // A recorded page that paging (an offset, or a `Link` next parameter) put past the end
    // of its collection (no items) stays past the end: the session's own records sit on the
    // earlier pages.
    let paged = match &shape.pagination {
        Pagination::LimitOffset { offset, .. } => q_num(query, offset).is_some_and(|n| n > 0),
        Pagination::LinkHeader {
            next_param,
            positional: true,
            ..
        } => q_num(query, next_param).is_some_and(|n| n > 0),
        Pagination::LinkHeader {
            next_param,
            numbered: true,
            ..
        } => q_num(query, next_param).is_some_and(|n| n > 1),
        Pagination::LinkHeader { next_param, .. } => q(query, next_param).is_some(),
        _ => false,
    };
    let past_end = before == 0 && paged;
    // A page past the first of an offset-paged list: the records its run listed on its other
    // pages stay there (merged in here they showed twice while paging through).
    let elsewhere = match (&shape.pagination, run, base) {
        (Pagination::LimitOffset { offset, .. }, Some(run), Some(b))
            if q_num(query, offset).is_some_and(|n| n > 0) =>
        {
            b.run_pages.get(run)
        }
        _ => None,
    };
    let removed = before - items.len() as i64;
    // The recorded records a session replayed into its store (a create answered from the
    // recordings keeps the recorded key) are members of the recorded collection this page
    // counted in its total: merged in from another page, they move items, not the total.
    let recorded_member = |k: &str, e: &Entity| {
        e.origin == Origin::Replayed && base.is_some_and(|b| b.members.contains(k))
    };
    let mut counted = 0i64;
    let extras: Vec<Value> = store
        .live
        .iter()
        .filter(|(k, e)| {
            add_writes
                && !past_end
                && !present.contains(*k)
                && !elsewhere.is_some_and(|keys| keys.contains(k.as_str()))
                && belongs(e, params, shape.parent_member.as_deref())
                && in_id_window(
                    k,
                    &shape.pagination,
                    query,
                    base.is_none_or(|b| b.descending),
                )
                && above_lower_bounds(k, shape, query)
                // The recorded page answered the request's filters: so do the records added.
                && passes_query_filters(&e.value, shape, query)
                && filter_doc.as_ref().is_none_or(|d| passes_filter_document(&e.value, d))
                && !hidden(&e.value, shape, query)
                && listed_to(shape, store, k, principal)
        })
        .map(|(k, e)| {
            if !recorded_member(k, e) {
                counted += 1;
                fixture |= e.origin == Origin::Fixture;
            }
            (*e.value).clone()
        })
        .collect();
    if !extras.is_empty() {
        changed = true;
        if base.is_some_and(|b| b.descending) {
            let tail = std::mem::take(items);
            items.extend(extras.into_iter().rev());
            items.extend(tail);
        } else {
            items.extend(extras);
        }
    }
    // A recorded page that held its whole collection counts what it now holds; one page of
    // several counts the session's own records on top of the recorded total.
    let delta = if recorded_total.is_none_or(|t| t == before) {
        items.len() as i64 - before
    } else {
        counted - removed
    };
    // A page never grows past the size the request asked for: merged writes push recorded items
    // off this page (they still count in the total), as they would on the real API.
    let mut cut = false;
    if let Some(size) = requested_page_size(&shape.pagination, query)
        && items.len() > size
    {
        items.truncate(size);
        cut = true;
        changed = true;
    }
    // Where the page says where it starts (an offset) and the collection's size, whether more
    // follow is what the two say once the session's writes are counted.
    let shown = items.len() as i64;
    let more_after = match (&shape.pagination, recorded_total) {
        (Pagination::LimitOffset { offset, .. }, Some(t)) if delta != 0 => {
            let start = q_num(query, offset).map_or(0, |n| i64::try_from(n).unwrap_or(i64::MAX));
            Some(cut || start.saturating_add(shown) < (t + delta).max(0))
        }
        _ => cut.then_some(true),
    };
    if delta != 0 || cut {
        for f in &shape.envelope {
            let Some(slot) = json_pointer_get_mut(body, &f.pointer) else {
                continue;
            };
            match f.meaning {
                EnvelopeMeaning::Total if delta != 0 => {
                    if let Some(n) = slot.as_i64() {
                        *slot = Value::Number(Number::from((n + delta).max(0)));
                    }
                }
                EnvelopeMeaning::HasMore => {
                    if let Some(more) = more_after {
                        *slot = Value::Bool(more);
                    }
                }
                _ => {}
            }
        }
    }
    // Fixture records pushed off the page still count in its total, where it states one.
    let fixture_on_page = json_pointer_get(body, &shape.items_pointer)
        .and_then(Value::as_array)
        .is_some_and(|items| {
            items.iter().any(|i| {
                i.get(pk)
                    .and_then(scalar_key)
                    .and_then(|k| store.live.get(&k))
                    .is_some_and(|e| e.origin == Origin::Fixture)
            })
        });
    Merged {
        changed,
        fixture: fixture_on_page || (fixture && recorded_total.is_some()),
    }
}

/// What merging a session's writes into a recorded page did.
#[derive(Default)]
pub(crate) struct Merged {
    /// The page differs from the recorded one.
    pub changed: bool,
    /// A record the fixture set seeded is on the page or counted in its total.
    pub fixture: bool,
}

/// The page size the request states in the route's pagination style, if it states one.
fn requested_page_size(p: &Pagination, query: &[(String, String)]) -> Option<usize> {
    let name = match p {
        Pagination::LimitOffset { limit, .. } => Some(limit),
        Pagination::PagePerPage { per_page, .. } => Some(per_page),
        Pagination::Cursor { limit, .. } | Pagination::LinkHeader { limit, .. } => limit.as_ref(),
        Pagination::None => None,
    }?;
    q_num(query, name)
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| *n > 0)
}

/// One list request.
pub(crate) struct ListRequest<'a> {
    pub shape: &'a ListShape,
    pub ty: &'a str,
    pub pk: &'a str,
    pub path: &'a str,
    pub params: &'a [(String, String)],
    pub query: &'a [(String, String)],
    /// The raw filter-document header value, when the route has one and the request sent it.
    pub filter_header: Option<&'a str>,
    /// The twin's own origin, for `Link` headers.
    pub origin: Option<&'a str>,
    /// The requesting principal's key (`None` without credentials), for
    /// [`ListShape::principal_records_only`].
    pub principal: Option<&'a str>,
}

/// What a served page adds beyond the body.
pub(crate) struct ListPage {
    pub link: Option<String>,
    /// A record the fixture set seeded is on the page or counted in its total: the answer is
    /// served from a fixture entity.
    pub fixture: bool,
}

/// Two item values in a learned sort's order: numbers as numbers, strings as text; anything
/// else (a missing field, mixed types) ties.
fn sort_cmp(a: Option<&Value>, b: Option<&Value>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => x
            .as_f64()
            .zip(y.as_f64())
            .and_then(|(x, y)| x.partial_cmp(&y))
            .unwrap_or(std::cmp::Ordering::Equal),
        (Some(Value::String(x)), Some(Value::String(y))) => x.cmp(y),
        _ => std::cmp::Ordering::Equal,
    }
}

fn q<'a>(query: &'a [(String, String)], name: &str) -> Option<&'a str> {
    query
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn q_num(query: &[(String, String)], name: &str) -> Option<u64> {
    q(query, name).and_then(|v| v.trim().parse::<u64>().ok())
}

/// Serve a list request into the rendered variant `body` (its envelope is kept; items, counts
/// and paging fields are replaced).
pub(crate) fn serve_list(
    req: ListRequest<'_>,
    base: Option<&ListBase>,
    ns: &Namespace,
    body: &mut Value,
) -> ListPage {
    let empty = TypeStore::default();
    let store = ns.type_store(req.ty).unwrap_or(&empty);
    let descending = base.is_some_and(|b| b.descending);

    // 1. The collection: recorded items with session overrides, then session extras.
    let mut seen: HashSet<&str> = HashSet::new();
    let mut items: Vec<(&Value, bool)> = Vec::new();
    // Where every recording listed only its own records, no recorded item is this session's
    // but the ones in its store, which the extras below list.
    let recorded = base
        .filter(|_| !req.shape.own_records_only)
        .and_then(|b| b.by_path.get(req.path));
    if let Some(recorded) = recorded {
        for (k, item) in recorded {
            seen.insert(k.as_str());
            if store.deleted.contains_key(k) {
                continue;
            }
            match store.live.get(k) {
                Some(e) => items.push((&e.value, e.origin == crate::namespace::Origin::Fixture)),
                None => items.push((item.as_ref(), false)),
            }
        }
    }
    let extras: Vec<(&Value, bool)> = store
        .live
        .iter()
        .filter(|(k, e)| {
            !seen.contains(k.as_str())
                && belongs(e, req.params, req.shape.parent_member.as_deref())
                && listed_to(req.shape, store, k, req.principal)
        })
        .map(|(_, e)| {
            (
                e.value.as_ref(),
                e.origin == crate::namespace::Origin::Fixture,
            )
        })
        .collect();
    if descending {
        let mut merged: Vec<(&Value, bool)> = extras.into_iter().rev().collect();
        merged.extend(items);
        items = merged;
    } else {
        items.extend(extras);
    }

    // 2. Equality and set filters from the query (a value the list hides unless its filter is
    // sent stays hidden), then the filter-document header.
    items.retain(|(it, _)| {
        passes_query_filters(it, req.shape, req.query)
            && !hidden(it, req.shape, req.query)
            && passes_searches(it, req.shape, req.query)
    });
    if let Some(doc) = filter_document(req.filter_header) {
        items.retain(|(it, _)| passes_filter_document(it, &doc));
    }
    // A window bounded on both sides (`min_id` and `max_id`) is filtered here; one-sided
    // windows are paged below.
    if let Pagination::LinkHeader {
        next_param,
        prev_param: Some(prev_param),
        ..
    } = &req.shape.pagination
        && q(req.query, next_param).is_some()
        && q(req.query, prev_param).is_some()
    {
        items.retain(|(it, _)| {
            it.get(req.pk)
                .and_then(scalar_key)
                .is_none_or(|k| in_id_window(&k, &req.shape.pagination, req.query, descending))
        });
    }
    if !req.shape.lower_bounds.is_empty() {
        items.retain(|(it, _)| {
            it.get(req.pk)
                .and_then(scalar_key)
                .is_none_or(|k| above_lower_bounds(&k, req.shape, req.query))
        });
    }
    // A sort the request names, as the recordings ordered such answers. Equal values keep
    // the store's order (the order they were written in), and a descending sort reverses it
    // with the rest: records stamped within one clock tick list newest first, as their
    // creation order says they are.
    if let Some(order) = req
        .shape
        .sorts
        .iter()
        .find(|s| q(req.query, &s.param) == Some(s.value.as_str()))
    {
        items.sort_by(|(a, _), (b, _)| sort_cmp(a.get(&order.field), b.get(&order.field)));
        if order.descending {
            items.reverse();
        }
    }
    let total = items.len();

    // 3. Paging in the recorded style.
    let mut link = None;
    let (start, end, page_no, page_size) = match &req.shape.pagination {
        Pagination::None => (0, total, 1, total),
        Pagination::LimitOffset {
            limit,
            offset,
            default_limit,
        } => {
            let lim = q_num(req.query, limit)
                .or(*default_limit)
                .map_or(total, |l| l as usize);
            let off = (q_num(req.query, offset).unwrap_or(0) as usize).min(total);
            let end = off.saturating_add(lim).min(total);
            (off, end, off.checked_div(lim).map_or(1, |p| p + 1), lim)
        }
        Pagination::PagePerPage {
            page,
            per_page,
            default_per_page,
        } => {
            let pp = q_num(req.query, per_page)
                .or(*default_per_page)
                .map_or(total.max(1), |l| (l as usize).max(1));
            let p = q_num(req.query, page).unwrap_or(1).max(1) as usize;
            let start = (p - 1).saturating_mul(pp).min(total);
            (start, start.saturating_add(pp).min(total), p, pp)
        }
        Pagination::Cursor {
            after,
            before,
            limit,
        } => {
            let lim = limit
                .as_deref()
                .and_then(|l| q_num(req.query, l))
                .map_or(total, |l| l as usize);
            let pos = |id: &str| {
                items
                    .iter()
                    .position(|(it, _)| it.get(req.pk).and_then(scalar_key).as_deref() == Some(id))
            };
            if let Some(a) = q(req.query, after) {
                let s = pos(a).map_or(total, |i| i + 1);
                (s, s.saturating_add(lim).min(total), 1, lim)
            } else if let Some(b) = before.as_deref().and_then(|b| q(req.query, b)) {
                let e = pos(b).unwrap_or(0);
                (e.saturating_sub(lim), e, 1, lim)
            } else {
                (0, lim.min(total), 1, lim)
            }
        }
        Pagination::LinkHeader {
            next_param,
            limit,
            numbered: true,
            ..
        } => {
            // Pages by number from 1: `prev` and `next` one page either side, `last` the
            // collection's last page and `first` page 1, all in `next_param`.
            let lim = limit
                .as_deref()
                .and_then(|l| q_num(req.query, l))
                .filter(|l| *l > 0)
                .map_or(total.max(1), |l| usize::try_from(l).unwrap_or(usize::MAX));
            let page = q_num(req.query, next_param).filter(|p| *p > 0).unwrap_or(1);
            let index = usize::try_from(page - 1).unwrap_or(usize::MAX);
            let s = index.saturating_mul(lim).min(total);
            let e = s.saturating_add(lim).min(total);
            let last = total.div_ceil(lim).max(1) as u64;
            if let Some(origin) = req.origin {
                let base_url = format!("{origin}{}", req.path);
                let paging = |k: &str| k == next_param;
                let mut parts = Vec::new();
                let mut push = |n: u64, rel: &str| {
                    parts.push(page_link(
                        &base_url,
                        req.query,
                        paging,
                        [(next_param.clone(), n.to_string())],
                        rel,
                    ));
                };
                if page > 1 {
                    push(page - 1, "prev");
                }
                if e < total {
                    push(page + 1, "next");
                    push(last, "last");
                }
                if page > 1 {
                    push(1, "first");
                }
                if !parts.is_empty() {
                    link = Some(parts.join(", "));
                }
            }
            (s, e, usize::try_from(page).unwrap_or(usize::MAX), lim)
        }
        Pagination::LinkHeader {
            next_param,
            limit,
            positional: true,
            ..
        } => {
            // Pages by position: `next` one page on, `prev` one page back (from the position
            // asked for, even past the end, as the recordings show), both in `next_param`.
            let lim = limit
                .as_deref()
                .and_then(|l| q_num(req.query, l))
                .map_or(total, |l| l as usize);
            let asked = q_num(req.query, next_param).unwrap_or(0);
            let s = usize::try_from(asked).unwrap_or(usize::MAX).min(total);
            let e = s.saturating_add(lim).min(total);
            if let Some(origin) = req.origin {
                let base_url = format!("{origin}{}", req.path);
                let paging = |k: &str| k == next_param;
                let mut parts = Vec::new();
                if e < total {
                    parts.push(page_link(
                        &base_url,
                        req.query,
                        paging,
                        [(next_param.clone(), e.to_string())],
                        "next",
                    ));
                }
                if asked > 0 && lim > 0 {
                    let back = asked.saturating_sub(lim as u64);
                    parts.push(page_link(
                        &base_url,
                        req.query,
                        paging,
                        [(next_param.clone(), back.to_string())],
                        "prev",
                    ));
                }
                if !parts.is_empty() {
                    link = Some(parts.join(", "));
                }
            }
            (s, e, s.checked_div(lim).map_or(1, |p| p + 1), lim)
        }
        Pagination::LinkHeader {
            next_param,
            prev_param,
            limit,
            ..
        } => {
            let lim = limit
                .as_deref()
                .and_then(|l| q_num(req.query, l))
                .map_or(total, |l| l as usize);
            let key_of = |it: &Value| it.get(req.pk).and_then(scalar_key);
            let after_pos = |id: &str| -> usize {
                if let Some(i) = items
                    .iter()
                    .position(|(it, _)| key_of(it).as_deref() == Some(id))
                {
                    return i + 1;
                }
                // Not in the collection: compare numerically in list order.
                let n = id.parse::<f64>().ok();
                items
                    .iter()
                    .position(|(it, _)| {
                        let k = key_of(it).and_then(|k| k.parse::<f64>().ok());
                        match (k, n) {
                            (Some(k), Some(n)) => {
                                if descending {
                                    k < n
                                } else {
                                    k > n
                                }
                            }
                            _ => false,
                        }
                    })
                    .unwrap_or(total)
            };
            let (s, e) = if let Some(max) = q(req.query, next_param) {
                let s = after_pos(max);
                (s, s.saturating_add(lim).min(total))
            } else if let Some(min) = prev_param.as_deref().and_then(|p| q(req.query, p)) {
                let e = after_pos(min).saturating_sub(1).min(total);
                let e = items
                    .iter()
                    .position(|(it, _)| key_of(it).as_deref() == Some(min))
                    .unwrap_or(e);
                (e.saturating_sub(lim), e)
            } else {
                (0, lim.min(total))
            };
            if let Some(origin) = req.origin
                && s < e
            {
                let base_url = format!("{origin}{}", req.path);
                let paging = |k: &str| k == next_param || prev_param.as_deref() == Some(k);
                let mut parts = Vec::new();
                if e < total
                    && let Some(last) = key_of(items[e - 1].0)
                {
                    parts.push(page_link(
                        &base_url,
                        req.query,
                        paging,
                        [(next_param.clone(), last)],
                        "next",
                    ));
                }
                if let (Some(prev), Some(first)) = (prev_param, key_of(items[s].0)) {
                    parts.push(page_link(
                        &base_url,
                        req.query,
                        paging,
                        [(prev.clone(), first)],
                        "prev",
                    ));
                }
                if !parts.is_empty() {
                    link = Some(parts.join(", "));
                }
            }
            (s, e, 1, lim)
        }
    };
    let start = start.min(total);
    let end = end.clamp(start, total);
    let counts_total = req
        .shape
        .envelope
        .iter()
        .any(|f| matches!(f.meaning, EnvelopeMeaning::Total | EnvelopeMeaning::Pages));
    let shown = if counts_total {
        &items[..]
    } else {
        &items[start..end]
    };
    let fixture = shown.iter().any(|(_, seeded)| *seeded);
    let page: Vec<Value> = items[start..end]
        .iter()
        .map(|(v, _)| (*v).clone())
        .collect();
    let has_more = end < total;

    if let Some(slot) = json_pointer_get_mut(body, &req.shape.items_pointer) {
        *slot = Value::Array(page);
    }
    for f in &req.shape.envelope {
        let Some(slot) = json_pointer_get_mut(body, &f.pointer) else {
            continue;
        };
        let as_like = |n: u64, slot: &Value| -> Value {
            if slot.is_string() {
                Value::String(n.to_string())
            } else {
                Value::Number(Number::from(n))
            }
        };
        match f.meaning {
            EnvelopeMeaning::Total => *slot = as_like(total as u64, slot),
            EnvelopeMeaning::HasMore => *slot = Value::Bool(has_more),
            EnvelopeMeaning::Page => *slot = as_like(page_no as u64, slot),
            EnvelopeMeaning::PageSize => *slot = as_like(page_size as u64, slot),
            EnvelopeMeaning::Pages => {
                let pages = if page_size == 0 {
                    1
                } else {
                    total.div_ceil(page_size).max(1)
                };
                *slot = as_like(pages as u64, slot)
            }
        }
    }
    ListPage { link, fixture }
}

/// A `Link` entry of a served page: the request's own parameters (its filters and page size,
/// as recorded links repeat them), those `replaced` names left out, then `to`.
fn page_link(
    base: &str,
    query: &[(String, String)],
    replaced: impl Fn(&str) -> bool,
    to: impl IntoIterator<Item = (String, String)>,
    rel: &str,
) -> String {
    let mut pairs: Vec<(String, String)> = query
        .iter()
        .filter(|(k, _)| !replaced(k))
        .cloned()
        .collect();
    pairs.extend(to);
    link_entry(base, pairs, rel)
}

/// One `<url>; rel="…"` entry of a `Link` header.
struct LinkEntry {
    url: String,
    rel: String,
}

fn parse_link_header(value: &str) -> Vec<LinkEntry> {
    let mut out = Vec::new();
    for part in value.split(',') {
        let part = part.trim();
        let Some(rest) = part.strip_prefix('<') else {
            continue;
        };
        let Some((url, params)) = rest.split_once('>') else {
            continue;
        };
        let rel = params
            .split(';')
            .filter_map(|p| p.trim().strip_prefix("rel="))
            .map(|r| r.trim_matches('"').to_string())
            .next()
            .unwrap_or_default();
        out.push(LinkEntry {
            url: url.to_string(),
            rel,
        });
    }
    out
}

/// Rebuild the `Link` header of an answer that is not a verbatim recorded page (a rendered
/// variant, or a recorded page this session's writes changed).
///
/// A recorded `Link` names the recorded request's path and the recorded page's first/last
/// item ids; served as is, it points a client at a page unrelated to the one it got — and a
/// client that follows `prev`/`next` until no link is left loops forever when every page
/// carries the same link. So each entry is re-pointed at this request's path and query, its
/// paging parameter (the one whose recorded value was an item key of the page) set to the
/// served page's last (`next`) or first (other rels) item key; where no recorded value is an
/// item key the page still shows (a rendered page), a parameter the route's pagination names
/// (`paging_params`: `max_id`, `since_id`) is. An entry is dropped when the page is empty, when
/// its paging parameter cannot be identified, or when it would not move past the request's
/// own value for that parameter: pagination always terminates. With `whole_list` (the
/// answer lists every item there is) a `next` entry is dropped too: no page follows.
#[allow(clippy::too_many_arguments)]
pub(crate) fn relink(
    link: &str,
    items: &[Value],
    (recorded_keys, paging_params): (&HashSet<String>, &[&str]),
    whole_list: bool,
    pk: &str,
    origin: Option<&str>,
    path: &str,
    query: &[(String, String)],
) -> Option<String> {
    if items.is_empty() {
        return None;
    }
    let entries = parse_link_header(link);
    // Paging parameter of each entry: a query parameter whose recorded value was an item key.
    let paging: Vec<Option<String>> = entries
        .iter()
        .map(|e| {
            let (_, q) = e.url.split_once('?')?;
            let q = crate::util::parse_query(q);
            q.iter()
                .find(|(_, v)| recorded_keys.contains(v))
                .or_else(|| q.iter().find(|(k, _)| paging_params.contains(&k.as_str())))
                .map(|(k, _)| k.clone())
        })
        .collect();
    let paging_names: HashSet<&str> = paging.iter().flatten().map(String::as_str).collect();
    let key_of = |it: &Value| it.get(pk).and_then(scalar_key);
    let (Some(first), Some(last)) = (
        items.first().and_then(key_of),
        items.last().and_then(key_of),
    ) else {
        return None;
    };
    let base = match origin {
        Some(o) => format!("{o}{path}"),
        None => path.to_string(),
    };
    let mut parts = Vec::new();
    for (e, param) in entries.iter().zip(&paging) {
        let Some(param) = param else {
            continue;
        };
        if whole_list && e.rel == "next" {
            continue;
        }
        let value = if e.rel == "next" { &last } else { &first };
        if q(query, param) == Some(value.as_str()) {
            // No progress: following this link would return this very page again.
            continue;
        }
        parts.push(page_link(
            &base,
            query,
            |k| paging_names.contains(k),
            [(param.clone(), value.clone())],
            &e.rel,
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// One `<base?query>; rel="…"` entry, its query parameters sorted by name and escaped.
fn link_entry(base: &str, mut pairs: Vec<(String, String)>, rel: &str) -> String {
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    let qs: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}={}", url_escape(k), url_escape(v)))
        .collect();
    format!("<{base}?{}>; rel=\"{rel}\"", qs.join("&"))
}

/// [`relink`] for a list paged by position (`LinkHeader::positional`): a recorded link's
/// positions do not name items, so each entry keeps the parameters it recorded (`offset`,
/// `limit`) and is re-pointed at this request's path, the request's other parameters kept.
pub(crate) fn relink_positions(
    link: &str,
    origin: Option<&str>,
    path: &str,
    query: &[(String, String)],
) -> Option<String> {
    let base = match origin {
        Some(o) => format!("{o}{path}"),
        None => path.to_string(),
    };
    let mut parts = Vec::new();
    for e in parse_link_header(link) {
        let recorded = e
            .url
            .split_once('?')
            .map(|(_, q)| crate::util::parse_query(q))
            .unwrap_or_default();
        if recorded.is_empty() {
            continue;
        }
        let replaced: Vec<String> = recorded.iter().map(|(k, _)| k.clone()).collect();
        parts.push(page_link(
            &base,
            query,
            |k| replaced.iter().any(|r| r == k),
            recorded,
            &e.rel,
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Percent-encode a query component (unreserved characters stay).
fn url_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'[' | b']') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
