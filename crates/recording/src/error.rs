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

/// An error and its causes on one line, `outer: inner: innermost`, each cause left out when the
/// text so far already says it: errors that name their IO error in their message (`cannot list
/// <dir>: Not a directory (os error 20)`) also return it as their source, and printing every
/// source would say it twice. Shared by the command line's final error line and the recorder's
/// 502 (hyper's own message is often just "client error").
pub fn one_line(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}
