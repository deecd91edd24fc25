//! Answer arrays listing the records a request array named by key (`Route::embedded_lists`):
//! a status created with `media_ids[]` answers `media_attachments`, the uploads those keys
//! name, in the order sent.
//!
//! Anti-unified, such an array is rendered from recorded representatives at the length most
//! answers had (most posts carry no media), so a session's post with its own uploads was
//! answered without them. Here, per create or update route, a top-level array of the answer
//! lists the records a top-level request array names when, in every recorded 2xx answer that
//! is a JSON object:
//! - the request sent an array of keys there and the answer's array held, item for item, the
//!   records of one entity type whose primary keys are those keys, every one a known id; or
//! - the request sent no keys there and the answer's array was empty (on an update, whatever
//!   it held: an edit that names no records keeps the record's);
//!
//! and at least two answers listed records (one could be chance). An update of the type a
//! create lists records for takes the create's rule where at least one of its own answers
//! follows it and none contradicts it (an update is recorded less often than a create).
//!
//! Not learned: arrays below the top level of the answer or the request, enveloped answers,
//! records listed in another order than sent.

use std::collections::BTreeMap;

use serde_json::Value;
use wraith_model::{EmbeddedList, EntityType, Route, StateOp};

use crate::observe::{Obs, escape_token};
use crate::routes::RouteGroup;
use crate::values::scalar_key;

/// Fewest recorded answers listing records that the rule is learned from.
const MIN_LISTED: usize = 2;

/// How much the listed `items` look like the records `t` holds for their `keys`: `None` when
/// `t` holds no record of some key or an item has a field its record lacks (an embedded record
/// shows its record's fields, or some of them); otherwise the lowest, over the items, share of
/// its record's fields the item shows, in basis points.
fn likeness(items: &[Value], keys: &[String], t: &EntityType) -> Option<u32> {
    let mut lowest = 10_000;
    for (item, key) in items.iter().zip(keys) {
        let item = item.as_object()?;
        let record = t.records.get(key).and_then(Value::as_object)?;
        if !item.keys().all(|k| record.contains_key(k)) {
            return None;
        }
        let all = record.len().max(1);
        lowest = lowest.min((item.len() * 10_000 / all) as u32);
    }
    Some(lowest)
}

/// Every create's and update's embedded lists, set on `built` (parallel to `groups`).
pub fn learn(
    groups: &[RouteGroup],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    let mut updates: Vec<(usize, Answers)> = Vec::new();
    for (r, (group, route)) in groups.iter().zip(built.iter_mut()).enumerate() {
        if !matches!(route.state_op, Some(StateOp::Create | StateOp::Update)) {
            continue;
        }
        let Some(answers) = group.answers_to_sent_arrays(obs, sent_keys) else {
            continue;
        };
        let update = route.state_op == Some(StateOp::Update);
        let mut rules: Vec<EmbeddedList> = Vec::new();
        for candidate in candidates(&answers, entity_types) {
            if !rules.iter().any(|r| r.at == candidate.at)
                && holds(&candidate, &answers, entity_types, update, MIN_LISTED)
            {
                rules.push(candidate);
            }
        }
        if update && rules.is_empty() {
            updates.push((r, answers));
        }
        route.embedded_lists = rules;
    }
    // An update of a record its collection's create lists records in (a log stream's
    // `destinations`) lists them alike, where its own answers, however few, agree.
    for (r, answers) in updates {
        let Some(ty) = built[r].entity_type.clone() else {
            continue;
        };
        let from_creates: Vec<EmbeddedList> = built
            .iter()
            .filter(|c| {
                c.state_op == Some(StateOp::Create)
                    && c.entity_type.as_deref() == Some(ty.as_str())
                    && c.origin == built[r].origin
            })
            .flat_map(|c| c.embedded_lists.iter().cloned())
            .collect();
        let mut rules: Vec<EmbeddedList> = Vec::new();
        for rule in from_creates {
            if !rules.iter().any(|x| x.at == rule.at)
                && holds(&rule, &answers, entity_types, true, 1)
            {
                rules.push(rule);
            }
        }
        built[r].embedded_lists = rules;
    }
}

/// The recorded 2xx answers of a route that are JSON objects, each with the keys its request
/// sent by field ([`sent_keys`]).
type Answers = Vec<(BTreeMap<String, Vec<String>>, Value)>;

/// The top-level request fields that sent an array of scalar keys (`/media_ids/0`,
/// `/media_ids/1`, as a form's `media_ids[]` parse too), by field name, in index order; an
/// empty array sent is a field with no keys. Fields holding anything else are left out.
pub(crate) fn sent_keys(o: &Obs<'_>) -> BTreeMap<String, Vec<String>> {
    o.fold_top_level_fields(|keys: &mut Vec<String>, tokens, value| {
        match (tokens.next(), tokens.next()) {
            (None, None) => value.as_array().is_some_and(Vec::is_empty),
            (Some(index), None) if index == keys.len().to_string() => match scalar_key(value) {
                Some(k) => {
                    keys.push(k);
                    true
                }
                None => false,
            },
            _ => false,
        }
    })
}

/// The records' keys an answer array lists under primary key `pk` (`None` when an item is not
/// an object with a scalar there).
fn listed_keys(items: &[Value], pk: &str) -> Option<Vec<String>> {
    items
        .iter()
        .map(|item| item.get(pk).and_then(scalar_key))
        .collect()
}

/// Rules some answer suggests: an answer array listing exactly the keys one request field
/// sent, as records of an entity type that knows them all.
fn candidates(answers: &Answers, entity_types: &BTreeMap<String, EntityType>) -> Vec<EmbeddedList> {
    let mut out: Vec<EmbeddedList> = Vec::new();
    for (sent, answer) in answers {
        let Some(answer) = answer.as_object() else {
            continue;
        };
        for (key, value) in answer {
            let Some(items) = value.as_array().filter(|a| !a.is_empty()) else {
                continue;
            };
            for (field, keys) in sent {
                if keys.len() != items.len() {
                    continue;
                }
                // Small integer keys are known ids of many types: the type is the one whose
                // recorded records look most like the listed items.
                let best = entity_types
                    .iter()
                    .filter(|(_, t)| {
                        listed_keys(items, &t.primary_key).as_ref() == Some(keys)
                            && keys.iter().all(|k| t.known_ids.contains(k))
                    })
                    .filter_map(|(ty, t)| Some((likeness(items, keys, t)?, ty)))
                    .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1)));
                let Some((_, ty)) = best else {
                    continue;
                };
                let rule = EmbeddedList {
                    // Already a pointer token: the request's fields are flattened escaped.
                    field: format!("/{field}"),
                    at: format!("/{}", escape_token(key)),
                    entity_type: ty.clone(),
                };
                if !out.contains(&rule) {
                    out.push(rule);
                }
            }
        }
    }
    out
}

/// Whether every answer follows `rule` (see the module doc), at least `min_listed` of them
/// listing records.
fn holds(
    rule: &EmbeddedList,
    answers: &Answers,
    entity_types: &BTreeMap<String, EntityType>,
    update: bool,
    min_listed: usize,
) -> bool {
    let Some(t) = entity_types.get(&rule.entity_type) else {
        return false;
    };
    let field = &rule.field[1..];
    let mut listed = 0;
    for (sent, answer) in answers {
        let Some(items) = answer.pointer(&rule.at).and_then(Value::as_array) else {
            return false;
        };
        match sent.get(field).filter(|keys| !keys.is_empty()) {
            Some(keys) => {
                if listed_keys(items, &t.primary_key).as_ref() != Some(keys)
                    || !keys.iter().all(|k| t.known_ids.contains(k))
                {
                    return false;
                }
                listed += 1;
            }
            // An update that names no records leaves the record's list as it was.
            None if items.is_empty() || update => {}
            None => return false,
        }
    }
    listed >= min_listed
}
