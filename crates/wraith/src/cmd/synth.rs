//! `wraith synth <twin>`: read every recording session, synthesize the model, write
//! `model/twin.wir.json` and `model/symbols.json` (canonical JSON, atomically), print one
//! summary line (or the summary as JSON).

use std::path::Path;
use std::process::ExitCode;

use anyhow::anyhow;
use wraith_model::EchoSource;
use wraith_synth::request_keying::{KeyingMode, KeyingRule, RequestKeying, body_field};
use wraith_synth::{Summary, SynthOptions, synthesize};
use wraith_twin::{KeyingField, RequestKeyingMode, TwinConfig, TwinDir, write_atomic_all};

use crate::exit::{CliError, CmdResult};
use crate::output::{print_json, progress};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  wraith synth shop
  wraith synth twins/shop --tag checkout-contract
  wraith synth shop --json

Writes model/twin.wir.json and model/symbols.json; re-running on the same recordings writes the
same bytes; a failed run leaves both as they were.

Exit codes: 0 written · 1 usage or configuration error (the twin not found, no recordings, a
broken wraith.toml, a bad --tag) · 4 the recordings or the model folder cannot be read or
written.")]
pub struct Args {
    /// Twin name under ./twins/ or path to a twin folder.
    pub twin: String,
    /// Synthesize only from sessions carrying this tag.
    #[arg(long, value_name = "T")]
    pub tag: Option<String>,
    /// Print the summary as JSON on stdout.
    #[arg(long, default_value_if("format", "json", "true"))]
    pub json: bool,
    /// Output format: `text` or `pretty` (the same human-readable output, the default), or
    /// `json` (as `--json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<super::Format>,
}

pub fn run(args: Args) -> CmdResult {
    let twin = TwinDir::resolve(&args.twin).map_err(CliError::usage)?;
    if let Some(tag) = &args.tag {
        super::import::check_tag(tag)?;
    }
    let summary = synthesize_twin(&twin, args.tag.as_deref())?;
    if args.json {
        print_json(&summary);
    } else {
        outln!("{}", summary_line(&summary));
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

/// The twin's `[generate.request_keying]` as synth takes it. Every caller of
/// `wraith_synth::synthesize` for a twin (`synth`, `serve`'s auto-synth, `check --holdout`,
/// `compose`) passes it, so they all learn the same model.
pub fn request_keying(config: &TwinConfig) -> RequestKeying {
    let mode = match config.generate.request_keying.mode {
        RequestKeyingMode::Off => KeyingMode::Off,
        RequestKeyingMode::Manual => KeyingMode::Manual,
        RequestKeyingMode::Auto => KeyingMode::Auto,
    };
    let rules = config
        .generate
        .request_keying
        .route
        .iter()
        .map(|entry| KeyingRule {
            route: entry.route.trim().to_string(),
            // Validated when the config loaded: every field parses.
            fields: entry
                .fields
                .iter()
                .filter_map(|f| KeyingField::parse(f).ok())
                .map(|f| match f {
                    KeyingField::Body { path } => body_field(&path),
                    KeyingField::Query { name } => EchoSource::Query { name },
                })
                .collect(),
        })
        .collect();
    RequestKeying { mode, rules }
}

/// Remove what interrupted writes left in `twin`, of a process that is gone: temp files
/// (`.<name>.tmp-<pid>-<n>`; an exchange file written whole is put in place instead) and the
/// staging folders of sessions an interrupted import or
/// record was writing (`recordings/sessions/.<id>.staging-<pid>`); say so on stderr. Nothing
/// else is touched; what cannot be removed is left for next time.
pub(crate) fn remove_interrupted_writes(twin: &TwinDir) {
    // First what is whole of them: an exchange the recorder answered but had not renamed.
    let recovered = wraith_recording::recover_written_exchanges(&twin.sessions_dir());
    if let Some(first) = recovered.first() {
        eprintln!(
            "note: recovered {} exchange file(s) an interrupted recorder had written whole \
             but not renamed into place (first: {})",
            recovered.len(),
            first.display()
        );
    }
    let removed = wraith_recording::fsutil::remove_stale_temp_files(twin.root());
    if let Some(first) = removed.first() {
        eprintln!(
            "note: removed {} temporary file(s) left by interrupted writes (first: {})",
            removed.len(),
            first.display()
        );
    }
    let sessions = twin.root().join("recordings").join("sessions");
    let removed = wraith_recording::fsutil::remove_stale_staging_dirs(&sessions, None);
    if let Some(first) = removed.first() {
        eprintln!(
            "note: removed {} unfinished session folder(s) left by an interrupted import or \
             record (first: {})",
            removed.len(),
            first.display()
        );
    }
}

/// Warn on stderr about each recording session that reads but does not hold together: exchange
/// files missing, a manifest naming another session (`wraith lint` reports them as errors).
pub(crate) fn warn_session_problems(twin: &TwinDir) {
    for p in wraith_recording::check_sessions(&twin.sessions_dir()) {
        eprintln!("warning: {p}");
    }
}

/// Synthesize `twin`'s model from its recordings and write it to `model/`. Used by
/// `wraith synth` and by `wraith serve` when the model is missing or stale.
pub fn synthesize_twin(twin: &TwinDir, tag: Option<&str>) -> Result<Summary, CliError> {
    let config = TwinConfig::load(twin).map_err(CliError::twin)?;
    for w in &config.warnings {
        eprintln!("warning: {w}");
    }
    remove_interrupted_writes(twin);
    let bar = progress(3, "synth");
    bar.set_message("read");
    let sessions_dir = twin.sessions_dir();
    let sessions = wraith_recording::read_sessions(&sessions_dir).map_err(CliError::recording)?;
    warn_session_problems(twin);
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
    let mut synthesis = synthesize(
        &sessions,
        &SynthOptions {
            twin: config.service.name.clone(),
            base_url: config.service.base_url.clone(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            tag: tag.map(str::to_string),
            request_keying: request_keying(&config),
            run_gap_us: config.generate.run_gap_us(),
        },
    );
    drop(sessions);
    // What changes what the twin serves is said, not only counted among the model's
    // diagnostics: an exchange left out, a body served as text, an answer served without its
    // replay claim.
    for d in &synthesis.model.diagnostics {
        if matches!(
            d.code.as_str(),
            "path-too-deep" | "unparseable-body" | "respelled-body"
        ) {
            let line = match &d.route {
                Some(route) => format!("warning: {route}: {} ({})", d.message, d.code),
                None => format!("warning: {} ({})", d.message, d.code),
            };
            bar.suspend(|| eprintln!("{line}"));
        }
    }
    // Decide the moments' verdicts under the outbound policy `serve` and `check` install for
    // this twin (its scrub rules and key), so their engines start with them decided.
    if let Ok(policy) =
        super::serve::outbound_policy(twin, config.serve.strip_headers, &mut Vec::new())
    {
        let fidelity = match config.serve.fidelity {
            wraith_twin::Fidelity::Strict => wraith_engine::Fidelity::Strict,
            wraith_twin::Fidelity::Synth => wraith_engine::Fidelity::Synth,
            wraith_twin::Fidelity::Fuzzy => wraith_engine::Fidelity::Fuzzy,
        };
        wraith_engine::precompute::fill_with(&mut synthesis.model, policy, fidelity);
    }
    bar.inc(1);

    bar.set_message("write");
    let model_dir = twin.model_dir();
    let (model_path, symbols_path) = (
        model_dir.join("twin.wir.json"),
        model_dir.join("symbols.json"),
    );
    // Before the folder is made: a `model` linked out of the twin would be made out there.
    for path in [&model_path, &symbols_path] {
        twin.check_writable(path).map_err(CliError::twin)?;
    }
    super::create_folder(&model_dir)?;
    let serialized = |path: &Path, text: Result<String, wraith_model::CanonicalError>| {
        text.map_err(|e| CliError::runtime(anyhow!("cannot serialize {}: {e}", path.display())))
    };
    let model_text = serialized(&model_path, canonical_model(&mut synthesis.model))?;
    // The table names the model written with it: lint tells a pair no run wrote together.
    synthesis.symbols.model_digest = Some(wraith_model::model_digest(model_text.as_bytes()));
    let symbols_text = serialized(
        &symbols_path,
        wraith_model::to_canonical_json(&synthesis.symbols),
    )?;
    // Both or neither: a model beside another run's symbols would pass for a whole model.
    write_atomic_all(&[
        (&model_path, model_text.as_bytes()),
        (&symbols_path, symbols_text.as_bytes()),
    ])
    .map_err(|e| {
        CliError::runtime(anyhow!(
            "cannot write the model (nothing in {} was changed): {e}",
            model_dir.display()
        ))
    })?;
    bar.inc(1);
    bar.finish_and_clear();
    Ok(synthesis.summary)
}

/// [`wraith_model::to_canonical_json`] of a model, byte for byte, without building a JSON tree of
/// the whole model at once: the routes (which hold every recorded body) are serialized one at a
/// time and spliced into the canonical text of the rest. Halves peak memory on large twins.
pub fn canonical_model(
    model: &mut wraith_model::Model,
) -> Result<String, wraith_model::CanonicalError> {
    // A string no recorded value can spell: JSON escapes the NULs.
    const SENTINEL: &str = "\u{0}wraith:routes\u{0}";
    let routes = std::mem::take(&mut model.routes);
    let spliced = (|| -> Result<Option<String>, wraith_model::CanonicalError> {
        let mut shell = serde_json::to_value(&*model)?;
        shell["routes"] = serde_json::Value::String(SENTINEL.to_string());
        let text = wraith_model::to_canonical_json(&shell)?;
        let marker = serde_json::to_string(SENTINEL)?;
        let Some((before, after)) = text.split_once(&marker) else {
            return Ok(None);
        };
        if after.contains(&marker) {
            return Ok(None);
        }
        let mut out = String::with_capacity(text.len() + routes.len() * 1024);
        out.push_str(before);
        out.push('[');
        for (i, route) in routes.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(wraith_model::to_canonical_json(route)?.trim_end_matches('\n'));
        }
        out.push(']');
        out.push_str(after);
        Ok(Some(out))
    })();
    model.routes = routes;
    match spliced? {
        Some(text) => Ok(text),
        None => wraith_model::to_canonical_json(&*model),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spliced_canonical_model_equals_the_whole_tree_serialization() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/corpora/wraith-demo/recordings/sessions");
        let sessions = wraith_recording::read_sessions(&dir).unwrap_or_default();
        assert!(
            !sessions.is_empty(),
            "demo recordings not found at {}",
            dir.display()
        );
        let mut s = synthesize(
            &sessions,
            &SynthOptions {
                twin: "demo".into(),
                base_url: "http://127.0.0.1:18080".into(),
                tool_version: "test".into(),
                tag: None,
                request_keying: Default::default(),
                run_gap_us: None,
            },
        );
        let whole = wraith_model::to_canonical_json(&s.model).ok();
        let spliced = canonical_model(&mut s.model).ok();
        assert!(whole.is_some());
        assert_eq!(spliced, whole);
        assert_eq!(s.model.routes.len(), 6, "routes are put back");
    }
}
