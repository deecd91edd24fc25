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
            .is_some_and(|o| is_ready_document(&o));
    if earlier_ready {
        return Ok(());
    }
    Err(CliError::usage(anyhow!(
        "{flag} {}: the file exists and is not a ready file of an earlier run; it would be \
         replaced now and removed on stop, so it is left alone: name a new file, or remove it",
        path.display()
    )))
}

/// Whether `doc` is a ready document of `serve` or `record`: its `serve` or `record` object
/// names the `url` listened on. `serve`'s has more keys beside it (`twin`,
/// `warnings`, ...), so a run killed before its clean stop left one a restart must take.
fn is_ready_document(doc: &serde_json::Map<String, serde_json::Value>) -> bool {
    ["serve", "record"].iter().any(|k| {
        doc.get(*k)
            .and_then(serde_json::Value::as_object)
            .is_some_and(|d| d.contains_key("url"))
    })
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
    /// `Ok(None)` when `stop` came first. A regular file written anyway (the write finished
    /// just as the stop came) is removed like any ready file on stop, by this call or by the
    /// writer once it learns nobody takes the file; a fifo's reader takes what it reads.
    pub async fn write_or_stop(
        path: &Path,
        text: String,
        stop: impl std::future::Future<Output = ()>,
    ) -> std::io::Result<Option<ReadyFile>> {
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        let path = path.to_path_buf();
        // A plain thread, not the runtime's blocking pool: the runtime waits for its blocking
        // tasks when it shuts down, and this one may never return.
        // Dropped by the writer when it is done, sent or not: what a stop waits on.
        let (finished, done) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            if let Err(Ok(file)) = tx.send(ReadyFile::write(&path, text)) {
                file.remove();
            }
            drop(finished);
        });
        tokio::select! {
            written = &mut rx => match written {
                Ok(result) => result.map(Some),
                Err(_) => Err(std::io::Error::other("the ready-file writer stopped")),
            },
            () = stop => {
                // From here the writer's send fails and it removes what it wrote itself; a
                // file sent before is removed here. A regular file's write is quick, so the
                // command waits a moment for it (a blocked fifo's never comes).
                rx.close();
                match rx.try_recv() {
                    Ok(Ok(file)) => file.remove(),
                    Ok(Err(_)) => {}
                    Err(_) => {
                        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), done).await;
                    }
                }
                Ok(None)
            }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A stop that comes while the file is being written (the command is told to stop right as
    /// it becomes ready) leaves no ready file behind, whichever of the two finishes first.
    #[tokio::test]
    async fn a_stop_racing_the_write_leaves_no_ready_file() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..20 {
            let path = dir.path().join(format!("ready-{i}.json"));
            let got = ReadyFile::write_or_stop(&path, "{}\n".to_string(), std::future::ready(()))
                .await
                .unwrap();
            // Either side may win the race; only the stopped side must clean up.
            if let Some(file) = got {
                file.remove();
            }
            // A writer still at work would finish within this pause.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            assert!(!path.exists(), "run {i}: the ready file was left behind");
        }
    }
}
