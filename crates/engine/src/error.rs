//! Errors of engine construction and of the session control plane.

use serde_json::{Value, json};

/// Why an [`crate::Engine`] could not be built. Each variant says what, where, and how to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// `--fixture <name>` names no set under `state/fixtures/`.
    #[error(
        "unknown fixture set `{name}`; available sets: {}{}",
        if available.is_empty() { "(none)".to_string() } else { available.join(", ") },
        if name.starts_with('.') {
            "; a folder whose name starts with `.` is hidden, never a fixture set: rename it \
             without the dot"
        } else {
            ""
        }
    )]
    UnknownFixture {
        name: String,
        available: Vec<String>,
    },
    /// A fixture file is malformed.
    #[error("fixture set `{set}`, file `{file}`: {message}")]
    Fixture {
        set: String,
        file: String,
        message: String,
    },
    /// The model was written by an incompatible `wraith synth`.
    #[error(
        "model schema_version {found} is not supported (this build reads {expected}); re-run `wraith synth`"
    )]
    ModelVersion { found: u32, expected: u32 },
}

/// A refused control-plane request (`/__wraith/session...`), with its HTTP status and a stable
/// machine code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ControlError {
    pub status: u16,
    /// `session-provision-conflict`, `fixture-not-found`, `session-not-found`,
    /// `namespace-unavailable` or `bad-request`.
    pub code: &'static str,
    pub message: String,
    /// Fixture set names, for `fixture-not-found`.
    pub available: Vec<String>,
}

impl ControlError {
    pub(crate) fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        ControlError {
            status,
            code,
            message: message.into(),
            available: Vec::new(),
        }
    }

    /// `{"error": code, "message": .., "available": [..]}` (`available` only when non-empty).
    pub fn body(&self) -> Value {
        let mut v = json!({ "error": self.code, "message": self.message });
        if !self.available.is_empty()
            && let Some(map) = v.as_object_mut()
        {
            map.insert("available".to_string(), json!(self.available));
        }
        v
    }
}
