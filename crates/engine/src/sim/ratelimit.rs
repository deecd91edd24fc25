//! Rate limiting (`--rate-limit`, `--rate-limit-override`) and the throttle fault's windows.
//!
//! Counters are kept per session (namespace) and per limit, so sessions never share a quota;
//! the server clears a session's counters when that session is reset or deleted and every
//! counter on the global reset. Time comes from the clock the caller hands in.

use std::collections::{BTreeMap, VecDeque};

use super::SimError;
use super::pattern::RoutePattern;

/// `--rate-limit-algorithm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateAlgorithm {
    /// Counts requests in consecutive windows of fixed length starting at the first request.
    #[default]
    Fixed,
    /// Counts requests in the window that ends now (a log of request times).
    Sliding,
}

/// One limit: at most `limit` requests per `window_secs` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub limit: u64,
    pub window_secs: u64,
}

impl Limit {
    /// Parse `N/W`, where `W` is seconds with an optional unit: `5/1sec`, `5/60`, `100/1min`,
    /// `10/30s`, `1000/1h`.
    pub fn parse(text: &str) -> Result<Limit, String> {
        let (n, w) = text
            .trim()
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not N/W (e.g. 5/1sec or 100/60)"))?;
        let limit: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("`{n}` is not a request count"))?;
        let w = w.trim();
        let digits = w.find(|c: char| !c.is_ascii_digit()).unwrap_or(w.len());
        let (num, unit) = w.split_at(digits);
        let num: u64 = if num.is_empty() {
            1
        } else {
            num.parse().map_err(|_| format!("`{w}` is not a window"))?
        };
        let scale = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "s" | "sec" | "secs" | "second" | "seconds" => 1,
            "m" | "min" | "mins" | "minute" | "minutes" => 60,
            "h" | "hr" | "hour" | "hours" => 3600,
            other => {
                return Err(format!(
                    "unknown window unit `{other}`: write whole seconds (`60`, `60s`, `60sec`), \
                     minutes (`5m`, `5min`) or hours (`1h`, `1hour`)"
                ));
            }
        };
        let window_secs = num.saturating_mul(scale);
        if limit == 0 || window_secs == 0 {
            return Err("the count and the window must both be at least 1".into());
        }
        Ok(Limit { limit, window_secs })
    }
}

/// `--rate-limit-override "METHOD /path=N/Wsec"`.
#[derive(Debug, Clone, PartialEq)]
pub struct RateOverride {
    pub route: RoutePattern,
    pub limit: Limit,
}

impl RateOverride {
    pub fn parse(text: &str) -> Result<RateOverride, SimError> {
        let bad = |reason: String| SimError::RateLimitSpec {
            value: text.to_string(),
            reason,
        };
        let (route, limit) = text.rsplit_once('=').ok_or_else(|| {
            bad("expected `METHOD /path=N/Wsec`, e.g. `GET /v1/foo=5/1sec`".into())
        })?;
        Ok(RateOverride {
            route: RoutePattern::parse(route).map_err(bad)?,
            limit: Limit::parse(limit).map_err(bad)?,
        })
    }
}

/// The verdict of a window check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowVerdict {
    pub allowed: bool,
    pub limit: u64,
    /// Requests left in the current window after this one.
    pub remaining: u64,
    /// Unix seconds when the window frees a slot again.
    pub reset_unix: i64,
    /// Whole seconds until then (at least 1 when refused).
    pub retry_after: u64,
    /// Microseconds from the check until the window frees a slot (0 when it already has).
    pub wait_us: u64,
}

#[derive(Debug, Clone)]
enum Window {
    Fixed {
        start_us: i64,
        count: u64,
        window_us: i64,
    },
    Sliding {
        hits: VecDeque<i64>,
        window_us: i64,
    },
}

impl Window {
    /// Whether the window has run out at `now_us`, so that it answers exactly as a window
    /// never used would: a fixed one would start over, a sliding one holds no recent hit.
    fn spent(&self, now_us: i64) -> bool {
        match self {
            Window::Fixed {
                start_us,
                window_us,
                ..
            } => now_us.saturating_sub(*start_us) >= *window_us || now_us < *start_us,
            Window::Sliding { hits, window_us } => hits
                .back()
                .is_none_or(|&t| now_us.saturating_sub(t) >= *window_us),
        }
    }
}

/// Sessions held before the first sweep of spent windows.
const FIRST_SWEEP_AT: usize = 1024;

/// Window state by (session, limit key).
#[derive(Debug, Default)]
pub(crate) struct Windows {
    by_session: BTreeMap<Option<String>, BTreeMap<String, Window>>,
    /// How many sessions may be held before a new one sweeps out those whose windows are all
    /// spent (twice what the last sweep kept): every session id a client mints leaves windows,
    /// and only the ones still running change an answer.
    sweep_at: usize,
}

impl Windows {
    /// Count one request against `limit` and say whether it may pass. Refused requests do not
    /// consume quota.
    pub(crate) fn check(
        &mut self,
        session: Option<&str>,
        key: &str,
        limit: Limit,
        algorithm: RateAlgorithm,
        now_us: i64,
    ) -> WindowVerdict {
        let window_us = i64::try_from(limit.window_secs)
            .unwrap_or(i64::MAX / 1_000_000)
            .saturating_mul(1_000_000);
        let session = session.map(str::to_string);
        if !self.by_session.contains_key(&session)
            && self.by_session.len() >= self.sweep_at.max(FIRST_SWEEP_AT)
        {
            self.by_session
                .retain(|_, per| per.values().any(|w| !w.spent(now_us)));
            self.sweep_at = self.by_session.len().saturating_mul(2);
        }
        let per = self.by_session.entry(session).or_default();
        let w = per
            .entry(key.to_string())
            .or_insert_with(|| match algorithm {
                RateAlgorithm::Fixed => Window::Fixed {
                    start_us: now_us,
                    count: 0,
                    window_us,
                },
                RateAlgorithm::Sliding => Window::Sliding {
                    hits: VecDeque::new(),
                    window_us,
                },
            });
        let (used, reset_us) = match w {
            Window::Fixed {
                start_us, count, ..
            } => {
                if now_us.saturating_sub(*start_us) >= window_us || now_us < *start_us {
                    *start_us = now_us;
                    *count = 0;
                }
                (count, start_us.saturating_add(window_us))
            }
            Window::Sliding { hits, .. } => {
                while hits
                    .front()
                    .is_some_and(|&t| now_us.saturating_sub(t) >= window_us)
                {
                    hits.pop_front();
                }
                let oldest = hits.front().copied().unwrap_or(now_us);
                // The deque length stands in for the count below.
                let n = hits.len() as u64;
                let allowed = n < limit.limit;
                if allowed {
                    hits.push_back(now_us);
                }
                let used = n + u64::from(allowed);
                return verdict(
                    allowed,
                    limit,
                    used,
                    oldest.saturating_add(window_us),
                    now_us,
                );
            }
        };
        let allowed = *used < limit.limit;
        if allowed {
            *used += 1;
        }
        verdict(allowed, limit, *used, reset_us, now_us)
    }

    pub(crate) fn clear_session(&mut self, session: Option<&str>) {
        self.by_session.remove(&session.map(str::to_string));
    }

    pub(crate) fn clear(&mut self) {
        self.by_session.clear();
    }
}

fn verdict(allowed: bool, limit: Limit, used: u64, reset_us: i64, now_us: i64) -> WindowVerdict {
    let wait_us = reset_us.saturating_sub(now_us).max(0) as u64;
    let retry_after = wait_us.div_ceil(1_000_000).max(u64::from(!allowed));
    WindowVerdict {
        allowed,
        limit: limit.limit,
        remaining: limit.limit.saturating_sub(used),
        reset_unix: reset_us.div_euclid(1_000_000) + i64::from(reset_us.rem_euclid(1_000_000) > 0),
        retry_after,
        wait_us,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000;

    #[test]
    fn limits_parse_with_and_without_units() {
        assert_eq!(
            Limit::parse("5/1sec").unwrap(),
            Limit {
                limit: 5,
                window_secs: 1
            }
        );
        assert_eq!(
            Limit::parse("5/60").unwrap(),
            Limit {
                limit: 5,
                window_secs: 60
            }
        );
        assert_eq!(
            Limit::parse("100/2min").unwrap(),
            Limit {
                limit: 100,
                window_secs: 120
            }
        );
        assert!(Limit::parse("0/1").is_err());
        assert!(Limit::parse("5/1fortnight").is_err());
        let o = RateOverride::parse("GET /v1/foo=5/1sec").unwrap();
        assert!(o.route.matches("GET", "/v1/foo", None));
        assert!(RateOverride::parse("GET /v1/foo").is_err());
    }

    #[test]
    fn fixed_window_refuses_past_the_limit_and_reopens_after_the_window() {
        let mut w = Windows::default();
        let l = Limit {
            limit: 2,
            window_secs: 10,
        };
        let t0 = 1_700_000_000 * S;
        assert!(w.check(None, "k", l, RateAlgorithm::Fixed, t0).allowed);
        let v = w.check(None, "k", l, RateAlgorithm::Fixed, t0 + S);
        assert!(v.allowed);
        assert_eq!(v.remaining, 0);
        let v = w.check(None, "k", l, RateAlgorithm::Fixed, t0 + 2 * S);
        assert!(!v.allowed);
        assert_eq!(v.reset_unix, 1_700_000_010);
        assert_eq!(v.retry_after, 8);
        assert!(
            w.check(None, "k", l, RateAlgorithm::Fixed, t0 + 10 * S)
                .allowed
        );
    }

    #[test]
    fn sliding_window_frees_slots_as_old_requests_age_out() {
        let mut w = Windows::default();
        let l = Limit {
            limit: 2,
            window_secs: 10,
        };
        let t0 = 1_700_000_000 * S;
        assert!(w.check(None, "k", l, RateAlgorithm::Sliding, t0).allowed);
        assert!(
            w.check(None, "k", l, RateAlgorithm::Sliding, t0 + 5 * S)
                .allowed
        );
        let v = w.check(None, "k", l, RateAlgorithm::Sliding, t0 + 9 * S);
        assert!(!v.allowed);
        assert_eq!(v.retry_after, 1);
        // A fixed window would still be closed here; the sliding one freed the first slot.
        assert!(
            w.check(None, "k", l, RateAlgorithm::Sliding, t0 + 10 * S)
                .allowed
        );
        assert!(
            !w.check(None, "k", l, RateAlgorithm::Sliding, t0 + 11 * S)
                .allowed
        );
    }

    #[test]
    fn spent_windows_of_minted_session_ids_are_swept_and_running_ones_kept() {
        let second = 1_000_000;
        let l = Limit {
            limit: 2,
            window_secs: 10,
        };
        for algorithm in [RateAlgorithm::Fixed, RateAlgorithm::Sliding] {
            let mut w = Windows::default();
            // Thousands of one-off session ids, each used once at the start.
            for i in 0..3000 {
                assert!(
                    w.check(Some(&format!("s{i}")), "k", l, algorithm, i)
                        .allowed
                );
            }
            // One session uses a slot shortly before the others' windows run out.
            assert!(w.check(Some("live"), "k", l, algorithm, 9 * second).allowed);
            // Past their window, new ids keep coming; once the held sessions reach twice what
            // the last sweep kept, the spent ones are swept out.
            for j in 0..3000 {
                assert!(
                    w.check(Some(&format!("n{j}")), "k", l, algorithm, 11 * second)
                        .allowed
                );
            }
            let spent = (0..3000)
                .filter(|i| w.by_session.contains_key(&Some(format!("s{i}"))))
                .count();
            assert_eq!(spent, 0, "{algorithm:?}");
            assert!(w.by_session.len() <= 3001, "{algorithm:?}");
            // The running window kept its count: one slot left, then refused.
            assert!(
                w.check(Some("live"), "k", l, algorithm, 12 * second)
                    .allowed
            );
            assert!(
                !w.check(Some("live"), "k", l, algorithm, 12 * second)
                    .allowed
            );
        }
    }

    #[test]
    fn sessions_have_separate_quotas_and_clear_independently() {
        let mut w = Windows::default();
        let l = Limit {
            limit: 1,
            window_secs: 60,
        };
        assert!(w.check(Some("a"), "k", l, RateAlgorithm::Fixed, 0).allowed);
        assert!(!w.check(Some("a"), "k", l, RateAlgorithm::Fixed, 1).allowed);
        assert!(w.check(Some("b"), "k", l, RateAlgorithm::Fixed, 1).allowed);
        w.clear_session(Some("a"));
        assert!(w.check(Some("a"), "k", l, RateAlgorithm::Fixed, 2).allowed);
        assert!(!w.check(Some("b"), "k", l, RateAlgorithm::Fixed, 2).allowed);
        w.clear();
        assert!(w.check(Some("b"), "k", l, RateAlgorithm::Fixed, 3).allowed);
    }
}
