//! Composing models: a base twin's [`Model`] and overlay models, merged route by route into one
//! composite model (`wraith compose`).
//!
//! Overlays are additive only. A route, variant, exact-replay entry, entity type, known id or
//! entity record that only one input has is taken; where two inputs hold the same thing it must
//! be the same, and an overlay that would CHANGE what an earlier input already has (a variant with
//! the same status and guard but another template, another state op or entity type for the same
//! route, another recorded answer to the same concrete request, …) is a [`ModelConflict`]. The
//! merge rule of every field is written down in `docs/compose.md`.
//!
//! Pure and deterministic like the rest of synth: no IO, no wall clock; inputs are folded in
//! argument order and the result is sorted as synth sorts it, so the same inputs always give the
//! same bytes after `wraith_model::to_canonical_json`.
//!
//! Not here: recordings, fixtures, `state/schema.json`, Lua files and the on-disk layout of the
//! composite (the `wraith` binary's `compose` command materializes those).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use wraith_model::validate::IdProblem;
use wraith_model::{
    EntityType, ExactEntry, IdCharset, IdShape, ListShape, Model, Moment, Pagination, Route,
    SymbolTable, Variant,
};

/// One input of a composition: its display name (the twin folder's name) and its model.
#[derive(Debug, Clone, Copy)]
pub struct ComposeInput<'a> {
    pub name: &'a str,
    pub model: &'a Model,
    pub symbols: &'a SymbolTable,
}

/// What one input brought into the composite model. For the base this is everything it has;
/// for an overlay, only what no earlier input already had.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Contribution {
    /// `METHOD /path` (with ` @origin` for routes on another origin) of routes no earlier input
    /// had.
    pub routes_added: Vec<String>,
    /// Routes an earlier input had that this input added variants, exact entries, a state
    /// binding, a list shape or parent parameters to.
    pub routes_extended: Vec<String>,
    /// Variants added (in added routes and in extended ones).
    pub variants_added: usize,
    /// Exact-replay entries (concrete recorded requests) added.
    pub exact_entries_added: usize,
    /// Entity types no earlier input had.
    pub entity_types_added: Vec<String>,
    /// Known ids added to entity types (new types included).
    pub known_ids_added: usize,
    /// Entity records (latest representations) added.
    pub records_added: usize,
}

/// An overlay that would change what an earlier input already has.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ModelConflict {
    /// Index of the input (0 = base) whose change was refused.
    pub input: usize,
    /// What it concerns: `METHOD /path` of a route, or `entity_types/<name>`.
    pub path: String,
    /// Why, naming both sides.
    pub reason: String,
}

/// Something worth telling the user that is not a conflict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelNote {
    pub input: usize,
    /// Stable machine code, e.g. `base-url-differs`.
    pub code: String,
    pub message: String,
}

/// The result of [`compose_models`].
#[derive(Debug, Clone)]
pub struct ComposedModel {
    /// The composite model. Only meaningful when `conflicts` is empty.
    pub model: Model,
    /// The composite symbol table (informational, like every symbol table).
    pub symbols: SymbolTable,
    /// Per input, in input order.
    pub contributions: Vec<Contribution>,
    pub conflicts: Vec<ModelConflict>,
    pub notes: Vec<ModelNote>,
}

/// Identity of a route across inputs: method, path with parameter names erased (the engine's
/// router matches parameters by position, so `/a/:id` and `/a/:a_id` are one route), origin.
type RouteKey = (String, String, Option<String>);

fn route_key(r: &Route) -> RouteKey {
    let path = r
        .path
        .split('/')
        .map(|seg| if seg.starts_with(':') { ":" } else { seg })
        .collect::<Vec<_>>()
        .join("/");
    (r.method.to_ascii_uppercase(), path, r.origin.clone())
}

/// `METHOD /path` of a route, with the origin when it has one.
pub fn route_name(r: &Route) -> String {
    match &r.origin {
        Some(o) => format!("{} {} @{o}", r.method, r.path),
        None => format!("{} {}", r.method, r.path),
    }
}

/// Merge `inputs` (the base first, then the overlays in argument order) into one model.
/// `tool_version` is written into the composite as synth writes its own version.
pub fn compose_models(inputs: &[ComposeInput<'_>], tool_version: &str) -> ComposedModel {
    let mut contributions = vec![Contribution::default(); inputs.len()];
    let mut conflicts = Vec::new();
    let mut notes = Vec::new();
    let Some(base) = inputs.first() else {
        return ComposedModel {
            model: Model {
                schema_version: wraith_model::MODEL_SCHEMA_VERSION,
                tool_version: tool_version.to_string(),
                twin: String::new(),
                base_url: String::new(),
                recorded_at: None,
                sessions: Vec::new(),
                routes: Vec::new(),
                entity_types: BTreeMap::new(),
                diagnostics: Vec::new(),
                precomputed: None,
            },
            symbols: SymbolTable::default(),
            contributions,
            conflicts,
            notes,
        };
    };

    let mut model = base.model.clone();
    // Verdicts stored for the base alone may not hold for the merged routes; an engine decides
    // them itself when the model has none.
    model.precomputed = None;
    let mut symbols = base.symbols.clone();
    // The base's digest names the base's model, not the composite's.
    symbols.model_digest = None;
    // The identity problems already reported, so each is blamed on the input that brought it.
    let mut known_problems = BTreeSet::new();
    id_conflicts(&model, 0, base, &mut known_problems, &mut conflicts);
    // The input each route spelling of the composite came from, for routes the router would
    // file as one (`/promos` and `/promos/`).
    let mut brought_by: BTreeMap<RouteSpelling, usize> = BTreeMap::new();
    for r in &model.routes {
        brought_by.entry(spelling(r)).or_insert(0);
    }
    filed_as_one(&model, 0, inputs, &brought_by, &mut conflicts, &mut notes);
    {
        let c = &mut contributions[0];
        for r in &model.routes {
            c.routes_added.push(route_name(r));
            c.variants_added += r.variants.len();
            c.exact_entries_added += r.exact.len();
        }
        for (name, et) in &model.entity_types {
            c.entity_types_added.push(name.clone());
            c.known_ids_added += et.known_ids.len();
            c.records_added += et.records.len();
        }
    }

    for (i, input) in inputs.iter().enumerate().skip(1) {
        let ov = input.model;
        if ov.base_url != model.base_url {
            notes.push(ModelNote {
                input: i,
                code: "base-url-differs".into(),
                message: format!(
                    "{} was recorded against {} but the composite serves the base's {}: its \
                     routes are served as if they belonged to the base's upstream",
                    input.name, ov.base_url, model.base_url
                ),
            });
        }
        let index: BTreeMap<RouteKey, usize> = model
            .routes
            .iter()
            .enumerate()
            .map(|(n, r)| (route_key(r), n))
            .collect();
        let c = &mut contributions[i];
        for r in &ov.routes {
            match index.get(&route_key(r)) {
                None => {
                    c.routes_added.push(route_name(r));
                    c.variants_added += r.variants.len();
                    c.exact_entries_added += r.exact.len();
                    brought_by.entry(spelling(r)).or_insert(i);
                    model.routes.push(r.clone());
                }
                Some(&n) => {
                    let target = &mut model.routes[n];
                    let mut problems = Vec::new();
                    let added = merge_route(target, r, &mut problems);
                    for reason in problems {
                        conflicts.push(ModelConflict {
                            input: i,
                            path: route_name(target),
                            reason,
                        });
                    }
                    if added.any() {
                        c.routes_extended.push(route_name(target));
                    }
                    c.variants_added += added.variants;
                    c.exact_entries_added += added.exact;
                }
            }
        }
        for (name, et) in &ov.entity_types {
            match model.entity_types.get_mut(name) {
                None => {
                    c.entity_types_added.push(name.clone());
                    c.known_ids_added += et.known_ids.len();
                    c.records_added += et.records.len();
                    model.entity_types.insert(name.clone(), et.clone());
                }
                Some(target) => {
                    let mut problems = Vec::new();
                    let (ids, records) = merge_entity(target, et, &mut problems);
                    c.known_ids_added += ids;
                    c.records_added += records;
                    for reason in problems {
                        conflicts.push(ModelConflict {
                            input: i,
                            path: format!("entity_types/{name}"),
                            reason,
                        });
                    }
                }
            }
        }
        for s in &ov.sessions {
            if !model.sessions.contains(s) {
                model.sessions.push(s.clone());
            }
        }
        model.recorded_at = match (model.recorded_at.take(), &ov.recorded_at) {
            (Some(a), Some(b)) => Some(if *b > a { b.clone() } else { a }),
            (a, b) => a.or_else(|| b.clone()),
        };
        for d in &ov.diagnostics {
            if !model.diagnostics.contains(d) {
                model.diagnostics.push(d.clone());
            }
        }
        merge_symbols(&mut symbols, input.symbols, input.name);
        id_conflicts(&model, i, input, &mut known_problems, &mut conflicts);
        filed_as_one(&model, i, inputs, &brought_by, &mut conflicts, &mut notes);
    }

    model.schema_version = wraith_model::MODEL_SCHEMA_VERSION;
    model.tool_version = tool_version.to_string();
    model.sessions.sort();
    model.sessions.dedup();
    model
        .routes
        .sort_by(|a, b| (&a.path, &a.method, &a.origin).cmp(&(&b.path, &b.method, &b.origin)));
    model
        .diagnostics
        .sort_by(|a, b| (&a.route, &a.code, &a.message).cmp(&(&b.route, &b.code, &b.message)));
    model.diagnostics.dedup();
    conflicts.sort();
    conflicts.dedup();
    ComposedModel {
        model,
        symbols,
        contributions,
        conflicts,
        notes,
    }
}

/// The identity checks `wraith lint` applies to a model (`wraith_model::validate`), run on
/// the composite as it stands after input `i` was folded in: a problem not seen before is
/// input `i`'s conflict. The merge matches variants by status and guard and routes by
/// template, so ids an input carries for other things (a hand-edited model, a variant whose
/// status was changed without its id) would otherwise reach the composite twice.
fn id_conflicts(
    model: &Model,
    i: usize,
    input: &ComposeInput<'_>,
    known: &mut BTreeSet<(&'static str, String)>,
    conflicts: &mut Vec<ModelConflict>,
) {
    for p in wraith_model::validate::id_problems(model) {
        if !known.insert(p.key()) {
            continue;
        }
        // Name this input's route that carries the id, where it has one.
        let own = |found: &dyn Fn(&Route) -> bool| {
            input.model.routes.iter().find(|r| found(r)).map(route_name)
        };
        let path = match &p {
            IdProblem::DuplicateRouteId { id, .. } => own(&|r: &Route| &r.id == id),
            IdProblem::DuplicateVariantId { id, .. } => {
                own(&|r: &Route| r.variants.iter().any(|v| &v.id == id))
            }
            IdProblem::DuplicateRoute {
                method,
                path,
                origin,
                ..
            } => Some(match origin {
                Some(o) => format!("{method} {path} @{o}"),
                None => format!("{method} {path}"),
            }),
        }
        .unwrap_or_else(|| format!("model/twin.wir.json: {}", p.key().1));
        conflicts.push(ModelConflict {
            input: i,
            path,
            reason: format!(
                "{}: the composite would fail `wraith lint` ({}); route and variant ids must \
                 be unique across the inputs (re-run `wraith synth` on this input to give its \
                 routes and variants the ids synth derives from them)",
                p.message(),
                p.rule()
            ),
        });
    }
}

/// A route's spelling as the model writes it: method (upper case), path, origin.
type RouteSpelling = (String, String, Option<String>);

fn spelling(r: &Route) -> RouteSpelling {
    (
        r.method.to_ascii_uppercase(),
        r.path.clone(),
        r.origin.clone(),
    )
}

/// Routes of the composite after input `i` was folded in that the engine's router would file
/// as one ([`wraith_model::validate::routes_filed_as_one`]: `/promos` and `/promos/`). The
/// merge tells routes apart by their path as written, so it keeps such routes apart, and the
/// router would then answer only the first of them: a group holding a route input `i` brought
/// and one an earlier input brought is input `i`'s conflict. A group within one input's own
/// routes is how that input already is (synth writes such a pair from recordings holding both
/// spellings): a `routes-filed-as-one` note, once, as `wraith lint` warns of it.
fn filed_as_one(
    model: &Model,
    i: usize,
    inputs: &[ComposeInput<'_>],
    brought_by: &BTreeMap<RouteSpelling, usize>,
    conflicts: &mut Vec<ModelConflict>,
    notes: &mut Vec<ModelNote>,
) {
    for group in wraith_model::validate::routes_filed_as_one(model) {
        let from: Vec<usize> = group
            .paths
            .iter()
            .map(|p| {
                let key = (group.method.clone(), p.clone(), group.origin.clone());
                brought_by.get(&key).copied().unwrap_or(0)
            })
            .collect();
        let Some(&newest) = from.iter().max() else {
            continue;
        };
        if newest != i {
            continue;
        }
        let named = |n: usize| {
            let input = inputs.get(from[n]).map_or("?", |input| input.name);
            format!("{} (from {input})", group.route(n))
        };
        if from.iter().all(|&f| f == i) {
            notes.push(ModelNote {
                input: i,
                code: wraith_model::validate::FiledAsOne::RULE.into(),
                message: format!(
                    "{}; the composite keeps them as they are (`wraith lint` warns of it)",
                    group.message()
                ),
            });
            continue;
        }
        let Some(own) = from.iter().position(|&f| f == i) else {
            continue;
        };
        // The composite's routes are sorted by path, so the first spelling is the one answered.
        let answered = (0..group.paths.len())
            .min_by_key(|&n| &group.paths[n])
            .unwrap_or(0);
        let earlier: Vec<String> = (0..from.len())
            .filter(|&n| from[n] < i)
            .map(named)
            .collect();
        conflicts.push(ModelConflict {
            input: i,
            path: match &group.origin {
                Some(o) => format!("{} {} @{o}", group.method, group.paths[own]),
                None => format!("{} {}", group.method, group.paths[own]),
            },
            reason: format!(
                "{} and {} are one route to the engine's router (it leaves out a trailing or \
                 doubled slash and matches parameters by position), but the merge keeps routes \
                 spelled differently apart: the composite would answer only {}. Re-record or \
                 edit the overlay's route to the earlier spelling so it merges, or compose \
                 without it",
                named(own),
                earlier.join(" and "),
                group.route(answered)
            ),
        });
    }
}

/// What an overlay added to a route an earlier input already had.
#[derive(Debug, Default)]
struct RouteAdded {
    variants: usize,
    exact: usize,
    other: bool,
}

impl RouteAdded {
    fn any(&self) -> bool {
        self.variants > 0 || self.exact > 0 || self.other
    }
}

/// Fold overlay route `ov` into `base` (same [`RouteKey`]); refusals go to `problems`.
fn merge_route(base: &mut Route, ov: &Route, problems: &mut Vec<String>) -> RouteAdded {
    let mut added = RouteAdded::default();
    let ov = rename_params(ov, &base.params);

    // State binding: state op, entity type, id parameter and its qualifier travel together.
    let base_bound = base.state_op.is_some() || base.entity_type.is_some();
    let ov_bound = ov.state_op.is_some() || ov.entity_type.is_some();
    let binding = |r: &Route| {
        (
            r.state_op,
            r.entity_type.clone(),
            r.id_param.clone(),
            r.key_qualifier.clone(),
        )
    };
    if base_bound && ov_bound && binding(base) != binding(&ov) {
        problems.push(format!(
            "state binding differs: {} here, {} in this input",
            describe_binding(base),
            describe_binding(&ov)
        ));
    } else if !base_bound && ov_bound {
        base.state_op = ov.state_op;
        base.entity_type = ov.entity_type.clone();
        base.id_param = ov.id_param.clone();
        base.key_qualifier = ov.key_qualifier.clone();
        added.other = true;
    }

    for pp in &ov.parent_params {
        match base.parent_params.iter().find(|b| b.param == pp.param) {
            Some(b) if b.entity_type != pp.entity_type => problems.push(format!(
                "parameter :{} names parent entity type `{}` here, `{}` in this input",
                pp.param, b.entity_type, pp.entity_type
            )),
            Some(_) => {}
            None => {
                base.parent_params.push(pp.clone());
                added.other = true;
            }
        }
    }
    // Records named by value: an overlay's array the base does not list by value joins it.
    for rule in &ov.records_by_value {
        match base.records_by_value.iter().find(|b| b.at == rule.at) {
            None => {
                base.records_by_value.push(rule.clone());
                added.other = true;
            }
            Some(b) if b != rule => problems.push(format!(
                "`{}` lists records named by value differently here than in this input",
                rule.at
            )),
            Some(_) => {}
        }
    }
    // Fields counted per parent: either input's count is the created record's.
    for field in &ov.parent_sequences {
        if !base.parent_sequences.contains(field) {
            base.parent_sequences.push(field.clone());
            base.parent_sequences.sort();
            added.other = true;
        }
    }

    match (&mut base.list, &ov.list) {
        (None, Some(l)) => {
            base.list = Some(l.clone());
            added.other = true;
        }
        (Some(b), Some(l)) => added.other |= merge_list(b, l, problems),
        _ => {}
    }

    for v in &ov.variants {
        match base
            .variants
            .iter()
            .find(|b| b.status == v.status && b.guard == v.guard)
        {
            Some(b) => {
                if b.body != v.body {
                    problems.push(format!(
                        "variant {} {} has a different body template than the one already \
                         composed (variants may be added, not changed)",
                        v.status,
                        describe_guard(v)
                    ));
                } else if b.headers != v.headers {
                    problems.push(format!(
                        "variant {} {} has different response headers than the one already \
                         composed (variants may be added, not changed)",
                        v.status,
                        describe_guard(v)
                    ));
                }
            }
            None => {
                base.variants.push(v.clone());
                added.variants += 1;
            }
        }
    }
    // Most specific guard first, as synth orders them; the sort is stable, so variants of equal
    // specificity keep the earlier input's order and an overlay's come after them.
    base.variants
        .sort_by_key(|v: &Variant| Reverse(v.guard.specificity()));

    for e in &ov.exact {
        match base.exact.binary_search_by(|b| b.key.cmp(&e.key)) {
            Ok(n) => {
                if answers(&base.exact[n]) != answers(e) {
                    let mut target = e.key.path.clone();
                    if !e.key.query.is_empty() {
                        target.push('?');
                        target.push_str(&e.key.query);
                    }
                    let body = if e.key.body.is_some() {
                        " (with its request body)"
                    } else {
                        ""
                    };
                    problems.push(format!(
                        "the recorded answers to {target}{body} differ from the ones already \
                         composed (exact replay would change)"
                    ));
                } else if base.exact[n].session_bound != e.session_bound {
                    // A session-bound proof holds only where it held for every recording.
                    let theirs = &e.session_bound;
                    base.exact[n].session_bound.retain(|p| theirs.contains(p));
                }
            }
            Err(n) => {
                base.exact.insert(n, e.clone());
                added.exact += 1;
            }
        }
    }

    let before = base.known_param_tuples.len();
    let mut tuples: BTreeSet<Vec<String>> = base.known_param_tuples.drain(..).collect();
    tuples.extend(ov.known_param_tuples.iter().cloned());
    base.known_param_tuples = tuples.into_iter().collect();
    if base.known_param_tuples.len() != before {
        added.other = true;
    }

    if base.latency.sample_count == 0 && ov.latency.sample_count > 0 {
        base.latency = ov.latency;
    }
    base.exchange_count += ov.exchange_count;
    added
}

/// The recorded answers of an exact entry, without where they came from.
/// One recorded answer without where it came from: principal, status, headers, body.
type Answer<'a> = (
    &'a Option<String>,
    u16,
    &'a [(String, String)],
    &'a wraith_model::RecordedBody,
);

fn answers(e: &ExactEntry) -> Vec<Answer<'_>> {
    e.moments
        .iter()
        .map(|m: &Moment| (&m.principal, m.status, m.headers.as_slice(), &m.body))
        .collect()
}

fn describe_binding(r: &Route) -> String {
    let op = r.state_op.map_or("no state op", |o| o.as_str());
    let ty = r.entity_type.as_deref().unwrap_or("no entity type");
    match (&r.id_param, &r.key_qualifier) {
        (Some(p), Some(q)) => format!("`{op} {ty}` (id :{q}/:{p})"),
        (Some(p), None) => format!("`{op} {ty}` (id :{p})"),
        (None, _) => format!("`{op} {ty}`"),
    }
}

fn describe_guard(v: &Variant) -> String {
    serde_json::to_string(&v.guard).unwrap_or_else(|_| "(guard)".to_string())
}

/// Merge two list shapes of one route; `true` when the overlay added filters or envelope fields.
fn merge_list(base: &mut ListShape, ov: &ListShape, problems: &mut Vec<String>) -> bool {
    let mut added = false;
    if base.items_pointer != ov.items_pointer {
        problems.push(format!(
            "list items are at {:?} here, at {:?} in this input",
            base.items_pointer, ov.items_pointer
        ));
    }
    if base.pagination != ov.pagination {
        // `none` only says the recordings showed no paging parameters: no claim to contradict.
        if base.pagination == Pagination::None {
            base.pagination = ov.pagination.clone();
            added = true;
        } else if ov.pagination != Pagination::None {
            problems.push(format!(
                "pagination differs: {} here, {} in this input",
                serde_json::to_string(&base.pagination).unwrap_or_default(),
                serde_json::to_string(&ov.pagination).unwrap_or_default()
            ));
        }
    }
    match (&base.filter_header, &ov.filter_header) {
        (Some(a), Some(b)) if a != b => problems.push(format!(
            "list filter header is `{a}` here, `{b}` in this input"
        )),
        (None, Some(b)) => {
            base.filter_header = Some(b.clone());
            added = true;
        }
        _ => {}
    }
    for f in &ov.filters {
        if !base.filters.contains(f) {
            base.filters.push(f.clone());
            added = true;
        }
    }
    for f in &ov.set_filters {
        if !base.set_filters.contains(f) {
            base.set_filters.push(f.clone());
            added = true;
        }
    }
    for b in &ov.lower_bounds {
        if !base.lower_bounds.contains(b) {
            base.lower_bounds.push(b.clone());
            added = true;
        }
    }
    // The composite's recordings listed another recording's records where either input's did.
    if base.own_records_only && !ov.own_records_only {
        base.own_records_only = false;
        added = true;
    }
    if base.principal_records_only && !ov.principal_records_only {
        base.principal_records_only = false;
        added = true;
    }
    for h in &ov.hidden_values {
        if !base.hidden_values.contains(h) {
            base.hidden_values.push(h.clone());
            added = true;
        }
    }
    for e in &ov.envelope {
        match base.envelope.iter().find(|b| b.pointer == e.pointer) {
            Some(b) if b.meaning != e.meaning => problems.push(format!(
                "list envelope field {} means {:?} here, {:?} in this input",
                e.pointer, b.meaning, e.meaning
            )),
            Some(_) => {}
            None => {
                base.envelope.push(e.clone());
                added = true;
            }
        }
    }
    added
}

/// Fold entity type `ov` into `base`; returns (known ids added, records added).
fn merge_entity(
    base: &mut EntityType,
    ov: &EntityType,
    problems: &mut Vec<String>,
) -> (usize, usize) {
    if base.primary_key != ov.primary_key {
        problems.push(format!(
            "primary key is `{}` here, `{}` in this input",
            base.primary_key, ov.primary_key
        ));
    }
    match (&base.alternate_key, &ov.alternate_key) {
        (None, Some(k)) => base.alternate_key = Some(k.clone()),
        (Some(a), Some(b)) if a != b => problems.push(format!(
            "paths name records by `{a}` beside the key here, by `{b}` in this input"
        )),
        _ => {}
    }
    match (&mut base.id_shape, &ov.id_shape) {
        (None, Some(s)) => base.id_shape = Some(s.clone()),
        (Some(a), Some(b)) if a != b => match (a, b) {
            // Both mint integers above what was recorded: above everything either side saw.
            (
                IdShape::Integer {
                    above: x,
                    as_string: sx,
                },
                IdShape::Integer {
                    above: y,
                    as_string: sy,
                },
            ) if sx == sy => *x = (*x).max(*y),
            // The same token seen through fewer characters: mint from the wider alphabet.
            (
                IdShape::Token {
                    prefix: pa,
                    charset: ca,
                    length: la,
                },
                IdShape::Token {
                    prefix: pb,
                    charset: cb,
                    length: lb,
                },
            ) if pa == pb && la == lb && (charset_within(*ca, *cb) || charset_within(*cb, *ca)) => {
                if charset_within(*ca, *cb) {
                    *ca = *cb;
                }
            }
            (a, b) => problems.push(format!(
                "id shape differs: {} here, {} in this input",
                serde_json::to_string(a).unwrap_or_default(),
                serde_json::to_string(b).unwrap_or_default()
            )),
        },
        _ => {}
    }
    let before = base.known_ids.len();
    base.known_ids.extend(ov.known_ids.iter().cloned());
    let ids_added = base.known_ids.len() - before;
    base.known_missing.extend(ov.known_missing.iter().cloned());
    let known = &base.known_ids;
    base.known_missing.retain(|id| !known.contains(id));
    for (field, n) in &ov.read_prefixes {
        match base.read_prefixes.get(field) {
            None => {
                base.read_prefixes.insert(field.clone(), *n);
            }
            Some(m) if m != n => problems.push(format!(
                "later views show `{field}` as its first {m} characters here, {n} in this input"
            )),
            Some(_) => {}
        }
    }
    let mut records_added = 0;
    for (id, rec) in &ov.records {
        match base.records.get(id) {
            None => {
                base.records.insert(id.clone(), rec.clone());
                records_added += 1;
            }
            Some(b) if b != rec => problems.push(format!(
                "the recorded representation of `{id}` differs from the one already composed"
            )),
            Some(_) => {}
        }
    }
    (ids_added, records_added)
}

/// Whether every character of `a` is also in `b`.
fn charset_within(a: IdCharset, b: IdCharset) -> bool {
    use IdCharset::*;
    match (a, b) {
        _ if a == b => true,
        (Digits, _) => true,
        (Hex, LowerAlnum | Base62) => true,
        (LowerAlnum | UpperAlnum, Base62) => true,
        (_, Base64Url) => true,
        _ => false,
    }
}

/// Symbols are informational: an overlay symbol whose name is taken by a different symbol is
/// kept under `<name>@<input name>`, or, when that is taken by yet another symbol (two overlays
/// with one folder name), under `<name>@<input name>#2`, `#3`, …: no symbol is lost.
fn merge_symbols(base: &mut SymbolTable, ov: &SymbolTable, input: &str) {
    for (name, sym) in &ov.symbols {
        let mut key = name.clone();
        let mut n = 1u32;
        loop {
            match base.symbols.get(&key) {
                None => {
                    base.symbols.insert(key, sym.clone());
                    break;
                }
                Some(s) if s == sym => break,
                Some(_) => {
                    n += 1;
                    key = if n == 2 {
                        format!("{name}@{input}")
                    } else {
                        format!("{name}@{input}#{}", n - 1)
                    };
                }
            }
        }
    }
}

/// `ov` with its path parameters renamed, by position, to `names` (the earlier input's names for
/// the same route), so every place the route names a parameter keeps pointing at the right
/// segment: `id_param`, `key_qualifier` and `parent_params`, every path echo however deep (in a
/// variant's body or headers, inside a `within`, `instant` or `trimmed` echo, in a learned
/// route fact), and the route facts naming a path parameter (`record_param`, `member_param`,
/// `parent_param`, an action's `id_param`, the `param` of a path filter, a member effect, a
/// create counter or a named record copy). See [`rename_in_json`].
fn rename_params(ov: &Route, names: &[String]) -> Route {
    if ov.params == names || ov.params.len() != names.len() {
        return ov.clone();
    }
    let map: BTreeMap<String, String> = ov
        .params
        .iter()
        .cloned()
        .zip(names.iter().cloned())
        .collect();
    // The exact-replay index names no parameter (its keys are concrete requests) and is most of
    // a route: it stays out of the walk.
    let mut without_exact = Route {
        exact: Vec::new(),
        ..ov.clone()
    };
    without_exact.params = names.to_vec();
    let renamed = serde_json::to_value(&without_exact).ok().and_then(|mut v| {
        rename_in_json(&mut v, &map, true);
        serde_json::from_value::<Route>(v).ok()
    });
    let mut r = match renamed {
        Some(r) => r,
        // A route serde cannot carry through its own JSON form cannot happen (the model file is
        // that form); should it, the fields named in the route itself are still renamed.
        None => {
            let mut r = without_exact;
            let rename = |p: &mut String| {
                if let Some(n) = map.get(p.as_str()) {
                    *p = n.clone();
                }
            };
            if let Some(p) = r.id_param.as_mut() {
                rename(p);
            }
            if let Some(p) = r.key_qualifier.as_mut() {
                rename(p);
            }
            for pp in &mut r.parent_params {
                rename(&mut pp.param);
            }
            r
        }
    };
    r.exact = ov.exact.clone();
    r
}

/// Keys whose string value names a path parameter wherever a route (or a fact learned for it)
/// carries them.
const PARAM_NAME_KEYS: [&str; 5] = [
    "id_param",
    "key_qualifier",
    "record_param",
    "member_param",
    "parent_param",
];

/// Route fields whose objects (or whose array's objects) name a path parameter by `param`:
/// a [`wraith_model::ParentParam`], a path filter, a create counter naming its record by path, a
/// named record copy by path. (A query parameter's `param`, a query lookup's or a list filter's,
/// is not under these.)
const PARAM_FIELDS: [&str; 4] = [
    "parent_params",
    "path_filter",
    "create_counters",
    "named_record_copies",
];

/// Rename, in a route's JSON form, every parameter name `map` holds: the keys of
/// [`PARAM_NAME_KEYS`] at any depth, every path echo (`{"in": "path", "param": …}`) at any depth,
/// a member effect's `{"kind": "param", "param": …}`, and the `param` of the objects under the
/// route's [`PARAM_FIELDS`] (`top`: `v` is the route itself). A constant's recorded value is
/// data, never a name, and is left alone.
fn rename_in_json(v: &mut serde_json::Value, map: &BTreeMap<String, String>, top: bool) {
    use serde_json::Value;
    fn rename_param(obj: &mut serde_json::Map<String, Value>, map: &BTreeMap<String, String>) {
        if let Some(Value::String(p)) = obj.get_mut("param")
            && let Some(n) = map.get(p.as_str())
        {
            *p = n.clone();
        }
    }
    match v {
        Value::Array(items) => {
            for item in items {
                rename_in_json(item, map, false);
            }
        }
        Value::Object(obj) => {
            if obj.get("node").and_then(Value::as_str) == Some("const") {
                return;
            }
            if obj.get("in").and_then(Value::as_str) == Some("path")
                || obj.get("kind").and_then(Value::as_str) == Some("param")
            {
                rename_param(obj, map);
            }
            for key in PARAM_NAME_KEYS {
                if let Some(Value::String(p)) = obj.get_mut(key)
                    && let Some(n) = map.get(p.as_str())
                {
                    *p = n.clone();
                }
            }
            if top {
                for field in PARAM_FIELDS {
                    match obj.get_mut(field) {
                        Some(Value::Object(o)) => rename_param(o, map),
                        Some(Value::Array(items)) => {
                            for o in items.iter_mut().filter_map(Value::as_object_mut) {
                                rename_param(o, map);
                            }
                        }
                        _ => {}
                    }
                }
            }
            for value in obj.values_mut() {
                rename_in_json(value, map, false);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn variant(
        status: u16,
        guard: serde_json::Value,
        body: serde_json::Value,
    ) -> serde_json::Value {
        json!({
            "id": format!("v{status}"),
            "status": status,
            "guard": guard,
            "headers": [],
            "body": {"kind": "json", "root": body},
            "evidence": {"exchange_count": 1, "confidence_bp": 10000, "sources": ["s/0"]},
        })
    }

    fn route(
        method: &str,
        path: &str,
        params: &[&str],
        variants: Vec<serde_json::Value>,
    ) -> serde_json::Value {
        // Variant ids of the route, status and guard, as synth derives them (`variant_id`).
        let variants: Vec<serde_json::Value> = variants
            .into_iter()
            .map(|mut v| {
                v["id"] = format!("{method} {path} {} {}", v["status"], v["guard"]).into();
                v
            })
            .collect();
        json!({
            "id": format!("{method}_{path}"),
            "method": method,
            "path": path,
            "params": params,
            "variants": variants,
            "exact": [],
            "latency": {"p50_ms": 1, "p90_ms": 1, "p99_ms": 1, "sample_count": 1},
            "exchange_count": 1,
        })
    }

    fn model(routes: Vec<serde_json::Value>) -> Model {
        serde_json::from_value(json!({
            "schema_version": 1,
            "tool_version": "t",
            "twin": "t",
            "base_url": "http://up.test",
            "recorded_at": null,
            "sessions": [],
            "routes": routes,
            "entity_types": {},
            "diagnostics": [],
        }))
        .unwrap()
    }

    fn const_body(v: serde_json::Value) -> serde_json::Value {
        json!({"node": "const", "value": v})
    }

    fn compose(models: &[&Model]) -> ComposedModel {
        let symbols = SymbolTable::default();
        let inputs: Vec<ComposeInput<'_>> = models
            .iter()
            .enumerate()
            .map(|(i, m)| ComposeInput {
                name: if i == 0 { "base" } else { "overlay" },
                model: m,
                symbols: &symbols,
            })
            .collect();
        compose_models(&inputs, "test")
    }

    /// The merge matches variants by status and guard; an overlay variant of another status
    /// under an id the composite already holds would reach it twice, which `wraith lint`
    /// fails: the overlay's conflict, once.
    #[test]
    fn a_variant_id_the_composite_already_holds_is_the_overlays_conflict() {
        let base = model(vec![route(
            "GET",
            "/b",
            &[],
            vec![variant(
                200,
                json!({"guard": "always"}),
                const_body(json!(1)),
            )],
        )]);
        let mut ov = base.clone();
        ov.routes[0].variants[0].status = 203;
        let c = compose(&[&base, &ov, &ov]);
        assert_eq!(c.conflicts.len(), 1, "{:?}", c.conflicts);
        let conflict = &c.conflicts[0];
        assert_eq!((conflict.input, conflict.path.as_str()), (1, "GET /b"));
        assert!(
            conflict.reason.contains("is used 2 times")
                && conflict.reason.contains("duplicate-variant-id"),
            "{}",
            conflict.reason
        );
        // A route id the composite holds for another route.
        let mut other = base.clone();
        other.routes[0].path = "/a".to_string();
        other.routes[0].variants[0].id = "fresh".to_string();
        let c = compose(&[&base, &other]);
        assert_eq!(c.conflicts.len(), 1, "{:?}", c.conflicts);
        assert_eq!(c.conflicts[0].path, "GET /a");
        assert!(
            c.conflicts[0].reason.contains("duplicate-route-id"),
            "{:?}",
            c.conflicts
        );
    }

    /// `/b/` and `/b` are two routes to the merge and one to the router: an overlay bringing
    /// the other spelling is its conflict; a pair within one input is a note only.
    #[test]
    fn an_overlay_route_the_router_files_with_an_earlier_one_is_the_overlays_conflict() {
        let one = |path: &str| {
            model(vec![route(
                "GET",
                path,
                &[],
                vec![variant(
                    200,
                    json!({"guard": "always"}),
                    const_body(json!(1)),
                )],
            )])
        };
        let (base, ov) = (one("/b"), one("/b/"));
        let c = compose(&[&base, &ov]);
        assert_eq!(c.conflicts.len(), 1, "{:?}", c.conflicts);
        let conflict = &c.conflicts[0];
        assert_eq!((conflict.input, conflict.path.as_str()), (1, "GET /b/"));
        assert!(
            conflict
                .reason
                .contains("GET /b/ (from overlay) and GET /b (from base)")
                && conflict.reason.contains("would answer only GET /b."),
            "{}",
            conflict.reason
        );
        // Both spellings in the base: how the base already is, a note, no conflict.
        let mut both = one("/b");
        both.routes.extend(one("/b/").routes);
        both.routes[1].id = "other".to_string();
        both.routes[1].variants[0].id = "other-200".to_string();
        let c = compose(&[&both, &both]);
        assert_eq!(c.conflicts, Vec::new());
        let notes: Vec<&ModelNote> = c
            .notes
            .iter()
            .filter(|n| n.code == "routes-filed-as-one")
            .collect();
        assert_eq!(notes.len(), 1, "{:?}", c.notes);
        assert_eq!(notes[0].input, 0);
    }

    #[test]
    fn a_route_only_in_the_overlay_is_added_and_routes_stay_sorted() {
        let base = model(vec![route(
            "GET",
            "/b",
            &[],
            vec![variant(
                200,
                json!({"guard": "always"}),
                const_body(json!(1)),
            )],
        )]);
        let ov = model(vec![route(
            "GET",
            "/a",
            &[],
            vec![variant(
                200,
                json!({"guard": "always"}),
                const_body(json!(2)),
            )],
        )]);
        let c = compose(&[&base, &ov]);
        assert!(c.conflicts.is_empty(), "{:?}", c.conflicts);
        let paths: Vec<&str> = c.model.routes.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, ["/a", "/b"]);
        assert_eq!(c.contributions[1].routes_added, ["GET /a"]);
        assert_eq!(c.contributions[1].variants_added, 1);
    }

    #[test]
    fn same_status_and_guard_with_another_template_is_a_conflict() {
        let base = model(vec![route(
            "GET",
            "/b",
            &[],
            vec![variant(
                200,
                json!({"guard": "always"}),
                const_body(json!(1)),
            )],
        )]);
        let ov = model(vec![route(
            "GET",
            "/b",
            &[],
            vec![variant(
                200,
                json!({"guard": "always"}),
                const_body(json!(2)),
            )],
        )]);
        let c = compose(&[&base, &ov]);
        assert_eq!(c.conflicts.len(), 1);
        assert_eq!(c.conflicts[0].input, 1);
        assert_eq!(c.conflicts[0].path, "GET /b");
        assert!(
            c.conflicts[0].reason.contains("body template"),
            "{}",
            c.conflicts[0].reason
        );
    }

    #[test]
    fn a_variant_with_a_new_guard_is_added_most_specific_first() {
        let base = model(vec![route(
            "GET",
            "/b",
            &[],
            vec![variant(
                200,
                json!({"guard": "always"}),
                const_body(json!(1)),
            )],
        )]);
        let ov = model(vec![route(
            "GET",
            "/b",
            &[],
            vec![variant(
                401,
                json!({"guard": "header_present", "name": "authorization", "present": false}),
                const_body(json!("no")),
            )],
        )]);
        let c = compose(&[&base, &ov]);
        assert!(c.conflicts.is_empty(), "{:?}", c.conflicts);
        let statuses: Vec<u16> = c.model.routes[0]
            .variants
            .iter()
            .map(|v| v.status)
            .collect();
        assert_eq!(statuses, [401, 200]);
        assert_eq!(c.contributions[1].routes_extended, ["GET /b"]);
    }

    #[test]
    fn composing_a_model_with_itself_changes_nothing_but_the_counts() {
        let base = model(vec![route(
            "GET",
            "/b",
            &[],
            vec![variant(
                200,
                json!({"guard": "always"}),
                const_body(json!(1)),
            )],
        )]);
        let c = compose(&[&base, &base]);
        assert!(c.conflicts.is_empty());
        assert_eq!(c.model.routes[0].variants, base.routes[0].variants);
        assert_eq!(c.model.routes[0].exchange_count, 2);
        assert!(c.contributions[1].routes_extended.is_empty());
    }

    #[test]
    fn overlay_parameter_names_follow_the_base_route() {
        let echo = json!({"node": "object", "fields": [{"key": "id", "value": {"node": "hole", "source": {"kind": "echo", "from": {"in": "path", "param": "item"}}, "observed_type": "string", "confidence_bp": 10000}}]});
        let base = model(vec![route(
            "GET",
            "/items/:id",
            &["id"],
            vec![variant(
                200,
                json!({"guard": "always"}),
                const_body(json!(1)),
            )],
        )]);
        let ov = model(vec![route(
            "GET",
            "/items/:item",
            &["item"],
            vec![variant(404, json!({"guard": "always"}), echo)],
        )]);
        let c = compose(&[&base, &ov]);
        assert!(c.conflicts.is_empty(), "{:?}", c.conflicts);
        assert_eq!(c.model.routes.len(), 1, "one route, not two");
        let text = serde_json::to_string(&c.model.routes[0].variants).unwrap();
        assert!(text.contains(r#""param":"id""#), "{text}");
        assert!(!text.contains(r#""param":"item""#), "{text}");
    }

    #[test]
    fn overlay_parameter_names_nested_in_text_echoes_and_route_facts_follow_the_base_route() {
        // "No such order: '<oid>'": a path echo set in fixed text (`within`).
        let within = |param: &str| {
            json!({"node": "object", "fields": [
                {"key": "message", "value": {"node": "hole", "source": {"kind": "echo", "from":
                    {"in": "within", "prefix": "No such order: '", "suffix": "'",
                     "source": {"in": "path", "param": param}}},
                 "observed_type": "string", "confidence_bp": 10000}},
                {"key": "doc", "value": const_body(json!({"in": "path", "param": "oid"}))},
            ]})
        };
        let with_facts = |path: &str, param: &str| {
            let mut r = route(
                "POST",
                path,
                &[param],
                vec![variant(404, json!({"guard": "always"}), within(param))],
            );
            r["parent_params"] = json!([{"param": param, "entity_type": "orders"}]);
            r["member_effects"] = json!([{"list_path": "/starred", "member_type": "orders",
                "adds": true, "member": {"kind": "param", "param": param}}]);
            r
        };
        let base = model(vec![with_facts("/orders/:id/star", "id")]);
        let ov = model(vec![with_facts("/orders/:oid/star", "oid")]);
        let c = compose(&[&base, &ov]);
        assert!(c.conflicts.is_empty(), "{:?}", c.conflicts);
        assert_eq!(c.model.routes.len(), 1, "one route, not two");

        let renamed = rename_params(&ov.routes[0], &["id".to_string()]);
        let mut expected = base.routes[0].clone();
        expected.id = renamed.id.clone();
        expected.path = renamed.path.clone();
        expected.variants[0].id = renamed.variants[0].id.clone();
        assert_eq!(
            renamed, expected,
            "every name follows the base; constants stay as recorded"
        );
    }

    #[test]
    fn a_symbol_renamed_by_two_overlays_of_one_name_is_kept_under_distinct_names() {
        let table = |first_seen: &str| {
            let mut t = SymbolTable::default();
            t.symbols.insert(
                "$id_1".into(),
                wraith_model::Symbol {
                    symbol_type: "PrefixedId".into(),
                    format_pattern: None,
                    first_seen_exchange: first_seen.into(),
                    first_seen_path: "/id".into(),
                    occurrences: 1,
                },
            );
            t
        };
        let m = model(vec![]);
        let tables = [table("base/0"), table("d1/0"), table("d2/0"), table("d1/0")];
        let inputs: Vec<ComposeInput<'_>> = tables
            .iter()
            .enumerate()
            .map(|(i, symbols)| ComposeInput {
                name: if i == 0 { "shop" } else { "promos" },
                model: &m,
                symbols,
            })
            .collect();
        let c = compose_models(&inputs, "test");
        let got: Vec<(&str, &str)> = c
            .symbols
            .symbols
            .iter()
            .map(|(k, s)| (k.as_str(), s.first_seen_exchange.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("$id_1", "base/0"),
                ("$id_1@promos", "d1/0"),
                ("$id_1@promos#2", "d2/0"),
            ],
            "each overlay's symbol kept once, none overwritten"
        );
    }

    #[test]
    fn an_overlays_key_qualifier_travels_with_its_binding_under_the_base_names() {
        let base = model(vec![route("GET", "/repos/:a/:b", &["a", "b"], vec![])]);
        let mut ov = model(vec![route(
            "GET",
            "/repos/:owner/:name",
            &["owner", "name"],
            vec![],
        )]);
        let r = &mut ov.routes[0];
        r.state_op = Some(wraith_model::StateOp::Read);
        r.entity_type = Some("repos".into());
        r.id_param = Some("name".into());
        r.key_qualifier = Some("owner".into());
        let c = compose(&[&base, &ov]);
        assert!(c.conflicts.is_empty(), "{:?}", c.conflicts);
        let got = &c.model.routes[0];
        assert_eq!(got.id_param.as_deref(), Some("b"));
        assert_eq!(got.key_qualifier.as_deref(), Some("a"));
        // The same binding without the qualifier names another key: a conflict.
        let mut unqualified = c.model.clone();
        unqualified.routes[0].key_qualifier = None;
        let c = compose(&[&c.model, &unqualified]);
        assert_eq!(c.conflicts.len(), 1, "{:?}", c.conflicts);
    }

    #[test]
    fn a_different_state_op_for_the_same_route_is_a_conflict() {
        let mut base = model(vec![route("GET", "/b", &[], vec![])]);
        base.routes[0].state_op = Some(wraith_model::StateOp::List);
        base.routes[0].entity_type = Some("b".into());
        let mut ov = base.clone();
        ov.routes[0].state_op = Some(wraith_model::StateOp::Read);
        let c = compose(&[&base, &ov]);
        assert_eq!(c.conflicts.len(), 1);
        assert!(
            c.conflicts[0].reason.contains("state binding"),
            "{}",
            c.conflicts[0].reason
        );
    }

    #[test]
    fn entity_types_merge_known_ids_and_refuse_another_record() {
        let mut base = model(vec![]);
        let et: EntityType = serde_json::from_value(json!({
            "primary_key": "id", "known_ids": ["a"], "known_missing": ["z"], "records": {"a": {"id": "a", "n": 1}}
        }))
        .unwrap();
        base.entity_types.insert("things".into(), et);
        let mut ov = base.clone();
        let t = ov.entity_types.get_mut("things").unwrap();
        t.known_ids = ["b".to_string(), "z".to_string()].into();
        t.known_missing.clear();
        t.records = [("b".to_string(), json!({"id": "b"}))].into();
        let c = compose(&[&base, &ov]);
        assert!(c.conflicts.is_empty(), "{:?}", c.conflicts);
        let t = &c.model.entity_types["things"];
        assert_eq!(t.known_ids.len(), 3);
        assert!(
            t.known_missing.is_empty(),
            "an id known anywhere is not missing"
        );
        assert_eq!(c.contributions[1].known_ids_added, 2);

        let mut ov2 = base.clone();
        ov2.entity_types.get_mut("things").unwrap().records =
            [("a".to_string(), json!({"id": "a", "n": 2}))].into();
        let c = compose(&[&base, &ov2]);
        assert_eq!(c.conflicts.len(), 1);
        assert_eq!(c.conflicts[0].path, "entity_types/things");
    }

    #[test]
    fn an_overlays_counted_fields_named_records_and_alternate_key_join_the_base() {
        let issues = |alternate: Option<&str>| {
            let et: EntityType = serde_json::from_value(json!({
                "primary_key": "id", "known_ids": [], "known_missing": [],
                "alternate_key": alternate
            }))
            .unwrap();
            et
        };
        let mut base = model(vec![route("POST", "/repos/:a/issues", &["a"], vec![])]);
        base.entity_types.insert("issues".into(), issues(None));
        let mut ov = model(vec![route("POST", "/repos/:a/issues", &["a"], vec![])]);
        ov.routes[0].parent_sequences = vec!["number".into()];
        ov.routes[0].records_by_value = vec![wraith_model::RecordsByValue {
            field: "/labels".into(),
            at: "/labels".into(),
            entity_type: "labels".into(),
            by: "name".into(),
            defaults: serde_json::Map::new(),
        }];
        ov.entity_types
            .insert("issues".into(), issues(Some("number")));
        let c = compose(&[&base, &ov]);
        assert!(c.conflicts.is_empty(), "{:?}", c.conflicts);
        assert_eq!(c.model.routes[0].parent_sequences, ["number".to_string()]);
        assert_eq!(
            c.model.routes[0].records_by_value,
            ov.routes[0].records_by_value
        );
        assert_eq!(
            c.model.entity_types["issues"].alternate_key.as_deref(),
            Some("number")
        );
        // Another field named beside the key is a conflict.
        let mut other = ov.clone();
        other
            .entity_types
            .insert("issues".into(), issues(Some("iid")));
        assert_eq!(compose(&[&c.model, &other]).conflicts.len(), 1);
    }

    #[test]
    fn a_token_id_shape_seen_through_fewer_characters_widens_instead_of_conflicting() {
        let shape = |charset: &str| {
            json!({"primary_key": "id", "known_ids": [], "known_missing": [],
                   "id_shape": {"shape": "token", "prefix": "cus_", "charset": charset, "length": 14}})
        };
        let mut base = model(vec![]);
        base.entity_types.insert(
            "c".into(),
            serde_json::from_value(shape("upper_alnum")).unwrap(),
        );
        let mut ov = model(vec![]);
        ov.entity_types
            .insert("c".into(), serde_json::from_value(shape("base62")).unwrap());
        let c = compose(&[&base, &ov]);
        assert!(c.conflicts.is_empty(), "{:?}", c.conflicts);
        assert_eq!(
            c.model.entity_types["c"].id_shape,
            Some(IdShape::Token {
                prefix: "cus_".into(),
                charset: IdCharset::Base62,
                length: 14
            })
        );
        let mut ov = model(vec![]);
        ov.entity_types
            .insert("c".into(), serde_json::from_value(shape("hex")).unwrap());
        assert_eq!(
            compose(&[&base, &ov]).conflicts.len(),
            1,
            "hex and upper_alnum do not nest"
        );
    }

    #[test]
    fn an_overlays_lower_bounds_join_the_base_list_shape_once() {
        let list = |bounds: serde_json::Value| {
            let mut r = route("GET", "/timeline", &[], vec![]);
            r["state_op"] = json!("list");
            r["list"] = json!({"items_pointer": "", "pagination": {"style": "none"},
                               "lower_bounds": bounds});
            model(vec![r])
        };
        let c = compose(&[
            &list(json!(["since_id"])),
            &list(json!(["since_id", "after_id"])),
        ]);
        assert!(c.conflicts.is_empty(), "{:?}", c.conflicts);
        let shape = c.model.routes[0].list.as_ref().unwrap();
        assert_eq!(shape.lower_bounds, vec!["since_id", "after_id"]);
    }

    #[test]
    fn a_composite_lists_own_records_only_where_every_input_does() {
        let list = |own: bool| {
            let mut r = route("GET", "/notes", &[], vec![]);
            r["state_op"] = json!("list");
            r["list"] = json!({"items_pointer": "", "pagination": {"style": "none"},
                               "own_records_only": own});
            model(vec![r])
        };
        let own = |inputs: &[&Model]| {
            let c = compose(inputs);
            assert!(c.conflicts.is_empty(), "{:?}", c.conflicts);
            c.model.routes[0].list.as_ref().unwrap().own_records_only
        };
        assert!(own(&[&list(true), &list(true)]));
        assert!(!own(&[&list(true), &list(false)]));
        assert!(!own(&[&list(false), &list(true)]));
    }

    #[test]
    fn an_overlays_set_filters_join_the_base_list_shape_once() {
        let list = |set_filters: serde_json::Value| {
            let mut r = route("GET", "/events", &[], vec![]);
            r["state_op"] = json!("list");
            r["list"] = json!({"items_pointer": "", "pagination": {"style": "none"},
                               "set_filters": set_filters});
            model(vec![r])
        };
        let base = list(json!([{"param": "types[]", "field": "type"}]));
        let ov = list(json!([
            {"param": "types[]", "field": "type"},
            {"param": "exclude_types[]", "field": "type", "exclude": true}
        ]));
        let c = compose(&[&base, &ov]);
        assert!(c.conflicts.is_empty(), "{:?}", c.conflicts);
        let shape = c.model.routes[0].list.as_ref().unwrap();
        assert_eq!(
            shape.set_filters,
            vec![
                wraith_model::SetFilter {
                    param: "types[]".into(),
                    field: "type".into(),
                    exclude: false
                },
                wraith_model::SetFilter {
                    param: "exclude_types[]".into(),
                    field: "type".into(),
                    exclude: true
                },
            ]
        );
    }
}
