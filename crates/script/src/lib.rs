//! Lua handlers for Wraith twins: `lua/handlers/*.lua|*.luau` run in a sandboxed Luau VM
//! (mlua, vendored Luau) behind the engine's [`wraith_engine::Handler`] trait, plus the parser of
//! the authored-routes sidecar `lua/routes.toml`.
//!
//! What a handler sees is documented in [`runtime`]: `req`, `emit`, `state`, `clock` and
//! `wraith.*` globals; `math.random`, `os.time` and `os.clock` read the session's seeded RNG and
//! clock through the engine, so a handler is as deterministic as the template path. Each
//! invocation gets a fresh sandboxed VM with a CPU-time budget, a memory limit and an
//! instruction budget ([`ScriptOptions`]).
//!
//! Not here: binding handlers to routes and dispatch (the engine's `handler` module), reading
//! `wraith.toml` (the `wraith-twin` crate), HTTP (the server).

mod convert;
mod cpu_budget;
mod error;
mod load;
mod os_time;
pub mod routes;
pub mod runtime;

pub use error::ScriptError;
pub use load::{LoadedScripts, LuaDirCheck, check_lua_dir, load_lua_dir};
pub use runtime::{LuaHandler, ScriptOptions};
