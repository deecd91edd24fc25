//! One module per subcommand.

pub mod check;
pub mod compose;
pub mod coverage;
pub mod import;
pub mod init;
pub mod inspect;
pub mod lint;
pub mod ready_file;
pub mod record;
pub mod route;
pub mod serve;
pub mod synth;

/// An exclusive lock on the file at `path` (created when missing), held until the file is
/// dropped: how two runs of one command on one twin take turns at a read-then-write step.
/// A sidecar file carries it, since the files such a step writes are replaced, not edited.
pub(crate) fn exclusive_lock(
    path: &std::path::Path,
) -> Result<std::fs::File, crate::exit::CliError> {
    let io = |what: &str, e: std::io::Error| {
        crate::exit::CliError::io(
            e.kind(),
            anyhow::anyhow!("cannot {what} {}: {e}", path.display()),
        )
    };
    // Opening a fifo for writing blocks until a reader comes: refuse one instead of hanging.
    if wraith_recording::fsutil::is_special_file(path) {
        return Err(crate::exit::CliError::usage(anyhow::anyhow!(
            "cannot lock {}: it is not a regular file (a fifo, socket or device); remove it, \
             the lock file is made anew",
            path.display()
        )));
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| io("open", e))?;
    file.lock().map_err(|e| io("lock", e))?;
    Ok(file)
}
