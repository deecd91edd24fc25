//! Reads that find one record by a query parameter (`Route::query_lookup`): `GET
//! /accounts/lookup?acct=admin` answers the account whose `acct` is `admin`, as the session
//! sees it, and the route's recorded not-found answer when no record holds the name. A name
//! the recordings looked up keeps the route's own answer, replayed or rendered.
//!
//! Not here: names a record holds in another spelling than the recordings showed (exactly,
//! or followed by `@` and a domain).

use serde_json::Value;

use super::{Call, Engine, Out, OutBody};
use crate::namespace::{Namespace, Origin};
use crate::outbound::Origins;

/// Whether a record's `held` value names what the request `sent`: the same text, or (a weaker
/// match) the text followed by `@` and a domain.
fn names(held: &Value, sent: &str, exact: bool) -> bool {
    let Some(held) = held.as_str().filter(|h| !h.is_empty()) else {
        return false;
    };
    if exact {
        return held == sent;
    }
    sent.strip_prefix(held)
        .is_some_and(|rest| rest.starts_with('@'))
}

impl Engine {
    /// A rendered answer of a route with a query lookup: the record the query names, or the
    /// route's not-found answer.
    pub(super) fn apply_query_lookup(&self, ns: &mut Namespace, call: &Call<'_>, out: &mut Out) {
        if out.replay.is_some() {
            return;
        }
        let route = &self.model.routes[call.m.route];
        let Some(rule) = route.query_lookup.as_ref() else {
            return;
        };
        let Some(sent) = call
            .query
            .iter()
            .find(|(n, _)| *n == rule.param)
            .map(|(_, v)| v.as_str())
        else {
            return;
        };
        // A name the recordings looked up keeps the route's own answer for it (the state
        // the recorded answer showed), whether replayed or rendered.
        let recorded = route.exact.iter().any(|e| {
            crate::util::parse_query(&e.key.query)
                .iter()
                .any(|(n, v)| *n == rule.param && v == sent)
        });
        if recorded {
            return;
        }
        let found = self
            .record_holding(ns, &rule.entity_type, &rule.field, sent, true)
            .or_else(|| self.record_holding(ns, &rule.entity_type, &rule.field, sent, false));
        let wanted = |v: &&wraith_model::Variant| match found {
            Some(_) => (200..300).contains(&v.status),
            None => v.status == 404,
        };
        let answered_ok = (200..300).contains(&out.status);
        if answered_ok != found.is_some() {
            let Some(variant) = route.variants.iter().find(wanted) else {
                return;
            };
            *out = self.render_variant(ns, call, variant).0;
        }
        let Some((record, origin)) = found else {
            return;
        };
        let (provenance, source) = super::stored_provenance(origin);
        out.body = OutBody::Json(record);
        out.provenance = provenance;
        out.exchange = None;
        out.moment = None;
        out.origins = Origins::default();
        out.sources.reset(Some(source));
    }

    /// The record of type `ty` whose `field` names `sent` (see [`names`]), as the session sees
    /// it: the session's own records first, then the recorded ones it has not deleted or
    /// rewritten. `None` when none does.
    fn record_holding(
        &self,
        ns: &Namespace,
        ty: &str,
        field: &str,
        sent: &str,
        exact: bool,
    ) -> Option<(Value, Origin)> {
        if let Some(store) = ns.type_store(ty)
            && let Some(e) = store
                .live
                .values()
                .find(|e| e.value.get(field).is_some_and(|v| names(v, sent, exact)))
        {
            return Some(((*e.value).clone(), e.origin));
        }
        let et = self.model.entity_types.get(ty)?;
        et.records.iter().find_map(|(key, record)| {
            if ns.entity(ty, key).is_some() || ns.is_deleted(ty, key).is_some() {
                return None;
            }
            record
                .get(field)
                .is_some_and(|v| names(v, sent, exact))
                .then(|| (record.clone(), Origin::Replayed))
        })
    }
}
