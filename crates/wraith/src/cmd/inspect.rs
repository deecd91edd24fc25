//! `wraith inspect <twin>`: what a twin's recordings hold — sessions, exchanges, methods, hosts,
//! statuses, the newest recording time and a line per session — and, once synthesized, the
//! model's routes that drifted between recording runs with their findings (`Route::drift`).
//! Output is deterministic (sorted maps, sessions in id order, routes in model order), so it
//! can be snapshotted and diffed.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::anyhow;
use serde::Serialize;
use wraith_recording::har::BaseUrl;
use wraith_recording::read_sessions;
use wraith_recording::terminal::shown;
use wraith_twin::{TwinConfig, TwinDir};

use crate::exit::{CliError, CmdResult};
use crate::output::print_json;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  wraith inspect shop
  wraith inspect twins/shop --json

Exit codes: 0 printed · 1 usage or configuration error (the twin not found, a broken
wraith.toml) · 4 a recording or the model cannot be read.")]
pub struct Args {
    /// Twin name under ./twins/ or path to a twin folder.
    pub twin: String,
    /// Print the summary as JSON on stdout.
    #[arg(long, default_value_if("format", "json", "true"))]
    pub json: bool,
    /// Output format: `text` or `pretty` (the same human-readable output, the default), or
    /// `json` (as `--json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<super::Format>,
    /// Static per-route provenance of the model instead: what each route can answer from
    /// (recorded, template, fixture, miss) and how many template leaves are holes of each kind.
    #[arg(long)]
    pub provenance: bool,
}

#[derive(Serialize)]
struct SessionSummary {
    session_id: String,
    tags: Vec<String>,
    exchanges: usize,
    complete: bool,
    proxy_mode: String,
    /// RFC 3339 time of the first request, `null` for an empty session.
    started: Option<String>,
    statuses: BTreeMap<String, usize>,
}

#[derive(Serialize)]
struct Inspection {
    twin: String,
    base_url: String,
    sessions: usize,
    exchanges: usize,
    methods: BTreeMap<String, usize>,
    hosts: BTreeMap<String, usize>,
    statuses: BTreeMap<String, usize>,
    /// RFC 3339 start time of the most recent recorded request, `null` when there is none.
    newest_recording: Option<String>,
    per_session: Vec<SessionSummary>,
    /// Routes in the model (`null` before `wraith synth`).
    model_routes: Option<usize>,
    /// The model's routes whose newest recording run answers in another shape or status than
    /// earlier runs, in model order, each with its findings (`null` before `wraith synth`).
    drifted_routes: Option<Vec<wraith_check::coverage::DriftedRoute>>,
}

fn rfc3339(us: u64) -> Option<String> {
    jiff::Timestamp::from_microsecond(i64::try_from(us).ok()?)
        .ok()
        .map(|t| t.to_string())
}

pub fn run(args: Args) -> CmdResult {
    let twin = TwinDir::resolve(&args.twin).map_err(CliError::usage)?;
    // Loaded first: a broken or unreadable wraith.toml is an error whatever is asked.
    let config = TwinConfig::load(&twin).map_err(CliError::twin)?;
    for w in &config.warnings {
        eprintln!("warning: {w}");
    }
    if args.provenance {
        return super::coverage::static_provenance(&twin, args.json);
    }
    let base_host = BaseUrl::parse(&config.service.base_url)
        .map(|b| b.authority)
        .map_err(|m| CliError::usage(anyhow!("[service] base_url: {m}")))?;
    let sessions = read_sessions(&twin.sessions_dir()).map_err(CliError::recording)?;
    super::synth::warn_session_problems(&twin);

    let mut out = Inspection {
        twin: twin.name(),
        base_url: config.service.base_url.clone(),
        sessions: sessions.len(),
        exchanges: 0,
        methods: BTreeMap::new(),
        hosts: BTreeMap::new(),
        statuses: BTreeMap::new(),
        newest_recording: None,
        per_session: Vec::with_capacity(sessions.len()),
        model_routes: None,
        drifted_routes: None,
    };
    // The model is optional here: inspect describes recordings first, and a twin not yet
    // synthesized simply has no drift to show. A model that exists but does not load is an
    // error (the same one `check` gives).
    let model_path = twin.model_dir().join("twin.wir.json");
    if model_path.exists() {
        let model = super::check::load_model(&model_path)?;
        out.model_routes = Some(model.routes.len());
        out.drifted_routes = Some(
            model
                .routes
                .iter()
                .filter(|r| !r.drift.is_empty())
                .map(|r| wraith_check::coverage::DriftedRoute {
                    route: r.label(),
                    drift: r.drift.clone(),
                })
                .collect(),
        );
    }
    let mut newest: Option<u64> = None;
    for s in &sessions {
        let mut statuses = BTreeMap::new();
        for ex in &s.exchanges {
            *out.methods.entry(ex.request.method.clone()).or_default() += 1;
            let host = match &ex.request.origin {
                Some(origin) => origin
                    .split_once("://")
                    .map(|(_, a)| a.to_string())
                    .unwrap_or_else(|| origin.clone()),
                None => base_host.clone(),
            };
            *out.hosts.entry(host).or_default() += 1;
            *out.statuses
                .entry(ex.response.status.to_string())
                .or_default() += 1;
            *statuses.entry(ex.response.status.to_string()).or_default() += 1;
            let t = ex.timing.request_start_us;
            newest = Some(newest.map_or(t, |n| n.max(t)));
        }
        out.exchanges += s.exchanges.len();
        out.per_session.push(SessionSummary {
            session_id: s.manifest.session_id.clone(),
            tags: s.manifest.tags.clone(),
            exchanges: s.exchanges.len(),
            complete: s.manifest.complete,
            proxy_mode: s.manifest.proxy_mode.clone(),
            started: s
                .exchanges
                .first()
                .and_then(|e| rfc3339(e.timing.request_start_us)),
            statuses,
        });
    }
    out.newest_recording = newest.and_then(rfc3339);

    if args.json {
        print_json(&out);
        return Ok(ExitCode::SUCCESS);
    }
    outln!("twin {} ({})", out.twin, out.base_url);
    outln!("{} session(s), {} exchange(s)", out.sessions, out.exchanges);
    if out.exchanges == 0 {
        outln!(
            "no recordings yet: run `wraith record {0}` or `wraith import {0} FILE.har`",
            args.twin
        );
        return Ok(ExitCode::SUCCESS);
    }
    let fmt = |m: &BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, v)| format!("{} {v}", shown(k)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    outln!("methods:  {}", fmt(&out.methods));
    outln!("hosts:    {}", fmt(&out.hosts));
    outln!("statuses: {}", fmt(&out.statuses));
    if let Some(n) = &out.newest_recording {
        outln!("newest:   {n}");
    }
    outln!();
    for s in &out.per_session {
        outln!(
            "{}  {:>4} exchange(s)  {:<7}  {}{}",
            s.session_id,
            s.exchanges,
            s.proxy_mode,
            shown(&s.tags.join(",")),
            if s.complete { "" } else { "  (incomplete)" }
        );
    }
    match (&out.drifted_routes, out.model_routes) {
        (Some(drifted), Some(total)) => {
            outln!();
            if drifted.is_empty() {
                outln!("drift: none of {total} route(s) drifted between recording runs");
            } else {
                outln!(
                    "drift: {} of {total} route(s) drifted between recording runs:",
                    drifted.len()
                );
                for r in drifted {
                    outln!("  {}", shown(&r.route));
                    for f in &r.drift {
                        let change = match (&f.earlier, &f.newer) {
                            (Some(e), Some(n)) => format!(" {} -> {}", shown(e), shown(n)),
                            _ => String::new(),
                        };
                        outln!(
                            "    {} at {:?}{change} ({} earlier, {} newer answer(s), since {})",
                            f.kind.as_str(),
                            f.at,
                            f.earlier_answers,
                            f.newer_answers,
                            f.since
                        );
                    }
                }
            }
        }
        _ => {
            outln!();
            outln!("drift: no model yet (run `wraith synth {}`)", args.twin);
        }
    }
    Ok(ExitCode::SUCCESS)
}
