//! The twin's behaviour, with no IO: a request goes in, a response comes out.
//!
//! `wraith serve` drives this engine over HTTP and `wraith check --in-memory` drives it directly,
//! so the two cannot disagree. The engine owns the namespace registry (one namespace per
//! `X-Wraith-Session` value), fixtures, dispatch, template rendering and provenance. It reads no
//! wall clock and no OS randomness except through the [`ClockMode::Real`] clock, which the caller
//! opts into; every namespace has its own seeded RNG and clock.
//!
//! Not here: sockets, files, the control plane's HTTP routing (that is `wraith-server`), and the
//! simulation layers' sleeping (the engine decides, the server sleeps).

pub mod api;
mod engine;
mod error;
mod fixtures;
mod list;
mod namespace;
mod render;
mod router;
mod util;

pub use api::*;
pub use engine::Engine;
pub use error::{ControlError, EngineError};
