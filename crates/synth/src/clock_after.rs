//! Clocks offset by a sent span: a timestamp answered as the moment of the answer plus a number
//! of seconds the request sent (a poll's `expires_at`, its `expires_in` after the post that
//! made it). Learned as [`HoleKind::Clock`]'s `after`; not how the engine adds it.
//!
//! A plain clock hole answered such a position as the moment of the request: the twin said a
//! poll sent to run five minutes had already expired. Here a clock position follows a request
//! body field when, in every observation, the request sent a number there and the answer's
//! instant less that many seconds is the moment it was answered: within the exchange's
//! answering window where the recording has timing, else beside another timestamp of the same
//! answer under a time-like key (the post's `created_at`), each within two seconds. At least
//! one observation must have sent a span longer than that slack, or the offset is not seen.
//! The first body field in the first observation's order that fits wins.
//!
//! [`HoleKind::Clock`]: wraith_model::HoleKind::Clock

use serde_json::Value;
use wraith_model::clock::sent_seconds_us;
use wraith_model::{ClockUnit, EchoSource};

use crate::unify::Ctx;
use crate::values;

/// How far the answer's moment, recovered, may lie from what marks it.
const SLACK_US: i64 = 2_000_000;

/// The request body field the clock position of `vals` (found under object key `key`, each
/// with its observation's index in `ctxs`) lies that many seconds after, if one does.
pub fn learn(vals: &[(&Value, usize)], ctxs: &[Ctx<'_>], unit: &ClockUnit) -> Option<EchoSource> {
    let (_, first) = vals.first()?;
    let first = ctxs.get(*first)?;
    // The moments each observation's answer marks, read once and only when a span is sent.
    let mut marks: Vec<Option<Vec<i64>>> = vec![None; vals.len()];
    'candidates: for (pointer, sent) in first.body {
        if sent_seconds_us(sent).is_none() {
            continue;
        }
        let mut seen_span = false;
        for (k, (v, c)) in vals.iter().enumerate() {
            let ctx = ctxs.get(*c)?;
            let span = ctx
                .body
                .iter()
                .find(|(p, _)| p == pointer)
                .and_then(|(_, v)| sent_seconds_us(v));
            let (Some(span), Some(at)) = (span, unit.instant_us(v)) else {
                continue 'candidates;
            };
            seen_span |= span.abs() > SLACK_US;
            let moment = at.saturating_sub(span);
            if let Some((start, end)) = ctx.answered {
                let (start, end) = (start as i64, end as i64);
                if moment >= start.saturating_sub(SLACK_US)
                    && moment <= end.saturating_add(SLACK_US)
                {
                    continue;
                }
            }
            let marked = marks[k].get_or_insert_with(|| answer_marks(ctx, unit));
            if !marked.iter().any(|m| m.abs_diff(moment) <= SLACK_US as u64) {
                continue 'candidates;
            }
        }
        if seen_span {
            return Some(EchoSource::Body {
                pointer: pointer.clone(),
            });
        }
    }
    None
}

/// The instants the observation's answer holds under time-like keys, spelled in `unit`.
fn answer_marks(ctx: &Ctx<'_>, unit: &ClockUnit) -> Vec<i64> {
    let mut out = Vec::new();
    if let Some(answer) = ctx.obs.and_then(|o| o.resp_json()) {
        collect(&answer, None, unit, &mut out);
    }
    out
}

fn collect(v: &Value, key: Option<&str>, unit: &ClockUnit, out: &mut Vec<i64>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, v)| collect(v, Some(k), unit, out)),
        Value::Array(a) => a.iter().for_each(|v| collect(v, key, unit, out)),
        _ => {
            if key.is_some_and(values::is_time_key)
                && let Some(t) = unit.instant_us(v)
            {
                out.push(t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn iso() -> ClockUnit {
        ClockUnit::Iso8601 {
            fraction_digits: 3,
            suffix: "Z".into(),
        }
    }

    fn ctx<'a>(body: &'a [(String, Value)], answered: Option<(u64, u64)>) -> Ctx<'a> {
        Ctx::of_body(body, answered)
    }

    fn us(s: &str) -> u64 {
        iso().instant_us(&json!(s)).unwrap() as u64
    }

    #[test]
    fn a_clock_a_sent_span_after_the_answer_follows_that_field() {
        let a = vec![
            ("/status".to_string(), json!("x")),
            ("/poll/expires_in".to_string(), json!(300)),
        ];
        let b = vec![("/poll/expires_in".to_string(), json!("60"))];
        let t0 = us("2026-10-14T19:06:34.429Z");
        let t1 = us("2026-10-14T20:00:00.000Z");
        let ctxs = [
            ctx(&a, Some((t0, t0 + 5_000))),
            ctx(&b, Some((t1, t1 + 5_000))),
        ];
        let (va, vb) = (
            json!("2026-10-14T19:11:34.424Z"),
            json!("2026-10-14T20:01:00.003Z"),
        );
        assert_eq!(
            learn(&[(&va, 0), (&vb, 1)], &ctxs, &iso()),
            Some(EchoSource::Body {
                pointer: "/poll/expires_in".into()
            })
        );
    }

    #[test]
    fn a_plain_clock_or_a_span_off_the_mark_follows_nothing() {
        let a = vec![("/poll/expires_in".to_string(), json!(300))];
        let t0 = us("2026-10-14T19:06:34.429Z");
        let ctxs = [ctx(&a, Some((t0, t0 + 5_000)))];
        let now = json!("2026-10-14T19:06:34.430Z");
        assert_eq!(learn(&[(&now, 0)], &ctxs, &iso()), None);
        let later = json!("2026-10-14T19:16:34.430Z");
        assert_eq!(learn(&[(&later, 0)], &ctxs, &iso()), None);
        // A span within the slack shows no offset.
        let b = vec![("/delay".to_string(), json!(1))];
        let ctxs = [ctx(&b, Some((t0, t0 + 5_000)))];
        let soon = json!("2026-10-14T19:06:35.429Z");
        assert_eq!(learn(&[(&soon, 0)], &ctxs, &iso()), None);
    }
}
