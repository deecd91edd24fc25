//! Member effects of an action that undoes another (`Route::member_effects`), where the
//! recordings never read the list after it: `POST /tags/:name/follow` adds the tag to
//! `GET /followed_tags` (seen), and `POST /tags/:name/unfollow`, which sets the same boolean
//! of the same record to the opposite constant (`following: true`, then `false`), takes it
//! out again. Learned after [`crate::member_effects`] and [`crate::action::action_effects`]:
//! an action of the same entity type whose effect stores a boolean field that every 2xx
//! answer of one route holds `true` and of the other `false`, where the first adds its
//! member to a list and the second has no effect on that list, removes the same member
//! from it (the record its own path names, or the acting principal).
//!
//! Not learned: the opposite of a remove (an add nobody saw is a guess about which list it
//! joins), nor from fields that are not booleans, nor where a route's answers disagree.

use wraith_model::{BodyTemplate, MemberEffect, MemberSource, Node, Route};

use crate::values;

/// The boolean each 2xx answer of `route` holds at `field` of its acted-on record (at the
/// action's `at`), when all hold the same constant.
pub(crate) fn stored_boolean(route: &Route, field: &str) -> Option<bool> {
    let at = route.action.as_ref()?.at.as_str();
    let mut found: Option<bool> = None;
    for v in route.variants.iter().filter(|v| values::is_2xx(v.status)) {
        let BodyTemplate::Json { root } = &v.body else {
            return None;
        };
        let Node::Object { fields } = crate::variants::node_at(root, at)? else {
            return None;
        };
        let Node::Const { value } = &fields.iter().find(|f| f.key == field)?.value else {
            return None;
        };
        let b = value.as_bool()?;
        if found.is_some_and(|f| f != b) {
            return None;
        }
        found = Some(b);
    }
    found
}

/// Add to each undoing action the removes of what the action it undoes adds (see the module
/// doc).
pub fn learn(routes: &mut [Route]) {
    let mut inferred: Vec<(usize, MemberEffect)> = Vec::new();
    for (ai, adder) in routes.iter().enumerate() {
        let Some(done) = &adder.action else {
            continue;
        };
        for add in adder.member_effects.iter().filter(|e| e.adds) {
            for field in &done.fields {
                let Some(set) = stored_boolean(adder, field) else {
                    continue;
                };
                for (ui, undoer) in routes.iter().enumerate() {
                    let Some(undone) = &undoer.action else {
                        continue;
                    };
                    if ui == ai
                        || undoer.origin != adder.origin
                        || undone.entity_type != done.entity_type
                        || !undone.fields.contains(field)
                        || stored_boolean(undoer, field) != Some(!set)
                        || undoer
                            .member_effects
                            .iter()
                            .any(|e| e.list_path == add.list_path)
                    {
                        continue;
                    }
                    let member = match &add.member {
                        MemberSource::Param { .. } => MemberSource::Param {
                            param: undone.id_param.clone(),
                        },
                        MemberSource::Actor => MemberSource::Actor,
                    };
                    let effect = MemberEffect {
                        list_path: add.list_path.clone(),
                        member_type: add.member_type.clone(),
                        adds: false,
                        member,
                    };
                    if !inferred.contains(&(ui, effect.clone())) {
                        inferred.push((ui, effect));
                    }
                }
            }
        }
    }
    for (ui, effect) in inferred {
        routes[ui].member_effects.push(effect);
    }
}
