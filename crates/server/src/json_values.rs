//! How many JSON values a request body holds, counted without building its tree.
//!
//! The engine reads every request body that is no form as JSON, and keeps that tree (and the
//! record a create stores, and the answer that echoes it) while it answers. A tree costs tens
//! of bytes per value whatever the text spends on it: a 16 MiB body of `[1,1,…]` holds eight
//! million values and took more than a gigabyte to answer, so a few such requests at once could
//! exhaust the machine. The server refuses a body past [`MAX_JSON_VALUES`] values before the
//! engine parses it, which bounds the memory one request takes by its value count as the byte
//! cap bounds its text.

use std::cell::Cell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The most JSON values (every number, string, boolean, null, array and object, an object's
/// members counted by their values) a request body may hold.
pub const MAX_JSON_VALUES: u64 = 1_000_000;

/// Whether `body`, read as JSON (after a UTF-8 byte order mark), holds more than `limit`
/// values. A body that is no JSON at all is not over the limit (the engine says what is wrong
/// with it). Counting stops at the first value past the limit.
pub fn over_limit(body: &[u8], limit: u64) -> bool {
    // Every value takes at least one byte: a body this short cannot hold more.
    if (body.len() as u64) <= limit {
        return false;
    }
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let counted = Counter {
        seen: Cell::new(0),
        limit,
    };
    let mut de = serde_json::Deserializer::from_slice(body);
    let _ = Value(&counted).deserialize(&mut de);
    counted.seen.get() > limit
}

struct Counter {
    seen: Cell<u64>,
    limit: u64,
}

impl Counter {
    /// Count one value; an error once past the limit, which ends the parse.
    fn one<E: serde::de::Error>(&self) -> Result<(), E> {
        let n = self.seen.get() + 1;
        self.seen.set(n);
        if n > self.limit {
            return Err(E::custom("too many JSON values"));
        }
        Ok(())
    }
}

/// One JSON value and everything in it, counted.
#[derive(Clone, Copy)]
struct Value<'c>(&'c Counter);

impl<'de> DeserializeSeed<'de> for Value<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Value<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        self.0.one()
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        self.0.one()
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        self.0.one()
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        self.0.one()
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<(), E> {
        self.0.one()
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.0.one()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.one()?;
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.one()?;
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value_seed(self)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn numbers(n: usize) -> Vec<u8> {
        let mut s = String::from("[");
        for i in 0..n {
            if i > 0 {
                s.push(',');
            }
            s.push('1');
        }
        s.push(']');
        s.into_bytes()
    }

    #[test]
    fn every_value_counts_the_array_and_object_themselves_included() {
        // The array, its three items, the object and its two values: 7.
        let body = br#"[1, "two", null, {"a": true, "b": [ ]}]"#;
        assert!(!over_limit(body, 7));
        assert!(over_limit(body, 6));
    }

    #[test]
    fn a_body_of_many_small_values_is_over_the_limit_and_one_at_it_is_not() {
        // The array plus its items.
        assert!(!over_limit(&numbers(999), 1000));
        assert!(over_limit(&numbers(1000), 1000));
    }

    #[test]
    fn a_long_string_is_one_value() {
        let body = format!("{{\"s\": \"{}\"}}", "x".repeat(100_000));
        assert!(!over_limit(body.as_bytes(), 10));
    }

    #[test]
    fn a_body_that_is_no_json_is_left_to_the_engine() {
        assert!(!over_limit(&b"x".repeat(5000), 10));
        // Cut off after more than the limit: the values seen still count.
        let mut cut = numbers(50);
        cut.truncate(60);
        assert!(over_limit(&cut, 10));
    }

    #[test]
    fn a_byte_order_mark_is_skipped_as_the_engine_skips_it() {
        let mut body = b"\xEF\xBB\xBF".to_vec();
        body.extend(numbers(20));
        assert!(over_limit(&body, 10));
    }
}
