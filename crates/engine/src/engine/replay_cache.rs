//! The replay-bytes cache: the finished body bytes of a recorded moment, so an exact-replay
//! answer whose output provably does not depend on anything but its inputs is a map lookup and
//! a `Bytes` clone instead of the outbound body walk, the self-URL rewrite, key sorting and
//! serialization.
//!
//! Sound by construction rather than by assumption about dispatch: an entry maps the exact
//! inputs of those passes to their output. Its key narrows the search (route, the moment the
//! body was copied from, whether keys are sorted); a hit additionally needs
//! - the body handed over to be equal to the entry's input body (so anything dispatch changed
//!   after copying the moment — a merged list page, a session-bound value — is a miss),
//! - no echoed or minted positions and no earlier policy change on the answer,
//! - the same twin origin for the self-URL rewrite, and
//! - the session to answer every membership question the PII walk asked when the entry was
//!   filled exactly as it did then (the walk exempts values the session supplied, so the same
//!   answers mean the same decisions).
//!
//! Not cached: HEAD, `--debug` (the per-field origin map is computed from the live body),
//! non-JSON bodies, bodies over [`MAX_BODY`] bytes; past [`MAX_ENTRIES`] entries nothing new
//! is added (what is cached stays valid: the model and policy do not change while serving).

use std::collections::HashMap;

use super::*;

/// Most entries kept. Past it, answers are computed as without the cache.
const MAX_ENTRIES: usize = 4096;
/// Larger bodies are not cached: they would dominate the cache's memory, and their walk cost is
/// not what bounds small-request throughput.
const MAX_BODY: usize = 256 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    route: usize,
    /// Identity of the recorded moment (see [`Out::moment`]); only compared, never followed.
    moment: usize,
    /// The replay claim made the output step sort keys.
    sorted: bool,
}

/// The body the passes ran on: the tree dispatch built, or a recorded moment's text that
/// reached them unparsed (compared as bytes, so a hit never parses it).
#[derive(PartialEq)]
enum Input {
    Tree(Value),
    Text(Bytes),
}

impl Input {
    fn of(body: &OutBody) -> Option<Input> {
        match body {
            OutBody::Json(v) => Some(Input::Tree(v.clone())),
            OutBody::Raw(raw) if raw.passes => Some(Input::Text(raw.text.clone())),
            _ => None,
        }
    }

    fn matches(&self, body: &OutBody) -> bool {
        match (self, body) {
            (Input::Tree(a), OutBody::Json(b)) => a == b,
            (Input::Text(a), OutBody::Raw(raw)) => {
                raw.passes && crate::raw_moment::same_text(a, &raw.text)
            }
            _ => false,
        }
    }
}

struct Entry {
    /// The body the passes ran on.
    input: Input,
    /// The twin origin the self-URL rewrite used.
    origin: Option<Box<str>>,
    /// Every value the PII walk looked up in the session, with the answer it got.
    session: Box<[(Box<str>, bool)]>,
    bytes: Bytes,
    /// The body passes changed some bytes (walk or self-URL rewrite).
    policy_applied: bool,
}

/// The engine's replay-bytes cache (one per engine, shared by every namespace: an entry is
/// only used when the session answers as the filling session did).
pub(crate) struct ReplayCache {
    enabled: bool,
    map: RwLock<HashMap<Key, Vec<Entry>>>,
    len: std::sync::atomic::AtomicUsize,
}

impl Default for ReplayCache {
    fn default() -> Self {
        ReplayCache {
            enabled: true,
            map: RwLock::default(),
            len: std::sync::atomic::AtomicUsize::new(0),
        }
    }
}

/// What the output step should do with an answer's body.
#[derive(Default)]
pub(crate) enum Cached {
    /// Not a cache candidate: run every pass.
    #[default]
    No,
    /// The finished body bytes, whether the body passes changed them, and the self-URL
    /// rewrite target they were made for (the output step rewrites headers to it too).
    Hit {
        bytes: Bytes,
        policy_applied: bool,
        origin: Option<String>,
    },
    /// A candidate that missed: the passes ran; store their output under this ticket.
    Fill(Box<Ticket>),
}

pub(crate) struct Ticket {
    key: Key,
    /// The self-URL rewrite target (taken by the output step, which rewrites to it).
    pub(super) origin: Option<String>,
    input: Input,
    session: Vec<(String, bool)>,
}

impl Engine {
    /// The cache key of an answer that may be served from the cache.
    fn replay_cache_key(&self, call: &Call<'_>, out: &Out) -> Option<Key> {
        if !self.replay_cache.enabled
            || call.head
            || self.opts.debug
            || out.policy_changed
            || !out.origins.0.is_empty()
        {
            return None;
        }
        if !matches!(&out.body, OutBody::Json(_))
            && !matches!(&out.body, OutBody::Raw(r) if r.passes)
        {
            return None;
        }
        Some(Key {
            route: call.m.route,
            moment: out.moment?,
            sorted: out.replay.is_some(),
        })
    }

    /// The outbound body passes of an application answer, through the replay-bytes cache
    /// when the answer is a candidate: on a hit the passes are skipped and the output step
    /// serves the cached bytes.
    pub(super) fn outbound_body_cached(&self, ns: &mut Namespace, call: &Call<'_>, out: &mut Out) {
        let Some(key) = self.replay_cache_key(call, out) else {
            self.outbound_body(ns, call, out);
            return;
        };
        let body = &out.body;
        let origin = self.rewrite_target(call.req);
        let found = self.replay_cache.map.read().get(&key).and_then(|entries| {
            entries
                .iter()
                .find(|e| {
                    e.origin.as_deref() == origin.as_deref()
                        && e.input.matches(body)
                        && e.session
                            .iter()
                            .all(|(v, has)| ns.outbound.contains(v) == *has)
                })
                .map(|e| (e.bytes.clone(), e.policy_applied))
        });
        if let Some((bytes, policy_applied)) = found {
            out.cached = Cached::Hit {
                bytes,
                policy_applied,
                origin,
            };
            return;
        }
        let Some(input) = Input::of(&out.body) else {
            self.outbound_body(ns, call, out);
            return;
        };
        let probe = outbound::SessionProbe::default();
        self.outbound_body_probed(ns, call, out, Some(&probe));
        out.cached = Cached::Fill(Box::new(Ticket {
            key,
            origin,
            input,
            session: probe.into_answers(),
        }));
    }

    /// Store a filled answer's finished body (called by the output step).
    pub(super) fn replay_cache_store(
        &self,
        ticket: Ticket,
        origin: Option<&str>,
        bytes: &Bytes,
        policy_applied: bool,
    ) {
        use std::sync::atomic::Ordering;
        if bytes.len() > MAX_BODY || self.replay_cache.len.load(Ordering::Relaxed) >= MAX_ENTRIES {
            return;
        }
        let entry = Entry {
            input: ticket.input,
            origin: origin.map(Into::into),
            session: ticket
                .session
                .into_iter()
                .map(|(v, has)| (v.into_boxed_str(), has))
                .collect(),
            bytes: bytes.clone(),
            policy_applied,
        };
        let mut map = self.replay_cache.map.write();
        let slot = map.entry(ticket.key).or_default();
        // Another thread may have filled the same answer meanwhile: keep one.
        if slot.iter().any(|e| {
            e.origin == entry.origin && e.input == entry.input && e.session == entry.session
        }) {
            return;
        }
        slot.push(entry);
        self.replay_cache.len.fetch_add(1, Ordering::Relaxed);
    }

    /// Turn the replay-bytes cache on (the default) or off. Off, every answer runs every
    /// output pass; the answers are the same either way, which is what tests compare.
    pub fn set_replay_cache(&mut self, enabled: bool) {
        self.replay_cache.enabled = enabled;
        self.replay_cache_clear();
    }

    /// Forget every cached answer (the policy changed).
    pub(super) fn replay_cache_clear(&mut self) {
        self.replay_cache.map.get_mut().clear();
        *self.replay_cache.len.get_mut() = 0;
    }
}
