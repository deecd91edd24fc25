//! Reads that find one record by a query parameter (`Route::query_lookup`): `GET
//! /api/v1/accounts/lookup?acct=admin` answers the account whose `acct` is `admin`. The
//! recordings hold a few such lookups, so a name no recording looked up was answered a
//! rendered template: another account, under a fresh id.
//!
//! A `GET` without a state operation is learned when its 2xx answers (at least two) are all
//! records of one entity type (objects whose primary key is a key that type's recorded records
//! are kept under, sharing most of their field names), and one query parameter, sent with every one of them, names a top-level string
//! field of the answer: at least two answers held the parameter's value there exactly, and in
//! every other the value was that field's followed by an `@` and more (a name spelled with
//! its domain, `admin@example.com`). Where several fields tie (an account's `acct` and
//! `username`), the one named as the parameter is taken, else none.
//!
//! Not learned: values matched by case or by any other spelling, lookups by several
//! parameters, answers wrapping the record.

use std::collections::BTreeMap;

use serde_json::Value;
use wraith_model::{EntityType, QueryLookup, Route};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::state::RoutePlan;
use crate::values;

/// Fewest answers holding the looked-up value exactly that the rule is learned from.
const MIN_EXACT: usize = 2;

/// Set `query_lookup` on every route of `built` (parallel to `groups`) it holds for.
pub fn learn(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    for (i, (g, p)) in groups.iter().zip(plans).enumerate() {
        if g.method != "GET" || p.state_op.is_some() {
            continue;
        }
        let answers = g.object_answers(obs);
        if answers.len() < MIN_EXACT {
            continue;
        }
        let Some(ty) = record_type(&answers, entity_types) else {
            continue;
        };
        if let Some((param, field)) = looked_up_by(&answers) {
            built[i].query_lookup = Some(QueryLookup {
                entity_type: ty.to_string(),
                param,
                field,
            });
        }
    }
}

/// The entity type every answer is a record of: its primary key a key the type's records were
/// seen under, and its field names mostly (at least 60%, Jaccard) the recorded record's. Where
/// several types fit (an admin's view of an account shares its key), the one whose records
/// share the most field names; `None` on a tie.
fn record_type<'t>(
    answers: &[(&Obs<'_>, Value)],
    entity_types: &'t BTreeMap<String, EntityType>,
) -> Option<&'t str> {
    let mut best: Option<(usize, &str)> = None;
    let mut tied = false;
    for (ty, t) in entity_types {
        let mut shared = 0usize;
        let fits = answers.iter().all(|(_, body)| {
            let Some(record) = body
                .get(&t.primary_key)
                .and_then(values::scalar_key)
                .filter(|k| t.known_ids.contains(k))
                .and_then(|k| t.records.get(&k))
                .and_then(Value::as_object)
            else {
                return false;
            };
            let Some(answer) = body.as_object() else {
                return false;
            };
            let common = answer.keys().filter(|k| record.contains_key(*k)).count();
            shared += common;
            common * 10 >= (answer.len() + record.len() - common) * 6
        });
        if !fits {
            continue;
        }
        match best {
            Some((n, _)) if n > shared => {}
            Some((n, _)) if n == shared => tied = true,
            _ => {
                best = Some((shared, ty.as_str()));
                tied = false;
            }
        }
    }
    best.filter(|_| !tied).map(|(_, ty)| ty)
}

/// The query parameter and answer field every answer ties (see the module doc).
fn looked_up_by(answers: &[(&Obs<'_>, Value)]) -> Option<(String, String)> {
    let (first, body) = answers.first()?;
    let fields = body.as_object()?;
    let mut found: Vec<(String, String)> = Vec::new();
    for (param, _) in &first.query {
        for (field, value) in fields {
            if !value.is_string() {
                continue;
            }
            let mut exact = 0usize;
            let holds = answers.iter().all(|(o, body)| {
                let Some(sent) = o.query.iter().find(|(n, _)| n == param).map(|(_, v)| v) else {
                    return false;
                };
                let Some(held) = body.get(field).and_then(Value::as_str) else {
                    return false;
                };
                if sent == held {
                    exact += 1;
                    true
                } else {
                    sent.strip_prefix(held)
                        .is_some_and(|rest| rest.starts_with('@') && !held.is_empty())
                }
            });
            if holds && exact >= MIN_EXACT {
                found.push((param.clone(), field.clone()));
            }
        }
    }
    // Several ties (an account's `acct` and `username` alike): the field named as the
    // parameter, else none, as which one names the record is not known.
    match found.len() {
        0 => None,
        1 => found.pop(),
        _ => found.into_iter().find(|(param, field)| param == field),
    }
}
