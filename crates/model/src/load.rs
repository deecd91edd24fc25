//! Reading a model file: one parse, and an error that says which kind of file it was.

use serde::Deserialize;

use crate::canonical::{CanonicalError, from_json_str, from_str_unbounded};
use crate::{MODEL_SCHEMA_VERSION, Model};

/// Why `model/twin.wir.json` cannot be used. Every variant is fixed by re-running `wraith synth`.
#[derive(Debug, thiserror::Error)]
pub enum ModelLoadError {
    /// Not a JSON document at all (truncated, overwritten): where parsing stopped.
    #[error("not JSON ({0}): the file is damaged or truncated")]
    NotJson(serde_json::Error),
    #[error("not a Wraith model (no schema_version)")]
    NotAModel,
    /// `schema_version` is there but no version number (`"1"`, `1.5`).
    #[error("not a Wraith model (schema_version {0} is not a version number)")]
    BadVersion(String),
    #[error(
        "model schema_version {found} is not supported by this build (it reads version {reads})"
    )]
    UnsupportedVersion { found: u64, reads: u32 },
    #[error("the model does not load ({0})")]
    Invalid(CanonicalError),
    /// Arrays and objects nested past [`MAX_MODEL_DEPTH`]: no model synth writes, and walking
    /// one would exhaust the stack of a command or of a serving thread.
    #[error(
        "arrays and objects nest {depth} levels deep, past the {limit} a model may have \
         (`wraith synth` writes at most about {SYNTH_DEPTH}): the file was edited by hand or \
         damaged"
    )]
    TooDeep { depth: usize, limit: usize },
}

/// About the deepest nesting of arrays and objects `wraith synth` writes: a recorded body is
/// read as JSON to serde_json's recursion limit (128 levels; a deeper one is kept as text), a
/// body template nests three model levels per object level of the body (the node, its
/// `fields`, the field), and a dozen levels hold the template (model, routes, variant, body).
pub const SYNTH_DEPTH: usize = 3 * 128 + 12;

/// The deepest nesting of arrays and objects a model file (`model/twin.wir.json`,
/// `model/symbols.json`) may have: more than twice what synth writes, and shallow enough for
/// every walk over a model (rendering on a serving thread, the judge, lint) to fit its stack.
pub const MAX_MODEL_DEPTH: usize = 1024;

/// How deeply `text` nests arrays and objects, read as JSON text byte by byte (strings
/// skipped, nothing parsed), so a file of any depth is measured without a stack.
pub fn json_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for b in crate::json_text::outside_strings(text) {
        match b {
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// [`ModelLoadError::TooDeep`] for a model file nested past [`MAX_MODEL_DEPTH`].
pub fn refuse_too_deep(text: &str) -> Result<(), ModelLoadError> {
    match json_depth(text) {
        depth if depth > MAX_MODEL_DEPTH => Err(ModelLoadError::TooDeep {
            depth,
            limit: MAX_MODEL_DEPTH,
        }),
        _ => Ok(()),
    }
}

/// Parse a model written by this build. The whole text is parsed once on success; only a
/// failure pays for a second look (the version, then the JSON path of the mismatch).
pub fn model_from_json_str(text: &str) -> Result<Model, ModelLoadError> {
    refuse_too_deep(text)?;
    let parsed = from_str_unbounded::<Model>(text);
    let found = match &parsed {
        Ok(model) => Some(u64::from(model.schema_version)),
        Err(_) => schema_version_of(text),
    };
    match found {
        None => match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Err(e) => Err(ModelLoadError::NotJson(e)),
            // JSON: an object whose version is of another type, or no model at all.
            Ok(_) => match serde_json::from_str::<LooseProbe>(text) {
                Ok(LooseProbe {
                    schema_version: Some(v),
                }) => Err(ModelLoadError::BadVersion(v.to_string())),
                _ => Err(ModelLoadError::NotAModel),
            },
        },
        Some(v) if v != u64::from(MODEL_SCHEMA_VERSION) => {
            Err(ModelLoadError::UnsupportedVersion {
                found: v,
                reads: MODEL_SCHEMA_VERSION,
            })
        }
        Some(_) => match parsed {
            Ok(model) => Ok(model),
            Err(_) => from_json_str::<Model>(text).map_err(ModelLoadError::Invalid),
        },
    }
}

/// Any JSON document, with its top-level `schema_version` whatever its type (`null` counts as
/// absent).
#[derive(Deserialize)]
struct LooseProbe {
    #[serde(default)]
    schema_version: Option<serde_json::Value>,
}

/// The top-level `schema_version` of a JSON document, skipping everything else unparsed.
fn schema_version_of(text: &str) -> Option<u64> {
    #[derive(Deserialize)]
    struct Probe {
        schema_version: Option<u64>,
    }
    serde_json::from_str::<Probe>(text).ok()?.schema_version
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_version_that_is_no_number_is_named() {
        let Err(err) = model_from_json_str("{\"schema_version\":\"1\",\"routes\":[]}") else {
            panic!("a string version loaded");
        };
        assert!(matches!(err, ModelLoadError::BadVersion(_)), "{err:?}");
        assert!(
            err.to_string()
                .contains("schema_version \"1\" is not a version number"),
            "{err}"
        );
    }

    #[test]
    fn a_document_without_schema_version_is_not_a_model() {
        assert!(matches!(
            model_from_json_str("{\"routes\":[]}"),
            Err(ModelLoadError::NotAModel)
        ));
    }

    #[test]
    fn a_file_that_is_not_json_says_where_parsing_stopped() {
        let Err(err) = model_from_json_str("{\"schema_version\": 1, \"routes\": [") else {
            panic!("a truncated model loaded");
        };
        assert!(matches!(err, ModelLoadError::NotJson(_)), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("not JSON (EOF while parsing a list at line 1 column"),
            "{err}"
        );
        assert!(matches!(
            model_from_json_str("not json"),
            Err(ModelLoadError::NotJson(_))
        ));
    }

    #[test]
    fn another_schema_version_is_refused_with_both_versions() {
        let Err(err) = model_from_json_str("{\"schema_version\":99,\"routes\":\"x\"}") else {
            panic!("a model of another version loaded");
        };
        assert!(matches!(
            err,
            ModelLoadError::UnsupportedVersion {
                found: 99,
                reads: MODEL_SCHEMA_VERSION
            }
        ));
    }

    #[test]
    fn a_current_version_that_does_not_parse_names_the_json_path() {
        let text = format!("{{\"schema_version\":{MODEL_SCHEMA_VERSION},\"routes\":7}}");
        let Err(err) = model_from_json_str(&text) else {
            panic!("a malformed model loaded");
        };
        let err = err.to_string();
        assert!(err.contains("does not load"), "{err}");
    }
}
