//! Members a write names by a path segment (`Route::segment_member`): after a 2xx `PUT
//! .../issues/:n/labels/:name`, the session's stored issue holds the label in its `labels`
//! and the answer is that array; after the `DELETE`, the label is gone. Whether the record's
//! array holds the member is the route's membership, so a `DELETE` of a label the issue does
//! not hold is refused as recorded.
//!
//! Not here: a record the session does not hold, or holds under other parents than the path
//! names (the recorded answer stands).

use serde_json::{Map, Value};
use wraith_model::SegmentMember;

use super::{Call, Engine, Out, OutBody};
use crate::api::FieldSource;
use crate::namespace::{Namespace, Origin};
use crate::outbound::Origins;

/// The record's key and the member's name, as the call's path names them.
fn named<'c>(rule: &SegmentMember, call: &'c Call<'_>) -> Option<(&'c str, &'c str)> {
    let value = |name: &str| {
        call.m
            .params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    Some((value(&rule.record_param)?, value(&rule.member_param)?))
}

/// The session's stored record the call's path names: of the rule's type and key, and, where
/// its create recorded the path values above it, created under the same ones (keys counted
/// per parent repeat: issue `1` of another repository is another record).
fn held_record<'n>(
    ns: &'n Namespace,
    rule: &SegmentMember,
    call: &Call<'_>,
    record: &str,
) -> Option<&'n crate::namespace::Entity> {
    let held = ns.entity(&rule.entity_type, record)?;
    let at = call
        .m
        .params
        .iter()
        .position(|(n, _)| *n == rule.record_param)?;
    let above = call.m.params[..at].iter().map(|(_, v)| v.as_str());
    match &held.parents {
        Some(parents) if !parents.is_empty() => (parents.len() >= at
            && parents
                .iter()
                .map(String::as_str)
                .zip(above)
                .all(|(a, b)| a == b))
        .then_some(held),
        _ => Some(held),
    }
}

/// Whether the array item `item` is the member `name`.
fn is_member(item: &Value, key: &str, name: &str) -> bool {
    item.get(key)
        .and_then(crate::fixtures::scalar_key)
        .is_some_and(|v| v == name)
}

impl Engine {
    /// Whether the session's stored record's array holds the member the call's path names,
    /// for a route with a segment member; `None` when it has none or the session holds no
    /// such record.
    pub(super) fn segment_membership(&self, ns: &Namespace, call: &Call<'_>) -> Option<bool> {
        let rule = self.model.routes[call.m.route].segment_member.as_ref()?;
        let (record, member) = named(rule, call)?;
        let held = held_record(ns, rule, call, record)?;
        let items = held.value.get(&rule.field).and_then(Value::as_array);
        Some(items.is_some_and(|items| items.iter().any(|it| is_member(it, &rule.key, member))))
    }

    /// After a 2xx answer of a route with a segment member: add the member to (or take it out
    /// of) the session's stored record's array, and answer the array as it now is.
    pub(super) fn apply_segment_member(&self, ns: &mut Namespace, call: &Call<'_>, out: &mut Out) {
        if !(200..300).contains(&out.status) || call.head {
            return;
        }
        let Some(rule) = self.model.routes[call.m.route].segment_member.as_ref() else {
            return;
        };
        let Some((record, member)) = named(rule, call) else {
            return;
        };
        let Some(held) = held_record(ns, rule, call, record) else {
            return;
        };
        let mut entity = (*held.value).clone();
        let Value::Object(map) = &mut entity else {
            return;
        };
        let mut items: Vec<Value> = map
            .get(&rule.field)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if rule.adds {
            if !items.iter().any(|it| is_member(it, &rule.key, member)) {
                // The session's record of that name where a create names such members by
                // value (a label of the repository), else the answer's own item for
                // the member (its other fields), else the name alone.
                let at = call
                    .m
                    .params
                    .iter()
                    .position(|(n, _)| *n == rule.record_param)
                    .unwrap_or(0);
                let parents: Vec<String> =
                    call.m.params[..at].iter().map(|(_, v)| v.clone()).collect();
                let held = self.member_by_value(ns, rule, &parents, member);
                let rendered = held.or_else(|| {
                    out.body.json().and_then(|b| {
                        b.as_array()?
                            .iter()
                            .find(|it| is_member(it, &rule.key, member))
                            .cloned()
                    })
                });
                items.push(rendered.unwrap_or_else(|| {
                    let mut item = Map::new();
                    item.insert(rule.key.clone(), Value::String(member.to_string()));
                    Value::Object(item)
                }));
            }
        } else {
            items.retain(|it| !is_member(it, &rule.key, member));
        }
        map.insert(rule.field.clone(), Value::Array(items.clone()));
        super::put_acted(ns, &rule.entity_type, record, entity, Origin::Synthesized);
        out.body = OutBody::Json(Value::Array(items));
        out.origins = Origins::default();
        out.sources.reset(Some(FieldSource::State));
        // No longer the recorded bytes.
        out.replay = None;
    }
}
