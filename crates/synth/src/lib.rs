//! `wraith-synth`: recorded sessions in, a deterministic twin model out.
//!
//! [`synthesize`] folds every recorded [`Exchange`](wraith_recording::Exchange) into a
//! [`Model`]: route templates (`/v1/customers/:param`), guarded variants whose bodies are
//! anti-unified templates with typed holes, entity types with their CRUD state operations and
//! known-id indexes, list shapes (items, pagination, filters), header programs, latency profiles
//! and the exact-replay index. It also names the ids that flow from one exchange into a later one
//! ([`SymbolTable`]).
//!
//! What it is not: it reads no files, no wall clock and no randomness, and it never fails on odd
//! traffic. Whatever it cannot model becomes a [`Diagnostic`](wraith_model::Diagnostic) that says
//! which route and why. The same recordings always give byte-identical output (after
//! `wraith_model::to_canonical_json`), whatever order the sessions and exchanges arrive in.
//!
//! Stages, one module each: [`observe`] (parse each exchange once), [`routes`] (path
//! templating), [`unify`] (anti-unification into body templates), [`variants`] (guards and
//! header programs), [`state`] (state ops and entity types), [`list`] (list shapes),
//! [`exact`] (exact replay), [`symbols`] (value flow), [`values`] (value shapes: ids, clocks),
//! [`action`] (what an action route does to the entity it names), [`action_values`] (record
//! fields an action takes from its request), [`member_effects`] (lists a
//! write adds its path's record or the acting principal's own record to, or takes one out of),
//! [`undo_members`] (the same lists an action undoing such a write takes the member out of),
//! [`undo_wrappers`] (the wrapper records an action undoing the one that made them deletes),
//! [`untouched_items`] (the item a key-filtered list answers for a key nothing acted on),
//! [`mentions`] (answer arrays of the records the sent text names as `@name`), [`text_tags`]
//! (answer arrays of the `#name` tokens of the sent text), [`text_rendering`] (answer strings
//! rendered from the sent text), [`union`]
//! (tagged unions),
//! [`request_keying`] (values a request field decides), [`keyed_snapshots`] (the request field
//! deciding which recorded state an answer shows), [`path_filter`] (a read's path parameter
//! selecting the records it lists), [`wrapped_creates`] (a `POST` answering another
//! collection's new record one key deeper), [`read_prefixes`] (fields a create answers whole
//! and later views show as a prefix), [`create_inputs`] (record defaults no recorded create
//! sent, which a create's request may send), [`update_keeps`] (timestamps an update leaves as
//! they were), [`update_resets`] (fields a replacing update resets when its request leaves them
//! out), [`parent_keys`] (types whose keys count within each parent), [`segment_members`]
//! (a record's array a write changes by a path segment), [`field_views`] (a route reading or
//! replacing one object field of a record), [`query_lookups`] (a read finding a record by a
//! query parameter), [`named_record_copies`] (a create answering fields of the record a request
//! field names), [`drift`] (where a route's newest
//! recordings answer in another shape than its earlier ones). The facts an engine decides on start
//! (`Model::precomputed`) are filled afterwards by `wraith_engine::precompute`, which the
//! `wraith synth` command calls: this crate does not depend on the engine.

pub mod action;
pub mod action_values;
pub mod actor_steps;
pub mod array_echo;
pub mod carried_fields;
pub mod cascades;
pub mod child_refs;
pub mod clock_after;
pub mod compose;
pub mod create_counters;
pub mod create_inputs;
pub mod drift;
pub mod duplicate_values;
pub mod embedded_lists;
pub mod embedded_records;
pub mod exact;
pub mod field_views;
pub mod foreign_records;
pub mod implicit_children;
pub mod instant_echo;
pub mod keyed_snapshots;
pub mod list;
pub mod member_effects;
pub mod member_of;
pub mod mentions;
pub mod mirrored_lists;
pub mod named_record_copies;
pub mod observe;
pub mod parent_keys;
mod parent_sequences;
pub mod path_filter;
pub mod query_lookups;
pub mod read_prefixes;
pub mod read_progressions;
pub mod record_classes;
pub mod record_clones;
pub mod record_versions;
mod records_by_value;
pub mod refusal_reads;
pub mod request_keying;
pub mod routes;
pub mod same_path_echo;
pub mod segment_members;
pub mod sent_expansions;
pub mod session_bound;
pub mod state;
pub mod state_refusals;
pub mod symbols;
pub mod text_rendering;
pub mod text_tags;
pub mod undo_members;
pub mod undo_wrappers;
pub mod unify;
pub mod union;
pub mod untouched_items;
pub mod update_keeps;
pub mod update_resets;
pub mod values;
mod variant_records;
pub mod variants;
pub mod viewer_fields;
pub mod wrapped_creates;

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use wraith_model::{Diagnostic, EntityType, LatencyProfile, Model, Route, StateOp, SymbolTable};
use wraith_recording::RecordedSession;

use crate::observe::Obs;

/// What a synth run is for: the twin it builds and who builds it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SynthOptions {
    /// Twin name (`[service] name`).
    pub twin: String,
    /// `[service] base_url`: the recorded upstream.
    pub base_url: String,
    /// Version of the `wraith` build, written into the model.
    pub tool_version: String,
    /// Only fold sessions carrying this tag (`--tag`).
    pub tag: Option<String>,
    /// `[generate.request_keying]`: which answer positions may be keyed by a request field
    /// (default `auto`, see [`request_keying`]).
    pub request_keying: request_keying::RequestKeying,
    /// `[generate] run_gap` in microseconds: a pause between two sessions' starts longer than
    /// this begins a new recording run, the unit drift compares ([`drift`]). `None`: one hour
    /// ([`drift::RUN_GAP_US`]).
    pub run_gap_us: Option<u64>,
}

/// The result of a synth run.
#[derive(Debug, Clone, PartialEq)]
pub struct Synthesis {
    /// `model/twin.wir.json`.
    pub model: Model,
    /// `model/symbols.json`.
    pub symbols: SymbolTable,
    pub summary: Summary,
}

/// Counts reported by `wraith synth` (its one summary line, or the `--json` document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Summary {
    pub twin: String,
    pub routes: usize,
    pub variants: usize,
    pub entity_types: usize,
    /// Routes that carry a state operation.
    pub state_ops: usize,
    pub diagnostics: usize,
    pub exchanges: usize,
    pub sessions: usize,
    pub symbols: usize,
}

/// Most segments a recorded path may have to be learned from. No API nests paths anywhere near
/// this deep; the route trie is built (and dropped) recursively, one level per segment, so a
/// path thousands of segments deep would overflow the stack. Such an exchange is left out of
/// the model with a `path-too-deep` warning.
pub const MAX_PATH_SEGMENTS: usize = 512;

/// The warning for an exchange left out because its path is deeper than [`MAX_PATH_SEGMENTS`].
fn too_deep(session: &str, ex: &wraith_recording::Exchange, depth: usize) -> Diagnostic {
    let path: String = ex.request.path.chars().take(80).collect();
    Diagnostic {
        severity: "warning".into(),
        code: "path-too-deep".into(),
        route: None,
        message: format!(
            "exchange {} of session {session} ({} {path}…) has a path of {depth} segments, more \
             than the {MAX_PATH_SEGMENTS} synth learns from: it stays in the recordings but is \
             left out of the model, so the twin answers it as a route miss",
            ex.correlation.exchange_index, ex.request.method
        ),
    }
}

/// Synthesize the model from recorded sessions. Pure and deterministic; never panics on odd
/// traffic (what it cannot model becomes a diagnostic).
pub fn synthesize(sessions: &[RecordedSession], opts: &SynthOptions) -> Synthesis {
    let mut selected: Vec<&RecordedSession> = sessions
        .iter()
        .filter(|s| match &opts.tag {
            Some(tag) => s.manifest.tags.iter().any(|t| t == tag),
            None => true,
        })
        .collect();
    // Sort by session id (then by content, so duplicate ids still give one order).
    selected.sort_by(|a, b| a.manifest.session_id.cmp(&b.manifest.session_id));

    // A recording made before the recorder decoded bodies may hold a body the upstream
    // compressed anyway, with its `content-encoding`: it is read decoded, as the recorder now
    // stores it (`observe::decoded_exchanges`).
    let decoded = observe::decoded_exchanges(&selected);
    let mut obs: Vec<Obs<'_>> = Vec::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    for (si, session) in selected.iter().enumerate() {
        for (pos, ex) in session.exchanges.iter().enumerate() {
            let ex = decoded.get(&(si, pos)).unwrap_or(ex);
            let depth = ex.request.path.split('/').count().saturating_sub(1);
            if depth > MAX_PATH_SEGMENTS {
                diagnostics.push(too_deep(&session.manifest.session_id, ex, depth));
                continue;
            }
            obs.push(Obs::new(&session.manifest.session_id, pos, ex));
        }
    }
    obs.sort_by(|a, b| (a.session, a.index, a.position).cmp(&(b.session, b.index, b.position)));

    let mut session_ids: Vec<String> = selected
        .iter()
        .map(|s| s.manifest.session_id.clone())
        .collect();
    session_ids.dedup();

    let recorded_at = obs
        .iter()
        .map(|o| o.ex.timing.request_start_us)
        .max()
        .filter(|us| *us > 0)
        .and_then(values::rfc3339_from_us);

    // Value flow and the symbol table both walk every response body: one parse serves both.
    let mut flow = routes::ValueFlow::default();
    let mut symbol_builder = symbols::SymbolBuilder::default();
    let every: Vec<usize> = (0..obs.len()).collect();
    observe::parsed_in_order(&obs, &every, Obs::resp_json, |idx, body| {
        flow.observe(&obs[idx], body.as_ref());
        symbol_builder.observe(idx, &obs[idx], body.as_ref());
    });
    let templated = routes::template_routes(&obs, &flow);
    let mut plans = state::plan_routes(&templated, &obs);
    wrapped_creates::learn(&templated, &mut plans, &obs);

    let mut entity_types = state::entity_types(&templated, &plans, &obs);
    refusal_reads::bind(&mut plans.routes, &mut entity_types);
    parent_keys::learn(&templated, &plans.routes, &obs, &mut entity_types);
    let symbols = symbol_builder.finish();
    // Drift compares recorded answers too (before exact replay takes them).
    let mut started: BTreeMap<&str, u64> = BTreeMap::new();
    for s in &selected {
        let t = started.entry(&s.manifest.session_id).or_insert(u64::MAX);
        *t = (*t).min(s.manifest.start_time_us);
    }
    // The routes are built independently of each other, and the stages below that read only
    // the recordings, the plans and the entity types (not the built routes) run beside them:
    // all on the cores, each result kept for its place below, so the order of work does not
    // show in the model. They compare recorded answers, so they come before exact replay
    // takes them.
    let (plan_routes, obs_ref) = (&plans.routes, &obs);
    let mut routes: Vec<(Route, Vec<Diagnostic>)> = Vec::new();
    let mut drifts = Vec::new();
    let mut effects = action::ActionsLearned {
        effects: Vec::new(),
        refusals: Vec::new(),
    };
    let mut members = Vec::new();
    let mut member_effects = member_effects::Learned::default();
    let mut mentions = Vec::new();
    let mut taken = Vec::new();
    let mut singletons = Vec::new();
    let mut stepped = Vec::new();
    let mut filters = Vec::new();
    let mut prefixes = BTreeMap::new();
    // Each route's literal upload names key its exact entries and group its drift.
    let upload_names: Vec<BTreeSet<String>> = templated
        .iter()
        .map(|g| exact::upload_names(g, obs_ref))
        .collect();
    rayon::scope(|s| {
        s.spawn(|_| {
            routes = (0..templated.len())
                .into_par_iter()
                .map(|i| {
                    let (group, plan) = (&templated[i], &plan_routes[i]);
                    let entity = plan.entity_type.as_ref().and_then(|e| entity_types.get(e));
                    let keying = opts.request_keying.for_route(&group.method, &group.path);
                    let mut notes = Vec::new();
                    let mut route = build_route(group, plan, entity, obs_ref, &keying, &mut notes);
                    keyed_snapshots::learn(group, &mut route.variants, obs_ref, &keying);
                    (route, notes)
                })
                .collect();
        });
        s.spawn(|_| {
            let gap = opts.run_gap_us.unwrap_or(drift::RUN_GAP_US);
            drifts = drift::route_drift(&templated, obs_ref, &started, gap, &upload_names);
        });
        s.spawn(|_| {
            effects = action::action_effects(&templated, plan_routes, &entity_types, obs_ref)
        });
        s.spawn(|_| members = action::memberships(&templated, plan_routes, &entity_types, obs_ref));
        s.spawn(|_| {
            member_effects =
                member_effects::member_effects(&templated, plan_routes, &entity_types, obs_ref);
        });
        s.spawn(|_| mentions = mentions::text_mentions(&templated, &entity_types, obs_ref));
        s.spawn(|_| {
            taken = action_values::action_values(&templated, plan_routes, &entity_types, obs_ref);
        });
        s.spawn(|_| singletons = action::last_write_wins(&templated, plan_routes, obs_ref));
        s.spawn(|_| {
            stepped = create_counters::learn(&templated, plan_routes, &entity_types, obs_ref);
        });
        s.spawn(|_| filters = path_filter::learn(&templated, plan_routes, &entity_types, obs_ref));
        s.spawn(|_| prefixes = read_prefixes::learn(&templated, plan_routes, obs_ref));
    });
    for (ty, fields) in prefixes {
        if let Some(t) = entity_types.get_mut(&ty) {
            t.read_prefixes = fields;
        }
    }
    let mut built: Vec<Route> = Vec::with_capacity(templated.len());
    for (route, notes) in routes {
        built.push(route);
        diagnostics.extend(notes);
    }
    share_param_tuples(&templated, &mut built);
    embedded_records::resolve(&mut built, &entity_types);
    diagnostics.extend(request_keying::diagnose(
        &opts.request_keying,
        &templated,
        &built,
        &obs,
    ));
    for (route, drift) in built.iter_mut().zip(drifts) {
        route.drift = drift;
    }
    for ((route, effect), refusals) in built.iter_mut().zip(effects.effects).zip(effects.refusals) {
        if let Some(effect) = &effect
            && let Some(et) = entity_types.get(&effect.entity_type)
            && let Some(shape) = &et.id_shape
        {
            variants::mint_wrapper_key(&mut route.variants, &effect.at, &et.primary_key, shape);
        }
        route.action = effect;
        variants::guard_refusals(route, refusals);
    }
    for (route, effect) in built.iter_mut().zip(members) {
        route.membership = effect;
    }
    member_of::learn(&templated, &mut built, &entity_types, &obs);
    untouched_items::learn(&templated, &mut built, &entity_types, &obs);
    for ((route, effects), actor) in built
        .iter_mut()
        .zip(member_effects.effects)
        .zip(member_effects.actor_records)
    {
        route.member_effects = effects;
        route.actor_record = actor;
    }
    actor_steps::learn(&templated, &mut built, &entity_types, &obs);
    undo_members::learn(&mut built);
    undo_wrappers::learn(&mut built);
    let tags = text_tags::text_tags(&templated, &obs, &mentions);
    let tags = text_tags::for_updates(&templated, &built, &obs, tags);
    for ((route, rule), tags) in built.iter_mut().zip(mentions).zip(tags) {
        route.text_mentions = rule;
        route.text_tags = tags;
    }
    let rendered = text_rendering::text_rendering(&templated, &obs);
    let rendered = text_rendering::for_updates(&templated, &built, &obs, rendered);
    for (route, rendering) in built.iter_mut().zip(rendered) {
        route.text_rendering = rendering;
    }
    for (route, taken) in built.iter_mut().zip(taken) {
        route.action_values = taken;
    }
    for (route, wins) in built.iter_mut().zip(singletons) {
        route.last_write_wins = wins;
    }
    // A list item learned from one record takes the timestamps its type's templates record.
    record_classes::learn(&mut built, &entity_types);
    let keeps = update_keeps::learn(&templated, plan_routes, &built, &obs);
    for (route, keeps) in built.iter_mut().zip(keeps) {
        route.update_keeps = keeps;
    }
    let inputs = create_inputs::learn(&templated, plan_routes, &built, &obs);
    for (route, inputs) in built.iter_mut().zip(inputs) {
        route.create_inputs = inputs;
    }
    let resets = update_resets::learn(&templated, plan_routes, &built, &obs);
    for (route, resets) in built.iter_mut().zip(resets) {
        route.update_resets = resets;
    }
    implicit_children::learn(&templated, &mut built, &entity_types, &obs);
    cascades::learn(&templated, &mut built, &entity_types, &obs);
    child_refs::learn(&templated, &mut built, &entity_types, &obs);
    embedded_lists::learn(&templated, &mut built, &entity_types, &obs);
    records_by_value::learn(&templated, &mut built, &entity_types, &obs);
    let expansions = sent_expansions::learn(&templated, &built, &entity_types, &obs);
    for (route, expansions) in built.iter_mut().zip(expansions) {
        route.sent_expansions = expansions;
    }
    mirrored_lists::learn(&templated, &mut built, &entity_types, &obs);
    list::shared_paging(&mut built);
    segment_members::learn(&templated, plan_routes, &mut built, &entity_types, &obs);
    field_views::learn(&templated, plan_routes, &mut built, &entity_types, &obs);
    record_versions::learn(&templated, plan_routes, &mut built, &obs);
    record_clones::learn(&templated, plan_routes, &mut built, &obs);
    variant_records::learn(&templated, &mut built, &entity_types, &obs);
    text_rendering::for_clones(&templated, &mut built, &obs);
    query_lookups::learn(&templated, plan_routes, &mut built, &entity_types, &obs);
    named_record_copies::learn(&templated, plan_routes, &mut built, &entity_types, &obs);
    carried_fields::learn(&templated, plan_routes, &mut built, &entity_types, &obs);
    read_progressions::learn(&templated, &mut built, &entity_types, &obs);
    parent_sequences::learn(&templated, &plans, &obs, &mut built, &mut entity_types);
    for (route, mut stepped) in built.iter_mut().zip(stepped) {
        // A counter the route's action steps on the record its path names is the action's:
        // stepped once, not again as a write naming that record.
        if let Some(action) = &route.action {
            for rule in &mut stepped {
                if rule.entity_type == action.entity_type
                    && rule.param.as_deref() == Some(action.id_param.as_str())
                {
                    rule.counters
                        .retain(|f, _| !action.counters.contains_key(f));
                }
            }
            stepped.retain(|rule| !rule.counters.is_empty());
        }
        route.create_counters = stepped;
    }
    for (route, filter) in built.iter_mut().zip(filters) {
        route.path_filter = filter;
    }
    let viewers = viewer_fields::learn(&templated, &built, &entity_types, &obs);
    for (route, viewer) in built.iter_mut().zip(viewers) {
        route.viewer_fields = viewer;
    }
    // Exact replay last: it moves each parsed response body out of its observation instead of
    // copying it, so the recordings' bodies are held once (the largest part of the model).
    let exchanges = obs.len();
    let bound = session_bound::evidence(&templated, &obs);
    let exact = exact::exact_indexes(&templated, &mut obs, &upload_names);
    for (((route, exact), bound), names) in built.iter_mut().zip(exact).zip(bound).zip(upload_names)
    {
        let respelled = exact
            .iter()
            .flat_map(|e| &e.moments)
            .filter(|m| m.respelled)
            .count();
        if respelled > 0 {
            diagnostics.push(Diagnostic {
                severity: "warning".into(),
                code: "respelled-body".into(),
                route: Some(route.label()),
                message: format!(
                    "{respelled} recorded answer(s) hold a number a 64-bit float cannot hold \
                     exactly or a key written twice: the twin serves the parsed values (the \
                     nearest double, the last value of the key) and never claims them exact"
                ),
            });
        }
        route.exact = exact;
        route.upload_names = names;
        for entry in &mut route.exact {
            if entry.key.query.is_empty()
                && entry.key.body.is_none()
                && let Some(b) = bound.get(&entry.key.path)
            {
                entry.session_bound = b.clone();
            }
        }
    }
    drop(obs);

    built.sort_by(|a, b| (&a.path, &a.method, &a.origin).cmp(&(&b.path, &b.method, &b.origin)));
    diagnostics
        .sort_by(|a, b| (&a.route, &a.code, &a.message).cmp(&(&b.route, &b.code, &b.message)));
    diagnostics.dedup();

    let model = Model {
        schema_version: wraith_model::MODEL_SCHEMA_VERSION,
        tool_version: opts.tool_version.clone(),
        twin: opts.twin.clone(),
        base_url: opts.base_url.clone(),
        recorded_at,
        sessions: session_ids,
        routes: built,
        entity_types,
        diagnostics,
        precomputed: None,
    };
    let summary = summarize(&model, &symbols, exchanges, opts);
    Synthesis {
        model,
        symbols,
        summary,
    }
}

fn summarize(
    model: &Model,
    symbols: &SymbolTable,
    exchanges: usize,
    opts: &SynthOptions,
) -> Summary {
    Summary {
        twin: opts.twin.clone(),
        routes: model.routes.len(),
        variants: model.routes.iter().map(|r| r.variants.len()).sum(),
        entity_types: model.entity_types.len(),
        state_ops: model.routes.iter().filter(|r| r.state_op.is_some()).count(),
        diagnostics: model.diagnostics.len(),
        exchanges,
        sessions: model.sessions.len(),
        symbols: symbols.symbols.len(),
    }
}

fn build_route(
    group: &routes::RouteGroup,
    plan: &state::RoutePlan,
    entity: Option<&EntityType>,
    obs: &[Obs<'_>],
    keying: &request_keying::RouteKeying,
    diagnostics: &mut Vec<Diagnostic>,
) -> Route {
    // Counted per route (method, path and origin) and named as the check report names it.
    let name = group.label();
    if group.obs.len() == 1 {
        diagnostics.push(Diagnostic {
            severity: "info".into(),
            code: "single-observation".into(),
            route: Some(name.clone()),
            message: "route seen once: its template is that one exchange, every value a constant \
                      or echo; record it again to learn what varies"
                .into(),
        });
    }
    let mut variants = variants::build_variants(group, plan, obs, keying, diagnostics);
    if plan.state_op == Some(StateOp::Create)
        && let Some(pk) = plan.primary_key.as_deref()
        // Keys of a shape no id family has (too short, words) are minted in one of their own.
        && let Some(shape) = entity.and_then(|e| {
            e.id_shape.clone().or_else(|| {
                let keys: Vec<&str> = e.records.keys().map(String::as_str).collect();
                values::create_key_fallback(&keys)
            })
        })
    {
        variants::mint_primary_key(&mut variants, pk, &shape, &plan.record_at);
    }
    let list = if plan.state_op == Some(StateOp::List) {
        // A top-level collection lists every record of its type (the engine's list base):
        // what a filter of it can leave out.
        let records = entity
            .filter(|_| !group.path.contains("/:"))
            .map(|e| &e.records);
        list::list_shape(group, plan, obs, records)
    } else {
        None
    };
    Route {
        id: group.id.clone(),
        method: group.method.clone(),
        path: group.path.clone(),
        origin: group.origin.clone(),
        drift: Vec::new(),
        params: group.params.clone(),
        state_op: plan.state_op,
        entity_type: plan.entity_type.clone(),
        id_param: plan.id_param.clone(),
        key_qualifier: plan.key_qualifier.clone(),
        // Filled by `synthesize` (see `parent_sequences`).
        parent_sequences: Vec::new(),
        // Filled by `synthesize` (see `records_by_value`).
        records_by_value: Vec::new(),
        parent_params: plan.parent_params.clone(),
        record_at: plan.record_at.clone(),
        list,
        variants,
        // Filled by `synthesize` once every other stage is done (see there).
        exact: Vec::new(),
        known_param_tuples: known_param_tuples(group, obs),
        upload_names: Default::default(),
        // Filled by `synthesize` once entity types are known (see there).
        action: None,
        membership: None,
        member_of: None,
        last_write_wins: false,
        member_effects: Vec::new(),
        actor_record: None,
        actor_steps: Vec::new(),
        text_mentions: None,
        text_tags: None,
        text_rendering: None,
        child_refs: Vec::new(),
        action_values: Vec::new(),
        implicit_children: Vec::new(),
        create_counters: Vec::new(),
        update_keeps: Vec::new(),
        create_inputs: Vec::new(),
        update_resets: Vec::new(),
        sent_expansions: None,
        path_filter: None,
        cascades: Vec::new(),
        viewer_fields: None,
        // Filled by `synthesize` once entity types are known (see there).
        embedded_lists: Vec::new(),
        mirrored_lists: Vec::new(),
        segment_member: None,
        field_view: None,
        record_versions: None,
        record_clone: None,
        carried_record: None,
        query_lookup: None,
        named_record_copies: None,
        carried_fields: Vec::new(),
        read_progressions: Vec::new(),
        latency: latency_profile(group, obs),
        exchange_count: group.obs.len() as u64,
    }
}

/// Ordered path-parameter tuples of a multi-parameter route seen with a non-4xx outcome.
fn known_param_tuples(group: &routes::RouteGroup, obs: &[Obs<'_>]) -> Vec<Vec<String>> {
    if group.params.len() < 2 {
        return Vec::new();
    }
    let mut tuples: BTreeMap<Vec<String>, ()> = BTreeMap::new();
    for (i, values) in group.obs.iter().zip(group.param_values.iter()) {
        if !values::is_4xx(obs[*i].status) {
            tuples.insert(values.clone(), ());
        }
    }
    tuples.into_keys().collect()
}

/// A path template with its parameter names left out, under its origin: the routes of one
/// template (any method) name the same records with the same parameter values.
fn template_shape(g: &routes::RouteGroup) -> (Option<&str>, Vec<Option<&str>>) {
    let segs = g
        .segs
        .iter()
        .map(|s| match s {
            routes::Seg::Lit(l) => Some(l.as_str()),
            routes::Seg::Param(_) => None,
        })
        .collect();
    (g.origin.as_deref(), segs)
}

/// Every multi-parameter route knows the tuples each route of its template (any method) saw
/// with a non-4xx outcome: the values name one record whichever method was answered for it,
/// so a pair recorded only by an update and a delete is known to the read of that path. The
/// leading values of a longer template that starts with the route's (a child's path, which
/// names its parents) are known too: an answer under a record says the record is there.
/// `built` is in `groups`' order.
fn share_param_tuples(groups: &[routes::RouteGroup], built: &mut [Route]) {
    let own: Vec<_> = groups
        .iter()
        .zip(built.iter())
        .filter(|(_, r)| !r.known_param_tuples.is_empty())
        .map(|(g, r)| (template_shape(g), r.known_param_tuples.clone()))
        .collect();
    for (g, r) in groups.iter().zip(built.iter_mut()) {
        let n = g.params.len();
        if n < 2 {
            continue;
        }
        let (origin, segs) = template_shape(g);
        let mut tuples: BTreeSet<Vec<String>> = BTreeSet::new();
        for ((o, s), known) in &own {
            if *o == origin && s.starts_with(&segs) {
                tuples.extend(
                    known
                        .iter()
                        .filter_map(|t| t.get(..n))
                        .map(<[String]>::to_vec),
                );
            }
        }
        if !tuples.is_empty() {
            r.known_param_tuples = tuples.into_iter().collect();
        }
    }
}

/// p50/p90/p99 of time to first byte, in whole milliseconds (nearest rank).
fn latency_profile(group: &routes::RouteGroup, obs: &[Obs<'_>]) -> LatencyProfile {
    let mut samples: Vec<u64> = group
        .obs
        .iter()
        .map(|i| {
            let t = obs[*i].ex.timing;
            t.first_byte_us.saturating_sub(t.request_start_us)
        })
        .collect();
    samples.sort_unstable();
    let pick = |p: u64| -> u64 {
        if samples.is_empty() {
            return 0;
        }
        let n = samples.len() as u64;
        let rank = (p * n).div_ceil(100).clamp(1, n);
        samples[(rank - 1) as usize] / 1000
    };
    LatencyProfile {
        p50_ms: pick(50),
        p90_ms: pick(90),
        p99_ms: pick(99),
        sample_count: samples.len() as u64,
    }
}
