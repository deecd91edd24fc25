//! Member effects (`Route::member_effects`): a write whose member is not in its body adds a
//! record to, or removes one from, a list another route reads, and the acting principal's own
//! record (`Route::actor_record`) that some of them add. The session's member lists are the
//! same ones membership actions write (`Namespace::members`), so a later read of the list
//! answers the session's members (see `Engine::member_list`).

use wraith_model::{MemberSource, Route};

use super::{Call, Engine, Out};
use crate::Request;
use crate::fixtures;
use crate::namespace::Namespace;

/// The number of path parameters of a route path template (`:name` segments).
fn param_count(path: &str) -> usize {
    path.split('/').filter(|s| s.starts_with(':')).count()
}

impl Engine {
    /// The request's principal as recordings hold it (see `EngineOptions::principal`), or the
    /// recorded principal its unrecorded credentials stand in for ([`Engine::session_principal`]).
    pub(super) fn principal_of(&self, call: &Call<'_>) -> Option<String> {
        call.principal.clone()
    }

    /// Who `req` speaks as in `ns`, in the recordings' terms. Credentials some recording sent
    /// are their recorded principal. Credentials no recording sent (a developer's own token, a
    /// token the twin minted) stand in for a recorded principal, so every answer of the
    /// session shows one consistent user: the first such credential of a session plays the
    /// most active recorded principal the session has not spoken as, the next the one after;
    /// once every recorded principal is taken, a new credential is a principal of its own.
    pub(super) fn session_principal(&self, ns: &mut Namespace, req: &Request) -> Option<String> {
        let raw = self.request_principal(req)?;
        let recorded = self
            .recorded_principals
            .get_or_init(|| RecordedPrincipals::of(&self.model));
        if recorded.known.contains(&raw) {
            ns.principals_spoken.insert(raw.clone());
            return Some(raw);
        }
        if let Some(p) = ns.stand_ins.get(&raw) {
            return Some(p.clone());
        }
        let Some(p) = recorded
            .by_activity
            .iter()
            .find(|p| !ns.principals_spoken.contains(*p))
        else {
            return Some(raw);
        };
        ns.principals_spoken.insert(p.clone());
        ns.stand_ins.insert(raw, p.clone());
        Some(p.clone())
    }

    /// `req`'s principal key (`wraith_model::principal`): its credential header's value mapped
    /// to the form recordings hold; `None` for a request without credentials.
    pub(super) fn request_principal(&self, req: &Request) -> Option<String> {
        let headers = req.headers.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let (name, value) = wraith_model::principal::principal_header(headers)?;
        let recorded = match &self.opts.principal {
            Some(f) => f(&name, value),
            None => value.to_string(),
        };
        Some(wraith_model::principal::principal_key(&name, &recorded))
    }

    /// After a 2xx answer: remember the acting principal's own record the answer carries
    /// (`Route::actor_record`), then apply the route's member effects to the session's lists.
    /// Whether some list changed (a second star changes none).
    pub(super) fn apply_member_effects(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        out: &Out,
    ) -> bool {
        if !(200..300).contains(&out.status) || call.head {
            return false;
        }
        let route: &Route = &self.model.routes[call.m.route];
        if route.actor_record.is_none() && route.member_effects.is_empty() {
            return false;
        }
        let mut changed = false;
        let principal = self.principal_of(call);
        if let (Some(site), Some(p)) = (&route.actor_record, &principal) {
            let pk = self.pk_of(&site.entity_type);
            let key = out.body.json().and_then(|b| {
                b.pointer(&site.pointer)
                    .and_then(|v| v.get(&pk))
                    .and_then(fixtures::scalar_key)
            });
            if let Some(key) = key {
                ns.actors.insert((p.clone(), site.entity_type.clone()), key);
            }
            self.remember_actor_view(ns, route, p, out);
        }
        for effect in &route.member_effects {
            match &effect.member {
                MemberSource::Param { param } => {
                    let Some(id) =
                        super::param_key(route, &call.m.params, param).map(|k| k.into_owned())
                    else {
                        continue;
                    };
                    if effect.adds {
                        let list = ns
                            .members
                            .entry((effect.list_path.clone(), Vec::new()))
                            .or_default();
                        if !list.contains(&id) {
                            list.push(id.clone());
                            changed = true;
                        }
                        ns.member_adders
                            .entry((effect.list_path.clone(), id))
                            .or_default()
                            .insert(principal.clone());
                    } else {
                        // A list without path parameters is each principal's own (stars):
                        // the remover's write takes back only its own add, and the member
                        // stays while another principal's add holds it.
                        let own_lists = param_count(&effect.list_path) == 0;
                        let adders_key = (effect.list_path.clone(), id.clone());
                        if own_lists && let Some(adders) = ns.member_adders.get_mut(&adders_key) {
                            changed |= adders.remove(&principal);
                            if !adders.is_empty() {
                                continue;
                            }
                        }
                        ns.member_adders.remove(&adders_key);
                        for (_, list) in ns
                            .members
                            .range_mut((effect.list_path.clone(), Vec::new())..)
                            .take_while(|((path, _), _)| *path == effect.list_path)
                        {
                            let before = list.len();
                            list.retain(|m| *m != id);
                            changed |= list.len() != before;
                        }
                    }
                }
                MemberSource::Actor => {
                    let Some(me) = principal.as_ref().and_then(|p| {
                        ns.actors
                            .get(&(p.clone(), effect.member_type.clone()))
                            .cloned()
                    }) else {
                        continue;
                    };
                    let n = param_count(&effect.list_path);
                    let Some(params) = call.m.params.get(..n) else {
                        continue;
                    };
                    let params: Vec<String> = params.iter().map(|(_, v)| v.clone()).collect();
                    let list = ns
                        .members
                        .entry((effect.list_path.clone(), params))
                        .or_default();
                    if effect.adds {
                        if !list.contains(&me) {
                            list.push(me);
                            changed = true;
                        }
                    } else {
                        let before = list.len();
                        list.retain(|m| *m != me);
                        changed |= list.len() != before;
                    }
                }
            }
        }
        changed
    }

    /// The member type of the list at `path` (same origin as `route`) any membership action or
    /// member effect writes; `None` when none does.
    pub(super) fn member_type_of(&self, route: &Route) -> Option<String> {
        self.model
            .routes
            .iter()
            .filter(|r| r.origin == route.origin)
            .find_map(|r| {
                r.membership
                    .as_ref()
                    .filter(|m| m.list_path == route.path)
                    .map(|m| m.member_type.clone())
                    .or_else(|| {
                        r.member_effects
                            .iter()
                            .find(|e| e.list_path == route.path)
                            .map(|e| e.member_type.clone())
                    })
            })
    }
}

/// The principals the model's exact-replay moments were recorded for.
#[derive(Debug, Default)]
pub(super) struct RecordedPrincipals {
    known: std::collections::BTreeSet<String>,
    /// Most recorded moments first; among equals, in key order.
    by_activity: Vec<String>,
}

impl RecordedPrincipals {
    pub(super) fn of(model: &wraith_model::Model) -> RecordedPrincipals {
        let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
        for route in &model.routes {
            for entry in &route.exact {
                for m in &entry.moments {
                    if let Some(p) = m.principal.as_deref() {
                        *counts.entry(p).or_default() += 1;
                    }
                }
            }
        }
        let mut by_activity: Vec<(&str, usize)> = counts.into_iter().collect();
        by_activity.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        RecordedPrincipals {
            known: by_activity.iter().map(|(p, _)| p.to_string()).collect(),
            by_activity: by_activity
                .into_iter()
                .map(|(p, _)| p.to_string())
                .collect(),
        }
    }
}
