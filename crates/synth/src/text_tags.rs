//! Text tags: an answer array with one object per `#name` token of the sent text (a status
//! posted with `#Rust hi` answers `tags: [{"name": "rust", "url": ".../tags/rust"}]`),
//! learned from the recordings ([`wraith_model::TextTags`]). Not how the engine renders them
//! (see the engine's `text_tags` module), and not the `@name` mentions (see [`crate::mentions`]).
//!
//! A write route has the rule only when the recordings leave no doubt: in every recorded 2xx
//! answer holding the top-level array, its items' string field `key` are exactly the distinct
//! `#name` tokens of one and the same request body field, in text order (lowercased in every
//! answer, or as sent in every answer), so an answer whose text has no token has an empty
//! array; at least two answers hold a non-empty one, naming at least two distinct names; and
//! every other item field is a constant or the name with one fixed prefix and suffix. An
//! update of the same entity type takes the create's rule when its recorded answers that sent
//! the text field all agree with it ([`for_updates`]). Never from route or field names.

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use wraith_model::{Route, TagField, TagValue, TextMentions, TextTags};

use crate::mentions::{self, Texts};
use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::values;

/// The text-tag rule of every route (same order as the groups); `None` for the others.
/// `mentions` are the routes' text-mention rules: an array they derive is not a tag array.
pub fn text_tags(
    groups: &[RouteGroup],
    obs: &[Obs<'_>],
    mentions: &[Option<TextMentions>],
) -> Vec<Option<TextTags>> {
    let mut out = vec![None; groups.len()];
    for (gi, g) in groups.iter().enumerate() {
        if matches!(g.method.as_str(), "GET" | "HEAD" | "DELETE") {
            continue;
        }
        // Only a route whose recorded bodies had `#` at all can have the rule: the cheap test
        // spares parsing the answers of every other write.
        let hashed = g.obs.iter().any(|&i| {
            obs[i]
                .req_fields
                .iter()
                .any(|(_, v)| v.as_str().is_some_and(|s| s.contains('#')))
        });
        if !hashed {
            continue;
        }
        let answers = mentions::text_answers(g, obs);
        let taken = mentions
            .get(gi)
            .and_then(Option::as_ref)
            .map(|m| m.at.as_str());
        let mut arrays: BTreeSet<String> = BTreeSet::new();
        for (body, _) in &answers {
            if let Some(map) = body.as_object() {
                arrays.extend(
                    map.iter()
                        .filter(|(_, v)| {
                            v.as_array()
                                .is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_object))
                        })
                        .map(|(k, _)| k.clone()),
                );
            }
        }
        for at in arrays {
            let pointer = format!("/{}", at.replace('~', "~0").replace('/', "~1"));
            if taken == Some(pointer.as_str()) {
                continue;
            }
            if let Some(rule) = learn(&answers, &at, pointer) {
                out[gi] = Some(rule);
                break;
            }
        }
    }
    out
}

/// `rules` (from [`text_tags`]) with each update route's rule added: the rule of a create of
/// the same entity type, when at least one recorded 2xx answer of the update sent the rule's
/// text field and every such answer holding the array lists exactly the tags of its text
/// (an update that does not send the text is not told anything by it, and keeps its tags).
pub fn for_updates(
    groups: &[RouteGroup],
    routes: &[Route],
    obs: &[Obs<'_>],
    mut rules: Vec<Option<TextTags>>,
) -> Vec<Option<TextTags>> {
    let taken: Vec<(usize, TextTags)> = mentions::create_rules_of_updates(routes, &rules)
        .into_iter()
        .map(|(gi, rule)| (gi, rule.clone()))
        .collect();
    for (gi, rule) in taken {
        let Some(g) = groups.get(gi) else {
            continue;
        };
        if rules[gi].is_some() {
            continue;
        }
        let rule = &rule;
        let mut agreed = 0usize;
        let mut holds = true;
        for &i in g.obs.iter().filter(|&&i| values::is_2xx(obs[i].status)) {
            let Some(text) = obs[i]
                .req_fields
                .iter()
                .find(|(p, _)| *p == rule.text_field)
                .and_then(|(_, v)| v.as_str())
            else {
                continue;
            };
            let Some(body) = obs[i].resp_json() else {
                continue;
            };
            let Some(v) = body.pointer(&rule.at) else {
                continue;
            };
            let items: Option<Vec<Map<String, Value>>> = v
                .as_array()
                .and_then(|a| a.iter().map(|it| it.as_object().cloned()).collect());
            let texts: Texts<'_> = vec![(rule.text_field.as_str(), text)];
            match items {
                Some(items) if names_match(rule, &items, &texts) && fields_match(rule, &items) => {
                    agreed += 1;
                }
                _ => {
                    holds = false;
                    break;
                }
            }
        }
        if holds && agreed > 0 {
            rules[gi] = Some(rule.clone());
        }
    }
    rules
}

/// Whether every item is exactly what the rule makes of its name.
fn fields_match(rule: &TextTags, items: &[Map<String, Value>]) -> bool {
    items.iter().all(|it| {
        let Some(name) = it.get(&rule.key).and_then(Value::as_str) else {
            return false;
        };
        rule.items(&format!("#{name}"))
            .first()
            .and_then(Value::as_object)
            .is_some_and(|made| made == it)
    })
}

/// The rule for the top-level array `at` of `answers`, if they bear it out.
fn learn(answers: &[(Value, Texts<'_>)], at: &str, pointer: String) -> Option<TextTags> {
    // (items, texts) of every answer holding the array; any other value there refutes it.
    let mut held: Vec<(Vec<Map<String, Value>>, &Texts<'_>)> = Vec::new();
    for (body, texts) in answers {
        let Some(v) = body.get(at) else {
            continue;
        };
        let items: Vec<Map<String, Value>> = v
            .as_array()?
            .iter()
            .map(|it| it.as_object().cloned())
            .collect::<Option<_>>()?;
        held.push((items, texts));
    }
    let filled: Vec<&(Vec<Map<String, Value>>, &Texts<'_>)> =
        held.iter().filter(|(a, _)| !a.is_empty()).collect();
    if filled.len() < 2 {
        return None;
    }
    let first = filled.first()?.0.first()?;
    let keys: Vec<&String> = first.keys().collect();
    // Every item has the same fields.
    let same_fields = held
        .iter()
        .flat_map(|(a, _)| a.iter())
        .all(|it| it.len() == keys.len() && keys.iter().all(|k| it.contains_key(k.as_str())));
    if !same_fields {
        return None;
    }
    for key in keys
        .iter()
        .filter(|k| first.get(k.as_str()).is_some_and(Value::is_string))
    {
        // The text fields of the first filled answer whose tokens name its first item.
        let (items0, texts0) = filled.first()?;
        let name0 = items0.first()?.get(key.as_str())?.as_str()?;
        for (field, _) in texts0.iter().filter(|(_, text)| {
            wraith_model::hash_tokens(text)
                .iter()
                .any(|t| t.to_lowercase() == name0.to_lowercase())
        }) {
            for lowercase in [true, false] {
                let mut rule = TextTags {
                    at: pointer.clone(),
                    text_field: (*field).to_string(),
                    key: (*key).clone(),
                    lowercase,
                    fields: Vec::new(),
                };
                if !held
                    .iter()
                    .all(|(items, texts)| names_match(&rule, items, texts))
                {
                    continue;
                }
                let Some(fields) = item_fields(&keys, key, &held) else {
                    break;
                };
                rule.fields = fields;
                return Some(rule);
            }
        }
    }
    None
}

/// Whether `items` are exactly the names the rule takes from `texts`' text field, in order.
fn names_match(rule: &TextTags, items: &[Map<String, Value>], texts: &Texts<'_>) -> bool {
    let text = texts
        .iter()
        .find(|(p, _)| *p == rule.text_field)
        .map_or("", |(_, t)| t);
    let names = rule.names(text);
    names.len() == items.len()
        && names
            .iter()
            .zip(items)
            .all(|(n, it)| it.get(&rule.key).and_then(Value::as_str) == Some(n.as_str()))
}

/// How each item field is made from the name at `key`: the name itself, a constant, or the
/// name with one prefix and suffix in every item. `None` when a field is none of these, or
/// when fewer than two distinct names were recorded (a constant and a name-derived value
/// would then look alike).
fn item_fields(
    keys: &[&String],
    key: &str,
    held: &[(Vec<Map<String, Value>>, &Texts<'_>)],
) -> Option<Vec<TagField>> {
    let items: Vec<&Map<String, Value>> = held.iter().flat_map(|(a, _)| a.iter()).collect();
    let name_of = |it: &Map<String, Value>| it.get(key).and_then(Value::as_str).map(str::to_owned);
    let names: BTreeSet<String> = items.iter().filter_map(|it| name_of(it)).collect();
    if names.len() < 2 {
        return None;
    }
    let mut fields = Vec::new();
    for &k in keys {
        let value = if k == key {
            TagValue::Name
        } else {
            let first = items.first()?.get(k.as_str())?;
            if items.iter().all(|it| it.get(k.as_str()) == Some(first)) {
                TagValue::Constant {
                    value: first.clone(),
                }
            } else {
                affixed(&items, k, key)?
            }
        };
        fields.push(TagField {
            name: k.clone(),
            value,
        });
    }
    Some(fields)
}

/// The one `prefix + name + suffix` that makes field `k` of every item from its name at `key`
/// (the leftmost that fits all, when the first item's value holds its name more than once).
fn affixed(items: &[&Map<String, Value>], k: &str, key: &str) -> Option<TagValue> {
    let pair = |it: &Map<String, Value>| -> Option<(String, String)> {
        Some((
            it.get(k)?.as_str()?.to_string(),
            it.get(key)?.as_str()?.to_string(),
        ))
    };
    let (v0, n0) = pair(items.first()?)?;
    if n0.is_empty() {
        return None;
    }
    v0.match_indices(n0.as_str()).find_map(|(i, _)| {
        let (prefix, suffix) = (&v0[..i], &v0[i + n0.len()..]);
        items
            .iter()
            .all(|it| {
                pair(it).is_some_and(|(v, n)| {
                    v.len() == prefix.len() + n.len() + suffix.len()
                        && v.starts_with(prefix)
                        && v.ends_with(suffix)
                        && v[prefix.len()..v.len() - suffix.len()] == n
                })
            })
            .then(|| TagValue::Affixed {
                prefix: prefix.to_string(),
                suffix: suffix.to_string(),
            })
    })
}
