//! List shapes: where a list route's items are, how it pages and how it filters.
//!
//! Pagination is read from the requests and responses, first match wins:
//! 1. `Link` response headers (RFC 8288) → `LinkHeader`, with the parameters the `next`/`prev`
//!    links carry (`max_id`, `min_id`/`since_id`), or an `offset` both carry (`positional`);
//! 2. `starting_after`/`ending_before` (or `after`/`before`/`cursor`) query parameters → `Cursor`;
//! 3. `limit` and `offset` → `LimitOffset`;
//! 4. `page` (with `page_size`/`per_page`), or a `page`+`pages` envelope → `PagePerPage`.
//!
//! Filters are query parameters whose value equals the same-named field of every returned item;
//! set filters are (possibly repeated) parameters whose values keep or drop the items whose
//! differently named field takes one of them (`types[]` and `exclude_types[]` over `type`);
//! the filter header is a request header whose values are JSON objects (`X-Filter`); envelope
//! fields are top-level counters of the body (`total`, `results`, `pages`, `page`, `has_more`).
//! What a route's own recordings leave unknown (a size parameter no request sent, a default
//! page size no full page showed, a filter header no request sent) is taken from the other
//! list routes of its origin when at least two agree and none disagrees ([`shared_paging`]).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{
    EnvelopeField, EnvelopeMeaning, FilterWildcard, HiddenValue, ListShape, Pagination,
    SearchFilter, SetFilter, SortOrder,
};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::state::RoutePlan;
use crate::values;

const NEXT_PARAMS: &[&str] = &["max_id", "until_id", "before", "page", "offset", "cursor"];
const PREV_PARAMS: &[&str] = &["min_id", "since_id", "after"];
/// The page-size parameters of [`PAGING_PARAMS`].
const SIZE_PARAMS: &[&str] = &["limit", "page_size", "per_page", "pageSize"];
const PAGING_PARAMS: &[&str] = &[
    "limit",
    "offset",
    "page",
    "page_size",
    "per_page",
    "pageSize",
    "starting_after",
    "ending_before",
    "after",
    "before",
    "cursor",
    "max_id",
    "min_id",
    "since_id",
    "until_id",
];

/// Parse a `Link` header into (rel, query parameter names of its URL).
pub fn parse_link_header(value: &str) -> Vec<(String, Vec<String>)> {
    link_params(value)
        .into_iter()
        .map(|(rel, params)| (rel, params.into_iter().map(|(n, _)| n).collect()))
        .collect()
}

/// Parse a `Link` header into (rel, query parameters of its URL, decoded).
fn link_params(value: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out = Vec::new();
    for part in value.split(',') {
        let Some(start) = part.find('<') else {
            continue;
        };
        let Some(end) = part[start..].find('>') else {
            continue;
        };
        let url = &part[start + 1..start + end];
        let rest = &part[start + end + 1..];
        let rel = rest
            .split(';')
            .filter_map(|p| p.trim().strip_prefix("rel="))
            .map(|r| r.trim_matches('"').to_string())
            .next()
            .unwrap_or_default();
        let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
        let params = form_urlencoded::parse(query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        out.push((rel, params));
    }
    out
}

/// How the recorded `next` links page, when not by item ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinkPaging {
    /// By position (`LinkHeader::positional`).
    Positions,
    /// By page number (`LinkHeader::numbered`).
    Numbers,
}

/// How the recorded `next` links page: a `next` link whose `next_param` is a number names the
/// request's own value of it plus the page's item count (0 when it sent none: a position), or
/// plus one (1 when it sent none: a page number), or the key of its page's last item, which is
/// what an id cursor (`max_id`) names. The reading more links fit wins (ids on a tie); where
/// every link fits both positions and numbers (a first page of two items asked for no page
/// names `2` either way), a parameter named `page` counts pages. (The caller also wants no `min_id`-like `prev`
/// parameter: a one-item page after no cursor can name `max_id=1` by coincidence.)
fn link_paging(
    ok: &[&Obs<'_>],
    next_param: &str,
    items_pointer: &str,
    pk: &str,
) -> Option<LinkPaging> {
    let (mut by_position, mut by_number, mut by_id) = (0u32, 0u32, 0u32);
    for o in ok {
        for header in o.ex.response.headers.get("link").into_iter().flatten() {
            for (rel, params) in link_params(header) {
                if rel != "next" {
                    continue;
                }
                let Some(next) = params.iter().find(|(n, _)| n == next_param).map(|(_, v)| v)
                else {
                    continue;
                };
                let body = o.resp_json();
                let items = body
                    .as_ref()
                    .and_then(|b| b.pointer(items_pointer))
                    .and_then(Value::as_array);
                let Some(items) = items else {
                    continue;
                };
                if items
                    .last()
                    .and_then(|it| it.get(pk))
                    .and_then(values::scalar_key)
                    .as_deref()
                    == Some(next)
                {
                    by_id += 1;
                }
                let Ok(next) = next.parse::<u64>() else {
                    continue;
                };
                let own = o.query_value(next_param).map(|v| v.parse::<u64>().ok());
                if let Some(own) = own.unwrap_or(Some(0))
                    && own.checked_add(items.len() as u64) == Some(next)
                {
                    by_position += 1;
                }
                if let Some(own) = own.unwrap_or(Some(1))
                    && own.checked_add(1) == Some(next)
                {
                    by_number += 1;
                }
            }
        }
    }
    // Small integer keys can coincide with a position or a page number: the reading most
    // links fit wins, ids on a tie.
    if by_id >= by_position.max(by_number) {
        return None;
    }
    Some(match by_number.cmp(&by_position) {
        std::cmp::Ordering::Greater => LinkPaging::Numbers,
        std::cmp::Ordering::Less => LinkPaging::Positions,
        std::cmp::Ordering::Equal if next_param == "page" => LinkPaging::Numbers,
        std::cmp::Ordering::Equal => LinkPaging::Positions,
    })
}

/// The list shape of a list route; `records` are the records of its type the engine lists
/// besides the recorded pages (a top-level collection's), when there are.
pub fn list_shape(
    group: &RouteGroup,
    plan: &RoutePlan,
    obs: &[Obs<'_>],
    records: Option<&BTreeMap<String, Value>>,
) -> Option<ListShape> {
    let items_pointer = plan.items_pointer.clone()?;
    let ok: Vec<&Obs<'_>> = group
        .obs
        .iter()
        .map(|i| &obs[*i])
        .filter(|o| values::is_2xx(o.status))
        .collect();

    let mut query_names: BTreeSet<String> = BTreeSet::new();
    for o in &ok {
        for (k, _) in &o.query {
            query_names.insert(k.clone());
        }
    }
    let has_q = |n: &str| query_names.contains(n);
    let first_q = |cands: &[&str]| cands.iter().find(|c| has_q(c)).map(|c| c.to_string());

    // Link headers.
    let mut next_names: Vec<String> = Vec::new();
    let mut prev_names: Vec<String> = Vec::new();
    for o in &ok {
        for v in o.ex.response.headers.get("link").into_iter().flatten() {
            for (rel, names) in parse_link_header(v) {
                let bucket = if rel == "next" {
                    &mut next_names
                } else if rel == "prev" || rel == "previous" {
                    &mut prev_names
                } else {
                    continue;
                };
                for n in names {
                    if !bucket.contains(&n) {
                        bucket.push(n);
                    }
                }
            }
        }
    }
    let pick = |names: &[String], prefs: &[&str]| -> Option<String> {
        prefs
            .iter()
            .find(|p| names.iter().any(|n| n == *p))
            .map(|p| p.to_string())
    };
    let limit_name = first_q(&["limit", "per_page", "page_size"]).or_else(|| {
        // The links themselves carry the page size parameter.
        next_names
            .iter()
            .chain(&prev_names)
            .find(|n| *n == "limit")
            .cloned()
    });
    let pagination = if !next_names.is_empty() || !prev_names.is_empty() {
        let next_param = pick(&next_names, NEXT_PARAMS)
            .or_else(|| next_names.iter().find(|n| *n != "limit").cloned())
            .unwrap_or_else(|| "max_id".to_string());
        let prev_param = pick(&prev_names, PREV_PARAMS);
        let pk = plan.primary_key.as_deref().unwrap_or("id");
        // A `prev` link with an id cursor of its own (`min_id`) pages by ids.
        let paging = prev_param
            .is_none()
            .then(|| link_paging(&ok, &next_param, &items_pointer, pk))
            .flatten();
        Pagination::LinkHeader {
            next_param,
            prev_param,
            limit: limit_name.clone(),
            positional: paging == Some(LinkPaging::Positions),
            numbered: paging == Some(LinkPaging::Numbers),
        }
    } else if let Some(after) = first_q(&["starting_after", "after", "cursor"]) {
        Pagination::Cursor {
            after,
            before: first_q(&["ending_before", "before"]),
            limit: limit_name.clone(),
        }
    } else if has_q("limit") && has_q("offset") {
        Pagination::LimitOffset {
            limit: "limit".into(),
            offset: "offset".into(),
            default_limit: None,
        }
    } else if has_q("page") || envelope_has(&ok, "page") && envelope_has(&ok, "pages") {
        let per_page = first_q(&["page_size", "per_page", "pageSize"])
            .unwrap_or_else(|| "page_size".to_string());
        let default_per_page = default_size(&ok, &items_pointer, &per_page);
        Pagination::PagePerPage {
            page: "page".into(),
            per_page,
            default_per_page,
        }
    } else {
        Pagination::None
    };

    // Equality filters, and the values of one that filter nothing (`state=all`).
    let mut filters = Vec::new();
    let mut filter_wildcards = Vec::new();
    for name in &query_names {
        if PAGING_PARAMS.contains(&name.as_str()) {
            continue;
        }
        let mut evidence = false;
        // Values sent whose answers listed other values of the field: a contradiction,
        // unless the value is one that lists them all.
        let mut unmatched: BTreeSet<&str> = BTreeSet::new();
        // Per such value: whether one answer listed two values of the field.
        let mut mixed: BTreeMap<&str, bool> = BTreeMap::new();
        let mut held: BTreeSet<String> = BTreeSet::new();
        for o in &ok {
            let Some(value) = o.query_value(name) else {
                continue;
            };
            let body = o.resp_json();
            let Some(Value::Array(items)) = body.as_ref().and_then(|b| b.pointer(&items_pointer))
            else {
                continue;
            };
            let mut seen: BTreeSet<String> = BTreeSet::new();
            for item in items {
                let text = item.get(name).and_then(filter_text);
                if text.as_deref() == Some(value) {
                    evidence = true;
                } else {
                    unmatched.insert(value);
                }
                seen.extend(text);
            }
            if unmatched.contains(value) {
                *mixed.entry(value).or_default() |= seen.len() >= 2;
            }
            held.extend(seen);
        }
        let wildcards: Vec<&str> = unmatched
            .iter()
            .copied()
            .filter(|v| mixed.get(v) == Some(&true) && !held.contains(*v))
            .collect();
        if evidence && wildcards.len() == unmatched.len() && wildcards.len() <= 1 {
            filters.push(name.clone());
            filter_wildcards.extend(wildcards.into_iter().map(|v| FilterWildcard {
                param: name.clone(),
                value: v.to_string(),
            }));
        }
    }

    // Filter header: a request header whose values are JSON objects.
    let mut filter_header = None;
    'outer: for o in group.obs.iter().map(|i| &obs[*i]) {
        for (name, vals) in &o.ex.request.headers {
            let lower = name.to_ascii_lowercase();
            if lower.starts_with("x-")
                && vals
                    .iter()
                    .any(|v| serde_json::from_str::<Value>(v).is_ok_and(|j| j.is_object()))
            {
                filter_header = Some(lower);
                break 'outer;
            }
        }
    }

    // Envelope fields.
    let mut envelope = Vec::new();
    if !items_pointer.is_empty()
        && let Some(Value::Object(map)) = ok.iter().find_map(|o| o.resp_json())
    {
        for (k, v) in &map {
            let meaning = match (k.as_str(), v) {
                (
                    "total" | "total_count" | "totalItems" | "count" | "results",
                    Value::Number(_),
                ) => Some(EnvelopeMeaning::Total),
                ("page" | "current_page", Value::Number(_)) => Some(EnvelopeMeaning::Page),
                ("pages" | "total_pages" | "totalPages", Value::Number(_)) => {
                    Some(EnvelopeMeaning::Pages)
                }
                ("has_more", Value::Bool(_)) => Some(EnvelopeMeaning::HasMore),
                ("page_size" | "per_page", Value::Number(_)) => Some(EnvelopeMeaning::PageSize),
                _ => None,
            };
            if let Some(meaning) = meaning {
                envelope.push(EnvelopeField {
                    pointer: format!("/{}", crate::observe::escape_token(k)),
                    meaning,
                });
            }
        }
    }

    let parent_member = parent_member(group, obs, &items_pointer);
    let pk = plan.primary_key.as_deref().unwrap_or("id");
    let listed: Vec<Scalars> = records
        .into_iter()
        .flat_map(BTreeMap::values)
        .map(|r| scalars(r, pk))
        .collect();
    let set_filters = set_filters(&ok, &items_pointer, pk, &listed, &query_names, &filters);
    // Parameters the paging or a filter already accounts for bound nothing else.
    let mut taken: Vec<&str> = filters.iter().map(String::as_str).collect();
    taken.extend(set_filters.iter().map(|f| f.param.as_str()));
    if let Pagination::LinkHeader {
        next_param,
        prev_param,
        limit,
        ..
    } = &pagination
    {
        taken.push(next_param);
        taken.extend(prev_param.as_deref());
        taken.extend(limit.as_deref());
    }
    let lower_bounds = lower_bounds(&ok, &items_pointer, pk, &query_names, &taken);
    let own_records_only = own_records_only(group, obs, &items_pointer, pk);
    let sorts = sorts(&ok, &items_pointer, &taken);
    taken.extend(sorts.iter().map(|o| o.param.as_str()));
    let search_filters = search_filters(&ok, &items_pointer, records, &query_names, &taken);
    let walk = PageWalk::new(&pagination, &sorts);
    let principal_records_only =
        own_records_only && principal_records_only(group, obs, &items_pointer, pk, walk.clone());
    let hidden_values = if own_records_only {
        hidden_values(group, obs, &items_pointer, pk, &filters, walk)
    } else {
        Vec::new()
    };
    Some(ListShape {
        items_pointer,
        pagination,
        filters,
        filter_header,
        envelope,
        parent_member,
        set_filters,
        lower_bounds,
        own_records_only,
        principal_records_only,
        hidden_values,
        filter_wildcards,
        sorts,
        search_filters,
        untouched_item: None,
    })
}

/// Query parameters that search the collection's text: every item an answer to a request
/// sending one listed holds the value sent, ignoring letter case, inside one of its top-level
/// strings, and a record of the collection (a recorded record of a top-level collection's
/// type, or an item an answer of the route to a request without the parameter listed) holding
/// it in none of them was left out (`q=admin` lists `admin` and `admin2`, not `alice`). The
/// fields are those that held the value in some listed item. A value shorter than two
/// characters, or an answer with an item holding it nowhere, rules the parameter out.
fn search_filters(
    ok: &[&Obs<'_>],
    items_pointer: &str,
    records: Option<&BTreeMap<String, Value>>,
    query_names: &BTreeSet<String>,
    taken: &[&str],
) -> Vec<SearchFilter> {
    let holding = |item: &Value, needle: &str| -> Vec<String> {
        item.as_object()
            .into_iter()
            .flatten()
            .filter(|(_, v)| {
                v.as_str()
                    .is_some_and(|t| t.to_lowercase().contains(needle))
            })
            .map(|(k, _)| k.clone())
            .collect()
    };
    let mut out = Vec::new();
    'names: for name in query_names {
        if PAGING_PARAMS.contains(&name.as_str()) || taken.contains(&name.as_str()) {
            continue;
        }
        let mut fields: BTreeSet<String> = BTreeSet::new();
        let mut needles: BTreeSet<String> = BTreeSet::new();
        // Items of answers to requests without the parameter: members of the collection.
        let mut others: Vec<Value> = Vec::new();
        for o in ok {
            let body = o.resp_json();
            let Some(Value::Array(items)) = body.as_ref().and_then(|b| b.pointer(items_pointer))
            else {
                continue;
            };
            let Some(value) = o.query_value(name) else {
                others.extend(items.iter().cloned());
                continue;
            };
            let needle = value.to_lowercase();
            if needle.chars().count() < 2 {
                continue 'names;
            }
            for item in items {
                let held = holding(item, &needle);
                if held.is_empty() {
                    continue 'names;
                }
                fields.extend(held);
            }
            if !items.is_empty() {
                needles.insert(needle);
            }
        }
        if fields.is_empty() {
            continue;
        }
        let left_out = records
            .into_iter()
            .flat_map(BTreeMap::values)
            .chain(&others)
            .any(|member| {
                needles.iter().any(|needle| {
                    member.is_object()
                        && !holding(member, needle).iter().any(|f| fields.contains(f))
                })
            });
        if left_out {
            out.push(SearchFilter {
                param: name.clone(),
                fields: fields.into_iter().collect(),
            });
        }
    }
    out
}

/// An item field's value as a filter compares it with a query value: a string as it is, a
/// number or a boolean in its JSON spelling.
fn filter_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Fewest neighbouring item pairs with different values a sort order is learned from.
const MIN_ORDERED_PAIRS: usize = 3;

/// Sort orders ([`ListShape::sorts`]): a query parameter value naming a top-level item field
/// (`name`, `-created_at`, `created_at:desc`), where every recorded answer to a request sending
/// it listed its items ordered by that field one way (numbers as numbers, strings as text),
/// with at least [`MIN_ORDERED_PAIRS`] neighbouring pairs of different values among them, so
/// the order is seen, not a chance of two items.
/// Paging and filter parameters (`taken`) order nothing.
fn sorts(ok: &[&Obs<'_>], items_pointer: &str, taken: &[&str]) -> Vec<SortOrder> {
    let levels = items_pointer.split('/').filter(|t| !t.is_empty()).count() + 2;
    // (parameter, value) → the field values, in listed order, of each answer's items.
    let mut answers: BTreeMap<(&str, &str), Vec<Vec<Value>>> = BTreeMap::new();
    // The answer before, as (session, named parameters): a page that adds a position
    // (`cursor`) to the same parameters in the same session continues its walk, one ordered
    // sequence, so its items extend the walk's column (the pairs across pages count too).
    let mut previous: Option<(&str, Vec<(&str, &str)>)> = None;
    for o in ok {
        let named: Vec<(&str, &str)> = o
            .query
            .iter()
            .filter(|(k, _)| !PAGING_PARAMS.contains(&k.as_str()) && !taken.contains(&k.as_str()))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let placed = o.query.iter().any(|(k, _)| is_position_name(k));
        let continues = placed
            && previous
                .as_ref()
                .is_some_and(|(session, before)| *session == o.session && *before == named);
        previous = Some((o.session, named.clone()));
        if named.is_empty() {
            continue;
        }
        let Some(body) = o.resp_json_levels(levels) else {
            previous = None;
            continue;
        };
        let Some(items) = body.pointer(items_pointer).and_then(Value::as_array) else {
            previous = None;
            continue;
        };
        for (param, value) in named {
            let Some(field) = sorted_field(value) else {
                continue;
            };
            let column: Vec<Value> = items
                .iter()
                .map(|it| it.get(field).cloned().unwrap_or(Value::Null))
                .collect();
            let columns = answers.entry((param, value)).or_default();
            match columns.last_mut() {
                Some(walk) if continues => walk.extend(column),
                _ => columns.push(column),
            }
        }
    }
    let mut out = Vec::new();
    for ((param, value), columns) in answers {
        let Some(field) = sorted_field(value) else {
            continue;
        };
        let mut ascending = true;
        let mut descending = true;
        // Neighbours in different places: two items in order are a coin's toss.
        let mut moved = 0usize;
        for column in &columns {
            for pair in column.windows(2) {
                match compare_scalars(&pair[0], &pair[1]) {
                    Some(std::cmp::Ordering::Less) => {
                        descending = false;
                        moved += 1;
                    }
                    Some(std::cmp::Ordering::Greater) => {
                        ascending = false;
                        moved += 1;
                    }
                    Some(std::cmp::Ordering::Equal) => {}
                    None => {
                        ascending = false;
                        descending = false;
                    }
                }
            }
        }
        if moved >= MIN_ORDERED_PAIRS && ascending != descending {
            out.push(SortOrder {
                param: param.to_string(),
                value: value.to_string(),
                field: field.to_string(),
                descending,
            });
        }
    }
    out
}

/// Whether a query parameter places a page in its collection (`cursor`, `offset`, `max_id`)
/// rather than choosing or sizing it.
fn is_position_name(name: &str) -> bool {
    NEXT_PARAMS.contains(&name)
        || PREV_PARAMS.contains(&name)
        || matches!(name, "starting_after" | "ending_before")
}

/// The field a sort value names: the value without a leading `-`/`+` and a trailing
/// `:asc`/`:desc`-like suffix, when what is left looks like a field name.
fn sorted_field(value: &str) -> Option<&str> {
    let name = value.trim_start_matches(['-', '+']);
    let name = name.split([':', ' ', ',']).next()?;
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    plain.then_some(name)
}

/// Two item values in order: numbers as numbers, strings as text; `None` for anything else
/// (a missing field, mixed types), which no sort order explains.
fn compare_scalars(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// [`ListShape::own_records_only`]: every successful answer of the route listed only records
/// its own recording session had written before it, and at least two sessions listed some in
/// an answer to a request without filters (no query parameter but paging ones).
/// A record is written by a session when a `POST` or `PUT` of that session answered it (2xx)
/// earlier: its key under `pk` at the answer's top level or one object below (`{"data":
/// {…}}`). An answer whose items cannot be read, or an item without a key, says the records
/// may come from elsewhere: no.
fn own_records_only(group: &RouteGroup, obs: &[Obs<'_>], items_pointer: &str, pk: &str) -> bool {
    // `obs` is sorted by session, then recorded order: a session's exchanges are contiguous.
    let listing = ok_listings(group, obs);
    // The items, and their scalars, sit this many containers down.
    let levels = items_pointer.split('/').skip(1).count() + 2;
    let mut sessions_listing: BTreeSet<&str> = BTreeSet::new();
    let mut written: BTreeSet<String> = BTreeSet::new();
    let mut cursor = crate::observe::SessionCursor::default();
    for at in listing {
        let session = obs[at].session;
        let (fresh, earlier) = cursor.advance(obs, at);
        if fresh {
            written.clear();
        }
        for o in &obs[earlier] {
            written.extend(written_keys(o, pk));
        }
        let Some(body) = obs[at].resp_json_levels(levels) else {
            return false;
        };
        let Some(items) = body.pointer(items_pointer).and_then(Value::as_array) else {
            return false;
        };
        for item in items {
            match item.get(pk).and_then(values::scalar_key) {
                Some(k) if written.contains(&k) => {}
                _ => return false,
            }
        }
        // A filtered answer (`?customer_id=…`) may list only the session's records because
        // of what it asked for: it can refute the rule but not support it.
        let filtered = obs[at]
            .query
            .iter()
            .any(|(k, _)| !PAGING_PARAMS.contains(&k.as_str()));
        if !items.is_empty() && !filtered {
            sessions_listing.insert(session);
        }
    }
    sessions_listing.len() >= 2
}

/// [`ListShape::principal_records_only`]: every successful answer with a principal listed only
/// records that principal had written in its session (as [`own_records_only`] reads writes),
/// and some answer that listed its whole collection ([`whole_collection`]) left out a record
/// another principal of the session had written and not deleted (a 2xx `DELETE` whose last
/// path segment is its key).
/// An item written without credentials, or by no one the session saw, says the rule does not
/// hold.
fn principal_records_only(
    group: &RouteGroup,
    obs: &[Obs<'_>],
    items_pointer: &str,
    pk: &str,
    mut walk: PageWalk<'_>,
) -> bool {
    let listing = ok_listings(group, obs);
    let levels = items_pointer.split('/').skip(1).count() + 2;
    // The session's live written keys, each with the principal whose write answered it.
    let mut writer: BTreeMap<String, Option<&str>> = BTreeMap::new();
    let mut left_out_another = false;
    let mut cursor = crate::observe::SessionCursor::default();
    for at in listing {
        let (fresh, earlier) = cursor.advance(obs, at);
        if fresh {
            writer.clear();
            walk.reset();
        }
        for o in &obs[earlier] {
            note_writes(&mut writer, o, pk);
        }
        let Some(me) = obs[at].principal.as_deref() else {
            continue;
        };
        let Some(body) = obs[at].resp_json_levels(levels) else {
            return false;
        };
        let Some(items) = body.pointer(items_pointer).and_then(Value::as_array) else {
            return false;
        };
        let mut listed = BTreeSet::new();
        for item in items {
            let Some(k) = item.get(pk).and_then(values::scalar_key) else {
                return false;
            };
            if writer.get(&k).copied().flatten() != Some(me) {
                return false;
            }
            listed.insert(k);
        }
        // A page (`?limit=2`) may leave a record out for want of room: only a listing of the
        // whole collection is evidence.
        if let Some(all) = walk.step(&obs[at], &listed) {
            left_out_another |= writer
                .iter()
                .any(|(k, w)| w.is_some_and(|w| w != me) && !all.contains(k));
        }
    }
    left_out_another
}

/// A walk through the pages of a list in one session: a first page (no position parameter)
/// and the pages after it (the same other parameters and a position: `cursor`, `offset`,
/// `page`). Once a page of it has room to spare, the walk has listed the whole collection
/// (see [`whole_page`]); a single answer with room to spare has too.
#[derive(Clone)]
struct PageWalk<'p> {
    pagination: &'p Pagination,
    sorts: &'p [SortOrder],
    /// The walk under way.
    open: Option<OpenWalk>,
}

/// A walk under way: its pages' other parameters, and every key listed so far.
type OpenWalk = (Vec<(String, String)>, BTreeSet<String>);

impl<'p> PageWalk<'p> {
    fn new(pagination: &'p Pagination, sorts: &'p [SortOrder]) -> PageWalk<'p> {
        PageWalk {
            pagination,
            sorts,
            open: None,
        }
    }

    /// Another session begins.
    fn reset(&mut self) {
        self.open = None;
    }

    /// Whether `name` places a page in the collection rather than choosing or sizing it.
    fn is_position(&self, name: &str) -> bool {
        let learned: [Option<&str>; 2] = match self.pagination {
            Pagination::LimitOffset { offset, .. } => [Some(offset), None],
            Pagination::PagePerPage { page, .. } => [Some(page), None],
            Pagination::Cursor { after, before, .. } => [Some(after), before.as_deref()],
            Pagination::LinkHeader {
                next_param,
                prev_param,
                ..
            } => [Some(next_param), prev_param.as_deref()],
            Pagination::None => [None, None],
        };
        learned.contains(&Some(name)) || is_position_name(name)
    }

    /// Whether position parameter `name` at `value` places the collection's first page: page
    /// `1` of a numbered paging, offset `0`.
    fn is_first_position(&self, name: &str, value: &str) -> bool {
        match self.pagination {
            Pagination::LimitOffset { offset, .. } => offset == name && value == "0",
            Pagination::PagePerPage { page, .. } => page == name && value == "1",
            Pagination::LinkHeader {
                next_param,
                numbered: true,
                ..
            } => next_param == name && value == "1",
            Pagination::LinkHeader {
                next_param,
                positional: true,
                ..
            } => next_param == name && value == "0",
            _ => false,
        }
    }

    /// After answer `o` listed `listed`: every key of the collection, when this answer ends a
    /// listing of the whole of it.
    fn step(&mut self, o: &Obs<'_>, listed: &BTreeSet<String>) -> Option<BTreeSet<String>> {
        let (placed, rest): (Vec<_>, Vec<_>) = o
            .query
            .iter()
            .cloned()
            .partition(|(k, _)| self.is_position(k));
        // A first page asked for by its position (`page=1`) begins a walk as one that names
        // no position does.
        if placed.iter().all(|(k, v)| self.is_first_position(k, v)) {
            self.open = Some((rest.clone(), listed.clone()));
        } else {
            match &mut self.open {
                Some((base, keys)) if *base == rest => keys.extend(listed.iter().cloned()),
                _ => {
                    self.open = None;
                    return None;
                }
            }
        }
        if whole_page(&rest, listed.len(), self.pagination, self.sorts) {
            return self.open.take().map(|(_, keys)| keys);
        }
        None
    }
}

/// Whether a page holds the last of its collection: its request sent no query parameter but
/// a learned sort order's value, a position, and a page size larger than the items answered
/// (room to spare), and, without a page size, the answer did not fill the route's default one.
/// A filter says the answer may hold only part of it. `query` is the request's without its
/// position parameters.
fn whole_page(
    query: &[(String, String)],
    listed: usize,
    pagination: &Pagination,
    sorts: &[SortOrder],
) -> bool {
    let sent = |name: &str| query.iter().any(|(k, _)| k == name);
    let (size, default) = match pagination {
        Pagination::LimitOffset {
            limit,
            default_limit,
            ..
        } => (Some(limit.as_str()), *default_limit),
        Pagination::PagePerPage {
            per_page,
            default_per_page,
            ..
        } => (Some(per_page.as_str()), *default_per_page),
        Pagination::Cursor { limit, .. } | Pagination::LinkHeader { limit, .. } => {
            (limit.as_deref(), None)
        }
        Pagination::None => (None, None),
    };
    // A list whose paging was not learned still names its page size the usual way.
    let size = size.or_else(|| SIZE_PARAMS.iter().copied().find(|s| sent(s)));
    let sized = size.is_some_and(sent);
    let room = default.is_none_or(|d| (listed as u64) < d);
    (sized || room)
        && query.iter().all(|(k, v)| {
            sorts.iter().any(|s| s.param == *k && s.value == *v)
                || (Some(k.as_str()) == size && v.parse::<usize>().is_ok_and(|n| n > listed))
        })
}

/// Fewest left-out records a hidden value is learned from.
const MIN_HIDDEN_RECORDS: usize = 2;

/// [`ListShape::hidden_values`] of a list of [`ListShape::own_records_only`]: a value of an
/// equality filter's field that no successful answer to a request not sending the filter
/// listed an item with, while answers that listed their whole collection left out at
/// least [`MIN_HIDDEN_RECORDS`] records holding it: live records their principal had written
/// in the session (as [`own_records_only`] reads writes; a 2xx `DELETE` whose last path
/// segment is its key ends one), whose latest 2xx view in the session held the value after an
/// earlier view had shown another (a record archived, not one of a color no list happened to
/// show). Views
/// are every 2xx answer carrying the record's key at its top level or one object below (an
/// action's answer too), and the list's own items.
fn hidden_values(
    group: &RouteGroup,
    obs: &[Obs<'_>],
    items_pointer: &str,
    pk: &str,
    filters: &[String],
    mut walk: PageWalk<'_>,
) -> Vec<HiddenValue> {
    if filters.is_empty() {
        return Vec::new();
    }
    let listing = ok_listings(group, obs);
    let levels = items_pointer.split('/').skip(1).count() + 2;
    // Per session: the live written keys with their writer, and each key's latest view of
    // the filters' fields.
    let mut writer: BTreeMap<String, Option<&str>> = BTreeMap::new();
    let mut seen: Views<'_> = BTreeMap::new();
    // Per (field, value): the values listed unfiltered, and the records left out.
    let mut shown: BTreeSet<(&str, String)> = BTreeSet::new();
    let mut left_out: BTreeMap<(&str, String), BTreeSet<(&str, String)>> = BTreeMap::new();
    let mut cursor = crate::observe::SessionCursor::default();
    for at in listing {
        let (fresh, earlier) = cursor.advance(obs, at);
        if fresh {
            writer.clear();
            seen.clear();
            walk.reset();
        }
        for o in &obs[earlier] {
            note_writes(&mut writer, o, pk);
            if !values::is_2xx(o.status) {
                continue;
            }
            if let Some(Value::Object(top)) = o.resp_json_levels(3) {
                let top = Value::Object(top);
                note_view(&mut seen, &top, pk, filters);
                for below in top.as_object().into_iter().flat_map(|m| m.values()) {
                    note_view(&mut seen, below, pk, filters);
                }
            }
        }
        let o = &obs[at];
        let Some(body) = o.resp_json_levels(levels) else {
            continue;
        };
        let Some(items) = body.pointer(items_pointer).and_then(Value::as_array) else {
            continue;
        };
        let mut listed = BTreeSet::new();
        for f in filters {
            if o.query_value(f).is_some() {
                continue;
            }
            for item in items {
                if let Some(v) = item.get(f).and_then(values::scalar_key) {
                    shown.insert((f.as_str(), v));
                }
            }
        }
        for item in items {
            if let Some(k) = item.get(pk).and_then(values::scalar_key) {
                listed.insert(k);
            }
        }
        if let Some(all) = walk.step(o, &listed) {
            let me = o.principal.as_deref();
            for (k, w) in &writer {
                if *w != me || all.contains(k) {
                    continue;
                }
                let moved = seen.get(k).into_iter().flatten().filter(|(_, (_, m))| *m);
                for (f, (v, _)) in moved {
                    left_out
                        .entry((*f, v.clone()))
                        .or_default()
                        .insert((o.session, k.clone()));
                }
            }
        }
        for item in items {
            note_view(&mut seen, item, pk, filters);
        }
    }
    left_out
        .into_iter()
        .filter(|(fv, records)| records.len() >= MIN_HIDDEN_RECORDS && !shown.contains(fv))
        .map(|((f, v), _)| HiddenValue {
            param: f.to_string(),
            value: v,
        })
        .collect()
}

/// Per record key, per filter field: the latest view's value, and whether an earlier view of
/// the session showed another.
type Views<'f> = BTreeMap<String, BTreeMap<&'f str, (String, bool)>>;

/// Note a view of a record (an object carrying `pk`) in `seen`.
fn note_view<'f>(seen: &mut Views<'f>, record: &Value, pk: &str, filters: &'f [String]) {
    let Some(k) = record.get(pk).and_then(values::scalar_key) else {
        return;
    };
    let view = seen.entry(k).or_default();
    for f in filters {
        let Some(v) = record.get(f).and_then(values::scalar_key) else {
            continue;
        };
        let moved = view.get(f.as_str()).is_some_and(|(was, m)| *m || *was != v);
        view.insert(f.as_str(), (v, moved));
    }
}

/// The route's successful answers, in observation order (a session's are contiguous).
fn ok_listings(group: &RouteGroup, obs: &[Obs<'_>]) -> Vec<usize> {
    let mut listing: Vec<usize> = group
        .obs
        .iter()
        .copied()
        .filter(|i| values::is_2xx(obs[*i].status))
        .collect();
    listing.sort_unstable();
    listing
}

/// Keep `writer` (the session's live written keys, each with the principal whose write
/// answered it) up to date with exchange `o`: the keys a `POST` or `PUT` answered
/// ([`written_keys`]) are written, and a 2xx `DELETE` whose last path segment is a key ends it.
fn note_writes<'o>(writer: &mut BTreeMap<String, Option<&'o str>>, o: &'o Obs<'_>, pk: &str) {
    for k in written_keys(o, pk) {
        writer.insert(k, o.principal.as_deref());
    }
    if o.method == "DELETE"
        && values::is_2xx(o.status)
        && let Some(last) = o.segments.last()
    {
        writer.remove(*last);
    }
}

/// The keys (under `pk`) of the records a `POST` or `PUT` answered (2xx): the answer's own, and
/// those of the objects right below it.
pub(crate) fn written_keys(o: &Obs<'_>, pk: &str) -> Vec<String> {
    if !matches!(o.method.as_str(), "POST" | "PUT") || !values::is_2xx(o.status) {
        return Vec::new();
    }
    let Some(Value::Object(top)) = o.resp_json_levels(2) else {
        return Vec::new();
    };
    let below = top.values().filter_map(|v| v.get(pk));
    top.get(pk)
        .into_iter()
        .chain(below)
        .filter_map(values::scalar_key)
        .collect()
}

/// Lower bounds ([`ListShape::lower_bounds`]): a query parameter sent once per request with
/// an integer value, where every item answered to such a request has an integer key above the
/// value, one such answer lists an item, and some item the route recorded on one of its pages
/// has an integer key at or below a value sent: the parameter left that item out. A key that
/// is not an integer, or a value sent twice, says nothing of order: no bound.
fn lower_bounds(
    ok: &[&Obs<'_>],
    items_pointer: &str,
    pk: &str,
    query_names: &BTreeSet<String>,
    taken: &[&str],
) -> Vec<String> {
    let levels = items_pointer.split('/').filter(|t| !t.is_empty()).count() + 2;
    let key_of = |s: &Scalars| s.get(pk).map(|k| k.parse::<u128>().ok());
    // Each recorded page: its request, and its items' keys (`None` for one not an integer).
    let pages: Vec<(&Obs<'_>, Vec<Option<u128>>)> = ok
        .iter()
        .filter_map(|o| {
            let body = o.resp_json_levels(levels)?;
            let items = body.pointer(items_pointer)?.as_array()?;
            let keys = items.iter().filter_map(|it| key_of(&scalars(it, pk)));
            Some((*o, keys.collect()))
        })
        .collect();
    // Only what the route itself listed: a record kept elsewhere under a small key (a flag's
    // `1` would otherwise find one) is not an item the parameter left out.
    let recorded: Vec<Option<u128>> = pages
        .iter()
        .flat_map(|(_, keys)| keys.iter().copied())
        .collect();
    if recorded.iter().any(Option::is_none) {
        return Vec::new();
    }
    let lowest = recorded.iter().flatten().min().copied();
    let mut out = Vec::new();
    'names: for name in query_names {
        if taken.contains(&name.as_str()) {
            continue;
        }
        let mut listed_any = false;
        let mut left_out = false;
        let mut sent_any = false;
        for (o, keys) in &pages {
            let mut values = o.query.iter().filter(|(k, _)| k == name);
            let Some((_, value)) = values.next() else {
                continue;
            };
            let Ok(bound) = value.trim().parse::<u128>() else {
                continue 'names;
            };
            if values.next().is_some() || keys.iter().any(|k| k.is_none_or(|k| k <= bound)) {
                continue 'names;
            }
            sent_any = true;
            listed_any |= !keys.is_empty();
            left_out |= lowest.is_some_and(|l| l <= bound);
        }
        if sent_any && listed_any && left_out {
            out.push(name.clone());
        }
    }
    out
}

/// Set filters ([`ListShape::set_filters`]): a query parameter whose values keep, or drop, the
/// items whose top-level field, named otherwise, takes one of them (a parameter the equality
/// filters already took is left to them).
///
/// Keeping (`types[]` over `type`): every item answered to a request sending the parameter has
/// the field at one of the values that request sent, one such answer lists an item, and the
/// route's recorded items show the field at a value one such request did not send (so the
/// parameter left something out). Dropping (`exclude_types[]` over `type`): no item answered
/// to a request sending it has the field at one of its values, every value sent is a word (a
/// number, an id or a count, coincides with too much), and one of them is the field's value
/// on an item the route recorded elsewhere. A parameter two fields fit says nothing. Fields
/// are compared where they hold strings, or numbers at the primary key. The route's items are
/// its recorded pages' and `listed`, the records it lists besides (`GET /accounts?id[]=…`
/// recorded once, naming every account its answer listed, still left out the others).
fn set_filters(
    ok: &[&Obs<'_>],
    items_pointer: &str,
    pk: &str,
    listed: &[Scalars],
    query_names: &BTreeSet<String>,
    equality: &[String],
) -> Vec<SetFilter> {
    // The items' top-level scalars, page by page: the nested records are never built.
    let levels = items_pointer.split('/').filter(|t| !t.is_empty()).count() + 2;
    let pages: Vec<(&Obs<'_>, Vec<Scalars>)> = ok
        .iter()
        .filter_map(|o| {
            let body = o.resp_json_levels(levels)?;
            let items = body.pointer(items_pointer)?.as_array()?;
            Some((*o, items.iter().map(|it| scalars(it, pk)).collect()))
        })
        .collect();
    let mut recorded: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (k, v) in pages
        .iter()
        .flat_map(|(_, items)| items.iter())
        .chain(listed)
        .flatten()
    {
        recorded.entry(k.as_str()).or_default().insert(v.as_str());
    }
    let mut out = Vec::new();
    for name in query_names {
        if PAGING_PARAMS.contains(&name.as_str()) || equality.contains(name) {
            continue;
        }
        // Each answer to a request sending the parameter, with the values it sent.
        let sent: Vec<Sent<'_>> = pages
            .iter()
            .filter_map(|(o, items)| {
                let values: BTreeSet<&str> = o
                    .query
                    .iter()
                    .filter(|(k, _)| k == name)
                    .map(|(_, v)| v.as_str())
                    .collect();
                (!values.is_empty()).then_some(Sent { values, items })
            })
            .collect();
        if sent.is_empty() {
            continue;
        }
        for exclude in [false, true] {
            let fits: Vec<&str> = recorded
                .iter()
                .filter(|(field, _)| **field != name.as_str())
                .filter(|(field, values)| {
                    if exclude {
                        drops(&sent, field, values)
                    } else {
                        keeps(&sent, field, values)
                    }
                })
                .map(|(field, _)| *field)
                .collect();
            if let [field] = fits[..] {
                out.push(SetFilter {
                    param: name.clone(),
                    field: field.to_string(),
                    exclude,
                });
                break;
            }
        }
    }
    out
}

/// An item's top-level fields that a set filter may compare, as text.
type Scalars = BTreeMap<String, String>;

/// One recorded answer to a request sending a parameter: the values sent, the items listed.
struct Sent<'p> {
    values: BTreeSet<&'p str>,
    items: &'p [Scalars],
}

impl Sent<'_> {
    fn names(&self, item: &Scalars, field: &str) -> bool {
        item.get(field)
            .is_some_and(|v| self.values.contains(v.as_str()))
    }
}

/// An item's strings, and its key when a number: a number elsewhere is a count or a flag's
/// coincidence (`following=1` with `followers_count: 1`).
fn scalars(item: &Value, pk: &str) -> Scalars {
    item.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match v {
            Value::String(s) => Some((k.clone(), s.clone())),
            Value::Number(n) if k == pk => Some((k.clone(), n.to_string())),
            _ => None,
        })
        .collect()
}

/// Every answer listed only items with `field` at a value sent, one listed an item, and the
/// route recorded `field` at a value one request did not send.
fn keeps(sent: &[Sent<'_>], field: &str, recorded: &BTreeSet<&str>) -> bool {
    sent.iter()
        .all(|s| s.items.iter().all(|it| s.names(it, field)))
        && sent.iter().any(|s| !s.items.is_empty())
        && sent
            .iter()
            .any(|s| recorded.iter().any(|v| !s.values.contains(v)))
}

/// No answer listed an item with `field` at a value sent, every value sent is a word, and the
/// route recorded `field` at one of them.
fn drops(sent: &[Sent<'_>], field: &str, recorded: &BTreeSet<&str>) -> bool {
    sent.iter().all(|s| {
        s.values.iter().all(|v| v.parse::<f64>().is_err())
            && !s.items.iter().any(|it| s.names(it, field))
    }) && sent
        .iter()
        .any(|s| s.values.iter().any(|v| recorded.contains(v)))
}

/// Where a nested list's items name its parent when no top-level field does: the pointer
/// pattern `/<array field>/*/<field>` at which some recorded item (of a 2xx page under a path
/// with parameters) held the request's last path parameter, and no item held only other values
/// there (an item whose array is empty, as after its member was revoked, says nothing).
/// The pattern must name the parent's collection, by the array (`/tags/*/name` under
/// `/tag/:name`) or by the field as a foreign key (`/items/*/account_id` under
/// `/accounts/:id`): a small id that happens to equal some nested value (a role `3` in a list
/// `3`'s accounts) is no relation.
/// Else the pointer `/<object field>/<field>` at which *every* recorded item held the request's
/// last path parameter (at least two items in all), the object naming the parent's collection
/// as above (`/account/id` under `/accounts/:id`: a status names its author there).
/// `None` when an item names the parent at a top-level field (membership by field is already
/// how the engine files a record under its parent) or when no pattern has that evidence.
fn parent_member(group: &RouteGroup, obs: &[Obs<'_>], items_pointer: &str) -> Option<String> {
    let last_param = group
        .segs
        .iter()
        .rposition(|s| matches!(s, crate::routes::Seg::Param(_)))?;
    let parent_word = singular(group.literal_before(last_param)?);
    let names_parent = |array: &str, field: &str| {
        let stem = field
            .strip_suffix("_ids")
            .or_else(|| field.strip_suffix("_id"))
            .or_else(|| field.strip_suffix("Id"))
            .unwrap_or("");
        singular(array) == parent_word || (!stem.is_empty() && singular(stem) == parent_word)
    };
    let mut evidence: BTreeSet<String> = BTreeSet::new();
    let mut contradicted: BTreeSet<String> = BTreeSet::new();
    // Object patterns every item so far held the parent at (`None` before the first item).
    let mut in_every: Option<BTreeSet<String>> = None;
    let mut items_seen = 0usize;
    for (i, values) in group.obs.iter().zip(&group.param_values) {
        let o = &obs[*i];
        if !values::is_2xx(o.status) {
            continue;
        }
        let Some(parent) = values.last() else {
            continue;
        };
        let body = o.resp_json();
        let Some(Value::Array(items)) = body.as_ref().and_then(|b| b.pointer(items_pointer)) else {
            continue;
        };
        for item in items {
            let Value::Object(fields) = item else {
                return None;
            };
            if fields.values().any(|v| names(v, parent)) {
                return None;
            }
            let here: BTreeSet<String> = fields
                .iter()
                .filter_map(|(k, v)| Some((k, v.as_object()?)))
                .flat_map(|(k, inner)| {
                    inner
                        .iter()
                        .filter(|(j, x)| names_parent(k, j) && names(x, parent))
                        .map(move |(j, _)| {
                            format!(
                                "/{}/{}",
                                crate::observe::escape_token(k),
                                crate::observe::escape_token(j)
                            )
                        })
                })
                .collect();
            items_seen += 1;
            in_every = Some(match in_every {
                None => here,
                Some(all) => all.intersection(&here).cloned().collect(),
            });
            for (k, v) in fields {
                let Some(elems) = v.as_array() else {
                    continue;
                };
                let mut held: BTreeSet<&String> = BTreeSet::new();
                let mut other: BTreeSet<&String> = BTreeSet::new();
                for (j, x) in elems.iter().filter_map(Value::as_object).flatten() {
                    if !names_parent(k, j) {
                        continue;
                    }
                    if names(x, parent) {
                        held.insert(j);
                    } else if matches!(x, Value::String(_) | Value::Number(_)) {
                        other.insert(j);
                    }
                }
                let pattern = |j: &str| {
                    format!(
                        "/{}/*/{}",
                        crate::observe::escape_token(k),
                        crate::observe::escape_token(j)
                    )
                };
                for j in &other {
                    if !held.contains(j) {
                        contradicted.insert(pattern(j));
                    }
                }
                evidence.extend(held.into_iter().map(|j| pattern(j)));
            }
        }
    }
    evidence
        .into_iter()
        .find(|p| !contradicted.contains(p))
        .or_else(|| {
            (items_seen >= 2)
                .then_some(in_every?)
                .and_then(|all| all.into_iter().next())
        })
}

/// A collection word without its plural `s` (`accounts` → `account`, `tag` → `tag`), lowercase.
fn singular(word: &str) -> String {
    let w = word.to_ascii_lowercase();
    w.strip_suffix('s').map(str::to_string).unwrap_or(w)
}

/// Whether a scalar JSON value spells the path parameter `want`.
fn names(v: &Value, want: &str) -> bool {
    match v {
        Value::String(s) => s == want,
        Value::Number(n) => n.to_string() == want,
        _ => false,
    }
}

/// Fill in what a list route's own recordings left unknown from what the other list routes of
/// its origin agree on: the page-size parameter of `Link`- and cursor-paged lists (a client's
/// `limit=5` on a timeline no recording asked for a size), and the default page size of
/// `page`-paged lists (a page of 100 where the recordings were never long enough to show it),
/// and the filter-document header of lists whose items sit at the same pointer (Linode's
/// `X-Filter` on a list no recording filtered).
/// At least two routes must have learned the value and none another one: an API keeps one
/// paging convention, but two routes that disagree say it does not.
pub(crate) fn shared_paging(routes: &mut [wraith_model::Route]) {
    // Per origin: the size parameter names of id-paged lists, and the default page sizes.
    let mut names: BTreeMap<&str, BTreeMap<String, usize>> = BTreeMap::new();
    let mut sizes: BTreeMap<&str, BTreeMap<u64, usize>> = BTreeMap::new();
    // Per origin and items pointer: the filter headers.
    let mut headers: BTreeMap<(&str, &str), BTreeMap<String, usize>> = BTreeMap::new();
    for r in routes.iter() {
        let Some(shape) = &r.list else { continue };
        let origin = r.origin.as_deref().unwrap_or("");
        if let Some(h) = &shape.filter_header {
            *headers
                .entry((origin, shape.items_pointer.as_str()))
                .or_default()
                .entry(h.clone())
                .or_default() += 1;
        }
        match &shape.pagination {
            Pagination::LinkHeader {
                limit: Some(name), ..
            }
            | Pagination::Cursor {
                limit: Some(name), ..
            } => {
                *names
                    .entry(origin)
                    .or_default()
                    .entry(name.clone())
                    .or_default() += 1
            }
            Pagination::PagePerPage {
                default_per_page: Some(size),
                ..
            } => *sizes.entry(origin).or_default().entry(*size).or_default() += 1,
            _ => {}
        }
    }
    fn agreed<K: Clone>(votes: Option<&BTreeMap<K, usize>>) -> Option<K> {
        let votes = votes?;
        let (value, n) = votes.iter().next()?;
        (votes.len() == 1 && *n >= 2).then(|| value.clone())
    }
    let names: BTreeMap<String, String> = names
        .iter()
        .filter_map(|(o, v)| Some((o.to_string(), agreed(Some(v))?)))
        .collect();
    let sizes: BTreeMap<String, u64> = sizes
        .iter()
        .filter_map(|(o, v)| Some((o.to_string(), agreed(Some(v))?)))
        .collect();
    let headers: BTreeMap<(String, String), String> = headers
        .iter()
        .filter_map(|((o, at), v)| Some(((o.to_string(), at.to_string()), agreed(Some(v))?)))
        .collect();
    for r in routes.iter_mut() {
        let origin = r.origin.clone().unwrap_or_default();
        let Some(shape) = &mut r.list else { continue };
        if shape.filter_header.is_none() && r.method == "GET" {
            shape.filter_header = headers
                .get(&(origin.clone(), shape.items_pointer.clone()))
                .cloned();
        }
        match &mut shape.pagination {
            Pagination::LinkHeader { limit, .. } | Pagination::Cursor { limit, .. }
                if limit.is_none() =>
            {
                limit.clone_from(&names.get(&origin).cloned());
            }
            Pagination::PagePerPage {
                default_per_page, ..
            } if default_per_page.is_none() => {
                *default_per_page = sizes.get(&origin).copied();
            }
            _ => {}
        }
    }
}

fn envelope_has(ok: &[&Obs<'_>], key: &str) -> bool {
    ok.iter()
        .any(|o| o.resp_top_level_keys().is_some_and(|k| k.contains(key)))
}

/// The page size the provider chose when the request named none: the item count of a page that
/// was full (the envelope says more pages follow). `None` without such evidence — a short
/// collection says nothing about the default.
fn default_size(ok: &[&Obs<'_>], items_pointer: &str, size_param: &str) -> Option<u64> {
    ok.iter()
        .filter(|o| o.query_value(size_param).is_none())
        .filter_map(|o| {
            // Reads the top's numbers and the items' count: the items themselves (level 2)
            // stay empty.
            let body = o.resp_json_levels(2)?;
            let page = body.get("page").and_then(Value::as_u64);
            let pages = body.get("pages").and_then(Value::as_u64);
            if !matches!((page, pages), (Some(p), Some(n)) if p < n) {
                return None;
            }
            body.pointer(items_pointer)
                .and_then(Value::as_array)
                .map(|a| a.len() as u64)
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wraith_model::Route;

    fn list_route(path: &str, origin: Option<&str>, pagination: serde_json::Value) -> Route {
        let shape = serde_json::json!({"items_pointer": "", "pagination": pagination});
        Route {
            path: path.into(),
            origin: origin.map(str::to_string),
            list: Some(serde_json::from_value(shape).expect("a list shape")),
            ..Route::default()
        }
    }

    fn link(limit: Option<&str>) -> serde_json::Value {
        serde_json::json!({"style": "link_header", "next_param": "max_id", "prev_param": "min_id",
                           "limit": limit})
    }

    fn limit_of(r: &Route) -> Option<String> {
        match &r.list.as_ref().expect("a list").pagination {
            Pagination::LinkHeader { limit, .. } => limit.clone(),
            _ => None,
        }
    }

    #[test]
    fn shared_paging_fills_a_size_parameter_two_routes_of_its_origin_agree_on() {
        let mut routes = vec![
            list_route("/a", None, link(Some("limit"))),
            list_route("/b", None, link(Some("limit"))),
            list_route("/c", None, link(None)),
            // Another origin's routes keep their own convention, and one route is not enough.
            list_route("/d", Some("https://other.test"), link(Some("count"))),
            list_route("/e", Some("https://other.test"), link(None)),
        ];
        shared_paging(&mut routes);
        assert_eq!(limit_of(&routes[2]).as_deref(), Some("limit"));
        assert_eq!(limit_of(&routes[4]), None);
    }

    #[test]
    fn shared_paging_fills_the_filter_header_two_lists_of_its_origin_and_pointer_agree_on() {
        let filtered = |path: &str, header: Option<&str>, at: &str| {
            let mut r = list_route(path, None, link(None));
            r.method = "GET".into();
            if let Some(shape) = &mut r.list {
                shape.filter_header = header.map(str::to_string);
                shape.items_pointer = at.into();
            }
            r
        };
        let mut routes = vec![
            filtered("/a", Some("x-filter"), "/data"),
            filtered("/b", Some("x-filter"), "/data"),
            filtered("/c", None, "/data"),
            // Items at another pointer: another convention, shown by one route only.
            filtered("/d", Some("x-query"), ""),
            filtered("/e", None, ""),
        ];
        shared_paging(&mut routes);
        let header = |r: &Route| r.list.as_ref().and_then(|l| l.filter_header.clone());
        assert_eq!(header(&routes[2]).as_deref(), Some("x-filter"));
        assert_eq!(header(&routes[4]), None);
        // Two headers for one pointer: neither is the convention.
        let mut routes = vec![
            filtered("/a", Some("x-filter"), "/data"),
            filtered("/b", Some("x-filter"), "/data"),
            filtered("/c", Some("x-where"), "/data"),
            filtered("/d", None, "/data"),
        ];
        shared_paging(&mut routes);
        assert_eq!(header(&routes[3]), None);
    }

    #[test]
    fn shared_paging_fills_nothing_where_the_routes_disagree() {
        let mut routes = vec![
            list_route("/a", None, link(Some("limit"))),
            list_route("/b", None, link(Some("limit"))),
            list_route("/c", None, link(Some("per_page"))),
            list_route("/d", None, link(None)),
        ];
        shared_paging(&mut routes);
        assert_eq!(limit_of(&routes[3]), None);
    }

    #[test]
    fn link_headers_give_rel_and_params() {
        let v = "<http://x/api/v1/timelines/home?max_id=5>; rel=\"next\", \
                 <http://x/api/v1/timelines/home?min_id=9>; rel=\"prev\"";
        let parsed = parse_link_header(v);
        assert_eq!(
            parsed,
            vec![
                ("next".to_string(), vec!["max_id".to_string()]),
                ("prev".to_string(), vec!["min_id".to_string()])
            ]
        );
    }
}
