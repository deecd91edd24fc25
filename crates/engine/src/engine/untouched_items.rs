//! A key-filtered list names an item for every requested key of a record nothing acted on
//! (`ListShape::untouched_item`): `GET /accounts/relationships?id[]=…` answers the untouched
//! relationship of an account neither the session nor the recordings hold a relationship
//! of, as the recordings' first reads of relationships showed it. A key that names no record
//! of the types the model names (an account the twin does not know) stays unlisted, and so
//! does one the session holds or deleted a record of (the list's own filters decided it).

use serde_json::{Map, Value};
use wraith_model::ListShape;

use super::{Call, Engine};
use crate::fixtures::scalar_key;
use crate::namespace::Namespace;
use crate::util::json_pointer_get_mut;

impl Engine {
    /// Add to the list `body` (of records of `ty`, keyed by `pk`) the untouched item of each
    /// requested key it lacks (see the module doc).
    pub(super) fn add_untouched_items(
        &self,
        ns: &Namespace,
        call: &Call<'_>,
        (shape, ty, pk): (&ListShape, &str, &str),
        body: &mut Value,
    ) {
        let Some(untouched) = &shape.untouched_item else {
            return;
        };
        let Some(keys) = crate::list::equality_values(shape, &call.query, pk) else {
            return;
        };
        // Keys are spelled as the type's recorded records spell them (a string or a number).
        let numeric = self
            .model
            .entity_types
            .get(ty)
            .and_then(|t| t.records.values().next())
            .and_then(|r| r.get(pk))
            .is_some_and(Value::is_number);
        let Some(Value::Array(items)) = json_pointer_get_mut(body, &shape.items_pointer) else {
            return;
        };
        let mut added: Vec<&str> = Vec::new();
        for key in keys {
            let listed = items
                .iter()
                .any(|it| it.get(pk).and_then(scalar_key).as_deref() == Some(key));
            if listed
                || added.contains(&key)
                || ns.entity(ty, key).is_some()
                || ns.is_deleted(ty, key).is_some()
            {
                continue;
            }
            let named = untouched.of.iter().any(|u| {
                ns.is_deleted(u, key).is_none()
                    && (ns.entity(u, key).is_some()
                        || self
                            .model
                            .entity_types
                            .get(u)
                            .is_some_and(|t| t.known_ids.contains(key)))
            });
            if !named {
                continue;
            }
            let id = match key.parse::<serde_json::Number>() {
                Ok(n) if numeric => Value::Number(n),
                _ => Value::String(key.to_string()),
            };
            let mut item = Map::with_capacity(untouched.fields.len() + 1);
            item.insert(pk.to_string(), id);
            item.extend(untouched.fields.clone());
            items.push(Value::Object(item));
            added.push(key);
        }
    }
}
