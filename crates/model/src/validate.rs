//! The identity checks every model must pass: each route id names one route, each
//! `METHOD /path` on one origin is one route, each variant id names one variant. `wraith lint`
//! reports each problem as an error finding; `wraith compose` refuses a composite that would
//! have one, naming the input that brought it. Synth never writes such a model (its ids are
//! hashes of what they identify); a hand edit, or a merge of models that did, does.
//!
//! Besides: routes spelled differently that the engine's router files as one
//! ([`routes_filed_as_one`]: `/promos` and `/promos/`), which `wraith lint` warns of (synth
//! writes such a pair from recordings holding both spellings) and `wraith compose` refuses when
//! an overlay's route would be filed with an earlier input's.

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

/// The template the engine's router files a route template under: empty segments left out (a
/// trailing slash, a doubled slash), each parameter (`:` and at least one character) written
/// `{p0}`, `{p1}`, … by position, braces in literal segments doubled. Two routes of one method
/// and origin whose templates give the same text are one trie entry to the router, which
/// answers with the first of them: `/promos` and `/promos/`, `/items/:id` and
/// `/items/:item_id`.
pub fn router_template(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 8);
    let mut k = 0;
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        out.push('/');
        if seg.starts_with(':') && seg.len() > 1 {
            out.push_str(&format!("{{p{k}}}"));
            k += 1;
        } else {
            out.push_str(&seg.replace('{', "{{").replace('}', "}}"));
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// Routes of one method and origin spelled differently that the engine's router files as one
/// ([`router_template`]): only the first of them in model order is ever chosen, so the
/// others' variants and recorded answers are never served.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FiledAsOne {
    /// Upper case.
    pub method: String,
    /// The template the router files them under ([`router_template`]).
    pub filed_as: String,
    pub origin: Option<String>,
    /// The routes' paths as the model spells them, each once, in model order: the first is
    /// the route the router answers with.
    pub paths: Vec<String>,
}

impl FiledAsOne {
    /// The `wraith lint` rule id.
    pub const RULE: &'static str = "routes-filed-as-one";

    /// `METHOD /path` of the `n`th path, with ` on <origin>` when the routes have one.
    pub fn route(&self, n: usize) -> String {
        let origin = self
            .origin
            .as_deref()
            .map(|o| format!(" on {o}"))
            .unwrap_or_default();
        let path = self.paths.get(n).map(String::as_str).unwrap_or_default();
        format!("{} {path}{origin}", self.method)
    }

    /// What is wrong, naming every route of the group and the one answered.
    pub fn message(&self) -> String {
        let routes: Vec<String> = (0..self.paths.len()).map(|n| self.route(n)).collect();
        format!(
            "{} are one route to the engine's router (it leaves out a trailing or doubled slash \
             and matches parameters by position): only {} is ever answered, the other's \
             variants and recorded answers never are",
            routes.join(" and "),
            self.route(0)
        )
    }
}

/// Every group of routes of `model` that the router files as one, sorted. Routes of the very
/// same `METHOD /path` and origin are [`IdProblem::DuplicateRoute`], not this.
pub fn routes_filed_as_one(model: &Model) -> Vec<FiledAsOne> {
    let mut groups: BTreeMap<(String, String, Option<&str>), Vec<&str>> = BTreeMap::new();
    for r in &model.routes {
        let paths = groups
            .entry((
                r.method.to_ascii_uppercase(),
                router_template(&r.path),
                r.origin.as_deref(),
            ))
            .or_default();
        if !paths.contains(&r.path.as_str()) {
            paths.push(r.path.as_str());
        }
    }
    groups
        .into_iter()
        .filter(|(_, paths)| paths.len() > 1)
        .map(|((method, filed_as, origin), paths)| FiledAsOne {
            method,
            filed_as,
            origin: origin.map(str::to_string),
            paths: paths.into_iter().map(str::to_string).collect(),
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn router_templates_leave_out_empty_segments_and_parameter_names() {
        assert_eq!(router_template("/v1/a/:x/b/:y"), "/v1/a/{p0}/b/{p1}");
        assert_eq!(router_template("/promos/"), router_template("/promos"));
        assert_eq!(router_template("//promos"), "/promos");
        assert_eq!(router_template("/"), "/");
        assert_eq!(router_template(""), "/");
        assert_eq!(router_template("/odd{brace}"), "/odd{{brace}}");
        // A lone colon is a literal segment.
        assert_eq!(router_template("/a/:"), "/a/:");
    }
}
