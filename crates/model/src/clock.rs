//! Instants as a model writes them: reading a timestamp a recording or a request holds, and
//! writing an instant in a [`ClockUnit`]'s spelling. Synth (learning), the engine (rendering)
//! and check (judging) must agree on both, so all three call these functions.

use serde_json::{Number, Value};

use crate::template::ClockUnit;

/// Epoch seconds a number or a numeric text is read as when it names an instant: 2001-09 to
/// 2096-10. Smaller or larger numbers are counts, amounts and ids far more often.
const EPOCH_SEC: std::ops::Range<f64> = 1.0e9..4.0e9;
/// The same span in epoch milliseconds.
const EPOCH_MS: std::ops::Range<f64> = 1.0e12..4.0e12;

impl ClockUnit {
    /// The instant `t_us` (unix microseconds) in this unit and spelling.
    pub fn value_at(&self, t_us: i64) -> Value {
        match self {
            ClockUnit::EpochSec => Value::Number(Number::from(t_us.div_euclid(1_000_000))),
            ClockUnit::EpochMs => Value::Number(Number::from(t_us.div_euclid(1_000))),
            ClockUnit::Iso8601 {
                fraction_digits,
                suffix,
            } => Value::String(iso8601(t_us, *fraction_digits, suffix)),
        }
    }

    /// The instant a value spelled in this unit names, in unix microseconds (a naive ISO
    /// timestamp read as UTC); `None` when it names none.
    pub fn instant_us(&self, v: &Value) -> Option<i64> {
        match (self, v) {
            (ClockUnit::EpochSec, Value::Number(n)) => Some((n.as_f64()? * 1e6) as i64),
            (ClockUnit::EpochMs, Value::Number(n)) => Some((n.as_f64()? * 1e3) as i64),
            (ClockUnit::Iso8601 { .. }, Value::String(s)) => iso_instant_us(s),
            _ => None,
        }
    }
}

/// The instant a request value names, in unix microseconds, whatever its spelling: an ISO 8601
/// timestamp (with an offset, or naive and read as UTC), a date (its midnight, UTC), or epoch
/// seconds or milliseconds as a number or a numeric text (a form field). `None` for anything
/// else.
pub fn instant_of(v: &Value) -> Option<i64> {
    match v {
        Value::String(s) => iso_instant_us(s)
            .or_else(|| {
                let midnight = s.parse::<jiff::civil::Date>().ok()?.at(0, 0, 0, 0);
                jiff::tz::TimeZone::UTC
                    .to_timestamp(midnight)
                    .ok()
                    .map(|t| t.as_microsecond())
            })
            .or_else(|| epoch_us(s.trim().parse::<f64>().ok()?)),
        Value::Number(n) => epoch_us(n.as_f64()?),
        _ => None,
    }
}

/// A number of seconds a request sent (a JSON number, or a numeric text as a form sends it), in
/// microseconds: how far after the clock a [`crate::HoleKind::Clock`] with `after` lies. `None`
/// for anything else, and for a span past a thousand years either way, which no expiry is.
pub fn sent_seconds_us(v: &Value) -> Option<i64> {
    const MAX_SECONDS: f64 = 1_000.0 * 366.0 * 86_400.0;
    let x = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    (x.is_finite() && x.abs() <= MAX_SECONDS).then_some((x * 1e6) as i64)
}

/// An epoch number in seconds or milliseconds, by its magnitude, in microseconds.
fn epoch_us(x: f64) -> Option<i64> {
    if EPOCH_SEC.contains(&x) {
        Some((x * 1e6) as i64)
    } else if EPOCH_MS.contains(&x) {
        Some((x * 1e3) as i64)
    } else {
        None
    }
}

/// An ISO 8601 timestamp with an offset, or naive (read as UTC), `T` or space between date and
/// time.
fn iso_instant_us(s: &str) -> Option<i64> {
    if let Ok(ts) = s.parse::<jiff::Timestamp>() {
        return Some(ts.as_microsecond());
    }
    let dt = s.parse::<jiff::civil::DateTime>().ok()?;
    // A naive date-time only: a text that is a bare date is not a timestamp's spelling.
    if !s.contains([':']) {
        return None;
    }
    jiff::tz::TimeZone::UTC
        .to_timestamp(dt)
        .ok()
        .map(|t| t.as_microsecond())
}

/// `t_us` held within the instants a date can show. A clock started near the end of that
/// range keeps ticking past it; its dates stop at the last instant rather than wrapping back
/// to 1970.
pub fn clamped_us(t_us: i64) -> i64 {
    // Whole seconds at both ends: jiff refuses the fraction of its last second.
    t_us.clamp(
        jiff::Timestamp::MIN.as_second().saturating_add(1) * 1_000_000,
        jiff::Timestamp::MAX.as_second() * 1_000_000,
    )
}

/// RFC 3339 / ISO 8601 UTC with the recorded fraction digits and zone suffix.
pub fn iso8601(t_us: i64, fraction_digits: u8, suffix: &str) -> String {
    let t_us = clamped_us(t_us);
    let ts = jiff::Timestamp::from_microsecond(t_us).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let dt = jiff::tz::TimeZone::UTC.to_datetime(ts);
    let mut s = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second()
    );
    let micros = t_us.rem_euclid(1_000_000);
    match fraction_digits {
        0 => {}
        1..=3 => {
            let ms = micros / 1000;
            let full = format!("{ms:03}");
            s.push('.');
            s.push_str(&full[..fraction_digits as usize]);
        }
        _ => {
            let full = format!("{micros:06}");
            s.push('.');
            s.push_str(&full[..(fraction_digits as usize).min(6)]);
            for _ in 6..fraction_digits {
                s.push('0');
            }
        }
    }
    s.push_str(suffix);
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn iso(fraction_digits: u8, suffix: &str) -> ClockUnit {
        ClockUnit::Iso8601 {
            fraction_digits,
            suffix: suffix.to_string(),
        }
    }

    #[test]
    fn dates_past_the_last_showable_instant_stop_there_instead_of_wrapping_to_1970() {
        let last_us = jiff::Timestamp::MAX.as_second() * 1_000_000;
        let past = last_us.saturating_add(5_000_000);
        assert_eq!(iso8601(past, 0, "Z"), iso8601(last_us, 0, "Z"));
        assert!(
            iso8601(past, 0, "Z").starts_with("9999-12-"),
            "{}",
            iso8601(past, 0, "Z")
        );
        assert_eq!(iso8601(0, 3, "Z"), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn a_request_instant_is_read_in_any_of_its_spellings() {
        let at = "3000-01-01T14:33:14Z"
            .parse::<jiff::Timestamp>()
            .unwrap()
            .as_microsecond();
        for v in [
            json!("3000-01-01T14:33:14+00:00"),
            json!("3000-01-01T16:33:14+02:00"),
            json!("3000-01-01T14:33:14Z"),
            json!("3000-01-01T14:33:14"),
            json!("3000-01-01 14:33:14"),
        ] {
            assert_eq!(instant_of(&v), Some(at), "{v}");
        }
        assert_eq!(
            instant_of(&json!("2030-01-01")),
            Some(1_893_456_000_000_000)
        );
        assert_eq!(
            instant_of(&json!(1_893_456_000)),
            Some(1_893_456_000_000_000)
        );
        assert_eq!(
            instant_of(&json!("1893456000")),
            Some(1_893_456_000_000_000)
        );
        assert_eq!(
            instant_of(&json!(1_893_456_000_000u64)),
            Some(1_893_456_000_000_000)
        );
        for v in [
            json!("soon"),
            json!(42),
            json!("42"),
            json!(true),
            json!(null),
        ] {
            assert_eq!(instant_of(&v), None, "{v}");
        }
    }

    #[test]
    fn an_instant_is_written_in_the_units_spelling_and_read_back() {
        let at = "3000-01-01T14:33:14Z"
            .parse::<jiff::Timestamp>()
            .unwrap()
            .as_microsecond();
        assert_eq!(iso(3, "Z").value_at(at), json!("3000-01-01T14:33:14.000Z"));
        assert_eq!(
            iso(0, "+00:00").value_at(at),
            json!("3000-01-01T14:33:14+00:00")
        );
        assert_eq!(
            ClockUnit::EpochSec.value_at(1_893_456_000_000_000),
            json!(1_893_456_000)
        );
        assert_eq!(
            iso(3, "Z").instant_us(&json!("3000-01-01T14:33:14.000Z")),
            Some(at)
        );
        assert_eq!(ClockUnit::EpochMs.instant_us(&json!("x")), None);
    }
}
