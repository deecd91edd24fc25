//! `wraith-server`: the HTTP front door of a twin.
//!
//! It binds the listeners (dual-stack loopback by default), accepts HTTP/1.1 and h2c on the same
//! port with hyper, intercepts the control plane (`/__wraith/*`: health, ready, info, session
//! provisioning, resets) with its bearer-token rule, turns every other request into an
//! [`wraith_engine::Request`], hands it to the engine together with the `X-Wraith-Session`
//! value, and writes the engine's answer back with the `X-Wraith-*` control headers. It also
//! reads the fixture tree from disk for the engine and shuts down gracefully.
//!
//! Not here: what a twin answers (that is the sans-IO `wraith-engine`), configuration files and
//! command-line flags (the `wraith` binary), and printing: this library reports through
//! `tracing` and return values only.

// Tests may unwrap: a panic there is a test failure with a clear location.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod access_log;
mod body_budget;
pub mod control;
pub mod effects;
pub mod fixtures_fs;
pub mod idle_io;
pub mod json_values;
pub mod listen;
mod port_holder;
pub mod ready;
pub mod service;
pub mod trace;

pub use access_log::{AccessLog, AccessLogFormat, AccessLogSink};
pub use effects::Layers;
pub use listen::{ListenSpec, Listeners, all_loopback};
pub use ready::{TwinInfo, drifted_routes, info_document, ready_document};
pub use service::{SESSION_HEADER, ServeOutcome, ServeSettings, serve};
pub use trace::{TraceEntry, TraceRing};

use std::net::SocketAddr;

/// What can go wrong while setting up or running the server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// `--listen` could not be understood.
    #[error("invalid --listen value `{value}`: {reason}")]
    BadListen { value: String, reason: String },
    /// The primary address could not be bound. `holder` names the process listening on that
    /// port when the system says (Linux: `/proc`), else asks.
    #[error(
        "cannot listen on {addr}: {source} ({}pick another port with --port or --listen)",
        holder.as_deref().map_or_else(|| "is another process using the port? ".to_string(), |h| format!("held by {h}; "))
    )]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
        holder: Option<String>,
    },
}
