//! The twin model as data: what `synth` writes and what the engine serves.
//!
//! Two files make up a model on disk, both canonical JSON (sorted keys, trailing newline):
//! - `model/twin.wir.json`: a [`Model`], everything the engine needs to serve (routes, variants,
//!   body templates with holes, entity types, exact-replay moments, indexes);
//! - `model/symbols.json`: a [`SymbolTable`], the dynamic values synth named (ids that flow from
//!   one exchange into a later one), kept for inspection and lint; the engine does not read it.
//!
//! This crate holds types, canonical JSON and validation only: no IO, no inference, no serving.

pub mod canonical;
pub mod clock;
pub mod json_text;
pub mod load;
pub mod pointer;
pub mod precomputed;
pub mod principal;
pub mod request_key;
pub mod respelling;
pub mod secret_names;
pub mod template;
pub mod types;
pub mod validate;

pub use canonical::{CanonicalError, from_json_str, to_canonical_json};
pub use json_text::JsonText;
pub use load::{MAX_MODEL_DEPTH, ModelLoadError, json_depth, model_from_json_str, refuse_too_deep};
pub use precomputed::{MomentVerdict, Precomputed, RouteColumns};
pub use template::{
    ArrayNode, BodyTemplate, ClockUnit, EchoSource, EmbeddedRecord, Field, Hole, HoleKind,
    IdCharset, IdShape, JsonType, KeyBucket, KeyedValues, Node, WhenAbsent, key_text,
};
pub use types::*;

/// Version of the model format written by this build. Bumped on any incompatible change;
/// the engine refuses other versions with a "re-run `wraith synth`" error.
pub const MODEL_SCHEMA_VERSION: u32 = 1;
