//! Keyed snapshots (`Variant::keyed_snapshots`): a template answer shows the recorded state of
//! the request's own value of the field that decided the recorded answers' field sets.
//!
//! Synth grouped the variant's recorded answers by that request field; here the engine picks,
//! per key value, one of them (of the request's principal when it recorded any, else of all
//! principals): the one most typical, by the rule the unkeyed snapshot uses, of all the
//! variant's answers to that principal, not only the bucket's. Rendering then takes the
//! observed values, recorded-data lists and optional fields' presence from it
//! (`render::ReqCtx::snapshot_keyed`). A request without the field, or with a value never
//! recorded, falls back to the unkeyed snapshot and presence rules; so does a principal the
//! variant answered only with other values of the field: its own records (the author of its
//! post) matter more than which optional fields that value's answers had.

use std::collections::BTreeMap;

use serde_json::Value;
use wraith_model::{RecordedBody, Route, Variant, key_text};

use super::{Call, Engine, fits, most_typical_index_among, run_numbers};

/// Per key text of one variant's keyed field: the snapshot per recorded principal, and the one
/// over every principal (for a principal the bucket never recorded).
#[derive(Default)]
pub(super) struct KeyedChoice {
    by_key: BTreeMap<String, Bucket>,
    /// The principals the variant answered at all, whatever the key.
    principals: std::collections::BTreeSet<Option<String>>,
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
        let principal = self.principal_of(call);
        match bucket.by_principal.get(&principal) {
            Some(own) => Some(own),
            // Its own unkeyed snapshot shows this principal's records.
            None if choice.principals.contains(&principal) => None,
            None => bucket.any.as_ref(),
        }
    }
}

/// The snapshots of every bucket of a keyed variant (see [`KeyedChoice`]).
///
/// A bucket's answers are the candidates; how typical each is counts against every answer of
/// the variant recorded for the same principal (for `any`, of every principal). The bucket
/// fixes what the request's value decides (which fields are present), the whole population
/// what state the principal's records were usually in: a run that sent the keyed value more
/// often than the others does not make its own state the typical one.
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
    // The variant's recorded answers (its status, its shape), in source order.
    let mut answers: Vec<(&str, Option<&String>, Value)> = Vec::new();
    for (source, m) in &by_source {
        if m.status != variant.status {
            continue;
        }
        let RecordedBody::Json { value } = &m.body else {
            continue;
        };
        let Ok(body): Result<Value, _> = value.parse() else {
            continue;
        };
        if fits(root, &body) {
            answers.push((source, m.principal.as_ref(), body));
        }
    }
    let mut principals: Vec<Option<&String>> = answers.iter().map(|a| a.1).collect();
    principals.sort();
    principals.dedup();
    // Per principal (and over all of them): its answers, their runs, and which bucket's
    // candidates each is.
    let population = |principal: Option<Option<&String>>| {
        let picked: Vec<&(&str, Option<&String>, Value)> = answers
            .iter()
            .filter(|a| principal.is_none_or(|p| a.1 == p))
            .collect();
        let runs = run_numbers(picked.iter().map(|a| a.0));
        (picked, runs)
    };
    let pick = |picked: &[&(&str, Option<&String>, Value)],
                runs: &[usize],
                bucket: &std::collections::BTreeSet<&str>| {
        let bodies: Vec<&Value> = picked.iter().map(|a| &a.2).collect();
        most_typical_index_among(&bodies, runs, |i| {
            picked.get(i).is_some_and(|a| bucket.contains(a.0))
        })
        .and_then(|i| bodies.get(i).map(|b| (*b).clone()))
    };
    out.principals = principals.iter().map(|p| p.cloned()).collect();
    let per_principal: Vec<_> = principals
        .iter()
        .map(|p| (*p, population(Some(*p))))
        .collect();
    let everyone = population(None);
    for b in &keyed.buckets {
        let Some(key) = key_text(&b.key) else {
            continue;
        };
        let members: std::collections::BTreeSet<&str> =
            b.moments.iter().map(String::as_str).collect();
        let mut bucket = Bucket::default();
        for (principal, (picked, runs)) in &per_principal {
            if let Some(body) = pick(picked, runs, &members) {
                bucket.by_principal.insert(principal.cloned(), body);
            }
        }
        bucket.any = pick(&everyone.0, &everyone.1, &members);
        if bucket.any.is_some() {
            out.by_key.insert(key, bucket);
        }
    }
    out
}
