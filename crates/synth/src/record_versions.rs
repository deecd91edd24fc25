//! Routes that list a record's versions (`Route::record_versions`): `GET
//! /statuses/:id/history` answers one item per write of the status, its create first, then
//! each edit, each showing the status as that write answered it. Without this a session's
//! post answered another run's history, whatever the session had written.
//!
//! A `GET` without a state operation is a candidate when its path is a record's own path (a
//! read route's) followed by one literal segment. Per session, the 2xx answers of the type's
//! creates and updates that are objects naming their record by its primary key are the
//! record's writes. Each 2xx answer of the candidate naming a record its session created is a
//! sample: an array with one object per write of the record before it, in order, all with the
//! same fields. Each item field takes its value from one top-level field of the write's
//! answer, one for creates and one for updates (an edit's `created_at` is the update's
//! `edited_at`): the field of the same name where that always agreed, else the only field that
//! always did. Learned from at least two samples, one of them with an update's item, when no
//! sample contradicts it.
//!
//! Not learned: newest-first lists, items nesting the write's fields deeper, records in an
//! envelope.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use wraith_model::{RecordVersions, Route, StateOp, VersionField};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::state::RoutePlan;
use crate::values;

/// Fewest agreeing samples that teach a route.
const MIN_SAMPLES: usize = 2;

/// A record's writes, per (session, entity type, key): (observation, was it a create, answer).
type Writes<'a> = BTreeMap<(&'a str, &'a str, String), Vec<(usize, bool, Map<String, Value>)>>;

/// Set `record_versions` on every route of `built` (parallel to `groups`) it holds for.
pub fn learn(groups: &[RouteGroup], plans: &[RoutePlan], built: &mut [Route], obs: &[Obs<'_>]) {
    let candidates = crate::field_views::sub_resources(groups, plans, "GET");
    if candidates.is_empty() {
        return;
    }
    let types: BTreeSet<&str> = candidates.iter().map(|(_, ty, _)| *ty).collect();
    let mut writes: Writes<'_> = BTreeMap::new();
    for (g, p) in groups.iter().zip(plans) {
        let create = match p.state_op {
            Some(StateOp::Create) => true,
            Some(StateOp::Update) => false,
            _ => continue,
        };
        let (Some(ty), Some(pk)) = (p.entity_type.as_deref(), p.primary_key.as_deref()) else {
            continue;
        };
        let Some(ty) = types.get(ty) else {
            continue;
        };
        if create && !p.record_at.is_empty() {
            continue;
        }
        for &i in &g.obs {
            if !values::is_2xx(obs[i].status) {
                continue;
            }
            let Some(Value::Object(answer)) = obs[i].resp_json() else {
                continue;
            };
            let Some(key) = answer.get(pk).and_then(values::scalar_key) else {
                continue;
            };
            writes
                .entry((obs[i].session, ty, key))
                .or_default()
                .push((i, create, answer));
        }
    }
    for w in writes.values_mut() {
        w.sort_by_key(|(i, _, _)| *i);
    }
    for (gi, ty, param) in candidates {
        if let Some(fields) = fields_of(&groups[gi], ty, param, &writes, obs) {
            built[gi].record_versions = Some(RecordVersions {
                entity_type: ty.to_string(),
                record_param: param.to_string(),
                fields,
            });
        }
    }
}

/// The item fields every sample of route `g` bears out (see the module doc); `None` when a
/// sample contradicts the route listing versions or the evidence is too thin.
fn fields_of(
    g: &RouteGroup,
    ty: &str,
    param: &str,
    writes: &Writes<'_>,
    obs: &[Obs<'_>],
) -> Option<Vec<VersionField>> {
    let at = g.params.iter().position(|p| p == param)?;
    let mut keys: Option<Vec<String>> = None;
    // Per item field, the write fields that held its value: (creates', updates').
    let mut sources: BTreeMap<String, [Option<BTreeSet<String>>; 2]> = BTreeMap::new();
    let (mut samples, mut updates) = (0usize, 0usize);
    for (&i, values) in g.obs.iter().zip(&g.param_values) {
        if !values::is_2xx(obs[i].status) {
            continue;
        }
        let key = wraith_model::request_key::decode_path_segment(values.get(at)?);
        let Some(done) = writes.get(&(obs[i].session, ty, key)) else {
            continue;
        };
        let done: Vec<_> = done.iter().filter(|(j, _, _)| *j < i).collect();
        // Only a record the session created shows every version it has.
        if done.first().is_none_or(|(_, create, _)| !create) {
            continue;
        }
        let Some(Value::Array(items)) = obs[i].resp_json() else {
            return None;
        };
        if items.len() != done.len() {
            return None;
        }
        for (item, (_, create, answer)) in items.iter().zip(done) {
            let Value::Object(item) = item else {
                return None;
            };
            let names: Vec<String> = item.keys().cloned().collect();
            if keys.get_or_insert_with(|| names.clone()) != &names {
                return None;
            }
            for (f, v) in item {
                let held: BTreeSet<String> = answer
                    .iter()
                    .filter(|(_, a)| *a == v)
                    .map(|(k, _)| k.clone())
                    .collect();
                let slot = &mut sources.entry(f.clone()).or_default()[usize::from(!create)];
                let narrowed = match slot.take() {
                    Some(seen) => seen.intersection(&held).cloned().collect(),
                    None => held,
                };
                if narrowed.is_empty() {
                    return None;
                }
                *slot = Some(narrowed);
            }
            updates += usize::from(!create);
        }
        samples += 1;
    }
    if samples < MIN_SAMPLES || updates == 0 {
        return None;
    }
    keys?
        .iter()
        .map(|key| {
            let [creates, updates] = sources.get(key)?;
            Some(VersionField {
                key: key.clone(),
                from_create: pick(key, creates.as_ref()?)?,
                from_update: pick(key, updates.as_ref()?)?,
            })
        })
        .collect()
}

/// The field of the same name when it always held the value, else the only one that did.
fn pick(key: &str, held: &BTreeSet<String>) -> Option<String> {
    if held.contains(key) {
        return Some(key.to_string());
    }
    let mut it = held.iter();
    let one = it.next()?;
    it.next().is_none().then(|| one.clone())
}
