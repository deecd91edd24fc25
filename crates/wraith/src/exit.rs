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
