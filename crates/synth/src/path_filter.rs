//! Path filters (`Route::path_filter`): a `GET` whose path parameter selects the records it
//! lists.
//!
//! Some reads name no record of their own but a value the records they list carry: a timeline
//! of one tag lists the statuses tagged with it, a label's page lists the items wearing the
//! label. The recordings show it when every item of every 2xx answer carries the request's
//! value of one path parameter at one place (an array of objects' `name`, a field), every item
//! is a known record of one entity type, and the value is not a constant of a fixed
//! collection: the recordings hold two distinct values of the parameter, or one value listing
//! different records in two sessions (each listed the records it made). The order the answers
//! list their items in (a field that rises or falls in every answer of two items or more, the
//! primary key first) and the requests' paging are learned with it, so the engine can list
//! the session's own matching records the way the route does. Never from route, parameter or
//! field names.
//!
//! Cost: one byte scan per recorded 2xx answer of a `GET` with path parameters (is it an
//! array, does it hold the parameter's value), stopping at a route's first answer that fails;
//! only answers that pass are parsed.
//!
//! Not learned: a list route of its own (its items and parents are learned by [`crate::list`]),
//! answers whose items sit in an envelope, values the answer's JSON escapes (the byte scan
//! looks for the raw value).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{EntityType, Pagination, PathFilter, StateOp};

use crate::observe::{Obs, RespBody, escape_token};
use crate::routes::RouteGroup;
use crate::state::RoutePlan;
use crate::values::{self, decode_segment, scalar_key};

/// How deep inside an item the parameter's value is looked for (`/tags/*/name` is 3).
const MAX_DEPTH: usize = 4;

/// The path filter of every route (same order as the groups); `None` for the others.
pub fn learn(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) -> Vec<Option<PathFilter>> {
    groups
        .iter()
        .zip(plans)
        .map(|(g, plan)| learn_route(g, plan, entity_types, obs))
        .collect()
}

/// One recorded answer: the decoded path-parameter values and the answer's raw bytes.
struct Answer<'o, 'a> {
    obs: &'o Obs<'a>,
    values: Vec<String>,
    bytes: Cow<'o, [u8]>,
}

fn learn_route(
    group: &RouteGroup,
    plan: &RoutePlan,
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) -> Option<PathFilter> {
    if group.method != "GET" || group.params.is_empty() || plan.state_op == Some(StateOp::List) {
        return None;
    }
    // Every 2xx JSON answer must be an array; the empty ones hold no evidence.
    let mut answers: Vec<Answer<'_, '_>> = Vec::new();
    for (i, raw) in group.obs.iter().zip(&group.param_values) {
        let o = &obs[*i];
        if !values::is_2xx(o.status) || o.resp != RespBody::Json {
            continue;
        }
        let bytes = o.response_bytes();
        let mut rest = bytes.iter().copied().filter(|b| !b.is_ascii_whitespace());
        match (rest.next(), rest.next()) {
            (Some(b'['), Some(b']')) => continue,
            (Some(b'['), _) => {}
            _ => return None,
        }
        let values = raw.iter().map(|v| decode_segment(v)).collect();
        answers.push(Answer {
            obs: o,
            values,
            bytes,
        });
    }
    let first = answers.first()?;
    // Parameters whose value every non-empty answer holds somewhere in its bytes.
    let candidates: Vec<usize> = (0..first.values.len())
        .filter(|&p| {
            answers.iter().all(|a| {
                a.values.get(p).is_some_and(|v| {
                    !v.is_empty() && memchr::memmem::find(&a.bytes, v.as_bytes()).is_some()
                })
            })
        })
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let parsed: Vec<(&Answer<'_, '_>, Vec<Value>)> = answers
        .iter()
        .filter_map(|a| match a.obs.resp_json() {
            Some(Value::Array(items)) => Some((a, items)),
            _ => None,
        })
        .collect();
    if parsed.len() != answers.len() {
        return None;
    }
    let items_total: usize = parsed.iter().map(|(_, items)| items.len()).sum();
    if items_total < 2 {
        return None;
    }
    let (type_name, pk) = item_type(parsed.iter().flat_map(|(_, i)| i), entity_types)?;
    for p in candidates {
        let mut common: Option<BTreeSet<String>> = None;
        for (a, items) in &parsed {
            let want = &a.values[p];
            for item in items {
                let mut found = BTreeSet::new();
                patterns(item, want, &mut String::new(), 0, &mut found);
                common = Some(match common {
                    None => found,
                    Some(c) => c.intersection(&found).cloned().collect(),
                });
                if common.as_ref().is_some_and(BTreeSet::is_empty) {
                    break;
                }
            }
        }
        let own_key = format!("/{}", escape_token(pk));
        let Some(member) = common
            .into_iter()
            .flatten()
            .filter(|m| *m != own_key)
            .min_by(|a: &String, b: &String| a.len().cmp(&b.len()).then_with(|| a.cmp(b)))
        else {
            continue;
        };
        if !selects_by_value(&parsed, &[p], pk) {
            continue;
        }
        let (order_by, descending) = order(&parsed, pk);
        let item_plan = RoutePlan {
            items_pointer: Some(String::new()),
            ..plan.clone()
        };
        let pagination = crate::list::list_shape(group, &item_plan, obs, None)
            .map_or(Pagination::None, |s| s.pagination);
        return Some(PathFilter {
            param: group.params.get(p)?.clone(),
            entity_type: type_name.to_string(),
            items_pointer: String::new(),
            member,
            order_by,
            descending,
            pagination,
        });
    }
    None
}

/// Whether the recordings tell a selection by the parameter apart from a fixed collection:
/// two distinct values of parameter `p` (of any of `params`), or one value whose recorded
/// sessions listed different records.
fn selects_by_value(parsed: &[(&Answer<'_, '_>, Vec<Value>)], params: &[usize], pk: &str) -> bool {
    params.iter().any(|&p| {
        let values: BTreeSet<&str> = parsed.iter().map(|(a, _)| a.values[p].as_str()).collect();
        if values.len() >= 2 {
            return true;
        }
        let mut per_session: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        for (a, items) in parsed {
            per_session
                .entry(a.obs.session)
                .or_default()
                .extend(items.iter().filter_map(|i| i.get(pk).and_then(scalar_key)));
        }
        let sets: BTreeSet<&BTreeSet<String>> = per_session.values().collect();
        sets.len() >= 2
    })
}

/// The entity type that knows every listed item's key (the first by name when several do),
/// with its primary key.
fn item_type<'t, 'v>(
    items: impl Iterator<Item = &'v Value> + Clone,
    entity_types: &'t BTreeMap<String, EntityType>,
) -> Option<(&'t str, &'t str)> {
    entity_types.iter().find_map(|(name, et)| {
        let pk = et.primary_key.as_str();
        let mut any = false;
        let all = items.clone().all(|i| {
            any = true;
            i.get(pk)
                .and_then(scalar_key)
                .is_some_and(|k| et.known_ids.contains(&k) || et.records.contains_key(&k))
        });
        (any && all).then_some((name.as_str(), pk))
    })
}

/// Every pointer pattern under `v` (`*` for each array element) where the scalar `want` sits.
fn patterns(v: &Value, want: &str, at: &mut String, depth: usize, out: &mut BTreeSet<String>) {
    match v {
        Value::String(s) if s == want => {
            out.insert(at.clone());
        }
        Value::Number(n) if n.to_string() == want => {
            out.insert(at.clone());
        }
        Value::Object(map) if depth < MAX_DEPTH => {
            for (k, child) in map {
                let len = at.len();
                at.push('/');
                at.push_str(&escape_token(k));
                patterns(child, want, at, depth + 1, out);
                at.truncate(len);
            }
        }
        Value::Array(items) if depth < MAX_DEPTH => {
            for child in items {
                let len = at.len();
                at.push_str("/*");
                patterns(child, want, at, depth + 1, out);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

/// The field the answers are ordered by and whether from the largest: the primary key when
/// every answer of two items or more lists it strictly falling (or rising), else the first
/// other top-level scalar field (by name) that does; the primary key, rising, when no answer
/// shows an order.
fn order(parsed: &[(&Answer<'_, '_>, Vec<Value>)], pk: &str) -> (String, bool) {
    let multi: Vec<&Vec<Value>> = parsed
        .iter()
        .map(|(_, items)| items)
        .filter(|i| i.len() >= 2)
        .collect();
    let Some(first) = multi
        .first()
        .and_then(|i| i.first())
        .and_then(Value::as_object)
    else {
        return (pk.to_string(), false);
    };
    let mut fields = vec![pk.to_string()];
    fields.extend(first.keys().filter(|k| *k != pk).cloned());
    for field in fields {
        let mut direction: Option<Ordering> = None;
        let ok = multi.iter().all(|items| {
            let keys: Option<Vec<String>> = items
                .iter()
                .map(|i| i.get(&field).and_then(scalar_key))
                .collect();
            let Some(keys) = keys else {
                return false;
            };
            keys.windows(2).all(|w| {
                let o = PathFilter::compare_keys(&w[0], &w[1]);
                o != Ordering::Equal && *direction.get_or_insert(o) == o
            })
        });
        if ok && let Some(d) = direction {
            return (field, d == Ordering::Greater);
        }
    }
    (pk.to_string(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digit_keys_compare_as_numbers_past_float_precision() {
        let cmp = PathFilter::compare_keys;
        assert_eq!(
            cmp("117440825481806171", "117440825481806170"),
            Ordering::Greater
        );
        assert_eq!(cmp("9", "10"), Ordering::Less);
        assert_eq!(cmp("b", "a"), Ordering::Greater);
    }

    #[test]
    fn patterns_name_array_elements_with_a_star() {
        let item = serde_json::json!({"id": "1", "tags": [{"name": "x"}, {"name": "y"}]});
        let mut out = BTreeSet::new();
        patterns(&item, "y", &mut String::new(), 0, &mut out);
        assert_eq!(out.into_iter().collect::<Vec<_>>(), vec!["/tags/*/name"]);
    }
}
