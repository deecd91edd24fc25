//! Durations as `wraith.toml` spells them: `"30d"`, `"12h"`, `"90m"`, `"3600s"`, `"2w"`.

/// `"30d"` → seconds. Units `s`, `m`, `h`, `d`, `w`; a bare number is seconds. The error says
/// what was wrong and how to write it.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad =
        || format!("`{s}` is not a duration; write it like \"30d\", \"12h\", \"90m\" or \"3600s\"");
    let too_large = || format!("`{s}` is too large a duration (at most about 584 billion years)");
    let n: u64 = num.parse().map_err(|e: std::num::ParseIntError| {
        if *e.kind() == std::num::IntErrorKind::PosOverflow {
            too_large()
        } else {
            bad()
        }
    })?;
    let mult = match unit.trim() {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 604_800,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(too_large)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units_and_reject_anything_else() {
        assert_eq!(parse_duration("30d"), Ok(30 * 86_400));
        assert_eq!(parse_duration("12h"), Ok(43_200));
        assert_eq!(parse_duration("90m"), Ok(5_400));
        assert_eq!(parse_duration("3600"), Ok(3_600));
        assert_eq!(parse_duration("2w"), Ok(1_209_600));
        for bad in ["", "d", "30 days", "-1d", "1.5d", "30y"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        for huge in ["999999999999999999d", "99999999999999999999999"] {
            let e = parse_duration(huge).unwrap_err();
            assert!(e.contains("too large a duration"), "{e}");
        }
    }
}
