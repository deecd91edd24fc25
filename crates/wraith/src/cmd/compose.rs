//! `wraith compose --base <twin> --overlay <twin>… --output <dir>`: materialize a base twin and
//! overlay twins, in argument order, into one normal twin workspace (the composite) that `serve`,
//! `check`, `lint` and `inspect` accept.
//!
//! Overlays are additive only (the model merge is [`wraith_synth::compose`]); anything an overlay
//! would change is a conflict, and a composition with a conflict writes nothing and exits 2. The
//! composite is built in a temporary folder next to `--output` and renamed into place whole.
//! The layout rules (what is copied from which input, fixture-set namespacing, what happens to
//! `lua/`) are in `docs/compose.md`.
//!
//! Inputs are only read: a missing or stale model is synthesized in memory (the same
//! [`wraith_synth::synthesize`] call `wraith synth` makes), never written back into the input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::anyhow;
use serde::Serialize;
use serde_json::Value;
use wraith_model::{Model, SymbolTable};
use wraith_synth::compose::{ComposeInput, Contribution, compose_models};
use wraith_synth::{SynthOptions, synthesize};
use wraith_twin::{TwinConfig, TwinDir};

use crate::exit::{CliError, CmdResult};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  wraith compose --base shop --overlay shop-promos --output twins/shop-composite
  wraith compose --base twins/shop --overlay ../promos --overlay ../refunds --output out --json
  wraith serve twins/shop-composite

Overlays are additive: routes, variants, recorded answers, entity ids, sessions and fixture sets
they add are taken; anything that would change what the base (or an earlier overlay) already has
is a conflict. wraith.toml and scrub.toml come from the base. Overlay fixture sets are named
<overlay>:<set> (serve --fixture <overlay>:<set>). lua/routes.toml (authored routes) is never
composed. The envelope is also written to <output>/reports/compose-report.json.

Exit codes: 0 composed · 1 an input cannot be read, or --output is not usable · 2 conflicts
(nothing written) · 4 the composite could not be written.")]
pub struct Args {
    /// The base twin: name under ./twins/ or path to a twin folder.
    #[arg(long, value_name = "TWIN")]
    pub base: String,
    /// An overlay twin (repeatable; applied in argument order).
    #[arg(long = "overlay", value_name = "TWIN", required = true)]
    pub overlays: Vec<String>,
    /// Folder to write the composite twin into (must not exist or be empty, unless --force).
    #[arg(long, value_name = "DIR")]
    pub output: PathBuf,
    /// Replace a non-empty --output folder.
    #[arg(long)]
    pub force: bool,
    /// Print the compose envelope as canonical JSON on stdout.
    #[arg(long, default_value_if("format", "json", "true"))]
    pub json: bool,
    /// Output format: `text` or `pretty` (the same human-readable output, the default), or
    /// `json` (as `--json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<super::Format>,
    /// Print the human summary on stderr instead of stdout (`serve --overlay` composes first and
    /// keeps stdout for itself).
    #[arg(skip)]
    pub summary_on_stderr: bool,
    /// The flag that named the output, for messages: `--output` here, `--keep-composite` when
    /// `serve --overlay` composes (which has no `--force`). `None` means `--output`.
    #[arg(skip)]
    pub output_flag: Option<&'static str>,
}

/// How a composition ended when nothing failed outright.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The composite was written.
    Composed,
    /// This many conflicts; nothing was written.
    Conflicts(usize),
}

/// Version of the compose envelope (`reports/compose-report.json`).
const ENVELOPE_VERSION: u32 = 1;

/// The compose envelope: printed with `--json` and written to `reports/compose-report.json`.
#[derive(Debug, Serialize)]
struct Envelope {
    schema_version: u32,
    /// `composed`, or `conflict` when nothing was written.
    status: &'static str,
    /// `--output` as given.
    output: String,
    /// The input `wraith.toml` and `scrub.toml` were taken from (always the base).
    config_from: String,
    inputs: Vec<InputReport>,
    composite: CompositeSummary,
    warnings: Vec<Warning>,
    conflicts: Vec<Conflict>,
}

#[derive(Debug, Serialize)]
struct InputReport {
    /// `base` or `overlay`.
    role: &'static str,
    /// The twin folder's name (also the namespace of its fixture sets when it is an overlay).
    name: String,
    /// The argument as given.
    twin: String,
    /// `read` (model/twin.wir.json was current) or `synthesized` (missing or stale: synthesized
    /// in memory from the input's recordings).
    model: &'static str,
    #[serde(flatten)]
    contributed: Contribution,
    /// Recording sessions copied from this input.
    sessions: Vec<String>,
    /// Sessions byte-identical to one an earlier input already brought (not copied twice).
    sessions_shared: Vec<String>,
    /// Fixture sets as named in the composite.
    fixture_sets: Vec<String>,
    /// `state/schema.json` entity types no earlier input declared.
    schema_types_added: Vec<String>,
    /// Files copied under `lua/` (relative to the twin).
    lua_files: Vec<String>,
}

#[derive(Debug, Default, Serialize)]
struct CompositeSummary {
    routes: usize,
    variants: usize,
    exact_entries: usize,
    sessions: usize,
    entity_types: Vec<String>,
    fixture_sets: Vec<String>,
    schema_types: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
struct Warning {
    code: String,
    input: String,
    message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
struct Conflict {
    input: String,
    /// A route (`METHOD /path`), `entity_types/<name>`, or a path inside the twin.
    path: String,
    reason: String,
}

/// One input twin, loaded.
struct Input {
    role: &'static str,
    arg: String,
    name: String,
    dir: TwinDir,
    model: Model,
    symbols: SymbolTable,
    model_source: &'static str,
}

/// Where a file of the composite comes from.
enum Source {
    Copy(PathBuf),
    Bytes(Vec<u8>),
}

/// A file of the composite: path relative to the output folder, and its content.
struct Planned {
    rel: PathBuf,
    source: Source,
}

pub fn run(args: Args) -> CmdResult {
    Ok(match compose(&args)? {
        Outcome::Composed => ExitCode::SUCCESS,
        Outcome::Conflicts(_) => ExitCode::from(crate::exit::Code::Conformance as u8),
    })
}

/// Compose `args.base` and `args.overlays` into `args.output`, printing the envelope.
pub fn compose(args: &Args) -> Result<Outcome, CliError> {
    let mut warnings = Vec::new();
    let mut inputs = Vec::new();
    let mut seen_roots: Vec<PathBuf> = Vec::new();
    for (role, arg) in
        std::iter::once(("base", &args.base)).chain(args.overlays.iter().map(|o| ("overlay", o)))
    {
        let input = load_input(role, arg, &mut warnings)?;
        let root = canonical(input.dir.root());
        if seen_roots.contains(&root) {
            return Err(CliError::usage(anyhow!(
                "`{arg}` is listed twice ({}); name each input once",
                root.display()
            )));
        }
        seen_roots.push(root);
        inputs.push(input);
    }
    check_output(
        &args.output,
        &seen_roots,
        args.force,
        args.output_flag.unwrap_or("--output"),
    )?;

    // The model.
    let compose_inputs: Vec<ComposeInput<'_>> = inputs
        .iter()
        .map(|i| ComposeInput {
            name: &i.name,
            model: &i.model,
            symbols: &i.symbols,
        })
        .collect();
    let mut composed = compose_models(&compose_inputs, env!("CARGO_PKG_VERSION"));
    if composed.symbols.schema_version == 0 {
        composed.symbols.schema_version = wraith_model::MODEL_SCHEMA_VERSION;
    }
    let mut conflicts: Vec<Conflict> = composed
        .conflicts
        .iter()
        .map(|c| Conflict {
            input: inputs[c.input].name.clone(),
            path: c.path.clone(),
            reason: c.reason.clone(),
        })
        .collect();
    for n in &composed.notes {
        warnings.push(Warning {
            code: n.code.clone(),
            input: inputs[n.input].name.clone(),
            message: n.message.clone(),
        });
    }

    let mut reports: Vec<InputReport> = inputs
        .iter()
        .zip(&composed.contributions)
        .map(|(i, c)| InputReport {
            role: i.role,
            name: i.name.clone(),
            twin: i.arg.clone(),
            model: i.model_source,
            contributed: c.clone(),
            sessions: Vec::new(),
            sessions_shared: Vec::new(),
            fixture_sets: Vec::new(),
            schema_types_added: Vec::new(),
            lua_files: Vec::new(),
        })
        .collect();

    // Files: configuration from the base, then recordings, state and Lua of every input.
    let mut plan: Vec<Planned> = Vec::new();
    for name in ["wraith.toml", "scrub.toml"] {
        let p = inputs[0].dir.root().join(name);
        if p.is_file() {
            plan.push(Planned {
                rel: PathBuf::from(name),
                source: Source::Copy(p),
            });
        }
    }
    for (i, input) in inputs.iter().enumerate() {
        refuse_links_out(input, i == 0)?;
    }
    let empty_sessions = plan_recordings(&inputs, &mut reports, &mut plan, &mut conflicts)?;
    // A session folder with no files is not copied (the composite has no such folder), so the
    // composite's model does not list it either, unless another input brought one of that id.
    let copied: std::collections::BTreeSet<&String> =
        reports.iter().flat_map(|r| &r.sessions).collect();
    composed
        .model
        .sessions
        .retain(|s| !empty_sessions.contains(s) || copied.contains(s));
    let schema_types = plan_schema(&inputs, &mut reports, &mut plan, &mut conflicts)?;
    let fixture_sets = plan_fixtures(
        &inputs,
        &mut reports,
        &mut plan,
        &mut conflicts,
        &mut warnings,
    )?;
    plan_lua(
        &inputs,
        &mut reports,
        &mut plan,
        &mut conflicts,
        &mut warnings,
    )?;
    conflicts.sort();
    conflicts.dedup();

    let model = &composed.model;
    let composite = CompositeSummary {
        routes: model.routes.len(),
        variants: model.routes.iter().map(|r| r.variants.len()).sum(),
        exact_entries: model.routes.iter().map(|r| r.exact.len()).sum(),
        sessions: reports.iter().map(|r| r.sessions.len()).sum(),
        entity_types: model.entity_types.keys().cloned().collect(),
        fixture_sets,
        schema_types,
    };
    let envelope = Envelope {
        schema_version: ENVELOPE_VERSION,
        status: if conflicts.is_empty() {
            "composed"
        } else {
            "conflict"
        },
        output: args.output.display().to_string(),
        config_from: inputs[0].name.clone(),
        inputs: reports,
        composite,
        warnings,
        conflicts,
    };
    let envelope_json = wraith_model::to_canonical_json(&envelope)
        .map_err(|e| CliError::runtime(anyhow!("cannot render the compose envelope: {e}")))?;

    if !envelope.conflicts.is_empty() {
        print_envelope(&envelope, &envelope_json, args);
        eprintln!(
            "error: {} conflict(s); nothing was written to {}. Overlays may only add routes, \
             variants, recorded answers, sessions and fixture sets: drop or re-record what they \
             change, or compose without that overlay",
            envelope.conflicts.len(),
            args.output.display()
        );
        return Ok(Outcome::Conflicts(envelope.conflicts.len()));
    }

    // The model comes after the recordings, so its files are newer than every copied session
    // and `serve` does not take the composite's model for stale and re-synthesize it.
    let canonical = |what: &str, r: Result<String, wraith_model::CanonicalError>| {
        r.map_err(|e| CliError::runtime(anyhow!("cannot serialize the composite {what}: {e}")))
    };
    let model_text = canonical(
        "model",
        crate::cmd::synth::canonical_model(&mut composed.model),
    )?;
    composed.symbols.model_digest = Some(wraith_model::model_digest(model_text.as_bytes()));
    plan.push(Planned {
        rel: PathBuf::from("model/twin.wir.json"),
        source: Source::Bytes(model_text.into_bytes()),
    });
    plan.push(Planned {
        rel: PathBuf::from("model/symbols.json"),
        source: Source::Bytes(
            canonical(
                "symbols",
                wraith_model::to_canonical_json(&composed.symbols),
            )?
            .into_bytes(),
        ),
    });
    plan.push(Planned {
        rel: PathBuf::from("reports/compose-report.json"),
        source: Source::Bytes(envelope_json.clone().into_bytes()),
    });
    materialize(
        &args.output,
        &plan,
        args.force,
        args.output_flag.unwrap_or("--output"),
    )?;
    print_envelope(&envelope, &envelope_json, args);
    Ok(Outcome::Composed)
}

fn print_envelope(e: &Envelope, json: &str, args: &Args) {
    let as_json = args.json;
    // `outln!` on stdout, or stderr for `serve --overlay`.
    macro_rules! say {
        ($($arg:tt)*) => {
            if args.summary_on_stderr {
                eprintln!($($arg)*);
            } else {
                outln!($($arg)*);
            }
        };
    }
    for w in &e.warnings {
        eprintln!("warning: {} ({}): {}", w.code, w.input, w.message);
    }
    for c in &e.conflicts {
        eprintln!("conflict: {}: {}: {}", c.input, c.path, c.reason);
    }
    if as_json {
        outln!("{}", json.trim_end());
        return;
    }
    if e.status != "composed" {
        return;
    }
    say!(
        "compose  {}  {} inputs  {} routes  {} variants  {} sessions  {} fixture sets",
        e.output,
        e.inputs.len(),
        e.composite.routes,
        e.composite.variants,
        e.composite.sessions,
        e.composite.fixture_sets.len()
    );
    for i in &e.inputs {
        say!(
            "  {:<7} {}  +{} routes  +{} variants  +{} recorded requests  {} sessions  {} fixture sets",
            i.role,
            i.name,
            i.contributed.routes_added.len(),
            i.contributed.variants_added,
            i.contributed.exact_entries_added,
            i.sessions.len(),
            i.fixture_sets.len()
        );
    }
}

/// Resolve and read one input: its config must parse and it must have a model or recordings.
fn load_input(
    role: &'static str,
    arg: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Input, CliError> {
    let unreadable = |e| {
        let mut err = CliError::twin(e);
        err.error = err.error.context(format!("{role} `{arg}` cannot be read"));
        err
    };
    let dir = TwinDir::resolve(arg).map_err(unreadable)?;
    let name = canonical(dir.root())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.name());
    let config = TwinConfig::load(&dir).map_err(unreadable)?;
    let model_path = dir.model_dir().join("twin.wir.json");
    let model_mtime = std::fs::metadata(&model_path)
        .and_then(|m| m.modified())
        .ok();
    let newest = newest_recording_mtime(&dir.sessions_dir());
    let stale = match (model_mtime, newest) {
        (None, _) => Some("it has no model yet"),
        (Some(m), Some(r)) if r > m => Some("its recordings are newer than its model"),
        _ => None,
    };
    let read = match stale {
        Some(_) => None,
        None => match read_model(&dir) {
            Ok(pair) => Some(pair),
            Err(why) if newest.is_some() => {
                warnings.push(Warning {
                    code: "model-resynthesized".into(),
                    input: name.clone(),
                    message: format!(
                        "{} ({why}); composed a model synthesized from its recordings instead",
                        model_path.display()
                    ),
                });
                None
            }
            Err(why) => {
                return Err(CliError::usage(anyhow!(
                    "{role} `{arg}` cannot be read: {} ({why}) and there are no recordings to \
                     synthesize one from; re-run `wraith synth {arg}`",
                    model_path.display()
                )));
            }
        },
    };
    let (model, symbols, model_source) = match read {
        Some((m, s)) => (m, s, "read"),
        None => {
            let sessions = wraith_recording::read_sessions(&dir.sessions_dir()).map_err(|e| {
                CliError::usage(anyhow!("{role} `{arg}`: cannot read its recordings: {e}"))
            })?;
            if sessions.iter().all(|s| s.exchanges.is_empty()) {
                return Err(CliError::usage(anyhow!(
                    "{role} `{arg}` has no model and no recorded exchanges to synthesize one \
                     from; record or import traffic into it and run `wraith synth {arg}`"
                )));
            }
            let s = synthesize(
                &sessions,
                &SynthOptions {
                    twin: config.service.name.clone(),
                    base_url: config.service.base_url.clone(),
                    tool_version: env!("CARGO_PKG_VERSION").to_string(),
                    tag: None,
                    request_keying: super::synth::request_keying(&config),
                    run_gap_us: config.generate.run_gap_us(),
                },
            );
            (s.model, s.symbols, "synthesized")
        }
    };
    Ok(Input {
        role,
        arg: arg.to_string(),
        name,
        dir,
        model,
        symbols,
        model_source,
    })
}

/// Read `model/twin.wir.json` (current schema version) and `model/symbols.json` (empty when
/// missing); the error says why the model cannot be used.
fn read_model(dir: &TwinDir) -> Result<(Model, SymbolTable), String> {
    let path = dir.model_dir().join("twin.wir.json");
    let text =
        wraith_twin::read_file_to_string(&path).map_err(|e| format!("cannot read it: {e}"))?;
    let model = wraith_model::model_from_json_str(&text).map_err(|e| e.to_string())?;
    let symbols = match wraith_twin::read_file_to_string(&dir.model_dir().join("symbols.json")) {
        // A file nested too deep to walk is left out like one that does not parse.
        Ok(t) if wraith_model::refuse_too_deep(&t).is_ok() => {
            wraith_model::from_json_str::<SymbolTable>(&t).unwrap_or_default()
        }
        _ => SymbolTable::default(),
    };
    Ok((model, symbols))
}

/// Newest file-system time among the recording sessions (folders and manifests): the same
/// staleness test `wraith serve` applies before it re-synthesizes.
fn newest_recording_mtime(sessions_dir: &Path) -> Option<SystemTime> {
    let mut newest: Option<SystemTime> = None;
    for entry in std::fs::read_dir(sessions_dir).ok()?.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        for p in [path.clone(), path.join("manifest.json")] {
            if let Ok(t) = std::fs::metadata(&p).and_then(|m| m.modified()) {
                newest = Some(newest.map_or(t, |n| n.max(t)));
            }
        }
    }
    newest
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| std::path::absolute(p).unwrap_or(p.to_path_buf()))
}

/// `--output` must be a folder that is empty or absent (or `--force`), and must neither be nor
/// contain nor sit inside an input.
fn check_output(
    output: &Path,
    inputs: &[PathBuf],
    force: bool,
    flag: &str,
) -> Result<(), CliError> {
    // `Path` reads `out/.` as `out`, but the final rename onto `out/.` fails: say so up front.
    let spelled = output.as_os_str().to_string_lossy();
    if spelled == "." || spelled.ends_with("/.") {
        let folder = spelled.trim_end_matches("/.");
        return Err(CliError::usage(anyhow!(
            "{flag} {spelled} ends in `.`; name the folder itself{}",
            if folder.is_empty() || folder == "." {
                String::new()
            } else {
                format!(" ({folder})")
            }
        )));
    }
    let abs = match (output.parent(), output.file_name()) {
        (Some(parent), Some(name)) => {
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            canonical(parent).join(name)
        }
        _ => {
            return Err(CliError::usage(anyhow!(
                "{flag} {} names no folder; pass a path such as twins/composite",
                output.display()
            )));
        }
    };
    for root in inputs {
        if abs.starts_with(root) || root.starts_with(&abs) {
            return Err(CliError::usage(anyhow!(
                "{flag} {} overlaps the input {}; write the composite to a folder of its own",
                output.display(),
                root.display()
            )));
        }
    }
    // The composite is renamed into place, which replaces a link rather than filling the folder
    // it names: without --force that would fail only after the whole composite was built.
    if !force
        && output
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
    {
        let to = std::fs::read_link(output)
            .map_or_else(|_| "?".to_string(), |t| t.display().to_string());
        let fix = if flag == "--output" {
            "name the folder itself, or pass --force to replace the link"
        } else {
            "name the folder itself"
        };
        return Err(CliError::usage(anyhow!(
            "{flag} {} is a symbolic link (to {to}); {fix}",
            output.display()
        )));
    }
    match std::fs::metadata(output) {
        Err(_) => Ok(()),
        Ok(m) if !m.is_dir() => Err(CliError::usage(anyhow!(
            "{flag} {} exists and is not a folder",
            output.display()
        ))),
        Ok(_) => {
            let empty = std::fs::read_dir(output)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false);
            if empty || force {
                Ok(())
            } else {
                let fix = if flag == "--output" {
                    "pass --force to replace it, or choose another folder"
                } else {
                    "choose another folder, or empty it"
                };
                Err(CliError::usage(anyhow!(
                    "{flag} {} exists and is not empty; {fix}",
                    output.display()
                )))
            }
        }
    }
}

/// Every file under `dir`, as sorted paths relative to it (dot files and dot folders skipped).
///
/// A symbolic link is taken only when it names a file inside `dir`: one to a file elsewhere
/// would copy a file of the host (a credentials file, another project's code) into a composite
/// meant to be shared, and one to a folder may loop. Either is refused, naming the link.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    enum Walk {
        Io(std::io::Error),
        Link(PathBuf, String),
    }
    fn walk(root: &Path, real_root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Walk> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .and_then(|r| r.collect::<Result<Vec<_>, _>>())
            .map_err(Walk::Io)?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let p = e.path();
            let is_link = e.file_type().map_err(Walk::Io)?.is_symlink();
            if is_link {
                let target = std::fs::canonicalize(&p)
                    .map_err(|err| Walk::Link(p.clone(), format!("does not resolve ({err})")))?;
                if target.is_dir() {
                    return Err(Walk::Link(
                        p,
                        format!("names the folder {}", target.display()),
                    ));
                }
                if !target.starts_with(real_root) {
                    return Err(Walk::Link(
                        p,
                        format!("names {}, outside {}", target.display(), root.display()),
                    ));
                }
            }
            if !is_link && p.is_dir() {
                walk(root, real_root, &p, out)?;
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_path_buf());
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    let walked = std::fs::canonicalize(dir)
        .map_err(Walk::Io)
        .and_then(|real_root| walk(dir, &real_root, dir, &mut out));
    match walked {
        Ok(()) => Ok(out),
        Err(Walk::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(Walk::Io(e)) => Err(CliError::usage(anyhow!(
            "cannot read {}: {e}",
            dir.display()
        ))),
        Err(Walk::Link(link, why)) => Err(link_refused(&link, &why)),
    }
}

/// The exit-1 refusal of a symbolic link among the files compose copies (`why`: what it names).
fn link_refused(link: &Path, why: &str) -> CliError {
    CliError::usage(anyhow!(
        "{} is a symbolic link that {why}; compose copies only a twin's own files: replace \
         the link with the file or folder itself",
        link.display()
    ))
}

/// Why the symbolic link `link` may not be copied out of `root` (the folder compose copies
/// from): it names a folder (which may loop, or hold another twin's files), a file outside
/// `root`, or nothing. `None` for a link to a file inside `root`.
fn link_problem(root: &Path, link: &Path) -> Option<String> {
    let target = match std::fs::canonicalize(link) {
        Ok(t) => t,
        Err(e) => return Some(format!("does not resolve ({e})")),
    };
    if target.is_dir() {
        return Some(format!("names the folder {}", target.display()));
    }
    if !target.starts_with(canonical(root)) {
        return Some(format!(
            "names {}, outside {}",
            target.display(),
            root.display()
        ));
    }
    None
}

/// The rule [`files_under`] holds inside the folders compose walks, held for the twin's own
/// paths on the way to them: `lua/`, `state/`, `state/fixtures/`, `state/schema.json`,
/// `recordings/`, `recordings/sessions/` and every session folder in it (and the base's
/// `wraith.toml` and `scrub.toml`) may not be symbolic links to a folder, or to a file outside
/// the twin. A session folder that is a link to another twin's session would otherwise be copied
/// under a name its manifest does not carry, and fail `wraith lint` in the composite.
fn refuse_links_out(input: &Input, base: bool) -> Result<(), CliError> {
    let root = input.dir.root();
    let mut paths: Vec<PathBuf> = [
        "lua",
        "state",
        "state/fixtures",
        "state/schema.json",
        "recordings",
        "recordings/sessions",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    if base {
        paths.extend(["wraith.toml", "scrub.toml"].iter().map(|p| root.join(p)));
    }
    let is_link = |p: &Path| {
        p.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
    };
    for p in &paths {
        if is_link(p)
            && let Some(why) = link_problem(root, p)
        {
            return Err(link_refused(p, &why));
        }
    }
    let sessions = input.dir.sessions_dir();
    if let Ok(entries) = std::fs::read_dir(&sessions) {
        let mut links: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            // A link to a file is no session and is not copied.
            .filter(|p| is_link(p) && p.is_dir())
            .collect();
        links.sort();
        for p in links {
            if let Some(why) = link_problem(&sessions, &p) {
                return Err(link_refused(&p, &why));
            }
        }
    }
    Ok(())
}

fn read_bytes(p: &Path) -> Result<Vec<u8>, CliError> {
    wraith_twin::read_file(p)
        .map_err(|e| CliError::usage(anyhow!("cannot read {}: {e}", p.display())))
}

/// The files of a folder as (relative path, bytes), sorted by path.
type Files = Vec<(PathBuf, Vec<u8>)>;

/// The (relative path, bytes) listing of a folder, to tell byte-identical copies apart.
fn fingerprint(dir: &Path) -> Result<Files, CliError> {
    files_under(dir)?
        .into_iter()
        .map(|rel| {
            let bytes = read_bytes(&dir.join(&rel))?;
            Ok((rel, bytes))
        })
        .collect()
}

/// Sub-folders of `dir` (not starting with `.`), sorted by name.
fn subdirs(dir: &Path) -> Result<Vec<String>, CliError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(CliError::usage(anyhow!(
                "cannot read {}: {e}",
                dir.display()
            )));
        }
    };
    let mut out: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    out.sort();
    Ok(out)
}

/// `recordings/sessions/<id>/` of every input, ids kept. A session id two inputs carry is one
/// session when the folders are byte-identical, else a conflict. A folder holding no file is no
/// session: it is neither copied nor counted; its id is returned so the composite's model
/// leaves it out too.
fn plan_recordings(
    inputs: &[Input],
    reports: &mut [InputReport],
    plan: &mut Vec<Planned>,
    conflicts: &mut Vec<Conflict>,
) -> Result<std::collections::BTreeSet<String>, CliError> {
    let mut empty = std::collections::BTreeSet::new();
    let mut seen: BTreeMap<String, (usize, PathBuf)> = BTreeMap::new();
    for (i, input) in inputs.iter().enumerate() {
        let sessions_dir = input.dir.sessions_dir();
        // Copied as they are, so read them first: a damaged recording would otherwise reach
        // the composite unnoticed, and fail every command that reads it there.
        if let Some(p) = wraith_recording::check_sessions(&sessions_dir)
            .into_iter()
            .chain(wraith_recording::check_exchange_files(&sessions_dir))
            .next()
        {
            return Err(CliError::usage(anyhow!(
                "{} `{}`: recordings/sessions/{}: {p}; fix or remove that session (`wraith \
                 lint {}` lists every such problem)",
                input.role,
                input.arg,
                p.folder(),
                input.arg
            )));
        }
        for id in subdirs(&sessions_dir)? {
            let dir = sessions_dir.join(&id);
            let rel_dir = Path::new("recordings").join("sessions").join(&id);
            let files = files_under(&dir)?;
            if files.is_empty() {
                empty.insert(id);
                continue;
            }
            if let Some((first, first_dir)) = seen.get(&id) {
                if fingerprint(first_dir)? == fingerprint(&dir)? {
                    reports[i].sessions_shared.push(id);
                } else {
                    conflicts.push(Conflict {
                        input: input.name.clone(),
                        path: rel_dir.display().to_string(),
                        reason: format!(
                            "session {id} is also in {} with different contents; session ids \
                             must be unique across the inputs",
                            inputs[*first].name
                        ),
                    });
                }
                continue;
            }
            for rel in files {
                plan.push(Planned {
                    rel: rel_dir.join(&rel),
                    source: Source::Copy(dir.join(&rel)),
                });
            }
            seen.insert(id.clone(), (i, dir));
            reports[i].sessions.push(id);
        }
    }
    Ok(empty)
}

/// `state/schema.json`: the union of the declared entity types; one type declared differently by
/// two inputs is a conflict. Returns the composite's declared type names.
fn plan_schema(
    inputs: &[Input],
    reports: &mut [InputReport],
    plan: &mut Vec<Planned>,
    conflicts: &mut Vec<Conflict>,
) -> Result<Vec<String>, CliError> {
    let mut types: BTreeMap<String, (usize, Value)> = BTreeMap::new();
    let mut any = false;
    for (i, input) in inputs.iter().enumerate() {
        let path = input.dir.schema_json();
        let text = match wraith_twin::read_file_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(CliError::usage(anyhow!(
                    "{} `{}`: cannot read {}: {e}",
                    input.role,
                    input.arg,
                    path.display()
                )));
            }
        };
        any = true;
        let unusable = |why: String| {
            CliError::usage(anyhow!(
                "{} `{}`: {} cannot be composed: {why}; fix it (`wraith lint {}` explains) or \
                 remove it",
                input.role,
                input.arg,
                path.display(),
                input.arg
            ))
        };
        let v: Value =
            serde_json::from_str(&text).map_err(|e| unusable(format!("not valid JSON ({e})")))?;
        if v.get("schema_version").and_then(Value::as_u64) != Some(1) {
            return Err(unusable("schema_version must be 1".into()));
        }
        let declared = match v.get("entity_types") {
            None => continue,
            Some(Value::Object(m)) => m,
            Some(_) => return Err(unusable("entity_types must be an object".into())),
        };
        for (name, decl) in declared {
            match types.get(name) {
                None => {
                    types.insert(name.clone(), (i, decl.clone()));
                    reports[i].schema_types_added.push(name.clone());
                }
                Some((_, d)) if d == decl => {}
                Some((first, _)) => conflicts.push(Conflict {
                    input: input.name.clone(),
                    path: format!("state/schema.json: entity_types/{name}"),
                    reason: format!(
                        "entity type `{name}` is declared differently in {}",
                        inputs[*first].name
                    ),
                }),
            }
        }
    }
    for r in reports.iter_mut() {
        r.schema_types_added.sort();
    }
    if any {
        let entity_types: serde_json::Map<String, Value> = types
            .iter()
            .map(|(k, (_, v))| (k.clone(), v.clone()))
            .collect();
        let doc = serde_json::json!({ "schema_version": 1, "entity_types": entity_types });
        let text = wraith_model::to_canonical_json(&doc)
            .map_err(|e| CliError::runtime(anyhow!("cannot serialize state/schema.json: {e}")))?;
        plan.push(Planned {
            rel: PathBuf::from("state/schema.json"),
            source: Source::Bytes(text.into_bytes()),
        });
    }
    Ok(types.into_keys().collect())
}

/// `state/fixtures/`: the base's tree as it is (its sets keep their names, so its default set
/// stays the composite's default); every set of an overlay `o` becomes `o:<set>` (an overlay's
/// loose legacy files become `o:default`). A bare `parent` naming a set of the same overlay is
/// rewritten to the namespaced name so it keeps meaning that set. Returns the composite's set
/// names.
fn plan_fixtures(
    inputs: &[Input],
    reports: &mut [InputReport],
    plan: &mut Vec<Planned>,
    conflicts: &mut Vec<Conflict>,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<String>, CliError> {
    let fixtures_rel = Path::new("state").join("fixtures");
    // Composite set name → (input, the set's files as (relative path, bytes)).
    let mut sets: BTreeMap<String, (usize, Files)> = BTreeMap::new();
    let mut base_loose = false;
    for (i, input) in inputs.iter().enumerate() {
        let dir = input.dir.fixtures_dir();
        let own_sets = subdirs(&dir)?;
        let loose: Vec<PathBuf> = files_under(&dir)?
            .into_iter()
            .filter(|p| p.components().count() == 1 && p.extension().is_some_and(|e| e == "json"))
            .collect();
        let mut materialized: Vec<(String, Files)> = Vec::new();
        if i == 0 {
            for rel in &loose {
                plan.push(Planned {
                    rel: fixtures_rel.join(rel),
                    source: Source::Copy(dir.join(rel)),
                });
            }
            base_loose = !loose.is_empty();
            for set in &own_sets {
                materialized.push((set.clone(), fingerprint(&dir.join(set))?));
            }
        } else {
            let ns = &input.name;
            // The overlay's sets by name: its set folders, and `default` when loose legacy
            // files are its default set (they become `<ns>:default` below).
            let mut own_names = own_sets.clone();
            if !loose.is_empty() && !own_names.iter().any(|s| s == "default") {
                own_names.push("default".into());
            }
            for set in &own_sets {
                let mut files = fingerprint(&dir.join(set))?;
                for (rel, bytes) in &mut files {
                    if rel == Path::new("fixture.json")
                        && let Some(rewritten) = namespace_parent(bytes, ns, &own_names)
                    {
                        *bytes = rewritten;
                    }
                }
                materialized.push((format!("{ns}:{set}"), files));
            }
            if !loose.is_empty() {
                if own_sets.iter().any(|s| s == "default") {
                    warnings.push(Warning {
                        code: "fixture-loose-files-ignored".into(),
                        input: input.name.clone(),
                        message: format!(
                            "state/fixtures/ holds both a default/ set and loose <type>.json \
                             files; as when it is served, default/ wins and the loose files are \
                             not composed ({})",
                            loose
                                .iter()
                                .map(|p| p.display().to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    });
                } else {
                    let mut files = Vec::new();
                    for rel in &loose {
                        files.push((rel.clone(), read_bytes(&dir.join(rel))?));
                    }
                    materialized.push((format!("{ns}:default"), files));
                }
            }
        }
        for (name, files) in materialized {
            match sets.get(&name) {
                None => {
                    reports[i].fixture_sets.push(name.clone());
                    sets.insert(name, (i, files));
                }
                Some((_, f)) if *f == files => {}
                Some((first, _)) => conflicts.push(Conflict {
                    input: input.name.clone(),
                    path: format!("state/fixtures/{name}"),
                    reason: format!(
                        "fixture set `{name}` is already composed from {} with different contents",
                        inputs[*first].name
                    ),
                }),
            }
        }
    }
    parent_loops(inputs, &sets, base_loose, conflicts);
    for (name, (_, files)) in &sets {
        for (rel, bytes) in files {
            plan.push(Planned {
                rel: fixtures_rel.join(name).join(rel),
                source: Source::Bytes(bytes.clone()),
            });
        }
    }
    let mut names: Vec<String> = sets.into_keys().collect();
    if base_loose && !names.iter().any(|n| n == "default") {
        names.push("default".into());
        names.sort();
    }
    Ok(names)
}

/// The composite's fixture sets as `parent` references resolve among them (as `serve` and
/// `check` seed them): a chain that loops (a base set naming an overlay's set as its parent,
/// which names the base's back, or any loop) would leave every session seeded from it without
/// a starting state, and `serve` and `check` refuse such a twin. Each loop is a conflict of the
/// last input that brought one of its sets, naming the loop.
fn parent_loops(
    inputs: &[Input],
    sets: &BTreeMap<String, (usize, Files)>,
    base_loose: bool,
    conflicts: &mut Vec<Conflict>,
) {
    let mut tree = wraith_engine::FixtureTree::default();
    for (name, (_, files)) in sets {
        let fixture_json = files
            .iter()
            .find(|(rel, _)| rel == Path::new("fixture.json"))
            .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned());
        tree.sets.insert(
            name.clone(),
            wraith_engine::FixtureSetFiles {
                fixture_json,
                ..Default::default()
            },
        );
    }
    if base_loose {
        // Only its name matters here: the loose files are the default set, which has no parent.
        tree.loose.insert(String::new(), String::new());
    }
    for found in tree.parent_loops() {
        let from = |set: &String| sets.get(set).map_or(0, |(i, _)| *i);
        let Some(last) = found.iter().max_by_key(|set| from(set)) else {
            continue;
        };
        let input = from(last);
        let chain: Vec<&str> = found
            .iter()
            .chain(found.first())
            .map(String::as_str)
            .collect();
        let origins: Vec<String> = found
            .iter()
            .map(|set| {
                let name = inputs.get(from(set)).map_or("?", |i| i.name.as_str());
                format!("`{set}` from {name}")
            })
            .collect();
        conflicts.push(Conflict {
            input: inputs
                .get(input)
                .map_or_else(String::new, |i| i.name.clone()),
            path: format!("state/fixtures/{last}"),
            reason: format!(
                "the fixture sets' parent chain loops: {} ({}); `serve` and `check` refuse a \
                 twin whose sets loop (no session seeded from them has a starting state): change \
                 one set's \"parent\" in its fixture.json so the chain ends at a set without one",
                chain.join(" → "),
                origins.join(", ")
            ),
        });
    }
}

/// An overlay's `fixture.json` with a bare `parent` that names one of the overlay's own sets
/// rewritten to `<ns>:<parent>` (canonical JSON); `None` when it needs no change.
fn namespace_parent(bytes: &[u8], ns: &str, own_sets: &[String]) -> Option<Vec<u8>> {
    let mut v: Value = serde_json::from_slice(bytes).ok()?;
    let parent = v.get("parent")?.as_str()?;
    if parent.contains(':') || !own_sets.iter().any(|s| s == parent) {
        return None;
    }
    let namespaced = format!("{ns}:{parent}");
    v["parent"] = Value::String(namespaced);
    wraith_model::to_canonical_json(&v)
        .ok()
        .map(String::into_bytes)
}

/// `lua/`: every input's handlers and library modules. `lua/routes.toml` is never composed (the
/// authored-routes contract): an input carrying one gets an `authored-routes-not-composed`
/// warning. A Lua file two inputs carry with different contents is a conflict (no handler
/// shadowing); for other files (the handlers README) the first input's copy is kept.
fn plan_lua(
    inputs: &[Input],
    reports: &mut [InputReport],
    plan: &mut Vec<Planned>,
    conflicts: &mut Vec<Conflict>,
    warnings: &mut Vec<Warning>,
) -> Result<(), CliError> {
    let mut seen: BTreeMap<PathBuf, (usize, Vec<u8>)> = BTreeMap::new();
    // Lua code by its name (the path without `.lua`/`.luau`): serve loads one file per handler
    // or module name, so another input's file of that name in the other dialect would shadow
    // it too.
    let mut code_names: BTreeMap<PathBuf, (usize, PathBuf)> = BTreeMap::new();
    for (i, input) in inputs.iter().enumerate() {
        let lua = input.dir.lua_dir();
        for rel in files_under(&lua)? {
            if rel == Path::new("routes.toml") {
                warnings.push(authored_warning(input, &lua.join(&rel)));
                continue;
            }
            let bytes = read_bytes(&lua.join(&rel))?;
            let out_rel = Path::new("lua").join(&rel);
            if rel.extension().is_some_and(|e| e == "lua" || e == "luau") {
                match code_names.get(&out_rel.with_extension("")) {
                    Some((first, first_rel)) if *first != i && *first_rel != out_rel => {
                        conflicts.push(Conflict {
                            input: input.name.clone(),
                            path: out_rel.display().to_string(),
                            reason: format!(
                                "{} already brings {}, the same Lua handler or module in the \
                                 other dialect (serve loads one file per name); an overlay may \
                                 not shadow a Lua handler or module",
                                inputs[*first].name,
                                first_rel.display()
                            ),
                        });
                        continue;
                    }
                    Some(_) => {}
                    None => {
                        code_names.insert(out_rel.with_extension(""), (i, out_rel.clone()));
                    }
                }
            }
            match seen.get(&out_rel) {
                None => {
                    reports[i].lua_files.push(out_rel.display().to_string());
                    seen.insert(out_rel, (i, bytes));
                }
                Some((_, b)) if *b == bytes => {}
                Some((first, _)) => {
                    let code = rel.extension().is_some_and(|e| e == "lua" || e == "luau");
                    if code {
                        conflicts.push(Conflict {
                            input: input.name.clone(),
                            path: out_rel.display().to_string(),
                            reason: format!(
                                "{} already brings a different {}; an overlay may not shadow a \
                                 Lua handler or module",
                                inputs[*first].name,
                                out_rel.display()
                            ),
                        });
                    }
                }
            }
        }
    }
    for (rel, (_, bytes)) in seen {
        plan.push(Planned {
            rel,
            source: Source::Bytes(bytes),
        });
    }
    Ok(())
}

/// The `authored-routes-not-composed` warning for an input with a `lua/routes.toml`.
fn authored_warning(input: &Input, path: &Path) -> Warning {
    let counts = wraith_twin::read_file_to_string(path)
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .map(|t| {
            let n = |k: &str| t.get(k).and_then(|v| v.as_array()).map_or(0, Vec::len);
            (n("route"), n("binding"))
        });
    let what = match counts {
        Some((routes, 0)) => format!("{routes} authored route(s)"),
        Some((routes, bindings)) => {
            format!("{routes} authored route(s) and {bindings} handler binding(s)")
        }
        None => "authored routes".to_string(),
    };
    Warning {
        code: "authored-routes-not-composed".into(),
        input: input.name.clone(),
        message: format!(
            "{}'s lua/routes.toml ({what}) is not merged into the composite: compose never \
             composes the authored-routes sidecar, so the composite has none of them; re-declare \
             the routes on the composite (`wraith route add <composite> --method M --path P`)",
            input.name
        ),
    }
}

/// Longest target in a staging folder's name: `.<target>.compose-old-<pid>` (a process id has at
/// most 10 digits) must fit the 255-byte limit on a file name that every `--output` name meets.
const MAX_STAGING_TARGET: usize = 255 - ".".len() - ".compose-old-".len() - 10;

/// The `<target>` of the staging folders next to an output named `name`: the name itself, or
/// its first [`MAX_STAGING_TARGET`] bytes (cut at a character boundary) when it is longer.
fn staging_target(name: &str) -> String {
    let mut end = name.len().min(MAX_STAGING_TARGET);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_string()
}

/// Write every planned file into a temporary folder next to `output`, then move it into place
/// (replacing an existing `output` only after the new tree is complete).
///
/// Without `force` an output another process filled meanwhile (a second compose to the same
/// folder) is never replaced: the final rename onto a folder that is not empty fails, and the
/// run says so.
fn materialize(output: &Path, plan: &[Planned], force: bool, flag: &str) -> Result<(), CliError> {
    let parent = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = output
        .file_name()
        .map(|n| staging_target(&n.to_string_lossy()))
        .unwrap_or_else(|| "composite".to_string());
    std::fs::create_dir_all(&parent)
        .map_err(|e| CliError::runtime(anyhow!("cannot create {}: {e}", parent.display())))?;
    // What interrupted composes of this output left (their builder gone) goes first: a
    // staging folder, or the earlier composite a `--force` run moved aside.
    wraith_recording::fsutil::remove_stale_staging_dirs(&parent, Some(&name));
    let pid = std::process::id();
    let tmp = parent.join(format!(".{name}.compose-{pid}"));
    let _ = std::fs::remove_dir_all(&tmp);
    // The composite is built beside --output: a place where no folder can be made is an
    // --output the user must change, not a failure while writing.
    if let Err(e) = std::fs::create_dir_all(tmp.join("reports")) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(CliError::usage(anyhow!(
            "--output {}: cannot create a folder in {} ({e}); choose an --output in a folder \
             you can write",
            output.display(),
            parent.display()
        )));
    }
    let written = (|| -> std::io::Result<()> {
        for p in plan {
            let target = tmp.join(&p.rel);
            if let Some(dir) = target.parent() {
                std::fs::create_dir_all(dir)?;
            }
            match &p.source {
                Source::Copy(from) => {
                    std::fs::copy(from, &target)?;
                }
                Source::Bytes(b) => std::fs::write(&target, b)?,
            }
        }
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(CliError::runtime(anyhow!(
            "cannot write the composite for --output {}: {e}",
            output.display()
        )));
    }
    let old = parent.join(format!(".{name}.compose-old-{pid}"));
    // Without --force only an absent or empty output was accepted: the rename below replaces
    // an empty folder and fails on one that was filled since.
    // `symlink_metadata`: a link to nothing is replaced too (`exists` follows it and says no).
    let replaced = force && output.symlink_metadata().is_ok();
    if replaced && let Err(e) = std::fs::rename(output, &old) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(CliError::runtime(anyhow!(
            "cannot move the existing {} aside: {e}",
            output.display()
        )));
    }
    if let Err(e) = std::fs::rename(&tmp, output) {
        if replaced {
            let _ = std::fs::rename(&old, output);
        }
        let _ = std::fs::remove_dir_all(&tmp);
        let filled = !force && std::fs::read_dir(output).is_ok_and(|mut d| d.next().is_some());
        if filled {
            return Err(CliError::usage(anyhow!(
                "{flag} {} was filled while this compose ran (another compose to the same \
                 folder?); nothing was replaced: pass --force to replace it, or choose another \
                 folder",
                output.display()
            )));
        }
        return Err(CliError::runtime(anyhow!(
            "cannot move the composite into {}: {e}",
            output.display()
        )));
    }
    if replaced {
        let _ = std::fs::remove_dir_all(&old);
    }
    wraith_recording::fsutil::sync_dir(Some(&parent));
    Ok(())
}
