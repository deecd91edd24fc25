//! Session-authored positions of unaddressed reads (the evidence behind
//! `X-Wraith-Replay: session-bound-moment;v=1`).
//!
//! An unaddressed read is a GET on a literal path (no path parameter) with no query and no
//! body, such as `GET /api/v1/accounts/verify_credentials`. A response position of it is
//! session-authored when, in every recorded observation of that read, its value repeated the
//! value the same recording session had supplied in the body of its latest earlier successful
//! create (a 2xx POST) on one route, always from the same create route and request field. The engine then serves
//! the recorded moment with the serving session's own value at that position.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::SessionBoundPath;

use crate::observe::{Obs, ReqBody, RespBody};
use crate::routes::RouteGroup;

/// Per observation: response pointer → the (create route, request field) pairs that supplied
/// its value earlier in the same session.
type Sources = BTreeMap<String, BTreeSet<(String, String)>>;

/// Values shorter than this are too likely to coincide (`"ok"`, `"en"`) to prove authorship.
const MIN_LEN: usize = 3;

/// Per route (index-aligned with `groups`): request path → session-bound positions. Call it
/// before the exact index moves the response bodies out of the observations.
pub fn evidence(
    groups: &[RouteGroup],
    obs: &[Obs<'_>],
) -> Vec<BTreeMap<String, Vec<SessionBoundPath>>> {
    // The create route of every observation, by observation index.
    let mut create_of: BTreeMap<usize, String> = BTreeMap::new();
    for g in groups {
        if g.method == "POST" {
            for &i in &g.obs {
                if (200..300).contains(&obs[i].status) {
                    create_of.insert(i, g.name());
                }
            }
        }
    }
    // The same creates per session, in observation order: a read looks only at its own
    // session's instead of every create before it.
    let mut creates_by_session: BTreeMap<&str, Vec<(usize, &String)>> = BTreeMap::new();
    for (j, route) in &create_of {
        creates_by_session
            .entry(obs[*j].session)
            .or_default()
            .push((*j, route));
    }
    groups
        .iter()
        .map(|g| {
            if g.method != "GET" || !g.params.is_empty() {
                return BTreeMap::new();
            }
            // Request path → per observation, pointer → candidate (create, field) sources.
            let mut per_path: BTreeMap<String, Vec<Sources>> = BTreeMap::new();
            for &i in &g.obs {
                let o = &obs[i];
                if !o.ex.request.query.is_empty() || !matches!(o.req, ReqBody::None) {
                    continue;
                }
                if o.resp != RespBody::Json {
                    continue;
                }
                // What this recording session supplied earlier in create bodies.
                // Only the latest create per route counts: that is the value the engine
                // substitutes, so it is the one the evidence must show repeated.
                let mut latest: BTreeMap<&str, usize> = BTreeMap::new();
                for (j, route) in creates_by_session
                    .get(o.session)
                    .into_iter()
                    .flatten()
                    .take_while(|(j, _)| *j < i)
                {
                    latest.insert(route.as_str(), *j);
                }
                let mut supplied: BTreeMap<&str, BTreeSet<(String, String)>> = BTreeMap::new();
                for (route, j) in latest {
                    let c = &obs[j];
                    for (field, leaf) in &c.req_fields {
                        if let Value::String(s) = leaf
                            && s.chars().count() >= MIN_LEN
                        {
                            supplied
                                .entry(s.as_str())
                                .or_default()
                                .insert((route.to_string(), field.clone()));
                        }
                    }
                }
                let mut found = BTreeMap::new();
                // Nothing supplied: nothing to find, and no need to parse the body.
                if supplied.is_empty() {
                    per_path
                        .entry(o.ex.request.path.clone())
                        .or_default()
                        .push(found);
                    continue;
                }
                let Some(body) = o.resp_json() else {
                    continue;
                };
                leaves(&body, &mut |ptr, v| {
                    if let Some(src) = supplied.get(v) {
                        found.insert(ptr.to_string(), src.clone());
                    }
                });
                per_path
                    .entry(o.ex.request.path.clone())
                    .or_default()
                    .push(found);
            }
            per_path
                .into_iter()
                .filter_map(|(path, observations)| {
                    let mut it = observations.into_iter();
                    let mut common = it.next()?;
                    for next in it {
                        common.retain(|ptr, srcs| match next.get(ptr) {
                            Some(n) => {
                                srcs.retain(|s| n.contains(s));
                                !srcs.is_empty()
                            }
                            None => false,
                        });
                    }
                    let bound: Vec<SessionBoundPath> = common
                        .into_iter()
                        .filter_map(|(pointer, srcs)| {
                            // Deterministic: the first (create, field) consistent throughout.
                            srcs.into_iter()
                                .next()
                                .map(|(create, field)| SessionBoundPath {
                                    pointer,
                                    create,
                                    field,
                                })
                        })
                        .collect();
                    (!bound.is_empty()).then_some((path, bound))
                })
                .collect()
        })
        .collect()
}

/// Every string leaf with its JSON pointer.
fn leaves(v: &Value, f: &mut dyn FnMut(&str, &str)) {
    wraith_model::pointer::for_each_leaf(v, &mut |ptr, leaf| {
        if let Value::String(s) = leaf {
            f(ptr, s);
        }
    });
}
