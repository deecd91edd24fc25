//! Action effects: what a write with no state operation (`POST /statuses/:id/favourite`) does to
//! the stored entity its path names, learned from the recordings. Not how the engine applies
//! them (see the engine's `apply_action_effect`).
//!
//! A route is an action on an entity type when a path parameter sits where a read/update/delete
//! route of that type has its id parameter (same path up to it) and its recorded 2xx answers are
//! that entity: the same primary key at the top level (or, in an answer that embeds it, in a
//! top-level object: a reblog wraps the status, `ActionEffect::at`), and mostly the fields the
//! entity's own routes show (60% Jaccard); or, when they are not, another type's records under
//! the same key, which then are what the action changes (a mute answers the relationship with
//! the account the path names: `companion_type`). Its effect is the top-level fields on which
//! those answers differ from the entity as the session last saw it before the action (the
//! latest earlier read, create or update answer of the same id in the same session, or an
//! earlier action's answer when that came later, else the recorded record), in at least half of
//! the answers that could be compared; leaving out identifier-like keys, fields whose answered value is not one constant
//! (a rendered answer would carry another recording's value), and fields a later view of the
//! entity contradicts before another action touches it (transient states); and its counters:
//! integer fields that every comparable answer moved by one same non-zero step from the entity
//! as last seen (`favourites_count` +1). Never from route or field names.
//!
//! Also two effects on another route's answer: membership ([`memberships`]: a write naming
//! ids in its body adds them to, or removes them from, the list a same-path read answers) and
//! last write wins ([`last_write_wins`]: a same-path read repeats the write's answer).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use wraith_model::{
    ActionEffect, EntityType, FollowedField, Guard, IndexedCounter, MembershipEffect, SentAppend,
    StateOp,
};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::state::RoutePlan;
use crate::values;

/// One entity in one session: (session, entity type, id).
type EntityKey<'a> = (&'a str, &'a str, String);

use crate::values::scalar_key;

/// What the actions do, per route (same order as the groups).
pub struct ActionsLearned {
    /// The action effect of every route; `None` for the others.
    pub effects: Vec<Option<ActionEffect>>,
    /// The refusals of every action route that the state of its record decides, as (status,
    /// guard) (see [`crate::state_refusals`]); empty for the others.
    pub refusals: Vec<Vec<(u16, Guard)>>,
}

/// The action effect of every route (same order as the groups), and the refusals its record's
/// state decides.
pub fn action_effects(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) -> ActionsLearned {
    // Where each entity type's id sits: (origin, path segments up to the id) → (type, param).
    let mut id_sites = BTreeMap::new();
    for (g, p) in groups.iter().zip(plans) {
        if !matches!(
            p.state_op,
            Some(StateOp::Read | StateOp::Update | StateOp::Delete)
        ) {
            continue;
        }
        let (Some(ty), Some(param)) = (&p.entity_type, &p.id_param) else {
            continue;
        };
        let Some(pos) = g
            .segs
            .iter()
            .position(|s| matches!(s, crate::routes::Seg::Param(n) if n == param))
        else {
            continue;
        };
        id_sites
            .entry((g.origin.clone(), g.segs[..=pos].to_vec()))
            .or_insert((ty.clone(), param.clone()));
    }

    // The entity answers of the typed routes, per (session, type, id), in observation order.
    let mut seen: BTreeMap<EntityKey<'_>, Vec<(usize, Value)>> = BTreeMap::new();
    // Which of those answers are reads (the others answered a create or an update).
    let mut reads: BTreeSet<usize> = BTreeSet::new();
    let mut candidates = Vec::new();
    for (gi, (g, p)) in groups.iter().zip(plans).enumerate() {
        if p.state_op.is_none() {
            if !matches!(g.method.as_str(), "GET" | "HEAD") {
                candidates.push(gi);
            }
            continue;
        }
        if !matches!(
            p.state_op,
            Some(StateOp::Read | StateOp::Create | StateOp::Update)
        ) {
            continue;
        }
        let Some(ty) = p.entity_type.as_deref() else {
            continue;
        };
        let Some(pk) = entity_types.get(ty).map(|t| t.primary_key.as_str()) else {
            continue;
        };
        for &i in &g.obs {
            if !values::is_2xx(obs[i].status) {
                continue;
            }
            if let Some(body) = obs[i].resp_json().filter(Value::is_object)
                && let Some(id) = body.get(pk).and_then(scalar_key)
            {
                seen.entry((obs[i].session, ty, id))
                    .or_default()
                    .push((i, body));
                if p.state_op == Some(StateOp::Read) {
                    reads.insert(i);
                }
            }
        }
    }

    // The routes came one by one: put each entity's answers in observation order, which the
    // lookups of the latest view before an observation and the first after it read.
    for v in seen.values_mut() {
        v.sort_by_key(|(i, _)| *i);
    }

    // Each candidate's site and entity answers: (obs index, id, body).
    struct Cand<'g> {
        gi: usize,
        ty: &'g str,
        param: &'g str,
        answers: usize,
        entity: Vec<(usize, String, Value)>,
        /// Where the entity sits in the answers (`""` or `/key`, see `ActionEffect::at`).
        at: String,
    }
    let mut cands = Vec::new();
    // When the actions touched each entity, per (session, type, id): a later view only shows
    // an action's effect if no other action came between.
    let mut acted: BTreeMap<EntityKey<'_>, Vec<usize>> = BTreeMap::new();
    for gi in candidates {
        let g = &groups[gi];
        let site = (0..g.segs.len()).rev().find_map(|pos| {
            if !matches!(g.segs[pos], crate::routes::Seg::Param(_)) || pos + 1 == g.segs.len() {
                return None;
            }
            id_sites.get(&(g.origin.clone(), g.segs[..=pos].to_vec()))
        });
        let Some((ty, param)) = site else {
            continue;
        };
        let Some(et) = entity_types.get(ty) else {
            continue;
        };
        let pk = et.primary_key.as_str();
        let Some(pi) = g.params.iter().position(|p| p == param) else {
            continue;
        };
        let mut cand = Cand {
            gi,
            ty,
            param,
            answers: 0,
            entity: Vec::new(),
            at: String::new(),
        };
        // Each 2xx answer's entity and where it sits: the answer itself, else the first
        // top-level object holding the path's id as its key (a reblog wraps the status).
        let mut located: Vec<(usize, String, String, Value)> = Vec::new();
        for (&i, values) in g.obs.iter().zip(&g.param_values) {
            if !values::is_2xx(obs[i].status) {
                continue;
            }
            cand.answers += 1;
            let Some(id) = values.get(pi) else {
                continue;
            };
            let Some(body) = obs[i].resp_json().filter(Value::is_object) else {
                continue;
            };
            let is_entity = |v: &Value| v.get(pk).and_then(scalar_key).as_deref() == Some(id);
            let at = if is_entity(&body) {
                Some(String::new())
            } else {
                body.as_object().and_then(|m| {
                    m.iter()
                        .find(|(_, v)| v.is_object() && is_entity(v))
                        .map(|(k, _)| format!("/{}", k.replace('~', "~0").replace('/', "~1")))
                })
            };
            let Some(at) = at else {
                continue;
            };
            let entity = match body.pointer(&at) {
                Some(v) => v.clone(),
                None => continue,
            };
            located.push((i, id.clone(), at, entity));
        }
        // The place most answers carry the entity (ties: the answer itself, then by name).
        let mut places: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, _, at, _) in &located {
            *places.entry(at.as_str()).or_default() += 1;
        }
        if let Some((at, _)) = places.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))) {
            cand.at = at.to_string();
        }
        // Answers keyed like the path's entity but holding another type's record under the
        // same key (a follow answers the relationship with the account, under the account's
        // id): that record is what the action changes.
        let at_place: Vec<(&String, &Value)> = located
            .iter()
            .filter(|(_, _, at, _)| *at == cand.at)
            .map(|(_, id, _, entity)| (id, entity))
            .collect();
        if let Some(other) = companion_type(ty, pk, &at_place, entity_types) {
            cand.ty = other;
        }
        let ty = cand.ty;
        for (i, id, at, entity) in located {
            if at != cand.at {
                continue;
            }
            acted
                .entry((obs[i].session, ty, id.clone()))
                .or_default()
                .push(i);
            cand.entity.push((i, id, entity));
        }
        cands.push(cand);
    }
    // In observation order: the candidates came route by route, and the lookups below take
    // the latest action before an observation and the first after it.
    for a in acted.values_mut() {
        a.sort_unstable();
    }

    // The records an action answered before the session saw them any other way (no read,
    // create or update answer of them, no earlier action on them), per session: only their
    // copies inside other answers are looked for. And every action's own observations.
    let mut named: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for cand in &cands {
        for (i, id, _) in &cand.entity {
            let key = (obs[*i].session, cand.ty, id.clone());
            let earlier = |at: Option<&Vec<usize>>| at.is_some_and(|a| a.iter().any(|j| j < i));
            let viewed = seen.get(&key).is_some_and(|v| v.iter().any(|(j, _)| j < i));
            if !viewed && !earlier(acted.get(&key)) {
                named
                    .entry(obs[*i].session)
                    .or_default()
                    .insert(id.as_str());
            }
        }
    }
    let acting: BTreeSet<usize> = cands
        .iter()
        .flat_map(|c| groups[c.gi].obs.iter().copied())
        .collect();
    let acted_types: BTreeSet<&str> = cands.iter().map(|c| c.ty).collect();
    let embedded = embedded_views(
        &named,
        &acting,
        &acted_types,
        groups,
        plans,
        entity_types,
        obs,
    );
    let action_bodies: BTreeMap<usize, &Value> = cands
        .iter()
        .flat_map(|c| c.entity.iter().map(|(i, _, b)| (*i, b)))
        .collect();
    // Every action observation on each entity, whatever its answer: a later view shows one
    // action's effect only when no other action came between.
    let mut writes_on: BTreeMap<EntityKey<'_>, Vec<usize>> = BTreeMap::new();
    for cand in &cands {
        let g = &groups[cand.gi];
        let Some(pi) = g.params.iter().position(|p| p == cand.param) else {
            continue;
        };
        for (&i, values) in g.obs.iter().zip(&g.param_values) {
            if let Some(id) = values.get(pi) {
                writes_on
                    .entry((obs[i].session, cand.ty, id.clone()))
                    .or_default()
                    .push(i);
            }
        }
    }
    for w in writes_on.values_mut() {
        w.sort_unstable();
    }
    let mut out = vec![None; groups.len()];
    let mut refusals = vec![Vec::new(); groups.len()];
    for cand in &cands {
        let Some(et) = entity_types.get(cand.ty) else {
            continue;
        };
        // The record as the session last saw it before observation `i`: the latest earlier
        // view, or an earlier action's answer when that came later (an unfavourite is compared
        // with the favourite before it); without either, the latest earlier copy inside
        // another answer (a poll inside the post that made it).
        let session_view = |i: usize, id: &str| -> Option<&Value> {
            let key = (obs[i].session, cand.ty, id.to_string());
            let view = seen
                .get(&key)
                .and_then(|v| v.iter().rev().find(|(j, _)| *j < i));
            let prior_action = acted
                .get(&key)
                .and_then(|a| a.iter().rev().find(|j| **j < i))
                .and_then(|j| action_bodies.get(j).map(|b| (*j, *b)));
            match (view, prior_action) {
                (Some((jv, _)), Some((ja, b))) if ja > *jv => Some(b),
                (Some((_, v)), _) => Some(v),
                (None, Some((_, b))) => Some(b),
                (None, None) => embedded
                    .get(&key)
                    .and_then(|v| v.iter().rev().find(|(j, _)| *j < i))
                    .map(|(_, v)| v),
            }
        };
        if cand.entity.is_empty() {
            let views = Views {
                seen: &seen,
                reads: &reads,
                action_bodies: &action_bodies,
                acted: &acted,
                writes_on: &writes_on,
            };
            out[cand.gi] = read_sets(&groups[cand.gi], cand.ty, cand.param, et, &views, obs);
            continue;
        }
        let pk = et.primary_key.as_str();
        let mut compared = 0usize;
        let mut changed: BTreeMap<String, usize> = BTreeMap::new();
        let mut transient: BTreeSet<String> = BTreeSet::new();
        // Fields whose answered value is not one constant: a rendered answer's value for
        // them is some recording's, not this session's, so it is not stored.
        let mut varying: BTreeSet<String> = BTreeSet::new();
        let mut values_of: BTreeMap<String, Value> = BTreeMap::new();
        // Fields some answer changed to an embedded record (or a list of them): a rendered
        // answer shows the session's own there (the account that posted), not a
        // representative's.
        let mut containers: BTreeSet<String> = BTreeSet::new();
        // Per integer field, every step (answer minus the entity as last seen) the comparable
        // answers took, zero included: a counter steps the same way in every one.
        let mut steps: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
        // The compared answers, with the key of their record.
        let mut samples: Vec<(&str, &Map<String, Value>)> = Vec::new();
        // The compared answers with the record as the session saw it before each.
        let mut pairs: Vec<Pair<'_>> = Vec::new();
        // The record before each compared answer, where the session had seen it.
        let mut accepted: Vec<&Map<String, Value>> = Vec::new();
        for (i, id, body) in &cand.entity {
            let i = *i;
            let key = (obs[i].session, cand.ty, id.clone());
            let views = seen.get(&key);
            // The latest earlier view of the record's own, else its latest earlier copy inside
            // another answer, before the recorded record: a copy may show the record as
            // another viewer sees it, so one of its own answers comes first.
            let view = views.and_then(|v| v.iter().rev().find(|(j, _)| *j < i));
            let copy = embedded
                .get(&key)
                .and_then(|v| v.iter().rev().find(|(j, _)| *j < i))
                .map(|(_, v)| v);
            let seen_as = view.map(|(_, v)| v).or(copy).or_else(|| et.records.get(id));
            let session_before = session_view(i, id);
            let before = session_before.or_else(|| et.records.get(id));
            // The next view of the entity, unless another action touched it first.
            let next_action = acted
                .get(&key)
                .and_then(|a| a.iter().find(|j| **j > i))
                .copied()
                .unwrap_or(usize::MAX);
            let after = views
                .and_then(|v| v.iter().find(|(j, _)| *j > i))
                .filter(|(j, _)| *j < next_action)
                .and_then(|(_, v)| v.as_object());
            let (Some(before), Some(map), Some(seen_as)) = (
                before.and_then(Value::as_object),
                body.as_object(),
                seen_as.and_then(Value::as_object),
            ) else {
                continue;
            };
            // The answer is the entity only when it carries mostly the fields the entity's own
            // routes show (a relationship sharing an account's id is not the account).
            let common = map.keys().filter(|k| seen_as.contains_key(*k)).count();
            let union = map.len() + seen_as.len() - common;
            if common * 10 < union * 6 {
                continue;
            }
            compared += 1;
            samples.push((id.as_str(), map));
            pairs.push((i, before, map));
            if let Some(b) = session_before.and_then(Value::as_object) {
                accepted.push(b);
            }
            for (k, v) in map {
                if k == pk || values::is_identifier_key(k) {
                    continue;
                }
                if let Some(first) = values_of.get(k)
                    && first != v
                {
                    varying.insert(k.clone());
                }
                values_of.entry(k.clone()).or_insert_with(|| v.clone());
                if let (Some(b), Some(a)) = (before.get(k).and_then(Value::as_i64), v.as_i64())
                    && !matches!(before.get(k), Some(Value::Bool(_)))
                {
                    steps.entry(k.clone()).or_default().insert(a - b);
                }
                if before.get(k).is_some_and(|b| b != v) {
                    *changed.entry(k.clone()).or_default() += 1;
                    if holds_records(v) {
                        containers.insert(k.clone());
                    }
                    // A value a later view no longer shows was transient (`resizing`), not
                    // the action's lasting effect.
                    if after.and_then(|a| a.get(k)).is_some_and(|a| a != v) {
                        transient.insert(k.clone());
                    }
                }
            }
        }
        // The answers must be the entity (at least half of the 2xx ones), and a field counts
        // when it changed in at least half of the comparable answers and no later view
        // contradicted it.
        let entity_answers = cand.entity.len();
        if entity_answers == 0
            || entity_answers * 2 < cand.answers
            || compared == 0
            || compared * 2 < entity_answers
        {
            continue;
        }
        // A counter: an integer field that changed in every comparable answer, always by the
        // same step, and that no later view contradicted. It is learned as the step even when
        // the answered values happen to be one constant (a single favourite answering 1).
        let counters: BTreeMap<String, i64> = changed
            .iter()
            .filter(|(k, n)| **n == compared && !transient.contains(*k))
            .filter_map(|(k, _)| match steps.get(k) {
                Some(s) if s.len() == 1 => s.first().filter(|d| **d != 0).map(|d| (k.clone(), *d)),
                _ => None,
            })
            .collect();
        // A varying field that follows another record's field is that record's doing, not
        // a recording's: answered and stored so.
        let followed_fields = if cand.at.is_empty() {
            followed(&varying, &samples, cand.ty, entity_types)
        } else {
            Vec::new()
        };
        let follows = |k: &str| followed_fields.iter().any(|f| f.field == k);
        // Arrays the action appended sent values to, or stepped counters inside at sent
        // positions: what every compared answer did to them, from the array as last seen.
        let mut appends = Vec::new();
        let mut indexed_counters = Vec::new();
        if cand.at.is_empty() {
            for k in changed.keys() {
                if let Some(rule) = append_rule(k, &pairs, obs) {
                    appends.push(rule);
                } else if let Some(rule) = indexed_counter_rule(k, &pairs, obs) {
                    indexed_counters.push(rule);
                }
            }
        }
        let derived = |k: &str| {
            appends.iter().any(|a: &SentAppend| a.field == k)
                || indexed_counters
                    .iter()
                    .any(|c: &IndexedCounter| c.field == k)
        };
        let mut fields: Vec<String> = Vec::new();
        let mut answered_fields: Vec<String> = Vec::new();
        for (k, n) in changed {
            if counters.contains_key(&k) {
                continue;
            }
            if follows(&k) || derived(&k) {
                continue;
            }
            if n * 2 >= compared && !transient.contains(&k) && !varying.contains(&k) {
                fields.push(k);
            } else if !containers.contains(&k) {
                answered_fields.push(k);
            }
        }
        // Stored whether or not the compared answers changed them (a view the session saw
        // before may be missing): the record they follow says what they are.
        fields.extend(followed_fields.iter().map(|f| f.field.clone()));
        fields.sort();
        // An action whose answers are the entity is kept even when it stores nothing: its
        // rendered answer is the session's record (with what the answers changed), not the
        // recorded representative (a resize answering another volume's label).
        let answered_fields = if cand.at.is_empty() {
            answered_fields
        } else {
            Vec::new()
        };
        if fields.is_empty() && counters.is_empty() && !cand.at.is_empty() {
            continue;
        }
        let effect = ActionEffect {
            entity_type: cand.ty.to_string(),
            id_param: cand.param.to_string(),
            fields,
            counters,
            at: cand.at.clone(),
            sets: BTreeMap::new(),
            set_by: String::new(),
            answered_fields,
            followed_fields,
            appends,
            indexed_counters,
            undoes_wrappers: Vec::new(),
        };
        // The refusals of the action, each status against the record as the session saw it
        // before each refused request: every one must have been seen.
        let g = &groups[cand.gi];
        let mut refused: BTreeMap<u16, Option<Vec<&Map<String, Value>>>> = BTreeMap::new();
        if let Some(pi) = g.params.iter().position(|p| p == cand.param) {
            for (&i, values) in g.obs.iter().zip(&g.param_values) {
                if !crate::state_refusals::is_state_refusal(obs[i].status) {
                    continue;
                }
                let view = values
                    .get(pi)
                    .and_then(|id| session_view(i, id))
                    .and_then(Value::as_object);
                let slot = refused.entry(obs[i].status).or_insert(Some(Vec::new()));
                match (slot.as_mut(), view) {
                    (Some(views), Some(v)) => views.push(v),
                    _ => *slot = None,
                }
            }
        }
        let effect_fields = crate::state_refusals::effect_fields(&effect);
        for (status, views) in refused {
            if let Some(guard) = views.and_then(|views| {
                crate::state_refusals::record_state_guard(&views, &accepted, &effect_fields, pk)
            }) {
                refusals[cand.gi].push((status, guard));
            }
        }
        out[cand.gi] = Some(effect);
    }
    ActionsLearned {
        effects: out,
        refusals,
    }
}

/// One compared action answer: its observation, the record as the session last saw it before,
/// and the record the answer holds.
type Pair<'a> = (usize, &'a Map<String, Value>, &'a Map<String, Value>);

/// Copies of the records the actions answered inside answers of other routes (`named`: the keys
/// per session), per (session, type, key) in observation order: a record of an `acted_types`
/// type, found as `create_counters` finds the records a create names (an object carrying the
/// key as the type's primary key with mostly the type's fields). An action's own answers
/// (`acting`) are not among them: those are the action's doing.
#[allow(clippy::type_complexity)]
fn embedded_views<'a>(
    named: &BTreeMap<&str, BTreeSet<&str>>,
    acting: &BTreeSet<usize>,
    acted_types: &BTreeSet<&str>,
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    entity_types: &'a BTreeMap<String, EntityType>,
    obs: &[Obs<'a>],
) -> BTreeMap<EntityKey<'a>, Vec<(usize, Value)>> {
    let mut out = BTreeMap::new();
    if named.is_empty() {
        return out;
    }
    let shapes = crate::create_counters::type_shapes(groups, plans, entity_types, obs);
    for (key, found) in crate::create_counters::views(obs, named, entity_types, &shapes) {
        if !acted_types.contains(key.1) {
            continue;
        }
        let kept: Vec<(usize, Value)> = found
            .into_iter()
            .filter(|(i, _)| !acting.contains(i))
            .map(|(i, m)| (i, Value::Object(m)))
            .collect();
        if !kept.is_empty() {
            out.insert(key, kept);
        }
    }
    out
}

/// The request's top-level body fields that sent scalars, as lists in the order sent: a
/// repeated or indexed field (`choices[]=1`, `{"choices": [1, 0]}`) its items, a scalar field
/// itself. A field holding anything deeper is left out.
fn sent_lists(o: &Obs<'_>) -> BTreeMap<String, Vec<Value>> {
    o.fold_top_level_fields(|acc: &mut Vec<(usize, Value)>, tokens, leaf| {
        let at = match (tokens.next(), tokens.next()) {
            (None, _) => match leaf {
                // An empty array sent as such is a list of nothing.
                Value::Array(a) if a.is_empty() => return true,
                Value::Array(_) | Value::Object(_) => return false,
                _ => 0,
            },
            (Some(n), None) => match n.parse::<usize>() {
                Ok(n) => n,
                Err(_) => return false,
            },
            _ => return false,
        };
        if leaf.is_array() || leaf.is_object() {
            return false;
        }
        acc.push((at, leaf.clone()));
        true
    })
    .into_iter()
    .map(|(k, mut items)| {
        items.sort_by_key(|(at, _)| *at);
        (k, items.into_iter().map(|(_, v)| v).collect())
    })
    .collect()
}

/// Whether a sent value is the answered one: the same JSON, or the text of the answered
/// number (a form sends every value as text).
fn sent_as(sent: &Value, answered: &Value) -> bool {
    sent == answered
        || matches!((sent, answered), (Value::String(s), Value::Number(n)) if *s == n.to_string())
}

/// The [`SentAppend`] of array field `field`, if in every compared answer the array was the one
/// the session last saw followed by the values one request field sent (at least one each
/// time), the same field every time. `None` when no field, or more than one, fits every answer.
fn append_rule(field: &str, pairs: &[Pair<'_>], obs: &[Obs<'_>]) -> Option<SentAppend> {
    let mut numbers = false;
    let mut allowed = Vec::with_capacity(pairs.len());
    for (i, before, after) in pairs {
        let (Some(Value::Array(b)), Some(Value::Array(a))) = (before.get(field), after.get(field))
        else {
            return None;
        };
        let tail = a.strip_prefix(b.as_slice())?;
        if tail.is_empty() {
            return None;
        }
        let here: BTreeSet<String> = sent_lists(&obs[*i])
            .into_iter()
            .filter(|(_, sent)| {
                sent.len() == tail.len() && sent.iter().zip(tail).all(|(s, t)| sent_as(s, t))
            })
            .map(|(k, sent)| {
                numbers |= sent.iter().any(Value::is_string) && tail.iter().all(Value::is_number);
                k
            })
            .collect();
        allowed.push(here);
    }
    Some(SentAppend {
        field: field.to_string(),
        from: only_common(allowed)?,
        numbers,
    })
}

/// The one candidate every compared answer allows; `None` when there are no answers, or they
/// share no candidate or more than one.
fn only_common<T: Ord + Clone>(allowed: Vec<BTreeSet<T>>) -> Option<T> {
    let mut answers = allowed.into_iter();
    let mut common = answers.next()?;
    for here in answers {
        common = common.intersection(&here).cloned().collect();
    }
    let mut common = common.into_iter();
    match (common.next(), common.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// The [`IndexedCounter`] of array field `field`, if in every compared answer the array held
/// as many objects as the one the session last saw and each differed from its counterpart only
/// in one integer member, moved by one step for every time one request field sent its
/// position; the same field, member and step every time, and some position sent. `None` when
/// no such rule, or more than one, fits every answer.
fn indexed_counter_rule(
    field: &str,
    pairs: &[Pair<'_>],
    obs: &[Obs<'_>],
) -> Option<IndexedCounter> {
    let mut allowed = Vec::with_capacity(pairs.len());
    for (i, before, after) in pairs {
        let (Some(Value::Array(b)), Some(Value::Array(a))) = (before.get(field), after.get(field))
        else {
            return None;
        };
        if a.len() != b.len() || a.is_empty() {
            return None;
        }
        let mut here = BTreeSet::new();
        for (by, sent) in sent_lists(&obs[*i]) {
            let Some(positions) = sent
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.parse::<usize>().ok(),
                    Value::Number(n) => n.as_u64().and_then(|n| usize::try_from(n).ok()),
                    _ => None,
                })
                .collect::<Option<Vec<usize>>>()
            else {
                continue;
            };
            if positions.is_empty() || positions.iter().any(|p| *p >= a.len()) {
                continue;
            }
            if let Some((member, step)) = stepped_member(b, a, &positions) {
                here.insert((by, member, step));
            }
        }
        allowed.push(here);
    }
    let (by, member, step) = only_common(allowed)?;
    Some(IndexedCounter {
        field: field.to_string(),
        member,
        by,
        step,
    })
}

/// The one integer member that moved between two arrays of objects, and its step per naming:
/// every item as before except that member, moved by the step times the number of times
/// `positions` names the item's position. `None` when anything else changed, no member or more
/// than one did, or the moves are not one non-zero step per naming.
fn stepped_member(before: &[Value], after: &[Value], positions: &[usize]) -> Option<(String, i64)> {
    let mut member: Option<&str> = None;
    for (b, a) in before.iter().zip(after) {
        let (Value::Object(b), Value::Object(a)) = (b, a) else {
            return None;
        };
        if a.len() != b.len() {
            return None;
        }
        for (k, v) in a {
            let held = b.get(k)?;
            if held == v {
                continue;
            }
            if held.as_i64().is_none() || v.as_i64().is_none() {
                return None;
            }
            match member {
                Some(m) if m != k => return None,
                _ => member = Some(k),
            }
        }
    }
    let member = member?;
    let mut step: Option<i64> = None;
    for (at, (b, a)) in before.iter().zip(after).enumerate() {
        // Checked: recorded counters may sit anywhere in the integers.
        let moved = a
            .get(member)?
            .as_i64()?
            .checked_sub(b.get(member)?.as_i64()?)?;
        let named = i64::try_from(positions.iter().filter(|p| **p == at).count()).ok()?;
        if named == 0 {
            if moved != 0 {
                return None;
            }
            continue;
        }
        if moved % named != 0 {
            return None;
        }
        let per = moved / named;
        match step {
            Some(s) if s != per => return None,
            _ => step = Some(per),
        }
    }
    step.filter(|s| *s != 0).map(|s| (member.to_string(), s))
}

/// The `varying` boolean fields of the compared answers that follow a boolean field of
/// another type's recorded record under the answer's key (see
/// [`ActionEffect::followed_fields`]): equal to it, or to its negation, in every sample, both
/// values seen. A field more than one record field would explain is left out: the recordings
/// cannot say which.
fn followed(
    varying: &BTreeSet<String>,
    samples: &[(&str, &Map<String, Value>)],
    ty: &str,
    entity_types: &BTreeMap<String, EntityType>,
) -> Vec<FollowedField> {
    let mut out = Vec::new();
    for field in varying {
        let Some(answered) = samples
            .iter()
            .map(|(_, m)| m.get(field).and_then(Value::as_bool))
            .collect::<Option<Vec<bool>>>()
        else {
            continue;
        };
        let mut fits: Vec<FollowedField> = Vec::new();
        for (other, et) in entity_types {
            if other == ty {
                continue;
            }
            let Some(records) = samples
                .iter()
                .map(|(id, _)| et.records.get(*id).and_then(Value::as_object))
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            let Some(first) = records.first() else {
                continue;
            };
            for from in first.keys() {
                let Some(held) = records
                    .iter()
                    .map(|r| r.get(from).and_then(Value::as_bool))
                    .collect::<Option<Vec<bool>>>()
                else {
                    continue;
                };
                for negated in [false, true] {
                    if held
                        .iter()
                        .zip(&answered)
                        .all(|(h, a)| (*h != negated) == *a)
                    {
                        fits.push(FollowedField {
                            field: field.clone(),
                            entity_type: other.clone(),
                            from: from.clone(),
                            negated,
                        });
                    }
                }
            }
        }
        if fits.len() == 1 {
            out.extend(fits);
        }
    }
    out
}

/// Whether an answer carries mostly (60%, Jaccard) the fields of a record.
fn shares_fields(answer: &Value, record: &Value) -> bool {
    let (Some(a), Some(r)) = (answer.as_object(), record.as_object()) else {
        return false;
    };
    let common = a.keys().filter(|k| r.contains_key(*k)).count();
    common * 10 >= (a.len() + r.len() - common) * 6
}

/// The entity type whose records an action's answers (`(id, entity)` each) are, when it is not
/// the type `ty` their place in the path names: another type with the same primary key whose
/// recorded record of the answer's key shares the answer's fields, for at least half the
/// answers and more of them than `ty`'s records do (a relationship under an account's id).
/// Of several, the one most answers fit, then the first by name.
fn companion_type<'t>(
    ty: &str,
    pk: &str,
    answers: &[(&String, &Value)],
    entity_types: &'t BTreeMap<String, EntityType>,
) -> Option<&'t str> {
    let fits = |t: &EntityType| {
        answers
            .iter()
            .filter(|(id, entity)| t.records.get(*id).is_some_and(|r| shares_fields(entity, r)))
            .count()
    };
    let own = entity_types.get(ty).map_or(0, fits);
    let mut best: Option<(usize, &str)> = None;
    for (name, t) in entity_types {
        if name == ty || t.primary_key != pk {
            continue;
        }
        let n = fits(t);
        if n > own && n * 2 >= answers.len() && best.is_none_or(|(b, _)| n > b) {
            best = Some((n, name.as_str()));
        }
    }
    best.map(|(_, name)| name)
}

/// Whether `v` is a record (an object with an identifier-like key) or a list of them.
fn holds_records(v: &Value) -> bool {
    let record = |v: &Value| {
        v.as_object()
            .is_some_and(|m| m.keys().any(|k| values::is_identifier_key(k)))
    };
    match v {
        Value::Array(items) => !items.is_empty() && items.iter().all(record),
        _ => record(v),
    }
}

/// Fields an action sets, per request value (see `ActionEffect::sets`).
type Sets = BTreeMap<String, BTreeMap<String, Value>>;

/// What the recordings show of each entity around an action (see [`read_sets`]).
struct Views<'v, 'a> {
    /// Answers of the entity's own routes, per (session, type, id), in observation order.
    seen: &'v BTreeMap<EntityKey<'a>, Vec<(usize, Value)>>,
    /// The observations in `seen` that answered a read.
    reads: &'v BTreeSet<usize>,
    /// Action answers that carry the entity, by observation.
    action_bodies: &'v BTreeMap<usize, &'v Value>,
    /// Those actions' observations per entity.
    acted: &'v BTreeMap<EntityKey<'a>, Vec<usize>>,
    /// Every action observation per entity, whatever its answer (sorted).
    writes_on: &'v BTreeMap<EntityKey<'a>, Vec<usize>>,
}

/// The effect of an action whose answers do not carry the entity, learned from the view it
/// left: per action (2xx, path naming a known id), the top-level fields on which the next
/// view of the entity in the same session (before another action on it; when that view is a
/// read, the last read in a row from there) differs from the view
/// before the action (the latest earlier view or entity-carrying action answer, else the
/// recorded record). Those fields (of a nested object only its changed scalar leaves, see
/// [`changed_leaves`]), each with one constant value, are what the action sets;
/// when different requests set different fields, the request body field whose value
/// separates them (every value's actions set the same non-empty fields, at least two values)
/// keys the sets (`type=disable` sets `disabled`, `type=silence` sets `silenced`).
fn read_sets(
    g: &RouteGroup,
    ty: &str,
    param: &str,
    et: &EntityType,
    views: &Views<'_, '_>,
    obs: &[Obs<'_>],
) -> Option<ActionEffect> {
    let pk = et.primary_key.as_str();
    let pi = g.params.iter().position(|p| p == param)?;
    // Per comparable action: (observation, fields the next view set, with their values).
    let mut instances: Vec<(usize, BTreeMap<String, Value>)> = Vec::new();
    for (&i, values) in g.obs.iter().zip(&g.param_values) {
        if !values::is_2xx(obs[i].status) {
            continue;
        }
        let Some(id) = values.get(pi) else {
            continue;
        };
        let key = (obs[i].session, ty, id.clone());
        let seen = views.seen.get(&key);
        let next_write = views
            .writes_on
            .get(&key)
            .and_then(|w| w.iter().find(|j| **j > i))
            .copied()
            .unwrap_or(usize::MAX);
        // The view the action left: the next one, or when that is a read, the last of the
        // reads that follow it before anything else answers the entity. A client that polls
        // (`provisioning`, `booting`, `running`) stops where the record settled.
        let mut later = seen
            .into_iter()
            .flatten()
            .filter(|(j, _)| *j > i && *j < next_write);
        let settled = match later.next() {
            Some(first) if views.reads.contains(&first.0) => Some(
                later
                    .take_while(|(j, _)| views.reads.contains(j))
                    .last()
                    .unwrap_or(first),
            ),
            other => other,
        };
        let Some(after) = settled.and_then(|(_, v)| v.as_object()) else {
            continue;
        };
        let view = seen.and_then(|v| v.iter().rev().find(|(j, _)| *j < i));
        let prior_action = views
            .acted
            .get(&key)
            .and_then(|a| a.iter().rev().find(|j| **j < i))
            .and_then(|j| views.action_bodies.get(j).map(|b| (*j, *b)));
        let before = match (view, prior_action) {
            (Some((jv, _)), Some((ja, b))) if ja > *jv => Some(b),
            (Some((_, v)), _) => Some(v),
            (None, Some((_, b))) => Some(b),
            (None, None) => et.records.get(id),
        };
        let Some(before) = before.and_then(Value::as_object) else {
            continue;
        };
        let set: BTreeMap<String, Value> = after
            .iter()
            .filter(|(k, _)| *k != pk && !values::is_identifier_key(k))
            .filter_map(|(k, v)| Some((k.clone(), changed_leaves(before.get(k)?, v)?)))
            .collect();
        instances.push((i, set));
    }
    if instances.is_empty() {
        return None;
    }
    // The fields every instance of a group set, to the same value.
    let common = |group: &[&BTreeMap<String, Value>]| -> BTreeMap<String, Value> {
        let Some(first) = group.first() else {
            return BTreeMap::new();
        };
        first
            .iter()
            .filter(|(k, v)| group.iter().all(|s| s.get(*k) == Some(*v)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    // Keyed by a body field: every instance sends it, at least two values, each value's
    // instances set the same non-empty fields.
    let mut fields: BTreeSet<&str> = BTreeSet::new();
    for (i, _) in &instances {
        fields.extend(obs[*i].req_fields.iter().map(|(p, _)| p.as_str()));
    }
    let mut best: Option<(usize, String, Sets)> = None;
    for field in fields {
        let mut groups_by: BTreeMap<String, Vec<&BTreeMap<String, Value>>> = BTreeMap::new();
        let mut all = true;
        for (i, set) in &instances {
            match obs[*i].req_field(field).and_then(scalar_key) {
                Some(v) => groups_by.entry(v).or_default().push(set),
                None => {
                    all = false;
                    break;
                }
            }
        }
        if !all || groups_by.len() < 2 {
            continue;
        }
        let sets: Sets = groups_by
            .iter()
            .map(|(v, group)| (v.clone(), common(group)))
            .collect();
        let first = sets.values().next();
        let one_set = sets.values().all(|s| Some(s) == first);
        if sets.values().any(BTreeMap::is_empty) || one_set {
            continue;
        }
        if best.as_ref().is_none_or(|(n, _, _)| sets.len() > *n) {
            best = Some((sets.len(), field.to_string(), sets));
        }
    }
    let (set_by, sets) = match best {
        Some((_, field, sets)) => (field, sets),
        None => {
            let all: Vec<&BTreeMap<String, Value>> = instances.iter().map(|(_, s)| s).collect();
            let set = common(&all);
            if set.is_empty() {
                return None;
            }
            (String::new(), BTreeMap::from([(String::new(), set)]))
        }
    };
    Some(ActionEffect {
        entity_type: ty.to_string(),
        id_param: param.to_string(),
        fields: Vec::new(),
        counters: BTreeMap::new(),
        at: String::new(),
        sets,
        set_by,
        answered_fields: Vec::new(),
        followed_fields: Vec::new(),
        appends: Vec::new(),
        indexed_counters: Vec::new(),
        undoes_wrappers: Vec::new(),
    })
}

/// What changed from `before` to `after` as a value to set: `after` when it is a scalar that
/// differs; for an object that was one before, only its changed scalar leaves, nested as they
/// sit (`{"enabled": true}` of `backups`). Arrays, and an object whose identifying field changed
/// (another recording's nested record, not a state of this one), give nothing; nor does a
/// number that moved: a quantity (a count, a size) other activity moves too, which no action
/// sets to the recorded value.
fn changed_leaves(before: &Value, after: &Value) -> Option<Value> {
    match after {
        Value::Array(_) => None,
        Value::Number(_) if before.is_number() => None,
        Value::Object(a) => {
            let b = before.as_object()?;
            let renamed = a.iter().any(|(k, v)| {
                values::is_identifier_key(k) && !v.is_object() && b.get(k) != Some(v)
            });
            if renamed {
                return None;
            }
            let changed: Map<String, Value> = a
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), changed_leaves(b.get(k)?, v)?)))
                .collect();
            (!changed.is_empty()).then_some(Value::Object(changed))
        }
        scalar => (before != scalar).then(|| scalar.clone()),
    }
}

/// The ids a request body sends under `base` (a pointer): the elements `base/0`, `base/1`, …
/// of an array, else the value at `base` itself.
pub(crate) fn sent_ids(fields: &[(String, Value)], base: &str) -> Vec<String> {
    let prefix = format!("{base}/");
    let mut ids: Vec<String> = fields
        .iter()
        .filter(|(p, _)| {
            p.strip_prefix(&prefix)
                .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|(_, v)| scalar_key(v))
        .collect();
    if ids.is_empty()
        && let Some(v) = fields.iter().find(|(p, _)| p == base).map(|(_, v)| v)
        && let Some(id) = scalar_key(v)
    {
        ids.push(id);
    }
    ids
}

/// The membership effect of every route (same order as the groups); `None` for the others.
///
/// A write with no state operation is a membership action when a `GET` route of the same
/// origin has the same path, its answers are arrays of records of one entity type, and, in
/// every recorded session where that list was read under the same path parameters after the
/// action (before another such action on that list), the read listed every id one request
/// body field sent (an add), or none of them (a remove), the same way each time.
pub fn memberships(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) -> Vec<Option<MembershipEffect>> {
    let mut out = vec![None; groups.len()];
    // The ids an array answer lists, by primary key `pk`.
    let listed = |i: usize, pk: &str| -> Option<BTreeSet<String>> { obs[i].listed_keys(pk) };
    // Actions per list route: which groups act on it.
    let mut acting: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (gi, (g, p)) in groups.iter().zip(plans).enumerate() {
        if p.state_op.is_some() || matches!(g.method.as_str(), "GET" | "HEAD") {
            continue;
        }
        if let Some(li) = groups
            .iter()
            .position(|l| l.method == "GET" && l.origin == g.origin && l.segs == g.segs)
        {
            acting.entry(li).or_default().push(gi);
        }
    }
    for (li, actors) in &acting {
        let l = &groups[*li];
        // The member type: the entity type whose recorded records hold most listed ids.
        let mut hits: BTreeMap<&str, usize> = BTreeMap::new();
        for (name, et) in entity_types {
            for &j in &l.obs {
                if let Some(ids) = listed(j, &et.primary_key) {
                    *hits.entry(name.as_str()).or_default() +=
                        ids.iter().filter(|id| et.records.contains_key(*id)).count();
                }
            }
        }
        let Some((member_type, _)) = hits
            .iter()
            .filter(|(_, n)| **n > 0)
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        else {
            continue;
        };
        let Some(pk) = entity_types
            .get(*member_type)
            .map(|t| t.primary_key.as_str())
        else {
            continue;
        };
        // Every 2xx action on this list, in observation order, with its path parameters.
        let mut actions: Vec<(usize, usize, &Vec<String>)> = Vec::new();
        for &gi in actors {
            for (&i, values) in groups[gi].obs.iter().zip(&groups[gi].param_values) {
                if values::is_2xx(obs[i].status) {
                    actions.push((i, gi, values));
                }
            }
        }
        actions.sort();
        for &gi in actors {
            // Candidate id fields: array bases and scalar fields of the request bodies.
            let mut bases: BTreeSet<String> = BTreeSet::new();
            for &(i, g, _) in &actions {
                if g != gi {
                    continue;
                }
                for (p, _) in &obs[i].req_fields {
                    match p.rsplit_once('/') {
                        Some((b, last))
                            if !b.is_empty() && last.bytes().all(|c| c.is_ascii_digit()) =>
                        {
                            bases.insert(b.to_string());
                        }
                        _ => {
                            bases.insert(p.clone());
                        }
                    }
                }
            }
            for base in bases {
                let mut present = 0usize;
                let mut absent = 0usize;
                let mut mixed = false;
                for (n, &(i, g, params)) in actions.iter().enumerate() {
                    if g != gi {
                        continue;
                    }
                    let ids = sent_ids(&obs[i].req_fields, &base);
                    if ids.is_empty() {
                        mixed = true;
                        break;
                    }
                    // The next action on the same list in the same session bounds the read.
                    let bound = actions[n + 1..]
                        .iter()
                        .find(|(j, _, p)| obs[*j].session == obs[i].session && *p == params)
                        .map_or(usize::MAX, |(j, _, _)| *j);
                    let read = l
                        .obs
                        .iter()
                        .zip(&l.param_values)
                        .find(|(j, p)| {
                            **j > i
                                && **j < bound
                                && obs[**j].session == obs[i].session
                                && *p == params
                                && values::is_2xx(obs[**j].status)
                        })
                        .and_then(|(j, _)| listed(*j, pk));
                    let Some(read) = read else {
                        continue;
                    };
                    if ids.iter().all(|id| read.contains(id)) {
                        present += 1;
                    } else if ids.iter().all(|id| !read.contains(id)) {
                        absent += 1;
                    } else {
                        mixed = true;
                    }
                }
                if mixed || (present > 0) == (absent > 0) {
                    continue;
                }
                out[gi] = Some(MembershipEffect {
                    list_path: l.path.clone(),
                    ids_field: base,
                    member_type: member_type.to_string(),
                    adds: present > 0,
                });
                break;
            }
        }
    }
    out
}

/// Whether each route is a last-write-wins singleton write (same order as the groups).
///
/// A write with no state operation and no path parameters is one when a `GET` route of the
/// same origin has the same path and, in every recorded session, the first 2xx read after a
/// 2xx write of it (before the next such write) answered every top-level field of the write's
/// object answer with the same value; at least one such pair must exist, unless no session read
/// the path after writing it and the write's answers are the resource the read answers
/// ([`same_resource`]).
pub fn last_write_wins(groups: &[RouteGroup], plans: &[RoutePlan], obs: &[Obs<'_>]) -> Vec<bool> {
    let mut out = vec![false; groups.len()];
    for (gi, (g, p)) in groups.iter().zip(plans).enumerate() {
        if p.state_op.is_some()
            || !g.params.is_empty()
            || matches!(g.method.as_str(), "GET" | "HEAD")
        {
            continue;
        }
        let Some(read) = groups
            .iter()
            .find(|l| l.method == "GET" && l.origin == g.origin && l.segs == g.segs)
        else {
            continue;
        };
        let writes: Vec<usize> = g
            .obs
            .iter()
            .copied()
            .filter(|&i| values::is_2xx(obs[i].status))
            .collect();
        let mut echoed = 0usize;
        let mut holds = true;
        for (n, &i) in writes.iter().enumerate() {
            let bound = writes[n + 1..]
                .iter()
                .find(|&&j| obs[j].session == obs[i].session)
                .copied()
                .unwrap_or(usize::MAX);
            let Some(next) = read.obs.iter().copied().find(|&j| {
                j > i
                    && j < bound
                    && obs[j].session == obs[i].session
                    && values::is_2xx(obs[j].status)
            }) else {
                continue;
            };
            let (Some(Value::Object(written)), Some(Value::Object(answered))) =
                (obs[i].resp_json(), obs[next].resp_json())
            else {
                holds = false;
                break;
            };
            if written.is_empty() || written.iter().any(|(k, v)| answered.get(k) != Some(v)) {
                holds = false;
                break;
            }
            echoed += 1;
        }
        out[gi] = holds && (echoed > 0 || same_resource(&writes, &read.obs, obs));
    }
    out
}

/// Field-name overlap (Jaccard) every 2xx answer of a singleton write must share with every
/// 2xx answer of the read of its path, where no session read the path after writing it.
const SINGLETON_OVERLAP: f64 = 0.8;

/// Whether the 2xx answers of a singleton write (`writes`) and of the read of its path
/// (`reads`) are one resource by their shape: each a non-empty object, every write's field
/// names overlapping every read's by at least [`SINGLETON_OVERLAP`], with at least one of
/// each. What a write answers is then what the path holds (`PUT /profile` answers the
/// profile), which a later read shows.
fn same_resource(writes: &[usize], reads: &[usize], obs: &[Obs<'_>]) -> bool {
    let fields = |i: usize| match obs[i].resp_json() {
        Some(Value::Object(m)) if !m.is_empty() => Some(m.keys().cloned().collect::<BTreeSet<_>>()),
        _ => None,
    };
    let read_fields: Option<Vec<BTreeSet<String>>> = reads
        .iter()
        .copied()
        .filter(|&j| values::is_2xx(obs[j].status))
        .map(fields)
        .collect();
    let Some(read_fields) = read_fields.filter(|r| !r.is_empty()) else {
        return false;
    };
    !writes.is_empty()
        && writes.iter().all(|&i| {
            fields(i).is_some_and(|w| {
                read_fields.iter().all(|r| {
                    let union = w.union(r).count();
                    union > 0
                        && w.intersection(r).count() as f64 / union as f64 >= SINGLETON_OVERLAP
                })
            })
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    /// A type `people` whose records are `records` by key, primary key `id`.
    fn people(records: &[(&str, Value)]) -> BTreeMap<String, EntityType> {
        let et: EntityType = serde_json::from_value(json!({
            "primary_key": "id",
            "known_ids": records.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            "known_missing": [],
            "records": records.iter().cloned().collect::<BTreeMap<_, _>>(),
        }))
        .unwrap();
        BTreeMap::from([("people".to_string(), et)])
    }

    fn answers(values: &[(&'static str, bool)]) -> Vec<(&'static str, Map<String, Value>)> {
        values
            .iter()
            .map(|(id, following)| {
                let m = json!({"id": id, "following": following});
                (*id, m.as_object().unwrap().clone())
            })
            .collect()
    }

    #[test]
    fn a_nested_object_sets_only_its_changed_leaves() {
        let before = json!({"enabled": false, "schedule": {"day": null, "window": "W2"}});
        let after = json!({"enabled": true, "schedule": {"day": "Monday", "window": "W2"}});
        assert_eq!(
            changed_leaves(&before, &after),
            Some(json!({"enabled": true, "schedule": {"day": "Monday"}}))
        );
        assert_eq!(changed_leaves(&before, &before), None);
        assert_eq!(changed_leaves(&json!("a"), &json!("b")), Some(json!("b")));
        assert_eq!(changed_leaves(&json!(null), &json!({"on": true})), None);
    }

    #[test]
    fn another_nested_record_arrays_and_moved_numbers_set_nothing() {
        let before = json!({"id": 7, "label": "web-1", "status": "running"});
        let after = json!({"id": 9, "label": "db-2", "status": "offline"});
        assert_eq!(changed_leaves(&before, &after), None);
        let before = json!({"hidden": false, "posts_count": 2});
        let after = json!({"hidden": true, "posts_count": 5});
        assert_eq!(
            changed_leaves(&before, &after),
            Some(json!({"hidden": true}))
        );
        assert_eq!(changed_leaves(&json!([1]), &json!([1, 2])), None);
    }

    #[test]
    fn a_counter_moved_past_the_integers_steps_nothing_rather_than_overflowing() {
        let before = [json!({"title": "a", "n": i64::MIN})];
        let after = [json!({"title": "a", "n": i64::MAX})];
        assert_eq!(stepped_member(&before, &after, &[0]), None);
        let after = [json!({"title": "a", "n": i64::MIN + 2})];
        assert_eq!(
            stepped_member(&before, &after, &[0, 0]),
            Some(("n".into(), 1))
        );
    }

    #[test]
    fn a_field_negating_the_one_record_field_that_explains_it_follows_it() {
        let types = people(&[
            ("a", json!({"id": "a", "locked": false, "bot": false})),
            ("b", json!({"id": "b", "locked": true, "bot": false})),
        ]);
        let owned = answers(&[("a", true), ("b", false), ("a", true)]);
        let samples: Vec<(&str, &Map<String, Value>)> =
            owned.iter().map(|(id, m)| (*id, m)).collect();
        let varying = BTreeSet::from(["following".to_string()]);
        assert_eq!(
            followed(&varying, &samples, "relationships", &types),
            vec![FollowedField {
                field: "following".into(),
                entity_type: "people".into(),
                from: "locked".into(),
                negated: true,
            }]
        );
    }

    #[test]
    fn a_field_two_record_fields_explain_follows_neither() {
        let types = people(&[
            ("a", json!({"id": "a", "locked": false, "bot": true})),
            ("b", json!({"id": "b", "locked": true, "bot": false})),
        ]);
        let owned = answers(&[("a", true), ("b", false)]);
        let samples: Vec<(&str, &Map<String, Value>)> =
            owned.iter().map(|(id, m)| (*id, m)).collect();
        let varying = BTreeSet::from(["following".to_string()]);
        assert!(followed(&varying, &samples, "relationships", &types).is_empty());
    }
}
