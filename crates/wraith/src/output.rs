//! Output helpers: JSON on `--json`, progress bars only on a terminal, and stdout writes that
//! never panic and never hide the command's result (`wraith check --json | head`).

/// `println!` that never panics. When stdout is a closed pipe (the reader has gone, as with
/// `| head`) the rest of the output is dropped and the command still ends with its own exit
/// code (a failed gate still exits 2); any other failure to write is reported by
/// [`stdout_failure`] and the process exits 4.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if !$crate::output::stdout_closed() {
            let written = writeln!(std::io::stdout().lock(), $($arg)*);
            $crate::output::note_stdout(written);
        }
    }};
}

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once stdout failed: nothing more is written to it.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
/// The first write failure that was not the reader going away.
static STDOUT_ERROR: OnceLock<String> = OnceLock::new();

/// Whether stdout has failed and takes no more output.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Record the outcome of a stdout write.
pub fn note_stdout(written: std::io::Result<()>) {
    if let Err(e) = written {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let _ = STDOUT_ERROR.set(e.to_string());
        }
    }
}

/// A failure to write stdout other than a closed pipe (a full disk behind `> file`): the
/// output is incomplete, so the command must not report success.
pub fn stdout_failure() -> Option<&'static str> {
    STDOUT_ERROR.get().map(String::as_str)
}

use std::io::IsTerminal;

/// `1 session`, `3 sessions`: a count and its noun for a summary line (nouns taking an `s`).
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// Print `value` on stdout as canonical JSON (keys sorted, compact, one trailing newline): the
/// form every file Wraith writes has, so `--json > file` is such a file, and the same form
/// `wraith check --json` prints. `jq .` pretty-prints it for a person.
pub fn print_json<T: serde::Serialize>(value: &T) {
    match wraith_model::to_canonical_json(value) {
        Ok(s) => print_text(&s),
        Err(e) => eprintln!("error: cannot render JSON output: {e}"),
    }
}

/// Print `text` on stdout as it is (no newline added); a failure to write is handled as
/// [`outln!`] handles it.
pub fn print_text(text: &str) {
    use std::io::Write as _;
    if stdout_closed() {
        return;
    }
    let mut out = std::io::stdout().lock();
    note_stdout(out.write_all(text.as_bytes()).and_then(|()| out.flush()));
}

/// Whether log lines on stderr may carry ANSI colours: only on a terminal, and never when
/// `NO_COLOR` is set to anything but the empty string (<https://no-color.org>). A log piped to a
/// file or a CI collector is plain text.
pub fn stderr_colours() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A progress bar that draws only when stderr is a terminal.
pub fn progress(len: u64, what: &str) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}
