//! `wraith record <twin>`: run the recording proxy in front of the twin's `[service] base_url`
//! until Ctrl-C / SIGTERM / SIGHUP, then finalize every session and report what was recorded.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use serde_json::json;
use wraith_recorder::{InterceptCa, ProxyMode, Recorder, RecorderConfig, RecorderError, Upstream};
use wraith_recording::scrub::Scrubber;
use wraith_twin::{TwinConfig, TwinDir, write_atomic};

use crate::exit::{CliError, CmdResult};
use crate::output::print_json;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  wraith record shop                      # proxy on [proxy] port (default 8080)
  wraith record shop --port 0 --ready-json ready.json
  wraith record shop --tag checkout --idle-timeout 300
  wraith record shop --duration 600        # stop by itself after ten minutes
  wraith record shop --mode forward        # HTTP_PROXY=<printed URL> in the client
  wraith record shop --mode mitm           # HTTPS_PROXY=<printed URL>, trust record-ca.pem

Modes (--mode, or [proxy] mode in wraith.toml): reverse (default) — point your client at the
printed URL instead of the real API. forward — keep the API's URL and set the client's
HTTP_PROXY to the printed URL: requests to the API's host under its base path are recorded
(plain http:// URLs reach an https:// API over TLS), other hosts pass through unrecorded, and a
CONNECT tunnel to the API's host is refused (its HTTPS could not be read). mitm — forward, and
HTTPS to the API's host is intercepted with a certificate from a CA made for this run (its key
is never written); the CA certificate is written to --ca-cert (default <twin>/record-ca.pem)
before the proxy listens: trust it in the client (SSL_CERT_FILE, REQUESTS_CA_BUNDLE,
NODE_EXTRA_CA_CERTS, curl --cacert). The CA only vouches for the API's host. In forward and
mitm modes a request addressed to the proxy itself (not through it) is handled as in reverse
mode, and the control plane answers there.

In every mode: Ctrl-C (or SIGTERM, or SIGHUP
when its terminal closes), or the end of --duration, stops the proxy: in-flight exchanges get up to [serve.limits] request_drain_timeout_ms (default 5000) to
finish, anything still streaming then is recorded with truncated=true, a request the upstream
has not begun to answer by then is answered 503 recorder_stopping and not recorded (the summary
counts it as cut_unrecorded), and
every session manifest is finalized. An upstream that has not begun to answer within [proxy]
upstream_timeout_ms (default 60000) is given up on (504, not recorded; the summary counts it
as upstream_timeouts); an answer that is not HTTP, or an upstream that cannot be reached, gets
502 (not recorded; counted as transport_failures). A client that pauses longer than [serve.limits]
request_idle_timeout_ms (default 30000) while sending its request is cut off (408 for a body;
nothing is forwarded). A request whose path has a `.` or `..` segment (percent-encoded too) is
sent on as it came and not recorded, since wraith serve refuses such paths (the summary counts
it as dot_segment_paths). Control plane (never forwarded): GET /__wraith/health,
/__wraith/ready, /__wraith/info and POST /__wraith/new-session.

Exit codes: 0 stopped and everything recorded was written · 1 usage or configuration error ·
3 scrub policy refusal (no scrub.toml, or no WRAITH_HMAC_KEY under CI) · 4 IO failure: the twin's
recordings/sessions/ folder cannot be written (checked before listening), the port cannot be
bound, or a recording write failed while running.")]
pub struct Args {
    /// Twin name under ./twins/ or path to a twin folder.
    pub twin: String,
    /// Port to listen on (127.0.0.1); 0 picks a free port. Default: `[proxy] port` (8080).
    #[arg(long)]
    pub port: Option<u16>,
    /// Tag the recorded sessions (repeatable); `synth --tag` can select them later.
    #[arg(long = "tag", value_name = "T")]
    pub tags: Vec<String>,
    /// Close the session after this many seconds without traffic; the next request opens a new one.
    #[arg(long, value_name = "SECS")]
    pub idle_timeout: Option<u64>,
    /// PEM file with an extra CA certificate to trust for an HTTPS upstream.
    #[arg(long, value_name = "FILE")]
    pub upstream_ca: Option<PathBuf>,
    /// Once listening, write `{"record":{"url":...,"port":...,"mode":...}}` to FILE (mitm
    /// mode adds `"ca_cert"`: the CA certificate's path); removed again when record stops. A
    /// file already there must be empty or an earlier run's ready file.
    #[arg(long, value_name = "FILE")]
    pub ready_json: Option<PathBuf>,
    /// Print the final summary as JSON on stdout.
    #[arg(long, default_value_if("format", "json", "true"))]
    pub json: bool,
    /// Output format: `text` or `pretty` (the same human-readable output, the default), or
    /// `json` (as `--json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<super::Format>,
    /// Stop by itself this many seconds after it starts listening, exactly as Ctrl-C would.
    #[arg(long, value_name = "SECS")]
    pub duration: Option<u64>,
    /// How the client reaches the proxy: reverse (as if it were the API), forward (as its
    /// HTTP proxy), mitm (as its HTTP proxy, intercepting HTTPS to the API's host). Default:
    /// `[proxy] mode` (reverse).
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// mitm mode: where to write the run's CA certificate (PEM) for the client to trust.
    /// Default: `record-ca.pem` in the twin's folder.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
}

/// `--mode`: how the client reaches the proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// The client sends plain HTTP to the proxy's URL in place of the API's base URL.
    Reverse,
    /// The client uses the proxy as its HTTP proxy (`HTTP_PROXY`).
    Forward,
    /// A forward proxy that intercepts HTTPS to the API's host.
    Mitm,
}

pub fn run(args: Args) -> CmdResult {
    let twin = TwinDir::resolve(&args.twin).map_err(CliError::usage)?;
    let config = TwinConfig::load(&twin).map_err(CliError::twin)?;
    for w in &config.warnings {
        eprintln!("warning: {w}");
    }
    let upstream = Upstream::parse(&config.service.base_url).map_err(CliError::usage)?;
    let upstream_host = upstream.host().to_string();
    // Resolve the scrub policy and key before listening: in CI a missing key is a refusal, and
    // nothing may be recorded without a working scrubber.
    let scrubber = Scrubber::load(&twin.scrub_toml()).map_err(CliError::scrub)?;
    let upstream_ca_pem = match &args.upstream_ca {
        Some(path) => Some(wraith_twin::read_file(path).map_err(|e| {
            CliError::usage(anyhow!(
                "--upstream-ca: cannot read {}: {e}",
                path.display()
            ))
        })?),
        None => None,
    };
    if args.idle_timeout == Some(0) {
        return Err(CliError::usage(anyhow!(
            "--idle-timeout must be at least 1 second"
        )));
    }
    if args.duration == Some(0) {
        return Err(CliError::usage(anyhow!(
            "--duration must be at least 1 second"
        )));
    }
    let mode = match args.mode {
        Some(Mode::Reverse) => ProxyMode::Reverse,
        Some(Mode::Forward) => ProxyMode::Forward,
        Some(Mode::Mitm) => ProxyMode::Mitm,
        None => match config.proxy.mode {
            wraith_twin::ProxyMode::Reverse => ProxyMode::Reverse,
            wraith_twin::ProxyMode::Forward => ProxyMode::Forward,
            wraith_twin::ProxyMode::Mitm => ProxyMode::Mitm,
        },
    };
    if args.ca_cert.is_some() && mode != ProxyMode::Mitm {
        return Err(CliError::usage(anyhow!(
            "--ca-cert is only used by --mode mitm (the proxy runs in {} mode)",
            mode.as_str()
        )));
    }
    // The same labels `import --tag` takes, so `synth --tag` can select every session.
    for tag in &args.tags {
        super::import::check_tag(tag)?;
    }
    if let Some(path) = &args.ready_json {
        CliError::check_output_file("--ready-json", path)?;
        super::ready_file::check_replaceable("--ready-json", path)?;
    }
    if let Some(path) = &args.ca_cert {
        CliError::check_output_file("--ca-cert", path)?;
    }
    super::synth::remove_interrupted_writes(&twin);
    let port = args.port.unwrap_or(config.proxy.port);
    let mut rc = RecorderConfig::new(
        upstream,
        SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        twin.sessions_dir(),
        scrubber,
    );
    rc.tags = args.tags.clone();
    rc.idle_timeout = args.idle_timeout.map(Duration::from_secs);
    rc.upstream_ca_pem = upstream_ca_pem;
    rc.drain_timeout = Duration::from_millis(config.serve.limits.request_drain_timeout_ms);
    rc.request_idle_timeout = Duration::from_millis(config.serve.limits.request_idle_timeout_ms);
    rc.upstream_timeout = Duration::from_millis(config.proxy.upstream_timeout_ms);
    rc.mode = mode;
    let ca_cert = if mode == ProxyMode::Mitm {
        let ca = InterceptCa::generate(rc.upstream.host()).map_err(CliError::runtime)?;
        let path = args
            .ca_cert
            .clone()
            .unwrap_or_else(|| twin.root().join("record-ca.pem"));
        // Replacing an earlier run's certificate is the normal case; anything else at that
        // path is the user's and is not overwritten.
        if let Ok(existing) = wraith_twin::read_file(&path)
            && !String::from_utf8_lossy(&existing).contains("-----BEGIN CERTIFICATE-----")
        {
            return Err(CliError::usage(anyhow!(
                "--ca-cert {}: the file exists and is not a certificate; choose another path \
                 (it is not overwritten)",
                path.display()
            )));
        }
        // Written before listening: a client started on the ready file finds it in place.
        write_atomic(&path, ca.cert_pem().as_bytes())
            .with_context(|| format!("cannot write the CA certificate to {}", path.display()))
            .map_err(CliError::runtime)?;
        rc.intercept = Some(ca);
        Some(path)
    } else {
        None
    };

    init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::runtime(anyhow!("cannot start the async runtime: {e}")))?;
    let summary = runtime.block_on(async {
        let recorder = Recorder::bind(rc).await.map_err(|e| match e {
            RecorderError::UpstreamCa(_) | RecorderError::BadBaseUrl { .. } => CliError::usage(e),
            other => CliError::runtime(other),
        })?;
        let url = recorder.url().to_string();
        let port = recorder.local_addr().port();
        // Listening before the ready file exists: a signal sent the moment it appears still
        // finishes in-flight exchanges and finalizes the session.
        let signals = crate::signals::ShutdownSignals::listen(true);
        let stop = stop_after(signals, args.duration.map(Duration::from_secs));
        tokio::pin!(stop);
        let ready_file = match &args.ready_json {
            Some(path) => {
                let mut doc = json!({"record": {"url": url, "port": port, "mode": mode.as_str()}});
                if let Some(ca) = &ca_cert {
                    doc["record"]["ca_cert"] = json!(ca.display().to_string());
                }
                let text = wraith_model::to_canonical_json(&doc)
                    .map_err(|e| CliError::runtime(anyhow!("cannot render --ready-json: {e}")))?;
                let written = super::ready_file::ReadyFile::write_or_stop(path, text, &mut stop)
                    .await
                    .with_context(|| format!("cannot write --ready-json file {}", path.display()))
                    .map_err(CliError::runtime)?;
                match written {
                    Some(file) => Some(file),
                    // Stopped while the file could not be written yet (a fifo with no
                    // reader): nothing was recorded, and the session is finalized empty.
                    None => {
                        return recorder
                            .run(std::future::ready(()))
                            .await
                            .map_err(CliError::runtime);
                    }
                }
            }
            None => None,
        };
        let until = match args.duration {
            Some(secs) => format!("for {secs} s (Ctrl-C to stop sooner)"),
            None => "(Ctrl-C to stop)".to_string(),
        };
        let base = &config.service.base_url;
        match mode {
            ProxyMode::Reverse => eprintln!("wraith record: proxying {url} -> {base} {until}"),
            ProxyMode::Forward | ProxyMode::Mitm => eprintln!(
                "wraith record: {} proxy on {url} recording {base} {until}; set the client's \
                 HTTP_PROXY{} to {url}",
                mode.as_str(),
                if mode == ProxyMode::Mitm {
                    " and HTTPS_PROXY"
                } else {
                    ""
                }
            ),
        }
        if let Some(ca) = &ca_cert {
            eprintln!(
                "wraith record: HTTPS to {} is answered with a certificate from the CA in {}: \
                 make the client trust it (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, \
                 NODE_EXTRA_CA_CERTS, curl --cacert)",
                upstream_host,
                ca.display()
            );
        }
        let summary = recorder.run(stop).await.map_err(CliError::runtime);
        if let Some(file) = ready_file {
            file.remove();
        }
        summary
    })?;

    if args.json {
        print_json(&summary);
    } else {
        for s in &summary.sessions {
            say(format_args!(
                "recorded session {} ({} exchange{})",
                s.session_id,
                s.exchange_count,
                if s.exchange_count == 1 { "" } else { "s" }
            ));
            if !s.complete {
                say(format_args!(
                    "warning: session {} lost {} exchange(s) it could not write: its manifest \
                     says complete: false, and wraith lint warns of it as recording-incomplete",
                    s.session_id, s.lost_exchanges
                ));
            }
            if s.only_failures {
                say(format_args!(
                    "warning: session {} recorded only error answers (status >= 400); check the \
                     upstream and credentials before synthesizing from it",
                    s.session_id
                ));
            }
        }
        say(format_args!(
            "{} exchange(s) in {} finalized session(s) under {}",
            summary.exchanges,
            summary.sessions.len(),
            twin.sessions_dir().display()
        ));
        if summary.transport_failures > 0 {
            say(format_args!(
                "warning: {} request(s) got no upstream answer (502) and were not recorded",
                summary.transport_failures
            ));
        }
        if summary.upstream_timeouts > 0 {
            say(format_args!(
                "warning: {} request(s) timed out waiting for the upstream's answer (504, \
                 [proxy] upstream_timeout_ms) and were not recorded",
                summary.upstream_timeouts
            ));
        }
        if summary.passed_through > 0 {
            say(format_args!(
                "{} request(s) or tunnel(s) outside {} were passed through and not recorded",
                summary.passed_through, config.service.base_url
            ));
        }
        if summary.dot_segment_paths > 0 {
            say(format_args!(
                "warning: {} request(s) with a `.` or `..` segment in their path were passed to \
                 the upstream and not recorded: wraith serve refuses such paths (400), so a twin \
                 could not answer them",
                summary.dot_segment_paths
            ));
        }
        if summary.refused_tunnels > 0 {
            say(format_args!(
                "warning: {} CONNECT tunnel(s) to the upstream were refused (403): HTTPS through \
                 --mode forward cannot be recorded; use --mode mitm",
                summary.refused_tunnels
            ));
        }
        if summary.refused_websockets > 0 {
            say(format_args!(
                "warning: {} WebSocket upgrade request(s) were refused (501): WebSocket traffic \
                 is not recorded",
                summary.refused_websockets
            ));
        }
        if summary.cut_at_shutdown > 0 {
            say(format_args!(
                "warning: {} exchange(s) were still streaming at the drain timeout and were \
                 recorded cut short (truncated=true)",
                summary.cut_at_shutdown
            ));
        }
        if summary.cut_at_limit > 0 {
            say(format_args!(
                "warning: {} response body(ies) were longer than the recorder keeps (64 MiB): \
                 the clients got them whole, the recordings hold their first 64 MiB \
                 (truncated=true)",
                summary.cut_at_limit
            ));
        }
        if summary.cut_unrecorded > 0 {
            say(format_args!(
                "warning: {} request(s) had no upstream answer yet at the drain timeout and were \
                 not recorded; raise [serve.limits] request_drain_timeout_ms to wait longer",
                summary.cut_unrecorded
            ));
        }
    }
    if !summary.write_errors.is_empty() {
        return Err(CliError::runtime(anyhow!(
            "{} recording write(s) failed; first: {}; free disk space there or make the \
             recordings folder writable, then record the lost traffic again",
            summary.write_errors.len(),
            summary.write_errors[0]
        )));
    }
    Ok(ExitCode::SUCCESS)
}

/// Resolves on the first SIGINT (Ctrl-C), SIGTERM or SIGHUP, or once `duration` has passed.
/// SIGHUP is what a closed terminal sends: it stops the recorder as gracefully as Ctrl-C does,
/// so the exchanges already answered are kept and every manifest is finalized.
async fn stop_after(signals: crate::signals::ShutdownSignals, duration: Option<Duration>) {
    let signalled = async {
        signals.recv().await;
        say(format_args!(
            "wraith record: stopping; finishing in-flight exchanges"
        ));
    };
    match duration {
        Some(d) => tokio::select! {
            () = signalled => {}
            () = tokio::time::sleep(d) => {
                say(format_args!(
                    "wraith record: --duration of {} s reached; stopping; finishing in-flight \
                     exchanges",
                    d.as_secs()
                ));
            }
        },
        None => signalled.await,
    }
}

/// A line on stderr that never panics: after SIGHUP the terminal may be gone, and the
/// recordings must still be finalized.
fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Log proxy events (upstream failures, session rotation) on stderr; `RUST_LOG` overrides.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(crate::output::stderr_colours())
        .with_target(false)
        .try_init();
}
