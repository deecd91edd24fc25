//! A handler's time budget, counted in the CPU time of the thread that runs it.
//!
//! Time a handler spends waiting for a core (other sessions' handlers, other processes on the
//! machine) is not its own: counted on the wall clock, the same handler would pass alone and
//! fail amid other sessions' traffic, and a session's answers would depend on what other
//! sessions send. The thread's CPU clock counts only what the handler ran.
//!
//! Reading that clock is a system call, too slow for every interrupt (up to 100,000 of them
//! per invocation), while the monotonic wall clock is cheap. One thread's CPU time never runs
//! ahead of the wall clock, so the CPU clock is read only once the wall clock says the budget
//! could be spent, and then not again until the wall clock says the rest of it could be.
//! Without a per-thread CPU clock (platforms other than Unix) the wall clock is the budget.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The budget of one invocation, started on the thread that runs it.
pub(crate) struct CpuBudget {
    limit: Duration,
    started_wall: Instant,
    /// The thread's CPU clock at the start, when it has one.
    started_cpu: Option<Duration>,
    /// Nanoseconds after `started_wall` before which the budget cannot be spent.
    next_check_ns: AtomicU64,
}

impl CpuBudget {
    /// A budget of `limit` starting now, on the calling thread.
    pub(crate) fn start(limit: Duration) -> CpuBudget {
        CpuBudget {
            limit,
            started_wall: Instant::now(),
            started_cpu: thread_cpu_time(),
            next_check_ns: AtomicU64::new(nanos(limit)),
        }
    }

    /// Whether the invocation has used up its budget. Called from the interrupt, on the
    /// thread that started the budget.
    pub(crate) fn spent(&self) -> bool {
        let wall = self.started_wall.elapsed();
        self.spent_at(wall, || match (self.started_cpu, thread_cpu_time()) {
            (Some(start), Some(now)) => now.saturating_sub(start),
            _ => wall,
        })
    }

    /// [`CpuBudget::spent`] at `wall` since the start, with `cpu_used` reading the CPU time
    /// used since the start (asked only when the wall clock says the budget could be spent).
    fn spent_at(&self, wall: Duration, cpu_used: impl FnOnce() -> Duration) -> bool {
        if nanos(wall) < self.next_check_ns.load(Ordering::Relaxed) {
            return false;
        }
        let used = cpu_used();
        if used >= self.limit {
            return true;
        }
        // The rest of the budget cannot be used before this much more wall time has passed.
        let next = wall.saturating_add(self.limit - used);
        self.next_check_ns.store(nanos(next), Ordering::Relaxed);
        false
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The calling thread's CPU time, where the platform keeps one.
#[cfg(unix)]
fn thread_cpu_time() -> Option<Duration> {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    let secs = u64::try_from(t.tv_sec).ok()?;
    let nanos = u32::try_from(t.tv_nsec).ok()?;
    Some(Duration::new(secs, nanos))
}

#[cfg(not(unix))]
fn thread_cpu_time() -> Option<Duration> {
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use std::cell::Cell;

    const MS: Duration = Duration::from_millis(1);

    fn budget(limit: Duration) -> CpuBudget {
        CpuBudget {
            limit,
            started_wall: Instant::now(),
            started_cpu: Some(Duration::ZERO),
            next_check_ns: AtomicU64::new(nanos(limit)),
        }
    }

    #[test]
    fn wall_time_spent_waiting_for_a_core_does_not_count() {
        let b = budget(100 * MS);
        // 250 ms have passed, of which the handler ran 30.
        assert!(!b.spent_at(250 * MS, || 30 * MS));
        assert!(b.spent_at(400 * MS, || 100 * MS));
    }

    #[test]
    fn the_cpu_clock_is_read_only_once_the_budget_could_be_spent() {
        let b = budget(100 * MS);
        let reads = Cell::new(0);
        let read = |used: Duration| {
            reads.set(reads.get() + 1);
            used
        };
        // Before 100 ms of wall time the handler cannot have run 100 ms.
        assert!(!b.spent_at(99 * MS, || read(99 * MS)));
        assert_eq!(reads.get(), 0);
        // At 120 ms it had run 40: the remaining 60 cannot be used before 180 ms.
        assert!(!b.spent_at(120 * MS, || read(40 * MS)));
        assert_eq!(reads.get(), 1);
        assert!(!b.spent_at(179 * MS, || read(100 * MS)));
        assert_eq!(reads.get(), 1);
        assert!(b.spent_at(180 * MS, || read(100 * MS)));
        assert_eq!(reads.get(), 2);
    }

    #[test]
    fn a_busy_loop_spends_the_budget_on_the_real_clocks() {
        // Started before the budget, so its clock has run at least as long as the budget's:
        // taken after, it would miss the time `start` spent reading the CPU clock.
        let started = Instant::now();
        let b = CpuBudget::start(20 * MS);
        let mut spins = 0u64;
        while !b.spent() {
            spins = std::hint::black_box(spins + 1);
            assert!(started.elapsed() < Duration::from_secs(30), "never spent");
        }
        assert!(started.elapsed() >= 20 * MS);
    }

    #[cfg(unix)]
    #[test]
    fn the_thread_has_a_cpu_clock_that_advances_while_it_runs() {
        let start = thread_cpu_time().expect("a per-thread CPU clock");
        let until = Instant::now() + 5 * MS;
        while Instant::now() < until {
            std::hint::black_box(0);
        }
        assert!(thread_cpu_time().unwrap() > start);
    }
}
