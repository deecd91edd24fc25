//! The twin's behaviour, with no IO: a request goes in, a response comes out.
//!
//! `wraith serve` drives this engine over HTTP and `wraith check --in-memory` drives it directly,
//! so the two cannot disagree. The engine owns the namespace registry (one namespace per
//! `X-Wraith-Session` value), fixtures, dispatch, template rendering and provenance. It reads no
//! wall clock and no OS randomness except through the [`ClockMode::Real`] clock, which the caller
//! opts into; every namespace has its own seeded RNG and clock.
//!
//! Dispatch order of [`Engine::handle`] (the twin response contract wins over this summary):
//! 1. path normalization (`.`/`..` → 400, `//` collapses), `fuzzy` fidelity → 501, namespace
//!    lookup or lazy creation (cap → 503);
//! 2. route match (one matchit trie per method, templates of more than 25 parameters matched
//!    segment by segment after it; HEAD falls back to GET; other-origin routes need their
//!    `Host`); a miss is the structured 501;
//! 3. idempotent replay when `Idempotency-Key` is enabled;
//! 4. exact replay on the per-session time axis (the k-th request for a recorded key gets the
//!    k-th moment of the recorded run the session has been consistent with; a replay claim only
//!    when that moment is provably its own), unless the session changed the entity itself;
//! 5. under `not_found`, the fail-closed known-entity gate; then the first variant whose guard
//!    holds (none → `route-no-match` 404);
//! 6. a bound [`handler`] (Lua) answers instead, provenance `handler`; else the route's state op
//!    against the namespace store, rendering the variant template. Authored routes
//!    (`lua/routes.toml`, installed with [`Engine::install_scripts`]) answer from their handler,
//!    their declared response or a 501;
//! 7. outbound policy ([`outbound`]: self-URL rewrite, header allowlist, scrub rules,
//!    placeholders, PII pass; echoes and mints exempt) and serialization (a replayed JSON
//!    moment none of this rewrites is served as its recorded canonical text, unparsed). The caller adds the `X-Wraith-*`
//!    headers with [`Engine::control_headers`].
//!
//! Not here: sockets, files, the control plane's HTTP routing (that is `wraith-server`), and the
//! simulation layers' sleeping (the engine decides, the server sleeps).

pub mod api;
mod embedded_counterparts;
mod embedded_records;
mod engine;
mod error;
mod fixtures;
pub mod handler;
mod list;
mod list_shape;
mod namespace;
mod origins;
pub mod outbound;
pub mod precompute;
mod raw_moment;
mod render;
mod router;
pub mod sim;
pub mod state_schema;
#[cfg(test)]
#[allow(clippy::expect_used)]
mod test_models;
mod union;
mod util;

pub use api::*;
pub use engine::{ControlHeader, ControlValue, Engine};
pub use error::{ControlError, EngineError};
pub use fixtures::{FixtureRefusal, FixtureRefusalKind, ResolvedFixtureSets, scalar_key};
pub use handler::{
    AuthoredRoute, Handler, HandlerBody, HandlerEnv, HandlerError, HandlerOnError, HandlerRequest,
    HandlerResponse, ScriptReport, Scripts,
};
pub use outbound::{
    FieldOrigin, OutboundError, OutboundPolicy, OutboundRule, PiiAllow, PiiOptions, ReplayClaim,
    RuleAction, RuleTarget,
};
pub use raw_moment::outbound_fingerprint;
/// The self-URL rewrite `serve` applies to JSON bodies (the upstream origin, lowercased by
/// [`origin_of`], swapped for the twin's own where it ends at a URL boundary): what a check
/// over HTTP puts each recording through to compare it with a served answer.
pub use util::{origin_of, reads_body_as_json, rewrite_origin_in, rewrite_origin_json};
