//! Instant echoes: a timestamp answered as the instant a request value named, in the answer's
//! own spelling (a scheduled post's `scheduled_at` sent as `4000-01-01T14:33:14+00:00` and
//! answered `4000-01-01T14:33:14.000Z`).
//!
//! The plain echo in [`crate::unify`] compares values as they are spelled, so such a position
//! differed from the request in every exchange and was learned as the clock: the twin answered
//! a scheduled post as due now. Here a position is an echo of a request value's instant when
//! every observation's answer is exactly that request's instant written in the answer's one
//! spelling (the same [`ClockUnit`] in every answer, so the engine writes what was recorded).
//! Every observation's request must carry the source: a request without it says nothing of
//! what the answer would be.
//!
//! An answer stamped when it was answered is the clock's, even when the request named the same
//! second (a client sending its own time): at least one answer must lie outside the window its
//! exchange was answered in. One observation is enough then (confidence 6000, as a scalar
//! echoed once), two distinct instants give confidence 8000.

use serde_json::Value;
use wraith_model::{ClockUnit, EchoSource, Hole, HoleKind, JsonType};

use crate::unify::Ctx;
use crate::values;

/// Slack around the window an exchange was answered in, as [`crate::unify`] allows a clock.
const STAMP_SLACK_US: i64 = 2_000_000;

/// The instant echo hole for the scalars `vals` found under object key `key` (each with the
/// index of its observation's request in `ctxs`), when every answer was its request's instant.
pub fn learn(vals: &[(&Value, usize)], ctxs: &[Ctx<'_>], key: Option<&str>) -> Option<Hole> {
    let (first, first_ctx) = vals.first()?;
    let unit = values::clock_unit(first, key)?;
    if vals
        .iter()
        .any(|(v, _)| values::clock_unit(v, key).as_ref() != Some(&unit))
    {
        return None;
    }
    let ctx = ctxs.get(*first_ctx)?;
    for src in candidates(ctx, first, &unit) {
        let mut distinct: Vec<&Value> = Vec::new();
        let mut stamped_when_answered = true;
        let holds = vals.iter().all(|(v, c)| {
            let Some(ctx) = ctxs.get(*c) else {
                return false;
            };
            let Some(sent) = ctx.value_of(&src) else {
                return false;
            };
            if EchoSource::instant_value(&sent, &unit).as_ref() != Some(*v) {
                return false;
            }
            if !distinct.contains(v) {
                distinct.push(v);
            }
            stamped_when_answered &= answered_then(ctx, v, &unit);
            true
        });
        if !holds || stamped_when_answered {
            continue;
        }
        return Some(crate::unify::recorded_hole(
            HoleKind::Echo {
                from: EchoSource::Instant {
                    source: Box::new(src),
                    unit,
                },
            },
            JsonType::of(first),
            vals,
            if distinct.len() >= 2 { 8_000 } else { 6_000 },
        ));
    }
    None
}

/// The request values of `ctx` whose instant, in `unit`'s spelling, is `answered`: path
/// parameters, then query parameters, then body fields, each as the request sent it.
fn candidates(ctx: &Ctx<'_>, answered: &Value, unit: &ClockUnit) -> Vec<EchoSource> {
    let sources = ctx
        .params
        .iter()
        .map(|(param, _)| EchoSource::Path {
            param: param.clone(),
        })
        .chain(
            ctx.query
                .iter()
                .map(|(name, _)| EchoSource::Query { name: name.clone() }),
        )
        .chain(ctx.body.iter().map(|(pointer, _)| EchoSource::Body {
            pointer: pointer.clone(),
        }));
    let mut out: Vec<EchoSource> = Vec::new();
    for src in sources {
        if out.contains(&src) {
            continue;
        }
        if ctx
            .value_of(&src)
            .and_then(|sent| EchoSource::instant_value(&sent, unit))
            .is_some_and(|v| v == *answered)
        {
            out.push(src);
        }
    }
    out
}

/// Whether `v` names a moment inside the window `ctx`'s exchange was answered in (give or
/// take [`STAMP_SLACK_US`]); `false` when the recording has no timing.
fn answered_then(ctx: &Ctx<'_>, v: &Value, unit: &ClockUnit) -> bool {
    let (Some(at), Some((start, end))) = (unit.instant_us(v), ctx.answered) else {
        return false;
    };
    let (start, end) = (start as i64, end as i64);
    at >= start.saturating_sub(STAMP_SLACK_US) && at <= end.saturating_add(STAMP_SLACK_US)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    /// An observation's request: its form body fields and when it was answered.
    fn ctx<'a>(body: &'a [(String, Value)], answered: Option<(u64, u64)>) -> Ctx<'a> {
        Ctx::of_body(body, answered)
    }

    fn sent(at: &str) -> Vec<(String, Value)> {
        vec![
            ("/status".to_string(), json!("later")),
            ("/scheduled_at".to_string(), json!(at)),
        ]
    }

    /// 2026-10-14T19:06:41Z, in microseconds.
    const ANSWERED_US: u64 = 1_792_004_801_000_000;

    #[test]
    fn a_timestamp_answered_as_the_instant_the_request_named_echoes_it_in_its_own_spelling() {
        let (a, b) = (
            sent("4000-01-01T14:33:14+00:00"),
            sent("2026-10-15T19:12:54+00:00"),
        );
        let ctxs = [
            ctx(&a, Some((ANSWERED_US, ANSWERED_US))),
            ctx(&b, Some((ANSWERED_US, ANSWERED_US))),
        ];
        let (x, y) = (
            json!("4000-01-01T14:33:14.000Z"),
            json!("2026-10-15T19:12:54.000Z"),
        );
        let hole = learn(&[(&x, 0), (&y, 1)], &ctxs, Some("scheduled_at")).unwrap();
        let HoleKind::Echo {
            from: EchoSource::Instant { source, unit },
        } = &hole.source
        else {
            panic!("{hole:?}");
        };
        assert_eq!(
            **source,
            EchoSource::Body {
                pointer: "/scheduled_at".into()
            }
        );
        assert_eq!(
            *unit,
            ClockUnit::Iso8601 {
                fraction_digits: 3,
                suffix: "Z".into()
            }
        );
        assert_eq!(hole.confidence_bp, 8_000);
        // One far-off instant alone is an echo too, at lower confidence.
        let one = learn(&[(&x, 0)], &ctxs, Some("scheduled_at")).unwrap();
        assert_eq!(one.confidence_bp, 6_000);
    }

    #[test]
    fn a_timestamp_stamped_when_answered_or_once_unrelated_to_the_request_is_no_instant_echo() {
        // The client sent its own time and the server stamped the same second: the clock's.
        let now = sent("2026-10-14T19:06:41+00:00");
        let ctxs = [ctx(&now, Some((ANSWERED_US, ANSWERED_US + 1_000)))];
        let stamped = json!("2026-10-14T19:06:41.000Z");
        assert!(learn(&[(&stamped, 0)], &ctxs, Some("scheduled_at")).is_none());
        // One answer that is not its request's instant breaks the rule.
        let (a, b) = (
            sent("4000-01-01T14:33:14+00:00"),
            sent("2026-10-15T19:12:54+00:00"),
        );
        let ctxs = [ctx(&a, None), ctx(&b, None)];
        let (x, y) = (
            json!("4000-01-01T14:33:14.000Z"),
            json!("2026-10-15T19:12:55.000Z"),
        );
        assert!(learn(&[(&x, 0), (&y, 1)], &ctxs, Some("scheduled_at")).is_none());
        // A request without the source says nothing: no echo is learned from it.
        let bare = vec![("/status".to_string(), json!("now"))];
        let ctxs = [ctx(&a, None), ctx(&bare, None)];
        assert!(learn(&[(&x, 0), (&x, 1)], &ctxs, Some("scheduled_at")).is_none());
    }
}
