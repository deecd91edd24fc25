//! Canonical JSON: object keys sorted, compact, one trailing newline.
//!
//! Every file Wraith writes goes through [`to_canonical_json`], so the same data always gives the
//! same bytes whatever order maps were filled in.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum CanonicalError {
    #[error("cannot serialize: {0}")]
    Serialize(#[from] serde_json::Error),
    #[error("invalid JSON at {path}: {message}")]
    Parse { path: String, message: String },
}

/// Serialize `value` as canonical JSON: keys sorted at every level, compact, trailing newline.
pub fn to_canonical_json<T: Serialize>(value: &T) -> Result<String, CanonicalError> {
    let mut v = serde_json::to_value(value)?;
    sort_keys(&mut v);
    let mut s = serde_json::to_string(&v)?;
    s.push('\n');
    Ok(s)
}

/// Recursively sort object keys (serde_json is built with `preserve_order`).
pub fn sort_keys(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.sort_keys();
            for (_, child) in map.iter_mut() {
                sort_keys(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(sort_keys),
        _ => {}
    }
}

/// Parse JSON at any nesting depth. A model's body templates nest a few levels per level of
/// the JSON they render, so a recorded body well within a JSON parser's limits makes a model
/// past serde_json's default recursion limit (128): what synth writes must read back. The
/// stack grows on demand instead of overflowing.
pub fn from_str_unbounded<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = T::deserialize(serde_stacker::Deserializer::new(&mut de))?;
    de.end()?;
    Ok(value)
}

/// True when `text` is exactly what [`to_canonical_json`] would write for its own value.
pub fn is_canonical(text: &str) -> bool {
    match from_str_unbounded::<Value>(text) {
        Ok(v) => to_canonical_json(&v).map(|c| c == text).unwrap_or(false),
        Err(_) => false,
    }
}

/// Parse JSON into `T`, reporting the JSON path of the first mismatch.
///
/// The path is tracked only on a second pass after a failure: tracking it costs on every value,
/// and a model file of tens of megabytes is parsed at every `serve` start.
pub fn from_json_str<T: DeserializeOwned>(text: &str) -> Result<T, CanonicalError> {
    if let Ok(value) = from_str_unbounded(text) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    serde_path_to_error::deserialize(serde_stacker::Deserializer::new(&mut de)).map_err(|e| {
        CanonicalError::Parse {
            path: e.path().to_string(),
            message: e.inner().to_string(),
        }
    })
}
