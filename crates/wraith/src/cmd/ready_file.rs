//! The `--ready-json` file of `serve` and `record`: written once listening, removed again on a
//! clean stop, so a script that starts the command anew and waits for the file never reads the
//! address of a process that is gone. A path naming a device, fifo or socket (`/dev/stdout`) is
//! written into and left in place: removing `/dev/null` would break the whole machine.

use std::path::{Path, PathBuf};

/// A ready file this process wrote, with the text it wrote.
pub struct ReadyFile {
    /// The file written: the path given, or the file its symbolic links name.
    path: PathBuf,
    text: String,
}

impl ReadyFile {
    /// Write `text` to `path` atomically.
    pub fn write(path: &Path, text: String) -> std::io::Result<ReadyFile> {
        let path = wraith_twin::write_target(path)?;
        wraith_twin::write_atomic(&path, text.as_bytes())?;
        Ok(ReadyFile { path, text })
    }

    /// Remove the file, unless it is not a regular file or no longer holds what this process
    /// wrote (another run took the path over): that one is not ours to remove.
    pub fn remove(self) {
        let regular = std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.file_type().is_file());
        if regular && std::fs::read_to_string(&self.path).is_ok_and(|now| now == self.text) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
