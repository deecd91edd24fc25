//! A record's minted values stay the session's when another run's recording answers for it.
//!
//! A counterpart replay ([`super::counterpart_requests`]) answers a request about the
//! session's record from another recorded run's recording of the same request about that
//! run's record, renamed. The renaming covers the record's key, but a create mints more than
//! the key: a client's api key, an install code. Those values name the record as much as its
//! key does and no later write changes them, so the answer shows the session's: at every
//! top-level field a create of the type answers as a generated value (a `Generated` or
//! `Counter` hole), the record in the answer takes the session's stored value, when it holds
//! one of the same JSON type. A field the answering route's own template mints (a key
//! rotation) is left as answered. Applied to reads and updates answered 2xx from a recording.

use serde_json::Value;
use wraith_model::{Field, Hole, HoleKind, Node};

use super::masked_fields::minted_shape;
use super::settle::{create_answers, record_fields};
use super::{Call, Engine, Out, OutBody, entity_pointer};
use crate::fixtures::scalar_key;
use crate::namespace::Namespace;
use crate::util::json_pointer_get_mut;

impl Engine {
    /// Put the session's stored values of the record the call names at the fields its type's
    /// creates mint (see the module doc) into the answer's record. Returns whether any changed.
    pub(super) fn keep_minted_fields(
        &self,
        ns: &Namespace,
        call: &Call<'_>,
        out: &mut Out,
    ) -> bool {
        let route = &self.model.routes[call.m.route];
        let Some((ty, id_key)) = self.target(route, &call.m.params) else {
            return false;
        };
        let id: &str = &id_key;
        let Some(stored) = ns.entity(&ty, id) else {
            return false;
        };
        let pk = self.pk_of(&ty);
        let generated = |f: &&Field| {
            f.key != pk
                && matches!(
                    &f.value,
                    Node::Hole(Hole {
                        source: HoleKind::Generated { .. } | HoleKind::Counter { .. },
                        ..
                    })
                )
        };
        // Whether `theirs` is a whole value the create's field could have minted: a masked
        // (`<REDACTED>`) or shortened secret is how the route shows it, not another value.
        let full = |f: &Field, theirs: &Value| match &f.value {
            Node::Hole(Hole {
                source: HoleKind::Generated { shape },
                ..
            }) => minted_shape(shape, theirs),
            _ => theirs.is_number(),
        };
        // A field this route's own answers mint (a key rotation) is the route's to change.
        let own: Vec<&str> = route
            .variants
            .iter()
            .filter(|v| v.status == out.status)
            .filter_map(|v| record_fields(v, &pk))
            .flatten()
            .filter(generated)
            .map(|f| f.key.as_str())
            .collect();
        let minted: Vec<&Field> = create_answers(&self.model, &ty)
            .filter_map(|v| record_fields(v, &pk))
            .flatten()
            .filter(generated)
            .filter(|f| !own.contains(&f.key.as_str()))
            .collect();
        if minted.is_empty() {
            return false;
        }
        let changes: Vec<(&str, &Value)> = {
            let Some(body) = out.body.json() else {
                return false;
            };
            let Some(ptr) = entity_pointer(&body, &pk) else {
                return false;
            };
            let Some(record) = body.pointer(&ptr) else {
                return false;
            };
            if record.get(&pk).and_then(scalar_key).as_deref() != Some(id) {
                return false;
            }
            let mut changes: Vec<(&str, &Value)> = Vec::new();
            for f in &minted {
                let k = f.key.as_str();
                if changes.iter().any(|(c, _)| *c == k) {
                    continue;
                }
                let (Some(mine), Some(theirs)) = (stored.value.get(k), record.get(k)) else {
                    continue;
                };
                if same_type(mine, theirs) && mine != theirs && full(f, theirs) {
                    changes.push((k, mine));
                }
            }
            changes
        };
        if changes.is_empty() {
            return false;
        }
        out.body.materialize();
        let OutBody::Json(body) = &mut out.body else {
            return false;
        };
        let Some(ptr) = entity_pointer(body, &pk) else {
            return false;
        };
        let Some(Value::Object(record)) = json_pointer_get_mut(body, &ptr) else {
            return false;
        };
        for (k, mine) in changes {
            record.insert(k.to_string(), mine.clone());
        }
        true
    }
}

fn same_type(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}
