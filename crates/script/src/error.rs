//! Why a twin's `lua/` folder could not be loaded.

use std::path::PathBuf;

/// A load-time failure. Each variant names the file and says how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A handler or library does not compile.
    #[error("{}: does not compile: {message}; fix the Lua source", path.display())]
    Compile { path: PathBuf, message: String },
    /// `lua/routes.toml` is invalid.
    #[error("{}: {message}", path.display())]
    Routes { path: PathBuf, message: String },
    /// A handler file name cannot name a handler.
    #[error("{}: {message}", path.display())]
    Name { path: PathBuf, message: String },
}
