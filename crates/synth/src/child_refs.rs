//! Answer fields naming a record another create made by itself (`Route::child_refs`).
//!
//! A create under a record can answer the key of one of that record's implicit children
//! (`Route::implicit_children`): a balancer node created in a VPC answers `vpc_config_id`, the
//! VPC profile its balancer's create made. The twin mints the children with fresh keys, so the
//! field, rendered from its template, names another recording's profile, one the session never
//! sees. The recordings show the relation: in each session where the named balancer's children
//! were recorded, the node's value is one child's key. Synth keeps the field, the children's
//! type, the path parameter naming the parent and the child fields equal to what the request
//! sent (the subnet); the engine writes the session's child's key there. The field's template
//! hole becomes a generated identifier of the children's id shape: its value is an id the twin
//! gives, not one of the recorded ones.
//!
//! Not learned: a field whose value, in some recorded answer, names none of the children the
//! parent was recorded with (it names something else, at least sometimes); fields below the
//! record's top level; children no implicit-children entry knows.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{BodyTemplate, ChildRef, EntityType, HoleKind, Node, Route, SentMatch, StateOp};

use crate::implicit_children::same_shape;
use crate::observe::escape_token as escape;
use crate::observe::{Obs, ReqBody};
use crate::routes::{RouteGroup, Seg};
use crate::values::scalar_key;

/// Recorded answers naming a child a rule needs.
pub const MIN_SUPPORT: usize = 2;

/// What the recorded answers said of one (create route, field, children entry).
#[derive(Default)]
struct Tally {
    support: usize,
    contradicted: bool,
    /// Child field → request pointer pairs equal in every supporting answer so far.
    matched_by: Option<BTreeSet<(String, String)>>,
}

/// Learn every create route's child references into `built` (parallel to `groups`), after
/// `implicit_children::learn` filled the parents' entries.
pub fn learn(
    groups: &[RouteGroup],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    // (parent create route, children entry) → recorded parent key → the children's keys and
    // records.
    type Children<'m> = BTreeMap<String, Vec<(String, &'m Value)>>;
    let mut entries: Vec<(usize, &str, Children<'_>)> = Vec::new();
    for (p, route) in built.iter().enumerate() {
        for children in &route.implicit_children {
            let Some(ty) = entity_types.get(&children.entity_type) else {
                continue;
            };
            let mut by_parent: Children<'_> = BTreeMap::new();
            for sample in &children.samples {
                let kids = sample
                    .items
                    .iter()
                    .filter_map(|it| Some((it.get(&ty.primary_key).and_then(scalar_key)?, it)))
                    .collect();
                by_parent.insert(sample.parent_key.clone(), kids);
            }
            entries.push((p, children.entity_type.as_str(), by_parent));
        }
    }
    if entries.is_empty() {
        return;
    }
    // (create route, the field's key, the rule)
    let mut learned: Vec<(usize, String, ChildRef)> = Vec::new();
    for (r, group) in groups.iter().enumerate() {
        let route = &built[r];
        if group.method != "POST" || route.state_op != Some(StateOp::Create) {
            continue;
        }
        let Some(pk) = route
            .entity_type
            .as_deref()
            .and_then(|t| entity_types.get(t))
            .map(|t| t.primary_key.as_str())
        else {
            continue;
        };
        for (p, child_ty, by_parent) in &entries {
            // The create's path is the parent create's, then the parent's key, then more.
            let parent_segs = &groups[*p].segs;
            let Some(Seg::Param(parent_param)) = group.segs.get(parent_segs.len()) else {
                continue;
            };
            if groups[*p].origin != group.origin
                || !same_shape(&group.segs[..parent_segs.len()], parent_segs)
            {
                continue;
            }
            let Some(at) = group.params.iter().position(|n| n == parent_param) else {
                continue;
            };
            let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
            for (j, &i) in group.obs.iter().enumerate() {
                let o = &obs[i];
                if !(200..300).contains(&o.status) {
                    continue;
                }
                let Some(parent) = group.param_values[j].get(at) else {
                    continue;
                };
                let Some(kids) = by_parent.get(parent) else {
                    continue;
                };
                let Some(Value::Object(answer)) = o.resp_json() else {
                    continue;
                };
                let request = match &o.req {
                    ReqBody::Json(Value::Object(m)) => Some(m),
                    _ => None,
                };
                for (field, value) in &answer {
                    if field == pk || value.is_null() {
                        continue;
                    }
                    let Some(named) = scalar_key(value) else {
                        continue;
                    };
                    let t = tallies.entry(field.clone()).or_default();
                    let Some((_, kid)) = kids.iter().find(|(k, _)| *k == named) else {
                        t.contradicted = true;
                        continue;
                    };
                    t.support += 1;
                    let held = sent_matches(kid, request);
                    t.matched_by = Some(match t.matched_by.take() {
                        None => held,
                        Some(before) => before.intersection(&held).cloned().collect(),
                    });
                }
            }
            for (field, t) in tallies {
                if t.contradicted || t.support < MIN_SUPPORT {
                    continue;
                }
                learned.push((
                    r,
                    field.clone(),
                    ChildRef {
                        pointer: format!("/{}", escape(&field)),
                        entity_type: (*child_ty).to_string(),
                        parent_param: parent_param.clone(),
                        matched_by: t
                            .matched_by
                            .unwrap_or_default()
                            .into_iter()
                            .map(|(field, request_pointer)| SentMatch {
                                field,
                                request_pointer,
                            })
                            .collect(),
                    },
                ));
            }
        }
    }
    for (r, key, rule) in learned {
        let Some(shape) = entity_types
            .get(&rule.entity_type)
            .and_then(|t| t.id_shape.clone())
        else {
            continue;
        };
        let route = &mut built[r];
        if route.child_refs.iter().any(|c| c.pointer == rule.pointer) {
            continue;
        }
        // The field's value is an id the twin gives: a generated identifier wherever the
        // template held one of the recorded children's keys.
        for v in route
            .variants
            .iter_mut()
            .filter(|v| (200..300).contains(&v.status))
        {
            if let BodyTemplate::Json {
                root: Node::Object { fields },
            } = &mut v.body
                && let Some(f) = fields.iter_mut().find(|f| f.key == key)
                && let Node::Hole(h) = &mut f.value
                && matches!(h.source, HoleKind::Observed)
            {
                h.source = HoleKind::Generated {
                    shape: shape.clone(),
                };
            }
        }
        route.child_refs.push(rule);
    }
}

/// The (child field, request pointer) pairs where the child holds, as a whole value, what the
/// request sent in a top-level scalar field.
fn sent_matches(
    kid: &Value,
    request: Option<&serde_json::Map<String, Value>>,
) -> BTreeSet<(String, String)> {
    let (Some(kid), Some(request)) = (kid.as_object(), request) else {
        return BTreeSet::new();
    };
    let mut out = BTreeSet::new();
    for (name, sent) in request {
        let Some(sent) = scalar_key(sent) else {
            continue;
        };
        for (field, held) in kid {
            if scalar_key(held).is_some_and(|h| h == sent) {
                out.insert((field.clone(), format!("/{}", escape(name))));
            }
        }
    }
    out
}
