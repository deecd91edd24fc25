//! What an action does to arrays of the record it acts on, from what the request sent
//! (`ActionEffect::appends`, `ActionEffect::indexed_counters`): a vote appends its `choices` to
//! the poll's `own_votes` and steps `votes_count` of each option it chose. Applied to the
//! session's record before the answer is rendered from it, so the answer, later reads and
//! lists show the session's own votes on the session's own options.
//!
//! Not here: refusing a request the recorded API would refuse (a second vote on a poll of one
//! choice, a position past the last option): such a position steps nothing.

use serde_json::{Map, Number, Value};
use wraith_model::ActionEffect;

/// Apply `action`'s array effects to the record `map` for a request whose body is `body`;
/// true when the record changed.
pub(super) fn apply(
    action: &ActionEffect,
    body: Option<&Value>,
    map: &mut Map<String, Value>,
) -> bool {
    let mut changed = false;
    for rule in &action.appends {
        let Some(sent) = sent_list(body, &rule.from) else {
            continue;
        };
        let Some(values) = sent
            .iter()
            .map(|v| appended(v, rule.numbers))
            .collect::<Option<Vec<Value>>>()
        else {
            continue;
        };
        if values.is_empty() {
            continue;
        }
        if let Some(Value::Array(items)) = map.get_mut(&rule.field) {
            items.extend(values);
            changed = true;
        }
    }
    for rule in &action.indexed_counters {
        let Some(sent) = sent_list(body, &rule.by) else {
            continue;
        };
        let Some(Value::Array(items)) = map.get_mut(&rule.field) else {
            continue;
        };
        for at in sent.iter().filter_map(position) {
            if let Some(Value::Object(item)) = items.get_mut(at)
                && let Some(n) = item.get(&rule.member).and_then(Value::as_i64)
            {
                item.insert(
                    rule.member.clone(),
                    Value::from(n.saturating_add(rule.step)),
                );
                changed = true;
            }
        }
    }
    changed
}

/// The scalars the request sent under top-level body field `field`, in order: an array's items
/// (`choices[]=1` parses to one), or the field itself. `None` when it was not sent or holds
/// anything deeper.
fn sent_list<'b>(body: Option<&'b Value>, field: &str) -> Option<Vec<&'b Value>> {
    let sent = body?.get(field)?;
    let items: Vec<&Value> = match sent {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => return None,
        scalar => vec![scalar],
    };
    items
        .iter()
        .all(|v| !v.is_array() && !v.is_object())
        .then_some(items)
}

/// A sent value as the array holds it: the number a text spells when the recorded answers held
/// numbers (`None` when it spells none), else the value as sent.
fn appended(v: &Value, numbers: bool) -> Option<Value> {
    match v {
        Value::String(s) if numbers => s.trim().parse::<Number>().ok().map(Value::Number),
        other => Some(other.clone()),
    }
}

/// The array position a sent value names, counted from 0.
fn position(v: &&Value) -> Option<usize> {
    match v {
        Value::String(s) => s.trim().parse().ok(),
        Value::Number(n) => n.as_u64().and_then(|n| usize::try_from(n).ok()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::json;
    use wraith_model::{ActionEffect, IndexedCounter, SentAppend};

    fn vote() -> ActionEffect {
        ActionEffect {
            entity_type: "polls".into(),
            id_param: "id".into(),
            appends: vec![SentAppend {
                field: "own_votes".into(),
                from: "choices".into(),
                numbers: true,
            }],
            indexed_counters: vec![IndexedCounter {
                field: "options".into(),
                member: "votes_count".into(),
                by: "choices".into(),
                step: 1,
            }],
            ..ActionEffect::default()
        }
    }

    fn poll() -> serde_json::Map<String, serde_json::Value> {
        json!({
            "own_votes": [2],
            "options": [
                {"title": "a", "votes_count": 0},
                {"title": "b", "votes_count": 4},
                {"title": "c", "votes_count": 1}
            ]
        })
        .as_object()
        .cloned()
        .unwrap()
    }

    #[test]
    fn sent_texts_append_as_numbers_and_step_the_items_they_name() {
        let mut p = poll();
        let body = json!({"choices": ["0", "1"]});
        assert!(super::apply(&vote(), Some(&body), &mut p));
        assert_eq!(p["own_votes"], json!([2, 0, 1]));
        assert_eq!(
            p["options"],
            json!([
                {"title": "a", "votes_count": 1},
                {"title": "b", "votes_count": 5},
                {"title": "c", "votes_count": 1}
            ])
        );
    }

    #[test]
    fn a_position_past_the_array_or_not_a_number_steps_nothing() {
        let mut p = poll();
        let body = json!({"choices": "7"});
        super::apply(&vote(), Some(&body), &mut p);
        assert_eq!(p["options"], poll()["options"]);
        let mut p = poll();
        let body = json!({"choices": ["x"]});
        assert!(!super::apply(&vote(), Some(&body), &mut p));
        assert_eq!(p, poll());
    }

    #[test]
    fn a_request_that_sent_nothing_or_something_deeper_changes_nothing() {
        let mut p = poll();
        assert!(!super::apply(&vote(), None, &mut p));
        let body = json!({"choices": [{"at": 1}]});
        assert!(!super::apply(&vote(), Some(&body), &mut p));
        assert_eq!(p, poll());
    }
}
