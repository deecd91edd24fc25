//! Errors of the recording crate. Each says what failed, where (file, JSON path, line) and, where
//! there is one, how to fix it.

use std::path::PathBuf;

/// Reading or writing recordings on disk.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// The bytes are not one zstd frame holding one CBOR exchange map.
    #[error("not a WREC exchange: {0}")]
    Decode(String),
    /// A recording file could not be decoded; the file is named so it can be removed or fixed.
    #[error(
        "corrupt recording {path}: {reason}; move its session folder out of recordings/sessions/ \
         (or restore the file), or record that session again"
    )]
    CorruptFile { path: PathBuf, reason: String },
    #[error("bad manifest {path}: {reason}")]
    Manifest { path: PathBuf, reason: String },
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl RecordingError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        RecordingError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
