//! The `--ready-json` file of `serve` and `record`: written once listening, removed again on a
//! clean stop, so a script that starts the command anew and waits for the file never reads the
//! address of a process that is gone. A path naming a device, fifo or socket (`/dev/stdout`) is
//! written into and left in place: removing `/dev/null` would break the whole machine.

use std::path::{Path, PathBuf};

use anyhow::anyhow;

use crate::exit::CliError;

/// A ready document is a few hundred bytes; a bigger file is something else.
const MAX_READY_BYTES: u64 = 1 << 20;

/// Refuse a `--ready-json` path that holds something other than an earlier ready file. The file
/// there is replaced on start and removed on stop, so naming `wraith.toml` (or any file of the
/// user's) by mistake would lose it. An empty file (`mktemp`) and an earlier run's document, of
/// `serve` or `record`, are the ready file's own; a device or fifo is written into and kept.
pub fn check_replaceable(flag: &str, path: &Path) -> Result<(), CliError> {
    let Ok(target) = wraith_twin::write_target(path) else {
        return Ok(()); // the write names the problem (a link loop) with its own message
    };
    let Ok(meta) = std::fs::metadata(&target) else {
        return Ok(());
    };
    if !meta.is_file() || meta.len() == 0 {
        return Ok(());
    }
    let earlier_ready = meta.len() <= MAX_READY_BYTES
        && std::fs::read(&target)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .and_then(|v| v.as_object().cloned())
            .is_some_and(|o| {
                o.len() == 1
                    && ["serve", "record"]
                        .iter()
                        .any(|k| o.get(*k).is_some_and(|v| v.is_object()))
            });
    if earlier_ready {
        return Ok(());
    }
    Err(CliError::usage(anyhow!(
        "{flag} {}: the file exists and is not a ready file of an earlier run; it would be \
         replaced now and removed on stop, so it is left alone: name a new file, or remove it",
        path.display()
    )))
}

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

    /// [`Self::write`] on a thread of its own, racing `stop`: a fifo nobody reads yet blocks
    /// its writer until a reader comes, and a stop signal must still stop the command then.
    /// `Ok(None)` when `stop` came first (the write, if it ever completes, is left alone: a
    /// fifo's reader takes what it reads).
    pub async fn write_or_stop(
        path: &Path,
        text: String,
        stop: impl std::future::Future<Output = ()>,
    ) -> std::io::Result<Option<ReadyFile>> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let path = path.to_path_buf();
        // A plain thread, not the runtime's blocking pool: the runtime waits for its blocking
        // tasks when it shuts down, and this one may never return.
        std::thread::spawn(move || {
            let _ = tx.send(ReadyFile::write(&path, text));
        });
        tokio::select! {
            written = rx => match written {
                Ok(result) => result.map(Some),
                Err(_) => Err(std::io::Error::other("the ready-file writer stopped")),
            },
            () = stop => Ok(None),
        }
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
