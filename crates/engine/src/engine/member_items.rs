//! How a session's member list (`Namespace::members`) shows a member it holds no record of.
//! A list's items can be a view of the record (fewer fields) and show it in the state the
//! record had when the list was read, so a member is shown as the list's own recorded answers
//! showed it (preferring the runs this session is consistent with), then, for a principal's own
//! record, as the session last saw it in an answer carrying it (`Namespace::actor_views`: a
//! post's `account`), before the model's merged record of the member, which holds its latest
//! recorded state from any route, whichever run that was.

use serde_json::Value;
use wraith_model::{RecordedBody, Route};

use super::{Engine, run_history};
use crate::fixtures::scalar_key;
use crate::namespace::Namespace;
use crate::util::{json_pointer_get, normalize_path};

/// The items of one recorded list answer of `route` at `path`, with the run that recorded it.
fn recorded_pages<'r>(route: &'r Route, path: &str) -> Vec<(&'r str, Vec<Value>)> {
    let Some(shape) = route.list.as_ref() else {
        return Vec::new();
    };
    let mut pages = Vec::new();
    for entry in route
        .exact
        .iter()
        .filter(|e| normalize_path(&e.key.path).is_ok_and(|p| p == path))
    {
        for m in entry
            .moments
            .iter()
            .filter(|m| (200..300).contains(&m.status))
        {
            let RecordedBody::Json { value } = &m.body else {
                continue;
            };
            let Ok(body) = value.parse() else {
                continue;
            };
            let Some(Value::Array(items)) = json_pointer_get(&body, &shape.items_pointer) else {
                continue;
            };
            let run = m.source.rsplit_once('/').map_or("", |(run, _)| run);
            pages.push((run, items.clone()));
        }
    }
    pages
}

impl Engine {
    /// The items of the session's member list `members` of route `route` read at `path`:
    /// each member as the session stored it, else as the list's recorded answers showed it
    /// (a run this session's answers came from first, then one its requests are consistent
    /// with, then the latest recorded), else, for a principal's own record, as the session
    /// last saw it, else as the model records it. A member deleted in the
    /// session, or known nowhere, is left out.
    pub(super) fn member_items(
        &self,
        ns: &Namespace,
        route: &Route,
        path: &str,
        member_type: &str,
        members: &[String],
    ) -> Vec<Value> {
        let pk = self.pk_of(member_type);
        let mut pages: Option<Vec<(&str, Vec<Value>)>> = None;
        let mut items = Vec::with_capacity(members.len());
        for id in members {
            if ns.entity(member_type, id).is_none() && ns.is_deleted(member_type, id).is_none() {
                let pages = pages.get_or_insert_with(|| {
                    normalize_path(path).map_or_else(|_| Vec::new(), |p| recorded_pages(route, &p))
                });
                let listed = |run: &str| {
                    pages
                        .iter()
                        .rev()
                        .filter(|(r, _)| *r == run || run.is_empty())
                        .find_map(|(_, items)| {
                            items.iter().find(|i| {
                                i.get(&pk).and_then(scalar_key).as_deref() == Some(id.as_str())
                            })
                        })
                };
                let preferred = |set: &Option<run_history::RunSet>| {
                    set.iter()
                        .flat_map(|s| s.iter())
                        .find_map(|run| listed(self.run_index().name(*run)))
                };
                if let Some(item) = preferred(&ns.answer_runs)
                    .or_else(|| preferred(&ns.replay_sessions))
                    .or_else(|| listed(""))
                {
                    items.push(item.clone());
                    continue;
                }
                // The acting principal's own record, as this session last saw it.
                if let Some(view) = actor_view(ns, member_type, id) {
                    items.push(view.clone());
                    continue;
                }
            }
            if let Some(v) = self.base_entity(ns, member_type, id) {
                items.push(v);
            }
        }
        items
    }
}

/// The view this session last saw of a principal's own record (`Namespace::actor_views`) whose
/// key is `id`, if `id` is some principal's record of `member_type`.
fn actor_view<'n>(ns: &'n Namespace, member_type: &str, id: &str) -> Option<&'n Value> {
    ns.actors
        .iter()
        .find(|((_, ty), key)| ty == member_type && key.as_str() == id)
        .and_then(|(principal_type, _)| ns.actor_views.get(principal_type))
}
