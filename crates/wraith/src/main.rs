//! `wraith`: the command-line front of the pipeline. The only crate that prints, draws progress
//! bars or uses `anyhow`; every subcommand lives in its own module under `cmd/`.

#[macro_use]
mod output;
mod cmd;
mod exit;
mod signals;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "wraith",
    version,
    about = "Turn recorded HTTP API traffic into a local, stateful, deterministic twin."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create a new twin folder under ./twins/<name>.
    Init(cmd::init::Args),
    /// Record traffic through a reverse proxy in front of the twin's base URL.
    Record(cmd::record::Args),
    /// Import HAR files as recording sessions.
    Import(cmd::import::Args),
    /// Summarize a twin's recordings.
    Inspect(cmd::inspect::Args),
    /// Synthesize the model from the recordings.
    Synth(cmd::synth::Args),
    /// Replay the recordings against the model and score conformance.
    Check(cmd::check::Args),
    /// Show which routes and state operations the recordings exercise.
    Coverage(cmd::coverage::Args),
    /// Check the twin's files: configs, recordings, model, schema and fixtures.
    Lint(cmd::lint::Args),
    /// Serve the twin over HTTP.
    Serve(cmd::serve::Args),
    /// Declare and list authored routes (lua/routes.toml).
    Route(cmd::route::Args),
    /// Materialize a base twin and overlay twins into one composite twin.
    Compose(cmd::compose::Args),
}

fn main() -> std::process::ExitCode {
    // clap exits 2 on a bad argument, but 2 means "conformance below threshold" here: a usage
    // error is 1. Help and version requests still print and exit 0.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                std::process::ExitCode::from(exit::Code::Usage as u8)
            } else {
                std::process::ExitCode::SUCCESS
            };
        }
    };
    let result = match cli.command {
        Command::Init(a) => cmd::init::run(a),
        Command::Record(a) => cmd::record::run(a),
        Command::Import(a) => cmd::import::run(a),
        Command::Inspect(a) => cmd::inspect::run(a),
        Command::Synth(a) => cmd::synth::run(a),
        Command::Check(a) => cmd::check::run(a),
        Command::Coverage(a) => cmd::coverage::run(a),
        Command::Lint(a) => cmd::lint::run(a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::Route(a) => cmd::route::run(a),
        Command::Compose(a) => cmd::compose::run(a),
    };
    // Flush what `outln!` buffered, so a failure to deliver it is seen here.
    output::note_stdout(std::io::Write::flush(&mut std::io::stdout()));
    let failure = output::stdout_failure().map(|f| {
        exit::CliError::runtime(anyhow::anyhow!(
            "cannot write the output to stdout ({f}): it is incomplete; free space where stdout \
             goes, or send it elsewhere"
        ))
    });
    match (result, failure) {
        // The command's own error (a failed gate's 2 included) keeps its code; the lost output
        // is said too.
        (Err(e), Some(lost)) => {
            exit::report(&lost);
            exit::report(&e)
        }
        (Err(e), None) => exit::report(&e),
        (Ok(_), Some(lost)) => exit::report(&lost),
        (Ok(code), None) => code,
    }
}
