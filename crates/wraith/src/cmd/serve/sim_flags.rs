//! The simulation flags of `wraith serve`: faults, chaos, latency, rate limits, the trace ring
//! and the access log, turned into the server's [`Layers`].

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::anyhow;
use wraith_engine::sim::{
    FaultProfile, LatencyMode, LatencyPolicy, Limit, RateAlgorithm, RateLimitConfig, RateOverride,
    SimClock, SimConfig, Simulation, chaos_profile,
};
use wraith_model::Model;
use wraith_server::{AccessLog, AccessLogFormat, Layers, TraceRing};

use crate::exit::CliError;

#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Simulation (all off by default; shared by every session)")]
pub struct SimArgs {
    /// Fault profile (TOML: `name`, `[[rules]]` with `route`, `percentage`, optional
    /// `header_match` and `count`, and `[rules.fault_type]` of type error, delay, timeout,
    /// drop, throttle or partial). First matching rule wins. A malformed file is refused.
    #[arg(long, value_name = "FILE")]
    pub fault_profile: Option<PathBuf>,
    /// Seed of the fault RNG (ChaCha8) that rolls each rule's percentage. Default 0.
    #[arg(long, value_name = "N")]
    pub fault_seed: Option<u64>,
    /// Derive a fault profile from the model's routes (≈30% errors, ≈25% delays, ≈15%
    /// throttling, ≈5% timeouts): the same seed and twin always give the same profile. Its
    /// rules follow any --fault-profile rules.
    #[arg(long, value_name = "N")]
    pub chaos_seed: Option<u64>,
    /// How responses are delayed (slept after the twin answered). recorded = each route's
    /// recorded p50/p90/p99, at most --latency-max-ms (default `[serve.latency] max_ms`, 5000);
    /// normal = --latency-ms mean, --latency-stddev-ms spread. A
    /// parameter below that the chosen mode does not take (or any of them without a mode) is
    /// refused.
    #[arg(long, value_enum, value_name = "MODE")]
    pub latency_mode: Option<LatencyModeArg>,
    /// fixed: the delay; normal: the mean. Needs --latency-mode fixed or normal.
    #[arg(long, value_name = "MS")]
    pub latency_ms: Option<u64>,
    /// uniform: lower bound. Needs --latency-mode uniform.
    #[arg(long, value_name = "MS")]
    pub latency_min_ms: Option<u64>,
    /// uniform: upper bound (reversed bounds are swapped); recorded: the most delay (default
    /// `[serve.latency] max_ms`, 5000). Needs --latency-mode uniform or recorded.
    #[arg(long, value_name = "MS")]
    pub latency_max_ms: Option<u64>,
    /// percentile: median delay. Needs --latency-mode percentile.
    #[arg(long, value_name = "MS")]
    pub latency_p50: Option<u64>,
    /// percentile: 95th percentile (default: the p50). Needs --latency-mode percentile.
    #[arg(long, value_name = "MS")]
    pub latency_p95: Option<u64>,
    /// percentile: 99th percentile (default: the p95). Needs --latency-mode percentile.
    #[arg(long, value_name = "MS")]
    pub latency_p99: Option<u64>,
    /// normal: standard deviation. Default 0. Needs --latency-mode normal.
    #[arg(long, value_name = "MS")]
    pub latency_stddev_ms: Option<f64>,
    /// Latency config (TOML: `[default] mode, mean_ms, stddev_ms, …` and `[[routes]] route,
    /// mode, ms, …`). --latency-mode, when given, replaces its [default].
    #[arg(long, value_name = "FILE")]
    pub latency_config: Option<PathBuf>,
    /// Seed of the latency RNG. Default 0.
    #[arg(long, value_name = "N")]
    pub latency_seed: Option<u64>,
    /// Enable rate limiting; with a value (`N/W`, e.g. `100/60` or `5/1sec`), every route gets
    /// that limit per session unless an override matches. `[serve.rate_limits."METHOD /path"]`
    /// entries of wraith.toml (`limit`, `window_seconds`) enable it too, as overrides.
    #[arg(long, value_name = "N/W", num_args = 0..=1, default_missing_value = "")]
    pub rate_limit: Option<String>,
    /// A per-route limit, repeatable: `"METHOD /path=N/Wsec"`, e.g. `"GET /v1/foo=5/1sec"`
    /// (`=5/60` means 60 seconds). Implies --rate-limit. Checked before the wraith.toml
    /// `[serve.rate_limits]` entries, so a flag wins where both select a request.
    #[arg(long, value_name = "SPEC")]
    pub rate_limit_override: Vec<String>,
    /// Window algorithm of the rate limits.
    #[arg(long, value_enum, value_name = "ALGO")]
    pub rate_limit_algorithm: Option<RateAlgorithmArg>,
    /// Keep the last requests in a ring served at /__wraith/trace/log and /__wraith/trace/{id}.
    #[arg(long)]
    pub trace: bool,
    /// Entries the trace ring keeps (oldest evicted first), at least 1. Default 1000.
    #[arg(long, value_name = "N")]
    pub trace_capacity: Option<std::num::NonZeroUsize>,
    /// One line per request on stderr. Default: compact on a terminal, json when piped.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub access_log: Option<AccessLogArg>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LatencyModeArg {
    None,
    Fixed,
    Uniform,
    Percentile,
    Recorded,
    Normal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RateAlgorithmArg {
    Fixed,
    Sliding,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AccessLogArg {
    Compact,
    Json,
    Off,
}

fn read(path: &Path, what: &str) -> Result<String, CliError> {
    wraith_twin::read_file_to_string(path).map_err(|e| {
        CliError::read_text(
            e.kind(),
            anyhow!("{what} {}: cannot read the file: {e}", path.display()),
        )
    })
}

/// The simulation tables of `wraith.toml`: `[serve.rate_limits."METHOD /path"]`, as the rate
/// limits they stand for, and `[serve.latency]`.
#[derive(Debug, Clone, Copy)]
pub struct ConfigLimits<'a> {
    /// The file, for messages.
    pub file: &'a Path,
    pub table: &'a std::collections::BTreeMap<String, wraith_twin::RateLimit>,
    pub latency: &'a wraith_twin::LatencyConfig,
}

/// `[serve.latency]` as the default latency mode: `fixed` waits `min_ms`; `recorded` draws
/// from the route's recorded timings and `scaled` multiplies that draw by `multiplier`, both
/// held within `min_ms..=max_ms`. Bounds the wrong way round, a multiplier that is no finite
/// number ≥ 0, or one set for another mode than `scaled` are refused naming the key.
fn config_latency(limits: ConfigLimits<'_>) -> Result<LatencyMode, CliError> {
    use wraith_twin::LatencyMode as Toml;
    let l = limits.latency;
    let bad = |key: &str, reason: String| {
        CliError::usage(anyhow!(
            "{}: [serve.latency] {key}: {reason}",
            limits.file.display()
        ))
    };
    if l.min_ms > l.max_ms {
        return Err(bad(
            "min_ms",
            format!(
                "min_ms = {} is above max_ms = {}; swap them",
                l.min_ms, l.max_ms
            ),
        ));
    }
    if !l.multiplier.is_finite() || l.multiplier < 0.0 {
        return Err(bad(
            "multiplier",
            format!("must be a finite number >= 0, found {}", l.multiplier),
        ));
    }
    if l.multiplier != 1.0 && l.mode != Toml::Scaled {
        return Err(bad(
            "multiplier",
            "applies only to mode = \"scaled\" (the recorded timings times the multiplier)"
                .to_string(),
        ));
    }
    Ok(match l.mode {
        Toml::None => LatencyMode::None,
        Toml::Fixed => LatencyMode::Fixed { ms: l.min_ms },
        Toml::Recorded => LatencyMode::Scaled {
            multiplier: 1.0,
            min_ms: l.min_ms,
            max_ms: l.max_ms,
        },
        Toml::Scaled => LatencyMode::Scaled {
            multiplier: l.multiplier,
            min_ms: l.min_ms,
            max_ms: l.max_ms,
        },
    })
}

/// The `wraith.toml` rate limits as overrides, in key order; a key that is no route pattern
/// or a zero limit or window is refused naming the entry.
fn config_overrides(limits: ConfigLimits<'_>) -> Result<Vec<RateOverride>, CliError> {
    limits
        .table
        .iter()
        .map(|(route, l)| config_override(limits.file, route, l))
        .collect()
}

/// One `[serve.rate_limits."<route>"]` entry as an override, or its refusal.
fn config_override(
    file: &Path,
    route: &str,
    l: &wraith_twin::RateLimit,
) -> Result<RateOverride, CliError> {
    let bad = |reason: String| {
        CliError::usage(anyhow!(
            "{}: [serve.rate_limits.\"{route}\"]: {reason}",
            file.display()
        ))
    };
    let route_pattern = wraith_engine::sim::RoutePattern::parse(route)
        .map_err(|r| bad(format!("the key is not a route pattern: {r}")))?;
    if l.limit == 0 || l.window_seconds == 0 {
        return Err(bad(format!(
            "limit = {} and window_seconds = {} must both be at least 1",
            l.limit, l.window_seconds
        )));
    }
    Ok(RateOverride {
        route: route_pattern,
        limit: Limit {
            limit: l.limit,
            window_secs: l.window_seconds,
        },
    })
}

/// What `serve` refuses of `[serve.latency]` (the first problem of the table) and of
/// `[serve.rate_limits]` (every bad entry, in key order), as `serve` words each refusal:
/// `wraith lint` reports them.
pub(crate) fn config_refusals(limits: ConfigLimits<'_>) -> Vec<CliError> {
    let latency = config_latency(limits).err();
    let rates = limits
        .table
        .iter()
        .filter_map(|(route, l)| config_override(limits.file, route, l).err());
    latency.into_iter().chain(rates).collect()
}

/// The simulation configuration the flags ask for, with the rate limits `wraith.toml`
/// declares after any `--rate-limit-override` (first match wins, so a flag takes precedence).
pub fn sim_config(
    args: &SimArgs,
    model: &Model,
    limits: ConfigLimits<'_>,
) -> Result<SimConfig, CliError> {
    let mut faults: Option<FaultProfile> = None;
    if let Some(path) = &args.fault_profile {
        let text = read(path, "--fault-profile")?;
        let profile = FaultProfile::parse(&path.display().to_string(), &text)
            .map_err(|e| CliError::usage(anyhow!("--fault-profile: {e}")))?;
        faults = Some(profile);
    }
    if let Some(seed) = args.chaos_seed {
        let chaos = chaos_profile(model, seed);
        match &mut faults {
            Some(p) => p.rules.extend(chaos.rules),
            None => faults = Some(chaos),
        }
    }
    let mut latency = match &args.latency_config {
        Some(path) => {
            let text = read(path, "--latency-config")?;
            LatencyPolicy::parse_config(&path.display().to_string(), &text)
                .map_err(|e| CliError::usage(anyhow!("--latency-config: {e}")))?
        }
        // Without a latency file, `[serve.latency]` of wraith.toml is the default mode; a
        // --latency-mode flag replaces either below.
        None => LatencyPolicy {
            default: config_latency(limits)?,
            routes: Vec::new(),
        },
    };
    check_latency_parameters(args)?;
    if let Some(mode) = args.latency_mode {
        let need = |v: Option<u64>, flag: &str, mode: &str| {
            v.ok_or_else(|| CliError::usage(anyhow!("--latency-mode {mode} needs {flag}")))
        };
        latency.default = match mode {
            LatencyModeArg::None => LatencyMode::None,
            LatencyModeArg::Fixed => LatencyMode::Fixed {
                ms: need(args.latency_ms, "--latency-ms", "fixed")?,
            },
            LatencyModeArg::Uniform => {
                let a = need(args.latency_min_ms, "--latency-min-ms", "uniform")?;
                let b = need(args.latency_max_ms, "--latency-max-ms", "uniform")?;
                LatencyMode::Uniform {
                    min_ms: a.min(b),
                    max_ms: a.max(b),
                }
            }
            LatencyModeArg::Percentile => {
                let p50 = need(args.latency_p50, "--latency-p50", "percentile")?;
                LatencyMode::percentile(p50, args.latency_p95, args.latency_p99).map_err(
                    |reason| CliError::usage(anyhow!("--latency-mode percentile: {reason}")),
                )?
            }
            // Held at `[serve.latency] max_ms` (5 s by default) as that table's `recorded`
            // is, or at --latency-max-ms: a recorded timing may be absurd (a HAR entry
            // hours long), and a twin that answers never is no use.
            LatencyModeArg::Recorded => LatencyMode::Scaled {
                multiplier: 1.0,
                min_ms: 0,
                max_ms: args.latency_max_ms.unwrap_or(limits.latency.max_ms),
            },
            LatencyModeArg::Normal => {
                let stddev_ms = args.latency_stddev_ms.unwrap_or(0.0);
                if !(stddev_ms.is_finite() && stddev_ms >= 0.0) {
                    return Err(CliError::usage(anyhow!(
                        "--latency-stddev-ms must be a finite number >= 0"
                    )));
                }
                LatencyMode::Normal {
                    mean_ms: need(args.latency_ms, "--latency-ms (the mean)", "normal")? as f64,
                    stddev_ms,
                }
            }
        };
    }
    let from_config = config_overrides(limits)?;
    let rate_limit = if args.rate_limit.is_some()
        || !args.rate_limit_override.is_empty()
        || !from_config.is_empty()
    {
        let default = match args.rate_limit.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(spec) => Some(
                Limit::parse(spec)
                    .map_err(|reason| CliError::usage(anyhow!("--rate-limit {spec}: {reason}")))?,
            ),
        };
        let mut overrides = args
            .rate_limit_override
            .iter()
            .map(|o| RateOverride::parse(o))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| CliError::usage(anyhow!("--rate-limit-override: {e}")))?;
        overrides.extend(from_config);
        Some(RateLimitConfig {
            default,
            overrides,
            algorithm: match args.rate_limit_algorithm {
                Some(RateAlgorithmArg::Sliding) => RateAlgorithm::Sliding,
                Some(RateAlgorithmArg::Fixed) | None => RateAlgorithm::Fixed,
            },
        })
    } else {
        None
    };
    Ok(SimConfig {
        faults,
        fault_seed: args.fault_seed.unwrap_or(0),
        latency,
        latency_seed: args.latency_seed.unwrap_or(0),
        rate_limit,
    })
}

/// `--latency-mode` names, as the flag spells them.
fn mode_name(mode: LatencyModeArg) -> &'static str {
    match mode {
        LatencyModeArg::None => "none",
        LatencyModeArg::Fixed => "fixed",
        LatencyModeArg::Uniform => "uniform",
        LatencyModeArg::Percentile => "percentile",
        LatencyModeArg::Recorded => "recorded",
        LatencyModeArg::Normal => "normal",
    }
}

/// Refuse a latency parameter that the chosen `--latency-mode` (or its absence) would ignore:
/// a delay asked for and silently not applied is worse than a refusal.
fn check_latency_parameters(args: &SimArgs) -> Result<(), CliError> {
    use LatencyModeArg::{Fixed, Normal, Percentile, Recorded, Uniform};
    let given: [(&str, bool, &[LatencyModeArg]); 7] = [
        ("--latency-ms", args.latency_ms.is_some(), &[Fixed, Normal]),
        (
            "--latency-min-ms",
            args.latency_min_ms.is_some(),
            &[Uniform],
        ),
        (
            "--latency-max-ms",
            args.latency_max_ms.is_some(),
            &[Uniform, Recorded],
        ),
        ("--latency-p50", args.latency_p50.is_some(), &[Percentile]),
        ("--latency-p95", args.latency_p95.is_some(), &[Percentile]),
        ("--latency-p99", args.latency_p99.is_some(), &[Percentile]),
        (
            "--latency-stddev-ms",
            args.latency_stddev_ms.is_some(),
            &[Normal],
        ),
    ];
    for (flag, present, modes) in given {
        if !present || args.latency_mode.is_some_and(|m| modes.contains(&m)) {
            continue;
        }
        let takes = modes
            .iter()
            .map(|m| format!("--latency-mode {}", mode_name(*m)))
            .collect::<Vec<_>>()
            .join(" or ");
        let example = format!("--latency-mode {} {flag} …", mode_name(modes[0]));
        return Err(CliError::usage(match args.latency_mode {
            None => anyhow!(
                "{flag} is a parameter of {takes}, and no --latency-mode was given, so it \
                 would be ignored; add the mode it belongs to (`{example}`)"
            ),
            Some(m) => anyhow!(
                "{flag} is a parameter of {takes}, not of --latency-mode {}, so it would be \
                 ignored; remove it, or use the mode it belongs to (`{example}`)",
                mode_name(m)
            ),
        }));
    }
    Ok(())
}

/// Monotonic time anchored at the wall clock once: unix microseconds that never run backwards
/// (rate-limit windows must not jump when the system clock is adjusted).
fn monotonic_unix_clock() -> SimClock {
    let base = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    let start = Instant::now();
    Arc::new(move || {
        base.saturating_add(i64::try_from(start.elapsed().as_micros()).unwrap_or(i64::MAX))
    })
}

/// The server's layers for these flags.
pub fn layers(args: &SimArgs, model: &Model, limits: ConfigLimits<'_>) -> Result<Layers, CliError> {
    let cfg = sim_config(args, model, limits)?;
    let simulation =
        (!cfg.is_off()).then(|| Arc::new(Simulation::new(cfg, model, monotonic_unix_clock())));
    let trace = args.trace.then(|| {
        Arc::new(TraceRing::new(
            args.trace_capacity
                .map_or(1000, std::num::NonZeroUsize::get),
        ))
    });
    let format = match args.access_log {
        Some(AccessLogArg::Off) => None,
        Some(AccessLogArg::Compact) => Some(AccessLogFormat::Compact),
        Some(AccessLogArg::Json) => Some(AccessLogFormat::Json),
        None if std::io::stderr().is_terminal() => Some(AccessLogFormat::Compact),
        None => Some(AccessLogFormat::Json),
    };
    let access_log = format.map(|format| AccessLog {
        format,
        sink: Arc::new(|line: &str| {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "{line}");
        }),
    });
    Ok(Layers {
        simulation,
        trace,
        access_log,
    })
}
