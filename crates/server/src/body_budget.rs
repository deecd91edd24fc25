//! The twin-wide bound on request bodies held in memory (`[serve.limits] max_pending_body_mb`).
//!
//! One request body is bounded by `max_body_bytes` (16 MiB), but a body is read whole before
//! the engine sees it, however slowly it arrives: without a shared bound, many connections and
//! HTTP/2 streams each sending most of a large body would together hold gigabytes. Every body
//! being read (and then answered) takes its bytes from one [`BodyBudget`] through a
//! [`BodyHold`], which gives them back when it is dropped, however the request ends.
//!
//! Not a rate limit and not a per-client quota: it bounds memory only, and a request refused
//! for it (`503 server-busy`) may be sent again once other bodies are done.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The bytes of request bodies the twin holds at once, and their cap.
#[derive(Debug)]
pub(crate) struct BodyBudget {
    held: AtomicUsize,
    cap: usize,
}

impl BodyBudget {
    pub(crate) fn new(cap: usize) -> BodyBudget {
        BodyBudget {
            held: AtomicUsize::new(0),
            cap,
        }
    }

    /// A hold of nothing yet, for one request's body.
    pub(crate) fn hold(&self) -> BodyHold<'_> {
        BodyHold {
            budget: self,
            bytes: 0,
        }
    }

    #[cfg(test)]
    fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }
}

/// One request body's share of a [`BodyBudget`]; given back on drop.
#[derive(Debug)]
pub(crate) struct BodyHold<'a> {
    budget: &'a BodyBudget,
    bytes: usize,
}

impl BodyHold<'_> {
    /// Make this hold `total` bytes: `false`, holding what it held before, when growing to
    /// it would take the budget past its cap. Shrinking always succeeds.
    pub(crate) fn resize(&mut self, total: usize) -> bool {
        if total == self.bytes {
            // Most requests have no body: no shared write for them.
            return true;
        }
        if total < self.bytes {
            self.budget
                .held
                .fetch_sub(self.bytes - total, Ordering::AcqRel);
            self.bytes = total;
            return true;
        }
        let more = total - self.bytes;
        let cap = self.budget.cap;
        let taken = self
            .budget
            .held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(more).filter(|&t| t <= cap)
            })
            .is_ok();
        if taken {
            self.bytes = total;
        }
        taken
    }

    /// The budget's cap, in bytes.
    pub(crate) fn cap(&self) -> usize {
        self.budget.cap
    }

    /// The bytes this hold takes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for BodyHold<'_> {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.held.fetch_sub(self.bytes, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn holds_share_the_cap_and_give_their_bytes_back_on_drop() {
        let budget = BodyBudget::new(100);
        let mut a = budget.hold();
        assert!(a.resize(60));
        let mut b = budget.hold();
        assert!(!b.resize(41), "60 + 41 is past the cap of 100");
        assert_eq!(b.bytes(), 0, "a refused growth takes nothing");
        assert!(b.resize(40), "60 + 40 is exactly the cap");
        assert_eq!(budget.held(), 100);
        drop(a);
        assert_eq!(budget.held(), 40);
        assert!(b.resize(100));
        drop(b);
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn a_refused_growth_keeps_what_the_hold_had() {
        let budget = BodyBudget::new(10);
        let mut a = budget.hold();
        assert!(a.resize(7));
        assert!(!a.resize(11));
        assert_eq!((a.bytes(), budget.held()), (7, 7));
        assert!(a.resize(3), "shrinking always succeeds");
        assert_eq!(budget.held(), 3);
    }

    #[test]
    fn growth_never_overflows_the_count() {
        let budget = BodyBudget::new(usize::MAX);
        let mut a = budget.hold();
        assert!(a.resize(usize::MAX));
        let mut b = budget.hold();
        assert!(!b.resize(1));
        drop(a);
        assert!(b.resize(1));
    }
}
