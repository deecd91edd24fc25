//! The `--ready-json` file of `serve` and `record`: written once listening, removed again on a
//! clean stop, so a script that starts the command anew and waits for the file never reads the
//! address of a process that is gone.

use std::path::{Path, PathBuf};

/// A ready file this process wrote, with the text it wrote.
pub struct ReadyFile {
    path: PathBuf,
    text: String,
}

impl ReadyFile {
    /// Write `text` to `path` atomically.
    pub fn write(path: &Path, text: String) -> std::io::Result<ReadyFile> {
        wraith_twin::write_atomic(path, text.as_bytes())?;
        Ok(ReadyFile {
            path: path.to_path_buf(),
            text,
        })
    }

    /// Remove the file, unless it no longer holds what this process wrote (another run took the
    /// path over): that one is not ours to remove.
    pub fn remove(self) {
        if std::fs::read_to_string(&self.path).is_ok_and(|now| now == self.text) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
