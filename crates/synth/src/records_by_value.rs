//! Records a create names by value (`Route::records_by_value`): an issue created with
//! `labels: ["bug", "slow"]` answers its repository's label records whose `name` is each value,
//! and where the repository had no `slow` label the API created one (a fresh `id`, the name,
//! `color: "ededed"`), which later lists of labels show.
//!
//! Per create route, a top-level request array of strings and a top-level answer array are
//! such a pair when, in every recorded 2xx answer that is a JSON object, the answer's array
//! held, item for item in the order sent, an object whose field `by` was the sent value (and
//! was empty or absent when the request sent none). The items are records of the type another
//! create makes under as many path parameters (`POST /repos/:owner/:name/labels`), whose
//! answers carry the type's key and `by`. Replaying each session in order, an item whose value
//! no earlier answer of that create or of this route had under the same path values is a
//! created record: every created record's other fields but its key were alike (the
//! `defaults`), and at least two were recorded.
//!
//! Not learned: arrays below the top level, values named across other parents, updates.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use wraith_model::{
    ArrayNode, BodyTemplate, EntityType, HoleKind, IdShape, Node, RecordsByValue, Route, StateOp,
};

use crate::embedded_lists::sent_keys;
use crate::observe::{Obs, escape_token};
use crate::routes::RouteGroup;
use crate::values;

/// Fewest created records the defaults are learned from.
const MIN_CREATED: usize = 2;

/// One recorded 2xx answer of a create, in session order.
struct Answer<'a> {
    session: &'a str,
    index: u64,
    params: &'a [String],
    sent: BTreeMap<String, Vec<String>>,
    body: Map<String, Value>,
}

fn answers<'a>(group: &'a RouteGroup, obs: &[Obs<'a>], with_sent: bool) -> Vec<Answer<'a>> {
    let mut out = Vec::new();
    for (k, &i) in group.obs.iter().enumerate() {
        let o = &obs[i];
        if !values::is_2xx(o.status) {
            continue;
        }
        let (Some(Value::Object(body)), Some(params)) = (o.resp_json(), group.param_values.get(k))
        else {
            continue;
        };
        let sent = if with_sent {
            sent_keys(o)
        } else {
            BTreeMap::new()
        };
        out.push(Answer {
            session: o.session,
            index: o.index,
            params,
            sent,
            body,
        });
    }
    out.sort_by(|a, b| (a.session, a.index).cmp(&(b.session, b.index)));
    out
}

/// Every create's records named by value, set on `built` (parallel to `groups`).
pub fn learn(
    groups: &[RouteGroup],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    let creates: Vec<usize> = (0..groups.len())
        .filter(|&r| built[r].state_op == Some(StateOp::Create) && built[r].entity_type.is_some())
        .collect();
    let mut learned: Vec<(usize, Vec<RecordsByValue>)> = Vec::new();
    for &r in &creates {
        let group = &groups[r];
        let mine = answers(group, obs, true);
        if !mine.iter().any(|a| a.sent.values().any(|v| !v.is_empty())) {
            continue;
        }
        let mut rules: Vec<RecordsByValue> = Vec::new();
        for (field, at, by) in pairs(&mine) {
            if rules.iter().any(|x| x.at == at) {
                continue;
            }
            // The type another create makes under as many path parameters.
            for &c in &creates {
                let Some(ty) = built[c].entity_type.as_deref() else {
                    continue;
                };
                if c == r
                    || built[c].entity_type == built[r].entity_type
                    || groups[c].params.len() != group.params.len()
                    || groups[c].origin != group.origin
                {
                    continue;
                }
                let Some(t) = entity_types.get(ty) else {
                    continue;
                };
                let theirs = answers(&groups[c], obs, false);
                if let Some(defaults) = created_defaults(&mine, &theirs, &field, &at, &by, t) {
                    rules.push(RecordsByValue {
                        field: format!("/{}", escape_token(&field)),
                        at: format!("/{}", escape_token(&at)),
                        entity_type: ty.to_string(),
                        by: by.clone(),
                        defaults,
                    });
                    break;
                }
            }
        }
        if !rules.is_empty() {
            learned.push((r, rules));
        }
    }
    for (r, rules) in learned {
        for rule in &rules {
            if let Some(t) = entity_types.get(&rule.entity_type)
                && let Some(shape) = &t.id_shape
            {
                mark_minted_keys(&mut built[r], rule, &t.primary_key, shape);
            }
        }
        built[r].records_by_value = rules;
    }
}

/// In the route's answer templates, the listed records' keys are the session's records' keys,
/// some minted by the create itself: generated values of the type's shape, not one of the
/// recorded examples (the check then follows them as it follows every minted key).
fn mark_minted_keys(route: &mut Route, rule: &RecordsByValue, pk: &str, shape: &IdShape) {
    let Some(at) = rule.at.strip_prefix('/') else {
        return;
    };
    let at = at.replace("~1", "/").replace("~0", "~");
    for variant in &mut route.variants {
        let BodyTemplate::Json {
            root: Node::Object { fields },
        } = &mut variant.body
        else {
            continue;
        };
        let Some(Node::Array(ArrayNode::List {
            representatives, ..
        })) = fields
            .iter_mut()
            .find(|f| f.key == at)
            .map(|f| &mut f.value)
        else {
            continue;
        };
        for item in representatives {
            let Node::Object { fields } = item else {
                continue;
            };
            if let Some(Node::Hole(hole)) = fields
                .iter_mut()
                .find(|f| f.key == pk)
                .map(|f| &mut f.value)
            {
                hole.source = HoleKind::Generated {
                    shape: shape.clone(),
                };
            }
        }
    }
}

/// `(sent field, answer field, item field)` triples every answer follows: each item of the
/// answer's array an object whose item field holds the sent value at its position.
fn pairs(answers: &[Answer<'_>]) -> Vec<(String, String, String)> {
    let Some(first) = answers
        .iter()
        .find(|a| a.sent.values().any(|v| !v.is_empty()))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (field, sent) in &first.sent {
        let Some(value) = sent.first() else { continue };
        for (at, items) in &first.body {
            let Some(item) = items
                .as_array()
                .and_then(|a| a.first())
                .and_then(Value::as_object)
            else {
                continue;
            };
            for (by, v) in item {
                if v.as_str() == Some(value.as_str())
                    && answers.iter().all(|a| follows(a, field, at, by))
                {
                    out.push((field.clone(), at.clone(), by.clone()));
                }
            }
        }
    }
    out
}

/// Whether the answer's array at `at` lists, item for item, objects whose `by` holds what the
/// request sent at `field` (or is empty or absent where nothing was sent).
fn follows(a: &Answer<'_>, field: &str, at: &str, by: &str) -> bool {
    let sent = a.sent.get(field).map(Vec::as_slice).unwrap_or_default();
    match a.body.get(at) {
        None => sent.is_empty(),
        Some(Value::Array(items)) => {
            items.len() == sent.len()
                && items
                    .iter()
                    .zip(sent)
                    .all(|(item, v)| item.get(by).and_then(Value::as_str) == Some(v.as_str()))
        }
        Some(_) => false,
    }
}

/// The fields of the records the answers created, but their key and `by`, where every such
/// record showed them alike and at least [`MIN_CREATED`] were; `None` otherwise, or where an
/// item is not a record of type `t` (its key missing, a field `theirs` never answered).
fn created_defaults(
    mine: &[Answer<'_>],
    theirs: &[Answer<'_>],
    field: &str,
    at: &str,
    by: &str,
    t: &EntityType,
) -> Option<Map<String, Value>> {
    let pk = t.primary_key.as_str();
    if pk == by {
        return None;
    }
    let fields: BTreeSet<&str> = theirs
        .iter()
        .flat_map(|a| a.body.keys().map(String::as_str))
        .collect();
    if !fields.contains(pk) || !fields.contains(by) {
        return None;
    }
    // Both routes' answers in session order: what each session held before each answer.
    let mut events: Vec<(&str, u64, bool, &Answer<'_>)> = theirs
        .iter()
        .map(|a| (a.session, a.index, false, a))
        .chain(mine.iter().map(|a| (a.session, a.index, true, a)))
        .collect();
    events.sort_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)));
    let mut held: BTreeSet<(&str, &[String], String)> = BTreeSet::new();
    let mut created: Vec<&Map<String, Value>> = Vec::new();
    for (session, _, named, a) in events {
        if !named {
            if let Some(v) = a.body.get(by).and_then(Value::as_str) {
                held.insert((session, a.params, v.to_string()));
            }
            continue;
        }
        if a.sent.get(field).is_none_or(Vec::is_empty) {
            continue;
        }
        for item in a.body.get(at).and_then(Value::as_array)? {
            let item = item.as_object()?;
            if item.get(pk).is_none() || item.keys().any(|k| !fields.contains(k.as_str())) {
                return None;
            }
            let v = item.get(by).and_then(Value::as_str)?.to_string();
            if held.insert((session, a.params, v)) {
                created.push(item);
            }
        }
    }
    if created.len() < MIN_CREATED {
        return None;
    }
    let mut defaults = Map::new();
    for (k, v) in created[0] {
        if k == pk || k == by {
            continue;
        }
        if created.iter().any(|c| c.get(k) != Some(v)) {
            return None;
        }
        defaults.insert(k.clone(), v.clone());
    }
    if created.iter().any(|c| c.len() != defaults.len() + 2) {
        return None;
    }
    Some(defaults)
}
