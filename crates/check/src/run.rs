//! The replay driver: every recorded session, in order, each in a fresh namespace of the twin,
//! every answer judged and folded into a [`Report`]. In memory the sessions may be replayed on
//! several threads ([`replay_parallel`]); their outcomes are folded in session order, so the
//! report does not depend on the thread count.
//!
//! The twin is behind the [`Twin`] trait so the same driver runs in process ([`InMemoryTwin`],
//! the very `Engine` that `serve` uses) and against a running twin over HTTP (the binary
//! implements that one: this crate does no IO).

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use wraith_engine::{Engine, Request};
use wraith_model::Model;
use wraith_recording::{Exchange, RecordedSession};

use crate::idmap::IdMap;
use crate::judge::{
    AnswerMemo, DiffCache, DiffOptions, ExpectedBody, ModelIndex, Observed, ReplayClaim, Verdict,
    generated_pairs_memo, judge_in_session,
};
use crate::report::{ExchangeFacts, Report, ReportBuilder, Thresholds};

/// Something that answers requests in named namespaces.
pub trait Twin {
    /// Answer `req` in the namespace `session` (the `X-Wraith-Session` value).
    fn call(&mut self, session: &str, req: &Request) -> Result<Observed, String>;
    /// [`Twin::call`], with the JSON tree of the answer's body when the twin holds it anyway:
    /// exactly what parsing the answer's body gives (the judge takes it instead of parsing
    /// the bytes again). The default has none.
    fn call_with_tree(
        &mut self,
        session: &str,
        req: &Request,
    ) -> Result<(Observed, Option<serde_json::Value>), String> {
        self.call(session, req).map(|obs| (obs, None))
    }
    /// The driver is done with a namespace (the in-memory twin frees it).
    fn end_session(&mut self, _session: &str) {}
    /// What the Lua handler bound to the recorded route `req` matches would answer in
    /// `session`, without changing the session (the in-memory twin asks the engine; a twin
    /// over HTTP asks its `POST /__wraith/session/{id}/probe` control endpoint). Called before
    /// [`Twin::call`] with the same request.
    fn probe_handler(&mut self, _session: &str, _req: &Request) -> Option<Observed> {
        None
    }
}

/// The twin in process: the same [`Engine`] `wraith serve` drives.
pub struct InMemoryTwin<'e> {
    engine: &'e Engine,
    /// A handler is bound to some recorded route: worth probing.
    probe: bool,
}

impl<'e> InMemoryTwin<'e> {
    pub fn new(engine: &'e Engine) -> InMemoryTwin<'e> {
        InMemoryTwin {
            engine,
            probe: engine.has_recorded_route_handlers(),
        }
    }
}

/// The engine's answer as the judge sees it.
fn observed(r: wraith_engine::Response) -> Observed {
    Observed {
        status: r.status,
        headers: r.headers,
        body: r.body.to_vec(),
        provenance: Some(r.provenance),
        route: r.route,
        // The in-process claim is the same runtime flag the server stamps the header from.
        replay: r.replay.map(|class| ReplayClaim {
            class,
            outbound_policy_applied: r.outbound_policy_applied,
        }),
    }
}

/// `req` with its method spelled as synth models a recorded one: uppercase (synth files a
/// recorded `delete` under `DELETE`). The engine matches methods as served, case-sensitively,
/// so a recording made with another spelling is replayed as the route modelled from it.
pub fn modelled_method(req: &Request) -> std::borrow::Cow<'_, Request> {
    if req.method.bytes().any(|b| b.is_ascii_lowercase()) {
        let mut req = req.clone();
        req.method.make_ascii_uppercase();
        std::borrow::Cow::Owned(req)
    } else {
        std::borrow::Cow::Borrowed(req)
    }
}

impl Twin for InMemoryTwin<'_> {
    fn call(&mut self, session: &str, req: &Request) -> Result<Observed, String> {
        let req = modelled_method(req);
        Ok(observed(self.engine.handle(Some(session), &req)))
    }

    /// The engine's tree of the body it just serialized (or parsed), see
    /// [`Engine::handle_with_tree`].
    fn call_with_tree(
        &mut self,
        session: &str,
        req: &Request,
    ) -> Result<(Observed, Option<serde_json::Value>), String> {
        let req = modelled_method(req);
        let (resp, tree) = self.engine.handle_with_tree(Some(session), &req);
        Ok((observed(resp), tree))
    }

    fn probe_handler(&mut self, session: &str, req: &Request) -> Option<Observed> {
        if !self.probe {
            return None;
        }
        let req = modelled_method(req);
        // A session the namespace cap refuses has no handler answer to judge.
        self.engine
            .probe_handler(Some(session), &req)
            .ok()
            .flatten()
            .map(observed)
    }

    fn end_session(&mut self, session: &str) {
        // Frees the namespace so long runs never reach the namespace cap; a session that was
        // never created is not an error worth reporting here.
        let _ = self.engine.delete_session(session);
    }
}

/// The engine request for a recorded exchange: method, path, query, body and headers as
/// recorded (names lowercased). A request recorded against another origin carries that
/// origin's authority as its `host`, which is how the engine tells other-origin routes apart.
pub fn request_of(ex: &Exchange) -> Request {
    let mut headers: Vec<(String, String)> = Vec::with_capacity(ex.request.headers.len());
    for (k, vs) in &ex.request.headers {
        let k = k.to_ascii_lowercase();
        for v in vs {
            headers.push((k.clone(), v.clone()));
        }
    }
    if let Some(origin) = &ex.request.origin {
        let authority = origin.split_once("://").map_or(origin.as_str(), |(_, a)| a);
        headers.retain(|(k, _)| k != "host");
        headers.push(("host".to_string(), authority.to_string()));
    }
    if let Some(ct) = &ex.request.content_type
        && !headers.iter().any(|(k, _)| k == "content-type")
    {
        headers.push(("content-type".to_string(), ct.clone()));
    }
    Request {
        method: ex.request.method.clone(),
        path: ex.request.path.clone(),
        query: ex.request.query.clone(),
        headers,
        body: ex.request.body.clone(),
    }
}

/// An authored route (`lua/routes.toml`): never replayed nor scored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthoredRoute {
    pub method: String,
    /// `/v3/assets/:param`.
    pub path: String,
}

impl AuthoredRoute {
    fn matches(&self, method: &str, path: &str) -> bool {
        if !self.method.eq_ignore_ascii_case(method) {
            return false;
        }
        crate::coverage::template_matches(&self.path, path)
    }
}

/// One check run.
pub struct CheckRun<'a> {
    pub twin_name: &'a str,
    pub model: &'a Model,
    /// Sessions to replay, in order.
    pub sessions: &'a [&'a RecordedSession],
    pub diff: DiffOptions,
    pub thresholds: Thresholds,
    /// Namespaces are `<prefix><recorded session id>`.
    pub namespace_prefix: String,
    pub authored: Vec<AuthoredRoute>,
    /// The authored-output gate: `[handlers] deviation_policy` and `[[deviations]]`.
    pub authored_gate: crate::authored::AuthoredGate,
    /// `in_memory` or `target`.
    pub mode: &'a str,
    pub target: Option<&'a str>,
}

/// A failure to obtain an answer at all (not a divergence): the run stops.
#[derive(Debug, thiserror::Error)]
#[error(
    "the twin did not answer exchange {session}/{exchange} ({method} {path}): {message}; \
     check that the twin is running and reachable"
)]
pub struct TwinCallError {
    pub session: String,
    pub exchange: u64,
    pub method: String,
    pub path: String,
    pub message: String,
}

/// The recorded side of a run, parsed once: every recorded response body, per session and
/// exchange, in the order of the sessions it was prepared from. Preparing is setup, like reading
/// the recordings: [`replay_prepared`] then judges answers without parsing a recording again.
/// A body recorded many times (a catalog every session reads first) is parsed and held once.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    /// Every distinct recorded body, parsed, in order of first appearance.
    distinct: Vec<ExpectedBody>,
    /// Per session, per exchange: its body's index in `distinct`.
    bodies: Vec<Vec<usize>>,
}

impl Prepared {
    /// The parsed recorded body of exchange `exchange` (position in its session's `exchanges`)
    /// of session `session` (position in the sessions prepared from), if prepared.
    pub fn body(&self, session: usize, exchange: usize) -> Option<&ExpectedBody> {
        let i = *self.bodies.get(session)?.get(exchange)?;
        self.distinct.get(i)
    }
}

/// Parse every recorded response body of `sessions` once, on the rayon pool the caller runs in
/// (rayon's global pool outside one); the result does not depend on the threads.
pub fn prepare(sessions: &[&RecordedSession]) -> Prepared {
    use rayon::prelude::*;
    use std::hash::BuildHasher;
    // Each body's bytes (server frames joined) and a hash of them, sessions side by side.
    let hasher = foldhash::fast::FixedState::default();
    let mut joined: Vec<Vec<(u64, Vec<u8>)>> = sessions
        .par_iter()
        .map(|s| {
            s.exchanges
                .iter()
                .map(|ex| {
                    let bytes = ex.response_body();
                    (hasher.hash_one(&bytes), bytes)
                })
                .collect()
        })
        .collect();
    // Distinct bodies in order of first appearance; equal hashes are compared byte for byte.
    let mut first_of: std::collections::HashMap<u64, Vec<(usize, usize, usize)>> =
        std::collections::HashMap::new();
    let mut firsts: Vec<(usize, usize)> = Vec::new();
    let mut bodies: Vec<Vec<usize>> = Vec::with_capacity(joined.len());
    for (si, exchanges) in joined.iter().enumerate() {
        let mut own = Vec::with_capacity(exchanges.len());
        for (xi, (hash, bytes)) in exchanges.iter().enumerate() {
            let same = first_of.entry(*hash).or_default();
            let known = same
                .iter()
                .find(|(s, x, _)| joined[*s][*x].1 == *bytes)
                .map(|(_, _, d)| *d);
            let d = known.unwrap_or_else(|| {
                let d = firsts.len();
                firsts.push((si, xi));
                same.push((si, xi, d));
                d
            });
            own.push(d);
        }
        bodies.push(own);
    }
    drop(first_of);
    let taken: Vec<Vec<u8>> = firsts
        .iter()
        .map(|&(si, xi)| std::mem::take(&mut joined[si][xi].1))
        .collect();
    drop(joined);
    let distinct = taken.into_par_iter().map(ExpectedBody::of_bytes).collect();
    Prepared { distinct, bodies }
}

/// [`prepare`] on a rayon pool of `jobs` threads (`--jobs`), but no more threads than there are
/// sessions: a pool is built whole, so an outsized `jobs` would cost its threads for nothing.
pub fn prepare_parallel(sessions: &[&RecordedSession], jobs: NonZeroUsize) -> Prepared {
    on_threads(jobs.get().min(sessions.len().max(1)), || prepare(sessions))
}

/// Replay every session and build the report. `progress` is called once per exchange.
pub fn replay(
    run: &CheckRun<'_>,
    twin: &mut dyn Twin,
    progress: &mut dyn FnMut(),
) -> Result<Report, TwinCallError> {
    replay_prepared(run, &prepare(run.sessions), twin, progress)
}

/// [`replay`] with the recordings already parsed by [`prepare`] from `run.sessions`. An
/// exchange `prepared` does not cover (or whose recorded body length differs) is parsed on the
/// spot.
pub fn replay_prepared(
    run: &CheckRun<'_>,
    prepared: &Prepared,
    twin: &mut dyn Twin,
    progress: &mut dyn FnMut(),
) -> Result<Report, TwinCallError> {
    let index = ModelIndex::new(run.model);
    let mut cache = DiffCache::default();
    let mut b = report_builder(run);
    let mut parsed: Vec<Vec<(usize, ExpectedBody)>> = vec![Vec::new(); run.sessions.len()];
    for (si, slot) in parsed.iter_mut().enumerate() {
        let mut outcome = replay_session(run, &index, prepared, si, twin, &mut cache, progress)?;
        *slot = std::mem::take(&mut outcome.parsed);
        fold_session(&mut b, run.sessions[si], outcome);
    }
    Ok(finish_report_indexed(run, &index, b, prepared, &parsed, 1))
}

/// The empty report of `run`, set up as every replay driver starts it (one place, so the
/// sequential and the parallel run cannot drift apart).
pub fn report_builder(run: &CheckRun<'_>) -> ReportBuilder {
    let mut b = ReportBuilder::new(run.thresholds);
    b.set_deviation_policy(run.authored_gate.policy);
    b
}

/// Close the report of `run`: the scores, then the causes of every failure and the ceiling
/// ([`crate::causes::annotate`], folded after the replay in session order, so every driver
/// and any `--jobs` give the same bytes).
pub fn finish_report(run: &CheckRun<'_>, b: ReportBuilder) -> Report {
    finish_report_parsed(run, b, &Prepared::default(), &[], 1)
}

/// [`finish_report`] reusing the recorded bodies the replay parsed: those of `prepared`, and
/// `parsed[s]` (the [`SessionOutcome::parsed`] of session `s`), so the causes step parses no
/// recording again; its comparisons run on up to `jobs` threads. The report is the same bytes
/// as [`finish_report`]'s.
pub fn finish_report_parsed(
    run: &CheckRun<'_>,
    b: ReportBuilder,
    prepared: &Prepared,
    parsed: &[Vec<(usize, ExpectedBody)>],
    jobs: usize,
) -> Report {
    let index = ModelIndex::new(run.model);
    finish_report_indexed(run, &index, b, prepared, parsed, jobs)
}

/// [`finish_report_parsed`] with the model's index the replay built.
fn finish_report_indexed(
    run: &CheckRun<'_>,
    index: &ModelIndex<'_>,
    b: ReportBuilder,
    prepared: &Prepared,
    parsed: &[Vec<(usize, ExpectedBody)>],
    jobs: usize,
) -> Report {
    let mut report = b.finish(run.twin_name, run.mode, run.target);
    let lookup = |si: usize, xi: usize| -> Option<&ExpectedBody> {
        prepared.body(si, xi).or_else(|| {
            let own = parsed.get(si)?;
            own.binary_search_by_key(&xi, |(x, _)| *x)
                .ok()
                .and_then(|i| own.get(i))
                .map(|(_, b)| b)
        })
    };
    crate::causes::annotate_indexed(
        &mut report,
        index,
        run.sessions,
        &[],
        &run.diff,
        &lookup,
        jobs,
    );
    report
}

/// How many sessions to replay at once when the caller does not say: one per available core.
pub fn default_jobs() -> NonZeroUsize {
    std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
}

/// `f` on a rayon pool of `jobs` threads, so the parallel work inside it runs on `jobs` threads
/// (`--jobs`): the pool the caller already runs in when it has that many, else a new one. Should
/// the system refuse the threads, `f` runs where it is called (its parallel work then on rayon's
/// global pool): nothing computed here depends on the thread count.
pub(crate) fn on_threads<R: Send>(jobs: usize, f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() && rayon::current_num_threads() == jobs {
        return f();
    }
    match rayon::ThreadPoolBuilder::new().num_threads(jobs).build() {
        Ok(pool) => pool.install(f),
        Err(_) => f(),
    }
}

/// [`replay_prepared`] on a rayon pool of up to `jobs` threads (built once for the run; the
/// causes step runs on it too), each thread with its own twin from `make_twin` (built on that
/// thread) and its own [`DiffCache`]. Threads take the next unreplayed session in session order;
/// outcomes are folded into the report in session order as they become available, so the
/// report is the very one the sequential run builds — byte for byte — given a twin whose
/// answers in one namespace do not depend on what other namespaces did or when (the in-memory
/// [`Engine`] keeps all answer-shaping state per namespace; see `docs/conformance.md`).
/// `jobs == 1` (or a single session) is the sequential run on the calling thread.
///
/// `progress` is called once per exchange, from whichever thread replays it. On a twin failure
/// no new session is started and the failure of the earliest session in session order is
/// returned: the same one the sequential run stops at, since every session before it has been
/// replayed by then. A panic on any thread is raised again on the calling thread.
pub fn replay_parallel<T: Twin>(
    run: &CheckRun<'_>,
    prepared: &Prepared,
    jobs: NonZeroUsize,
    make_twin: &(dyn Fn() -> T + Sync),
    progress: &(dyn Fn() + Sync),
) -> Result<Report, TwinCallError> {
    let n = run.sessions.len();
    let workers = jobs.get().min(n);
    if workers <= 1 {
        let mut twin = make_twin();
        return replay_prepared(run, prepared, &mut twin, &mut || progress());
    }
    on_threads(workers, || {
        let index = ModelIndex::new(run.model);
        // Sessions are handed out in order, so every session before a taken one is taken too.
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let take = || {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            let si = next.fetch_add(1, Ordering::Relaxed);
            (si < n).then_some(si)
        };
        let folded = Mutex::new(InOrder {
            b: report_builder(run),
            pending: BTreeMap::new(),
            next: 0,
            parsed: vec![Vec::new(); n],
            failed: None,
        });
        // Every thread of the pool replays sessions until none is left (its twin is built when
        // it takes its first one), and folds what its outcome makes ready.
        rayon::broadcast(|_| {
            let mut twin: Option<T> = None;
            let mut cache = DiffCache::default();
            while let Some(si) = take() {
                let twin = twin.get_or_insert_with(make_twin);
                let r = replay_session(run, &index, prepared, si, twin, &mut cache, &mut || {
                    progress()
                });
                if r.is_err() {
                    stop.store(true, Ordering::Relaxed);
                }
                // A poisoned lock means another thread panicked; that panic is raised once
                // every thread is done, so what is folded here no longer matters.
                let mut folded = folded.lock().unwrap_or_else(PoisonError::into_inner);
                if folded.add(run, si, r) {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        });
        let folded = folded.into_inner().unwrap_or_else(PoisonError::into_inner);
        match folded.failed {
            Some(e) => Err(e),
            None => Ok(finish_report_indexed(
                run,
                &index,
                folded.b,
                prepared,
                &folded.parsed,
                workers,
            )),
        }
    })
}

/// The report of a parallel run as its sessions' outcomes arrive, in completion order: folded
/// in session order, those that arrived early waiting in `pending`.
struct InOrder {
    b: ReportBuilder,
    pending: BTreeMap<usize, Result<SessionOutcome, TwinCallError>>,
    /// The next session to fold.
    next: usize,
    /// The recorded bodies each folded session's replay parsed (for the causes step).
    parsed: Vec<Vec<(usize, ExpectedBody)>>,
    /// The first failure in session order: the run ends there.
    failed: Option<TwinCallError>,
}

impl InOrder {
    /// Take the outcome of session `si` of `run` and fold every outcome it makes ready. True
    /// once the run has failed.
    fn add(
        &mut self,
        run: &CheckRun<'_>,
        si: usize,
        r: Result<SessionOutcome, TwinCallError>,
    ) -> bool {
        if self.failed.is_some() {
            return true;
        }
        self.pending.insert(si, r);
        while let Some(r) = self.pending.remove(&self.next) {
            match r {
                Ok(mut outcome) => {
                    if let Some(p) = self.parsed.get_mut(self.next) {
                        *p = std::mem::take(&mut outcome.parsed);
                    }
                    if let Some(session) = run.sessions.get(self.next) {
                        fold_session(&mut self.b, session, outcome);
                    }
                }
                Err(e) => {
                    self.failed = Some(e);
                    self.pending.clear();
                    return true;
                }
            }
            self.next += 1;
        }
        false
    }
}

/// What replaying one recorded session produced, exchange by exchange in recorded order. It
/// owns everything it needs from the twin, so a session can be replayed apart from the report
/// (on another thread) and folded in later with [`fold_session`].
#[derive(Debug)]
pub struct SessionOutcome {
    /// The namespace the session was replayed in.
    pub namespace: String,
    /// One step per recorded exchange, in order.
    pub steps: Vec<SessionStep>,
    /// Requests sent with recorded ids replaced by the ids the twin answered earlier in the
    /// session ([`crate::idmap`]).
    pub requests_rewritten: u64,
    /// Recorded ids the twin answered with two different values (the latest was used).
    pub id_ambiguities: u64,
    /// The recorded bodies this replay parsed (those `prepared` did not cover), by position in
    /// the session's `exchanges`, ascending: kept for the causes step
    /// ([`finish_report_parsed`]), which would otherwise parse them again.
    pub parsed: Vec<(usize, ExpectedBody)>,
}

/// One recorded exchange of a [`SessionOutcome`].
#[derive(Debug)]
pub enum SessionStep {
    /// Not replayed, with the reason (the report's `skipped` key).
    Skipped(&'static str),
    /// Replayed and judged.
    Judged {
        /// Position of the exchange in its session's `exchanges`.
        exchange: usize,
        actual_status: u16,
        provenance: Option<&'static str>,
        replay_claim: bool,
        verdict: Verdict,
        /// The authored-output judgement of the answer (see [`crate::authored`]).
        authored: crate::authored::AuthoredOutcome,
    },
}

/// Replay session `si` of `run` in its own fresh namespace and judge every answer. Depends only
/// on the session, the model and the twin's answers in that namespace: `cache` only saves work
/// (a reused diff is exactly the one the walk would produce), so any cache gives the same
/// outcome. The namespace is ended before returning.
pub fn replay_session(
    run: &CheckRun<'_>,
    index: &ModelIndex<'_>,
    prepared: &Prepared,
    si: usize,
    twin: &mut dyn Twin,
    cache: &mut DiffCache,
    progress: &mut dyn FnMut(),
) -> Result<SessionOutcome, TwinCallError> {
    let s = run.sessions[si];
    let sid = &s.manifest.session_id;
    let ns = format!("{}{}", run.namespace_prefix, sid);
    let mut steps = Vec::with_capacity(s.exchanges.len());
    // Ids flow like a real client's: recorded ids in later requests become the twin's.
    let mut ids = IdMap::new();
    let mut requests_rewritten = 0u64;
    let mut parsed = Vec::new();
    for (xi, ex) in s.exchanges.iter().enumerate() {
        progress();
        let idx = ex.correlation.exchange_index;
        let source = format!("{sid}/{idx}");
        if index.route_of_source(&source).is_none()
            && run
                .authored
                .iter()
                .any(|a| a.matches(&ex.request.method, &ex.request.path))
        {
            steps.push(SessionStep::Skipped("authored_route"));
            continue;
        }
        let mut req = request_of(ex);
        // The request's route, found once and only when a short segment asks.
        let route = std::cell::OnceCell::new();
        let segment_kind = |position: usize| {
            let route = route.get_or_init(|| {
                index.route_for(
                    &ex.request.method,
                    &ex.request.path,
                    ex.request.origin.as_deref(),
                )
            });
            index.segment_kind((*route)?, &ex.request.path, position)
        };
        let did = ids.rewrite_with_kinds(&mut req, &segment_kind);
        requests_rewritten += u64::from(did);
        // Echo holes are judged against the request actually sent: the twin echoes the id it
        // was given, which is the one it answered earlier, not the recorded one.
        let sent_ex;
        let judged_ex = if did {
            sent_ex = as_sent(ex, &req);
            &sent_ex
        } else {
            ex
        };
        // Before the call: the handler sees the session as it was before this request.
        let probe = twin.probe_handler(&ns, &req);
        let (mut obs, tree) = twin
            .call_with_tree(&ns, &req)
            .map_err(|message| TwinCallError {
                session: sid.clone(),
                exchange: idx,
                method: ex.request.method.clone(),
                path: ex.request.path.clone(),
                message,
            })?;
        // `X-Wraith-Route` names the template only; a request recorded against another origin
        // matched that origin's route, which the report names with its origin.
        if let (Some(origin), Some(route)) = (&ex.request.origin, obs.route.as_mut()) {
            *route = wraith_model::route_label(route, Some(origin));
        }
        let mut parsed_here = None;
        let expected: &ExpectedBody = match prepared.body(si, xi) {
            Some(e) if e.bytes.len() == recorded_body_len(ex) => e,
            _ => parsed_here.insert(ExpectedBody::of(ex)),
        };
        // What the judge learns of the answer, reused by the id-flow step below.
        // The twin's own tree of its answer is the parse of the answer (see
        // `Twin::call_with_tree`): the judge, the symbol check and the id-flow step take it
        // instead of parsing the bytes.
        let mut memo = AnswerMemo::with_answer(tree);
        // The recording is judged in the session's names: the ids the twin answered earlier.
        let mut verdict = judge_in_session(
            index,
            &source,
            judged_ex,
            ex,
            expected,
            &obs,
            &run.diff,
            Some(&mut *cache),
            Some(&mut memo),
            Some(&ids),
        );
        // Ids the twin answered earlier in the session must read back as answered.
        crate::symbols::check_memo(
            index,
            judged_ex,
            expected,
            &obs,
            &ids,
            &run.diff,
            &mut verdict,
            &mut memo,
        );
        ids.learn(generated_pairs_memo(
            index,
            judged_ex,
            expected,
            &obs,
            &mut *cache,
            &mut memo,
        ));
        let authored = crate::authored::judge_exchange(
            &run.authored_gate,
            index,
            ex,
            expected,
            &obs,
            probe.as_ref(),
            &mut verdict,
        );
        steps.push(SessionStep::Judged {
            authored,
            exchange: xi,
            actual_status: obs.status,
            provenance: obs.provenance.map(|p| p.as_str()),
            replay_claim: obs.replay.is_some(),
            verdict,
        });
        if let Some(b) = parsed_here {
            parsed.push((xi, b));
        }
    }
    twin.end_session(&ns);
    Ok(SessionOutcome {
        namespace: ns,
        steps,
        requests_rewritten,
        id_ambiguities: ids.ambiguities(),
        parsed,
    })
}

/// Fold the outcome of replaying `session` into the report, exchange by exchange.
pub fn fold_session(b: &mut ReportBuilder, session: &RecordedSession, outcome: SessionOutcome) {
    let sid = &session.manifest.session_id;
    b.begin_session(sid, &outcome.namespace);
    b.note_id_flow(outcome.requests_rewritten, outcome.id_ambiguities);
    for step in outcome.steps {
        match step {
            SessionStep::Skipped(reason) => b.skip(reason),
            SessionStep::Judged {
                exchange,
                actual_status,
                provenance,
                replay_claim,
                verdict,
                authored,
            } => {
                let Some(ex) = session.exchanges.get(exchange) else {
                    continue;
                };
                b.add_authored(sid, ex.correlation.exchange_index, authored);
                b.add(
                    ExchangeFacts {
                        session: sid,
                        exchange: ex.correlation.exchange_index,
                        method: &ex.request.method,
                        path: &ex.request.path,
                        expected_status: ex.response.status,
                        actual_status,
                        provenance,
                        replay_claim,
                    },
                    verdict,
                );
            }
        }
    }
}

/// The recorded exchange with the request that was actually sent (path, query and body after
/// the id rewrite): what echo holes are judged against.
fn as_sent(ex: &Exchange, req: &Request) -> Exchange {
    let mut sent = ex.clone();
    sent.request.path.clone_from(&req.path);
    sent.request.query.clone_from(&req.query);
    sent.request.body = req.body.clone();
    sent
}

/// Length of the recorded response body, without joining the frames: a cheap guard that a
/// prepared body belongs to the exchange it is used for.
pub(crate) fn recorded_body_len(ex: &Exchange) -> usize {
    ex.frames
        .iter()
        .filter(|f| f.direction == "server")
        .map(|f| f.body.len())
        .sum()
}

/// Split sessions for `--holdout K`: every K-th session (the K-th, 2K-th, … in session order)
/// is held out; the rest train. `k < 2` holds nothing out.
pub fn holdout_split(
    sessions: &[RecordedSession],
    k: u32,
) -> (Vec<&RecordedSession>, Vec<&RecordedSession>) {
    let mut train = Vec::new();
    let mut held = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        if k >= 2 && (i as u64 + 1).is_multiple_of(u64::from(k)) {
            held.push(s);
        } else {
            train.push(s);
        }
    }
    (train, held)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn upload(body: bytes::Bytes) -> Exchange {
        let request = wraith_recording::exchange::RecordedRequest {
            method: "POST".into(),
            path: "/v1/uploads".into(),
            query: String::new(),
            headers: Default::default(),
            body,
            content_type: Some("application/octet-stream".into()),
            origin: None,
        };
        crate::test_support::exchange(request, 201)
    }

    #[test]
    fn requests_built_from_a_recording_share_its_body_instead_of_copying_it() {
        let recorded = bytes::Bytes::from(vec![7u8; 1 << 20]);
        let ex = upload(recorded.clone());
        let req = request_of(&ex);
        assert_eq!(req.body, recorded);
        assert_eq!(req.body.as_ptr(), ex.request.body.as_ptr());
        let sent = as_sent(&ex, &req);
        assert_eq!(sent.request.body.as_ptr(), ex.request.body.as_ptr());
    }
}
