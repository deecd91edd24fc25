//! The request trace ring (`--trace`, `--trace-capacity N`): the last N application requests,
//! FIFO eviction, served by `GET /__wraith/trace/log`, `GET /__wraith/trace/{id}` and cleared
//! by `POST /__wraith/trace/reset`.
//!
//! Every answered application request is recorded, including faults, 429s, drops, timeouts and
//! route misses. With `--debug` an entry also carries the response's per-field provenance counts
//! (`field_counts`) and its full per-field origin map (`origins`: JSON pointer → `constant`,
//! `echo`, `generated`, `clock`, `counter`, `observed`, `state`, `fixture`, `recorded`,
//! `handler` or `authored`). A partial fault that cut the body drops both: the wire body is
//! malformed on purpose and has no field map.

use std::collections::VecDeque;

use std::collections::BTreeMap;

use parking_lot::Mutex;
use serde::Serialize;
use wraith_engine::{FieldCounts, FieldSource};

/// One traced request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceEntry {
    /// Increasing from 1 for the life of the process (a trace reset does not reuse ids).
    pub id: u64,
    pub method: String,
    /// Path plus `?query` when there was one.
    pub path: String,
    pub status: u16,
    /// From the request's arrival to the answer being ready, simulated delays included.
    pub duration_us: u64,
    /// RFC 3339 UTC time the request arrived.
    pub timestamp: String,
    /// The `X-Wraith-Session` value; `None` (`null`) for the headerless namespace, which has no
    /// name (`default` is a session like any other).
    pub session: Option<String>,
    /// `X-Wraith-Provenance` word.
    pub provenance: String,
    /// `METHOD /template` of the matched route; `None` on a route miss.
    pub route: Option<String>,
    /// The simulation layer that affected the answer (`error`, `delay`, `timeout`, `drop`,
    /// `throttle`, `partial`, `rate_limit`).
    pub fault: Option<String>,
    /// The simulated delay the server held this answer for (latency, a delay fault or a
    /// timeout's hold), as decided, in milliseconds.
    pub delay_ms: u64,
    /// Per-field provenance counts (only with `--debug`, and only when the engine had them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_counts: Option<FieldCounts>,
    /// Where every field of the response came from (only with `--debug`, and only when the
    /// engine had the map): JSON pointer → origin word.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origins: Option<BTreeMap<String, FieldSource>>,
}

/// A fixed-capacity ring of [`TraceEntry`].
#[derive(Debug)]
pub struct TraceRing {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    next_id: u64,
    entries: VecDeque<TraceEntry>,
}

impl TraceRing {
    /// A ring holding at most `capacity` entries (at least 1).
    pub fn new(capacity: usize) -> TraceRing {
        let capacity = capacity.max(1);
        TraceRing {
            capacity,
            inner: Mutex::new(Inner {
                next_id: 1,
                entries: VecDeque::with_capacity(capacity.min(4096)),
            }),
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Append an entry (its `id` is assigned here), evicting the oldest at capacity. Returns
    /// the id.
    pub fn push(&self, mut entry: TraceEntry) -> u64 {
        let mut inner = self.inner.lock();
        entry.id = inner.next_id;
        inner.next_id += 1;
        if inner.entries.len() == self.capacity {
            inner.entries.pop_front();
        }
        let id = entry.id;
        inner.entries.push_back(entry);
        id
    }

    /// Newest first; `session` filters first, then `last` keeps the newest N. An empty
    /// `session` selects the headerless namespace's entries, as an empty header value names it.
    pub fn log(&self, session: Option<&str>, last: Option<usize>) -> Vec<TraceEntry> {
        let session = session.map(|s| Some(s).filter(|s| !s.is_empty()));
        let inner = self.inner.lock();
        inner
            .entries
            .iter()
            .rev()
            .filter(|e| session.is_none_or(|s| e.session.as_deref() == s))
            .take(last.unwrap_or(usize::MAX))
            .cloned()
            .collect()
    }

    pub fn get(&self, id: u64) -> Option<TraceEntry> {
        self.inner
            .lock()
            .entries
            .iter()
            .find(|e| e.id == id)
            .cloned()
    }

    /// Drop every entry; returns how many there were.
    pub fn clear(&self) -> usize {
        let mut inner = self.inner.lock();
        let n = inner.entries.len();
        inner.entries.clear();
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(session: &str) -> TraceEntry {
        TraceEntry {
            id: 0,
            method: "GET".into(),
            path: "/x".into(),
            status: 200,
            duration_us: 1,
            timestamp: "2026-01-01T00:00:00Z".into(),
            session: Some(session.into()),
            provenance: "template".into(),
            route: None,
            fault: None,
            delay_ms: 0,
            field_counts: None,
            origins: None,
        }
    }

    #[test]
    fn ring_evicts_oldest_first_and_lists_newest_first() {
        let ring = TraceRing::new(2);
        for s in ["a", "b", "c"] {
            ring.push(entry(s));
        }
        let log = ring.log(None, None);
        assert_eq!(log.iter().map(|e| e.id).collect::<Vec<_>>(), vec![3, 2]);
        assert!(ring.get(1).is_none());
        assert_eq!(ring.get(2).unwrap().session.as_deref(), Some("b"));
    }

    #[test]
    fn log_filters_by_session_then_tails() {
        let ring = TraceRing::new(10);
        for s in ["a", "b", "a", "a"] {
            ring.push(entry(s));
        }
        let log = ring.log(Some("a"), Some(2));
        assert_eq!(log.iter().map(|e| e.id).collect::<Vec<_>>(), vec![4, 3]);
        let mut headerless = entry("x");
        headerless.session = None;
        ring.push(headerless);
        let log = ring.log(Some(""), None);
        assert_eq!(log.iter().map(|e| e.id).collect::<Vec<_>>(), vec![5]);
        assert_eq!(ring.clear(), 5);
        assert!(ring.log(None, None).is_empty());
        assert_eq!(ring.push(entry("a")), 6);
    }

    /// `last` tails the session's entries, not the ring's: a session whose entries are not the
    /// newest overall still gets its newest ones.
    #[test]
    fn log_last_counts_only_the_filtered_sessions_entries() {
        let ring = TraceRing::new(10);
        for s in ["a", "b", "a", "a"] {
            ring.push(entry(s));
        }
        let log = ring.log(Some("b"), Some(1));
        assert_eq!(log.iter().map(|e| e.id).collect::<Vec<_>>(), vec![2]);
        assert_eq!(log[0].session.as_deref(), Some("b"));
    }
}
