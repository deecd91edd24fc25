//! Why an exchange failed, and the recordings' own ceiling.
//!
//! After the replay, every failing exchange is labelled with the first [`Cause`] that applies:
//!
//! 1. [`Cause::UnrecordedRoute`] — the model has no route of the name the exchange is scored
//!    under (a held-out session hitting a route only it recorded; the twin refused).
//! 2. [`Cause::RecordingsDisagree`] — another session (a replayed one, or a reference session:
//!    under `--holdout`, the training sessions the model was built from) had the identical
//!    request history up to and including this exchange, and its recorded answer fails this
//!    one's recording under the same judge and template. A deterministic twin cannot pass both.
//! 3. [`Cause::AfterEarlierDivergence`] — an earlier exchange of the same session already failed.
//! 4. [`Cause::Twin`] — none of the above: the model or the engine is at fault.
//!
//! **History.** The method, path, query and body of every exchange of the session up to and
//! including this one, in order. Ids the API minted — scalars
//! at a `Generated` or `Counter` position of the templates of the route's variants with the
//! recorded status, in the session's earlier recorded answers — are replaced by their order of
//! first appearance in the session (whole tokens, as [`crate::idmap`] rewrites them), so two
//! sessions that created different ids and then used them share a history. Histories are
//! grouped by comparing them, never by a digest alone: a history is its previous request's
//! group and its last request ([`HistoryStep`]), so each exchange is compared by one request
//! with a member of the candidate group (a cheap hash of a few bytes only finds candidates),
//! and a hash collision cannot put different histories in one group.
//!
//! **Ceiling.** Per group of identical histories, the distinct recorded answers (status,
//! content type and body bytes) of the replayed exchanges, weighted by how many exchanges gave
//! each; two answers are *compatible* when each, judged as the twin's answer against the
//! other's recording (ids of earlier answers mapped by ordinal), passes. The group contributes
//! the weight of its heaviest set of mutually compatible answers (an exact maximum-weight
//! clique, branch and bound; greedy only past a search budget, reported in `method`).
//! `unrecorded_route` exchanges count as lost. It is an upper bound for a deterministic twin:
//! identical histories get one answer, and an answer can pass at most a compatible set.
//!
//! Nothing here calls the twin, and every order is the sessions' order: the result does not
//! depend on `--jobs`.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use foldhash::HashMap;

use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;
use wraith_engine::Provenance;
use wraith_model::{ArrayNode, BodyTemplate, HoleKind, Model, Node};
use wraith_recording::RecordedSession;

use crate::diff::EchoContext;
use crate::idmap::IdMap;
use crate::judge::{Body, DiffOptions, ExpectedBody, ModelIndex, Observed};
use crate::report::{Report, ratio_bp};

/// Why a failing exchange failed (the first that applies, in this order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    UnrecordedRoute,
    RecordingsDisagree,
    UnrecordedInput,
    AfterEarlierDivergence,
    Twin,
}

impl Cause {
    /// Every cause, in precedence order.
    pub const ALL: [Cause; 5] = [
        Cause::UnrecordedRoute,
        Cause::RecordingsDisagree,
        Cause::UnrecordedInput,
        Cause::AfterEarlierDivergence,
        Cause::Twin,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Cause::UnrecordedRoute => "unrecorded_route",
            Cause::RecordingsDisagree => "recordings_disagree",
            Cause::UnrecordedInput => "unrecorded_input",
            Cause::AfterEarlierDivergence => "after_earlier_divergence",
            Cause::Twin => "twin",
        }
    }

    /// What the cause says about a failing exchange, in one line for people (the HTML report).
    pub fn meaning(self) -> &'static str {
        match self {
            Cause::UnrecordedRoute => "the model has no route for the request",
            Cause::RecordingsDisagree => {
                "another recording with the identical request history has an incompatible \
                 answer: no deterministic twin passes both"
            }
            Cause::UnrecordedInput => {
                "held out: the request sent a query parameter or body field no training \
                 request of its route sent"
            }
            Cause::AfterEarlierDivergence => {
                "an earlier exchange of the session already failed; its state may carry the \
                 difference"
            }
            Cause::Twin => "none of the above: the model or the engine is at fault",
        }
    }
}

/// A bound on the score a deterministic twin could reach on these recordings (report
/// `ceiling`): not strict, since the pair judge it uses is not transitive.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Ceiling {
    /// `passable × 10000 / exchanges`, rounded down.
    pub score_bp: u32,
    /// Replayed exchanges (= `exchanges_total`).
    pub exchanges: u64,
    /// Exchanges some deterministic twin could pass at once.
    pub passable: u64,
    /// Lost because the model has no route for them.
    pub lost_unrecorded_route: u64,
    /// Lost because their group's recorded answers are incompatible.
    pub lost_recordings_disagree: u64,
    /// Groups of identical histories with incompatible recorded answers.
    pub disagreeing_groups: u64,
    /// `exact` (maximum-weight clique) or `greedy` (some group exceeded the search budget:
    /// then the figure is a greedy clique, not guaranteed maximal).
    pub method: String,
}

/// A recorded exchange of a replayed or reference session.
struct Entry<'a> {
    session: usize,
    exchange: usize,
    /// Route name whose templates judge it (`None`: no template).
    route: Option<String>,
    /// Index into the distinct answers.
    answer: usize,
    /// Minted ids known before this exchange, by ordinal.
    minted_before: usize,
    /// Position in `report.exchanges` (replayed and judged only).
    report_pos: Option<usize>,
    /// The recorded body as the replay already parsed it, when it did.
    parsed: Option<&'a ExpectedBody>,
}

/// One session's minted ids, in order of first appearance.
type Minted = Vec<Value>;

/// Label every failing exchange of `report` with its [`Cause`], count causes per route and in
/// total, and compute the [`Ceiling`]. `sessions` are the replayed sessions, in the order the
/// report lists them; `reference` are other recordings of the same API the twin learned from
/// (under `--holdout`, the training sessions; else empty). `diff` is the run's comparison
/// (the outbound hook is dropped: both sides are recordings). Recomputes from
/// scratch, so calling it again (with another `reference`) replaces the earlier labels.
pub fn annotate(
    report: &mut Report,
    model: &Model,
    sessions: &[&RecordedSession],
    reference: &[&RecordedSession],
    diff: &DiffOptions,
) {
    annotate_parsed(report, model, sessions, reference, diff, &|_, _| None, 1);
}

/// [`annotate`] reusing the recorded bodies the replay already parsed: `parsed(s, x)` is the
/// body of exchange `x` (position in `sessions[s].exchanges`) when the replay holds it. A body
/// whose length is not the recorded one is ignored (parsed here instead), so a wrong lookup
/// costs time, never a different report. The comparisons run on up to `jobs` threads; the
/// result does not depend on `jobs`.
pub fn annotate_parsed<'p>(
    report: &mut Report,
    model: &Model,
    sessions: &[&RecordedSession],
    reference: &[&RecordedSession],
    diff: &DiffOptions,
    parsed: &(dyn Fn(usize, usize) -> Option<&'p ExpectedBody> + Sync),
    jobs: usize,
) {
    let index = ModelIndex::new(model);
    annotate_indexed(report, &index, sessions, reference, diff, parsed, jobs);
}

/// [`annotate_parsed`] with the model's index already built (the replay's, so a check run
/// indexes its model once).
pub(crate) fn annotate_indexed<'p>(
    report: &mut Report,
    index: &ModelIndex<'_>,
    sessions: &[&RecordedSession],
    reference: &[&RecordedSession],
    diff: &DiffOptions,
    parsed: &(dyn Fn(usize, usize) -> Option<&'p ExpectedBody> + Sync),
    jobs: usize,
) {
    let inputs = Inputs {
        index,
        sessions,
        reference,
        diff,
        parsed,
    };
    if jobs <= 1 {
        annotate_on(report, inputs, false);
    } else {
        crate::run::on_threads(jobs, || annotate_on(report, inputs, true));
    }
}

/// What [`annotate_indexed`] reads besides the report, as it was given.
#[derive(Clone, Copy)]
struct Inputs<'a, 'm, 'p> {
    index: &'a ModelIndex<'m>,
    sessions: &'a [&'a RecordedSession],
    reference: &'a [&'a RecordedSession],
    diff: &'a DiffOptions,
    parsed: &'a (dyn Fn(usize, usize) -> Option<&'p ExpectedBody> + Sync),
}

/// [`annotate_indexed`]'s work: on the calling thread, or (`parallel`) spread over the rayon
/// pool the caller runs in.
fn annotate_on(report: &mut Report, inputs: Inputs<'_, '_, '_>, parallel: bool) {
    let Inputs {
        index,
        sessions,
        reference,
        diff,
        parsed,
    } = inputs;
    let opts = DiffOptions {
        outbound: None,
        ..diff.clone()
    };
    let all: Vec<(bool, &RecordedSession)> = sessions
        .iter()
        .map(|s| (false, *s))
        .chain(reference.iter().map(|s| (true, *s)))
        .collect();
    // Every exchange's recorded body: the replay's parse, else joined here (not parsed: most
    // are only compared as bytes).
    let given: Vec<Vec<Option<&ExpectedBody>>> = all
        .iter()
        .enumerate()
        .map(|(si, (is_ref, s))| {
            s.exchanges
                .iter()
                .enumerate()
                .map(|(xi, ex)| {
                    if *is_ref {
                        return None;
                    }
                    parsed(si, xi).filter(|b| b.bytes.len() == crate::run::recorded_body_len(ex))
                })
                .collect()
        })
        .collect();
    let joined: Vec<Vec<Option<Vec<u8>>>> = all
        .iter()
        .zip(&given)
        .map(|((_, s), g)| {
            s.exchanges
                .iter()
                .zip(g)
                .map(|(ex, g)| g.is_none().then(|| ex.response_body()))
                .collect()
        })
        .collect();
    // Report positions: the report lists the replayed, judged exchanges in session order.
    let mut positions: Vec<Vec<Option<usize>>> = Vec::with_capacity(all.len());
    let mut cursor = 0usize;
    for (is_ref, s) in &all {
        let sid = &s.manifest.session_id;
        let mut at = Vec::with_capacity(s.exchanges.len());
        for ex in &s.exchanges {
            let mut report_pos = None;
            if !is_ref
                && let Some(e) = report.exchanges.get(cursor)
                && e.session == *sid
                && e.exchange == ex.correlation.exchange_index
            {
                report_pos = Some(cursor);
                cursor += 1;
            }
            at.push(report_pos);
        }
        positions.push(at);
    }
    // Each session's history keys, routes and minted ids depend on that session alone: computed
    // on the pool's threads, read back by session.
    let pass = |si: usize| session_pass(index, report, all[si].1, &positions[si], &given[si]);
    let passes: Vec<SessionPass<'_>> = if parallel {
        (0..all.len()).into_par_iter().map(pass).collect()
    } else {
        (0..all.len()).map(pass).collect()
    };
    let mut answers = Answers::default();
    let mut entries: Vec<Entry<'_>> = Vec::new();
    let mut steps: Vec<HistoryStep<'_>> = Vec::new();
    let mut spreads: Vec<u64> = Vec::new();
    let mut minted: Vec<Minted> = Vec::with_capacity(all.len());
    for (si, ((_, s), pass)) in all.iter().zip(passes).enumerate() {
        for (xi, ex) in s.exchanges.iter().enumerate() {
            let given_body = given[si][xi];
            let bytes: &[u8] = match (given_body, &joined[si][xi]) {
                (Some(b), _) => &b.bytes,
                (None, Some(j)) => j,
                (None, None) => &[],
            };
            let answer = answers.intern(ex, bytes);
            entries.push(Entry {
                session: si,
                exchange: xi,
                route: pass.routes.get(xi).cloned().flatten(),
                answer,
                minted_before: pass.minted_before.get(xi).copied().unwrap_or(0),
                report_pos: positions[si][xi],
                parsed: given_body,
            });
        }
        steps.extend(pass.steps);
        spreads.extend(pass.spreads);
        minted.push(pass.minted);
    }

    // Groups of identical histories (members in session order).
    let starts: Vec<bool> = entries.iter().map(|e| e.exchange == 0).collect();
    let groups = group_histories(&steps, &spreads, &starts);
    // Per entry: a replayed exchange that failed, and one that failed on a route the model
    // lacks.
    let failing: Vec<bool> = entries
        .iter()
        .map(|e| {
            e.report_pos
                .and_then(|p| report.exchanges.get(p))
                .is_some_and(|x| x.divergences != 0)
        })
        .collect();
    let unrecorded: Vec<bool> = entries
        .iter()
        .zip(&failing)
        .map(|(e, &f)| {
            f && e
                .report_pos
                .and_then(|p| report.exchanges.get(p))
                .is_some_and(|x| index.route(&x.route).is_none())
        })
        .collect();
    let flags = Flags {
        failing: &failing,
        unrecorded: &unrecorded,
    };
    // Only groups whose members gave more than one distinct answer compare anything: the
    // others are skipped before any work. Their comparisons are spread over the pool's threads,
    // each run of groups with its own judge (a memo only saves work), and read back by group.
    let split: Vec<usize> = (0..groups.len())
        .filter(|&g| {
            let m = &groups[g];
            m.iter().any(|&o| entries[o].answer != entries[m[0]].answer)
        })
        .collect();
    let (index_r, opts_r, all_r, entries_r, minted_r) = (index, &opts, &all, &entries, &minted);
    let judged = judge_groups(
        parallel,
        &split,
        move || {
            let mut judge = PairJudge {
                index: index_r,
                opts: opts_r,
                all: all_r,
                entries: entries_r,
                minted: minted_r,
                pairs: HashMap::default(),
                memo: BTreeMap::new(),
                bodies: BTreeMap::new(),
                leaked: BTreeMap::new(),
                echoes: BTreeMap::new(),
            };
            // One judge per run of groups, reused across them.
            move |members: &[usize]| judge_group(&mut judge, members, entries_r, flags)
        },
        &groups,
    );

    // Causes, in report order.
    let mut disagree: Vec<bool> = vec![false; entries.len()];
    for o in judged.values() {
        for &ei in &o.disagree {
            disagree[ei] = true;
        }
    }
    let new_inputs = unrecorded_inputs(report, &all, &entries, &disagree, index);
    let mut causes: Vec<Option<Cause>> = vec![None; report.exchanges.len()];
    // Per session, its first failing exchange: its `exchange` index and its cause.
    let mut first_failure: Vec<Option<(u64, Cause)>> = vec![None; all.len()];
    let mut after: Vec<Option<u64>> = vec![None; report.exchanges.len()];
    let mut by_first_cause: BTreeMap<String, u64> = BTreeMap::new();
    for (ei, e) in entries.iter().enumerate() {
        let Some(p) = e.report_pos else { continue };
        let Some(x) = report.exchanges.get(p) else {
            continue;
        };
        if x.divergences == 0 {
            continue;
        }
        let cause = if index.route(&x.route).is_none() {
            Cause::UnrecordedRoute
        } else if disagree[ei] {
            Cause::RecordingsDisagree
        } else if !new_inputs[ei].is_empty() {
            Cause::UnrecordedInput
        } else if first_failure[e.session].is_some() {
            Cause::AfterEarlierDivergence
        } else {
            Cause::Twin
        };
        causes[p] = Some(cause);
        match first_failure[e.session] {
            Some((first, first_cause)) if cause == Cause::AfterEarlierDivergence => {
                after[p] = Some(first);
                *by_first_cause
                    .entry(first_cause.as_str().to_string())
                    .or_default() += 1;
            }
            Some(_) => {}
            None => first_failure[e.session] = Some((x.exchange, cause)),
        }
    }

    // The ceiling.
    let mut ceiling = Ceiling {
        exchanges: report.exchanges.len() as u64,
        method: "exact".to_string(),
        ..Ceiling::default()
    };
    for (g, members) in groups.iter().enumerate() {
        let (weights, lost) = group_weights(members, &entries, flags);
        ceiling.lost_unrecorded_route += lost;
        let total: u64 = weights.values().map(|w| w.0).sum();
        let Some(&GroupOutcome {
            clique: Some((best, exact)),
            ..
        }) = judged.get(&g)
        else {
            ceiling.passable += total;
            continue;
        };
        if !exact {
            ceiling.method = "greedy".to_string();
        }
        if best < total {
            ceiling.disagreeing_groups += 1;
            ceiling.lost_recordings_disagree += total - best;
        }
        ceiling.passable += best;
    }
    ceiling.score_bp = ratio_bp(ceiling.passable, ceiling.exchanges);

    // Fold into the report.
    let mut total: BTreeMap<String, u64> = BTreeMap::new();
    let mut per_route: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut unrecorded: Vec<Vec<String>> = vec![Vec::new(); report.exchanges.len()];
    for (e, names) in entries.iter().zip(new_inputs) {
        if let Some(p) = e.report_pos
            && causes.get(p) == Some(&Some(Cause::UnrecordedInput))
        {
            unrecorded[p] = names;
        }
    }
    for (((x, c), names), a) in report
        .exchanges
        .iter_mut()
        .zip(&causes)
        .zip(unrecorded)
        .zip(after)
    {
        x.cause = *c;
        x.unrecorded_inputs = names;
        x.after_exchange = a;
        if let Some(c) = c {
            *total.entry(c.as_str().to_string()).or_default() += 1;
            *per_route
                .entry(x.route.clone())
                .or_default()
                .entry(c.as_str().to_string())
                .or_default() += 1;
        }
    }
    for r in &mut report.routes {
        r.causes = per_route.remove(&r.route).unwrap_or_default();
    }
    report.causes = total;
    report.after_earlier_divergence_by_first_cause = by_first_cause;
    report.ceiling = ceiling;
}

/// Per entry: for a failing replayed exchange, on a route the model has, whose recordings do
/// not disagree, the inputs it sent (query parameters, body fields at their JSON pointers,
/// array items as `*`) that no reference exchange of its route sent, sorted: under
/// `--holdout`, what makes the request of a kind the training sessions never showed the twin.
/// Empty for every other entry, and for all without reference sessions (in sample every
/// request is one the model learned from).
fn unrecorded_inputs(
    report: &Report,
    all: &[(bool, &RecordedSession)],
    entries: &[Entry<'_>],
    disagree: &[bool],
    index: &ModelIndex<'_>,
) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new(); entries.len()];
    if !all.iter().any(|(is_ref, _)| *is_ref) {
        return out;
    }
    let exchange = |e: &Entry<'_>| {
        all.get(e.session)
            .and_then(|(_, s)| s.exchanges.get(e.exchange))
    };
    // The candidates' routes first: only those routes' reference requests are read.
    let candidates: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(ei, e)| {
            !disagree[*ei]
                && e.report_pos
                    .and_then(|p| report.exchanges.get(p))
                    .is_some_and(|x| x.divergences != 0 && index.route(&x.route).is_some())
        })
        .map(|(ei, _)| ei)
        .collect();
    let routes: BTreeSet<&str> = candidates
        .iter()
        .filter_map(|&ei| entries[ei].route.as_deref())
        .collect();
    let mut known: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for e in entries {
        let Some(route) = e.route.as_deref().filter(|r| routes.contains(r)) else {
            continue;
        };
        if !all.get(e.session).is_some_and(|(is_ref, _)| *is_ref) {
            continue;
        }
        if let Some(ex) = exchange(e) {
            known.entry(route).or_default().extend(input_names(ex));
        }
    }
    for ei in candidates {
        let e = &entries[ei];
        let (Some(route), Some(ex)) = (e.route.as_deref(), exchange(e)) else {
            continue;
        };
        let seen = known.get(route);
        out[ei] = input_names(ex)
            .into_iter()
            .filter(|name| seen.is_none_or(|s| !s.contains(name)))
            .collect();
    }
    out
}

/// The inputs a recorded request sent: `?name` per query parameter, and the JSON pointer of
/// every object key of its body (a form folded into an object as the judge's echoes read it),
/// array items as `*`.
fn input_names(ex: &wraith_recording::Exchange) -> BTreeSet<String> {
    let r = &ex.request;
    let ct = request_content_type(r).map(String::as_str);
    let ctx = EchoContext::new(None, &r.path, &r.query, ct, &r.body, Vec::new());
    let mut names: BTreeSet<String> = ctx.query.iter().map(|(k, _)| format!("?{k}")).collect();
    fn keys(v: &Value, at: &mut String, names: &mut BTreeSet<String>) {
        let len = at.len();
        match v {
            Value::Object(fields) => {
                for (k, v) in fields {
                    at.push('/');
                    at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                    names.insert(at.clone());
                    keys(v, at, names);
                    at.truncate(len);
                }
            }
            Value::Array(items) => {
                at.push_str("/*");
                for v in items {
                    keys(v, at, names);
                }
                at.truncate(len);
            }
            _ => {}
        }
    }
    if let Some(body) = &ctx.body {
        keys(body, &mut String::new(), &mut names);
    }
    names
}

/// One session's request histories: per exchange its request as histories compare it (and that
/// request's [`HistoryStep::spread`]), the route judging it and how many ids were minted before
/// it; and the ids the session minted, by ordinal.
struct SessionPass<'s> {
    steps: Vec<HistoryStep<'s>>,
    spreads: Vec<u64>,
    routes: Vec<Option<String>>,
    minted_before: Vec<usize>,
    minted: Minted,
}

/// The [`SessionPass`] of `s`, whose exchanges sit at `positions` of `report` (when replayed and
/// judged) and whose recorded bodies the replay parsed as `given` (when it did).
fn session_pass<'s>(
    index: &ModelIndex<'_>,
    report: &Report,
    s: &'s RecordedSession,
    positions: &[Option<usize>],
    given: &[Option<&ExpectedBody>],
) -> SessionPass<'s> {
    let sid = &s.manifest.session_id;
    let n = s.exchanges.len();
    let mut history = History::default();
    let mut pass = SessionPass {
        steps: Vec::with_capacity(n),
        spreads: Vec::with_capacity(n),
        routes: Vec::with_capacity(n),
        minted_before: Vec::with_capacity(n),
        minted: Vec::new(),
    };
    for (xi, ex) in s.exchanges.iter().enumerate() {
        let step = history.step_exchange(ex);
        pass.spreads.push(step.spread());
        pass.steps.push(step);
        pass.minted_before.push(history.minted.len());
        let route = match positions.get(xi).copied().flatten() {
            Some(p) => report.exchanges.get(p).map(|e| e.route.clone()),
            None => index
                .route_of_source(&format!("{sid}/{}", ex.correlation.exchange_index))
                .map(|r| r.label()),
        };
        // Ids this answer mints, for the later requests of the session (none after the last
        // one).
        if xi + 1 < n
            && let Some(r) = route.as_deref().and_then(|name| index.route(name))
        {
            let templates: Vec<&Node> = r
                .variants
                .iter()
                .filter(|v| v.status == ex.response.status)
                .filter_map(|v| match &v.body {
                    BodyTemplate::Json { root } if has_generated(root) => Some(root),
                    _ => None,
                })
                .collect();
            if !templates.is_empty() {
                let body = Parsed::of(given.get(xi).copied().flatten(), ex);
                if let Body::Json(body) = &body.get().body {
                    let mut found = Vec::new();
                    for t in templates {
                        collect_generated(t, body, &mut found);
                    }
                    for v in found {
                        history.mint(v);
                    }
                }
            }
        }
        pass.routes.push(route);
    }
    pass.minted = history.minted;
    pass
}

/// What one group of identical histories with several distinct answers gives.
struct GroupOutcome {
    /// Failing replayed members (entry indices) on a known route whose recording another
    /// member's different answer fails.
    disagree: Vec<usize>,
    /// The heaviest compatible set of the weighted answers and whether the search was exact,
    /// when the weighted members gave more than one answer (else the group is passable whole).
    clique: Option<(u64, bool)>,
}

/// Per entry (by index): a replayed exchange that failed; one that failed on a route the model
/// lacks (cause [`Cause::UnrecordedRoute`]).
#[derive(Clone, Copy)]
struct Flags<'f> {
    failing: &'f [bool],
    unrecorded: &'f [bool],
}

/// The replayed members of a group on a known route, weighted by answer (answer → (weight,
/// first member)), and how many members were lost to an unrecorded route.
fn group_weights(
    members: &[usize],
    entries: &[Entry<'_>],
    flags: Flags<'_>,
) -> (BTreeMap<usize, (u64, usize)>, u64) {
    let mut weights: BTreeMap<usize, (u64, usize)> = BTreeMap::new();
    let mut lost = 0;
    for &m in members {
        let e = &entries[m];
        if e.report_pos.is_none() {
            continue;
        }
        if flags.unrecorded[m] {
            lost += 1;
            continue;
        }
        weights.entry(e.answer).or_insert((0, m)).0 += 1;
    }
    (weights, lost)
}

/// The comparisons of one group: which failing members' recordings disagree with another's,
/// and the group's heaviest compatible set of answers.
fn judge_group(
    judge: &mut PairJudge<'_, '_>,
    members: &[usize],
    entries: &[Entry<'_>],
    flags: Flags<'_>,
) -> GroupOutcome {
    let mut disagree = Vec::new();
    let sides = twin_sides(members, entries, judge.minted);
    for &ei in members {
        let e = &entries[ei];
        if !flags.failing[ei] || flags.unrecorded[ei] {
            continue;
        }
        if sides
            .iter()
            .any(|&o| o != ei && entries[o].answer != e.answer && !judge.passes(o, ei))
        {
            disagree.push(ei);
        }
    }
    let (weights, _) = group_weights(members, entries, flags);
    if weights.len() <= 1 {
        return GroupOutcome {
            disagree,
            clique: None,
        };
    }
    let nodes: Vec<(u64, usize)> = weights.into_values().collect();
    let n = nodes.len();
    let mut compat = vec![vec![true; n]; n];
    for i in 0..n {
        for j in (i + 1)..n {
            let ok = judge.passes(nodes[i].1, nodes[j].1) && judge.passes(nodes[j].1, nodes[i].1);
            compat[i][j] = ok;
            compat[j][i] = ok;
        }
    }
    let w: Vec<u64> = nodes.iter().map(|x| x.0).collect();
    GroupOutcome {
        disagree,
        clique: Some(max_weight_clique(&w, &compat, CLIQUE_BUDGET)),
    }
}

/// The members of a group worth judging as the twin's side of a comparison: the first of
/// each class alike in answer and in the ids its session minted before it, which is all
/// [`PairJudge::passes`] reads of that side, so the others would repeat its verdicts. Many
/// sessions of one history that answered a few ways then cost the disagreement pass one
/// comparison per way, not one per session. Members in their order.
fn twin_sides(members: &[usize], entries: &[Entry<'_>], minted: &[Minted]) -> Vec<usize> {
    use std::hash::{Hash, Hasher};
    let ids_of = |m: usize| {
        entries
            .get(m)
            .and_then(|e| minted.get(e.session)?.get(..e.minted_before))
    };
    let mut classes: HashMap<(usize, u64), Vec<usize>> = HashMap::default();
    let mut sides = Vec::new();
    for &m in members {
        let (Some(e), Some(ids)) = (entries.get(m), ids_of(m)) else {
            // Out of range: kept, so it is judged (and fails) as before.
            sides.push(m);
            continue;
        };
        // The ids themselves are hashed (equal ids hash alike), not their JSON text: the hash
        // only narrows the classes, each compared in full below.
        let mut h = std::hash::BuildHasher::build_hasher(&foldhash::fast::FixedState::default());
        ids.hash(&mut h);
        let class = classes.entry((e.answer, h.finish())).or_default();
        if !class.iter().any(|&s| ids_of(s) == Some(ids)) {
            class.push(m);
            sides.push(m);
        }
    }
    sides
}

/// [`judge_group`] for every group of `split` (indices into `groups`), on the calling thread or
/// (`parallel`) over the rayon pool the caller runs in, each run of groups with the judge `make`
/// builds; outcomes by group index, so the fold does not depend on which thread judged what.
fn judge_groups<'g, F, J>(
    parallel: bool,
    split: &[usize],
    make: F,
    groups: &'g [Vec<usize>],
) -> BTreeMap<usize, GroupOutcome>
where
    F: Fn() -> J + Sync,
    J: FnMut(&'g [usize]) -> GroupOutcome,
{
    if !parallel || split.len() <= 1 {
        let mut judge = make();
        return split.iter().map(|&g| (g, judge(&groups[g]))).collect();
    }
    let judged: Vec<(usize, GroupOutcome)> = split
        .par_iter()
        .map_init(&make, |judge, &g| (g, judge(&groups[g])))
        .collect();
    judged.into_iter().collect()
}

/// Search nodes the exact clique search may visit per group before it settles for greedy.
const CLIQUE_BUDGET: u64 = 200_000;

/// What tells one recorded answer from another: status, content type, the other compared
/// headers ([`crate::judge::compared_headers`]) and body bytes (all borrowed from the
/// recordings, never copied).
type AnswerKey<'a> = (u16, Option<&'a str>, Vec<(&'static str, &'a str)>, &'a [u8]);

/// The distinct recorded answers of a run.
#[derive(Default)]
struct Answers<'a> {
    by_bytes: BTreeMap<AnswerKey<'a>, usize>,
}

impl<'a> Answers<'a> {
    /// The answer of `ex`, whose recorded body is `body`.
    fn intern(&mut self, ex: &'a wraith_recording::Exchange, body: &'a [u8]) -> usize {
        let ct = ex
            .response_header("content-type")
            .or(ex.response.content_type.as_deref());
        let next = self.by_bytes.len();
        *self
            .by_bytes
            .entry((
                ex.response.status,
                ct,
                crate::judge::compared_headers(ex),
                body,
            ))
            .or_insert(next)
    }
}

/// A distinct answer's recorded body, parsed: the replay's parse when it has one, else parsed
/// here on first need.
enum Parsed<'a> {
    Given(&'a ExpectedBody),
    Own(ExpectedBody),
}

impl<'a> Parsed<'a> {
    fn of(given: Option<&'a ExpectedBody>, ex: &wraith_recording::Exchange) -> Parsed<'a> {
        match given {
            Some(b) => Parsed::Given(b),
            None => Parsed::Own(ExpectedBody::of(ex)),
        }
    }

    fn get(&self) -> &ExpectedBody {
        match self {
            Parsed::Given(b) => b,
            Parsed::Own(b) => b,
        }
    }
}

/// (twin-side answer, recorded answer, route judging, twin-side bytes after the id mapping when
/// it changed them).
type MemoKey = (usize, usize, Option<String>, Option<Vec<u8>>);

/// Judges one recorded answer as the twin's answer against another recording, memoized by
/// [`MemoKey`].
struct PairJudge<'a, 'm> {
    index: &'a ModelIndex<'m>,
    opts: &'a DiffOptions,
    all: &'a [(bool, &'a RecordedSession)],
    entries: &'a [Entry<'a>],
    minted: &'a [Minted],
    /// Per pair of entries judged (twin side, recording): the verdict. A group's disagreement
    /// pass and its compatibility matrix ask many of the same pairs, and a pair's verdict
    /// depends on nothing else: a repeat skips even the id rewrite and serialization that
    /// [`MemoKey`] needs. Looked up only, never iterated.
    pairs: HashMap<(usize, usize), bool>,
    memo: BTreeMap<MemoKey, bool>,
    /// Every distinct answer judged so far, parsed once (either side of a comparison).
    bodies: BTreeMap<usize, Parsed<'a>>,
    /// Whether an answer holds a template placeholder (the judge's refusal rule).
    leaked: BTreeMap<usize, bool>,
    /// Per entry judged as the recording: the echo context of its request under its route.
    echoes: BTreeMap<usize, EchoContext>,
}

impl PairJudge<'_, '_> {
    /// Entry `a`'s recorded answer, with the ids its session minted earlier replaced by the
    /// ones `b`'s session minted at the same ordinals, passes `b`'s recording under `b`'s route
    /// templates.
    fn passes(&mut self, a: usize, b: usize) -> bool {
        if let Some(&v) = self.pairs.get(&(a, b)) {
            return v;
        }
        let v = self.judge_pair(a, b);
        self.pairs.insert((a, b), v);
        v
    }

    /// [`PairJudge::passes`] for a pair not judged before (other pairs' work reused through
    /// [`MemoKey`]).
    fn judge_pair(&mut self, a: usize, b: usize) -> bool {
        let (ea, eb) = (&self.entries[a], &self.entries[b]);
        if ea.answer == eb.answer {
            return true;
        }
        // Keyed by both answers, the route judging, and the answer as rewritten with the other
        // session's ids (when that changed it).
        let mut key: MemoKey = (ea.answer, eb.answer, eb.route.clone(), None);
        if ea.minted_before == 0
            && let Some(&v) = self.memo.get(&key)
        {
            return v;
        }
        let xa = &self.all[ea.session].1.exchanges[ea.exchange];
        let sb = self.all[eb.session].1;
        let xb = &sb.exchanges[eb.exchange];
        let v = if xa.response.status != xb.response.status {
            false
        } else {
            self.bodies
                .entry(ea.answer)
                .or_insert_with(|| Parsed::of(ea.parsed, xa));
            self.bodies
                .entry(eb.answer)
                .or_insert_with(|| Parsed::of(eb.parsed, xb));
            let leaked = *self.leaked.entry(ea.answer).or_insert_with(|| {
                self.bodies
                    .get(&ea.answer)
                    .is_some_and(|x| crate::judge::leaked_placeholder_in(&x.get().bytes).is_some())
            });
            let (Some(twin_side), Some(expected)) = (
                self.bodies.get(&ea.answer).map(Parsed::get),
                self.bodies.get(&eb.answer).map(Parsed::get),
            ) else {
                return false;
            };
            // The ids `a`'s session minted earlier, as `b`'s session minted them.
            let ids_a = &self.minted[ea.session][..ea.minted_before];
            let ids_b = &self.minted[eb.session][..eb.minted_before];
            let mut mapped = None;
            // `a`'s answer as a twin would give it: every header the judge compares.
            let mut headers: Vec<(String, String)> = xa
                .response_header("content-type")
                .or(xa.response.content_type.as_deref())
                .map(|c| ("content-type", c))
                .into_iter()
                .chain(crate::judge::compared_headers(xa))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let mut renamed_headers = false;
            if !ids_a.is_empty() {
                let mut map = IdMap::new();
                for (x, y) in ids_a.iter().zip(ids_b) {
                    if let Some(t) = token(x) {
                        map.assign(t, y.clone());
                    }
                }
                // Copied only when an id is rewritten (most answers name none of them).
                if let Body::Json(tree) = &twin_side.body
                    && let Some(tree) = rewritten(&map, tree)
                    && let Ok(bytes) = serde_json::to_vec(&tree)
                {
                    mapped = Some((bytes, Body::Json(tree)));
                }
                // The URLs in its headers name those ids as the body does.
                for (_, v) in &mut headers {
                    let mut value = Value::String(std::mem::take(v));
                    renamed_headers |= map.rename_recorded(&mut value);
                    if let Value::String(s) = value {
                        *v = s;
                    }
                }
            }
            // The rewritten bytes (and renamed headers) are part of the key (either implies
            // `minted_before > 0`), and the answer judged below is read from there.
            let (mapped_bytes, actual) = match mapped {
                Some((bytes, tree)) => (Some(bytes), Some(tree)),
                None => (None, None),
            };
            key.3.clone_from(&mapped_bytes);
            if renamed_headers {
                let k = key.3.get_or_insert_with(|| twin_side.bytes.clone());
                for (name, v) in &headers {
                    k.push(0);
                    k.extend_from_slice(name.as_bytes());
                    k.push(0);
                    k.extend_from_slice(v.as_bytes());
                }
            }
            if ea.minted_before > 0
                && let Some(&v) = self.memo.get(&key)
            {
                return v;
            }
            let (answer, actual): (&[u8], &Body) = match (&mapped_bytes, &actual) {
                (Some(bytes), Some(tree)) => (bytes, tree),
                _ => (&twin_side.bytes, &twin_side.body),
            };
            // The body is passed to the judge as `answer`, not copied in.
            let obs = Observed {
                status: xa.response.status,
                headers,
                body: Vec::new(),
                provenance: Some(Provenance::Recorded),
                route: eb.route.clone(),
                replay: None,
            };
            let source = format!(
                "{}/{}",
                sb.manifest.session_id, xb.correlation.exchange_index
            );
            // What `b`'s request lets an answer echo: the same for every answer `b` is judged
            // against, so built once per entry.
            let echo = self
                .echoes
                .entry(b)
                .or_insert_with(|| crate::judge::echo_context(xb, &obs));
            let quick = crate::judge::passes(
                self.index, &source, xb, expected, &obs, answer, actual, leaked, self.opts, echo,
            );
            // Debug builds (the tests) check the short judgement against the full one.
            #[cfg(debug_assertions)]
            {
                let obs = Observed {
                    body: answer.to_vec(),
                    ..obs.clone()
                };
                debug_assert_eq!(
                    quick,
                    crate::judge::judge_with_cache(
                        self.index, &source, xb, expected, &obs, self.opts, None
                    )
                    .passed(),
                    "the short judgement differs from the full one on {source}"
                );
            }
            quick
        };
        self.memo.insert(key, v);
        v
    }
}

/// Entries grouped by identical history, members in entry order, groups in order of first
/// appearance (nothing depends on the order of groups). Entry `i` starts a session when
/// `starts[i]`, else it continues entry `i - 1`'s history, so its history is that entry's group
/// plus its own step: equal exactly when both parts are equal. `spreads[i]` (of `steps[i]`)
/// only narrows the candidate groups; the step is compared in full with a member's.
fn group_histories(steps: &[HistoryStep<'_>], spreads: &[u64], starts: &[bool]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of: Vec<usize> = Vec::with_capacity(steps.len());
    let mut candidates: HashMap<(usize, u64), Vec<usize>> = HashMap::default();
    for (i, step) in steps.iter().enumerate() {
        let prev = match i.checked_sub(1) {
            Some(p) if !starts.get(i).copied().unwrap_or(true) => {
                group_of.get(p).copied().unwrap_or(usize::MAX)
            }
            _ => usize::MAX,
        };
        let spread = spreads.get(i).copied().unwrap_or(0);
        let same = candidates.entry((prev, spread)).or_default();
        let found = same.iter().copied().find(|&g| {
            groups
                .get(g)
                .and_then(|m| m.first())
                .is_some_and(|&first| steps.get(first) == Some(step))
        });
        let g = found.unwrap_or_else(|| {
            groups.push(Vec::new());
            same.push(groups.len() - 1);
            groups.len() - 1
        });
        if let Some(m) = groups.get_mut(g) {
            m.push(i);
        }
        group_of.push(g);
    }
    groups
}

/// One request of a session's history as histories are compared: its method, path, query and
/// body, with the ids the session minted before it renamed. The history of a session's request
/// `i` is its steps `0..=i`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct HistoryStep<'s> {
    pub method: Cow<'s, str>,
    pub path: Cow<'s, str>,
    pub query: Cow<'s, str>,
    pub body: Cow<'s, [u8]>,
}

impl HistoryStep<'_> {
    /// A hash of the method, path, query and the body's length and ends: equal steps spread
    /// equally, and steps are compared in full wherever spreads meet, so hashing the whole of
    /// a large upload would buy nothing.
    fn spread(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        const END: usize = 512;
        let mut h = std::hash::BuildHasher::build_hasher(&foldhash::fast::FixedState::default());
        self.method.hash(&mut h);
        self.path.hash(&mut h);
        self.query.hash(&mut h);
        let b: &[u8] = &self.body;
        b.len().hash(&mut h);
        b[..b.len().min(END)].hash(&mut h);
        b[b.len().saturating_sub(END)..].hash(&mut h);
        h.finish()
    }
}

/// The history steps of one session's requests (`method`, `path`, `query`, `body`), with the
/// ids in `minted[i]` (minted by the answer to request `i`) renamed by order of first
/// appearance. Two sessions' requests `i` share a history when their steps `0..=i` are equal.
/// Exposed for tests and tools.
pub fn history_keys(
    requests: &[wraith_engine::Request],
    minted: &[Vec<Value>],
) -> Vec<HistoryStep<'static>> {
    let mut history = History::default();
    let mut out = Vec::with_capacity(requests.len());
    for (i, r) in requests.iter().enumerate() {
        out.push(history.step(r.clone()));
        for v in minted.get(i).into_iter().flatten() {
            history.mint(v.clone());
        }
    }
    out
}

/// A recorded request's content type as [`crate::run::request_of`] gives it: its first
/// `Content-Type` header, else the recorded content type.
fn request_content_type(r: &wraith_recording::exchange::RecordedRequest) -> Option<&String> {
    r.headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        .flat_map(|(_, vs)| vs.iter())
        .next()
        .or(r.content_type.as_ref())
}

/// One session's request history as it grows: the ids minted so far.
#[derive(Default)]
struct History {
    /// Minted token → its stand-in (`\u{1}id#<ordinal>`).
    norm: IdMap,
    /// Minted ids by ordinal (order of first appearance).
    minted: Minted,
}

impl History {
    /// The step of `req`, minted ids renamed.
    fn step(&mut self, mut req: wraith_engine::Request) -> HistoryStep<'static> {
        self.norm.rewrite(&mut req);
        HistoryStep {
            method: Cow::Owned(req.method),
            path: Cow::Owned(req.path),
            query: Cow::Owned(req.query),
            body: Cow::Owned(Vec::from(req.body)),
        }
    }

    /// [`History::step`] with the request of a recorded exchange: borrowed straight from the
    /// recording while no id was minted (the rename cannot change it); else only the parts the
    /// rename reads (path, query, body and its content type) are copied into a request — the
    /// same content type [`crate::run::request_of`] would give it, so the step is the same.
    fn step_exchange<'s>(&mut self, ex: &'s wraith_recording::Exchange) -> HistoryStep<'s> {
        let r = &ex.request;
        if self.norm.is_empty() {
            return HistoryStep {
                method: Cow::Borrowed(r.method.as_str()),
                path: Cow::Borrowed(r.path.as_str()),
                query: Cow::Borrowed(r.query.as_str()),
                body: Cow::Borrowed(&r.body[..]),
            };
        }
        let ct = request_content_type(r);
        let req = wraith_engine::Request {
            method: r.method.clone(),
            path: r.path.clone(),
            query: r.query.clone(),
            headers: ct
                .map(|c| vec![("content-type".to_string(), c.clone())])
                .unwrap_or_default(),
            body: r.body.clone(),
        };
        self.step(req)
    }

    /// An id a recorded answer minted: renamed in later requests unless already known.
    fn mint(&mut self, v: Value) {
        if let Some(t) = token(&v)
            && !t.is_empty()
            && self.norm.get(&t).is_none()
        {
            self.norm
                .assign(t, Value::String(format!("\u{1}id#{}", self.minted.len())));
            self.minted.push(v);
        }
    }
}

/// `v` with every whole value `map` maps rewritten, as [`IdMap::rewrite_value`] rewrites it,
/// or `None` when that would change nothing: a copy of the tree is made only when an id is
/// rewritten, and then only of the parts that are not rewritten anyway.
fn rewritten(map: &IdMap, v: &Value) -> Option<Value> {
    // A number's decimal form starts with a digit or `-`: when no token does, no number is
    // looked up (each lookup would first format the number).
    let numbers = map
        .recorded_tokens()
        .any(|t| t.starts_with(|c: char| c == '-' || c.is_ascii_digit()));
    rewritten_with(map, numbers, v, None)
}

/// [`rewritten`], where `numbers` is false only when no token of `map` can be a number's
/// decimal form.
fn rewritten_with(map: &IdMap, numbers: bool, v: &Value, key: Option<&str>) -> Option<Value> {
    match v {
        // `IdMap::rewrite_json`: a string equal to a token becomes the mapped value's text.
        Value::String(s) => map.get_named(s, key).and_then(token).map(Value::String),
        // A number whose decimal form is a token stays a number when the mapped value is (or
        // reads as) one.
        Value::Number(_) if !numbers => None,
        Value::Number(n) => {
            number_text(n, |t| map.get_named(t, key)).map(|answered| match answered {
                Value::Number(_) => answered.clone(),
                Value::String(s) => match s.parse::<serde_json::Number>() {
                    Ok(n) => Value::Number(n),
                    Err(_) => Value::String(s.clone()),
                },
                other => other.clone(),
            })
        }
        Value::Array(a) => {
            let (first, new) = a
                .iter()
                .enumerate()
                .find_map(|(i, x)| rewritten_with(map, numbers, x, key).map(|n| (i, n)))?;
            let mut out = Vec::with_capacity(a.len());
            out.extend(a[..first].iter().cloned());
            out.push(new);
            for x in &a[first + 1..] {
                out.push(rewritten_with(map, numbers, x, key).unwrap_or_else(|| x.clone()));
            }
            Some(Value::Array(out))
        }
        Value::Object(m) => {
            let (first, new) = m
                .iter()
                .enumerate()
                .find_map(|(i, (k, x))| rewritten_with(map, numbers, x, Some(k)).map(|n| (i, n)))?;
            let mut new = Some(new);
            let mut out = serde_json::Map::with_capacity(m.len());
            for (i, (k, x)) in m.iter().enumerate() {
                let value = match i.cmp(&first) {
                    std::cmp::Ordering::Less => x.clone(),
                    std::cmp::Ordering::Equal => new.take().unwrap_or_else(|| x.clone()),
                    std::cmp::Ordering::Greater => {
                        rewritten_with(map, numbers, x, Some(k)).unwrap_or_else(|| x.clone())
                    }
                };
                out.insert(k.clone(), value);
            }
            Some(Value::Object(out))
        }
        Value::Null | Value::Bool(_) => None,
    }
}

/// `f` of `n`'s decimal form, the text `n.to_string()` gives, written on the stack for an
/// integer (a float is formatted as `to_string` formats it).
fn number_text<R>(n: &serde_json::Number, f: impl FnOnce(&str) -> R) -> R {
    let (negative, magnitude) = match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => (false, u),
        (None, Some(i)) => (i < 0, i.unsigned_abs()),
        (None, None) => return f(&n.to_string()),
    };
    let mut buf = [0u8; 21];
    let mut at = buf.len();
    let mut rest = magnitude;
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if negative {
        at -= 1;
        buf[at] = b'-';
    }
    match std::str::from_utf8(&buf[at..]) {
        Ok(text) => f(text),
        Err(_) => f(&n.to_string()),
    }
}

fn token(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn has_generated(node: &Node) -> bool {
    match node {
        Node::Hole(h) => matches!(
            h.source,
            HoleKind::Generated { .. } | HoleKind::Counter { .. }
        ),
        Node::Const { .. } => false,
        Node::Object { fields } => fields.iter().any(|f| has_generated(&f.value)),
        Node::Array(ArrayNode::Tuple { items }) => items.iter().any(has_generated),
        Node::Array(ArrayNode::List {
            representatives, ..
        }) => representatives.iter().any(has_generated),
    }
}

/// Scalars of `v` at `Generated`/`Counter` positions of `node`, in document order. A list's
/// elements are walked under every representative.
fn collect_generated(node: &Node, v: &Value, out: &mut Vec<Value>) {
    match (node, v) {
        (Node::Hole(h), Value::String(_) | Value::Number(_))
            if matches!(
                h.source,
                HoleKind::Generated { .. } | HoleKind::Counter { .. }
            ) =>
        {
            out.push(v.clone());
        }
        (Node::Object { fields }, Value::Object(m)) => {
            // `m`'s next entry is tried before the hashed lookup: a recorded body usually lists
            // its keys in its template's order (keys are unique: an equal key is the entry
            // `get` finds).
            let mut next_in_m = m.iter().peekable();
            for f in fields {
                let found = match next_in_m.next_if(|(k, _)| **k == f.key) {
                    Some((_, x)) => Some(x),
                    None => m.get(&f.key),
                };
                if let Some(x) = found {
                    collect_generated(&f.value, x, out);
                }
            }
        }
        (Node::Array(ArrayNode::Tuple { items }), Value::Array(a)) => {
            for (t, x) in items.iter().zip(a) {
                collect_generated(t, x, out);
            }
        }
        (
            Node::Array(ArrayNode::List {
                representatives, ..
            }),
            Value::Array(a),
        ) => {
            for x in a {
                for t in representatives {
                    collect_generated(t, x, out);
                }
            }
        }
        _ => {}
    }
}

/// The heaviest set of pairwise compatible nodes: its weight, and whether the search was exact
/// (branch and bound within `budget` visited nodes) or fell back to greedy (heaviest first, kept
/// when compatible with everything kept).
pub fn max_weight_clique(weights: &[u64], compat: &[Vec<bool>], budget: u64) -> (u64, bool) {
    let n = weights.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| weights[b].cmp(&weights[a]).then(a.cmp(&b)));
    let greedy = greedy_clique(weights, compat);
    let mut best = greedy;
    let mut visited = 0u64;
    fn search(
        cand: &[usize],
        cur: u64,
        weights: &[u64],
        compat: &[Vec<bool>],
        best: &mut u64,
        visited: &mut u64,
        budget: u64,
    ) -> bool {
        *visited += 1;
        if *visited > budget {
            return false;
        }
        if cur > *best {
            *best = cur;
        }
        let mut rest: u64 = cand.iter().map(|&c| weights[c]).sum();
        for (i, &v) in cand.iter().enumerate() {
            if cur + rest <= *best {
                return true;
            }
            let next: Vec<usize> = cand[i + 1..]
                .iter()
                .copied()
                .filter(|&u| compat[v][u])
                .collect();
            if !search(
                &next,
                cur + weights[v],
                weights,
                compat,
                best,
                visited,
                budget,
            ) {
                return false;
            }
            rest -= weights[v];
        }
        true
    }
    let exact = search(&order, 0, weights, compat, &mut best, &mut visited, budget);
    if exact {
        (best, true)
    } else {
        (greedy.max(best), false)
    }
}

/// Greedy clique: nodes by weight (heaviest first, then index), each kept when compatible with
/// every node kept so far.
pub fn greedy_clique(weights: &[u64], compat: &[Vec<bool>]) -> u64 {
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| weights[b].cmp(&weights[a]).then(a.cmp(&b)));
    let mut kept: Vec<usize> = Vec::new();
    for v in order {
        if kept.iter().all(|&k| compat[k][v]) {
            kept.push(v);
        }
    }
    kept.iter().map(|&k| weights[k]).sum()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use wraith_recording::Exchange;

    proptest! {
        /// The stack-written decimal form of a number is its `to_string`.
        #[test]
        fn number_text_is_to_string(u in any::<u64>(), i in any::<i64>(), f in -1e30f64..1e30) {
            for n in [
                serde_json::Number::from(u),
                serde_json::Number::from(i),
                serde_json::Number::from(i64::MIN),
                serde_json::Number::from(u64::MAX),
                serde_json::Number::from(0u64),
            ]
            .into_iter()
            .chain(serde_json::Number::from_f64(f))
            {
                prop_assert_eq!(number_text(&n, str::to_string), n.to_string());
            }
        }
    }

    /// Leaves drawn from a few values, so that trees often hold the mapped tokens.
    fn id_tree() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            Just(json!(true)),
            Just(json!("a1")),
            Just(json!("b2")),
            Just(json!("c3")),
            Just(json!(7)),
            Just(json!(8)),
            Just(json!(2.5)),
        ];
        leaf.prop_recursive(4, 40, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::vec(("[a-d]", inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// Sessions (with the ids each minted) and one group's members: (session, answer, ids
    /// minted before) per member, drawn from few values so that classes repeat.
    fn group_members() -> impl Strategy<Value = (Vec<Minted>, Vec<(usize, usize, usize)>)> {
        let ids = prop_oneof![Just(json!("a1")), Just(json!("b2")), Just(json!(7))];
        (
            proptest::collection::vec(proptest::collection::vec(ids, 0..3), 1..5),
            proptest::collection::vec((0usize..5, 0usize..3, 0usize..4), 0..30),
        )
    }

    fn entry(session: usize, answer: usize, minted_before: usize) -> Entry<'static> {
        Entry {
            session,
            exchange: 0,
            route: None,
            answer,
            minted_before,
            report_pos: None,
            parsed: None,
        }
    }

    proptest! {
        /// The twin sides of a group are, in member order, the first member of each class of
        /// equal answer and equal ids minted before it (as the judge reads them); a member
        /// whose ids are out of range is kept as its own side.
        #[test]
        fn twin_sides_keep_the_first_member_of_each_class((minted, members) in group_members()) {
            let entries: Vec<Entry<'_>> =
                members.iter().map(|&(s, a, k)| entry(s, a, k)).collect();
            let all: Vec<usize> = (0..entries.len()).collect();
            let key = |m: usize| {
                let e = &entries[m];
                minted.get(e.session)
                    .and_then(|s| s.get(..e.minted_before))
                    .map(|ids| (e.answer, ids.to_vec()))
            };
            // The simple definition: a member is a side unless an earlier one is alike.
            let want: Vec<usize> = all
                .iter()
                .copied()
                .filter(|&m| key(m).is_none() || (0..m).all(|p| key(p) != key(m)))
                .collect();
            prop_assert_eq!(twin_sides(&all, &entries, &minted), want);
        }
    }

    #[test]
    fn many_sessions_answering_two_ways_leave_two_sides() {
        let minted: Vec<Minted> = vec![vec![json!("a1")]; 20_000];
        let entries: Vec<Entry<'_>> = (0..20_000).map(|s| entry(s, s % 2, 1)).collect();
        let all: Vec<usize> = (0..entries.len()).collect();
        assert_eq!(twin_sides(&all, &entries, &minted), vec![0, 1]);
    }

    proptest! {
        /// The copy-on-rewrite walk gives the tree [`IdMap::rewrite_value`] gives a copy (same
        /// values, same key order, same bytes), and `None` exactly when that changes nothing.
        #[test]
        fn rewritten_equals_rewriting_a_copy_in_place(
            tree in id_tree(),
            pairs in proptest::collection::vec(
                (
                    prop_oneof![Just(json!("a1")), Just(json!("b2")), Just(json!(7))],
                    prop_oneof![Just(json!("z9")), Just(json!(70)), Just(json!("71")), Just(json!("x"))],
                ),
                0..3,
            ),
        ) {
            let mut map = IdMap::new();
            for (x, y) in &pairs {
                if let Some(t) = token(x) {
                    map.assign(t, y.clone());
                }
            }
            let mut copy = tree.clone();
            let changed = map.rewrite_value(&mut copy);
            let cow = rewritten(&map, &tree);
            prop_assert_eq!(cow.is_some(), changed);
            if let Some(cow) = cow {
                prop_assert_eq!(serde_json::to_vec(&cow)?, serde_json::to_vec(&copy)?);
            }
        }
    }

    fn req(method: &str, path: &str, body: &str) -> wraith_engine::Request {
        wraith_engine::Request {
            method: method.into(),
            path: path.into(),
            query: String::new(),
            headers: vec![("content-type".into(), "application/json".into())],
            body: bytes::Bytes::from(body.to_string()),
        }
    }

    #[test]
    fn histories_rename_minted_ids_by_first_appearance() {
        // Two sessions create a note, each answered with its own id, then read and delete it.
        let session = |id: &str, n: i64| {
            (
                vec![
                    req("POST", "/notes", r#"{"text":"hi"}"#),
                    req("GET", &format!("/notes/{id}"), ""),
                    req(
                        "POST",
                        "/links",
                        &format!(r#"{{"note":"{id}","n_id":{n}}}"#),
                    ),
                    req("DELETE", &format!("/notes/{id}"), ""),
                ],
                vec![vec![json!(id), json!(n)], vec![], vec![], vec![]],
            )
        };
        let (ra, ma) = session("note_aaa", 7);
        let (rb, mb) = session("note_bbb", 9);
        assert_eq!(history_keys(&ra, &ma), history_keys(&rb, &mb));
        // The same path naming an id that was not minted is another history.
        let (rc, _) = session("note_ccc", 7);
        let kc = history_keys(&rc, &[vec![], vec![], vec![], vec![]]);
        let ka = history_keys(&ra, &ma);
        assert_eq!(ka[0], kc[0], "the first requests are identical");
        assert_ne!(ka[1], kc[1]);
        // Order of first appearance, not the values: swapping which id is read differs.
        let two = |first: &str, second: &str| {
            vec![
                req("POST", "/notes", "{}"),
                req("GET", &format!("/notes/{first}"), ""),
                req("GET", &format!("/notes/{second}"), ""),
            ]
        };
        let minted = [vec![json!("x1"), json!("x2")], vec![], vec![]];
        assert_ne!(
            history_keys(&two("x1", "x2"), &minted),
            history_keys(&two("x2", "x1"), &minted)
        );
        // Each step extends the previous one: a longer history never equals a shorter one.
        assert_ne!(ka[0], ka[1]);
    }

    /// The grouping the SHA-256 history chain made: entries keyed by their whole history.
    fn groups_by_whole_history(
        steps: &[HistoryStep<'_>],
        starts: &[bool],
    ) -> std::collections::BTreeSet<Vec<usize>> {
        let mut by: BTreeMap<Vec<&HistoryStep<'_>>, Vec<usize>> = BTreeMap::new();
        let mut history: Vec<&HistoryStep<'_>> = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            if starts[i] {
                history.clear();
            }
            history.push(s);
            by.entry(history.clone()).or_default().push(i);
        }
        by.into_values().collect()
    }

    proptest! {
        /// Grouping by the previous entry's group and the compared step puts together exactly
        /// the entries with equal whole histories, with real spreads and with every spread
        /// colliding (then only the full comparison separates them).
        #[test]
        fn histories_group_as_by_whole_history(
            sessions in proptest::collection::vec(
                proptest::collection::vec((0u8..2, 0u8..3, proptest::collection::vec(0u8..2, 0..3)), 1..5),
                1..12,
            ),
        ) {
            let mut steps = Vec::new();
            let mut starts = Vec::new();
            for s in &sessions {
                for (x, (m, p, body)) in s.iter().enumerate() {
                    starts.push(x == 0);
                    steps.push(HistoryStep {
                        method: Cow::Owned(if *m == 0 { "GET" } else { "POST" }.to_string()),
                        path: Cow::Owned(format!("/p{p}")),
                        query: Cow::Borrowed(""),
                        body: Cow::Owned(body.clone()),
                    });
                }
            }
            let want = groups_by_whole_history(&steps, &starts);
            let spreads: Vec<u64> = steps.iter().map(HistoryStep::spread).collect();
            let got: std::collections::BTreeSet<Vec<usize>> =
                group_histories(&steps, &spreads, &starts).into_iter().collect();
            prop_assert_eq!(&got, &want);
            let colliding = vec![0u64; steps.len()];
            let got: std::collections::BTreeSet<Vec<usize>> =
                group_histories(&steps, &colliding, &starts).into_iter().collect();
            prop_assert_eq!(&got, &want);
        }
    }

    fn recorded(path: &str, headers: &[(&str, &str)], ct: Option<&str>, body: &str) -> Exchange {
        let mut h = wraith_recording::exchange::Headers::default();
        for (k, v) in headers {
            h.entry((*k).to_string())
                .or_default()
                .push((*v).to_string());
        }
        let request = wraith_recording::exchange::RecordedRequest {
            method: "POST".into(),
            path: path.into(),
            query: "note=n1&x=1".into(),
            headers: h,
            body: body.as_bytes().to_vec().into(),
            content_type: ct.map(str::to_string),
            origin: Some("https://other.example:8443".into()),
        };
        crate::test_support::exchange(request, 200)
    }

    #[test]
    fn input_names_are_query_names_and_body_key_pointers_not_values() {
        let names = |ct: Option<&str>, body: &str| -> Vec<String> {
            input_names(&recorded("/notes", &[], ct, body))
                .into_iter()
                .collect()
        };
        // The query is `note=n1&x=1`.
        assert_eq!(
            names(
                Some("application/json"),
                r#"{"title": "t", "poll": {"options": [{"a": 1}, {"b": 2}]}, "a/b": 0}"#
            ),
            [
                "/a~1b",
                "/poll",
                "/poll/options",
                "/poll/options/*/a",
                "/poll/options/*/b",
                "/title",
                "?note",
                "?x"
            ]
        );
        // Other values, the same names.
        assert_eq!(
            names(Some("application/json"), r#"{"title": "u"}"#),
            names(Some("application/json"), r#"{"title": "t"}"#)
        );
        assert_eq!(
            names(
                Some("application/x-www-form-urlencoded"),
                "status=hi&visibility=public"
            ),
            ["/status", "/visibility", "?note", "?x"]
        );
        assert_eq!(names(None, ""), ["?note", "?x"]);
    }

    #[test]
    fn history_of_a_recorded_exchange_equals_the_history_of_its_engine_request() {
        // The short path reads only the parts the rename reads; the key must be the one the
        // whole engine request gives, before and after ids were minted, whichever header or
        // field carries the content type (a multipart body is never rewritten, a form is).
        let cases = [
            recorded(
                "/notes/n1",
                &[],
                Some("application/json"),
                r#"{"note":"n1"}"#,
            ),
            recorded(
                "/notes/n1",
                &[("Content-Type", "multipart/form-data; b=x")],
                Some("application/json"),
                r#"{"note":"n1"}"#,
            ),
            recorded(
                "/notes/n1",
                &[("content-type", "application/x-www-form-urlencoded")],
                None,
                "note=n1",
            ),
            recorded(
                "/notes/n1",
                &[("X-Other", "1")],
                Some("text/plain"),
                "note=n1",
            ),
            recorded(
                "/notes/n1",
                &[("Content-Type", "multipart/form-data")],
                None,
                "note=n1",
            ),
            recorded("/n1", &[], None, ""),
        ];
        let mut short = History::default();
        let mut whole = History::default();
        for round in 0..2 {
            for ex in &cases {
                assert_eq!(
                    short.step_exchange(ex),
                    whole.step(crate::run::request_of(ex)),
                    "round {round}, {:?}",
                    ex.request
                );
            }
            short.mint(json!("n1"));
            whole.mint(json!("n1"));
        }
    }

    #[test]
    fn generated_values_are_collected_from_every_list_element() {
        let id = Node::hole(
            HoleKind::Counter { name: "id".into() },
            wraith_model::JsonType::Number,
            Vec::new(),
            8000,
        );
        let item = Node::object([("id", id), ("name", Node::constant(json!("n")))]);
        let tpl = Node::Array(ArrayNode::List {
            representatives: vec![item],
            target_length: 2,
            discriminator: None,
        });
        let mut out = Vec::new();
        collect_generated(&tpl, &json!([{"id": 5, "name": "n"}, {"id": 6}]), &mut out);
        assert_eq!(out, vec![json!(5), json!(6)]);
        // Values of another type than a scalar are not ids.
        let mut none = Vec::new();
        collect_generated(&tpl, &json!([{"id": {"a": 1}}]), &mut none);
        assert!(none.is_empty());
        assert!(has_generated(&tpl));
    }

    fn brute_force(weights: &[u64], compat: &[Vec<bool>]) -> u64 {
        let n = weights.len();
        let mut best = 0;
        for mask in 0u32..(1 << n) {
            let members: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
            let clique = members
                .iter()
                .all(|&a| members.iter().all(|&b| a == b || compat[a][b]));
            if clique {
                best = best.max(members.iter().map(|&i| weights[i]).sum());
            }
        }
        best
    }

    fn graph() -> impl Strategy<Value = (Vec<u64>, Vec<Vec<bool>>)> {
        (1usize..9).prop_flat_map(|n| {
            (
                proptest::collection::vec(1u64..20, n),
                proptest::collection::vec(any::<bool>(), n * n),
            )
                .prop_map(move |(w, bits)| {
                    let mut c = vec![vec![true; n]; n];
                    for i in 0..n {
                        for j in (i + 1)..n {
                            c[i][j] = bits[i * n + j];
                            c[j][i] = bits[i * n + j];
                        }
                    }
                    (w, c)
                })
        })
    }

    proptest! {
        #[test]
        fn exact_clique_equals_brute_force_and_greedy_never_exceeds_it((w, c) in graph()) {
            let want = brute_force(&w, &c);
            prop_assert_eq!(max_weight_clique(&w, &c, CLIQUE_BUDGET), (want, true));
            prop_assert!(greedy_clique(&w, &c) <= want);
            // A budget too small to finish still returns a real clique, flagged not exact.
            let (tiny, exact) = max_weight_clique(&w, &c, 1);
            prop_assert!(tiny <= want);
            prop_assert!(tiny >= greedy_clique(&w, &c));
            prop_assert!(!exact || tiny == want);
        }
    }

    #[test]
    fn incompatible_answers_split_a_group() {
        // a and b are compatible, c with neither: the heaviest set is {a, b} or {c}.
        let c = vec![
            vec![true, true, false],
            vec![true, true, false],
            vec![false, false, true],
        ];
        assert_eq!(max_weight_clique(&[3, 2, 4], &c, CLIQUE_BUDGET), (5, true));
        assert_eq!(max_weight_clique(&[3, 2, 6], &c, CLIQUE_BUDGET), (6, true));
    }
}
