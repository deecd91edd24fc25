//! Lua values turned into Rust-side JSON and text, counted as they are made.
//!
//! The VM's memory limit counts only what Lua allocates. A conversion to Rust writes a value
//! each time the Lua graph references it, so a small graph (one 400 KB string in a table of a
//! thousand slots naming it) becomes hundreds of megabytes on the Rust side. Every conversion
//! a handler asks for (its returned table, `emit.json`, `emit.body`, `emit.header`,
//! `state.put`, `state.query`, `wraith.json_encode`) is therefore held to an [`OutputLimit`]
//! and fails, like any API misuse, once it would produce more.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value as Json};

/// How many times the memory budget (and a JSON request body's length) one conversion may
/// produce.
pub(crate) const OUTPUT_MULTIPLE: usize = 16;

/// The most bytes one conversion may produce, counted as the memory the converted value
/// takes: a fixed cost per value and per object key, plus the bytes of every string and key,
/// each time it is written (a string or table referenced twice counts twice).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OutputLimit {
    pub bytes: usize,
}

impl OutputLimit {
    /// [`OUTPUT_MULTIPLE`] times the handler's memory budget, plus as much again of a JSON
    /// request body as its `req.json` can take (so a handler can always answer with what it was
    /// sent), or a raw body's length once.
    pub(crate) fn new(max_memory_bytes: usize, body_len: usize, body_is_json: bool) -> Self {
        let body = if body_is_json {
            body_len.saturating_mul(OUTPUT_MULTIPLE)
        } else {
            body_len
        };
        OutputLimit {
            bytes: max_memory_bytes
                .saturating_mul(OUTPUT_MULTIPLE)
                .saturating_add(body),
        }
    }

    /// The message of a conversion that went past the limit.
    pub(crate) fn exceeded(&self, what: &str) -> String {
        format!(
            "{what}: the value takes more than {} KiB once converted ({OUTPUT_MULTIPLE} × \
             [serve.lua] max_memory_kb, plus the request body); a string or table the value \
             names several times counts each time",
            self.bytes / 1024
        )
    }
}

/// Bytes counted against an [`OutputLimit`].
pub(crate) struct Tally {
    used: Cell<usize>,
    limit: usize,
}

/// Marker text of the error a [`Tally`] raises inside a conversion.
const OVER_LIMIT: &str = "output limit exceeded";

impl Tally {
    pub(crate) fn new(limit: OutputLimit) -> Self {
        Tally {
            used: Cell::new(0),
            limit: limit.bytes,
        }
    }

    /// Count `n` more bytes; false once past the limit.
    pub(crate) fn charge(&self, n: usize) -> bool {
        let used = self.used.get().saturating_add(n);
        self.used.set(used);
        used <= self.limit
    }

    /// Whether an earlier charge went past the limit.
    pub(crate) fn over(&self) -> bool {
        self.used.get() > self.limit
    }

    fn charge_or<E: de::Error>(&self, n: usize) -> Result<(), E> {
        if self.charge(n) {
            Ok(())
        } else {
            Err(E::custom(OVER_LIMIT))
        }
    }
}

/// What one JSON value costs besides its strings' bytes.
const VALUE_COST: usize = std::mem::size_of::<Json>();
/// What one object key costs besides its bytes (the key's `String` and the map's entry).
const KEY_COST: usize = std::mem::size_of::<String>() + 16;

/// Builds a [`Json`] from any deserializer (mlua's, for a Lua value), charging a [`Tally`] as
/// each value is made, so a conversion stops as soon as it passes the limit rather than after
/// building the whole value. Otherwise it reads values as `serde_json::Value` does.
#[derive(Clone, Copy)]
pub(crate) struct CountedJson<'t> {
    pub tally: &'t Tally,
}

impl<'de> DeserializeSeed<'de> for CountedJson<'_> {
    type Value = Json;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CountedJson<'_> {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Json, E> {
        self.tally.charge_or(VALUE_COST)?;
        Ok(Json::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Json, E> {
        self.tally.charge_or(VALUE_COST)?;
        Ok(Json::from(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Json, E> {
        self.tally.charge_or(VALUE_COST)?;
        Ok(Json::from(n))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
        self.tally.charge_or(VALUE_COST)?;
        Ok(serde_json::Number::from_f64(n).map_or(Json::Null, Json::Number))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Json, E> {
        self.tally.charge_or(VALUE_COST.saturating_add(s.len()))?;
        Ok(Json::String(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Json, E> {
        self.tally.charge_or(VALUE_COST.saturating_add(s.len()))?;
        Ok(Json::String(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        self.tally.charge_or(VALUE_COST)?;
        Ok(Json::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Json, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        self.tally.charge_or::<A::Error>(VALUE_COST)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        self.tally.charge_or::<A::Error>(VALUE_COST)?;
        let mut object = Map::new();
        while let Some(key) = map.next_key_seed(CountedKey { tally: self.tally })? {
            let value = map.next_value_seed(self)?;
            object.insert(key, value);
        }
        Ok(Json::Object(object))
    }
}

/// An object key, charged like a value.
#[derive(Clone, Copy)]
struct CountedKey<'t> {
    tally: &'t Tally,
}

impl<'de> DeserializeSeed<'de> for CountedKey<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for CountedKey<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<String, E> {
        self.tally.charge_or(KEY_COST.saturating_add(s.len()))?;
        Ok(s.to_owned())
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<String, E> {
        self.tally.charge_or(KEY_COST.saturating_add(s.len()))?;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn a_value_under_the_limit_converts_unchanged() {
        let v = json!({"a": [1, 2.5, "x", null, true], "b": {"c": "d"}});
        let tally = Tally::new(OutputLimit { bytes: 1 << 20 });
        let out = CountedJson { tally: &tally }.deserialize(&v).unwrap();
        assert_eq!(out, v);
        assert!(!tally.over());
    }

    #[test]
    fn a_conversion_stops_once_past_the_limit() {
        let big = "x".repeat(1000);
        let v = json!([big, big, big, big]);
        let tally = Tally::new(OutputLimit { bytes: 2500 });
        let err = CountedJson { tally: &tally }.deserialize(&v).unwrap_err();
        assert!(err.to_string().contains(OVER_LIMIT), "{err}");
        assert!(tally.over());
    }

    #[test]
    fn the_limit_is_the_multiple_of_the_budget_plus_the_body() {
        assert_eq!(OutputLimit::new(1024, 0, false).bytes, 16 * 1024);
        assert_eq!(OutputLimit::new(1024, 10, false).bytes, 16 * 1024 + 10);
        assert_eq!(OutputLimit::new(1024, 10, true).bytes, 16 * 1024 + 160);
    }
}
