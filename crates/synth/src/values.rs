//! Shapes of single values: ids, timestamps, identifier-like field names.
//!
//! Pure functions with no knowledge of routes; every inference rule that looks at one value
//! lives here so it can be unit-tested alone.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;
use wraith_model::{ClockUnit, IdCharset, IdShape};

/// A scalar key (a string, or a number as its text) as a path would carry it; `None` for
/// other values.
pub fn scalar_key(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

pub fn is_2xx(status: u16) -> bool {
    (200..300).contains(&status)
}

pub fn is_4xx(status: u16) -> bool {
    (400..500).contains(&status)
}

/// RFC 3339 UTC timestamp of unix microseconds; `None` when out of range.
pub fn rfc3339_from_us(us: u64) -> Option<String> {
    let us = i64::try_from(us).ok()?;
    let ts = jiff::Timestamp::from_microsecond(us).ok()?;
    Some(ts.to_string())
}

/// Percent-decode a path segment as the engine does
/// ([`wraith_model::request_key::decode_path_segment`]).
pub fn decode_segment(seg: &str) -> String {
    wraith_model::request_key::decode_path_segment(seg)
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| match Regex::new(pattern) {
        Ok(r) => r,
        // The patterns are literals of this file; a typo is caught by the unit tests.
        Err(e) => panic!("invalid built-in regex {pattern}: {e}"),
    })
}

pub fn is_uuid(s: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    )
    .is_match(s)
}

pub fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// An API version path prefix (`v1`, `v2`, `v4beta`, `v1_alpha`) or the `api` root.
pub fn is_version_prefix(seg: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    seg == "api" || re(&R, r"^v\d+(?:[_-]?(?:alpha|beta)\d*)?$").is_match(seg)
}

/// A path segment that is an identifier whatever the rest of the recordings say: numbers,
/// UUIDs and other long hex, prefixed ids (`cus_0001ab`), IP addresses, values holding an
/// encoded `/`, and mixed segments with a run of four or more digits (snowflake suffixes,
/// timestamps in labels).
pub fn is_strong_id_segment(raw: &str) -> bool {
    static PREFIXED: OnceLock<Regex> = OnceLock::new();
    static HEXISH: OnceLock<Regex> = OnceLock::new();
    static IPV4: OnceLock<Regex> = OnceLock::new();
    static IPV6: OnceLock<Regex> = OnceLock::new();
    static DIGIT_RUN: OnceLock<Regex> = OnceLock::new();
    if raw.is_empty() || is_version_prefix(raw) {
        return false;
    }
    if is_digits(raw) || is_uuid(raw) {
        return true;
    }
    if raw.contains('%') {
        let decoded = decode_segment(raw);
        if decoded.contains('/') {
            return true;
        }
        return is_strong_id_segment_decoded(&decoded);
    }
    if re(&HEXISH, r"^[0-9a-fA-F-]{16,}$").is_match(raw)
        && raw.bytes().filter(|b| b.is_ascii_hexdigit()).count() >= 16
        && raw.bytes().any(|b| b.is_ascii_digit())
    {
        return true;
    }
    if re(&PREFIXED, r"^[A-Za-z]{1,12}_[A-Za-z0-9]{6,}$").is_match(raw)
        && raw.bytes().any(|b| b.is_ascii_digit())
    {
        return true;
    }
    if re(&IPV4, r"^\d{1,3}(?:\.\d{1,3}){3}$").is_match(raw) {
        return true;
    }
    if raw.matches(':').count() >= 2 && re(&IPV6, r"^[0-9a-fA-F:]+$").is_match(raw) {
        return true;
    }
    re(&DIGIT_RUN, r"\d{4,}").is_match(raw)
}

fn is_strong_id_segment_decoded(decoded: &str) -> bool {
    !decoded.contains('%') && is_strong_id_segment(decoded)
}

pub use wraith_model::is_identifier_key;

/// Keys whose numeric values may be clocks.
pub fn is_time_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.ends_with("_at")
        || k.ends_with("at") && k.len() > 2 && key.ends_with("At")
        || k.contains("time")
        || k.contains("date")
        || k == "created"
        || k == "updated"
        || k.starts_with("expires")
        || k.ends_with("_on")
}

/// The clock unit of a timestamp-looking value, if it is one.
pub fn clock_unit(v: &Value, key: Option<&str>) -> Option<ClockUnit> {
    match v {
        Value::String(s) => iso_unit(s),
        Value::Number(n) => {
            let key = key?;
            if !is_time_key(key) {
                return None;
            }
            let x = n.as_f64()?;
            if (1.0e9..4.0e9).contains(&x) {
                Some(ClockUnit::EpochSec)
            } else if (1.0e12..4.0e12).contains(&x) {
                Some(ClockUnit::EpochMs)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// `2026-10-14T19:06:41.274Z` → ISO 8601 with 3 fraction digits and suffix `Z`.
pub fn iso_unit(s: &str) -> Option<ClockUnit> {
    static R: OnceLock<Regex> = OnceLock::new();
    let caps = re(
        &R,
        r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$",
    )
    .captures(s)?;
    let fraction_digits = caps.get(1).map(|m| m.as_str().len()).unwrap_or(0) as u8;
    let suffix = caps
        .get(2)
        .map(|m| m.as_str().to_string())
        .unwrap_or_default();
    Some(ClockUnit::Iso8601 {
        fraction_digits,
        suffix,
    })
}

/// Shortest value read as a URL-safe base64 token ([`IdCharset::Base64Url`]).
const MIN_BASE64URL_TOKEN: usize = 20;

fn charset_of(s: &str) -> Option<IdCharset> {
    if s.is_empty() {
        return None;
    }
    if !s.bytes().all(|b| b.is_ascii_alphanumeric()) {
        // `-` and `_` inside a long value mixing cases and digits: a random URL-safe base64
        // token, not words joined by separators.
        let token = s.len() >= MIN_BASE64URL_TOKEN
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            && s.bytes().any(|b| b.is_ascii_uppercase())
            && s.bytes().any(|b| b.is_ascii_lowercase())
            && s.bytes().any(|b| b.is_ascii_digit());
        return token.then_some(IdCharset::Base64Url);
    }
    let digits = s.bytes().all(|b| b.is_ascii_digit());
    let lower_hex = s
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let upper = s.bytes().any(|b| b.is_ascii_uppercase());
    let lower = s.bytes().any(|b| b.is_ascii_lowercase());
    Some(if digits {
        IdCharset::Digits
    } else if lower_hex {
        IdCharset::Hex
    } else if upper && !lower {
        IdCharset::UpperAlnum
    } else if lower && !upper {
        IdCharset::LowerAlnum
    } else {
        IdCharset::Base62
    })
}

fn charset_rank(c: IdCharset) -> u8 {
    match c {
        IdCharset::Digits => 0,
        IdCharset::Hex => 1,
        IdCharset::UpperAlnum => 2,
        IdCharset::LowerAlnum => 2,
        IdCharset::Base62 => 3,
        IdCharset::Base64Url => 4,
    }
}

fn widen(a: IdCharset, b: IdCharset) -> IdCharset {
    use IdCharset::*;
    match (a, b) {
        (x, y) if x == y => x,
        (UpperAlnum, LowerAlnum) | (LowerAlnum, UpperAlnum) => Base62,
        (Hex, UpperAlnum) | (UpperAlnum, Hex) => Base62,
        (x, y) => {
            if charset_rank(x) >= charset_rank(y) {
                x
            } else {
                y
            }
        }
    }
}

/// Learn the shape of a family of id values: all UUIDs → `Uuid`; numbers (or digit strings of
/// 6+ digits) → `Integer` above the largest; a common letter prefix ending in `_`, `-` or `/`
/// followed by an alphanumeric tail → `Token`. `None` when the values share no shape.
pub fn learn_id_shape(values: &[&Value]) -> Option<IdShape> {
    // A hyphen-grouped key no other shape describes (`DD873740-C520-49DE-825B296BA2ABCED7`).
    learn_plain_shape(values).or_else(|| grouped_shape(values))
}

/// The shape a create mints its keys in where [`learn_id_shape`] finds none (keys too short or
/// plain words: `it_9`, `admin`): the keys' common prefix up to its last separator, then a
/// tail of their characters, at least six long. A create must answer a key no record holds:
/// its one recorded key, replayed, would make every create overwrite the last. `None` unless
/// every key is an ASCII string whose tail (after the prefix) is alphanumeric.
pub fn create_key_fallback(values: &[&str]) -> Option<IdShape> {
    let first = values.first()?;
    if !values.iter().all(|s| s.is_ascii()) {
        return None;
    }
    let common = values[1..].iter().fold(first.len(), |n, s| {
        n.min(
            first
                .bytes()
                .zip(s.bytes())
                .take_while(|(a, b)| a == b)
                .count(),
        )
    });
    let prefix_end = first[..common].rfind(['_', '-', '/']).map_or(0, |i| i + 1);
    let mut charset: Option<IdCharset> = None;
    let mut longest = 0;
    for s in values {
        let tail = s.get(prefix_end..)?;
        if !tail.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return None;
        }
        let c = charset_of(tail)?;
        charset = Some(charset.map_or(c, |prev| widen(prev, c)));
        longest = longest.max(tail.len());
    }
    Some(IdShape::Token {
        prefix: first[..prefix_end].to_string(),
        charset: charset?,
        length: longest.max(6),
    })
}

/// Hyphen-grouped tokens: at least two groups of ASCII alphanumerics, the same group lengths
/// in every value, at least 16 of them in all, and every group position holding a digit in
/// some value (a label's words, `go-test-logs-<n>`, never do; random groups do).
fn grouped_shape(values: &[&Value]) -> Option<IdShape> {
    let mut groups: Option<Vec<usize>> = None;
    let mut charset: Option<IdCharset> = None;
    let mut digit: Vec<bool> = Vec::new();
    for v in values {
        let s = v.as_str()?;
        let parts: Vec<&str> = s.split('-').collect();
        let lens: Vec<usize> = parts.iter().map(|p| p.len()).collect();
        match &groups {
            None => {
                digit = vec![false; lens.len()];
                groups = Some(lens);
            }
            Some(g) if *g == lens => {}
            Some(_) => return None,
        }
        for (i, p) in parts.iter().enumerate() {
            let c = charset_of(p)?;
            charset = Some(charset.map_or(c, |prev| widen(prev, c)));
            digit[i] |= p.bytes().any(|b| b.is_ascii_digit());
        }
    }
    let groups = groups?;
    if groups.len() < 2 || groups.iter().sum::<usize>() < 16 || !digit.iter().all(|d| *d) {
        return None;
    }
    Some(IdShape::Grouped {
        charset: charset?,
        groups,
    })
}

fn learn_plain_shape(values: &[&Value]) -> Option<IdShape> {
    if values.is_empty() {
        return None;
    }
    if values.iter().all(|v| v.as_u64().is_some()) {
        let above = values.iter().filter_map(|v| v.as_u64()).max()?;
        return Some(IdShape::Integer {
            above,
            as_string: false,
        });
    }
    let strs: Vec<&str> = values.iter().filter_map(|v| v.as_str()).collect();
    if strs.len() != values.len() {
        return None;
    }
    if strs.iter().all(|s| is_uuid(s)) {
        return Some(IdShape::Uuid);
    }
    if strs.iter().all(|s| is_digits(s) && s.len() <= 19) {
        let above = strs.iter().filter_map(|s| s.parse::<u64>().ok()).max()?;
        return Some(IdShape::Integer {
            above,
            as_string: true,
        });
    }
    // Token shapes are ASCII; anything else is text, not an id (and byte slicing below is
    // only safe on ASCII).
    if !strs.iter().all(|s| s.is_ascii()) {
        return None;
    }
    // Common prefix up to and including its last separator.
    let first = strs[0];
    let mut common = first.len();
    for s in &strs[1..] {
        common = common.min(
            first
                .bytes()
                .zip(s.bytes())
                .take_while(|(a, b)| a == b)
                .count(),
        );
    }
    // `/` ends a prefix too (`private/26427534`): the tail is never a path of its own, since
    // no token charset holds a `/`, and the word before it must be letters as for `_` and `-`.
    let prefix_end = first[..common]
        .rfind(['_', '-', '/'])
        .map(|i| i + 1)
        .unwrap_or(0);
    let prefix = &first[..prefix_end];
    if !prefix.is_empty()
        && !prefix[..prefix.len() - 1]
            .bytes()
            .all(|b| b.is_ascii_alphabetic())
    {
        return None;
    }
    let mut charset: Option<IdCharset> = None;
    let mut lengths: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
    for s in &strs {
        let tail = s.get(prefix_end..)?;
        let c = charset_of(tail)?;
        charset = Some(match charset {
            None => c,
            Some(prev) => widen(prev, c),
        });
        *lengths.entry(tail.len()).or_insert(0) += 1;
    }
    let charset = charset?;
    // Most common tail length (ties: the longer).
    let length = lengths
        .iter()
        .max_by_key(|(len, n)| (**n, **len))
        .map(|(len, _)| *len)?;
    if length < 6 {
        return None;
    }
    // A tail of plain letters is a word, not an id.
    if !strs
        .iter()
        .any(|s| s.bytes().skip(prefix_end).any(|b| b.is_ascii_digit()))
    {
        return None;
    }
    Some(IdShape::Token {
        prefix: prefix.to_string(),
        charset,
        length,
    })
}

/// The regex character class of a charset.
fn charset_class(charset: IdCharset) -> &'static str {
    match charset {
        IdCharset::Digits => "0-9",
        IdCharset::Hex => "0-9a-f",
        IdCharset::UpperAlnum => "0-9A-Z",
        IdCharset::LowerAlnum => "0-9a-z",
        IdCharset::Base62 => "0-9A-Za-z",
        IdCharset::Base64Url => "0-9A-Za-z_-",
    }
}

/// A regex describing values of a shape (for `symbols.json` `format_pattern`).
pub fn shape_pattern(shape: &IdShape) -> String {
    match shape {
        IdShape::Uuid => "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}".to_string(),
        IdShape::Integer { .. } => "[0-9]+".to_string(),
        IdShape::Derived { .. } => ".+".to_string(),
        IdShape::Grouped { charset, groups } => groups
            .iter()
            .map(|len| format!("[{}]{{{len}}}", charset_class(*charset)))
            .collect::<Vec<_>>()
            .join("-"),
        IdShape::Token {
            prefix,
            charset,
            length,
        } => {
            let class = match charset {
                IdCharset::Digits => "0-9",
                IdCharset::Hex => "0-9a-f",
                IdCharset::UpperAlnum => "0-9A-Z",
                IdCharset::LowerAlnum => "0-9a-z",
                IdCharset::Base62 => "0-9A-Za-z",
                IdCharset::Base64Url => "0-9A-Za-z_-",
            };
            format!("{}[{class}]{{{length}}}", regex::escape(prefix))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hyphen_grouped_keys_learn_a_grouped_shape() {
        let a = json!("DD873740-C520-49DE-825B296BA2ABCED7");
        let b = json!("41828261-BFF9-4B4F-8FFCCC356F7A62D8");
        assert_eq!(
            learn_id_shape(&[&a, &b]),
            Some(IdShape::Grouped {
                charset: IdCharset::UpperAlnum,
                groups: vec![8, 4, 4, 16],
            })
        );
        let pattern = shape_pattern(&IdShape::Grouped {
            charset: IdCharset::UpperAlnum,
            groups: vec![8, 4],
        });
        assert_eq!(pattern, "[0-9A-Z]{8}-[0-9A-Z]{4}");
    }

    #[test]
    fn hyphenated_labels_are_no_grouped_id() {
        // Words in fixed positions never hold a digit; the numbered tail alone does.
        let a = json!("go-test-logs-monitoring-1778673809872719000");
        let b = json!("go-test-logs-scheduling-1778673809872719111");
        assert!(!matches!(
            learn_id_shape(&[&a, &b]),
            Some(IdShape::Grouped { .. })
        ));
        // Group lengths that differ between values are no one shape.
        let c = json!("AB12CD34-EF56");
        let d = json!("AB12CD34E-F56");
        assert_eq!(grouped_shape(&[&c, &d]), None);
    }

    #[test]
    fn a_letter_prefix_ending_in_a_slash_learns_a_token_shape() {
        let a = json!("private/26427534");
        let b = json!("private/38637317");
        let c = json!("private/160700");
        assert_eq!(
            learn_id_shape(&[&a, &b, &c]),
            Some(IdShape::Token {
                prefix: "private/".to_string(),
                charset: IdCharset::Digits,
                length: 8,
            })
        );
    }

    #[test]
    fn mixed_or_nested_slash_prefixes_learn_no_shape() {
        // Prefixes that differ between values share no constant prefix, and the tail after
        // the shared part still holds a `/`.
        let a = json!("private/26427534");
        let b = json!("shared/38637317");
        assert_eq!(learn_id_shape(&[&a, &b]), None);
        // A path of several segments before the token is no one-word prefix.
        let c = json!("images/private/26427534");
        let d = json!("images/private/38637317");
        assert_eq!(learn_id_shape(&[&c, &d]), None);
    }

    #[test]
    fn strong_ids_are_recognised() {
        for s in [
            "117440826656342711",
            "42",
            "cus_000001",
            "c9a4e2b0-1f6e-4c7a-9b1d-2a3b4c5d6e7f",
            "0123456789abcdef0123456789abcdef",
            "192.0.2.0",
            "2600:3c00::5678",
            "private%2F160700",
            "go-test-logs-monitoring-1778670288010993000",
        ] {
            assert!(is_strong_id_segment(s), "{s} should be an id");
        }
        for s in [
            "v1",
            "v4beta",
            "verify_credentials",
            "search",
            "go-tag-test",
            "instances",
            "",
            "2.0",
        ] {
            assert!(!is_strong_id_segment(s), "{s} should not be an id");
        }
    }

    #[test]
    fn iso_timestamps_keep_their_spelling() {
        assert_eq!(
            iso_unit("2026-10-14T19:06:41.274Z"),
            Some(ClockUnit::Iso8601 {
                fraction_digits: 3,
                suffix: "Z".into()
            })
        );
        assert_eq!(
            iso_unit("2018-01-02T03:04:05"),
            Some(ClockUnit::Iso8601 {
                fraction_digits: 0,
                suffix: String::new()
            })
        );
        assert_eq!(iso_unit("hello"), None);
    }

    #[test]
    fn keys_too_short_for_an_id_family_fall_back_to_a_token_of_their_prefix() {
        assert_eq!(learn_id_shape(&[&json!("tag_1"), &json!("tag_22")]), None);
        assert_eq!(
            create_key_fallback(&["tag_1", "tag_22"]),
            Some(IdShape::Token {
                prefix: "tag_".into(),
                charset: IdCharset::Digits,
                length: 6
            })
        );
        assert_eq!(
            create_key_fallback(&["admin", "editor"]),
            Some(IdShape::Token {
                prefix: String::new(),
                charset: IdCharset::LowerAlnum,
                length: 6
            })
        );
        assert_eq!(
            create_key_fallback(&["a b"]),
            None,
            "not a key's characters"
        );
        assert_eq!(create_key_fallback(&[]), None);
    }

    #[test]
    fn id_shapes_are_learned() {
        let a = json!("cus_0001abcdEFGH12");
        let b = json!("cus_9zzzzzzzzzzzzz");
        assert_eq!(
            learn_id_shape(&[&a, &b]),
            Some(IdShape::Token {
                prefix: "cus_".into(),
                charset: IdCharset::Base62,
                length: 14
            })
        );
        let s1 = json!("117440826656342711");
        let s2 = json!("117440826656342799");
        assert_eq!(
            learn_id_shape(&[&s1, &s2]),
            Some(IdShape::Integer {
                above: 117440826656342799,
                as_string: true
            })
        );
        let n1 = json!(5);
        let n2 = json!(9);
        assert_eq!(
            learn_id_shape(&[&n1, &n2]),
            Some(IdShape::Integer {
                above: 9,
                as_string: false
            })
        );
        let u = json!("c9a4e2b0-1f6e-4c7a-9b1d-2a3b4c5d6e7f");
        assert_eq!(learn_id_shape(&[&u]), Some(IdShape::Uuid));
        let w = json!("hello-world");
        assert_eq!(learn_id_shape(&[&w]), None);
    }

    #[test]
    fn random_url_safe_base64_secrets_learn_a_base64url_token() {
        let a = json!("uXrY0Cwg-KRRWz8L9-76lA9DyStb48o0s1VhsLEhmrY");
        let b = json!("7XPQ9maCOu1tb8LjEThbp0IQP6NejrKjGem9fp6AjtQ");
        assert_eq!(
            learn_id_shape(&[&a, &b]),
            Some(IdShape::Token {
                prefix: String::new(),
                charset: IdCharset::Base64Url,
                length: 43
            })
        );
        // Words joined by separators are no token, even long ones with a digit.
        let label = json!("my-test-linode-label-2");
        let other = json!("my-test-linode-label-7");
        assert_eq!(learn_id_shape(&[&label, &other]), None);
        // Short mixed values are not read as secrets either.
        let short = json!("Ab1-x_Z");
        assert_eq!(learn_id_shape(&[&short]), None);
    }
}
