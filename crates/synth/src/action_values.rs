//! Values an action takes from its request (`Route::action_values`).
//!
//! An action endpoint (`POST /volumes/:id/attach` with `linode_id`, `POST /volumes/:id/resize`
//! with `size`) changes fields of the record its path names to values the request sent; its
//! answer may be `{}`, or carry the record in a transient state, so only the next read of the
//! record shows the change. This stage learns, per action route, which record field takes
//! which request field: in every recorded 2xx call of the action whose record was read again
//! in the same session before any other write to it, the read showed the field equal to the
//! request's value (the same JSON value, a form string matching a number's spelling), and in
//! at least one of them the record held another value before (so the action changed it, and
//! the read does not merely repeat a value the record always had). At least two such calls
//! are needed, sending at least two distinct values (else a constant the action always sets
//! explains it as well). Only strings and numbers are compared: a boolean equal to a sent
//! boolean is too likely a coincidence. A field that every such read showed `null`, where the
//! record held a value before in at least one of them, is one the action clears (a volume's
//! `linode_id` after `detach`), learned with an empty `from`; identifiers included, which
//! `crate::action`'s constant sets leave out.
//!
//! It only learns; `crate::action` learns what an action's answer or a set of constants does to
//! the record, and the engine applies both.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{ActionValue, EntityType, StateOp};

use crate::observe::Obs;
use crate::routes::{RouteGroup, Seg};
use crate::state::RoutePlan;
use crate::values::{self, scalar_key};

/// Fewest recorded calls of an action, each followed by a read of its record, that may teach
/// a field it takes from its request.
const MIN_CALLS: usize = 2;

/// Where each entity type's id sits: (origin, path segments up to the id) → (type, param).
type IdSites<'g> = BTreeMap<(Option<String>, Vec<Seg>), (&'g str, &'g str)>;

/// One record in one session: (session, entity type, id).
type RecordKey<'a> = (&'a str, &'a str, String);

/// The action values of every route (same order as the groups); empty for the others.
pub fn action_values(
    groups: &[RouteGroup],
    plans: &[RoutePlan],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) -> Vec<Vec<ActionValue>> {
    let mut out = vec![Vec::new(); groups.len()];
    // Where each entity type's id sits: (origin, path segments up to the id) → (type, param).
    let mut id_sites: IdSites<'_> = BTreeMap::new();
    for (g, p) in groups.iter().zip(plans) {
        if !matches!(
            p.state_op,
            Some(StateOp::Read | StateOp::Update | StateOp::Delete)
        ) {
            continue;
        }
        let (Some(ty), Some(param)) = (p.entity_type.as_deref(), p.id_param.as_deref()) else {
            continue;
        };
        let Some(pos) = g
            .segs
            .iter()
            .position(|s| matches!(s, Seg::Param(n) if n == param))
        else {
            continue;
        };
        id_sites
            .entry((g.origin.clone(), g.segs[..=pos].to_vec()))
            .or_insert((ty, param));
    }
    // The reads of each record (2xx answers of its read route, and of the create that made
    // it), and every write naming it.
    let mut reads: BTreeMap<RecordKey<'_>, Vec<(usize, Value)>> = BTreeMap::new();
    let mut writes: BTreeMap<RecordKey<'_>, BTreeSet<usize>> = BTreeMap::new();
    // Action routes: (group, entity type, id param).
    let mut actions: Vec<(usize, &str, &str)> = Vec::new();
    for (gi, (g, p)) in groups.iter().zip(plans).enumerate() {
        // A create's answer is the record as it was before any action on it.
        if p.state_op == Some(StateOp::Create)
            && let Some(ty) = p.entity_type.as_deref()
            && let Some(pk) = entity_types.get(ty).map(|t| t.primary_key.as_str())
        {
            for &i in &g.obs {
                if !values::is_2xx(obs[i].status) {
                    continue;
                }
                let Some(body) = obs[i].resp_json().filter(Value::is_object) else {
                    continue;
                };
                if let Some(id) = body.get(pk).and_then(scalar_key) {
                    reads
                        .entry((obs[i].session, ty, id))
                        .or_default()
                        .push((i, body));
                }
            }
            continue;
        }
        let site = match p.state_op {
            Some(StateOp::Read | StateOp::Update | StateOp::Delete) => {
                p.entity_type.as_deref().zip(p.id_param.as_deref())
            }
            None if !matches!(g.method.as_str(), "GET" | "HEAD") => {
                let site = (0..g.segs.len()).rev().find_map(|pos| {
                    if !matches!(g.segs[pos], Seg::Param(_)) || pos + 1 == g.segs.len() {
                        return None;
                    }
                    id_sites
                        .get(&(g.origin.clone(), g.segs[..=pos].to_vec()))
                        .copied()
                });
                if let Some((ty, param)) = site {
                    actions.push((gi, ty, param));
                }
                site
            }
            _ => None,
        };
        let Some((ty, param)) = site else {
            continue;
        };
        let Some(pi) = g.params.iter().position(|n| n == param) else {
            continue;
        };
        let pk = entity_types.get(ty).map(|t| t.primary_key.as_str());
        for (&i, vals) in g.obs.iter().zip(&g.param_values) {
            let Some(id) = vals.get(pi) else { continue };
            let key = (obs[i].session, ty, values::decode_segment(id));
            if p.state_op == Some(StateOp::Read) {
                if !values::is_2xx(obs[i].status) {
                    continue;
                }
                let Some(body) = obs[i].resp_json().filter(Value::is_object) else {
                    continue;
                };
                // The read answers this record (its own key), not some other document.
                if pk.is_some_and(|pk| body.get(pk).and_then(scalar_key) != Some(key.2.clone())) {
                    continue;
                }
                reads.entry(key).or_default().push((i, body));
            } else {
                writes.entry(key).or_default().insert(i);
            }
        }
    }
    for seen in reads.values_mut() {
        seen.sort_by_key(|(i, _)| *i);
    }
    for (gi, ty, param) in actions {
        let g = &groups[gi];
        let Some(pi) = g.params.iter().position(|n| n == param) else {
            continue;
        };
        let pk = entity_types.get(ty).map(|t| t.primary_key.as_str());
        let mut calls: Vec<Call<'_>> = Vec::new();
        for (&i, vals) in g.obs.iter().zip(&g.param_values) {
            if !values::is_2xx(obs[i].status) {
                continue;
            }
            let Some(id) = vals.get(pi) else { continue };
            let key = (obs[i].session, ty, values::decode_segment(id));
            let next_write = writes
                .get(&key)
                .and_then(|w| w.range(i + 1..).next().copied())
                .unwrap_or(usize::MAX);
            let Some(seen) = reads.get(&key) else {
                continue;
            };
            let Some((_, after)) = seen.iter().find(|(j, _)| *j > i && *j < next_write) else {
                continue;
            };
            let before = seen.iter().rev().find(|(j, _)| *j < i).map(|(_, v)| v);
            calls.push(Call {
                sent: &obs[i].req_fields,
                before,
                after,
            });
        }
        out[gi] = learn(&calls, pk)
            .into_iter()
            .map(|(field, from)| ActionValue {
                entity_type: ty.to_string(),
                id_param: param.to_string(),
                field,
                from,
            })
            .collect();
    }
    out
}

/// One recorded call of an action followed by a read of its record.
struct Call<'a> {
    /// The request's body leaves (pointer, value).
    sent: &'a [(String, Value)],
    /// The latest read (or the create's answer) of the record before the call, if any.
    before: Option<&'a Value>,
    /// The first read of the record after it (before any other write).
    after: &'a Value,
}

/// The (record field, request pointer) pairs every call agrees on (see the module doc), one
/// pointer per field (the first in sorted order).
fn learn<'a>(calls: &[Call<'a>], pk: Option<&str>) -> Vec<(String, String)> {
    if calls.len() < MIN_CALLS {
        return Vec::new();
    }
    // Candidates from the first call: every top-level field equal to a sent string or number.
    let Some(first) = calls.first() else {
        return Vec::new();
    };
    let Some(after) = first.after.as_object() else {
        return Vec::new();
    };
    let mut pairs: BTreeSet<(String, String)> = BTreeSet::new();
    for (k, v) in after {
        if Some(k.as_str()) == pk {
            continue;
        }
        for (p, sent) in first.sent {
            if same_value(sent, v) {
                pairs.insert((k.clone(), p.clone()));
            }
        }
    }
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (k, p) in pairs {
        if out.contains_key(&k) {
            continue;
        }
        fn sent_at<'c>(c: &Call<'c>, p: &str) -> Option<&'c Value> {
            c.sent.iter().find(|(q, _)| q == p).map(|(_, v)| v)
        }
        let sent_of = |c: &Call<'a>| sent_at(c, &p);
        let agrees = calls.iter().all(|c| match (sent_of(c), c.after.get(&k)) {
            (Some(s), Some(a)) => same_value(s, a),
            _ => false,
        });
        if !agrees {
            continue;
        }
        let changed = calls.iter().any(|c| {
            c.before
                .and_then(|b| b.get(&k))
                .zip(c.after.get(&k))
                .is_some_and(|(b, a)| b != a)
        });
        let distinct: BTreeSet<String> = calls
            .iter()
            .filter_map(|c| sent_of(c).and_then(scalar_key))
            .collect();
        if changed && distinct.len() >= 2 {
            out.insert(k, p);
        }
    }
    // Fields every next read showed `null` where the record held a value before (in at least
    // one call): the action clears them (`from` empty).
    for k in after.keys() {
        if Some(k.as_str()) == pk || out.contains_key(k) {
            continue;
        }
        let cleared = calls.iter().all(|c| c.after.get(k) == Some(&Value::Null));
        let held = calls.iter().any(|c| {
            c.before
                .and_then(|b| b.get(k))
                .is_some_and(|b| !b.is_null())
        });
        if cleared && held {
            out.insert(k.clone(), String::new());
        }
    }
    out.into_iter().collect()
}

/// Whether a read value is the sent one: the same string or number (a form string matching a
/// number's spelling).
fn same_value(sent: &Value, read: &Value) -> bool {
    match (sent, read) {
        (Value::String(s), Value::String(r)) => !s.is_empty() && s == r,
        (Value::Number(a), Value::Number(b)) => a == b,
        (Value::String(s), Value::Number(n)) => *s == n.to_string(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn fields(v: &Value) -> Vec<(String, Value)> {
        v.as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (format!("/{k}"), v.clone()))
            .collect()
    }

    /// The i-th call sent `sent[i]` to a record read as `before[i]`, then as `after[i]`.
    fn calls_of<'a>(
        sent: &'a [Vec<(String, Value)>],
        before: &'a [Value],
        after: &'a [Value],
    ) -> Vec<Call<'a>> {
        (0..sent.len())
            .map(|i| Call {
                sent: &sent[i],
                before: Some(&before[i]),
                after: &after[i],
            })
            .collect()
    }

    #[test]
    fn a_field_every_next_read_shows_as_sent_is_taken_from_the_request() {
        let sent = [fields(&json!({"size": 20})), fields(&json!({"size": 30}))];
        let before = [json!({"id": 1, "size": 10}), json!({"id": 2, "size": 10})];
        let after = [json!({"id": 1, "size": 20}), json!({"id": 2, "size": 30})];
        let calls = calls_of(&sent, &before, &after);
        assert_eq!(
            learn(&calls, Some("id")),
            vec![("size".into(), "/size".into())]
        );
    }

    #[test]
    fn one_contradicting_read_or_one_sent_value_teaches_nothing() {
        let sent = [fields(&json!({"size": 20})), fields(&json!({"size": 30}))];
        let before = [json!({"id": 1, "size": 10}), json!({"id": 2, "size": 10})];
        // The second read did not show the sent size.
        let after = [json!({"id": 1, "size": 20}), json!({"id": 2, "size": 10})];
        let calls = calls_of(&sent, &before, &after);
        assert!(learn(&calls, Some("id")).is_empty());
        // The same value sent twice: a constant the action sets explains it as well.
        let same = [fields(&json!({"size": 20})), fields(&json!({"size": 20}))];
        let after = [json!({"id": 1, "size": 20}), json!({"id": 2, "size": 20})];
        let calls = calls_of(&same, &before, &after);
        assert!(learn(&calls, Some("id")).is_empty());
    }

    #[test]
    fn a_field_every_next_read_shows_null_after_a_value_is_cleared() {
        let sent = [Vec::new(), Vec::new()];
        let before = [
            json!({"id": 1, "owner_id": 7}),
            json!({"id": 2, "owner_id": 8}),
        ];
        let after = [
            json!({"id": 1, "owner_id": null}),
            json!({"id": 2, "owner_id": null}),
        ];
        let calls = calls_of(&sent, &before, &after);
        assert_eq!(
            learn(&calls, Some("id")),
            vec![("owner_id".into(), String::new())]
        );
        // Null before as after: nothing says the action cleared it.
        let calls = calls_of(&sent, &after, &after);
        assert!(learn(&calls, Some("id")).is_empty());
    }

    #[test]
    fn a_value_the_record_always_had_is_not_taken() {
        let sent = [fields(&json!({"size": 20})), fields(&json!({"size": 30}))];
        let before = [json!({"id": 1, "size": 20}), json!({"id": 2, "size": 30})];
        let calls = calls_of(&sent, &before, &before);
        assert!(learn(&calls, Some("id")).is_empty());
    }
}
