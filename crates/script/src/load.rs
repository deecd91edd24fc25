//! Reading a twin's `lua/` folder: handlers, library modules and the authored routes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wraith_engine::handler::ExplicitBinding;
use wraith_engine::{AuthoredRoute, Handler};

use crate::error::ScriptError;
use crate::routes::parse_routes_file;
use crate::runtime::{Library, LuaHandler, ScriptOptions, compile};

/// Everything under `lua/`, compiled.
#[derive(Clone, Default)]
pub struct LoadedScripts {
    /// Handlers by name (file stem).
    pub handlers: BTreeMap<String, Arc<dyn Handler>>,
    /// The file each handler came from, relative to the twin (`lua/handlers/get_customer.lua`).
    pub files: BTreeMap<String, String>,
    /// `lua/routes.toml`; empty when the file does not exist.
    pub authored: Vec<AuthoredRoute>,
    /// The `[[binding]]` entries of `lua/routes.toml` (explicit handler → route bindings).
    pub bindings: Vec<ExplicitBinding>,
    /// Library modules `wraith.import` can load, by import name.
    pub modules: Vec<String>,
    pub warnings: Vec<String>,
}

/// Load `lua/handlers/*.lua|*.luau` (top level), `lua/lib/**/*.lua|*.luau` and
/// `lua/routes.toml` from `lua_dir`. A missing folder or file is empty, not an error; a file
/// that does not compile is.
pub fn load_lua_dir(lua_dir: &Path, opts: ScriptOptions) -> Result<LoadedScripts, ScriptError> {
    let mut out = LoadedScripts::default();

    let mut libs: BTreeMap<String, Library> = BTreeMap::new();
    let lib_dir = lua_dir.join("lib");
    let mut lib_files = Vec::new();
    collect_sources(&lib_dir, &mut lib_files, true)?;
    for path in lib_files {
        let rel = path
            .strip_prefix(&lib_dir)
            .unwrap_or(&path)
            .with_extension("");
        let name = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        let display = format!("lua/lib/{}", rel_display(&path, &lib_dir));
        let bytecode = compile_file(&path)?;
        if libs.contains_key(&name) {
            out.warnings.push(format!(
                "{display}: a module named `{name}` was already loaded from a file with the other \
                 extension; this one is ignored"
            ));
            continue;
        }
        libs.insert(
            name,
            Library {
                chunk_name: display,
                bytecode,
            },
        );
    }
    out.modules = libs.keys().cloned().collect();
    let libs = Arc::new(libs);

    let handler_dir = lua_dir.join("handlers");
    let mut handler_files = Vec::new();
    collect_sources(&handler_dir, &mut handler_files, false)?;
    for path in handler_files {
        let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
            continue;
        };
        check_stem(&path, &stem)?;
        let display = format!("lua/handlers/{}", rel_display(&path, &handler_dir));
        let bytecode = compile_file(&path)?;
        if let Some(prev) = out.files.get(&stem) {
            out.warnings.push(format!(
                "{display}: handler `{stem}` is already loaded from {prev}; this file is ignored"
            ));
            continue;
        }
        let handler = LuaHandler::new(
            stem.clone(),
            display.clone(),
            bytecode,
            Arc::clone(&libs),
            opts,
        );
        out.handlers.insert(stem.clone(), Arc::new(handler));
        out.files.insert(stem, display);
    }

    let routes_path = lua_dir.join("routes.toml");
    if let Some(text) = crate::routes::read_routes_text(&routes_path)? {
        let file = parse_routes_file(&text).map_err(|message| ScriptError::Routes {
            path: routes_path.clone(),
            message,
        })?;
        out.authored = file.routes;
        out.bindings = file.bindings;
    }
    Ok(out)
}

/// What [`check_lua_dir`] found: every handler and library file, and the ones that failed.
#[derive(Debug, Default)]
pub struct LuaDirCheck {
    /// Handler files (`lua/handlers/…`) that compiled, relative to the twin.
    pub handlers: Vec<String>,
    /// Library files (`lua/lib/…`) that compiled, relative to the twin.
    pub libraries: Vec<String>,
    /// One error per file that could not be read or does not compile, and a handler file
    /// whose name cannot name a handler.
    pub errors: Vec<ScriptError>,
}

/// Compile every file [`load_lua_dir`] would load, without stopping at the first failure
/// (`wraith lint` lists them all). `lua/routes.toml` is not read here.
pub fn check_lua_dir(lua_dir: &Path) -> LuaDirCheck {
    let mut out = LuaDirCheck::default();
    for (sub, recurse) in [("lib", true), ("handlers", false)] {
        let dir = lua_dir.join(sub);
        let mut files = Vec::new();
        if let Err(e) = collect_sources(&dir, &mut files, recurse) {
            out.errors.push(e);
            continue;
        }
        for path in files {
            let display = format!("lua/{sub}/{}", rel_display(&path, &dir));
            if sub == "handlers" {
                let stem = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if let Err(e) = check_stem(&path, &stem) {
                    out.errors.push(e);
                    continue;
                }
            }
            match compile_file(&path) {
                Ok(_) if sub == "handlers" => out.handlers.push(display),
                Ok(_) => out.libraries.push(display),
                Err(e) => out.errors.push(e),
            }
        }
    }
    out
}

/// A handler's file stem must be usable as a handler name.
fn check_stem(path: &Path, stem: &str) -> Result<(), ScriptError> {
    if stem.is_empty() || stem.contains(char::is_whitespace) {
        return Err(ScriptError::Name {
            path: path.to_path_buf(),
            message: "a handler file name must be a route name such as `get_customer.lua`"
                .to_string(),
        });
    }
    Ok(())
}

fn compile_file(path: &Path) -> Result<Vec<u8>, ScriptError> {
    let source = wraith_recording::fsutil::read_file(path).map_err(|source| ScriptError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    compile(&source).map_err(|message| ScriptError::Compile {
        path: path.to_path_buf(),
        message,
    })
}

fn rel_display(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// `.lua`/`.luau` files under `dir`, sorted (`.lua` before `.luau` of the same stem), recursing
/// into subfolders when `recurse`.
fn collect_sources(dir: &Path, out: &mut Vec<PathBuf>, recurse: bool) -> Result<(), ScriptError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(ScriptError::Io {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut paths: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| ScriptError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        paths.push(entry.path());
    }
    paths.sort();
    for path in paths {
        let ext = path.extension().and_then(|e| e.to_str());
        if path.is_dir() {
            if recurse {
                collect_sources(&path, out, true)?;
            } else if matches!(ext, Some("lua" | "luau")) {
                // Named like a handler, so `routes.toml` and `wraith route list` take it for
                // one: skipping it would leave its routes answering 501 without a word.
                return Err(ScriptError::Io {
                    path,
                    source: std::io::Error::new(
                        std::io::ErrorKind::IsADirectory,
                        "is a folder where a handler file belongs; rename it or put the \
                         handler's file there",
                    ),
                });
            }
            continue;
        }
        if matches!(ext, Some("lua" | "luau")) {
            out.push(path);
        }
    }
    Ok(())
}
