//! Duplicate values: which top-level request fields of a create repeated, at the same field,
//! the value of a record its session had created earlier and still held. A refusal every
//! exchange of which repeated one field that way, where no accepted create did, is the API
//! refusing a duplicate of a unique field (`Guard::DuplicateValue`).
//!
//! Where some accepted create repeated another principal's value, the refusals may still all
//! repeat the acting principal's own (a repository name unique per owner): the duplicate
//! counts per principal.
//!
//! Not here: uniqueness across sessions (each recorded session is its own world) or across
//! several fields together.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::values;

/// For each exchange of the create route `group` (in `group.obs` order): the names of the
/// top-level scalar request body fields whose value a record of the same field held, among
/// those an earlier answered (2xx) create of the route made in the same session and no
/// answered `DELETE` naming its key removed since; with `per_principal`, only those the same
/// principal created.
pub fn duplicate_fields(
    group: &RouteGroup,
    pk: &str,
    obs: &[Obs<'_>],
    per_principal: bool,
) -> Vec<BTreeSet<String>> {
    let own: BTreeSet<usize> = group.obs.iter().copied().collect();
    // Per session, walked forward once: live records (key → creator, top-level scalar
    // fields).
    type Live<'p> = BTreeMap<String, (Option<&'p str>, BTreeMap<String, Value>)>;
    let mut live: Live<'_> = BTreeMap::new();
    let mut cursor = crate::observe::SessionCursor::default();
    let mut out = Vec::with_capacity(group.obs.len());
    for &i in &group.obs {
        let asking = &obs[i];
        let (fresh, earlier) = cursor.advance(obs, i);
        if fresh {
            live.clear();
        }
        for next in earlier {
            let o = &obs[next];
            if own.contains(&next) && values::is_2xx(o.status) {
                if let Some((key, fields)) = answered_record(o, pk) {
                    live.insert(key, (o.principal.as_deref(), fields));
                }
            } else if o.method == "DELETE" && values::is_2xx(o.status) {
                live.retain(|key, _| !o.path_names(key));
            }
        }
        let sent: Vec<(&str, &Value)> = asking
            .req_fields
            .iter()
            .filter_map(|(ptr, v)| {
                let name = ptr.strip_prefix('/')?;
                (!name.contains('/') && !v.is_null()).then_some((name, v))
            })
            .collect();
        out.push(
            sent.into_iter()
                .filter(|(name, v)| {
                    live.values().any(|(creator, r)| {
                        r.get(*name) == Some(*v)
                            && (!per_principal || *creator == asking.principal.as_deref())
                    })
                })
                .map(|(name, _)| name.to_string())
                .collect(),
        );
    }
    out
}

/// The record a create answered (at the top, or one key down in an envelope): its key and
/// top-level scalar fields, the key's own included (a repository keyed by the name it was
/// created with).
fn answered_record(o: &Obs<'_>, pk: &str) -> Option<(String, BTreeMap<String, Value>)> {
    let Value::Object(top) = o.resp_json_levels(2)? else {
        return None;
    };
    let record = if top.contains_key(pk) {
        &top
    } else {
        top.values()
            .find_map(|v| v.as_object().filter(|r| r.contains_key(pk)))?
    };
    let key = record.get(pk).and_then(values::scalar_key)?;
    let fields = record
        .iter()
        .filter(|(_, v)| !v.is_object() && !v.is_array() && !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Some((key, fields))
}

/// The field every refused exchange duplicated and no accepted one did: among several, the
/// first (by name) that every refusal's answer names as a word (`"name already taken"`),
/// else the first by name. `mentions(k, field)` says whether exchange `k`'s answer names it.
pub fn refused_duplicate(
    dups: &[BTreeSet<String>],
    refused: &[usize],
    accepted: &[usize],
    mentions: &dyn Fn(usize, &str) -> bool,
) -> Option<String> {
    let mut common: Option<BTreeSet<String>> = None;
    for k in refused {
        let fields = dups.get(*k)?;
        common = Some(match common {
            None => fields.clone(),
            Some(c) => c.intersection(fields).cloned().collect(),
        });
    }
    let taken: BTreeSet<&String> = accepted
        .iter()
        .filter_map(|k| dups.get(*k))
        .flatten()
        .collect();
    let candidates: Vec<String> = common?.into_iter().filter(|f| !taken.contains(f)).collect();
    candidates
        .iter()
        .find(|f| refused.iter().all(|k| mentions(*k, f)))
        .or(candidates.first())
        .cloned()
}

/// Of the refusals `refused` of one status, when not all repeated one field: the part that
/// repeated a field no accepted create (`accepted`) repeated, every answer of it naming the
/// field (`mentions`), and the rest, none of which sent the field (`sends`): refused for
/// something else with the same status, as a missing name beside a name already taken. A
/// refusal that sent a fresh value there says the status is not the duplicate's. The field,
/// the part and the rest; `None` when no field splits the refusals so.
pub fn refused_duplicate_part(
    dups: &[BTreeSet<String>],
    refused: &[usize],
    accepted: &[usize],
    mentions: &dyn Fn(usize, &str) -> bool,
    sends: &dyn Fn(usize, &str) -> bool,
) -> Option<(String, Vec<usize>, Vec<usize>)> {
    let taken: BTreeSet<&String> = accepted
        .iter()
        .filter_map(|k| dups.get(*k))
        .flatten()
        .collect();
    let fields: BTreeSet<&String> = refused
        .iter()
        .filter_map(|k| dups.get(*k))
        .flatten()
        .filter(|f| !taken.contains(f))
        .collect();
    fields.into_iter().find_map(|field| {
        let (part, rest): (Vec<usize>, Vec<usize>) = refused
            .iter()
            .partition(|k| dups.get(**k).is_some_and(|d| d.contains(field)));
        let holds = !part.is_empty()
            && !rest.is_empty()
            && part.iter().all(|k| mentions(*k, field))
            && !rest.iter().any(|k| sends(*k, field));
        holds.then(|| (field.clone(), part, rest))
    })
}

/// Whether the answer text names `field` as a whole word.
pub fn answer_mentions(o: &Obs<'_>, field: &str) -> bool {
    let body = o.response_bytes();
    let text = String::from_utf8_lossy(&body);
    text.match_indices(field).any(|(at, _)| {
        let word = |c: char| c.is_alphanumeric() || c == '_';
        !text[..at].chars().next_back().is_some_and(word)
            && !text[at + field.len()..].chars().next().is_some_and(word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_refused_duplicate_is_the_field_every_refusal_and_no_acceptance_repeated() {
        let dups = [
            set(&["name", "color"]),
            set(&["name"]),
            set(&["color"]),
            set(&[]),
        ];
        let none = |_: usize, _: &str| false;
        assert_eq!(
            refused_duplicate(&dups, &[0, 1], &[2, 3], &none),
            Some("name".into())
        );
        assert_eq!(
            refused_duplicate(&dups, &[0, 2], &[1, 3], &none),
            Some("color".into())
        );
        assert_eq!(refused_duplicate(&dups, &[0, 2], &[1, 2], &none), None);
        assert_eq!(refused_duplicate(&dups, &[3], &[0], &none), None);
        assert_eq!(refused_duplicate(&dups, &[], &[0], &none), None);
    }

    #[test]
    fn among_several_duplicates_the_field_every_refusal_names_wins() {
        let dups = [set(&["name", "color"]), set(&["name", "color"]), set(&[])];
        let none = |_: usize, _: &str| false;
        let names = |_: usize, f: &str| f == "name";
        assert_eq!(
            refused_duplicate(&dups, &[0, 1], &[2], &none),
            Some("color".into())
        );
        assert_eq!(
            refused_duplicate(&dups, &[0, 1], &[2], &names),
            Some("name".into())
        );
    }
}
