//! Whether a recorded JSON body survives being held as a parsed tree.
//!
//! The model keeps a recorded JSON answer as the canonical text of its parsed tree
//! ([`crate::JsonText`]), and the twin serves that tree. Two things a parse cannot keep change
//! the *values* of such an answer, not only its spelling: a number a 64-bit float cannot hold
//! (a 30-digit integer, `0.10000000000000000001`, `1e-400`) comes back as another number, and
//! of a key written twice in one object only the last value is kept. A twin that serves such a
//! body must not claim it is the recorded moment (`X-Wraith-Replay`), so synth marks the moment
//! ([`crate::Moment::respelled`]) with what this module finds.
//!
//! Spellings of the same value are not changes: `1E+2` is served as `100.0`, `1.50` as `1.5`
//! and `-0` as `-0.0`; the contract compares values at paths, not octets.

use serde_json::Value;

/// Why a recorded body's parsed tree no longer holds every recorded value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Respelling {
    /// A number whose value the parsed tree does not hold exactly.
    Number,
    /// An object that names one key more than once.
    DuplicateKey,
}

/// What the parsed tree `parsed` of the JSON text `text` lost, if anything. `text` must be the
/// text `parsed` came from (leading whitespace and a byte order mark are skipped like any
/// other byte outside a string).
pub fn respelling(text: &[u8], parsed: &Value) -> Option<Respelling> {
    let scan = scan(text);
    if scan.number {
        return Some(Respelling::Number);
    }
    if scan.keys > count_keys(parsed) {
        return Some(Respelling::DuplicateKey);
    }
    None
}

struct Scan {
    /// Object keys written in the text (every string followed by a `:`).
    keys: usize,
    /// Some number token's value is not what the parse holds.
    number: bool,
}

/// One pass over the text outside strings: counts keys and tries each number token.
fn scan(text: &[u8]) -> Scan {
    let mut out = Scan {
        keys: 0,
        number: false,
    };
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => {
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    // An escape's next byte is never the string's end.
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                let mut j = i;
                while j < text.len() && text[j].is_ascii_whitespace() {
                    j += 1;
                }
                if text.get(j) == Some(&b':') {
                    out.keys += 1;
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < text.len()
                    && matches!(text[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                if !out.number && !number_kept(&text[start..i]) {
                    out.number = true;
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// Whether the parse keeps the value of the number token `tok`.
fn number_kept(tok: &[u8]) -> bool {
    let digits = tok.strip_prefix(b"-").unwrap_or(tok);
    // The common case: an integer of at most 18 digits fits an `i64` or a `u64` exactly.
    if !digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit) {
        return true;
    }
    let Ok(tok) = std::str::from_utf8(tok) else {
        return false;
    };
    let Ok(number) = tok.parse::<serde_json::Number>() else {
        return false;
    };
    match (decimal(tok), decimal(&number.to_string())) {
        (Some(recorded), Some(served)) => recorded == served,
        _ => false,
    }
}

/// The exact decimal value of a JSON number's text: sign, significant digits (no leading or
/// trailing zeros) and the power of ten of the last one. Zero has no digits and no sign, so
/// `-0` and `0.0` are the same value. `None` for an exponent past `i64`.
fn decimal(tok: &str) -> Option<(bool, Vec<u8>, i64)> {
    let (negative, rest) = match tok.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, tok),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], rest[at + 1..].parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
    let mut power = exponent.checked_sub(i64::try_from(frac.len()).ok()?)?;
    while digits.last() == Some(&b'0') {
        digits.pop();
        power = power.checked_add(1)?;
    }
    let lead = digits.iter().take_while(|d| **d == b'0').count();
    digits.drain(..lead);
    if digits.is_empty() {
        return Some((false, digits, 0));
    }
    Some((negative, digits, power))
}

/// Keys of every object in the tree.
fn count_keys(v: &Value) -> usize {
    match v {
        Value::Object(map) => map.len() + map.values().map(count_keys).sum::<usize>(),
        Value::Array(items) => items.iter().map(count_keys).sum(),
        _ => 0,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn of(text: &str) -> Option<Respelling> {
        let parsed: Value = serde_json::from_str(text).unwrap();
        respelling(text.as_bytes(), &parsed)
    }

    #[test]
    fn ordinary_bodies_keep_every_value() {
        assert_eq!(
            of(r#"{"a":1,"b":[1.5,-2,3e2,true,null],"c":{"d":"x:\"y\":"}}"#),
            None
        );
        assert_eq!(of(r#"  [ {"k" : 9007199254740993} ]"#), None);
        assert_eq!(
            of(r#"{"max":18446744073709551615,"min":-9223372036854775808}"#),
            None
        );
    }

    #[test]
    fn other_spellings_of_one_value_are_not_respellings() {
        assert_eq!(
            of(r#"{"a":1E+2,"b":1.50,"c":-0,"d":0.1,"e":-0.0,"f":1e-7}"#),
            None
        );
    }

    #[test]
    fn numbers_a_double_cannot_hold_are_respellings() {
        for text in [
            r#"{"a":123456789012345678901234567890}"#,
            r#"{"a":18446744073709551616}"#,
            r#"[0.10000000000000000001]"#,
            r#"{"a":1e-400}"#,
            r#"-99999999999999999999"#,
        ] {
            assert_eq!(of(text), Some(Respelling::Number), "{text}");
        }
    }

    #[test]
    fn a_key_written_twice_is_a_respelling() {
        assert_eq!(of(r#"{"a":1,"a":2}"#), Some(Respelling::DuplicateKey));
        assert_eq!(
            of(r#"[{"x":{"a":1,"b":{"c":1,"c":1}}}]"#),
            Some(Respelling::DuplicateKey)
        );
        // The same key in two objects is not a duplicate.
        assert_eq!(of(r#"[{"a":1},{"a":2}]"#), None);
    }

    #[test]
    fn escaped_quotes_and_colons_inside_strings_are_not_keys() {
        assert_eq!(of(r#"{"a\"":"b\\","c":"\\\":"}"#), None);
        assert_eq!(of(r#"["a", "b:" , "c"]"#), None);
    }

    fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "[a-z\\\\\":, \\[\\]{}0-9e.-]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::btree_map("[a-z\\\\\":]{0,4}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Whatever a parse holds, written out compact or pretty and read back, lost nothing.
        #[test]
        fn what_serde_json_writes_is_never_a_respelling(v in any_json()) {
            for text in [serde_json::to_string(&v).unwrap(), serde_json::to_string_pretty(&v).unwrap()] {
                let parsed: Value = serde_json::from_str(&text).unwrap();
                proptest::prop_assert_eq!(respelling(text.as_bytes(), &parsed), None, "{}", text);
            }
        }
    }

    #[test]
    fn decimal_values_compare_exactly() {
        assert_eq!(decimal("100"), decimal("1E+2"));
        assert_eq!(decimal("1.5"), decimal("15e-1"));
        assert_eq!(decimal("-0"), decimal("0.000"));
        assert_ne!(
            decimal("1.2345678901234568e29"),
            decimal("123456789012345678901234567890")
        );
        assert_eq!(decimal("1e99999999999999999999"), None);
    }
}
