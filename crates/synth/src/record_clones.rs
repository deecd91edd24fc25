//! Routes that copy a record (`Route::record_clone`): `POST /volumes/:id/clone` answers a new
//! volume with the source's size and region under a key of its own, which the client then
//! reads and deletes as any volume. Without this the copy was answered from its one recording
//! (another run's size and region, the recorded key, stored nowhere), so the session's reads of
//! it found nothing.
//!
//! A `POST` without a state operation is a candidate when its path is a record's own path (a
//! read route's) followed by one literal segment. Each 2xx answer that is an object naming, by
//! the type's primary key, another record than the path's is a sample when its session later
//! addressed that key on one of the type's own routes with a 2xx answer (it is a record of the
//! type) and had seen the path's record before (a create, read or update answer of it). The
//! copied fields are the top-level fields every sample's answer held as that latest view of
//! the source record did, but the key and the fields its request sent. Learned from one sample
//! with at least two copied fields: the later use of the new key and the copied fields
//! together say what the route does; a sample whose answer names the path's own record, or is
//! never used as a record, teaches nothing, and a contradicting one (no such later use) unlearns
//! it.
//!
//! Not learned: copies into another type, records in an envelope.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use wraith_model::{BodyTemplate, HoleKind, Node, RecordClone, Route, StateOp};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::state::RoutePlan;
use crate::values;

/// Fewest copied fields that say an answer is a copy of the path's record.
const MIN_COPIES: usize = 2;

/// A record of one session: (session, entity type, key).
type SessionRecord = (String, String, String);

/// One view of a record: the observation and the answer.
type View = (usize, Map<String, Value>);

/// Per (session, entity type, key): the observation indexes that addressed the record on one
/// of the type's own routes with a 2xx answer, and the record's views there.
#[derive(Default)]
struct Seen {
    addressed: BTreeMap<SessionRecord, Vec<usize>>,
    views: BTreeMap<SessionRecord, Vec<View>>,
}

/// Set `record_clone` on every route of `built` (parallel to `groups`) it holds for.
pub fn learn(groups: &[RouteGroup], plans: &[RoutePlan], built: &mut [Route], obs: &[Obs<'_>]) {
    let candidates = crate::field_views::sub_resources(groups, plans, "POST");
    if candidates.is_empty() {
        return;
    }
    let types: BTreeSet<&str> = candidates.iter().map(|(_, ty, _)| *ty).collect();
    let seen = seen(groups, plans, obs, &types);
    for (gi, ty, param) in candidates {
        let Some(pk) = plans
            .iter()
            .find(|p| p.entity_type.as_deref() == Some(ty))
            .and_then(|p| p.primary_key.as_deref())
        else {
            continue;
        };
        if let Some(copies) = copies_of(&groups[gi], (ty, pk, param), &seen, obs) {
            // A position the template mints or stamps is the copy's own (its `created`), even
            // where the source's recorded value was the same (a scrubbed timestamp).
            let own = minted(&built[gi]);
            let copies: Vec<String> = copies.into_iter().filter(|f| !own.contains(f)).collect();
            if copies.len() < MIN_COPIES {
                continue;
            }
            built[gi].record_clone = Some(RecordClone {
                entity_type: ty.to_string(),
                record_param: param.to_string(),
                copies,
            });
        }
    }
}

/// The top-level fields a 2xx variant of `route` mints or stamps (a generated, clock or
/// counter hole).
fn minted(route: &Route) -> BTreeSet<String> {
    route
        .variants
        .iter()
        .filter(|v| values::is_2xx(v.status))
        .filter_map(|v| match &v.body {
            BodyTemplate::Json {
                root: Node::Object { fields },
            } => Some(fields),
            _ => None,
        })
        .flatten()
        .filter(|f| {
            matches!(
                &f.value,
                Node::Hole(h) if matches!(
                    h.source,
                    HoleKind::Generated { .. } | HoleKind::Clock { .. } | HoleKind::Counter { .. }
                )
            )
        })
        .map(|f| f.key.clone())
        .collect()
}

/// Where each session addressed and viewed records of `types`.
fn seen(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    obs: &[Obs<'_>],
    types: &BTreeSet<&str>,
) -> Seen {
    let mut out = Seen::default();
    for (g, p) in groups.iter().zip(plans) {
        let Some(ty) = p.entity_type.as_deref().filter(|t| types.contains(t)) else {
            continue;
        };
        let at = p
            .id_param
            .as_ref()
            .and_then(|id| g.params.iter().position(|q| q == id));
        let viewed = matches!(
            p.state_op,
            Some(StateOp::Create | StateOp::Read | StateOp::Update)
        ) && p.record_at.is_empty();
        for (&i, values) in g.obs.iter().zip(&g.param_values) {
            if !values::is_2xx(obs[i].status) {
                continue;
            }
            let session = obs[i].session.to_string();
            if let Some(key) = at.and_then(|a| values.get(a)) {
                let key = wraith_model::request_key::decode_path_segment(key);
                out.addressed
                    .entry((session.clone(), ty.to_string(), key))
                    .or_default()
                    .push(i);
            }
            if !viewed {
                continue;
            }
            let (Some(pk), Some(Value::Object(answer))) =
                (p.primary_key.as_deref(), obs[i].resp_json())
            else {
                continue;
            };
            if let Some(key) = answer.get(pk).and_then(values::scalar_key) {
                out.views
                    .entry((session, ty.to_string(), key))
                    .or_default()
                    .push((i, answer));
            }
        }
    }
    out
}

/// The fields every sample of route `g` copied from the path's record (see the module doc);
/// `None` without a sample, when a sample contradicts it, or with too few fields.
fn copies_of(
    g: &RouteGroup,
    (ty, pk, param): (&str, &str, &str),
    seen: &Seen,
    obs: &[Obs<'_>],
) -> Option<Vec<String>> {
    let at = g.params.iter().position(|p| p == param)?;
    let mut copies: Option<BTreeSet<String>> = None;
    for (&i, values) in g.obs.iter().zip(&g.param_values) {
        if !values::is_2xx(obs[i].status) {
            continue;
        }
        let source = wraith_model::request_key::decode_path_segment(values.get(at)?);
        let Some(Value::Object(answer)) = obs[i].resp_json() else {
            return None;
        };
        let copy = answer.get(pk).and_then(values::scalar_key)?;
        if copy == source {
            return None;
        }
        let session = obs[i].session.to_string();
        let used = seen
            .addressed
            .get(&(session.clone(), ty.to_string(), copy))
            .is_some_and(|at| at.iter().any(|j| *j > i));
        if !used {
            return None;
        }
        let Some((_, view)) = seen
            .views
            .get(&(session, ty.to_string(), source))
            .and_then(|v| v.iter().rev().find(|(j, _)| *j < i))
        else {
            continue;
        };
        let sent: BTreeSet<&str> = obs[i]
            .req_fields
            .iter()
            .filter_map(|(p, _)| p.strip_prefix('/')?.split('/').next())
            .collect();
        let held: BTreeSet<String> = answer
            .iter()
            .filter(|(k, v)| *k != pk && !sent.contains(k.as_str()) && view.get(*k) == Some(*v))
            .map(|(k, _)| k.clone())
            .collect();
        copies = Some(match copies {
            Some(c) => c.intersection(&held).cloned().collect(),
            None => held,
        });
    }
    copies
        .filter(|c| c.len() >= MIN_COPIES)
        .map(|c| c.into_iter().collect())
}
