//! `wraith lint <twin>`: workspace integrity. `wraith.toml`, `scrub.toml` and (when present)
//! `drift.toml` parse, the model
//! files are canonical and well-formed with unique route and variant ids,
//! `state/schema.json` and every fixture set hold together, and every recording session has
//! the exchange files its manifest counts and the id of its folder. Each file is read as the
//! commands that use it read it: what `serve`, `check` or `coverage` refuse is an error, what
//! they warn of a warning. Exit 1 on any error; warnings are listed; 4 when a file of the twin
//! is there but cannot be read.

use std::process::ExitCode;

use serde::Serialize;
use wraith_check::lint::{Finding, LintInput, Severity, has_errors, lint};
use wraith_recording::terminal::shown;
use wraith_twin::{TwinConfig, TwinDir};

use crate::exit::{CliError, CmdResult};

/// `recordings/sessions` where every command that reads recordings lists it: a file there is
/// an error finding (what `synth` and `check` would refuse), a folder that cannot be listed
/// is exit 4, as for any file of the twin that cannot be read.
fn sessions_folder_finding(dir: &std::path::Path) -> Result<Option<Finding>, CliError> {
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CliError::runtime(anyhow::anyhow!(
            "cannot read {}: {e}",
            dir.display()
        ))),
        Ok(meta) if !meta.is_dir() => Ok(Some(Finding::error(
            "recordings-folder",
            Some("recordings/sessions"),
            "is a file where the folder of recording sessions belongs: move it away (`wraith \
             import` and `wraith record` make the folder)",
        ))),
        Ok(_) => std::fs::read_dir(dir)
            .map(|_| None)
            .map_err(|e| CliError::runtime(anyhow::anyhow!("cannot list {}: {e}", dir.display()))),
    }
}

/// The model, symbols and schema files must be UTF-8 text: `serve`, `check`, `inspect` and
/// `coverage` refuse them otherwise, while the lint reads them with replacement characters.
fn not_utf8_findings(twin: &TwinDir) -> Result<Vec<Finding>, CliError> {
    let mut out = Vec::new();
    for (rel, path) in [
        (
            "model/twin.wir.json",
            twin.model_dir().join("twin.wir.json"),
        ),
        ("model/symbols.json", twin.model_dir().join("symbols.json")),
        ("state/schema.json", twin.schema_json()),
    ] {
        let bytes = match wraith_twin::read_file(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            // The read below says so with exit 4.
            Err(_) => continue,
        };
        if let Err(e) = std::str::from_utf8(&bytes) {
            out.push(Finding::error(
                "not-utf8",
                Some(rel),
                format!(
                    "not UTF-8 text (first bad byte at offset {}): {}",
                    e.valid_up_to(),
                    if rel.starts_with("model/") {
                        "re-run `wraith synth` to write it again"
                    } else {
                        "save it as UTF-8"
                    }
                ),
            ));
        }
    }
    Ok(out)
}

/// `[service] spec`, the OpenAPI document `wraith coverage` reads (relative to the twin):
/// what coverage refuses of it (a file not there, or not a JSON or YAML document) is a
/// warning, as `serve` and `check` never read it. A file there but unreadable is left to
/// `coverage` to say.
fn spec_finding(twin: &TwinDir, spec: Option<&str>) -> Option<Finding> {
    let spec = spec.filter(|s| !s.trim().is_empty())?;
    let bad = |why: String| {
        Some(Finding::warning(
            "wraith_toml",
            Some("wraith.toml"),
            format!(
                "[service] spec = {}: {why}; `wraith coverage` refuses the twin until the key \
                 names an OpenAPI document (JSON or YAML, relative to the twin folder) or is \
                 removed",
                serde_json::Value::String(spec.to_string())
            ),
        ))
    };
    let bytes = match wraith_twin::read_file(&twin.root().join(spec)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return bad(format!("the file `{spec}` is not there"));
        }
        Err(_) => return None,
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return bad(format!("`{spec}` is not UTF-8 text"));
    };
    match super::coverage::parse_spec(&text) {
        Ok(_) => None,
        Err(e) => bad(format!("`{spec}`: {e}")),
    }
}

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  wraith lint shop
  wraith lint shop --json | jq '.findings[] | select(.severity == \"error\")'

Exit codes: 0 no errors (warnings may be listed) · 1 at least one error, or the twin not found ·
4 a file of the twin is there but could not be read (a recording, scrub.toml, wraith.toml,
fixtures, model or schema).")]
pub struct Args {
    /// Twin name under ./twins/ or path to a twin folder.
    pub twin: String,
    /// Print the findings as JSON.
    #[arg(long, default_value_if("format", "json", "true"))]
    pub json: bool,
    /// Output format: `text` or `pretty` (the same human-readable output, the default), or
    /// `json` (as `--json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<super::Format>,
}

#[derive(Serialize)]
struct Output<'a> {
    twin: String,
    errors: usize,
    warnings: usize,
    info: usize,
    findings: &'a [Finding],
}

/// `drift.toml` read and compiled: the entries that hold, and every problem as (lint rule id,
/// `drift.toml:<line>: <entry>: \`<key>\`: <what and how to fix>`).
pub(crate) struct DriftLoad {
    pub rules: wraith_check::drift_types::DriftRules,
    pub problems: Vec<(&'static str, String)>,
}

/// Read `<twin>/drift.toml` (absent: no rules, no problems) as `wraith check` applies it and
/// `wraith lint` reports it.
pub(crate) fn drift_rules(twin: &TwinDir) -> DriftLoad {
    use wraith_check::drift_types::DriftRules;
    let Some(cfg) = wraith_twin::DriftConfig::load(twin) else {
        return DriftLoad {
            rules: DriftRules::default(),
            problems: Vec::new(),
        };
    };
    let mut problems: Vec<(&'static str, String)> = cfg
        .problems
        .iter()
        .map(|p| {
            let key = if p.key.is_empty() {
                String::new()
            } else {
                format!(": `{}`", p.key)
            };
            // Line 0: the file as a whole (it cannot be read), named once.
            if p.line == 0 {
                return (
                    p.rule,
                    format!("{}: {}", wraith_twin::drift::DRIFT_TOML, p.message),
                );
            }
            (
                p.rule,
                format!(
                    "{}:{}: {}{key}: {}",
                    wraith_twin::drift::DRIFT_TOML,
                    p.line,
                    p.entry,
                    p.message
                ),
            )
        })
        .collect();
    let (rules, errors) = DriftRules::compile(&cfg.suppress, &cfg.reclassify);
    problems.extend(errors.iter().map(|e| (e.rule, e.to_string())));
    // File order: a reader fixes them top to bottom.
    problems.sort_by_key(|(_, m)| {
        m.split(':')
            .nth(1)
            .and_then(|l| l.parse::<usize>().ok())
            .unwrap_or(0)
    });
    DriftLoad { rules, problems }
}

/// `[diff.overrides]` entries and `[[diff.suppress]]` routes that match no route of the model
/// (as `wraith check` judges them: an override an error, a suppress route a warning). Nothing
/// when the config, its rules or the model cannot be read (their own findings say so).
fn rules_without_routes(twin: &TwinDir, model: Option<&str>) -> Vec<Finding> {
    let mut out = Vec::new();
    let Ok(cfg) = TwinConfig::load(twin) else {
        return out;
    };
    let Ok(rules) = wraith_check::rules::DiffRules::compile(&super::check::rules_input(&cfg))
    else {
        return out;
    };
    if rules.overrides.is_empty() && rules.suppress.is_empty() {
        return out;
    }
    let Some(Ok(model)) = model.map(wraith_model::model_from_json_str) else {
        return out;
    };
    let (overrides, suppress) = rules.unmatched_routes(&model);
    for pat in overrides {
        out.push(Finding::error(
            "diff-route-unmatched",
            Some("wraith.toml"),
            format!(
                "[diff.overrides.{}] matches no route of the model, so its gate does not apply",
                serde_json::Value::String(pat.to_string())
            ),
        ));
    }
    for (n, pat) in suppress {
        out.push(Finding::warning(
            "diff-route-unmatched",
            Some("wraith.toml"),
            format!(
                "[[diff.suppress]] entry {n}: route `{pat}` matches no route of the model, so \
                 the entry removes nothing"
            ),
        ));
    }
    out
}

pub fn run(args: Args) -> CmdResult {
    let twin = TwinDir::resolve(&args.twin).map_err(CliError::usage)?;
    let mut findings = Vec::new();
    match TwinConfig::load(&twin) {
        Ok(cfg) => {
            // The finding names the file; the message keeps the line, as the `[diff]` findings
            // do (`line 3: …`), never the path the twin was named by.
            for w in &cfg.warnings {
                let at = if w.line > 0 {
                    format!("line {}: ", w.line)
                } else {
                    String::new()
                };
                findings.push(Finding::warning(
                    "wraith_toml",
                    Some("wraith.toml"),
                    format!("{at}`{}`: {}", w.key, w.message),
                ));
            }
            // `[diff]` entries: every bad one, under its own rule id (`diff-suppress-reason`,
            // `diff-field-class`, `diff-field-enum-values`, `diff-route`, `diff-path`, ...).
            if let Err(errors) =
                wraith_check::rules::DiffRules::compile(&super::check::rules_input(&cfg))
            {
                for e in errors {
                    findings.push(Finding::error(
                        e.rule,
                        Some("wraith.toml"),
                        format!("line {}: {e}", e.line),
                    ));
                }
            }
            // `[serve.rate_limits]` and `[serve.latency]`: what serve refuses before it binds,
            // in its words, without the path the twin was named by.
            let file = twin.wraith_toml();
            let limits = super::serve::sim_flags::ConfigLimits {
                file: &file,
                table: &cfg.serve.rate_limits,
                latency: &cfg.serve.latency,
            };
            let prefix = format!("{}: ", file.display());
            for e in super::serve::sim_flags::config_refusals(limits) {
                let message = crate::exit::chain(e.error.as_ref());
                let message = message
                    .strip_prefix(&prefix)
                    .map_or(message.clone(), str::to_string);
                findings.push(Finding::error("wraith_toml", Some("wraith.toml"), message));
            }
            findings.extend(spec_finding(&twin, cfg.service.spec.as_deref()));
            if let Some(why) = super::serve::unbuilt_session_mode(&cfg) {
                findings.push(Finding::error(
                    "serve-session-mode",
                    Some("wraith.toml"),
                    why,
                ));
            }
            // `[freshness]`: durations and the drift fraction, as `wraith check` reads them.
            if let Err(errors) =
                wraith_check::freshness::FreshnessGate::parse(&super::check::freshness_input(&cfg))
            {
                for e in errors {
                    findings.push(Finding::error(
                        "freshness",
                        Some("wraith.toml"),
                        e.to_string(),
                    ));
                }
            }
        }
        // There but unreadable: exit 4, as for every file of the twin that cannot be read.
        Err(wraith_twin::TwinError::Io { path, source })
            if source.kind() != std::io::ErrorKind::NotFound =>
        {
            return Err(CliError::io(
                source.kind(),
                anyhow::anyhow!("cannot read {}: {source}", path.display()),
            ));
        }
        Err(e) => findings.push(Finding::error(
            "wraith_toml",
            Some("wraith.toml"),
            e.to_string(),
        )),
    }
    // `drift.toml`: every bad entry under its own rule (`drift-toml`, `drift-matcher`,
    // `drift-reason`, `drift-type`, `drift-route`, `drift-path`, `drift-id`). `wraith
    // check` only warns about these (the entry is not applied); lint fails on them.
    for (rule, message) in drift_rules(&twin).problems {
        // The finding names the file; the message keeps the line (`line 3: …`).
        let message = match message.strip_prefix("drift.toml:") {
            Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => format!("line {rest}"),
            Some(rest) => rest.trim_start().to_string(),
            None => message,
        };
        findings.push(Finding::error(rule, Some("drift.toml"), message));
    }
    let scrub = twin.scrub_toml();
    if scrub.exists() {
        if let Err(e) = wraith_recording::ScrubPolicy::load(&scrub) {
            // There but unreadable: exit 4, as for every file of the twin that cannot be read
            // (a folder where the file belongs stays a finding, as `serve` says so with 1).
            let message = e.to_string();
            let refused = CliError::scrub(e);
            if refused.code == crate::exit::Code::Runtime {
                return Err(refused);
            }
            findings.push(Finding::error("scrub_toml", Some("scrub.toml"), message));
        } else {
            // The `[pii]` section, as `serve` and `check` read it: what they refuse is an
            // error here, what they warn of a warning.
            let mut warnings = Vec::new();
            let prefix = format!("{}: ", scrub.display());
            let unprefixed = |m: String| m.strip_prefix(&prefix).map_or(m.clone(), str::to_string);
            if let Err(e) = super::serve::pii_section(&scrub, &mut warnings) {
                let message = unprefixed(crate::exit::chain(e.error.as_ref()));
                findings.push(Finding::error("scrub_toml", Some("scrub.toml"), message));
            }
            for w in warnings {
                findings.push(Finding::warning(
                    "scrub_toml",
                    Some("scrub.toml"),
                    unprefixed(w),
                ));
            }
        }
    } else {
        findings.push(Finding::error(
            "scrub_toml",
            Some("scrub.toml"),
            "missing: every twin needs a scrub policy (`wraith init` writes one)",
        ));
    }
    // Recording sessions that do not hold together (listings and manifests), and exchange
    // files that do not decode.
    let sessions_dir = twin.sessions_dir();
    findings.extend(sessions_folder_finding(&sessions_dir)?);
    findings.extend(not_utf8_findings(&twin)?);
    for p in wraith_recording::check_sessions(&sessions_dir)
        .into_iter()
        .chain(wraith_recording::check_exchange_files(&sessions_dir))
    {
        let rule = match p {
            wraith_recording::SessionProblem::MissingExchanges { .. } => {
                "recording-missing-exchange"
            }
            wraith_recording::SessionProblem::IdMismatch { .. } => "recording-session-id",
            wraith_recording::SessionProblem::BadManifest { .. } => "recording-manifest",
            wraith_recording::SessionProblem::BadExchange { .. } => "recording-exchange",
            wraith_recording::SessionProblem::UnreadableFolder { .. } => "recording-folder",
            wraith_recording::SessionProblem::CountBelowFiles { .. } => "recording-manifest-count",
            wraith_recording::SessionProblem::EndBeforeStart { .. } => "recording-manifest-times",
        };
        let file = format!("recordings/sessions/{}", p.folder());
        // A recording file there but unreadable: exit 4, as the commands that read the
        // recordings do (a folder where the file belongs stays a finding: they exit 1).
        if let wraith_recording::SessionProblem::BadExchange {
            io_kind: Some(kind),
            ..
        }
        | wraith_recording::SessionProblem::BadManifest {
            io_kind: Some(kind),
            ..
        } = &p
        {
            let unreadable = CliError::io(*kind, anyhow::anyhow!("{file}: {p}"));
            if unreadable.code == crate::exit::Code::Runtime {
                return Err(unreadable);
            }
        }
        findings.push(Finding::error(rule, Some(&file), p.to_string()));
    }
    findings.extend(incomplete_sessions(&sessions_dir));
    findings.extend(stray_session_entries(&sessions_dir));
    findings.extend(hidden_fixture_sets(&twin.fixtures_dir()));
    let input = LintInput {
        model: super::check::read_optional(&twin.model_dir().join("twin.wir.json"))?,
        symbols: super::check::read_optional(&twin.model_dir().join("symbols.json"))?,
        schema: super::check::read_optional(&twin.schema_json())?,
        fixtures: super::check::read_fixtures(&twin.fixtures_dir())?,
        tagged_union_policy: TwinConfig::load(&twin)
            .map(|cfg| super::check::union_input(&cfg))
            .unwrap_or_default(),
        request_keying_routes: TwinConfig::load(&twin)
            .map(|cfg| {
                let entries = cfg.generate.request_keying.route;
                entries.into_iter().map(|e| e.route).collect()
            })
            .unwrap_or_default(),
        // A wraith.toml that does not load has its own finding; the sets are then held to
        // the default limit, as nothing could serve the twin under another.
        max_entities_per_type: Some(
            TwinConfig::load(&twin)
                .map(|cfg| cfg.serve.limits)
                .unwrap_or_default()
                .max_entities_per_type,
        ),
    };
    findings.extend(lint(&input));
    findings.extend(rules_without_routes(&twin, input.model.as_deref()));
    // A Lua file there but unreadable (`lua/routes.toml`, a handler or a library): exit 4, as
    // for every file of the twin that cannot be read (and as `serve` refuses to start on it).
    let lua_dir = twin.lua_dir();
    let routes_read = wraith_script::routes::read_routes_text(&lua_dir.join("routes.toml")).err();
    let lua_checked = wraith_script::check_lua_dir(&lua_dir);
    for e in routes_read.iter().chain(&lua_checked.errors) {
        if let wraith_script::ScriptError::Io { path, source } = e
            && source.kind() != std::io::ErrorKind::NotFound
        {
            let refused = CliError::io(
                source.kind(),
                anyhow::anyhow!("cannot read {}: {source}", path.display()),
            );
            if refused.code == crate::exit::Code::Runtime {
                return Err(refused);
            }
        }
    }
    findings.extend(super::route::lint_findings(&twin));
    // The config again (cheap): the Lua and `[[deviations]]` findings read it.
    let cfg = TwinConfig::load(&twin).ok();
    findings.extend(super::route::lua_lint_findings(
        &twin,
        cfg.as_ref(),
        &lua_checked,
    ));
    // Within a file and rule, in file order: `line 9` before `line 10`.
    findings.sort_by(|a, b| {
        (
            a.severity,
            &a.file,
            &a.rule,
            line_of(&a.message),
            &a.message,
        )
            .cmp(&(
                b.severity,
                &b.file,
                &b.rule,
                line_of(&b.message),
                &b.message,
            ))
    });
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    let info = findings.len() - errors - warnings;
    if args.json {
        crate::output::print_json(&Output {
            twin: twin.name(),
            errors,
            warnings,
            info,
            findings: &findings,
        });
    } else {
        for f in &findings {
            let sev = match f.severity {
                Severity::Error => "error  ",
                Severity::Warning => "warning",
                Severity::Info => "info   ",
            };
            // A finding quotes what the twin's files hold (a recorded route, a key): shown with
            // its control characters escaped, as every printout of recorded text is.
            let file = f
                .file
                .as_deref()
                .map(|p| format!("{}: ", shown(p)))
                .unwrap_or_default();
            outln!("{sev} {:<24} {file}{}", f.rule, shown(&f.message));
        }
        outln!(
            "lint  {}  {errors} error(s)  {warnings} warning(s)  {info} info",
            twin.name()
        );
    }
    Ok(if has_errors(&findings) {
        ExitCode::from(crate::exit::Code::Usage as u8)
    } else {
        ExitCode::SUCCESS
    })
}

/// The line a finding's message starts with (`line 12: …`), for sorting; `None` sorts first.
/// A warning for each session whose manifest says it was cut short (`complete: false`: its
/// recorder stopped before finishing it). Its exchanges really happened and are used; the
/// warning says why the session may end mid-conversation.
/// A session folder that holds no exchange (made by hand, or a link back to a folder of
/// sessions): every command leaves it out, as `check` warns.
fn empty_session(name: &str) -> Finding {
    Finding::warning(
        "recording-empty",
        Some(&format!("recordings/sessions/{name}")),
        "the session folder holds no exchange files, so every command leaves it out; remove \
         the folder if it is not a recording"
            .to_string(),
    )
}

fn incomplete_sessions(sessions_dir: &std::path::Path) -> Vec<Finding> {
    let mut out = Vec::new();
    for name in session_entry_names(sessions_dir) {
        let dir = sessions_dir.join(&name);
        // A folder that cannot be listed is reported as `recording-folder` above.
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let exchanges = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".wrec.zst"))
            .count();
        let text = match wraith_twin::read_file(&dir.join("manifest.json")) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                out.push(if exchanges > 0 {
                    // A recorder killed (or out of disk) before it finalized the session
                    // leaves its exchanges without a manifest; readers use them as recorded.
                    Finding::warning(
                        "recording-incomplete",
                        Some(&format!("recordings/sessions/{name}")),
                        format!(
                            "the session has no manifest.json: its recorder stopped without \
                             finalizing it (killed, or its disk filled); its {exchanges} \
                             exchange file(s) are used as recorded, and it may end \
                             mid-conversation; delete the folder to leave it out"
                        ),
                    )
                } else {
                    empty_session(&name)
                });
                continue;
            }
            Err(_) => continue,
        };
        // An unreadable manifest is reported as `recording-manifest` above.
        let Ok(m) = serde_json::from_slice::<wraith_recording::Manifest>(&text) else {
            continue;
        };
        if exchanges == 0 && m.exchange_count == 0 {
            out.push(empty_session(&name));
            continue;
        }
        if !m.complete {
            out.push(Finding::warning(
                "recording-incomplete",
                Some(&format!("recordings/sessions/{name}")),
                format!(
                    "the session was cut short (its recorder stopped before finishing it, or \
                     could not write some of its exchanges: `complete: false`); its {} \
                     exchange(s) are used as recorded, and it may end or skip mid-conversation",
                    m.exchange_count
                ),
            ));
        }
    }
    out
}

/// A warning for each hidden folder of `state/fixtures/` (its name starts with `.`) that holds
/// JSON files: every reader skips hidden names (editors' and VCS folders), so what looks like a
/// fixture set seeds nothing and `--fixture` does not know its name.
fn hidden_fixture_sets(fixtures_dir: &std::path::Path) -> Vec<Finding> {
    let Ok(entries) = std::fs::read_dir(fixtures_dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .filter(|n| {
            std::fs::read_dir(fixtures_dir.join(n)).is_ok_and(|files| {
                files
                    .flatten()
                    .any(|f| f.file_name().to_string_lossy().ends_with(".json"))
            })
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            Finding::warning(
                "fixture-set-hidden",
                Some(&format!("state/fixtures/{name}")),
                format!(
                    "holds JSON files but is no fixture set: a folder whose name starts with `.` \
                     is hidden, and serve, check and --fixture skip it; rename it to `{}`",
                    name.trim_start_matches('.')
                ),
            )
        })
        .collect()
}

/// The names in `recordings/sessions/`, sorted, but hidden ones (writers' temp files).
fn session_entry_names(sessions_dir: &std::path::Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(sessions_dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// A warning for each entry of `recordings/sessions/` that is not a session folder (a file, a
/// fifo, a link to nothing or a link loop): every reader leaves it out, so its traffic would
/// vanish from the model and the score without a word. Hidden names are writers' temp files.
fn stray_session_entries(sessions_dir: &std::path::Path) -> Vec<Finding> {
    session_entry_names(sessions_dir)
        .into_iter()
        .filter_map(|name| {
            let path = sessions_dir.join(&name);
            let what = match std::fs::metadata(&path) {
                Ok(m) if m.is_dir() => return None,
                Ok(m) if m.is_file() => "a file",
                Ok(_) => "a fifo, socket or device",
                Err(_) if path.symlink_metadata().is_ok() => {
                    "a symbolic link to nothing (or a loop of links)"
                }
                Err(_) => return None,
            };
            Some(Finding::warning(
                "recording-not-a-session",
                Some(&format!("recordings/sessions/{name}")),
                format!(
                    "is {what}, not a session folder: synth, check and serve leave it out; \
                     restore the session folder or move it away"
                ),
            ))
        })
        .collect()
}

fn line_of(message: &str) -> Option<usize> {
    let rest = message.strip_prefix("line ")?;
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    rest[..end].parse().ok()
}
