//! Shared helpers for the check crate's integration tests and benches: load the shared corpora
//! (WREC demo twin, HAR folders) into recorded sessions, synthesize, and replay in memory.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use wraith_check::{CheckRun, DiffOptions, InMemoryTwin, OutboundHook, Report, Thresholds, replay};
use wraith_engine::{ClockConfig, ClockMode, Engine, EngineOptions, FixtureTree};
use wraith_model::Model;
use wraith_recording::har::{BaseUrl, parse_har};
use wraith_recording::{Manifest, RecordedSession};

pub fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// The demo twin's recordings (WREC, read as they are).
pub fn demo_sessions() -> Vec<RecordedSession> {
    let dir = shared().join("corpora/wraith-demo/recordings/sessions");
    wraith_recording::read_sessions(&dir).expect("demo recordings read")
}

/// A HAR corpus folder as recorded sessions (one per file, id = file stem), unscrubbed: the
/// corpora carry no live secrets, and conformance does not depend on scrubbing.
pub fn har_sessions(corpus: &str, base_url: &str, limit: Option<usize>) -> Vec<RecordedSession> {
    let dir = shared().join("corpora").join(corpus);
    let base = BaseUrl::parse(base_url).expect("base url");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "har"))
        .collect();
    files.sort();
    if let Some(n) = limit {
        files.truncate(n);
    }
    files
        .iter()
        .map(|f| {
            let bytes = std::fs::read(f).expect("har read");
            let s = parse_har(&bytes, f, &base).expect("har parse");
            let mut exchanges = s.exchanges;
            for (i, e) in exchanges.iter_mut().enumerate() {
                e.correlation.exchange_index = i as u64;
            }
            RecordedSession {
                manifest: Manifest {
                    complete: true,
                    end_time_us: 0,
                    exchange_count: exchanges.len() as u64,
                    policy_hash: String::new(),
                    proxy_mode: "import".into(),
                    schema_version: 1,
                    session_id: s.stem.clone(),
                    start_time_us: 0,
                    tags: vec![s.stem],
                    tool_version: "test".into(),
                },
                exchanges,
            }
        })
        .collect()
}

/// The model `wraith synth` writes for these sessions: synthesized, then the engine's start-up
/// facts decided under the default outbound policy (`wraith_engine::precompute`).
pub fn synth(sessions: &[RecordedSession], twin: &str, base_url: &str) -> Model {
    let mut model = wraith_synth::synthesize(
        sessions,
        &wraith_synth::SynthOptions {
            twin: twin.into(),
            base_url: base_url.into(),
            tool_version: "test".into(),
            tag: None,
            request_keying: Default::default(),
            run_gap_us: None,
        },
    )
    .model;
    wraith_engine::precompute::fill(&mut model);
    model
}

pub fn engine(model: &Model) -> Engine {
    let opts = EngineOptions {
        clock: ClockConfig {
            mode: ClockMode::Deterministic,
            base_epoch: 1_640_995_200,
        },
        wall_clock: Arc::new(|| 1_640_995_200_000_000),
        rewrite_self_urls: false,
        max_namespaces: 100_000,
        twin_name: Some("test".into()),
        ..EngineOptions::default()
    };
    Engine::new(model.clone(), None, FixtureTree::default(), opts).expect("engine")
}

/// The run [`check`] makes on `engine`: recordings are put through the twin's outbound policy
/// (the default PII pass here) in the namespace they are replayed in, as `wraith check` does,
/// so both sides are compared in the twin's outbound-policy space.
pub fn check_run<'a>(
    model: &'a Model,
    sessions: &'a [&'a RecordedSession],
    engine: &Arc<Engine>,
) -> CheckRun<'a> {
    let hook_engine = Arc::clone(engine);
    let outbound = OutboundHook(Arc::new(
        move |source: &str,
              req: &wraith_engine::Request,
              route: &str,
              body: &mut serde_json::Value| {
            let sid = source.rsplit_once('/').map_or(source, |(s, _)| s);
            let ns = format!("check-{sid}");
            hook_engine.outbound_recorded_body(Some(&ns), req, Some(route), body);
        },
    ));
    CheckRun {
        twin_name: "test",
        model,
        sessions,
        diff: DiffOptions {
            outbound: Some(outbound),
            ..DiffOptions::default()
        },
        thresholds: Thresholds::default(),
        namespace_prefix: "check-".into(),
        authored: Vec::new(),
        authored_gate: Default::default(),
        mode: "in_memory",
        target: None,
    }
}

pub fn check(model: &Model, sessions: &[&RecordedSession]) -> Report {
    let engine = Arc::new(engine(model));
    let run = check_run(model, sessions, &engine);
    let mut tw = InMemoryTwin::new(&engine);
    replay(&run, &mut tw, &mut || {}).expect("in-memory replay never fails")
}

/// [`check`] with the sessions replayed on `jobs` threads (`wraith check --jobs`).
pub fn check_jobs(model: &Model, sessions: &[&RecordedSession], jobs: usize) -> Report {
    let engine = Arc::new(engine(model));
    let run = check_run(model, sessions, &engine);
    let jobs = std::num::NonZeroUsize::new(jobs).expect("at least one job");
    let make = || InMemoryTwin::new(&engine);
    wraith_check::replay_parallel(&run, &wraith_check::prepare(sessions), jobs, &make, &|| {})
        .expect("in-memory replay never fails")
}

/// Top failing routes and categories, for eyeballing.
pub fn summary(r: &Report) -> String {
    let mut s = format!(
        "score {} sessions {} exchanges {}/{} categories {:?} provenance {:?}\n",
        r.score_bp,
        r.session_pass_rate_bp,
        r.exchanges_passed,
        r.exchanges_total,
        r.categories,
        r.provenance
    );
    // Failing exchanges by the answer's provenance and whether it claimed exact replay.
    let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
    for e in r.exchanges.iter().filter(|e| e.score_bp < 10_000) {
        let k = format!(
            "{}{}",
            e.provenance.as_deref().unwrap_or("none"),
            if e.replay_claim { "+claim" } else { "" }
        );
        *kinds.entry(k).or_default() += 1;
    }
    s.push_str(&format!("  failing by provenance: {kinds:?}\n"));
    s.push_str(&format!(
        "  causes {:?} ceiling {:?}\n",
        r.causes, r.ceiling
    ));
    let mut routes: Vec<_> = r.routes.iter().filter(|x| x.passed < x.exchanges).collect();
    routes.sort_by_key(|x| std::cmp::Reverse(x.exchanges - x.passed));
    for x in routes.iter().take(25) {
        s.push_str(&format!(
            "  {:>4} failed / {:>4}  {}  {:?} {:?}\n",
            x.exchanges - x.passed,
            x.exchanges,
            x.route,
            x.categories,
            x.causes
        ));
    }
    for d in r.drifts.iter().take(25) {
        s.push_str(&format!(
            "  drift x{} {} {} {} exp={} act={}\n",
            d.count,
            d.category.as_str(),
            d.route,
            d.path,
            trunc(&d.expected.to_string()),
            trunc(&d.actual.to_string())
        ));
    }
    s
}

fn trunc(s: &str) -> String {
    if s.len() > 160 {
        let mut c = 160;
        while !s.is_char_boundary(c) {
            c -= 1;
        }
        format!("{}…", &s[..c])
    } else {
        s.to_string()
    }
}
