//! Fields that depend on who is looking (`Route::viewer_fields`), in a rendered create.
//!
//! The session's store holds a record as its owner's answer showed it. A create rendered
//! from its template that embeds such a record for another principal (a quote of another
//! account's status) would show the owner's view: the author-only `pinned`, the owner's own
//! standing. Each record of the rule's type in the rendered answer whose owner is known is
//! shown as the recordings showed that viewer class: a field shown only to the other class
//! is dropped, a field whose value that class saw for the record's sibling value takes it.
//!
//! Not here: replayed answers (they are the recorded run's own views), and routes without a
//! rule (the step returns before looking at the body).

use serde_json::{Map, Value};
use wraith_model::{Route, ViewerShown};

use super::{Call, Engine};
use crate::namespace::Namespace;

impl Engine {
    /// Show every record of `route`'s viewer-field type in `body` as the acting principal
    /// sees it. The principal's own record key is the session's (`Namespace::actors`), else
    /// the one the rendered answer carries at the route's `actor_record` pointer (a create's
    /// answer carries its author). Returns whether anything changed.
    pub(super) fn show_to_viewer(
        &self,
        ns: &Namespace,
        call: &Call<'_>,
        route: &Route,
        body: &mut Value,
    ) -> bool {
        let (Some(rule), Some(site)) = (&route.viewer_fields, &route.actor_record) else {
            return false;
        };
        let owner_pk = self.pk_of(&rule.owner_type);
        let key_of = |v: &Value| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let known = self
            .principal_of(call)
            .and_then(|p| ns.actors.get(&(p, rule.owner_type.clone())).cloned());
        let Some(me) = known.or_else(|| {
            body.pointer(&site.pointer)
                .and_then(|r| r.get(&owner_pk))
                .and_then(key_of)
        }) else {
            return false;
        };
        let pk = self.pk_of(&rule.entity_type);
        let mut changed = false;
        visit(body, &mut |map: &mut Map<String, Value>| {
            if map.get(&pk).and_then(key_of).is_none() {
                return;
            }
            let Some(owner) = get_at(map, &rule.owner_at)
                .and_then(|o| o.get(&owner_pk))
                .and_then(key_of)
            else {
                return;
            };
            let mine = owner == me;
            for f in &rule.fields {
                changed |= apply(map, &f.at, &f.shown, mine);
            }
        });
        changed
    }
}

/// Call `f` on every object in `v`, outermost first.
fn visit(v: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    match v {
        Value::Object(map) => {
            f(map);
            for child in map.values_mut() {
                visit(child, f);
            }
        }
        Value::Array(items) => {
            for child in items {
                visit(child, f);
            }
        }
        _ => {}
    }
}

/// Apply one field rule to a record seen by its owner (`mine`) or by another principal.
fn apply(record: &mut Map<String, Value>, at: &str, shown: &ViewerShown, mine: bool) -> bool {
    let Some((parent_ptr, last)) = at.rsplit_once('/') else {
        return false;
    };
    let last = last.replace("~1", "/").replace("~0", "~");
    match shown {
        ViewerShown::OwnerOnly | ViewerShown::OthersOnly => {
            let hidden = matches!(shown, ViewerShown::OwnerOnly) != mine;
            if !hidden {
                return false;
            }
            parent_mut(record, parent_ptr)
                .and_then(|p| p.remove(&last))
                .is_some()
        }
        ViewerShown::Value { key, owner, others } => {
            let table = if mine { owner } else { others };
            let sibling = if key.is_empty() {
                Some(String::new())
            } else {
                get_at(record, key).map(|v| v.to_string())
            };
            let Some(want) = sibling.and_then(|s| table.get(&s)) else {
                return false;
            };
            match parent_mut(record, parent_ptr).and_then(|p| p.get_mut(&last)) {
                Some(v) if v != want => {
                    *v = want.clone();
                    true
                }
                _ => false,
            }
        }
    }
}

/// The object at `ptr` (through objects) inside `record`.
fn parent_mut<'a>(
    record: &'a mut Map<String, Value>,
    ptr: &str,
) -> Option<&'a mut Map<String, Value>> {
    let mut cur = record;
    if ptr.is_empty() {
        return Some(cur);
    }
    for raw in ptr.strip_prefix('/')?.split('/') {
        let token = raw.replace("~1", "/").replace("~0", "~");
        cur = cur.get_mut(&token)?.as_object_mut()?;
    }
    Some(cur)
}

/// The value at a non-empty `ptr` (through objects) inside `record`.
fn get_at<'a>(record: &'a Map<String, Value>, ptr: &str) -> Option<&'a Value> {
    let mut tokens = ptr.strip_prefix('/')?.split('/');
    let first = tokens.next()?.replace("~1", "/").replace("~0", "~");
    let mut cur = record.get(&first)?;
    for raw in tokens {
        cur = cur.get(raw.replace("~1", "/").replace("~0", "~"))?;
    }
    Some(cur)
}
