//! Routes that copy a record (`Route::record_clone`): `POST /volumes/:id/clone` answers, and
//! stores, a new volume under a key of its own, with the copied fields (`size`, `region`) of
//! the session's volume the path names, so the session's later reads, lists and deletes of the
//! copy find it. Text the recorded copy's key appears in (a default label `linode<id>`) names
//! the new key. Text the type's creates render from a sent text (`Route::text_rendering`, a
//! `filesystem_path` from the `label`) is rendered from the copy's own.
//!
//! Not here: a replayed answer (the recorded run's own copy), and a path naming a record the
//! session cannot see (deleted, or known to neither the session nor the recordings), whose
//! rendered answer stays and is stored nowhere.

use serde_json::Value;

use super::{Call, Engine, Out, OutBody};
use crate::api::FieldSource;
use crate::embedded_counterparts::replace_number;
use crate::fixtures::scalar_key;
use crate::namespace::{Namespace, Origin};
use crate::outbound::FieldOrigin;
use crate::util::escape_key;

/// Fewest digits of a recorded key that a string embedding it is taken to name it by: shorter
/// numbers are as likely sizes, ports or counts.
const MIN_NAMING_DIGITS: usize = 6;

impl Engine {
    /// After a rendered 2xx answer of a cloning route: a fresh key, the copied fields of the
    /// path's record, stored as a new record of its type.
    pub(super) fn apply_record_clone(&self, ns: &mut Namespace, call: &Call<'_>, out: &mut Out) {
        let route = &self.model.routes[call.m.route];
        let Some(rule) = &route.record_clone else {
            return;
        };
        if !(200..300).contains(&out.status) || out.replay.is_some() {
            return;
        }
        let Some((_, source_id)) = call.m.params.iter().find(|(n, _)| *n == rule.record_param)
        else {
            return;
        };
        let ty = rule.entity_type.as_str();
        let Some(Value::Object(source)) = self.base_entity(ns, ty, source_id) else {
            return;
        };
        let pk = self.pk_of(ty);
        let picked = match &out.body {
            OutBody::Json(Value::Object(map)) => map.get(&pk).cloned(),
            _ => None,
        };
        let Some(picked) = picked else {
            return;
        };
        let Some(fresh) = self.fresh_key(ns, ty, &picked) else {
            return;
        };
        let Some(key) = scalar_key(&fresh) else {
            return;
        };
        let OutBody::Json(Value::Object(map)) = &mut out.body else {
            return;
        };
        // Text naming the recorded copy by its key (a default label `linode<id>`) names this
        // copy: a key of enough digits, not inside a longer number, outside the fields the
        // request sent or the copy takes from the record.
        if let Some(theirs) = scalar_key(&picked)
            .filter(|k| k.len() >= MIN_NAMING_DIGITS && k.bytes().all(|b| b.is_ascii_digit()))
        {
            let sent = call.body.as_ref().and_then(Value::as_object);
            for (f, v) in map.iter_mut() {
                if rule.copies.contains(f) || sent.is_some_and(|b| b.contains_key(f)) {
                    continue;
                }
                if let Value::String(text) = v
                    && let Some(renamed) = replace_number(text, &theirs, &key)
                {
                    *text = renamed;
                }
            }
        }
        map.insert(pk.clone(), fresh);
        for f in &rule.copies {
            if let Some(v) = source.get(f) {
                map.insert(f.clone(), v.clone());
                let at = format!("/{}", escape_key(f));
                out.origins.clear_under(&at);
                out.sources.set(&at, FieldSource::State);
            }
        }
        // Text the copy renders from its sent text, as the type's creates do (a volume's
        // `filesystem_path` from its `label`): after the renaming above, which is for the
        // recorded copy's text.
        let mut record = Value::Object(std::mem::take(map));
        if let Some(rendering) = &route.text_rendering
            && super::text_rendering::render_text(call, rendering, &mut record)
        {
            out.sources.set(
                &super::unescape_pointer(&rendering.at),
                super::text_rendering::SOURCE,
            );
        }
        out.body = OutBody::Json(record.clone());
        let at = format!("/{}", escape_key(&pk));
        out.origins.insert(&at, FieldOrigin::Minted);
        out.sources.set(&at, FieldSource::Generated);
        let parents = ns.entity(ty, source_id).and_then(|e| e.parents.clone());
        ns.put(ty, &key, record, Origin::Synthesized, parents);
        ns.note_creator(ty, &key, self.principal_of(call));
    }
}
