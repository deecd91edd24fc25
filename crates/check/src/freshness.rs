//! The `[freshness]` SLA of `wraith check` (reference §5.2, §5.7): how old the twin may be.
//!
//! The twin's age is the one `serve` stamps (`X-Wraith-Twin-Age`): *now* minus the newest
//! recording's time (a session's end, else its start). `max_age` fails the run (exit 2,
//! `twin-stale`), `warn_age` only warns. Durations are written `<n><unit>` with unit `s`, `m`,
//! `h`, `d` or `w` (`"30d"`, `"12h"`); a bare number is seconds.
//!
//! **Now.** A check is deterministic: it never reads the wall clock (the in-memory engine's
//! clock is `[serve.clock] base_epoch`, the report holds no time). So *now* is an input: the
//! binary takes it from `--now` or `WRAITH_CHECK_NOW`. With a `[freshness]` SLA and no *now*,
//! the SLA is reported `unevaluated` (with a warning) instead of reading the clock: the same
//! twin and recordings still give the same report bytes, and CI passes the time it means.
//!
//! **Drift.** This wraith refreshes a twin by recording into it again, so drift is measured
//! between recordings: synth marks a route drifted when its newest recording run answers in
//! another shape (or status) than its earlier ones (`Route::drift`, `docs/model-format.md`).
//! The report's `drift` is the share of the model's routes that drifted ([`DriftTally`]), with
//! their names; above `max_drift` the run fails (exit 2, `twin-drift-exceeded`). Drift needs no
//! *now*: it is judged even when the age is `unevaluated`.
//!
//! Not here: reading files or the clock (the binary hands in *now* and the recordings' times).

use serde::Serialize;
/// Durations as `wraith.toml` spells them (`"30d"`), shared with the twin's config.
pub use wraith_twin::duration::parse_duration;

/// `[freshness]` as written in `wraith.toml`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FreshnessInput<'a> {
    pub max_age: Option<&'a str>,
    pub warn_age: Option<&'a str>,
    pub max_drift: Option<f64>,
}

/// One bad `[freshness]` key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("[freshness]: `{key}`: {message}")]
pub struct FreshnessError {
    /// `max_age`, `warn_age` or `max_drift`.
    pub key: &'static str,
    pub message: String,
}

/// The validated SLA.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FreshnessGate {
    pub max_age_seconds: Option<u64>,
    pub warn_age_seconds: Option<u64>,
    pub max_drift: Option<f64>,
}

impl FreshnessGate {
    /// Validate `[freshness]`. `Ok(None)`: no key is set, so there is no SLA.
    pub fn parse(input: &FreshnessInput<'_>) -> Result<Option<FreshnessGate>, Vec<FreshnessError>> {
        if input.max_age.is_none() && input.warn_age.is_none() && input.max_drift.is_none() {
            return Ok(None);
        }
        let mut errors = Vec::new();
        let mut age = |key: &'static str, v: Option<&str>| {
            v.and_then(|s| match parse_duration(s) {
                Ok(secs) => Some(secs),
                Err(message) => {
                    errors.push(FreshnessError { key, message });
                    None
                }
            })
        };
        let max_age_seconds = age("max_age", input.max_age);
        let warn_age_seconds = age("warn_age", input.warn_age);
        if let Some(d) = input.max_drift
            && !(0.0..=1.0).contains(&d)
        {
            errors.push(FreshnessError {
                key: "max_drift",
                message: format!(
                    "is {d}; write the tolerated share of drifted routes as a fraction from 0 to 1 (0.1 = 10 %)"
                ),
            });
        }
        if let (Some(w), Some(m)) = (warn_age_seconds, max_age_seconds)
            && w > m
        {
            errors.push(FreshnessError {
                key: "warn_age",
                message: format!(
                    "is {w} s, longer than max_age ({m} s): the warning would never come first; make warn_age shorter than max_age"
                ),
            });
        }
        if errors.is_empty() {
            Ok(Some(FreshnessGate {
                max_age_seconds,
                warn_age_seconds,
                max_drift: input.max_drift,
            }))
        } else {
            Err(errors)
        }
    }
}

/// The model's drifted routes, as the freshness verdict counts them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DriftTally {
    /// Routes in the model.
    pub routes: usize,
    /// The names of the routes with a non-empty `Route::drift`, sorted
    /// ([`wraith_model::Model::drifted_route_names`]): one per route, a route of another host
    /// named with its origin.
    pub drifted: Vec<String>,
}

impl DriftTally {
    /// Count the drifted routes of `model`.
    pub fn of(model: &wraith_model::Model) -> DriftTally {
        DriftTally {
            routes: model.routes.len(),
            drifted: model.drifted_route_names(),
        }
    }

    /// The drifted share of the routes; `None` for a model without routes.
    pub fn fraction(&self) -> Option<f64> {
        (self.routes > 0).then(|| self.drifted.len() as f64 / self.routes as f64)
    }
}

/// The freshness verdict in the report (`freshness`; `null` without a `[freshness]` SLA).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FreshnessReport {
    /// `fresh`, `warn` (older than `warn_age`), `stale` (older than `max_age`: the run fails,
    /// `twin-stale`) or `unevaluated` (no *now* was given).
    pub status: &'static str,
    /// *Now*, unix seconds, as given (`--now`, `WRAITH_CHECK_NOW`); `null` when none was.
    pub now: Option<i64>,
    /// The newest recording's time, unix seconds (`null`: no recording has a time).
    pub recorded_at: Option<i64>,
    /// `now - recorded_at` (0 when the recording is newer than *now*).
    pub twin_age_seconds: Option<u64>,
    pub max_age_seconds: Option<u64>,
    pub warn_age_seconds: Option<u64>,
    pub max_drift: Option<f64>,
    /// The share of the model's routes that drifted between recording runs (0 to 1); `null`
    /// for a model without routes.
    pub drift: Option<f64>,
    /// Routes in the model (the share's denominator).
    pub routes_total: usize,
    /// The names of the drifted routes (`METHOD /path`, with ` on <origin>` for a route of
    /// another host), sorted.
    pub drifted_routes: Vec<String>,
    /// `drift` is above `max_drift`: the run fails (`twin-drift-exceeded`).
    pub drift_exceeded: bool,
}

impl FreshnessReport {
    /// The SLA failed: the run fails with exit 2 (`twin-stale` or `twin-drift-exceeded`).
    pub fn failed(&self) -> bool {
        self.status == "stale" || self.drift_exceeded
    }
}

/// Judge the twin's age (`now` and `recorded_at` in unix seconds) and its drift.
pub fn evaluate(
    gate: &FreshnessGate,
    now: Option<i64>,
    recorded_at: Option<i64>,
    drift: &DriftTally,
) -> FreshnessReport {
    let age = match (now, recorded_at) {
        (Some(n), Some(r)) => Some(u64::try_from(n.saturating_sub(r)).unwrap_or(0)),
        _ => None,
    };
    let status = match (now, age) {
        (None, _) => "unevaluated",
        // Nothing recorded a time: no age to hold to the SLA.
        (Some(_), None) => "unevaluated",
        (Some(_), Some(a)) => {
            if gate.max_age_seconds.is_some_and(|m| a > m) {
                "stale"
            } else if gate.warn_age_seconds.is_some_and(|w| a > w) {
                "warn"
            } else {
                "fresh"
            }
        }
    };
    let fraction = drift.fraction();
    FreshnessReport {
        status,
        now,
        recorded_at,
        twin_age_seconds: age,
        max_age_seconds: gate.max_age_seconds,
        warn_age_seconds: gate.warn_age_seconds,
        max_drift: gate.max_drift,
        drift: fraction,
        routes_total: drift.routes,
        drifted_routes: drift.drifted.clone(),
        drift_exceeded: matches!((fraction, gate.max_drift), (Some(f), Some(m)) if f > m),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400;

    #[test]
    fn no_key_means_no_sla_and_bad_keys_are_all_named() {
        assert_eq!(FreshnessGate::parse(&FreshnessInput::default()), Ok(None));
        let errors = FreshnessGate::parse(&FreshnessInput {
            max_age: Some("soon"),
            warn_age: Some("1x"),
            max_drift: Some(1.5),
        })
        .unwrap_err();
        let keys: Vec<&str> = errors.iter().map(|e| e.key).collect();
        assert_eq!(keys, ["max_age", "warn_age", "max_drift"]);
        let e = FreshnessGate::parse(&FreshnessInput {
            max_age: Some("1d"),
            warn_age: Some("2d"),
            max_drift: None,
        })
        .unwrap_err();
        assert_eq!(e[0].key, "warn_age");
    }

    #[test]
    fn age_above_max_age_is_stale_above_warn_age_warns() {
        let gate = FreshnessGate::parse(&FreshnessInput {
            max_age: Some("30d"),
            warn_age: Some("14d"),
            max_drift: None,
        })
        .unwrap()
        .unwrap();
        let at = 1_700_000_000;
        let none = DriftTally::default();
        let f = evaluate(&gate, Some(at + 31 * DAY), Some(at), &none);
        assert_eq!(f.status, "stale");
        assert!(f.failed());
        assert_eq!(f.twin_age_seconds, Some(31 * 86_400));
        assert_eq!(
            evaluate(&gate, Some(at + 15 * DAY), Some(at), &none).status,
            "warn"
        );
        // Limits are inclusive: exactly max_age is not stale, exactly warn_age not a warning.
        assert_eq!(
            evaluate(&gate, Some(at + 30 * DAY), Some(at), &none).status,
            "warn"
        );
        assert_eq!(
            evaluate(&gate, Some(at + 14 * DAY), Some(at), &none).status,
            "fresh"
        );
        assert_eq!(
            evaluate(&gate, Some(at - DAY), Some(at), &none).twin_age_seconds,
            Some(0)
        );
    }

    #[test]
    fn without_now_the_sla_is_unevaluated_never_failed() {
        let gate = FreshnessGate {
            max_age_seconds: Some(1),
            ..FreshnessGate::default()
        };
        let f = evaluate(&gate, None, Some(0), &DriftTally::default());
        assert_eq!(f.status, "unevaluated");
        assert!(!f.failed());
        assert_eq!(f.twin_age_seconds, None);
    }

    #[test]
    fn drift_above_max_drift_fails_and_is_judged_without_now() {
        let gate = FreshnessGate {
            max_drift: Some(0.25),
            ..FreshnessGate::default()
        };
        let tally = DriftTally {
            routes: 4,
            drifted: vec!["GET /a".into(), "GET /b".into()],
        };
        let f = evaluate(&gate, None, Some(0), &tally);
        assert_eq!(f.drift, Some(0.5));
        assert_eq!(f.drifted_routes, ["GET /a", "GET /b"]);
        assert_eq!(f.status, "unevaluated");
        assert!(f.drift_exceeded);
        assert!(f.failed());
        // The limit is inclusive: exactly max_drift passes.
        let one = DriftTally {
            routes: 4,
            drifted: vec!["GET /a".into()],
        };
        assert!(!evaluate(&gate, None, None, &one).failed());
        // No max_drift: drift is reported, never judged.
        let f = evaluate(&FreshnessGate::default(), None, None, &tally);
        assert_eq!(f.drift, Some(0.5));
        assert!(!f.failed());
        // A model without routes has no share.
        let f = evaluate(&gate, None, None, &DriftTally::default());
        assert_eq!(f.drift, None);
        assert!(!f.failed());
    }
}
