//! `wraith check <twin>`: replay every recorded session through the twin — in process (the same
//! engine `serve` uses) or against a running twin over HTTP — diff every answer field by field,
//! score it, write `reports/check.json` + `reports/check.html`, and exit 2 below the
//! `[diff]` thresholds.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use percent_encoding::utf8_percent_encode;
use wraith_check::authored::{AuthoredGate, DeviationInput, DeviationPolicy, parse_deviations};
use wraith_check::coverage::coverage;
use wraith_check::report::HoldoutSummary;
use wraith_check::rules::{DiffRules, FieldInput, RulesInput, SuppressInput, ThresholdInput};
use wraith_check::{
    AuthoredRoute, CheckRun, DiffOptions, InMemoryTwin, Observed, OutboundHook, Report, Thresholds,
    Twin, holdout_split, parse_provenance, parse_replay_header, replay,
};
use wraith_engine::{
    ClockConfig, ClockMode, Engine, EngineOptions, Fidelity, IdempotencyOptions, Request,
    UnknownEntity,
};
use wraith_model::Model;
use wraith_recording::RecordedSession;
use wraith_recording::terminal::shown;
use wraith_twin::{TwinConfig, TwinDir};

use crate::exit::{CliError, CmdResult};

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("http").args(["target", "wire"]).multiple(false)))]
#[command(after_help = "\
Examples:
  wraith check shop                              # in memory (the default)
  wraith check shop --json | jq .score_bp
  wraith check shop --holdout 2                  # synthesize from every session but each 2nd, check those
  wraith check shop --jobs 1                     # replay the sessions one at a time
  wraith check shop --target http://127.0.0.1:8081   # a running `wraith serve shop`
  wraith check shop --wire                       # over HTTP against a `wraith serve` it starts
  wraith check shop --show-suppressed            # list what [[diff.suppress]] removed, with reasons
  wraith check shop --fixture checkout           # seed every namespace from state/fixtures/checkout/
  wraith check shop --now \"$(date -u +%FT%TZ)\"   # judge a [freshness] SLA at this time

Exit codes: 0 every gate held · 1 usage or configuration error (a bad [diff] entry included;
nothing to check: no recordings, or none of their exchanges replayed) ·
2 below `[diff] required_score`, `[diff] session_pass_rate` or a dimension threshold
(`[diff.thresholds]`, `[diff.overrides]`), an unmarked authored deviation, or a twin older than
`[freshness] max_age` (twin-stale) or a share of drifted routes above `[freshness] max_drift`
(twin-drift-exceeded; the report is written and printed first) · 3 CI=true without
WRAITH_HMAC_KEY · 4 IO failure or the target did not answer (within --timeout).")]
pub struct Args {
    /// Twin name under ./twins/ or path to a twin folder.
    #[arg(required_unless_present = "twin_flag", conflicts_with = "twin_flag")]
    pub twin: Option<String>,
    /// The twin, as the positional argument (the spelling some guides use: `--twin
    /// twins/shop`).
    #[arg(long = "twin", value_name = "TWIN")]
    pub twin_flag: Option<String>,
    /// Replay through the engine in process (the default).
    #[arg(long, conflicts_with_all = ["target", "wire"])]
    pub in_memory: bool,
    /// Replay against a running twin at this base URL (`http://127.0.0.1:8081`; no
    /// `user:pass@`, the URL is written into the report), one `X-Wraith-Session` per recorded
    /// session.
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Start `wraith serve <twin>` on a free loopback port for this run, replay against it over
    /// HTTP as `--target` does (the whole server: routing, headers, outbound policy), and stop
    /// it afterwards, even when the check itself is killed. The report's `mode` is `wire`.
    #[arg(long, conflicts_with_all = ["holdout", "jobs"])]
    pub wire: bool,
    /// With `--target` or `--wire`: how long to wait for each answer, for its headers and again
    /// for its body, before the run stops with exit 4 (a twin that never answers); with
    /// `--wire` also how long its server may take to start. Whole seconds, 1 to 3600.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, requires = "http",
          value_parser = parse_timeout)]
    pub timeout: u64,
    /// Hold out every K-th recorded session: synthesize a model from the others and check the
    /// held-out sessions against it (in memory). Prints in-sample and held-out scores. Both
    /// halves are judged under the twin's outbound policy (`scrub.toml`), as every check is.
    #[arg(long, value_name = "K", conflicts_with = "target")]
    pub holdout: Option<u32>,
    /// Print the report on stdout: the same bytes as reports/check.json (canonical JSON: keys
    /// sorted, compact, one trailing newline).
    #[arg(long, default_value_if("format", "json", "true"))]
    pub json: bool,
    /// Output format: `text` or `pretty` (the same human-readable output, the default), or
    /// `json` (as `--json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<super::Format>,
    /// Replay this many recorded sessions at once (in memory; default: one per available
    /// core; never more threads than there are sessions). Each session has its own namespace,
    /// so the report is the same for any N; `--jobs 1` replays them one after another. Not
    /// with `--target` or `--wire`, whose runs are always sequential.
    #[arg(long, value_name = "N", conflicts_with = "target", value_parser = parse_jobs)]
    pub jobs: Option<NonZeroUsize>,
    /// List the divergences `[[diff.suppress]]` rules removed, each with its rule's reason
    /// (report field `suppressed`), and the drifts `drift.toml` `[[suppress]]` entries accept
    /// (`drift_suppressed`); without this flag only their counts are reported.
    #[arg(long)]
    pub show_suppressed: bool,
    /// Seed every replay namespace with this fixture set (`state/fixtures/<NAME>/`, or
    /// `<ns>:<NAME>`) instead of the implicit default set. Under `--target` each namespace is
    /// provisioned with it first (`POST /__wraith/session`; a control token is read from
    /// `WRAITH_CONTROL_TOKEN`). With `--holdout`, every replay namespace (training in-sample
    /// and held-out) is seeded from the set; without it `--holdout` seeds none.
    #[arg(long, value_name = "NAME")]
    pub fixture: Option<String>,
    /// The time a `[freshness]` SLA is judged at (RFC 3339, `2026-11-30T05:00:00Z`, or unix
    /// seconds). A check never reads the wall clock: without it the SLA is reported
    /// `unevaluated`. CI: `--now "$(date -u +%FT%TZ)"`.
    #[arg(long, value_name = "TIME", env = "WRAITH_CHECK_NOW")]
    pub now: Option<String>,
}

/// The threads a run of `sessions` sessions uses for `--jobs N`: N, but never more than the
/// sessions (at least 1).
fn capped_jobs(jobs: NonZeroUsize, sessions: usize) -> NonZeroUsize {
    NonZeroUsize::new(jobs.get().min(sessions)).unwrap_or(NonZeroUsize::MIN)
}

/// `--timeout SECONDS`: whole seconds from 1 to 3600.
fn parse_timeout(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if (1..=3600).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{s}` is not a whole number of seconds from 1 to 3600 (e.g. `--timeout 30`)"
        )),
    }
}

/// `--jobs N`: a count of sessions replayed at once, at least 1.
fn parse_jobs(s: &str) -> Result<NonZeroUsize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) => NonZeroUsize::new(n).ok_or_else(|| {
            "must be at least 1 (`--jobs 1` replays the sessions one at a time)".to_string()
        }),
        Err(_) => Err(format!(
            "`{s}` is not a count of sessions: give a whole number of at least 1"
        )),
    }
}

pub fn run(args: Args) -> CmdResult {
    // clap requires exactly one of the two spellings.
    let Some(named) = args.twin.as_deref().or(args.twin_flag.as_deref()) else {
        return Err(CliError::usage(anyhow!(
            "name the twin: `wraith check <twin>`"
        )));
    };
    let twin = TwinDir::resolve(named).map_err(CliError::usage)?;
    let cfg = TwinConfig::load(&twin).map_err(CliError::twin)?;
    for w in &cfg.warnings {
        eprintln!("warning: {w}");
    }
    let mut sessions =
        wraith_recording::read_sessions(&twin.sessions_dir()).map_err(CliError::recording)?;
    // A body an older recorder stored compressed is judged decoded, as synth learned it.
    wraith_recording::decode_sessions(
        &mut sessions,
        wraith_recording::encoding::DEFAULT_MAX_DECODED_BYTES,
    );
    super::synth::warn_session_problems(&twin);
    // A session folder without exchanges (a recording stopped before its first one) has
    // nothing to replay: counted, it would pass vacuously, or be all a held-out half holds.
    sessions.retain(|s| {
        let empty = s.exchanges.is_empty();
        if empty {
            eprintln!(
                "warning: {}: no exchanges, skipped; remove the folder if it is not a recording",
                twin.sessions_dir().join(&s.manifest.session_id).display()
            );
        }
        !empty
    });
    if sessions.is_empty() {
        return Err(CliError::usage(anyhow!(
            "{} has no recordings to check: record (`wraith record`) or import (`wraith import`) traffic first",
            twin.root().display()
        )));
    }
    let thresholds =
        Thresholds::from_fractions(cfg.diff.required_score, cfg.diff.session_pass_rate);
    let authored = authored_routes(&twin)?;
    let gate = authored_gate(&cfg)?;
    let twin_name = twin.name();
    // One thread per session at most: more could only wait (and each costs its stack and
    // its twin), however large the N asked for.
    let jobs = capped_jobs(
        args.jobs.unwrap_or_else(wraith_check::default_jobs),
        sessions.len(),
    );
    let rules = diff_rules(&twin, &cfg)?;
    union_rules(&twin, &cfg)?;
    let freshness = freshness_gate(&twin, &cfg)?;
    let now = args.now.as_deref().map(parse_now).transpose()?;
    let setup = Setup {
        twin_name: &twin_name,
        twin: &twin,
        cfg: &cfg,
        thresholds,
        authored: &authored,
        gate: &gate,
        fixture: args.fixture.as_deref(),
        jobs,
    };

    let (mut report, model_for_coverage) = if let Some(k) = args.holdout {
        if k < 2 {
            return Err(CliError::usage(anyhow!(
                "--holdout {k}: K must be at least 2 (every K-th session is held out)"
            )));
        }
        holdout(&setup, &sessions, k)?
    } else {
        let model = load_model(&twin.model_dir().join("twin.wir.json"))?;
        warn_stale(&model, &sessions);
        let all: Vec<&RecordedSession> = sessions.iter().collect();
        let report = match &args.target {
            None if !args.wire => in_memory(&setup, &model, &all)?,
            target_url => {
                // Dropped at the end of this arm: a `--wire` server stops once the replay is
                // done. Its port changes every run, so its report does not name it.
                let server = match target_url {
                    Some(_) => None,
                    None => Some(WireServer::start(&twin, Duration::from_secs(args.timeout))?),
                };
                let (url, label) = match (&server, target_url) {
                    (Some(s), _) => (s.url.as_str(), ("wire", None)),
                    (None, url) => {
                        let url = url.as_deref().unwrap_or_default();
                        (url, ("target", Some(url)))
                    }
                };
                let replayed = target(
                    &setup,
                    &model,
                    &all,
                    url,
                    Duration::from_secs(args.timeout),
                    label,
                );
                // A replay cut short because a signal stopped the server is no failure of the
                // twin: the signal's own exit is on its way.
                hold_if_stopping();
                replayed?
            }
        };
        (report, model)
    };

    nothing_replayed(&twin, &report, args.holdout.is_some())?;
    report.apply_rules(&rules, args.show_suppressed);
    // `drift.toml` after scoring: types every drift, accepts or reclassifies some, changes no
    // score (docs/conformance.md, "Configuring the diff"). Its problems only warn.
    let drift = super::lint::drift_rules(&twin);
    for (_, p) in &drift.problems {
        // An entry's problem leaves that entry out; a file-level one says so itself.
        let applied = if p.contains("] entry ") {
            "; the entry is not applied"
        } else {
            ""
        };
        eprintln!("warning: {p}{applied}");
    }
    report.apply_drift(
        &wraith_check::drift_types::DriftTyper::new(&model_for_coverage, Some(&rules)),
        &drift.rules,
        drift.problems.into_iter().map(|(_, p)| p).collect(),
        args.show_suppressed,
    );
    report.fixture = args.fixture.clone();
    if let Some(gate) = &freshness {
        let recorded_at = sessions
            .iter()
            .map(|s| s.manifest.end_time_us.max(s.manifest.start_time_us))
            .max()
            .filter(|&us| us > 0)
            .map(|us| (us / 1_000_000) as i64);
        let drift = wraith_check::freshness::DriftTally::of(&model_for_coverage);
        report.apply_freshness(wraith_check::freshness::evaluate(
            gate,
            now,
            recorded_at,
            &drift,
        ));
    }
    // Under --holdout the model is the training half's: a route only held-out sessions
    // recorded is missing from it, so the names are judged on full runs only.
    if args.holdout.is_none() {
        rules_name_routes(&twin, &rules, &model_for_coverage)?;
    }
    let cov = coverage(&twin_name, &model_for_coverage, &sessions);
    let json = write_reports(&twin, &report, &cov)?;
    if args.json {
        // The very bytes of reports/check.json (canonical JSON, trailing newline).
        crate::output::print_text(&json);
    } else {
        print_summary(&twin, &report);
    }
    let stale = report.freshness.as_ref().filter(|f| f.failed()).map(|f| {
        let mut reasons = Vec::new();
        if f.status == "stale" {
            reasons.push(format!(
                "twin-stale: the newest recording is {} old, above [freshness] max_age ({}); record or import fresh traffic and re-run `wraith synth`",
                human_secs(f.twin_age_seconds.unwrap_or(0)),
                human_secs(f.max_age_seconds.unwrap_or(0)),
            ));
        }
        if f.drift_exceeded {
            reasons.push(format!(
                "twin-drift-exceeded: {} of {} routes ({}) drifted between recording runs, above [freshness] max_drift ({}): {}; the newest recordings answer in another shape than earlier ones (see `drift` in model/twin.wir.json): re-record the older sessions' flows or remove the outdated sessions, then re-run `wraith synth`",
                f.drifted_routes.len(),
                f.routes_total,
                f.drift.map_or_else(String::new, |d| format!("{d:.3}")),
                f.max_drift.map_or_else(String::new, |m| m.to_string()),
                f.drifted_routes.join(", "),
            ));
        }
        reasons.join("; ")
    });
    if let Some(f) = &report.freshness {
        if let (Some(now), Some(at)) = (f.now, f.recorded_at)
            && now < at
        {
            eprintln!(
                "warning: --now ({}) is before the newest recording ({}), so the twin is judged 0s \
                 old; give the time the check runs at, e.g. --now \"$(date -u +%FT%TZ)\"",
                utc_text(now),
                utc_text(at)
            );
        }
        match f.status {
            "warn" => eprintln!(
                "warning: twin-warn: the newest recording is {} old, above [freshness] warn_age ({})",
                human_secs(f.twin_age_seconds.unwrap_or(0)),
                human_secs(f.warn_age_seconds.unwrap_or(0)),
            ),
            "unevaluated" if f.now.is_none() => eprintln!(
                "warning: [freshness] is set but no time to judge it at: pass --now (or WRAITH_CHECK_NOW); a check never reads the wall clock"
            ),
            "unevaluated" => {
                eprintln!("warning: [freshness] not evaluated: no recording carries a time")
            }
            _ => {}
        }
    }
    let scores_held = report.scores_held;
    let a = &report.authored;
    if a.unmarked > 0 && a.gate_passed {
        eprintln!(
            "warning: {} unmarked authored deviation(s) (a Lua handler or fixture answers unlike the recordings); \
             [handlers] deviation_policy = \"warn\" lets the check pass: see `authored_deviations` in {}",
            a.unmarked,
            twin.reports_dir().join("check.json").display()
        );
    }
    if report.passed {
        Ok(ExitCode::SUCCESS)
    } else if let Some(stale) = stale
        .as_ref()
        .filter(|_| scores_held && a.gate_passed && report.dimensions_failed.is_empty())
    {
        Err(CliError::conformance(anyhow!("{stale}")))
    } else if !report.dimensions_failed.is_empty() && a.gate_passed && scores_held {
        Err(CliError::conformance(anyhow!(
            "conformance below a dimension threshold: {}; see {}",
            dimension_failures(&report),
            twin.reports_dir().join("check.html").display()
        )))
    } else if !a.gate_passed && scores_held {
        Err(CliError::conformance(anyhow!(
            "{} unmarked authored deviation(s): a Lua handler or fixture answers unlike the recordings \
             (see `authored_deviations` in {}); fix the handler or fixture, declare the deviation in a \
             [[deviations]] entry of wraith.toml (route, path, reason), or set [handlers] \
             deviation_policy = \"warn\"",
            a.unmarked,
            twin.reports_dir().join("check.json").display()
        )))
    } else {
        // The report is out first; the error line says which gate failed.
        let authored = if a.gate_passed {
            String::new()
        } else {
            format!(
                "; and {} unmarked authored deviation(s) (see `authored_deviations`)",
                a.unmarked
            )
        };
        let stale = stale.map(|s| format!("; and {s}")).unwrap_or_default();
        Err(CliError::conformance(anyhow!(
            "conformance below threshold: score {}/10000 (required {}), sessions passing {}/{} ({}, required {}); see {}{authored}{stale}",
            report.score_bp,
            report.required_score_bp,
            report.sessions_passed,
            report.sessions_total,
            bp(report.session_pass_rate_bp),
            bp(report.required_session_pass_rate_bp),
            twin.reports_dir().join("check.html").display()
        )))
    }
}

/// Engine options for a check: the twin's `[serve]` settings, with a clock that never reads
/// the wall (determinism) and no self-URL rewrite (in process, the recording's own URLs are the
/// twin's: the rewrite would only be noise).
fn engine_options(
    twin_name: &str,
    cfg: &TwinConfig,
    sessions: usize,
    fixture: Option<&str>,
) -> Result<EngineOptions, CliError> {
    let serve = &cfg.serve;
    let base_epoch = serve.clock.base_epoch;
    let mode = match serve.clock.mode {
        wraith_twin::ClockMode::Fixed => ClockMode::Fixed,
        _ => ClockMode::Deterministic,
    };
    Ok(EngineOptions {
        fidelity: match serve.fidelity {
            wraith_twin::Fidelity::Strict => Fidelity::Strict,
            wraith_twin::Fidelity::Synth => Fidelity::Synth,
            wraith_twin::Fidelity::Fuzzy => Fidelity::Fuzzy,
        },
        unknown_entity: match serve.unknown_entity {
            wraith_twin::UnknownEntity::Synthesize => UnknownEntity::Synthesize,
            wraith_twin::UnknownEntity::NotFound => UnknownEntity::NotFound,
        },
        seed: serve.deterministic_seed,
        clock: ClockConfig { mode, base_epoch },
        wall_clock: Arc::new(move || base_epoch.saturating_mul(1_000_000)),
        // Each recorded session gets its own namespace, freed after it; keep headroom anyway.
        max_namespaces: sessions
            .saturating_add(8)
            .max(usize::try_from(serve.limits.max_namespaces).unwrap_or(usize::MAX)),
        // The state limits are the twin's own: a recorded session that would pass them is
        // refused in the check as `serve` would refuse it.
        max_entities_per_type: usize::try_from(serve.limits.max_entities_per_type)
            .unwrap_or(usize::MAX),
        max_state_bytes: serve.limits.max_total_state_mb.saturating_mul(1024 * 1024),
        max_twin_state_bytes: serve.limits.max_twin_state_mb.saturating_mul(1024 * 1024),
        idempotency: serve.idempotency.enabled.then(|| IdempotencyOptions {
            header: serve.idempotency.header.to_ascii_lowercase(),
            ttl_seconds: serve.idempotency.ttl_seconds,
        }),
        rewrite_self_urls: false,
        provenance_headers: true,
        debug: false,
        twin_name: Some(twin_name.to_string()),
        // `--fixture`; `None` seeds from the implicit default set, as `serve` does.
        fixture: fixture.map(str::to_string),
        freshness: Default::default(),
        principal: None,
    })
}

fn build_engine(
    twin_name: &str,
    twin: Option<&TwinDir>,
    cfg: &TwinConfig,
    model: &Model,
    sessions: usize,
    fixture: Option<&str>,
) -> Result<Engine, CliError> {
    let mut warnings = Vec::new();
    let engine = build_engine_with(
        twin_name,
        twin,
        twin,
        cfg,
        model,
        sessions,
        fixture,
        &mut warnings,
    )?;
    print_warnings(&warnings);
    Ok(engine)
}

/// Print each warning once, in order, as `serve` lists them: a file the check reads but cannot
/// use (an unparsable `scrub.toml` or `state/schema.json`) is named, never silently skipped.
fn print_warnings(warnings: &[String]) {
    let mut seen = std::collections::BTreeSet::new();
    for w in warnings {
        if seen.insert(w.as_str()) {
            eprintln!("warning: {w}");
        }
    }
}

/// [`build_engine`] with the twin folder's state (schema and fixture sets, `state`) and its
/// outbound policy (`scrub.toml` and `[serve] strip_headers`, `policy`) read separately:
/// `--holdout` seeds fixtures only with `--fixture`, but judges both halves under the outbound
/// policy as every other check does. What the engine and the outbound policy could not use is
/// added to `warnings`.
#[allow(clippy::too_many_arguments)]
fn build_engine_with(
    twin_name: &str,
    state: Option<&TwinDir>,
    policy: Option<&TwinDir>,
    cfg: &TwinConfig,
    model: &Model,
    sessions: usize,
    fixture: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<Engine, CliError> {
    let twin = policy;
    let (schema, fixtures) = match state {
        Some(t) => (
            read_schema_json(&t.schema_json(), warnings)?,
            read_fixtures(&t.fixtures_dir())?,
        ),
        None => (None, Default::default()),
    };
    let opts = engine_options(twin_name, cfg, sessions, fixture)?;
    let mut engine =
        Engine::new(model.clone(), schema.as_deref(), fixtures, opts).map_err(|e| match e {
            wraith_engine::EngineError::UnknownFixture { .. } => {
                CliError::usage(anyhow!("--fixture: {e}"))
            }
            e @ wraith_engine::EngineError::Fixture { .. } => CliError::usage(anyhow!(
                "{}: {e}; fix that file (`wraith lint` lists every fixture problem)",
                state.map_or_else(
                    || "state/fixtures".to_string(),
                    |t| t.fixtures_dir().display().to_string()
                )
            )),
            e => CliError::usage(anyhow!("cannot build the twin's engine: {e}")),
        })?;
    warnings.extend(engine.warnings().iter().cloned());
    // The same outbound policy `serve` declares, so recordings are compared in its space.
    if let Some(t) = twin {
        let mut policy_warnings = Vec::new();
        let policy =
            super::serve::outbound_policy(t, cfg.serve.strip_headers, &mut policy_warnings)?;
        warnings.extend(policy_warnings);
        engine
            .set_outbound_policy(policy)
            .map_err(|e| CliError::usage(anyhow!("{}: {e}", t.scrub_toml().display())))?;
    }
    Ok(engine)
}

/// The hook that puts each recording through `engine`'s outbound body policy, in the
/// namespace the exchange is replayed in (`<prefix><session id>`).
fn outbound_hook(engine: Arc<Engine>, prefix: &str) -> OutboundHook {
    let prefix = prefix.to_string();
    OutboundHook(Arc::new(
        move |source: &str, req: &Request, route: &str, body: &mut serde_json::Value| {
            let sid = source.rsplit_once('/').map_or(source, |(s, _)| s);
            let ns = format!("{prefix}{sid}");
            engine.outbound_recorded_body(Some(&ns), req, Some(route), body);
        },
    ))
}

/// What every replay of one `wraith check` run shares, in memory, over HTTP or held out.
struct Setup<'a> {
    twin_name: &'a str,
    twin: &'a TwinDir,
    cfg: &'a TwinConfig,
    thresholds: Thresholds,
    authored: &'a [AuthoredRoute],
    gate: &'a AuthoredGate,
    /// `--fixture`: the set every replay namespace is seeded from.
    fixture: Option<&'a str>,
    jobs: NonZeroUsize,
}

impl<'a> Setup<'a> {
    /// The replay of `sessions` against `model`, judged with `diff`, in namespaces named
    /// `<prefix><recorded session id>`.
    fn run(
        &self,
        model: &'a Model,
        sessions: &'a [&'a RecordedSession],
        diff: DiffOptions,
        prefix: &str,
        (mode, target): (&'a str, Option<&'a str>),
    ) -> CheckRun<'a> {
        CheckRun {
            twin_name: self.twin_name,
            model,
            sessions,
            diff,
            thresholds: self.thresholds,
            namespace_prefix: prefix.to_string(),
            authored: self.authored.to_vec(),
            authored_gate: self.gate.clone(),
            mode,
            target,
        }
    }
}

fn in_memory(
    setup: &Setup<'_>,
    model: &Model,
    sessions: &[&RecordedSession],
) -> Result<Report, CliError> {
    let prefix = "check-";
    let mut engine = build_engine(
        setup.twin_name,
        Some(setup.twin),
        setup.cfg,
        model,
        sessions.len(),
        setup.fixture,
    )?;
    // The twin's Lua handlers, installed exactly as `serve` installs them: a handler that
    // overrides a recorded route answers here what it answers there.
    super::route::install_scripts(setup.twin, setup.cfg, &mut engine)?;
    let engine = Arc::new(engine);
    let mut diff = diff_options(setup.cfg);
    diff.outbound = Some(outbound_hook(Arc::clone(&engine), prefix));
    let run = setup.run(model, sessions, diff, prefix, ("in_memory", None));
    let total: usize = sessions.iter().map(|s| s.exchanges.len()).sum();
    let bar = crate::output::progress(total as u64, "check");
    let report = replay_in_memory(&run, &engine, setup.jobs, &bar)?;
    bar.finish_and_clear();
    Ok(report)
}

/// Replay `run` through `engine` on `jobs` threads (the report does not depend on `jobs`).
fn replay_in_memory(
    run: &CheckRun<'_>,
    engine: &Engine,
    jobs: NonZeroUsize,
    bar: &indicatif::ProgressBar,
) -> Result<Report, CliError> {
    // Every distinct recorded body is parsed once, on the run's threads, before the replay.
    let prepared = wraith_check::prepare_parallel(run.sessions, jobs);
    let make = || InMemoryTwin::new(engine);
    wraith_check::replay_parallel(run, &prepared, jobs, &make, &|| bar.inc(1))
        .map_err(|e| CliError::runtime(anyhow!(e)))
}

fn diff_options(cfg: &TwinConfig) -> DiffOptions {
    DiffOptions {
        ignore_headers: cfg
            .diff
            .ignore_headers
            .iter()
            .map(|h| h.to_ascii_lowercase())
            .collect(),
        outbound: None,
        // Validated in `run` (a bad entry exits 1 there), so this compiles.
        rules: DiffRules::compile(&rules_input(cfg)).ok().map(Arc::new),
        // Validated in `run` too.
        unions: wraith_check::union::UnionRules {
            split_variants: cfg.diff.split_variants,
            ..wraith_check::union::UnionRules::compile(&union_input(cfg)).unwrap_or_default()
        },
    }
}

/// The `[[diff.tagged_union_policy]]` entries as `wraith_check::union` reads them.
pub fn union_input(cfg: &TwinConfig) -> Vec<wraith_check::union::PolicyInput> {
    cfg.diff
        .tagged_union_policy
        .iter()
        .map(|e| wraith_check::union::PolicyInput {
            route: e.route.clone(),
            policy: e.policy.clone(),
        })
        .collect()
}

/// `[[diff.tagged_union_policy]]` validated: a bad entry is a configuration error (exit 1)
/// naming the file and every bad entry.
fn union_rules(twin: &TwinDir, cfg: &TwinConfig) -> Result<(), CliError> {
    wraith_check::union::UnionRules::compile(&union_input(cfg))
        .map(|_| ())
        .map_err(|errors| {
            let file = twin.wraith_toml();
            let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
            CliError::usage(anyhow!("{}: {}", file.display(), lines.join("; ")))
        })
}

/// The `[diff]` entries of `wraith.toml` as `wraith_check::rules` reads them.
pub fn rules_input(cfg: &TwinConfig) -> RulesInput {
    let d = &cfg.diff;
    RulesInput {
        suppress: d
            .suppress
            .iter()
            .map(|s| SuppressInput {
                route: s.route.clone(),
                path: s.path.clone(),
                category: s.category.clone(),
                reason: s.reason.clone(),
                line: s.line,
            })
            .collect(),
        fields: d
            .fields
            .iter()
            .map(|(path, f)| FieldInput {
                path: path.clone(),
                classify: f.classify.clone(),
                values: f.values.clone(),
                line: f.line,
            })
            .collect(),
        thresholds: ThresholdInput {
            body_structure: Some(d.thresholds.body_structure),
            body_values: Some(d.thresholds.body_values),
            symbol_consistency: Some(d.thresholds.symbol_consistency),
            header_conformance: Some(d.thresholds.header_conformance),
        },
        thresholds_line: d.thresholds_line,
        scoring_version: d.scoring_version,
        scoring_version_line: d.scoring_version_line,
        overrides: d
            .overrides
            .iter()
            .map(|(route, o)| {
                (
                    route.clone(),
                    ThresholdInput {
                        body_structure: o.body_structure,
                        body_values: o.body_values,
                        symbol_consistency: o.symbol_consistency,
                        header_conformance: o.header_conformance,
                    },
                    o.line,
                )
            })
            .collect(),
    }
}

/// A `[diff.overrides]` entry matching no route of the model gates nothing (a typo: the
/// route's own gate would silently not apply) and is a configuration error; a
/// `[[diff.suppress]]` route matching none removes nothing and is said.
fn rules_name_routes(twin: &TwinDir, rules: &DiffRules, model: &Model) -> Result<(), CliError> {
    let (overrides, suppress) = rules.unmatched_routes(model);
    for (n, pat) in suppress {
        eprintln!(
            "warning: {}: [[diff.suppress]] entry {n}: route `{pat}` matches no route of the \
             model, so the entry removes nothing; name a route as the report does (`wraith \
             inspect --provenance` lists them)",
            twin.wraith_toml().display()
        );
    }
    if overrides.is_empty() {
        return Ok(());
    }
    Err(CliError::usage(anyhow!(
        "{}: {} matches no route of the model, so its gate would not apply; name a route as the \
         report does, e.g. `{}` (`wraith inspect --provenance` lists them)",
        twin.wraith_toml().display(),
        overrides
            .iter()
            .map(|p| format!(
                "[diff.overrides.{}]",
                serde_json::Value::String((*p).to_string())
            ))
            .collect::<Vec<_>>()
            .join(", "),
        model.routes.first().map_or_else(
            || "GET /path".to_string(),
            |r| format!("{} {}", r.method, r.path)
        )
    )))
}

/// The `[diff]` rules, or a configuration error (exit 1) naming the file, and every bad entry
/// and key with its line.
fn diff_rules(twin: &TwinDir, cfg: &TwinConfig) -> Result<DiffRules, CliError> {
    DiffRules::compile(&rules_input(cfg)).map_err(|errors| {
        let file = twin.wraith_toml();
        let lines: Vec<String> = errors
            .iter()
            .map(|e| format!("{}:{}: {e}", file.display(), e.line))
            .collect();
        CliError::usage(anyhow!(
            "{} has {} invalid [diff] entr{}:\n  {}",
            file.display(),
            errors.len(),
            if errors.len() == 1 { "y" } else { "ies" },
            lines.join("\n  ")
        ))
    })
}

/// `body_values 8000/10000 (required 8500), GET /a: body_structure …` for the error line.
/// `[freshness]` validated; a bad key is a configuration error naming the file and the key.
fn freshness_gate(
    twin: &TwinDir,
    cfg: &TwinConfig,
) -> Result<Option<wraith_check::freshness::FreshnessGate>, CliError> {
    wraith_check::freshness::FreshnessGate::parse(&freshness_input(cfg)).map_err(|errors| {
        let file = twin.wraith_toml();
        let lines: Vec<String> = errors
            .iter()
            .map(|e| format!("{}: {e}", file.display()))
            .collect();
        CliError::usage(anyhow!("{}", lines.join("\n")))
    })
}

/// `[freshness]` as `wraith_check::freshness` reads it.
pub fn freshness_input(cfg: &TwinConfig) -> wraith_check::freshness::FreshnessInput<'_> {
    wraith_check::freshness::FreshnessInput {
        max_age: cfg.freshness.max_age.as_deref(),
        warn_age: cfg.freshness.warn_age.as_deref(),
        max_drift: cfg.freshness.max_drift,
    }
}

/// `--now` (or `WRAITH_CHECK_NOW`): RFC 3339 or unix seconds.
fn parse_now(s: &str) -> Result<i64, CliError> {
    let t = s.trim();
    let out_of_range = || {
        CliError::usage(anyhow!(
            "--now (or WRAITH_CHECK_NOW) {s}: out of range (a time from year -9999 to \
             9999-12-30T22:00:00Z); write RFC 3339 (2026-11-30T05:00:00Z) or unix seconds"
        ))
    };
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        // A number is unix seconds, whatever its size: never read as a date.
        let secs = t.parse::<i64>().map_err(|_| out_of_range())?;
        return jiff::Timestamp::from_second(secs)
            .map(|_| secs)
            .map_err(|_| out_of_range());
    }
    t.parse::<jiff::Timestamp>()
        .map(|ts| ts.as_second())
        .map_err(|e| {
            // A well-formed date past the last instant a timestamp holds: the parser says so
            // in its own terms (an overflow, a parameter range). A month 13 or a 25th hour
            // is a range error too, but of a field, in any year: jiff's words say which.
            let at_the_ends = t.starts_with('-') || t.starts_with("9999-");
            if at_the_ends && e.to_string().contains("range") {
                return out_of_range();
            }
            CliError::usage(anyhow!(
                "--now (or WRAITH_CHECK_NOW) {s}: not a time ({e}); write RFC 3339 \
                 (2026-11-30T05:00:00Z) or unix seconds"
            ))
        })
}

/// Unix seconds as an RFC 3339 UTC time (the seconds themselves when out of range).
fn utc_text(secs: i64) -> String {
    jiff::Timestamp::from_second(secs).map_or_else(|_| secs.to_string(), |t| t.to_string())
}

/// `3d 4h`, `5h 12m`, `40s`: an age for people.
fn human_secs(s: u64) -> String {
    let (d, h, m) = (s / 86_400, s % 86_400 / 3_600, s % 3_600 / 60);
    if d > 0 {
        format!("{d}d {h}h")
    } else if h > 0 {
        format!("{h}h {m}m")
    } else if m > 0 {
        format!("{m}m {}s", s % 60)
    } else {
        format!("{s}s")
    }
}

fn dimension_failures(r: &Report) -> String {
    r.dimensions_failed
        .iter()
        .map(|f| {
            let scope = f
                .route
                .as_deref()
                .map(|x| format!("{x}: "))
                .unwrap_or_default();
            format!(
                "{scope}{} {}/10000 (required {})",
                f.dimension.as_str(),
                f.score_bp,
                f.required_bp
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `--holdout K`: train on all but every K-th session, check both halves against that model.
/// With `fixture` (`--fixture`), every replay namespace of both halves is seeded from that set;
/// without it none is (not even the implicit default set): the run measures what the recordings
/// alone teach.
fn holdout(
    setup: &Setup<'_>,
    sessions: &[RecordedSession],
    k: u32,
) -> Result<(Report, Model), CliError> {
    let Setup {
        twin_name,
        twin,
        cfg,
        fixture,
        jobs,
        ..
    } = *setup;
    let (train, held) = holdout_split(sessions, k);
    if held.is_empty() {
        // Every K-th session is held out: K can be at most the session count, which must
        // leave a session to train on too.
        let hint = if sessions.len() < 2 {
            "holding a session out needs at least 2; record or import more sessions".to_string()
        } else {
            format!("use a K from 2 to {}", sessions.len())
        };
        return Err(CliError::usage(anyhow!(
            "--holdout {k}: the twin has only {} recorded session(s), so no session is held out; {hint}",
            sessions.len()
        )));
    }
    // The outbound policy both halves are judged under, as an in-sample check is: a `scrub.toml`
    // that cannot be used is refused before the training half is synthesized (each half's
    // engine reads it again, and says once what it could not use).
    super::serve::outbound_policy(twin, cfg.serve.strip_headers, &mut Vec::new())?;
    let train_owned: Vec<RecordedSession> = train.iter().map(|s| (*s).clone()).collect();
    let synthesis = wraith_synth::synthesize(
        &train_owned,
        &wraith_synth::SynthOptions {
            twin: cfg.service.name.clone(),
            base_url: cfg.service.base_url.clone(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            tag: None,
            request_keying: super::synth::request_keying(cfg),
            run_gap_us: cfg.generate.run_gap_us(),
        },
    );
    let model = synthesis.model;
    // Fixtures only when asked for (`--fixture`): by default a held-out check measures what the
    // recordings teach.
    let state = fixture.map(|_| twin);
    let run_on = |set: &[&RecordedSession], prefix: &str| -> Result<Report, CliError> {
        let mut warnings = Vec::new();
        let engine = Arc::new(build_engine_with(
            twin_name,
            state,
            Some(twin),
            cfg,
            &model,
            set.len(),
            fixture,
            &mut warnings,
        )?);
        // Both halves build the same engine: say what it could not use once.
        if prefix == "in-sample-" {
            print_warnings(&warnings);
        }
        let mut diff = diff_options(cfg);
        diff.outbound = Some(outbound_hook(Arc::clone(&engine), prefix));
        let run = setup.run(&model, set, diff, prefix, ("in_memory", None));
        let total: usize = set.iter().map(|s| s.exchanges.len()).sum();
        let bar = crate::output::progress(total as u64, prefix.trim_end_matches('-'));
        let r = replay_in_memory(&run, &engine, jobs, &bar)?;
        bar.finish_and_clear();
        Ok(r)
    };
    let in_sample = run_on(&train, "in-sample-")?;
    let mut report = run_on(&held, "held-out-")?;
    // A held-out request history the training sessions also recorded, answered otherwise there,
    // is one no twin built from them can pass both ways: the causes count them.
    wraith_check::causes::annotate_parsed(
        &mut report,
        &model,
        &held,
        &train,
        &diff_options(cfg),
        &|_, _| None,
        jobs.get(),
    );
    report.holdout = Some(HoldoutSummary {
        k,
        training_sessions: train.len() as u64,
        held_out_sessions: held.iter().map(|s| s.manifest.session_id.clone()).collect(),
        in_sample_score_bp: in_sample.score_bp,
        in_sample_exchanges: in_sample.exchanges_total,
        in_sample_session_pass_rate_bp: in_sample.session_pass_rate_bp,
        held_out_score_bp: report.score_bp,
        held_out_exchanges: report.exchanges_total,
        held_out_session_pass_rate_bp: report.session_pass_rate_bp,
    });
    Ok((report, model))
}

/// The `wraith serve` a `--wire` run starts: this same binary on a free loopback port, stopped
/// (and its ready and log files removed) when dropped, or when this process is told to stop
/// (SIGINT, SIGTERM, SIGHUP) while it runs: a stopped check never leaves a server behind.
struct WireServer {
    child: Arc<std::sync::Mutex<std::process::Child>>,
    /// The server's standard input, never written: when this process dies, however it dies,
    /// the pipe closes and the server (`--stop-on-stdin-eof`) stops.
    _stdin: Option<std::process::ChildStdin>,
    url: String,
    files: Vec<PathBuf>,
}

impl WireServer {
    /// Start the server and wait up to `ready_within` (the run's `--timeout`) for its ready file.
    fn start(twin: &TwinDir, ready_within: Duration) -> Result<WireServer, CliError> {
        let exe = std::env::current_exe().map_err(|e| {
            CliError::runtime(anyhow!(
                "--wire: cannot find this wraith binary to serve: {e}"
            ))
        })?;
        let stem = std::env::temp_dir().join(format!(
            "wraith-wire-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        ));
        // What a run killed outright left: its server stopped on its own, its log stayed.
        wraith_recording::fsutil::remove_leftovers_of_dead_runs(
            &std::env::temp_dir(),
            "wraith-wire-",
        );
        let ready = stem.with_extension("ready.json");
        let log = stem.with_extension("log");
        // The signal handlers go in before the server exists, so no signal can fall between.
        let signals = StopSignals::listen();
        let log_file = std::fs::File::create(&log).map_err(|e| {
            CliError::runtime(anyhow!("--wire: cannot create {}: {e}", log.display()))
        })?;
        let child = std::process::Command::new(exe)
            .arg("serve")
            .arg(twin.root())
            .args(["--port", "0", "--access-log", "off", "--stop-on-stdin-eof"])
            .arg("--ready-json")
            .arg(&ready)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(log_file)
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                let _ = std::fs::remove_file(&log);
                return Err(CliError::runtime(anyhow!(
                    "--wire: cannot start wraith serve: {e}"
                )));
            }
        };
        let stdin = child.stdin.take();
        let server = WireServer {
            _stdin: stdin,
            child: Arc::new(std::sync::Mutex::new(child)),
            url: String::new(),
            files: vec![ready.clone(), log.clone()],
        };
        if let Some(signals) = signals {
            signals.stop(server.child.clone(), server.files.clone());
        }
        server.wait_ready(twin, &ready, &log, ready_within)
    }

    fn wait_ready(
        mut self,
        twin: &TwinDir,
        ready: &Path,
        log: &Path,
        within: Duration,
    ) -> Result<WireServer, CliError> {
        let deadline = std::time::Instant::now() + within;
        loop {
            if let Ok(text) = std::fs::read_to_string(ready)
                && let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text)
                && let Some(url) = doc["serve"]["url"].as_str()
            {
                self.url = url.to_string();
                return Ok(self);
            }
            let exited = self
                .child
                .lock()
                .ok()
                .and_then(|mut c| c.try_wait().ok().flatten());
            if exited.is_some() || std::time::Instant::now() > deadline {
                hold_if_stopping();
                let said = std::fs::read_to_string(log).unwrap_or_default();
                let why = match exited {
                    Some(status) => format!("it exited ({status})"),
                    None => format!("it was not ready within {} s (--timeout)", within.as_secs()),
                };
                let err = anyhow!(
                    "--wire: `wraith serve {}` did not start: {why}; it said:\n{}",
                    twin.root().display(),
                    said.trim_end()
                );
                // A twin that refuses to serve is a usage problem of the twin, as for `serve`.
                return Err(match exited.and_then(|s| s.code()) {
                    Some(1) => CliError::usage(err),
                    Some(3) => CliError::policy(err),
                    _ => CliError::runtime(err),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for WireServer {
    fn drop(&mut self) {
        stop_server(&self.child, &self.files);
    }
}

/// Set once a signal stops a `--wire` run: the server is being killed and the process is about
/// to exit with the signal's code.
static STOPPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Wait here for the exit a signal has begun (see [`STOPPING`]) instead of reporting the
/// server's death as the twin failing (exit 4).
fn hold_if_stopping() {
    if STOPPING.load(std::sync::atomic::Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// Kill the server (if it still runs) and remove its files; safe to call twice.
fn stop_server(child: &std::sync::Mutex<std::process::Child>, files: &[PathBuf]) {
    if let Ok(mut c) = child.lock() {
        let _ = c.kill();
        let _ = c.wait();
    }
    for f in files {
        let _ = std::fs::remove_file(f);
    }
}

/// SIGINT, SIGTERM and SIGHUP handlers for a `--wire` run, registered before its server starts
/// (on a runtime of their own: the check itself runs none).
struct StopSignals {
    runtime: tokio::runtime::Runtime,
    signals: crate::signals::ShutdownSignals,
}

impl StopSignals {
    /// `None` when no runtime can be made (the default actions stay).
    fn listen() -> Option<StopSignals> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        let signals = {
            let _entered = runtime.enter();
            crate::signals::ShutdownSignals::listen(true)
        };
        Some(StopSignals { runtime, signals })
    }

    /// On the first signal: stop the server, remove its files, and exit as that signal would
    /// have (128 + its number).
    fn stop(self, child: Arc<std::sync::Mutex<std::process::Child>>, files: Vec<PathBuf>) {
        let StopSignals { runtime, signals } = self;
        std::thread::spawn(move || {
            let code = runtime.block_on(signals.recv());
            STOPPING.store(true, std::sync::atomic::Ordering::SeqCst);
            stop_server(&child, &files);
            eprintln!("wraith check: stopped; the --wire server was stopped too");
            std::process::exit(i32::from(code));
        });
    }
}

fn target(
    setup: &Setup<'_>,
    model: &Model,
    sessions: &[&RecordedSession],
    url: &str,
    timeout: Duration,
    (mode, report_target): (&'static str, Option<&str>),
) -> Result<Report, CliError> {
    let Setup {
        twin_name,
        twin,
        cfg,
        fixture,
        ..
    } = *setup;
    let wire = mode == "wire";
    let mut tw = HttpTwin::new(url, &model.base_url, timeout)?;
    if !wire {
        tw.say_if_another_twin(&[twin_name, cfg.service.name.as_str()])?;
    }
    // Probing can only yield a handler's answer when the twin has handlers: without any, the
    // run sends no probe (and an older twin without the probe endpoint draws no warning).
    tw.probing = has_handlers(twin);
    // Fresh namespaces on every run: a running twin keeps the state of earlier runs. The
    // server a `--wire` run starts has none, so its namespaces are named as in memory and its
    // report is the same bytes every run.
    let prefix = if wire {
        "check-".to_string()
    } else {
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros())
            .unwrap_or(0);
        format!("check-{}-{nonce}-", std::process::id())
    };
    if let Some(f) = fixture {
        // Seed every namespace before any traffic reaches it, as `--fixture` does in memory.
        for s in sessions {
            tw.provision(&format!("{prefix}{}", s.manifest.session_id), f)?;
        }
    }
    // A local engine of the same model and policy puts each recording through the outbound
    // policy the served twin applies, tracking each session's supplied values as it does.
    let local = Arc::new(build_engine(
        twin_name,
        Some(twin),
        cfg,
        model,
        sessions.len(),
        None,
    )?);
    let mut diff = diff_options(cfg);
    diff.outbound = Some(outbound_hook(local, &prefix));
    let run = setup.run(model, sessions, diff, &prefix, (mode, report_target));
    let total: usize = sessions.iter().map(|s| s.exchanges.len()).sum();
    let bar = crate::output::progress(total as u64, "check");
    let report =
        replay(&run, &mut tw, &mut || bar.inc(1)).map_err(|e| CliError::runtime(anyhow!(e)))?;
    bar.finish_and_clear();
    tw.say_why_probing_stopped();
    Ok(report)
}

/// Whether the twin folder has any Lua handler. A `lua/` that does not load counts as having
/// some: the running twin, which loaded its own, says whether it has any to probe.
fn has_handlers(twin: &TwinDir) -> bool {
    wraith_script::load_lua_dir(&twin.lua_dir(), wraith_script::ScriptOptions::default())
        .map_or(true, |loaded| !loaded.handlers.is_empty())
}

/// `scheme://authority` of a URL.
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split('/').next()?;
    Some(format!("{scheme}://{authority}"))
}

/// A running twin over plain HTTP/1.1.
struct HttpTwin {
    rt: tokio::runtime::Runtime,
    client: hyper_util::client::legacy::Client<
        hyper_util::client::legacy::connect::HttpConnector,
        http_body_util::Full<bytes::Bytes>,
    >,
    /// `http://host:port` of the twin.
    origin: String,
    /// Path prefix of the target URL (usually empty).
    prefix: String,
    /// Authority of the recorded upstream: a recorded `host` naming it is replaced by the
    /// target's; any other `host` (a request recorded against another origin) is kept.
    upstream_authority: String,
    /// Whether to ask the twin's probe endpoint for handler answers: cleared once the twin says
    /// no recorded route has a handler, or cannot probe (older twin, refused), so a run costs
    /// one extra request per exchange only while probing can yield anything.
    probing: bool,
    /// Why probing stopped, said once the run has finished: a run that fails (the twin not
    /// running at all) says why in its error, where a probe warning before it would only
    /// mislead.
    probe_stopped: Option<String>,
    /// Set when a handler probe got no answer within `--timeout`: the twin is not answering,
    /// so the exchange the probe was for fails at once with this, instead of waiting as long
    /// again.
    silent: Option<String>,
    /// `--timeout`: the longest wait for an answer's headers, and again for its body.
    timeout: Duration,
    /// The twin's own origin (lowercased) and the recorded upstream origin: where `serve`'s
    /// self-URL rewrite put the twin's origin in an answer, the answer is read with the
    /// upstream's again (see [`HttpTwin::in_recorded_origin`]).
    answer_origin: Option<(String, String)>,
    /// Why a replay namespace could not be freed (said once; no more are tried).
    unfreed: Option<String>,
}

/// An error and its sources, `outer: inner: innermost`: the HTTP client's own message
/// (`client error (SendRequest)`) says nothing of what the twin did.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    crate::exit::chain(e)
}

impl HttpTwin {
    /// `GET /__wraith/info`: a target serving a twin of another name (`names`: the twin
    /// folder's and its `[service] name`) is most often the wrong port; said, not refused (a
    /// twin may be served under another name). Silent when the target does not say, but a
    /// target that does not answer within `--timeout` fails the run here: every request after
    /// would wait as long (a handler probe, then the exchange).
    fn say_if_another_twin(&self, names: &[&str]) -> Result<(), CliError> {
        let uri = format!("{}{}/__wraith/info", self.origin, self.prefix);
        let Ok(request) = hyper::Request::builder()
            .method("GET")
            .uri(&uri)
            .body(http_body_util::Full::new(bytes::Bytes::new()))
        else {
            return Ok(());
        };
        let obs = match self.exchange_as_served(request) {
            Ok(obs) => obs,
            Err(e) if e == no_answer(self.timeout) => {
                return Err(CliError::runtime(anyhow!(
                    "the target {} did not answer GET /__wraith/info: {e}; check that the twin \
                     is running and answering there (`wraith serve`), or raise --timeout",
                    self.origin
                )));
            }
            Err(_) => return Ok(()),
        };
        let served = serde_json::from_slice::<serde_json::Value>(&obs.body)
            .ok()
            .and_then(|v| v.get("twin").and_then(|t| t.as_str()).map(str::to_string));
        if let Some(served) = served.filter(|s| obs.status == 200 && !names.contains(&s.as_str())) {
            eprintln!(
                "warning: the target serves twin `{served}`, not `{}`: check that --target names \
                 this twin's server",
                names.first().copied().unwrap_or_default()
            );
        }
        Ok(())
    }

    /// `POST /__wraith/session`: create namespace `session` seeded with fixture set `fixture`.
    /// A set the twin does not have (or a provisioning body it refuses) is a usage error
    /// carrying the twin's answer, which lists the available sets; anything else is a runtime
    /// failure.
    fn provision(&mut self, session: &str, fixture: &str) -> Result<(), CliError> {
        let uri = format!("{}{}/__wraith/session", self.origin, self.prefix);
        let body = serde_json::json!({"session": session, "fixture": fixture}).to_string();
        let mut b = hyper::Request::builder()
            .method("POST")
            .uri(&uri)
            .header("content-type", "application/json");
        if let Ok(token) = std::env::var("WRAITH_CONTROL_TOKEN") {
            b = b.header("authorization", format!("Bearer {token}"));
        }
        let request = b
            .body(http_body_util::Full::new(bytes::Bytes::from(body)))
            .map_err(|e| CliError::runtime(anyhow!("cannot build the request: {e}")))?;
        let client = self.client.clone();
        let timeout = self.timeout;
        let (status, text) = self
            .rt
            .block_on(async move {
                use http_body_util::BodyExt;
                let resp = tokio::time::timeout(timeout, client.request(request))
                    .await
                    .map_err(|_| no_answer(timeout))?
                    .map_err(|e| error_chain(&e))?;
                let status = resp.status().as_u16();
                let body = tokio::time::timeout(timeout, resp.into_body().collect())
                    .await
                    .map_err(|_| no_body(timeout))?
                    .map_err(|e| format!("reading the body: {}", error_chain(&e)))?
                    .to_bytes();
                Ok::<_, String>((status, String::from_utf8_lossy(&body).into_owned()))
            })
            .map_err(|e| {
                CliError::runtime(anyhow!(
                    "--fixture {fixture}: the twin did not answer POST {uri}: {e}; check that it is running and reachable"
                ))
            })?;
        match status {
            200 | 201 => Ok(()),
            400 | 404 | 409 => Err(CliError::usage(anyhow!(
                "--fixture {fixture}: the twin refused to provision {session} ({status}): {}",
                text.trim()
            ))),
            401 | 403 => Err(CliError::usage(anyhow!(
                "--fixture {fixture}: the twin's control plane refused the request ({status}); export WRAITH_CONTROL_TOKEN with its control token"
            ))),
            _ => Err(CliError::runtime(anyhow!(
                "--fixture {fixture}: POST {uri} answered {status}: {}",
                body_excerpt(text.as_bytes())
            ))),
        }
    }

    fn new(url: &str, base_url: &str, timeout: Duration) -> Result<HttpTwin, CliError> {
        // An empty value (an unset shell variable, say) would read `--target : give …`.
        if url.trim().is_empty() {
            return Err(CliError::usage(anyhow!(
                "--target is empty: give the running twin's plain-HTTP base URL, e.g. \
                 http://127.0.0.1:8081 (`serve --ready-json` writes it at .serve.url)"
            )));
        }
        // A scheme is case-insensitive (RFC 3986 §3.1): `HTTP://` names the same twin.
        let Some((_, rest)) = url
            .split_once("://")
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("http"))
        else {
            return Err(CliError::usage(anyhow!(
                "--target {url}: give the running twin's plain-HTTP base URL, e.g. http://127.0.0.1:8081"
            )));
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        if authority.is_empty() {
            return Err(CliError::usage(anyhow!(
                "--target {url}: no host in the URL"
            )));
        }
        // `user:pass@host`: a twin reads no credentials (its control plane takes
        // WRAITH_CONTROL_TOKEN), and the URL is written into the report, so refuse it rather
        // than keep a password in `reports/`. The message leaves the credentials out.
        if let Some((_, host)) = authority.rsplit_once('@') {
            return Err(CliError::usage(anyhow!(
                "--target: the URL carries credentials (`user:pass@`), which a twin never reads and \
                 the report would keep; give the running twin's base URL without them, e.g. \
                 http://{host}{path} (a control token goes in WRAITH_CONTROL_TOKEN)"
            )));
        }
        // `host[:port]`, the port a number up to 65535 (the URI parser leaves the range to the
        // connector, which wraps a larger one around).
        let port = match authority.strip_prefix('[') {
            Some(v6) => v6.split_once(']').map(|(_, rest)| rest),
            None => Some(authority.rsplit_once(':').map_or("", |(_, p)| p)),
        };
        let port_ok = match port.map(|p| p.strip_prefix(':').unwrap_or(p)) {
            Some("") => true,
            Some(p) => p.parse::<u16>().is_ok(),
            None => false,
        };
        let valid = port_ok && format!("http://{authority}/").parse::<hyper::Uri>().is_ok();
        if !valid {
            return Err(CliError::usage(anyhow!(
                "--target {url}: `{authority}` is not a host with an optional port, e.g. 127.0.0.1:8081"
            )));
        }
        // A path is where the twin is mounted (behind a proxy). The recorded API's own base
        // path is not: the twin's routes already carry it, so every request would miss.
        let base_path = base_url
            .split_once("://")
            .and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]))
            .unwrap_or("")
            .trim_end_matches('/');
        if !path.is_empty() && path == base_path {
            return Err(CliError::usage(anyhow!(
                "--target {url}: `{path}` is the recorded API's own base path, which the twin's \
                 routes already carry; give the twin's own URL, e.g. http://{authority}"
            )));
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| CliError::runtime(anyhow!("cannot start the async runtime: {e}")))?;
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http();
        let upstream_authority = origin_of(base_url)
            .and_then(|o| o.split_once("://").map(|(_, a)| a.to_string()))
            .unwrap_or_default();
        let origin = format!("http://{authority}");
        let answer_origin = wraith_engine::origin_of(base_url)
            .map(|upstream| (origin.to_ascii_lowercase(), upstream))
            .filter(|(twin, upstream)| twin != upstream);
        Ok(HttpTwin {
            rt,
            client,
            origin,
            prefix: path.to_string(),
            upstream_authority,
            probing: true,
            probe_stopped: None,
            silent: None,
            timeout,
            answer_origin,
            unfreed: None,
        })
    }
}

/// An answer's body quoted in a one-line message: whitespace runs (an HTML error page's
/// newlines) folded to one space, cut after 200 characters with `…`.
fn body_excerpt(body: &[u8]) -> String {
    const MAX: usize = 200;
    let text = String::from_utf8_lossy(body);
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match folded.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &folded[..cut]),
        None => folded,
    }
}

/// The `--timeout` that ran out before an answer's headers arrived.
fn no_answer(timeout: Duration) -> String {
    format!("no answer within {} s (--timeout)", timeout.as_secs())
}

/// The most bytes of one answer's body `check --target` reads: four times what `serve` takes
/// of a request body, and far past any answer a recording holds. A target that sends more
/// (an endless stream) fails the run instead of filling the memory.
const MAX_ANSWER_BODY_BYTES: usize = 64 * 1024 * 1024;

/// An answer body past [`MAX_ANSWER_BODY_BYTES`].
fn too_large() -> String {
    format!(
        "the answer's body is larger than {} MiB, the most check reads of one answer; the \
         target is not answering as a twin does",
        MAX_ANSWER_BODY_BYTES / (1024 * 1024)
    )
}

/// The `--timeout` that ran out before an answer's body arrived.
fn no_body(timeout: Duration) -> String {
    format!(
        "the body did not arrive within {} s (--timeout)",
        timeout.as_secs()
    )
}

/// Hop-by-hop and framing headers a replayed request must not copy (the recorded
/// `content-length` may predate scrubbing).
const SKIP_REQUEST_HEADERS: &[&str] = &[
    "content-length",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "upgrade",
    "proxy-connection",
    "accept-encoding",
    "x-wraith-session",
];

impl HttpTwin {
    /// The recorded request headers the twin is sent: framing, hop-by-hop and session headers
    /// dropped, and a `host` naming the recorded upstream left for the client to fill in.
    fn sent_headers<'r>(&self, req: &'r Request) -> impl Iterator<Item = &'r (String, String)> {
        let upstream = self.upstream_authority.clone();
        req.headers.iter().filter(move |(k, v)| {
            !SKIP_REQUEST_HEADERS.contains(&k.as_str())
                && !(k == "host" && (v.is_empty() || v.eq_ignore_ascii_case(&upstream)))
        })
    }

    /// Send `request` and read the whole answer: status, headers without the `X-Wraith-*`
    /// control headers (read into provenance, route and replay claim), body.
    fn exchange(
        &self,
        request: hyper::Request<http_body_util::Full<bytes::Bytes>>,
    ) -> Result<Observed, String> {
        let mut obs = self.exchange_as_served(request)?;
        self.in_recorded_origin(&mut obs);
        Ok(obs)
    }

    /// The answer in the recording's origin: `serve`'s self-URL rewrite swaps the recorded
    /// upstream origin for the twin's own in JSON bodies and in `Location`, `Link` and
    /// `Content-Location` (where it ends at a URL boundary); the same swap back puts the answer
    /// in the space the recordings, the model's recorded values and the id flow are in, so a
    /// run over HTTP judges exactly what a run in memory (which has no rewrite) does. The
    /// rewrite is value-injective, so no two answers become one.
    fn in_recorded_origin(&self, obs: &mut Observed) {
        let Some((twin, upstream)) = &self.answer_origin else {
            return;
        };
        let mut json = false;
        for (k, v) in &mut obs.headers {
            if ["location", "link", "content-location"].contains(&k.as_str()) {
                wraith_engine::rewrite_origin_in(v, twin, upstream);
            }
            json |= k == "content-type" && v.to_ascii_lowercase().contains("json");
        }
        if !json {
            return;
        }
        if let Ok(text) = std::str::from_utf8(&obs.body) {
            let mut text = text.to_string();
            if wraith_engine::rewrite_origin_in(&mut text, twin, upstream) {
                obs.body = text.into_bytes();
            }
        }
    }

    /// Send `request` and read the whole answer as the twin served it.
    fn exchange_as_served(
        &self,
        request: hyper::Request<http_body_util::Full<bytes::Bytes>>,
    ) -> Result<Observed, String> {
        let client = self.client.clone();
        let timeout = self.timeout;
        self.rt.block_on(async move {
            use http_body_util::BodyExt;
            let resp = tokio::time::timeout(timeout, client.request(request))
                .await
                .map_err(|_| no_answer(timeout))?
                .map_err(|e| error_chain(&e))?;
            let status = resp.status().as_u16();
            let mut headers = Vec::new();
            let mut provenance = None;
            let mut route = None;
            let mut replay = None;
            for (k, v) in resp.headers() {
                let Ok(v) = v.to_str() else { continue };
                match k.as_str() {
                    "x-wraith-provenance" => provenance = parse_provenance(v),
                    "x-wraith-route" => route = Some(v.to_string()),
                    "x-wraith-replay" => replay = parse_replay_header(v),
                    _ => headers.push((k.as_str().to_string(), v.to_string())),
                }
            }
            let limited = http_body_util::Limited::new(resp.into_body(), MAX_ANSWER_BODY_BYTES);
            let body = tokio::time::timeout(timeout, limited.collect())
                .await
                .map_err(|_| no_body(timeout))?
                .map_err(|e| {
                    if e.is::<http_body_util::LengthLimitError>() {
                        too_large()
                    } else {
                        format!("reading the body: {}", crate::exit::chain(e.as_ref()))
                    }
                })?
                .to_bytes()
                .to_vec();
            Ok(Observed {
                status,
                headers,
                body,
                provenance,
                route,
                replay,
            })
        })
    }

    /// Stop probing for the rest of the run and say why, once: the run goes on and judges the
    /// handler answers the twin served.
    fn stop_probing(&mut self, why: &str) {
        self.probing = false;
        self.probe_stopped = Some(why.to_string());
    }

    /// The warning [`HttpTwin::stop_probing`] kept, once the run is done.
    fn say_why_probing_stopped(&mut self) {
        if let Some(why) = self.probe_stopped.take() {
            eprintln!(
                "warning: {why}; handler answers are judged only where the twin served them (authored.probed_answers stays 0)"
            );
        }
    }
}

impl Twin for HttpTwin {
    /// `DELETE /__wraith/session/{id}`: a running twin keeps every namespace until told, so a
    /// run that left its own would fill `[serve.limits] max_namespaces` over repeated runs (and
    /// answer the later sessions of one run 503). Best effort: a twin that refuses (no control
    /// token) or cannot delete is said once; the run goes on.
    fn end_session(&mut self, session: &str) {
        if self.unfreed.is_some() {
            return;
        }
        let uri = format!("{}{}/__wraith/session/{session}", self.origin, self.prefix);
        let mut b = hyper::Request::builder().method("DELETE").uri(&uri);
        if let Ok(token) = std::env::var("WRAITH_CONTROL_TOKEN") {
            b = b.header("authorization", format!("Bearer {token}"));
        }
        let Ok(request) = b.body(http_body_util::Full::new(bytes::Bytes::new())) else {
            return;
        };
        let client = self.client.clone();
        let timeout = self.timeout;
        let outcome = self.rt.block_on(async move {
            use http_body_util::BodyExt;
            let resp = tokio::time::timeout(timeout, client.request(request))
                .await
                .map_err(|_| no_answer(timeout))?
                .map_err(|e| error_chain(&e))?;
            let status = resp.status().as_u16();
            // Read the (small) answer so the connection can be reused.
            let _ = tokio::time::timeout(timeout, resp.into_body().collect()).await;
            Ok::<_, String>(status)
        });
        let why = match outcome {
            // Gone now, or never made (a session the twin had nothing to keep for).
            Ok(200..=299 | 404) => return,
            Ok(401 | 403) => "its control plane refused (export WRAITH_CONTROL_TOKEN with its \
                              control token)"
                .to_string(),
            Ok(status) => format!("it answered {status}"),
            Err(e) => e,
        };
        eprintln!(
            "warning: cannot free the replay namespaces on the twin ({why}); they stay until it \
             restarts"
        );
        self.unfreed = Some(why);
    }

    fn call(&mut self, session: &str, req: &Request) -> Result<Observed, String> {
        if let Some(why) = &self.silent {
            return Err(why.clone());
        }
        let mut uri = format!("{}{}{}", self.origin, self.prefix, req.path);
        if !req.query.is_empty() {
            uri.push('?');
            uri.push_str(&req.query);
        }
        // The twin matches methods case-sensitively; a recording's is sent as synth modelled it.
        let modelled = wraith_check::modelled_method(req);
        let mut b = hyper::Request::builder()
            .method(modelled.method.as_str())
            .uri(&uri);
        for (k, v) in self.sent_headers(req) {
            b = b.header(k.as_str(), v.as_str());
        }
        b = b.header("x-wraith-session", session);
        let request = b
            .body(http_body_util::Full::new(req.body.clone()))
            .map_err(|e| format!("cannot build the request: {e}"))?;
        self.exchange(request)
    }

    /// `POST /__wraith/session/{id}/probe` with the request the replay is about to send: the
    /// twin runs the handler bound to its recorded route on a copy of the session, as
    /// [`Engine::probe_handler`] does in memory. A twin without the endpoint (older), or whose
    /// control plane refuses the probe, is warned about once and not asked again.
    fn probe_handler(&mut self, session: &str, req: &Request) -> Option<Observed> {
        use base64::Engine as _;
        if !self.probing {
            return None;
        }
        let uri = format!(
            "{}{}/__wraith/session/{}/probe",
            self.origin,
            self.prefix,
            utf8_percent_encode(session, SESSION_SEGMENT)
        );
        let mut target = req.path.clone();
        if !req.query.is_empty() {
            target.push('?');
            target.push_str(&req.query);
        }
        let headers: Vec<(&str, &str)> = self
            .sent_headers(req)
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut envelope = serde_json::json!({
            "method": req.method,
            "path": target,
            "headers": headers,
        });
        if !req.body.is_empty() {
            envelope["body_base64"] = serde_json::Value::String(
                base64::engine::general_purpose::STANDARD.encode(&req.body),
            );
        }
        let mut b = hyper::Request::builder()
            .method("POST")
            .uri(&uri)
            .header("content-type", "application/json");
        if let Ok(token) = std::env::var("WRAITH_CONTROL_TOKEN") {
            b = b.header("authorization", format!("Bearer {token}"));
        }
        let request = match b.body(http_body_util::Full::new(bytes::Bytes::from(
            envelope.to_string(),
        ))) {
            Ok(r) => r,
            Err(e) => {
                self.stop_probing(&format!("cannot build a handler probe request: {e}"));
                return None;
            }
        };
        let mut obs = match self.exchange(request) {
            Ok(o) => o,
            Err(e) => {
                if e == no_answer(self.timeout) {
                    self.silent = Some(format!("its handler probe got {e}"));
                }
                self.stop_probing(&format!("the twin did not answer a handler probe ({e})"));
                return None;
            }
        };
        let marked = obs
            .headers
            .iter()
            .position(|(k, v)| k == wraith_server::control::PROBE_HEADER && v == "handler");
        if let Some(i) = marked {
            obs.headers.remove(i);
            return Some(obs);
        }
        let answer: Option<serde_json::Value> = serde_json::from_slice(&obs.body).ok();
        let code = answer
            .as_ref()
            .and_then(|v| v["error"].as_str())
            .unwrap_or("");
        match (obs.status, code) {
            (404, "no-handler" | "no-route") => {
                // Nothing bound to any recorded route: no later probe can answer either.
                if answer
                    .as_ref()
                    .and_then(|v| v["handlers_on_recorded_routes"].as_bool())
                    == Some(false)
                {
                    self.probing = false;
                }
                None
            }
            (401 | 403, _) => {
                self.stop_probing(&format!(
                    "the twin's control plane refused a handler probe ({}); export WRAITH_CONTROL_TOKEN with its control token",
                    obs.status
                ));
                None
            }
            (404 | 405, _) => {
                self.stop_probing(
                    "the twin has no handler probe endpoint (POST /__wraith/session/{id}/probe; it predates it)",
                );
                None
            }
            (status, _) => {
                self.stop_probing(&format!(
                    "a handler probe answered {status}: {}",
                    body_excerpt(&obs.body)
                ));
                None
            }
        }
    }
}

/// Characters escaped in a session id put in a control-plane path segment (the twin
/// percent-decodes it back to the opaque id).
const SESSION_SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The authored-output gate from `wraith.toml`: `[handlers] deviation_policy` and the
/// `[[deviations]]` entries; an incomplete or malformed entry is a configuration error naming
/// every problem.
fn authored_gate(cfg: &TwinConfig) -> Result<AuthoredGate, CliError> {
    let inputs = deviation_inputs(cfg);
    let (declared, errors) = parse_deviations(&inputs);
    if !errors.is_empty() {
        let lines: Vec<String> = errors.iter().map(|e| format!("wraith.toml: {e}")).collect();
        return Err(CliError::usage(anyhow!("{}", lines.join("\n"))));
    }
    Ok(AuthoredGate {
        policy: match cfg.handlers.deviation_policy {
            wraith_twin::DeviationPolicy::Error => DeviationPolicy::Error,
            wraith_twin::DeviationPolicy::Warn => DeviationPolicy::Warn,
        },
        declared,
    })
}

/// Authored routes from `lua/routes.toml` (never replayed nor scored).
fn authored_routes(twin: &TwinDir) -> Result<Vec<AuthoredRoute>, CliError> {
    let path = twin.lua_dir().join("routes.toml");
    let Some(text) = read_optional(&path)? else {
        return Ok(Vec::new());
    };
    // Read as serve reads it, so a file serve refuses is refused here with the same words
    // (a parse error says where, without quoting a line that may run to megabytes).
    let routes = wraith_script::routes::parse_routes(&text)
        .map_err(|e| CliError::usage(anyhow!("{}: {e}", path.display())))?;
    let out = routes
        .into_iter()
        .map(|r| AuthoredRoute {
            method: r.method.to_ascii_uppercase(),
            path: r.path,
        })
        .collect();
    Ok(out)
}

/// A run that replayed no exchange checked nothing, as a twin without recordings would not: a
/// usage error (exit 1) saying why and how to fix it, before any report is written. Sessions
/// that replayed nothing beside others that did are named in a warning: they are not scored.
fn nothing_replayed(twin: &TwinDir, report: &Report, holdout: bool) -> Result<(), CliError> {
    let skipped: u64 = report.exchanges_skipped.values().sum();
    let authored = report
        .exchanges_skipped
        .get("authored_route")
        .copied()
        .unwrap_or(0);
    let why = "they fall on routes declared only in lua/routes.toml, which their handlers \
               answer and a check never replays";
    if report.exchanges_total == 0 {
        let whose = if holdout {
            "of the held-out sessions' "
        } else {
            ""
        };
        let which = if authored == skipped {
            format!("all {skipped} {whose}recorded exchange(s) were skipped: {why}")
        } else {
            format!("all {skipped} {whose}recorded exchange(s) were skipped")
        };
        return Err(CliError::usage(anyhow!(
            "{} has nothing to check: {which}; record (`wraith record`) or import (`wraith import`) \
             traffic on the API's recorded routes, then run `wraith synth`",
            twin.root().display()
        )));
    }
    if !report.unreplayed_sessions.is_empty() {
        eprintln!(
            "warning: {} recorded session(s) replayed no exchange and are not scored ({why}): {}",
            report.unreplayed_sessions.len(),
            report.unreplayed_sessions.join(", ")
        );
    }
    Ok(())
}

fn warn_stale(model: &Model, sessions: &[RecordedSession]) {
    let missing = sessions
        .iter()
        .filter(|s| {
            model
                .sessions
                .binary_search(&s.manifest.session_id)
                .is_err()
        })
        .count();
    if missing > 0 {
        eprintln!(
            "warning: {missing} recorded session(s) are not in the model (it was synthesized before they were recorded); run `wraith synth` to include them"
        );
    }
}

/// Read `state/fixtures/`: a path of the wrong kind (a folder where a fixture file belongs) is
/// the user's layout to fix (exit 1); any other failure to read is IO (exit 4).
pub fn read_fixtures(dir: &Path) -> Result<wraith_engine::FixtureTree, CliError> {
    wraith_server::fixtures_fs::read_fixture_tree(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidInput => CliError::usage(anyhow!("{e}")),
        // A fixture file that is not UTF-8 is the owner's to fix, as one that is not JSON.
        std::io::ErrorKind::InvalidData => CliError::usage(anyhow!(
            "cannot read the fixtures: {e} (fixture files are UTF-8 JSON)"
        )),
        kind => CliError::io(kind, anyhow!("cannot read the fixtures: {e}")),
    })
}

/// Read `model/twin.wir.json` (missing → run synth; other versions → re-run synth).
pub fn load_model(path: &Path) -> Result<Model, CliError> {
    let text = match wraith_twin::read_file_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CliError::usage(anyhow!(
                "{} does not exist: run `wraith synth` first",
                path.display()
            )));
        }
        // Bytes that are not text are a damaged model, not a failed read.
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            return Err(CliError::usage(anyhow!(
                "{}: not a Wraith model (not UTF-8 text: the file is damaged or was overwritten); \
                 re-run `wraith synth`",
                path.display()
            )));
        }
        // A folder or fifo in its place is the user's to fix (1), an unreadable file exit 4.
        Err(e) => {
            return Err(CliError::io(
                e.kind(),
                anyhow!("cannot read the model {}: {e}", path.display()),
            ));
        }
    };
    let model = wraith_model::model_from_json_str(&text)
        .map_err(|e| CliError::usage(anyhow!("{}: {e}; re-run `wraith synth`", path.display())))?;
    warn_duplicate_routes(&model, path);
    Ok(model)
}

/// A model naming one `METHOD /path` (on one origin) in more than one route was edited by hand
/// or merged wrongly. It still loads; say so, once per route, as `wraith lint` does.
fn warn_duplicate_routes(model: &Model, path: &Path) {
    type Name<'a> = (String, &'a str, Option<&'a str>);
    let mut ids: std::collections::BTreeMap<Name<'_>, Vec<&str>> = Default::default();
    for r in &model.routes {
        let method = r.method.to_ascii_uppercase();
        ids.entry((method, r.path.as_str(), r.origin.as_deref()))
            .or_default()
            .push(r.id.as_str());
    }
    for ((method, route, origin), ids) in ids.iter().filter(|(_, ids)| ids.len() > 1) {
        let origin = origin
            .map(|o| format!(" on {}", shown(o)))
            .unwrap_or_default();
        eprintln!(
            "warning: {}: {} {}{origin} is declared by {} routes (ids {}); re-run `wraith synth` (`wraith lint` reports it as duplicate-route)",
            path.display(),
            shown(method),
            shown(route),
            ids.len(),
            shown(&ids.join(", "))
        );
    }
}

/// `state/schema.json` as serve reads it: bytes that are not UTF-8 are no JSON, so the file is
/// unusable and the twin serves a route-only schema, said in `warnings` as the engine says it
/// of any other unparseable schema (a lossy read would parse and use what the bad byte hid).
pub fn read_schema_json(
    path: &Path,
    warnings: &mut Vec<String>,
) -> Result<Option<String>, CliError> {
    let bytes = match wraith_twin::read_file(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) => return read_optional(path),
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Some(text)),
        Err(e) => {
            warnings.push(format!(
                "state/schema.json is unusable (not UTF-8: invalid byte at offset {}); serving \
                 with a route-only schema, so fixtures for types no route references are \
                 skipped",
                e.utf8_error().valid_up_to()
            ));
            Ok(None)
        }
    }
}

pub fn read_optional(path: &Path) -> Result<Option<String>, CliError> {
    // Bytes that are not UTF-8 are read with replacement characters: the file's own parser then
    // refuses it as damaged, naming where (exit 1 or a finding), instead of a failed read.
    match wraith_twin::read_file(path) {
        Ok(bytes) => Ok(Some(match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        // A folder or a fifo where the file belongs is the user's to fix (1), as a file that is
        // there but cannot be read is a runtime failure (4).
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => Err(CliError::usage(anyhow!(
            "cannot read {}: is a folder; put the file there, or remove the folder",
            path.display()
        ))),
        Err(e) => Err(CliError::io(
            e.kind(),
            anyhow!("cannot read {}: {e}", path.display()),
        )),
    }
}

/// A route as the summary lines show it: a request no route matched is named by its own
/// path, which can run to kilobytes; past [`ROUTE_SHOWN_CHARS`] characters the line shows its
/// start (the report keeps it whole). A recorded path may hold control characters, which
/// are escaped ([`shown`]).
fn route_shown(route: &str) -> std::borrow::Cow<'_, str> {
    if route.chars().count() <= ROUTE_SHOWN_CHARS {
        return shown(route);
    }
    let start: String = route.chars().take(ROUTE_SHOWN_CHARS).collect();
    format!("{}… ({} characters)", shown(&start), route.chars().count()).into()
}

/// See [`route_shown`].
const ROUTE_SHOWN_CHARS: usize = 160;

fn report_paths(twin: &TwinDir) -> (PathBuf, PathBuf) {
    let dir = twin.reports_dir();
    (dir.join("check.json"), dir.join("check.html"))
}

/// Write `reports/check.json` and `reports/check.html`; returns the JSON text written (what
/// `--json` prints).
fn write_reports(
    twin: &TwinDir,
    report: &Report,
    cov: &wraith_check::coverage::Coverage,
) -> Result<String, CliError> {
    let dir = twin.reports_dir();
    if !dir.exists() && dir.symlink_metadata().is_ok() {
        return Err(CliError::runtime(anyhow!(
            "cannot write the check report: {} is a symbolic link to {}, which does not exist; \
             create that folder or remove the link",
            dir.display(),
            std::fs::read_link(&dir).map_or_else(|_| "?".to_string(), |t| t.display().to_string())
        )));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(CliError::runtime(anyhow!(
            "cannot write the check report: {} is a file, not a folder; move or remove it so `wraith check` can create the reports folder there",
            dir.display()
        )));
    }
    let (json_path, html_path) = report_paths(twin);
    for path in [&json_path, &html_path] {
        twin.check_writable(path).map_err(CliError::twin)?;
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::runtime(anyhow!("cannot create {}: {e}", dir.display())))?;
    let json = wraith_model::to_canonical_json(report)
        .map_err(|e| CliError::runtime(anyhow!("cannot render the report: {e}")))?;
    let html = wraith_check::html::render(report, Some(cov));
    // Both or neither: a JSON report of this run beside the HTML of an earlier one would
    // disagree with it.
    wraith_twin::write_atomic_all(&[
        (json_path.as_path(), json.as_bytes()),
        (html_path.as_path(), html.as_bytes()),
    ])
    .map_err(|e| {
        CliError::runtime(anyhow!(
            "cannot write the check reports in {} ({e}); the reports there are the previous run's",
            dir.display()
        ))
    })?;
    Ok(json)
}

fn bp(v: u32) -> String {
    format!("{}.{:02}%", v / 100, v % 100)
}

fn print_summary(twin: &TwinDir, r: &Report) {
    outln!(
        "{}  {}  score {}/10000 (required {})  sessions {}/{} passing ({}, required {})  exchanges {}/{}  divergences {}",
        if r.passed { "PASS" } else { "FAIL" },
        r.twin,
        r.score_bp,
        r.required_score_bp,
        r.sessions_passed,
        r.sessions_total,
        bp(r.session_pass_rate_bp),
        bp(r.required_session_pass_rate_bp),
        r.exchanges_passed,
        r.exchanges_total,
        r.divergence_count,
    );
    if let Some(h) = &r.holdout {
        outln!(
            "  holdout k={}: in-sample {}/10000 ({}, {}) · held-out {}/10000 ({}, {})",
            h.k,
            h.in_sample_score_bp,
            crate::output::count(h.in_sample_exchanges, "exchange"),
            crate::output::count(h.training_sessions, "session"),
            h.held_out_score_bp,
            crate::output::count(h.held_out_exchanges, "exchange"),
            crate::output::count(h.held_out_sessions.len() as u64, "session")
        );
    }
    if !r.causes.is_empty() {
        let causes = causes_list(&r.causes);
        outln!(
            "  causes: {}; ceiling {} ({} of {} exchanges passable by a deterministic twin)",
            causes.join(", "),
            r.ceiling.score_bp,
            r.ceiling.passable,
            r.ceiling.exchanges
        );
        if !r.after_earlier_divergence_by_first_cause.is_empty() {
            outln!(
                "  after_earlier_divergence by its session's first failure: {}",
                causes_list(&r.after_earlier_divergence_by_first_cause).join(", ")
            );
        }
    }
    if !r.categories.is_empty() {
        let cats: Vec<String> = r
            .categories
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        outln!("  categories: {}", cats.join(", "));
    }
    if r.fiction.authored_answers > 0 || r.fiction.authored_only_exchanges > 0 {
        outln!(
            "  fiction: {} of {} answers authored (handlers, fixtures), {}; {} exchange(s) on authored-only routes not replayed",
            r.fiction.authored_answers,
            r.fiction.answers,
            bp(r.fiction.ratio_bp),
            r.fiction.authored_only_exchanges
        );
    }
    let a = &r.authored;
    if a.served_answers + a.probed_answers + a.fixture_answers > 0 {
        outln!(
            "  authored output: {} handler answer(s) judged ({} served, {} probed), {} fixture answer(s)  deviations {} ({} unmarked, {} marked; policy {})",
            a.served_answers + a.probed_answers,
            a.served_answers,
            a.probed_answers,
            a.fixture_answers,
            a.deviations,
            a.unmarked,
            a.marked,
            a.deviation_policy.as_str()
        );
        for d in r
            .authored_deviations
            .iter()
            .filter(|d| !d.deviation.marked)
            .take(5)
        {
            // A reason quotes a recorded key, a route a recorded path: escaped for the terminal.
            outln!(
                "    {} {}  {}  {}: {}",
                d.severity,
                route_shown(&d.deviation.route),
                shown(&d.deviation.path),
                d.deviation.rule.as_str(),
                shown(&d.deviation.reason)
            );
        }
    }
    let mut worst: Vec<_> = r.routes.iter().filter(|x| x.score_bp < 10_000).collect();
    worst.sort_by(|a, b| {
        (b.exchanges - b.passed)
            .cmp(&(a.exchanges - a.passed))
            .then(a.route.cmp(&b.route))
    });
    for x in worst.iter().take(5) {
        let cats: Vec<String> = x
            .categories
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        let causes = causes_list(&x.causes);
        outln!(
            "  {:>6}/10000  {}/{}  {}  [{}]  causes: {}",
            x.score_bp,
            x.passed,
            x.exchanges,
            route_shown(&x.route),
            cats.join(", "),
            causes.join(", ")
        );
    }
    let dims: Vec<String> = r
        .dimensions
        .iter()
        .map(|(name, d)| match d.required_bp {
            Some(req) if d.passed => format!("{name} {} (required {req})", d.score_bp),
            Some(req) => format!("{name} {} BELOW {req}", d.score_bp),
            None => format!("{name} {}", d.score_bp),
        })
        .collect();
    outln!("  dimensions: {}", dims.join(", "));
    for f in r.dimensions_failed.iter().filter(|f| f.route.is_some()) {
        outln!(
            "  FAIL  {}  {} {}/10000 (required {} by [diff.overrides])",
            route_shown(f.route.as_deref().unwrap_or("")),
            f.dimension.as_str(),
            f.score_bp,
            f.required_bp
        );
    }
    if r.suppressed_count > 0 {
        outln!(
            "  suppressed: {} divergence(s) removed by [[diff.suppress]] before scoring{}",
            r.suppressed_count,
            if r.suppressed.is_empty() {
                " (--show-suppressed lists them)"
            } else {
                ""
            }
        );
    }
    for s in &r.suppressed {
        outln!(
            "    {}  {}/{}  {}  {}  (rule {}: {})",
            route_shown(&s.route),
            s.session,
            s.exchange,
            shown(&s.path),
            s.category.as_str(),
            s.rule,
            s.reason
        );
    }
    if r.drift_suppressed_count > 0 {
        outln!(
            "  accepted drift: {} divergence(s) accepted by drift.toml [[suppress]] (still scored){}",
            r.drift_suppressed_count,
            if r.drift_suppressed.is_empty() {
                " (--show-suppressed lists them)"
            } else {
                ""
            }
        );
    }
    for s in &r.drift_suppressed {
        outln!(
            "    {}  {}  {}  {} x{}  (drift.toml [[suppress]] {}: {})",
            s.drift_id,
            route_shown(&s.route),
            shown(&s.path),
            s.drift_type.as_str(),
            s.count,
            s.rule,
            s.reason
        );
    }
    if let Some(f) = &r.fixture {
        outln!("  fixture: {f}");
    }
    if let Some(f) = &r.freshness {
        let age = f
            .twin_age_seconds
            .map_or_else(|| "unknown".to_string(), human_secs);
        let limit = |v: Option<u64>| v.map_or_else(|| "unset".to_string(), human_secs);
        outln!(
            "  freshness: {} (twin age {age}; max_age {}, warn_age {})",
            f.status,
            limit(f.max_age_seconds),
            limit(f.warn_age_seconds)
        );
        if let Some(d) = f.drift {
            outln!(
                "  drift: {d:.3} ({} of {} routes drifted between recording runs; max_drift {}){}",
                f.drifted_routes.len(),
                f.routes_total,
                f.max_drift
                    .map_or_else(|| "unset".to_string(), |m| m.to_string()),
                if f.drift_exceeded { " EXCEEDED" } else { "" }
            );
            for r in &f.drifted_routes {
                outln!("    drifted: {}", route_shown(r));
            }
        }
    }
    let (j, h) = report_paths(twin);
    outln!("  report: {}  {}", j.display(), h.display());
}

/// `recordings_disagree 3, twin 1`: cause counts in the order the causes apply.
fn causes_list(counts: &std::collections::BTreeMap<String, u64>) -> Vec<String> {
    wraith_check::causes::Cause::ALL
        .iter()
        .filter_map(|c| {
            counts
                .get(c.as_str())
                .map(|n| format!("{} {n}", c.as_str()))
        })
        .collect()
}

/// The `[[deviations]]` entries as written, for the authored-output gate (check) and lint.
pub(crate) fn deviation_inputs(cfg: &TwinConfig) -> Vec<DeviationInput<'_>> {
    cfg.deviations
        .iter()
        .map(|d| DeviationInput {
            route: d.route.as_deref(),
            path: d.path.as_deref(),
            reason: d.reason.as_deref(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_route_shown_on_the_summary_has_its_control_characters_escaped_and_long_ones_cut() {
        assert_eq!(route_shown("GET /v1/items"), "GET /v1/items");
        assert_eq!(
            route_shown("GET /a\u{1b}[2J\u{202e}b"),
            "GET /a\\u{1b}[2J\\u{202e}b"
        );
        let long = format!("GET /{}", "\u{1b}".repeat(400));
        let shown = route_shown(&long);
        assert!(!shown.contains('\u{1b}'), "{shown}");
        assert!(shown.ends_with("… (405 characters)"), "{shown}");
    }
}
