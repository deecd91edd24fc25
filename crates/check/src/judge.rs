//! Judging one replayed exchange: the recorded response against the twin's answer.
//!
//! Order of the rules, each final when it fires:
//! 1. a refusal (provenance `miss`, the structured 501 route-miss body, a leaked placeholder) is a
//!    `synthesized_refusal`, whatever the status;
//! 2. a different status is a `status_mismatch`;
//! 3. otherwise the `content-type` header, the challenge headers (`www-authenticate`,
//!    `proxy-authenticate`) and the body are diffed ([`crate::diff`]).

use std::borrow::Cow;
use std::collections::BTreeMap;

use foldhash::HashMap;

use serde_json::{Value, json};
use wraith_engine::Provenance;
use wraith_model::{BodyTemplate, EchoSource, Model, Node, Route, StateOp};
use wraith_recording::Exchange;

use crate::diff::{
    BodyDiff, Category, Divergence, EchoContext, EnumIndex, fit, json_eq, leaked_placeholder,
};
use crate::rules::{DiffRules, Suppressed};

/// The twin's answer to one replayed request, however it was obtained (in process or over HTTP).
#[derive(Debug, Clone)]
pub struct Observed {
    pub status: u16,
    /// Application headers (lowercase names); control headers are read into the fields below.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// `X-Wraith-Provenance`, when the twin said.
    pub provenance: Option<Provenance>,
    /// `X-Wraith-Route`: `METHOD /path` of the matched route.
    pub route: Option<String>,
    /// A recognized `X-Wraith-Replay` claim.
    pub replay: Option<ReplayClaim>,
}

/// An exactness claim the twin made about the body (`X-Wraith-Replay`): the engine's own type,
/// so the twin that writes the header and the checker that reads it cannot drift apart.
pub use wraith_engine::ReplayClaim;

/// Parse an `X-Wraith-Replay` value by the contract's fail-closed rule: every token must be
/// recognized, otherwise there is no claim at all (see [`ReplayClaim::parse`]).
pub fn parse_replay_header(value: &str) -> Option<ReplayClaim> {
    ReplayClaim::parse(value.trim())
}

/// Parse an `X-Wraith-Provenance` value.
pub fn parse_provenance(value: &str) -> Option<Provenance> {
    Some(match value.trim() {
        "recorded" => Provenance::Recorded,
        "template" => Provenance::Template,
        "handler" => Provenance::Handler,
        "fixture" => Provenance::Fixture,
        "fault" => Provenance::Fault,
        "miss" => Provenance::Miss,
        _ => return None,
    })
}

/// The twin's outbound body policy, applied to a recorded body before it is compared, so both
/// sides are in the twin's outbound-policy space (contract: `outbound-policy=applied`). Called
/// with the exchange's source (`<session>/<index>`), its request, the route it is scored under
/// and the recorded JSON body.
#[derive(Clone)]
pub struct OutboundHook(
    #[allow(clippy::type_complexity)]
    pub  std::sync::Arc<dyn Fn(&str, &wraith_engine::Request, &str, &mut Value) + Send + Sync>,
);

impl std::fmt::Debug for OutboundHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutboundHook(<fn>)")
    }
}

/// Comparison settings.
#[derive(Debug, Clone, Default)]
pub struct DiffOptions {
    /// `[diff] ignore_headers`: headers never compared (lowercase). Only `content-type`, the
    /// challenges ([`CHALLENGE_HEADERS`]) and the URL headers ([`URL_HEADERS`]) are compared
    /// at all, so this can only remove those.
    pub ignore_headers: Vec<String>,
    /// See [`OutboundHook`]; `None` compares the recorded bytes as they are.
    pub outbound: Option<OutboundHook>,
    /// The user's `[diff]` rules: `[diff.fields]` classes (dropped, like every relaxation, under
    /// an exactness claim) and `[[diff.suppress]]` (applied to the verdict, never to a refusal).
    pub rules: Option<std::sync::Arc<DiffRules>>,
    /// `[[diff.tagged_union_policy]]`: how an element of a tagged-union list whose tag was
    /// never recorded is judged, per route (`reject_unknown` when no entry names the route).
    pub unions: crate::union::UnionRules,
}

impl DiffOptions {
    /// Whether `[diff] ignore_headers` leaves header `name` out of the comparison.
    fn ignores_header(&self, name: &str) -> bool {
        self.ignore_headers
            .iter()
            .any(|h| h.eq_ignore_ascii_case(name))
    }
}

/// Lookups into the model the judge needs, built once per run.
pub struct ModelIndex<'m> {
    model: &'m Model,
    by_name: HashMap<String, usize>,
    by_source: HashMap<&'m str, usize>,
    enums: EnumIndex<'m>,
    routes: crate::coverage::RouteIndex<'m>,
    /// The entity type of the records a nested key holds, from every route's
    /// `records_by_value` (an issue's `labels` → `labels`).
    nested_types: BTreeMap<String, String>,
    /// For a route adding members by a path segment whose members a create names by value
    /// (`PUT .../issues/:n/labels/:name`), by route label: the members' entity type, the
    /// records its answer lists.
    member_types: HashMap<String, &'m str>,
}

impl<'m> ModelIndex<'m> {
    pub fn new(model: &'m Model) -> ModelIndex<'m> {
        let mut by_name = HashMap::default();
        let mut by_source = HashMap::default();
        for (i, r) in model.routes.iter().enumerate() {
            by_name.insert(r.label(), i);
            for e in &r.exact {
                for m in &e.moments {
                    by_source.entry(m.source.as_str()).or_insert(i);
                }
            }
            for v in &r.variants {
                for s in &v.evidence.sources {
                    by_source.entry(s.as_str()).or_insert(i);
                }
            }
        }
        let mut nested_types = BTreeMap::new();
        for rule in model.routes.iter().flat_map(|r| &r.records_by_value) {
            if let Some(key) = rule.at.strip_prefix('/').filter(|k| !k.contains('/')) {
                nested_types
                    .entry(key.replace("~0", "~"))
                    .or_insert_with(|| rule.entity_type.clone());
            }
        }
        let mut member_types = HashMap::default();
        for r in &model.routes {
            let Some(member) = &r.segment_member else {
                continue;
            };
            if let Some(rule) = model.members_named_by_value(member) {
                member_types.insert(r.label(), rule.entity_type.as_str());
            }
        }
        ModelIndex {
            model,
            by_name,
            by_source,
            enums: EnumIndex::new(model),
            routes: crate::coverage::RouteIndex::new(model),
            nested_types,
            member_types,
        }
    }

    /// The entity types of the records nested keys hold (`crate::diff::position_kind`).
    pub(crate) fn nested_types(&self) -> &BTreeMap<String, String> {
        &self.nested_types
    }

    /// The model route a recorded request belongs to ([`crate::coverage::RouteIndex`]).
    pub fn route_for(&self, method: &str, path: &str, origin: Option<&str>) -> Option<&'m Route> {
        self.routes.route_for(method, path, origin)
    }

    /// The kind of record (`<entity type>:<primary key>`, as [`crate::diff::position_kind`]
    /// names a record's own field) the path segment at `position` (in `path` split at `/`)
    /// names, read from `route`, the model route the request belongs to: a parent parameter names its
    /// parent's type, the last parameter of a read, update or delete the route's own type.
    /// `None` for a literal, a qualifier (an owner naming nothing on its own) or a request of
    /// no route.
    pub fn segment_kind(&self, route: &Route, path: &str, position: usize) -> Option<String> {
        let param = route.path.split('/').nth(position)?.strip_prefix(':')?;
        let entity_type = match route.parent_params.iter().find(|p| p.param == param) {
            Some(parent) => parent.entity_type.as_str(),
            None => {
                let own = matches!(
                    route.state_op,
                    Some(StateOp::Read | StateOp::Update | StateOp::Delete)
                ) && route.params.last().is_some_and(|p| p == param);
                if !own {
                    return None;
                }
                route.entity_type.as_deref()?
            }
        };
        let parents = match route.parent_params.iter().position(|p| p.param == param) {
            Some(j) => j,
            None => route.parent_params.len(),
        };
        let pk = &self.model.entity_types.get(entity_type)?.primary_key;
        let kind = self.scoped(entity_type, route, path, parents);
        Some(format!("{kind}:{pk}"))
    }

    /// `entity_type`, with the keys of the first `parents` parent parameters of `route` as
    /// `path` names them after `@` when the type is keyed per parent ([`record_kind`]).
    fn scoped<'t>(
        &self,
        entity_type: &'t str,
        route: &Route,
        path: &str,
        parents: usize,
    ) -> Cow<'t, str> {
        let per_parent = self
            .model
            .entity_types
            .get(entity_type)
            .is_some_and(|t| t.keyed_per_parent);
        if !per_parent {
            return Cow::Borrowed(entity_type);
        }
        let keys: Vec<&str> = route
            .parent_params
            .iter()
            .take(parents)
            .map(|p| param_value(route, path, &p.param).unwrap_or(""))
            .collect();
        Cow::Owned(format!("{entity_type}@{}", keys.join("/")))
    }

    /// The model's `enum` positions, for [`BodyDiff::with_enums`].
    pub(crate) fn enums(&self) -> &EnumIndex<'m> {
        &self.enums
    }

    pub fn model(&self) -> &'m Model {
        self.model
    }

    /// The route called `METHOD /path` (with ` on <origin>` for another origin's route:
    /// [`wraith_model::route_label`]).
    pub fn route(&self, name: &str) -> Option<&'m Route> {
        self.by_name.get(name).map(|&i| &self.model.routes[i])
    }

    /// The route a recorded exchange (`<session>/<index>`) was folded into by synth.
    pub fn route_of_source(&self, source: &str) -> Option<&'m Route> {
        self.by_source.get(source).map(|&i| &self.model.routes[i])
    }
}

/// The judgement of one exchange.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    /// Route the exchange is scored under.
    pub route: String,
    pub divergences: Vec<Divergence>,
    /// Positions compared (status, headers, body leaves). A body equal byte for byte to the
    /// recording is not walked, so its leaves are not counted (the score is 10000 either way).
    pub compared: u64,
    /// 10000 when nothing diverged; 0 on a refusal or a status mismatch; otherwise the share of
    /// compared positions that agreed, capped at 9999 so a divergent exchange never rounds up
    /// to a pass.
    pub score_bp: u32,
    /// Which rules ran and what the `[diff]` rules did (the report's dimensions and
    /// `suppressed`).
    pub facets: Facets,
}

/// What the dimension scores and the suppression report need to know about one judgement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facets {
    /// The header rule ran (status matched, no refusal, `content-type` not ignored, or a
    /// challenge header compared).
    pub headers_compared: bool,
    /// The body rules ran (status matched, no refusal, a body HTTP delivers: not a `HEAD`,
    /// not a 204 or 304).
    pub body_compared: bool,
    /// Paths of the divergences found at `echoed` positions, and of `symbol_mismatch` ones
    /// ([`crate::symbols`]): the symbol-consistency dimension.
    pub echo_failures: Vec<String>,
    /// Divergences a `[[diff.suppress]]` rule removed, with the rule.
    pub suppressed: Vec<Suppressed>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.divergences.is_empty()
    }

    /// Recompute `score_bp` from `divergences` and `compared` (after divergences were removed),
    /// keeping everything else.
    pub fn rescore(&mut self) {
        self.score_bp = score_of(self.divergences.len(), self.compared);
    }
}

/// Route name the exchange is scored under: the route synth folded it into when the model
/// knows the exchange, else the route the twin matched, else the concrete request.
pub fn attribute_route(
    index: &ModelIndex<'_>,
    source: &str,
    ex: &Exchange,
    obs: &Observed,
) -> String {
    if let Some(r) = index.route_of_source(source) {
        return r.label();
    }
    if let Some(r) = &obs.route {
        return r.clone();
    }
    let request = format!("{} {}", ex.request.method, ex.request.path);
    format!(
        "{} (no route)",
        wraith_model::route_label(&request, ex.request.origin.as_deref())
    )
}

/// The recorded response body of one exchange, parsed once: [`crate::run::prepare`] builds these
/// for a whole run ahead of the replay (setup, like reading the recordings), so a body is never
/// parsed again per replay.
#[derive(Debug, Clone)]
pub struct ExpectedBody {
    /// The recorded bytes (server frames joined).
    pub bytes: Vec<u8>,
    /// The same bytes as the judge sees them.
    pub body: Body,
}

impl ExpectedBody {
    /// The recorded response body of `ex`.
    pub fn of(ex: &Exchange) -> ExpectedBody {
        ExpectedBody::of_bytes(ex.response_body())
    }

    /// A recorded response body given as its bytes.
    pub fn of_bytes(bytes: Vec<u8>) -> ExpectedBody {
        let body = parse_body(&bytes);
        ExpectedBody { bytes, body }
    }
}

/// Whether the recorded answer's body is one HTTP can deliver, and so one the check compares:
/// not the answer to a `HEAD`, and not of a status that carries no body (204, 304:
/// [`wraith_engine::status_carries_body`]). A body a recording holds there (a HAR that kept
/// one, an upstream that sent one anyway) reaches no client of the API or of the twin, which
/// answers such a status without one in process and over HTTP alike.
pub(crate) fn body_deliverable(ex: &Exchange) -> bool {
    !ex.request.method.eq_ignore_ascii_case("HEAD")
        && wraith_engine::status_carries_body(ex.response.status)
}

/// Judge one exchange.
pub fn judge(
    index: &ModelIndex<'_>,
    source: &str,
    ex: &Exchange,
    obs: &Observed,
    opts: &DiffOptions,
) -> Verdict {
    judge_prepared(index, source, ex, &ExpectedBody::of(ex), obs, opts)
}

/// Body diffs already computed in a run, reused when the same recorded body is answered with the
/// same bytes under the same matched route, status and exactness claim, for a request carrying
/// the same values for every echo hole the answer could be judged under (a twin answering a
/// recorded list the same way in every session). The body diff is a function of the template
/// (picked among the matched route's variants of the answered status, from the answer), the two
/// trees (fixed by their bytes) and, only through echo holes, the request: so a reused diff is
/// exactly the one the walk would produce. Only diffs that found a divergence are kept (a
/// passing answer is usually caught by the byte comparison before any walk).
#[derive(Debug, Default)]
pub struct DiffCache {
    entries: HashMap<u64, Vec<CachedDiff>>,
    /// Echo sources of every JSON template of a route's variants, by `(route, status)`.
    sources: HashMap<(String, u16), Vec<EchoSource>>,
    /// Walked [`generated_pairs`] results, reused on the same terms as the body diffs (see
    /// [`generated_pairs_cached`]).
    pairs: HashMap<u64, Vec<CachedPairs>>,
    /// Whether some JSON template of a route's variants has a generated position, by
    /// `(route, status)` (see [`may_generate`]).
    generates: HashMap<(String, u16), bool>,
}

/// One walked [`generated_pairs`] result and everything it was computed from.
#[derive(Debug)]
struct CachedPairs {
    expected: Vec<u8>,
    echoed: Vec<Option<Value>>,
    actual: Vec<u8>,
    route: Option<String>,
    status: u16,
    /// [`record_kind`] of the exchange.
    kind: Option<String>,
    pairs: Vec<crate::idmap::IdPair>,
}

#[derive(Debug)]
struct CachedDiff {
    expected: Vec<u8>,
    echoed: Vec<Option<Value>>,
    actual: Vec<u8>,
    route: Option<String>,
    status: u16,
    exact: bool,
    divergences: Vec<Divergence>,
    compared: u64,
    echo_failures: Vec<String>,
}

impl DiffCache {
    /// Diffs kept.
    pub fn len(&self) -> usize {
        self.entries.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The echo sources of every template [`pick_template`] can choose for `obs`.
    fn echo_sources(&mut self, index: &ModelIndex<'_>, obs: &Observed) -> &[EchoSource] {
        let Some(name) = obs.route.as_deref() else {
            return &[];
        };
        self.sources
            .entry((name.to_string(), obs.status))
            .or_insert_with(|| {
                let mut out = Vec::new();
                for v in index
                    .route(name)
                    .into_iter()
                    .flat_map(|r| r.variants.iter())
                    .filter(|v| v.status == obs.status)
                {
                    if let BodyTemplate::Json { root } = &v.body {
                        echo_sources(root, &mut out);
                    }
                    // `[diff] split_variants` may judge under a per-type template instead.
                    for t in v.union.iter().flat_map(|u| u.templates.iter()) {
                        echo_sources(t, &mut out);
                    }
                }
                out
            })
    }

    fn key(expected: &[u8], obs: &Observed, echoed: &[Option<Value>]) -> u64 {
        use std::hash::{Hash, Hasher};
        /// Length and both ends of a body: bodies are compared in full on a hit, so the key
        /// only has to spread them, and hashing whole large bodies would cost a walk's worth.
        fn sample(b: &[u8], h: &mut impl Hasher) {
            const END: usize = 512;
            b.len().hash(h);
            b[..b.len().min(END)].hash(h);
            b[b.len().saturating_sub(END)..].hash(h);
        }
        use std::hash::BuildHasher;
        let mut h = foldhash::fast::FixedState::default().build_hasher();
        sample(expected, &mut h);
        sample(&obs.body, &mut h);
        obs.route.hash(&mut h);
        obs.status.hash(&mut h);
        obs.replay.is_some().hash(&mut h);
        echoed.len().hash(&mut h);
        h.finish()
    }

    fn get(
        &self,
        key: u64,
        expected: &[u8],
        obs: &Observed,
        echoed: &[Option<Value>],
    ) -> Option<&CachedDiff> {
        self.entries.get(&key)?.iter().find(|c| {
            c.status == obs.status
                && c.echoed == echoed
                && c.exact == obs.replay.is_some()
                && c.route == obs.route
                && c.actual == obs.body
                && c.expected == expected
        })
    }
}

/// [`judge`] with the recorded body already parsed (`expected` must be `ExpectedBody::of(ex)`).
pub fn judge_prepared(
    index: &ModelIndex<'_>,
    source: &str,
    ex: &Exchange,
    expected: &ExpectedBody,
    obs: &Observed,
    opts: &DiffOptions,
) -> Verdict {
    judge_with_cache(index, source, ex, expected, obs, opts, None)
}

/// [`judge_prepared`], reusing and filling `cache` (see [`DiffCache`]). The `[[diff.suppress]]`
/// rules of `opts` are applied last: what they remove is listed in `facets.suppressed`, and an
/// exchange whose only divergences they removed passes.
pub fn judge_with_cache(
    index: &ModelIndex<'_>,
    source: &str,
    ex: &Exchange,
    expected: &ExpectedBody,
    obs: &Observed,
    opts: &DiffOptions,
    cache: Option<&mut DiffCache>,
) -> Verdict {
    judge_with_memo(index, source, ex, expected, obs, opts, cache, None)
}

/// What judging one answer found out about it that the id-flow step
/// ([`generated_pairs_memo`]) would otherwise work out again for the same exchange: whether
/// the answer is the recorded tree serialized, and the answer's parsed body. Fresh for every
/// exchange; filled only with what the judge computed anyway.
#[derive(Debug, Default)]
pub struct AnswerMemo {
    /// `serializes_either_way(recorded tree, answer bytes)` for the recorded body as recorded
    /// (no outbound hook): the very test [`generated_pairs`] starts with.
    equal_tree: Option<bool>,
    /// `parse_body(answer bytes)`.
    parsed: Option<Body>,
    /// The generated pairs a walk of `parsed` under [`pick_template`]'s template against the
    /// recorded body as recorded collects: the symbol check walks exactly that, so it collects
    /// them on the way and the id-flow step does not walk it again.
    pairs: Option<Vec<crate::idmap::IdPair>>,
    /// `echo_context(ex, obs)` as the judge built it for its body walk: the id-flow step needs
    /// the same context for the same exchange and answer.
    echo: Option<EchoContext>,
    /// `ids.scan(recorded bytes)` for the session's id map the judge renamed the recording
    /// with ([`judge_in_session`]): the symbol check asks the same of the same bytes and map.
    pub(crate) mentions: Option<crate::idmap::Mentions>,
}

impl AnswerMemo {
    /// A memo that already holds the answer's parsed body, when the twin handed out its
    /// tree: `tree` must be exactly what `parse_body(answer bytes)` gives as JSON.
    pub(crate) fn with_answer(tree: Option<Value>) -> AnswerMemo {
        AnswerMemo {
            parsed: tree.map(Body::Json),
            ..AnswerMemo::default()
        }
    }

    /// The answer's parsed body (`parse_body(answer)`, where `answer` is the judged answer's
    /// bytes): the judge's parse when it made one, else parsed now and kept, so the id-flow
    /// step that follows does not parse it again.
    pub(crate) fn parsed_answer(&mut self, answer: &[u8]) -> &Body {
        self.parsed.get_or_insert_with(|| parse_body(answer))
    }

    /// Keep the generated pairs of the walk described at [`AnswerMemo::pairs`] for the id-flow
    /// step.
    pub(crate) fn keep_pairs(&mut self, pairs: Vec<crate::idmap::IdPair>) {
        self.pairs = Some(pairs);
    }
}

/// [`judge_with_cache`], leaving in `memo` (when given) what the id-flow step can reuse.
#[allow(clippy::too_many_arguments)]
pub fn judge_with_memo(
    index: &ModelIndex<'_>,
    source: &str,
    ex: &Exchange,
    expected: &ExpectedBody,
    obs: &Observed,
    opts: &DiffOptions,
    cache: Option<&mut DiffCache>,
    memo: Option<&mut AnswerMemo>,
) -> Verdict {
    judge_in_session(
        index, source, ex, ex, expected, obs, opts, cache, memo, None,
    )
}

/// [`judge_with_memo`] for an exchange replayed in a session whose id map is `ids` (the map
/// *before* this exchange, [`crate::idmap`]): the recording is first put into the session's
/// names ([`IdMap::rename_recorded`](crate::idmap::IdMap::rename_recorded): every value the
/// twin told the session another name for, as a whole value or a whole token inside a
/// string), then through the outbound policy, and the answer is
/// compared with that. Renamed only when the map is not empty and the recorded bytes hold one
/// of its tokens; otherwise exactly [`judge_with_memo`].
///
/// `ex` is the exchange with the request as sent (its ids rewritten to the twin's, what echo
/// holes are judged against); `recorded` is the exchange as recorded, which names the route
/// ([`attribute_route`]): a request no route matches is named by its recorded path, never by
/// ids the twin minted for the session.
#[allow(clippy::too_many_arguments)]
pub fn judge_in_session(
    index: &ModelIndex<'_>,
    source: &str,
    ex: &Exchange,
    recorded: &Exchange,
    expected: &ExpectedBody,
    obs: &Observed,
    opts: &DiffOptions,
    cache: Option<&mut DiffCache>,
    memo: Option<&mut AnswerMemo>,
    ids: Option<&crate::idmap::IdMap>,
) -> Verdict {
    let rules = opts.rules.as_deref();
    // A user `echoed` position reads the whole request, which the cache key does not cover.
    let cache = cache.filter(|_| !rules.is_some_and(DiffRules::has_user_echo));
    let route = attribute_route(index, source, recorded, obs);
    let mut v = judge_unsuppressed(
        index, source, route, ex, expected, obs, opts, rules, cache, memo, ids,
    );
    if let Some(r) = rules
        && !r.suppress.is_empty()
        && !v.divergences.is_empty()
    {
        let (kept, removed) = r.suppress(&v.route, std::mem::take(&mut v.divergences));
        v.divergences = kept;
        v.facets.suppressed = removed
            .into_iter()
            .map(|(divergence, rule)| Suppressed {
                divergence,
                rule: rule.number,
                reason: rule.reason.clone(),
            })
            .collect();
        v.rescore();
    }
    v
}

/// Whether `obs` passes `ex`'s recording: `judge_with_cache(..).passed()`, found by stopping
/// at the first divergence of the body walk instead of listing them all (the causes compare
/// many large recorded answers with each other and need only the yes or no). Falls back to the
/// full judgement for what the short way does not cover: refusals, `[[diff.suppress]]` rules,
/// user `echoed` classes, the outbound hook, non-JSON bodies.
///
/// `answer` is the answer's body: `obs.body` is not read (the caller compares one answer with
/// many recordings and need not copy it into every `Observed`; only the rare full judgement
/// gets a copy). `actual` is `parse_body(answer)` and `leaked` is
/// `leaked_placeholder_in(answer).is_some()`, computed once per answer by the caller;
/// `echo` is `echo_context(ex, obs)`, computed once per recording by the caller (a recording is
/// compared with many answers).
#[allow(clippy::too_many_arguments)]
pub(crate) fn passes(
    index: &ModelIndex<'_>,
    source: &str,
    ex: &Exchange,
    expected: &ExpectedBody,
    obs: &Observed,
    answer: &[u8],
    actual: &Body,
    leaked: bool,
    opts: &DiffOptions,
    echo: &EchoContext,
) -> bool {
    let full = || {
        let obs = Observed {
            body: answer.to_vec(),
            ..obs.clone()
        };
        judge_with_cache(index, source, ex, expected, &obs, opts, None).passed()
    };
    let rules = opts.rules.as_deref();
    if rules.is_some_and(|r| !r.suppress.is_empty() || r.has_user_echo())
        || opts.outbound.is_some()
        || obs.provenance == Some(Provenance::Miss)
        || obs.status == 501
        || leaked
    {
        return full();
    }
    if ex.response.status != obs.status {
        return false;
    }
    if !opts.ignores_header("content-type")
        && ((body_deliverable(ex) && !expected.bytes.is_empty()) || !answer.is_empty())
    {
        let (exp, act) = content_types(ex, obs);
        match (exp, act) {
            (Some(e), Some(a)) if same_content_type(e, a) => {}
            (None, None) => {}
            _ => return false,
        }
    }
    if !challenge_headers(ex, obs, opts).1.is_empty() {
        return false;
    }
    if has_url_header(ex, obs)
        && !url_headers(index, ex, obs, (&expected.body, actual), None, opts)
            .1
            .is_empty()
    {
        return false;
    }
    if !body_deliverable(ex) || answer == expected.bytes {
        return true;
    }
    let (Body::Json(e), Body::Json(a)) = (&expected.body, actual) else {
        return full();
    };
    let (template, fields) = if obs.replay.is_some() {
        (None, None)
    } else {
        (pick_template_split(index, obs, actual, e, opts), rules)
    };
    let mut d = BodyDiff::new(echo)
        .with_enums(index.enums())
        .with_fields(fields)
        .with_unknown_tags(opts.unions.policy(obs.route.as_deref()));
    d.stop_at_first();
    d.run(template, e, a);
    !d.found_any()
}

#[allow(clippy::too_many_arguments)]
fn judge_unsuppressed(
    index: &ModelIndex<'_>,
    source: &str,
    route: String,
    ex: &Exchange,
    expected: &ExpectedBody,
    obs: &Observed,
    opts: &DiffOptions,
    rules: Option<&DiffRules>,
    mut cache: Option<&mut DiffCache>,
    mut memo: Option<&mut AnswerMemo>,
    ids: Option<&crate::idmap::IdMap>,
) -> Verdict {
    let mut facets = Facets::default();
    let expected_body_bytes = &expected.bytes;
    // The answer is parsed only when a rule needs its tree: most exact answers never are (see
    // the byte comparison below).
    let mut actual_parsed: Option<Body> = None;
    let refusal_possible = obs.provenance == Some(Provenance::Miss)
        || obs.status == 501
        || leaked_placeholder_in(&obs.body).is_some();
    if refusal_possible
        && let Some(d) = refusal(
            ex,
            obs,
            expected_body_bytes,
            actual_parsed.get_or_insert_with(|| parse_body(&obs.body)),
        )
    {
        return Verdict {
            route,
            divergences: vec![d],
            compared: 1,
            score_bp: 0,
            facets,
        };
    }
    if ex.response.status != obs.status {
        return Verdict {
            route,
            divergences: vec![Divergence {
                path: "status".into(),
                category: Category::StatusMismatch,
                expected: Value::from(ex.response.status),
                actual: Value::from(obs.status),
            }],
            compared: 1,
            score_bp: 0,
            facets,
        };
    }
    let mut divergences = Vec::new();
    let mut compared = 1u64;
    if !opts.ignores_header("content-type") {
        facets.headers_compared = true;
        compared += 1;
        let (exp, act) = content_types(ex, obs);
        // Only when the recording had a body it could deliver: a bodiless answer's content
        // type is noise.
        if (body_deliverable(ex) && !expected_body_bytes.is_empty()) || !obs.body.is_empty() {
            match (exp, act) {
                (Some(e), Some(a)) if same_content_type(e, a) => {}
                (None, None) => {}
                (e, a) => divergences.push(Divergence {
                    path: "headers.content-type".into(),
                    category: match (e, a) {
                        (Some(_), None) => Category::MissingField,
                        (None, Some(_)) => Category::ExtraField,
                        _ => Category::ValueMismatch,
                    },
                    expected: e.map_or(Value::Null, |s| Value::String(s.into())),
                    actual: a.map_or(Value::Null, |s| Value::String(s.into())),
                }),
            }
        }
    }
    let (challenges, challenge_divergences) = challenge_headers(ex, obs, opts);
    if challenges > 0 {
        facets.headers_compared = true;
        compared += challenges;
        divergences.extend(challenge_divergences);
    }
    if has_url_header(ex, obs) {
        let parsed_here;
        let mut equal_here = None;
        let answered = match (
            actual_parsed.as_ref(),
            memo.as_deref().and_then(|m| m.parsed.as_ref()),
        ) {
            (Some(b), _) | (None, Some(b)) => b,
            // An answer whose bytes serialize the recorded tree is that tree: a replayed page
            // (most answers with a `Link`) is not parsed for its links, and the body step below
            // takes the verdict from the memo.
            (None, None) => {
                let equal =
                    matches!(&expected.body, Body::Json(e) if serializes_either_way(e, &obs.body));
                equal_here = Some(equal);
                if equal {
                    &expected.body
                } else {
                    parsed_here = parse_body(&obs.body);
                    &parsed_here
                }
            }
        };
        let (urls, url_divergences) =
            url_headers(index, ex, obs, (&expected.body, answered), ids, opts);
        if let (Some(equal), Some(m)) = (equal_here, memo.as_deref_mut()) {
            m.equal_tree = Some(equal);
        }
        if urls > 0 {
            facets.headers_compared = true;
            compared += urls;
            divergences.extend(url_divergences);
        }
    }
    if body_deliverable(ex) {
        facets.body_compared = true;
        // The recording in the session's names (values the twin told this session another
        // name for), then in the twin's outbound-policy space: a copy only when a value was
        // renamed, or the outbound policy applies. The rename is looked for only
        // when the map is not empty and the recorded bytes hold one of its tokens.
        let policy_applies = opts.outbound.is_some();
        // The copy the rename was tried on, kept when it changed or the policy copies anyway.
        let renamed = match (ids, &expected.body) {
            (Some(ids), Body::Json(e)) if !ids.is_empty() => {
                let mentions = ids.scan(expected_body_bytes);
                if let Some(m) = memo.as_deref_mut() {
                    m.mentions = Some(mentions);
                }
                if mentions.renamable {
                    let mut e = e.clone();
                    (ids.rename_recorded(&mut e) || policy_applies).then_some(Body::Json(e))
                } else {
                    None
                }
            }
            _ => None,
        };
        let transformed;
        let untransformed = renamed.is_none() && !policy_applies;
        let expected_body: &Body = if !untransformed {
            let mut b = renamed.unwrap_or_else(|| expected.body.clone());
            if let (Some(hook), Body::Json(v)) = (&opts.outbound, &mut b) {
                (hook.0)(source, &crate::run::request_of(ex), &route, v);
            }
            transformed = b;
            &transformed
        } else {
            &expected.body
        };
        // An answer whose bytes are exactly the recorded JSON as serialized parses back to an
        // equal tree, and an equal tree diverges nowhere under any template (every field class
        // accepts the recorded value): nothing to walk. The count of compared positions only
        // matters when something else diverged; then the full walk below provides it.
        // The same holds, for any kind of body, when the answer is the recorded bytes themselves.
        let same_bytes = untransformed && obs.body == *expected_body_bytes;
        if divergences.is_empty()
            && (same_bytes
                || matches!(expected_body, Body::Json(e) if {
                    // Decided for the URL headers already when the recording is untransformed.
                    let known = memo
                        .as_deref()
                        .and_then(|m| m.equal_tree)
                        .filter(|_| untransformed);
                    let equal = known.unwrap_or_else(|| serializes_either_way(e, &obs.body));
                    // The id-flow step asks the same of the recording as recorded.
                    if untransformed && let Some(m) = memo.as_deref_mut() {
                        m.equal_tree = Some(equal);
                    }
                    equal
                }))
        {
            return Verdict {
                route,
                divergences,
                compared,
                score_bp: 10_000,
                facets,
            };
        }
        // The bytes that fix the recorded tree: as recorded, or as transformed.
        let tree_bytes: Option<std::borrow::Cow<'_, [u8]>> = match (&cache, expected_body) {
            (Some(_), Body::Json(_)) if untransformed => {
                Some(std::borrow::Cow::Borrowed(expected_body_bytes.as_slice()))
            }
            (Some(_), Body::Json(e)) => serde_json::to_vec(e).ok().map(std::borrow::Cow::Owned),
            _ => None,
        };
        let echo = echo_context(ex, obs);
        let cache_key = match (&mut cache, tree_bytes) {
            (Some(c), Some(bytes)) => {
                // The request values every template the answer can be judged under may echo.
                let echoed: Vec<Option<Value>> = if obs.replay.is_some() {
                    Vec::new()
                } else {
                    c.echo_sources(index, obs)
                        .iter()
                        .map(|from| echo.value(from))
                        .collect()
                };
                let key = DiffCache::key(&bytes, obs, &echoed);
                if let Some(hit) = c.get(key, &bytes, obs, &echoed) {
                    divergences.extend(hit.divergences.iter().cloned());
                    compared += hit.compared;
                    facets.echo_failures = hit.echo_failures.clone();
                    return Verdict {
                        facets,
                        ..finish(route, divergences, compared)
                    };
                }
                Some((key, bytes, echoed))
            }
            _ => None,
        };
        // The memo's body is this parse when the twin handed out its tree.
        let mut actual_body = actual_parsed
            .or_else(|| memo.as_deref_mut().and_then(|m| m.parsed.take()))
            .unwrap_or_else(|| parse_body(&obs.body));
        let (template, fields) = if obs.replay.is_some() {
            // A recognized exactness claim drops every relaxation (contract: X-Wraith-Replay),
            // the user's `[diff.fields]` classes included.
            (None, None)
        } else {
            let recorded = match expected_body {
                Body::Json(e) => Some(e),
                _ => None,
            };
            (
                recorded
                    .and_then(|e| pick_template_split(index, obs, &actual_body, e, opts))
                    .or_else(|| pick_template(index, obs, &actual_body)),
                rules,
            )
        };
        let before = (divergences.len(), compared);
        diff_bodies(
            template,
            index.enums(),
            fields,
            opts.unions.policy(obs.route.as_deref()),
            expected_body,
            &mut actual_body,
            &echo,
            &mut divergences,
            &mut compared,
            &mut facets.echo_failures,
        );
        if let (Some(c), Some((key, bytes, echoed))) = (cache, cache_key)
            && divergences.len() > before.0
            && matches!(actual_body, Body::Json(_))
        {
            c.entries.entry(key).or_default().push(CachedDiff {
                expected: bytes.into_owned(),
                echoed,
                actual: obs.body.clone(),
                route: obs.route.clone(),
                status: obs.status,
                exact: obs.replay.is_some(),
                divergences: divergences[before.0..].to_vec(),
                compared: compared - before.1,
                echo_failures: facets.echo_failures.clone(),
            });
        }
        if let Some(m) = memo {
            m.parsed = Some(actual_body);
            m.echo = Some(echo);
        }
    }
    Verdict {
        facets,
        ..finish(route, divergences, compared)
    }
}

/// The request values echo holes may copy, for the recorded request of `ex` aligned with the
/// route the twin matched.
pub(crate) fn echo_context(ex: &Exchange, obs: &Observed) -> EchoContext {
    EchoContext::new(
        obs.route
            .as_deref()
            .and_then(|r| r.split_once(' '))
            .map(|(_, p)| p),
        &ex.request.path,
        &ex.request.query,
        ex.request.content_type.as_deref(),
        &ex.request.body,
        ex.request
            .headers
            .iter()
            .filter_map(|(k, v)| v.first().map(|v| (k.to_ascii_lowercase(), v.clone())))
            .collect(),
    )
}

/// The records the route `obs` was answered by answers, for the kind of position a short id
/// is read at (`diff::position_kind`): its entity type, and for a type keyed per parent
/// ([`wraith_model::EntityType::keyed_per_parent`]) the recorded request's parent keys after
/// `@` (`issues@alice-repo`), since the type's key names a record only under its parents.
pub(crate) fn record_kind<'m>(
    index: &ModelIndex<'m>,
    ex: &Exchange,
    obs: &Observed,
) -> Option<Cow<'m, str>> {
    let name = obs.route.as_deref()?;
    let route = index.route(name)?;
    // A segment member's answer lists the member records (a label's `id` is a label's).
    if let Some(ty) = index.member_types.get(name) {
        return Some(Cow::Borrowed(*ty));
    }
    let ty = route.entity_type.as_deref()?;
    Some(index.scoped(ty, route, &ex.request.path, route.parent_params.len()))
}

/// The recorded value `path` holds for the route's parameter `param`.
fn param_value<'p>(route: &Route, path: &'p str, param: &str) -> Option<&'p str> {
    let position = route
        .path
        .split('/')
        .position(|seg| seg.strip_prefix(':') == Some(param))?;
    path.split('/').nth(position)
}

/// The ids a replaying client learns from one answer: every (recorded, answered) pair of
/// differing scalars (strings or numbers) of one JSON type at a `generated` position (a
/// `Generated` or `Counter` hole, derived ids included) of the template the twin most likely
/// rendered, in document order, with list elements paired as the judge pairs them. Positions
/// come from the template even when the answer carries an exactness claim: the claim changes
/// how the answer is judged, not which fields are identifiers. Nothing is learned from an
/// answer of another status than the recording's, or from a `HEAD` answer or a non-JSON body.
pub fn generated_pairs(
    index: &ModelIndex<'_>,
    ex: &Exchange,
    expected: &ExpectedBody,
    obs: &Observed,
) -> Vec<crate::idmap::IdPair> {
    generated_pairs_with(index, ex, expected, obs, None, None)
}

/// [`generated_pairs`], reusing and filling `cache`. The pairs are a function of the template
/// (picked among the answered route's variants of the answered status, from the answer), the
/// two trees (fixed by their bytes) and, only through echo holes (which steer how list elements
/// pair), the request: the inputs a reused body diff is keyed on ([`DiffCache`]), with every
/// echo source counted whatever the claim (pairs come from the template even under one). So a
/// reused result is exactly the one the walk would produce. Only walked results are kept.
pub fn generated_pairs_cached(
    index: &ModelIndex<'_>,
    ex: &Exchange,
    expected: &ExpectedBody,
    obs: &Observed,
    cache: &mut DiffCache,
) -> Vec<crate::idmap::IdPair> {
    generated_pairs_with(index, ex, expected, obs, Some(cache), None)
}

/// [`generated_pairs_cached`] after [`judge_with_memo`] judged the same exchange (the same
/// `ex`, `expected` and `obs`) into `memo`: the equal-tree test and the parse of the answer
/// are taken from it when the judge made them, else made here as always.
pub fn generated_pairs_memo(
    index: &ModelIndex<'_>,
    ex: &Exchange,
    expected: &ExpectedBody,
    obs: &Observed,
    cache: &mut DiffCache,
    memo: &mut AnswerMemo,
) -> Vec<crate::idmap::IdPair> {
    generated_pairs_with(index, ex, expected, obs, Some(cache), Some(memo))
}

fn generated_pairs_with(
    index: &ModelIndex<'_>,
    ex: &Exchange,
    expected: &ExpectedBody,
    obs: &Observed,
    mut cache: Option<&mut DiffCache>,
    memo: Option<&mut AnswerMemo>,
) -> Vec<crate::idmap::IdPair> {
    if ex.response.status != obs.status || !body_deliverable(ex) || expected.bytes == obs.body {
        return Vec::new();
    }
    let Body::Json(recorded) = &expected.body else {
        return Vec::new();
    };
    // The answer is the recording, serialized in its order or the twin's sorted one: an equal
    // tree (see below), known without parsing it.
    let equal_tree = memo.as_deref().and_then(|m| m.equal_tree);
    if equal_tree.unwrap_or_else(|| serializes_either_way(recorded, &obs.body)) {
        return Vec::new();
    }
    // Pairs come only from generated positions of the template picked for the answer: when no
    // template the answer can be judged under has one, there is nothing to walk for.
    let generates = match (&cache, obs.route.as_deref()) {
        (Some(c), Some(name)) => c.generates.get(&(name.to_string(), obs.status)).copied(),
        _ => None,
    };
    let generates = generates.unwrap_or_else(|| {
        let g = may_generate(index, obs);
        if let (Some(c), Some(name)) = (&mut cache, obs.route.as_deref()) {
            c.generates.insert((name.to_string(), obs.status), g);
        }
        g
    });
    if !generates {
        return Vec::new();
    }
    // A kept result is looked up before the answer is parsed: the key needs only bytes.
    let mut memo = memo;
    let echo = memo
        .as_deref_mut()
        .and_then(|m| m.echo.take())
        .unwrap_or_else(|| echo_context(ex, obs));
    // The kind of record the answer's top holds, scoped by the recorded path's parents for a
    // type keyed per parent: part of what a kept result was computed from.
    let kind = record_kind(index, ex, obs);
    let slot = match cache {
        Some(c) => {
            let echoed: Vec<Option<Value>> = c
                .echo_sources(index, obs)
                .iter()
                .map(|from| echo.value(from))
                .collect();
            let key = DiffCache::key(&expected.bytes, obs, &echoed);
            if let Some(hit) = c.pairs.get(&key).and_then(|entries| {
                entries.iter().find(|e| {
                    e.status == obs.status
                        && e.route == obs.route
                        && e.echoed == echoed
                        && e.kind.as_deref() == kind.as_deref()
                        && e.actual == obs.body
                        && e.expected == expected.bytes
                })
            }) {
                return hit.pairs.clone();
            }
            Some((c, key, echoed))
        }
        None => None,
    };
    // The answer as the judge (or the symbol check) parsed it, and the pairs the symbol check
    // collected walking that very tree, when it walked it.
    let (parsed, walked) = match memo {
        Some(m) => (m.parsed.take(), m.pairs.take()),
        None => (None, None),
    };
    let walked = walked.filter(|_| parsed.is_some());
    let answered = parsed.unwrap_or_else(|| parse_body(&obs.body));
    // An answer equal to the recording as a tree (key order aside: the twin serves sorted keys)
    // differs in no scalar, and its lists pair position by position (an equal element matches
    // with no divergence): nothing to learn, so no walk.
    if matches!(&answered, Body::Json(a) if a == recorded) {
        return Vec::new();
    }
    let Some(template) = pick_template(index, obs, &answered) else {
        return Vec::new();
    };
    let Body::Json(answered) = &answered else {
        return Vec::new();
    };
    let mut pairs = match walked {
        Some(pairs) => pairs,
        None => {
            let mut d = BodyDiff::new(&echo)
                .with_enums(index.enums())
                .with_record_type(kind.as_deref())
                .with_nested_types(index.nested_types());
            d.collect_generated_pairs();
            d.run(Some(template), recorded, answered);
            d.take_generated_pairs()
        }
    };
    pairs.extend(
        shown_prefix_pairs(index, obs, recorded, answered)
            .into_iter()
            .map(crate::idmap::IdPair::from),
    );
    if let Some((c, key, echoed)) = slot {
        c.pairs.entry(key).or_default().push(CachedPairs {
            expected: expected.bytes.clone(),
            echoed,
            actual: obs.body.clone(),
            route: obs.route.clone(),
            status: obs.status,
            kind: kind.map(Cow::into_owned),
            pairs: pairs.clone(),
        });
    }
    pairs
}

/// The pairs a create's answer gives of the values later views show only the first characters
/// of (`EntityType::read_prefixes`, a secret shown once): each such top-level field's recorded
/// prefix, answered as the same prefix of the twin's value of the same length. A later read
/// that shows the recorded secret's first characters then reads, in the session's names, as
/// showing the first characters of the secret the twin gave this session.
fn shown_prefix_pairs(
    index: &ModelIndex<'_>,
    obs: &Observed,
    recorded: &Value,
    answered: &Value,
) -> Vec<(Value, Value)> {
    let Some(route) = obs.route.as_deref().and_then(|name| index.route(name)) else {
        return Vec::new();
    };
    if route.state_op != Some(wraith_model::StateOp::Create) {
        return Vec::new();
    }
    let Some(ty) = route
        .entity_type
        .as_deref()
        .and_then(|ty| index.model().entity_types.get(ty))
    else {
        return Vec::new();
    };
    /// The first `n` characters of `s`, when it has more.
    fn cut(s: &str, n: u64) -> Option<&str> {
        let n = usize::try_from(n).ok()?;
        s.char_indices().nth(n).map(|(at, _)| &s[..at])
    }
    ty.read_prefixes
        .iter()
        .filter_map(|(field, &n)| {
            let (Some(Value::String(x)), Some(Value::String(y))) =
                (recorded.get(field), answered.get(field))
            else {
                return None;
            };
            // A value of another length is no mint of the recorded one's shape (the outbound
            // pass's token of it, say): its first characters name nothing the read shows.
            if x.chars().count() != y.chars().count() {
                return None;
            }
            let (x, y) = (cut(x, n)?, cut(y, n)?);
            (x != y).then(|| (json!(x), json!(y)))
        })
        .collect()
}

/// Some JSON template [`pick_template`] can choose for `obs` (the answered route's variants of
/// the answered status) has a `Generated` or `Counter` hole: the only positions
/// [`generated_pairs`] learns from.
fn may_generate(index: &ModelIndex<'_>, obs: &Observed) -> bool {
    fn has_generated(node: &Node) -> bool {
        match node {
            Node::Hole(h) => matches!(
                h.source,
                wraith_model::HoleKind::Generated { .. } | wraith_model::HoleKind::Counter { .. }
            ),
            Node::Const { .. } => false,
            Node::Object { fields } => fields.iter().any(|f| has_generated(&f.value)),
            Node::Array(wraith_model::ArrayNode::Tuple { items }) => {
                items.iter().any(has_generated)
            }
            Node::Array(wraith_model::ArrayNode::List {
                representatives, ..
            }) => representatives.iter().any(has_generated),
        }
    }
    let Some(route) = obs.route.as_deref().and_then(|name| index.route(name)) else {
        return false;
    };
    route
        .variants
        .iter()
        .filter(|v| v.status == obs.status)
        .any(|v| matches!(&v.body, BodyTemplate::Json { root } if has_generated(root)))
}

/// The verdict of an exchange from its divergences and compared positions.
pub(crate) fn finish(route: String, divergences: Vec<Divergence>, compared: u64) -> Verdict {
    Verdict {
        score_bp: score_of(divergences.len(), compared),
        route,
        divergences,
        compared,
        facets: Facets::default(),
    }
}

/// 10000 with no divergence, else the share of compared positions that agreed, capped at 9999.
fn score_of(divergences: usize, compared: u64) -> u32 {
    if divergences == 0 {
        10_000
    } else {
        let agreed = compared.saturating_sub(divergences as u64);
        ((agreed * 10_000 / compared.max(1)) as u32).min(9_999)
    }
}

/// A body as the judge sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Empty,
    Json(Value),
    Text(String),
    Binary(Vec<u8>),
}

/// Parse a body: JSON when it parses, else UTF-8 text, else bytes.
pub fn parse_body(bytes: &[u8]) -> Body {
    if bytes.is_empty() {
        return Body::Empty;
    }
    if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
        return Body::Json(v);
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Body::Text(s.to_string()),
        Err(_) => Body::Binary(bytes.to_vec()),
    }
}

fn body_value(b: &Body) -> Value {
    match b {
        Body::Empty => Value::Null,
        Body::Json(v) => v.clone(),
        Body::Text(s) => Value::String(s.clone()),
        Body::Binary(b) => Value::String(binary_summary(b)),
    }
}

/// A body that is neither JSON nor text, as the report shows it: `<8 bytes, sha256
/// 0123456789ab>`, its length and the first 6 bytes of its SHA-256 in hex, so two different
/// bodies (and so two different differences, with their `drift_id`s) are told apart.
fn binary_summary(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(bytes);
    format!(
        "<{} bytes, sha256 {}>",
        bytes.len(),
        wraith_model::request_key::hex(&digest[..6])
    )
}

fn kind(b: &Body) -> &'static str {
    match b {
        Body::Empty => "empty",
        Body::Json(_) => "json",
        Body::Text(_) => "text",
        Body::Binary(_) => "binary",
    }
}

#[allow(clippy::too_many_arguments)]
fn diff_bodies(
    template: Option<&Node>,
    enums: &EnumIndex<'_>,
    fields: Option<&DiffRules>,
    unknown_tags: crate::diff::UnknownTagPolicy,
    expected: &Body,
    actual: &mut Body,
    echo: &EchoContext,
    out: &mut Vec<Divergence>,
    compared: &mut u64,
    echo_failures: &mut Vec<String>,
) {
    match (expected, &*actual) {
        (Body::Json(e), Body::Json(a)) => {
            let mut d = BodyDiff::new(echo)
                .with_enums(enums)
                .with_fields(fields)
                .with_unknown_tags(unknown_tags);
            d.run(template, e, a);
            *compared += d.compared;
            out.extend(d.divergences);
            echo_failures.extend(d.echo_failures);
        }
        (Body::Empty, Body::Empty) => {}
        (Body::Text(e), Body::Text(a)) => {
            *compared += 1;
            if e != a {
                out.push(Divergence {
                    path: "body".into(),
                    category: Category::ValueMismatch,
                    expected: Value::String(e.clone()),
                    actual: Value::String(a.clone()),
                });
            }
        }
        (Body::Binary(e), Body::Binary(a)) => {
            *compared += 1;
            if e != a {
                out.push(Divergence {
                    path: "body".into(),
                    category: Category::ValueMismatch,
                    expected: body_value(expected),
                    actual: body_value(actual),
                });
            }
        }
        (e, a) => {
            *compared += 1;
            let category = match (e, a) {
                (_, Body::Empty) => Category::MissingField,
                (Body::Empty, _) => Category::ExtraField,
                _ => Category::TypeMismatch,
            };
            out.push(Divergence {
                path: "body".into(),
                category,
                expected: json!({"kind": kind(e), "value": body_value(e)}),
                actual: json!({"kind": kind(a), "value": body_value(a)}),
            });
        }
    }
}

/// The refusal rule: a twin that says it does not know is never a pass.
fn refusal(
    ex: &Exchange,
    obs: &Observed,
    expected_bytes: &[u8],
    actual: &Body,
) -> Option<Divergence> {
    let route_miss_body = matches!(actual, Body::Json(v) if is_route_miss_body(v));
    let refused = obs.provenance == Some(Provenance::Miss)
        || (obs.status == 501 && route_miss_body && !is_route_miss_bytes(expected_bytes));
    let leak = leaked_placeholder_in(&obs.body).filter(|p| !mentions(expected_bytes, p));
    if !refused && leak.is_none() {
        return None;
    }
    let mut actual_summary = json!({
        "status": obs.status,
        "provenance": obs.provenance.map(|p| p.as_str()),
        "body": body_value(actual),
    });
    if let (Some(p), Value::Object(m)) = (&leak, &mut actual_summary) {
        m.insert("leaked_placeholder".into(), Value::String(p.clone()));
    }
    Some(Divergence {
        path: if leak.is_some() && !refused {
            "body".into()
        } else {
            "response".into()
        },
        category: Category::SynthesizedRefusal,
        expected: json!({"status": ex.response.status}),
        actual: actual_summary,
    })
}

/// Every echo hole's source in a template (the only way a body diff reads the request).
fn echo_sources(node: &Node, out: &mut Vec<EchoSource>) {
    match node {
        Node::Hole(h) => {
            if let wraith_model::HoleKind::Echo { from } = &h.source {
                out.push(from.clone());
            }
        }
        Node::Const { .. } => {}
        Node::Object { fields } => fields.iter().for_each(|f| echo_sources(&f.value, out)),
        Node::Array(wraith_model::ArrayNode::Tuple { items }) => {
            items.iter().for_each(|n| echo_sources(n, out))
        }
        Node::Array(wraith_model::ArrayNode::List {
            representatives, ..
        }) => representatives.iter().for_each(|n| echo_sources(n, out)),
    }
}

/// A leaked template placeholder in the answer's text, if any: in the raw text, or in a
/// string of a JSON answer that spells it with escapes (`"\u0024hole_7"` is `"$hole_7"`).
pub(crate) fn leaked_placeholder_in(body: &[u8]) -> Option<String> {
    // Every answer is asked, and almost none holds a placeholder: one scan of the bytes for a
    // marker first (a marker absent from the bytes is absent from the text), the UTF-8 check
    // and the text search only when one is there.
    let marked = memchr::memchr_iter(b'$', body).any(|at| {
        let rest = &body[at..];
        rest.starts_with(b"$hole_") || rest.starts_with(b"$arr_")
    });
    if marked && let Some(p) = std::str::from_utf8(body).ok().and_then(leaked_placeholder) {
        return Some(p);
    }
    // A `\u` escape can spell any character of a marker: the decoded strings are searched,
    // which needs the answer parsed, only when the bytes hold one.
    memchr::memmem::find(body, br"\u")?;
    let v: Value = serde_json::from_slice(body).ok()?;
    placeholder_in_strings(&v)
}

/// The first placeholder in a JSON value's strings (object keys included), decoded.
fn placeholder_in_strings(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => leaked_placeholder(s),
        Value::Array(a) => a.iter().find_map(placeholder_in_strings),
        Value::Object(m) => m
            .iter()
            .find_map(|(k, x)| leaked_placeholder(k).or_else(|| placeholder_in_strings(x))),
        _ => None,
    }
}

/// Whether a recorded body holds the text `p`, raw or in a string of its JSON spelled with
/// escapes (a recording that really answered a placeholder's spelling is no leak).
fn mentions(recorded: &[u8], p: &str) -> bool {
    if std::str::from_utf8(recorded).is_ok_and(|e| e.contains(p)) {
        return true;
    }
    fn holds(v: &Value, p: &str) -> bool {
        match v {
            Value::String(s) => s.contains(p),
            Value::Array(a) => a.iter().any(|x| holds(x, p)),
            Value::Object(m) => m.iter().any(|(k, x)| k.contains(p) || holds(x, p)),
            _ => false,
        }
    }
    memchr::memmem::find(recorded, br"\u").is_some()
        && serde_json::from_slice::<Value>(recorded).is_ok_and(|v| holds(&v, p))
}

/// [`serializes_to`] in the recorded key order, or with keys sorted as the twin's exact
/// replay serves them: either way the bytes parse back to a tree equal to `v`.
fn serializes_either_way(v: &Value, bytes: &[u8]) -> bool {
    serializes_to(v, bytes) || serializes_sorted_to(v, bytes)
}

/// `v` with every object's keys in sorted order, as `wraith_model::to_canonical_json` writes it
/// (without the trailing newline), without sorting a copy of the tree.
struct SortedKeys<'v>(&'v Value);

impl serde::Serialize for SortedKeys<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(m) => {
                let mut entries: Vec<(&String, &Value)> = m.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                s.collect_map(entries.into_iter().map(|(k, v)| (k, SortedKeys(v))))
            }
            Value::Array(a) => s.collect_seq(a.iter().map(SortedKeys)),
            other => other.serialize(s),
        }
    }
}

/// `bytes` is exactly the compact serialization of `v` with every object's keys sorted.
///
/// Every exact answer is asked this, so it reads the keys in the order the bytes spell them
/// instead of sorting every object's keys to serialize them: the sorted serialization lists an
/// object's keys strictly increasing, so keys read from the bytes that are each the object's,
/// strictly increasing and as many as it has are exactly its keys in sorted order.
fn serializes_sorted_to(v: &Value, bytes: &[u8]) -> bool {
    let mut rest = bytes;
    let mut hints = Vec::new();
    sorted_prefix(v, &mut rest, &mut hints, 0) && rest.is_empty()
}

/// What [`sorted_prefix`] remembers of the last object it read at one depth: its entries in
/// their order, and the position among them of each key in the order the bytes listed them.
/// The elements of a list usually share one shape, so the next object's key is first looked
/// for at the same position, and searched for only when it is not there.
#[derive(Default)]
struct ShapeHint<'v> {
    entries: Vec<(&'v str, &'v Value)>,
    order: Vec<usize>,
}

/// [`serializes_sorted_to`] for a prefix: whether `rest` starts with the sorted serialization
/// of `v`, which is then stripped from it (`rest` is left anywhere when not). `hints[depth]`
/// is the [`ShapeHint`] of the objects at `depth`.
fn sorted_prefix<'v>(
    v: &'v Value,
    rest: &mut &[u8],
    hints: &mut Vec<ShapeHint<'v>>,
    depth: usize,
) -> bool {
    match v {
        Value::Object(m) => {
            let start = *rest;
            if hints.len() <= depth {
                hints.resize_with(depth + 1, ShapeHint::default);
            }
            let mut hint = std::mem::take(&mut hints[depth]);
            let verdict = sorted_object_prefix(m, rest, hints, depth, &mut hint);
            hints[depth] = hint;
            verdict.unwrap_or_else(|| {
                // A key spelled with an escape: compare this object serialized sorted.
                *rest = start;
                serialized_prefix(&SortedKeys(v), rest)
            })
        }
        Value::Array(items) => {
            if !strip(rest, b"[") {
                return false;
            }
            for (i, item) in items.iter().enumerate() {
                if (i > 0 && !strip(rest, b",")) || !sorted_prefix(item, rest, hints, depth + 1) {
                    return false;
                }
            }
            strip(rest, b"]")
        }
        Value::Null => strip(rest, b"null"),
        Value::Bool(true) => strip(rest, b"true"),
        Value::Bool(false) => strip(rest, b"false"),
        scalar => serialized_prefix(scalar, rest),
    }
}

/// Objects of at most this many keys are searched entry by entry in [`sorted_object_prefix`]
/// (quadratic only up to this bound); larger ones through a key map.
const SCAN_KEYS: usize = 64;

/// [`sorted_prefix`] of an object, with `hint` (taken out of `hints[depth]`) refilled with
/// this object's shape; `None` when one of the keys in `rest` holds a backslash (an escape,
/// which the key's text does not spell as is), for the caller to compare by serializing.
fn sorted_object_prefix<'v>(
    m: &'v serde_json::Map<String, Value>,
    rest: &mut &[u8],
    hints: &mut Vec<ShapeHint<'v>>,
    depth: usize,
    hint: &mut ShapeHint<'v>,
) -> Option<bool> {
    if !strip(rest, b"{") {
        return Some(false);
    }
    hint.entries.clear();
    hint.entries.extend(m.iter().map(|(k, v)| (k.as_str(), v)));
    let mut prev: &[u8] = &[];
    // Key → entry, built on the first key the hint's order does not place: the object's keys
    // in another order than the last one of its shape (a map in the provider's order against
    // its sorted text) would otherwise each be looked for entry by entry.
    let mut by_key: Option<HashMap<&'v [u8], usize>> = None;
    for i in 0..m.len() {
        if (i > 0 && !strip(rest, b",")) || !strip(rest, b"\"") {
            return Some(false);
        }
        let Some(end) = memchr::memchr2(b'"', b'\\', rest) else {
            return Some(false);
        };
        if rest[end] == b'\\' {
            return None;
        }
        let token = &rest[..end];
        // Strictly increasing: sorted, and no key twice.
        if i > 0 && prev >= token {
            return Some(false);
        }
        let same = |at: &usize| {
            hint.entries
                .get(*at)
                .is_some_and(|(k, _)| k.as_bytes() == token)
        };
        let Some(at) = hint.order.get(i).copied().filter(same).or_else(|| {
            // A small object is scanned: building the map costs more than the scans it saves.
            if m.len() <= SCAN_KEYS {
                return hint.entries.iter().position(|(k, _)| k.as_bytes() == token);
            }
            by_key
                .get_or_insert_with(|| {
                    // Keys are unique: each names the one entry a scan would find.
                    hint.entries
                        .iter()
                        .enumerate()
                        .map(|(at, &(k, _))| (k.as_bytes(), at))
                        .collect()
                })
                .get(token)
                .copied()
        }) else {
            return Some(false);
        };
        let (key, value) = hint.entries[at];
        // serde_json escapes only quotes, backslashes and control characters, so a key
        // spelled with neither quote nor backslash is its serialization's text exactly when it
        // holds no control character.
        if key.bytes().any(|b| b < 0x20) {
            return Some(false);
        }
        match hint.order.get_mut(i) {
            Some(slot) => *slot = at,
            None => hint.order.push(at),
        }
        prev = key.as_bytes();
        *rest = &rest[end + 1..];
        if !strip(rest, b":") || !sorted_prefix(value, rest, hints, depth + 1) {
            return Some(false);
        }
    }
    Some(strip(rest, b"}"))
}

/// Strip `token` from the front of `rest`, if it is there.
fn strip(rest: &mut &[u8], token: &[u8]) -> bool {
    match rest.strip_prefix(token) {
        Some(r) => {
            *rest = r;
            true
        }
        None => false,
    }
}

/// Whether `rest` starts with the compact serialization of `x`, which is then stripped.
fn serialized_prefix<T: serde::Serialize + ?Sized>(x: &T, rest: &mut &[u8]) -> bool {
    let mut w = Compare {
        rest: std::mem::take(rest),
    };
    if serde_json::to_writer(&mut w, x).is_err() {
        return false;
    }
    *rest = w.rest;
    true
}

/// A writer that accepts exactly the bytes it was given, in order.
struct Compare<'b> {
    rest: &'b [u8],
}

impl std::io::Write for Compare<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.rest.strip_prefix(buf) {
            Some(rest) => {
                self.rest = rest;
                Ok(buf.len())
            }
            None => Err(std::io::Error::other("differs")),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// True when compact JSON serialization of `v` is exactly `bytes`, stopping at the first
/// differing byte (no buffer is built).
fn serializes_to(v: &Value, bytes: &[u8]) -> bool {
    let mut w = Compare { rest: bytes };
    serde_json::to_writer(&mut w, v).is_ok() && w.rest.is_empty()
}

/// The contract's structured route-miss envelope.
fn is_route_miss_body(v: &Value) -> bool {
    v.get("error").and_then(Value::as_str) == Some("no matching route")
        && v.pointer("/wraith/hint").is_some()
}

fn is_route_miss_bytes(b: &[u8]) -> bool {
    serde_json::from_slice::<Value>(b).is_ok_and(|v| is_route_miss_body(&v))
}

/// Two content types are the same with case, spacing and empty parameters set aside
/// (`application/json; charset=utf-8` is `Application/JSON;charset=utf-8`). For a JSON media
/// type (`application/json`, `*/*+json`) a `charset=utf-8` parameter is set aside too: JSON is
/// UTF-8 and the parameter has no meaning there (RFC 8259 §11), so `application/json` is
/// `application/json; charset=utf-8`. Compared part by part in place: every judged answer
/// asks this.
fn same_content_type(a: &str, b: &str) -> bool {
    fn parts(ct: &str) -> impl Iterator<Item = &str> {
        let json = is_json_media_type(ct);
        ct.split(';')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .filter(move |p| !(json && is_utf8_charset(p)))
    }
    let mut x = parts(a);
    let mut y = parts(b);
    loop {
        match (x.next(), y.next()) {
            (None, None) => return true,
            (Some(p), Some(q)) if p.eq_ignore_ascii_case(q) => {}
            _ => return false,
        }
    }
}

/// `application/json` or a `+json` structured syntax suffix (`application/problem+json`), by
/// the media type before any parameter, without case.
fn is_json_media_type(ct: &str) -> bool {
    let media = ct.split(';').next().unwrap_or("").trim().as_bytes();
    media.eq_ignore_ascii_case(b"application/json")
        || (media.contains(&b'/')
            && media
                .len()
                .checked_sub(5)
                .is_some_and(|at| media[at..].eq_ignore_ascii_case(b"+json")))
}

/// A `charset` parameter naming UTF-8 (`charset=utf-8`, `Charset="UTF-8"`).
fn is_utf8_charset(param: &str) -> bool {
    let Some((name, value)) = param.split_once('=') else {
        return false;
    };
    let value = value.trim();
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    name.trim().eq_ignore_ascii_case("charset") && value.eq_ignore_ascii_case("utf-8")
}

/// The body template the twin most likely rendered: among the matched route's variants with
/// the answered status, the one whose template fits the answer best.
pub(crate) fn pick_template<'m>(
    index: &ModelIndex<'m>,
    obs: &Observed,
    actual: &Body,
) -> Option<&'m Node> {
    let route = index.route(obs.route.as_deref()?)?;
    let Body::Json(actual) = actual else {
        return None;
    };
    let mut roots = route
        .variants
        .iter()
        .filter(|v| v.status == obs.status)
        .filter_map(|v| match &v.body {
            BodyTemplate::Json { root } => Some(root),
            _ => None,
        });
    // The only candidate is the best whatever its fit: most routes have one template per
    // status, and the fit walks the whole answer.
    let first = roots.next()?;
    let mut rest = roots.peekable();
    if rest.peek().is_none() {
        return Some(first);
    }
    let mut best = (fit(first, actual), first);
    for root in rest {
        let f = fit(root, actual);
        if f > best.0 {
            best = (f, root);
        }
    }
    Some(best.1)
}

/// [`pick_template`], except that under `[diff] split_variants` an answer of a variant whose
/// top-level answers are a tagged union ([`wraith_model::Variant::union`]) is judged under the
/// per-type template of the **recording's** tag (the variants of the answered status holding
/// one for that tag; among several, the one the answer fits best). A recording whose tag no
/// variant has a template for, or that is no object with a string tag, falls back to
/// [`pick_template`].
pub(crate) fn pick_template_split<'m>(
    index: &ModelIndex<'m>,
    obs: &Observed,
    actual: &Body,
    recorded: &Value,
    opts: &DiffOptions,
) -> Option<&'m Node> {
    if !opts.unions.split_variants {
        return pick_template(index, obs, actual);
    }
    let route = index.route(obs.route.as_deref()?)?;
    let mut best: Option<(i64, &'m Node)> = None;
    for v in route.variants.iter().filter(|v| v.status == obs.status) {
        let Some(u) = &v.union else {
            continue;
        };
        let Some(tag) = recorded.get(&u.discriminator).and_then(Value::as_str) else {
            continue;
        };
        let Some(t) = u
            .templates
            .iter()
            .find(|t| wraith_model::ArrayNode::tag_of(t, &u.discriminator) == Some(tag))
        else {
            continue;
        };
        let f = match actual {
            Body::Json(a) => fit(t, a),
            _ => 0,
        };
        if best.is_none_or(|(b, _)| f > b) {
            best = Some((f, t));
        }
    }
    match best {
        Some((_, t)) => Some(t),
        None => pick_template(index, obs, actual),
    }
}

/// True when two bodies are equal as the judge compares them (used by tests and tools).
pub fn bodies_equal(a: &[u8], b: &[u8]) -> bool {
    match (parse_body(a), parse_body(b)) {
        (Body::Json(x), Body::Json(y)) => json_eq(&x, &y),
        (x, y) => x == y,
    }
}

/// The headers compared besides `content-type` (reference §4.7): the challenges of a 401 or
/// 407 answer.
const CHALLENGE_HEADERS: [&str; 2] = ["www-authenticate", "proxy-authenticate"];

/// The challenge headers ([`CHALLENGE_HEADERS`]) `[diff] ignore_headers` leaves, each compared
/// where either side has it: its values in order, trimmed, at `headers.<name>`; absent from
/// the answer is a `missing_field`, unrecorded an `extra_field`, other values a
/// `value_mismatch`. Returns how many were compared and the divergences.
fn challenge_headers(ex: &Exchange, obs: &Observed, opts: &DiffOptions) -> (u64, Vec<Divergence>) {
    let mut compared = 0;
    let mut divergences = Vec::new();
    for name in CHALLENGE_HEADERS {
        if opts.ignores_header(name) {
            continue;
        }
        let recorded: Vec<&str> = ex
            .response
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .flat_map(|(_, v)| v.iter().map(|x| x.trim()))
            .collect();
        let answered: Vec<&str> = obs
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
            .collect();
        if recorded.is_empty() && answered.is_empty() {
            continue;
        }
        compared += 1;
        divergences.extend(header_divergence(name, &recorded, &answered));
    }
    (compared, divergences)
}

/// The divergence at `headers.<name>` between the `recorded` and the `answered` values of a
/// compared header, `None` when they are the same list: absent from the answer is a
/// `missing_field`, unrecorded an `extra_field`, other values a `value_mismatch`; each side's
/// values joined with `, `, `null` for none.
fn header_divergence(name: &str, recorded: &[&str], answered: &[&str]) -> Option<Divergence> {
    if recorded == answered {
        return None;
    }
    let value = |v: &[&str]| {
        if v.is_empty() {
            Value::Null
        } else {
            Value::String(v.join(", "))
        }
    };
    Some(Divergence {
        path: format!("headers.{name}"),
        category: if answered.is_empty() {
            Category::MissingField
        } else if recorded.is_empty() {
            Category::ExtraField
        } else {
            Category::ValueMismatch
        },
        expected: value(recorded),
        actual: value(answered),
    })
}

/// Headers naming resources by their URLs, compared as URLs: a create's `Location` (RFC 9110
/// §10.2.2) and `Content-Location` (§8.7) must name the record its answer holds, and the
/// `Link`s of a page (RFC 8288) the pages next to the one it answered.
const URL_HEADERS: [&str; 3] = ["location", "content-location", "link"];

/// The URLs a value of URL header `name` names, each with what it says of the URL: the whole
/// value for `location` and `content-location`; for `link`, every link-value's URL (between
/// `<` and `>`) with its parameters, each trimmed and written `; rel="next"` (commas and
/// semicolons inside a quoted parameter value kept).
fn header_urls<'v>(name: &str, value: &'v str) -> Vec<(&'v str, String)> {
    if name != "link" {
        return vec![(value.trim(), String::new())];
    }
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(open) = rest.find('<') {
        let Some(len) = rest[open..].find('>') else {
            break;
        };
        let url = rest[open + 1..open + len].trim();
        let after = &rest[open + len + 1..];
        // The parameters run to the first comma outside a quoted string.
        let mut quoted = false;
        let mut escaped = false;
        let mut end = after.len();
        for (i, c) in after.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if quoted => escaped = true,
                '"' => quoted = !quoted,
                ',' if !quoted => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        let params: String = split_unquoted(&after[..end], ';')
            .into_iter()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| format!("; {p}"))
            .collect();
        out.push((url, params));
        rest = after.get(end + 1..).unwrap_or("");
    }
    out
}

/// `s` split at every `sep` outside a double-quoted string.
fn split_unquoted(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut quoted, mut escaped, mut from) = (false, false, 0);
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(&s[from..i]);
                from = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[from..]);
    parts
}

/// The URL headers ([`URL_HEADERS`]) `[diff] ignore_headers` leaves, each compared where either
/// side has it, at `headers.<name>`: as many URLs on both sides (for `link`, as many
/// link-values, in any order), each the URL the recorded one becomes in the answer
/// ([`url_in_answer`]), after its origin (`scheme://authority`: the twin names itself, not the
/// upstream), with the same parameters. Absent from the answer is a `missing_field`, unrecorded
/// an `extra_field`, another URL a `value_mismatch`. Returns how many were compared and the
/// divergences.
fn url_headers(
    index: &ModelIndex<'_>,
    ex: &Exchange,
    obs: &Observed,
    bodies: (&Body, &Body),
    ids: Option<&crate::idmap::IdMap>,
    opts: &DiffOptions,
) -> (u64, Vec<Divergence>) {
    let mut compared = 0;
    let mut divergences = Vec::new();
    for name in URL_HEADERS {
        if opts.ignores_header(name) {
            continue;
        }
        let link = name == "link";
        // A link's query parameters in name order: their order means nothing to the pages
        // they name (the twin writes its links' in name order).
        let written = |url: &str, params: &str| {
            if link {
                format!("<{}>{params}", query_in_name_order(url))
            } else {
                url.to_string()
            }
        };
        // Each recorded URL as the answer should name it: as a pattern (an opaque cursor any
        // value matches) and as shown in the report (the cursor as recorded).
        let mut recorded: Vec<(String, String, String)> = ex
            .response
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .flat_map(|(_, v)| v.iter())
            .flat_map(|v| header_urls(name, v))
            .map(|(url, params)| {
                let url = url_in_answer(
                    index,
                    ex.request.origin.as_deref(),
                    after_origin(url),
                    bodies,
                    ids,
                    link,
                );
                let shown = url.replace(ANY_CURSOR, "");
                let pattern = url
                    .split(ANY_CURSOR)
                    .enumerate()
                    .filter(|(i, _)| i % 2 == 0)
                    .map(|(_, piece)| piece)
                    .collect::<Vec<_>>()
                    .join(&ANY_CURSOR.to_string());
                (
                    params.clone(),
                    written(&pattern, &params),
                    written(&shown, &params),
                )
            })
            .collect();
        let mut answered: Vec<(String, String)> = obs
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .flat_map(|(_, v)| header_urls(name, v))
            .map(|(url, params)| (params.clone(), written(after_origin(url), &params)))
            .collect();
        if recorded.is_empty() && answered.is_empty() {
            continue;
        }
        // A page's links are found by their relation, not by their order.
        if link {
            recorded.sort_by(|a, b| (&a.0, &a.2).cmp(&(&b.0, &b.2)));
            answered.sort();
        }
        compared += 1;
        let same = recorded.len() == answered.len()
            && recorded
                .iter()
                .zip(&answered)
                .all(|((_, pattern, _), (_, a))| matches_pattern(pattern, a));
        if !same {
            let shown: Vec<&str> = recorded.iter().map(|(_, _, s)| s.as_str()).collect();
            let answered: Vec<&str> = answered.iter().map(|(_, a)| a.as_str()).collect();
            divergences.extend(header_divergence(name, &shown, &answered));
        }
    }
    (compared, divergences)
}

/// `url` with the parameters of its query sorted by name (stably: repeated names keep their
/// order), the rest as it is.
fn query_in_name_order(url: &str) -> std::borrow::Cow<'_, str> {
    let Some((head, tail)) = url.split_once('?') else {
        return url.into();
    };
    let (query, fragment) = match tail.find('#') {
        Some(i) => tail.split_at(i),
        None => (tail, ""),
    };
    let mut pairs: Vec<&str> = query.split('&').collect();
    pairs.sort_by_key(|p| p.split('=').next().unwrap_or(""));
    format!("{head}?{}{fragment}", pairs.join("&")).into()
}

/// Brackets an opaque paging cursor in a recorded `Link` URL ([`url_in_answer`]): a value the
/// API chose that names nothing the page holds (Mastodon's `since_id=3` naming its own
/// favourite row, not the account listed), which a twin can only make up. Any value matches.
const ANY_CURSOR: char = '\u{2}';

/// Whether `answered` is `pattern` with each [`ANY_CURSOR`] standing for one non-empty query
/// value (up to the next `&`, `#` or `>`).
fn matches_pattern(pattern: &str, answered: &str) -> bool {
    let mut pieces = pattern.split(ANY_CURSOR);
    let Some(first) = pieces.next() else {
        return pattern == answered;
    };
    let Some(mut rest) = answered.strip_prefix(first) else {
        return false;
    };
    for piece in pieces {
        let end = rest.find(['&', '#', '>']).unwrap_or(rest.len());
        if end == 0 {
            return false;
        }
        match rest[end..].strip_prefix(piece) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

/// Stands for the answer's token in a URL while the rest of it is renamed (no URL holds it).
const ANSWER_TOKEN: char = '\u{1}';

/// The URL (from its path on) a recorded `url` becomes in the answer: each of its whole tokens
/// that is a scalar of the recorded body (a create's `Location` naming its record, and the
/// parent it sits under, by key; a page's `Link` naming its first or last item; found as synth
/// finds them, [`wraith_model::url_parts`]) the scalar the answer's body holds at the same
/// place, so the answer names the records it holds; the rest, and such a token the answer's
/// body lacks, with the recording's ids renamed into the session's as a request to the URL
/// would be ([`crate::idmap::IdMap::rename_url`]: a short path segment by the kind of record
/// its position names on the route the URL's path takes, found like a request's from
/// `origin`).
fn url_in_answer(
    index: &ModelIndex<'_>,
    origin: Option<&str>,
    url: &str,
    (recorded_body, answered_body): (&Body, &Body),
    ids: Option<&crate::idmap::IdMap>,
    cursors: bool,
) -> String {
    // The URL with each token taken from the answer written as `ANSWER_TOKEN <n> ANSWER_TOKEN`:
    // one whole token, named by no id map.
    let mut marked = String::new();
    let mut taken: Vec<String> = Vec::new();
    match (recorded_body, answered_body) {
        (Body::Json(r), Body::Json(a)) if !url.contains([ANSWER_TOKEN, ANY_CURSOR]) => {
            for part in wraith_model::url_parts(url, r, wraith_model::is_identifier_key) {
                match part {
                    wraith_model::UrlPart::Text { text } => marked.push_str(&text),
                    wraith_model::UrlPart::Body { pointer } => {
                        match a.pointer(&pointer).and_then(wraith_model::url_token) {
                            Some(t) => {
                                marked.push(ANSWER_TOKEN);
                                marked.push_str(&taken.len().to_string());
                                marked.push(ANSWER_TOKEN);
                                taken.push(t);
                            }
                            None => marked.push_str(
                                &r.pointer(&pointer)
                                    .and_then(wraith_model::url_token)
                                    .unwrap_or_default(),
                            ),
                        }
                    }
                }
            }
        }
        _ => marked.push_str(&url.replace([ANSWER_TOKEN, ANY_CURSOR], "")),
    }
    let path = marked.split(['?', '#']).next().unwrap_or("");
    let route = index.route_for("GET", path, origin);
    if cursors
        && let Some(route) = route
        && let Some(list) = &route.list
        && let wraith_model::Pagination::LinkHeader {
            next_param,
            prev_param,
            positional: false,
            numbered: false,
            ..
        } = &list.pagination
    {
        let pk = route
            .entity_type
            .as_deref()
            .and_then(|t| index.model.entity_types.get(t))
            .map_or("id", |t| t.primary_key.as_str());
        let ends = |body: &Body| match body {
            Body::Json(v) => page_ends(v, &list.items_pointer, pk),
            _ => (None, None),
        };
        let names: Vec<&str> = std::iter::once(next_param.as_str())
            .chain(prev_param.as_deref())
            .collect();
        marked = mark_cursors(
            &marked,
            &names,
            (ends(recorded_body), ends(answered_body)),
            &mut taken,
        );
    }
    let path = marked.split(['?', '#']).next().unwrap_or("");
    let renamed = match ids {
        Some(ids) => ids.rename_url(&marked, &|position| {
            route.and_then(|r| index.segment_kind(r, path, position))
        }),
        None => marked.clone(),
    };
    if taken.is_empty() {
        return renamed;
    }
    let mut out = String::with_capacity(renamed.len());
    let mut pieces = renamed.split(ANSWER_TOKEN);
    out.push_str(pieces.next().unwrap_or(""));
    // Pieces alternate: a marker's number, then the text up to the next marker.
    while let (Some(n), Some(text)) = (pieces.next(), pieces.next()) {
        match n.parse::<usize>().ok().and_then(|i| taken.get(i)) {
            Some(t) => out.push_str(t),
            None => out.push_str(n),
        }
        out.push_str(text);
    }
    out
}

/// The [`wraith_model::url_token`]s of the keys of a page's first and last items.
type PageEnds = (Option<String>, Option<String>);

/// The [`PageEnds`] of the page `body` lists at `items_pointer`, keyed by `pk`.
fn page_ends(body: &Value, items_pointer: &str, pk: &str) -> PageEnds {
    let items = body
        .pointer(items_pointer)
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let key = |item: Option<&Value>| item?.get(pk).and_then(wraith_model::url_token);
    (key(items.first()), key(items.last()))
}

/// `url` with the value of each query parameter named in `names` (the route's paging cursors)
/// as the answer should give it: the recorded page's first or last item's key the answer's
/// first or last item's ([`ANSWER_TOKEN`], pushed to `taken`; kept as recorded when the answer
/// lists nothing); any other value, one that names no end of the page (the API's own row id),
/// bracketed in [`ANY_CURSOR`].
fn mark_cursors(
    url: &str,
    names: &[&str],
    ((first, last), (answer_first, answer_last)): (PageEnds, PageEnds),
    taken: &mut Vec<String>,
) -> String {
    let Some((head, tail)) = url.split_once('?') else {
        return url.to_string();
    };
    let (query, fragment) = match tail.find('#') {
        Some(i) => tail.split_at(i),
        None => (tail, ""),
    };
    let mut take = |t: &str| {
        taken.push(t.to_string());
        format!("{ANSWER_TOKEN}{}{ANSWER_TOKEN}", taken.len() - 1)
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) if names.contains(&k) && !v.is_empty() && !v.contains(ANSWER_TOKEN) => {
                let from_answer = if first.as_deref() == Some(v) {
                    Some(answer_first.as_deref())
                } else if last.as_deref() == Some(v) {
                    Some(answer_last.as_deref())
                } else {
                    None
                };
                match from_answer {
                    Some(Some(t)) => format!("{k}={}", take(t)),
                    Some(None) => pair.to_string(),
                    None => format!("{k}={ANY_CURSOR}{v}{ANY_CURSOR}"),
                }
            }
            _ => pair.to_string(),
        })
        .collect();
    format!("{head}?{}{fragment}", pairs.join("&"))
}

/// The values of the headers an exchange's answer is judged by besides `content-type` (the
/// challenges, [`CHALLENGE_HEADERS`], then the URL headers, [`URL_HEADERS`]), each named, in
/// that order: what makes two recorded answers with the same status, type and body differ,
/// and what a recorded answer judged as if a twin gave it must carry.
pub(crate) fn compared_headers(ex: &Exchange) -> Vec<(&'static str, &str)> {
    CHALLENGE_HEADERS
        .iter()
        .chain(URL_HEADERS.iter())
        .flat_map(|name| {
            ex.response
                .headers
                .iter()
                .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
                .flat_map(move |(_, v)| v.iter().map(move |x| (*name, x.as_str())))
        })
        .collect()
}

/// Whether the recording or the answer has a header [`url_headers`] compares (so the answer's
/// body is worth parsing for it).
fn has_url_header(ex: &Exchange, obs: &Observed) -> bool {
    let url = |k: &str| URL_HEADERS.iter().any(|n| k.eq_ignore_ascii_case(n));
    ex.response.headers.keys().any(|k| url(k)) || obs.headers.iter().any(|(k, _)| url(k))
}

/// `url` from its path on: what follows `scheme://authority` in an absolute URL (`/` when
/// nothing does), a relative one as it is.
fn after_origin(url: &str) -> &str {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url;
    };
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return url;
    }
    match rest.find(['/', '?', '#']) {
        Some(i) => &rest[i..],
        None => "/",
    }
}

/// The recorded and the answered `content-type` (the recorded header, else the recorded body's
/// declared type), as both judge paths compare them.
fn content_types<'a>(ex: &'a Exchange, obs: &'a Observed) -> (Option<&'a str>, Option<&'a str>) {
    let exp = ex
        .response_header("content-type")
        .or(ex.response.content_type.as_deref());
    let act = obs
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.as_str());
    (exp, act)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::EchoContext;
    use wraith_engine::ReplayClass;

    /// A recorded `GET /v1/blob` answered 200 with `body`.
    fn blob_recorded(body: &[u8]) -> Exchange {
        let mut ex = crate::test_support::exchange(crate::test_support::get("/v1/blob"), 200);
        ex.frames.push(wraith_recording::exchange::Frame {
            direction: "server".into(),
            timestamp_us: 0,
            body: body.to_vec(),
            frame_type: "data".into(),
        });
        ex
    }

    /// The twin's 200 with `body`, no headers, no provenance, route or claim.
    fn answered(body: &[u8]) -> Observed {
        Observed {
            status: 200,
            headers: Vec::new(),
            body: body.to_vec(),
            provenance: None,
            route: None,
            replay: None,
        }
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn different_binary_bodies_of_one_length_are_told_apart_with_their_own_drift_ids() {
        let model: Model = serde_json::from_str(PAIRINGS).unwrap();
        let index = ModelIndex::new(&model);
        let ex = blob_recorded(&[0xff, 0xfe, 0, 1, 2, 3, 4, 5]);
        let body_divergence = |answer: &[u8]| {
            let verdict = judge(
                &index,
                "s/0",
                &ex,
                &answered(answer),
                &DiffOptions::default(),
            );
            verdict
                .divergences
                .into_iter()
                .find(|d| d.path == "body")
                .unwrap()
        };
        let b = body_divergence(&[0xff, 0xfe, 9, 9, 9, 9, 9, 9]);
        let c = body_divergence(&[0xff, 0xfe, 7, 7, 7, 7, 7, 7]);
        assert_eq!(b.category, Category::ValueMismatch);
        // The SHA-256 of the recorded bytes begins 946ca6a09cf4.
        assert_eq!(b.expected, json!("<8 bytes, sha256 946ca6a09cf4>"));
        assert_ne!(b.actual, c.actual);
        let id = |d: &crate::diff::Divergence| {
            crate::report::drift_id("GET /v1/blob", &d.path, d.category, &d.expected, &d.actual)
        };
        assert_ne!(id(&b), id(&c));
        // A binary body against a text one keeps the summary as its value.
        let t = body_divergence(b"plain text");
        assert_eq!(t.category, Category::TypeMismatch);
        assert_eq!(t.expected["value"], b.expected);
    }

    #[test]
    fn an_object_whose_keys_come_in_another_order_than_its_sorted_text_is_read_once() {
        // 100,000 keys held newest first against the sorted text: each key used to be looked
        // for entry by entry (minutes); found by key, the answer comes at once.
        let mut m = serde_json::Map::new();
        for i in (0..100_000).rev() {
            m.insert(format!("k{i:06}"), Value::from(i));
        }
        let v = Value::Object(m);
        let sorted = serde_json::to_vec(&SortedKeys(&v)).expect("serializes");
        assert!(serializes_sorted_to(&v, &sorted));
        assert!(serializes_either_way(&v, &sorted));
        // A value changed, a key missing or one key twice is not this object.
        let changed = String::from_utf8(sorted.clone())
            .expect("utf-8")
            .replace("\"k050000\":50000", "\"k050000\":7");
        assert!(!serializes_sorted_to(&v, changed.as_bytes()));
        let missing = String::from_utf8(sorted.clone())
            .expect("utf-8")
            .replace(",\"k050000\":50000", "");
        assert!(!serializes_sorted_to(&v, missing.as_bytes()));
        let twice = String::from_utf8(sorted)
            .expect("utf-8")
            .replace("\"k050001\":50001", "\"k050000\":50000");
        assert!(!serializes_sorted_to(&v, twice.as_bytes()));
    }

    /// Rule 1 of the judge: an answer the twin marks `miss` (fail-closed: an unknown id's 404,
    /// no variant matching) is a refusal even when its status and body equal the recording's,
    /// and a refusal scores 0.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_miss_is_a_refusal_scored_zero_even_when_it_equals_the_recording() {
        let model: Model = serde_json::from_str(PAIRINGS).unwrap();
        let index = ModelIndex::new(&model);
        let body = br#"{"error":"not found"}"#;
        let mut ex = blob_recorded(body);
        ex.response.status = 404;
        let obs = Observed {
            status: 404,
            provenance: Some(Provenance::Miss),
            ..answered(body)
        };
        let v = judge(&index, "s/0", &ex, &obs, &DiffOptions::default());
        assert_eq!(v.score_bp, 0);
        assert_eq!(v.divergences.len(), 1, "{:?}", v.divergences);
        assert_eq!(v.divergences[0].path, "response");
        assert_eq!(v.divergences[0].category, Category::SynthesizedRefusal);
        // The same answer marked as recorded passes.
        let recorded = Observed {
            provenance: Some(Provenance::Recorded),
            ..obs
        };
        let v = judge(&index, "s/0", &ex, &recorded, &DiffOptions::default());
        assert_eq!(v.score_bp, 10_000, "{:?}", v.divergences);
    }

    /// A target that sends no provenance (another server, or `--no-provenance-headers`) still
    /// has its 501 route-miss body read as the twin's refusal, not as a status difference.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_route_miss_body_without_provenance_is_a_refusal_scored_zero() {
        let model: Model = serde_json::from_str(PAIRINGS).unwrap();
        let index = ModelIndex::new(&model);
        let ex = blob_recorded(br#"{"ok":true}"#);
        let miss =
            br#"{"error":"no matching route","wraith":{"hint":"route not in recorded coverage"}}"#;
        let obs = Observed {
            status: 501,
            ..answered(miss)
        };
        let v = judge(&index, "s/0", &ex, &obs, &DiffOptions::default());
        assert_eq!(v.score_bp, 0);
        assert_eq!(v.divergences.len(), 1, "{:?}", v.divergences);
        assert_eq!(v.divergences[0].category, Category::SynthesizedRefusal);
        assert_eq!(v.divergences[0].expected, json!({"status": 200}));
    }

    /// Integers are compared exactly, past 2^53 too: ids that differ in their last digit are
    /// two ids, though as 64-bit floats they are one number.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn integers_past_two_to_the_53_that_differ_in_the_last_digit_diverge() {
        let model: Model = serde_json::from_str(PAIRINGS).unwrap();
        let index = ModelIndex::new(&model);
        let ex = blob_recorded(br#"{"id":9007199254740993}"#);
        let v = judge(
            &index,
            "s/0",
            &ex,
            &answered(br#"{"id":9007199254740992}"#),
            &DiffOptions::default(),
        );
        let paths: Vec<(&str, Category)> = v
            .divergences
            .iter()
            .map(|d| (d.path.as_str(), d.category))
            .collect();
        assert_eq!(paths, vec![("body.id", Category::ValueMismatch)]);
        let same = judge(
            &index,
            "s/0",
            &ex,
            &answered(br#"{"id":9007199254740993}"#),
            &DiffOptions::default(),
        );
        assert_eq!(same.score_bp, 10_000, "{:?}", same.divergences);
    }

    /// `content-type` is compared only when either side has a body: a bodiless answer (a 204)
    /// whose recording named a type it did not send passes.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn content_type_is_not_compared_when_neither_side_has_a_body() {
        let model: Model = serde_json::from_str(PAIRINGS).unwrap();
        let index = ModelIndex::new(&model);
        let mut ex = blob_recorded(b"");
        ex.response.status = 204;
        ex.response.content_type = Some("application/json".into());
        ex.response
            .headers
            .insert("content-type".into(), vec!["application/json".into()]);
        let obs = Observed {
            status: 204,
            ..answered(b"")
        };
        let v = judge(&index, "s/0", &ex, &obs, &DiffOptions::default());
        assert_eq!(v.score_bp, 10_000, "{:?}", v.divergences);
        // With a body on one side the type is compared.
        let mut with_body = blob_recorded(br#"{"a":1}"#);
        with_body.response.content_type = Some("application/json".into());
        let obs = Observed {
            headers: vec![("content-type".into(), "text/plain".into())],
            ..answered(br#"{"a":1}"#)
        };
        let v = judge(&index, "s/0", &with_body, &obs, &DiffOptions::default());
        assert!(
            v.divergences
                .iter()
                .any(|d| d.path == "headers.content-type"),
            "{:?}",
            v.divergences
        );
    }

    /// `POST /v1/pairings` creating `pairings` records, whose `code` later views show as its
    /// first 4 characters (`read_prefixes`).
    const PAIRINGS: &str = r#"{
 "base_url": "https://api.pairings.test",
 "diagnostics": [],
 "entity_types": {"pairings": {"primary_key": "id", "known_ids": [], "known_missing": [],
   "read_prefixes": {"code": 4}}},
 "recorded_at": "2026-06-05T12:00:02Z",
 "routes": [{
   "entity_type": "pairings", "exact": [], "exchange_count": 1, "id": "post_v1_pairings",
   "latency": {"p50_ms": 1, "p90_ms": 1, "p99_ms": 1, "sample_count": 1},
   "method": "POST", "params": [], "path": "/v1/pairings", "state_op": "create",
   "variants": []
 }],
 "schema_version": 1, "sessions": [], "tool_version": "0.1.0", "twin": "pairings"
}"#;

    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_create_pairs_the_shown_prefix_of_a_minted_code_of_the_recorded_length() {
        let model: Model = serde_json::from_str(PAIRINGS).unwrap();
        let index = ModelIndex::new(&model);
        let obs = |route: &str| Observed {
            status: 200,
            headers: Vec::new(),
            body: Vec::new(),
            provenance: None,
            route: Some(route.into()),
            replay: None,
        };
        let create = obs("POST /v1/pairings");
        let pairs = |recorded: Value, answered: Value| {
            shown_prefix_pairs(&index, &create, &recorded, &answered)
        };
        assert_eq!(
            pairs(json!({"code": "abcdef12"}), json!({"code": "9876fedc"})),
            vec![(json!("abcd"), json!("9876"))]
        );
        // The outbound pass's token of the recorded code is no mint of its shape.
        assert!(
            pairs(
                json!({"code": "abcdef12"}),
                json!({"code": "wraith_tok_x1"})
            )
            .is_empty()
        );
        // Equal prefixes, a code no longer than its prefix, a code that is no string: nothing.
        assert!(pairs(json!({"code": "abcdef12"}), json!({"code": "abcd0000"})).is_empty());
        assert!(pairs(json!({"code": "abcd"}), json!({"code": "wxyz"})).is_empty());
        assert!(pairs(json!({"code": 12345678}), json!({"code": 87654321})).is_empty());
        // Only a create's answer: the same bodies answered by another route pair nothing.
        assert!(
            shown_prefix_pairs(
                &index,
                &obs("GET /v1/pairings"),
                &json!({"code": "abcdef12"}),
                &json!({"code": "9876fedc"})
            )
            .is_empty()
        );
    }

    #[test]
    fn a_leaked_placeholder_is_found_in_the_bytes_as_in_the_text() {
        for body in [
            r#"{"price":"$5","a":"$hole_3"}"#,
            r#"["$","$arr_12_x","$hole_9"]"#,
            r#"{"a":"$hol","b":"$ar","c":"$$hole_1"}"#,
            r#"{"cost":"$10","tag":"hole_1"}"#,
            "",
        ] {
            assert_eq!(
                leaked_placeholder_in(body.as_bytes()),
                leaked_placeholder(body),
                "{body}"
            );
        }
        assert_eq!(
            leaked_placeholder_in(br#"{"a":"$hole_7"}"#).as_deref(),
            Some("$hole_7")
        );
        // Not UTF-8: no text to hold a placeholder, as before.
        assert_eq!(leaked_placeholder_in(b"\xff$hole_1"), None);
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_placeholder_spelled_with_json_escapes_is_a_synthesized_refusal() {
        for body in [
            r#"{"a":"\u0024hole_7"}"#,
            r#"{"a":"\u0024\u0068ole_7"}"#,
            r#"{"a":["x",{"b":"\u0024HOLE"}],"\u0024hole_7":1}"#,
        ] {
            assert_eq!(
                leaked_placeholder_in(body.as_bytes()).as_deref(),
                Some("$hole_7"),
                "{body}"
            );
        }
        assert_eq!(
            leaked_placeholder_in(br#"{"a":"\u0024arr_2"}"#).as_deref(),
            Some("$arr_2")
        );
        for body in [
            r#"{"a":"\u0024 5","b":"caf\u00e9"}"#,
            r#"{"a":"\u0024hole_7""#,
        ] {
            assert_eq!(leaked_placeholder_in(body.as_bytes()), None, "{body}");
        }
        let model: Model = serde_json::from_str(PAIRINGS).unwrap();
        let index = ModelIndex::new(&model);
        let ex = blob_recorded(br#"{"a":"x"}"#);
        let judged = |answer: &[u8]| {
            judge(
                &index,
                "s/0",
                &ex,
                &answered(answer),
                &DiffOptions::default(),
            )
            .divergences
        };
        for answer in [&br#"{"a":"$hole_7"}"#[..], br#"{"a":"\u0024hole_7"}"#] {
            let d = judged(answer);
            assert_eq!(d.len(), 1, "{d:?}");
            assert_eq!(
                (d[0].path.as_str(), d[0].category),
                ("body", Category::SynthesizedRefusal)
            );
            assert_eq!(d[0].actual["leaked_placeholder"], json!("$hole_7"));
        }
    }

    #[test]
    fn replay_header_parsing_is_fail_closed() {
        assert_eq!(
            parse_replay_header("series-moment;v=1"),
            Some(ReplayClaim {
                class: ReplayClass::SeriesMoment,
                outbound_policy_applied: false
            })
        );
        assert_eq!(
            parse_replay_header("session-bound-moment;v=1;outbound-policy=applied"),
            Some(ReplayClaim {
                class: ReplayClass::SessionBoundMoment,
                outbound_policy_applied: true
            })
        );
        assert_eq!(parse_replay_header("series-moment;v=2"), None);
        assert_eq!(parse_replay_header("series-moment"), None);
        assert_eq!(parse_replay_header("future-moment;v=1"), None);
        assert_eq!(parse_replay_header("series-moment;v=1;unknown=1"), None);
    }

    fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            ".{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((".{0,4}", inner), 0..4)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// The byte shortcut's premise: an answer that is the recording's serialization parses
        /// back to a tree equal to the recording (so it diverges nowhere), and the comparison
        /// accepts exactly that serialization.
        #[test]
        fn a_serialized_recording_parses_back_equal(v in any_json(), w in any_json()) {
            let bytes = serde_json::to_vec(&v)?;
            proptest::prop_assert!(serializes_to(&v, &bytes));
            let back: Value = serde_json::from_slice(&bytes)?;
            proptest::prop_assert!(json_eq(&v, &back));
            let echo = EchoContext::default();
            let mut d = BodyDiff::new(&echo);
            d.run(None, &v, &back);
            proptest::prop_assert!(d.divergences.is_empty());
            let other = serde_json::to_vec(&w)?;
            proptest::prop_assert_eq!(serializes_to(&v, &other), other == bytes);
            proptest::prop_assert!(!serializes_to(&v, &bytes[..bytes.len() - 1]));
        }
    }

    proptest::proptest! {
        /// The sorted-keys shortcut accepts exactly the canonical serialization (what exact
        /// replay serves), which parses back to a tree equal to the recording.
        #[test]
        fn a_recording_with_sorted_keys_parses_back_equal(v in any_json(), w in any_json()) {
            let canonical = wraith_model::to_canonical_json(&v)?;
            let bytes = canonical.trim_end_matches('\n').as_bytes();
            proptest::prop_assert!(serializes_sorted_to(&v, bytes));
            proptest::prop_assert!(serializes_either_way(&v, bytes));
            let back: Value = serde_json::from_slice(bytes)?;
            proptest::prop_assert!(json_eq(&v, &back));
            let other = wraith_model::to_canonical_json(&w)?;
            let other = other.trim_end_matches('\n').as_bytes();
            proptest::prop_assert_eq!(serializes_sorted_to(&v, other), other == bytes);
            proptest::prop_assert!(!serializes_sorted_to(&v, &bytes[..bytes.len() - 1]));
        }
    }

    /// The sorted comparison without sorting agrees with comparing the bytes to the tree
    /// serialized with sorted keys, for the canonical bytes, for other trees' and for the
    /// recorded-order serialization (keys of any characters: quotes, backslashes and control
    /// characters are escaped).
    fn sorted_serialization(v: &Value) -> Vec<u8> {
        serde_json::to_vec(&SortedKeys(v)).unwrap_or_default()
    }

    proptest::proptest! {
        #[test]
        fn sorted_comparison_agrees_with_serializing_sorted(v in any_json(), w in any_json()) {
            let sorted = sorted_serialization(&v);
            proptest::prop_assert!(serializes_sorted_to(&v, &sorted));
            for other in [sorted_serialization(&w), serde_json::to_vec(&v)?, serde_json::to_vec(&w)?] {
                proptest::prop_assert_eq!(serializes_sorted_to(&v, &other), other == sorted);
            }
            let mut longer = sorted.clone();
            longer.push(b' ');
            proptest::prop_assert!(!serializes_sorted_to(&v, &longer));
        }
    }

    #[test]
    fn sorted_comparison_needs_every_key_once_in_order() {
        let v = json!({"b": 1, "a": [true, null, "x\"y"], "c\\d": {"\u{1}": 2.5}});
        let sorted = br#"{"a":[true,null,"x\"y"],"b":1,"c\\d":{"\u0001":2.5}}"#;
        assert!(serializes_sorted_to(&v, sorted));
        for wrong in [
            &br#"{"b":1,"a":[true,null,"x\"y"],"c\\d":{"\u0001":2.5}}"#[..],
            br#"{"a":[true,null,"x\"y"],"b":1}"#,
            br#"{"a":[true,null,"x\"y"],"a":[true,null,"x\"y"],"b":1,"c\\d":{"\u0001":2.5}}"#,
            br#"{"a":[true,null,"x\"y"],"b":1,"c\\d":{"\u0001":2.5},"d":0}"#,
            br#"{"a":[true,null,"x\"y"],"b":1,"c\\d":{"\u0001":2.50}}"#,
        ] {
            assert!(
                !serializes_sorted_to(&v, wrong),
                "{}",
                String::from_utf8_lossy(wrong)
            );
        }
    }

    /// [`passes`] (the short judgement) of `obs` against the recorded `ex` as recorded, with
    /// the default options: what every header test checks the full judgement against.
    fn quick_passes(index: &ModelIndex<'_>, ex: &Exchange, obs: &Observed) -> bool {
        passes(
            index,
            "s/0",
            ex,
            &ExpectedBody::of(ex),
            obs,
            &obs.body,
            &parse_body(&obs.body),
            false,
            &DiffOptions::default(),
            &echo_context(ex, obs),
        )
    }

    /// A list of a list's members, paged by `Link` cursors over the members' ids.
    const MEMBERS: &str = r#"{
 "base_url": "https://api.lists.test",
 "diagnostics": [],
 "entity_types": {"lists": {"primary_key": "id", "known_ids": [], "known_missing": []},
   "members": {"primary_key": "id", "known_ids": [], "known_missing": []}},
 "recorded_at": "2026-06-05T12:00:02Z",
 "routes": [{
   "entity_type": "members", "exact": [], "exchange_count": 1, "id": "get_v1_lists_members",
   "latency": {"p50_ms": 1, "p90_ms": 1, "p99_ms": 1, "sample_count": 1},
   "list": {"items_pointer": "", "pagination": {"style": "link_header",
     "next_param": "max_id", "prev_param": "since_id", "limit": "limit"}},
   "method": "GET", "params": ["list"], "parent_params": [{"param": "list", "entity_type": "lists"}],
   "path": "/v1/lists/:list/members", "state_op": "list", "variants": []
 }],
 "schema_version": 1, "sessions": [], "tool_version": "0.1.0", "twin": "lists"
}"#;

    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_link_naming_another_page_than_the_answer_is_a_header_divergence() {
        let model: Model = serde_json::from_str(MEMBERS).unwrap();
        let index = ModelIndex::new(&model);
        let mut ex =
            crate::test_support::exchange(crate::test_support::get("/v1/lists/3/members"), 200);
        ex.response.content_type = Some("application/json".into());
        ex.response.headers.insert(
            "link".into(),
            vec![
                "<https://api.lists.test/v1/lists/3/members?max_id=m_aaa111&limit=2>; rel=\"next\", \
                 <https://api.lists.test/v1/lists/3/members?since_id=9>; rel=\"prev\""
                    .into(),
            ],
        );
        ex.frames = vec![wraith_recording::exchange::Frame {
            direction: "server".into(),
            timestamp_us: 0,
            body: br#"[{"id":"m_aaa111","name":"one"}]"#.to_vec(),
            frame_type: "data".into(),
        }];
        // The session's list `4` was recorded as `3`; ids this short are renamed only at a
        // position of their kind.
        let mut ids = crate::idmap::IdMap::new();
        ids.learn([crate::idmap::IdPair {
            recorded: json!("3"),
            answered: json!("4"),
            kind: Some("lists:id".into()),
        }]);
        let judged =
            |ex: &Exchange, link: Option<&str>, body: &str, ids: Option<&crate::idmap::IdMap>| {
                header_divergences(&index, ex, ("link", link), body, ids)
                    .into_iter()
                    .map(|d| (d.path, d.category))
                    .collect::<Vec<_>>()
            };
        let mine = r#"[{"id":"m_0f0f0f","name":"one"}]"#;
        let mismatch = vec![("headers.link".to_string(), Category::ValueMismatch)];
        // The session's list, the answer's last member as the `next` cursor, the links in
        // either order, the twin's own origin; the `prev` cursor names no member of the page
        // (the API's own row id), so any value passes there.
        assert_eq!(
            judged(
                &ex,
                Some(
                    "<http://127.0.0.1:8081/v1/lists/4/members?since_id=m_0f0f0f>; rel=\"prev\",\
                     <http://127.0.0.1:8081/v1/lists/4/members?limit=2&max_id=m_0f0f0f>;rel=\"next\""
                ),
                mine,
                Some(&ids)
            ),
            vec![]
        );
        assert_eq!(
            judged(
                &ex,
                Some(
                    "</v1/lists/4/members?max_id=m_0f0f0f>; rel=\"next\", \
                     </v1/lists/4/members?since_id=1>; rel=\"prev\""
                ),
                mine,
                Some(&ids)
            ),
            mismatch,
            "a parameter of the recorded link left out"
        );
        // Another list, a cursor naming another member, another relation, a link left out.
        for link in [
            "</v1/lists/3/members?max_id=m_0f0f0f&limit=2>; rel=\"next\", \
             </v1/lists/4/members?since_id=1>; rel=\"prev\"",
            "</v1/lists/4/members?max_id=m_aaa111&limit=2>; rel=\"next\", \
             </v1/lists/4/members?since_id=1>; rel=\"prev\"",
            "</v1/lists/4/members?max_id=m_0f0f0f&limit=2>; rel=\"last\", \
             </v1/lists/4/members?since_id=1>; rel=\"prev\"",
            "</v1/lists/4/members?max_id=m_0f0f0f&limit=2>; rel=\"next\"",
        ] {
            assert_eq!(
                judged(&ex, Some(link), mine, Some(&ids)),
                mismatch,
                "{link}"
            );
        }
        // An empty cursor is no cursor.
        assert_eq!(
            judged(
                &ex,
                Some(
                    "</v1/lists/4/members?max_id=m_0f0f0f&limit=2>; rel=\"next\", \
                     </v1/lists/4/members?since_id=>; rel=\"prev\""
                ),
                mine,
                Some(&ids)
            ),
            mismatch
        );
        // None at all, and one where the recording has none.
        assert_eq!(
            judged(&ex, None, mine, Some(&ids)),
            vec![("headers.link".to_string(), Category::MissingField)]
        );
        ex.response.headers.shift_remove("link");
        assert_eq!(
            judged(
                &ex,
                Some("</v1/lists/4/members?max_id=m_0f0f0f>; rel=\"next\""),
                mine,
                None
            ),
            vec![("headers.link".to_string(), Category::ExtraField)]
        );
        // `[diff] ignore_headers` leaves it out.
        let elsewhere = ("link", "</elsewhere>; rel=\"next\"");
        assert_eq!(
            compared_url_headers(&index, &ex, elsewhere, mine, "Link"),
            0
        );
    }

    /// The header divergences of `ex`'s recording judged in the session's names (`ids`)
    /// against a JSON answer with `body` and header `name: value` (none when `None`); without
    /// `ids` the short judgement must agree.
    fn header_divergences(
        index: &ModelIndex<'_>,
        ex: &Exchange,
        (name, value): (&str, Option<&str>),
        body: &str,
        ids: Option<&crate::idmap::IdMap>,
    ) -> Vec<Divergence> {
        let obs = Observed {
            status: ex.response.status,
            headers: std::iter::once(("content-type".to_string(), "application/json".into()))
                .chain(value.map(|v| (name.to_string(), v.to_string())))
                .collect(),
            body: body.as_bytes().to_vec(),
            provenance: None,
            route: None,
            replay: None,
        };
        let v = judge_in_session(
            index,
            "s/0",
            ex,
            ex,
            &ExpectedBody::of(ex),
            &obs,
            &DiffOptions::default(),
            None,
            None,
            ids,
        );
        if ids.is_none() {
            assert_eq!(quick_passes(index, ex, &obs), v.passed(), "{v:?}");
        }
        v.divergences
            .into_iter()
            .filter(|d| d.path.starts_with("headers."))
            .collect()
    }

    /// How many URL headers [`url_headers`] compares on `ex` answered with `header` and `body`
    /// under `[diff] ignore_headers = [ignored]`.
    fn compared_url_headers(
        index: &ModelIndex<'_>,
        ex: &Exchange,
        (name, value): (&str, &str),
        body: &str,
        ignored: &str,
    ) -> u64 {
        let obs = Observed {
            status: ex.response.status,
            headers: vec![(name.into(), value.into())],
            body: body.as_bytes().to_vec(),
            provenance: None,
            route: None,
            replay: None,
        };
        let opts = DiffOptions {
            ignore_headers: vec![ignored.into()],
            ..DiffOptions::default()
        };
        let parsed = parse_body(&obs.body);
        let expected = ExpectedBody::of(ex);
        url_headers(index, ex, &obs, (&expected.body, &parsed), None, &opts).0
    }

    #[test]
    fn link_values_keep_quoted_commas_and_semicolons_inside_their_parameters() {
        assert_eq!(
            header_urls(
                "link",
                "<https://a.test/x?p=1>; rel=\"next\"; title=\"a, b; c\" ,<https://a.test/y>;rel=prev"
            ),
            vec![
                (
                    "https://a.test/x?p=1",
                    "; rel=\"next\"; title=\"a, b; c\"".to_string()
                ),
                ("https://a.test/y", "; rel=prev".to_string())
            ]
        );
        assert_eq!(header_urls("link", "no link here"), vec![]);
        assert_eq!(
            header_urls("location", " /a/b "),
            vec![("/a/b", String::new())]
        );
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_location_naming_another_record_than_the_answer_is_a_header_divergence() {
        let model: Model = serde_json::from_str(PAIRINGS).unwrap();
        let index = ModelIndex::new(&model);
        let mut ex = crate::test_support::exchange(crate::test_support::get("/v1/widgets"), 201);
        ex.request.method = "POST".into();
        ex.response.content_type = Some("application/json".into());
        ex.response.headers.insert(
            "location".into(),
            vec!["https://api.widgets.test/v1/widgets/w_aaa111?expand=owner".into()],
        );
        ex.frames = vec![wraith_recording::exchange::Frame {
            direction: "server".into(),
            timestamp_us: 0,
            body: br#"{"id":"w_aaa111","name":"one"}"#.to_vec(),
            frame_type: "data".into(),
        }];
        let judged = |location: Option<&str>, body: &str, ids: Option<&crate::idmap::IdMap>| {
            header_divergences(&index, &ex, ("location", location), body, ids)
                .into_iter()
                .map(|d| (d.path, d.category, d.expected, d.actual))
                .collect::<Vec<_>>()
        };
        let mine = r#"{"id":"w_0f0f0f","name":"one"}"#;
        // The twin's own origin, naming the record its answer holds.
        assert_eq!(
            judged(
                Some("http://127.0.0.1:8081/v1/widgets/w_0f0f0f?expand=owner"),
                mine,
                None
            ),
            vec![]
        );
        // The recorded run's record, while the answer holds another.
        assert_eq!(
            judged(Some("/v1/widgets/w_aaa111?expand=owner"), mine, None),
            vec![(
                "headers.location".to_string(),
                Category::ValueMismatch,
                json!("/v1/widgets/w_0f0f0f?expand=owner"),
                json!("/v1/widgets/w_aaa111?expand=owner"),
            )]
        );
        // Another query, and none at all.
        assert_eq!(
            judged(Some("/v1/widgets/w_0f0f0f"), mine, None)[0].1,
            Category::ValueMismatch
        );
        assert_eq!(judged(None, mine, None)[0].1, Category::MissingField);
        // A recorded id the session was told another name for reads as that name.
        let mut ids = crate::idmap::IdMap::new();
        ids.learn([crate::idmap::IdPair::new(
            json!("w_aaa111"),
            json!("w_777777"),
        )]);
        assert_eq!(
            judged(
                Some("/v1/widgets/w_777777?expand=owner"),
                r#"{"id":"w_777777","name":"one"}"#,
                Some(&ids)
            ),
            vec![]
        );
        // `[diff] ignore_headers` leaves it out.
        let elsewhere = ("location", "/elsewhere");
        assert_eq!(
            compared_url_headers(&index, &ex, elsewhere, mine, "Location"),
            0
        );
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_missing_or_different_authentication_challenge_is_a_header_divergence() {
        let model: Model = serde_json::from_str(PAIRINGS).unwrap();
        let index = ModelIndex::new(&model);
        for (status, name) in [(401, "www-authenticate"), (407, "proxy-authenticate")] {
            let mut ex = crate::test_support::exchange(crate::test_support::get("/v1/me"), status);
            ex.response
                .headers
                .insert(name.to_string(), vec![r#"Bearer realm="api""#.to_string()]);
            let judged = |headers: Vec<(String, String)>| {
                let obs = Observed {
                    status,
                    headers,
                    body: Vec::new(),
                    provenance: None,
                    route: None,
                    replay: None,
                };
                let v = judge(&index, "s/0", &ex, &obs, &DiffOptions::default());
                assert_eq!(quick_passes(&index, &ex, &obs), v.passed(), "{v:?}");
                let d: Vec<(String, Category)> = v
                    .divergences
                    .into_iter()
                    .map(|d| (d.path, d.category))
                    .collect();
                (d, v.facets.headers_compared)
            };
            let path = format!("headers.{name}");
            let header = |v: &str| vec![(name.to_string(), v.to_string())];
            assert_eq!(judged(header(r#" Bearer realm="api""#)), (vec![], true));
            assert_eq!(
                judged(Vec::new()),
                (vec![(path.clone(), Category::MissingField)], true)
            );
            assert_eq!(
                judged(header(r#"Basic realm="api""#)),
                (vec![(path.clone(), Category::ValueMismatch)], true)
            );
            // `[diff] ignore_headers` removes it like `content-type`.
            let opts = DiffOptions {
                ignore_headers: vec![name.to_string()],
                ..DiffOptions::default()
            };
            let obs = Observed {
                status,
                headers: Vec::new(),
                body: Vec::new(),
                provenance: None,
                route: None,
                replay: None,
            };
            assert!(judge(&index, "s/0", &ex, &obs, &opts).passed());
        }
        // An unrecorded challenge is an extra header.
        let ex = crate::test_support::exchange(crate::test_support::get("/v1/me"), 200);
        let obs = Observed {
            status: 200,
            headers: vec![("WWW-Authenticate".into(), "Bearer".into())],
            body: Vec::new(),
            provenance: None,
            route: None,
            replay: None,
        };
        let v = judge(&index, "s/0", &ex, &obs, &DiffOptions::default());
        assert_eq!(
            v.divergences
                .iter()
                .map(|d| (d.path.as_str(), d.category))
                .collect::<Vec<_>>(),
            [("headers.www-authenticate", Category::ExtraField)]
        );
    }

    #[test]
    fn content_types_compare_without_case_or_spacing() {
        assert!(same_content_type(
            "application/json; charset=utf-8",
            "Application/JSON;charset=utf-8"
        ));
        assert!(same_content_type("text/plain;", " text/plain"));
        assert!(!same_content_type("application/json", "text/html"));
    }

    #[test]
    fn a_utf8_charset_on_a_json_media_type_is_no_content_type_difference() {
        for (a, b) in [
            ("application/json", "application/json; charset=utf-8"),
            ("Application/JSON; charset=UTF-8", "application/json"),
            (
                "application/problem+json",
                "application/problem+json;charset=\"utf-8\"",
            ),
            (
                "application/vnd.api+json; charset=utf-8; v=2",
                "application/vnd.api+json; v=2",
            ),
        ] {
            assert!(same_content_type(a, b), "{a} / {b}");
            assert!(same_content_type(b, a), "{b} / {a}");
        }
        for (a, b) in [
            ("application/json", "application/json; charset=iso-8859-1"),
            ("text/plain", "text/plain; charset=utf-8"),
            ("application/json", "application/problem+json"),
            ("application/json; v=1", "application/json; charset=utf-8"),
            ("application/xml", "application/xml; charset=utf-8"),
        ] {
            assert!(!same_content_type(a, b), "{a} / {b}");
            assert!(!same_content_type(b, a), "{b} / {a}");
        }
    }

    /// The rule as first written, with lowercased copies joined: [`same_content_type`]
    /// compares in place.
    fn norm_ct(s: &str) -> String {
        s.split(';')
            .map(|p| p.trim().to_ascii_lowercase())
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join(";")
    }

    proptest::proptest! {
        #[test]
        fn same_content_type_is_equal_normal_forms(
            a in "[aAjJ/; =é]{0,8}",
            b in "[aAjJ/; =é]{0,8}",
        ) {
            proptest::prop_assert_eq!(same_content_type(&a, &b), norm_ct(&a) == norm_ct(&b));
        }
    }
}
