//! Recording sessions while the proxy runs: which session an exchange belongs to, when a session
//! is finalized, and persisting (scrub, then write) finished exchanges.
//!
//! Lifecycle:
//! - The first exchange after start, after `/__wraith/new-session` or after an idle timeout opens
//!   a new session (its id is taken from the time that exchange started). Its folder appears only
//!   with its first written exchange, so a session that recorded nothing leaves nothing.
//! - An exchange belongs to the session that was current when its request arrived. A session that
//!   is rotated out (new-session, idle) while exchanges are still streaming stays open until the
//!   last of them is written; only then is its manifest finalized. The idle timer never rotates
//!   a session that has exchanges in flight (a long stream pins the session open).
//! - Shutdown finalizes every open session.
//!
//! - Exchanges are numbered in the order their response bodies ended (for sequential traffic,
//!   the order of the requests).
//!
//! Locking: `Sessions::inner` is taken before a slot's `writer` lock, and `writer` before a
//! slot's `queue` lock, never the other way round; none is held across an `.await` (writing runs
//! on the blocking pool).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use tokio::sync::Notify;
use wraith_recording::Exchange;
use wraith_recording::scrub::Scrubber;
use wraith_recording::session::{SessionMeta, SessionWriter, new_session_id};

use crate::now_us;

/// A finalized session, as reported by the control plane and the run summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    pub session_id: String,
    pub exchange_count: u64,
    /// Every recorded answer was an error (status >= 400): worth a warning, since a twin built
    /// from it can only say no.
    pub only_failures: bool,
    /// False when some of the session's exchanges could not be written (a full disk): its
    /// manifest then says `complete: false`, and `wraith lint` warns of it.
    pub complete: bool,
    /// Exchanges of the session that could not be written, so are not in it.
    pub lost_exchanges: u64,
}

/// A session that is still open, as shown by `/__wraith/info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpenSession {
    pub session_id: String,
    /// Exchanges written so far.
    pub exchange_count: u64,
    /// Exchanges whose request arrived but whose recording is not written yet.
    pub in_flight: usize,
    /// False once rotated out; it is finalized when its last in-flight exchange is written.
    pub current: bool,
}

enum WriterState {
    /// No exchange written yet.
    Idle,
    Writing(SessionWriter),
    /// Finalized (or given up); nothing more may be written.
    Done,
}

/// One session while it is open.
struct Slot {
    id: String,
    /// Exchanges begun in this session and not yet written (or dropped).
    outstanding: AtomicUsize,
    /// Rotated out: finalize as soon as `outstanding` reaches zero.
    closing: AtomicBool,
    written: AtomicU64,
    /// Written exchanges whose status was below 400.
    successes: AtomicU64,
    /// Exchanges that could not be written (the session is then finalized incomplete).
    lost: AtomicU64,
    /// Finished exchanges waiting to be written, in the order they finished. Numbering follows
    /// this order, so sequential traffic is recorded in request order.
    queue: Mutex<VecDeque<Exchange>>,
    writer: Mutex<WriterState>,
}

struct Inner {
    current: Option<Arc<Slot>>,
    /// Every slot not yet finalized, in opening order (includes `current`).
    open: Vec<Arc<Slot>>,
    finalized: Vec<SessionSummary>,
    last_activity: Instant,
    rng: ChaCha8Rng,
}

/// The session registry of one running recorder.
pub(crate) struct Sessions {
    sessions_dir: PathBuf,
    tags: Vec<String>,
    scrubber: Scrubber,
    /// Largest decoded body recorded decoded (see
    /// [`decode_recorded_bodies`](crate::exchange::decode_recorded_bodies)).
    max_body_bytes: usize,
    /// Written into each manifest as `proxy_mode`.
    mode: crate::mode::ProxyMode,
    inner: Mutex<Inner>,
    /// Woken whenever an exchange is settled (written or dropped).
    settled: Notify,
    /// Persistence failures (each already logged), reported by the run summary.
    errors: Mutex<Vec<String>>,
    /// Set when shutdown's drain timeout ran out and the exchanges still in flight are cut.
    cutting: AtomicBool,
    /// Exchanges cut while their response streamed: handed over for writing, truncated.
    cut_recorded: AtomicUsize,
    /// Exchanges cut before the upstream's response head arrived: nothing to record.
    cut_unrecorded: AtomicUsize,
    /// Exchanges whose response body was longer than the recorder keeps: recorded cut at the
    /// limit, truncated.
    cut_at_limit: AtomicUsize,
}

/// What cutting the exchanges in flight at the drain timeout did to them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CutTally {
    /// Cut while streaming their response: recorded with `truncated: true`.
    pub(crate) recorded: usize,
    /// Cut while still waiting for the upstream's response head: not recorded.
    pub(crate) unrecorded: usize,
}

impl Sessions {
    pub(crate) fn new(
        sessions_dir: PathBuf,
        tags: Vec<String>,
        scrubber: Scrubber,
        max_body_bytes: usize,
        mode: crate::mode::ProxyMode,
    ) -> Sessions {
        // Session ids only need to differ between sessions; wall time and the process id are
        // enough entropy for the 24-bit suffix and keep this crate free of OS RNG plumbing.
        let seed = now_us() ^ (u64::from(std::process::id()) << 40);
        Sessions {
            sessions_dir,
            tags,
            scrubber,
            max_body_bytes,
            mode,
            inner: Mutex::new(Inner {
                current: None,
                open: Vec::new(),
                finalized: Vec::new(),
                last_activity: Instant::now(),
                rng: ChaCha8Rng::seed_from_u64(seed),
            }),
            settled: Notify::new(),
            errors: Mutex::new(Vec::new()),
            cutting: AtomicBool::new(false),
            cut_recorded: AtomicUsize::new(0),
            cut_unrecorded: AtomicUsize::new(0),
            cut_at_limit: AtomicUsize::new(0),
        }
    }

    /// From now on, every exchange that ends without its whole response is counted as cut at
    /// shutdown (see [`Sessions::cut_tally`]).
    pub(crate) fn start_cut(&self) {
        self.cutting.store(true, Ordering::SeqCst);
    }

    /// The exchanges cut since [`Sessions::start_cut`], by what became of them.
    pub(crate) fn cut_tally(&self) -> CutTally {
        CutTally {
            recorded: self.cut_recorded.load(Ordering::SeqCst),
            unrecorded: self.cut_unrecorded.load(Ordering::SeqCst),
        }
    }

    /// Exchanges whose response body was recorded cut at the body limit.
    pub(crate) fn cut_at_limit(&self) -> usize {
        self.cut_at_limit.load(Ordering::SeqCst)
    }

    pub(crate) fn tags(&self) -> &[String] {
        &self.tags
    }

    /// Start an exchange: it joins the current session, opening one if there is none.
    pub(crate) fn begin(self: &Arc<Self>, request_start_us: u64) -> Ticket {
        let mut inner = self.inner.lock();
        inner.last_activity = Instant::now();
        let slot = match &inner.current {
            Some(s) => s.clone(),
            None => {
                let id = new_session_id(request_start_us, &mut inner.rng);
                let slot = Arc::new(Slot {
                    id,
                    outstanding: AtomicUsize::new(0),
                    closing: AtomicBool::new(false),
                    written: AtomicU64::new(0),
                    successes: AtomicU64::new(0),
                    lost: AtomicU64::new(0),
                    queue: Mutex::new(VecDeque::new()),
                    writer: Mutex::new(WriterState::Idle),
                });
                inner.current = Some(slot.clone());
                inner.open.push(slot.clone());
                slot
            }
        };
        slot.outstanding.fetch_add(1, Ordering::SeqCst);
        Ticket {
            sessions: self.clone(),
            slot: Some(slot),
        }
    }

    /// Write every exchange queued on `slot`, in queue order. Blocking (file IO): run on the
    /// blocking pool. Several drains may run at once; the writer lock makes them take turns and
    /// each queued exchange is popped, and so written, exactly once and in order.
    fn drain(&self, slot: &Arc<Slot>) {
        let mut handled = 0usize;
        {
            let mut state = slot.writer.lock();
            while let Some(exchange) = slot.queue.lock().pop_front() {
                self.write_one(&mut state, slot, exchange);
                handled += 1;
            }
        }
        if handled > 0 {
            self.inner.lock().last_activity = Instant::now();
        }
        for _ in 0..handled {
            self.settle(slot);
        }
    }

    /// Decode a body sent compressed (a request's, or an answer the upstream compressed anyway),
    /// scrub the exchange and append it to the session's writer (opened on first use).
    fn write_one(&self, state: &mut WriterState, slot: &Slot, mut exchange: Exchange) {
        let success = exchange.response.status < 400;
        // Decoded before scrubbing, so the scrubber sees the plain bodies.
        crate::exchange::decode_recorded_bodies(&mut exchange, self.max_body_bytes);
        // Scrub before persist: the writer only accepts what the scrubber returns.
        let scrubbed = self.scrubber.scrub(exchange);
        if matches!(*state, WriterState::Idle) {
            let meta = SessionMeta {
                session_id: slot.id.clone(),
                tags: self.tags.clone(),
                proxy_mode: self.mode.as_str().to_string(),
                policy_hash: self.scrubber.policy_hash().to_string(),
            };
            match SessionWriter::new(&self.sessions_dir, meta) {
                Ok(w) => *state = WriterState::Writing(w),
                Err(e) => {
                    slot.lost.fetch_add(1, Ordering::SeqCst);
                    self.fail(format!("cannot open session {}: {e}", slot.id));
                    *state = WriterState::Done;
                }
            }
        }
        match state {
            WriterState::Writing(w) => match w.append(scrubbed) {
                Ok(_) => {
                    slot.written.fetch_add(1, Ordering::SeqCst);
                    if success {
                        slot.successes.fetch_add(1, Ordering::SeqCst);
                    }
                }
                Err(e) => {
                    slot.lost.fetch_add(1, Ordering::SeqCst);
                    self.fail(format!(
                        "cannot write to session {}: {e}; the exchange is lost and the session \
                         will be finalized incomplete (complete: false)",
                        slot.id
                    ));
                }
            },
            WriterState::Done => self.fail(format!(
                "exchange dropped: session {} was already finalized",
                slot.id
            )),
            WriterState::Idle => {}
        }
    }

    /// One exchange of `slot` is settled (written or dropped).
    fn settle(&self, slot: &Arc<Slot>) {
        let left = slot
            .outstanding
            .fetch_sub(1, Ordering::SeqCst)
            .saturating_sub(1);
        if left == 0 && slot.closing.load(Ordering::SeqCst) {
            self.finalize(slot);
        }
        self.settled.notify_waiters();
    }

    /// Write the manifest of `slot` (once) and move it to the finalized list. Blocking.
    fn finalize(&self, slot: &Arc<Slot>) {
        let previous = std::mem::replace(&mut *slot.writer.lock(), WriterState::Done);
        // A session that lost exchanges to failed writes is not the traffic that happened:
        // its manifest says so, as a recorder killed mid-session leaves it.
        let lost = slot.lost.load(Ordering::SeqCst);
        let summary = match previous {
            WriterState::Writing(w) => match if lost > 0 {
                w.finish_incomplete()
            } else {
                w.finish()
            } {
                Ok(Some(m)) => Some(SessionSummary {
                    session_id: m.session_id,
                    exchange_count: m.exchange_count,
                    only_failures: slot.successes.load(Ordering::SeqCst) == 0,
                    complete: m.complete,
                    lost_exchanges: lost,
                }),
                Ok(None) => None,
                Err(e) => {
                    self.fail(format!(
                        "cannot finalize session {}: {e}; its {} exchange(s) written before are \
                         kept without a manifest (`wraith lint` warns of it as \
                         recording-incomplete)",
                        slot.id,
                        slot.written.load(Ordering::SeqCst)
                    ));
                    None
                }
            },
            WriterState::Idle | WriterState::Done => None,
        };
        let mut inner = self.inner.lock();
        inner.open.retain(|s| !Arc::ptr_eq(s, slot));
        if let Some(s) = summary {
            if s.only_failures {
                tracing::warn!(session = %s.session_id, "session recorded only error answers (status >= 400)");
            }
            if s.complete {
                tracing::info!(session = %s.session_id, exchanges = s.exchange_count, "session finalized");
            } else {
                tracing::warn!(
                    session = %s.session_id,
                    exchanges = s.exchange_count,
                    lost = s.lost_exchanges,
                    "session finalized incomplete (complete: false): exchanges could not be written"
                );
            }
            inner.finalized.push(s);
        }
    }

    /// Close every open session: the next exchange opens a new one. Sessions with nothing in
    /// flight are finalized now, the others as soon as their last exchange is written (see
    /// [`Sessions::wait_finalized`]). Returns the ids of all the sessions closed. Blocking.
    pub(crate) fn rotate(&self) -> Vec<String> {
        let open: Vec<Arc<Slot>> = {
            let mut inner = self.inner.lock();
            inner.current = None;
            inner.open.clone()
        };
        self.close_slots(&open, false);
        open.iter().map(|s| s.id.clone()).collect()
    }

    /// Wait (at most `timeout`) until the sessions `ids` are finalized. Returns the finalized
    /// ones that recorded something, and the ids still open (exchanges still streaming).
    pub(crate) async fn wait_finalized(
        &self,
        ids: &[String],
        timeout: Duration,
    ) -> (Vec<SessionSummary>, Vec<String>) {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.settled.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let pending: Vec<String> = {
                let inner = self.inner.lock();
                inner
                    .open
                    .iter()
                    .filter(|s| ids.contains(&s.id))
                    .map(|s| s.id.clone())
                    .collect()
            };
            if !pending.is_empty() && tokio::time::timeout_at(deadline, notified).await.is_ok() {
                continue;
            }
            let inner = self.inner.lock();
            let done = inner
                .finalized
                .iter()
                .filter(|s| ids.contains(&s.session_id))
                .cloned()
                .collect();
            let still_open = inner
                .open
                .iter()
                .filter(|s| ids.contains(&s.id))
                .map(|s| s.id.clone())
                .collect();
            return (done, still_open);
        }
    }

    /// Mark `slots` closing and finalize the ones with nothing in flight (all of them when
    /// `force`). Returns the finalized summaries.
    fn close_slots(&self, slots: &[Arc<Slot>], force: bool) -> Vec<SessionSummary> {
        let before = self.inner.lock().finalized.len();
        for slot in slots {
            slot.closing.store(true, Ordering::SeqCst);
            if force || slot.outstanding.load(Ordering::SeqCst) == 0 {
                self.finalize(slot);
            }
        }
        let inner = self.inner.lock();
        inner
            .finalized
            .get(before..)
            .map(<[_]>::to_vec)
            .unwrap_or_default()
    }

    /// Rotate the current session if it has been idle for `idle` with nothing in flight.
    /// Returns how long until it could next become idle (`None` = no open session to watch).
    /// Blocking only when it finalizes.
    pub(crate) fn expire_idle(&self, idle: Duration) -> Option<Duration> {
        let expired = {
            let mut inner = self.inner.lock();
            let current = inner.current.clone()?;
            let quiet = inner.last_activity.elapsed();
            if quiet < idle {
                return Some(idle - quiet);
            }
            if current.outstanding.load(Ordering::SeqCst) > 0 {
                // Pinned open by an exchange still streaming; look again one period later.
                return Some(idle);
            }
            inner.current = None;
            current
        };
        tracing::info!(session = %expired.id, "idle timeout: closing session");
        self.close_slots(&[expired], false);
        None
    }

    /// Number of exchanges begun but not yet settled, over all sessions.
    pub(crate) fn in_flight(&self) -> usize {
        let inner = self.inner.lock();
        inner
            .open
            .iter()
            .map(|s| s.outstanding.load(Ordering::SeqCst))
            .sum()
    }

    /// Wait until no exchange is in flight, or `timeout` passes. Returns true when settled.
    pub(crate) async fn wait_settled(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.settled.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.in_flight() == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.in_flight() == 0;
            }
        }
    }

    /// Finalize every open session (shutdown). Blocking.
    pub(crate) fn finalize_all(&self) -> Vec<SessionSummary> {
        let open: Vec<Arc<Slot>> = {
            let mut inner = self.inner.lock();
            inner.current = None;
            inner.open.clone()
        };
        self.close_slots(&open, true)
    }

    /// Every session finalized during this run, in order.
    pub(crate) fn finalized(&self) -> Vec<SessionSummary> {
        self.inner.lock().finalized.clone()
    }

    /// The sessions still open.
    pub(crate) fn open_sessions(&self) -> Vec<OpenSession> {
        let inner = self.inner.lock();
        inner
            .open
            .iter()
            .map(|s| OpenSession {
                session_id: s.id.clone(),
                exchange_count: s.written.load(Ordering::SeqCst),
                in_flight: s.outstanding.load(Ordering::SeqCst),
                current: inner.current.as_ref().is_some_and(|c| Arc::ptr_eq(c, s)),
            })
            .collect()
    }

    pub(crate) fn errors(&self) -> Vec<String> {
        self.errors.lock().clone()
    }

    fn fail(&self, message: String) {
        tracing::error!("{message}");
        self.errors.lock().push(message);
    }
}

/// An exchange's place in a session, from its request's arrival until its recording is written.
/// Dropping it without [`Ticket::complete`] records nothing (a transport failure, a request that
/// never got a response) but still releases the session.
pub(crate) struct Ticket {
    sessions: Arc<Sessions>,
    slot: Option<Arc<Slot>>,
}

impl Ticket {
    /// Count this exchange as one whose response body is recorded cut at the body limit.
    pub(crate) fn note_cut_at_limit(&self) {
        self.sessions.cut_at_limit.fetch_add(1, Ordering::SeqCst);
    }

    /// Hand a finished exchange over for scrubbing and writing (on the blocking pool). It is
    /// queued right here, synchronously, so its place in the session is fixed by when its body
    /// ended, not by which blocking thread runs first.
    pub(crate) fn complete(mut self, exchange: Exchange) {
        if let Some(slot) = self.slot.take() {
            if exchange.truncated && self.sessions.cutting.load(Ordering::SeqCst) {
                self.sessions.cut_recorded.fetch_add(1, Ordering::SeqCst);
            }
            slot.queue.lock().push_back(exchange);
            let sessions = self.sessions.clone();
            run_blocking(move || sessions.drain(&slot));
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            // Dropped unanswered while shutdown cuts: the upstream had not sent a response
            // head, so there is no answer to record (a transport failure is answered, and
            // dropped, before any cut).
            if self.sessions.cutting.load(Ordering::SeqCst) {
                self.sessions.cut_unrecorded.fetch_add(1, Ordering::SeqCst);
            }
            let sessions = self.sessions.clone();
            run_blocking(move || sessions.settle(&slot));
        }
    }
}

/// Run file IO off the async workers when a runtime is around, inline otherwise.
fn run_blocking(f: impl FnOnce() + Send + 'static) {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => {
            handle.spawn_blocking(f);
        }
        Err(_) => f(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::build_exchange;
    use wraith_recording::scrub::{HmacKey, ScrubPolicy};
    use wraith_recording::{RecordedRequest, RecordedResponse, Timing};

    // No tokio runtime in these tests: persisting runs inline, so every step is settled when
    // the call returns.

    fn registry(dir: &std::path::Path) -> Arc<Sessions> {
        let scrubber = Scrubber::new(ScrubPolicy::builtin_only(), HmacKey::from_bytes(*b"k"));
        Arc::new(Sessions::new(
            dir.to_path_buf(),
            vec!["t".into()],
            scrubber,
            crate::DEFAULT_MAX_BODY_BYTES,
            crate::mode::ProxyMode::Reverse,
        ))
    }

    fn exchange(path: &str, start_us: u64) -> Exchange {
        build_exchange(
            RecordedRequest {
                method: "GET".into(),
                path: path.into(),
                query: String::new(),
                headers: Default::default(),
                body: Default::default(),
                content_type: None,
                origin: None,
            },
            RecordedResponse {
                status: 200,
                headers: Default::default(),
                content_type: None,
                trailers: None,
            },
            Timing {
                request_start_us: start_us,
                first_byte_us: start_us + 1,
                last_byte_us: start_us + 2,
            },
            start_us + 1,
            b"{}".to_vec(),
            false,
        )
    }

    fn manifest_complete(dir: &std::path::Path, id: &str) -> bool {
        let text = std::fs::read_to_string(dir.join(id).join("manifest.json")).unwrap_or_default();
        text.contains("\"complete\":true")
    }

    #[test]
    fn exchange_in_flight_pins_a_rotated_session_until_it_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let s = registry(tmp.path());
        let ticket = s.begin(1_767_225_600_000_000);
        let closed = s.rotate();
        assert_eq!(closed.len(), 1);
        assert!(
            s.finalized().is_empty(),
            "still streaming: not finalized yet"
        );
        let open = s.open_sessions();
        assert_eq!(open.len(), 1);
        assert!(!open[0].current, "rotated out");
        assert_eq!(open[0].in_flight, 1);

        ticket.complete(exchange("/a", 1_767_225_600_000_000));
        let done = s.finalized();
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].session_id, closed[0]);
        assert_eq!(done[0].exchange_count, 1);
        assert!(!done[0].only_failures);
        assert!(s.open_sessions().is_empty());
        assert!(manifest_complete(tmp.path(), &closed[0]));
    }

    #[test]
    fn the_exchange_after_a_rotation_opens_a_new_session() {
        let tmp = tempfile::tempdir().unwrap();
        let s = registry(tmp.path());
        s.begin(1).complete(exchange("/a", 1));
        let first = s.rotate();
        s.begin(2).complete(exchange("/b", 2));
        let open = s.open_sessions();
        assert_eq!(open.len(), 1);
        assert_ne!(open[0].session_id, first[0]);
        assert!(open[0].current);
        let all = s.finalize_all();
        assert_eq!(all.len(), 1);
        assert_eq!(s.finalized().len(), 2);
    }

    #[test]
    fn a_session_whose_exchanges_all_failed_leaves_no_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let s = registry(tmp.path());
        drop(s.begin(1)); // e.g. upstream unreachable: nothing to record
        assert_eq!(s.in_flight(), 0);
        assert!(s.finalize_all().is_empty());
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn idle_expiry_never_closes_a_session_with_an_exchange_in_flight() {
        let tmp = tempfile::tempdir().unwrap();
        let s = registry(tmp.path());
        let ticket = s.begin(1);
        assert!(
            s.expire_idle(Duration::ZERO).is_some(),
            "pinned open: look again later"
        );
        assert!(s.open_sessions()[0].current);
        ticket.complete(exchange("/slow", 1));
        assert_eq!(s.expire_idle(Duration::ZERO), None);
        assert_eq!(s.finalized().len(), 1);
        assert_eq!(s.expire_idle(Duration::ZERO), None, "nothing left to watch");
    }

    #[test]
    fn a_session_of_error_answers_only_is_flagged() {
        let tmp = tempfile::tempdir().unwrap();
        let s = registry(tmp.path());
        let mut ex = exchange("/nope", 1);
        ex.response.status = 404;
        s.begin(1).complete(ex);
        let all = s.finalize_all();
        assert_eq!(all.len(), 1);
        assert!(all[0].only_failures);
    }

    #[test]
    fn idle_expiry_waits_for_the_remaining_quiet_time() {
        let tmp = tempfile::tempdir().unwrap();
        let s = registry(tmp.path());
        s.begin(1).complete(exchange("/a", 1));
        let wait = s.expire_idle(Duration::from_secs(3600));
        assert!(wait.is_some_and(|w| w > Duration::from_secs(3500)));
        assert!(s.finalized().is_empty());
    }
}
