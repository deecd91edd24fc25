//! Member effects: what a write with no state operation (or one planned as an update or a
//! delete that keeps nothing: a bodiless `PUT /user/starred/:owner/:name` of a type no route
//! creates), whose member is not in its body, does to a list another route reads
//! ([`wraith_model::MemberEffect`]), learned from read-write-read triples in the recordings. Not how the engine applies them (see the engine's
//! `member_effects` module), and not membership actions that name their members in the body
//! ([`crate::action::memberships`]).
//!
//! Two sources of the member:
//!
//! - a path parameter ([`MemberSource::Param`]): `POST /statuses/:id/bookmark`, after which
//!   `GET /bookmarks` lists the status; `POST /accounts/:id/unfollow`, after which a list that
//!   listed the account no longer does;
//! - the acting principal ([`MemberSource::Actor`]): `POST /statuses/:id/favourite`, after which
//!   the sibling list of the same entity, `GET /statuses/:id/favourited_by`, lists the account
//!   of whoever favourited. A principal's own record is learned from a read with no path
//!   parameters that answered, for every principal, always the same record of the member type,
//!   and different records for different principals (a "who am I" read).
//!
//! Evidence is one write, the read of the list just before it (the latest since the session's
//! previous write, if any) and the read just after it (before the session's next write), in
//! the same recorded session, so nothing else the session did can explain the change. Only
//! reads without a query count (a page or a filter lists a part). An add is learned when the
//! member appeared at least once and never stayed or went absent; a remove when it disappeared
//! at least once and never stayed or became present. Never from route or field names.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{ActorRecord, EntityType, MemberEffect, MemberSource, StateOp};

use crate::observe::Obs;
use crate::routes::{RouteGroup, Seg};
use crate::state::RoutePlan;
use crate::values;

use crate::values::scalar_key;

/// A list route the effects can act on: a `GET` whose 2xx answers are arrays of one entity
/// type's records.
struct ListRoute {
    gi: usize,
    member_type: String,
    pk: String,
}

/// The list routes. The member type is the list's own entity type when state planning made
/// it a list of one and some listed item is one of its records; else the entity type whose recorded records hold most of the listed
/// items (the same key and mostly the same fields; ties by name).
fn list_routes(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) -> Vec<ListRoute> {
    let mut out = Vec::new();
    for (gi, (g, plan)) in groups.iter().zip(plans).enumerate() {
        if g.method != "GET" {
            continue;
        }
        // Read down to the items' keys and scalar values (level 2): nested records stay empty.
        let arrays: Vec<Value> = g
            .obs
            .iter()
            .filter(|&&i| values::is_2xx(obs[i].status))
            .filter_map(|&i| obs[i].resp_json_levels(2).filter(Value::is_array))
            .collect();
        if arrays.is_empty() {
            continue;
        }
        // Per entity type, how many listed items are its records (the same key and mostly
        // the same fields).
        let mut hits: BTreeMap<&str, usize> = BTreeMap::new();
        for (name, et) in entity_types {
            let pk = et.primary_key.as_str();
            let n = arrays
                .iter()
                .filter_map(Value::as_array)
                .flatten()
                .filter(|it| {
                    it.get(pk)
                        .and_then(scalar_key)
                        .and_then(|k| et.records.get(&k))
                        .is_some_and(|r| mostly_same_fields(it, r))
                })
                .count();
            if n > 0 {
                hits.insert(name.as_str(), n);
            }
        }
        // A type no route creates, whose records are only what its lists showed (a list of
        // starred repositories planned as a `starred` type), is no member type where a created
        // type's records are listed too.
        if hits.keys().any(|ty| created(plans, ty)) {
            hits.retain(|ty, _| created(plans, ty));
        }
        let planned = plan
            .entity_type
            .as_deref()
            .filter(|ty| plan.state_op == Some(StateOp::List) && hits.contains_key(ty));
        let chosen = planned.map(str::to_string).or_else(|| {
            hits.iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map(|(ty, _)| ty.to_string())
        });
        let Some(ty) = chosen else {
            continue;
        };
        let Some(et) = entity_types.get(&ty) else {
            continue;
        };
        out.push(ListRoute {
            gi,
            pk: et.primary_key.clone(),
            member_type: ty,
        });
    }
    out
}

/// Whether two objects share most of their top-level keys (60% Jaccard): an item sharing a
/// key with a record of another type is not that record.
fn mostly_same_fields(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return false;
    };
    let common = a.keys().filter(|k| b.contains_key(*k)).count();
    let union = a.len() + b.len() - common;
    common * 10 >= union * 6
}

/// How a list changed around one write, for one member.
#[derive(Default)]
struct Tally {
    became_present: usize,
    became_absent: usize,
    stayed_present: usize,
    stayed_absent: usize,
}

impl Tally {
    fn note(&mut self, before: bool, after: bool) {
        match (before, after) {
            (false, true) => self.became_present += 1,
            (true, false) => self.became_absent += 1,
            (true, true) => self.stayed_present += 1,
            (false, false) => self.stayed_absent += 1,
        }
    }

    /// `Some(true)` for a learned add, `Some(false)` for a learned remove.
    fn verdict(&self) -> Option<bool> {
        if self.became_present > 0 && self.became_absent == 0 && self.stayed_absent == 0 {
            Some(true)
        } else if self.became_absent > 0 && self.became_present == 0 && self.stayed_present == 0 {
            Some(false)
        } else {
            None
        }
    }
}

/// A list read: its observation and path-parameter values.
type Read<'g> = (usize, &'g [String]);

/// One recorded session's timeline: its observations in order, which are writes, and the
/// list reads without a query per list group.
struct Timelines<'o, 'a> {
    obs: &'o [Obs<'a>],
    /// Per session: its 2xx writes (non-GET/HEAD), by observation index.
    writes: BTreeMap<&'a str, Vec<usize>>,
}

impl<'o, 'a> Timelines<'o, 'a> {
    fn new(obs: &'o [Obs<'a>]) -> Self {
        let mut writes: BTreeMap<&'a str, Vec<usize>> = BTreeMap::new();
        for (i, o) in obs.iter().enumerate() {
            if !matches!(o.method.as_str(), "GET" | "HEAD") && values::is_2xx(o.status) {
                writes.entry(o.session).or_default().push(i);
            }
        }
        Timelines { obs, writes }
    }

    /// The session's writes just before and after write `i`: the window its effect shows in.
    /// The same request sent again right before or after it (a retried or repeated `DELETE`)
    /// does what it did, so the window spans the repeats.
    fn window(&self, i: usize) -> (usize, usize) {
        let Some(ws) = self.writes.get(self.obs[i].session) else {
            return (0, usize::MAX);
        };
        let o = &self.obs[i];
        let other = |w: &usize| {
            let x = &self.obs[*w];
            x.method != o.method || x.segments != o.segments || x.query != o.query
        };
        let prev = ws
            .iter()
            .rev()
            .filter(|&&w| w < i)
            .find(|w| other(w))
            .copied()
            .unwrap_or(0);
        let next = ws
            .iter()
            .filter(|&&w| w > i)
            .find(|w| other(w))
            .copied()
            .unwrap_or(usize::MAX);
        (prev, next)
    }

    /// The reads of list group `l` (2xx, no query) in write `i`'s session and window, split
    /// into the latest before `i` and the first after it, with their path-parameter values.
    fn around<'g>(
        &self,
        l: &'g RouteGroup,
        i: usize,
        params: impl Fn(&[String]) -> bool,
    ) -> (Option<Read<'g>>, Option<Read<'g>>) {
        let (prev, next) = self.window(i);
        let session = self.obs[i].session;
        let reads = l.obs.iter().zip(&l.param_values).filter(|(j, p)| {
            let o = &self.obs[**j];
            o.session == session
                && o.query.is_empty()
                && values::is_2xx(o.status)
                && **j > prev
                && **j < next
                && params(p)
        });
        let mut before = None;
        let mut after = None;
        for (&j, p) in reads {
            if j < i {
                before = Some((j, p.as_slice()));
            } else if after.is_none() {
                after = Some((j, p.as_slice()));
            }
        }
        (before, after)
    }
}

/// Whether some route creates records of entity type `ty`.
fn created(plans: &[RoutePlan], ty: &str) -> bool {
    plans
        .iter()
        .any(|q| q.state_op == Some(StateOp::Create) && q.entity_type.as_deref() == Some(ty))
}

/// Whether a write planned as an update or a delete of its path's record keeps nothing: no
/// route creates a record of its type and no 2xx answer of the write has a body
/// (`PUT /user/starred/:owner/:name`, `204`). Such a write can only change what lists show,
/// so its member effects are looked for as for a write with no state operation.
fn keeps_nothing(w: &RouteGroup, p: &RoutePlan, plans: &[RoutePlan], obs: &[Obs<'_>]) -> bool {
    matches!(p.state_op, Some(StateOp::Update | StateOp::Delete))
        && p.entity_type
            .as_deref()
            .is_some_and(|ty| !created(plans, ty))
        && w.obs
            .iter()
            .map(|&i| &obs[i])
            .filter(|o| values::is_2xx(o.status))
            .all(|o| o.resp_json().is_none_or(|b| b.is_null()))
}

/// What a 2xx answer carries at `pointer` as a record of `et`: its key, when the object there
/// has the type's primary key and mostly the fields of the type's recorded records.
fn record_at(body: &Value, pointer: &str, et: &EntityType) -> Option<String> {
    let v = body.pointer(pointer).filter(|v| v.is_object())?;
    let key = v.get(&et.primary_key).and_then(scalar_key)?;
    let like = et
        .records
        .get(&key)
        .or_else(|| et.records.values().next())?;
    mostly_same_fields(v, like).then_some(key)
}

/// Whether every (key found, key expected) pair whose key was found agrees, and one does.
fn agrees<'k>(pairs: impl IntoIterator<Item = (Option<&'k String>, &'k String)>) -> bool {
    let mut agree = false;
    for (found, expected) in pairs {
        match found {
            Some(k) if k == expected => agree = true,
            Some(_) => return false,
            None => {}
        }
    }
    agree
}

/// A route's 2xx object answers sent with a principal, each parsed once: (observation, body).
type Answers = Vec<(usize, Value)>;

/// A route that may carry the acting principal's record (no path parameters): its
/// [`Answers`], and the pointers worth trying (the answer itself and each top-level object).
fn site_candidates(g: &RouteGroup, obs: &[Obs<'_>]) -> Option<(Answers, BTreeSet<String>)> {
    if !g.params.is_empty() {
        return None;
    }
    let answers: Answers = g
        .obs
        .iter()
        .filter(|&&i| values::is_2xx(obs[i].status) && principal(&obs[i]).is_some())
        .filter_map(|&i| obs[i].resp_json().map(|b| (i, b)))
        .filter(|(_, b)| b.is_object())
        .collect();
    let mut pointers: BTreeSet<String> = BTreeSet::new();
    pointers.insert(String::new());
    for (_, body) in &answers {
        if let Some(map) = body.as_object() {
            pointers.extend(
                map.iter()
                    .filter(|(_, v)| v.is_object())
                    .map(|(k, _)| format!("/{}", k.replace('~', "~0").replace('/', "~1"))),
            );
        }
    }
    Some((answers, pointers))
}

/// The record of `et` each (session, principal) of `answers` carries at `pointer`: `None`
/// where a principal's answers in one session carry two, or fewer than half the answers carry
/// one (another kind of answer, a scheduled post, may not).
fn keys_at<'o>(
    answers: &[(usize, Value)],
    pointer: &str,
    et: &EntityType,
    obs: &'o [Obs<'_>],
) -> Option<BTreeMap<(&'o str, &'o str), String>> {
    let mut per: BTreeMap<(&str, &str), String> = BTreeMap::new();
    let mut carried = 0usize;
    for (i, body) in answers {
        let (Some(key), Some(p)) = (record_at(body, pointer, et), principal(&obs[*i])) else {
            continue;
        };
        carried += 1;
        if per
            .insert((obs[*i].session, p), key.clone())
            .is_some_and(|k| k != key)
        {
            return None;
        }
    }
    (carried * 2 >= answers.len()).then_some(per)
}

/// The principal of an exchange (`Obs::principal`).
fn principal<'o>(o: &'o Obs<'_>) -> Option<&'o str> {
    o.principal.as_deref()
}

/// One sibling write and the list around it: (write group, list index, write observation,
/// keys listed before, keys listed after).
type Around = (usize, usize, usize, BTreeSet<String>, BTreeSet<String>);

/// Learned member effects and actor records, both in group order.
#[derive(Debug, Default)]
pub struct Learned {
    pub effects: Vec<Vec<MemberEffect>>,
    pub actor_records: Vec<Option<ActorRecord>>,
}

/// The member effects of every route (same order as the groups; empty for the others) and
/// the routes whose answers carry the acting principal's own record.
pub fn member_effects(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) -> Learned {
    let mut out = Learned {
        effects: vec![Vec::new(); groups.len()],
        actor_records: vec![None; groups.len()],
    };
    let lists = list_routes(groups, plans, entity_types, obs);
    if lists.is_empty() {
        return out;
    }
    let times = Timelines::new(obs);
    // (write group, list) pairs where the list is the write's sibling under the same entity.
    let mut siblings: Vec<(usize, usize)> = Vec::new();
    for (wi, (w, p)) in groups.iter().zip(plans).enumerate() {
        if matches!(w.method.as_str(), "GET" | "HEAD")
            || !(p.state_op.is_none() || keeps_nothing(w, p, plans, obs))
        {
            continue;
        }
        let writes: Vec<(usize, &Vec<String>)> = w
            .obs
            .iter()
            .zip(&w.param_values)
            .filter(|(i, _)| values::is_2xx(obs[**i].status))
            .map(|(i, v)| (*i, v))
            .collect();
        if writes.is_empty() {
            continue;
        }
        for (li, lr) in lists.iter().enumerate() {
            let l = &groups[lr.gi];
            if l.origin != w.origin || l.segs == w.segs {
                continue;
            }
            // The member named by a path parameter.
            for (k, param) in w.params.iter().enumerate() {
                let mut tally = Tally::default();
                for &(i, vals) in &writes {
                    let Some(member) = member_key(w, p, k, vals) else {
                        continue;
                    };
                    let member = &member;
                    if l.params.is_empty() {
                        let (before, after) = times.around(l, i, |_| true);
                        let Some((a, _)) = after else {
                            continue;
                        };
                        let was = before
                            .and_then(|(b, _)| obs[b].listed_keys(&lr.pk))
                            .is_some_and(|s| s.contains(member));
                        let Some(now) = obs[a].listed_keys(&lr.pk) else {
                            continue;
                        };
                        tally.note(was, now.contains(member));
                    } else {
                        // A list with path parameters: only a member it listed right before
                        // counts (the write cannot say which list it would join).
                        let (before, _) = times.around(l, i, |_| true);
                        let Some((b, bp)) = before else {
                            continue;
                        };
                        if !obs[b]
                            .listed_keys(&lr.pk)
                            .is_some_and(|s| s.contains(member))
                        {
                            continue;
                        }
                        let (_, after) = times.around(l, i, |q| q == bp);
                        let Some(now) = after.and_then(|(a, _)| obs[a].listed_keys(&lr.pk)) else {
                            continue;
                        };
                        tally.note(true, now.contains(member));
                    }
                }
                match tally.verdict() {
                    Some(true) if !l.params.is_empty() => {}
                    Some(adds) => out.effects[wi].push(MemberEffect {
                        list_path: l.path.clone(),
                        member_type: lr.member_type.clone(),
                        adds,
                        member: MemberSource::Param {
                            param: param.clone(),
                        },
                    }),
                    None => {}
                }
            }
            // The sibling list of the same entity: it shares the write's path up to its last
            // parameter, then one other literal word.
            let Some(pos) = w.segs.len().checked_sub(2) else {
                continue;
            };
            if matches!(w.segs[pos], Seg::Param(_))
                && l.segs.len() == w.segs.len()
                && l.segs[..=pos] == w.segs[..=pos]
            {
                siblings.push((wi, li));
            }
        }
    }
    if siblings.is_empty() {
        return out;
    }

    // The list read around each sibling write: (write, list, before keys, after keys).
    let mut around: Vec<Around> = Vec::new();
    for &(wi, li) in &siblings {
        let (w, lr) = (&groups[wi], &lists[li]);
        let l = &groups[lr.gi];
        for (&i, vals) in w.obs.iter().zip(&w.param_values) {
            if !values::is_2xx(obs[i].status) {
                continue;
            }
            let same = |q: &[String]| vals.get(..q.len()) == Some(q);
            let (before, after) = times.around(l, i, same);
            let Some(now) = after.and_then(|(a, _)| obs[a].listed_keys(&lr.pk)) else {
                continue;
            };
            let was = before
                .and_then(|(b, _)| obs[b].listed_keys(&lr.pk))
                .unwrap_or_default();
            around.push((wi, li, i, was, now));
        }
    }
    // Evidence of who acted: a write after which exactly one record joined the list, as
    // (write, principal, member type, the record's key).
    let mut evidence: Vec<(usize, &str, &str, &String)> = Vec::new();
    for (_, li, i, was, now) in &around {
        let mut joined = now.difference(was);
        if let (Some(id), None, Some(p)) = (joined.next(), joined.next(), principal(&obs[*i])) {
            evidence.push((*i, p, lists[*li].member_type.as_str(), id));
        }
    }
    // Candidate sites: routes with no path parameters whose answers carry a record of an
    // evidenced member type, at the top or in a top-level object.
    let types: BTreeSet<&str> = siblings
        .iter()
        .map(|(_, li)| lists[*li].member_type.as_str())
        .collect();
    let mut sites: Vec<(usize, ActorRecord)> = Vec::new();
    // Per site type, the principal's record each (session, principal) showed at a site.
    let mut shown: BTreeMap<&str, BTreeMap<(&str, &str), String>> = BTreeMap::new();
    for (gi, g) in groups.iter().enumerate() {
        let Some((answers, pointers)) = site_candidates(g, obs) else {
            continue;
        };
        'site: for ty in &types {
            let Some(et) = entity_types.get(*ty) else {
                continue;
            };
            for pointer in &pointers {
                let Some(per) = keys_at(&answers, pointer, et, obs) else {
                    continue;
                };
                // It agrees with every piece of evidence it can be compared with.
                let pairs = evidence
                    .iter()
                    .filter(|(_, _, ety, _)| ety == ty)
                    .map(|&(i, p, _, id)| (per.get(&(obs[i].session, p)), id));
                if agrees(pairs) {
                    shown.entry(ty).or_default().extend(per);
                    sites.push((
                        gi,
                        ActorRecord {
                            entity_type: ty.to_string(),
                            pointer: pointer.clone(),
                        },
                    ));
                    break 'site;
                }
            }
        }
    }
    // A route whose answers are themselves the record a site showed for the same principal in
    // the same session, and never another, is a site too (a "who am I" read, a profile
    // update): the sites above vouch for its key where no list evidence reaches it. Only the
    // whole answer: a record embedded in an answer may name another principal's elsewhere (a
    // report's target).
    for (gi, g) in groups.iter().enumerate() {
        if sites.iter().any(|(s, _)| *s == gi) {
            continue;
        }
        let Some((answers, _)) = site_candidates(g, obs) else {
            continue;
        };
        for (ty, known) in &shown {
            let Some(per) = entity_types
                .get(*ty)
                .and_then(|et| keys_at(&answers, "", et, obs))
            else {
                continue;
            };
            if agrees(per.iter().map(|(at, key)| (known.get(at), key))) {
                let pointer = String::new();
                let entity_type = ty.to_string();
                sites.push((
                    gi,
                    ActorRecord {
                        entity_type,
                        pointer,
                    },
                ));
                break;
            }
        }
    }
    if sites.is_empty() {
        return out;
    }
    // The acting principal's record before write `i`: the latest site answer of the same
    // session and principal.
    let actor = |i: usize, ty: &str| -> Option<String> {
        let p = principal(&obs[i])?;
        let mut best: Option<(usize, String)> = None;
        for (gi, site) in &sites {
            if site.entity_type != ty {
                continue;
            }
            let et = entity_types.get(ty)?;
            for &j in &groups[*gi].obs {
                if j < i
                    && obs[j].session == obs[i].session
                    && principal(&obs[j]) == Some(p)
                    && values::is_2xx(obs[j].status)
                    && best.as_ref().is_none_or(|(b, _)| j > *b)
                    && let Some(k) = obs[j]
                        .resp_json()
                        .and_then(|b| record_at(&b, &site.pointer, et))
                {
                    best = Some((j, k));
                }
            }
        }
        best.map(|(_, k)| k)
    };
    let mut learned_types: BTreeSet<String> = BTreeSet::new();
    for &(wi, li) in &siblings {
        let lr = &lists[li];
        let mut tally = Tally::default();
        for (_, _, i, was, now) in around.iter().filter(|a| a.0 == wi && a.1 == li) {
            let Some(me) = actor(*i, &lr.member_type) else {
                continue;
            };
            tally.note(was.contains(&me), now.contains(&me));
        }
        if let Some(adds) = tally.verdict() {
            out.effects[wi].push(MemberEffect {
                list_path: groups[lr.gi].path.clone(),
                member_type: lr.member_type.clone(),
                adds,
                member: MemberSource::Actor,
            });
            learned_types.insert(lr.member_type.clone());
        }
    }
    for (gi, site) in sites {
        if learned_types.contains(&site.entity_type) {
            out.actor_records[gi] = Some(site);
        }
    }
    out
}

/// The key parameter `k`'s value names a member by: the value, or joined with the one before
/// it where the write's id is qualified ([`RoutePlan::key_qualifier`]).
fn member_key(w: &RouteGroup, p: &RoutePlan, k: usize, vals: &[String]) -> Option<String> {
    let own = vals.get(k)?;
    match w.qualifier_value(vals, k, p.key_qualifier.as_deref()) {
        Some(q) => Some(format!(
            "{}/{}",
            values::decode_segment(q),
            values::decode_segment(own)
        )),
        None => Some(own.clone()),
    }
}
