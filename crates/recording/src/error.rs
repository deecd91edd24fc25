//! Errors of the recording crate. Each says what failed, where (file, JSON path, line) and, where
//! there is one, how to fix it.

use std::path::PathBuf;

/// Reading or writing recordings on disk.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// The bytes are not one zstd frame holding one CBOR exchange map.
    #[error("not a WREC exchange: {0}")]
    Decode(String),
    /// A `.wrec.zst` file whose payload decompresses past the limit (`wrec::MAX_EXCHANGE_BYTES`):
    /// reading stopped there rather than fill the memory.
    #[error(
        "it decompresses to more than {} ({limit} bytes), the most CBOR one exchange file may \
         hold; no Wraith writes a larger one, so it is damaged or was not written by Wraith",
        crate::wrec::human_bytes(*limit)
    )]
    DecodedTooLarge { limit: u64 },
    /// An exchange whose CBOR payload is larger than the limit (`wrec::MAX_EXCHANGE_BYTES`):
    /// written, no reader would take it back, so it is not written.
    #[error(
        "{what} is {size} bytes of CBOR, more than the {} ({limit} bytes) one exchange file \
         may hold, so no reader would take it back; it is not written: leave it out (or cut \
         its bodies down)",
        crate::wrec::human_bytes(*limit)
    )]
    ExchangeTooLarge {
        /// Which exchange (`the exchange`, or its session and index and request line).
        what: String,
        size: u64,
        limit: u64,
    },
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

/// `path:line: message`, or `path: message` when the problem has no line (`0`: the whole file,
/// such as bytes that are not UTF-8 or a table missing altogether).
pub fn at_line(path: &std::path::Path, line: usize, message: &str) -> String {
    match line {
        0 => format!("{}: {message}", path.display()),
        n => format!("{}:{n}: {message}", path.display()),
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_problem_of_the_whole_file_names_no_line() {
        let p = std::path::Path::new("twins/shop/scrub.toml");
        assert_eq!(at_line(p, 3, "bad"), "twins/shop/scrub.toml:3: bad");
        assert_eq!(
            at_line(p, 0, "not UTF-8"),
            "twins/shop/scrub.toml: not UTF-8"
        );
    }
}
