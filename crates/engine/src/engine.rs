//! The [`Engine`]: shared, immutable serving data plus the namespace registry, and the dispatch
//! pipeline every application request goes through.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use parking_lot::RwLock;
use serde_json::{Value, json};
use wraith_model::{
    Guard, JsonText, MODEL_SCHEMA_VERSION, Model, Moment, Node, RecordedBody, Route, StateOp,
    Variant,
};

use crate::api::*;
use crate::embedded_counterparts;
use crate::error::{ControlError, EngineError};
use crate::fixtures::{self, FixtureSets, Schema, SeedData};
use crate::list::{self, ListBase};
use crate::namespace::{Namespace, NsError, NsKey, Origin, Registry, Settings};
use crate::origins::Sources;
use crate::outbound::{self, Origins, OutboundError, OutboundPolicy};
use crate::render::{self, NsCtx, ReqCtx};
use crate::router::{Matched, Router};
use crate::util::{self, escape_key, json_pointer_get, json_pointer_get_mut};

mod action_arrays;
mod action_sets;
mod action_values;
mod actor_view;
mod carried_fields;
mod child_refs;
mod counterpart_requests;
mod create_counters;
mod create_inputs;
mod embedded_lists;
mod field_views;
mod filter_targets;
mod implicit_children;
mod keyed_snapshots;
mod masked_fields;
mod member_effects;
mod member_items;
mod member_of;
mod mentions;
mod minted_fields;
mod mirrored_records;
mod named_record_copies;
mod parent_sequences;
mod path_filter;
mod query_lookups;
mod replay_cache;
mod run_history;
pub(crate) use run_history::{RunId, RunSet};
mod not_found;
mod read_progressions;
mod record_clones;
mod record_versions;
mod records_by_value;
mod scripted;
mod segment_members;
mod sent_expansions;
mod settle;
mod text_rendering;
mod text_tags;
mod unique_fields;
mod untouched_items;
mod viewer_fields;
mod wire;

pub use wire::{ControlHeader, ControlValue};

/// The prefix of the twin's control headers (`X-Wraith-Provenance`, …): never an answer's own.
const CONTROL_PREFIX: &str = "x-wraith-";

const MISS_HINT: &str = "route not in recorded coverage; see `wraith coverage`";

/// A loaded twin, ready to answer requests. `Send + Sync`: share it behind an `Arc`.
pub struct Engine {
    model: Model,
    router: Router,
    opts: EngineOptions,
    schema: Schema,
    fixtures: FixtureSets,
    /// Fixture set new namespaces are seeded from (`--fixture`, else the implicit default).
    default_fixture: Option<String>,
    lists: Vec<OnceLock<Option<ListBase>>>,
    /// Per entity type, the records deleted in their own recordings (their reads answer the
    /// recorded 404), gathered on first use: no view of the recorded world holds them.
    gone: OnceLock<crate::list::GoneRecords>,
    /// Per entity type, the list items copied from its records, shared by its list routes.
    list_records: BTreeMap<String, list::SharedRecords>,
    /// Per route, the median recorded status series of a polled read ([`Engine::polled_variant`]),
    /// gathered on first use.
    polls: Vec<OnceLock<Option<Vec<u16>>>>,
    /// Per route and variant (index-aligned with `model.routes[r].variants`), the recorded
    /// state the variant renders its observed values from, per principal
    /// ([`Engine::snapshot`]), gathered the first time the variant is rendered: a variant
    /// never rendered parses none of its recorded bodies. A function of the model alone, so
    /// one computation serves every namespace and thread.
    snapshots: Vec<Vec<OnceLock<Vec<Snapshot>>>>,
    /// Per route and variant, the snapshots of a keyed variant per value of its request field
    /// (`Variant::keyed_snapshots`), gathered the first time the variant is rendered keyed.
    keyed_snapshots: Vec<Vec<OnceLock<keyed_snapshots::KeyedChoice>>>,
    /// Per entity type, the request pointers its writes' carried values come from
    /// (`Route::carried_fields`); empty for a model without carried fields.
    carried: BTreeMap<String, BTreeSet<String>>,
    /// Per entity type, the arrays of other types' records its records are mirrored in
    /// (`MirroredList::records`); empty for a model without such rules.
    mirrored_parents: BTreeMap<String, Vec<mirrored_records::MirroredParent>>,
    /// Per entity type, the rule of the route listing its records' versions
    /// (`Route::record_versions`); empty for a model without one.
    versioned: BTreeMap<String, wraith_model::RecordVersions>,
    /// The provider's own not-found answer, `(route, variant)`: a route without a 4xx variant
    /// answers a record the session deleted with it ([`not_found::api_not_found`]).
    api_not_found: Option<(usize, usize)>,
    registry: Registry,
    self_url: RwLock<Option<String>>,
    /// `scheme://authority` of the recorded upstream, for the self-URL rewrite.
    upstream_origin: Option<String>,
    warnings: Vec<String>,
    /// The declared outbound policy (header allowlist, scrub rules, PII pass).
    outbound: outbound::Compiled,
    /// Per-route column evidence the outbound scrub reads (index-aligned with the routes),
    /// built the first time a route's body goes through the outbound pass.
    evidence: Vec<OnceLock<outbound::RouteEvidence>>,
    /// Lua handlers and authored routes ([`Engine::install_scripts`]); empty until installed.
    scripts: crate::handler::Installed,
    /// `X-Wraith-Twin-Age` text, formatted once: the freshness does not tick while serving.
    twin_age_text: String,
    /// Finished body bytes of recorded moments ([`replay_cache`]).
    replay_cache: replay_cache::ReplayCache,
    /// Per exact-replay moment: whether it can be served as its recorded text unparsed.
    /// Depends on the outbound policy, so it is rebuilt when the policy changes.
    verdicts: crate::raw_moment::Verdicts,
    /// Per exact-replay moment of a create route: the key of the entity its recorded body
    /// holds ([`Engine::note_counterparts`] reads every candidate's on every replayed create).
    /// A function of the recorded text and the route's primary key, both fixed for the
    /// engine's lifetime, so one parse per moment serves every namespace.
    entity_keys: crate::raw_moment::PerMoment<Option<String>>,
    /// The recorded runs and where each exact-replay moment stands in its run
    /// ([`run_history`]), built on first use.
    run_index: OnceLock<run_history::RunIndex>,
    /// The hashes the model's request keys fingerprint bodies with (one, but for a model
    /// composed of old and new twins): a request is keyed as the model was, so a model
    /// synthesized before BLAKE3 keys still replays exactly.
    body_hashes: Vec<wraith_model::request_key::BodyHash>,
    /// The principals the exact-replay moments were recorded for, the most active first
    /// ([`Engine::session_principal`]), gathered on first use.
    recorded_principals: OnceLock<member_effects::RecordedPrincipals>,
    /// Recorded answer fingerprint (`RouteInfo::moment_fps`) → the answer's shape
    /// ([`run_history::answer_shape`]), computed when recorded runs that answered a request
    /// differently vote.
    answer_shapes: RwLock<std::collections::HashMap<u64, u64>>,
    /// [`Engine::axis_pick`]'s choices by everything they depend on: namespaces replaying the
    /// same request history (many recorded sessions of one history, checked one by one) ask
    /// the same question of every recorded run once, not once each.
    axis_picks: RwLock<std::collections::HashMap<AxisKey, AxisPick>>,
    /// Every namespace's [`Namespace::state_bytes`] together (see
    /// [`crate::namespace::StateTally`]).
    twin_state: Arc<std::sync::atomic::AtomicU64>,
}

/// How many [`AxisKey`]s an engine remembers before it starts over (a cache: forgetting
/// changes no choice).
const AXIS_PICKS_KEPT: usize = 1 << 16;

/// Which of an exact entry's moments a request's candidates are
/// ([`Engine::candidate_moments`], `run_candidates`): with the entry, a function of these.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) enum CandidatesOf {
    /// The moments of the request's principal (its tokenized `Authorization`), else all.
    Principal(Option<String>),
    /// Those of one recorded run, by name.
    Run(String, Option<String>),
}

/// A namespace's run set as a key: the very set (by address), which the key holds, so the
/// address names no other set while the key is remembered. Equal sets held apart are
/// different keys (a question asked again), never the reverse.
#[derive(Clone)]
struct SetKey(Option<RunSet>);

impl SetKey {
    fn address(&self) -> usize {
        self.0.as_ref().map_or(0, |s| Arc::as_ptr(s) as usize)
    }
}

impl PartialEq for SetKey {
    fn eq(&self, other: &Self) -> bool {
        self.address() == other.address()
    }
}

impl Eq for SetKey {}

impl std::hash::Hash for SetKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.address().hash(state);
    }
}

/// Everything [`Engine::axis_pick`] reads: the entry and its candidates, how many of the
/// lane's moments were served, the namespace's run sets, where it stands (writes and requests
/// sent), whether the request writes and whether it names a recorded id.
#[derive(Clone, PartialEq, Eq, Hash)]
struct AxisKey {
    r: usize,
    ei: usize,
    of: CandidatesOf,
    served: usize,
    replay_sessions: SetKey,
    answer_runs: SetKey,
    sent: (u64, u64),
    write: bool,
    addressed: bool,
}

// The server shares one engine across its worker threads.
const _: fn() = || {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Engine>();
};

/// Shortest path parameter or query value that can prove which recorded run a session replays
/// (see `Engine::names_recorded_id`).
const MIN_PROOF_ID_LEN: usize = 4;

/// Where a request stands on an exact entry's time axis.
#[derive(Clone)]
enum AxisPick {
    /// A moment at this request's own position (index into the candidates); `narrowed` is the
    /// new set of consistent recorded runs when it shrank.
    Within {
        idx: usize,
        narrowed: Option<RunSet>,
        /// The new set of runs whose answers this session was served, when it changed (see
        /// `Namespace::answer_runs`).
        answered: Option<RunSet>,
        /// Every recorded run still consistent with this namespace answered this position the
        /// same way, so the moment is provably this request's own: claim-worthy.
        certain: bool,
        /// The moment comes from a recorded run still consistent with this namespace's
        /// replayed history (not the k-th-over-all-runs fallback), so the session's replayed
        /// writes are already reflected in it.
        in_run: bool,
    },
    /// Past every recorded position.
    Past,
}

/// A response body while it is still being shaped.
pub(crate) enum OutBody {
    Empty,
    Json(Value),
    /// A recorded moment's JSON text, unparsed: served as these bytes when the outbound body
    /// passes leave it unchanged ([`crate::raw_moment`]), else parsed by those passes (or by
    /// the replay-bytes cache's miss), and by any earlier step that needs the tree
    /// ([`OutBody::materialize`]). Only [`Engine::moment_out`] makes one.
    Raw(RawJson),
    Bytes(Bytes),
}

/// See [`OutBody::Raw`].
pub(crate) struct RawJson {
    pub text: Bytes,
    /// The text names the recorded upstream origin, so the self-URL rewrite may apply.
    pub mentions_upstream: bool,
    /// The outbound body passes may change the text: it must be parsed and walked before it
    /// is served, unless the replay-bytes cache holds the finished bytes for this very text.
    pub passes: bool,
    /// The tree of `text`, parsed by the first step that reads it ([`OutBody::json`]) and
    /// kept for the next readers and for [`OutBody::materialize`]: one parse per answer
    /// instead of one per step that looks at it (a replayed create was parsed by the effect,
    /// the counterpart and the unproven-id steps, then again by the outbound passes). Inside,
    /// `None` is a text that did not parse. `text` is never changed once this is filled.
    pub parsed: std::cell::OnceCell<Option<Value>>,
}

impl OutBody {
    /// Turn a [`OutBody::Raw`] into the parsed [`OutBody::Json`] it stands for, before a step
    /// that reads or rewrites the tree. Other bodies are left alone.
    pub(crate) fn materialize(&mut self) {
        if let OutBody::Raw(raw) = self {
            let parsed = match raw.parsed.take() {
                Some(parsed) => parsed,
                None => serde_json::from_slice::<Value>(&raw.text).ok(),
            };
            *self = match parsed {
                Some(v) => OutBody::Json(v),
                // The model's text was valid JSON; only a nesting past the parser's limit
                // lands here, and then the bytes are served as they are.
                None => OutBody::Bytes(raw.text.clone()),
            };
        }
    }

    /// The JSON tree of the body, parsed on first use for a [`OutBody::Raw`] (and kept: see
    /// [`RawJson::parsed`]); `None` when the body is not JSON.
    pub(crate) fn json(&self) -> Option<std::borrow::Cow<'_, Value>> {
        match self {
            OutBody::Json(v) => Some(std::borrow::Cow::Borrowed(v)),
            OutBody::Raw(raw) => raw
                .parsed
                .get_or_init(|| serde_json::from_slice::<Value>(&raw.text).ok())
                .as_ref()
                .map(std::borrow::Cow::Borrowed),
            OutBody::Empty | OutBody::Bytes(_) => None,
        }
    }
}

/// A response before serialization.
pub(crate) struct Out {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: OutBody,
    pub provenance: Provenance,
    pub route: Option<String>,
    pub exchange: Option<String>,
    pub replay: Option<ReplayClass>,
    /// Where each body position came from (recorded only with `--debug`).
    pub sources: Sources,
    /// Body positions echoed from the request or minted for this response.
    pub origins: Origins,
    /// The outbound body passes changed some bytes.
    pub policy_changed: bool,
    /// Identity of the recorded moment the body was copied from (its address: compared as a
    /// replay-bytes cache key, never followed); `None` for a body built any other way.
    pub moment: Option<usize>,
    /// The replay-bytes cache's verdict on this answer's body.
    pub cached: replay_cache::Cached,
}

impl Out {
    fn json(status: u16, body: Value, provenance: Provenance, route: Option<String>) -> Out {
        Out {
            status,
            headers: vec![("content-type".to_string(), "application/json".to_string())],
            body: OutBody::Json(body),
            provenance,
            route,
            exchange: None,
            replay: None,
            // An engine-invented body has no per-field origins (none are counted either).
            sources: Sources::new(false, None),
            origins: Origins::default(),
            policy_changed: false,
            moment: None,
            cached: replay_cache::Cached::No,
        }
    }
}

/// Everything dispatch reads about one request.
struct Call<'a> {
    req: &'a Request,
    /// Who is asking, in the recordings' terms ([`Engine::session_principal`]).
    principal: Option<String>,
    method: String,
    head: bool,
    path: String,
    query: Vec<(String, String)>,
    body: Option<Value>,
    m: Matched,
}

impl Call<'_> {
    /// The request body's string at `pointer` (a text a rule derives fields from).
    fn body_str(&self, pointer: &str) -> Option<&str> {
        self.body
            .as_ref()
            .and_then(|b| b.pointer(pointer))
            .and_then(Value::as_str)
    }

    fn ctx(&self) -> ReqCtx<'_> {
        ReqCtx {
            path: &self.path,
            params: &self.m.params,
            query: &self.query,
            body: self.body.as_ref(),
            headers: &self.req.headers,
            snapshot: None,
            snapshot_keyed: false,
            mirrored: &[],
        }
    }

    fn content_type(&self) -> Option<&str> {
        self.req.header("content-type")
    }
}

impl Engine {
    /// Compile the model's routes, resolve the fixture sets against the schema and check the
    /// selected `--fixture`.
    pub fn new(
        model: Model,
        schema_json: Option<&str>,
        fixtures: FixtureTree,
        opts: EngineOptions,
    ) -> Result<Engine, EngineError> {
        if model.schema_version != MODEL_SCHEMA_VERSION {
            return Err(EngineError::ModelVersion {
                found: model.schema_version,
                expected: MODEL_SCHEMA_VERSION,
            });
        }
        let mut warnings = Vec::new();
        let router = Router::build(&model, &mut warnings);
        let schema = Schema::build(
            model
                .entity_types
                .iter()
                .map(|(k, t)| (k.clone(), t.primary_key.clone())),
            schema_json,
            &mut warnings,
        );
        let fixture_sets = fixtures::resolve(&fixtures, &schema, &mut warnings)?;
        let default_fixture = match &opts.fixture {
            Some(name) => match fixture_sets.lookup(name) {
                Some(found) => Some(found.to_string()),
                None => {
                    return Err(EngineError::UnknownFixture {
                        name: name.clone(),
                        available: fixture_sets.names(),
                    });
                }
            },
            None => fixture_sets.default.clone(),
        };
        if opts.fidelity == Fidelity::Fuzzy {
            warnings
                .push("fidelity `fuzzy` is not implemented: every request answers 501".to_string());
        }
        if opts.unknown_entity == UnknownEntity::NotFound && !supports_not_found(&model) {
            warnings.push(
                "--unknown-entity not_found has nothing to gate: the model has no read or \
                 parameterized list route with known entity ids, so every entity answer is \
                 synthesized or replayed as recorded"
                    .to_string(),
            );
        }
        // Built on a list route's first use: gathering every recorded collection up front
        // parses every list moment of the model before the first request.
        let lists = model.routes.iter().map(|_| OnceLock::new()).collect();
        let list_records = model
            .entity_types
            .iter()
            .map(|(ty, et)| (ty.clone(), list::shared_records(et)))
            .collect();
        let upstream_origin = util::origin_of(&model.base_url);
        let registry = Registry::new(opts.max_namespaces.max(1));
        let evidence = model.routes.iter().map(|_| OnceLock::new()).collect();
        let polls = model.routes.iter().map(|_| OnceLock::new()).collect();
        let snapshots = model
            .routes
            .iter()
            .map(|r| r.variants.iter().map(|_| OnceLock::new()).collect())
            .collect();
        let keyed_snapshots = model
            .routes
            .iter()
            .map(|r| r.variants.iter().map(|_| OnceLock::new()).collect())
            .collect();
        // Verdicts synth stored for the default outbound policy, if the model has them.
        let fingerprint = crate::raw_moment::outbound_fingerprint(
            &crate::OutboundPolicy::default(),
            opts.fidelity,
        );
        let verdicts = crate::raw_moment::Verdicts::seeded(&model, fingerprint.as_deref());
        let entity_keys = crate::raw_moment::PerMoment::new(&model);
        let answer_shapes = RwLock::default();
        let body_hashes = wraith_model::request_key::BodyHash::in_model(&model);
        Ok(Engine {
            body_hashes,
            twin_age_text: opts.freshness.twin_age_seconds.to_string(),
            replay_cache: replay_cache::ReplayCache::default(),
            verdicts,
            entity_keys,
            answer_shapes,
            axis_picks: RwLock::default(),
            twin_state: Arc::default(),
            run_index: OnceLock::new(),
            recorded_principals: OnceLock::new(),
            scripts: crate::handler::Installed::default(),
            outbound: outbound::Compiled::defaults(),
            evidence,
            router,
            schema,
            fixtures: fixture_sets,
            default_fixture,
            lists,
            gone: OnceLock::new(),
            list_records,
            polls,
            snapshots,
            keyed_snapshots,
            carried: carried_fields::carried_pointers(&model),
            mirrored_parents: mirrored_records::mirrored_parents(&model),
            versioned: record_versions::versioned_types(&model),
            api_not_found: not_found::api_not_found(&model),
            registry,
            self_url: RwLock::new(None),
            upstream_origin,
            warnings,
            model,
            opts,
        })
    }

    /// Per entity type, the records deleted in their own recordings.
    pub(crate) fn gone_records(&self) -> &crate::list::GoneRecords {
        self.gone
            .get_or_init(|| crate::list::gone_records(&self.model))
    }

    /// The recorded collection of list route `r`, gathered on first use.
    fn list_base(&self, r: usize) -> Option<&ListBase> {
        let cell = self.lists.get(r)?;
        cell.get_or_init(|| {
            let route = self.model.routes.get(r)?;
            let records = route
                .entity_type
                .as_ref()
                .and_then(|ty| self.list_records.get(ty))
                .map(Vec::as_slice);
            list::build_base(route, &self.model, &self.schema, records)
        })
        .as_ref()
    }

    /// The outbound column evidence of route `r`, built the first time a leaf needs it.
    fn route_evidence(&self, r: usize) -> Option<outbound::LazyEvidence<'_>> {
        let cell = self.evidence.get(r)?;
        Some(outbound::LazyEvidence::new(cell, &self.model, r))
    }

    /// Startup warnings for the banner, `--ready-json` and `/__wraith/info`.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The serve-wide options this engine was built with.
    pub fn options(&self) -> &EngineOptions {
        &self.opts
    }

    /// The served model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Install the twin's declared outbound policy (before serving; the default is
    /// [`OutboundPolicy::default`]).
    pub fn set_outbound_policy(&mut self, policy: OutboundPolicy) -> Result<(), OutboundError> {
        self.outbound = outbound::Compiled::new(policy)?;
        self.replay_cache_clear();
        // Which moments the body passes leave unchanged was decided under the old policy.
        let fingerprint =
            crate::raw_moment::outbound_fingerprint(self.outbound.policy(), self.opts.fidelity);
        self.verdicts = crate::raw_moment::Verdicts::seeded(&self.model, fingerprint.as_deref());
        Ok(())
    }

    /// The outbound policy in force.
    pub fn outbound_policy(&self) -> &OutboundPolicy {
        self.outbound.policy()
    }

    /// Put a recorded body through the same outbound body passes a response of `route`
    /// (`METHOD /template`, as in `X-Wraith-Route` under synth) gets in namespace `session`:
    /// what `wraith check` compares a served body against. The values this session supplied
    /// so far (this request's included, which is recorded into the namespace here) are exempt
    /// as echoes, exactly as when serving. Returns whether anything changed. The self-URL
    /// rewrite is not part of this (the caller knows the twin's origin).
    pub fn outbound_recorded_body(
        &self,
        session: Option<&str>,
        req: &Request,
        route: Option<&str>,
        body: &mut Value,
    ) -> bool {
        let r = route.and_then(|name| self.router.info.iter().position(|i| i.name == name));
        let mut fresh = outbound::SessionValues::default();
        let key = NsKey::from_header(session);
        let ns = self
            .registry
            .get_or_create(&key, || {
                self.make_namespace(key.clone(), self.lazy_settings(&key))
            })
            .ok();
        let mut guard = ns.as_ref().map(|n| n.lock());
        let values = match guard.as_deref_mut() {
            Some(n) => &mut n.outbound,
            None => &mut fresh,
        };
        // A multipart body's values (its text parts and UTF-8 files) come from one split; the
        // body's JSON reading would split it again for a subset of them.
        if let Some(parts) = req
            .header("content-type")
            .and_then(|ct| outbound::multipart_values(ct, &req.body))
        {
            parts.iter().for_each(|v| values.add(v));
        } else if let Some(b) = util::body_as_json(req.header("content-type"), &req.body) {
            values.add_json(&b);
        }
        for (_, v) in util::parse_query(&req.query) {
            values.add(&v);
        }
        if let Some(r) = r
            && let Ok(path) = util::normalize_path(&req.path)
            && let Some(m) = self
                .router
                .at(&self.model.routes[r].method, &path, req.header("host"))
        {
            for (_, v) in &m.params {
                values.add(v);
            }
        }
        let origins = Origins::default();
        let ctx = outbound::BodyCtx {
            origins: &origins,
            session: Some(values),
            evidence: r.and_then(|r| self.route_evidence(r)),
            replace_redacted: self.opts.fidelity != Fidelity::Strict,
            seed: route.unwrap_or(""),
            probe: None,
        };
        self.outbound.apply_body(body, &ctx)
    }

    /// The twin's own base URL once bound (fallback origin of the self-URL rewrite when a
    /// request carries no `Host`).
    pub fn set_self_url(&self, url: &str) {
        *self.self_url.write() = util::origin_of(url).or_else(|| Some(url.to_string()));
    }

    /// Names of the fixture sets (the implicit default included when it exists).
    pub fn fixture_sets(&self) -> Vec<String> {
        self.fixtures.names()
    }

    /// `METHOD /path` of every route.
    pub fn route_names(&self) -> Vec<String> {
        self.model.route_names()
    }

    // ---------------------------------------------------------------- control plane

    fn lazy_settings(&self, key: &NsKey) -> Settings {
        Settings {
            fixture: self.default_fixture.clone(),
            seed: crate::namespace::session_seed(self.opts.seed, key),
            clock: self.opts.clock,
            provisioned: false,
        }
    }

    fn seed_for(&self, settings: &Settings) -> Option<&SeedData> {
        settings
            .fixture
            .as_deref()
            .and_then(|f| self.fixtures.get(f))
            .map(|a| a.as_ref())
    }

    fn make_namespace(&self, key: NsKey, settings: Settings) -> Namespace {
        let seed = self.seed_for(&settings);
        let mut ns = Namespace::new(key, settings, seed);
        ns.resync_tally(Some(&self.twin_state));
        ns
    }

    fn full_error(max: usize) -> ControlError {
        ControlError::new(
            503,
            "namespace-unavailable",
            format!("namespace limit exceeded (max {max})"),
        )
    }

    /// `POST /__wraith/session`: create a namespace with pinned fixture, seed and clock. Asking
    /// again with the same (or unspecified) settings answers the existing one; different
    /// settings are a `session-provision-conflict`.
    pub fn provision(&self, p: Provision) -> Result<ProvisionInfo, ControlError> {
        let fixture = match &p.fixture {
            Some(name) => match self.fixtures.lookup(name) {
                Some(found) => Some(found.to_string()),
                None => {
                    let mut e = ControlError::new(
                        404,
                        "fixture-not-found",
                        format!("no fixture set named `{name}`"),
                    );
                    e.available = self.fixtures.names();
                    return Err(e);
                }
            },
            None => self.default_fixture.clone(),
        };
        let key = NsKey::from_header(Some(&p.session));
        let settings = Settings {
            fixture,
            seed: p
                .seed
                .unwrap_or_else(|| crate::namespace::session_seed(self.opts.seed, &key)),
            clock: p.clock.unwrap_or(self.opts.clock),
            provisioned: true,
        };
        let made = self
            .registry
            .insert_new(&key, || self.make_namespace(key.clone(), settings.clone()));
        match made {
            Err(NsError::Full(max)) => Err(Self::full_error(max)),
            Ok(Ok(ns)) => {
                let ns = ns.lock();
                Ok(provision_info(&p.session, &ns, true))
            }
            Ok(Err(existing)) => {
                let mut ns = existing.lock();
                let differ = provision_differences(&ns.settings, &settings, &p);
                if !differ.is_empty() {
                    return Err(ControlError::new(
                        409,
                        "session-provision-conflict",
                        format!(
                            "session `{}` already exists with other settings: {}; delete it \
                             first or provision a new id",
                            p.session,
                            differ.join("; "),
                        ),
                    ));
                }
                ns.settings.provisioned = true;
                Ok(provision_info(&p.session, &ns, false))
            }
        }
    }

    /// `GET /__wraith/session`: every live namespace, default first, then by id.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        self.registry
            .all()
            .iter()
            .map(|ns| ns.lock().info())
            .collect()
    }

    /// The key a control-plane id names: the session the header value `id` lands in. The
    /// headerless namespace has no id; `POST /__wraith/reset` clears it.
    fn control_key(&self, id: &str) -> NsKey {
        NsKey::from_header(Some(id))
    }

    fn not_found(id: &str) -> ControlError {
        ControlError::new(
            404,
            "session-not-found",
            format!("no live session `{id}` (see GET /__wraith/session)"),
        )
    }

    /// `POST /__wraith/session/{id}/reset`: clear the namespace's state and counters, keep its
    /// fixture, seed and clock, and re-seed the fixture immediately.
    pub fn reset_session(&self, id: &str) -> Result<SessionInfo, ControlError> {
        let key = self.control_key(id);
        let ns = self.registry.get(&key).ok_or_else(|| Self::not_found(id))?;
        let mut ns = ns.lock();
        let settings = ns.settings.clone();
        *ns = self.make_namespace(key, settings);
        Ok(ns.info())
    }

    /// `DELETE /__wraith/session/{id}`: drop the namespace and its provisioning; frees the slot.
    pub fn delete_session(&self, id: &str) -> Result<(), ControlError> {
        let key = self.control_key(id);
        if self.registry.remove(&key) {
            Ok(())
        } else {
            Err(Self::not_found(id))
        }
    }

    /// `POST /__wraith/reset`: every namespace's state is cleared (and its fixture re-seeded).
    pub fn reset_all(&self) {
        for ns in self.registry.all() {
            let mut ns = ns.lock();
            let settings = ns.settings.clone();
            let key = ns.key.clone();
            *ns = self.make_namespace(key, settings);
        }
    }

    /// Debug dump of one namespace; never creates it.
    pub fn session_state(&self, id: &str) -> Option<Value> {
        let key = self.control_key(id);
        self.registry.get(&key).map(|ns| ns.lock().dump())
    }

    /// Number of live namespaces.
    pub fn namespace_count(&self) -> usize {
        self.registry.len()
    }

    /// `METHOD /template` of the route a request would match (after path normalization, with
    /// the same HEAD→GET fallback and origin rule as dispatch), without touching any namespace.
    /// The simulation layers use it to match rules against the route template.
    pub fn route_template(&self, method: &str, path: &str, host: Option<&str>) -> Option<&str> {
        let route = self.matched_route(method, path, host)?;
        Some(self.router.info[route].name.as_str())
    }

    /// The `X-Wraith-Route` of an answer given in the engine's place, before any dispatch (a
    /// fault, a rate-limit 429, a refused session header): the route template under synth
    /// fidelity; under strict fidelity, which has no template abstraction, `METHOD <path>` when
    /// some recording of the route has the request's path as received, and none when no
    /// recording does (strict dispatch answers a route miss there, which names no route); none
    /// under fuzzy fidelity, which matches no route.
    pub fn route_label(&self, method: &str, path: &str, host: Option<&str>) -> Option<String> {
        let route = self.matched_route(method, path, host)?;
        match self.opts.fidelity {
            Fidelity::Synth => Some(self.router.info[route].name.clone()),
            Fidelity::Strict => {
                let r = self.model.routes.get(route)?;
                r.exact
                    .iter()
                    .any(|e| e.key.path == path)
                    .then(|| format!("{} {}", r.method, path))
            }
            Fidelity::Fuzzy => None,
        }
    }

    /// The index of the route a request matches (see [`Self::route_template`]). The method
    /// is matched as sent: the method token is case-sensitive (RFC 9110, 9.1), so `get` is
    /// no `GET`.
    fn matched_route(&self, method: &str, path: &str, host: Option<&str>) -> Option<usize> {
        let path = util::normalize_path(path).ok()?;
        let m = self.router.at(method, &path, host).or_else(|| {
            if method == "HEAD" {
                self.router.at("GET", &path, host)
            } else {
                None
            }
        })?;
        Some(m.route)
    }

    /// The HTTP `Date` of an answer in `session`'s namespace whose route stamped none (a miss,
    /// a refusal, a fault, a route whose recordings carried no `Date`): that namespace's clock,
    /// read without advancing it, so a deterministic or fixed clock makes the header as
    /// repeatable as the body. A namespace that does not exist (the request was refused before
    /// one could be made) reads the serve clock, as [`Engine::serve_http_date`].
    pub fn http_date(&self, session: Option<&str>) -> String {
        render::http_date(self.session_clock_us(session))
    }

    /// Whether a request of `session` would be given a namespace (it has one, or one fits under
    /// `[serve.limits] max_namespaces`); when not, it is answered `503 namespace-unavailable`.
    pub fn admits(&self, session: Option<&str>) -> bool {
        self.registry.admits(&NsKey::from_header(session))
    }

    /// `session`'s clock in unix microseconds, read without advancing it: what
    /// [`Engine::http_date`] renders (the serve clock when the namespace does not exist).
    pub fn session_clock_us(&self, session: Option<&str>) -> i64 {
        match self.registry.get(&NsKey::from_header(session)) {
            Some(ns) => ns.lock().peek_us(&self.opts.wall_clock),
            None => self.serve_clock_us(),
        }
    }

    /// The HTTP `Date` of an answer outside every namespace (the control plane, a request
    /// whose session header could not be read): the serve-wide clock at its start, or the wall
    /// clock when that clock is real.
    pub fn serve_http_date(&self) -> String {
        render::http_date(self.serve_clock_us())
    }

    fn serve_clock_us(&self) -> i64 {
        match self.opts.clock.mode {
            ClockMode::Real => (self.opts.wall_clock)(),
            ClockMode::Fixed | ClockMode::Deterministic => {
                self.opts.clock.base_epoch.saturating_mul(1_000_000)
            }
        }
    }

    // ---------------------------------------------------------------- dispatch

    /// Answer one application request. `session` is the `X-Wraith-Session` value, verbatim
    /// (`None` = the shared default namespace).
    pub fn handle(&self, session: Option<&str>, req: &Request) -> Response {
        self.handle_with_tree(session, req).0
    }

    /// [`Engine::handle`], with the JSON tree of the answer's body when the engine held it
    /// anyway (built it, or parsed a recorded text for a step that read it): exactly the tree
    /// `serde_json::from_slice` gives for the returned body, so an in-process caller that
    /// would parse the body again (the check's judge) can take it instead. `None` when the
    /// engine did not hold one (bytes served as they are, an unread recorded text, a body from
    /// the replay cache, `HEAD`, an empty body) or when it nests too deep to be sure the
    /// parser would accept it.
    pub fn handle_with_tree(
        &self,
        session: Option<&str>,
        req: &Request,
    ) -> (Response, Option<Value>) {
        // The method token is case-sensitive (RFC 9110, 9.1): `delete` is a method no route
        // has, never `DELETE`, and only `HEAD` falls back to a `GET` route.
        let method = req.method.as_str();
        let head = method == "HEAD";
        let out = self.handle_out(session, req, method);
        self.finish(out, req, head)
    }

    fn handle_out(&self, session: Option<&str>, req: &Request, method: &str) -> Out {
        let path = match util::normalize_path(&req.path) {
            Ok(p) => p,
            Err(util::PathError::DotSegment) => {
                return Out::json(
                    400,
                    json!({
                        "error": "invalid-path",
                        "message": "dot segments (`.` and `..`, also percent-encoded) are not \
                                    allowed in request paths: send the path they stand for",
                    }),
                    Provenance::Miss,
                    None,
                );
            }
        };
        let key = NsKey::from_header(session);
        let ns = match self.registry.get_or_create(&key, || {
            self.make_namespace(key.clone(), self.lazy_settings(&key))
        }) {
            Ok(ns) => ns,
            Err(NsError::Full(max)) => {
                // The route still matched: `X-Wraith-Route` is on every answer where one did.
                let route = (self.opts.fidelity == Fidelity::Synth)
                    .then(|| self.router.at(method, &path, req.header("host")))
                    .flatten()
                    .map(|m| self.router.info[m.route].name.clone());
                return Out::json(503, Self::full_error(max).body(), Provenance::Miss, route);
            }
        };
        if self.opts.fidelity == Fidelity::Fuzzy {
            ns.lock().requests += 1;
            return Out::json(
                501,
                json!({
                    "error": "fidelity fuzzy is not implemented",
                    "wraith": {
                        "twin": self.opts.twin_name,
                        "hint": "serve with --fidelity synth or --fidelity strict",
                    }
                }),
                Provenance::Miss,
                None,
            );
        }
        let host = req.header("host");
        let matched = self.router.at(method, &path, host).or_else(|| {
            if method == "HEAD" {
                self.router.at("GET", &path, host)
            } else {
                None
            }
        });
        let Some(m) = matched else {
            ns.lock().requests += 1;
            return self.route_miss();
        };
        let ct = req.header("content-type");
        let mut call = Call {
            req,
            principal: None,
            method: method.to_string(),
            head: method == "HEAD",
            query: util::parse_query(&req.query),
            body: util::body_as_json(ct, &req.body),
            path,
            m,
        };
        let mut guard = ns.lock();
        guard.requests += 1;
        let ns = &mut *guard;
        call.principal = self.session_principal(ns, req);
        // A path naming a record by a field counted per parent names it by its key from here.
        self.resolve_alternate_keys(ns, &mut call);
        if let Some(refused) = self.state_limit(ns, &call) {
            return refused;
        }
        // Values this session supplies come back verbatim whenever the twin echoes them.
        if let Some(b) = &call.body {
            ns.outbound.add_json(b);
        }
        if let Some(parts) = call
            .content_type()
            .and_then(|ct| outbound::multipart_values(ct, &call.req.body))
        {
            parts.iter().for_each(|v| ns.outbound.add(v));
        }
        for (_, v) in call.query.iter().chain(call.m.params.iter()) {
            ns.outbound.add(v);
        }
        let mut out = self.dispatch_idempotent(ns, &call);
        if run_history::is_write(&call.method) {
            ns.writes_sent += 1;
        }
        // A successful create's body fields are what session-bound reads may repeat.
        if call.method == "POST"
            && (200..300).contains(&out.status)
            && let Some(b) = &call.body
        {
            ns.outbound
                .record_create(&self.router.info[call.m.route].name, b);
        }
        self.outbound_body_cached(ns, &call, &mut out);
        out
    }

    /// `[serve.limits]`: a write that would grow a session past its state limits is refused
    /// before it runs (507, provenance `miss`: the twin's own limit, not the API's answer). A
    /// write to a route of an entity type already holding `max_entities_per_type` records is
    /// refused unless its path names one of them; any write when the session's own state
    /// already takes `max_total_state_mb`, but a delete of a record the session holds.
    fn state_limit(&self, ns: &Namespace, call: &Call<'_>) -> Option<Out> {
        if !run_history::is_write(&call.method) {
            return None;
        }
        let info = &self.router.info[call.m.route];
        let route = self.model.routes.get(call.m.route);
        // Whether the path's last value names a record the session holds of the route's type.
        let names_held = || {
            route
                .and_then(|r| Some((r, ns.type_store(r.entity_type.as_deref()?)?)))
                .zip(call.m.params.last())
                .and_then(|((r, s), (name, _))| Some((s, param_key(r, &call.m.params, name)?)))
                .is_some_and(|(s, id)| s.live.contains_key(id.as_ref()))
        };
        // A delete of a held record, or of members from a list, makes room; one of any other
        // key leaves a tombstone.
        let removes_members = route
            .and_then(|r| r.membership.as_ref())
            .is_some_and(|m| !m.adds);
        // Every session's records together, as last counted.
        let twin_bytes = ns.tally.twin_total();
        let within = ns.state_bytes <= self.opts.max_state_bytes
            && twin_bytes <= self.opts.max_twin_state_bytes;
        if call.method == "DELETE" && (within || removes_members || names_held()) {
            return None;
        }
        let message = if ns.state_bytes > self.opts.max_state_bytes {
            format!(
                "this session's records take {} bytes, over the twin's limit of {} \
                 ([serve.limits] max_total_state_mb); delete records or reset the session",
                ns.state_bytes, self.opts.max_state_bytes
            )
        } else if twin_bytes > self.opts.max_twin_state_bytes {
            format!(
                "the twin's sessions together hold {twin_bytes} bytes of records, over the \
                 twin's limit of {} ([serve.limits] max_twin_state_mb); delete records, or \
                 delete or reset sessions (DELETE /__wraith/session/{{id}})",
                self.opts.max_twin_state_bytes
            )
        } else {
            let route = route?;
            let ty = route.entity_type.as_deref()?;
            let held = ns.type_store(ty).map_or(0, |s| s.live.len());
            if held < self.opts.max_entities_per_type {
                return None;
            }
            // At the limit, a write may still change a record the session holds (the path's
            // last value names it); a create, or an update that would store a record under a
            // key the session does not hold (an upsert), may not.
            if route.state_op != Some(StateOp::Create) && names_held() {
                return None;
            }
            format!(
                "this session holds {held} `{ty}` records, the twin's limit \
                 ([serve.limits] max_entities_per_type); delete some or reset the session"
            )
        };
        Some(Out::json(
            507,
            json!({ "error": "state-limit-exceeded", "message": message }),
            Provenance::Miss,
            Some(info.name.clone()),
        ))
    }

    /// The outbound body passes (scrub rules, placeholders, PII) on an application answer,
    /// then remember what the twin minted so later echoes of it stay verbatim too.
    fn outbound_body(&self, ns: &mut Namespace, call: &Call<'_>, out: &mut Out) {
        self.outbound_body_probed(ns, call, out, None);
    }

    /// [`Self::outbound_body`], noting the walk's session lookups in `probe`.
    fn outbound_body_probed(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        out: &mut Out,
        probe: Option<&outbound::SessionProbe>,
    ) {
        // A `Raw` body these passes may change is parsed for them; any other `Raw` body is one
        // they were found to leave unchanged (whatever the session's exemptions): nothing to
        // do, and nothing minted to remember.
        if matches!(&out.body, OutBody::Raw(raw) if raw.passes) {
            out.body.materialize();
        }
        let OutBody::Json(body) = &mut out.body else {
            return;
        };
        let route_name = &self.router.info[call.m.route].name;
        let ctx = outbound::BodyCtx {
            origins: &out.origins,
            session: Some(&ns.outbound),
            evidence: self.route_evidence(call.m.route),
            replace_redacted: self.opts.fidelity != Fidelity::Strict,
            seed: route_name,
            probe,
        };
        out.policy_changed |= self.outbound.apply_body(body, &ctx);
        for (ptr, origin) in &out.origins.0 {
            if *origin == outbound::FieldOrigin::Minted
                && let Some(v) = json_pointer_get(body, &escape_pointer(ptr))
            {
                ns.outbound.add_json(v);
            }
        }
    }

    /// The structured 501 route-miss body.
    fn route_miss(&self) -> Out {
        Out::json(501, self.miss_body(), Provenance::Miss, None)
    }

    /// The routes this twin answers: the model's, then the authored ones it serves; a route
    /// recorded on several origins is one `METHOD /path`.
    fn answered_route_names(&self) -> Vec<&str> {
        let mut seen = HashSet::new();
        self.router
            .info
            .iter()
            .map(|i| i.name.as_str())
            .filter(|n| seen.insert(*n))
            .collect()
    }

    /// How many routes the twin answers, as the route-miss body's `routes_total` counts them.
    pub fn route_count(&self) -> usize {
        self.answered_route_names().len()
    }

    fn miss_body(&self) -> Value {
        let names = self.answered_route_names();
        let total = names.len();
        let shown: Vec<&str> = names.into_iter().take(20).collect();
        let mut wraith = serde_json::Map::new();
        wraith.insert("twin".to_string(), json!(self.opts.twin_name));
        wraith.insert("routes".to_string(), json!(shown));
        if total > 20 {
            wraith.insert("routes_total".to_string(), json!(total));
        }
        wraith.insert("hint".to_string(), json!(MISS_HINT));
        json!({ "error": "no matching route", "wraith": Value::Object(wraith) })
    }

    /// Idempotency-Key replay around [`Self::dispatch`].
    fn dispatch_idempotent(&self, ns: &mut Namespace, call: &Call<'_>) -> Out {
        // Keys make POSTs safe to retry (the methods that are not idempotent already); an
        // empty value names no key.
        let idem_key = self.opts.idempotency.as_ref().and_then(|o| {
            if call.method != "POST" {
                return None;
            }
            call.req
                .header(&o.header)
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(|k| (o.ttl_seconds, k.to_string()))
        });
        let Some((ttl, key)) = idem_key else {
            return self.dispatch(ns, call);
        };
        let now = ns.peek_us(&self.opts.wall_clock);
        let request =
            crate::namespace::idem_request_digest(&call.path, &call.query, &call.req.body);
        let slot = (call.m.route, key);
        if let Some(hit) = ns.idem.get(&slot) {
            if hit.expires_us > now {
                if hit.request != request {
                    return self.idempotency_conflict(call, &slot.1);
                }
                return out_from_response(&hit.response);
            }
            ns.idem.remove(&slot);
        }
        let out = self.dispatch(ns, call);
        if out.status < 500 {
            let resp = self.serialize(&out, call.req, false);
            ns.idem.insert(
                slot,
                crate::namespace::IdemEntry {
                    response: resp,
                    expires_us: now.saturating_add((ttl as i64).saturating_mul(1_000_000)),
                    request,
                },
                self.opts.max_state_bytes,
            );
        }
        out
    }

    /// A key reused with another request (another path, query or body) than the one it was
    /// first used with: 422, as the Idempotency-Key header's specification says, made by the
    /// twin (provenance `miss`) since no recording shows how the API words it.
    fn idempotency_conflict(&self, call: &Call<'_>, key: &str) -> Out {
        let header = self
            .opts
            .idempotency
            .as_ref()
            .map_or("Idempotency-Key", |o| o.header.as_str());
        Out::json(
            422,
            json!({
                "error": "idempotency key reused with another request",
                "wraith": {
                    "key": key,
                    "header": header,
                    "route": self.router.info[call.m.route].name,
                    "hint": "a key names the request it was first sent with; send a new key for \
                             another request, or the same request to get its answer again",
                }
            }),
            Provenance::Miss,
            Some(self.router.info[call.m.route].name.clone()),
        )
    }

    fn dispatch(&self, ns: &mut Namespace, call: &Call<'_>) -> Out {
        let r = call.m.route;
        if let Some(authored) = self.authored_route(r) {
            return self.dispatch_authored(ns, call, authored);
        }
        if self.opts.fidelity == Fidelity::Strict {
            return self.strict(ns, call);
        }
        if let Some(out) = self.singleton(ns, call) {
            return out;
        }
        if let Some(out) = self.member_list(ns, call) {
            return out;
        }
        if let Some(out) = self.member_of_list(ns, call) {
            return out;
        }
        if let Some(out) = self.last_write(ns, call) {
            return out;
        }
        let mut out = self.dispatch_recorded(ns, call);
        self.retarget_filtered_items(ns, call, &mut out);
        self.apply_carried_fields(ns, call, &mut out);
        self.apply_membership(ns, call, &out);
        self.show_own_record(ns, call, &mut out);
        let listed = self.apply_member_effects(ns, call, &out);
        self.apply_segment_member(ns, call, &mut out);
        self.apply_field_view(ns, call, &mut out);
        self.apply_query_lookup(ns, call, &mut out);
        self.apply_mirrored_parents(ns, call, &out);
        self.apply_record_versions(ns, call, &mut out);
        self.apply_record_clone(ns, call, &mut out);
        let route = &self.model.routes[call.m.route];
        // A create steps its counters where it stores its record; another write here, when
        // it changed a member list or has none to change (a second star steps nothing).
        if route.state_op != Some(StateOp::Create)
            && !route.create_counters.is_empty()
            && (listed || route.member_effects.is_empty())
        {
            let origin = if out.replay.is_some() {
                Origin::Replayed
            } else {
                Origin::Synthesized
            };
            self.apply_create_counters(ns, call, &mut out, origin);
        }
        if route.last_write_wins
            && (200..300).contains(&out.status)
            && let Some(body) = out.body.json().filter(|b| b.is_object())
        {
            ns.last_writes.insert(
                (route.origin.clone(), route.path.clone()),
                body.into_owned(),
            );
        }
        out
    }

    /// A `GET` of a path whose last-write-wins write (`Route::last_write_wins`) this session
    /// made answers that write's answer, with the read route's own 2xx status and headers:
    /// the recordings show the read repeating the last write, whatever a recorded read named.
    fn last_write(&self, ns: &mut Namespace, call: &Call<'_>) -> Option<Out> {
        if call.method != "GET" && !call.head {
            return None;
        }
        let route = &self.model.routes[call.m.route];
        let body = ns
            .last_writes
            .get(&(route.origin.clone(), route.path.clone()))?
            .clone();
        let variant = route
            .variants
            .iter()
            .find(|v| (200..300).contains(&v.status))?;
        let rendered = self.render_variant(ns, call, variant).0;
        let mut out = Out::json(
            rendered.status,
            body,
            Provenance::Template,
            Some(self.router.info[call.m.route].name.clone()),
        );
        out.headers = rendered.headers;
        Some(out)
    }

    /// A membership action (`Route::membership`) that answered 2xx adds the ids its body
    /// names to the session's member list of the list route under the same path parameters
    /// (or removes them), so a later read of that list lists exactly the session's members.
    fn apply_membership(&self, ns: &mut Namespace, call: &Call<'_>, out: &Out) {
        let route = &self.model.routes[call.m.route];
        let Some(effect) = &route.membership else {
            return;
        };
        if !(200..300).contains(&out.status) {
            return;
        }
        let ids: Vec<String> = match call
            .body
            .as_ref()
            .and_then(|b| b.pointer(&effect.ids_field))
        {
            Some(Value::Array(items)) => items.iter().filter_map(fixtures::scalar_key).collect(),
            Some(v) => fixtures::scalar_key(v).into_iter().collect(),
            None => return,
        };
        if ids.is_empty() {
            return;
        }
        let params: Vec<String> = call.m.params.iter().map(|(_, v)| v.clone()).collect();
        // The list's key and member ids count towards the session's state bytes.
        let key_bytes =
            (effect.list_path.len() + params.iter().map(String::len).sum::<usize>()) as u64;
        let key = (effect.list_path.clone(), params);
        let (mut added, mut freed) = (0u64, 0u64);
        if !ns.members.contains_key(&key) {
            added += key_bytes;
        }
        let members = ns.members.entry(key).or_default();
        if effect.adds {
            for id in ids {
                if !members.contains(&id) {
                    added += id.len() as u64;
                    members.push(id);
                }
            }
        } else {
            members.retain(|m| {
                let kept = !ids.contains(m);
                if !kept {
                    freed += m.len() as u64;
                }
                kept
            });
        }
        ns.set_state_bytes(ns.state_bytes.saturating_sub(freed).saturating_add(added));
    }

    /// A `GET` of a list route the session's membership actions or member effects wrote
    /// answers the records of the session's members (as the session sees them), in the order
    /// they were added, whatever a recorded answer to the same request listed (that run's
    /// members, not this session's).
    fn member_list(&self, ns: &mut Namespace, call: &Call<'_>) -> Option<Out> {
        if call.method != "GET" && !call.head {
            return None;
        }
        let route = &self.model.routes[call.m.route];
        let params: Vec<String> = call.m.params.iter().map(|(_, v)| v.clone()).collect();
        let own_list = params.is_empty();
        let members = ns.members.get(&(route.path.clone(), params))?;
        let member_type = self.member_type_of(route)?;
        // A list without path parameters is the reader's own (`/user/starred`): a member a
        // path's write added shows only to the principals whose writes added it.
        let reader = own_list.then(|| self.principal_of(call));
        let shown: Vec<String> = members
            .iter()
            .filter(|m| {
                reader.as_ref().is_none_or(|p| {
                    ns.member_adders
                        .get(&(route.path.clone(), (*m).clone()))
                        .is_none_or(|adders| adders.contains(p))
                })
            })
            .cloned()
            .collect();
        let items = self.member_items(ns, route, &call.path, &member_type, &shown);
        Some(self.listed_items_out(ns, call, items))
    }

    /// The answer of a list the session's own records make (`items`, the whole body): the
    /// route's own 2xx answer for its status and headers (a recorded content type).
    fn listed_items_out(&self, ns: &mut Namespace, call: &Call<'_>, items: Vec<Value>) -> Out {
        let route = &self.model.routes[call.m.route];
        let name = Some(self.router.info[call.m.route].name.clone());
        let Some(variant) = route
            .variants
            .iter()
            .find(|v| (200..300).contains(&v.status))
        else {
            return Out::json(200, Value::Array(items), Provenance::Template, name);
        };
        let rendered = self.render_variant(ns, call, variant).0;
        // The recorded page's `Link` names that page's items under the recorded request's path:
        // re-pointed at this request and these items (none for an empty page).
        let recorded_keys = self.page_keys(&rendered.body, call.m.route);
        let mut out = Out::json(
            rendered.status,
            Value::Array(items),
            Provenance::Template,
            name,
        );
        out.headers = rendered.headers;
        // The items are the whole list, so no page follows them — unless the request asked
        // for exactly as many: an API that does not look ahead links a full page onwards.
        let limit = match route.list.as_ref().map(|l| &l.pagination) {
            Some(wraith_model::Pagination::LinkHeader {
                limit: Some(name), ..
            }) => call
                .query
                .iter()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.parse::<usize>().ok()),
            _ => None,
        };
        let full_page = limit
            .is_some_and(|l| Some(l) == out.body.json().and_then(|b| b.as_array().map(Vec::len)));
        self.relink(call, &mut out, &recorded_keys, !full_page);
        out
    }

    /// Exact replay, then the route's variants (past strict fidelity and singletons).
    fn dispatch_recorded(&self, ns: &mut Namespace, call: &Call<'_>) -> Out {
        let r = call.m.route;
        let route = &self.model.routes[r];
        let exact = self.exact_entry(call);
        if let Some(ei) = exact
            && let Some(out) = self.exact_replay(ns, call, ei)
        {
            return out;
        }
        if let Some(out) = self.counterpart_replay(ns, call, exact) {
            return out;
        }
        if let Some(out) = self.path_filtered_list(ns, call) {
            return out;
        }

        let op = route.state_op;
        let gated = matches!(op, Some(StateOp::Read))
            || (matches!(op, Some(StateOp::List)) && !call.m.params.is_empty());
        if self.opts.unknown_entity == UnknownEntity::NotFound
            && gated
            && !self.membership_of(ns, call).unwrap_or(true)
        {
            return self.fail_closed(ns, call, None);
        }
        if let Some(out) = self.run_route_handler(ns, call) {
            return out;
        }

        let Some(vi) = route
            .variants
            .iter()
            .position(|v| self.guard_holds(&v.guard, ns, call))
        else {
            return Out::json(
                404,
                json!({
                    "error": "route-no-match",
                    "message": format!(
                        "no variant of {} matched this request (guards on headers, body or \
                         entity state all failed)",
                        self.router.info[r].name
                    ),
                }),
                Provenance::Miss,
                Some(self.router.info[r].name.clone()),
            );
        };
        let vi = self.polled_variant(ns, call, vi);
        let variant = &route.variants[vi];
        // A body that claims JSON and does not parse (or parses into nothing the engine can
        // hold: nested too deep, not UTF-8, a lone surrogate, a number past `f64`): no
        // recording shows what the API answers to it (a recorded one would have picked its own
        // variant), and a success rendered from it would store a guess. The engine says so
        // instead of inventing a content answer.
        if (200..400).contains(&variant.status)
            && call.body.is_none()
            && let Some(why) = util::malformed_json_body(call.content_type(), &call.req.body)
        {
            return Out::json(
                400,
                json!({
                    "error": "malformed-body",
                    "message": format!(
                        "the request body cannot be read as JSON ({why}); no recording shows what the \
                         API answers to such a body"
                    ),
                }),
                Provenance::Miss,
                Some(self.router.info[r].name.clone()),
            );
        }
        let mut out = match op {
            Some(StateOp::Create) => self.op_create(ns, call, variant),
            Some(StateOp::Read) => self.op_read(ns, call, variant),
            Some(StateOp::Update) => self.op_update(ns, call, variant),
            Some(StateOp::Delete) => self.op_delete(ns, call, variant),
            Some(StateOp::List) => return self.op_list(ns, call, variant),
            None => {
                let mut out = self.render_variant(ns, call, variant).0;
                // The values the action takes from its request first, so a rendered answer
                // showing the record shows them (a volume attached to the instance named).
                self.apply_action_values(ns, call, out.status, Origin::Synthesized);
                self.apply_action_effect(ns, call, &mut out, Some(variant));
                out
            }
        };
        name_answered_record(variant, &mut out);
        // A rendered answer's recorded `Link` names a recorded page, not this one.
        let keys = self.page_keys(&out.body, call.m.route);
        self.relink(call, &mut out, &keys, false);
        out
    }

    /// The primary keys of the items of a page body (the route's list items, else a
    /// top-level array).
    fn page_keys(&self, body: &OutBody, r: usize) -> HashSet<String> {
        match body {
            OutBody::Json(v) => self.page_keys_of(v, r),
            _ => HashSet::new(),
        }
    }

    /// [`Engine::page_keys`] of a JSON body, read in place (a list merge asks it of the page
    /// it is about to change: no copy of the page).
    fn page_keys_of(&self, body: &Value, r: usize) -> HashSet<String> {
        let route = &self.model.routes[r];
        let pk = route
            .entity_type
            .as_deref()
            .map_or_else(|| "id".to_string(), |t| self.pk_of(t));
        let items = route
            .list
            .as_ref()
            .map_or(Some(body), |s| json_pointer_get(body, &s.items_pointer));
        items
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(|i| i.get(&pk).and_then(fixtures::scalar_key))
            .collect()
    }

    /// Re-point (or drop) the `Link` header of an answer that is not a verbatim recorded
    /// page; `recorded_keys` are the item keys the recorded link may name. `whole_list`: the
    /// answer lists every item there is, so its `next` link is dropped.
    fn relink(
        &self,
        call: &Call<'_>,
        out: &mut Out,
        recorded_keys: &HashSet<String>,
        whole_list: bool,
    ) {
        let Some(link) = out
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("link"))
            .map(|(_, v)| v.clone())
        else {
            return;
        };
        let route = &self.model.routes[call.m.route];
        let pk = route
            .entity_type
            .as_deref()
            .map_or_else(|| "id".to_string(), |t| self.pk_of(t));
        let items = page_items(
            &out.body,
            route.list.as_ref().map(|s| s.items_pointer.as_str()),
        );
        let origin = self.twin_origin(call.req);
        // Links by position or page number name no items: they keep their recorded values.
        let positional = route.list.as_ref().is_some_and(|l| {
            matches!(
                l.pagination,
                wraith_model::Pagination::LinkHeader {
                    positional: true,
                    ..
                } | wraith_model::Pagination::LinkHeader { numbered: true, .. }
            )
        });
        let rebuilt = if positional {
            list::relink_positions(&link, origin.as_deref(), &call.path, &call.query)
        } else {
            let paging_params: Vec<&str> = match route.list.as_ref().map(|l| &l.pagination) {
                Some(wraith_model::Pagination::LinkHeader {
                    next_param,
                    prev_param,
                    ..
                }) => std::iter::once(next_param.as_str())
                    .chain(prev_param.as_deref())
                    .collect(),
                _ => Vec::new(),
            };
            list::relink(
                &link,
                items,
                (recorded_keys, &paging_params),
                whole_list,
                &pk,
                origin.as_deref(),
                &call.path,
                &call.query,
            )
        };
        out.headers.retain(|(k, _)| !k.eq_ignore_ascii_case("link"));
        if let Some(l) = rebuilt {
            out.headers.push(("link".to_string(), l));
        }
    }

    /// A path a POST creates at and that GET, PUT, PATCH or DELETE address without an id
    /// (`/push/subscription`) is a singleton: once this session created one there
    /// (synthesized, so no recorded run holds it), a read answers the latest one, an update
    /// changes it and a delete removes it (later requests get the route's not-found answer).
    fn singleton(&self, ns: &mut Namespace, call: &Call<'_>) -> Option<Out> {
        let route = &self.model.routes[call.m.route];
        if route.state_op.is_some()
            || !matches!(call.method.as_str(), "GET" | "PUT" | "PATCH" | "DELETE")
        {
            return None;
        }
        let creator = self.model.routes.iter().find(|c| {
            c.method == "POST"
                && c.state_op == Some(StateOp::Create)
                && c.path == route.path
                && c.origin == route.origin
        })?;
        let ty = creator.entity_type.clone()?;
        let parents: Vec<String> = call.m.params.iter().map(|(_, v)| v.clone()).collect();
        let (key, live) = {
            let store = ns.type_store(&ty)?;
            let key = store
                .created
                .iter()
                .rev()
                .find(|k| match store.live.get(*k) {
                    Some(e) => {
                        e.origin == Origin::Synthesized
                            && e.parents.as_ref().is_none_or(|p| *p == parents)
                    }
                    None => store.deleted.get(*k) == Some(&Origin::Synthesized),
                })?
                .clone();
            let live = store.live.get(&key).map(|e| Arc::clone(&e.value));
            (key, live)
        };
        let Some(value) = live else {
            return Some(self.gone(ns, call));
        };
        let variant = route.variants.iter().find(|v| {
            (200..300).contains(&v.status)
                && (call.method != "GET"
                    || matches!(
                        &v.body,
                        wraith_model::BodyTemplate::Json {
                            root: Node::Object { .. }
                                | Node::Const {
                                    value: Value::Object(_)
                                }
                        }
                    ))
        })?;
        if matches!(call.method.as_str(), "PUT" | "PATCH") {
            // Answered as usual (a recorded update when one matches); its answer is the
            // singleton from now on.
            let out = self.dispatch_recorded(ns, call);
            if (200..300).contains(&out.status)
                && let Some(body) = out.body.json()
                && body.is_object()
            {
                ns.put(
                    &ty,
                    &key,
                    body.into_owned(),
                    Origin::Synthesized,
                    Some(parents),
                );
            }
            return Some(out);
        }
        let (mut out, _) = self.render_variant(ns, call, variant);
        if call.method == "GET" {
            out.body = OutBody::Json((*value).clone());
            out.origins = Origins::default();
            out.sources.reset(Some(FieldSource::State));
        } else {
            ns.tombstone(&ty, &key, Origin::Synthesized);
        }
        Some(out)
    }

    // ---------------------------------------------------------------- entities

    /// Primary-key field of an entity type (`id` when the schema does not say).
    fn pk_of(&self, ty: &str) -> String {
        self.schema.primary_key(ty).unwrap_or("id").to_string()
    }

    /// A fresh key for a created record of `ty` in place of `picked`, a recorded value this
    /// session already holds: the type's learned id shape when it has one, else `picked` with
    /// its last run of digits counted up (`it_0_1` → `it_0_2`; an integer plus one; a key
    /// without digits gets `_2`). Never a key the session holds (live or deleted) or one the
    /// recordings knew for the type. `None` when no such key turns up within a bounded search.
    fn fresh_key(&self, ns: &mut Namespace, ty: &str, picked: &Value) -> Option<Value> {
        const TRIES: usize = 4096;
        let recorded = self.model.entity_types.get(ty);
        let taken = |ns: &Namespace, v: &Value| {
            fixtures::scalar_key(v).is_none_or(|k| {
                ns.entity(ty, &k).is_some()
                    || ns.is_deleted(ty, &k).is_some()
                    || recorded
                        .is_some_and(|t| t.known_ids.contains(&k) || t.records.contains_key(&k))
            })
        };
        if let Some(shape) = recorded.and_then(|t| t.id_shape.as_ref()) {
            for _ in 0..TRIES {
                let v = render::generate_id(shape, ns);
                if !taken(ns, &v) {
                    return Some(v);
                }
            }
            return None;
        }
        let mut v = picked.clone();
        for _ in 0..TRIES {
            v = count_up(&v)?;
            if !taken(ns, &v) {
                return Some(v);
            }
        }
        None
    }

    /// A created record as later views of it show it: each of its type's `read_prefixes`
    /// (a secret the create answers whole) cut to its first characters. What the session
    /// stores after a create; the create's own answer keeps the whole value.
    fn as_later_views_show(&self, ty: &str, mut entity: Value) -> Value {
        let Some(t) = self.model.entity_types.get(ty) else {
            return entity;
        };
        if let Value::Object(map) = &mut entity {
            for (field, n) in &t.read_prefixes {
                if let Some(Value::String(s)) = map.get_mut(field)
                    && let Some((cut, _)) = s.char_indices().nth(*n as usize)
                {
                    s.truncate(cut);
                }
            }
        }
        entity
    }

    /// The (entity type, id) a read/update/delete route addresses.
    fn target<'c>(
        &self,
        route: &Route,
        params: &'c [(String, String)],
    ) -> Option<(String, Cow<'c, str>)> {
        let ty = route.entity_type.clone()?;
        let id = match &route.id_param {
            Some(name) => param_key(route, params, name),
            None => params.last().map(|(_, v)| Cow::Borrowed(v.as_str())),
        }?;
        Some((ty, id))
    }

    /// [`Engine::membership`] of the call's route, asked first of the session's member list
    /// where the route reads at the path a write adds its record to a list at
    /// ([`Engine::member_probe`]).
    fn membership_of(&self, ns: &Namespace, call: &Call<'_>) -> Option<bool> {
        self.member_probe(ns, call)
            .or_else(|| self.segment_membership(ns, call))
            .or_else(|| self.membership(ns, call.m.route, &call.m.params))
    }

    /// For a read at the path a write adds its record to a list at, once the session wrote
    /// that list: not a member when the list does not hold it, a member when the request's own
    /// principal added it. A member another principal added says nothing of this one (a star
    /// is one user's), so the recorded evidence decides (`None`).
    fn member_probe(&self, ns: &Namespace, call: &Call<'_>) -> Option<bool> {
        let (list_path, param) = self.router.info[call.m.route].member_probe.as_ref()?;
        let list = ns.members.get(&(list_path.clone(), Vec::new()))?;
        let member =
            param_key(&self.model.routes[call.m.route], &call.m.params, param)?.into_owned();
        if !list.contains(&member) {
            return Some(false);
        }
        let adders = ns.member_adders.get(&(list_path.clone(), member))?;
        adders.contains(&self.principal_of(call)).then_some(true)
    }

    /// Whether the entity a route names is known in this namespace: live in the session store,
    /// else (not deleted this session and) recorded with a non-4xx outcome, per the full
    /// parameter tuple on multi-parameter routes. `None` when the model gives no way to judge.
    fn membership(&self, ns: &Namespace, r: usize, params: &[(String, String)]) -> Option<bool> {
        let route = &self.model.routes[r];
        let (last_name, _) = params.last()?;
        let id_key = param_key(route, params, last_name)?;
        let id: &str = &id_key;
        // A list or a create under a parent names the parent last (`/widgets/:id/parts`).
        let ty: Option<&str> = if matches!(route.state_op, Some(StateOp::List | StateOp::Create)) {
            route
                .parent_params
                .iter()
                .find(|p| &p.param == last_name)
                .map(|p| p.entity_type.as_str())
        } else {
            route.entity_type.as_deref()
        };
        let parent_values: Vec<&str> = params[..params.len() - 1]
            .iter()
            .map(|(_, v)| v.as_str())
            .collect();
        if let Some(ty) = ty {
            if let Some(e) = ns.entity(ty, id) {
                // A record a flat collection created (`POST /repos`) has no path values to
                // hold a qualified path (`/repos/:owner/:name`) to. A path may name fewer of
                // the record's ancestors than its create did, from the top (a comment created
                // under its issue, edited under the repository alone).
                return Some(match (&e.parents, route.known_param_tuples.is_empty()) {
                    (Some(parents), false)
                        if !parents.is_empty()
                            && !matches!(route.state_op, Some(StateOp::List | StateOp::Create)) =>
                    {
                        parents.len() >= parent_values.len()
                            && parents
                                .iter()
                                .map(String::as_str)
                                .zip(parent_values.iter().copied())
                                .all(|(a, b)| a == b)
                    }
                    _ => true,
                });
            }
            if ns.is_deleted(ty, id).is_some() {
                return Some(false);
            }
        }
        // A path naming another type's record by its last parameter (a star's repository,
        // whose member list or counters a write there changes): that record, where the
        // session holds it or deleted it, says whether the path names something.
        for (param, named) in &self.router.info[r].named_records {
            if param != last_name {
                continue;
            }
            if ns.entity(named, id).is_some() {
                return Some(true);
            }
            if ns.is_deleted(named, id).is_some() {
                return Some(false);
            }
        }
        if !route.known_param_tuples.is_empty() {
            let all: Vec<&str> = params.iter().map(|(_, v)| v.as_str()).collect();
            return Some(route.known_param_tuples.iter().any(|t| {
                t.len() == all.len()
                    && t.iter()
                        .zip(all.iter())
                        .all(|(a, b)| a == b || util::percent_decode(a) == *b)
            }));
        }
        // A parent id a child's non-4xx answer was recorded under: an id of the type that got
        // a non-4xx outcome, known (never missing, whatever its own routes answered).
        if ty.is_some_and(|t| {
            self.router
                .parent_ok
                .get(t)
                .is_some_and(|ids| ids.contains(id))
        }) {
            return Some(true);
        }
        let info = &self.router.info[r];
        let et = ty.and_then(|t| self.model.entity_types.get(t));
        if let Some(et) = et {
            if et.known_missing.contains(id) {
                return Some(false);
            }
            if et.known_ids.contains(id) || et.records.contains_key(id) {
                return Some(true);
            }
        }
        if info.recorded_ok_last.contains(id) {
            return Some(true);
        }
        if et.is_some() || !info.recorded_ok_last.is_empty() {
            return Some(false);
        }
        None
    }

    /// Whether the route's variants, by a guard on what this session made (a duplicate of a
    /// record it holds, a record another principal made, the state of a record it knows),
    /// select another status than a recorded answer's: that answer is its run's world (the
    /// name was taken there, the asker owned the record there, the poll was voted in there),
    /// so the variants answer instead.
    fn session_guards_overrule(&self, ns: &Namespace, call: &Call<'_>, status: u16) -> bool {
        fn on_session(g: &Guard, record_known: &dyn Fn() -> bool) -> bool {
            match g {
                Guard::DuplicateValue { .. } | Guard::ForeignRecord { .. } => true,
                // The record's state decides only where the session knows the record: of one
                // it never saw, the recorded answer is all there is.
                Guard::RecordFieldEquals { .. } | Guard::RecordFieldEmpty { .. } => record_known(),
                Guard::All { all } => all.iter().any(|g| on_session(g, record_known)),
                _ => false,
            }
        }
        let route = &self.model.routes[call.m.route];
        let record_known = || self.named_record(ns, call).is_some();
        if !route
            .variants
            .iter()
            .any(|v| on_session(&v.guard, &record_known))
        {
            return false;
        }
        route
            .variants
            .iter()
            .find(|v| self.guard_holds(&v.guard, ns, call))
            .is_some_and(|v| v.status != status)
    }

    /// Whether the record the route's `id_param` names was created in this namespace by
    /// another principal than the request's (the `foreign_record` guard).
    fn foreign_record(&self, ns: &Namespace, call: &Call<'_>) -> bool {
        let route = &self.model.routes[call.m.route];
        let Some((ty, id_key)) = self.target(route, &call.m.params) else {
            return false;
        };
        let id: &str = &id_key;
        let Some(creator) = ns.type_store(&ty).and_then(|s| s.creator(id)) else {
            return false;
        };
        creator != self.principal_of(call).as_deref()
    }

    /// Whether a record of the route's type this namespace holds has the request body's value
    /// at `pointer` (one top-level field) in its own field of that name (the
    /// `duplicate_value` guard); with `per_principal`, only one the acting principal created.
    fn duplicate_value(
        &self,
        ns: &Namespace,
        call: &Call<'_>,
        pointer: &str,
        per_principal: bool,
    ) -> bool {
        let route = &self.model.routes[call.m.route];
        let (Some(ty), Some(sent)) = (
            route.entity_type.as_deref(),
            call.body
                .as_ref()
                .and_then(|b| json_pointer_get(b, pointer)),
        ) else {
            return false;
        };
        if sent.is_null() {
            return false;
        }
        let field = unescape_pointer(pointer.strip_prefix('/').unwrap_or(pointer));
        let principal = per_principal.then(|| self.principal_of(call));
        ns.type_store(ty).is_some_and(|store| {
            store.live.iter().any(|(key, e)| {
                e.value.get(&field).is_some_and(|v| loosely_equal(v, sent))
                    && principal
                        .as_ref()
                        .is_none_or(|p| store.creator(key) == Some(p.as_deref()))
            })
        })
    }

    /// Among several variants whose guards all hold, the one a polled resource answers this time.
    /// Recorded runs that asked the same read of one URL several times, as one principal, and got
    /// refusals, then a success (a kubeconfig answering 503 until the cluster is ready, then 200)
    /// are status series; an unrecorded URL of the route follows the median-length series: the n-th
    /// read of the URL in this namespace gets the series' n-th status (its last once past the end).
    /// Without a series, or when no holding variant has that status, the first holding variant
    /// (`first`) stays. A write retried as the identical request until accepted (a migration
    /// refused while the instance is busy) is a series too, counted per URL and body, when no
    /// recorded run of the route was accepted at its first attempt.
    fn polled_variant(&self, ns: &mut Namespace, call: &Call<'_>, first: usize) -> usize {
        let read = matches!(call.method.as_str(), "GET" | "HEAD");
        let Some(median) = self.poll_series(call.m.route) else {
            return first;
        };
        if !read && self.write_accepted_at_once(call.m.route) {
            return first;
        }
        let route = &self.model.routes[call.m.route];
        let holding: Vec<usize> = (0..route.variants.len())
            .filter(|&i| self.guard_holds(&route.variants[i].guard, ns, call))
            .collect();
        let distinct: BTreeSet<u16> = holding.iter().map(|&i| route.variants[i].status).collect();
        if distinct.len() < 2 {
            return first;
        }
        let mut key = format!("\u{0}poll:{}:{}", call.m.route, call.path);
        if !read {
            let body = String::from_utf8_lossy(&call.req.body);
            key.push_str(&format!(":{:x}", render::stable_hash(&body)));
        }
        let seen = ns.counters.entry(key).or_insert(0);
        let n = usize::try_from(*seen).unwrap_or(usize::MAX);
        *seen += 1;
        let status = median[n.min(median.len() - 1)];
        holding
            .into_iter()
            .find(|&i| route.variants[i].status == status)
            .unwrap_or(first)
    }

    /// Whether some recorded run of route `r` had a request accepted (2xx) the first time it
    /// sent it: then a refusal before a success was that run's own circumstance, not the
    /// route's rule for a write (see [`Engine::polled_variant`]).
    fn write_accepted_at_once(&self, r: usize) -> bool {
        let Some(route) = self.model.routes.get(r) else {
            return true;
        };
        route.exact.iter().any(|entry| {
            let mut runs: BTreeSet<(&str, Option<&str>)> = BTreeSet::new();
            entry.moments.iter().any(|m| {
                let run = m.source.rsplit_once('/').map_or("", |(run, _)| run);
                runs.insert((run, m.principal.as_deref())) && (200..300).contains(&m.status)
            })
        })
    }

    /// The median-length status series route `r`'s recorded runs polled (see
    /// [`Engine::polled_variant`]), gathered on first use; `None` when no run polled a URL
    /// from a refusal to a success.
    fn poll_series(&self, r: usize) -> Option<&[u16]> {
        let cell = self.polls.get(r)?;
        cell.get_or_init(|| {
            let route = self.model.routes.get(r)?;
            let mut series: Vec<Vec<u16>> = Vec::new();
            for entry in &route.exact {
                // One principal's reads: another principal refused the same URL (a record
                // its owner reads and a stranger may not) is no series.
                let mut per_run: BTreeMap<(&str, Option<&str>), Vec<u16>> = BTreeMap::new();
                for m in &entry.moments {
                    let run = m.source.rsplit_once('/').map_or("", |(run, _)| run);
                    per_run
                        .entry((run, m.principal.as_deref()))
                        .or_default()
                        .push(m.status);
                }
                // Polling until ready: refusals first, a success last. A success followed by
                // a 404 is a read after a delete, not a series to replay on another URL.
                let polled = |st: &Vec<u16>| {
                    st.len() >= 2
                        && st.first().is_some_and(|s| !(200..300).contains(s))
                        && st.last().is_some_and(|s| (200..300).contains(s))
                };
                series.extend(per_run.into_values().filter(polled));
            }
            // Median by length; among equal lengths the smallest sequence, so the pick does
            // not depend on entry order.
            series.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
            let mid = series.len().checked_sub(1)? / 2;
            series.into_iter().nth(mid)
        })
        .as_deref()
    }

    fn guard_holds(&self, g: &Guard, ns: &Namespace, call: &Call<'_>) -> bool {
        match g {
            Guard::Always => true,
            Guard::All { all } => all.iter().all(|g| self.guard_holds(g, ns, call)),
            Guard::StateMember { member } => {
                self.membership_of(ns, call).unwrap_or(false) == *member
            }
            Guard::ForeignRecord { foreign } => self.foreign_record(ns, call) == *foreign,
            Guard::DuplicateValue {
                pointer,
                duplicate,
                per_principal,
            } => self.duplicate_value(ns, call, pointer, *per_principal) == *duplicate,
            Guard::HeaderPresent { name, present } => call.req.header(name).is_some() == *present,
            Guard::BodyFieldEquals { pointer, value } => call
                .body
                .as_ref()
                .and_then(|b| json_pointer_get(b, pointer))
                .is_some_and(|v| loosely_equal(v, value)),
            Guard::BodyFieldBound {
                pointer,
                bound,
                below,
            } => {
                let sent = call
                    .body
                    .as_ref()
                    .and_then(|b| json_pointer_get(b, pointer))
                    .and_then(util::number_of);
                match (sent, bound.as_f64()) {
                    (Some(v), Some(bound)) if *below => v < bound,
                    (Some(v), Some(bound)) => v > bound,
                    _ => false,
                }
            }
            Guard::BodyFieldNotIn { pointer, values } => call
                .body
                .as_ref()
                .and_then(|b| json_pointer_get(b, pointer))
                .is_some_and(|v| !values.iter().any(|known| loosely_equal(v, known))),
            Guard::BodyFieldPresent { pointer, present } => {
                call.body
                    .as_ref()
                    .and_then(|b| json_pointer_get(b, pointer))
                    .is_some()
                    == *present
            }
            Guard::BodyValid { valid } => {
                util::body_valid(call.content_type(), &call.req.body) == *valid
            }
            Guard::QueryPresent { name, present } => {
                call.query.iter().any(|(k, _)| k == name) == *present
            }
            Guard::UploadType { part, media_type } => {
                wraith_model::request_key::upload_media_types(call.content_type(), &call.req.body)
                    .iter()
                    .any(|(name, mt)| name == part && mt == media_type)
            }
            Guard::RecordFieldEquals { field, value } => self
                .named_record(ns, call)
                .is_some_and(|r| r.get(field) == Some(value)),
            Guard::RecordFieldEmpty { field, empty } => self
                .named_record(ns, call)
                .and_then(|r| r.get(field).and_then(Value::as_array).map(Vec::is_empty))
                .is_some_and(|e| e == *empty),
        }
    }

    /// The record the call's route names, as the session holds it (the record-state guards):
    /// an action's entity at its `id_param`, else the route's own entity at its `id_param`.
    fn named_record(&self, ns: &Namespace, call: &Call<'_>) -> Option<Value> {
        let route = &self.model.routes[call.m.route];
        let (ty, id) = match &route.action {
            Some(action) => (
                action.entity_type.as_str(),
                Cow::Borrowed(action_id(call, action)?),
            ),
            None => (
                route.entity_type.as_deref()?,
                param_key(route, &call.m.params, route.id_param.as_deref()?)?,
            ),
        };
        self.base_entity(ns, ty, &id)
    }

    // ---------------------------------------------------------------- rendering

    /// The recorded state a template answer of `variant` takes its observed values from: of
    /// the route's recorded answers with the variant's status and shape, recorded for this
    /// request's principal (its mapped `Authorization`, or none for none), the most typical
    /// one (the answer whose leaves and array lengths recur most among them; the first
    /// recorded among equals). `None` when no recorded answer of that principal fits.
    ///
    /// Why: an observed hole picked its example by a hash of the path, independently of every
    /// other hole, so an embedded record (the posting account of a status) mixed profile
    /// fields recorded at different times, and a list of recorded data (an account's `fields`)
    /// took the median length over every principal's answers. The recorded state of one
    /// answer, of the same principal, is one consistent picture of what the API answered.
    fn snapshot(&self, call: &Call<'_>, variant: &Variant) -> Option<&Value> {
        let r = call.m.route;
        let route = self.model.routes.get(r)?;
        let vi = route
            .variants
            .iter()
            .position(|v| std::ptr::eq(v, variant))?;
        let principal = self.principal_of(call);
        let all = self.snapshots.get(r)?.get(vi)?.get_or_init(|| {
            stored_snapshots(&self.model, r, vi).unwrap_or_else(|| snapshots_of(route, vi))
        });
        all.iter()
            .find(|s| s.principal == principal)
            .map(|s| &s.body)
    }

    /// Render a variant as is: status, header programs, body template.
    fn render_variant(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        variant: &Variant,
    ) -> (Out, Option<i64>) {
        let mut ctx = call.ctx();
        // A keyed variant shows the recorded state of the request's value of its field.
        let keyed = self.keyed_snapshot(call, variant);
        ctx.snapshot_keyed = keyed.is_some();
        ctx.snapshot = keyed.or_else(|| self.snapshot(call, variant));
        if let Some(route) = self.model.routes.get(call.m.route) {
            ctx.mirrored = &route.mirrored_lists;
        }
        let union = self.union_template(ns, call, variant);
        let mut nsc = NsCtx {
            ns,
            wall: &self.opts.wall_clock,
            now_us: None,
            enclosed_derived: Vec::new(),
            list_item: None,
        };
        let mut sources = Sources::new(self.opts.debug, Some(FieldSource::Constant));
        let mut origins = Origins::default();
        let body = match &variant.body {
            wraith_model::BodyTemplate::Empty => OutBody::Empty,
            wraith_model::BodyTemplate::Json { root } => {
                let mut body = render::render_node_traced(
                    union.map_or(root, |(_, t)| t),
                    &ctx,
                    &mut nsc,
                    &mut sources,
                    "",
                    &mut origins,
                );
                render::mirror_nested(&mut body, &ctx, &mut sources, &mut origins);
                OutBody::Json(body)
            }
            wraith_model::BodyTemplate::Text { text } => OutBody::Bytes(Bytes::from(text.clone())),
            wraith_model::BodyTemplate::Binary { base64 } => OutBody::Bytes(decode_b64(base64)),
        };
        let tree = match &body {
            OutBody::Json(v) => Some(v),
            _ => None,
        };
        let headers = render::render_headers(&variant.headers, &mut nsc, tree);
        let now = nsc.now_us;
        (
            Out {
                status: variant.status,
                headers,
                body,
                provenance: Provenance::Template,
                route: Some(self.router.info[call.m.route].name.clone()),
                exchange: None,
                replay: None,
                sources,
                origins,
                policy_changed: false,
                moment: None,
                cached: replay_cache::Cached::No,
            },
            now,
        )
    }

    /// The per-type template a variant whose answers are a tagged union renders, with the
    /// union (see [`crate::union`]): the type the request sent, else the type of the record
    /// the route's path names (as this session holds it, else as recorded), else the most
    /// recorded type. `None` when the variant is no union.
    fn union_template<'v>(
        &self,
        ns: &Namespace,
        call: &Call<'_>,
        variant: &'v Variant,
    ) -> Option<(&'v wraith_model::VariantUnion, &'v wraith_model::Node)> {
        let union = variant.union.as_ref()?;
        let target = self.target(&self.model.routes[call.m.route], &call.m.params);
        let held = target
            .as_ref()
            .and_then(|(ty, id)| ns.entity(ty, id))
            .map(|e| Arc::clone(&e.value));
        let recorded = target
            .as_ref()
            .and_then(|(ty, id)| self.model.entity_types.get(ty)?.records.get(id.as_ref()));
        let stored = held.as_deref().or(recorded);
        crate::union::choose(union, call.body.as_ref(), stored).map(|(t, _)| (union, t))
    }

    /// Not-found answer when the store says the entity is gone but the guards still picked a
    /// success variant: the route's 4xx variant, else the provider's not-found answer of other
    /// routes (provenance `miss`), else a plain 404.
    fn gone(&self, ns: &mut Namespace, call: &Call<'_>) -> Out {
        let route = &self.model.routes[call.m.route];
        if let Some(vi) = self.router.info[call.m.route].not_found_variant {
            return self.render_variant(ns, call, &route.variants[vi]).0;
        }
        if let Some((ri, vi)) = self.api_not_found {
            let (mut out, _) = self.render_variant(ns, call, &self.model.routes[ri].variants[vi]);
            out.provenance = Provenance::Miss;
            out.route = Some(self.router.info[call.m.route].name.clone());
            return out;
        }
        Out::json(
            404,
            json!({"error": "not_found", "message": "this entity was deleted in this session"}),
            Provenance::Miss,
            Some(self.router.info[call.m.route].name.clone()),
        )
    }

    /// Fail-closed not-found: the route's 4xx variant (404 preferred), else the structured 501,
    /// provenance `miss`. `route_name` overrides the route label (strict fidelity).
    fn fail_closed(&self, ns: &mut Namespace, call: &Call<'_>, route_name: Option<String>) -> Out {
        let route = &self.model.routes[call.m.route];
        let name = route_name.unwrap_or_else(|| self.router.info[call.m.route].name.clone());
        match self.router.info[call.m.route].not_found_variant {
            Some(vi) => {
                let (mut out, _) = self.render_variant(ns, call, &route.variants[vi]);
                out.provenance = Provenance::Miss;
                out.route = Some(name);
                out
            }
            None => Out::json(501, self.miss_body(), Provenance::Miss, Some(name)),
        }
    }

    // ---------------------------------------------------------------- exact replay

    /// The moments of an exact entry this request may be served, preferring the ones recorded
    /// for the same principal.
    fn candidate_moments<'m>(
        &self,
        moments: &'m [Moment],
        principal: Option<&str>,
    ) -> Vec<Cand<'m>> {
        let all = moments.iter().enumerate();
        // The moments recorded by the same principal; a request without credentials is the
        // anonymous principal's, answered by the moments recorded without any (a read after
        // a delete sent without the token the earlier read sent).
        let same: Vec<Cand<'m>> = all
            .clone()
            .filter(|(_, m)| m.principal.as_deref() == principal)
            .collect();
        if !same.is_empty() {
            return same;
        }
        // Credentials no recording sent are still credentials: the twin validates none, so
        // such a request is answered as the recorded credentialed requests were, never from
        // a moment recorded without any (the API's `401` to a request that sent no token).
        if principal.is_some() {
            let credentialed: Vec<Cand<'m>> =
                all.clone().filter(|(_, m)| m.principal.is_some()).collect();
            if !credentialed.is_empty() {
                return credentialed;
            }
        }
        all.collect()
    }

    /// The exact-replay entry of this request: keyed on the path as received, as the
    /// recordings keep it. Only the route is matched on the normalized path: `/things/` or
    /// `//things` is not the recording of `/things` (an API may answer them otherwise, or
    /// redirect), so it is answered by the route like any request no recording covers, never
    /// replayed as that recording and claimed `recorded`. Keyed with each hash the model's
    /// keys were made with ([`BodyHash::in_model`]): one but in a model composed across the
    /// change of hash.
    ///
    /// [`BodyHash::in_model`]: wraith_model::request_key::BodyHash::in_model
    fn exact_entry(&self, call: &Call<'_>) -> Option<usize> {
        let index = &self.router.info[call.m.route].exact;
        if index.is_empty() {
            return None;
        }
        self.body_hashes.iter().find_map(|&hash| {
            let key = match &call.body {
                // The body the call already parsed is the one the key hashes when nothing but
                // JSON parsing made it: hashed as parsed, never parsed twice.
                Some(parsed) if util::body_parsed_as_json(call.content_type(), &call.req.body) => {
                    wraith_model::types::RequestKey {
                        path: call.req.path.clone(),
                        query: wraith_model::request_key::normalize_query(&call.req.query),
                        body: Some(wraith_model::request_key::json_fingerprint_hashed(
                            parsed, hash,
                        )),
                    }
                }
                _ => wraith_model::request_key::request_key_hashed(
                    &call.req.path,
                    &call.req.query,
                    call.content_type(),
                    &call.req.body,
                    &self.model.routes[call.m.route].upload_names,
                    hash,
                ),
            };
            index.get(&key).copied()
        })
    }

    /// Whether a request names a recorded entity id (a path parameter or a query value that some
    /// entity type recorded as an id): when only some recorded runs recorded such a request, it
    /// tells those runs apart from the others. Values shorter than [`MIN_PROOF_ID_LEN`] never
    /// count: short numbers are far more often flags, limits and pages (`local=1`) than ids.
    fn names_recorded_id(&self, call: &Call<'_>) -> bool {
        call.m
            .params
            .iter()
            .chain(call.query.iter())
            .map(|(_, v)| v)
            .filter(|v| v.len() >= MIN_PROOF_ID_LEN)
            .any(|v| {
                self.model
                    .entity_types
                    .values()
                    .any(|t| t.known_ids.contains(v.as_str()))
            })
    }

    /// The recorded runs behind the model's exact-replay moments, indexed on first use.
    fn run_index(&self) -> &run_history::RunIndex {
        self.run_index
            .get_or_init(|| run_history::RunIndex::build(&self.model))
    }

    /// Where this request stands on an exact entry's per-session time axis: the k-th request
    /// for the key gets the k-th moment. Moments come from the recorded run (recording
    /// session) this namespace's replayed history is consistent with, so a namespace that
    /// replays one recorded session gets that session's moments in order; when no run is
    /// consistent, the k-th moment over all runs.
    ///
    /// `write`: the request changes state (not GET/HEAD). Its answer usually mints what later
    /// requests name (ids), so only the runs that gave the served answer stay consistent, and
    /// when no run was consistent the session re-anchors on the run it was served from. A
    /// read's answer often differs between runs in incidental fields (counters), so a read
    /// keeps every consistent run.
    ///
    /// A function of [`AxisKey`] (`of` names the candidates): each choice is made once per
    /// engine and remembered.
    #[allow(clippy::too_many_arguments)]
    fn axis_pick(
        &self,
        ns: &Namespace,
        r: usize,
        ei: usize,
        candidates: &[Cand<'_>],
        of: CandidatesOf,
        call: &Call<'_>,
        write: bool,
    ) -> AxisPick {
        let served = ns
            .axis
            .get(&self.axis_lane(r, ei, candidates))
            .copied()
            .unwrap_or(0);
        // Read only when the session's answers were overruled, which needs `answer_runs`.
        let addressed = ns.answer_runs.is_some() && self.names_recorded_id(call);
        let key = AxisKey {
            r,
            ei,
            of,
            served,
            replay_sessions: SetKey(ns.replay_sessions.clone()),
            answer_runs: SetKey(ns.answer_runs.clone()),
            sent: (ns.writes_sent, ns.requests.saturating_sub(1)),
            write,
            addressed,
        };
        if let Some(pick) = self.axis_picks.read().get(&key) {
            return pick.clone();
        }
        let pick = self.choose_on_axis(ns, r, ei, candidates, served, addressed, write);
        let mut picks = self.axis_picks.write();
        if picks.len() >= AXIS_PICKS_KEPT {
            picks.clear();
        }
        picks.insert(key, pick.clone());
        pick
    }

    /// [`Engine::axis_pick`]'s choice, made.
    #[allow(clippy::too_many_arguments)]
    fn choose_on_axis(
        &self,
        ns: &Namespace,
        r: usize,
        ei: usize,
        candidates: &[Cand<'_>],
        served: usize,
        names_recorded_id: bool,
        write: bool,
    ) -> AxisPick {
        let at = self.run_index().moments(r, ei);
        let run_of = |i: usize| at.get(candidates[i].0).map_or(0, |(run, _)| *run);
        let mut per_run: BTreeMap<RunId, Vec<usize>> = BTreeMap::new();
        for i in 0..candidates.len() {
            per_run.entry(run_of(i)).or_default().push(i);
        }
        let consistent: Vec<RunId> = per_run
            .iter()
            .filter(|(run, occ)| {
                occ.len() > served
                    && ns
                        .replay_sessions
                        .as_ref()
                        .is_none_or(|set| set.contains(*run))
            })
            .map(|(run, _)| *run)
            .collect();
        if !consistent.is_empty() {
            // Among the runs the requests allow, prefer the ones whose answers this session
            // was already served (its writes minted what it now holds); when the requests
            // ruled all of those out, they proved the session replays another run: any
            // consistent run may answer.
            let preferred: Vec<RunId> = match &ns.answer_runs {
                Some(set) => consistent
                    .iter()
                    .filter(|run| set.contains(*run))
                    .copied()
                    .collect(),
                None => Vec::new(),
            };
            let overruled = preferred.is_empty() && ns.answer_runs.is_some();
            let addressed = overruled && names_recorded_id;
            let pool: &[RunId] = if preferred.is_empty() {
                &consistent
            } else {
                &preferred
            };
            // A read's recorded answer shows the state its run's earlier writes made: the runs
            // whose write history is closest to this session's describe its state best; they
            // are ordered by how far in the run the moment stands against this request in the
            // session, which decides the vote's ties below.
            let sent = (ns.writes_sent, ns.requests.saturating_sub(1));
            let pool = &run_history::closest_history(pool, sent, |run| {
                at.get(candidates[per_run[&run][served]].0)
                    .and_then(|(_, position)| *position)
            })[..];
            // The answer most of those runs gave at this position, by its shape and then its
            // bytes (`run_history::majority_run`; ties: the first of them in that order),
            // since nothing yet tells them apart.
            let fps = &self.router.info[r].moment_fps[ei];
            let fp_of = |i: usize| fps.get(candidates[i].0).copied().unwrap_or(0);
            let moments = &self.model.routes[r].exact[ei].moments;
            // Equal fingerprints are equal answers: each distinct answer is shaped once.
            let shape_of = |run: RunId| {
                let i = per_run[&run][served];
                let fp = fp_of(i);
                if let Some(shape) = self.answer_shapes.read().get(&fp) {
                    return *shape;
                }
                let shape = moments
                    .get(candidates[i].0)
                    .map_or(0, run_history::answer_shape);
                self.answer_shapes.write().insert(fp, shape);
                shape
            };
            let run = run_history::majority_run(pool, |run| fp_of(per_run[&run][served]), shape_of)
                .unwrap_or(pool[0]);
            let best_fp = fp_of(per_run[&run][served]);
            let idx = per_run[&run][served];
            // Provably this request's own moment only when every run its requests are
            // consistent with answered it so: a preference is a choice, not a proof.
            let certain = consistent
                .iter()
                .all(|run| fp_of(per_run[run][served]) == best_fp);
            // The requests alone narrow the runs (a later request can still prove which run
            // this is); the answers served only order them.
            let narrowed = match &ns.replay_sessions {
                Some(set) if set.len() == consistent.len() => None,
                _ => Some(Arc::new(consistent.iter().copied().collect())),
            };
            let answered = if write {
                // Only the runs that gave the answer served here keep the preference: later
                // requests must not be answered from a run that disagreed, unless they prove
                // this session is that run.
                Some(Arc::new(
                    pool.iter()
                        .filter(|run| fp_of(per_run[*run][served]) == best_fp)
                        .copied()
                        .collect(),
                ))
            } else if addressed {
                // The request names an id only those runs recorded: it proves the session
                // replays one of them, so the preference moves there.
                Some(Arc::new(consistent.iter().copied().collect()))
            } else {
                None
            };
            return AxisPick::Within {
                idx,
                narrowed,
                answered,
                certain,
                // An unaddressed read only another run recorded does not show what this
                // session's writes were answered with.
                in_run: !overruled || addressed,
            };
        }
        if served < candidates.len() {
            // A moment whose source names no run anchors on none.
            let anchor: Option<RunSet> = (write && candidates[served].1.source.contains('/'))
                .then(|| Arc::new(BTreeSet::from([run_of(served)])));
            return AxisPick::Within {
                idx: served,
                answered: anchor.clone(),
                narrowed: anchor,
                certain: per_run.len() == 1,
                in_run: false,
            };
        }
        AxisPick::Past
    }

    /// Which count of an exact entry's time axis a request advances: `(route, entry, lane)`.
    /// When the request's principal picked its own moments out of the entry (`candidates` is a
    /// strict subset), the k-th request *of that principal* gets the k-th of them, so the lane
    /// is that subset (named by its first moment); otherwise one lane for every request.
    fn axis_lane(&self, r: usize, ei: usize, candidates: &[Cand<'_>]) -> (usize, usize, usize) {
        let all = self.model.routes[r].exact[ei].moments.len();
        let lane = match candidates.first() {
            Some((first, _)) if candidates.len() < all => *first,
            _ => usize::MAX,
        };
        (r, ei, lane)
    }

    /// Consume this request's position on the axis (HEAD never does).
    fn axis_advance(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        lane: (usize, usize, usize),
        narrowed: Option<RunSet>,
        answered: Option<RunSet>,
    ) {
        if call.head {
            return;
        }
        *ns.axis.entry(lane).or_insert(0) += 1;
        if narrowed.is_some() {
            ns.replay_sessions = narrowed;
        }
        if answered.is_some() {
            ns.answer_runs = answered;
        }
    }

    fn exact_replay(&self, ns: &mut Namespace, call: &Call<'_>, ei: usize) -> Option<Out> {
        self.exact_replay_of(ns, call, ei, None)
    }

    /// Exact replay of entry `ei`; of one run's recording of the request with the session's
    /// records replaced by that run's when `counterpart` is given ([`counterpart_requests`]).
    fn exact_replay_of(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        ei: usize,
        counterpart: Option<&counterpart_requests::CounterpartRun<'_>>,
    ) -> Option<Out> {
        let r = call.m.route;
        let route = &self.model.routes[r];
        let entry = &route.exact[ei];
        let candidates = match counterpart {
            Some(c) => self.run_candidates(&entry.moments, call.principal.as_deref(), c.run),
            None => self.candidate_moments(&entry.moments, call.principal.as_deref()),
        };
        let principal = self.principal_of(call);
        let of = match counterpart {
            Some(c) => CandidatesOf::Run(c.run.to_string(), principal),
            None => CandidatesOf::Principal(principal),
        };
        if candidates.is_empty() {
            return None;
        }
        // A session that names a recorded run's record itself knows that record: it is no
        // longer a stand-in for the session's own.
        if !ns.counterparts.is_empty() {
            let named: BTreeSet<&str> = call
                .m
                .params
                .iter()
                .chain(call.query.iter())
                .map(|(_, v)| v.as_str())
                .collect();
            ns.counterparts
                .retain(|(_, _, theirs), _| !named.contains(theirs.as_str()));
        }
        let write = !matches!(call.method.as_str(), "GET" | "HEAD");
        let pick = self.axis_pick(ns, r, ei, &candidates, of, call, write);
        let within = matches!(pick, AxisPick::Within { .. });
        // A moment of a run this session's replayed writes did not come from does not show
        // them: those writes are merged like synthesized ones.
        let in_run = matches!(pick, AxisPick::Within { in_run: true, .. });
        let read_like = matches!(call.method.as_str(), "GET" | "HEAD");
        let last = candidates[candidates.len() - 1].1;
        // The moment this request would get. Past the axis, reads get the last one (last
        // wins); writes fall through to fresh state (repeated creates mint fresh entities)
        // unless the last answer was a refusal: a recorded refusal stays a refusal.
        let provisional = match &pick {
            AxisPick::Within { idx, .. } => candidates[*idx].1,
            AxisPick::Past if read_like || is_refusal(last.status) => last,
            AxisPick::Past => return None,
        };
        if self.session_guards_overrule(ns, call, provisional.status) {
            return None;
        }

        // How many writes the moment's run had sent before it, where its position is known.
        let provisional_at = match &pick {
            AxisPick::Within { idx, .. } => candidates[*idx].0,
            AxisPick::Past => candidates[candidates.len() - 1].0,
        };
        let provisional_run = self.run_index().moments(r, ei).get(provisional_at).copied();
        let run_writes = provisional_run
            .and_then(|(_, position)| position)
            .map(|(writes, _)| writes);
        // A read its run recorded before a write of that run this session was already
        // replayed: it shows a state the session has moved past (the record before its own
        // update).
        let passed = read_like
            && provisional_run.is_some_and(|(run, position)| {
                position
                    .is_some_and(|(_, at)| ns.replayed_writes.get(&run).is_some_and(|w| *w > at))
            });

        // State wins over a recorded answer when this session changed the entity itself
        // (but a recorded refusal is not overridden by session writes).
        let mut merge_list = None;
        match route.state_op {
            Some(StateOp::Read | StateOp::Update | StateOp::Delete) => {
                if let Some((ty, id_key)) = self.target(route, &call.m.params) {
                    let id: &str = &id_key;
                    let synth_changed = ns
                        .entity(&ty, id)
                        .is_some_and(|e| e.origin == Origin::Synthesized)
                        || ns.is_deleted(&ty, id) == Some(Origin::Synthesized);
                    let replay_changed = ns
                        .entity(&ty, id)
                        .is_some_and(|e| e.origin == Origin::Replayed)
                        || ns.is_deleted(&ty, id) == Some(Origin::Replayed);
                    if (synth_changed || (replay_changed && (!in_run || passed)))
                        && !is_refusal(provisional.status)
                    {
                        return None;
                    }
                    // A moment saying the record is gone where the session holds it (or there
                    // where the session deleted it), recorded after its run had sent another
                    // number of writes than this session, shows writes the session never made
                    // (that run's delete, or its create): the session's store answers.
                    let gone = matches!(provisional.status, 404 | 410);
                    let contradicts = if gone {
                        ns.entity(&ty, id).is_some()
                    } else {
                        (200..300).contains(&provisional.status) && ns.is_deleted(&ty, id).is_some()
                    };
                    if replay_changed
                        && contradicts
                        && run_writes.is_some_and(|w| w != ns.writes_sent)
                    {
                        return None;
                    }
                }
            }
            Some(StateOp::List) => {
                // Where every recording listed only its own records, a recorded page says
                // nothing of this session's collection (its items, its total, where paging
                // ends) when its run had sent another number of writes, or when the session
                // holds a record no recording made: the page is rendered from the session's
                // store. Another page is still read against the store: a record the session
                // does not hold leaves it.
                if let Some(ty) = &route.entity_type
                    && route.list.as_ref().is_some_and(|l| l.own_records_only)
                {
                    // A page its run recorded after another number of writes than this
                    // session has sent lists another collection.
                    let other_writes = run_writes.is_some_and(|w| w != ns.writes_sent);
                    // Records no recording made (rendered creates, a fixture's) are on no
                    // recorded page.
                    let unrecorded = ns
                        .type_store(ty)
                        .is_some_and(|s| s.live.values().any(|e| e.origin != Origin::Replayed));
                    if other_writes || unrecorded {
                        return None;
                    }
                    merge_list = Some((ty.clone(), false));
                }
                if let Some(ty) = &route.entity_type
                    && let Some(store) = ns.type_store(ty)
                {
                    let has_fixtures = store.live.values().any(|e| e.origin == Origin::Fixture);
                    // A page its run recorded after more writes than this session has sent shows
                    // writes the session never made (a delete of the record it still holds):
                    // the session's writes are merged as if the page were another run's.
                    let run_wrote_more = run_writes.is_some_and(|w| w > ns.writes_sent);
                    if store.has_synth_writes()
                        || has_fixtures
                        || ((!in_run || run_wrote_more) && store.has_writes())
                    {
                        merge_list = Some((ty.clone(), true));
                    }
                }
            }
            _ => {}
        }

        let certain = matches!(pick, AxisPick::Within { certain: true, .. });
        let lane = self.axis_lane(r, ei, &candidates);
        let position = ns.axis.get(&lane).copied().unwrap_or(0);
        let idx = match pick {
            AxisPick::Within {
                idx,
                narrowed,
                answered,
                ..
            } => {
                self.axis_advance(ns, call, lane, narrowed, answered);
                idx
            }
            AxisPick::Past => candidates.len() - 1,
        };
        let (mi, moment) = candidates[idx];
        if within
            && !read_like
            && let Some((run, Some((_, at)))) = self.run_index().moments(r, ei).get(mi).copied()
        {
            let mark = ns.replayed_writes.entry(run).or_insert(at);
            *mark = (*mark).max(at);
        }
        let mut out = self.moment_out(ns, call, ei, mi);
        // A claim only when this is provably the request's own moment, and the body served
        // holds its every recorded value (a respelled moment lost some in the parse).
        out.replay = if within && certain && !moment.respelled {
            Some(ReplayClass::SeriesMoment)
        } else {
            None
        };
        // Positions the model proved session-authored carry this session's own values. Not on
        // a page the session's own records are merged into where it made them with ids of its
        // own: the recorded item is then another run's record, listed beside the session's, and
        // given the session's values it would show them twice, once under an id whose own read
        // answers the recorded ones.
        let merges_own_records = matches!(&merge_list, Some((ty, true))
            if ns.type_store(ty).is_some_and(|s| s.has_synth_writes()));
        let session_bound = if merges_own_records {
            &[][..]
        } else {
            &entry.session_bound[..]
        };
        if out.replay.is_some() && !session_bound.is_empty() {
            out.body.materialize();
        }
        if out.replay.is_some()
            && !session_bound.is_empty()
            && let OutBody::Json(body) = &mut out.body
        {
            let mut bound = false;
            for b in session_bound {
                if let Some(v) = ns.outbound.created_value(&b.create, &b.field)
                    && let Some(slot) = json_pointer_get_mut(body, &b.pointer)
                {
                    *slot = v.clone();
                    out.origins
                        .insert(&unescape_pointer(&b.pointer), outbound::FieldOrigin::Echo);
                    out.sources
                        .set(&unescape_pointer(&b.pointer), FieldSource::Echo);
                    bound = true;
                }
            }
            if bound {
                out.replay = Some(ReplayClass::SessionBoundMoment);
            }
        }
        // A request naming an id the twin answered from a run it chose without proof is
        // consistent with that run only because of the twin's choice: that proves nothing about
        // which run this session is, so the moment is served (as above) but not claimed exact.
        if out.replay.is_some()
            && !ns.unproven_ids.is_empty()
            && call
                .m
                .params
                .iter()
                .chain(call.query.iter())
                .any(|(_, v)| ns.unproven_ids.contains(v))
        {
            out.replay = None;
        }
        // A write whose answers mint a fresh id (a generated or counter hole in the template
        // of the moment's status), on a route several recorded runs wrote to, answers each run
        // with that run's own ids: one run's recorded answer is not what this request gets
        // (the others show the same kind of request minting other values), so it is served but
        // not claimed exact (below, once the claim has said whether the run was proven). A
        // twin of one recorded run keeps its claims.
        let mints_per_run =
            out.replay.is_some() && write && route.variants.iter().any(|v| {
                v.status == moment.status
                    && matches!(&v.body, wraith_model::BodyTemplate::Json { root } if mints(root))
            }) && recorded_by_several_runs(route);
        if merge_list.is_some() && route.list.is_some() {
            out.body.materialize();
        }
        if let Some((ty, add_writes)) = merge_list
            && let (Some(shape), OutBody::Json(body)) = (&route.list, &mut out.body)
        {
            let pk = self.pk_of(&ty);
            let base = self.list_base(r);
            let recorded_keys = self.page_keys_of(body, r);
            let (params, query) = (&call.m.params, &call.query);
            let run = moment.source.rsplit_once('/').map(|(run, _)| run);
            // Keyed (an HMAC) only where the list asks whose records are listed.
            let principal = shape
                .principal_records_only
                .then(|| self.principal_of(call))
                .flatten();
            let merged = list::merge_into_moment(
                body,
                shape,
                &ty,
                &pk,
                ns,
                params,
                query,
                base,
                run,
                add_writes,
                principal.as_deref(),
                shape
                    .filter_header
                    .as_deref()
                    .and_then(|h| call.req.header(h)),
                self.gone_records().get(&ty),
            );
            if merged.changed {
                self.mask_list_items(ns, r, body);
                out.replay = None;
                self.mark_page_items(ns, call, &mut out);
                self.relink(call, &mut out, &recorded_keys, false);
            }
            if merged.fixture {
                out.provenance = Provenance::Fixture;
            }
        }
        if self.rename_embedded_counterparts(ns, &moment.source, &mut out) {
            out.replay = None;
        }
        if let Some(c) = counterpart {
            c.rename_back(&mut out);
        }
        if matches!(route.state_op, Some(StateOp::Read | StateOp::Update))
            && (200..300).contains(&moment.status)
            && self.keep_minted_fields(ns, call, &mut out)
        {
            out.replay = None;
        }
        if (200..300).contains(&moment.status) && !call.head {
            self.apply_replayed_effect(ns, call, &out);
            self.apply_action_effect(ns, call, &mut out, None);
            self.apply_action_values(ns, call, out.status, Origin::Replayed);
            if route.state_op == Some(StateOp::Create) {
                self.apply_create_counters(ns, call, &mut out, Origin::Replayed);
            }
            if route.state_op == Some(StateOp::Create) && within {
                self.note_counterparts(ns, (r, ei, mi), &candidates, position, &out);
                self.note_counterpart_creates(ns, call, &moment.source, position, &out);
            }
            if route.state_op == Some(StateOp::Create)
                && out.replay.is_none()
                && let Some(ty) = route.entity_type.as_deref()
                && let Some(body) = out.body.json()
            {
                // The record itself, or the one a wrapped create carries at `record_at`.
                let record = if route.record_at.is_empty() {
                    Some(&*body)
                } else {
                    json_pointer_get(&body, &route.record_at)
                };
                let id = match record.and_then(|r| r.get(self.pk_of(ty))) {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Number(n)) => Some(n.to_string()),
                    _ => None,
                };
                ns.unproven_ids.extend(id);
            }
        }
        // The requests proved the run (its ids are not unproven), but its minted values are
        // that run's own: no claim.
        if mints_per_run {
            out.replay = None;
        }
        Some(out)
    }

    /// A replayed create answered from one recorded run: for every other run that recorded
    /// this request at this position, remember which record its answer created there, so a
    /// page later served from that run shows this session's record in its counterpart's place
    /// (the same write, answered with another id) instead of beside it.
    /// `(r, ei, mi)` is the served moment (route, exact entry, moment), whose text `out`'s
    /// body still is when unparsed.
    fn note_counterparts(
        &self,
        ns: &mut Namespace,
        (r, ei, mi): (usize, usize, usize),
        candidates: &[Cand<'_>],
        position: usize,
        out: &Out,
    ) {
        let route = &self.model.routes[r];
        let Some(ty) = route.entity_type.as_deref() else {
            return;
        };
        let pk = self.pk_of(ty);
        // The entity key of a recorded moment's body, parsed once per engine; `tree` is the
        // parse of that very body when the caller already holds it (not parsed again).
        let moment_key = |mi: usize, m: &Moment, tree: Option<&Value>| -> Option<String> {
            self.entity_keys
                .get((r, ei, mi), || match (&m.body, tree) {
                    (RecordedBody::Json { .. }, Some(tree)) => entity_key(tree, &pk),
                    (RecordedBody::Json { value }, None) => {
                        value.parse().ok().and_then(|value| entity_key(&value, &pk))
                    }
                    _ => None,
                })
                .cloned()
                .flatten()
        };
        // An answer still holding the served moment's text has that moment's key (and, when an
        // earlier step read it, that text's tree: see `RawJson::parsed`).
        let served = candidates.iter().find(|(i, _)| *i == mi).map(|(_, m)| *m);
        let mine = match (&out.body, served) {
            (OutBody::Raw(raw), Some(m))
                if matches!(&m.body, RecordedBody::Json { value }
                    if crate::raw_moment::same_text(&raw.text, value.as_str().as_bytes())) =>
            {
                moment_key(mi, m, raw.parsed.get().and_then(Option::as_ref))
            }
            _ => out.body.json().and_then(|body| entity_key(&body, &pk)),
        };
        let Some(mine) = mine else {
            return;
        };
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for &(ci, m) in candidates {
            let run = m.source.rsplit_once('/').map_or("", |(s, _)| s);
            let n = seen.entry(run).or_insert(0);
            if *n == position
                && matches!(m.body, RecordedBody::Json { .. })
                && let Some(theirs) = moment_key(ci, m, None)
                && theirs != mine
            {
                ns.counterparts
                    .insert((ty.to_string(), run.to_string(), theirs), mine.clone());
            }
            *n += 1;
        }
    }

    /// A moment of run R embedding R's own record of a create this session made (answered from
    /// another run) names the session's record instead, at any depth (see
    /// [`crate::embedded_counterparts`]), in its body and in the headers naming URLs. Returns
    /// whether the answer changed.
    fn rename_embedded_counterparts(&self, ns: &Namespace, source: &str, out: &mut Out) -> bool {
        let Some((run, _)) = source.rsplit_once('/') else {
            return false;
        };
        let pks: Vec<(String, &str, &str, Option<&Value>)> = ns
            .counterparts
            .iter()
            .filter(|((_, r, _), _)| r == run)
            .map(|((ty, _, theirs), mine)| {
                let record = ns.entity(ty, mine).map(|e| e.value.as_ref());
                (self.pk_of(ty), theirs.as_str(), mine.as_str(), record)
            })
            .collect();
        if pks.is_empty() {
            return false;
        }
        let renames: Vec<embedded_counterparts::Rename<'_>> = pks
            .iter()
            .map(|(pk, theirs, mine, record)| embedded_counterparts::Rename {
                pk,
                theirs,
                mine,
                record: *record,
            })
            .collect();
        // The headers naming URLs (a page's `Link`) name R's records as the body does.
        let headers = embedded_counterparts::rename_url_headers(
            &mut out.headers,
            pks.iter().map(|(_, theirs, mine, _)| (*theirs, *mine)),
        );
        if let OutBody::Raw(raw) = &out.body
            && !embedded_counterparts::mentions_any(&raw.text, &renames)
        {
            return headers;
        }
        out.body.materialize();
        let body = match &mut out.body {
            OutBody::Json(body) => embedded_counterparts::rename_embedded(body, &renames),
            _ => false,
        };
        body || headers
    }

    /// The response of recorded moment `mi` of exact entry `ei` of the matched route,
    /// verbatim (bar framing headers and a fresh `Date`). A JSON body the outbound passes leave
    /// unchanged stays unparsed ([`OutBody::Raw`]).
    fn moment_out(&self, ns: &mut Namespace, call: &Call<'_>, ei: usize, mi: usize) -> Out {
        let route = &self.model.routes[call.m.route];
        let moment = &route.exact[ei].moments[mi];
        // A recorded answer to HEAD keeps its `content-length` (the length the GET's body
        // has), which `serialize` states as the answer's length and takes out.
        let mut headers: Vec<(String, String)> = moment
            .headers
            .iter()
            .filter(|(k, _)| {
                !render::is_framing_header(k)
                    || (call.head
                        && matches!(moment.body, RecordedBody::Empty)
                        && k.eq_ignore_ascii_case("content-length"))
            })
            .cloned()
            .collect();
        let wants_date = route.variants.iter().any(|v| {
            v.headers.iter().any(|h| {
                matches!(
                    h.program,
                    wraith_model::HeaderRule::Volatile {
                        kind: wraith_model::VolatileKind::Date
                    }
                )
            })
        });
        if wants_date && !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("date")) {
            let t = ns.now_us(&self.opts.wall_clock);
            headers.push(("date".to_string(), render::http_date(t)));
        }
        let body = match &moment.body {
            RecordedBody::Empty => OutBody::Empty,
            RecordedBody::Json { value } => self.recorded_json((call.m.route, ei, mi), value),
            RecordedBody::Text { text } => OutBody::Bytes(Bytes::from(text.clone())),
            RecordedBody::Binary { base64 } => OutBody::Bytes(decode_b64(base64)),
        };
        Out {
            status: moment.status,
            headers,
            body,
            provenance: Provenance::Recorded,
            route: Some(self.router.info[call.m.route].name.clone()),
            exchange: if moment.source.is_empty() {
                None
            } else {
                Some(moment.source.clone())
            },
            replay: None,
            sources: Sources::new(self.opts.debug, Some(FieldSource::Recorded)),
            origins: Origins::default(),
            policy_changed: false,
            moment: Some(std::ptr::from_ref(moment) as usize),
            cached: replay_cache::Cached::No,
        }
    }

    /// A recorded JSON body as an answer: its text, unparsed — marked for the outbound passes
    /// unless the moment's verdict says they leave it unchanged. The tree only when the model
    /// has no verdict for the position.
    fn recorded_json(&self, at: (usize, usize, usize), text: &JsonText) -> OutBody {
        match self.cached_verdict(at, text) {
            Some(v) => OutBody::Raw(RawJson {
                text: text.to_bytes(),
                mentions_upstream: v.mentions_upstream,
                passes: !v.verbatim,
                parsed: std::cell::OnceCell::new(),
            }),
            _ => match text.parse() {
                Ok(v) => OutBody::Json(v),
                Err(_) => OutBody::Bytes(text.to_bytes()),
            },
        }
    }

    /// The verdict of moment `at` (whose body is `text`): stored by synth for this outbound
    /// configuration, or decided on first use. `None` for a position the model does not have.
    pub(crate) fn cached_verdict(
        &self,
        at: (usize, usize, usize),
        text: &JsonText,
    ) -> Option<crate::raw_moment::Verdict> {
        self.verdicts
            .get(at, || self.moment_verdict(at.0, text))
            .copied()
    }

    /// Decide once whether a moment of route `r` with body `text` can be served verbatim:
    /// the text must be exactly what the parsed path would serialize (canonical), and the
    /// outbound body passes must change nothing in it with no exemptions (exemptions only
    /// remove rewrites, so then they change nothing for any session either).
    pub(crate) fn moment_verdict(&self, r: usize, text: &JsonText) -> crate::raw_moment::Verdict {
        let mentions_upstream = self
            .upstream_origin
            .as_deref()
            .is_some_and(|o| crate::raw_moment::contains_ignore_ascii_case(text.as_str(), o));
        let verbatim = match text.parse() {
            Ok(mut tree) => {
                sort_keys(&mut tree);
                let canonical = serde_json::to_string(&tree).is_ok_and(|t| t == text.as_str());
                canonical && {
                    let origins = Origins::default();
                    let ctx = outbound::BodyCtx {
                        origins: &origins,
                        session: None,
                        evidence: self.route_evidence(r),
                        replace_redacted: self.opts.fidelity != Fidelity::Strict,
                        seed: self.router.info.get(r).map_or("", |i| i.name.as_str()),
                        probe: None,
                    };
                    !self.outbound.apply_body(&mut tree, &ctx)
                }
            }
            Err(_) => false,
        };
        crate::raw_moment::Verdict {
            verbatim,
            mentions_upstream,
        }
    }

    /// A replayed create/update/delete also changes the namespace, so later requests agree.
    fn apply_replayed_effect(&self, ns: &mut Namespace, call: &Call<'_>, out: &Out) {
        let route = &self.model.routes[call.m.route];
        // A created record is of the type of the variant the answer is one of, where that
        // variant's answers are records of another type than the route's.
        let variant_type = || {
            route
                .variants
                .iter()
                .find(|v| v.status == out.status && self.guard_holds(&v.guard, ns, call))
                .and_then(|v| v.record_type.clone())
        };
        let created_type = match route.state_op {
            Some(StateOp::Create) => variant_type(),
            _ => None,
        };
        let Some(ty) = created_type.or_else(|| route.entity_type.clone()) else {
            return;
        };
        let pk = self.pk_of(&ty);
        match route.state_op {
            Some(StateOp::Create) => {
                if let Some(body) = out.body.json()
                    && let Some(ptr) = created_pointer(route, &body, &pk)
                    && let Some(entity) = json_pointer_get(&body, &ptr)
                    && let Some(key) = entity.get(&pk).and_then(fixtures::scalar_key)
                {
                    let parents = call.m.params.iter().map(|(_, v)| v.clone()).collect();
                    let named = call.m.params.iter().any(|(_, v)| *v == key)
                        || call
                            .body
                            .as_ref()
                            .and_then(|b| b.get(&pk))
                            .and_then(fixtures::scalar_key)
                            .is_some_and(|k| k == key);
                    if !named {
                        ns.note_minted_again(&ty, &key);
                    }
                    let entity = self.as_later_views_show(&ty, entity.clone());
                    ns.put(&ty, &key, entity, Origin::Replayed, Some(parents));
                    ns.note_creator(&ty, &key, self.principal_of(call));
                }
            }
            Some(StateOp::Update) => {
                let Some((ty, id_key)) = self.target(route, &call.m.params) else {
                    return;
                };
                let id: &str = &id_key;
                let from_body = out.body.json().and_then(|body| {
                    entity_pointer(&body, &pk)
                        .and_then(|p| json_pointer_get(&body, &p))
                        .filter(|e| {
                            e.get(&pk).and_then(fixtures::scalar_key).as_deref() == Some(id)
                        })
                        .cloned()
                });
                let entity = from_body.or_else(|| {
                    let mut base = self.base_entity(ns, &ty, id)?;
                    if let Some(patch) = &call.body {
                        merge_for_method(&call.method, &mut base, patch);
                    }
                    Some(base)
                });
                if let Some(entity) = entity {
                    ns.put(&ty, id, entity, Origin::Replayed, None);
                }
            }
            Some(StateOp::Delete) => {
                if let Some((ty, id)) = self.target(route, &call.m.params)
                    && !ns.delete_one(&ty, &id, Origin::Replayed)
                {
                    self.cascade_delete(ns, route, &id, Origin::Replayed, 0);
                }
            }
            _ => {}
        }
    }

    /// The action effect of the call's route and the id its path names, when the call is an
    /// action answered 2xx (not a `HEAD`): what the action-effect passes act on.
    fn acted_on<'c>(
        &self,
        call: &'c Call<'_>,
        status: u16,
    ) -> Option<(&wraith_model::ActionEffect, &'c str)> {
        let action = self.model.routes[call.m.route].action.as_ref()?;
        if !(200..300).contains(&status) || call.head {
            return None;
        }
        Some((action, action_id(call, action)?))
    }

    /// An action route (`POST …/:id/favourite`, see `Route::action`) that answered 2xx with the
    /// entity its path names (at `ActionEffect::at`: the answer itself, or an object the answer
    /// embeds, as a reblog embeds the status) stores the answer's values of the fields the
    /// recorded answers changed and steps the learned counters, over the entity as the session
    /// sees it, so later reads, lists and answers agree. A rendered answer (`origin`
    /// `Synthesized`) then shows the entity as it now is: its counters, and where the answer
    /// embeds the entity, the whole stored record in place of the template's representative.
    /// A session-written entity stays session-written (`origin` applies otherwise).
    ///
    /// `rendered`: the variant `out` was rendered from; `None` for a replayed answer.
    fn apply_action_effect(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        out: &mut Out,
        rendered: Option<&Variant>,
    ) {
        let Some((action, id)) = self.acted_on(call, out.status) else {
            return;
        };
        let origin = match rendered {
            Some(_) => Origin::Synthesized,
            None => Origin::Replayed,
        };
        let route = &self.model.routes[call.m.route];
        if !action.undoes_wrappers.is_empty() {
            self.delete_undone_wrappers(ns, call, action, id, origin);
        }
        if !action.sets.is_empty() {
            self.apply_action_sets(ns, call, action, id, origin);
            return;
        }
        let ty = action.entity_type.as_str();
        let pk = self.pk_of(ty);
        // What this request asked the action to set: the fields its template echoes from
        // what the request sent (a note's text). Recorded answers each showed their own
        // request's value, so the effect learned no constant for them; the answer shows the
        // sent value and the record holds it from now on.
        let sent: Vec<String> = rendered
            .map(|v| sent_echo_fields(v, &action.at, &call.ctx()))
            .unwrap_or_default()
            .into_iter()
            .filter(|f| *f != pk && !action.answered_fields.contains(f))
            .collect();
        let rendered = rendered.is_some();
        let mut answered: Vec<(String, Value)> = {
            let Some(body) = out.body.json() else {
                return;
            };
            let Some(Value::Object(at)) = body.pointer(&action.at) else {
                return;
            };
            // A rendered answer embedding the entity elsewhere gets the stored one put there,
            // whatever its template's representative named.
            let named = at.get(&pk).and_then(fixtures::scalar_key).as_deref() == Some(id);
            let embeds = rendered && !action.at.is_empty();
            if !named && !embeds {
                return;
            }
            action
                .fields
                .iter()
                .chain(sent.iter().filter(|f| !action.fields.contains(f)))
                .filter_map(|f| at.get(f).map(|v| (f.clone(), v.clone())))
                .collect()
        };
        if rendered {
            // A field following another record's field (`requested` as the account is
            // `locked`) takes it from that record, not from the template's representative.
            for ff in &action.followed_fields {
                let held = self
                    .base_entity(ns, &ff.entity_type, id)
                    .and_then(|r| r.get(&ff.from).and_then(Value::as_bool));
                if let Some(b) = held {
                    let v = Value::Bool(b != ff.negated);
                    match answered.iter_mut().find(|(f, _)| *f == ff.field) {
                        Some(slot) => slot.1 = v,
                        None => answered.push((ff.field.clone(), v)),
                    }
                }
            }
        }
        let Some(mut entity) = self.base_entity(ns, ty, id) else {
            // A record neither the session nor the recordings hold: a recorded answer that is
            // the record is what the session now knows of it (a vote on the poll a replayed
            // post made), and so is a rendered one (a followed tag no run recorded).
            if !rendered && action.at.is_empty() {
                if let Some(body) = out.body.json().filter(|b| b.is_object()) {
                    ns.put(ty, id, body.into_owned(), origin, None);
                }
            } else if rendered && action.at.is_empty() {
                out.body.materialize();
                if let OutBody::Json(body @ Value::Object(_)) = &mut out.body {
                    for (f, v) in answered {
                        body[f.as_str()] = v;
                    }
                    self.mint_unique_fields(ns, ty, id, body);
                    ns.put(ty, id, body.clone(), Origin::Synthesized, None);
                }
            }
            return;
        };
        // Fields of the record the request names (the instance a volume is attached to), as
        // the session sees that record: stored, and answered below.
        let mut copied: Vec<(String, Value)> = Vec::new();
        let mut changed = false;
        if rendered && action.at.is_empty() && route.named_record_copies.is_some() {
            let before = entity.clone();
            for at in self.copy_named_record_fields(ns, call, route, &mut entity) {
                if let Some(v) = entity.pointer(&at) {
                    copied.push((at.clone(), v.clone()));
                }
            }
            changed = entity != before;
        }
        let Value::Object(map) = &mut entity else {
            return;
        };
        for (f, v) in answered {
            if map.get(&f) != Some(&v) {
                map.insert(f, v);
                changed = true;
            }
        }
        for (f, step) in &action.counters {
            if let Some(n) = map.get(f).and_then(Value::as_i64) {
                map.insert(f.clone(), Value::from(n.saturating_add(*step)));
                changed = true;
            }
        }
        changed |= action_arrays::apply(action, call.body.as_ref(), map);
        if rendered {
            out.body.materialize();
            if let OutBody::Json(body) = &mut out.body
                && let Some(slot) = body.pointer_mut(&action.at)
            {
                if action.at.is_empty() {
                    // A rendered answer that is the entity answers it as the session holds it
                    // (after the effect): its template's other values are some recording's,
                    // so a later read of the entity (or a list of it) would disagree.
                    // What the recorded answers changed without it lasting (a resize's
                    // `resizing` status, the size it asked for) stays as the template
                    // rendered it.
                    if let Value::Object(answer) = &mut *slot {
                        for (f, v) in answer.iter_mut() {
                            if action.answered_fields.contains(f) {
                                continue;
                            }
                            if let Some(held) = map.get(f) {
                                *v = held.clone();
                            }
                        }
                    }
                    for (at, v) in &copied {
                        if let Some(answered) = slot.pointer_mut(at) {
                            *answered = v.clone();
                            out.sources.set(&unescape_pointer(at), FieldSource::State);
                        }
                    }
                } else {
                    *slot = entity.clone();
                }
            }
            // An answer wrapping the entity that is itself a record of the same type (mostly its
            // fields, another key: a reblog is a status) is a record the session now holds, so
            // later requests naming its key find it.
            if !action.at.is_empty()
                && let OutBody::Json(body) = &out.body
                && let (Some(w), Some(e)) = (body.as_object(), entity.as_object())
                && let Some(key) = w.get(&pk).and_then(fixtures::scalar_key)
                && key != id
                && ns.entity(ty, &key).is_none()
                && ns.is_deleted(ty, &key).is_none()
            {
                let common = w.keys().filter(|k| e.contains_key(*k)).count();
                if common * 10 >= (w.len() + e.len() - common) * 6 {
                    ns.put(ty, &key, body.clone(), Origin::Synthesized, None);
                    ns.wrappers
                        .entry((ty.to_string(), id.to_string(), call.principal.clone()))
                        .or_default()
                        .push((call.m.route, key));
                }
            }
        }
        if !changed {
            return;
        }
        put_acted(ns, ty, id, entity, origin);
    }

    /// Delete the records the same principal's earlier actions made around entity `id` (a
    /// reblog's status) where this action undoes theirs (`ActionEffect::undoes_wrappers`):
    /// an unreblog takes the reblog out of every list and read of it.
    fn delete_undone_wrappers(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        action: &wraith_model::ActionEffect,
        id: &str,
        origin: Origin,
    ) {
        let ty = action.entity_type.as_str();
        let made = (ty.to_string(), id.to_string(), call.principal.clone());
        let Some(wrappers) = ns.wrappers.get_mut(&made) else {
            return;
        };
        let (undone, kept): (Vec<_>, Vec<_>) = wrappers.drain(..).partition(|(maker, _)| {
            action
                .undoes_wrappers
                .contains(&self.model.routes[*maker].id)
        });
        *wrappers = kept;
        if wrappers.is_empty() {
            ns.wrappers.remove(&made);
        }
        for (_, key) in undone {
            if ns.entity(ty, &key).is_some() {
                ns.delete_one(ty, &key, origin);
            }
        }
    }

    /// A read route recorded only refusing (the not-found of a deleted record) answers a record
    /// the session holds (created or seeded) as the session holds it, with the refusal's
    /// headers: the recordings never showed the read of a live record, and the store holds
    /// what its create answered. Anything else keeps the refusal.
    fn held_record_read(&self, ns: &Namespace, route: &Route, call: &Call<'_>, out: Out) -> Out {
        if route
            .variants
            .iter()
            .any(|v| (200..300).contains(&v.status))
        {
            return out;
        }
        let Some((ty, id_key)) = self.target(route, &call.m.params) else {
            return out;
        };
        let id: &str = &id_key;
        let Some(held) = ns.entity(&ty, id) else {
            return out;
        };
        let (provenance, source) = stored_provenance(held.origin);
        let mut answer = Out::json(200, (*held.value).clone(), provenance, out.route);
        answer.headers = out.headers;
        answer.sources = out.sources;
        answer.sources.reset(Some(source));
        answer
    }

    /// The entity as the session currently sees it: the store, else the recorded record.
    fn base_entity(&self, ns: &Namespace, ty: &str, id: &str) -> Option<Value> {
        if let Some(e) = ns.entity(ty, id) {
            return Some((*e.value).clone());
        }
        if ns.is_deleted(ty, id).is_some() {
            return None;
        }
        self.model
            .entity_types
            .get(ty)
            .and_then(|t| t.records.get(id))
            .cloned()
    }

    // ---------------------------------------------------------------- strict fidelity

    /// Strict fidelity: only recorded exchanges; everything else fails closed
    /// (recorded 4xx → synthesized 4xx → 501). Never a replay claim.
    /// Strict replay indexes recordings by concrete method and path: a request whose exact key
    /// (query and body included) no recording has still answers a recording of its path. Of
    /// several, the one whose query shares the most of the request's query pairs, the first
    /// recorded among equals, so an unrecorded parameter (`?expand=x`) never turns a recorded
    /// path into a refusal.
    fn strict_path_entry(&self, call: &Call<'_>) -> Option<usize> {
        let route = &self.model.routes[call.m.route];
        let sent = wraith_model::request_key::normalize_query(&call.req.query);
        let sent: std::collections::BTreeSet<&str> =
            sent.split('&').filter(|p| !p.is_empty()).collect();
        route
            .exact
            .iter()
            .enumerate()
            .filter(|(_, e)| e.key.path == call.req.path)
            .map(|(ei, e)| {
                let shared = e.key.query.split('&').filter(|p| sent.contains(p)).count();
                (shared, std::cmp::Reverse(ei))
            })
            .max()
            .map(|(_, std::cmp::Reverse(ei))| ei)
    }

    fn strict(&self, ns: &mut Namespace, call: &Call<'_>) -> Out {
        let r = call.m.route;
        let route = &self.model.routes[r];
        let concrete = format!("{} {}", route.method, call.path);
        if let Some(ei) = self
            .exact_entry(call)
            .or_else(|| self.strict_path_entry(call))
        {
            let entry = &route.exact[ei];
            let candidates = self.candidate_moments(&entry.moments, call.principal.as_deref());
            let write = !matches!(call.method.as_str(), "GET" | "HEAD");
            let of = CandidatesOf::Principal(self.principal_of(call));
            let pick = match self.axis_pick(ns, r, ei, &candidates, of, call, write) {
                AxisPick::Within {
                    idx,
                    narrowed,
                    answered,
                    ..
                } => {
                    let lane = self.axis_lane(r, ei, &candidates);
                    self.axis_advance(ns, call, lane, narrowed, answered);
                    Some(idx)
                }
                AxisPick::Past if matches!(call.method.as_str(), "GET" | "HEAD") => {
                    candidates.len().checked_sub(1)
                }
                AxisPick::Past => None,
            };
            if let Some(i) = pick {
                let mut out = self.moment_out(ns, call, ei, candidates[i].0);
                out.route = Some(format!("{} {}", route.method, entry.key.path));
                out.replay = None;
                return out;
            }
        }
        // Recorded 4xx of this route (404 preferred), replayed as a policy answer.
        let recorded_4xx = route
            .exact
            .iter()
            .enumerate()
            .flat_map(|(ei, e)| e.moments.iter().enumerate().map(move |(mi, m)| (ei, mi, m)))
            .filter(|(_, _, m)| (400..500).contains(&m.status))
            .min_by_key(|(_, _, m)| if m.status == 404 { 0 } else { 1 });
        if let Some((ei, mi, _)) = recorded_4xx {
            let entry = &route.exact[ei];
            let mut out = self.moment_out(ns, call, ei, mi);
            out.provenance = Provenance::Miss;
            out.exchange = None;
            out.route = Some(format!("{} {}", route.method, entry.key.path));
            return out;
        }
        let mut out = self.fail_closed(ns, call, Some(concrete));
        if out.status == 501 {
            // No recording of this path: under strict fidelity that is a route miss, and a
            // route miss names no route (the request's own path is no recording's).
            out.route = None;
        }
        out
    }

    // ---------------------------------------------------------------- state ops

    fn op_create(&self, ns: &mut Namespace, call: &Call<'_>, variant: &Variant) -> Out {
        let route = &self.model.routes[call.m.route];
        let (mut out, _) = self.render_variant(ns, call, variant);
        // The variant's answers may be records of another type than the route's.
        let Some(ty) = variant
            .record_type
            .clone()
            .or_else(|| route.entity_type.clone())
        else {
            return out;
        };
        if !(200..300).contains(&out.status) {
            return out;
        }
        let pk = self.pk_of(&ty);
        let OutBody::Json(body) = &mut out.body else {
            return out;
        };
        let Some(ptr) = created_pointer(route, body, &pk) else {
            return out;
        };
        // The acting principal's record shows as the session last saw it, wherever it is.
        self.embed_actor_view(ns, call, route, body, &mut out.origins);
        self.step_actor_counts(ns, call, route, body);
        self.embed_actor_view_elsewhere(ns, call, route, body, &mut out.origins);
        // Records the answer embeds show as the acting principal sees them.
        self.show_to_viewer(ns, call, route, body);
        // A client-supplied primary key is kept, unless the recorded answers show the sent
        // field naming another record: they minted the created record's key and echoed the
        // sent value elsewhere (a firewall device's create sends the instance's `id`).
        let client_pk = call
            .body
            .as_ref()
            .and_then(|b| b.get(&pk))
            .filter(|v| fixtures::scalar_key(v).is_some())
            .filter(|_| !sent_key_names_another(variant, &ptr, &pk))
            .cloned();
        let Some(entity) = json_pointer_get_mut(body, &ptr) else {
            return out;
        };
        let client_named = client_pk.is_some();
        if let (Some(v), Value::Object(map)) = (client_pk, &mut *entity) {
            map.insert(pk.clone(), v);
            out.sources.set(
                &format!("{}/{pk}", unescape_pointer(&ptr)),
                FieldSource::Echo,
            );
        }
        // The record's defaults the request sent values for.
        for field in create_inputs::take(&route.create_inputs, call.body.as_ref(), entity) {
            let at = format!("{}/{field}", unescape_pointer(&ptr));
            out.origins.clear_under(&at);
            out.sources.set(&at, FieldSource::Echo);
        }
        let mut key = match entity.get(&pk).and_then(fixtures::scalar_key) {
            Some(k) => k,
            None => return out,
        };
        let named_by_path = call.m.params.iter().any(|(_, v)| *v == key);
        // A key picked among recorded values that this session already holds for another
        // record: recorded creates each answered a key of their own, so this one gets a fresh
        // key too instead of overwriting the record that holds it.
        if !client_named
            && !named_by_path
            && (ns.entity(&ty, &key).is_some() || ns.is_deleted(&ty, &key).is_some())
            && picks_recorded_keys(variant, &pk)
            && let Some(fresh) = self.fresh_key(ns, &ty, &entity[&pk])
            && let Some(k) = fixtures::scalar_key(&fresh)
            && let Value::Object(map) = &mut *entity
        {
            map.insert(pk.clone(), fresh);
            let at = format!("{}/{pk}", unescape_pointer(&ptr));
            out.origins.insert(&at, outbound::FieldOrigin::Minted);
            out.sources.set(&at, FieldSource::Generated);
            key = k;
        }
        if let Some(rule) = &route.text_mentions {
            self.derive_mentions(ns, call, rule, entity);
        }
        if let Some(rule) = &route.text_tags {
            text_tags::derive_tags(call, rule, entity);
        }
        if let Some(rule) = &route.text_rendering
            && text_rendering::render_text(call, rule, entity)
        {
            out.sources.set(
                &format!("{}{}", unescape_pointer(&ptr), unescape_pointer(&rule.at)),
                text_rendering::SOURCE,
            );
        }
        for at in self.name_child_refs(ns, call, route, entity) {
            // An existing record's key, not one minted here.
            out.origins.clear_under(&format!(
                "{}{}",
                unescape_pointer(&ptr),
                unescape_pointer(&at)
            ));
        }
        // Arrays the request sent that the answers expand item by item, and what a create
        // without them was answered there.
        let sent = call.body.as_ref();
        for field in self.expand_created(ns, route, variant, Some(&ptr), sent, entity) {
            let at = format!("{}/{field}", unescape_pointer(&ptr));
            out.origins.clear_under(&at);
            out.sources.set(&at, FieldSource::Echo);
        }
        // The session's records the request names by an array of keys, where the answers
        // list them.
        for at in self.embed_lists(ns, call, route, (variant, Some(&ptr)), entity) {
            let at = format!("{}{}", unescape_pointer(&ptr), unescape_pointer(&at));
            out.origins.clear_under(&at);
            out.sources.set(&at, FieldSource::State);
        }
        // The records the request names by value, created where the session lacks them.
        for at in self.list_records_by_value(ns, call, route, entity) {
            let at = format!("{}{}", unescape_pointer(&ptr), unescape_pointer(&at));
            out.origins.clear_under(&at);
            out.sources.set(&at, FieldSource::State);
        }
        // Fields the record the request names holds (a plan's memory), as it holds them.
        for at in self.copy_named_record_fields(ns, call, route, entity) {
            let at = format!("{}{}", unescape_pointer(&ptr), unescape_pointer(&at));
            out.origins.clear_under(&at);
            out.sources.set(&at, FieldSource::State);
        }
        for field in self.number_in_parent(ns, call, route, &ty, entity) {
            let at = format!("{}/{field}", unescape_pointer(&ptr));
            out.sources.set(&at, FieldSource::Generated);
        }
        let parents: Vec<String> = call.m.params.iter().map(|(_, v)| v.clone()).collect();
        // Mirrored items that are records of their own: fresh keys, stored under this one.
        for at in self.store_mirrored_records(ns, call, route, (&parents, &key), entity) {
            let at = format!("{}{}", unescape_pointer(&ptr), unescape_pointer(&at));
            out.origins.insert(&at, outbound::FieldOrigin::Minted);
            out.sources.set(&at, FieldSource::Generated);
        }
        if !client_named && !named_by_path {
            ns.note_minted_again(&ty, &key);
        }
        let stored = self.as_later_views_show(&ty, entity.clone());
        ns.put(&ty, &key, stored, Origin::Synthesized, Some(parents));
        self.store_made_records(ns, variant, body);
        ns.note_creator(&ty, &key, self.principal_of(call));
        self.make_implicit_children(ns, call, route, &key);
        self.apply_create_counters(ns, call, &mut out, Origin::Synthesized);
        out
    }

    /// The records a create's request made inside it (a post's poll,
    /// [`wraith_model::EmbeddedRecord::made`]), as rendered, are records of their own type the
    /// session now holds: a later read or vote names them.
    fn store_made_records(&self, ns: &mut Namespace, variant: &Variant, body: &Value) {
        let wraith_model::BodyTemplate::Json { root } = &variant.body else {
            return;
        };
        for (at, ty) in crate::embedded_records::made_records(root) {
            let pk = self.pk_of(ty);
            let Some(record) = json_pointer_get(body, &at).filter(|v| v.is_object()) else {
                continue;
            };
            let Some(key) = record.get(&pk).and_then(fixtures::scalar_key) else {
                continue;
            };
            if ns.entity(ty, &key).is_none() && ns.is_deleted(ty, &key).is_none() {
                ns.put(ty, &key, record.clone(), Origin::Synthesized, None);
            }
        }
    }

    fn op_read(&self, ns: &mut Namespace, call: &Call<'_>, variant: &Variant) -> Out {
        let route = &self.model.routes[call.m.route];
        let (mut out, _) = self.render_variant(ns, call, variant);
        if !(200..300).contains(&out.status) {
            return self.held_record_read(ns, route, call, out);
        }
        let Some((ty, id_key)) = self.target(route, &call.m.params) else {
            return out;
        };
        let id: &str = &id_key;
        if ns.is_deleted(&ty, id).is_some() {
            return self.gone(ns, call);
        }
        let pk = self.pk_of(&ty);
        // A record the recordings hold under this id, but for another tuple of the path's
        // parameters (another org's repo of that id): not this entity, so not served as it.
        let other_tuple = !route.known_param_tuples.is_empty()
            && call.m.params.len() > 1
            && self.membership_of(ns, call) == Some(false);
        let OutBody::Json(body) = &mut out.body else {
            return out;
        };
        let ptr = entity_pointer(body, &pk);
        // Fields an earlier action set on an entity the session held no record of: this
        // read's rendering, with them, becomes the session's record.
        if !ns.pending_sets.is_empty()
            && ns.entity(&ty, id).is_none()
            && let Some(p) = &ptr
            && let Some(mut record) = json_pointer_get(body, p).cloned()
            && action_sets::take_pending_sets(ns, &ty, id, &mut record)
        {
            ns.put(&ty, id, record, Origin::Synthesized, None);
        }
        if !other_tuple
            && (ns.entity(&ty, id).is_some()
                || self
                    .model
                    .entity_types
                    .get(&ty)
                    .is_some_and(|t| t.records.contains_key(id)))
        {
            // The entity's positions now hold stored or recorded values, not this render's.
            out.origins.clear_under(ptr.as_deref().unwrap_or(""));
        }
        if let Some(e) = ns.entity(&ty, id).filter(|_| !other_tuple) {
            let stored = Arc::clone(&e.value);
            let origin = e.origin;
            match (&ptr, origin) {
                (Some(p), Origin::Fixture) => {
                    // Fixture records may be sparse: overlay them on the rendered entity.
                    if let Some(slot) = json_pointer_get_mut(body, p) {
                        overlay(slot, &stored);
                        // The first read completes a sparse record for the session: a field
                        // the template rendered (a clock, an observed value) then reads the
                        // same every time, as a stored record's fields do.
                        if let (Some(all), Some(own)) = (slot.as_object(), stored.as_object())
                            && all.len() > own.len()
                        {
                            ns.put(&ty, id, slot.clone(), Origin::Fixture, None);
                        }
                    }
                    let at = unescape_pointer(p);
                    match stored.as_object() {
                        Some(fields) => fields.keys().for_each(|k| {
                            out.sources.set(&format!("{at}/{k}"), FieldSource::Fixture)
                        }),
                        None => out.sources.set(&at, FieldSource::Fixture),
                    }
                    out.provenance = Provenance::Fixture;
                }
                (Some(p), _) => {
                    let at = unescape_pointer(p);
                    out.sources.set(&at, FieldSource::State);
                    if let Some(slot) = json_pointer_get_mut(body, p) {
                        let rendered = std::mem::replace(slot, (*stored).clone());
                        let read = (variant, Some(p.as_str()), &rendered);
                        self.move_on_read(ns, route, (&ty, id), read, slot, &at, &mut out.sources);
                    }
                }
                (None, Origin::Fixture) => {
                    *body = (*stored).clone();
                    out.sources.reset(Some(FieldSource::Fixture));
                    out.provenance = Provenance::Fixture;
                }
                (None, _) => {
                    let rendered = std::mem::replace(body, (*stored).clone());
                    out.sources.reset(Some(FieldSource::State));
                    let read = (variant, None, &rendered);
                    self.move_on_read(ns, route, (&ty, id), read, body, "", &mut out.sources);
                }
            }
            return out;
        }
        let record = self
            .model
            .entity_types
            .get(&ty)
            .and_then(|t| t.records.get(id))
            .filter(|_| !other_tuple);
        match (record, &ptr) {
            (Some(rec), Some(p)) => {
                if let Some(slot) = json_pointer_get_mut(body, p) {
                    *slot = rec.clone();
                }
                out.sources.set(&unescape_pointer(p), FieldSource::Recorded);
                out.provenance = Provenance::Recorded;
            }
            (Some(rec), None) => {
                *body = rec.clone();
                out.sources.reset(Some(FieldSource::Recorded));
                out.provenance = Provenance::Recorded;
            }
            (None, Some(p)) => {
                // Template clone with the requested id inserted.
                if let Some(Value::Object(map)) = json_pointer_get_mut(body, p)
                    && let Some(slot) = map.get_mut(&pk)
                {
                    *slot = typed_like(id, slot);
                    let at = format!("{}/{pk}", unescape_pointer(p));
                    out.sources.set(&at, FieldSource::Echo);
                }
            }
            (None, None) => {}
        }
        out
    }

    /// A read of the stored record `id` of `ty` (`record`, at `at` in the answer): the record
    /// moves one read along its read progressions, then settles (see [`Self::settle_read`]);
    /// the fields either changed are stored with the record, which has moved on by itself.
    #[allow(clippy::too_many_arguments)]
    fn move_on_read(
        &self,
        ns: &mut Namespace,
        route: &Route,
        (ty, id): (&str, &str),
        read: (&Variant, Option<&str>, &Value),
        record: &mut Value,
        at: &str,
        sources: &mut Sources,
    ) {
        let mut changed = self.progress_read(ns, route, (ty, id), record);
        for key in &changed {
            sources.set(&format!("{at}/{}", escape_key(key)), FieldSource::Constant);
        }
        changed.extend(self.settle_read(ty, read, record, at, sources));
        read_progressions::store_fields(ns, (ty, id), record, &changed);
    }

    /// A read (or update) of a record this session stored: the fields it still holds in the
    /// state every recorded create answered, where every recorded read (or update) showed
    /// another, show the read's (see [`settle`]). Returns the fields changed.
    /// `read` is the read's variant, the pointer to the record in its answer and the
    /// template's render of the record for this request.
    fn settle_read(
        &self,
        ty: &str,
        (variant, ptr, rendered): (&Variant, Option<&str>, &Value),
        record: &mut Value,
        at: &str,
        sources: &mut Sources,
    ) -> Vec<String> {
        let Some(read) = entity_template(variant, ptr) else {
            return Vec::new();
        };
        let pk = self.pk_of(ty);
        let changed = settle::settle(&self.model, ty, &pk, read, rendered, record);
        for key in &changed {
            sources.set(&format!("{at}/{}", escape_key(key)), FieldSource::Constant);
        }
        changed
    }

    fn op_update(&self, ns: &mut Namespace, call: &Call<'_>, variant: &Variant) -> Out {
        let route = &self.model.routes[call.m.route];
        let Some((ty, id_key)) = self.target(route, &call.m.params) else {
            return self.render_variant(ns, call, variant).0;
        };
        let id: &str = &id_key;
        if ns.is_deleted(&ty, id).is_some() {
            return self.gone(ns, call);
        }
        let (mut out, _) = self.render_variant(ns, call, variant);
        if !(200..300).contains(&out.status) {
            return out;
        }
        let pk = self.pk_of(&ty);
        let stored = self.base_entity(ns, &ty, id);
        let OutBody::Json(body) = &mut out.body else {
            return out;
        };
        let ptr = entity_pointer(body, &pk);
        let rendered_entity = ptr
            .as_ref()
            .and_then(|p| json_pointer_get(body, p))
            .cloned()
            .or_else(|| body.is_object().then(|| body.clone()));
        let Some(rendered_entity) = rendered_entity else {
            return out;
        };
        let at = ptr.as_deref().map(unescape_pointer).unwrap_or_default();
        let mut entity = stored.clone().unwrap_or_else(|| rendered_entity.clone());
        if stored.is_some() {
            out.sources.set(&at, FieldSource::State);
            // The stored record moved on by itself as a read of it would show (a volume no
            // longer `creating`): the update answers, and stores, that state.
            let update = (variant, ptr.as_deref(), &rendered_entity);
            self.settle_read(&ty, update, &mut entity, &at, &mut out.sources);
            self.reset_unsent(route, call, &mut entity, &at, &mut out.sources);
        }
        if let Some(patch) = &call.body {
            let mut patch = patch.clone();
            util::coerce_like(&mut patch, &entity);
            // A request field that neither the entity nor any recorded answer of this update
            // carries is an input the API turns into something else (a `tag_name` that
            // becomes a `tag`), not a field of the record: it is not stored or answered.
            let template = entity_template(variant, ptr.as_deref());
            // A `null` sent for a list or object the entity holds is a client's unset
            // collection (`"tags": null` from a nil slice): the API keeps a collection there,
            // so the stored one stays.
            if let (Value::Object(p), Value::Object(e)) = (&mut patch, &entity) {
                p.retain(|k, v| {
                    let known = e.contains_key(k)
                        || template.is_some_and(|t| t.iter().any(|f| &f.key == k));
                    let unset_collection =
                        v.is_null() && e.get(k).is_some_and(|s| s.is_array() || s.is_object());
                    known && !unset_collection
                });
            }
            self.expand_sent(ns, route, variant, ptr.as_deref(), &entity, &mut patch);
            merge_for_method(&call.method, &mut entity, &patch);
            if let Some(fields) = patch.as_object() {
                for k in fields.keys() {
                    out.sources.set(&format!("{at}/{k}"), FieldSource::Echo);
                }
            }
            // A time the request sent is stored as the API writes it (`…+02:00` answered
            // `….000Z`): the template's instant echo rendered it so.
            if let (Some(tpl), Value::Object(map)) = (template, &mut entity) {
                for f in tpl {
                    if let Node::Hole(wraith_model::Hole {
                        source:
                            wraith_model::HoleKind::Echo {
                                from: wraith_model::EchoSource::Instant { source, .. },
                            },
                        ..
                    }) = &f.value
                        && let wraith_model::EchoSource::Body { pointer } = &**source
                        && patch.pointer(pointer).is_some()
                        && map.contains_key(&f.key)
                        && let Some(v) = rendered_entity.get(&f.key)
                    {
                        map.insert(f.key.clone(), v.clone());
                    }
                }
            }
        }
        // Fields the template stamps from the clock (`updated_at`) take the fresh value; those
        // the recorded updates left as they were (`created`) keep the stored one, where the
        // record has one.
        if stored.is_some()
            && let Some(tpl) = entity_template(variant, ptr.as_deref())
        {
            for f in tpl {
                if route.update_keeps.contains(&f.key) && entity.get(&f.key).is_some() {
                    continue;
                }
                if matches!(
                    f.value,
                    Node::Hole(wraith_model::Hole {
                        source: wraith_model::HoleKind::Clock { .. },
                        ..
                    })
                ) && let (Some(v), Value::Object(map)) =
                    (rendered_entity.get(&f.key), &mut entity)
                {
                    map.insert(f.key.clone(), v.clone());
                    out.sources
                        .set(&format!("{at}/{}", f.key), FieldSource::Clock);
                }
            }
        }
        if let Value::Object(map) = &mut entity
            && let Some(slot) = map.get_mut(&pk)
        {
            *slot = typed_like(id, slot);
            out.sources.set(&format!("{at}/{pk}"), FieldSource::Echo);
        }
        if let Some(rule) = &route.text_tags {
            text_tags::rederive_tags(call, rule, &mut entity);
        }
        if let Some(rule) = &route.text_rendering
            && text_rendering::render_text(call, rule, &mut entity)
        {
            out.sources.set(
                &format!("{at}{}", unescape_pointer(&rule.at)),
                text_rendering::SOURCE,
            );
        }
        for embedded in self.embed_lists(ns, call, route, (variant, ptr.as_deref()), &mut entity) {
            out.sources.set(
                &format!("{at}{}", unescape_pointer(&embedded)),
                FieldSource::State,
            );
        }
        match &ptr {
            Some(p) => {
                if let Some(slot) = json_pointer_get_mut(body, p) {
                    *slot = entity.clone();
                }
            }
            None => *body = entity.clone(),
        }
        let parents = call.m.params[..call.m.params.len().saturating_sub(1)]
            .iter()
            .map(|(_, v)| v.clone())
            .collect();
        let keep_parents = ns.entity(&ty, id).and_then(|e| e.parents.clone());
        ns.put(
            &ty,
            id,
            entity,
            Origin::Synthesized,
            keep_parents.or(Some(parents)),
        );
        out
    }

    /// A replacing update's fields its request left out take the value every recorded such
    /// update answered (`Route::update_resets`), before the request's own fields are merged.
    /// Only a request that sent an object, or nothing at all, leaves fields out.
    fn reset_unsent(
        &self,
        route: &Route,
        call: &Call<'_>,
        entity: &mut Value,
        at: &str,
        sources: &mut Sources,
    ) {
        if route.update_resets.is_empty() {
            return;
        }
        let sent = match &call.body {
            Some(Value::Object(map)) => Some(map),
            None if call.req.body.is_empty() => None,
            _ => return,
        };
        let Value::Object(record) = entity else {
            return;
        };
        for reset in &route.update_resets {
            if sent.is_some_and(|m| m.contains_key(&reset.field)) {
                continue;
            }
            record.insert(reset.field.clone(), reset.value.clone());
            sources.set(&format!("{at}/{}", reset.field), FieldSource::Constant);
        }
    }

    fn op_delete(&self, ns: &mut Namespace, call: &Call<'_>, variant: &Variant) -> Out {
        let route = &self.model.routes[call.m.route];
        let Some((ty, id_key)) = self.target(route, &call.m.params) else {
            return self.render_variant(ns, call, variant).0;
        };
        let id: &str = &id_key;
        // Pre-mutation membership: a second delete is a not-found.
        if ns.is_deleted(&ty, id).is_some() {
            return self.gone(ns, call);
        }
        let (mut out, _) = self.render_variant(ns, call, variant);
        if (200..300).contains(&out.status) {
            self.answer_the_deleted_entity(ns, &ty, id, variant, &mut out);
            if !ns.delete_one(&ty, id, Origin::Synthesized) {
                self.cascade_delete(ns, route, id, Origin::Synthesized, 0);
            }
        }
        out
    }

    /// The records created under a deleted record's path that go with it (`Route::cascades`),
    /// and theirs in turn through their own type's delete routes (a few levels at most).
    fn cascade_delete(
        &self,
        ns: &mut Namespace,
        route: &Route,
        id: &str,
        origin: Origin,
        depth: usize,
    ) {
        const MAX_DEPTH: usize = 4;
        for cascade in &route.cascades {
            let Some(store) = ns.type_store(&cascade.entity_type) else {
                continue;
            };
            let gone: Vec<String> = store
                .live
                .iter()
                .filter(|(_, e)| {
                    e.parents
                        .as_ref()
                        .and_then(|p| p.get(cascade.parent_at))
                        .is_some_and(|p| p == id)
                })
                .map(|(k, _)| k.clone())
                .collect();
            for key in gone {
                ns.tombstone(&cascade.entity_type, &key, origin);
                if depth >= MAX_DEPTH {
                    continue;
                }
                for child_delete in self.model.routes.iter().filter(|r| {
                    r.state_op == Some(StateOp::Delete)
                        && r.entity_type.as_deref() == Some(cascade.entity_type.as_str())
                        && !r.cascades.is_empty()
                }) {
                    self.cascade_delete(ns, child_delete, &key, origin, depth + 1);
                }
            }
        }
    }

    /// A delete whose recorded answers carried the record (the template holds the entity's
    /// primary key, echoed from the path, at the root or one level down) answers with the
    /// record being deleted: each
    /// position where the recorded delete answers differed from one record to the next (a hole
    /// anywhere under it) takes the stored entity's value, as a read of it would. Positions
    /// every recorded delete answered alike (`"deleted": true`, a status) keep the template's
    /// value, and keys the stored entity lacks keep the render.
    fn answer_the_deleted_entity(
        &self,
        ns: &Namespace,
        ty: &str,
        id: &str,
        variant: &Variant,
        out: &mut Out,
    ) {
        let Some(entity) = ns.entity(ty, id) else {
            return;
        };
        let Some(stored) = entity.value.as_object() else {
            return;
        };
        let pk = self.pk_of(ty);
        let OutBody::Json(body) = &mut out.body else {
            return;
        };
        let Some(ptr) = entity_pointer(body, &pk) else {
            return;
        };
        let Some(fields) = entity_template(variant, Some(&ptr)) else {
            return;
        };
        // Only an answer that names the deleted record: its key echoes the request path (a
        // receipt with an id of its own is not the record).
        let names_the_record = fields.iter().any(|f| {
            f.key == pk
                && matches!(
                    &f.value,
                    Node::Hole(wraith_model::Hole {
                        source: wraith_model::HoleKind::Echo {
                            from: wraith_model::EchoSource::Path { .. }
                        },
                        ..
                    })
                )
        });
        if !names_the_record {
            return;
        }
        let Some(Value::Object(slot)) = json_pointer_get_mut(body, &ptr) else {
            return;
        };
        let at = unescape_pointer(&ptr);
        for f in fields {
            if !has_hole(&f.value) {
                continue;
            }
            let (Some(value), Some(answered)) = (stored.get(&f.key), slot.get_mut(&f.key)) else {
                continue;
            };
            *answered = value.clone();
            let path = format!("{at}/{}", f.key.replace('~', "~0").replace('/', "~1"));
            out.origins.clear_under(&path);
            out.sources.set(&path, FieldSource::State);
        }
    }

    fn op_list(&self, ns: &mut Namespace, call: &Call<'_>, variant: &Variant) -> Out {
        let r = call.m.route;
        let route = &self.model.routes[r];
        let (mut out, _) = self.render_variant(ns, call, variant);
        if !(200..300).contains(&out.status) {
            return out;
        }
        let (Some(shape), Some(ty)) = (&route.list, &route.entity_type) else {
            return out;
        };
        let OutBody::Json(body) = &mut out.body else {
            return out;
        };
        let pk = self.pk_of(ty);
        let origin = self.twin_origin(call.req);
        let principal = shape
            .principal_records_only
            .then(|| self.principal_of(call))
            .flatten();
        let page = list::serve_list(
            list::ListRequest {
                shape,
                ty,
                pk: &pk,
                path: &call.path,
                params: &call.m.params,
                query: &call.query,
                filter_header: shape
                    .filter_header
                    .as_deref()
                    .and_then(|h| call.req.header(h)),
                origin: origin.as_deref(),
                principal: principal.as_deref(),
            },
            self.list_base(r),
            ns,
            body,
        );
        self.add_untouched_items(ns, call, (shape, ty, &pk), body);
        self.mask_list_items(ns, r, body);
        // The variant's recorded `Link` names a recorded page: only the served page's own
        // links go out (none for an empty or single page).
        out.headers.retain(|(k, _)| !k.eq_ignore_ascii_case("link"));
        if let Some(link) = page.link {
            out.headers.push(("link".to_string(), link));
        }
        if let Some(slot) = route.list.as_ref() {
            out.sources.set(
                &unescape_pointer(&slot.items_pointer),
                FieldSource::Recorded,
            );
            for f in &slot.envelope {
                out.sources
                    .set(&unescape_pointer(&f.pointer), FieldSource::State);
            }
        }
        self.mark_page_items(ns, call, &mut out);
        if page.fixture {
            out.provenance = Provenance::Fixture;
        }
        out
    }

    /// Under `--debug`, the origin of each item of a served page: this session's stored
    /// entity (`state`, or `fixture` for a fixture record) when the store holds its key;
    /// other items keep what the page said (recorded).
    fn mark_page_items(&self, ns: &Namespace, call: &Call<'_>, out: &mut Out) {
        if !self.opts.debug {
            return;
        }
        let route = &self.model.routes[call.m.route];
        let Some(ty) = route.entity_type.as_deref() else {
            return;
        };
        let Some(store) = ns.type_store(ty) else {
            return;
        };
        let pk = self.pk_of(ty);
        let items_pointer = route.list.as_ref().map(|s| s.items_pointer.as_str());
        let base = unescape_pointer(items_pointer.unwrap_or(""));
        let marks: Vec<(String, FieldSource)> = page_items(&out.body, items_pointer)
            .iter()
            .enumerate()
            .filter_map(|(i, item)| {
                let key = item.get(&pk).and_then(fixtures::scalar_key)?;
                let e = store.live.get(&key)?;
                let src = if e.origin == Origin::Fixture {
                    FieldSource::Fixture
                } else {
                    FieldSource::State
                };
                Some((format!("{base}/{i}"), src))
            })
            .collect();
        for (at, src) in marks {
            out.sources.set(&at, src);
        }
    }

    // ---------------------------------------------------------------- output

    /// The twin's own origin for this request: its `Host`, else the bound URL. A `Host` that
    /// is no `host[:port]` (a path, a query, spaces, markup) is not written into answers.
    fn twin_origin(&self, req: &Request) -> Option<String> {
        match req.header("host") {
            Some(h)
                if !h.is_empty()
                    && h.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b".-:[]_".contains(&b)) =>
            {
                // One allocation: this runs on every request.
                let mut o = String::with_capacity("http://".len() + h.len());
                o.push_str("http://");
                o.extend(h.chars().map(|c| c.to_ascii_lowercase()));
                Some(o)
            }
            _ => self.self_url.read().clone(),
        }
    }

    /// The origin the self-URL rewrite rewrites to, when it is on.
    fn rewrite_target(&self, req: &Request) -> Option<String> {
        if self.opts.rewrite_self_urls {
            self.twin_origin(req)
        } else {
            None
        }
    }

    /// Outbound policy (self-URL rewrite), HEAD, and serialization. A replay-bytes cache hit
    /// serves its bytes instead of rewriting, sorting and serializing the body; a cache fill
    /// stores what this produced. Also gives the JSON tree the body was serialized from, when
    /// it was (see [`Engine::handle_with_tree`]).
    fn finish(&self, mut out: Out, req: &Request, head: bool) -> (Response, Option<Value>) {
        // A cache candidate already knows the rewrite target: it is part of its key.
        let (hit, ticket, to) = match std::mem::take(&mut out.cached) {
            replay_cache::Cached::No => (None, None, self.rewrite_target(req)),
            replay_cache::Cached::Hit {
                bytes,
                policy_applied,
                origin,
            } => (Some((bytes, policy_applied)), None, origin),
            replay_cache::Cached::Fill(mut t) => {
                let origin = t.origin.take();
                (None, Some(t), origin)
            }
        };
        let mut policy_applied = false;
        let mut body_policy = false;
        if let (Some(from), Some(to)) = (&self.upstream_origin, &to)
            && from != to
        {
            if hit.is_none() {
                if matches!(&out.body, OutBody::Raw(raw) if raw.mentions_upstream) {
                    out.body.materialize();
                }
                if let OutBody::Json(v) = &mut out.body {
                    body_policy |= util::rewrite_origin_json(v, from, to);
                }
            }
            for (k, v) in out.headers.iter_mut() {
                // Compared in place: lowercasing a copy of every header name cost an
                // allocation per header per request.
                if ["location", "link", "content-location"]
                    .iter()
                    .any(|n| k.eq_ignore_ascii_case(n))
                {
                    policy_applied |= util::rewrite_origin_in(v, from, to);
                }
            }
        }
        // `X-Wraith-*` names the twin's own control headers, which the server adds: one an
        // answer carries (recorded from an upstream that was itself a twin) is not this twin's
        // to repeat, and would stand beside its own with another word.
        out.headers.retain(|(k, _)| {
            !k.get(..CONTROL_PREFIX.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(CONTROL_PREFIX))
        });
        // Header allowlist and header-scoped scrub rules. Dropping vendor headers changes no
        // byte of the claimed body, so it does not qualify a replay claim. A recorded HEAD
        // answer's `content-length` is framing for `serialize`, not a header to vet.
        let stated_length = out
            .headers
            .iter()
            .position(|(k, _)| head && k.eq_ignore_ascii_case("content-length"))
            .map(|i| out.headers.remove(i));
        self.outbound.apply_headers(&mut out.headers);
        body_policy |= out.policy_changed;
        // A handler's JSON answer without a type gets one. Every other answer either names its
        // type already (the engine's own bodies) or carries the headers its recordings had:
        // an API that answered JSON without a `Content-Type` is served without one.
        if out.provenance == Provenance::Handler
            && matches!(out.body, OutBody::Json(_) | OutBody::Raw(_))
            && !out
                .headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            out.headers
                .push(("content-type".to_string(), "application/json".to_string()));
        }
        // A replayed JSON moment is served parsed and re-serialized: keys sorted, compact
        // (a `Raw` one already is exactly that text).
        if out.replay.is_some()
            && hit.is_none()
            && let OutBody::Json(v) = &mut out.body
        {
            sort_keys(v);
        }
        // `out` ends here: its headers and names move into the response instead of being
        // cloned by `serialize` (which the idempotency cache also calls on a live `Out`).
        let headers = std::mem::take(&mut out.headers);
        let route = out.route.take();
        let exchange = out.exchange.take();
        let mut resp = match (hit, ticket) {
            (Some((bytes, p)), _) => {
                body_policy |= p;
                // Nothing left to serialize: the cached bytes are the body.
                out.body = OutBody::Empty;
                let mut resp = self.serialize(&out, req, head);
                resp.body = bytes;
                resp
            }
            (None, Some(ticket)) => {
                let resp = self.serialize(&out, req, head);
                self.replay_cache_store(*ticket, to.as_deref(), &resp.body, body_policy);
                resp
            }
            (None, None) => self.serialize(&out, req, head),
        };
        // A 204 or a 304 carries no body on the wire (the server could not send one), so the
        // engine answers none either, and in process the twin answers what it answers over
        // HTTP. A recorded body left out is no longer the moment verbatim: its claim and its
        // per-field origins go with it.
        if !crate::api::status_carries_body(resp.status) {
            if !resp.body.is_empty() || resp.head_length.is_some_and(|n| n > 0) {
                resp.replay = None;
                resp.field_counts = None;
                resp.field_origins = None;
            }
            resp.body = Bytes::new();
            resp.head_length = None;
        }
        // A recorded HEAD answer has no body to measure: the length it states is the GET's.
        if let Some((_, stated)) = stated_length
            && resp.head_length == Some(0)
            && let Ok(n) = stated.trim().parse::<usize>()
        {
            resp.head_length = Some(n);
        }
        policy_applied |= body_policy;
        resp.headers = headers;
        resp.route = route;
        resp.exchange = exchange;
        resp.outbound_policy_applied =
            policy_applied && resp.provenance == Provenance::Recorded && resp.replay.is_some();
        // The body just serialized (or the text served, with its tree when a step parsed it):
        // parsing `resp.body` gives this tree back (keys in their order, floats round-trip),
        // within the parser's nesting limit. A cache hit emptied `out.body` above.
        let tree = if head || resp.body.is_empty() {
            None
        } else {
            match std::mem::replace(&mut out.body, OutBody::Empty) {
                OutBody::Json(v) => Some(v).filter(|v| nests_within(v, TREE_DEPTH)),
                OutBody::Raw(raw) => raw.parsed.into_inner().flatten(),
                OutBody::Empty | OutBody::Bytes(_) => None,
            }
        };
        (resp, tree)
    }

    fn serialize(&self, out: &Out, _req: &Request, head: bool) -> Response {
        let full = match &out.body {
            OutBody::Empty => Bytes::new(),
            OutBody::Json(v) => {
                // Most bodies fit: fewer regrowths than to_vec's empty start.
                let mut buf = Vec::with_capacity(512);
                match serde_json::to_writer(&mut buf, v) {
                    Ok(()) => Bytes::from(buf),
                    Err(_) => Bytes::new(),
                }
            }
            OutBody::Raw(raw) => raw.text.clone(),
            OutBody::Bytes(b) => b.clone(),
        };
        // A HEAD answers no body, but the length of the one the same GET would carry.
        let (body, head_length) = if head {
            (Bytes::new(), Some(full.len()))
        } else {
            (full, None)
        };
        // The counts are derived from the origin map, so the header and the map agree. A HEAD
        // carries the counts of the body the same GET would carry, as its other headers do.
        let origins = (self.opts.debug && self.opts.fidelity == Fidelity::Synth)
            .then(|| out.sources.flatten(&out.body));
        let counts = origins.as_ref().map(FieldCounts::of_origins);
        Response {
            status: out.status,
            headers: out.headers.clone(),
            body,
            provenance: out.provenance,
            route: out.route.clone(),
            exchange: out.exchange.clone(),
            replay: if head { None } else { out.replay },
            outbound_policy_applied: false,
            field_counts: counts,
            // The per-field map describes a body; a HEAD sends none.
            field_origins: if head { None } else { origins },
            head_length,
        }
    }
}

/// Deepest nesting of arrays and objects a tree handed out by [`Engine::handle_with_tree`] may
/// have: well inside `serde_json`'s parse limit (128), so its serialization parses back to it.
const TREE_DEPTH: usize = 100;

/// Whether `v` nests arrays and objects at most `depth` deep.
fn nests_within(v: &Value, depth: usize) -> bool {
    match v {
        Value::Array(items) => depth > 0 && items.iter().all(|x| nests_within(x, depth - 1)),
        Value::Object(map) => depth > 0 && map.values().all(|x| nests_within(x, depth - 1)),
        _ => true,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tree_depth_tests {
    use super::*;

    fn nested(depth: usize) -> Value {
        (0..depth).fold(json!(1), |v, i| {
            if i % 2 == 0 {
                json!([v])
            } else {
                json!({ "a": v })
            }
        })
    }

    #[test]
    fn a_tree_nesting_within_the_depth_is_handed_out_and_a_deeper_one_is_not() {
        assert!(nests_within(&json!("scalar"), 0));
        assert!(nests_within(&nested(TREE_DEPTH), TREE_DEPTH));
        assert!(!nests_within(&nested(TREE_DEPTH + 1), TREE_DEPTH));
        // What the limit guards: a tree the parser still reads back.
        let text = serde_json::to_vec(&nested(TREE_DEPTH)).unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&text).unwrap(),
            nested(TREE_DEPTH)
        );
    }
}

/// The items of a page body: under the list shape's pointer, else a top-level array.
fn page_items<'b>(body: &'b OutBody, items_pointer: Option<&str>) -> &'b [Value] {
    let OutBody::Json(v) = body else {
        return &[];
    };
    let found = match items_pointer {
        Some(p) => json_pointer_get(v, p),
        None => Some(v),
    };
    found.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// What a provisioning request `p` (resolved to `asked`) sets otherwise than the live
/// session's `cur`, one phrase per setting, in the body's order; empty when it may be answered
/// with the session as it is. A setting the request leaves out is never a difference; a seed
/// equal to the one the session reports is the same seed (its values come from it alone).
fn provision_differences(cur: &Settings, asked: &Settings, p: &Provision) -> Vec<String> {
    let mut differ = Vec::new();
    if p.fixture.is_some() && cur.fixture != asked.fixture {
        differ.push(format!(
            "fixture {} (asked {})",
            cur.fixture.as_deref().unwrap_or("none"),
            asked.fixture.as_deref().unwrap_or("none")
        ));
    }
    if p.seed.is_some() && cur.seed != asked.seed {
        differ.push(format!("seed {} (asked {})", cur.seed, asked.seed));
    }
    if p.clock.is_some() && cur.clock != asked.clock {
        differ.push(format!(
            "clock {} at {} (asked {} at {})",
            cur.clock.mode.as_str(),
            cur.clock.base_epoch,
            asked.clock.mode.as_str(),
            asked.clock.base_epoch
        ));
    }
    differ
}

fn provision_info(session: &str, ns: &Namespace, created: bool) -> ProvisionInfo {
    ProvisionInfo {
        session: session.to_string(),
        fixture: ns.settings.fixture.clone(),
        seed: ns.settings.seed,
        clock: ns.settings.clock,
        entities_seeded: ns.entities_seeded,
        created,
    }
}

/// A refusal: a 4xx that is not a plain absence (404/410). Recorded refusals are replayed even
/// after session writes.
fn is_refusal(status: u16) -> bool {
    (400..500).contains(&status) && status != 404 && status != 410
}

/// A moment a request may be served, with its position in the exact entry.
type Cand<'m> = (usize, &'m Moment);

/// A cached response back into the pipeline (idempotent replay). JSON bodies are parsed again
/// so the outbound policy (self-URL rewrite) applies to the replay as to the original.
fn out_from_response(r: &Response) -> Out {
    let body = match serde_json::from_slice::<Value>(&r.body) {
        Ok(v) if !r.body.is_empty() => OutBody::Json(v),
        _ => OutBody::Bytes(r.body.clone()),
    };
    Out {
        status: r.status,
        headers: r.headers.clone(),
        body,
        provenance: r.provenance,
        route: r.route.clone(),
        exchange: r.exchange.clone(),
        // An idempotent replay repeats an earlier answer, not the moment at this request's
        // own position on the time axis: no exactness claim.
        replay: None,
        sources: Sources::restored(r.field_origins.as_ref()),
        origins: Origins::default(),
        policy_changed: false,
        moment: None,
        cached: replay_cache::Cached::No,
    }
}

/// Whether the model gives the `not_found` gate anything to judge.
fn supports_not_found(model: &Model) -> bool {
    model.routes.iter().any(|r| {
        let gated = r.state_op == Some(StateOp::Read)
            || (r.state_op == Some(StateOp::List) && r.path.contains("/:"));
        gated
            && (!r.known_param_tuples.is_empty()
                || r.entity_type
                    .as_ref()
                    .and_then(|t| model.entity_types.get(t))
                    .is_some_and(|t| !t.known_ids.is_empty() || !t.known_missing.is_empty())
                || !r.parent_params.is_empty())
    })
}

fn decode_b64(s: &str) -> Bytes {
    use base64::Engine as _;
    Bytes::from(
        base64::engine::general_purpose::STANDARD
            .decode(s)
            .unwrap_or_default(),
    )
}

/// Sort every object's keys (the canonical form a replayed JSON moment is served in).
fn sort_keys(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.sort_keys();
            m.values_mut().for_each(sort_keys);
        }
        Value::Array(a) => a.iter_mut().for_each(sort_keys),
        _ => {}
    }
}

/// The renderer's position form (unescaped keys) of a JSON pointer.
fn unescape_pointer(p: &str) -> String {
    p.replace("~1", "/").replace("~0", "~")
}

/// A JSON pointer from a path of unescaped keys (as the renderer reports positions).
fn escape_pointer(path: &str) -> String {
    if !path.contains('~') {
        return path.to_string();
    }
    path.replace('~', "~0")
}

/// JSON pointer of the entity object inside a body: the root when it carries the primary key,
/// else the first top-level object field that does (`/data`).
/// The primary key of the entity a body carries (see [`entity_pointer`]).
fn entity_key(body: &Value, pk: &str) -> Option<String> {
    let ptr = entity_pointer(body, pk)?;
    json_pointer_get(body, &ptr)?
        .get(pk)
        .and_then(fixtures::scalar_key)
}

pub(crate) fn entity_pointer(body: &Value, pk: &str) -> Option<String> {
    let obj = body.as_object()?;
    if obj.contains_key(pk) {
        return Some(String::new());
    }
    obj.iter()
        .find(|(_, v)| v.as_object().is_some_and(|o| o.contains_key(pk)))
        .map(|(k, _)| format!("/{}", k.replace('~', "~0").replace('/', "~1")))
}

/// Whether a create's variant picks its record's primary key `pk` among several recorded
/// values (an observed hole with at least two of them): the recorded creates answered keys
/// of their own that no learned id shape describes (`it_0_0`, `it_0_1`). A constant key (every
/// recorded create answered the same one, as scrubbed recordings do) is kept as it is.
fn picks_recorded_keys(variant: &Variant, pk: &str) -> bool {
    let Some(field) =
        settle::record_fields(variant, pk).and_then(|f| f.iter().find(|f| f.key == pk))
    else {
        return false;
    };
    match &field.value {
        Node::Hole(h) if h.source == wraith_model::HoleKind::Observed => {
            let mut seen: Vec<&Value> = Vec::new();
            for v in h.examples.iter().chain(&h.more_examples) {
                if !seen.contains(&v) {
                    seen.push(v);
                }
                if seen.len() >= 2 {
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}

/// The key after `v`: an integer plus one, or a string with its last run of ASCII digits
/// counted up (keeping its width unless it overflows: `a_09` → `a_10`, `a_99` → `a_100`), or
/// `_2` appended to a string without digits. `None` for anything else.
fn count_up(v: &Value) -> Option<Value> {
    match v {
        Value::Number(n) => n.as_u64()?.checked_add(1).map(|n| Value::Number(n.into())),
        Value::String(s) => {
            let bytes = s.as_bytes();
            let Some(end) = bytes.iter().rposition(u8::is_ascii_digit).map(|i| i + 1) else {
                return Some(Value::String(format!("{s}_2")));
            };
            let start = bytes[..end]
                .iter()
                .rposition(|b| !b.is_ascii_digit())
                .map_or(0, |i| i + 1);
            let mut digits = bytes[start..end].to_vec();
            let mut i = digits.len();
            loop {
                if i == 0 {
                    digits.insert(0, b'1');
                    break;
                }
                i -= 1;
                if digits[i] == b'9' {
                    digits[i] = b'0';
                } else {
                    digits[i] += 1;
                    break;
                }
            }
            let digits = String::from_utf8(digits).ok()?;
            Some(Value::String(format!(
                "{}{digits}{}",
                &s[..start],
                &s[end..]
            )))
        }
        _ => None,
    }
}

/// JSON pointer of the record a create's answer carries: the route's learned `record_at` (a
/// record one key deeper, of another collection's type) when it has one and the answer holds
/// an object there, else the entity object found in the body (see [`entity_pointer`]).
fn created_pointer(route: &Route, body: &Value, pk: &str) -> Option<String> {
    if route.record_at.is_empty() {
        return entity_pointer(body, pk);
    }
    json_pointer_get(body, &route.record_at)
        .filter(|v| v.is_object())
        .map(|_| route.record_at.clone())
}

/// Whether a template node has a hole anywhere under it (the recorded answers differed there).
fn has_hole(node: &Node) -> bool {
    match node {
        Node::Const { .. } => false,
        Node::Hole(_) => true,
        Node::Object { fields } => fields.iter().any(|f| f.optional || has_hole(&f.value)),
        Node::Array(wraith_model::ArrayNode::Tuple { items }) => items.iter().any(has_hole),
        Node::Array(wraith_model::ArrayNode::List { .. }) => true,
    }
}

/// Whether the variant's recorded creates sent their primary-key field for another record:
/// the template mints the key of the created record at `ptr` and copies the sent field to
/// some other position of the answer.
fn sent_key_names_another(variant: &Variant, ptr: &str, pk: &str) -> bool {
    let minted = entity_template(variant, Some(ptr))
        .and_then(|fields| fields.iter().find(|f| f.key == pk))
        .is_some_and(|f| {
            matches!(
                &f.value,
                Node::Hole(h) if matches!(h.source, wraith_model::HoleKind::Generated { .. })
            )
        });
    let wraith_model::BodyTemplate::Json { root } = &variant.body else {
        return false;
    };
    minted
        && echoes_body_field(
            root,
            &format!("/{}", wraith_model::pointer::escape_token(pk)),
        )
}

/// Whether a template node copies the request body field at `pointer` anywhere under it.
fn echoes_body_field(node: &Node, pointer: &str) -> bool {
    match node {
        Node::Const { .. } => false,
        Node::Hole(h) => matches!(
            &h.source,
            wraith_model::HoleKind::Echo {
                from: wraith_model::EchoSource::Body { pointer: p },
            } if p == pointer
        ),
        Node::Object { fields } => fields.iter().any(|f| echoes_body_field(&f.value, pointer)),
        Node::Array(wraith_model::ArrayNode::Tuple { items }) => {
            items.iter().any(|n| echoes_body_field(n, pointer))
        }
        Node::Array(wraith_model::ArrayNode::List {
            representatives, ..
        }) => representatives
            .iter()
            .any(|n| echoes_body_field(n, pointer)),
    }
}

/// The fields of `variant`'s object at `at` (root or one level down) whose template echoes
/// a body field or query parameter `req` sent: as sent, or as the same instant or trimmed text
/// (not set in other text: that is a message about the value, not the value).
fn sent_echo_fields(variant: &Variant, at: &str, req: &ReqCtx<'_>) -> Vec<String> {
    fn sent_input(from: &wraith_model::EchoSource) -> bool {
        use wraith_model::EchoSource as E;
        match from {
            E::Body { .. } | E::Query { .. } => true,
            E::Instant { source, .. } | E::Trimmed { source } => sent_input(source),
            E::Path { .. } | E::Header { .. } | E::Within { .. } => false,
        }
    }
    let Some(fields) = entity_template(variant, Some(at)) else {
        return Vec::new();
    };
    fields
        .iter()
        .filter(|f| match &f.value {
            Node::Hole(h) => match &h.source {
                wraith_model::HoleKind::Echo { from } => {
                    sent_input(from) && req.echo_source(from).is_some()
                }
                _ => false,
            },
            _ => false,
        })
        .map(|f| f.key.clone())
        .collect()
}

/// The template fields of the entity object at `ptr` (root or one level down).
fn entity_template<'v>(
    variant: &'v Variant,
    ptr: Option<&str>,
) -> Option<&'v [wraith_model::Field]> {
    let wraith_model::BodyTemplate::Json { root } = &variant.body else {
        return None;
    };
    let Node::Object { fields } = root else {
        return None;
    };
    match ptr {
        None | Some("") => Some(fields),
        Some(p) => {
            let key = p.strip_prefix('/')?;
            match fields.iter().find(|f| f.key == key).map(|f| &f.value) {
                Some(Node::Object { fields }) => Some(fields),
                _ => None,
            }
        }
    }
}

/// PATCH deep-merges; PUT and POST-update replace top-level keys.
fn merge_for_method(method: &str, target: &mut Value, patch: &Value) {
    if method == "PATCH" {
        util::deep_merge(target, patch);
    } else {
        util::shallow_merge(target, patch);
    }
}

/// Overlay a (possibly sparse) record onto a rendered object.
fn overlay(slot: &mut Value, record: &Value) {
    match (slot, record) {
        (Value::Object(s), Value::Object(r)) => {
            for (k, v) in r {
                s.insert(k.clone(), v.clone());
            }
        }
        (s, r) => *s = r.clone(),
    }
}

/// `id` spelled with the JSON type of `like` (a number stays a number when `id` is numeric).
fn typed_like(id: &str, like: &Value) -> Value {
    if like.is_number()
        && let Some(n) = util::parse_number(id)
    {
        return n;
    }
    Value::String(id.to_string())
}

/// Guard equality that lets form-encoded strings equal recorded numbers and booleans.
fn loosely_equal(actual: &Value, expected: &Value) -> bool {
    if actual == expected {
        return true;
    }
    match (actual, expected) {
        (Value::String(s), Value::Number(n)) => util::parse_number(s)
            .and_then(|v| v.as_f64())
            .zip(n.as_f64())
            .is_some_and(|(a, b)| a == b),
        (Value::String(s), Value::Bool(b)) => s == &b.to_string(),
        _ => false,
    }
}

/// The recorded state one variant renders its observed values from for one principal (see
/// `Engine::snapshot`).
struct Snapshot {
    principal: Option<String>,
    body: Value,
}

/// Most recorded answers weighed per variant and principal when picking a snapshot.
const MAX_SNAPSHOT_CANDIDATES: usize = 256;

/// Variant `vi`'s snapshot per recorded principal. Empty when the variant's template reads
/// no snapshot (no observed hole, no list): rendering it never looks one up, so no recorded
/// body is parsed for it.
fn snapshots_of(route: &Route, vi: usize) -> Vec<Snapshot> {
    snapshot_choices(route, vi)
        .into_iter()
        .map(|(_, s)| s)
        .collect()
}

/// The positions `[entry, moment]` in `route.exact` of variant `vi`'s snapshots, in
/// [`snapshots_of`]'s order: what synth stores in the model (`Precomputed::snapshots`) so an
/// engine parses only the chosen bodies instead of every candidate.
pub(crate) fn snapshot_positions(route: &Route, vi: usize) -> Vec<[usize; 2]> {
    snapshot_choices(route, vi)
        .into_iter()
        .map(|((e, m), _)| [e, m])
        .collect()
}

/// Variant `vi`'s snapshots as the model stores them, when it does: `None` (compute them) for a
/// model without stored snapshots for the route, or whose stored positions do not name JSON
/// moments of the route.
fn stored_snapshots(model: &Model, r: usize, vi: usize) -> Option<Vec<Snapshot>> {
    let route = model.routes.get(r)?;
    let per_variant = model.precomputed.as_ref()?.snapshots.get(&route.id)?;
    if per_variant.len() != route.variants.len() {
        return None;
    }
    per_variant
        .get(vi)?
        .iter()
        .map(|&[e, m]| {
            let moment = route.exact.get(e)?.moments.get(m)?;
            let RecordedBody::Json { value } = &moment.body else {
                return None;
            };
            Some(Snapshot {
                principal: moment.principal.clone(),
                body: value.parse().ok()?,
            })
        })
        .collect()
}

/// [`snapshots_of`] with the position of the moment each snapshot is.
fn snapshot_choices(route: &Route, vi: usize) -> Vec<((usize, usize), Snapshot)> {
    let mut out = Vec::new();
    let Some(variant) = route.variants.get(vi) else {
        return out;
    };
    let wraith_model::BodyTemplate::Json { root } = &variant.body else {
        return out;
    };
    if !reads_snapshot(root) {
        return out;
    }
    // Recorded answers of this variant's status and shape, by principal, in recorded order.
    type Candidates<'a> = BTreeMap<Option<&'a str>, (Vec<(usize, usize)>, Vec<Value>)>;
    let mut by_principal: Candidates<'_> = BTreeMap::new();
    for (ei, e) in route.exact.iter().enumerate() {
        for (mi, m) in e.moments.iter().enumerate() {
            if m.status != variant.status {
                continue;
            }
            let RecordedBody::Json { value } = &m.body else {
                continue;
            };
            let (at, group) = by_principal.entry(m.principal.as_deref()).or_default();
            if group.len() >= MAX_SNAPSHOT_CANDIDATES {
                continue;
            }
            if let Ok(body) = value.parse()
                && fits(root, &body)
            {
                at.push((ei, mi));
                group.push(body);
            }
        }
    }
    for (principal, (at, bodies)) in by_principal {
        let runs = run_numbers(at.iter().map(|&(ei, mi)| {
            route
                .exact
                .get(ei)
                .and_then(|e| e.moments.get(mi))
                .map_or("", |m| m.source.as_str())
        }));
        let Some(i) = most_typical_index_by_run(&bodies, &runs) else {
            continue;
        };
        if let (Some(&pos), Some(body)) = (at.get(i), bodies.into_iter().nth(i)) {
            out.push((
                pos,
                Snapshot {
                    principal: principal.map(str::to_string),
                    body,
                },
            ));
        }
    }
    out
}

/// Whether rendering `node` may read the snapshot: only an observed hole or a list does
/// (`render::ReqCtx::snapshot_at`'s callers).
fn reads_snapshot(node: &Node) -> bool {
    match node {
        Node::Hole(h) => matches!(h.source, wraith_model::HoleKind::Observed),
        Node::Const { .. } => false,
        Node::Object { fields } => fields.iter().any(|f| reads_snapshot(&f.value)),
        Node::Array(wraith_model::ArrayNode::Tuple { items }) => items.iter().any(reads_snapshot),
        Node::Array(wraith_model::ArrayNode::List { .. }) => true,
    }
}

/// Whether the route's exact-replay moments come from at least two recorded runs.
fn recorded_by_several_runs(route: &Route) -> bool {
    let mut first: Option<&str> = None;
    for m in route.exact.iter().flat_map(|e| e.moments.iter()) {
        let run = m.source.rsplit_once('/').map_or("", |(run, _)| run);
        match first {
            None => first = Some(run),
            Some(f) if f == run => {}
            Some(_) => return true,
        }
    }
    false
}

/// The record key path parameter `name` spells: its value, joined with the value before it
/// where that one qualifies it ([`Route::key_qualifier`]: `alice/web` under
/// `/repos/:owner/:name`).
pub(crate) fn param_key<'c>(
    route: &Route,
    params: &'c [(String, String)],
    name: &str,
) -> Option<Cow<'c, str>> {
    let at = params.iter().position(|(k, _)| k == name)?;
    let own = params[at].1.as_str();
    match (route.key_qualifier.as_deref(), at.checked_sub(1)) {
        (Some(q), Some(before)) if params[before].0 == q => {
            Some(Cow::Owned(format!("{}/{own}", params[before].1)))
        }
        _ => Some(Cow::Borrowed(own)),
    }
}

/// Whether rendering `node` mints a value: a generated or counter hole anywhere in it.
fn mints(node: &Node) -> bool {
    match node {
        Node::Hole(h) => matches!(
            h.source,
            wraith_model::HoleKind::Generated { .. } | wraith_model::HoleKind::Counter { .. }
        ),
        Node::Const { .. } => false,
        Node::Object { fields } => fields.iter().any(|f| mints(&f.value)),
        Node::Array(wraith_model::ArrayNode::Tuple { items }) => items.iter().any(mints),
        Node::Array(wraith_model::ArrayNode::List {
            representatives, ..
        }) => representatives.iter().any(mints),
    }
}

/// Whether a recorded body has the template's shape: the same JSON kind, and for an object
/// every field the template always renders.
fn fits(root: &Node, body: &Value) -> bool {
    match (root, body) {
        (Node::Object { fields }, Value::Object(map)) => fields
            .iter()
            .filter(|f| !f.optional)
            .all(|f| map.contains_key(&f.key)),
        (Node::Array(_), Value::Array(_)) => true,
        (Node::Object { .. }, _) | (Node::Array(_), _) => false,
        (Node::Const { .. } | Node::Hole(_), _) => true,
    }
}

/// Store a record an action changed: one this session wrote (`Synthesized`) stays
/// session-written, whatever the answer's origin.
/// How an answer drawn whole from a stored record is labelled: a fixture's record as a
/// fixture, any other as a template answer built from state.
fn stored_provenance(origin: Origin) -> (Provenance, FieldSource) {
    match origin {
        Origin::Fixture => (Provenance::Fixture, FieldSource::Fixture),
        _ => (Provenance::Template, FieldSource::State),
    }
}

/// The key of the record an action route names: its `id_param`'s value in the call's path.
fn action_id<'c>(call: &'c Call<'_>, action: &wraith_model::ActionEffect) -> Option<&'c str> {
    call.m
        .params
        .iter()
        .find(|(n, _)| *n == action.id_param)
        .map(|(_, v)| v.as_str())
}

fn put_acted(ns: &mut Namespace, ty: &str, id: &str, entity: Value, origin: Origin) {
    let origin = match ns.entity(ty, id) {
        Some(e) if e.origin == Origin::Synthesized => Origin::Synthesized,
        _ => origin,
    };
    ns.put(ty, id, entity, origin, None);
}

/// The `body_value` headers of `variant` (a create's `Location`) written again from the answer
/// as it finally is: after rendering, the state step may still set the record's key (one the
/// client sent, a fresh one for a key the session holds already). Only an answer of the
/// variant's own status is one it rendered.
fn name_answered_record(variant: &Variant, out: &mut Out) {
    if out.status != variant.status {
        return;
    }
    let OutBody::Json(body) = &out.body else {
        return;
    };
    for p in &variant.headers {
        if !matches!(p.program, wraith_model::HeaderRule::BodyValue { .. }) {
            continue;
        }
        let fresh = render::body_value_header(&p.program, Some(body));
        let Some(at) = out
            .headers
            .iter()
            .position(|(k, _)| k.eq_ignore_ascii_case(&p.name))
        else {
            continue;
        };
        out.headers
            .retain(|(k, _)| !k.eq_ignore_ascii_case(&p.name));
        let at = at.min(out.headers.len());
        for (i, v) in fresh.into_iter().enumerate() {
            out.headers.insert(at + i, (p.name.clone(), v));
        }
    }
}

/// The body [`most_typical_index`] picks (what the tests compare).
#[cfg(test)]
fn most_typical(bodies: Vec<Value>) -> Option<Value> {
    let i = most_typical_index(&bodies)?;
    bodies.into_iter().nth(i)
}

/// The index of the body whose leaves (and array lengths) recur most among `bodies`; the first
/// among equals. Every body counts as a run of its own ([`most_typical_index_by_run`]).
#[cfg(test)]
fn most_typical_index(bodies: &[Value]) -> Option<usize> {
    let runs: Vec<usize> = (0..bodies.len()).collect();
    most_typical_index_by_run(bodies, &runs)
}

/// The recording run (session) of each moment in `moments`, numbered in first-seen order: what
/// [`most_typical_index_by_run`] counts leaves by.
fn run_numbers<'a>(sources: impl IntoIterator<Item = &'a str>) -> Vec<usize> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    sources
        .into_iter()
        .map(|source| {
            let run = source.rsplit_once('/').map_or(source, |(run, _)| run);
            let next = seen.len();
            *seen.entry(run).or_insert(next)
        })
        .collect()
}

/// The index of the body whose leaves (and array lengths) recur in the most recording runs;
/// the first among equals. `runs[i]` names body `i`'s run.
///
/// A leaf is its path and value as text (`/a/0/b=1`, `/a#2` for an array's length); a body
/// scores the sum, over its leaves, of how many runs have that leaf. A leaf counts once per run,
/// not once per body: the answers of one run repeat one state of the server (a test that posts
/// thirty statuses shows its account's profile thirty times), so a state is typical when many
/// runs recorded it, not when one run recorded it often. Each distinct leaf text is interned
/// once (one key buffer reused for the lookups), so a body's leaves are numbers.
fn most_typical_index_by_run(bodies: &[Value], runs: &[usize]) -> Option<usize> {
    most_typical_index_among(bodies, runs, |_| true)
}

/// [`most_typical_index_by_run`] over the bodies `candidate` accepts, each scored by how
/// typical its leaves are of every body in `bodies`: the candidates are the answers of one
/// request shape (a keyed bucket), the population is everything the principal was answered.
/// `None` when no body is a candidate.
pub(super) fn most_typical_index_among<B: std::borrow::Borrow<Value>>(
    bodies: &[B],
    runs: &[usize],
    candidate: impl Fn(usize) -> bool,
) -> Option<usize> {
    use std::fmt::Write as _;
    /// Distinct leaf texts and how many bodies hold each.
    #[derive(Default)]
    struct Leaves {
        ids: std::collections::HashMap<String, usize>,
        counts: Vec<usize>,
        key: String,
        /// The run of the body being walked, and the (leaf, run) pairs already counted.
        run: usize,
        counted: std::collections::HashSet<(usize, usize)>,
    }
    impl Leaves {
        /// Count the leaf text in `self.key` for run `self.run` (once per run) and note its
        /// number in `out`.
        fn note(&mut self, out: &mut Vec<usize>) {
            let id = match self.ids.get(self.key.as_str()) {
                Some(&id) => id,
                None => {
                    let id = self.counts.len();
                    self.ids.insert(self.key.clone(), id);
                    self.counts.push(0);
                    id
                }
            };
            if self.counted.insert((id, self.run))
                && let Some(c) = self.counts.get_mut(id)
            {
                *c += 1;
            }
            out.push(id);
        }
        fn walk(&mut self, v: &Value, path: &mut String, out: &mut Vec<usize>) {
            match v {
                Value::Object(m) => {
                    for (k, child) in m {
                        let len = path.len();
                        path.push('/');
                        path.push_str(k);
                        self.walk(child, path, out);
                        path.truncate(len);
                    }
                }
                Value::Array(a) => {
                    self.key.clear();
                    let _ = write!(self.key, "{path}#{}", a.len());
                    self.note(out);
                    for (i, child) in a.iter().enumerate() {
                        let len = path.len();
                        let _ = write!(path, "/{i}");
                        self.walk(child, path, out);
                        path.truncate(len);
                    }
                }
                leaf => {
                    self.key.clear();
                    let _ = write!(self.key, "{path}={leaf}");
                    self.note(out);
                }
            }
        }
    }
    // One candidate is the most typical whatever its leaves.
    let mut only = (0..bodies.len()).filter(|&i| candidate(i));
    match (only.next(), only.next()) {
        (None, _) => return None,
        (Some(i), None) => return Some(i),
        _ => {}
    }
    let mut leaves = Leaves::default();
    let flat: Vec<Vec<usize>> = bodies
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let mut out = Vec::new();
            leaves.run = runs.get(i).copied().unwrap_or(usize::MAX - i);
            leaves.walk(b.borrow(), &mut String::new(), &mut out);
            out
        })
        .collect();
    let mut best: Option<(usize, usize)> = None;
    for (i, f) in flat.iter().enumerate().filter(|&(i, _)| candidate(i)) {
        let score: usize = f
            .iter()
            .map(|&l| leaves.counts.get(l).copied().unwrap_or(0))
            .sum();
        if best.is_none_or(|(_, s)| score > s) {
            best = Some((i, score));
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod snapshot_tests {
    use super::*;
    use proptest::prelude::*;

    /// A route whose one variant (status 200) renders `{"id": <observed hole>, "n": 1}`, with
    /// one exact entry per body in `bodies` (`(principal, status, body)`), all of one run.
    fn route_with(bodies: &[(Option<&str>, u16, Value)]) -> Route {
        let runs = vec!["s"; bodies.len()];
        route_with_runs(bodies, &runs)
    }

    /// [`route_with`], body `i` recorded by run `runs[i]`.
    fn route_with_runs(bodies: &[(Option<&str>, u16, Value)], runs: &[&str]) -> Route {
        let variant = serde_json::json!({
            "id": "v", "status": 200, "guard": {"guard": "always"}, "headers": [],
            "evidence": {"confidence_bp": 10000, "exchange_count": 1, "sources": []},
            "body": {"kind": "json", "root": {"node": "object", "fields": [
                {"key": "id", "present_ratio_bp": 10000, "value": {"node": "hole",
                    "confidence_bp": 3000, "examples": ["1"], "observed_type": "string",
                    "source": {"kind": "observed"}}},
                {"key": "n", "present_ratio_bp": 10000, "value": {"node": "const", "value": 1}}
            ]}}
        });
        let exact: Vec<Value> = bodies
            .iter()
            .enumerate()
            .map(|(i, (principal, status, body))| {
                let run = runs.get(i).copied().unwrap_or("s");
                let mut moment = serde_json::json!({
                    "source": format!("{run}/{i}"), "status": status, "headers": [],
                    "body": {"kind": "json", "value": body}
                });
                if let Some(p) = principal {
                    moment["principal"] = Value::String((*p).to_string());
                }
                serde_json::json!({
                    "key": {"path": format!("/v1/items/{i}"), "query": "", "body": null},
                    "moments": [moment]
                })
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "id": "get_items", "method": "GET", "path": "/v1/items/:id", "params": ["id"],
            "variants": [variant], "exact": exact, "known_param_tuples": [],
            "latency": serde_json::to_value(wraith_model::LatencyProfile::default()).unwrap(),
            "exchange_count": 1
        }))
        .unwrap()
    }

    #[test]
    fn stored_snapshot_positions_give_the_snapshots_the_engine_picks() {
        let route = route_with(&[
            (None, 200, serde_json::json!({"id": "a", "n": 1})),
            (Some("tok-1"), 200, serde_json::json!({"id": "b", "n": 1})),
            (None, 404, serde_json::json!({"id": "c", "n": 1})),
            (None, 200, serde_json::json!({"id": "a", "n": 1, "x": true})),
            (Some("tok-1"), 200, serde_json::json!({"other": 1})),
            (None, 200, serde_json::json!({"id": "a", "n": 1})),
        ]);
        let positions = snapshot_positions(&route, 0);
        // Per principal (none first), among bodies of the variant's status and shape: the one
        // whose leaves recur most in sum (the superset body scores its extra leaf too).
        assert_eq!(positions, vec![[3, 0], [1, 0]]);
        let want = snapshots_of(&route, 0);
        let mut model: Model = serde_json::from_value(serde_json::json!({
            "schema_version": MODEL_SCHEMA_VERSION, "tool_version": "t", "twin": "t",
            "base_url": "https://api.example.com", "recorded_at": null, "sessions": [],
            "routes": [], "entity_types": {}, "diagnostics": []
        }))
        .unwrap();
        model.routes.push(route);
        assert!(stored_snapshots(&model, 0, 0).is_none(), "none stored");
        let mut stored = wraith_model::Precomputed::default();
        stored
            .snapshots
            .insert("get_items".into(), vec![positions.clone()]);
        model.precomputed = Some(stored.clone());
        let got = stored_snapshots(&model, 0, 0).unwrap();
        assert_eq!(
            got.iter()
                .map(|s| (s.principal.clone(), s.body.clone()))
                .collect::<Vec<_>>(),
            want.iter()
                .map(|s| (s.principal.clone(), s.body.clone()))
                .collect::<Vec<_>>()
        );
        // A position that names no JSON moment of the route is not trusted.
        stored
            .snapshots
            .insert("get_items".into(), vec![vec![[0, 0], [9, 0]]]);
        model.precomputed = Some(stored);
        assert!(stored_snapshots(&model, 0, 0).is_none());
    }

    #[test]
    fn the_typical_snapshot_counts_a_state_once_per_recording_run() {
        // Run `a` recorded state x three times; runs `b` and `c` recorded state y once each.
        let x = serde_json::json!({"id": "x", "n": 1, "profile": {"fields": 0}});
        let y = serde_json::json!({"id": "y", "n": 1, "profile": {"fields": 2}});
        let bodies = [
            (Some("tok"), 200, x.clone()),
            (Some("tok"), 200, x.clone()),
            (Some("tok"), 200, x.clone()),
            (Some("tok"), 200, y.clone()),
            (Some("tok"), 200, y.clone()),
        ];
        let route = route_with_runs(&bodies, &["a", "a", "a", "b", "c"]);
        let picked = snapshots_of(&route, 0);
        assert_eq!(picked.len(), 1);
        assert_eq!(picked[0].body, y, "two runs outvote one run's repeats");
        // Counted per body (each its own run), the repeated state wins.
        let route = route_with_runs(&bodies, &["a", "b", "c", "d", "e"]);
        assert_eq!(snapshots_of(&route, 0)[0].body, x);
    }

    /// The leaf-text count as first written (one `String` per leaf, a `BTreeMap` of counts):
    /// the reference the interned [`most_typical`] must agree with.
    fn most_typical_by_strings(bodies: Vec<Value>) -> Option<Value> {
        fn leaves(v: &Value, path: &mut String, out: &mut Vec<String>) {
            match v {
                Value::Object(m) => {
                    for (k, child) in m {
                        let len = path.len();
                        path.push('/');
                        path.push_str(k);
                        leaves(child, path, out);
                        path.truncate(len);
                    }
                }
                Value::Array(a) => {
                    out.push(format!("{path}#{}", a.len()));
                    for (i, child) in a.iter().enumerate() {
                        let len = path.len();
                        path.push('/');
                        path.push_str(&i.to_string());
                        leaves(child, path, out);
                        path.truncate(len);
                    }
                }
                leaf => out.push(format!("{path}={leaf}")),
            }
        }
        let flat: Vec<Vec<String>> = bodies
            .iter()
            .map(|b| {
                let mut out = Vec::new();
                leaves(b, &mut String::new(), &mut out);
                out
            })
            .collect();
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for f in &flat {
            for l in f {
                *counts.entry(l.as_str()).or_default() += 1;
            }
        }
        let mut best: Option<(usize, usize)> = None;
        for (i, f) in flat.iter().enumerate() {
            let score: usize = f.iter().map(|l| counts[l.as_str()]).sum();
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((i, score));
            }
        }
        bodies.into_iter().nth(best?.0)
    }

    fn body() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (0i64..4).prop_map(Value::from),
            "[ab]{0,2}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::btree_map("[ab]{1,2}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_most_typical_body_is_the_one_whose_leaf_texts_recur_most(
            bodies in prop::collection::vec(body(), 0..6)
        ) {
            prop_assert_eq!(most_typical(bodies.clone()), most_typical_by_strings(bodies));
        }
    }

    #[test]
    fn only_observed_holes_and_lists_read_a_snapshot() {
        let node = |v: Value| -> Node { serde_json::from_value(v).unwrap() };
        let constant = json!({"node": "const", "value": 1});
        let observed = json!({"node": "hole", "confidence_bp": 8000, "observed_type": "string",
            "source": {"kind": "observed"}});
        let object = |v: &Value| {
            json!({"node": "object", "fields": [
                {"key": "a", "present_ratio_bp": 10000, "value": v}]})
        };
        assert!(!reads_snapshot(&node(constant.clone())));
        assert!(!reads_snapshot(&node(object(&constant))));
        assert!(reads_snapshot(&node(observed.clone())));
        assert!(reads_snapshot(&node(object(&observed))));
    }
}
