//! Creates and actions that answer fields of the record a request field names
//! (`Route::named_record_copies`): an instance created with `type: g6-standard-6` answers that
//! plan's `disk`, `memory` and `vcpus` under `specs`. Anti-unified, those positions replay
//! what the recorded creates answered for the plans they chose, so a create naming another
//! plan, one the recordings hold only in the catalogue (`GET /linode/types`), was answered the
//! specs of a recorded one, or a mix of several.
//!
//! Per create route, a top-level request field and an entity type are such a pair when the
//! field's value names a recorded record of that type in the 2xx answers (JSON objects, the
//! record at the answer's root) of at least two distinct such records, and for some leaf
//! positions of the answer (through objects, never arrays; never the answer's field the request
//! sent, which is the request's own value) every one of those answers held, at the position,
//! the named record's field of the position's own name. A position is copied when at least two
//! distinct named records showed it (answers whose record lacks the field, or holds `null`
//! there, say nothing of it), and the pair is learned when at least one copied position held
//! different values for two records: the answer shows it follows the record, not a constant.
//! A time is not copied where every answer held it as the moment its exchange was answered
//! (a record made in the same second as the create), nor where every record held one time
//! alike (a scrubbed constant).
//! A position whose name no named record has a field of is copied from the one text field of
//! another name every answer held there, when two records showed it different (attaching a
//! volume to an instance answers the instance's `label` as the volume's `linode_label`): a
//! top-level string of the record, or a string one level down in one of its object fields (a
//! reply's `in_reply_to_account_id` is `/id` under its parent's `account`).
//!
//! A record of the create's own type (the post a reply names) shares many fields with the
//! created one by chance: a reply's `visibility` and language are usually its parent's. Of such
//! a record only positions of another name are copied, and only where every value held there
//! is a key some type recorded a record under (an author's id).
//! An object the answers embed whose key is the sent key in every answer is the named record
//! itself (a report's `target_account` is the account its `account_id` names): where every
//! answer held at least three of its fields as the record did, each field of it the record
//! holds is copied, from a single answer too (see [`embedded_copies`]).
//! Of several pairs, the one copying the most positions outside embedded records wins, then
//! the one copying the most in all (then the first field, then the first type, in name
//! order): a quoted post copies many positions, a reply's author says more of the reply.
//!
//! Actions are learned as creates are, where the action answers the record its path names
//! (`ActionEffect::at` empty, no `sets`): the named record is then of another type than the
//! acted-on one.
//!
//! Where no body field names a record, a path parameter may, as a body field would (an
//! address allocated under an instance answers the instance's `region` and, in its
//! `assigned_entity`, its `label`): [`best_param_pair`], never a record of the route's own type.
//!
//! Not learned: records named by a query parameter, numbers or booleans
//! copied under another name, text deeper than one object down, updates (a resize naming a new
//! plan).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{EntityType, NamedRecordCopies, RecordCopy, Route, StateOp};

use crate::observe::{Obs, escape_token};
use crate::routes::RouteGroup;
use crate::state::RoutePlan;
use crate::values;

/// Fewest distinct named records a position must be shown for.
const MIN_RECORDS: usize = 2;

/// How deep, in objects, answer positions are looked for.
const MAX_DEPTH: usize = 3;

/// Set `named_record_copies` on every create and action of `built` (parallel to `groups`) it
/// holds for.
pub fn learn(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    for (i, (g, p)) in groups.iter().zip(plans).enumerate() {
        // A create's answer is the record it made; an action's, where it answers the record
        // its path names (its effect `at` the answer's root), that record as changed.
        let own_type = match &built[i].action {
            Some(a) if a.at.is_empty() && a.sets.is_empty() => Some(a.entity_type.as_str()),
            Some(_) => continue,
            None if p.state_op == Some(StateOp::Create) => p.entity_type.as_deref(),
            None => continue,
        };
        let answers = g.object_answers(obs);
        built[i].named_record_copies = best_pair(&answers, own_type, entity_types)
            .or_else(|| best_param_pair(g, obs, own_type, entity_types));
    }
}

/// [`best_pair`] for the records the route's path parameters name (an address allocated under
/// an instance answers the instance's `region` and `label`), where no body field names one.
fn best_param_pair(
    g: &RouteGroup,
    obs: &[Obs<'_>],
    own_type: Option<&str>,
    entity_types: &BTreeMap<String, EntityType>,
) -> Option<NamedRecordCopies> {
    // Per observation of a 2xx object answer: its body and its path-parameter values.
    let answers: Vec<(&Obs<'_>, Value, &[String])> = g
        .obs
        .iter()
        .zip(&g.param_values)
        .filter_map(|(&i, values)| {
            let o = obs.get(i)?;
            if !values::is_2xx(o.status) {
                return None;
            }
            let body = o.resp_json().filter(Value::is_object)?;
            Some((o, body, values.as_slice()))
        })
        .collect();
    let mut best: Option<((usize, usize), NamedRecordCopies)> = None;
    for (pi, param) in g.params.iter().enumerate() {
        for (ty, t) in entity_types {
            // A record of the route's own type is the one made or acted on, not a named one.
            if t.records.is_empty() || Some(ty.as_str()) == own_type {
                continue;
            }
            let named: Vec<Named<'_>> = answers
                .iter()
                .filter_map(|(o, body, values)| {
                    Named::of(o, body, &t.records, values.get(pi)?.clone())
                })
                .collect();
            let copies = copies(&named, "", &t.primary_key, None);
            let rank = (copies.len(), copies.len());
            if copies.is_empty() || best.as_ref().is_some_and(|(r, _)| *r >= rank) {
                continue;
            }
            best = Some((
                rank,
                NamedRecordCopies {
                    field: String::new(),
                    param: Some(param.clone()),
                    entity_type: ty.clone(),
                    copies,
                },
            ));
        }
    }
    best.map(|(_, pair)| pair)
}

/// The pair copying the most positions (see the module doc).
fn best_pair(
    answers: &[(&Obs<'_>, Value)],
    own_type: Option<&str>,
    entity_types: &BTreeMap<String, EntityType>,
) -> Option<NamedRecordCopies> {
    let fields: BTreeSet<&str> = answers
        .iter()
        .flat_map(|(o, _)| o.req_fields.iter())
        .filter_map(|(pointer, v)| {
            let name = pointer.strip_prefix('/').filter(|n| !n.contains('/'))?;
            values::scalar_key(v).map(|_| name)
        })
        .collect();
    // A value some type recorded as a record's key.
    let names_record = |v: &Value| {
        v.as_str()
            .is_some_and(|s| entity_types.values().any(|t| t.known_ids.contains(s)))
    };
    // The best pair, ranked by the positions its records' fields showed through, then by all
    // it copies: an embedded record (a quoted post) copies many positions, but a pair whose
    // fields show in the answer's own (a reply's author) says more of the created record.
    let mut best: Option<((usize, usize), NamedRecordCopies)> = None;
    for field in fields {
        for (ty, t) in entity_types {
            if t.records.is_empty() {
                continue;
            }
            let own = Some(ty.as_str()) == own_type;
            let named: Vec<Named<'_>> = answers
                .iter()
                .filter_map(|(o, body)| Named::of(o, body, &t.records, sent(o, field)?))
                .collect();
            let mut copies = copies(
                &named,
                field,
                &t.primary_key,
                own.then_some(&names_record as &dyn Fn(&Value) -> bool),
            );
            let rank_base = copies.len();
            for c in embedded_copies(&named, &t.primary_key) {
                if !copies.iter().any(|x| x.at == c.at) {
                    copies.push(c);
                }
            }
            copies.sort_by(|a, b| a.at.cmp(&b.at));
            let rank = (rank_base, copies.len());
            if copies.is_empty() || best.as_ref().is_some_and(|(r, _)| *r >= rank) {
                continue;
            }
            let pair = NamedRecordCopies {
                field: field.to_string(),
                param: None,
                entity_type: ty.clone(),
                copies,
            };
            best = Some((rank, pair));
        }
    }
    best.map(|(_, pair)| pair)
}

/// A recorded answer to a create naming a record.
struct Named<'a> {
    body: &'a Value,
    /// The record its request named.
    record: &'a Value,
    /// That record's key.
    key: String,
    /// When the exchange was answered (unix microseconds), where the recording says.
    answered: Option<(u64, u64)>,
}

impl<'a> Named<'a> {
    /// The answer `body` of `o` naming the record of `records` under `key`; `None` when the
    /// recordings hold no such record.
    fn of(
        o: &Obs<'_>,
        body: &'a Value,
        records: &'a BTreeMap<String, Value>,
        key: String,
    ) -> Option<Named<'a>> {
        Some(Named {
            body,
            record: records.get(&key)?,
            key,
            answered: crate::unify::answered_window(o),
        })
    }

    /// Whether `v` is a time within the window this exchange was answered in: the moment the
    /// create itself was made, which a record made in the same second holds by chance.
    fn stamped_then(&self, v: &Value) -> bool {
        let (Some(at), Some((start, end))) = (wraith_model::clock::instant_of(v), self.answered)
        else {
            return false;
        };
        let (start, end) = (start as i64, end as i64);
        at >= start.saturating_sub(STAMP_SLACK_US) && at <= end.saturating_add(STAMP_SLACK_US)
    }
}

/// Slack around the window an exchange was answered in (a whole-second time's truncation).
const STAMP_SLACK_US: i64 = 2_000_000;

/// The request's value of top-level body field `field`, as a record key.
fn sent(o: &Obs<'_>, field: &str) -> Option<String> {
    let pointer = format!("/{}", escape_token(field));
    o.req_fields
        .iter()
        .find(|(p, _)| *p == pointer)
        .and_then(|(_, v)| values::scalar_key(v))
}

/// The positions every answer in `named` holds as its named record does, when at least one of
/// them differed between two records; none otherwise. A time every answer held as the moment
/// it was answered is the create's own, not the record's (a device attached in the second its
/// instance was made), and so is one time every record held alike.
fn copies(
    named: &[Named<'_>],
    field: &str,
    pk: &str,
    own: Option<&dyn Fn(&Value) -> bool>,
) -> Vec<RecordCopy> {
    let distinct: BTreeSet<&str> = named.iter().map(|n| n.key.as_str()).collect();
    if distinct.len() < MIN_RECORDS {
        return Vec::new();
    }
    let mut positions: BTreeSet<(String, String)> = BTreeSet::new();
    for n in named {
        leaf_positions(n.body, "", 0, &mut positions);
    }
    let mut out = Vec::new();
    let mut follows = false;
    for (at, name) in positions {
        // The sent field itself is the request's own value, and the record's key its name.
        if at == format!("/{}", escape_token(field)) || name == pk {
            continue;
        }
        let own_name = named
            .iter()
            .any(|n| n.record.get(&name).is_some_and(|v| !v.is_null()));
        if own_name && own.is_some() {
            // A record of the create's own type shares many fields with it by chance (a
            // reply's `visibility` is its parent's): a same-named field shows nothing.
            continue;
        }
        if own_name {
            let copy = RecordCopy {
                at,
                key: name,
                within: String::new(),
            };
            let Some(varies) = held_as(named, &copy) else {
                continue;
            };
            follows |= varies;
            out.push(copy);
            continue;
        }
        // No named record has a field of the position's name: the one field of another name
        // whose text every answer held there, varying with the record (a volume's
        // `linode_label` is its instance's `label`).
        let mut texts = BTreeSet::new();
        for n in named {
            text_sources(n.record, pk, &mut texts);
        }
        let mut renamed = texts.into_iter().filter(|source| {
            let copy = RecordCopy {
                at: at.clone(),
                key: source.0.to_string(),
                within: source.1.clone(),
            };
            held_as(named, &copy) == Some(true)
                && own.is_none_or(|names_record| {
                    named
                        .iter()
                        .filter_map(|n| copy.held_in(n.record))
                        .all(names_record)
                })
        });
        if let (Some((key, within)), None) = (renamed.next(), renamed.next()) {
            follows = true;
            out.push(RecordCopy {
                at,
                key: key.to_string(),
                within,
            });
        }
    }
    if follows { out } else { Vec::new() }
}

/// Fewest fields an embedded object must hold as its named record held them.
const MIN_EMBEDDED_FIELDS: usize = 3;

/// The fields of an object the answers embed whose key is the sent key in every answer: that
/// object is the named record itself (a report's `target_account` is the account its
/// `account_id` named). When every answer held at least [`MIN_EMBEDDED_FIELDS`] of its fields
/// as its named record did, each of its fields some named record holds (of any type: a
/// profile's `fields` array) is copied, whatever the answers held: a field that differed
/// changed between the answer and the read of the record, and the session sees the record as
/// it holds it. Records lacking a field, or holding `null`, say nothing of it; a time stamped
/// when the create was answered is the create's own. One answer is evidence enough: that many
/// equal values are no chance, and the key says whose they are.
fn embedded_copies(named: &[Named<'_>], pk: &str) -> Vec<RecordCopy> {
    let Some(first) = named.first() else {
        return Vec::new();
    };
    let mut objects = Vec::new();
    object_positions(first.body, "", 0, &mut objects);
    let mut out = Vec::new();
    for at in objects {
        let names_it = |n: &Named<'_>| {
            n.body
                .pointer(&at)
                .and_then(|o| o.get(pk))
                .and_then(values::scalar_key)
                .as_deref()
                == Some(n.key.as_str())
        };
        if !named.iter().all(names_it) {
            continue;
        }
        let Some(Value::Object(fields)) = first.body.pointer(&at) else {
            continue;
        };
        // Fields some named record holds, and how many every answer held as it did.
        let mut shown = Vec::new();
        let mut held = 0usize;
        for f in fields.keys().filter(|f| *f != pk) {
            let copy = RecordCopy {
                at: format!("{at}/{}", escape_token(f)),
                key: f.clone(),
                within: String::new(),
            };
            let mut records = 0usize;
            let mut stamped = false;
            let holds = named.iter().all(|n| match copy.held_in(n.record) {
                None => true,
                Some(v) => {
                    records += 1;
                    stamped |= n.stamped_then(v);
                    n.body.pointer(&copy.at) == Some(v)
                }
            });
            if records == 0 || stamped {
                continue;
            }
            held += usize::from(holds);
            shown.push(copy);
        }
        // The object is the record: a field it showed otherwise (a name changed after the
        // record was read) is still the record's, as the session sees the record.
        if held >= MIN_EMBEDDED_FIELDS {
            out.extend(shown);
        }
    }
    out
}

/// The pointers of the objects `v` holds through objects (never arrays, never `v` itself), up
/// to [`MAX_DEPTH`] levels.
fn object_positions(v: &Value, at: &str, depth: usize, out: &mut Vec<String>) {
    let Value::Object(map) = v else {
        return;
    };
    if depth >= MAX_DEPTH {
        return;
    }
    for (k, child) in map {
        if child.is_object() {
            let pointer = format!("{at}/{}", escape_token(k));
            object_positions(child, &pointer, depth + 1, out);
            out.push(pointer);
        }
    }
}

/// Whether every answer in `named` holds, at `at`, its named record's field `key` (records
/// lacking it, or holding `null`, say nothing), shown for at least [`MIN_RECORDS`] records:
/// `Some(varies)`, where `varies` says two records showed different values. `None` where an
/// answer held another value, too few records showed it, every answer held it as the moment it
/// was answered (the write's own time), or one time every record held alike (a constant of the
/// recordings: scrubbed, or records made alike).
fn held_as<'a>(named: &'a [Named<'a>], copy: &RecordCopy) -> Option<bool> {
    let mut shown: BTreeMap<&str, &Value> = BTreeMap::new();
    let mut stamped_then = true;
    let holds = named.iter().all(|n| {
        let Some(held) = copy.held_in(n.record) else {
            return true;
        };
        if n.body.pointer(&copy.at) != Some(held) {
            return false;
        }
        stamped_then &= n.stamped_then(held);
        shown.insert(n.key.as_str(), held);
        true
    });
    if !holds || shown.len() < MIN_RECORDS || stamped_then {
        return None;
    }
    let mut values = shown.values();
    let first = values.next();
    let varies = values.any(|v| Some(v) != first);
    if !varies && first.is_some_and(|v| wraith_model::clock::instant_of(v).is_some()) {
        return None;
    }
    Some(varies)
}

/// The text fields of `record` a position of another name may copy, as (top-level field,
/// JSON pointer below it): its top-level strings but the key, and the strings of its object
/// fields one level down (a status's author's id, `/id` under `account`).
fn text_sources<'r>(record: &'r Value, pk: &str, out: &mut BTreeSet<(&'r str, String)>) {
    for (k, v) in record.as_object().into_iter().flatten() {
        match v {
            Value::String(_) if k != pk => {
                out.insert((k.as_str(), String::new()));
            }
            Value::Object(inner) => {
                for (ik, iv) in inner {
                    if iv.is_string() {
                        out.insert((k.as_str(), format!("/{}", escape_token(ik))));
                    }
                }
            }
            _ => {}
        }
    }
}

/// Every scalar leaf of `v` through objects (never arrays), up to [`MAX_DEPTH`] levels, as
/// (JSON pointer, its last key).
fn leaf_positions(v: &Value, at: &str, depth: usize, out: &mut BTreeSet<(String, String)>) {
    let Value::Object(map) = v else {
        return;
    };
    if depth >= MAX_DEPTH {
        return;
    }
    for (k, child) in map {
        let pointer = format!("{at}/{}", escape_token(k));
        match child {
            Value::Object(_) => leaf_positions(child, &pointer, depth + 1, out),
            Value::Array(_) => {}
            _ => {
                out.insert((pointer, k.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn plans() -> BTreeMap<String, Value> {
        [
            (
                "small",
                json!({"id": "small", "memory": 1024, "vcpus": 1, "gpus": 0}),
            ),
            (
                "large",
                json!({"id": "large", "memory": 16384, "vcpus": 6, "gpus": 0}),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn seen<'a>(body: &'a Value, record: &'a Value, key: &str) -> Named<'a> {
        Named {
            body,
            record,
            key: key.to_string(),
            answered: None,
        }
    }

    fn answer(plan: &str, memory: u64, vcpus: u64) -> Value {
        json!({"id": 7, "type": plan, "label": "box",
               "specs": {"memory": memory, "vcpus": vcpus, "gpus": 0}})
    }

    #[test]
    fn positions_holding_the_named_records_fields_are_copied_where_one_of_them_varies() {
        let plans = plans();
        let (a, b, c) = (
            answer("small", 1024, 1),
            answer("large", 16384, 6),
            answer("small", 1024, 1),
        );
        let named = vec![
            seen(&a, &plans["small"], "small"),
            seen(&b, &plans["large"], "large"),
            seen(&c, &plans["small"], "small"),
        ];
        let copied: Vec<(String, String)> = copies(&named, "type", "id", None)
            .into_iter()
            .map(|c| (c.at, c.key))
            .collect();
        assert_eq!(
            copied,
            [
                ("/specs/gpus".to_string(), "gpus".to_string()),
                ("/specs/memory".to_string(), "memory".to_string()),
                ("/specs/vcpus".to_string(), "vcpus".to_string()),
            ]
        );
    }

    #[test]
    fn one_record_one_contradiction_or_only_constants_copy_nothing() {
        let plans = plans();
        let a = answer("small", 1024, 1);
        // One named record: the values may as well be constants.
        let one = vec![
            seen(&a, &plans["small"], "small"),
            seen(&a, &plans["small"], "small"),
        ];
        assert!(copies(&one, "type", "id", None).is_empty());
        // An answer holding another value than its record: that position is not copied.
        let odd = answer("large", 8192, 6);
        let named = vec![
            seen(&a, &plans["small"], "small"),
            seen(&odd, &plans["large"], "large"),
        ];
        let copied: Vec<String> = copies(&named, "type", "id", None)
            .into_iter()
            .map(|c| c.at)
            .collect();
        assert_eq!(copied, ["/specs/gpus", "/specs/vcpus"]);
        // Positions that agree for every record show no dependence on it.
        let same = answer("large", 1024, 1);
        let flat = json!({"id": "large", "memory": 1024, "vcpus": 1, "gpus": 0});
        let named = vec![
            seen(&a, &plans["small"], "small"),
            seen(&same, &flat, "large"),
        ];
        assert!(copies(&named, "type", "id", None).is_empty());
    }

    #[test]
    fn a_time_every_answer_held_as_the_moment_it_was_answered_is_not_copied() {
        // Each instance was made in the second its device was attached: the device's `created`
        // equals the instance's by chance.
        let box_a = json!({"id": "a", "label": "web", "created": "2026-06-01T12:00:00"});
        let box_b = json!({"id": "b", "label": "db", "created": "2026-06-01T12:00:05"});
        let dev_a = json!({"id": 1, "created": "2026-06-01T12:00:00", "entity": {"label": "web"}});
        let dev_b = json!({"id": 2, "created": "2026-06-01T12:00:05", "entity": {"label": "db"}});
        let at = |s: &str| {
            let us = wraith_model::clock::instant_of(&json!(s)).unwrap() as u64;
            Some((us, us + 10_000))
        };
        let mut named = vec![seen(&dev_a, &box_a, "a"), seen(&dev_b, &box_b, "b")];
        named[0].answered = at("2026-06-01T12:00:00Z");
        named[1].answered = at("2026-06-01T12:00:05Z");
        let copied: Vec<String> = copies(&named, "entity_id", "id", None)
            .into_iter()
            .map(|c| c.at)
            .collect();
        assert_eq!(copied, ["/entity/label"]);
        // Recorded long before the create, the time is the record's.
        named[0].answered = at("2026-07-01T00:00:00Z");
        let copied: Vec<String> = copies(&named, "entity_id", "id", None)
            .into_iter()
            .map(|c| c.at)
            .collect();
        assert_eq!(copied, ["/created", "/entity/label"]);
        // One time every record held alike is a constant of the recordings.
        let box_b = json!({"id": "b", "label": "db", "created": "2026-06-01T12:00:00"});
        let dev_b = json!({"id": 2, "created": "2026-06-01T12:00:00", "entity": {"label": "db"}});
        let named = vec![seen(&dev_a, &box_a, "a"), seen(&dev_b, &box_b, "b")];
        let copied: Vec<String> = copies(&named, "entity_id", "id", None)
            .into_iter()
            .map(|c| c.at)
            .collect();
        assert_eq!(copied, ["/entity/label"]);
    }

    #[test]
    fn a_text_field_of_another_name_is_copied_where_no_record_has_the_positions_name() {
        let box_a = json!({"id": 1, "label": "web", "status": "running", "region": "r1"});
        let box_b = json!({"id": 2, "label": "db", "status": "running", "region": "r1"});
        let vol_a = json!({"id": 7, "linode_id": 1, "linode_label": "web", "state": "running"});
        let vol_b = json!({"id": 8, "linode_id": 2, "linode_label": "db", "state": "running"});
        let named = vec![seen(&vol_a, &box_a, "1"), seen(&vol_b, &box_b, "2")];
        let copied: Vec<(String, String)> = copies(&named, "linode_id", "id", None)
            .into_iter()
            .map(|c| (c.at, c.key))
            .collect();
        // `state` equals `status` too, but never varies: nothing shows it follows the record.
        assert_eq!(copied, [("/linode_label".to_string(), "label".to_string())]);
        // Two fields of other names that held the text alike: which one is unknown.
        let box_a = json!({"id": 1, "label": "web", "hostname": "web"});
        let box_b = json!({"id": 2, "label": "db", "hostname": "db"});
        let named = vec![seen(&vol_a, &box_a, "1"), seen(&vol_b, &box_b, "2")];
        assert!(copies(&named, "linode_id", "id", None).is_empty());
    }

    #[test]
    fn a_record_of_the_own_type_lends_only_a_nested_key_under_another_name() {
        // Replies to two posts by two authors: each reply shares its parent's `visibility`
        // and, by chance, its `lang` (differing between the two), and names the parent's
        // author's id.
        let post_a = json!({"id": "p1", "visibility": "public", "lang": "en",
                            "account": {"id": "501", "acct": "ann"}});
        let post_b = json!({"id": "p2", "visibility": "public", "lang": "de",
                            "account": {"id": "502", "acct": "bob"}});
        let reply_a = json!({"id": "r1", "visibility": "public", "lang": "en",
                             "in_reply_to_id": "p1", "in_reply_to_account_id": "501",
                             "account": {"id": "502", "acct": "bob"}});
        let reply_b = json!({"id": "r2", "visibility": "public", "lang": "de",
                             "in_reply_to_id": "p2", "in_reply_to_account_id": "502",
                             "account": {"id": "501", "acct": "ann"}});
        let named = vec![seen(&reply_a, &post_a, "p1"), seen(&reply_b, &post_b, "p2")];
        let ids = |v: &Value| v.as_str().is_some_and(|s| s == "501" || s == "502");
        let copied: Vec<(String, String, String)> =
            copies(&named, "in_reply_to_id", "id", Some(&ids))
                .into_iter()
                .map(|c| (c.at, c.key, c.within))
                .collect();
        assert_eq!(
            copied,
            [(
                "/in_reply_to_account_id".to_string(),
                "account".to_string(),
                "/id".to_string()
            )]
        );
        // Held values no record is keyed by are chance, even nested under another name.
        let none = |_: &Value| false;
        assert!(copies(&named, "in_reply_to_id", "id", Some(&none)).is_empty());
        // Of another type, the same-named fields count.
        let copied: Vec<String> = copies(&named, "in_reply_to_id", "id", None)
            .into_iter()
            .map(|c| c.at)
            .collect();
        assert_eq!(copied, ["/in_reply_to_account_id", "/lang", "/visibility"]);
    }
    #[test]
    fn an_embedded_object_keyed_by_the_sent_key_copies_the_named_records_fields() {
        // One report naming an account: its `target_account` holds the account's key and most
        // of its fields; `display_name` changed after the account was read.
        let account = json!({"id": "7", "username": "ann", "locked": true, "note": "hi",
                             "display_name": "Ann", "statuses_count": 3, "fields": []});
        let report = json!({"id": "1", "comment": "spam",
                            "target_account": {"id": "7", "username": "ann", "locked": true,
                                               "note": "hi", "display_name": "A. N.",
                                               "fields": [], "url": "https://x/@ann"}});
        let named = vec![seen(&report, &account, "7")];
        let mut copied: Vec<(String, String)> = embedded_copies(&named, "id")
            .into_iter()
            .map(|c| (c.at, c.key))
            .collect();
        copied.sort();
        let at = |f: &str| (format!("/target_account/{f}"), f.to_string());
        // Every field the record holds, whatever the answer held; `url`, which the record
        // lacks, keeps the template's value.
        assert_eq!(
            copied,
            [
                at("display_name"),
                at("fields"),
                at("locked"),
                at("note"),
                at("username")
            ]
        );
        // An object holding another key is some other record; too few equal fields are chance.
        let other = json!({"id": "1", "target_account": {"id": "8", "username": "ann",
                           "locked": true, "note": "hi"}});
        assert!(embedded_copies(&[seen(&other, &account, "7")], "id").is_empty());
        let thin = json!({"id": "1", "target_account": {"id": "7", "username": "ann",
                          "locked": false, "note": "bye"}});
        assert!(embedded_copies(&[seen(&thin, &account, "7")], "id").is_empty());
    }
}
