//! Conformance you can trust: replay every recorded session through the twin, diff every
//! response field by field, score in basis points, and say exactly where and why the twin
//! diverged.
//!
//! - [`run::replay`] drives the replay: each recorded session in order, in a fresh namespace,
//!   through a [`run::Twin`] (in process: [`run::InMemoryTwin`], the same `Engine` `serve`
//!   uses; over HTTP: implemented by the binary, since this crate does no IO).
//!   [`run::prepare`] parses every distinct recorded body once ahead of it (setup, like reading the
//!   recordings); [`run::replay_prepared`] replays with those, and [`run::replay_parallel`]
//!   replays the sessions on several threads (one twin each) into the very same report. Each
//!   session is [`run::replay_session`] folded in session order by [`run::fold_session`]. Ids
//!   flow like a real client's:
//!   [`idmap::IdMap`] maps the recorded ids of a session to the ones the twin answered and
//!   rewrites them in the session's later requests.
//! - [`symbols::check`] holds each answer to the ids the twin answered earlier in the session
//!   (`symbol_mismatch`), and [`judge::judge_in_session`] compares each answer with the
//!   recording renamed into the session's names ([`idmap::IdMap::rename_recorded`]): the
//!   judgements that read across exchanges.
//! - [`judge::judge`] judges one answer; [`diff`] compares bodies under the field classes the
//!   model's holes give (generated, timestamp, enum, echoed, constant).
//! - [`authored`] is the authored-output gate: a Lua handler's answers compared with the shape
//!   of the recordings (`authored_deviation`), and the `[[deviations]]` that mark intended ones.
//! - [`report`] holds the report schema (`docs/report-format.md`) and the scoring.
//! - [`causes::annotate`] says why each failing exchange failed (`unrecorded_route`,
//!   `recordings_disagree`, `unrecorded_input`, `after_earlier_divergence`, `twin`) and
//!   computes the ceiling: a bound on the score a deterministic twin could reach on the
//!   recordings. Every driver calls it once the replay is folded ([`run::finish_report`]).
//! - [`freshness`] is the `[freshness]` SLA: the twin's age against `max_age`/`warn_age`, with
//!   *now* handed in (a check never reads the wall clock).
//! - [`drift_types`] types every divergence as a kind of API change (`drift_type`) and applies
//!   the owner's `drift.toml` (accepted and reclassified drift) after scoring.
//! - [`html::render`] draws the self-contained HTML report.
//! - [`coverage::coverage`] and [`lint::lint`] back `wraith coverage` and `wraith lint`;
//!   [`provenance::static_provenance`] backs `wraith inspect --provenance`.
//!
//! Not here: reading files or sockets (the binary hands everything in), synthesizing models,
//! serving. A refusal (route miss, fail-closed `miss`, leaked placeholder) is never a pass, and
//! nothing here knows any particular API.

pub mod authored;
pub mod causes;
pub mod coverage;
pub mod diff;
pub mod drift_types;
pub mod freshness;
pub mod html;
pub mod idmap;
pub mod judge;
pub mod lint;
pub mod lua_literals;
pub mod provenance;
pub mod report;
pub mod rules;
pub mod run;
pub mod spec_coverage;
pub mod symbols;
pub mod union;

#[cfg(test)]
mod test_support;

pub use diff::{Category, Divergence};
pub use judge::{
    DiffCache, DiffOptions, ExpectedBody, Observed, OutboundHook, ReplayClaim, judge,
    judge_prepared, judge_with_cache, parse_provenance, parse_replay_header,
};
pub use report::{Report, Thresholds};
pub use run::{
    AuthoredRoute, CheckRun, InMemoryTwin, Prepared, SessionOutcome, SessionStep, Twin,
    TwinCallError, default_jobs, fold_session, holdout_split, modelled_method, prepare,
    prepare_parallel, replay, replay_parallel, replay_prepared, replay_session, request_of,
};
