//! Creates whose answer carries the new record one key deeper, as a record of another
//! collection's entity type (an upload answering `{"upload_to": …, "image": {…}}` creates the
//! `images` record at `/image`), learned from the session's later views of that record
//! ([`wraith_model::Route::record_at`]).
//!
//! Rules, all from the recordings:
//! - the route is a `POST` the state plan left without a state operation, its last segment is
//!   no search-like word (as for creates), and every 2xx answer is the same one-key envelope
//!   under the same key ([`state::envelope_of`]: an object with no identifier-like key of its
//!   own whose one object member names itself with an identifier-like key);
//! - for an entity type `T` with primary key `pk`: every answer's wrapped object holds `pk` as a
//!   scalar that is none of the request's path ids, no two answers hold the same key, and no
//!   read, update or delete of `T` addresses that key in another session, or earlier in the
//!   answer's own session (a created record is new to its session and to every other);
//! - at least one answer's record is *seen*: a later 2xx read or update of `T` in the same
//!   session addresses the key and answers a record carrying it, bare or in the same envelope
//!   as the answers, whose field names overlap the wrapped object's by at least 60% (Jaccard),
//!   or a later 2xx list of `T` lists an item with that key that overlaps as much. A later 2xx
//!   read or update of the key answering no such record (another record, or the record under
//!   another key, which the envelope rule of [`state`] also refuses) contradicts, and `T` is
//!   not learned;
//! - exactly one type qualifies.
//!
//! The route then plans a create of `T` whose record sits at the envelope's key; a record whose
//! key is never read back in its session teaches nothing.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::StateOp;

use crate::observe::{Obs, escape_token};
use crate::routes::{RouteGroup, Seg};
use crate::state::{self, Plans};
use crate::values;

/// Field-name overlap (Jaccard) a view must share with the wrapped object.
const MIN_OVERLAP: f64 = 0.6;

/// One 2xx answer of a candidate route: its observation, the request's path ids (decoded)
/// and the wrapped object.
struct Answer {
    obs: usize,
    path_ids: Vec<String>,
    record: serde_json::Map<String, Value>,
}

/// Plans, for every `POST` route that qualifies (see the module doc), a create of the entity
/// type its answers wrap, with [`state::RoutePlan::record_at`] set to the wrapping key.
pub fn learn(groups: &[RouteGroup], plans: &mut Plans, obs: &[Obs<'_>]) {
    let candidates: Vec<(usize, String, Vec<Answer>)> = groups
        .iter()
        .enumerate()
        .filter_map(|(gi, g)| candidate(g, plans.routes.get(gi)?, obs).map(|(k, a)| (gi, k, a)))
        .collect();
    if candidates.is_empty() {
        return;
    }
    // Which route (and which of its observations) each observation belongs to.
    let route_of = crate::routes::route_of(groups, obs.len());
    let mut learned = Vec::new();
    for (gi, key, answers) in candidates {
        let types: Vec<(&String, &String)> = plans
            .primary_keys
            .iter()
            .filter(|(ty, pk)| {
                qualifies(
                    groups,
                    plans,
                    obs,
                    &route_of,
                    (ty.as_str(), pk.as_str()),
                    (&key, &answers),
                )
            })
            .collect();
        if let [(ty, pk)] = types.as_slice() {
            learned.push((gi, (*ty).clone(), (*pk).clone(), key));
        }
    }
    for (gi, ty, pk, key) in learned {
        if let Some(plan) = plans.routes.get_mut(gi) {
            plan.state_op = Some(StateOp::Create);
            plan.entity_type = Some(ty);
            plan.primary_key = Some(pk);
            plan.id_param = None;
            plan.parent_params = Vec::new();
            plan.items_pointer = None;
            plan.record_at = format!("/{}", escape_token(&key));
        }
    }
}

/// The wrapping key and the 2xx answers of a `POST` route the plan left without a state
/// operation, when every 2xx answer is the same one-key envelope.
fn candidate(
    g: &RouteGroup,
    plan: &state::RoutePlan,
    obs: &[Obs<'_>],
) -> Option<(String, Vec<Answer>)> {
    if g.method != "POST" || plan.state_op.is_some() {
        return None;
    }
    let last = match g.segs.last() {
        Some(Seg::Lit(l)) => Some(l.as_str()),
        _ => None,
    };
    if last.is_some_and(|l| state::SEARCH_LIKE.contains(&l))
        || g.literal_before(g.segs.len().saturating_sub(1)) == Some("actions")
    {
        return None;
    }
    let mut key: Option<String> = None;
    let mut answers = Vec::new();
    for (k, i) in g.obs.iter().enumerate() {
        let o = obs.get(*i)?;
        if !values::is_2xx(o.status) {
            continue;
        }
        let body = o.resp_json()?;
        let (wrap, inner) = state::envelope_of(&body)?;
        if key.as_deref().is_some_and(|k| k != wrap) {
            return None;
        }
        key = Some(wrap.to_string());
        answers.push(Answer {
            obs: *i,
            path_ids: g
                .param_values
                .get(k)
                .map(|vs| vs.iter().map(|v| values::decode_segment(v)).collect())
                .unwrap_or_default(),
            record: inner.as_object()?.clone(),
        });
    }
    Some((key?, answers))
}

/// Whether the answers' wrapped objects are new records of entity type `ty` (primary key
/// `pk`) that the sessions saw again (see the module doc).
fn qualifies(
    groups: &[RouteGroup],
    plans: &Plans,
    obs: &[Obs<'_>],
    route_of: &[Option<(usize, usize)>],
    (ty, pk): (&str, &str),
    (key, answers): (&str, &[Answer]),
) -> bool {
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    for (n, a) in answers.iter().enumerate() {
        let Some(id) = a.record.get(pk).and_then(state::scalar_string) else {
            return false;
        };
        if a.path_ids.contains(&id) || ids.insert(id, n).is_some() {
            return false;
        }
    }
    // Every id route of the type addressing one of the keys: only later in the answer's own
    // session.
    for (gi, g) in groups.iter().enumerate() {
        let Some(plan) = plans.routes.get(gi) else {
            continue;
        };
        if plan.entity_type.as_deref() != Some(ty) || plan.id_param.is_none() {
            continue;
        }
        for (k, i) in g.obs.iter().enumerate() {
            let Some(id) = g.param_values.get(k).and_then(|vs| vs.last()) else {
                continue;
            };
            let Some(n) = ids.get(&values::decode_segment(id)) else {
                continue;
            };
            let a = &answers[*n];
            let later_same_session =
                *i > a.obs && obs.get(*i).map(|o| o.session) == obs.get(a.obs).map(|o| o.session);
            if !later_same_session {
                return false;
            }
        }
    }
    let mut seen = false;
    for (id, n) in &ids {
        let a = &answers[*n];
        let Some(session) = obs.get(a.obs).map(|o| o.session) else {
            continue;
        };
        let mine: BTreeSet<&str> = a.record.keys().map(String::as_str).collect();
        for j in a.obs + 1..obs.len() {
            let o = &obs[j];
            if o.session != session {
                break;
            }
            let Some((r, k)) = route_of[j] else { continue };
            let Some(plan) = plans.routes.get(r) else {
                continue;
            };
            if plan.entity_type.as_deref() != Some(ty) || !values::is_2xx(o.status) {
                continue;
            }
            match plan.state_op {
                Some(StateOp::Read | StateOp::Update) => {
                    let addressed = groups[r]
                        .param_values
                        .get(k)
                        .and_then(|vs| vs.last())
                        .is_some_and(|v| values::decode_segment(v) == *id);
                    if !addressed {
                        continue;
                    }
                    let Some(body) = o.resp_json() else { continue };
                    // The record bare, or in the envelope the answers use: a read wrapping it
                    // under another key says the two are not one record.
                    let view = match state::envelope_of(&body) {
                        Some((k, inner)) if k == key => Some(inner),
                        Some(_) => None,
                        None => Some(&body),
                    }
                    .filter(|r| r.get(pk).and_then(state::scalar_string).as_ref() == Some(id))
                    .and_then(Value::as_object);
                    match view {
                        Some(view) if overlaps(&mine, view) => seen = true,
                        _ => return false,
                    }
                }
                Some(StateOp::List) => {
                    if !o.response_holds_any([id.as_str()]) {
                        continue;
                    }
                    let Some(body) = o.resp_json() else { continue };
                    let items = plan
                        .items_pointer
                        .as_deref()
                        .and_then(|p| body.pointer(p))
                        .and_then(Value::as_array);
                    let listed = items.into_iter().flatten().find_map(|item| {
                        item.as_object().filter(|m| {
                            m.get(pk).and_then(state::scalar_string).as_ref() == Some(id)
                        })
                    });
                    if listed.is_some_and(|item| overlaps(&mine, item)) {
                        seen = true;
                    }
                }
                _ => {}
            }
        }
    }
    seen
}

/// Whether a view's field names overlap the wrapped object's by at least [`MIN_OVERLAP`].
fn overlaps(mine: &BTreeSet<&str>, view: &serde_json::Map<String, Value>) -> bool {
    let theirs: BTreeSet<&str> = view.keys().map(String::as_str).collect();
    let union = mine.union(&theirs).count();
    union > 0 && mine.intersection(&theirs).count() as f64 / union as f64 >= MIN_OVERLAP
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn overlap_is_the_jaccard_of_field_names() {
        let mine: BTreeSet<&str> = ["id", "label", "size", "status"].into_iter().collect();
        let same = json!({"id": 1, "label": "x", "size": 0, "status": "ok", "regions": []});
        assert!(overlaps(&mine, same.as_object().unwrap()));
        let other = json!({"id": 1, "token": "t", "scopes": "*"});
        assert!(!overlaps(&mine, other.as_object().unwrap()));
    }
}
