//! Counters a create steps on the record its request names (`Route::create_counters`): after a
//! 2xx create, the record a learned top-level body field names (a reply's parent, a quote's
//! quoted status), or the parent its path names (a part's widget), has each learned counter
//! stepped in the session's store, so later reads,
//! lists and embeddings show the new count. A rendered create answer that embeds that record
//! shows the stepped value too; a replayed one already shows what its recording did.
//!
//! Not here: a record the session does not hold (a recorded record it never created or met is
//! not stepped), and what a delete of the created record does to the counter.

use serde_json::Value;

use super::{Call, Engine, Out, OutBody};
use crate::namespace::{Namespace, Origin};

/// How deep into an answer the named record's embeddings are updated (as synth looks).
const MAX_DEPTH: usize = 4;

impl Engine {
    /// Step the counters the call's create route learned on the records its body names, in
    /// the session's store; when the answer was rendered (`origin` `Synthesized`), its
    /// embeddings of those records show the stepped values.
    pub(super) fn apply_create_counters(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        out: &mut Out,
        origin: Origin,
    ) {
        let rules = &self.model.routes[call.m.route].create_counters;
        if rules.is_empty() || !(200..300).contains(&out.status) || call.head {
            return;
        }
        for rule in rules {
            let key = match &rule.param {
                Some(name) => {
                    super::param_key(&self.model.routes[call.m.route], &call.m.params, name)
                        .map(|k| k.into_owned())
                }
                None => call
                    .body
                    .as_ref()
                    .and_then(|b| b.pointer(&rule.field))
                    .and_then(crate::fixtures::scalar_key),
            };
            let Some(key) = key else {
                continue;
            };
            let ty = rule.entity_type.as_str();
            let Some(held) = ns.entity(ty, &key) else {
                continue;
            };
            let mut entity = (*held.value).clone();
            let Value::Object(map) = &mut entity else {
                continue;
            };
            let mut stepped = Vec::new();
            for (f, step) in &rule.counters {
                if let Some(n) = map.get(f).and_then(Value::as_i64) {
                    let v = Value::from(n.saturating_add(*step));
                    map.insert(f.clone(), v.clone());
                    stepped.push((f.as_str(), v));
                }
            }
            if stepped.is_empty() {
                continue;
            }
            super::put_acted(ns, ty, &key, entity, origin);
            if origin != Origin::Synthesized {
                continue;
            }
            let pk = self.pk_of(ty);
            out.body.materialize();
            if let OutBody::Json(answer) = &mut out.body {
                show_stepped(answer, &pk, &key, &stepped, 0);
            }
        }
    }
}

/// Every object below the answer's top (the top is the created record) that is the record
/// `key` (its `pk`) and holds a stepped field takes the stepped value.
fn show_stepped(v: &mut Value, pk: &str, key: &str, stepped: &[(&str, Value)], depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::Object(m) => {
            if depth > 0 && m.get(pk).and_then(crate::fixtures::scalar_key).as_deref() == Some(key)
            {
                for (f, n) in stepped {
                    if let Some(slot) = m.get_mut(*f)
                        && slot.is_i64()
                    {
                        *slot = n.clone();
                    }
                }
            }
            for c in m.values_mut() {
                show_stepped(c, pk, key, stepped, depth + 1);
            }
        }
        Value::Array(a) => {
            for c in a {
                show_stepped(c, pk, key, stepped, depth + 1);
            }
        }
        _ => {}
    }
}
