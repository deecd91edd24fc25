//! The identity checks every model must pass: each route id names one route, each
//! `METHOD /path` on one origin is one route, each variant id names one variant. `wraith lint`
//! reports each problem as an error finding; `wraith compose` refuses a composite that would
//! have one, naming the input that brought it. Synth never writes such a model (its ids are
//! hashes of what they identify); a hand edit, or a merge of models that did, does.

use std::collections::BTreeMap;

use crate::Model;

/// One identity problem of a model.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum IdProblem {
    /// One route id on several routes.
    DuplicateRouteId { id: String, routes: usize },
    /// One `METHOD /path` on one origin declared by several routes.
    DuplicateRoute {
        method: String,
        path: String,
        origin: Option<String>,
        routes: usize,
    },
    /// One variant id on several variants: the ids of the routes holding them, in model order
    /// (a route twice when it holds two).
    DuplicateVariantId { id: String, routes: Vec<String> },
}

impl IdProblem {
    /// The `wraith lint` rule id.
    pub fn rule(&self) -> &'static str {
        match self {
            IdProblem::DuplicateRouteId { .. } => "duplicate-route-id",
            IdProblem::DuplicateRoute { .. } => "duplicate-route",
            IdProblem::DuplicateVariantId { .. } => "duplicate-variant-id",
        }
    }

    /// What is duplicated, independent of how many times: the same problem made worse by
    /// another copy keeps its key.
    pub fn key(&self) -> (&'static str, String) {
        let what = match self {
            IdProblem::DuplicateRouteId { id, .. } | IdProblem::DuplicateVariantId { id, .. } => {
                id.clone()
            }
            IdProblem::DuplicateRoute {
                method,
                path,
                origin,
                ..
            } => format!("{method} {path} {}", origin.as_deref().unwrap_or_default()),
        };
        (self.rule(), what)
    }

    /// What is wrong, naming the duplicated id or route.
    pub fn message(&self) -> String {
        match self {
            IdProblem::DuplicateRouteId { id, routes } => {
                format!("route id {id} is used by {routes} routes")
            }
            IdProblem::DuplicateRoute {
                method,
                path,
                origin,
                routes,
            } => {
                let origin = origin
                    .as_deref()
                    .map(|o| format!(" on {o}"))
                    .unwrap_or_default();
                format!("{method} {path}{origin} is declared by {routes} routes")
            }
            IdProblem::DuplicateVariantId { id, routes } => format!(
                "variant id {id} is used {} times (routes {})",
                routes.len(),
                routes.join(", ")
            ),
        }
    }
}

/// Every identity problem of `model`, sorted.
pub fn id_problems(model: &Model) -> Vec<IdProblem> {
    let mut route_ids: BTreeMap<&str, usize> = BTreeMap::new();
    let mut route_names: BTreeMap<(String, &str, Option<&str>), usize> = BTreeMap::new();
    let mut variant_ids: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for r in &model.routes {
        *route_ids.entry(r.id.as_str()).or_default() += 1;
        *route_names
            .entry((
                r.method.to_ascii_uppercase(),
                r.path.as_str(),
                r.origin.as_deref(),
            ))
            .or_default() += 1;
        for v in &r.variants {
            variant_ids
                .entry(v.id.as_str())
                .or_default()
                .push(r.id.as_str());
        }
    }
    let mut out = Vec::new();
    for (id, routes) in route_ids {
        if routes > 1 {
            out.push(IdProblem::DuplicateRouteId {
                id: id.to_string(),
                routes,
            });
        }
    }
    for ((method, path, origin), routes) in route_names {
        if routes > 1 {
            out.push(IdProblem::DuplicateRoute {
                method,
                path: path.to_string(),
                origin: origin.map(str::to_string),
                routes,
            });
        }
    }
    for (id, routes) in variant_ids {
        if routes.len() > 1 {
            out.push(IdProblem::DuplicateVariantId {
                id: id.to_string(),
                routes: routes.into_iter().map(str::to_string).collect(),
            });
        }
    }
    out.sort();
    out
}
