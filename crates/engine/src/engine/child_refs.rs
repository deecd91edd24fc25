//! A create's answer field naming an implicit child of the record its path names
//! (`Route::child_refs`): a balancer node created in a VPC names the VPC profile its balancer's
//! create made. Those children were stored with fresh keys (`Route::implicit_children`), so the
//! field, rendered from its template, would name a key the session never sees; the engine
//! writes the key of the session's one live child of that record holding what the request
//! sent (the subnet), in the answer and in the stored record.
//!
//! Not here: a parent whose children the session does not hold (a replayed create makes none),
//! or that holds several matching ones: the rendered value stays.

use serde_json::Value;
use wraith_model::Route;

use super::{Call, Engine};
use crate::fixtures::scalar_key;
use crate::namespace::Namespace;

impl Engine {
    /// Write into the created `record` the key of the child each of `route`'s child refs
    /// names; returns the pointers (inside the record) written.
    pub(super) fn name_child_refs(
        &self,
        ns: &Namespace,
        call: &Call<'_>,
        route: &Route,
        record: &mut Value,
    ) -> Vec<String> {
        let mut written = Vec::new();
        for rule in &route.child_refs {
            let Some((_, parent)) = call.m.params.iter().find(|(n, _)| *n == rule.parent_param)
            else {
                continue;
            };
            let Some(wanted) = rule
                .matched_by
                .iter()
                .map(|m| {
                    let sent = call.body.as_ref()?.pointer(&m.request_pointer)?;
                    Some((m.field.as_str(), scalar_key(sent)?))
                })
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            let found = self.one_live_key(ns, &rule.entity_type, |e| {
                e.parents.as_ref().and_then(|p| p.last()) == Some(parent)
                    && wanted.iter().all(|(field, sent)| {
                        e.value
                            .get(*field)
                            .and_then(scalar_key)
                            .is_some_and(|held| held == *sent)
                    })
            });
            let Some(key) = found else {
                continue;
            };
            if let Some(slot) = record.pointer_mut(&rule.pointer) {
                *slot = key;
                written.push(rule.pointer.clone());
            }
        }
        written
    }
}
