//! `wraith serve <twin>`: load (and if needed re-synthesize) the model, build the engine, bind
//! the listeners, write the `--ready-json` startup contract and serve until SIGINT/SIGTERM.
//!
//! Every setting comes from a flag when given, else from `wraith.toml`, else the documented
//! default.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::anyhow;
use wraith_engine::{
    ClockConfig, ClockMode, Engine, EngineError, EngineOptions, Fidelity, Freshness,
    IdempotencyOptions, UnknownEntity,
};
use wraith_server::{ListenSpec, Listeners, ServeSettings, TwinInfo};
use wraith_twin::{TwinConfig, TwinDir};

use crate::exit::{CliError, CmdResult};

pub(crate) mod sim_flags;

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  wraith serve shop --port 0 --ready-json /tmp/ready.json
  wraith serve shop --unknown-entity not_found --fixture baseline --seed 42 \\
      --clock deterministic --clock-epoch 1700000000
  wraith serve shop --listen 0.0.0.0:8081 --control-token-env WRAITH_CONTROL_TOKEN
  wraith serve shop --overlay shop-promos            # compose, then serve the composite

Responses carry X-Wraith-Provenance, X-Wraith-Route, X-Wraith-Exchange, X-Wraith-Replay,
X-Wraith-Twin-Age and X-Wraith-Recorded-At as the twin response contract describes; requests
carrying X-Wraith-Session get their own isolated namespace.")]
pub struct Args {
    /// Twin name under ./twins/ or path to a twin folder.
    #[arg(required_unless_present = "twin_flag", conflicts_with = "twin_flag")]
    pub twin: Option<String>,
    /// The twin, given as a flag instead (`wraith serve --twin twins/shop`).
    #[arg(long = "twin", id = "twin_flag", value_name = "TWIN")]
    pub twin_flag: Option<String>,
    /// An overlay twin composed onto the twin before serving (repeatable, applied in order),
    /// as `wraith compose` would; a conflict exits 2 and serves nothing.
    #[arg(long = "overlay", value_name = "TWIN")]
    pub overlays: Vec<String>,
    /// With --overlay: write the composite into DIR and keep it. Default: a temporary folder,
    /// removed when serve stops.
    #[arg(long, value_name = "DIR", requires = "overlays")]
    pub keep_composite: Option<PathBuf>,
    /// Port to listen on (0 = any free port; read the real one from --ready-json).
    /// Default: `[serve] port` in wraith.toml, else 8081. With --listen it fills in an address
    /// without a port; a --listen address with another port is refused.
    #[arg(long)]
    pub port: Option<u16>,
    /// Address to bind instead of the default 127.0.0.1 + ::1 pair: `host:port`, an IP address,
    /// or a bracketed IPv6 address such as `[::1]:8181`. An address without a port takes
    /// --port (else `[serve] port`); one with a port ignores `[serve] port`, and a --port naming
    /// another port is refused. A non-loopback address needs a control token.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// Write the startup contract (URL, port, freshness, control endpoints) here once listening;
    /// removed again when serve stops. A file already there must be empty or an earlier run's
    /// ready file; a device or fifo is written into and kept.
    #[arg(long, value_name = "FILE")]
    pub ready_json: Option<PathBuf>,
    /// Stop (as on SIGTERM) once standard input reaches its end. For a parent that starts
    /// serve on a pipe (`check --wire`): when the parent dies, even by SIGKILL, the pipe
    /// closes and its server stops instead of living on.
    #[arg(long, hide = true)]
    pub stop_on_stdin_eof: bool,
    /// What a read of an unknown entity id answers: a synthesized 200 or a fail-closed
    /// not-found. Default: `[serve] unknown_entity`, else synthesize.
    #[arg(long, value_enum)]
    pub unknown_entity: Option<UnknownEntityArg>,
    /// Fixture set seeded into every new session (`state/fixtures/<NAME>/`, or `<ns>:<NAME>`).
    #[arg(long, value_name = "NAME")]
    pub fixture: Option<String>,
    /// Seed of every namespace's RNG and id generator. Default: `[serve] deterministic_seed`, else 42.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Clock of new namespaces. Default: `[serve.clock] mode`, else real.
    #[arg(long, value_enum)]
    pub clock: Option<ClockArg>,
    /// Start (deterministic) or frozen value (fixed) of the clock, in unix seconds, from
    /// 0 (1970-01-01T00:00:00Z) to 253402207200 (9999-12-30T22:00:00Z); under a real clock, the
    /// epoch of a session provisioned with a clock mode but no epoch.
    /// Default: `[serve.clock] base_epoch`, else 1640995200.
    #[arg(long, value_name = "SECS")]
    pub clock_epoch: Option<i64>,
    /// Response mode. Default: `[serve] fidelity`, else synth.
    #[arg(long, value_enum)]
    pub fidelity: Option<FidelityArg>,
    /// Do not send X-Wraith-Provenance, X-Wraith-Route, X-Wraith-Exchange or X-Wraith-Replay
    /// (same as `[serve] provenance_headers = false`).
    #[arg(long)]
    pub no_provenance_headers: bool,
    /// Add X-Wraith-Provenance-Counts and enable GET /__wraith/session/{id}/state.
    #[arg(long)]
    pub debug: bool,
    /// Read the control-plane bearer token from this environment variable. Required on a
    /// non-loopback bind; a token given is required on a loopback bind too (health, ready and
    /// info stay open), since whoever sets one means to keep the control plane shut.
    #[arg(long, value_name = "VAR", conflicts_with = "control_token_file")]
    pub control_token_env: Option<String>,
    /// Read the control-plane bearer token from this file (surrounding whitespace ignored).
    #[arg(long, value_name = "FILE")]
    pub control_token_file: Option<PathBuf>,
    /// Also print the startup contract as one JSON line on stdout once listening.
    #[arg(long, default_value_if("format", "json", "true"))]
    pub json: bool,
    /// Output format: `text` or `pretty` (the same human-readable output, the default), or
    /// `json` (as `--json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<super::Format>,
    #[command(flatten)]
    pub sim: Box<sim_flags::SimArgs>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum UnknownEntityArg {
    Synthesize,
    #[value(name = "not_found", alias = "not-found")]
    NotFound,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ClockArg {
    Real,
    Deterministic,
    Fixed,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum FidelityArg {
    Strict,
    Synth,
    Fuzzy,
}

/// Everything `serve` needs, merged from flags, `wraith.toml` and defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub listen: ListenSpec,
    pub fidelity: Fidelity,
    pub unknown_entity: UnknownEntity,
    pub seed: u64,
    pub clock: ClockConfig,
    pub provenance_headers: bool,
    pub debug: bool,
    pub fixture: Option<String>,
    pub max_namespaces: usize,
    pub max_entities_per_type: usize,
    pub max_state_bytes: u64,
    pub max_twin_state_bytes: u64,
    /// `[serve.limits] max_pending_body_mb`, in bytes.
    pub max_pending_body_bytes: usize,
    pub drain_timeout: Duration,
    pub idle_timeout: Duration,
    pub idempotency: Option<IdempotencyOptions>,
    pub rewrite_self_urls: bool,
    /// `[serve] strip_headers`: the outbound header allowlist.
    pub strip_headers: bool,
}

/// Merge flags over `wraith.toml`: a flag always wins.
pub fn resolve(args: &Args, cfg: &TwinConfig) -> Result<Resolved, CliError> {
    let serve = &cfg.serve;
    let port = args.port.unwrap_or(serve.port);
    let listen = match &args.listen {
        Some(v) => {
            let spec = ListenSpec::parse(v, port).map_err(CliError::usage)?;
            // `--listen` with its own port wins over `[serve] port`, but a `--port` naming
            // another port is a contradiction, not a default: refuse it rather than pick one.
            let bound = match &spec {
                ListenSpec::DefaultLoopback { port } | ListenSpec::Host { port, .. } => *port,
                ListenSpec::Addr(a) => a.port(),
            };
            if let Some(flag) = args.port
                && flag != bound
            {
                return Err(CliError::usage(anyhow!(
                    "--port {flag} and --listen {v} name different ports ({flag} and {bound}); \
                     give the port once: either in --listen (`--listen {v}`) or with --port and \
                     a --listen address without a port (`--listen {host} --port {flag}`)",
                    host = listen_host(v)
                )));
            }
            spec
        }
        None => ListenSpec::DefaultLoopback { port },
    };
    let fidelity = match args.fidelity {
        Some(FidelityArg::Strict) => Fidelity::Strict,
        Some(FidelityArg::Synth) => Fidelity::Synth,
        Some(FidelityArg::Fuzzy) => Fidelity::Fuzzy,
        None => match serve.fidelity {
            wraith_twin::Fidelity::Strict => Fidelity::Strict,
            wraith_twin::Fidelity::Synth => Fidelity::Synth,
            wraith_twin::Fidelity::Fuzzy => Fidelity::Fuzzy,
        },
    };
    let unknown_entity = match args.unknown_entity {
        Some(UnknownEntityArg::Synthesize) => UnknownEntity::Synthesize,
        Some(UnknownEntityArg::NotFound) => UnknownEntity::NotFound,
        None => match serve.unknown_entity {
            wraith_twin::UnknownEntity::Synthesize => UnknownEntity::Synthesize,
            wraith_twin::UnknownEntity::NotFound => UnknownEntity::NotFound,
        },
    };
    let mode = match args.clock {
        Some(ClockArg::Real) => ClockMode::Real,
        Some(ClockArg::Deterministic) => ClockMode::Deterministic,
        Some(ClockArg::Fixed) => ClockMode::Fixed,
        None => match serve.clock.mode {
            wraith_twin::ClockMode::Real => ClockMode::Real,
            wraith_twin::ClockMode::Deterministic => ClockMode::Deterministic,
            wraith_twin::ClockMode::Fixed => ClockMode::Fixed,
        },
    };
    let base_epoch = match args.clock_epoch {
        Some(e) => {
            wraith_twin::validate_clock_epoch(i128::from(e))
                .map_err(|m| CliError::usage(anyhow!("--clock-epoch: {m}")))?;
            e
        }
        None => serve.clock.base_epoch,
    };
    let max_namespaces = usize::try_from(serve.limits.max_namespaces).unwrap_or(usize::MAX);
    let idempotency = serve.idempotency.enabled.then(|| IdempotencyOptions {
        header: serve.idempotency.header.to_ascii_lowercase(),
        ttl_seconds: serve.idempotency.ttl_seconds,
    });
    Ok(Resolved {
        listen,
        fidelity,
        unknown_entity,
        seed: args.seed.unwrap_or(serve.deterministic_seed),
        clock: ClockConfig { mode, base_epoch },
        provenance_headers: serve.provenance_headers && !args.no_provenance_headers,
        debug: args.debug || serve.debug,
        fixture: args.fixture.clone(),
        max_namespaces,
        max_entities_per_type: usize::try_from(serve.limits.max_entities_per_type)
            .unwrap_or(usize::MAX),
        max_state_bytes: serve.limits.max_total_state_mb.saturating_mul(1024 * 1024),
        max_twin_state_bytes: serve.limits.max_twin_state_mb.saturating_mul(1024 * 1024),
        max_pending_body_bytes: usize::try_from(
            serve.limits.max_pending_body_mb.saturating_mul(1024 * 1024),
        )
        .unwrap_or(usize::MAX),
        drain_timeout: Duration::from_millis(serve.limits.request_drain_timeout_ms),
        idle_timeout: Duration::from_millis(serve.limits.request_idle_timeout_ms),
        idempotency,
        rewrite_self_urls: serve.rewrite_self_urls,
        strip_headers: serve.strip_headers,
    })
}

/// The address part of a `--listen` value that carries a port (`0.0.0.0:8081` → `0.0.0.0`,
/// `[::1]:8081` → `[::1]`), for a message suggesting the same address without it.
fn listen_host(value: &str) -> &str {
    let v = value.trim();
    match v.rsplit_once(':') {
        Some((host, _)) if !host.contains(':') || host.ends_with(']') => host,
        _ => v,
    }
}

/// The control-plane token, from `--control-token-env` or `--control-token-file`.
fn control_token(args: &Args) -> Result<Option<String>, CliError> {
    if let Some(var) = &args.control_token_env {
        let value = std::env::var(var).map_err(|_| {
            CliError::usage(anyhow!(
                "--control-token-env {var}: the environment variable {var} is not set (or not valid UTF-8); export it with the token clients will send as `Authorization: Bearer <token>`"
            ))
        })?;
        let value = value.trim().to_string();
        if value.is_empty() {
            return Err(CliError::usage(anyhow!(
                "--control-token-env {var}: the environment variable {var} is empty; set it to a non-empty token"
            )));
        }
        return Ok(Some(value));
    }
    if let Some(path) = &args.control_token_file {
        let text = wraith_twin::read_file_to_string(path).map_err(|e| {
            CliError::read_text(
                e.kind(),
                anyhow!(
                    "--control-token-file {}: cannot read the token file: {e}",
                    path.display()
                ),
            )
        })?;
        let value = text.trim().to_string();
        if value.is_empty() {
            return Err(CliError::usage(anyhow!(
                "--control-token-file {}: the file is empty; put the token in it",
                path.display()
            )));
        }
        return Ok(Some(value));
    }
    Ok(None)
}

/// The twin `serve --overlay` composed and serves: kept in `--keep-composite`, or a temporary
/// folder removed when this is dropped.
struct Composite {
    dir: PathBuf,
    temporary: bool,
}

impl Composite {
    fn build(base: &str, args: &Args) -> Result<Composite, CliError> {
        let (dir, temporary) = match &args.keep_composite {
            Some(dir) => (dir.clone(), false),
            None => {
                let temp = std::env::temp_dir();
                // Composing creates missing parents; a temporary folder must not leave a
                // TMPDIR behind that was never there.
                if !temp.is_dir() {
                    return Err(CliError::usage(anyhow!(
                        "--overlay: the temporary folder {} (TMPDIR) does not exist; create it, \
                         point TMPDIR elsewhere, or pass --keep-composite DIR",
                        temp.display()
                    )));
                }
                // An earlier serve interrupted while composing (SIGINT before it listened)
                // left its staging folder here; its process is gone, so it goes now.
                wraith_recording::fsutil::remove_stale_staging_dirs_where(&temp, |target| {
                    target.starts_with("wraith-composite-")
                });
                // A serve killed outright (SIGKILL) left its whole composite.
                wraith_recording::fsutil::remove_leftovers_of_dead_runs(&temp, "wraith-composite-");
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos());
                let dir = temp.join(format!("wraith-composite-{}-{nanos}", std::process::id()));
                (dir, true)
            }
        };
        let outcome = super::compose::compose(&super::compose::Args {
            base: base.to_string(),
            overlays: args.overlays.clone(),
            output: dir.clone(),
            force: false,
            json: false,
            format: None,
            summary_on_stderr: true,
            output_flag: Some("--keep-composite"),
        })?;
        match outcome {
            super::compose::Outcome::Composed => Ok(Composite { dir, temporary }),
            super::compose::Outcome::Conflicts(n) => Err(CliError::conformance(anyhow!(
                "--overlay: {n} conflict(s) composing the overlays onto `{base}`; nothing is \
                 served (the conflicts are listed above)"
            ))),
        }
    }
}

impl Drop for Composite {
    fn drop(&mut self) {
        if self.temporary
            && let Err(e) = std::fs::remove_dir_all(&self.dir)
        {
            eprintln!(
                "warning: cannot remove the temporary composite {}: {e}",
                self.dir.display()
            );
        }
    }
}

pub fn run(args: Args) -> CmdResult {
    init_tracing();
    if let Some(path) = &args.ready_json {
        CliError::check_output_file("--ready-json", path)?;
        super::ready_file::check_replaceable("--ready-json", path)?;
    }
    let named = args
        .twin
        .as_deref()
        .or(args.twin_flag.as_deref())
        .unwrap_or_default();
    // Held until serve returns: a temporary composite is removed then, on every path out.
    let composite = if args.overlays.is_empty() {
        None
    } else {
        Some(Composite::build(named, &args)?)
    };
    let named = match &composite {
        Some(c) => c.dir.to_string_lossy().into_owned(),
        None => named.to_string(),
    };
    let twin = TwinDir::resolve(&named).map_err(CliError::usage)?;
    let cfg = TwinConfig::load(&twin).map_err(CliError::twin)?;
    if let Some(why) = unbuilt_session_mode(&cfg) {
        return Err(CliError::usage(anyhow!(
            "{}: {why}",
            twin.wraith_toml().display()
        )));
    }
    let resolved = resolve(&args, &cfg)?;
    let token = control_token(&args)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::runtime(anyhow!("cannot start the async runtime: {e}")))?;

    // The policy check comes before anything slow or anything bound: a non-loopback bind
    // without a token is refused outright.
    let candidates = runtime
        .block_on(resolved.listen.resolve())
        .map_err(CliError::usage)?;
    if !wraith_server::all_loopback(&candidates) && token.is_none() {
        return Err(CliError::policy(anyhow!(
            "refusing to listen on {} without a control token: /__wraith/* can reset and delete every session, so a non-loopback bind needs --control-token-env VAR or --control-token-file FILE (clients then send `Authorization: Bearer <token>`); or bind a loopback address such as 127.0.0.1",
            candidates
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }

    let mut warnings: Vec<String> = cfg.warnings.iter().map(ToString::to_string).collect();
    ensure_model_fresh(&twin)?;
    let model_path = twin.model_dir().join("twin.wir.json");
    // The loader `check` uses: the same messages for a damaged or foreign model, and the same
    // warning for a route named twice.
    let model = super::check::load_model(&model_path)?;
    let schema_json = super::check::read_schema_json(&twin.schema_json(), &mut warnings)?;
    let fixtures = super::check::read_fixtures(&twin.fixtures_dir())?;

    let now_secs = unix_now_secs();
    let newest = newest_recording_us(&twin.sessions_dir());
    let recorded_at = newest.and_then(|us| rfc3339_from_us(us as i64));
    let synthesized_us = std::fs::metadata(&model_path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_micros() as i64);
    let synthesized_at = synthesized_us.and_then(rfc3339_from_us);
    // The contract: age anchors on the newest recording session; a model-only twin falls
    // back to when its model was synthesized.
    let anchor_secs = match newest {
        Some(us) => Some((us / 1_000_000) as i64),
        None => synthesized_us.map(|us| us / 1_000_000),
    };
    let twin_age_seconds = anchor_secs
        .map(|a| u64::try_from(now_secs - a).unwrap_or(0))
        .unwrap_or(0);
    let freshness = Freshness {
        twin_age_seconds,
        recorded_at: recorded_at.clone(),
        synthesized_at: synthesized_at.clone(),
    };

    let twin_name = if model.twin.is_empty() {
        cfg.service.name.clone()
    } else {
        model.twin.clone()
    };
    let opts = EngineOptions {
        fidelity: resolved.fidelity,
        unknown_entity: resolved.unknown_entity,
        seed: resolved.seed,
        clock: resolved.clock,
        wall_clock: Arc::new(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_micros() as i64)
                .unwrap_or(0)
        }),
        max_namespaces: resolved.max_namespaces,
        max_entities_per_type: resolved.max_entities_per_type,
        max_state_bytes: resolved.max_state_bytes,
        max_twin_state_bytes: resolved.max_twin_state_bytes,
        idempotency: resolved.idempotency.clone(),
        rewrite_self_urls: resolved.rewrite_self_urls,
        provenance_headers: resolved.provenance_headers,
        debug: resolved.debug,
        twin_name: Some(twin_name.clone()),
        fixture: resolved.fixture.clone(),
        freshness,
        principal: principal_map(&twin, &mut warnings),
    };
    let outbound = outbound_policy(&twin, resolved.strip_headers, &mut warnings)?;
    let mut engine =
        Engine::new(model, schema_json.as_deref(), fixtures, opts).map_err(|e| match e {
            EngineError::UnknownFixture { .. } => CliError::usage(anyhow!("--fixture: {e}")),
            other => CliError::usage(anyhow!("{}: {other}", twin.root().display())),
        })?;
    let lua_lines = crate::cmd::route::install_scripts(&twin, &cfg, &mut engine)?;
    // The engine's warnings include fuzzy fidelity's (every request answers 501).
    for w in engine.warnings() {
        if !warnings.contains(w) {
            warnings.push(w.clone());
        }
    }
    engine
        .set_outbound_policy(outbound)
        .map_err(|e| CliError::usage(anyhow!("{}: {e}", twin.scrub_toml().display())))?;
    // A malformed fault profile, latency config or rate limit is refused before binding.
    let config_limits = sim_flags::ConfigLimits {
        file: &twin.wraith_toml(),
        table: &cfg.serve.rate_limits,
        latency: &cfg.serve.latency,
    };
    let layers = sim_flags::layers(&args.sim, engine.model(), config_limits)?;
    // The routes the twin answers (authored ones included, a route on two origins once), as
    // `/__wraith/info` and a route miss count them.
    let route_count = engine.route_count();
    let engine = Arc::new(engine);

    let served = runtime.block_on(async move {
        let listeners = Listeners::bind(&candidates)
            .await
            .map_err(CliError::runtime)?;
        warnings.extend(listeners.warnings().iter().cloned());
        engine.set_self_url(&listeners.url());
        let info = TwinInfo {
            twin: twin_name.clone(),
            twin_age_seconds,
            recorded_at,
            synthesized_at,
            drifted_routes: wraith_server::drifted_routes(engine.model()),
            warnings: warnings.clone(),
            debug: resolved.debug,
            trace: layers.trace.is_some(),
        };
        // Listening before the ready file exists: a signal sent the moment it appears drains.
        // SIGHUP (a closed terminal) stops it as gracefully as Ctrl-C, so a temporary
        // `--overlay` composite is removed then too.
        let signals = crate::signals::ShutdownSignals::listen(true);
        let stdin_closed = stdin_eof(args.stop_on_stdin_eof);
        let stop = async {
            tokio::select! {
                _ = signals.recv() => {}
                () = stdin_closed => {}
            }
        };
        tokio::pin!(stop);
        // Banner first: whoever waits for the ready file finds the banner already written.
        print_banner(&twin_name, &listeners, route_count, &info, &resolved);
        for line in &lua_lines {
            eprintln!("{line}");
        }
        let ready = wraith_server::ready_document(&listeners, &info);
        let ready_file = match &args.ready_json {
            Some(path) => {
                let text = wraith_model::to_canonical_json(&ready).map_err(|e| {
                    CliError::runtime(anyhow!("cannot render the ready document: {e}"))
                })?;
                let written = super::ready_file::ReadyFile::write_or_stop(path, text, &mut stop)
                    .await
                    .map_err(|e| {
                        CliError::runtime(anyhow!(
                            "--ready-json {}: cannot write the ready file: {e}",
                            path.display()
                        ))
                    })?;
                match written {
                    Some(file) => Some(file),
                    // Stopped while the file could not be written yet (a fifo with no reader):
                    // nothing was served.
                    None => {
                        eprintln!("wraith serve: stopped");
                        return Ok(());
                    }
                }
            }
            None => None,
        };
        if args.json {
            // Canonical, as every `--json` output and the ready file itself.
            match wraith_model::to_canonical_json(&ready) {
                Ok(s) => outln!("{}", s.trim_end()),
                Err(e) => eprintln!("error: cannot render JSON output: {e}"),
            }
        }
        let mut settings = ServeSettings::new(info);
        settings.control_token = token;
        settings.debug = resolved.debug;
        settings.drain_timeout = resolved.drain_timeout;
        settings.idle_timeout = resolved.idle_timeout;
        settings.max_pending_body_bytes = resolved.max_pending_body_bytes;
        settings.default_clock_epoch = resolved.clock.base_epoch;
        settings.layers = layers;
        let outcome = wraith_server::serve(listeners, engine, settings, stop).await;
        if let Some(file) = ready_file {
            file.remove();
        }
        if outcome.drained {
            eprintln!("wraith serve: stopped");
        } else {
            eprintln!(
                "wraith serve: stopped; some requests were still running after the {} ms drain timeout ([serve.limits] request_drain_timeout_ms)",
                resolved.drain_timeout.as_millis()
            );
        }
        Ok::<(), CliError>(())
    });
    // Past the drain timeout nothing is waited for: a handler still inside one long library
    // call (which its deadline cannot interrupt) would otherwise hold the exit until it ends.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Why `[serve] session_mode` cannot be served, if it names a mode other than `header`: the
/// session contract keys namespaces by the `X-Wraith-Session` header alone, and serving a
/// cookie or path mode as the header would put every client in one shared world unannounced.
pub(crate) fn unbuilt_session_mode(cfg: &TwinConfig) -> Option<String> {
    let mode = match cfg.serve.session_mode {
        wraith_twin::SessionMode::Header => return None,
        wraith_twin::SessionMode::Cookie => "cookie",
        wraith_twin::SessionMode::Path => "path",
    };
    Some(format!(
        "[serve] session_mode = \"{mode}\" is not built: sessions are keyed by the \
         X-Wraith-Session header only (the session contract), so every client would share one \
         world; remove the key or set it to \"header\", and send X-Wraith-Session"
    ))
}

/// Resolves once standard input reaches its end (read on a plain thread of its own, as a
/// blocking read never returns to the runtime); never when `watch` is false.
async fn stdin_eof(watch: bool) {
    if !watch {
        return std::future::pending().await;
    }
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        let _ = tx.send(());
    });
    // A dropped sender (the thread could not run) is an end too.
    let _ = rx.await;
}

/// How long the runtime may take to stop its tasks once serving ended (drained, or past the
/// drain timeout).
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("WRAITH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(crate::output::stderr_colours())
        .try_init();
}

/// Map an incoming `Authorization` value to the form the recordings hold (the scrubber's
/// tokenized credential), so exact replay can prefer moments recorded for the same principal.
/// Without a usable scrubber the engine compares values verbatim, which only costs that
/// preference; say so instead of refusing to serve.
fn principal_map(
    twin: &TwinDir,
    warnings: &mut Vec<String>,
) -> Option<wraith_engine::PrincipalMap> {
    match wraith_recording::scrub::Scrubber::load(&twin.scrub_toml()) {
        Ok(scrubber) => Some(Arc::new(move |name: &str, value: &str| {
            scrubber.recorded_header_value(name, value)
        })),
        Err(e) => {
            warnings.push(format!(
                "cannot recognise clients by their recorded credentials ({e}); replay ignores who is asking"
            ));
            None
        }
    }
}

/// The twin's declared outbound policy: `[serve] strip_headers`, the `scrub.toml` rules that
/// can reach a response (header, JSONPath and regex scopes; cookie and query-parameter rules
/// only ever match requests), its `[pii]` section, and the scrub key, so serve-time envelopes
/// are keyed like record-time tokens. A twin without a `scrub.toml`, or without a usable key
/// file, still gets the default policy (header allowlist and PII pass under a fixed key), with
/// a warning. A `scrub.toml` that is there but cannot be read or parsed is refused as `wraith
/// import` refuses it: answering without its rules would send what they are meant to hide; so
/// is a run under `CI=true` without `WRAITH_HMAC_KEY` (exit 3).
pub fn outbound_policy(
    twin: &TwinDir,
    strip_headers: bool,
    warnings: &mut Vec<String>,
) -> Result<wraith_engine::OutboundPolicy, CliError> {
    use wraith_engine::{OutboundPolicy, OutboundRule, RuleAction, RuleTarget};
    use wraith_recording::scrub::{Action, ApplyTo, Scope, TokenizeMode};
    let mut policy = OutboundPolicy {
        strip_headers,
        ..OutboundPolicy::default()
    };
    let path = twin.scrub_toml();
    let scrubber = match wraith_recording::scrub::Scrubber::load(&path) {
        Ok(s) => s,
        // Under CI without WRAITH_HMAC_KEY the twin's rules and `[pii]` section cannot be
        // keyed as on the machines that recorded it: refused (exit 3), as import and record
        // refuse, rather than answered under another policy.
        Err(
            e @ (wraith_recording::ScrubError::Policy { .. }
            | wraith_recording::ScrubError::Read { .. }
            | wraith_recording::ScrubError::KeyRequiredInCi),
        ) => return Err(CliError::scrub(e)),
        Err(e) => {
            warnings.push(format!(
                "outbound scrub uses only the default PII pass and a fixed key ({e})"
            ));
            return Ok(policy);
        }
    };
    for rule in &scrubber.policy().rules {
        let target = match rule.scope {
            Scope::Header => RuleTarget::Header {
                name: rule.pattern.clone(),
            },
            Scope::Jsonpath => RuleTarget::JsonPath {
                path: rule.pattern.clone(),
            },
            Scope::Regex => RuleTarget::Regex {
                pattern: rule.pattern.clone(),
                header_values: rule.apply_to.contains(&ApplyTo::HeaderValues),
                body: rule.apply_to.contains(&ApplyTo::Body),
            },
            Scope::Cookie | Scope::QueryParam => continue,
        };
        let action = match rule.action {
            Action::Tokenize => RuleAction::Tokenize,
            Action::Pseudonymize => RuleAction::Pseudonymize,
            Action::Redact => RuleAction::Redact,
            Action::Mask => RuleAction::Mask {
                replacement: rule.replacement.clone().unwrap_or_default(),
            },
        };
        policy.rules.push(OutboundRule {
            id: rule.id.clone(),
            target,
            action,
        });
    }
    policy.pii = pii_section(&path, warnings)?;
    // Serve-time envelopes are keyed from the scrub key (one-way: the key itself never leaves
    // the scrubber), and `tokenize` matches record-time tokens exactly.
    policy.key = scrubber
        .tokenize("wraith-outbound-envelope-key/1")
        .into_bytes();
    if scrubber.policy().tokenize_mode == TokenizeMode::Hmac {
        let s = scrubber.clone();
        policy.tokenizer = Some(Arc::new(move |v: &str| s.tokenize(v)));
    }
    Ok(policy)
}

/// `scrub.toml`'s `[pii]` section as the outbound PII pass takes it: a key of the wrong type is
/// refused (exit 1), an unknown or unbuilt key a warning. A file that does not read or parse
/// has none (the scrub policy's own load refuses it first).
pub(crate) fn pii_section(
    path: &std::path::Path,
    warnings: &mut Vec<String>,
) -> Result<wraith_engine::PiiOptions, CliError> {
    let mut out = wraith_engine::PiiOptions::default();
    let text = wraith_twin::read_file_to_string(path).unwrap_or_default();
    let table: toml::Table = toml::from_str(&text).unwrap_or_default();
    if let Some(pii) = table.get("pii").and_then(|v| v.as_table()) {
        let strings = |v: Option<&toml::Value>, key: &str| -> Result<Vec<String>, CliError> {
            match v {
                None => Ok(Vec::new()),
                Some(toml::Value::Array(a)) => a
                    .iter()
                    .map(|x| {
                        x.as_str().map(str::to_string).ok_or_else(|| {
                            CliError::usage(anyhow!(
                                "{}: [pii] {key} must be a list of path strings",
                                path.display()
                            ))
                        })
                    })
                    .collect(),
                Some(_) => Err(CliError::usage(anyhow!(
                    "{}: [pii] {key} must be a list of path strings",
                    path.display()
                ))),
            }
        };
        for key in pii.keys() {
            match key.as_str() {
                "detect" | "allowlist" | "fields" | "allow" => {}
                "default_action" => warnings.push(format!(
                    "{}: [pii] default_action is not built: the PII pass envelopes what it finds \
                     (as `tokenize` does); keep a field with [[pii.allow]] or the allowlist",
                    path.display()
                )),
                other => warnings.push(format!(
                    "{}: [pii] has an unknown key `{other}`, which is ignored (known: detect, \
                     allowlist, fields.always, [[pii.allow]])",
                    path.display()
                )),
            }
        }
        match pii.get("detect") {
            None => {}
            Some(toml::Value::Boolean(b)) => out.detect = *b,
            Some(_) => {
                return Err(CliError::usage(anyhow!(
                    "{}: [pii] detect must be true or false",
                    path.display()
                )));
            }
        }
        out.allowlist = strings(pii.get("allowlist"), "allowlist")?;
        out.accepted = pii_allow_entries(pii.get("allow"), path)?;
        let fields = pii.get("fields").and_then(|f| f.as_table());
        out.always = strings(fields.and_then(|f| f.get("always")), "fields.always")?;
    }
    Ok(out)
}

/// `[[pii.allow]]` entries: `path` (the allowlist's glob form) and `reason` are required, so
/// every value the PII pass lets through says why; `value` narrows the entry to one value.
fn pii_allow_entries(
    v: Option<&toml::Value>,
    path: &std::path::Path,
) -> Result<Vec<wraith_engine::PiiAllow>, CliError> {
    let bad = |what: String| {
        CliError::usage(anyhow!(
            "{}: {what}; write each as [[pii.allow]] with path = \"$.user.name\", reason = \"why \
             it is not personal data\" and optionally value = \"<the one value accepted>\"",
            path.display()
        ))
    };
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    let Some(entries) = v.as_array() else {
        return Err(bad(
            "[pii] allow must be an array of tables ([[pii.allow]])".to_string(),
        ));
    };
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let n = i + 1;
        let Some(t) = entry.as_table() else {
            return Err(bad(format!("[[pii.allow]] entry {n} must be a table")));
        };
        if let Some(k) = t
            .keys()
            .find(|k| !matches!(k.as_str(), "path" | "value" | "reason"))
        {
            return Err(bad(format!(
                "[[pii.allow]] entry {n} has an unknown key `{k}` (allowed: path, value, reason)"
            )));
        }
        let text = |key: &str| t.get(key).and_then(toml::Value::as_str).map(str::trim);
        let Some(p) = text("path").filter(|p| !p.is_empty()) else {
            return Err(bad(format!(
                "[[pii.allow]] entry {n} needs a `path` string"
            )));
        };
        let Some(reason) = text("reason").filter(|r| !r.is_empty()) else {
            return Err(bad(format!(
                "[[pii.allow]] entry {n} ({p}) needs a non-empty `reason`"
            )));
        };
        let value = match t.get("value") {
            None => None,
            Some(toml::Value::String(s)) => Some(s.clone()),
            Some(_) => {
                return Err(bad(format!(
                    "[[pii.allow]] entry {n} ({p}): `value` must be a string"
                )));
            }
        };
        out.push(wraith_engine::PiiAllow {
            path: p.to_string(),
            value,
            reason: reason.to_string(),
        });
    }
    Ok(out)
}

/// Re-run synth when the model is missing or older than the newest recording.
fn ensure_model_fresh(twin: &TwinDir) -> Result<(), CliError> {
    let model_path = twin.model_dir().join("twin.wir.json");
    let model_mtime = std::fs::metadata(&model_path)
        .and_then(|m| m.modified())
        .ok();
    let newest_rec = newest_recording_mtime(&twin.sessions_dir());
    let reason = match (model_mtime, newest_rec) {
        (None, None) => {
            return Err(CliError::usage(anyhow!(
                "{} has no model ({}) and no recordings to build one from; record (`wraith record`) or import (`wraith import`) traffic first, then run `wraith synth`",
                twin.root().display(),
                model_path.display()
            )));
        }
        (None, Some(_)) => "there is no model yet",
        (Some(m), Some(r)) if r > m => "the recordings are newer than the model",
        _ => return Ok(()),
    };
    eprintln!("wraith serve: {reason}; running `wraith synth` first");
    auto_synth(twin)
}

/// Synthesize the model in place (the same work as `wraith synth <twin>`).
fn auto_synth(twin: &TwinDir) -> Result<(), CliError> {
    let summary = crate::cmd::synth::synthesize_twin(twin, None)?;
    eprintln!(
        "wraith serve: synth: {}",
        crate::cmd::synth::summary_line(&summary)
    );
    Ok(())
}

/// Newest file-system time among the recording sessions (their folders and manifests), to
/// decide whether the model is stale.
fn newest_recording_mtime(sessions_dir: &Path) -> Option<SystemTime> {
    let mut newest: Option<SystemTime> = None;
    let entries = std::fs::read_dir(sessions_dir).ok()?;
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        for p in [path.clone(), path.join("manifest.json")] {
            if let Ok(t) = std::fs::metadata(&p).and_then(|m| m.modified()) {
                newest = Some(newest.map_or(t, |n| n.max(t)));
            }
        }
    }
    newest
}

/// Recorded time (unix µs) of the newest recording, from the session manifests.
fn newest_recording_us(sessions_dir: &Path) -> Option<u64> {
    let entries = std::fs::read_dir(sessions_dir).ok()?;
    let mut newest: Option<u64> = None;
    for entry in entries.flatten() {
        let manifest = entry.path().join("manifest.json");
        let Ok(text) = wraith_twin::read_file_to_string(&manifest) else {
            continue;
        };
        let Ok(m) = serde_json::from_str::<wraith_recording::Manifest>(&text) else {
            continue;
        };
        let t = m.end_time_us.max(m.start_time_us);
        newest = Some(newest.map_or(t, |n| n.max(t)));
    }
    newest
}

fn unix_now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn rfc3339_from_us(us: i64) -> Option<String> {
    let ts = jiff::Timestamp::from_microsecond(us).ok()?;
    // Whole seconds, UTC, `Z`: the spelling the contract shows.
    let secs = jiff::Timestamp::from_second(ts.as_second()).ok()?;
    Some(secs.to_string())
}

fn human_age(secs: u64) -> String {
    let d = secs / 86_400;
    let h = (secs % 86_400) / 3600;
    let m = (secs % 3600) / 60;
    if d > 0 {
        format!("{d}d {h}h")
    } else if h > 0 {
        format!("{h}h {m}m")
    } else {
        format!("{m}m {}s", secs % 60)
    }
}

fn print_banner(twin: &str, listeners: &Listeners, routes: usize, info: &TwinInfo, r: &Resolved) {
    let also: Vec<String> = listeners
        .local_addrs()
        .iter()
        .skip(1)
        .map(ToString::to_string)
        .collect();
    let also = if also.is_empty() {
        String::new()
    } else {
        format!(" (also {})", also.join(", "))
    };
    eprintln!("wraith serve: twin `{twin}` on {}{also}", listeners.url());
    let recorded = match &info.recorded_at {
        Some(t) => format!(", newest recording {t}"),
        None => String::new(),
    };
    eprintln!(
        "  routes: {routes} · twin age: {}{recorded} · fidelity: {} · unknown entities: {}",
        human_age(info.twin_age_seconds),
        match r.fidelity {
            Fidelity::Strict => "strict",
            Fidelity::Synth => "synth",
            Fidelity::Fuzzy => "fuzzy",
        },
        match r.unknown_entity {
            UnknownEntity::Synthesize => "synthesize",
            UnknownEntity::NotFound => "not_found",
        }
    );
    for w in &info.warnings {
        eprintln!("  warning: {w}");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_handler_clock_stops_where_the_configured_clock_range_ends() {
        assert_eq!(
            wraith_engine::handler::LAST_CLOCK_SECS,
            *wraith_twin::CLOCK_EPOCH_RANGE.end()
        );
    }
}
