//! Text mentions: an answer array whose items are records the sent text names as `@key`
//! (a status posted with `@alice hi` answers `mentions: [{"acct": "alice", ...}]`), learned from
//! the recordings ([`wraith_model::TextMentions`]). Not how the engine renders them (see the
//! engine's `mentions` module).
//!
//! A write route has the rule when, in at least two recorded 2xx answers, a top-level array of
//! objects is non-empty, and in every such answer each item's string field `key` appears as
//! `@<value>` in one and the same string field of the request body; the items are records of
//! the entity type whose recorded records hold most of their primary keys. Never from route or
//! field names.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{EntityType, Route, StateOp, TextMentions};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::values;

use crate::values::scalar_key;

/// A request's string body fields: (pointer, text).
pub(crate) type Texts<'o> = Vec<(&'o str, &'o str)>;

/// (answer, request text fields) of a route's 2xx object answers: what the text rules
/// (mentions, tags) learn from.
pub(crate) fn text_answers<'o>(g: &RouteGroup, obs: &'o [Obs<'_>]) -> Vec<(Value, Texts<'o>)> {
    g.obs
        .iter()
        .filter(|&&i| values::is_2xx(obs[i].status))
        .filter_map(|&i| {
            let body = obs[i].resp_json().filter(Value::is_object)?;
            let texts = obs[i]
                .req_fields
                .iter()
                .filter_map(|(p, v)| v.as_str().map(|s| (p.as_str(), s)))
                .collect();
            Some((body, texts))
        })
        .collect()
}

/// For each update route (by group index) of an entity type whose create route has a rule in
/// `rules`, that create's rule: the rule a text-derived field of the update is checked
/// against ([`crate::text_tags::for_updates`], [`crate::text_rendering::for_updates`]).
pub(crate) fn create_rules_of_updates<'r, T>(
    routes: &[Route],
    rules: &'r [Option<T>],
) -> Vec<(usize, &'r T)> {
    routes
        .iter()
        .enumerate()
        .filter(|(_, route)| route.state_op == Some(StateOp::Update))
        .filter_map(|(gi, route)| {
            let ty = route.entity_type.as_ref()?;
            let rule = routes.iter().zip(rules).find_map(|(r, rule)| {
                rule.as_ref().filter(|_| {
                    r.state_op == Some(StateOp::Create) && r.entity_type.as_ref() == Some(ty)
                })
            })?;
            Some((gi, rule))
        })
        .collect()
}

/// Whether `text` names `value` as a whole `@value` token.
pub fn names(text: &str, value: &str) -> bool {
    if value.is_empty() {
        return false;
    }
    let needle = format!("@{value}");
    text.match_indices(&needle).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + needle.len()..].chars().next();
        let word = |c: char| c.is_alphanumeric() || c == '_' || c == '@';
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// The text-mention rule of every route (same order as the groups); `None` for the others.
pub fn text_mentions(
    groups: &[RouteGroup],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) -> Vec<Option<TextMentions>> {
    let mut out = vec![None; groups.len()];
    for (gi, g) in groups.iter().enumerate() {
        if matches!(g.method.as_str(), "GET" | "HEAD" | "DELETE") {
            continue;
        }
        let answers = text_answers(g, obs);
        let mut arrays: BTreeSet<&str> = BTreeSet::new();
        for (body, _) in &answers {
            if let Some(map) = body.as_object() {
                arrays.extend(
                    map.iter()
                        .filter(|(_, v)| {
                            v.as_array()
                                .is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_object))
                        })
                        .map(|(k, _)| k.as_str()),
                );
            }
        }
        'array: for at in arrays {
            let filled: Vec<(&Vec<Value>, &Texts<'_>)> = answers
                .iter()
                .filter_map(|(b, t)| b.get(at).and_then(Value::as_array).map(|a| (a, t)))
                .filter(|(a, _)| !a.is_empty())
                .collect();
            if filled.len() < 2 {
                continue;
            }
            let Some(first) = filled.first().and_then(|(a, _)| a.first()) else {
                continue;
            };
            let Some(item) = first.as_object() else {
                continue;
            };
            let keys: Vec<&String> = item
                .iter()
                .filter(|(_, v)| v.is_string())
                .map(|(k, _)| k)
                .collect();
            for key in keys {
                // The body field naming every item, the same one in every answer.
                let mut field: Option<&str> = None;
                let mut holds = true;
                for (items, texts) in &filled {
                    let named = texts.iter().find(|(_, text)| {
                        items.iter().all(|it| {
                            it.get(key.as_str())
                                .and_then(Value::as_str)
                                .is_some_and(|v| names(text, v))
                        })
                    });
                    match (named, field) {
                        (Some((p, _)), None) => field = Some(p),
                        (Some((p, _)), Some(f)) if *p == f => {}
                        _ => {
                            holds = false;
                            break;
                        }
                    }
                }
                let Some(text_field) = field.filter(|_| holds) else {
                    continue;
                };
                // The items' entity type: the one whose records hold most of their keys.
                let mut hits: BTreeMap<&str, usize> = BTreeMap::new();
                for (name, et) in entity_types {
                    let n = filled
                        .iter()
                        .flat_map(|(items, _)| items.iter())
                        .filter_map(|it| it.get(&et.primary_key).and_then(scalar_key))
                        .filter(|k| et.records.contains_key(k))
                        .count();
                    if n > 0 {
                        hits.insert(name.as_str(), n);
                    }
                }
                let Some((ty, _)) = hits.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                else {
                    continue;
                };
                out[gi] = Some(TextMentions {
                    at: format!("/{}", at.replace('~', "~0").replace('/', "~1")),
                    text_field: text_field.to_string(),
                    key: key.clone(),
                    entity_type: ty.to_string(),
                    item_keys: item.keys().cloned().collect(),
                });
                break 'array;
            }
        }
    }
    out
}
