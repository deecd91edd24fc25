//! [`JsonText`]: a JSON value held as its canonical text instead of a parsed tree.
//!
//! The exact-replay index holds every recorded response body of a twin. Parsed into
//! `serde_json::Value` trees those cost about ten times their text, which made synth miss its
//! memory target on large recordings; as text they cost their size. The text is canonical
//! (object keys sorted at every level, compact — what [`crate::to_canonical_json`] writes), so
//! it is written inline into the model file byte for byte as before, and a consumer that needs
//! the tree (a list merge, a substitution, an outbound walk) parses it when it needs it.

use std::fmt;
use std::sync::Arc;

use serde::de::{Deserialize, Deserializer, Error as _};
use serde::ser::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON value as canonical text: object keys sorted at every level, no insignificant
/// whitespace. Serializes inline as the JSON value itself (not as a string).
///
/// The text is shared: a clone (a model copied for a held-out split, say) and the bytes an
/// answer is served from ([`JsonText::to_bytes`]) point at one buffer instead of copying it.
#[derive(Clone)]
pub struct JsonText(Arc<RawValue>);

impl JsonText {
    /// The canonical text of `value`. Takes the tree by value so a caller that parsed it only
    /// to build this text drops it right here.
    pub fn from_value(mut value: Value) -> JsonText {
        crate::canonical::sort_keys(&mut value);
        JsonText::from_sorted(&value)
    }

    /// The text of a tree whose keys are already in canonical order.
    fn from_sorted(value: &Value) -> JsonText {
        // Serializing a `Value` cannot fail (its map keys are strings and its numbers finite);
        // `null` only keeps this total without a panic path.
        match serde_json::value::to_raw_value(value) {
            Ok(raw) => JsonText(Arc::from(raw)),
            Err(_) => JsonText(Arc::from(RawValue::NULL.to_owned())),
        }
    }

    /// The canonical JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The text as [`bytes::Bytes`] over the same buffer: what an answer replaying this value
    /// verbatim is served from, with no copy of the text.
    pub fn to_bytes(&self) -> bytes::Bytes {
        bytes::Bytes::from_owner(SharedText(Arc::clone(&self.0)))
    }

    /// Length of the text in bytes.
    pub fn len(&self) -> usize {
        self.0.get().len()
    }

    /// True for an empty text, which a `JsonText` never is (kept for the `len` convention).
    pub fn is_empty(&self) -> bool {
        self.0.get().is_empty()
    }

    /// Parse the text into a tree, for callers that read or rewrite the value. The text was
    /// valid JSON when this was built, so this fails only on a nesting deeper than the parser's
    /// recursion limit.
    pub fn parse(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }
}

impl From<Value> for JsonText {
    fn from(value: Value) -> JsonText {
        JsonText::from_value(value)
    }
}

impl PartialEq for JsonText {
    /// Canonical texts are equal exactly when the values are.
    fn eq(&self, other: &JsonText) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("JsonText").field(&self.as_str()).finish()
    }
}

impl fmt::Display for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The owner [`JsonText::to_bytes`] hands to `Bytes`: the shared text, kept alive as long as
/// any `Bytes` over it.
struct SharedText(Arc<RawValue>);

impl AsRef<[u8]> for SharedText {
    fn as_ref(&self) -> &[u8] {
        self.0.get().as_bytes()
    }
}

impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (*self.0).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for JsonText {
    /// Keeps the value's text as it stands in the file, without building a tree. Files written
    /// by Wraith hold canonical text; a value with whitespace (a hand-edited model) is parsed
    /// once and re-printed compact with sorted keys, so the text stays canonical.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<JsonText, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        if is_compact(raw.get()) {
            return Ok(JsonText(Arc::from(raw)));
        }
        let value: Value = serde_json::from_str(raw.get()).map_err(D::Error::custom)?;
        Ok(JsonText::from_value(value))
    }
}

/// No whitespace outside string literals.
fn is_compact(text: &str) -> bool {
    !outside_strings(text).any(|b| b.is_ascii_whitespace())
}

/// The bytes of JSON `text` outside its string literals (the quotes and every byte between
/// them left out), read byte by byte without parsing, so text of any depth or validity is
/// read without a stack.
pub(crate) fn outside_strings(text: &str) -> impl Iterator<Item = u8> + '_ {
    let (mut in_string, mut escaped) = (false, false);
    text.bytes().filter(move |&b| {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            false
        } else if b == b'"' {
            in_string = true;
            false
        } else {
            true
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_is_compact_with_keys_sorted_at_every_level() {
        let t = JsonText::from_value(json!({"b": [{"z": 1, "a": " x "}], "a": null}));
        assert_eq!(t.as_str(), r#"{"a":null,"b":[{"a":" x ","z":1}]}"#);
    }

    #[test]
    fn serializes_inline_as_the_value_not_as_a_string() {
        let t = JsonText::from_value(json!({"k": [1, 2.5, "s"]}));
        let wrapped = serde_json::to_string(&vec![t]).unwrap_or_default();
        assert_eq!(wrapped, r#"[{"k":[1,2.5,"s"]}]"#);
    }

    #[test]
    fn deserializing_keeps_compact_text_verbatim() {
        let t: JsonText =
            serde_json::from_str(r#" {"a":{"b":"x y"},"c":[1,2]} "#).expect("valid JSON");
        assert_eq!(t.as_str(), r#"{"a":{"b":"x y"},"c":[1,2]}"#);
    }

    #[test]
    fn deserializing_pretty_text_canonicalizes_it() {
        let t: JsonText =
            serde_json::from_str("{\n  \"z\": 1,\n  \"a\": [ 1, 2 ]\n}").expect("valid JSON");
        assert_eq!(t.as_str(), r#"{"a":[1,2],"z":1}"#);
    }

    #[test]
    fn whitespace_inside_strings_and_escaped_quotes_is_not_insignificant() {
        assert!(is_compact(r#"{"a":"x \" y\\","b":" "}"#));
        assert!(!is_compact(r#"{"a":"x \" y\\", "b":" "}"#));
    }

    #[test]
    fn parse_gives_back_the_value() {
        let v = json!({"n": 18446744073709551615u64, "f": 0.1, "s": "é\u{1}"});
        let t = JsonText::from_value(v.clone());
        assert_eq!(t.parse().ok(), Some(v));
    }

    #[test]
    fn bytes_of_the_text_share_its_buffer_and_outlive_it() {
        let t = JsonText::from_value(json!({"k": "v"}));
        let b = t.to_bytes();
        assert_eq!(&b[..], t.as_str().as_bytes());
        assert_eq!(b.as_ptr(), t.as_str().as_ptr(), "the text was copied");
        let copy = t.clone();
        assert_eq!(
            copy.as_str().as_ptr(),
            t.as_str().as_ptr(),
            "the clone copied the text"
        );
        drop((t, copy));
        assert_eq!(&b[..], br#"{"k":"v"}"#);
    }

    #[test]
    fn equality_is_equality_of_values() {
        let a = JsonText::from_value(json!({"x": 1, "y": 2}));
        let b = JsonText::from_value(json!({"y": 2, "x": 1}));
        assert_eq!(a, b);
        assert_ne!(a, JsonText::from_value(json!({"x": 1})));
    }
}
