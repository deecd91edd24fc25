//! `os.date` and `os.time(table)` for handlers, on the session clock and in UTC.
//!
//! A twin has no local time zone (its answers must not depend on the machine serving them), so
//! `os.date("%H")` and `os.date("!%H")` agree, `*t` tables say `isdst = false`, and
//! `os.time(table)` reads the table as UTC. Out-of-range fields carry over as C's `mktime`
//! does (`day = 32` of January is February 1st).

use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::{Span, Timestamp};
use mlua::{Lua, Table, Value};

/// `os.date([format [, time]])`: `format` (default `%c`, a leading `!` ignored) is `*t` for a
/// table of the date's fields, else a `strftime` pattern; `time` defaults to `now` (unix
/// seconds, the session clock).
/// `pattern` with the locale-dependent conversions spelled as Lua's C locale spells them:
/// `%c` as `Thu Dec  3 18:55:27 2026`, `%x` as `12/03/26`, `%X` as `18:55:27` (the date
/// library has its own, other spelling of each). `%%` stays a literal `%`.
fn c_locale(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('c') => out.push_str("%a %b %e %H:%M:%S %Y"),
            Some('x') => out.push_str("%m/%d/%y"),
            Some('X') => out.push_str("%H:%M:%S"),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

pub(crate) fn date_of(
    lua: &Lua,
    now: i64,
    format: Option<String>,
    time: Option<Value>,
) -> mlua::Result<Value> {
    let format = format.unwrap_or_else(|| "%c".to_string());
    let pattern = format.strip_prefix('!').unwrap_or(&format);
    let secs = match time {
        None | Some(Value::Nil) => now,
        Some(Value::Integer(n)) => n,
        Some(Value::Number(n)) if n.fract() == 0.0 && n.is_finite() => n as i64,
        Some(other) => {
            return Err(mlua::Error::runtime(format!(
                "os.date: the time must be whole unix seconds, got a {}",
                other.type_name()
            )));
        }
    };
    let at = Timestamp::from_second(secs)
        .map_err(|e| mlua::Error::runtime(format!("os.date: time {secs} is out of range: {e}")))?
        .to_zoned_datetime(TimeZone::UTC);
    if pattern == "*t" {
        let t = lua.create_table()?;
        t.raw_set("year", at.year())?;
        t.raw_set("month", at.month())?;
        t.raw_set("day", at.day())?;
        t.raw_set("hour", at.hour())?;
        t.raw_set("min", at.minute())?;
        t.raw_set("sec", at.second())?;
        // Lua counts weekdays from Sunday = 1.
        t.raw_set("wday", at.weekday().to_sunday_one_offset())?;
        t.raw_set("yday", at.day_of_year())?;
        t.raw_set("isdst", false)?;
        return Ok(Value::Table(t));
    }
    let pattern = c_locale(pattern);
    let text = jiff::fmt::strtime::format(&pattern, &at).map_err(|e| {
        mlua::Error::runtime(format!("os.date: `{format}` is not a date format: {e}"))
    })?;
    Ok(Value::String(lua.create_string(text)?))
}

/// `os.time(table)`: the unix seconds of the table's `year`, `month`, `day` (required), `hour`
/// (default 12), `min` and `sec` (default 0), read as UTC.
pub(crate) fn time_of(t: &Table) -> mlua::Result<i64> {
    let field = |name: &str, default: Option<i64>| -> mlua::Result<i64> {
        match t.raw_get::<Value>(name)? {
            Value::Integer(n) => Ok(n),
            Value::Number(n) if n.fract() == 0.0 && n.is_finite() => Ok(n as i64),
            Value::Nil => default.ok_or_else(|| {
                mlua::Error::runtime(format!("os.time: the table has no `{name}` field"))
            }),
            other => Err(mlua::Error::runtime(format!(
                "os.time: `{name}` must be a whole number, got a {}",
                other.type_name()
            ))),
        }
    };
    let out_of_range = || mlua::Error::runtime("os.time: the date is out of range");
    let year = i16::try_from(field("year", None)?).map_err(|_| out_of_range())?;
    let (month, day) = (field("month", None)?, field("day", None)?);
    let (hour, min, sec) = (
        field("hour", Some(12))?,
        field("min", Some(0))?,
        field("sec", Some(0))?,
    );
    let span = Span::new()
        .try_months(month - 1)
        .and_then(|s| s.try_days(day - 1))
        .and_then(|s| s.try_hours(hour))
        .and_then(|s| s.try_minutes(min))
        .and_then(|s| s.try_seconds(sec))
        .map_err(|_| out_of_range())?;
    let start: DateTime = Date::new(year, 1, 1)
        .map_err(|_| out_of_range())?
        .at(0, 0, 0, 0);
    let at = start.checked_add(span).map_err(|_| out_of_range())?;
    let ts = TimeZone::UTC.to_timestamp(at).map_err(|_| out_of_range())?;
    Ok(ts.as_second())
}
