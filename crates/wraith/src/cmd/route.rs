//! `wraith route add|list <twin>`: the authored-routes sidecar `lua/routes.toml`, and loading a
//! twin's Lua handlers and authored routes into the engine at serve time.
//!
//! Authored routes are served at runtime only: nothing here writes into `model/`, and
//! `wraith synth` never touches the sidecar, so a declaration survives every re-synth.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;

use anyhow::anyhow;
use serde::Serialize;
use wraith_engine::{AuthoredRoute, Engine, HandlerOnError, Scripts, handler};
use wraith_script::{ScriptError, routes};
use wraith_twin::{TwinConfig, TwinDir};

use crate::exit::{CliError, CmdResult};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: RouteCommand,
}

#[derive(clap::Subcommand)]
pub enum RouteCommand {
    /// Declare a route no recording covers (appended to lua/routes.toml; comments and layout of
    /// the file are kept).
    #[command(after_help = "\
Examples:
  wraith route add shop --method GET --path '/customers/:id/summary'
  wraith route add shop --method POST --path /exports --status 202 --response '{\"status\":\"queued\"}'

A route with a Lua handler (lua/handlers/; --handler names one explicitly, else bound by file
name) answers from it; else from --status/--response (provenance template); else 501
\"authored route has no implementation\". A recorded route with the same method and path wins
over the declaration (known once the model is built: run `wraith synth` first). To bind a
handler to any route, recorded ones included, add a [[binding]] { method, path, handler } to
lua/routes.toml.")]
    Add(AddArgs),
    /// List the twin's authored routes (the authoritative answer to which routes are authored)
    /// and the explicit handler bindings of lua/routes.toml. Which ones a recorded route wins
    /// over is known from the model; without one, it says so.
    List(ListArgs),
}

#[derive(clap::Args)]
pub struct AddArgs {
    /// Twin name under ./twins/ or path to a twin folder.
    pub twin: String,
    /// HTTP method (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS).
    #[arg(long)]
    pub method: String,
    /// Route template, parameters spelled `:name` (e.g. `/v3/assets/:id`).
    #[arg(long)]
    pub path: String,
    /// Status of the declared answer (200–599).
    #[arg(long)]
    pub status: Option<i64>,
    /// Declared JSON response body.
    #[arg(long, value_name = "JSON")]
    pub response: Option<String>,
    /// Explicit handler: a file stem in lua/handlers/ (wins over the file-name convention).
    #[arg(long, value_name = "STEM")]
    pub handler: Option<String>,
    /// Print the result as JSON.
    #[arg(long, default_value_if("format", "json", "true"))]
    pub json: bool,
    /// Output format: `text` or `pretty` (the same human-readable output, the default), or
    /// `json` (as `--json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<super::Format>,
}

#[derive(clap::Args)]
pub struct ListArgs {
    /// Twin name under ./twins/ or path to a twin folder.
    pub twin: String,
    /// Print the routes as JSON.
    #[arg(long, default_value_if("format", "json", "true"))]
    pub json: bool,
    /// Output format: `text` or `pretty` (the same human-readable output, the default), or
    /// `json` (as `--json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<super::Format>,
}

pub fn run(args: Args) -> CmdResult {
    match args.command {
        RouteCommand::Add(a) => add(a),
        RouteCommand::List(a) => list(a),
    }
}

const NEW_FILE_HEADER: &str = "\
# Authored routes: routes no recording covers, served at runtime only (never written into the
# model, kept across every `wraith synth`). A Lua handler in lua/handlers/ answers a route (named
# by `handler`, else by file name); else `status`/`response` (a JSON string); else 501.
# [[binding]] { method, path, handler } binds a handler to any route, recorded ones included.
schema_version = 1
";

/// `lua/routes.toml`'s text (`None` when there is none): a file that is not UTF-8, or a
/// folder or fifo in its place, is one to fix (exit 1), a failed read exit 4.
fn read_routes_file(path: &Path) -> Result<Option<String>, CliError> {
    routes::read_routes_text(path).map_err(|e| match &e {
        ScriptError::Routes { .. } => CliError::usage(anyhow!("{e}")),
        ScriptError::Io { source, .. } => CliError::io(source.kind(), anyhow!("{e}")),
        _ => CliError::runtime(anyhow!("{e}")),
    })
}

/// An exclusive lock on the twin's `lua/routes.toml` edits, held until dropped: a sidecar
/// `lua/.routes.toml.lock` (the file itself is replaced on every write, so it cannot carry the
/// lock). Creates `lua/` when missing.
fn lock_routes_file(twin: &TwinDir) -> Result<std::fs::File, CliError> {
    let lua = twin.lua_dir();
    super::create_folder(&lua)?;
    super::exclusive_lock(&lua.join(".routes.toml.lock"))
}

/// Replace `lua/routes.toml` (whose text was `old`) with `new` as the file was kept: its line
/// endings and byte order mark, its permissions, and, for a symbolic link, the file it names
/// (the link stays). A read-only file is refused: someone meant it not to change.
fn write_keeping_form(path: &Path, old: &str, new: &str) -> Result<(), CliError> {
    let meta = std::fs::metadata(path).ok();
    if meta.as_ref().is_some_and(|m| m.permissions().readonly()) {
        return Err(CliError::usage(anyhow!(
            "{} is read-only; make it writable to add a route",
            path.display()
        )));
    }
    let target = wraith_twin::write_target(path).map_err(|e| {
        CliError::runtime(anyhow!("cannot follow the link {}: {e}", path.display()))
    })?;
    let mut text = new.replace("\r\n", "\n");
    if old.contains("\r\n") {
        text = text.replace('\n', "\r\n");
    }
    if old.starts_with('\u{feff}') && !text.starts_with('\u{feff}') {
        text.insert(0, '\u{feff}');
    }
    wraith_twin::write_atomic(&target, text.as_bytes())
        .map_err(|e| CliError::runtime(anyhow!("cannot write {}: {e}", target.display())))?;
    if let Some(m) = meta {
        std::fs::set_permissions(&target, m.permissions()).map_err(|e| {
            CliError::runtime(anyhow!(
                "cannot keep the permissions of {}: {e}",
                target.display()
            ))
        })?;
    }
    Ok(())
}

fn add(a: AddArgs) -> CmdResult {
    let twin = TwinDir::resolve(&a.twin).map_err(CliError::usage)?;
    let method = routes::validate_method(&a.method)
        .map_err(|e| CliError::usage(anyhow!("--method: {e}")))?;
    routes::validate_path(&a.path).map_err(|e| CliError::usage(anyhow!("--path: {e}")))?;
    let status = a
        .status
        .map(routes::validate_status)
        .transpose()
        .map_err(|e| CliError::usage(anyhow!("--status: {e}")))?;
    let response = a
        .response
        .as_deref()
        .map(routes::validate_response)
        .transpose()
        .map_err(|e| CliError::usage(anyhow!("--response: {e}")))?;
    routes::validate_status_response(status, response.is_some())
        .map_err(|e| CliError::usage(anyhow!("--status {}: {e}", status.unwrap_or_default())))?;
    if let Some(h) = &a.handler {
        routes::validate_handler(h).map_err(|e| CliError::usage(anyhow!("--handler: {e}")))?;
    }

    let path = twin.lua_dir().join("routes.toml");
    // Read, edit and replace under a lock: two `route add`s at once would each replace the file
    // with their own edit of the same original, and one route would be lost.
    let _lock = lock_routes_file(&twin)?;
    let text = read_routes_file(&path)?.unwrap_or_else(|| NEW_FILE_HEADER.to_string());
    let existing = routes::parse_routes(&text)
        .map_err(|e| CliError::usage(anyhow!("{}: {e}; fix the file first", path.display())))?;
    if let Some(prev) = existing
        .iter()
        .find(|r| r.method == method && routes::same_template(&r.path, &a.path))
    {
        return Err(CliError::usage(anyhow!(
            "{method} {} is already declared in {} (as {}); edit or remove that entry instead",
            a.path,
            path.display(),
            prev.name()
        )));
    }

    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| CliError::usage(anyhow!("{}: not valid TOML: {e}", path.display())))?;
    if !doc.contains_key("schema_version") {
        doc["schema_version"] = toml_edit::value(routes::ROUTES_SCHEMA_VERSION);
    }
    let mut table = toml_edit::Table::new();
    table["method"] = toml_edit::value(method.clone());
    table["path"] = toml_edit::value(a.path.clone());
    if let Some(s) = status {
        table["status"] = toml_edit::value(i64::from(s));
    }
    if let Some(r) = &a.response {
        table["response"] = toml_edit::value(r.trim().to_string());
    }
    if let Some(h) = &a.handler {
        table["handler"] = toml_edit::value(h.clone());
    }
    match doc.get_mut("route") {
        None => {
            let mut arr = toml_edit::ArrayOfTables::new();
            arr.push(table);
            doc.insert("route", toml_edit::Item::ArrayOfTables(arr));
        }
        Some(item) => match item.as_array_of_tables_mut() {
            Some(arr) => arr.push(table),
            None => {
                return Err(CliError::usage(anyhow!(
                    "{}: `route` is not an array of tables; write each route as `[[route]]`",
                    path.display()
                )));
            }
        },
    }
    let new_text = doc.to_string();
    // What we write must read back as what we meant.
    routes::parse_routes(&new_text).map_err(|e| {
        CliError::runtime(anyhow!("internal: the updated file does not parse: {e}"))
    })?;
    write_keeping_form(&path, &text, &new_text)?;

    let route = AuthoredRoute {
        method,
        path: a.path.clone(),
        status,
        response,
        handler: a.handler.clone(),
    };
    let model = load_model_quietly(&twin);
    let shadowed = model
        .as_ref()
        .map(|m| !handler::shadowed_authored(m, std::slice::from_ref(&route)).is_empty())
        .unwrap_or(false);
    if model.is_none() {
        eprintln!("note: {}", no_model_note(&a.twin));
    }
    if shadowed {
        eprintln!(
            "warning: the model already has a recorded {}; it wins and this declaration stays inert",
            route.name()
        );
    }
    if let Some(h) = &a.handler
        && !handler_stems(&twin.lua_dir().join("handlers")).contains(h)
    {
        eprintln!(
            "warning: there is no lua/handlers/{h}.lua (or .luau) yet; serve refuses to start \
             until it exists"
        );
    }
    let explicit = a.handler.clone().map(|h| (h, true));
    if a.json {
        crate::output::print_json(&serde_json::json!({
            "added": entry(&route, explicit, shadowed),
            "file": "lua/routes.toml",
            "routes": existing.len() + 1,
        }));
    } else {
        outln!("added {} to lua/routes.toml", route.name());
    }
    Ok(ExitCode::SUCCESS)
}

/// One authored route in `route list --json`.
#[derive(Debug, Serialize)]
struct Entry {
    method: String,
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<serde_json::Value>,
    /// The handler file name that binds it, when one does.
    handler: Option<String>,
    /// How the handler is bound: `explicit` (lua/routes.toml) or `file-name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    binding: Option<&'static str>,
    /// What answers it: `handler`, `response` or `unimplemented` (501); `shadowed` when a
    /// recorded route of the same method and path wins.
    answers: &'static str,
}

/// `handler` is the bound handler and whether the binding is explicit.
fn entry(r: &AuthoredRoute, handler: Option<(String, bool)>, shadowed: bool) -> Entry {
    let answers = if shadowed {
        "shadowed"
    } else if handler.is_some() {
        "handler"
    } else if r.declares_response() {
        "response"
    } else {
        "unimplemented"
    };
    let binding = handler
        .as_ref()
        .map(|(_, explicit)| if *explicit { "explicit" } else { "file-name" });
    Entry {
        method: r.method.clone(),
        path: r.path.clone(),
        status: r.status,
        response: r.response.clone(),
        handler: handler.map(|(h, _)| h),
        binding,
        answers,
    }
}

/// One `[[binding]]` in `route list --json`.
#[derive(Debug, Serialize)]
struct BindingEntry {
    method: String,
    path: String,
    handler: String,
    /// `[[binding]] #N`.
    entry: String,
    /// The bound route is `recorded`, `authored`, or `unknown` (serve refuses to start).
    route: &'static str,
    /// Whether `lua/handlers/<handler>.lua|.luau` exists (serve refuses to start when not).
    handler_exists: bool,
}

fn list(a: ListArgs) -> CmdResult {
    let twin = TwinDir::resolve(&a.twin).map_err(CliError::usage)?;
    let path = twin.lua_dir().join("routes.toml");
    let file = match read_routes_file(&path)? {
        Some(t) => routes::parse_routes_file(&t)
            .map_err(|e| CliError::usage(anyhow!("{}: {e}", path.display())))?,
        None => routes::RoutesFile::default(),
    };
    let authored = &file.routes;
    let handler_names = handler_stems(&twin.lua_dir().join("handlers"));
    let names: Vec<&str> = handler_names.iter().map(String::as_str).collect();
    let shapes: Vec<_> = authored
        .iter()
        .map(|r| (r.method.clone(), r.path.clone(), None))
        .collect();
    let explicit = handler::explicit_bindings(authored, &file.bindings);
    let bound = handler::bind_with_explicit(&names, &shapes, &explicit);
    let model = load_model_quietly(&twin);
    let shadowed = model
        .as_ref()
        .map(|m| handler::shadowed_authored(m, authored))
        .unwrap_or_default();
    let entries: Vec<Entry> = authored
        .iter()
        .zip(bound)
        .map(|(r, h)| {
            // A route's own `handler` is listed even before its file exists.
            let h = h
                .map(|(n, e)| (n.to_string(), e))
                .or_else(|| r.handler.clone().map(|n| (n, true)));
            entry(r, h, shadowed.contains(&r.name()))
        })
        .collect();
    let bindings: Vec<BindingEntry> = file
        .bindings
        .iter()
        .map(|b| {
            let recorded = model
                .as_ref()
                .is_some_and(|m| m.routes.iter().any(|r| b.targets(&r.method, &r.path)));
            let route = if recorded {
                "recorded"
            } else if authored.iter().any(|r| b.targets(&r.method, &r.path)) {
                "authored"
            } else {
                "unknown"
            };
            BindingEntry {
                method: b.method.clone(),
                path: b.path.clone(),
                handler: b.handler.clone(),
                entry: b.entry.clone(),
                route,
                handler_exists: handler_names.contains(&b.handler),
            }
        })
        .collect();
    // Without a model, whether a recorded route wins over a declaration is not known.
    let unknown = model.is_none() && !entries.is_empty();
    if unknown {
        eprintln!("note: {}", no_model_note(&a.twin));
    }
    if a.json {
        crate::output::print_json(&serde_json::json!({
            "twin": twin.name(),
            "file": "lua/routes.toml",
            "model_built": model.is_some(),
            "routes": entries,
            "bindings": bindings,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    for b in &bindings {
        let mut problems: Vec<String> = Vec::new();
        if !b.handler_exists {
            problems.push(format!("no lua/handlers/{}.lua", b.handler));
        }
        if b.route == "unknown" {
            problems.push("no such route".to_string());
        }
        let note = if problems.is_empty() {
            format!("{} route", b.route)
        } else {
            format!("INVALID: {}", problems.join(", "))
        };
        outln!(
            "{:<7} {:<40} handler {} (explicit, {note})",
            b.method,
            b.path,
            b.handler
        );
    }
    if entries.is_empty() && bindings.is_empty() {
        outln!(
            "no authored routes (add one with `wraith route add {} --method M --path P`)",
            a.twin
        );
        return Ok(ExitCode::SUCCESS);
    }
    for e in &entries {
        let detail = match (e.answers, &e.handler, e.status) {
            ("handler", Some(h), _) if e.binding == Some("explicit") => {
                format!("handler {h} (explicit)")
            }
            ("handler", Some(h), _) => format!("handler {h}"),
            ("response", _, s) => format!("response {}", s.unwrap_or(200)),
            ("shadowed", _, _) => "shadowed by the recorded route".to_string(),
            _ => "501 no implementation".to_string(),
        };
        let detail = if unknown {
            format!("{detail} (unless a recorded route wins: no model yet)")
        } else {
            detail
        };
        outln!("{:<7} {:<40} {detail}", e.method, e.path);
    }
    Ok(ExitCode::SUCCESS)
}

/// Stems of `lua/handlers/*.lua|*.luau`, sorted (names only; nothing is compiled).
fn handler_stems(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("lua" | "luau")))
                // A folder named like a handler is no handler (the loader refuses it).
                .filter(|p| p.is_file())
                .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

/// What `route add` and `route list` say when there is no model to tell shadowed declarations
/// apart by: a recorded route of the same method and path wins, but which ones are recorded is
/// not known yet.
fn no_model_note(twin: &str) -> String {
    format!(
        "no model yet (model/twin.wir.json), so which of these routes a recorded route of the \
         same method and path wins over is not known: run `wraith synth {twin}` to see which \
         recorded routes win"
    )
}

/// The model, when there is a readable one (only to tell shadowed declarations apart).
fn load_model_quietly(twin: &TwinDir) -> Option<wraith_model::Model> {
    let text = wraith_twin::read_file_to_string(&twin.model_dir().join("twin.wir.json")).ok()?;
    // The loader that refuses a model nested too deep to walk, as every command's does.
    wraith_model::model_from_json_str(&text).ok()
}

/// Load `lua/` (handlers, libraries, `routes.toml`) and install it into `engine`; the
/// `handler file → route` lines serve prints at startup. A handler that does not compile or an
/// invalid `routes.toml` refuses to serve (exit 1).
pub fn install_scripts(
    twin: &TwinDir,
    cfg: &TwinConfig,
    engine: &mut Engine,
) -> Result<Vec<String>, CliError> {
    let lua = &cfg.serve.lua;
    let opts = wraith_script::ScriptOptions {
        max_memory_bytes: usize::try_from(lua.max_memory_kb.saturating_mul(1024))
            .unwrap_or(usize::MAX),
        ..wraith_script::ScriptOptions::default()
    };
    let loaded = wraith_script::load_lua_dir(&twin.lua_dir(), opts).map_err(|e| match &e {
        // A file that is there but cannot be read is a runtime failure (4), a folder or fifo
        // where it belongs the user's to fix (1), as for every twin file.
        wraith_script::ScriptError::Io { source, .. } => CliError::io(source.kind(), e),
        _ => CliError::usage(e),
    })?;
    let files = loaded.files.clone();
    let report = engine
        .install_scripts(Scripts {
            handlers: loaded.handlers,
            authored: loaded.authored,
            bindings: loaded.bindings,
            on_error: match lua.on_error {
                wraith_twin::LuaOnError::Fail => HandlerOnError::Fail,
                wraith_twin::LuaOnError::Fallback => HandlerOnError::Fallback,
            },
        })
        .map_err(|e| CliError::usage(anyhow!("{e}")))?;
    let mut lines: Vec<String> = loaded
        .warnings
        .iter()
        .map(|w| format!("  warning: {w}"))
        .collect();
    for b in &report.bindings {
        let file = files
            .get(&b.handler)
            .cloned()
            .unwrap_or_else(|| b.handler.clone());
        let how = match (b.authored, b.explicit) {
            (true, true) => " (authored, explicit)",
            (true, false) => " (authored)",
            (false, true) => " (explicit)",
            (false, false) => "",
        };
        lines.push(format!("  handler {file} → {}{how}", b.route));
    }
    for r in &report.authored {
        if !report.bindings.iter().any(|b| &b.route == r) {
            lines.push(format!("  authored route {r} (no handler)"));
        }
    }
    Ok(lines)
}

/// `wraith lint` findings about `lua/routes.toml`: an invalid file (error, rule `routes_toml`),
/// explicit bindings naming a missing handler file or no route (error, `handler-binding`), and
/// declarations a recorded route of the same method and path shadows (warning,
/// `authored-route-shadowed`).
pub fn lint_findings(twin: &TwinDir) -> Vec<wraith_check::lint::Finding> {
    use wraith_check::lint::Finding;
    const FILE: &str = "lua/routes.toml";
    let text = match routes::read_routes_text(&twin.lua_dir().join("routes.toml")) {
        Ok(Some(t)) => t,
        Ok(None) => return Vec::new(),
        Err(ScriptError::Routes { message, .. }) => {
            return vec![Finding::error("routes_toml", Some(FILE), message)];
        }
        Err(e) => {
            return vec![Finding::error(
                "routes_toml",
                Some(FILE),
                format!("cannot read: {e}"),
            )];
        }
    };
    let file = match routes::parse_routes_file(&text) {
        Ok(a) => a,
        Err(e) => return vec![Finding::error("routes_toml", Some(FILE), e)],
    };
    let authored = &file.routes;
    let Some(model) = load_model_quietly(twin) else {
        return Vec::new();
    };
    let stems = handler_stems(&twin.lua_dir().join("handlers"));
    let names: Vec<&str> = stems.iter().map(String::as_str).collect();
    let explicit = handler::explicit_bindings(authored, &file.bindings);
    let mut findings: Vec<Finding> =
        handler::validate_explicit(&model, authored, &explicit, &names)
            .into_iter()
            .map(|e| Finding::error("handler-binding", Some(FILE), e.to_string()))
            .collect();
    findings.extend(
        handler::shadowed_authored(&model, authored)
            .into_iter()
            .map(|name| {
                Finding::warning(
                    "authored-route-shadowed",
                    Some(FILE),
                    format!(
                        "{name} is also a recorded route, which wins: the declaration is inert; \
                     remove it from lua/routes.toml"
                    ),
                )
            }),
    );
    findings
}

/// `METHOD /path` of the model's routes a handler in `lua/handlers/` binds, explicitly
/// (`lua/routes.toml`) or by file name (for `wraith inspect --provenance`; nothing is
/// compiled; an unreadable `routes.toml` counts as no explicit bindings).
pub fn handler_route_names(twin: &TwinDir, model: &wraith_model::Model) -> Vec<String> {
    let stems = handler_stems(&twin.lua_dir().join("handlers"));
    let names: Vec<&str> = stems.iter().map(String::as_str).collect();
    let shapes: Vec<_> = model
        .routes
        .iter()
        .map(|r| (r.method.clone(), r.path.clone(), r.state_op))
        .collect();
    let explicit = routes::read_routes_text(&twin.lua_dir().join("routes.toml"))
        .ok()
        .flatten()
        .and_then(|t| routes::parse_routes_file(&t).ok())
        .map(|f| handler::explicit_bindings(&f.routes, &f.bindings))
        .unwrap_or_default();
    handler::bind_with_explicit(&names, &shapes, &explicit)
        .into_iter()
        .zip(&model.routes)
        .filter(|(b, _)| b.is_some())
        .map(|(_, r)| format!("{} {}", r.method, r.path))
        .collect()
}

/// `wraith lint` findings about the Lua handlers and `[[deviations]]`:
/// - every handler and library file compiles (error `lua-compile` per file; info
///   `lua_handlers_valid` with the count when all do);
/// - every authored route of `lua/routes.toml` is answered: its bound handler compiles (error
///   `authored-route-handler`), or it declares a response (else warning
///   `authored-route-unimplemented`: it answers 501);
/// - a handler bound to a recorded route is listed (info `handler-overrides-recorded-route`):
///   it answers that route's requests whose exact URL was not recorded, and `wraith check`
///   judges its output against the recordings;
/// - a string literal of a handler or library that differs from a model field only in letter
///   case (warning `lua-field-case`, naming the line);
/// - a second file of one handler name (`x.lua` and `x.luau`: warning `handler-duplicate`,
///   the loader keeps the first) and, given a model, a handler no route binds (warning
///   `handler-unbound`: it never runs), as serve warns of both;
/// - malformed `[[deviations]]` entries (error `deviations`, one per problem) and declarations
///   on a route no handler answers and no fixture set's records reach (warning
///   `deviation-unbound-route`).
///
/// Binding problems of `lua/routes.toml` itself are [`lint_findings`]'.
///
/// `checked` is [`wraith_script::check_lua_dir`] of the twin's `lua/` (the caller has read it
/// already, to stop on a file that cannot be read).
pub fn lua_lint_findings(
    twin: &TwinDir,
    cfg: Option<&TwinConfig>,
    checked: &wraith_script::LuaDirCheck,
) -> Vec<wraith_check::lint::Finding> {
    use wraith_check::authored::{parse_deviations, same_route};
    use wraith_check::lint::Finding;
    let mut out = Vec::new();
    let lua_dir = twin.lua_dir();
    let mut broken: Vec<String> = Vec::new();
    for e in &checked.errors {
        let file = match e {
            wraith_script::ScriptError::Compile { path, .. }
            | wraith_script::ScriptError::Name { path, .. }
            | wraith_script::ScriptError::Io { path, .. }
            | wraith_script::ScriptError::Routes { path, .. } => {
                let rel = path.strip_prefix(twin.root()).unwrap_or(path);
                rel.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            }
        };
        if let wraith_script::ScriptError::Compile { path, .. } = e
            && let Some(stem) = path.file_stem()
            && path.parent().is_some_and(|p| p == lua_dir.join("handlers"))
        {
            broken.push(stem.to_string_lossy().into_owned());
        }
        out.push(Finding::error("lua-compile", Some(&file), e.to_string()));
    }
    if checked.errors.is_empty() && !checked.handlers.is_empty() {
        out.push(Finding::info(
            "lua_handlers_valid",
            Some("lua/handlers"),
            format!(
                "{} Lua handler(s) compiled successfully",
                checked.handlers.len()
            ),
        ));
    }

    let file = routes::read_routes_text(&lua_dir.join("routes.toml"))
        .ok()
        .flatten()
        .and_then(|t| routes::parse_routes_file(&t).ok())
        .unwrap_or_default();
    let stems = handler_stems(&lua_dir.join("handlers"));
    let names: Vec<&str> = stems.iter().map(String::as_str).collect();
    let explicit = handler::explicit_bindings(&file.routes, &file.bindings);
    let model = load_model_quietly(twin);
    // String literals spelling a model field in another letter case.
    if let Some(model) = &model {
        let files: Vec<(String, String)> = checked
            .handlers
            .iter()
            .chain(&checked.libraries)
            .filter_map(|rel| {
                wraith_twin::read_file_to_string(&twin.root().join(rel))
                    .ok()
                    .map(|text| (rel.clone(), text))
            })
            .collect();
        out.extend(wraith_check::lua_literals::literal_case_findings(
            &files, model,
        ));
    }
    // Two files of one stem (`x.lua`, `x.luau`): the loader keeps the first, serve warns.
    let mut first_of: BTreeMap<String, &String> = BTreeMap::new();
    for f in &checked.handlers {
        let stem = Path::new(f.as_str())
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match first_of.get(&stem) {
            Some(prev) => out.push(Finding::warning(
                "handler-duplicate",
                Some(f),
                format!(
                    "handler `{stem}` is already loaded from {prev}; this file is ignored: \
                     rename or remove one of them"
                ),
            )),
            None => {
                first_of.insert(stem, f);
            }
        }
    }
    // Handlers some route binds (recorded or authored): any other answers nothing.
    let mut bound: BTreeSet<String> = BTreeSet::new();
    // Routes a handler answers, as `METHOD /path`.
    let mut handled: Vec<String> = Vec::new();
    // Every route, recorded then authored, with what binds it: to say why a handler binds none.
    let mut all_shapes = Vec::new();
    let mut all_bound = Vec::new();
    if let Some(model) = &model {
        let shapes: Vec<_> = model
            .routes
            .iter()
            .map(|r| (r.method.clone(), r.path.clone(), r.state_op))
            .collect();
        let bindings = handler::bind_with_explicit(&names, &shapes, &explicit);
        all_shapes.extend(shapes);
        all_bound.extend(bindings.iter().copied());
        for (b, r) in bindings.into_iter().zip(&model.routes) {
            let Some((h, _)) = b else { continue };
            bound.insert(h.to_string());
            let route = format!("{} {}", r.method, r.path);
            let file = checked
                .handlers
                .iter()
                .find(|f| {
                    Path::new(f.as_str())
                        .file_stem()
                        .is_some_and(|s| s.to_string_lossy() == h)
                })
                .cloned()
                .unwrap_or_else(|| format!("lua/handlers/{h}.lua"));
            out.push(Finding::info(
                "handler-overrides-recorded-route",
                Some(&file),
                format!(
                    "answers the recorded route {route} (requests whose exact URL was recorded \
                     are still replayed verbatim); `wraith check` judges its output against the \
                     recordings"
                ),
            ));
            handled.push(route);
        }
    }
    let shadowed = model
        .as_ref()
        .map(|m| handler::shadowed_authored(m, &file.routes))
        .unwrap_or_default();
    let shapes: Vec<_> = file
        .routes
        .iter()
        .map(|r| (r.method.clone(), r.path.clone(), None))
        .collect();
    let bindings = handler::bind_with_explicit(&names, &shapes, &explicit);
    all_shapes.extend(shapes);
    all_bound.extend(bindings.iter().copied());
    for (r, b) in file.routes.iter().zip(bindings) {
        if let Some((h, _)) = b {
            bound.insert(h.to_string());
        }
        let name = r.name();
        if shadowed.contains(&name) {
            continue;
        }
        match b {
            Some((h, _)) if broken.iter().any(|x| x == h) => out.push(Finding::error(
                "authored-route-handler",
                Some("lua/routes.toml"),
                format!("{name} is answered by lua/handlers/{h}, which does not compile"),
            )),
            Some(_) => handled.push(name),
            None if r.declares_response() => {}
            // A binding that names a handler file that is not there is already an error of its
            // own (serve refuses to start); a second finding about the same route would only
            // disagree with it.
            None if explicit
                .iter()
                .any(|e| e.method.eq_ignore_ascii_case(&r.method) && e.path == r.path) => {}
            None => out.push(Finding::warning(
                "authored-route-unimplemented",
                Some("lua/routes.toml"),
                format!(
                    "{name} has no handler and no declared response: it answers 501; add \
                     lua/handlers/<name>.lua or a `response`"
                ),
            )),
        }
    }

    // Which routes a name binds needs the model; without one, nothing is said.
    if model.is_some() {
        for (stem, file) in &first_of {
            if !bound.contains(stem) && !broken.contains(stem) {
                out.push(Finding::warning(
                    "handler-unbound",
                    Some(file),
                    handler::unbound_warning(stem, &all_shapes, &all_bound),
                ));
            }
        }
    }

    let Some(cfg) = cfg else { return out };
    let inputs = crate::cmd::check::deviation_inputs(cfg);
    let (declared, errors) = parse_deviations(&inputs);
    out.extend(
        errors
            .into_iter()
            .map(|e| Finding::error("deviations", Some("wraith.toml"), e.to_string())),
    );
    // Which routes a handler or a fixture set answers needs the model; without one (or with
    // one that does not load, an error of its own), nothing is said.
    let Some(m) = model.as_ref() else {
        return out;
    };
    // Routes of entity types a fixture set seeds at least one record of, as a session is
    // seeded from it (parents inherited, patches applied): their answers can show fixture
    // records. A set that does not resolve (an error lint names of its own) counts every type
    // it names.
    let seeded: std::collections::BTreeSet<String> =
        match wraith_server::fixtures_fs::read_fixture_tree(&twin.fixtures_dir()) {
            Ok(tree) => {
                let schema = super::check::read_schema_json(&twin.schema_json(), &mut Vec::new())
                    .ok()
                    .flatten();
                let types = m
                    .entity_types
                    .iter()
                    .map(|(name, t)| (name.clone(), t.primary_key.clone()));
                match tree.resolve(types, schema.as_deref()) {
                    Ok(sets) => sets
                        .values()
                        .flatten()
                        .filter(|(_, records)| !records.is_empty())
                        .map(|(ty, _)| ty.clone())
                        .collect(),
                    Err(_) => tree.seeded_types(),
                }
            }
            Err(_) => Default::default(),
        };
    let fixture_routes: Vec<String> = m
        .routes
        .iter()
        .filter(|r| r.entity_type.as_ref().is_some_and(|t| seeded.contains(t)))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    for d in &declared {
        let bound = handled
            .iter()
            .chain(&fixture_routes)
            .any(|h| same_route(&d.route, h));
        if !bound {
            out.push(Finding::warning(
                "deviation-unbound-route",
                Some("wraith.toml"),
                format!(
                    "[[deviations]] on {} ({}): no Lua handler answers that route and no \
                     fixture set seeds its records, so nothing can deviate there; fix the route \
                     or remove the entry",
                    d.route, d.path
                ),
            ));
        }
    }
    out
}
