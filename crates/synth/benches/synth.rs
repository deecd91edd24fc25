//! `synth` throughput and growth: 10k, 50k and 100k exchanges, built by repeating the Mastodon
//! and Linode corpora with fresh ids (numeric ids and path segments shifted per copy, session ids
//! suffixed), so every copy adds new entities rather than duplicates.
//!
//! Run: `cargo bench -p wraith-synth --bench synth` (figures in `docs/benchmarks.md`).

#[path = "../tests/synth/common/mod.rs"]
mod common;

use serde_json::Value;
use wraith_recording::{Exchange, RecordedSession};
use wraith_synth::{SynthOptions, synthesize};

/// The allocator the `wraith` binary runs `wraith synth` with. divan's allocation counts would
/// follow only the benchmarked thread, and synth allocates on every core: memory is measured
/// as the process's peak resident size instead (see [`ResidentPeak`]).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The process's resident memory (Linux `/proc/self/status`): its peak restarted at `start`, so
/// the growth over what was resident then is what synth itself took on every thread.
struct ResidentPeak {
    before_kb: u64,
}

impl ResidentPeak {
    fn start() -> Option<Self> {
        // "5" restarts the peak resident size (`VmHWM`) from the current one.
        std::fs::write("/proc/self/clear_refs", "5").ok()?;
        Some(ResidentPeak {
            before_kb: status_kb("VmRSS:")?,
        })
    }

    fn report(&self, n: usize) {
        if let Some(peak) = status_kb("VmHWM:") {
            eprintln!(
                "synth of {n} exchanges: peak resident {:.2} GB, {:.2} GB above the {:.2} GB \
                 resident with its input",
                peak as f64 / 1e6,
                peak.saturating_sub(self.before_kb) as f64 / 1e6,
                self.before_kb as f64 / 1e6
            );
        }
    }
}

fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line[field.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

fn main() {
    divan::main();
}

/// Both HAR corpora, loaded once.
fn base() -> &'static Vec<RecordedSession> {
    static CELL: std::sync::OnceLock<Vec<RecordedSession>> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        let mut s = common::load_corpus("mastodon", "http://localhost:3000");
        s.extend(common::load_corpus("linode", "https://api.linode.com"));
        s
    })
}

fn shift_segment(seg: &str, offset: u64) -> String {
    match seg.parse::<u64>() {
        Ok(n) if seg.len() >= 2 => (n + offset).to_string(),
        _ => seg.to_string(),
    }
}

fn shift_json(v: &mut Value, key: Option<&str>, offset: u64) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                shift_json(child, Some(k), offset);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|c| shift_json(c, key, offset)),
        Value::Number(n) if key.is_some_and(|k| k == "id" || k.ends_with("_id")) => {
            if let Some(x) = n.as_u64() {
                *v = Value::from(x + offset);
            }
        }
        Value::String(s) if key.is_some_and(|k| k == "id" || k.ends_with("_id")) => {
            if let Ok(x) = s.parse::<u64>() {
                *s = (x + offset).to_string();
            }
        }
        _ => {}
    }
}

fn fresh_copy(ex: &Exchange, offset: u64) -> Exchange {
    let mut ex = ex.clone();
    ex.request.path = ex
        .request
        .path
        .split('/')
        .map(|s| shift_segment(s, offset))
        .collect::<Vec<_>>()
        .join("/");
    for frame in &mut ex.frames {
        if let Ok(mut v) = serde_json::from_slice::<Value>(&frame.body) {
            shift_json(&mut v, None, offset);
            frame.body = serde_json::to_vec(&v).unwrap_or_default();
        }
    }
    ex
}

/// At least `n` exchanges (whole sessions), copy k shifted by k × 10⁹.
fn corpus_of(n: usize) -> Vec<RecordedSession> {
    let mut out = Vec::new();
    let mut total = 0usize;
    let mut copy = 0u64;
    while total < n {
        for s in base() {
            if total >= n {
                break;
            }
            let offset = copy * 1_000_000_000;
            let mut session = s.clone();
            session.manifest.session_id = format!("{}-{copy:04}", s.manifest.session_id);
            session.exchanges = s.exchanges.iter().map(|e| fresh_copy(e, offset)).collect();
            total += session.exchanges.len();
            out.push(session);
        }
        copy += 1;
    }
    out
}

#[divan::bench(args = [10_000, 50_000, 100_000], sample_count = 1, sample_size = 1)]
fn synthesize_exchanges(bencher: divan::Bencher<'_, '_>, n: usize) {
    bencher
        .with_inputs(|| corpus_of(n))
        .bench_values(|sessions| {
            let resident = ResidentPeak::start();
            let s = synthesize(
                &sessions,
                &SynthOptions {
                    twin: "bench".into(),
                    base_url: "http://localhost:3000".into(),
                    tool_version: "bench".into(),
                    tag: None,
                    request_keying: Default::default(),
                    run_gap_us: None,
                },
            );
            if let Some(r) = &resident {
                r.report(n);
            }
            divan::black_box(s.summary.routes)
        });
}
