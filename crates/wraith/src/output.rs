//! Output helpers: JSON on `--json`, progress bars only on a terminal, and stdout writes that
//! end the process quietly when the reader has gone (`wraith inspect --json | head`).

/// `println!` that never panics: when stdout is a closed pipe the process exits 0, as Unix tools
/// do, instead of panicking with "Broken pipe".
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout().lock(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

use std::io::IsTerminal;

/// Print `value` on stdout as canonical JSON (keys sorted, compact, one trailing newline): the
/// form every file Wraith writes has, so `--json > file` is such a file, and the same form
/// `wraith check --json` prints. `jq .` pretty-prints it for a person.
pub fn print_json<T: serde::Serialize>(value: &T) {
    match wraith_model::to_canonical_json(value) {
        Ok(s) => print_text(&s),
        Err(e) => eprintln!("error: cannot render JSON output: {e}"),
    }
}

/// Print `text` on stdout as it is (no newline added), ending the process quietly (exit 0) when
/// stdout is a closed pipe, as [`outln!`] does.
pub fn print_text(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        std::process::exit(0);
    }
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
