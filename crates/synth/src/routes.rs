//! Route templating: concrete recorded paths → `METHOD /path/:param` templates.
//!
//! Every recorded path (all methods together, one tree per origin) goes into a segment trie.
//! Walking it from the root, each child segment of a node is either kept literal or becomes a
//! parameter:
//! - the root's children, and the children of version prefixes under it (`/api/v1/…`,
//!   `/v4beta/…`), are collection roots: always literal, so collections never collapse into a
//!   catch-all;
//! - an identifier-shaped segment (see [`values::is_strong_id_segment`]) is a parameter;
//! - any other segment (a slug, a name) is a parameter only when its value flows through the API
//!   as data: it is the value of an identifier-like field (`id`, `name`, `label`, `*_id`, …) in
//!   some recorded response body. Verb endpoints (`search`, `verify_credentials`) stay literal;
//! - at a node that already has a parameter child, a segment answered only with 4xx is an id
//!   probe (`/images/does-not-exist`) and joins the parameter.
//!
//! Parameter children of a node merge into one `:param` child (their subtrees unioned), so
//! unseen ids still route. The k-th parameter of a path is named `param`, `param2`, `param3`…:
//! names are positional, so templates sharing a prefix agree and compile into one trie.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::observe::Obs;
use crate::values;

/// Identifier-like values seen in response bodies, with the request paths that answered them.
#[derive(Debug, Default)]
pub struct ValueFlow {
    /// Value → request paths (trailing `/` trimmed) whose responses carried it under an
    /// identifier-like key (at most [`MAX_PATHS_PER_VALUE`]).
    values: HashMap<String, Vec<String>>,
    /// Every short response string holding a digit or a dot, under any key: weaker evidence,
    /// used only at positions that already hold a parameter.
    loose: HashSet<String>,
}

/// Paths remembered per identifier value.
pub const MAX_PATHS_PER_VALUE: usize = 32;

impl ValueFlow {
    pub fn collect(obs: &[Obs<'_>]) -> ValueFlow {
        let mut flow = ValueFlow::default();
        for o in obs {
            flow.observe(o, o.resp_json().as_ref());
        }
        flow
    }

    /// Add one observation, `body` being its parsed response body (so a caller walking every
    /// body for several purposes parses each once).
    pub fn observe(&mut self, o: &Obs<'_>, body: Option<&Value>) {
        if values::is_4xx(o.status) {
            return;
        }
        if let Some(v) = body {
            let path = o.ex.request.path.trim_end_matches('/');
            self.walk(v, None, path);
        }
    }

    fn add(&mut self, value: String, path: &str) {
        let paths = self.values.entry(value).or_default();
        if paths.len() < MAX_PATHS_PER_VALUE && !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
    }

    fn walk(&mut self, v: &Value, key: Option<&str>, path: &str) {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    self.walk(child, Some(k), path);
                }
            }
            Value::Array(items) => {
                for child in items {
                    self.walk(child, key, path);
                }
            }
            Value::String(s) => {
                if key.is_some_and(values::is_identifier_key) && !s.is_empty() && s.len() <= 256 {
                    self.add(s.clone(), path);
                } else if s.len() <= 64 && s.bytes().any(|b| b.is_ascii_digit() || b == b'.') {
                    self.loose.insert(s.clone());
                }
            }
            Value::Number(n) if key.is_some_and(values::is_identifier_key) => {
                self.add(n.to_string(), path);
            }
            _ => {}
        }
    }

    /// Whether segment `raw` under one of the concrete `prefixes` (`/v4beta/tags`) is data:
    /// its value was handed out under an identifier-like key by the collection itself
    /// (a request to the prefix) or by the entity itself (a request under `prefix/raw`).
    pub fn confirms(&self, raw: &str, prefixes: &BTreeSet<String>) -> bool {
        let decoded = values::decode_segment(raw);
        for value in [raw, decoded.as_str()] {
            let Some(paths) = self.values.get(value) else {
                continue;
            };
            for p in paths {
                for pre in prefixes {
                    if p == pre {
                        return true;
                    }
                    if let Some(rest) = p.strip_prefix(pre.as_str())
                        && let Some(rest) = rest.strip_prefix('/')
                        && let Some(tail) = rest.strip_prefix(raw)
                        && (tail.is_empty() || tail.starts_with('/'))
                    {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Whether some recorded answer, on any route, handed out segment `raw` (or its decoded
    /// form) under an identifier-like key: weaker than [`ValueFlow::confirms`], which asks for
    /// the collection or the entity itself.
    pub fn hands_out(&self, raw: &str) -> bool {
        self.values.contains_key(raw) || self.values.contains_key(&values::decode_segment(raw))
    }

    /// Whether a segment holding a digit or a dot appears as any response string.
    pub fn loosely_contains_segment(&self, raw: &str) -> bool {
        raw.bytes().any(|b| b.is_ascii_digit() || b == b'.')
            && (self.loose.contains(raw)
                || self.values.contains_key(raw)
                || self.loose.contains(&values::decode_segment(raw)))
    }

    /// Build from explicit (value, path that answered it) pairs (tests).
    pub fn from_values<I: IntoIterator<Item = (String, String)>>(it: I) -> ValueFlow {
        let mut flow = ValueFlow::default();
        for (v, p) in it {
            flow.add(v, &p);
        }
        flow
    }
}

/// One segment of a route template.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Seg {
    Lit(String),
    Param(String),
}

/// Each of `n` observations' route (an index into `groups`) and its position among that
/// route's observations; `None` for an observation no group holds.
pub fn route_of(groups: &[RouteGroup], n: usize) -> Vec<Option<(usize, usize)>> {
    let mut route_of = vec![None; n];
    for (g, group) in groups.iter().enumerate() {
        for (j, &i) in group.obs.iter().enumerate() {
            if let Some(slot) = route_of.get_mut(i) {
                *slot = Some((g, j));
            }
        }
    }
    route_of
}

/// The exchanges of one route template.
#[derive(Debug, Clone)]
pub struct RouteGroup {
    pub id: String,
    pub method: String,
    pub path: String,
    pub origin: Option<String>,
    pub segs: Vec<Seg>,
    /// Parameter names in path order.
    pub params: Vec<String>,
    /// Indexes into the sorted observations, in (session, index) order.
    pub obs: Vec<usize>,
    /// For each of `obs`, the raw path-parameter values in path order.
    pub param_values: Vec<Vec<String>>,
}

/// One record in one session: (session, entity type, key).
pub type RecordKey<'a> = (&'a str, &'a str, String);

/// The 2xx observations of every create route (in `built`, same order as `groups`) whose entity
/// type has a primary key: (entity type, its primary key, observation index), in group order.
pub fn create_answers<'a>(
    groups: &'a [RouteGroup],
    built: &'a [wraith_model::Route],
    entity_types: &'a BTreeMap<String, wraith_model::EntityType>,
    obs: &[Obs<'_>],
) -> Vec<(&'a str, &'a str, usize)> {
    let mut out = Vec::new();
    for (g, route) in groups.iter().zip(built) {
        let (Some(ty), Some(wraith_model::StateOp::Create)) =
            (route.entity_type.as_deref(), route.state_op)
        else {
            continue;
        };
        let Some(pk) = entity_types.get(ty).map(|t| t.primary_key.as_str()) else {
            continue;
        };
        out.extend(
            g.obs
                .iter()
                .filter(|&&i| values::is_2xx(obs[i].status))
                .map(|&i| (ty, pk, i)),
        );
    }
    out
}

/// What a request sent in its top-level arrays, by field (keys, objects).
pub type SentArrays<T> = BTreeMap<String, Vec<T>>;

impl RouteGroup {
    /// Exchange `k`'s last two path values joined by `/`, where the path ends in two
    /// parameters (`/repos/:owner/:name` → `alice/web`): the key of a record a qualifier names
    /// ([`wraith_model::Route::key_qualifier`]).
    pub fn qualified_id(&self, k: usize) -> Option<String> {
        let [.., Seg::Param(qualifier), Seg::Param(id)] = self.segs.as_slice() else {
            return None;
        };
        self.key_value(k, id, Some(qualifier))
    }

    /// Exchange `k`'s value of `param` as a record key: joined with its qualifier's value
    /// when `qualifier` names the parameter right before it (see [`RouteGroup::qualified_id`]).
    pub fn key_value(&self, k: usize, param: &str, qualifier: Option<&str>) -> Option<String> {
        let at = self.params.iter().position(|p| p == param)?;
        let values = self.param_values.get(k)?;
        let own = values::decode_segment(values.get(at)?);
        match self.qualifier_value(values, at, qualifier) {
            Some(q) => Some(format!("{}/{own}", values::decode_segment(q))),
            None => Some(own),
        }
    }

    /// Of one exchange's path `values`, the raw value qualifying the one at `at`: the one
    /// before it, where `qualifier` names that parameter.
    pub fn qualifier_value<'v>(
        &self,
        values: &'v [String],
        at: usize,
        qualifier: Option<&str>,
    ) -> Option<&'v String> {
        let before = at.checked_sub(1)?;
        (qualifier.is_some() && self.params.get(before).map(String::as_str) == qualifier)
            .then(|| values.get(before))
            .flatten()
    }
    /// The route's recorded 2xx answers that are JSON objects, each with what `sent` reads of
    /// its request's top-level arrays (by field); `None` when no request sent a non-empty one,
    /// so most routes' answers are never parsed.
    pub fn answers_to_sent_arrays<T>(
        &self,
        obs: &[Obs<'_>],
        sent: impl Fn(&Obs<'_>) -> SentArrays<T>,
    ) -> Option<Vec<(SentArrays<T>, Value)>> {
        let sends = |o: &Obs<'_>| sent(o).values().any(|items| !items.is_empty());
        if !self.obs.iter().any(|&i| sends(&obs[i])) {
            return None;
        }
        Some(
            self.obs
                .iter()
                .map(|&i| &obs[i])
                .filter(|o| values::is_2xx(o.status))
                .filter_map(|o| {
                    let answer = o.resp_json().filter(Value::is_object)?;
                    Some((sent(o), answer))
                })
                .collect(),
        )
    }

    /// The route's 2xx answers that are JSON objects, each with its observation, in order.
    pub fn object_answers<'o, 'a>(&self, obs: &'o [Obs<'a>]) -> Vec<(&'o Obs<'a>, Value)> {
        self.obs
            .iter()
            .map(|&i| &obs[i])
            .filter(|o| values::is_2xx(o.status))
            .filter_map(|o| o.resp_json().filter(Value::is_object).map(|b| (o, b)))
            .collect()
    }

    /// `METHOD /path`.
    pub fn name(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// The route's name as the check report gives it ([`wraith_model::route_label`]):
    /// [`RouteGroup::name`], with ` on <origin>` for a route of another origin than the base
    /// URL, so diagnostics of one path recorded on two hosts stay apart.
    pub fn label(&self) -> String {
        wraith_model::route_label(&self.name(), self.origin.as_deref())
    }

    /// The last literal (non-version) segment before position `pos`.
    pub fn literal_before(&self, pos: usize) -> Option<&str> {
        self.segs[..pos].iter().rev().find_map(|s| match s {
            Seg::Lit(l) if !l.is_empty() && !values::is_version_prefix(l) => Some(l.as_str()),
            _ => None,
        })
    }
}

/// Most concrete prefixes remembered per trie node.
const MAX_PREFIXES: usize = 64;

#[derive(Debug, Default)]
struct Raw {
    children: BTreeMap<String, Raw>,
    /// Concrete paths of this node (`/v4beta/tags`), at most [`MAX_PREFIXES`].
    prefixes: BTreeSet<String>,
    /// Exchanges through this node answered with anything but a 4xx.
    ok: u64,
    /// Exchanges through this node answered 404.
    not_found: u64,
}

impl Raw {
    fn insert(&mut self, segs: &[&str], status: u16) {
        let mut node = self;
        let mut prefix = String::new();
        for s in segs {
            prefix.push('/');
            prefix.push_str(s);
            node = node.children.entry((*s).to_string()).or_default();
            if node.prefixes.len() < MAX_PREFIXES {
                node.prefixes.insert(prefix.clone());
            }
            if status == 404 {
                node.not_found += 1;
            } else if !values::is_4xx(status) {
                node.ok += 1;
            }
        }
    }

    fn absorb(&mut self, other: Raw) {
        self.ok += other.ok;
        self.not_found += other.not_found;
        for p in other.prefixes {
            if self.prefixes.len() >= MAX_PREFIXES {
                break;
            }
            self.prefixes.insert(p);
        }
        for (k, v) in other.children {
            self.children.entry(k).or_default().absorb(v);
        }
    }
}

/// The template trie.
#[derive(Debug, Default)]
pub struct TemplateTree {
    lits: BTreeMap<String, TemplateTree>,
    param: Option<Box<TemplateTree>>,
}

impl TemplateTree {
    fn build(raw: Raw, prefix_only: bool, flow: &ValueFlow) -> TemplateTree {
        let prefixes = if raw.prefixes.is_empty() {
            // The root: its concrete path is the empty prefix.
            BTreeSet::from([String::new()])
        } else {
            raw.prefixes
        };
        let mut decided: Vec<(String, Raw, bool)> = raw
            .children
            .into_iter()
            .map(|(seg, child)| {
                let param = !prefix_only
                    && !seg.is_empty()
                    && (values::is_strong_id_segment(&seg)
                        || (!values::is_version_prefix(&seg) && flow.confirms(&seg, &prefixes)));
                (seg, child, param)
            })
            .collect();
        // Siblings some answer handed out as a name or an id, wherever it did (a repository
        // `name` a create answered, then named under `/user/starred/:owner/`): two or more of
        // them make the position one of ids, as a confirmed sibling does.
        let handed_out = |seg: &str| {
            !prefix_only
                && !seg.is_empty()
                && !values::is_version_prefix(seg)
                && flow.hands_out(seg)
        };
        // One sibling handed out as a name (an owner's `login`) that, joined by `/` with at
        // least two of its own children, spells names handed out too (the repositories'
        // `full_name`) is the first of two values naming one record
        // (`/user/starred/:owner/:name`), however few owners were recorded.
        let qualifies = |seg: &str, child: &Raw| {
            handed_out(seg)
                && child
                    .children
                    .keys()
                    .filter(|c| flow.hands_out(&format!("{seg}/{c}")))
                    .count()
                    >= 2
        };
        let ids_here = decided.iter().any(|(_, _, p)| *p)
            || decided.iter().filter(|(seg, _, _)| handed_out(seg)).count() >= 2
            || decided.iter().any(|(seg, child, _)| qualifies(seg, child));
        if ids_here {
            // This position holds ids: a sibling answered only 404 is an id probe, a sibling
            // holding digits or dots that appears as any response value is an id, and so is
            // one some answer handed out as a name or an id.
            for (seg, child, param) in decided.iter_mut() {
                if !*param
                    && !seg.is_empty()
                    && !values::is_version_prefix(seg)
                    && ((child.ok == 0 && child.not_found > 0)
                        || flow.loosely_contains_segment(seg)
                        || handed_out(seg))
                {
                    *param = true;
                }
            }
        }
        let mut tree = TemplateTree::default();
        let mut merged: Option<Raw> = None;
        for (seg, child, param) in decided {
            if param {
                match merged.as_mut() {
                    Some(m) => m.absorb(child),
                    None => merged = Some(child),
                }
            } else {
                let child_prefix_only = prefix_only && values::is_version_prefix(&seg);
                let sub = TemplateTree::build(child, child_prefix_only, flow);
                tree.lits.insert(seg, sub);
            }
        }
        if let Some(m) = merged {
            tree.param = Some(Box::new(TemplateTree::build(m, false, flow)));
        }
        tree
    }

    /// Build the tree for a set of concrete paths, each with its response status.
    pub fn from_paths<'s, I>(paths: I, flow: &ValueFlow) -> TemplateTree
    where
        I: IntoIterator<Item = (Vec<&'s str>, u16)>,
    {
        let mut raw = Raw::default();
        for (segs, status) in paths {
            raw.insert(&segs, status);
        }
        TemplateTree::build(raw, true, flow)
    }

    /// Template a concrete path: literal children win, else the parameter child.
    pub fn template(&self, segs: &[&str]) -> (Vec<Seg>, Vec<String>) {
        let mut out = Vec::with_capacity(segs.len());
        let mut values_out = Vec::new();
        let mut node = Some(self);
        let mut k = 0usize;
        for s in segs {
            let current = node;
            node = None;
            if let Some(n) = current {
                if let Some(next) = n.lits.get(*s) {
                    out.push(Seg::Lit((*s).to_string()));
                    node = Some(next);
                    continue;
                }
                if let Some(next) = n.param.as_deref() {
                    k += 1;
                    out.push(Seg::Param(param_name(k)));
                    values_out.push((*s).to_string());
                    node = Some(next);
                    continue;
                }
            }
            // Not in the tree (cannot happen for inserted paths): keep it literal.
            out.push(Seg::Lit((*s).to_string()));
        }
        (out, values_out)
    }
}

/// Name of the k-th (1-based) parameter of a path.
pub fn param_name(k: usize) -> String {
    if k <= 1 {
        "param".to_string()
    } else {
        format!("param{k}")
    }
}

/// `/a/:param/b` from segments.
pub fn render_path(segs: &[Seg]) -> String {
    let mut s = String::new();
    for seg in segs {
        s.push('/');
        match seg {
            Seg::Lit(l) => s.push_str(&wraith_model::request_key::escape_literal_segment(l)),
            Seg::Param(p) => {
                s.push(':');
                s.push_str(p);
            }
        }
    }
    if s.is_empty() {
        s.push('/');
    }
    s
}

/// `<method>_<path words>_<8 hex of sha256("METHOD path")>`; the origin, when there is one,
/// is hashed too (`METHOD origin/path`) so the same path on two hosts gets two ids.
pub fn route_id(method: &str, path: &str, origin: Option<&str>) -> String {
    let mut words: Vec<String> = Vec::new();
    for piece in path.split('/') {
        let piece = piece.trim_start_matches(':');
        let mut word = String::new();
        for c in piece.chars() {
            if c.is_ascii_alphanumeric() {
                word.push(c.to_ascii_lowercase());
            } else if !word.ends_with('_') && !word.is_empty() {
                word.push('_');
            }
        }
        let word = word.trim_end_matches('_').to_string();
        if !word.is_empty() {
            words.push(word);
        }
    }
    let hashed = match origin {
        Some(o) => format!("{method} {o}{path}"),
        None => format!("{method} {path}"),
    };
    let digest = Sha256::digest(hashed.as_bytes());
    let hex = wraith_model::request_key::hex(&digest[..4]);
    let mut id = method.to_ascii_lowercase();
    for w in words {
        id.push('_');
        id.push_str(&w);
    }
    id.push('_');
    id.push_str(&hex);
    id
}

/// Group every observation under its route template. Sorted by (path, method, origin).
pub fn template_routes(obs: &[Obs<'_>], flow: &ValueFlow) -> Vec<RouteGroup> {
    let mut by_origin: BTreeMap<Option<&str>, Vec<usize>> = BTreeMap::new();
    for (i, o) in obs.iter().enumerate() {
        by_origin.entry(o.origin).or_default().push(i);
    }
    let mut groups: BTreeMap<(String, String, Option<String>), RouteGroup> = BTreeMap::new();
    for (origin, idxs) in by_origin {
        let tree = TemplateTree::from_paths(
            idxs.iter()
                .map(|i| (obs[*i].segments.clone(), obs[*i].status)),
            flow,
        );
        for i in idxs {
            let o = &obs[i];
            let (segs, vals) = tree.template(&o.segments);
            let path = render_path(&segs);
            let key = (path.clone(), o.method.clone(), origin.map(str::to_string));
            let group = groups.entry(key).or_insert_with(|| {
                let params = segs
                    .iter()
                    .filter_map(|s| match s {
                        Seg::Param(p) => Some(p.clone()),
                        Seg::Lit(_) => None,
                    })
                    .collect();
                RouteGroup {
                    id: route_id(&o.method, &path, origin),
                    method: o.method.clone(),
                    path: path.clone(),
                    origin: origin.map(str::to_string),
                    segs: segs.clone(),
                    params,
                    obs: Vec::new(),
                    param_values: Vec::new(),
                }
            });
            group.obs.push(i);
            group.param_values.push(vals);
        }
    }
    let mut out = merge_spellings_filed_as_one(groups.into_values().collect());
    // Observations were pushed origin by origin; restore (session, index) order per route.
    for g in &mut out {
        let mut pairs: Vec<(usize, Vec<String>)> =
            g.obs.drain(..).zip(g.param_values.drain(..)).collect();
        pairs.sort_by_key(|(i, _)| *i);
        for (i, v) in pairs {
            g.obs.push(i);
            g.param_values.push(v);
        }
    }
    out
}

/// `groups` (sorted by path, method, origin) with the routes of one method and origin that the
/// engine's router files as one (`wraith_model::validate::router_template`: `/x` and `/x/`, a
/// doubled slash) made one, under the spelling with the most recorded exchanges (ties: the
/// first in path order). A second such route would never be chosen and its recordings never
/// served; exact replay still tells the spellings apart, by the path as received. Sorted as
/// `groups` were.
fn merge_spellings_filed_as_one(groups: Vec<RouteGroup>) -> Vec<RouteGroup> {
    fn key(g: &RouteGroup) -> (String, String, Option<String>) {
        (
            wraith_model::validate::router_template(&g.path),
            g.method.clone(),
            g.origin.clone(),
        )
    }
    let mut by_key: BTreeMap<(String, String, Option<String>), Vec<RouteGroup>> = BTreeMap::new();
    for g in groups {
        by_key.entry(key(&g)).or_default().push(g);
    }
    let mut out: Vec<RouteGroup> = by_key
        .into_values()
        .filter_map(|mut spellings| {
            // `max_by_key` keeps the last of equals: reversed, that is the first in path order.
            let winner = spellings
                .iter()
                .enumerate()
                .rev()
                .max_by_key(|(_, g)| g.obs.len())
                .map(|(i, _)| i)?;
            let mut merged = spellings.swap_remove(winner);
            for other in spellings {
                merged.obs.extend(other.obs);
                merged.param_values.extend(other.param_values);
            }
            Some(merged)
        })
        .collect();
    out.sort_by(|a, b| (&a.path, &a.method, &a.origin).cmp(&(&b.path, &b.method, &b.origin)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpl(paths: &[(&str, u16)], flow: &[(&str, &str)]) -> Vec<String> {
        let flow = ValueFlow::from_values(flow.iter().map(|(v, p)| (v.to_string(), p.to_string())));
        let split: Vec<(Vec<&str>, u16)> = paths
            .iter()
            .map(|(p, e)| (p.trim_start_matches('/').split('/').collect(), *e))
            .collect();
        let tree = TemplateTree::from_paths(split.clone(), &flow);
        split
            .iter()
            .map(|(s, _)| render_path(&tree.template(s).0))
            .collect()
    }

    #[test]
    fn numeric_ids_collapse_and_verbs_stay_literal() {
        let out = tmpl(
            &[
                ("/api/v1/accounts/117440810532227399", 200),
                ("/api/v1/accounts/verify_credentials", 200),
                ("/api/v1/accounts/117440810233042393/follow", 200),
                ("/api/v1/accounts/search", 200),
            ],
            &[],
        );
        assert_eq!(
            out,
            vec![
                "/api/v1/accounts/:param",
                "/api/v1/accounts/verify_credentials",
                "/api/v1/accounts/:param/follow",
                "/api/v1/accounts/search"
            ]
        );
    }

    #[test]
    fn collection_roots_never_become_params_even_when_values_match() {
        let out = tmpl(
            &[("/v4beta/linode/instances", 200), ("/v4beta/tags", 200)],
            &[("v4beta", "/v4beta/tags"), ("linode", "/v4beta/tags")],
        );
        assert_eq!(out, vec!["/v4beta/linode/instances", "/v4beta/tags"]);
    }

    #[test]
    fn slugs_become_params_only_when_their_collection_hands_them_out() {
        let out = tmpl(
            &[
                ("/v4beta/tags/go-tag-test", 200),
                ("/v4beta/regions/vpc-availability", 200),
                ("/v4beta/linode/instances/1/password", 200),
            ],
            &[
                ("go-tag-test", "/v4beta/tags"),
                ("vpc-availability", "/v4beta/somewhere/else"),
                ("password", "/v4beta/linode/stackscripts"),
            ],
        );
        assert_eq!(
            out,
            vec![
                "/v4beta/tags/:param",
                "/v4beta/regions/vpc-availability",
                "/v4beta/linode/instances/:param/password"
            ]
        );
    }

    #[test]
    fn one_owner_whose_names_joined_were_handed_out_is_a_parameter() {
        // Every star was of alice's repositories: her `login` alone was handed out, and with
        // each name below it the repositories' `full_name`.
        let flow = [
            ("alice", "/user"),
            ("amber", "/user/repos"),
            ("birch", "/user/repos"),
            ("alice/amber", "/user/repos"),
            ("alice/birch", "/user/repos"),
        ];
        let out = tmpl(
            &[
                ("/user/starred/alice/amber", 204),
                ("/user/starred/alice/birch", 204),
            ],
            &flow,
        );
        assert_eq!(
            out,
            vec![
                "/user/starred/:param/:param2",
                "/user/starred/:param/:param2"
            ]
        );
    }

    #[test]
    fn a_handed_out_word_over_handed_out_ids_is_no_owner_unless_joined_they_were() {
        // `keys` was some record's name, and the key ids were handed out, but no answer held
        // `keys/1`: a collection, not an owner.
        let flow = [
            ("keys", "/v4beta/things"),
            ("1", "/v4beta/object-storage/keys"),
            ("2", "/v4beta/object-storage/keys"),
        ];
        let out = tmpl(
            &[
                ("/v4beta/object-storage/keys/1", 200),
                ("/v4beta/object-storage/keys/2", 200),
            ],
            &flow,
        );
        assert_eq!(
            out,
            vec![
                "/v4beta/object-storage/keys/:param",
                "/v4beta/object-storage/keys/:param"
            ]
        );
    }

    #[test]
    fn names_a_create_handed_out_join_a_position_of_ids_wherever_they_were_answered() {
        // Repository names a `POST /repos` answered under `name`: one is read back under its
        // owner (confirmed there), the others only deleted or starred, which answer nothing.
        let flow = [
            ("alice", "/repos"),
            ("bob", "/repos"),
            ("amber-compass", "/repos"),
            ("amber-compass", "/repos/alice/amber-compass"),
            ("frozen-quill", "/repos"),
            ("ivory-falcon", "/repos"),
            ("olive-otter", "/repos"),
        ];
        let out = tmpl(
            &[
                ("/repos/alice/amber-compass", 200),
                ("/repos/alice/frozen-quill", 204),
                ("/user/starred/alice/ivory-falcon", 204),
                ("/user/starred/bob/olive-otter", 204),
            ],
            &flow,
        );
        assert_eq!(
            out,
            vec![
                "/repos/:param/:param2",
                "/repos/:param/:param2",
                "/user/starred/:param/:param2",
                "/user/starred/:param/:param2"
            ]
        );
    }

    #[test]
    fn one_handed_out_name_among_literal_siblings_stays_literal() {
        // A verb that happens to be some record's name is not a position of ids by itself.
        let out = tmpl(
            &[
                ("/api/v1/timelines/home", 200),
                ("/api/v1/timelines/public", 200),
            ],
            &[("home", "/api/v1/lists")],
        );
        assert_eq!(
            out,
            vec!["/api/v1/timelines/home", "/api/v1/timelines/public"]
        );
    }

    #[test]
    fn not_found_probes_join_a_parameter_position_but_failed_verbs_do_not() {
        let out = tmpl(
            &[
                ("/v4beta/images/private%2F160700", 200),
                ("/v4beta/images/does-not-exist", 404),
                ("/v4beta/images/sharegroups", 200),
                ("/v4beta/images/upload", 400),
            ],
            &[],
        );
        assert_eq!(
            out,
            vec![
                "/v4beta/images/:param",
                "/v4beta/images/:param",
                "/v4beta/images/sharegroups",
                "/v4beta/images/upload"
            ]
        );
    }

    #[test]
    fn nested_params_are_named_by_position() {
        let out = tmpl(
            &[
                ("/v4beta/linode/instances/123/disks/456", 200),
                ("/v4beta/linode/instances/124/configs/7/interfaces/9", 200),
            ],
            &[],
        );
        assert_eq!(
            out,
            vec![
                "/v4beta/linode/instances/:param/disks/:param2",
                "/v4beta/linode/instances/:param/configs/:param2/interfaces/:param3"
            ]
        );
    }

    #[test]
    fn route_ids_are_stable_words_plus_hash() {
        let id = route_id("GET", "/customers/:param", None);
        assert!(id.starts_with("get_customers_param_"), "{id}");
        assert_eq!(id.len(), "get_customers_param_".len() + 8);
        assert_eq!(id, route_id("GET", "/customers/:param", None));
        assert_ne!(id, route_id("GET", "/customers/:param", Some("http://x")));
    }
}
