//! The item a key-filtered list answers for a key nothing acted on
//! (`ListShape::untouched_item`): `GET /accounts/relationships?id[]=…` lists a relationship
//! for every account it names, also one the session never followed, muted or blocked, which
//! neither the session nor the recordings hold a relationship record of.
//!
//! Learned from the list's recorded answers: an item whose key no earlier write of its
//! session named (in its path, query or body) shows the relationship as it is before anything
//! acts on it. When every such item holds the same other fields, those are the untouched item.
//! The keys must be another type's: the types whose known ids hold every known id of the
//! list's type (a relationship's key is its account's), one of which must hold a requested key
//! for the engine to answer the item (a key naming nothing stays unlisted).
//!
//! Not learned: lists not filtered by their items' primary key, and types whose untouched
//! items disagree.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use wraith_model::{EntityType, Route, StateOp, UntouchedItem};

use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::values::{self, scalar_key};

/// Whether the write `o` names record key `key`: as a path segment, a query value or a body
/// value.
fn names(o: &Obs<'_>, key: &str) -> bool {
    o.path_names(key)
        || o.query.iter().any(|(_, v)| v == key)
        || o.req_fields
            .iter()
            .any(|(_, v)| scalar_key(v).as_deref() == Some(key))
}

/// Learn each key-filtered list route's untouched item (`built` in the order of `groups`).
pub fn learn(
    groups: &[RouteGroup],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    // Each session's writes, in order (the observations are sorted by session, then index).
    let mut writes: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, o) in obs.iter().enumerate() {
        if !matches!(o.method.as_str(), "GET" | "HEAD" | "OPTIONS") {
            writes.entry(o.session).or_default().push(i);
        }
    }
    for (group, route) in groups.iter().zip(built.iter_mut()) {
        if route.state_op != Some(StateOp::List) {
            continue;
        }
        let (Some(ty), Some(shape)) = (route.entity_type.as_deref(), route.list.as_mut()) else {
            continue;
        };
        let Some(entity) = entity_types.get(ty) else {
            continue;
        };
        let pk = entity.primary_key.as_str();
        if !shape.filters.iter().any(|f| f == pk) || entity.known_ids.is_empty() {
            continue;
        }
        let of: Vec<String> = entity_types
            .iter()
            .filter(|(name, other)| {
                name.as_str() != ty && entity.known_ids.is_subset(&other.known_ids)
            })
            .map(|(name, _)| name.clone())
            .collect();
        if of.is_empty() {
            continue;
        }
        let mut fields: Option<Map<String, Value>> = None;
        let mut agree = true;
        for &i in &group.obs {
            let o = &obs[i];
            if !values::is_2xx(o.status) {
                continue;
            }
            let Some(body) = o.resp_json() else {
                continue;
            };
            let Some(items) = body.pointer(&shape.items_pointer).and_then(Value::as_array) else {
                continue;
            };
            let earlier = writes
                .get(o.session)
                .map_or(&[][..], |w| &w[..w.partition_point(|&j| j < i)]);
            for item in items {
                let Some(mut item) = item.as_object().cloned() else {
                    continue;
                };
                let Some(key) = item.get(pk).and_then(scalar_key) else {
                    continue;
                };
                if earlier.iter().any(|&j| names(&obs[j], &key)) {
                    continue;
                }
                item.remove(pk);
                match &fields {
                    None => fields = Some(item),
                    Some(f) => agree &= *f == item,
                }
            }
        }
        if let (true, Some(fields)) = (agree, fields) {
            shape.untouched_item = Some(UntouchedItem { of, fields });
        }
    }
}
