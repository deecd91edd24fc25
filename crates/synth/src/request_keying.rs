//! Request keying: an observed position whose value is a function of one request field.
//!
//! When a create names a plan (`type`) and the answer reports that plan's memory, disk and
//! transfer, one global representative renders one plan's figures for every create. Request
//! keying learns, per observed hole, which request field decided its value across the
//! recordings and keeps one bucket per recorded field value ([`KeyedValues`]); the engine then
//! renders the bucket of the request's value, and the store keeps what the create answered, so
//! the record reads back with the same figures.
//!
//! Detection is automatic and conservative. A field (a JSON or form body leaf, or a query
//! parameter, holding a scalar, not named as a reference to a record: `id`, `uuid`, `*_id`,
//! `*Id`; which record a request names is the store's business, and a replay names the twin's
//! ids, not the recorded ones) keys a position only when:
//! - at least [`MIN_CARRIERS`] observations carried it, with at least two distinct values;
//! - every observation carrying one value held one answer value there (no contradiction);
//! - the buckets hold at least two distinct answer values (else nothing depends on the key);
//! - the recordings repeat keys across sessions: counting each (key value, session) pair once,
//!   at least twice as many pairs as distinct keys, so a field unique per request or per
//!   session (a label, a password, the id of a record the session created) is never mistaken
//!   for a key, however often one session sent it.
//!
//! Among qualifying fields the one with the most (key value, session) pairs wins, then the one
//! with
//! the fewest distinct values (the simpler explanation), then the first in sorted order.
//! This module only learns; it never changes the hole's examples, so the judge's `enum` rule and
//! the fallback rendering (a request without the field, or with a value never recorded) stay
//! as they were.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{EchoSource, KeyBucket, KeyedValues, key_text};

use crate::unify::Ctx;

/// Fewest observations carrying a field that may key a position, counting each (key value,
/// session) pair once.
pub const MIN_CARRIERS: usize = 4;
/// Most distinct request fields considered; past it the requests are free-form documents and no
/// field is treated as a key.
const MAX_FIELDS: usize = 64;

/// One observation's value of a candidate field, borrowed from the request (a synth input can
/// hold many observations and fields: nothing is copied until a bucket keeps it).
#[derive(Clone, Copy)]
enum Sent<'a> {
    /// A scalar JSON or form body leaf.
    Body(&'a Value),
    /// A query parameter's value.
    Query(&'a str),
}

impl Sent<'_> {
    /// The key the engine looks the request's value up by (`wraith_model::key_text`).
    fn text(self) -> String {
        match self {
            Sent::Body(v) => key_text(v).unwrap_or_default(),
            Sent::Query(s) => s.to_string(),
        }
    }

    /// The value as recorded, kept in the bucket.
    fn recorded(self) -> Value {
        match self {
            Sent::Body(v) => v.clone(),
            Sent::Query(s) => Value::String(s.to_string()),
        }
    }
}

/// One observation's value of a candidate field: (sent value, session, answer).
type Sighting<'a> = (Sent<'a>, &'a str, &'a Value);

/// The request field that keys the values `vals` (each with the index of its observation's
/// request in `ctxs`), with one bucket per recorded key; `None` when no field qualifies (see the
/// module doc).
pub fn learn(vals: &[(&Value, usize)], ctxs: &[Ctx<'_>]) -> Option<Box<KeyedValues>> {
    if vals.len() < MIN_CARRIERS || vals.iter().all(|(v, _)| *v == vals[0].0) {
        return None;
    }
    // One pass over the requests: every candidate field's sightings, in observation order.
    let mut fields: BTreeMap<EchoSource, Vec<Sighting<'_>>> = BTreeMap::new();
    for (v, c) in vals {
        let Some(ctx) = ctxs.get(*c) else { continue };
        for (pointer, sent) in ctx.body {
            let name = pointer.rsplit('/').next().unwrap_or("");
            if names_a_record(name) {
                continue;
            }
            if !matches!(sent, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
                continue;
            }
            let field = EchoSource::Body {
                pointer: pointer.clone(),
            };
            fields
                .entry(field)
                .or_default()
                .push((Sent::Body(sent), ctx.session, *v));
        }
        // The first query parameter of a name is the one a request is keyed by.
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        for (name, sent) in ctx.query {
            if names_a_record(name) || !seen.insert(name.as_str()) {
                continue;
            }
            let field = EchoSource::Query { name: name.clone() };
            fields
                .entry(field)
                .or_default()
                .push((Sent::Query(sent), ctx.session, *v));
        }
        if fields.len() > MAX_FIELDS {
            return None;
        }
    }
    let mut best: Option<(usize, usize, KeyedValues)> = None;
    for (field, sightings) in fields {
        let Some((evidence, buckets)) = keyed_by(sightings) else {
            continue;
        };
        let keys = buckets.len();
        let better = match &best {
            None => true,
            Some((e, k, _)) => evidence > *e || (evidence == *e && keys < *k),
        };
        if better {
            best = Some((evidence, keys, KeyedValues { field, buckets }));
        }
    }
    best.map(|(_, _, k)| Box::new(k))
}

/// Whether a request field's name says it references a record by id (`id`, `uuid`,
/// `firewall_id`, `linodeId`).
fn names_a_record(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(lower.as_str(), "id" | "uuid" | "guid")
        || lower.ends_with("_id")
        || lower.ends_with("_ids")
        || lower.ends_with("_uuid")
        || name.ends_with("Id")
}

/// A field's buckets (ordered by key text) and its evidence (distinct (key value, session)
/// pairs), when it qualifies.
fn keyed_by(sightings: Vec<Sighting<'_>>) -> Option<(usize, Vec<KeyBucket>)> {
    // key text → (recorded key, answer value, support)
    let mut buckets: BTreeMap<String, (Sent<'_>, &Value, u64)> = BTreeMap::new();
    let mut pairs: BTreeSet<(String, &str)> = BTreeSet::new();
    for (sent, session, answer) in sightings {
        let text = sent.text();
        match buckets.get_mut(&text) {
            Some((_, value, support)) => {
                if *value != answer {
                    return None;
                }
                *support += 1;
            }
            None => {
                buckets.insert(text.clone(), (sent, answer, 1));
            }
        }
        pairs.insert((text, session));
    }
    let keys = buckets.len();
    let evidence = pairs.len();
    if evidence < MIN_CARRIERS || keys < 2 || evidence < 2 * keys {
        return None;
    }
    let mut values: Vec<&Value> = Vec::new();
    for (_, value, _) in buckets.values() {
        if !values.contains(value) {
            values.push(value);
        }
    }
    if values.len() < 2 {
        return None;
    }
    let buckets = buckets
        .into_values()
        .map(|(key, value, support)| KeyBucket {
            key: key.recorded(),
            value: value.clone(),
            support,
        })
        .collect();
    Some((evidence, buckets))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    /// One observation's request body fields.
    fn body(fields: &[(&str, Value)]) -> Vec<(String, Value)> {
        fields
            .iter()
            .map(|(p, v)| (p.to_string(), v.clone()))
            .collect()
    }

    /// Observation `i` was recorded in session `sessions[i]`.
    fn ctxs<'a>(bodies: &'a [Vec<(String, Value)>], sessions: &'a [String]) -> Vec<Ctx<'a>> {
        bodies
            .iter()
            .zip(sessions)
            .map(|(b, s)| Ctx {
                params: Vec::new(),
                query: &[],
                body: b,
                session: s,
            })
            .collect()
    }

    /// One session per observation.
    fn own_sessions(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("s{i}")).collect()
    }

    fn indexed(answers: &[Value]) -> Vec<(&Value, usize)> {
        answers.iter().enumerate().map(|(i, v)| (v, i)).collect()
    }

    #[test]
    fn answer_value_decided_by_a_request_field_gets_one_bucket_per_key() {
        let plans = ["small", "small", "small", "large", "small", "huge"];
        let bodies: Vec<_> = plans
            .iter()
            .enumerate()
            .map(|(i, p)| body(&[("/type", json!(p)), ("/label", json!(format!("l{i}")))]))
            .collect();
        let memory: Vec<Value> = plans
            .iter()
            .map(|p| match *p {
                "small" => json!(1024),
                "large" => json!(16384),
                _ => json!(65536),
            })
            .collect();
        let sessions = own_sessions(plans.len());
        let keyed = learn(&indexed(&memory), &ctxs(&bodies, &sessions)).expect("keyed by type");
        assert_eq!(
            keyed.field,
            EchoSource::Body {
                pointer: "/type".into()
            }
        );
        assert_eq!(keyed.value_for(&json!("small")), Some(&json!(1024)));
        // A plan recorded once renders the answer recorded with it.
        assert_eq!(keyed.value_for(&json!("large")), Some(&json!(16384)));
        assert_eq!(keyed.value_for(&json!("huge")), Some(&json!(65536)));
        assert_eq!(keyed.value_for(&json!("medium")), None);
        assert_eq!(keyed.buckets[2].support, 4);
    }

    #[test]
    fn field_unique_per_request_never_keys_an_answer() {
        // The label is consistent with the answer trivially (each label once): no evidence.
        let bodies: Vec<_> = (0..8)
            .map(|i| body(&[("/label", json!(format!("l{i}")))]))
            .collect();
        let answers: Vec<Value> = (0..8).map(|i| json!(i % 2)).collect();
        let sessions = own_sessions(8);
        assert_eq!(learn(&indexed(&answers), &ctxs(&bodies, &sessions)), None);
    }

    #[test]
    fn key_sent_again_in_one_session_is_no_evidence() {
        // Each session names its own label three times: consistent, but only within a run.
        let bodies: Vec<_> = (0..9)
            .map(|i| body(&[("/label", json!(format!("run-{}", i / 3)))]))
            .collect();
        let answers: Vec<Value> = (0..9).map(|i| json!(i / 3 == 1)).collect();
        let sessions: Vec<String> = (0..9).map(|i| format!("s{}", i / 3)).collect();
        assert_eq!(learn(&indexed(&answers), &ctxs(&bodies, &sessions)), None);
        // The same requests from nine sessions are evidence.
        let sessions = own_sessions(9);
        assert!(learn(&indexed(&answers), &ctxs(&bodies, &sessions)).is_some());
    }

    #[test]
    fn field_naming_a_record_never_keys_an_answer() {
        // The same shared firewall in many sessions: which record is named is the store's
        // business, and a replay sends the twin's ids.
        let bodies: Vec<_> = (0..8)
            .map(|i| body(&[("/firewall_id", json!(100 + i % 2))]))
            .collect();
        let answers: Vec<Value> = (0..8).map(|i| json!(i % 2 == 0)).collect();
        let sessions = own_sessions(8);
        assert_eq!(learn(&indexed(&answers), &ctxs(&bodies, &sessions)), None);
    }

    #[test]
    fn one_contradicting_observation_rules_a_field_out() {
        let kinds = ["a", "a", "b", "b", "a", "b"];
        let bodies: Vec<_> = kinds.iter().map(|k| body(&[("/kind", json!(k))])).collect();
        let answers = [1, 1, 2, 2, 2, 2].map(|v| json!(v));
        let sessions = own_sessions(6);
        assert_eq!(learn(&indexed(&answers), &ctxs(&bodies, &sessions)), None);
    }

    #[test]
    fn field_that_changes_nothing_keys_nothing() {
        let kinds = ["a", "a", "b", "b"];
        let bodies: Vec<_> = kinds.iter().map(|k| body(&[("/kind", json!(k))])).collect();
        let answers = [1, 1, 1, 1].map(|v| json!(v));
        let sessions = own_sessions(4);
        assert_eq!(learn(&indexed(&answers), &ctxs(&bodies, &sessions)), None);
    }

    #[test]
    fn form_string_finds_the_key_recorded_as_a_number() {
        let sizes = [1, 1, 2, 2];
        let bodies: Vec<_> = sizes.iter().map(|s| body(&[("/size", json!(s))])).collect();
        let answers = ["s", "s", "m", "m"].map(|v| json!(v));
        let sessions = own_sessions(4);
        let keyed = learn(&indexed(&answers), &ctxs(&bodies, &sessions)).expect("keyed");
        assert_eq!(keyed.value_for(&json!("2")), Some(&json!("m")));
        assert_eq!(keyed.value_for(&json!(1)), Some(&json!("s")));
    }
}
