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
use wraith_model::{CarriedField, EntityType, Route, StateOp};

use crate::observe::Obs;
use crate::routes::{RecordKey, RouteGroup, create_answers};
use crate::values::{self, scalar_key};

/// Fewest recorded answers, each of a record its session wrote, that may teach a field.
const MIN_SAMPLES: usize = 2;

/// Learn every route's carried fields into `built` (same order as `groups`).
pub fn learn(
    groups: &[RouteGroup],
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
    let mut out: Vec<Vec<CarriedField>> = vec![Vec::new(); built.len()];
    for ((g, route), carried) in groups.iter().zip(built.iter()).zip(out.iter_mut()) {
        if !matches!(
            route.state_op,
            Some(StateOp::Read | StateOp::Update | StateOp::Delete)
        ) {
            continue;
        }
        let Some(ty) = route.entity_type.as_deref() else {
            continue;
        };
        let never_created =
            |field: &str| !created_fields.get(ty).is_some_and(|f| f.contains(field));
        // Per (answer field, request pointer): how many samples agreed, the values they
        // agreed on, and whether one disagreed.
        let mut tally: BTreeMap<(String, String), (usize, BTreeSet<String>, bool)> =
            BTreeMap::new();
        for (i, key) in record_keys(g, route, obs) {
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
        let mut learned: BTreeMap<String, (usize, String)> = BTreeMap::new();
        for ((field, from), (agreed, distinct, disagreed)) in tally {
            if disagreed || agreed < MIN_SAMPLES || distinct.len() < 2 {
                continue;
            }
            // Of several pointers, the one most samples agreed on (the first in sorted order
            // among equals).
            if learned.get(&field).is_none_or(|(n, _)| agreed > *n) {
                learned.insert(field, (agreed, from));
            }
        }
        *carried = learned
            .into_iter()
            .map(|(field, (_, from))| CarriedField { field, from })
            .collect();
    }
    for (route, carried) in built.iter_mut().zip(out) {
        route.carried_fields = carried;
    }
}

/// The 2xx observations of a route whose path names one record of its type, with the record.
fn record_keys<'a>(
    g: &RouteGroup,
    route: &'a Route,
    obs: &[Obs<'a>],
) -> Vec<(usize, RecordKey<'a>)> {
    let (Some(ty), Some(param)) = (route.entity_type.as_deref(), route.id_param.as_deref()) else {
        return Vec::new();
    };
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
