//! A record the session created moves through the states its recorded reads showed, read after
//! read (`Route::read_progressions`): an instance created `provisioning` reads `provisioning`,
//! `provisioning`, `booting`, then `running` from then on, so a client polling for `running`
//! gets it. Each read's state is stored with the record (a list shows it too). A record whose
//! field no longer holds what its last read showed (an update or an action set it) is left as
//! it is.

use serde_json::Value;
use wraith_model::Route;

use super::Engine;
use crate::namespace::Namespace;

impl Engine {
    /// Move `record` (the stored record `id` of `ty`, as this read of `route` answers it) one
    /// read along the route's progressions. Returns the fields changed (the caller stores them,
    /// [`store_fields`]).
    pub(super) fn progress_read(
        &self,
        ns: &mut Namespace,
        route: &Route,
        (ty, id): (&str, &str),
        record: &mut Value,
    ) -> Vec<String> {
        let mut changed = Vec::new();
        for p in &route.read_progressions {
            let Some(last) = p.states.len().checked_sub(1) else {
                continue;
            };
            let key = (ty.to_string(), id.to_string(), p.field.clone());
            let reads = ns.progress.get(&key).copied().unwrap_or(0);
            let shown = match reads.checked_sub(1) {
                None => &p.from,
                Some(n) => &p.states[n.min(last)],
            };
            let Some(slot) = record.get_mut(&p.field) else {
                continue;
            };
            if slot != shown {
                continue;
            }
            *slot = p.states[reads.min(last)].clone();
            ns.progress.insert(key, reads + 1);
            changed.push(p.field.clone());
        }
        changed
    }
}

/// Store the fields `changed` of `record` (as a read answered it) with the session's stored
/// record `id` of `ty`: the record moved on by itself, and later answers (a list, an embedding
/// record) show it so.
pub(super) fn store_fields(
    ns: &mut Namespace,
    (ty, id): (&str, &str),
    record: &Value,
    changed: &[String],
) {
    if changed.is_empty() {
        return;
    }
    let Some(e) = ns.entity(ty, id) else {
        return;
    };
    let (mut stored, origin) = ((*e.value).clone(), e.origin);
    if let (Value::Object(to), Value::Object(from)) = (&mut stored, record) {
        for f in changed {
            if let Some(v) = from.get(f) {
                to.insert(f.clone(), v.clone());
            }
        }
    }
    ns.put(ty, id, stored, origin, None);
}
