//! Replaying sessions in parallel (`wraith check --jobs N`) builds the very report the
//! sequential run builds, byte for byte: every session runs in its own namespace of one shared
//! engine, and the engine's answers in a namespace do not depend on which other sessions ran
//! before, after or at the same time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;

use support::*;
use wraith_check::judge::ModelIndex;
use wraith_check::{DiffCache, Observed, Twin, TwinCallError};
use wraith_engine::Request;
use wraith_recording::RecordedSession;

const MASTODON: &str = "http://localhost:3000";

/// Enough Mastodon sessions to spread over several threads, with creates, reads, deletes and
/// timelines (answers that depend on the session's own history).
fn mastodon_sessions() -> Vec<RecordedSession> {
    har_sessions("mastodon", MASTODON, Some(48))
}

fn json(r: &wraith_check::Report) -> String {
    wraith_model::to_canonical_json(r).expect("json")
}

#[test]
fn parallel_report_bytes_equal_the_sequential_report() {
    let sessions = mastodon_sessions();
    let all: Vec<_> = sessions.iter().collect();
    // In sample (exact replay) and held out (templates, misses), so every answer kind runs.
    let (train, held) = wraith_check::holdout_split(&sessions, 3);
    let train_owned: Vec<_> = train.iter().map(|s| (*s).clone()).collect();
    let full = synth(&sessions, "mastodon", MASTODON);
    let trained = synth(&train_owned, "mastodon", MASTODON);
    for (model, set) in [(&full, &all), (&trained, &held)] {
        let sequential = json(&check_jobs(model, set, 1));
        // `replay` (no --jobs plumbing at all) is the same run as one job.
        assert_eq!(sequential, json(&check(model, set)));
        for jobs in [2, 3, 8] {
            assert_eq!(
                sequential,
                json(&check_jobs(model, set, jobs)),
                "{jobs} jobs built another report than one job"
            );
        }
    }
}

/// With every body prepared on the run's threads (as `wraith check` runs it), or nothing
/// prepared (each recorded body parsed by the thread that replays its session, and the causes
/// step reusing those parses), the report is the one the run with every body prepared up front
/// on the calling thread builds, on one thread or several.
#[test]
fn report_bytes_do_not_depend_on_where_the_recorded_bodies_were_parsed() {
    let sessions = mastodon_sessions();
    let (train, held) = wraith_check::holdout_split(&sessions, 3);
    let train_owned: Vec<_> = train.iter().map(|s| (*s).clone()).collect();
    let trained = synth(&train_owned, "mastodon", MASTODON);
    let prepared_report = json(&check_jobs(&trained, &held, 1));
    for jobs in [1, 2] {
        // As `wraith check` prepares them: on the run's threads.
        let shared = Arc::new(engine(&trained));
        let run = check_run(&trained, &held, &shared);
        let make = || wraith_check::InMemoryTwin::new(&shared);
        let jobs_n = std::num::NonZeroUsize::new(jobs).expect("at least one job");
        let prepared = wraith_check::prepare_parallel(&held, jobs_n);
        let r = wraith_check::replay_parallel(&run, &prepared, jobs_n, &make, &|| {})
            .expect("in-memory replay never fails");
        assert_eq!(
            prepared_report,
            json(&r),
            "{jobs} jobs, bodies prepared on the run's threads"
        );
        let engine = Arc::new(engine(&trained));
        let run = check_run(&trained, &held, &engine);
        let make = || wraith_check::InMemoryTwin::new(&engine);
        let jobs = std::num::NonZeroUsize::new(jobs).expect("at least one job");
        let r = wraith_check::replay_parallel(
            &run,
            &wraith_check::Prepared::default(),
            jobs,
            &make,
            &|| {},
        )
        .expect("in-memory replay never fails");
        assert!(
            !r.causes.is_empty(),
            "held-out sessions fail for some cause"
        );
        assert_eq!(
            prepared_report,
            json(&r),
            "{jobs} jobs, bodies parsed in the replay"
        );
    }
}

/// `prepare` gives every exchange its own recorded body, parsed, and holds a body recorded
/// several times once (one parse), whatever the threads.
#[test]
fn prepare_parses_a_body_recorded_many_times_once_and_gives_each_exchange_its_own() {
    let sessions = mastodon_sessions();
    let all: Vec<_> = sessions.iter().collect();
    let one = wraith_check::prepare_parallel(&all, std::num::NonZeroUsize::MIN);
    let two = wraith_check::prepare_parallel(&all, std::num::NonZeroUsize::new(2).unwrap());
    let mut first: std::collections::HashMap<Vec<u8>, *const wraith_check::ExpectedBody> =
        std::collections::HashMap::new();
    let mut shared = 0;
    for (si, s) in all.iter().enumerate() {
        for (xi, ex) in s.exchanges.iter().enumerate() {
            let recorded = ex.response_body();
            for p in [&one, &two] {
                let b = p.body(si, xi).expect("every exchange is prepared");
                assert_eq!(b.bytes, recorded, "{si}/{xi}");
                let parsed = wraith_check::judge::parse_body(&recorded);
                assert_eq!(format!("{:?}", b.body), format!("{parsed:?}"), "{si}/{xi}");
            }
            let b: *const _ = one.body(si, xi).expect("prepared");
            match first.get(&recorded) {
                Some(&p) => {
                    assert!(std::ptr::eq(p, b), "{si}/{xi}: a second parse of one body");
                    shared += 1;
                }
                None => {
                    first.insert(recorded, b);
                }
            }
        }
        assert!(one.body(si, s.exchanges.len()).is_none());
    }
    assert!(shared > 0, "some body is recorded more than once");
    assert!(one.body(all.len(), 0).is_none());
}

/// The engine keeps no state across namespaces that changes an answer: replaying the sessions
/// in other orders (each in its own namespace of one engine) and folding the outcomes in
/// session order gives the sequential report.
#[test]
fn sessions_replayed_in_any_order_fold_into_the_sequential_report() {
    let sessions = mastodon_sessions();
    let all: Vec<_> = sessions.iter().collect();
    let model = synth(&sessions, "mastodon", MASTODON);
    let sequential = json(&check_jobs(&model, &all, 1));
    let n = all.len();
    let reversed: Vec<usize> = (0..n).rev().collect();
    let odd_first: Vec<usize> = (1..n).step_by(2).chain((0..n).step_by(2)).collect();
    let rotated: Vec<usize> = (n / 2..n).chain(0..n / 2).collect();
    for order in [reversed, odd_first, rotated] {
        let engine = Arc::new(engine(&model));
        let run = check_run(&model, &all, &engine);
        let prepared = wraith_check::prepare(&all);
        let index = ModelIndex::new(&model);
        let mut cache = DiffCache::default();
        let mut tw = wraith_check::InMemoryTwin::new(&engine);
        let mut outcomes: Vec<Option<wraith_check::SessionOutcome>> =
            (0..n).map(|_| None).collect();
        for &si in &order {
            let o = wraith_check::replay_session(
                &run,
                &index,
                &prepared,
                si,
                &mut tw,
                &mut cache,
                &mut || {},
            )
            .expect("in-memory replay never fails");
            outcomes[si] = Some(o);
        }
        let mut b = wraith_check::run::report_builder(&run);
        for (si, o) in outcomes.into_iter().enumerate() {
            wraith_check::fold_session(&mut b, all[si], o.expect("replayed"));
        }
        let r = wraith_check::run::finish_report(&run, b);
        assert_eq!(sequential, json(&r), "order {order:?}");
    }
}

/// A twin that answers every request with an empty 204 and fails in the given namespaces.
struct FailingTwin {
    fail_in: Vec<String>,
}

/// The answer the test twins give where they neither fail nor panic.
fn no_content() -> Observed {
    Observed {
        status: 204,
        headers: Vec::new(),
        body: Vec::new(),
        provenance: None,
        route: None,
        replay: None,
    }
}

impl Twin for FailingTwin {
    fn call(&mut self, session: &str, _req: &Request) -> Result<Observed, String> {
        if self.fail_in.iter().any(|s| s == session) {
            return Err(format!("no answer in {session}"));
        }
        Ok(no_content())
    }
}

/// With several sessions failing, the parallel run reports the failure of the earliest one in
/// session order — the one the sequential run stops at — however the threads interleave.
#[test]
fn parallel_run_reports_the_failure_the_sequential_run_stops_at() {
    let sessions = mastodon_sessions();
    let all: Vec<_> = sessions.iter().collect();
    let model = synth(&sessions, "mastodon", MASTODON);
    let engine = Arc::new(engine(&model));
    let run = check_run(&model, &all, &engine);
    let prepared = wraith_check::prepare(&all);
    let ns = |i: usize| format!("check-{}", all[i].manifest.session_id);
    let fail_in = vec![ns(41), ns(5), ns(9)];
    let first: TwinCallError = wraith_check::replay_prepared(
        &run,
        &prepared,
        &mut FailingTwin {
            fail_in: fail_in.clone(),
        },
        &mut || {},
    )
    .expect_err("a session fails");
    assert_eq!(first.session, all[5].manifest.session_id);
    for jobs in [2, 4, 8] {
        let make = || FailingTwin {
            fail_in: fail_in.clone(),
        };
        let e = wraith_check::replay_parallel(
            &run,
            &prepared,
            std::num::NonZeroUsize::new(jobs).unwrap(),
            &make,
            &|| {},
        )
        .expect_err("a session fails");
        assert_eq!(
            (e.session.as_str(), e.exchange, e.path.as_str()),
            (first.session.as_str(), first.exchange, first.path.as_str()),
            "{jobs} jobs"
        );
    }
}

/// The causes of a held-out run, computed against the training sessions as
/// `wraith check --holdout` does (its comparisons on `--jobs` threads), are the same bytes on
/// any number of threads.
#[test]
fn causes_against_training_sessions_do_not_depend_on_jobs() {
    let sessions = mastodon_sessions();
    let (train, held) = wraith_check::holdout_split(&sessions, 3);
    let train_owned: Vec<_> = train.iter().map(|s| (*s).clone()).collect();
    let trained = synth(&train_owned, "mastodon", MASTODON);
    let replayed = check(&trained, &held);
    let annotated = |jobs: usize| {
        let mut r = replayed.clone();
        wraith_check::causes::annotate_parsed(
            &mut r,
            &trained,
            &held,
            &train,
            &wraith_check::DiffOptions::default(),
            &|_, _| None,
            jobs,
        );
        r
    };
    let one = annotated(1);
    assert!(
        one.causes.contains_key("recordings_disagree") && one.ceiling.disagreeing_groups > 0,
        "the training sessions answer some held-out history otherwise: {:?}",
        one.causes
    );
    let one = json(&one);
    for jobs in [2, 3, 8] {
        assert_eq!(one, json(&annotated(jobs)), "{jobs} jobs");
    }
}

/// A twin that panics in one namespace.
struct PanickingTwin {
    panic_in: String,
}

impl Twin for PanickingTwin {
    fn call(&mut self, session: &str, _req: &Request) -> Result<Observed, String> {
        assert_ne!(session, self.panic_in, "the twin broke");
        Ok(no_content())
    }
}

/// A panic on one of the replay threads is a bug: it reaches the caller, never a report.
#[test]
fn a_panic_on_a_replay_thread_reaches_the_caller() {
    let sessions = mastodon_sessions();
    let all: Vec<_> = sessions.iter().collect();
    let model = synth(&sessions, "mastodon", MASTODON);
    let engine = Arc::new(engine(&model));
    let run = check_run(&model, &all, &engine);
    let prepared = wraith_check::prepare(&all);
    let panic_in = format!("check-{}", all[7].manifest.session_id);
    for jobs in [2, 4] {
        let make = || PanickingTwin {
            panic_in: panic_in.clone(),
        };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wraith_check::replay_parallel(
                &run,
                &prepared,
                std::num::NonZeroUsize::new(jobs).unwrap(),
                &make,
                &|| {},
            )
        }));
        let panic = r.expect_err("the panic reaches the caller");
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or_default();
        assert!(message.contains("the twin broke"), "{jobs} jobs: {message}");
    }
}
