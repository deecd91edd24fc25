//! Recorded coverage (`wraith coverage`): which routes and state operations the recordings
//! exercise, how many variants each route has, routes seen only once, entity types nobody ever
//! created, and recorded requests the model has no route for.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use wraith_model::{Model, Route, StateOp};
use wraith_recording::RecordedSession;

/// True when the concrete `path` fits the route template (`/a/:param/b`): same number of
/// segments, literals equal, parameters non-empty.
pub fn template_matches(template: &str, path: &str) -> bool {
    // A template spells a literal `:x` segment `%3Ax`; the path is spelled alike.
    let path = wraith_model::request_key::escape_request_path(path);
    let mut t = template.split('/');
    let mut p = path.split('/');
    loop {
        match (t.next(), p.next()) {
            (None, None) => return true,
            (Some(ts), Some(ps)) => {
                if ts.starts_with(':') {
                    if ps.is_empty() {
                        return false;
                    }
                } else if ts != ps {
                    return false;
                }
            }
            _ => return false,
        }
    }
}

fn literal_count(template: &str) -> usize {
    template
        .split('/')
        .filter(|s| !s.is_empty() && !s.starts_with(':'))
        .count()
}

/// The model's routes as one segment trie per method and origin, so the route of a recorded
/// request is found by reading its path's segments instead of trying every template (which
/// made coverage quadratic: 20,000 routes took half a minute).
pub struct RouteIndex<'m> {
    model: &'m Model,
    tries: HashMap<(String, Option<&'m str>), Trie>,
    literals: Vec<usize>,
}

/// One segment position of [`RouteIndex`]: the routes whose template ends here, and the next
/// segment as a literal or a parameter.
#[derive(Default)]
struct Trie {
    routes: Vec<usize>,
    literal: HashMap<String, Trie>,
    param: Option<Box<Trie>>,
}

impl<'m> RouteIndex<'m> {
    pub fn new(model: &'m Model) -> RouteIndex<'m> {
        let mut tries: HashMap<(String, Option<&'m str>), Trie> = HashMap::new();
        for (i, r) in model.routes.iter().enumerate() {
            let mut node = tries
                .entry((r.method.to_ascii_uppercase(), r.origin.as_deref()))
                .or_default();
            // Segments as [`template_matches`] splits them: a parameter is any segment
            // starting with `:`.
            for seg in r.path.split('/') {
                node = if seg.starts_with(':') {
                    node.param.get_or_insert_with(Box::default)
                } else {
                    node.literal.entry(seg.to_string()).or_default()
                };
            }
            node.routes.push(i);
        }
        RouteIndex {
            model,
            tries,
            literals: model
                .routes
                .iter()
                .map(|r| literal_count(&r.path))
                .collect(),
        }
    }

    /// The model route a recorded request belongs to: same method and origin, template fits
    /// ([`template_matches`]), the most literal segments wins (as the engine's router prefers
    /// literals), and among equals the first in the model.
    pub fn route_for(&self, method: &str, path: &str, origin: Option<&str>) -> Option<&'m Route> {
        let trie = self.tries.get(&(method.to_ascii_uppercase(), origin))?;
        let path = wraith_model::request_key::escape_request_path(path);
        let segs: Vec<&str> = path.split('/').collect();
        let mut best: Option<(usize, usize)> = None;
        // Depth first without recursion: a path may hold thousands of segments.
        let mut stack: Vec<(&Trie, usize)> = vec![(trie, 0)];
        while let Some((node, depth)) = stack.pop() {
            let Some(seg) = segs.get(depth) else {
                for &r in &node.routes {
                    let lit = self.literals.get(r).copied().unwrap_or(0);
                    if best.is_none_or(|(b, br)| lit > b || (lit == b && r < br)) {
                        best = Some((lit, r));
                    }
                }
                continue;
            };
            if let Some(next) = node.literal.get(*seg) {
                stack.push((next, depth + 1));
            }
            if let Some(next) = &node.param
                && !seg.is_empty()
            {
                stack.push((next, depth + 1));
            }
        }
        best.and_then(|(_, r)| self.model.routes.get(r))
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    pub twin: String,
    pub sessions: u64,
    pub exchanges: u64,
    pub routes_total: u64,
    /// Routes at least one recorded exchange falls on.
    pub routes_exercised: u64,
    /// `routes_exercised / routes_total` in basis points.
    pub route_coverage_bp: u32,
    pub routes: Vec<RouteCoverage>,
    /// Per state operation: how many routes carry it and how many of them are exercised.
    pub state_ops: BTreeMap<String, StateOpCoverage>,
    /// Per entity type: the state operations its routes cover.
    pub entity_types: Vec<EntityCoverage>,
    /// Routes exercised by exactly one recorded exchange (a template from one observation),
    /// named as `routes[].route` is.
    pub routes_seen_once: Vec<String>,
    /// Entity types with no `create` route: the twin cannot mint them.
    pub entity_types_without_create: Vec<String>,
    /// Routes whose newest recording run answers in another shape than their earlier runs
    /// (`Route::drift`, measured by synth), in model order, each with its findings.
    pub drifted_routes: Vec<DriftedRoute>,
    /// Recorded requests no model route matches (the model is older than the recordings, or
    /// synth could not template them).
    pub uncovered_requests: u64,
    /// Up to 50 of them, `METHOD /path` (with ` on <origin>` for a request recorded on
    /// another origin, as a route is named), first seen first, deduplicated.
    pub uncovered_examples: Vec<String>,
    /// With `--openapi`: the document's operations against the model's routes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_coverage: Option<crate::spec_coverage::SpecCoverage>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RouteCoverage {
    /// The route's name as the check report gives it ([`wraith_model::Route::label`]):
    /// `METHOD /path`, with ` on <origin>` for a route of another origin than the base URL.
    pub route: String,
    pub route_id: String,
    /// The origin the route was recorded on when it is not the twin's base URL (also named in
    /// `route`, so a path recorded on two hosts is two distinct names).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    pub state_op: Option<StateOp>,
    pub entity_type: Option<String>,
    /// Recorded exchanges that fall on this route now.
    pub exchanges: u64,
    /// Recording sessions among them.
    pub sessions: u64,
    /// Exchanges synth folded into the route.
    pub model_exchange_count: u64,
    pub variants: u64,
    /// Statuses of the variants, ascending, deduplicated.
    pub statuses: Vec<u16>,
    pub exact_entries: u64,
}

/// A route with drift between recording runs.
#[derive(Debug, Clone, Serialize)]
pub struct DriftedRoute {
    /// The route's name, as `routes[].route` is.
    pub route: String,
    pub drift: Vec<wraith_model::RouteDrift>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct StateOpCoverage {
    pub routes: u64,
    pub routes_exercised: u64,
    pub exchanges: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct EntityCoverage {
    pub entity_type: String,
    /// State operations present, in `create, read, list, update, delete` order.
    pub ops: Vec<StateOp>,
    /// Operations no route performs.
    pub missing_ops: Vec<StateOp>,
    pub known_ids: u64,
    pub records: u64,
}

const ALL_OPS: [StateOp; 5] = [
    StateOp::Create,
    StateOp::Read,
    StateOp::List,
    StateOp::Update,
    StateOp::Delete,
];

/// Coverage of `model` by the recordings `sessions`.
pub fn coverage(twin: &str, model: &Model, sessions: &[RecordedSession]) -> Coverage {
    let mut ex_count: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut uncovered = 0u64;
    let mut examples: Vec<String> = Vec::new();
    let mut total = 0u64;
    let index = RouteIndex::new(model);
    for s in sessions {
        let mut seen_in_session: std::collections::BTreeSet<&str> = Default::default();
        for ex in &s.exchanges {
            total += 1;
            match index.route_for(
                &ex.request.method,
                &ex.request.path,
                ex.request.origin.as_deref(),
            ) {
                Some(r) => {
                    let e = ex_count.entry(r.id.as_str()).or_default();
                    e.0 += 1;
                    if seen_in_session.insert(r.id.as_str()) {
                        e.1 += 1;
                    }
                }
                None => {
                    uncovered += 1;
                    let name = wraith_model::route_label(
                        &format!("{} {}", ex.request.method, ex.request.path),
                        ex.request.origin.as_deref(),
                    );
                    if examples.len() < 50 && !examples.contains(&name) {
                        examples.push(name);
                    }
                }
            }
        }
    }
    let mut routes = Vec::new();
    let mut state_ops: BTreeMap<String, StateOpCoverage> = BTreeMap::new();
    let mut seen_once = Vec::new();
    for r in &model.routes {
        let (n, sess) = ex_count.get(r.id.as_str()).copied().unwrap_or((0, 0));
        let name = r.label();
        if n == 1 {
            seen_once.push(name.clone());
        }
        if let Some(op) = r.state_op {
            let c = state_ops.entry(op.as_str().to_string()).or_default();
            c.routes += 1;
            c.routes_exercised += u64::from(n > 0);
            c.exchanges += n;
        }
        let mut statuses: Vec<u16> = r.variants.iter().map(|v| v.status).collect();
        statuses.sort_unstable();
        statuses.dedup();
        routes.push(RouteCoverage {
            route: name,
            route_id: r.id.clone(),
            origin: r.origin.clone(),
            state_op: r.state_op,
            entity_type: r.entity_type.clone(),
            exchanges: n,
            sessions: sess,
            model_exchange_count: r.exchange_count,
            variants: r.variants.len() as u64,
            statuses,
            exact_entries: r.exact.len() as u64,
        });
    }
    let mut ops_by_type: BTreeMap<&str, Vec<StateOp>> = BTreeMap::new();
    for name in model.entity_types.keys() {
        ops_by_type.entry(name.as_str()).or_default();
    }
    for r in &model.routes {
        if let (Some(t), Some(op)) = (&r.entity_type, r.state_op) {
            let ops = ops_by_type.entry(t.as_str()).or_default();
            if !ops.contains(&op) {
                ops.push(op);
            }
        }
    }
    let mut entity_types = Vec::new();
    let mut without_create = Vec::new();
    for (t, ops) in ops_by_type {
        let present: Vec<StateOp> = ALL_OPS
            .iter()
            .copied()
            .filter(|o| ops.contains(o))
            .collect();
        let missing: Vec<StateOp> = ALL_OPS
            .iter()
            .copied()
            .filter(|o| !ops.contains(o))
            .collect();
        if !present.contains(&StateOp::Create) {
            without_create.push(t.to_string());
        }
        let et = model.entity_types.get(t);
        entity_types.push(EntityCoverage {
            entity_type: t.to_string(),
            ops: present,
            missing_ops: missing,
            known_ids: et.map_or(0, |e| e.known_ids.len() as u64),
            records: et.map_or(0, |e| e.records.len() as u64),
        });
    }
    let routes_total = model.routes.len() as u64;
    let routes_exercised = routes.iter().filter(|r| r.exchanges > 0).count() as u64;
    Coverage {
        twin: twin.to_string(),
        sessions: sessions.len() as u64,
        exchanges: total,
        routes_total,
        routes_exercised,
        route_coverage_bp: crate::report::ratio_bp(routes_exercised, routes_total),
        routes,
        state_ops,
        entity_types,
        routes_seen_once: seen_once,
        entity_types_without_create: without_create,
        drifted_routes: model
            .routes
            .iter()
            .filter(|r| !r.drift.is_empty())
            .map(|r| DriftedRoute {
                route: r.label(),
                drift: r.drift.clone(),
            })
            .collect(),
        uncovered_requests: uncovered,
        uncovered_examples: examples,
        spec_coverage: None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_by_segment() {
        assert!(template_matches("/v1/items/:param", "/v1/items/42"));
        assert!(!template_matches("/v1/items/:param", "/v1/items/"));
        assert!(!template_matches("/v1/items/:param", "/v1/items/42/x"));
        assert!(!template_matches("/v1/items", "/v1/other"));
        assert!(template_matches("/", "/"));
    }

    /// What [`RouteIndex::route_for`] answers, by trying every template.
    fn route_for_by_scan<'m>(
        model: &'m Model,
        method: &str,
        path: &str,
        origin: Option<&str>,
    ) -> Option<&'m Route> {
        let mut best: Option<(usize, &Route)> = None;
        for r in &model.routes {
            if !r.method.eq_ignore_ascii_case(method) || r.origin.as_deref() != origin {
                continue;
            }
            if !template_matches(&r.path, path) {
                continue;
            }
            let lit = literal_count(&r.path);
            if best.is_none_or(|(b, _)| lit > b) {
                best = Some((lit, r));
            }
        }
        best.map(|(_, r)| r)
    }

    fn model_of(routes: &[(&str, &str, Option<&str>)]) -> Model {
        let routes: Vec<serde_json::Value> = routes
            .iter()
            .enumerate()
            .map(|(i, (method, path, origin))| {
                serde_json::json!({
                    "id": format!("r{i}"),
                    "method": method,
                    "path": path,
                    "origin": origin,
                    "exact": [],
                    "exchange_count": 1,
                    "latency": {"p50_ms": 1, "p90_ms": 1, "p99_ms": 1, "sample_count": 1},
                    "params": [],
                    "variants": [],
                })
            })
            .collect();
        let model = serde_json::json!({
            "base_url": "https://api.test",
            "diagnostics": [],
            "entity_types": {},
            "recorded_at": "2026-01-01T00:00:00Z",
            "routes": routes,
            "schema_version": 1,
            "sessions": [],
            "tool_version": "0.1.0",
            "twin": "t",
        });
        serde_json::from_value(model).unwrap()
    }

    proptest::proptest! {
        #[test]
        fn the_index_finds_the_route_a_scan_of_every_template_finds(
            templates in proptest::collection::vec(
                (
                    proptest::sample::select(vec!["GET", "POST"]),
                    proptest::collection::vec(
                        proptest::sample::select(vec!["a", "b", ":id", ":x", ""]),
                        0..4,
                    ),
                    proptest::option::of(proptest::sample::select(vec!["other.test"])),
                ),
                0..12,
            ),
            paths in proptest::collection::vec(
                (
                    proptest::sample::select(vec!["GET", "get", "POST"]),
                    proptest::collection::vec(
                        proptest::sample::select(vec!["a", "b", "7", ""]),
                        0..4,
                    ),
                    proptest::option::of(proptest::sample::select(vec!["other.test"])),
                ),
                1..12,
            ),
        ) {
            let owned: Vec<(String, String, Option<&str>)> = templates
                .iter()
                .map(|(m, segs, o)| (m.to_string(), format!("/{}", segs.join("/")), *o))
                .collect();
            let routes: Vec<(&str, &str, Option<&str>)> = owned
                .iter()
                .map(|(m, p, o)| (m.as_str(), p.as_str(), *o))
                .collect();
            let model = model_of(&routes);
            let index = RouteIndex::new(&model);
            for (method, segs, origin) in &paths {
                let path = format!("/{}", segs.join("/"));
                let want = route_for_by_scan(&model, method, &path, *origin).map(|r| &r.id);
                let got = index.route_for(method, &path, *origin).map(|r| &r.id);
                proptest::prop_assert_eq!(got, want, "{} {}", method, path);
            }
        }
    }

    /// A complete recorded session `id` of bodiless `GET`s of `paths`, each answered 200.
    fn session(id: &str, paths: &[&str]) -> RecordedSession {
        RecordedSession {
            manifest: wraith_recording::Manifest {
                complete: true,
                end_time_us: 0,
                exchange_count: paths.len() as u64,
                policy_hash: String::new(),
                proxy_mode: "reverse".into(),
                schema_version: 1,
                session_id: id.into(),
                start_time_us: 0,
                tags: Vec::new(),
                tool_version: "test".into(),
            },
            exchanges: paths
                .iter()
                .map(|p| crate::test_support::exchange(crate::test_support::get(p), 200))
                .collect(),
        }
    }

    /// A model of `GET` routes `(path, state_op)` on the base URL, with no variants.
    fn model_with_ops(routes: &[(&str, Option<&str>)]) -> Model {
        let mut model = model_of(
            &routes
                .iter()
                .map(|(p, _)| ("GET", *p, None))
                .collect::<Vec<_>>(),
        );
        for (r, (_, op)) in model.routes.iter_mut().zip(routes) {
            r.state_op = op.map(|o| serde_json::from_value(serde_json::json!(o)).unwrap());
        }
        model
    }

    /// `sessions` is how many recording sessions reached the route, not how many exchanges:
    /// a session that sent the route twice counts once.
    #[test]
    fn coverage_counts_each_session_once_however_many_exchanges_it_sent() {
        let model = model_of(&[("GET", "/v1/notes/:id", None)]);
        let sessions = [
            session("s1", &["/v1/notes/a", "/v1/notes/b"]),
            session("s2", &["/v1/notes/c"]),
        ];
        let c = coverage("t", &model, &sessions);
        assert_eq!(c.routes[0].exchanges, 3);
        assert_eq!(c.routes[0].sessions, 2);
    }

    /// `uncovered_examples` names at most 50 requests however many went unmatched;
    /// `uncovered_requests` still counts them all.
    #[test]
    fn uncovered_examples_stop_at_fifty_first_seen_first() {
        let model = model_of(&[("GET", "/v1/notes", None)]);
        let paths: Vec<String> = (0..60).map(|i| format!("/v1/other/{i}")).collect();
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let c = coverage("t", &model, &[session("s1", &paths)]);
        assert_eq!(c.uncovered_requests, 60);
        assert_eq!(c.uncovered_examples.len(), 50);
        assert_eq!(c.uncovered_examples[0], "GET /v1/other/0");
        assert_eq!(c.uncovered_examples[49], "GET /v1/other/49");
    }

    /// `state_ops.<op>.routes_exercised` counts only the routes of that operation some
    /// recorded exchange fell on; `routes` counts them all.
    #[test]
    fn state_op_coverage_counts_only_exercised_routes_as_exercised() {
        let model = model_with_ops(&[
            ("/v1/notes/:id", Some("read")),
            ("/v1/tags/:id", Some("read")),
            ("/v1/notes", Some("list")),
        ]);
        let c = coverage("t", &model, &[session("s1", &["/v1/notes/a"])]);
        let read = &c.state_ops["read"];
        assert_eq!(
            (read.routes, read.routes_exercised, read.exchanges),
            (2, 1, 1)
        );
        let list = &c.state_ops["list"];
        assert_eq!(
            (list.routes, list.routes_exercised, list.exchanges),
            (1, 0, 0)
        );
    }
}
