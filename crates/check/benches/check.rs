//! In-memory check throughput: replay a whole corpus through the engine and judge every answer.
//! Target: at least 20,000 exchanges per second (`docs/benchmarks.md`).
//!
//! Setup is not timed: HAR parsing, synth, engine construction and parsing the recorded bodies
//! once ([`wraith_check::prepare`]); `linode_parallel_including_prepare` times the last one
//! too, parsed as `wraith check` does it ([`wraith_check::prepare_parallel`]).
//!
//! `cargo bench -p wraith-check --bench check`

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use divan::Bencher;
use divan::counter::ItemsCount;

/// The allocator the `wraith` binary runs `wraith check` with.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

/// `jobs`: sessions replayed at once (`wraith check --jobs`); `None` is the default, one per
/// available core.
fn bench_corpus(
    bencher: Bencher<'_, '_>,
    corpus: &str,
    base: &str,
    with_prepare: bool,
    jobs: Option<usize>,
) {
    let jobs = jobs
        .and_then(std::num::NonZeroUsize::new)
        .unwrap_or_else(wraith_check::default_jobs);
    let sessions = support::har_sessions(corpus, base, None);
    let model = support::synth(&sessions, corpus, base);
    let all: Vec<_> = sessions.iter().collect();
    let prepared = wraith_check::prepare(&all);
    let exchanges: usize = sessions.iter().map(|s| s.exchanges.len()).sum();
    bencher
        .counter(ItemsCount::new(exchanges))
        .with_inputs(|| support::engine(&model))
        .bench_local_refs(|engine| {
            let run = wraith_check::CheckRun {
                twin_name: corpus,
                model: &model,
                sessions: &all,
                diff: wraith_check::DiffOptions::default(),
                thresholds: wraith_check::Thresholds::default(),
                namespace_prefix: "bench-".into(),
                authored: Vec::new(),
                authored_gate: Default::default(),
                mode: "in_memory",
                target: None,
            };
            let make = || wraith_check::InMemoryTwin::new(engine);
            if with_prepare {
                // As `wraith check` runs it: every distinct recorded body parsed once, on the
                // run's threads, then the replay.
                let prepared = wraith_check::prepare_parallel(&all, jobs);
                wraith_check::replay_parallel(&run, &prepared, jobs, &make, &|| {}).unwrap()
            } else {
                wraith_check::replay_parallel(&run, &prepared, jobs, &make, &|| {}).unwrap()
            }
        });
}

/// Sessions replayed one at a time (`wraith check --jobs 1`).
#[divan::bench(sample_count = 10)]
fn linode(bencher: Bencher<'_, '_>) {
    bench_corpus(
        bencher,
        "linode",
        "https://api.linode.com/v4beta",
        false,
        Some(1),
    );
}

/// Sessions replayed on one thread per available core (`wraith check`'s default).
#[divan::bench(sample_count = 10)]
fn linode_parallel(bencher: Bencher<'_, '_>) {
    bench_corpus(
        bencher,
        "linode",
        "https://api.linode.com/v4beta",
        false,
        None,
    );
}

/// `linode_parallel` with the recorded bodies parsed inside the timed run, as `wraith check`
/// parses them (what it pays).
#[divan::bench(sample_count = 10)]
fn linode_parallel_including_prepare(bencher: Bencher<'_, '_>) {
    bench_corpus(
        bencher,
        "linode",
        "https://api.linode.com/v4beta",
        true,
        None,
    );
}

#[divan::bench(sample_count = 10)]
fn mastodon(bencher: Bencher<'_, '_>) {
    bench_corpus(bencher, "mastodon", "http://localhost:3000", false, Some(1));
}

#[divan::bench(sample_count = 10)]
fn mastodon_parallel(bencher: Bencher<'_, '_>) {
    bench_corpus(bencher, "mastodon", "http://localhost:3000", false, None);
}

#[divan::bench(sample_count = 50)]
fn wraith_demo(bencher: Bencher<'_, '_>) {
    let sessions = support::demo_sessions();
    let model = support::synth(&sessions, "wraith-demo", "http://127.0.0.1:18080");
    let all: Vec<_> = sessions.iter().collect();
    let prepared = wraith_check::prepare(&all);
    bencher
        .counter(ItemsCount::new(6usize))
        .with_inputs(|| support::engine(&model))
        .bench_local_refs(|engine| {
            let run = wraith_check::CheckRun {
                twin_name: "wraith-demo",
                model: &model,
                sessions: &all,
                diff: wraith_check::DiffOptions::default(),
                thresholds: wraith_check::Thresholds::default(),
                namespace_prefix: "bench-".into(),
                authored: Vec::new(),
                authored_gate: Default::default(),
                mode: "in_memory",
                target: None,
            };
            let mut tw = wraith_check::InMemoryTwin::new(engine);
            wraith_check::replay_prepared(&run, &prepared, &mut tw, &mut || {}).unwrap()
        });
}

/// The engine alone over the same requests (no judging), to tell the engine's share of the
/// check's time from the diff's.
#[divan::bench(sample_count = 10)]
fn linode_engine_only(bencher: Bencher<'_, '_>) {
    let base = "https://api.linode.com/v4beta";
    let sessions = support::har_sessions("linode", base, None);
    let model = support::synth(&sessions, "linode", base);
    let reqs: Vec<(String, Vec<wraith_engine::Request>)> = sessions
        .iter()
        .map(|s| {
            (
                format!("bench-{}", s.manifest.session_id),
                s.exchanges.iter().map(wraith_check::request_of).collect(),
            )
        })
        .collect();
    let n: usize = reqs.iter().map(|(_, r)| r.len()).sum();
    bencher
        .counter(ItemsCount::new(n))
        .with_inputs(|| support::engine(&model))
        .bench_local_refs(|engine| {
            for (ns, rs) in &reqs {
                for r in rs {
                    divan::black_box(engine.handle(Some(ns), r));
                }
            }
        });
}

/// A twin that answers every request with exactly the recorded response (as a verbatim claim):
/// the judging cost of a perfect twin, without the engine.
struct RecordedTwin {
    answers: std::collections::VecDeque<wraith_check::Observed>,
}

impl wraith_check::Twin for RecordedTwin {
    fn call(
        &mut self,
        _session: &str,
        _req: &wraith_engine::Request,
    ) -> Result<wraith_check::Observed, String> {
        self.answers
            .pop_front()
            .ok_or_else(|| "no more answers".to_string())
    }
}

#[divan::bench(sample_count = 10)]
fn linode_judge_only_perfect_twin(bencher: Bencher<'_, '_>) {
    let base = "https://api.linode.com/v4beta";
    let sessions = support::har_sessions("linode", base, None);
    let model = support::synth(&sessions, "linode", base);
    let all: Vec<_> = sessions.iter().collect();
    let prepared = wraith_check::prepare(&all);
    let answers: Vec<wraith_check::Observed> = sessions
        .iter()
        .flat_map(|s| s.exchanges.iter())
        .map(|ex| wraith_check::Observed {
            status: ex.response.status,
            headers: ex
                .response
                .headers
                .iter()
                .filter_map(|(k, v)| v.first().map(|v| (k.clone(), v.clone())))
                .collect(),
            body: ex.response_body(),
            provenance: Some(wraith_engine::Provenance::Recorded),
            route: None,
            replay: Some(wraith_check::ReplayClaim {
                class: wraith_engine::ReplayClass::SeriesMoment,
                outbound_policy_applied: false,
            }),
        })
        .collect();
    bencher
        .counter(ItemsCount::new(answers.len()))
        .with_inputs(|| RecordedTwin {
            answers: answers.clone().into(),
        })
        .bench_local_refs(|tw| {
            let run = wraith_check::CheckRun {
                twin_name: "linode",
                model: &model,
                sessions: &all,
                diff: wraith_check::DiffOptions::default(),
                thresholds: wraith_check::Thresholds::default(),
                namespace_prefix: "bench-".into(),
                authored: Vec::new(),
                authored_gate: Default::default(),
                mode: "in_memory",
                target: None,
            };
            let r = wraith_check::replay_prepared(&run, &prepared, tw, &mut || {}).unwrap();
            assert_eq!(r.score_bp, 10_000);
            r
        });
}

/// What labelling the failures and computing the ceiling adds to a run
/// ([`wraith_check::causes::annotate_parsed`], which every replay driver calls once at the end,
/// with the recorded bodies the replay parsed, on the run's threads: one per available core by
/// default): the report of one replay, annotated again per iteration.
fn bench_causes(bencher: Bencher<'_, '_>, corpus: &str, base: &str) {
    let sessions = support::har_sessions(corpus, base, None);
    let model = support::synth(&sessions, corpus, base);
    let all: Vec<_> = sessions.iter().collect();
    let exchanges: usize = sessions.iter().map(|s| s.exchanges.len()).sum();
    let report = support::check(&model, &all);
    // The bodies the replay parsed, as the run hands them to the step.
    let prepared = wraith_check::prepare(&all);
    let parsed = |s: usize, x: usize| prepared.body(s, x);
    bencher
        .counter(ItemsCount::new(exchanges))
        .with_inputs(|| report.clone())
        .bench_local_values(|mut r| {
            wraith_check::causes::annotate_parsed(
                &mut r,
                &model,
                &all,
                &[],
                &wraith_check::DiffOptions::default(),
                &parsed,
                wraith_check::default_jobs().get(),
            );
            r
        });
}

#[divan::bench(sample_count = 10)]
fn linode_causes_only(bencher: Bencher<'_, '_>) {
    bench_causes(bencher, "linode", "https://api.linode.com/v4beta");
}

#[divan::bench(sample_count = 10)]
fn mastodon_causes_only(bencher: Bencher<'_, '_>) {
    bench_causes(bencher, "mastodon", "http://localhost:3000");
}
