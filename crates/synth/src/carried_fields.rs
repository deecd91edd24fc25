//! Answer fields a record carries from what its writes sent (`Route::carried_fields`).
//!
//! Some APIs answer a read or a delete of a record with a field its create never answered,
//! holding what a write of the record sent: Mastodon answers a deleted status with its source
//! `text`, the `status` its create (or its last edit) sent, so a client can redraft it. The
//! session's store holds the record as the create answered it, without that field, so a
//! rendered delete showed another recording's text. This stage learns, per read, update or
//! delete route of an entity type, which top-level answer field holds which request field of
//! the record's writes: walking each session in recorded order, it keeps, per record, the
//! latest value every 2xx create or update of its type sent at each body leaf; a 2xx answer of
//! the route naming a record the session wrote is a sample. A field is learned from a request
//! pointer when at least [`MIN_SAMPLES`] samples had a value there, with at least two distinct
//! values, every one of them equal to the answer's (strings only: a number or a boolean equal
//! to a sent one is too likely a coincidence), and no create answer of the type ever had the
//! field (a field the create answers is stored with the record and answered from it).
//!
//! Not here: applying them (the engine remembers the sent values per record and writes them
//! into the route's answers).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{CarriedField, CarriedRecord, EntityType, Route, StateOp};

use crate::observe::Obs;
use crate::routes::{RecordKey, RouteGroup, create_answers};
use crate::state::RoutePlan;
use crate::values::{self, scalar_key};

/// Fewest recorded answers, each of a record its session wrote, that may teach a field.
const MIN_SAMPLES: usize = 2;

/// Learn every route's carried fields into `built` (same order as `groups`).
pub fn learn(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    // Fields some create of each type answered, and every 2xx write of a record, in order.
    let mut created_fields: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut writes: BTreeMap<RecordKey<'_>, Vec<usize>> = BTreeMap::new();
    for (ty, pk, i) in create_answers(groups, built, entity_types, obs) {
        let Some(Value::Object(body)) = obs[i].resp_json() else {
            continue;
        };
        let fields = created_fields.entry(ty).or_default();
        fields.extend(body.keys().cloned());
        if let Some(key) = body.get(pk).and_then(scalar_key) {
            writes.entry((obs[i].session, ty, key)).or_default().push(i);
        }
    }
    for (g, route) in groups.iter().zip(built.iter()) {
        if route.state_op == Some(StateOp::Update) {
            for (i, key) in record_keys(g, route, obs) {
                writes.entry(key).or_default().push(i);
            }
        }
    }
    for at in writes.values_mut() {
        at.sort_unstable();
    }
    // Sub-resource reads (`GET /statuses/:id/source`): the record their path's parameter names.
    let mut sub_records: Vec<Option<CarriedRecord>> = vec![None; groups.len()];
    for (i, ty, param) in crate::field_views::sub_resources(groups, plans, "GET") {
        sub_records[i] = Some(CarriedRecord {
            entity_type: ty.to_string(),
            record_param: param.to_string(),
        });
    }
    let mut tallies: Vec<Option<(&str, Tally)>> = Vec::with_capacity(built.len());
    for ((g, route), sub) in groups.iter().zip(built.iter()).zip(&sub_records) {
        let (ty, keys) = match (route.state_op, route.entity_type.as_deref(), sub) {
            (Some(StateOp::Read | StateOp::Update | StateOp::Delete), Some(ty), _) => {
                (ty, record_keys(g, route, obs))
            }
            (None, _, Some(sub)) => match entity_types.get_key_value(&sub.entity_type) {
                Some((ty, _)) => (ty.as_str(), param_keys(g, ty, &sub.record_param, obs)),
                None => {
                    tallies.push(None);
                    continue;
                }
            },
            _ => {
                tallies.push(None);
                continue;
            }
        };
        let never_created =
            |field: &str| !created_fields.get(ty).is_some_and(|f| f.contains(field));
        let mut tally = Tally::new();
        for (i, key) in keys {
            let Some(Value::Object(answer)) = obs[i].resp_json() else {
                continue;
            };
            // What the session's writes of this record last sent, up to this answer (an
            // update's own request included).
            let mut sent: BTreeMap<&str, &Value> = BTreeMap::new();
            let Some(at) = writes.get(&key) else {
                continue;
            };
            for &w in at.iter().take_while(|&&w| w <= i) {
                for (p, v) in &obs[w].req_fields {
                    sent.insert(p.as_str(), v);
                }
            }
            if sent.is_empty() {
                continue;
            }
            for (field, value) in &answer {
                let Value::String(text) = value else {
                    continue;
                };
                if text.is_empty() || !never_created(field) {
                    continue;
                }
                for (p, v) in &sent {
                    let Value::String(s) = v else { continue };
                    let entry = tally.entry((field.clone(), (*p).to_string())).or_default();
                    if s == text {
                        entry.0 += 1;
                        entry.1.insert(s.clone());
                    } else {
                        entry.2 = true;
                    }
                }
            }
        }
        tallies.push(Some((ty, tally)));
    }
    // The record's own routes first; what they learned for a type vouches for a sub-resource
    // read of it that showed the same field only once.
    let mut out: Vec<Vec<CarriedField>> = vec![Vec::new(); built.len()];
    let mut vouched: BTreeSet<(&str, String, String)> = BTreeSet::new();
    for ((slot, tally), sub) in out.iter_mut().zip(&tallies).zip(&sub_records) {
        if let (Some((ty, tally)), None) = (tally, sub) {
            *slot = carried(tally, |_, _| false);
            vouched.extend(slot.iter().map(|c| (*ty, c.field.clone(), c.from.clone())));
        }
    }
    for ((slot, tally), sub) in out.iter_mut().zip(&tallies).zip(&sub_records) {
        if let (Some((ty, tally)), Some(_)) = (tally, sub) {
            *slot = carried(tally, |field, from| {
                vouched.contains(&(*ty, field.to_string(), from.to_string()))
            });
        }
    }
    for ((route, carried), sub) in built.iter_mut().zip(out).zip(sub_records) {
        route.carried_record = sub.filter(|_| !carried.is_empty());
        route.carried_fields = carried;
    }
}

/// Per (answer field, request pointer): how many samples agreed, the values they agreed on,
/// and whether one disagreed.
type Tally = BTreeMap<(String, String), (usize, BTreeSet<String>, bool)>;

/// The fields a route's tally bears out: no sample disagreeing, and at least
/// [`MIN_SAMPLES`] agreeing on two distinct values, or one sample where `vouched` says the
/// type's own routes carry the field from the pointer.
fn carried(tally: &Tally, vouched: impl Fn(&str, &str) -> bool) -> Vec<CarriedField> {
    let mut learned: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
    for ((field, from), (agreed, distinct, disagreed)) in tally {
        let enough = (*agreed >= MIN_SAMPLES && distinct.len() >= 2)
            || (*agreed >= 1 && vouched(field, from));
        if *disagreed || !enough {
            continue;
        }
        // Of several pointers, the one most samples agreed on (the first in sorted order
        // among equals).
        if learned.get(field.as_str()).is_none_or(|(n, _)| agreed > n) {
            learned.insert(field, (*agreed, from));
        }
    }
    learned
        .into_iter()
        .map(|(field, (_, from))| CarriedField {
            field: field.to_string(),
            from: from.to_string(),
        })
        .collect()
}

/// The 2xx observations of a sub-resource read, with the record of type `ty` its parameter
/// `param` names.
fn param_keys<'a>(
    g: &RouteGroup,
    ty: &'a str,
    param: &str,
    obs: &[Obs<'a>],
) -> Vec<(usize, RecordKey<'a>)> {
    let Some(pi) = g.params.iter().position(|n| n == param) else {
        return Vec::new();
    };
    g.obs
        .iter()
        .zip(&g.param_values)
        .filter(|(i, _)| values::is_2xx(obs[**i].status))
        .filter_map(|(&i, vals)| {
            let id = vals.get(pi)?;
            Some((i, (obs[i].session, ty, values::decode_segment(id))))
        })
        .collect()
}

/// The 2xx observations of a route whose path names one record of its type, with the record.
fn record_keys<'a>(
    g: &RouteGroup,
    route: &'a Route,
    obs: &[Obs<'a>],
) -> Vec<(usize, RecordKey<'a>)> {
    match (route.entity_type.as_deref(), route.id_param.as_deref()) {
        (Some(ty), Some(param)) => param_keys(g, ty, param, obs),
        _ => Vec::new(),
    }
}
