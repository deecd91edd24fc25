//! Answer arrays that mirror the objects a request array sent (`Route::mirrored_lists`): a
//! filter created with `keywords_attributes: [{keyword, whole_word}, ...]` answers `keywords`,
//! one keyword per object sent, in the order sent, each with its own `keyword` and
//! `whole_word`.
//!
//! Anti-unified, such an array is rendered from recorded items at a recorded length, so a
//! filter created with one keyword, or none, was answered with the recording's two. Here, per
//! route, a top-level array of the answer mirrors a top-level request array of objects when, in
//! every recorded 2xx answer that is a JSON object:
//! - the request sent objects there and the answer's array held as many items, each an object
//!   whose mirrored fields equal the fields of the object sent at its position (a form's `1`
//!   is the answer's `true`); or
//! - the request sent nothing there and the answer's array was empty (a request sending
//!   nothing there is then answered `[]`, as is one to a create: an update that sends nothing
//!   there otherwise keeps the record's);
//!
//! and at least two items were mirrored in all (one could be chance), one of the mirrored
//! fields holding a non-empty string. Arrays an embedded list or an item expansion
//! (`SentExpansions::items`, which answers each sent item with a whole recorded one) already
//! claims are left to it.
//!
//! A request array of scalars mirrors the same way, each scalar sent being an object of one
//! field under the empty key: an issue created with `labels: ["bug", "docs"]` answers
//! `labels: [{"name": "bug", ...}, {"name": "docs", ...}]`.
//!
//! Either array may also sit one object down (`poll.options`: a post's poll answers one option
//! per option sent); an answer lacking the object that holds such an array (a post without a
//! poll answers `poll: null`) says nothing where its request sent nothing there.
//!
//! A create's top-level mirrored items are records of another type (`MirroredList::records`)
//! when a create or list route keeps that type under the created record (`GET
//! /filters/:id/keywords`) and every mirrored item is one of that type's recorded records: its
//! key a recorded id of the type, its fields fields of the type's recorded record of that key.
//!
//! Not learned: arrays deeper than one object down, items in another order than sent.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use wraith_model::{EntityType, JsonType, MirroredField, MirroredList, Route, StateOp};

use crate::observe::{Obs, escape_token};
use crate::routes::RouteGroup;
use crate::values::scalar_key;

/// Fewest mirrored items, over all recorded answers, that the rule is learned from.
const MIN_MIRRORED: usize = 2;

/// The objects a request sent, by top-level field.
type Sent = BTreeMap<String, Vec<Map<String, Value>>>;

/// Every route's mirrored lists, set on `built` (parallel to `groups`). Runs after the
/// embedded lists and the sent expansions.
pub fn learn(
    groups: &[RouteGroup],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    let children = child_types(built);
    for (group, route) in groups.iter().zip(built.iter_mut()) {
        let Some(answers) = group.answers_to_sent_arrays(obs, sent_objects) else {
            continue;
        };
        let mut rules: Vec<MirroredList> = Vec::new();
        for candidate in candidates(&answers) {
            let expanded = route.sent_expansions.as_ref().is_some_and(|x| {
                x.items
                    .iter()
                    .any(|item| format!("/{}", escape_token(&item.field)) == candidate.at)
            });
            let claimed = expanded
                || route.embedded_lists.iter().any(|e| e.at == candidate.at)
                || rules.iter().any(|r| r.at == candidate.at);
            if claimed {
                continue;
            }
            if let Some(mut rule) = holds(candidate, &answers) {
                rule.empty_when_absent |= route.state_op == Some(StateOp::Create);
                rule.records = records_of(route, &rule, &answers, &children, entity_types);
                rules.push(rule);
            }
        }
        route.mirrored_lists = rules;
    }
}

/// Per entity type, the types whose records a create or list route keeps under one of its
/// records, one path segment deeper than the type's own creates (`keywords` under
/// `filters`, for `GET /filters/:id/keywords`): the last parent parameter names the record,
/// and every other parameter is a parent's too.
fn child_types(built: &[Route]) -> BTreeMap<(String, usize), BTreeSet<String>> {
    let mut out: BTreeMap<(String, usize), BTreeSet<String>> = BTreeMap::new();
    for route in built {
        let (Some(StateOp::Create | StateOp::List), Some(child)) =
            (route.state_op, &route.entity_type)
        else {
            continue;
        };
        let Some(last) = route.parent_params.last() else {
            continue;
        };
        if last.entity_type == *child
            || route.parent_params.len() != route.params.len()
            || route.params.last() != Some(&last.param)
        {
            continue;
        }
        out.entry((last.entity_type.clone(), route.params.len() - 1))
            .or_default()
            .insert(child.clone());
    }
    out
}

/// The one entity type whose records a create's mirrored items are (see
/// [`MirroredList::records`]): a type kept under the created record (`child_types`) whose
/// recorded ids and records hold every mirrored item, each item's key a known id of the type
/// and each item's fields fields of the type's recorded record of that key. `None` on any
/// other route, for an array one object down, and where no type or more than one fits.
fn records_of(
    route: &Route,
    rule: &MirroredList,
    answers: &[(Sent, Value)],
    children: &BTreeMap<(String, usize), BTreeSet<String>>,
    entity_types: &BTreeMap<String, EntityType>,
) -> Option<String> {
    if route.state_op != Some(StateOp::Create)
        || !route.record_at.is_empty()
        || rule.at[1..].contains('/')
    {
        return None;
    }
    let parent = route.entity_type.as_ref()?;
    let candidates = children.get(&(parent.clone(), route.params.len()))?;
    let fits = |child: &String| {
        let Some(t) = entity_types.get(child) else {
            return false;
        };
        answers
            .iter()
            .filter_map(|(_, answer)| answer.pointer(&rule.at)?.as_array())
            .flatten()
            .all(|item| {
                let Some(key) = item.get(&t.primary_key).and_then(scalar_key) else {
                    return false;
                };
                let Some(Value::Object(record)) = t.records.get(&key) else {
                    return false;
                };
                t.known_ids.contains(&key)
                    && item
                        .as_object()
                        .is_some_and(|o| o.keys().all(|k| record.contains_key(k)))
            })
    };
    let mut fitting = candidates.iter().filter(|c| fits(c));
    let one = fitting.next()?;
    fitting.next().is_none().then(|| one.clone())
}

/// The top-level request fields that sent an array of objects (`/keywords_attributes/0/keyword`,
/// a form's `keywords_attributes[0][keyword]` alike), each object's scalar fields by key, in
/// index order; an empty array sent is a field with no objects. An array of scalars
/// (`labels: ["bug"]`) is one object per scalar, holding it under the empty key. Fields
/// holding anything else (a scalar, gaps in the indexes) are left out.
fn sent_objects(o: &Obs<'_>) -> Sent {
    let mut sent = o.fold_top_level_fields(sent_item);
    sent.extend(nested_sent_objects(o));
    sent
}

/// [`sent_objects`] one object down: the arrays a request sent inside a top-level object
/// (`poll.options`), keyed `poll/options` (pointer tokens, escaped).
fn nested_sent_objects(o: &Obs<'_>) -> Sent {
    let mut fields: BTreeMap<String, Option<Vec<Map<String, Value>>>> = BTreeMap::new();
    for (pointer, value) in &o.req_fields {
        let Some(rest) = pointer.strip_prefix('/') else {
            continue;
        };
        let mut tokens = rest.split('/');
        let (Some(outer), Some(inner)) = (tokens.next(), tokens.next()) else {
            continue;
        };
        // An object's key, not an array's index, at both levels.
        if outer.parse::<usize>().is_ok() || inner.parse::<usize>().is_ok() {
            continue;
        }
        let slot = fields
            .entry(format!("{outer}/{inner}"))
            .or_insert_with(|| Some(Vec::new()));
        if let Some(items) = slot
            && !sent_item(items, &mut tokens, value)
        {
            *slot = None;
        }
    }
    fields
        .into_iter()
        .filter_map(|(f, items)| Some((f, items?)))
        .filter(|(_, items)| !items.is_empty())
        .collect()
}

/// One request leaf of an array field, its tokens past the field's: an object's field by
/// index and key, or a scalar item by index. `false` when the field holds anything else.
fn sent_item(
    items: &mut Vec<Map<String, Value>>,
    tokens: &mut std::str::Split<'_, char>,
    value: &Value,
) -> bool {
    {
        match (tokens.next(), tokens.next(), tokens.next()) {
            (None, None, None) => value.as_array().is_some_and(Vec::is_empty),
            (Some(index), Some(key), None) => {
                let Ok(index) = index.parse::<usize>() else {
                    return false;
                };
                if index == items.len() {
                    items.push(Map::new());
                }
                // Items arrive in index order: a pointer to any but the last is a gap.
                let last = items.len().checked_sub(1);
                match items.last_mut() {
                    Some(item) if last == Some(index) => {
                        item.insert(unescape(key), value.clone());
                        true
                    }
                    _ => false,
                }
            }
            // A sent scalar: an item of its own, under the empty key (`MirroredField::from`).
            (Some(index), None, None) if !value.is_object() && !value.is_array() => {
                let Ok(index) = index.parse::<usize>() else {
                    return false;
                };
                if index != items.len() {
                    return false;
                }
                let mut item = Map::new();
                item.insert(String::new(), value.clone());
                items.push(item);
                true
            }
            // A field nested deeper inside an object leaves that field out, not the object.
            (Some(index), Some(_), Some(_)) => index.parse::<usize>().is_ok(),
            _ => false,
        }
    }
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Whether an answer value is the sent one: equal, or the form spelling of the answer's
/// number or boolean.
fn mirrors(answer: &Value, sent: &Value) -> bool {
    if answer == sent {
        return true;
    }
    match (answer, sent) {
        (Value::Bool(b), Value::String(s)) => {
            matches!(
                (b, s.as_str()),
                (true, "true" | "1") | (false, "false" | "0")
            )
        }
        (Value::Number(n), Value::String(s)) => n.to_string() == *s,
        _ => false,
    }
}

/// The (answer key, sent key) pairs under which every item of `items` shows the field of the
/// object sent at its position; an answer key takes the sent key of its own name when that one
/// holds, else the first that does.
fn mapping(items: &[Value], sent: &[Map<String, Value>]) -> Vec<(String, String)> {
    let Some(first) = items.first().and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for key in first.keys() {
        let holds = |from: &String| {
            items
                .iter()
                .zip(sent)
                .all(|(item, obj)| match (item.get(key), obj.get(from)) {
                    (Some(a), Some(s)) => mirrors(a, s),
                    _ => false,
                })
        };
        let own = sent
            .first()
            .and_then(|o| o.get_key_value(key))
            .map(|(k, _)| k);
        let from = own
            .filter(|k| holds(k))
            .or_else(|| sent.first()?.keys().find(|k| holds(k)));
        if let Some(from) = from {
            out.push((key.clone(), from.clone()));
        }
    }
    out
}

/// Rules some answer suggests: an answer array as long as one request field's objects, with
/// fields that mirror them.
fn candidates(answers: &[(Sent, Value)]) -> Vec<MirroredList> {
    let mut out: Vec<MirroredList> = Vec::new();
    for (sent, answer) in answers {
        let Some(answer) = answer.as_object() else {
            continue;
        };
        // Top-level arrays, and arrays one object down (`poll.options`).
        let arrays = answer
            .iter()
            .map(|(key, value)| (format!("/{}", escape_token(key)), value))
            .chain(answer.iter().flat_map(|(key, value)| {
                value.as_object().into_iter().flat_map(move |inner| {
                    inner.iter().map(move |(k, v)| {
                        (format!("/{}/{}", escape_token(key), escape_token(k)), v)
                    })
                })
            }));
        for (at, value) in arrays {
            let Some(items) = value.as_array().filter(|a| !a.is_empty()) else {
                continue;
            };
            if !items.iter().all(Value::is_object) {
                continue;
            }
            for (field, objects) in sent {
                if objects.len() != items.len() {
                    continue;
                }
                let fields: Vec<MirroredField> = mapping(items, objects)
                    .into_iter()
                    .map(|(key, from)| MirroredField {
                        key,
                        from,
                        observed_type: JsonType::Mixed,
                    })
                    .collect();
                if fields.is_empty() {
                    continue;
                }
                let rule = MirroredList {
                    // Already pointer tokens: the request's fields are flattened escaped.
                    field: format!("/{field}"),
                    at: at.clone(),
                    fields,
                    empty_when_absent: false,
                    records: None,
                };
                if !out.iter().any(|r| r.field == rule.field && r.at == rule.at) {
                    out.push(rule);
                }
            }
        }
    }
    out
}

/// The rule as every answer bears it out (see the module doc): its fields narrowed to those
/// every mirrored item showed, each with the type the answers showed; `None` when an answer
/// contradicts it or the evidence is too thin.
fn holds(mut rule: MirroredList, answers: &[(Sent, Value)]) -> Option<MirroredList> {
    let field = unescape(&rule.field[1..]);
    let mut mirrored = 0;
    let mut types: Vec<Option<JsonType>> = vec![None; rule.fields.len()];
    let mut text = vec![false; rule.fields.len()];
    for (sent, answer) in answers {
        let objects = sent.get(&field).filter(|o| !o.is_empty());
        // An answer without the object holding a nested array (a post without a poll
        // answers `poll: null`) says nothing, where its request sent nothing there either.
        let nested = rule.at[1..].contains('/');
        if nested && objects.is_none() && answer.pointer(&rule.at).is_none() {
            continue;
        }
        let items = answer.pointer(&rule.at).and_then(Value::as_array)?;
        let Some(objects) = objects else {
            if items.is_empty() {
                rule.empty_when_absent = true;
                continue;
            }
            return None;
        };
        if objects.len() != items.len() {
            return None;
        }
        for (item, obj) in items.iter().zip(objects) {
            for (n, f) in rule.fields.iter().enumerate() {
                let (Some(a), Some(s)) = (item.get(&f.key), obj.get(&f.from)) else {
                    return None;
                };
                if !mirrors(a, s) {
                    return None;
                }
                let t = JsonType::of(a);
                types[n] = match types[n] {
                    None => Some(t),
                    Some(seen) if seen == t => Some(seen),
                    Some(_) => Some(JsonType::Mixed),
                };
                text[n] |= a.as_str().is_some_and(|s| !s.is_empty());
            }
        }
        mirrored += items.len();
    }
    if mirrored < MIN_MIRRORED || !text.iter().any(|t| *t) {
        return None;
    }
    for (f, t) in rule.fields.iter_mut().zip(types) {
        f.observed_type = t.unwrap_or(JsonType::Mixed);
    }
    Some(rule)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn form_spellings_mirror_numbers_and_booleans() {
        assert!(mirrors(&json!(true), &json!("1")));
        assert!(mirrors(&json!(false), &json!("false")));
        assert!(mirrors(&json!(3), &json!("3")));
        assert!(!mirrors(&json!(true), &json!("0")));
        assert!(!mirrors(&json!("a"), &json!("b")));
    }

    #[test]
    fn mapping_prefers_the_sent_key_of_the_same_name() {
        let items = vec![json!({"id": "1", "name": "x", "alias": "x"})];
        let sent = vec![
            json!({"alias": "x", "name": "x"})
                .as_object()
                .unwrap()
                .clone(),
        ];
        assert_eq!(
            mapping(&items, &sent),
            vec![
                ("name".to_string(), "name".to_string()),
                ("alias".to_string(), "alias".to_string())
            ]
        );
    }
}
