//! Create variants whose answers are records of another entity type than their route's
//! ([`wraith_model::Variant::record_type`]): Mastodon's `POST /api/v1/statuses` answers a post,
//! but with `scheduled_at` it answers a scheduled post, which the client then reads, updates and
//! deletes under `/api/v1/scheduled_statuses/:id`. A twin storing that answer as a post lists
//! and reads nothing under the scheduled posts' routes.
//!
//! Rules, all from the recordings, per 2xx variant of a create route of type `E` (its answers
//! the variant's `evidence.sources`, objects at the top level):
//! - an answer is *seen as* `T` (another type) when a later 2xx read or update of `T` in the
//!   same session addresses the value the answer holds at `T`'s primary key and answers a record
//!   holding that key whose field names overlap the answer's by at least 60% (Jaccard);
//! - an answer is *seen as* `E` (contradicting) when a later 2xx read or update of `E` in the
//!   same session addresses the answer's own key and answers a record holding it;
//! - the variant's answers are of `T` when at least one is seen as `T`, every one seen as some
//!   type is seen as `T` only, and none is seen as `E`.
//!
//! A variant whose records are never read back in their session teaches nothing (it stays of
//! the route's type).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;
use wraith_model::{EntityType, Route, StateOp};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::values;

/// Field-name overlap (Jaccard) a later view must share with the created answer.
const MIN_OVERLAP: f64 = 0.6;

/// Set `record_type` on every create variant whose answers are records of another type
/// (see the module doc). `built` is parallel to `groups`.
pub fn learn(
    groups: &[RouteGroup],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    let creates: Vec<usize> = built
        .iter()
        .enumerate()
        .filter(|(_, r)| r.state_op == Some(StateOp::Create) && r.entity_type.is_some())
        .map(|(i, _)| i)
        .collect();
    if creates.is_empty() {
        return;
    }
    let route_of = crate::routes::route_of(groups, obs.len());
    let by_source: HashMap<&str, usize> = obs
        .iter()
        .enumerate()
        .map(|(i, o)| (o.source.as_str(), i))
        .collect();
    let views = Views {
        groups,
        built,
        entity_types,
        obs,
        route_of: &route_of,
    };
    let mut learned: Vec<(usize, usize, String)> = Vec::new();
    for r in creates {
        let Some(own) = built[r].entity_type.as_deref() else {
            continue;
        };
        for (vi, variant) in built[r].variants.iter().enumerate() {
            if !values::is_2xx(variant.status) {
                continue;
            }
            let answers = variant
                .evidence
                .sources
                .iter()
                .filter_map(|s| by_source.get(s.as_str()).copied());
            if let Some(ty) = views.record_type(own, answers) {
                learned.push((r, vi, ty));
            }
        }
    }
    for (r, vi, ty) in learned {
        if let Some(v) = built
            .get_mut(r)
            .and_then(|route| route.variants.get_mut(vi))
        {
            v.record_type = Some(ty);
        }
    }
}

/// What the rules read: the routes, the types and every observation's route.
struct Views<'a, 'o> {
    groups: &'a [RouteGroup],
    built: &'a [Route],
    entity_types: &'a BTreeMap<String, EntityType>,
    obs: &'a [Obs<'o>],
    /// Each observation's route and its position among that route's observations.
    route_of: &'a [Option<(usize, usize)>],
}

impl Views<'_, '_> {
    /// The type every answer seen as some type is seen as, when it is not `own` (see the
    /// module doc).
    fn record_type(&self, own: &str, answers: impl Iterator<Item = usize>) -> Option<String> {
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for i in answers {
            let Some(body) = self.obs[i].resp_json() else {
                continue;
            };
            let Some(answer) = body.as_object() else {
                continue;
            };
            for ty in self.seen_as(i, answer) {
                if ty == own {
                    return None;
                }
                seen.insert(ty.to_string());
            }
        }
        let mut seen = seen.into_iter();
        match (seen.next(), seen.next()) {
            (Some(ty), None) => Some(ty),
            _ => None,
        }
    }

    /// The types of the later reads and updates of answer `at`'s session that view it.
    fn seen_as(&self, at: usize, answer: &serde_json::Map<String, Value>) -> BTreeSet<&str> {
        let mut types = BTreeSet::new();
        let session = self.obs[at].session;
        let mine: BTreeSet<&str> = answer.keys().map(String::as_str).collect();
        for j in at + 1..self.obs.len() {
            let o = &self.obs[j];
            if o.session != session {
                break;
            }
            let Some((r, k)) = self.route_of[j] else {
                continue;
            };
            let route = &self.built[r];
            let (Some(ty), Some(StateOp::Read | StateOp::Update)) =
                (route.entity_type.as_deref(), route.state_op)
            else {
                continue;
            };
            if !values::is_2xx(o.status) {
                continue;
            }
            let Some(pk) = self.entity_types.get(ty).map(|t| t.primary_key.as_str()) else {
                continue;
            };
            let Some(key) = answer.get(pk).and_then(values::scalar_key) else {
                continue;
            };
            let addressed = self.groups[r]
                .param_values
                .get(k)
                .and_then(|vs| vs.last())
                .is_some_and(|v| values::decode_segment(v) == key);
            if !addressed {
                continue;
            }
            let Some(body) = o.resp_json() else { continue };
            let viewed = body
                .as_object()
                .filter(|view| view.get(pk).and_then(values::scalar_key).as_ref() == Some(&key))
                .is_some_and(|view| overlaps(&mine, view));
            if viewed {
                types.insert(ty);
            }
        }
        types
    }
}

/// Whether a view's field names overlap the answer's by at least [`MIN_OVERLAP`].
fn overlaps(mine: &BTreeSet<&str>, view: &serde_json::Map<String, Value>) -> bool {
    let theirs: BTreeSet<&str> = view.keys().map(String::as_str).collect();
    let union = mine.union(&theirs).count();
    union > 0 && mine.intersection(&theirs).count() as f64 / union as f64 >= MIN_OVERLAP
}
