//! Fields counted within each parent (`Route::parent_sequences`) and the paths that name a
//! record by one (`EntityType::alternate_key`): an issue's `number` counts from 1 in each
//! repository, and `/repos/alice/web/issues/2` names the repository's second issue, whatever
//! key the twin minted for it.
//!
//! A created record's count is one more than the highest the session numbered under the same
//! path parameters: the counter starts from the highest value the session's records there
//! hold (a replayed create's recorded number) and never goes back, so a deleted record's
//! number is not given again.
//!
//! A path value some record under the same parents is counted with names that record, before
//! a record whose key it is: the count is what the recordings' paths under the parent named
//! (each recorded record's key and count were equal), the twin's keys are its own.
//!
//! Not here: records the session does not hold (fixtures and the model's recorded records
//! are found by their key, as before).

use serde_json::Value;
use wraith_model::Route;

use super::{Call, Engine};
use crate::fixtures::scalar_key;
use crate::namespace::Namespace;

impl Engine {
    /// Write each of `route`'s counted fields into the created `record`: the next number
    /// under the call's path parameters. Returns the fields written.
    pub(super) fn number_in_parent(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        route: &Route,
        ty: &str,
        record: &mut Value,
    ) -> Vec<String> {
        let mut written = Vec::new();
        let parents: Vec<&str> = call.m.params.iter().map(|(_, v)| v.as_str()).collect();
        for field in &route.parent_sequences {
            let Value::Object(map) = &mut *record else {
                break;
            };
            let held = ns
                .type_store(ty)
                .into_iter()
                .flat_map(|s| s.live.values())
                .filter(|e| e.parents.as_ref().is_some_and(|p| same(p, &parents)))
                .filter_map(|e| e.value.get(field).and_then(Value::as_i64))
                .max()
                .unwrap_or(0);
            let counter = ns
                .counters
                .entry(format!("{ty}\u{1f}{field}\u{1f}{}", parents.join("\u{1f}")))
                .or_insert(0);
            *counter = (*counter).max(held) + 1;
            map.insert(field.clone(), Value::from(*counter));
            written.push(field.clone());
        }
        written
    }

    /// Rewrite each path value of the call that names a record of a type with an alternate
    /// key by that field (and not by its key) into the record's key: the session's live
    /// record under the same preceding path values whose field holds the value.
    pub(super) fn resolve_alternate_keys(&self, ns: &Namespace, call: &mut Call<'_>) {
        let Some(info) = self.router.info.get(call.m.route) else {
            return;
        };
        for (at, ty, alt) in &info.alternate_keyed {
            let Some(store) = ns.type_store(ty) else {
                continue;
            };
            let Some((before, rest)) = call.m.params.split_at_checked(*at) else {
                continue;
            };
            let Some((_, value)) = rest.first() else {
                continue;
            };
            let before: Vec<&str> = before.iter().map(|(_, v)| v.as_str()).collect();
            // The record under the path's parents counted with this value: what a path nested
            // under its parent names (`/repos/o/r/issues/6` is the repository's sixth issue,
            // even where the twin minted `id` 6 for its first).
            let found = store.live.iter().find(|(_, e)| {
                e.parents.as_ref().is_some_and(|p| same(p, &before))
                    && e.value.get(alt).and_then(scalar_key).as_deref() == Some(value.as_str())
            });
            if let Some((key, _)) = found {
                call.m.params[*at].1 = key.clone();
            }
        }
    }
}

fn same(held: &[String], path: &[&str]) -> bool {
    held.len() == path.len() && held.iter().zip(path).all(|(a, b)| a == b)
}
