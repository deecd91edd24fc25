//! Path filters (`Route::path_filter`): a `GET` whose path parameter selects the records it
//! lists (a tag's timeline lists the statuses tagged with it) answers, where no recorded
//! answer to the request exists, the records this session created that carry the requested
//! value, ordered and paged as the recordings showed. A session that created no such record
//! gets the route's answer as before: the recordings show what other runs listed, not what an
//! empty selection looks like.

use std::cmp::Ordering;

use serde_json::Value;
use wraith_model::{Pagination, PathFilter};

use super::{Call, Engine, Out};
use crate::api::Provenance;
use crate::fixtures::scalar_key;
use crate::list;
use crate::namespace::Namespace;

impl Engine {
    /// The session's records the request's path value selects, as the route's answer; `None`
    /// when the route has no path filter, the request is no read, or the session created no
    /// matching record (live now).
    pub(super) fn path_filtered_list(&self, ns: &mut Namespace, call: &Call<'_>) -> Option<Out> {
        let route = &self.model.routes[call.m.route];
        let filter = route.path_filter.as_ref()?;
        if call.method != "GET" && !call.head {
            return None;
        }
        let want = &call.m.params.iter().find(|(n, _)| *n == filter.param)?.1;
        let tokens: Vec<String> = filter
            .member
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect();
        let store = ns.type_store(&filter.entity_type)?;
        let mut items: Vec<(Option<String>, &Value)> = store
            .created
            .iter()
            .filter_map(|k| store.live.get(k))
            .map(|e| e.value.as_ref())
            .filter(|v| list::pattern_names(v, &tokens, want))
            .map(|v| (v.get(&filter.order_by).and_then(scalar_key), v))
            .collect();
        if items.is_empty() {
            return None;
        }
        // Stable: records without the field keep their creation order, after the others.
        items.sort_by(|(a, _), (b, _)| match (a, b) {
            (Some(a), Some(b)) if filter.descending => PathFilter::compare_keys(b, a),
            (Some(a), Some(b)) => PathFilter::compare_keys(a, b),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        });
        let pk = self.pk_of(&filter.entity_type);
        let page: Vec<Value> = page(filter, &pk, &call.query, items);
        let variant = route
            .variants
            .iter()
            .find(|v| (200..300).contains(&v.status))?;
        let rendered = self.render_variant(ns, call, variant).0;
        let recorded_keys = self.page_keys(&rendered.body, call.m.route);
        let mut out = Out::json(
            rendered.status,
            Value::Array(page),
            Provenance::Template,
            Some(self.router.info[call.m.route].name.clone()),
        );
        out.headers = rendered.headers;
        self.relink(call, &mut out, &recorded_keys, false);
        Some(out)
    }
}

/// The page of `items` (in list order) the request's paging parameters ask for, in the
/// route's recorded paging style.
fn page(
    filter: &PathFilter,
    pk: &str,
    query: &[(String, String)],
    items: Vec<(Option<String>, &Value)>,
) -> Vec<Value> {
    let num = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.trim().parse::<usize>().ok())
    };
    let (skip, take) = match &filter.pagination {
        Pagination::LimitOffset { limit, offset, .. } => (num(offset).unwrap_or(0), num(limit)),
        Pagination::PagePerPage { page, per_page, .. } => {
            let pp = num(per_page);
            let p = num(page).unwrap_or(1).max(1);
            (pp.map_or(0, |pp| (p - 1).saturating_mul(pp)), pp)
        }
        Pagination::Cursor { limit, .. } | Pagination::LinkHeader { limit, .. } => {
            (0, limit.as_deref().and_then(num))
        }
        Pagination::None => (0, None),
    };
    items
        .into_iter()
        .filter(|(_, v)| {
            v.get(pk).and_then(scalar_key).is_none_or(|k| {
                list::in_id_window(&k, &filter.pagination, query, filter.descending)
            })
        })
        .skip(skip)
        .take(take.filter(|n| *n > 0).unwrap_or(usize::MAX))
        .map(|(_, v)| v.clone())
        .collect()
}
