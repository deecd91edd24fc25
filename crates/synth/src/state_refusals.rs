//! Refusals the state of a record decides: an action answered 2xx on a record in one state and
//! refused on it in another (a second vote on a poll of one choice, an unsuspend of an account
//! that is not suspended), learned as a guard on the record as the session holds it
//! ([`Guard::RecordFieldEquals`], [`Guard::RecordFieldEmpty`]). Not how the views of the record
//! before each request are found (see `action`), nor how the engine reads the record.
//!
//! The guard is the smallest conjunction of facts that held of the record before every refused
//! request and before no accepted one. A fact is a top-level boolean or `null` field's value,
//! or whether a top-level array is empty; never a number, a string or a key, which one refusal
//! alone would single out by accident. One fact alone must be about a field the action itself
//! changes (the refusal says the action was already done: `suspended` is already `false`);
//! two facts pair such a field with any other (`own_votes` is not empty and the poll is not
//! `multiple`), each false of some accepted record. The first candidate in the order the first
//! refused record holds its fields wins, so the same recordings give the same guard.

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use wraith_model::{ActionEffect, Guard};

/// Whether a status may be a refusal decided by the record's state: a 4xx other than the
/// statuses that say something else (who is asking, whether the record exists, how often).
pub fn is_state_refusal(status: u16) -> bool {
    (400..500).contains(&status) && !matches!(status, 401 | 404 | 407 | 429)
}

/// The fields an action's effect changes or answers.
pub fn effect_fields(effect: &ActionEffect) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = effect.fields.iter().cloned().collect();
    out.extend(effect.counters.keys().cloned());
    out.extend(effect.answered_fields.iter().cloned());
    out.extend(effect.followed_fields.iter().map(|f| f.field.clone()));
    out.extend(effect.appends.iter().map(|a| a.field.clone()));
    out.extend(effect.indexed_counters.iter().map(|c| c.field.clone()));
    out
}

/// One fact about a record.
#[derive(Debug, Clone, PartialEq)]
enum Fact {
    Equals(String, Value),
    Empty(String, bool),
}

impl Fact {
    fn field(&self) -> &str {
        match self {
            Fact::Equals(f, _) | Fact::Empty(f, _) => f,
        }
    }

    fn holds(&self, record: &Map<String, Value>) -> bool {
        match self {
            Fact::Equals(f, v) => record.get(f) == Some(v),
            Fact::Empty(f, empty) => record
                .get(f)
                .and_then(Value::as_array)
                .is_some_and(|a| a.is_empty() == *empty),
        }
    }

    fn guard(self) -> Guard {
        match self {
            Fact::Equals(field, value) => Guard::RecordFieldEquals { field, value },
            Fact::Empty(field, empty) => Guard::RecordFieldEmpty { field, empty },
        }
    }
}

/// The guard telling the `refused` records (as seen before each refused request) from the
/// `accepted` ones, see the module doc; `None` when either side is empty or no conjunction of
/// at most two facts tells them apart.
pub fn record_state_guard(
    refused: &[&Map<String, Value>],
    accepted: &[&Map<String, Value>],
    effect_fields: &BTreeSet<String>,
    primary_key: &str,
) -> Option<Guard> {
    let first = refused.first()?;
    if accepted.is_empty() {
        return None;
    }
    // Facts of every refused record, in the first one's field order.
    let facts: Vec<Fact> = first
        .iter()
        .filter(|(k, _)| *k != primary_key && !crate::values::is_identifier_key(k))
        .filter_map(|(k, v)| match v {
            Value::Bool(_) | Value::Null => Some(Fact::Equals(k.clone(), v.clone())),
            Value::Array(a) => Some(Fact::Empty(k.clone(), a.is_empty())),
            _ => None,
        })
        .filter(|f| refused.iter().all(|r| f.holds(r)))
        .collect();
    let changed = |f: &Fact| effect_fields.contains(f.field());
    let excludes = |fs: &[&Fact]| !accepted.iter().any(|r| fs.iter().all(|f| f.holds(r)));
    // A fact that holds of every accepted record too tells nothing apart.
    let tells = |f: &Fact| !accepted.iter().all(|r| f.holds(r));
    if let Some(f) = facts.iter().find(|f| changed(f) && excludes(&[f])) {
        return Some(f.clone().guard());
    }
    for f in facts.iter().filter(|f| changed(f) && tells(f)) {
        if let Some(g) = facts
            .iter()
            .find(|g| g.field() != f.field() && tells(g) && excludes(&[f, g]))
        {
            return Some(Guard::All {
                all: vec![f.clone().guard(), g.clone().guard()],
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn fields(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_refusal_on_the_state_the_action_sets_is_guarded_by_that_field() {
        let refused = map(json!({"id": "1", "suspended": false, "silenced": false}));
        let accepted = map(json!({"id": "1", "suspended": true, "silenced": false}));
        let got = record_state_guard(&[&refused], &[&accepted], &fields(&["suspended"]), "id");
        assert_eq!(
            got,
            Some(Guard::RecordFieldEquals {
                field: "suspended".into(),
                value: json!(false)
            })
        );
    }

    #[test]
    fn a_refusal_two_facts_decide_pairs_the_changed_field_with_the_other() {
        let refused = map(json!({"id": "3", "multiple": false, "own_votes": [1], "voted": true}));
        let first = map(json!({"id": "3", "multiple": false, "own_votes": [], "voted": true}));
        let many = map(json!({"id": "1", "multiple": true, "own_votes": [1], "voted": true}));
        let got = record_state_guard(
            &[&refused],
            &[&first, &many],
            &fields(&["own_votes", "votes_count"]),
            "id",
        );
        assert_eq!(
            got,
            Some(Guard::All {
                all: vec![
                    Guard::RecordFieldEmpty {
                        field: "own_votes".into(),
                        empty: false
                    },
                    Guard::RecordFieldEquals {
                        field: "multiple".into(),
                        value: json!(false)
                    },
                ]
            })
        );
    }

    #[test]
    fn a_fact_the_action_does_not_change_never_guards_alone() {
        let refused = map(json!({"id": "1", "locked": true, "done": false}));
        let accepted = map(json!({"id": "2", "locked": false, "done": false}));
        assert_eq!(
            record_state_guard(&[&refused], &[&accepted], &fields(&["done"]), "id"),
            None
        );
    }

    #[test]
    fn numbers_strings_and_keys_are_no_facts() {
        let refused = map(json!({"id": "1", "count": 1, "state": "busy", "ok": true}));
        let accepted = map(json!({"id": "2", "count": 0, "state": "idle", "ok": true}));
        assert_eq!(
            record_state_guard(
                &[&refused],
                &[&accepted],
                &fields(&["count", "state", "id", "ok"]),
                "id"
            ),
            None
        );
    }

    #[test]
    fn no_guard_without_an_accepted_record_or_when_the_refused_disagree() {
        let a = map(json!({"id": "1", "on": true}));
        let b = map(json!({"id": "1", "on": false}));
        assert_eq!(record_state_guard(&[&a], &[], &fields(&["on"]), "id"), None);
        assert_eq!(
            record_state_guard(&[&a, &b], &[&b], &fields(&["on"]), "id"),
            None
        );
    }
}
