//! Wrapper records an undoing action deletes (`ActionEffect::undoes_wrappers`): `POST
//! /statuses/:id/reblog` answers the status inside a new status of its own (the reblog,
//! `at` = `/reblog`), which the session then holds and lists; `POST /statuses/:id/unreblog`,
//! which stores the opposite constant of the same boolean on the same status
//! (`reblogged: true`, then `false`), deletes that reblog again. Learned after
//! [`crate::action::action_effects`]: an action of the same entity type and origin whose
//! every 2xx answer holds the opposite constant of a boolean the wrapping action stores
//! undoes that action's wrapper.
//!
//! Not learned: from fields that are not booleans, nor where a route's answers disagree (no
//! constant), nor for an action that answers the entity itself (it makes no record).

use wraith_model::Route;

use crate::undo_members::stored_boolean;

/// Name on each undoing action the wrapping actions whose records it deletes (see the module
/// doc).
pub fn learn(routes: &mut [Route]) {
    let mut found: Vec<(usize, String)> = Vec::new();
    for maker in routes.iter() {
        let Some(made) = maker.action.as_ref().filter(|a| !a.at.is_empty()) else {
            continue;
        };
        for field in &made.fields {
            let Some(set) = stored_boolean(maker, field) else {
                continue;
            };
            for (ui, undoer) in routes.iter().enumerate() {
                let Some(undone) = &undoer.action else {
                    continue;
                };
                if undoer.id != maker.id
                    && undoer.origin == maker.origin
                    && undone.entity_type == made.entity_type
                    && undone.fields.contains(field)
                    && stored_boolean(undoer, field) == Some(!set)
                {
                    found.push((ui, maker.id.clone()));
                }
            }
        }
    }
    for (ui, maker) in found {
        if let Some(action) = routes[ui].action.as_mut() {
            action.undoes_wrappers.push(maker);
            action.undoes_wrappers.sort();
            action.undoes_wrappers.dedup();
        }
    }
}
