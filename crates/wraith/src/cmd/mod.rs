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

/// `--format` of every command. `text` and `pretty` are one human-readable output (colours
/// only where stderr is a terminal and `NO_COLOR` is unset); `json` is `--json`, which the
/// command's `--json` field takes from it (clap's `default_value_if`), so the commands read
/// `json` alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Pretty,
    Text,
    Json,
}

/// Create the twin's folder `dir` (and its parents) when missing. Something else where the
/// folder belongs — a file, a fifo, a link to nothing or a loop of links — is the user's to move
/// (exit 1), named as such rather than as the OS's "File exists".
pub(crate) fn create_folder(dir: &std::path::Path) -> Result<(), crate::exit::CliError> {
    if let Ok(meta) = dir.symlink_metadata()
        && !dir.is_dir()
    {
        let what = if meta.file_type().is_symlink() {
            "a symbolic link to nothing (or a loop of links)"
        } else if meta.is_file() {
            "a file"
        } else {
            "a fifo, socket or device"
        };
        return Err(crate::exit::CliError::usage(anyhow::anyhow!(
            "{} is {what} where a folder belongs; move it away and the folder is made anew",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        crate::exit::CliError::io(
            e.kind(),
            anyhow::anyhow!("cannot create {}: {e}", dir.display()),
        )
    })
}

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
