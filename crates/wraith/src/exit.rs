//! Exit codes shared by every command, and how errors are shown.
//!
//! 0 success · 1 usage or configuration error · 2 conformance below threshold ·
//! 3 security or policy refusal · 4 runtime or IO failure.

use std::process::ExitCode;

/// Exit codes of the documented contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Usage = 1,
    Conformance = 2,
    Policy = 3,
    Runtime = 4,
}

/// An error with the exit code it maps to. The message says what went wrong, where, and how to
/// fix it.
#[derive(Debug)]
pub struct CliError {
    pub code: Code,
    pub error: anyhow::Error,
}

impl CliError {
    pub fn usage(e: impl Into<anyhow::Error>) -> Self {
        CliError {
            code: Code::Usage,
            error: e.into(),
        }
    }
    pub fn policy(e: impl Into<anyhow::Error>) -> Self {
        CliError {
            code: Code::Policy,
            error: e.into(),
        }
    }
    pub fn runtime(e: impl Into<anyhow::Error>) -> Self {
        CliError {
            code: Code::Runtime,
            error: e.into(),
        }
    }
    pub fn conformance(e: impl Into<anyhow::Error>) -> Self {
        CliError {
            code: Code::Conformance,
            error: e.into(),
        }
    }

    /// Reading a path the user named failed: a path that is missing or of the wrong kind is
    /// theirs to fix (1); any other IO error reading what is there is a runtime failure (4).
    pub fn io(kind: std::io::ErrorKind, e: impl Into<anyhow::Error>) -> Self {
        use std::io::ErrorKind::{InvalidInput, IsADirectory, NotADirectory, NotFound};
        match kind {
            // InvalidInput: a fifo, socket or device where a file belongs (`read_file`).
            NotFound | IsADirectory | NotADirectory | InvalidInput => CliError::usage(e),
            _ => CliError::runtime(e),
        }
    }

    /// Reading a text file the user wrote or named (a profile, a token, a config) failed:
    /// as [`CliError::io`], and bytes that are not UTF-8 are theirs to fix too (1).
    pub fn read_text(kind: std::io::ErrorKind, e: impl Into<anyhow::Error>) -> Self {
        match kind {
            std::io::ErrorKind::InvalidData => CliError::usage(e),
            _ => CliError::io(kind, e),
        }
    }

    /// A scrub policy or key that cannot be used: a refusal (3), a file that cannot be read
    /// (as [`CliError::io`]), or a policy to fix (1).
    pub fn scrub(e: wraith_recording::ScrubError) -> Self {
        if e.is_policy_refusal() {
            CliError::policy(e)
        } else if let Some(kind) = e.io_kind() {
            CliError::io(kind, e)
        } else {
            CliError::usage(e)
        }
    }

    /// A file a flag names for the command to write (`--ready-json`, `--ca-cert`), checked
    /// before the command starts work: a folder there, or a folder to hold it that does not
    /// exist, is the user's to fix (1), said before anything listens or is written.
    pub fn check_output_file(flag: &str, path: &std::path::Path) -> Result<(), CliError> {
        if path.is_dir() {
            return Err(CliError::usage(anyhow::anyhow!(
                "{flag} {}: is a folder; name a file to write",
                path.display()
            )));
        }
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        if !parent.is_dir() {
            return Err(CliError::usage(anyhow::anyhow!(
                "{flag} {}: the folder {} does not exist; create it or name a file in a folder \
                 that does",
                path.display(),
                parent.display()
            )));
        }
        Ok(())
    }

    /// Reading a twin's recordings failed: a recording path of the wrong kind (a folder or a
    /// fifo where a file belongs, a file where `recordings/sessions` belongs) is the user's to
    /// fix (1), as [`CliError::io`]; damage and any other IO failure is a runtime failure (4).
    pub fn recording(e: wraith_recording::RecordingError) -> Self {
        match &e {
            wraith_recording::RecordingError::Io { source, .. } => CliError::io(source.kind(), e),
            _ => CliError::runtime(e),
        }
    }

    /// A twin folder or its `wraith.toml` that cannot be used: IO as [`CliError::io`], a write
    /// a link would carry outside the twin is a policy refusal (3), the rest (no such twin, not
    /// a folder, a configuration error) is the user's to fix.
    pub fn twin(e: wraith_twin::TwinError) -> Self {
        match &e {
            wraith_twin::TwinError::Io { source, .. } => CliError::io(source.kind(), e),
            wraith_twin::TwinError::OutsideTwin { .. } => CliError::policy(e),
            _ => CliError::usage(e),
        }
    }
}

/// Result of a command: the exit code to use on success paths too (check may exit 2 with a report).
pub type CmdResult = Result<ExitCode, CliError>;

/// Print the error chain on stderr and turn it into the process exit code. Never panics: a
/// recorder stopped by SIGHUP may have lost its terminal, and its exit code still matters.
pub fn report(e: &CliError) -> ExitCode {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr().lock(),
        "error: {}",
        chain(e.error.as_ref())
    );
    ExitCode::from(e.code as u8)
}

/// An error and its sources on one line (see [`wraith_recording::error::one_line`]).
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    wraith_recording::error::one_line(e)
}
