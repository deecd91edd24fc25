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
        use std::io::ErrorKind::{IsADirectory, NotADirectory, NotFound};
        match kind {
            NotFound | IsADirectory | NotADirectory => CliError::usage(e),
            _ => CliError::runtime(e),
        }
    }

    /// A twin folder or its `wraith.toml` that cannot be used: IO as [`CliError::io`], the
    /// rest (no such twin, not a folder, a configuration error) is the user's to fix.
    pub fn twin(e: wraith_twin::TwinError) -> Self {
        match &e {
            wraith_twin::TwinError::Io { source, .. } => CliError::io(source.kind(), e),
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
