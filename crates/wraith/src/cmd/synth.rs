//! `wraith synth <twin>`: read every recording session, synthesize the model, write
//! `model/twin.wir.json` and `model/symbols.json` (canonical JSON, atomically), print one
//! summary line (or the summary as JSON).

use std::process::ExitCode;

use anyhow::anyhow;
use wraith_synth::{Summary, SynthOptions, synthesize};
use wraith_twin::{TwinConfig, TwinDir, write_atomic};

use crate::exit::{CliError, CmdResult};
use crate::output::{print_json, progress};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  wraith synth shop
  wraith synth twins/shop --tag checkout-contract
  wraith synth shop --json

Writes model/twin.wir.json and model/symbols.json; re-running on the same recordings writes the
same bytes.")]
pub struct Args {
    /// Twin name under ./twins/ or path to a twin folder.
    pub twin: String,
    /// Synthesize only from sessions carrying this tag.
    #[arg(long, value_name = "T")]
    pub tag: Option<String>,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> CmdResult {
    let twin = TwinDir::resolve(&args.twin).map_err(CliError::usage)?;
    let summary = synthesize_twin(&twin, args.tag.as_deref())?;
    if args.json {
        print_json(&summary);
    } else {
        println!("{}", summary_line(&summary));
    }
    Ok(ExitCode::SUCCESS)
}

/// The one-line summary `wraith synth` prints.
pub fn summary_line(s: &Summary) -> String {
    format!(
        "synth  {}  {} routes  {} variants  {} entity types  {} state-ops  {} diagnostics",
        s.twin, s.routes, s.variants, s.entity_types, s.state_ops, s.diagnostics
    )
}

/// Synthesize `twin`'s model from its recordings and write it to `model/`. Used by
/// `wraith synth` and by `wraith serve` when the model is missing or stale.
pub fn synthesize_twin(twin: &TwinDir, tag: Option<&str>) -> Result<Summary, CliError> {
    let config = TwinConfig::load(twin).map_err(CliError::usage)?;
    for w in &config.warnings {
        eprintln!("warning: {w}");
    }
    let bar = progress(3, "synth");
    bar.set_message("read");
    let sessions_dir = twin.sessions_dir();
    let sessions = wraith_recording::read_sessions(&sessions_dir).map_err(CliError::runtime)?;
    bar.inc(1);
    let exchanges: usize = sessions
        .iter()
        .filter(|s| tag.is_none_or(|t| s.manifest.tags.iter().any(|x| x == t)))
        .map(|s| s.exchanges.len())
        .sum();
    if exchanges == 0 {
        bar.finish_and_clear();
        let what = match tag {
            Some(t) => format!("no recorded exchanges tagged `{t}`"),
            None => "no recorded exchanges".to_string(),
        };
        return Err(CliError::usage(anyhow!(
            "{what} in {}; record traffic with `wraith record {}` or import HAR files with \
             `wraith import {} FILE.har`, then run `wraith synth` again",
            sessions_dir.display(),
            twin.name(),
            twin.name()
        )));
    }

    bar.set_message("synth");
    let synthesis = synthesize(
        &sessions,
        &SynthOptions {
            twin: config.service.name.clone(),
            base_url: config.service.base_url.clone(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            tag: tag.map(str::to_string),
        },
    );
    drop(sessions);
    bar.inc(1);

    bar.set_message("write");
    let model_dir = twin.model_dir();
    std::fs::create_dir_all(&model_dir)
        .map_err(|e| CliError::runtime(anyhow!("cannot create {}: {e}", model_dir.display())))?;
    let write = |name: &str, text: Result<String, wraith_model::CanonicalError>| {
        let path = model_dir.join(name);
        let text = text
            .map_err(|e| CliError::runtime(anyhow!("cannot serialize {}: {e}", path.display())))?;
        write_atomic(&path, text.as_bytes())
            .map_err(|e| CliError::runtime(anyhow!("cannot write {}: {e}", path.display())))
    };
    write(
        "twin.wir.json",
        wraith_model::to_canonical_json(&synthesis.model),
    )?;
    write(
        "symbols.json",
        wraith_model::to_canonical_json(&synthesis.symbols),
    )?;
    bar.inc(1);
    bar.finish_and_clear();
    Ok(synthesis.summary)
}
