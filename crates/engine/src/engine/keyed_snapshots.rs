//! Keyed snapshots (`Variant::keyed_snapshots`): a template answer shows the recorded state of
//! the request's own value of the field that decided the recorded answers' field sets.
//!
//! Synth grouped the variant's recorded answers by that request field; here the engine picks,
//! per key value, the most typical of them (of the request's principal when it recorded any,
//! else of all principals), by the rule the unkeyed snapshot uses. Rendering then takes the
//! observed values, recorded-data lists and optional fields' presence from it
//! (`render::ReqCtx::snapshot_keyed`). A request without the field, or with a value never
//! recorded, falls back to the unkeyed snapshot and presence rules.

use std::collections::BTreeMap;

use serde_json::Value;
use wraith_model::{RecordedBody, Route, Variant, key_text};

use super::{Call, Engine, fits, most_typical_index_by_run, run_numbers};

/// Per key text of one variant's keyed field: the snapshot per recorded principal, and the one
/// over every principal (for a principal the bucket never recorded).
#[derive(Default)]
pub(super) struct KeyedChoice {
    by_key: BTreeMap<String, Bucket>,
}

#[derive(Default)]
struct Bucket {
    by_principal: BTreeMap<Option<String>, Value>,
    any: Option<Value>,
}

impl Engine {
    /// The recorded answer variant `variant` renders its recorded state from for this request,
    /// when the variant is keyed and the request's value of the field has a bucket.
    pub(super) fn keyed_snapshot(&self, call: &Call<'_>, variant: &Variant) -> Option<&Value> {
        let keyed = variant.keyed_snapshots.as_deref()?;
        let sent = call.ctx().echo_source(&keyed.field)?;
        let key = key_text(&sent)?;
        let r = call.m.route;
        let route = self.model.routes.get(r)?;
        let vi = route
            .variants
            .iter()
            .position(|v| std::ptr::eq(v, variant))?;
        let choice = self
            .keyed_snapshots
            .get(r)?
            .get(vi)?
            .get_or_init(|| keyed_choice(route, variant));
        let bucket = choice.by_key.get(&key)?;
        let principal = call
            .req
            .header("authorization")
            .map(|auth| match &self.opts.principal {
                Some(f) => f(auth),
                None => auth.to_string(),
            });
        bucket.by_principal.get(&principal).or(bucket.any.as_ref())
    }
}

/// The snapshots of every bucket of a keyed variant (see [`KeyedChoice`]).
fn keyed_choice(route: &Route, variant: &Variant) -> KeyedChoice {
    let mut out = KeyedChoice::default();
    let Some(keyed) = variant.keyed_snapshots.as_deref() else {
        return out;
    };
    let wraith_model::BodyTemplate::Json { root } = &variant.body else {
        return out;
    };
    // Every recorded moment by its source, once.
    let mut by_source: BTreeMap<&str, &wraith_model::Moment> = BTreeMap::new();
    for e in &route.exact {
        for m in &e.moments {
            by_source.insert(m.source.as_str(), m);
        }
    }
    for b in &keyed.buckets {
        let Some(key) = key_text(&b.key) else {
            continue;
        };
        let mut groups: BTreeMap<Option<String>, (Vec<Value>, Vec<&str>)> = BTreeMap::new();
        let mut all: Vec<Value> = Vec::new();
        let mut all_sources: Vec<&str> = Vec::new();
        for source in &b.moments {
            let Some(m) = by_source.get(source.as_str()) else {
                continue;
            };
            if m.status != variant.status {
                continue;
            }
            let RecordedBody::Json { value } = &m.body else {
                continue;
            };
            let Ok(body) = value.parse() else {
                continue;
            };
            if !fits(root, &body) {
                continue;
            }
            let group = groups.entry(m.principal.clone()).or_default();
            group.0.push(body.clone());
            group.1.push(source.as_str());
            all.push(body);
            all_sources.push(source.as_str());
        }
        let mut bucket = Bucket::default();
        for (principal, (bodies, sources)) in groups {
            if let Some(body) = most_typical_index_by_run(&bodies, &run_numbers(sources))
                .and_then(|i| bodies.into_iter().nth(i))
            {
                bucket.by_principal.insert(principal, body);
            }
        }
        bucket.any = most_typical_index_by_run(&all, &run_numbers(all_sources))
            .and_then(|i| all.into_iter().nth(i));
        if bucket.any.is_some() {
            out.by_key.insert(key, bucket);
        }
    }
    out
}
