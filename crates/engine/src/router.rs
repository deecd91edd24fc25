//! The compiled route table: one matchit router per method over the model's route templates.
//!
//! Template parameters are renamed positionally (`{p0}`, `{p1}`, …) before insertion, so two
//! templates that differ only in parameter names cannot conflict, and values map back to the
//! route's own names by position. Routes sharing a template but not an origin share one trie
//! entry and are told apart by the request's `Host`.
//!
//! matchit holds at most [`TRIE_MAX_PARAMS`] parameters per template (it panics past that), so
//! a longer template is matched segment by segment instead, after the tries: a template with
//! that many parameters has as many segments, where no trie route of fewer parameters can be
//! more specific in more than a handful of cases.

use std::collections::{BTreeMap, HashMap, HashSet};

use wraith_model::{MemberSource, Model, RequestKey, Route};

use crate::util::origin_of;

/// Precomputed per-route data.
pub(crate) struct RouteInfo {
    /// `METHOD /path`.
    pub name: String,
    /// `host[:port]` of the route's origin, lowercase, when it is not the twin's own upstream.
    pub origin_authority: Option<String>,
    /// Exact-replay index: key → position in `route.exact`.
    pub exact: HashMap<RequestKey, usize>,
    /// Fingerprint (status + body) of every moment of every exact entry, by position, so
    /// the time axis can compare recorded runs' answers cheaply.
    pub moment_fps: Vec<Vec<u64>>,
    /// Index of the fail-closed variant: a 404 preferred, else the first 4xx.
    pub not_found_variant: Option<usize>,
    /// Parameter names in path order, read from the template itself.
    pub param_names: Vec<String>,
    /// Values of the last path parameter in this route's recorded requests answered with a
    /// non-4xx status (decoded): evidence for the not_found gate on parameterized list routes.
    pub recorded_ok_last: HashSet<String>,
    /// For a `GET` at the very path a write adds its path's record to a list at (`PUT
    /// /user/starred/:owner/:name`): that list's path and the parameter naming the member,
    /// so the read asks whether the record is in the session's list.
    pub member_probe: Option<(String, String)>,
    /// For a write, records of other types that its path names by a parameter, as
    /// `(parameter, entity type)`: those a write at the same path adds to a list (a star's
    /// repository) or steps counters of. Whether the session holds one says whether the path
    /// names something.
    pub named_records: Vec<(String, String)>,
    /// Path parameters that name a record of a type with an alternate key
    /// (`EntityType::alternate_key`), as `(position, entity type, field)`: the route's own
    /// record (unless a qualifier spells its key) and its parents.
    pub alternate_keyed: Vec<(usize, String, String)>,
}

pub(crate) struct Router {
    by_method: BTreeMap<String, matchit::Router<Vec<usize>>>,
    /// Templates with more parameters than a trie takes, by method, in insertion order.
    long: BTreeMap<String, Vec<LongTemplate>>,
    pub info: Vec<RouteInfo>,
    /// Per entity type, the ids a recorded request of another route named as a parent
    /// (`parent_params`) and was answered with a non-4xx status (decoded, keyed as
    /// `param_key` keys them): ids of the type with a non-4xx outcome, known
    /// to the not_found gate as the type's `known_ids` are (a balancer only its configs'
    /// listing answered).
    pub parent_ok: HashMap<String, HashSet<String>>,
}

/// The most parameters one matchit template may hold (it names them `a` to `z` internally and
/// panics at the 26th).
pub(crate) const TRIE_MAX_PARAMS: usize = 25;

/// A template matched segment by segment: `None` a parameter, else a literal segment.
struct LongTemplate {
    segments: Vec<Option<String>>,
    routes: Vec<usize>,
}

impl LongTemplate {
    fn new(path: &str, routes: Vec<usize>) -> LongTemplate {
        let segments = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|seg| (!(seg.starts_with(':') && seg.len() > 1)).then(|| seg.to_string()))
            .collect();
        LongTemplate { segments, routes }
    }

    /// The parameter values of `path` when it matches, as a trie would give them: every
    /// parameter one non-empty segment, literals compared as sent.
    fn values<'p>(&self, path: &'p str) -> Option<Vec<&'p str>> {
        let rest = path.strip_prefix('/')?;
        let mut values = Vec::new();
        let mut sent = rest.split('/');
        for want in &self.segments {
            let seg = sent.next()?;
            match want {
                Some(lit) if lit == seg => {}
                Some(_) => return None,
                None if seg.is_empty() => return None,
                None => values.push(seg),
            }
        }
        sent.next().is_none().then_some(values)
    }
}

/// Fill [`RouteInfo::member_probe`]: a `GET` route shares its origin and path with a route
/// one of whose member effects adds the record a path parameter of both names.
/// [`Router::parent_ok`]: from each route's exact-replay entries with a non-4xx moment, the
/// path value of every parameter `parent_params` types, under that type.
fn parent_ok_ids(model: &Model) -> HashMap<String, HashSet<String>> {
    let mut out: HashMap<String, HashSet<String>> = HashMap::new();
    for route in model.routes.iter().filter(|r| !r.parent_params.is_empty()) {
        // (segment position, parameter name) of each parameter, in path order.
        let params: Vec<(usize, &str)> = route
            .path
            .split('/')
            .filter(|s| !s.is_empty())
            .enumerate()
            .filter_map(|(i, s)| {
                s.strip_prefix(':')
                    .filter(|n| !n.is_empty())
                    .map(|n| (i, n))
            })
            .collect();
        for entry in &route.exact {
            if entry.moments.iter().all(|m| (400..500).contains(&m.status)) {
                continue;
            }
            let segs: Vec<&str> = entry
                .key
                .path
                .split('/')
                .filter(|s| !s.is_empty())
                .collect();
            let value = |at: usize| {
                params
                    .get(at)
                    .and_then(|(pos, _)| segs.get(*pos))
                    .map(|v| crate::util::percent_decode(v))
            };
            for parent in &route.parent_params {
                let Some(at) = params.iter().position(|(_, n)| *n == parent.param) else {
                    continue;
                };
                let Some(own) = value(at) else { continue };
                let qualifier = at
                    .checked_sub(1)
                    .filter(|b| route.key_qualifier.as_deref() == params.get(*b).map(|p| p.1));
                let key = match qualifier {
                    Some(b) => match value(b) {
                        Some(q) => format!("{q}/{own}"),
                        None => continue,
                    },
                    None => own,
                };
                out.entry(parent.entity_type.clone())
                    .or_default()
                    .insert(key);
            }
        }
    }
    out
}

fn set_member_probes(model: &Model, info: &mut [RouteInfo]) {
    let mut writers: HashMap<(Option<&str>, &str), (String, String)> = HashMap::new();
    for route in &model.routes {
        for effect in &route.member_effects {
            if let (true, MemberSource::Param { param }) = (effect.adds, &effect.member) {
                writers
                    .entry((route.origin.as_deref(), route.path.as_str()))
                    .or_insert_with(|| (effect.list_path.clone(), param.clone()));
            }
        }
    }
    if writers.is_empty() {
        return;
    }
    for (route, info) in model.routes.iter().zip(info.iter_mut()) {
        if route.method.eq_ignore_ascii_case("GET") {
            info.member_probe = writers
                .get(&(route.origin.as_deref(), route.path.as_str()))
                .cloned();
        }
    }
}

/// Fill [`RouteInfo::alternate_keyed`] from each route's record and parents.
fn set_alternate_keyed(model: &Model, info: &mut [RouteInfo]) {
    for (route, info) in model.routes.iter().zip(info.iter_mut()) {
        for (at, name) in route.params.iter().enumerate() {
            let ty = if route.id_param.as_ref() == Some(name) {
                // A qualified key is spelled by two values, not named by a count.
                let qualified = at
                    .checked_sub(1)
                    .is_some_and(|b| route.key_qualifier.as_ref() == route.params.get(b));
                if qualified {
                    continue;
                }
                route.entity_type.as_deref()
            } else {
                route
                    .parent_params
                    .iter()
                    .find(|p| p.param == *name)
                    .map(|p| p.entity_type.as_str())
            };
            if let Some(ty) = ty
                && let Some(field) = model
                    .entity_types
                    .get(ty)
                    .and_then(|t| t.alternate_key.as_ref())
            {
                info.alternate_keyed
                    .push((at, ty.to_string(), field.clone()));
            }
        }
    }
}

/// Fill [`RouteInfo::named_records`] from the member effects and counters of every route at
/// the same origin and path (a `DELETE` of a star names the repository its `PUT` adds).
fn set_named_records(model: &Model, info: &mut [RouteInfo]) {
    // (origin, path) → (parameter, entity type) pairs.
    type Named = Vec<(String, String)>;
    let mut named: HashMap<(Option<&str>, &str), Named> = HashMap::new();
    for route in &model.routes {
        let params = route
            .member_effects
            .iter()
            .filter_map(|e| match &e.member {
                MemberSource::Param { param } => Some((param, &e.member_type)),
                MemberSource::Actor => None,
            })
            .chain(
                route
                    .create_counters
                    .iter()
                    .filter_map(|c| Some((c.param.as_ref()?, &c.entity_type))),
            );
        for (param, ty) in params {
            let list = named
                .entry((route.origin.as_deref(), route.path.as_str()))
                .or_default();
            let pair = (param.clone(), ty.clone());
            if !list.contains(&pair) {
                list.push(pair);
            }
        }
    }
    if named.is_empty() {
        return;
    }
    for (route, info) in model.routes.iter().zip(info.iter_mut()) {
        // A read at such a path asks whether the record is in the list (`member_probe`),
        // not whether it exists.
        if route.method.eq_ignore_ascii_case("GET") || route.method.eq_ignore_ascii_case("HEAD") {
            continue;
        }
        if let Some(list) = named.get(&(route.origin.as_deref(), route.path.as_str())) {
            info.named_records = list.clone();
        }
    }
}

/// How many parameters a route template (`/a/:x/b/:y`) holds.
pub(crate) fn param_count(path: &str) -> usize {
    path.split('/')
        .filter(|seg| seg.starts_with(':') && seg.len() > 1)
        .count()
}

/// A matched route with its parameter values (route names, percent-decoded, in path order).
pub(crate) struct Matched {
    pub route: usize,
    pub params: Vec<(String, String)>,
}

impl Router {
    pub(crate) fn build(model: &Model, warnings: &mut Vec<String>) -> Router {
        let mut by_method: BTreeMap<String, matchit::Router<Vec<usize>>> = BTreeMap::new();
        // matchit cannot add a value to an existing path, so group first.
        let mut grouped: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
        let mut info = Vec::with_capacity(model.routes.len());
        for (i, route) in model.routes.iter().enumerate() {
            info.push(route_info(route));
            let method = route.method.to_ascii_uppercase();
            grouped
                .entry((method, matchit_path(&route.path)))
                .or_default()
                .push(i);
        }
        set_member_probes(model, &mut info);
        set_named_records(model, &mut info);
        set_alternate_keyed(model, &mut info);
        let mut long: BTreeMap<String, Vec<LongTemplate>> = BTreeMap::new();
        for ((method, path), routes) in grouped {
            if let Some(&first) = routes.first()
                && param_count(&model.routes[first].path) > TRIE_MAX_PARAMS
            {
                let template = LongTemplate::new(&model.routes[first].path, routes);
                long.entry(method).or_default().push(template);
                continue;
            }
            let router = by_method.entry(method.clone()).or_default();
            if let Err(e) = router.insert(path.clone(), routes) {
                warnings.push(format!(
                    "route {method} {path} cannot be served: it conflicts with another template \
                     ({e}); re-run `wraith synth`"
                ));
            }
        }
        Router {
            by_method,
            long,
            info,
            parent_ok: parent_ok_ids(model),
        }
    }

    /// Match `method path` (path already normalized), honouring route origins via `host`.
    pub(crate) fn at(&self, method: &str, path: &str, host: Option<&str>) -> Option<Matched> {
        // Templates spell a literal `:x` segment `%3Ax`; the request is spelled alike.
        let path = &*wraith_model::request_key::escape_request_path(path);
        let trie = self
            .by_method
            .get(method)
            .and_then(|router| router.at(path).ok())
            .map(|m| {
                (
                    m.value,
                    m.params.iter().map(|(_, v)| v).collect::<Vec<&str>>(),
                )
            });
        let (candidates, values) = match trie {
            Some(found) => found,
            None => self
                .long
                .get(method)?
                .iter()
                .find_map(|t| t.values(path).map(|values| (&t.routes, values)))?,
        };
        let host = host.map(|h| h.to_ascii_lowercase());
        let chosen = candidates.iter().copied().find(|&r| {
            match (&self.info[r].origin_authority, &host) {
                (None, h) => !h
                    .as_ref()
                    .is_some_and(|h| self.is_foreign_host(candidates, h)),
                (Some(o), Some(h)) => authority_matches(o, h),
                (Some(_), None) => false,
            }
        })?;
        let params = self.info[chosen]
            .param_names
            .iter()
            .zip(values.iter())
            .map(|(name, v)| (name.clone(), crate::util::percent_decode(v)))
            .collect();
        Some(Matched {
            route: chosen,
            params,
        })
    }

    /// Add an authored route (`lua/routes.toml`) after the model's routes; its index is the
    /// next one after every route so far. Fails with matchit's reason when the template
    /// conflicts with one already in the trie (a recorded route of the same method and path
    /// among them: check [`crate::handler::shadowed_authored`] first).
    pub(crate) fn add_authored(&mut self, method: &str, path: &str) -> Result<usize, String> {
        let method = method.to_ascii_uppercase();
        let idx = self.info.len();
        if param_count(path) > TRIE_MAX_PARAMS {
            let template = LongTemplate::new(path, vec![idx]);
            let templates = self.long.entry(method.clone()).or_default();
            if templates.iter().any(|t| t.segments == template.segments) {
                return Err("another route has the same template".to_string());
            }
            templates.push(template);
        } else {
            self.by_method
                .entry(method.clone())
                .or_default()
                .insert(matchit_path(path), vec![idx])
                .map_err(|e| e.to_string())?;
        }
        self.info.push(RouteInfo {
            name: format!("{method} {path}"),
            origin_authority: None,
            exact: HashMap::new(),
            moment_fps: Vec::new(),
            not_found_variant: None,
            param_names: path
                .split('/')
                .filter_map(|seg| seg.strip_prefix(':'))
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect(),
            recorded_ok_last: HashSet::new(),
            member_probe: None,
            named_records: Vec::new(),
            alternate_keyed: Vec::new(),
        });
        Ok(idx)
    }

    /// Whether `host` names the origin of one of the candidate routes (so a request for that
    /// host does not fall back to the twin's own route of the same template).
    fn is_foreign_host(&self, candidates: &[usize], host: &str) -> bool {
        candidates.iter().any(|&r| {
            self.info[r]
                .origin_authority
                .as_ref()
                .is_some_and(|o| authority_matches(o, host))
        })
    }
}

fn authority_matches(origin_authority: &str, host: &str) -> bool {
    if origin_authority == host {
        return true;
    }
    let strip = |s: &str| s.rsplit_once(':').map(|(h, _)| h.to_string());
    let o_host = strip(origin_authority).unwrap_or_else(|| origin_authority.to_string());
    let h_host = strip(host).unwrap_or_else(|| host.to_string());
    o_host == h_host
}

fn route_info(route: &Route) -> RouteInfo {
    let exact = route
        .exact
        .iter()
        .enumerate()
        .map(|(i, e)| (e.key.clone(), i))
        .collect();
    let not_found_variant = route
        .variants
        .iter()
        .position(|v| v.status == 404)
        .or_else(|| {
            route
                .variants
                .iter()
                .position(|v| (400..500).contains(&v.status))
        });
    let origin_authority = route.origin.as_deref().map(|o| {
        origin_of(o)
            .and_then(|full| full.split_once("://").map(|(_, a)| a.to_string()))
            .unwrap_or_else(|| o.to_ascii_lowercase())
    });
    let last_pos = route
        .path
        .split('/')
        .filter(|s| !s.is_empty())
        .enumerate()
        .filter(|(_, s)| s.starts_with(':'))
        .map(|(i, _)| i)
        .last();
    let recorded_ok_last = match last_pos {
        None => HashSet::new(),
        Some(pos) => route
            .exact
            .iter()
            .filter(|e| e.moments.iter().any(|m| !(400..500).contains(&m.status)))
            .filter_map(|e| e.key.path.split('/').filter(|s| !s.is_empty()).nth(pos))
            .map(crate::util::percent_decode)
            .collect(),
    };
    let param_names = route
        .path
        .split('/')
        .filter_map(|seg| seg.strip_prefix(':'))
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    let moment_fps = route
        .exact
        .iter()
        .map(|e| e.moments.iter().map(moment_fingerprint).collect())
        .collect();
    RouteInfo {
        moment_fps,
        recorded_ok_last,
        member_probe: None,
        named_records: Vec::new(),
        alternate_keyed: Vec::new(),
        param_names,
        name: format!("{} {}", route.method, route.path),
        origin_authority,
        exact,
        not_found_variant,
    }
}

/// A stable fingerprint of a moment's status and body.
fn moment_fingerprint(m: &wraith_model::Moment) -> u64 {
    use wraith_model::RecordedBody as B;
    // Only compared with other fingerprints of the same engine: hashing the stored text, not a
    // re-serialization of the body, keeps start-up from printing every recorded body again.
    let (kind, text): (&str, &str) = match &m.body {
        B::Empty => ("empty", ""),
        B::Json { value } => ("json", value.as_str()),
        B::Text { text } => ("text", text),
        B::Binary { base64 } => ("binary", base64),
    };
    crate::render::stable_hash(&format!("{}\u{0}{kind}\u{0}{text}", m.status))
}

/// `/v1/customers/:customer_id` → `/v1/customers/{p0}` (literal braces escaped), without a
/// trailing slash: [`wraith_model::validate::router_template`], which `wraith lint` and
/// `wraith compose` use to tell which routes the router files as one.
pub(crate) fn matchit_path(path: &str) -> String {
    wraith_model::validate::router_template(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn params_are_renamed_positionally() {
        assert_eq!(matchit_path("/v1/a/:x/b/:y"), "/v1/a/{p0}/b/{p1}");
        assert_eq!(matchit_path("/"), "/");
        assert_eq!(matchit_path("/odd{brace}"), "/odd{{brace}}");
    }

    fn empty() -> Router {
        Router {
            by_method: BTreeMap::new(),
            long: BTreeMap::new(),
            info: Vec::new(),
            parent_ok: HashMap::new(),
        }
    }

    #[test]
    fn an_authored_template_past_the_tries_limit_is_matched_segment_by_segment() {
        let template: String = (0..30).map(|i| format!("/s{i}/:p{i}")).collect();
        let mut router = empty();
        let idx = router.add_authored("get", &template).unwrap();
        let sent: String = (0..30).map(|i| format!("/s{i}/v{i}")).collect();
        let m = router.at("GET", &sent, None).unwrap();
        assert_eq!(m.route, idx);
        assert_eq!(m.params.len(), 30);
        assert_eq!(m.params[29], ("p29".to_string(), "v29".to_string()));
        // An empty segment is no parameter value, and a literal must match as sent.
        assert!(
            router
                .at("GET", &sent.replace("/v3/", "//"), None)
                .is_none()
        );
        assert!(
            router
                .at("GET", &sent.replace("/s3/", "/S3/"), None)
                .is_none()
        );
        assert!(router.at("GET", &format!("{sent}/more"), None).is_none());
        assert!(router.at("POST", &sent, None).is_none());
        // The same template twice conflicts, as it does in a trie.
        assert!(router.add_authored("GET", &template).is_err());
    }
}
