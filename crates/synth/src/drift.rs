//! Drift between recordings: where a route's newest recording run answers in another shape (or
//! status) than its earlier recordings ([`Route::drift`](wraith_model::Route::drift)).
//!
//! This wraith refreshes a twin by recording into it again (`wraith record`, `wraith import`
//! add sessions), so drift is measured between recordings over time, never against a live
//! upstream. Per route:
//!
//! - **Runs.** A session's time is its manifest start (`start_time_us`); a session without one
//!   (0) cannot be placed in time and takes no part. A **recording run** is a stretch of
//!   recording without a long pause: the twin's sessions ordered by start time, a new run
//!   beginning wherever the next session started more than the run gap after the one before
//!   it ([`SynthOptions::run_gap_us`](crate::SynthOptions::run_gap_us), `[generate] run_gap`;
//!   [`RUN_GAP_US`], one hour, by default). So two runs recorded on one day are two runs, and one run spanning midnight
//!   is one. Runs are the twin's, not a route's (a route's sessions may be far apart inside one
//!   run that recorded other routes in between). The route's **newest run** is the latest run
//!   holding one of its sessions; its **earlier** recordings are its sessions of every earlier
//!   run. The order of sessions recorded together says nothing about the API changing between
//!   them (an import stamps a whole suite with one time), so a route recorded in one run only
//!   has no drift.
//! - **Shape** (2xx JSON answers only: an error's body depends on the error). Every object in
//!   an answer is an instance of its position (array elements pooled as `[]`), and each of its
//!   keys a field of that position:
//!   - `field_removed`: a field present in every earlier instance of its position and in no
//!     instance of the newest run;
//!   - `additive_optional_field`: present in every instance of the newest run and in no
//!     earlier one;
//!   - `type_changed`: the field's JSON type (`null` aside: a missing value is a value) was one
//!     in every earlier answer and another in every newer one.
//!
//!   The position must occur in at least [`MIN_EARLIER`] earlier answers and one newer answer,
//!   so one odd answer is never drift; values never are.
//!
//!   A field whose name the client sent in a request of a session of either side (a body field
//!   or query name, or a segment of one: `data[alerts][poll]`) is left out: it is there because
//!   it was asked for (a subscription's alerts, a database's settings), which is the request's
//!   doing, not the API's.
//! - **Status** (`status_code_shift`): the same concrete request (the exact-replay key, and the
//!   request headers other than transport ones: who asks and how decides the answer too)
//!   answered with one status by at least [`MIN_EARLIER`] earlier sessions and with another by
//!   every session of the newest run that sent it. Each session counts its first answer to the
//!   request, and only when no write of the session came before it (after one, the answer may
//!   follow the session's own state: a record it created or deleted); transient answers (429,
//!   502, 503, 504: the client retries) are skipped.
//!
//! Pure: the same recordings give the same findings, sorted by kind then position.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::pointer::escape_token;
use wraith_model::{DriftKind, RequestKey, RouteDrift};

use crate::observe::Obs;
use crate::routes::RouteGroup;

/// Earlier answers a finding needs at least (and one newer answer).
pub const MIN_EARLIER: u64 = 2;

/// The default run gap: a pause between two consecutive sessions' starts longer than this
/// (one hour, in microseconds) begins a new recording run. A suite recorded in one sitting starts its
/// sessions seconds or minutes apart; a refresh is recorded hours or days later.
pub const RUN_GAP_US: u64 = 3_600_000_000;

/// The twin's recording runs: session id → (run number from 0, the run's first start in unix
/// microseconds), a new run wherever a start follows the one before by more than `gap_us`.
/// Sessions without a time (0) are in no run.
pub fn recording_runs<'s>(
    started_us: &BTreeMap<&'s str, u64>,
    gap_us: u64,
) -> BTreeMap<&'s str, (u32, u64)> {
    let mut order: Vec<(u64, &'s str)> = started_us
        .iter()
        .filter(|(_, us)| **us > 0)
        .map(|(s, us)| (*us, *s))
        .collect();
    order.sort_unstable();
    let mut runs = BTreeMap::new();
    let mut run = 0u32;
    let mut run_start = 0u64;
    let mut prev: Option<u64> = None;
    for (us, session) in order {
        match prev {
            None => run_start = us,
            Some(p) if us - p > gap_us => {
                run += 1;
                run_start = us;
            }
            Some(_) => {}
        }
        prev = Some(us);
        runs.insert(session, (run, run_start));
    }
    runs
}

/// The drift of every route, in `groups` order. `started_us` maps a session id to its
/// manifest start time (unix microseconds; 0 or absent: unknown); `gap_us` splits them into
/// runs ([`recording_runs`]).
/// `upload_names`: each route's literal upload names (`crate::exact::upload_names`), in route
/// order, so requests group under the keys exact replay gives them.
pub fn route_drift(
    groups: &[RouteGroup],
    obs: &[Obs<'_>],
    started_us: &BTreeMap<&str, u64>,
    gap_us: u64,
    upload_names: &[BTreeSet<String>],
) -> Vec<Vec<RouteDrift>> {
    let runs = recording_runs(started_us, gap_us);
    let mut sent = SentNames::default();
    groups
        .iter()
        .zip(upload_names)
        .map(|(g, names)| drift_of(g, obs, &runs, &mut sent, names))
        .collect()
}

/// The names each session's requests sent (body field and query names, split into their
/// segments: `data[alerts][poll]` and `/data/alerts/poll` both name `data`, `alerts`, `poll`),
/// built on first use: only routes recorded in two runs or more need them.
#[derive(Default)]
struct SentNames<'s> {
    by_session: Option<BTreeMap<&'s str, BTreeSet<String>>>,
}

impl<'s> SentNames<'s> {
    fn of(&mut self, obs: &[Obs<'s>]) -> &BTreeMap<&'s str, BTreeSet<String>> {
        self.by_session.get_or_insert_with(|| {
            let mut by: BTreeMap<&'s str, BTreeSet<String>> = BTreeMap::new();
            for o in obs {
                let names = by.entry(o.session).or_default();
                let fields = o.req_fields.iter().map(|(p, _)| p.as_str());
                let query = o.query.iter().map(|(k, _)| k.as_str());
                for name in fields.chain(query) {
                    for token in name.split(['/', '[', ']']).filter(|t| !t.is_empty()) {
                        if token.parse::<u64>().is_err() {
                            names.insert(token.replace("~1", "/").replace("~0", "~"));
                        }
                    }
                }
            }
            by
        })
    }
}

/// Which run an answer belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    Earlier,
    Newer,
}

fn drift_of<'s>(
    group: &RouteGroup,
    obs: &[Obs<'s>],
    recording_runs: &BTreeMap<&str, (u32, u64)>,
    sent: &mut SentNames<'s>,
    upload_names: &BTreeSet<String>,
) -> Vec<RouteDrift> {
    let run_of = |o: &Obs<'_>| recording_runs.get(o.session).copied();
    let Some((latest, latest_start)) = group.obs.iter().filter_map(|i| run_of(&obs[*i])).max()
    else {
        return Vec::new();
    };
    let runs: Vec<(usize, Run)> = group
        .obs
        .iter()
        .filter_map(|i| {
            let (r, _) = run_of(&obs[*i])?;
            Some((
                *i,
                if r == latest {
                    Run::Newer
                } else {
                    Run::Earlier
                },
            ))
        })
        .collect();
    if !runs.iter().any(|(_, r)| *r == Run::Earlier) {
        return Vec::new();
    }
    // Whole seconds: the run's start names it, sub-second precision says nothing more.
    let since =
        crate::values::rfc3339_from_us(latest_start / 1_000_000 * 1_000_000).unwrap_or_default();

    let mut out = shape_drift(&runs, obs);
    if !out.is_empty() {
        // A field the client named in its requests is there because it was asked for (a
        // subscription's alerts, a database's engine settings): the request, not the API,
        // decided it.
        let sent = sent.of(obs);
        let named = |run: Run, key: &str| {
            runs.iter()
                .filter(|(_, r)| *r == run)
                .any(|(i, _)| sent.get(obs[*i].session).is_some_and(|n| n.contains(key)))
        };
        out.retain(|d| {
            let key = d.at.rsplit('/').next().unwrap_or("");
            let key = key.replace("~1", "/").replace("~0", "~");
            !(named(Run::Earlier, &key) || named(Run::Newer, &key))
        });
    }
    out.extend(status_drift(&runs, obs, upload_names));
    for d in &mut out {
        d.since.clone_from(&since);
    }
    out.sort_by(|a, b| (a.kind, &a.at).cmp(&(b.kind, &b.at)));
    out
}

/// Shape tallies of one side's 2xx JSON answers.
#[derive(Default)]
struct Shapes {
    /// Object position → (instances, answers holding one).
    parents: BTreeMap<String, (u64, u64)>,
    /// Field pointer → instances of its position holding it.
    present: BTreeMap<String, u64>,
    /// Position → (non-null JSON types seen, answers holding a non-null value there).
    types: BTreeMap<String, (BTreeSet<&'static str>, u64)>,
}

impl Shapes {
    fn add(&mut self, body: &Value) {
        let mut parents = BTreeSet::new();
        let mut typed = BTreeSet::new();
        let mut ptr = String::new();
        self.walk(body, &mut ptr, &mut parents, &mut typed);
        for p in parents {
            if let Some(t) = self.parents.get_mut(&p) {
                t.1 += 1;
            }
        }
        for p in typed {
            if let Some(t) = self.types.get_mut(&p) {
                t.1 += 1;
            }
        }
    }

    fn walk(
        &mut self,
        v: &Value,
        ptr: &mut String,
        parents: &mut BTreeSet<String>,
        typed: &mut BTreeSet<String>,
    ) {
        if let Some(t) = json_type(v) {
            self.types.entry(ptr.clone()).or_default().0.insert(t);
            typed.insert(ptr.clone());
        }
        match v {
            Value::Object(m) => {
                self.parents.entry(ptr.clone()).or_default().0 += 1;
                parents.insert(ptr.clone());
                for (k, child) in m {
                    let len = ptr.len();
                    ptr.push('/');
                    ptr.push_str(&escape_token(k));
                    *self.present.entry(ptr.clone()).or_default() += 1;
                    self.walk(child, ptr, parents, typed);
                    ptr.truncate(len);
                }
            }
            Value::Array(a) => {
                let len = ptr.len();
                ptr.push_str("/[]");
                for child in a {
                    self.walk(child, ptr, parents, typed);
                }
                ptr.truncate(len);
            }
            _ => {}
        }
    }

    /// (instances, answers) of the position holding field `f`.
    fn parent_of(&self, f: &str) -> (u64, u64) {
        let parent = f.rsplit_once('/').map_or("", |(p, _)| p);
        self.parents.get(parent).copied().unwrap_or((0, 0))
    }
}

fn json_type(v: &Value) -> Option<&'static str> {
    match v {
        Value::Null => None,
        Value::Bool(_) => Some("boolean"),
        Value::Number(_) => Some("number"),
        Value::String(_) => Some("string"),
        Value::Array(_) => Some("array"),
        Value::Object(_) => Some("object"),
    }
}

fn shape_drift(runs: &[(usize, Run)], obs: &[Obs<'_>]) -> Vec<RouteDrift> {
    let mut earlier = Shapes::default();
    let mut newer = Shapes::default();
    for (i, run) in runs {
        let o = &obs[*i];
        if !(200..300).contains(&o.status) {
            continue;
        }
        let Some(body) = o.resp_json() else { continue };
        match run {
            Run::Earlier => earlier.add(&body),
            Run::Newer => newer.add(&body),
        }
    }
    let finding = |kind, at: &str, e: u64, n: u64| RouteDrift {
        kind,
        at: at.to_string(),
        earlier: None,
        newer: None,
        earlier_answers: e,
        newer_answers: n,
        since: String::new(),
    };
    let mut out = Vec::new();
    for (f, &held) in &earlier.present {
        let (e_inst, e_ans) = earlier.parent_of(f);
        let (_, n_ans) = newer.parent_of(f);
        if e_ans >= MIN_EARLIER
            && n_ans >= 1
            && held == e_inst
            && newer.present.get(f).copied().unwrap_or(0) == 0
        {
            out.push(finding(DriftKind::FieldRemoved, f, e_ans, n_ans));
        }
    }
    for (f, &held) in &newer.present {
        let (_, e_ans) = earlier.parent_of(f);
        let (n_inst, n_ans) = newer.parent_of(f);
        if e_ans >= MIN_EARLIER
            && n_ans >= 1
            && held == n_inst
            && earlier.present.get(f).copied().unwrap_or(0) == 0
        {
            out.push(finding(DriftKind::AdditiveOptionalField, f, e_ans, n_ans));
        }
    }
    for (p, (e_types, e_ans)) in &earlier.types {
        let Some((n_types, n_ans)) = newer.types.get(p) else {
            continue;
        };
        if *e_ans >= MIN_EARLIER && e_types.len() == 1 && n_types.len() == 1 && e_types != n_types {
            let mut d = finding(DriftKind::TypeChanged, p, *e_ans, *n_ans);
            d.earlier = e_types.first().map(|t| (*t).to_string());
            d.newer = n_types.first().map(|t| (*t).to_string());
            out.push(d);
        }
    }
    out
}

/// Answers a client retries: not the API's answer to the request.
fn transient(status: u16) -> bool {
    matches!(status, 429 | 502 | 503 | 504)
}

/// Request headers that say nothing about which answer the API gives (transport, client
/// identification, tracing); every other header is part of the request's identity.
const TRANSPORT_HEADERS: &[&str] = &[
    "accept-encoding",
    "connection",
    "content-length",
    "date",
    "host",
    "keep-alive",
    "te",
    "traceparent",
    "tracestate",
    "transfer-encoding",
    "user-agent",
    "x-request-id",
];

fn is_read(method: &str) -> bool {
    matches!(method, "GET" | "HEAD" | "OPTIONS")
}

fn status_drift(
    runs: &[(usize, Run)],
    obs: &[Obs<'_>],
    upload_names: &BTreeSet<String>,
) -> Vec<RouteDrift> {
    // Sessions' first write (session → (index, position)): an answer after it may follow the
    // session's own state, not the API.
    let mut first_write: BTreeMap<&str, (u64, usize)> = BTreeMap::new();
    let sessions: BTreeSet<&str> = runs.iter().map(|(i, _)| obs[*i].session).collect();
    for o in obs {
        if sessions.contains(o.session) && !is_read(&o.method) {
            first_write
                .entry(o.session)
                .or_insert((o.index, o.position));
        }
    }
    // (request, its headers) → session → (run, first non-transient status).
    type Firsts<'s> = BTreeMap<&'s str, (Run, u16)>;
    type Key = (RequestKey, Vec<(String, String)>);
    let mut by_key: BTreeMap<Key, (String, Firsts<'_>)> = BTreeMap::new();
    for (i, run) in runs {
        let o = &obs[*i];
        if transient(o.status)
            || first_write
                .get(o.session)
                .is_some_and(|w| *w < (o.index, o.position))
        {
            continue;
        }
        let mut headers: Vec<(String, String)> =
            o.ex.request
                .headers
                .iter()
                .filter(|(n, _)| !TRANSPORT_HEADERS.contains(&n.to_ascii_lowercase().as_str()))
                .map(|(n, v)| (n.to_ascii_lowercase(), v.join(", ")))
                .collect();
        headers.sort();
        let key = o.request_key(upload_names);
        let entry = by_key.entry((key, headers)).or_insert_with_key(|(k, _)| {
            let mut label = format!("{} {}", o.method, k.path);
            if !k.query.is_empty() {
                label.push('?');
                label.push_str(&k.query);
            }
            if let Some(b) = &k.body {
                label.push('#');
                label.extend(b.chars().take(16));
            }
            (label, BTreeMap::new())
        });
        // Observations come in (session, index) order: the first one kept is the first answer.
        entry.1.entry(o.session).or_insert((*run, o.status));
    }
    let mut out = Vec::new();
    for (label, firsts) in by_key.into_values() {
        let side = |want: Run| -> (BTreeSet<u16>, u64) {
            let mut statuses = BTreeSet::new();
            let mut n = 0;
            for (run, status) in firsts.values() {
                if *run == want {
                    statuses.insert(*status);
                    n += 1;
                }
            }
            (statuses, n)
        };
        let (e_st, e_n) = side(Run::Earlier);
        let (n_st, n_n) = side(Run::Newer);
        if e_n >= MIN_EARLIER && n_n >= 1 && e_st.len() == 1 && n_st.len() == 1 && e_st != n_st {
            out.push(RouteDrift {
                kind: DriftKind::StatusCodeShift,
                at: label,
                earlier: e_st.first().map(u16::to_string),
                newer: n_st.first().map(u16::to_string),
                earlier_answers: e_n,
                newer_answers: n_n,
                since: String::new(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: u64 = RUN_GAP_US;

    #[test]
    fn a_pause_longer_than_the_gap_between_starts_begins_a_new_run() {
        let started: BTreeMap<&str, u64> = [
            ("late", 10 * HOUR + 1),
            ("a", HOUR),
            ("b", 2 * HOUR),
            ("c", 3 * HOUR + 1),
            ("untimed", 0),
        ]
        .into_iter()
        .collect();
        let runs = recording_runs(&started, RUN_GAP_US);
        assert_eq!(runs.get("a"), Some(&(0, HOUR)));
        // Exactly the gap is still the same run.
        assert_eq!(runs.get("b"), Some(&(0, HOUR)));
        assert_eq!(runs.get("c"), Some(&(1, 3 * HOUR + 1)));
        assert_eq!(runs.get("late"), Some(&(2, 10 * HOUR + 1)));
        assert_eq!(runs.get("untimed"), None);
    }

    #[test]
    fn a_shorter_run_gap_splits_one_sitting_into_runs() {
        let minute = 60_000_000;
        let started: BTreeMap<&str, u64> = [("a", minute), ("b", 6 * minute), ("c", 40 * minute)]
            .into_iter()
            .collect();
        let one_run = recording_runs(&started, RUN_GAP_US);
        assert!(one_run.values().all(|(run, _)| *run == 0), "{one_run:?}");
        let runs = recording_runs(&started, 20 * minute);
        assert_eq!(runs.get("a"), Some(&(0, minute)));
        assert_eq!(runs.get("b"), Some(&(0, minute)));
        assert_eq!(runs.get("c"), Some(&(1, 40 * minute)));
    }
}
