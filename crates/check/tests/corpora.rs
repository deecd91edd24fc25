//! Conformance of twins synthesized from the shared corpora, replayed in memory.
//!
//! The demo twin runs in every test run; the two HAR corpora are measured by the ignored tests
//! (`cargo test -p wraith-check --release --test corpora -- --ignored --nocapture`), whose
//! figures `docs/conformance.md` records.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::*;

#[test]
fn demo_twin_replays_its_own_recordings_without_divergence() {
    let sessions = demo_sessions();
    let model = synth(&sessions, "wraith-demo", "http://127.0.0.1:18080");
    let all: Vec<_> = sessions.iter().collect();
    let r = check(&model, &all);
    assert_eq!(r.exchanges_total, 6, "{}", summary(&r));
    assert_eq!(r.score_bp, 10_000, "{}", summary(&r));
    assert!(r.passed);
}

#[test]
fn demo_report_is_deterministic() {
    let sessions = demo_sessions();
    let model = synth(&sessions, "wraith-demo", "http://127.0.0.1:18080");
    let all: Vec<_> = sessions.iter().collect();
    let a = wraith_model::to_canonical_json(&check(&model, &all)).expect("json");
    let b = wraith_model::to_canonical_json(&check(&model, &all)).expect("json");
    assert_eq!(a, b);
}

fn measure(corpus: &str, base: &str) {
    let sessions = har_sessions(corpus, base, None);
    let model = synth(&sessions, corpus, base);
    let all: Vec<_> = sessions.iter().collect();
    let r = check(&model, &all);
    println!("== {corpus} in-sample\n{}", summary(&r));
    assert_parallel_same(&model, &all, &r);
    let (train, held) = wraith_check::holdout_split(&sessions, 5);
    let train_owned: Vec<_> = train.iter().map(|s| (*s).clone()).collect();
    let hm = synth(&train_owned, corpus, base);
    let mut h = check(&hm, &held);
    assert_parallel_same(&hm, &held, &h);
    // As `wraith check --holdout` does: the training sessions are the model's recordings.
    let replayed = h.clone();
    wraith_check::causes::annotate(
        &mut h,
        &hm,
        &held,
        &train,
        &wraith_check::DiffOptions::default(),
    );
    // `wraith check --holdout --jobs N` compares on N threads: the same causes, byte for byte.
    let mut on_threads = replayed;
    wraith_check::causes::annotate_parsed(
        &mut on_threads,
        &hm,
        &held,
        &train,
        &wraith_check::DiffOptions::default(),
        &|_, _| None,
        3,
    );
    assert!(
        wraith_model::to_canonical_json(&on_threads).expect("json")
            == wraith_model::to_canonical_json(&h).expect("json"),
        "3 jobs found other causes than the sequential run"
    );
    println!("== {corpus} holdout 5\n{}", summary(&h));
}

/// `wraith check --jobs N` builds the sequential report byte for byte.
fn assert_parallel_same(
    model: &wraith_model::Model,
    sessions: &[&wraith_recording::RecordedSession],
    sequential: &wraith_check::Report,
) {
    let want = wraith_model::to_canonical_json(sequential).expect("json");
    for jobs in [2, 4] {
        let got =
            wraith_model::to_canonical_json(&check_jobs(model, sessions, jobs)).expect("json");
        assert!(
            got == want,
            "{jobs} jobs built another report than the sequential run"
        );
    }
}

#[test]
#[ignore = "measures a whole corpus; run with --ignored --nocapture"]
fn measure_mastodon() {
    measure("mastodon", "http://localhost:3000");
}

#[test]
#[ignore = "measures a whole corpus; run with --ignored --nocapture"]
fn measure_linode() {
    measure("linode", "https://api.linode.com/v4beta");
}

#[test]
#[ignore = "writes a corpus report to $WRAITH_CHECK_DUMP (or the temp folder) for analysis"]
fn dump_report() {
    // Never /dev/null: the model goes beside the report, and /dev/null.model.json was once left
    // in /dev.
    let out = std::env::var("WRAITH_CHECK_DUMP").unwrap_or_else(|_| {
        let name = format!("wraith-check-dump-{}.json", std::process::id());
        std::env::temp_dir().join(name).display().to_string()
    });
    eprintln!("report: {out}; model: {out}.model.json");
    let corpus = std::env::var("WRAITH_CHECK_CORPUS").unwrap_or_else(|_| "mastodon".into());
    let base = if corpus == "linode" {
        "https://api.linode.com/v4beta"
    } else {
        "http://localhost:3000"
    };
    let sessions = har_sessions(&corpus, base, None);
    // With WRAITH_CHECK_HOLDOUT set: the held-out fifth against a model of the rest, causes
    // computed against the training sessions, as `wraith check --holdout 5` does.
    let (model, r) = if std::env::var("WRAITH_CHECK_HOLDOUT").is_ok() {
        let (train, held) = wraith_check::holdout_split(&sessions, 5);
        let train_owned: Vec<_> = train.iter().map(|s| (*s).clone()).collect();
        let hm = synth(&train_owned, &corpus, base);
        let mut h = check(&hm, &held);
        wraith_check::causes::annotate(
            &mut h,
            &hm,
            &held,
            &train,
            &wraith_check::DiffOptions::default(),
        );
        (hm, h)
    } else {
        let model = synth(&sessions, &corpus, base);
        let all: Vec<_> = sessions.iter().collect();
        let r = check(&model, &all);
        (model, r)
    };
    std::fs::write(&out, wraith_model::to_canonical_json(&r).expect("json")).expect("write");
    std::fs::write(
        format!("{out}.model.json"),
        wraith_model::to_canonical_json(&model).expect("json"),
    )
    .expect("write");
}

/// Replays `sessions` twice: every session against a model of all of them (in sample), and
/// each third against a model of the rest (held out, where templates and echo holes are in
/// play). `each` sees every answer with the state of its run (`S`, fresh per model), the model's
/// index and `session/exchange` naming the exchange; the states come back in that order.
fn replay_in_sample_and_held_out<S: Default>(
    corpus: &str,
    base: &str,
    sessions: &[wraith_recording::RecordedSession],
    each: impl Fn(
        &mut S,
        &wraith_check::judge::ModelIndex<'_>,
        &wraith_recording::Exchange,
        &wraith_check::ExpectedBody,
        &wraith_check::Observed,
        &str,
    ),
) -> Vec<S> {
    let (train, held) = wraith_check::holdout_split(sessions, 3);
    let train_owned: Vec<_> = train.iter().map(|s| (*s).clone()).collect();
    let all: Vec<_> = sessions.iter().collect();
    let full_model = synth(sessions, corpus, base);
    let held_model = synth(&train_owned, corpus, base);
    let mut states = Vec::new();
    for (model, set) in [(&full_model, &all), (&held_model, &held)] {
        let engine = engine(model);
        let index = wraith_check::judge::ModelIndex::new(model);
        let mut tw = wraith_check::InMemoryTwin::new(&engine);
        let mut state = S::default();
        for s in set.iter() {
            let ns = format!("replay-{}", s.manifest.session_id);
            for ex in &s.exchanges {
                let obs = wraith_check::Twin::call(&mut tw, &ns, &wraith_check::request_of(ex))
                    .expect("in-memory answer");
                let expected = wraith_check::ExpectedBody::of(ex);
                let at = format!(
                    "{}/{}",
                    s.manifest.session_id, ex.correlation.exchange_index
                );
                each(&mut state, &index, ex, &expected, &obs, &at);
            }
        }
        states.push(state);
    }
    states
}

/// The linode and Mastodon corpora's first `take` sessions, with the base URL they were
/// recorded against.
fn both_corpora(
    take: usize,
) -> [(
    &'static str,
    &'static str,
    Vec<wraith_recording::RecordedSession>,
); 2] {
    [
        ("linode", "https://api.linode.com/v4beta"),
        ("mastodon", "http://localhost:3000"),
    ]
    .map(|(corpus, base)| (corpus, base, har_sessions(corpus, base, Some(take))))
}

/// Every exchange of a few Mastodon sessions judged twice through one diff cache (the second
/// time from the cache whenever the first kept its diff) and once without: the verdicts agree,
/// in sample and held out (where templates, echo holes included, are in play).
#[test]
fn reused_body_diffs_equal_fresh_ones() {
    let base = "http://localhost:3000";
    // Status sessions: their answers diverge in sample (timelines, deletes) and held out.
    let sessions: Vec<_> = har_sessions("mastodon", base, None)
        .into_iter()
        .filter(|s| s.manifest.session_id.starts_with("test_status"))
        .take(30)
        .collect();
    let opts = wraith_check::DiffOptions::default();
    let runs = replay_in_sample_and_held_out(
        "mastodon",
        base,
        &sessions,
        |(cache, judged): &mut (wraith_check::DiffCache, usize), index, ex, expected, obs, at| {
            let fresh = wraith_check::judge_prepared(index, at, ex, expected, obs, &opts);
            for _ in 0..2 {
                let v = wraith_check::judge_with_cache(
                    index,
                    at,
                    ex,
                    expected,
                    obs,
                    &opts,
                    Some(cache),
                );
                assert_eq!(v.divergences, fresh.divergences, "{at}");
                assert_eq!(v.score_bp, fresh.score_bp, "{at}");
                assert_eq!(v.route, fresh.route, "{at}");
            }
            *judged += 1;
        },
    );
    // Both sets keep diffs, so the held-out templates go through the cache too.
    for (cache, judged) in &runs {
        assert!(*judged > 0);
        assert!(!cache.is_empty(), "no diff kept");
    }
}

/// The ids learned from an answer are the same whether the walk ran or a kept result was
/// reused: every exchange of linode and Mastodon sessions (in sample, and held out where
/// templates and echo holes steer the pairing) gives the same pairs twice through one cache as
/// without it.
#[test]
fn reused_generated_pairs_equal_fresh_ones() {
    use wraith_check::judge::{generated_pairs, generated_pairs_cached};
    let mut taught = 0;
    for (corpus, base, sessions) in both_corpora(60) {
        for (_, n) in replay_in_sample_and_held_out(
            corpus,
            base,
            &sessions,
            |(cache, taught): &mut (wraith_check::DiffCache, usize),
             index,
             ex,
             expected,
             obs,
             at| {
                let fresh = generated_pairs(index, ex, expected, obs);
                let first = generated_pairs_cached(index, ex, expected, obs, cache);
                let second = generated_pairs_cached(index, ex, expected, obs, cache);
                assert_eq!(first, fresh, "{at}");
                assert_eq!(second, fresh, "{at}");
                *taught += usize::from(!fresh.is_empty());
            },
        ) {
            taught += n;
        }
    }
    assert!(taught > 0, "no answer taught any id");
}

/// The id-flow step reusing what the judge found out about an answer (whether it is the
/// recording serialized, and its parsed body: `AnswerMemo`) learns exactly the pairs it learns
/// on its own, and the judge's verdict is the one it gives without a memo: every exchange of
/// linode and Mastodon sessions, in sample and held out, each side with its own diff cache.
#[test]
fn pairs_after_the_judge_memo_equal_fresh_ones() {
    use wraith_check::judge::{AnswerMemo, generated_pairs, generated_pairs_memo, judge_with_memo};
    #[derive(Default)]
    struct Run {
        with_memo: wraith_check::DiffCache,
        without: wraith_check::DiffCache,
        reused: usize,
    }
    let opts = wraith_check::DiffOptions::default();
    let mut reused = 0;
    for (corpus, base, sessions) in both_corpora(60) {
        for run in replay_in_sample_and_held_out(
            corpus,
            base,
            &sessions,
            |run: &mut Run, index, ex, expected, obs, at| {
                let mut memo = AnswerMemo::default();
                let judged = judge_with_memo(
                    index,
                    at,
                    ex,
                    expected,
                    obs,
                    &opts,
                    Some(&mut run.with_memo),
                    Some(&mut memo),
                );
                let plain = wraith_check::judge_with_cache(
                    index,
                    at,
                    ex,
                    expected,
                    obs,
                    &opts,
                    Some(&mut run.without),
                );
                assert_eq!(format!("{judged:?}"), format!("{plain:?}"), "{at}");
                run.reused +=
                    usize::from(format!("{memo:?}") != format!("{:?}", AnswerMemo::default()));
                let fresh = generated_pairs(index, ex, expected, obs);
                let memoed =
                    generated_pairs_memo(index, ex, expected, obs, &mut run.with_memo, &mut memo);
                assert_eq!(memoed, fresh, "{at}");
            },
        ) {
            reused += run.reused;
        }
    }
    assert!(reused > 0, "the judge never left anything in the memo");
}

/// Object keys from the template root to every echo hole that copies a request body value, with
/// the hole's JSON pointer into the request body.
fn echo_body_holes(
    node: &wraith_model::Node,
    at: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) {
    use wraith_model::{EchoSource, HoleKind, Node};
    match node {
        Node::Hole(h) => {
            if let HoleKind::Echo {
                from: EchoSource::Body { pointer },
            } = &h.source
            {
                out.push((at.clone(), pointer.clone()));
            }
        }
        Node::Object { fields } => {
            for f in fields {
                at.push(f.key.clone());
                echo_body_holes(&f.value, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// A body diff under a template with an echo hole depends on the request, so it is reused only
/// for a request carrying the same echoed values: an answer that fails to echo one request's
/// value and then echoes the next request's value exactly is judged on its own both times.
#[test]
fn a_diff_is_not_reused_for_a_request_with_other_echoed_values() {
    let sessions = demo_sessions();
    let model = synth(&sessions, "wraith-demo", "http://127.0.0.1:18080");
    let index = wraith_check::judge::ModelIndex::new(&model);
    let opts = wraith_check::DiffOptions::default();
    let probe = serde_json::Value::String("cache-probe-value".into());
    let mut probed = 0;
    for s in &sessions {
        for ex in &s.exchanges {
            let source = format!(
                "{}/{}",
                s.manifest.session_id, ex.correlation.exchange_index
            );
            let Some(route) = index.route_of_source(&source) else {
                continue;
            };
            let Ok(request) = serde_json::from_slice::<serde_json::Value>(&ex.request.body) else {
                continue;
            };
            let Ok(recorded) = serde_json::from_slice::<serde_json::Value>(&ex.response_body())
            else {
                continue;
            };
            for v in route
                .variants
                .iter()
                .filter(|v| v.status == ex.response.status)
            {
                let wraith_model::BodyTemplate::Json { root } = &v.body else {
                    continue;
                };
                let mut holes = Vec::new();
                echo_body_holes(root, &mut Vec::new(), &mut holes);
                for (keys, pointer) in holes {
                    let at = format!("/{}", keys.join("/"));
                    if keys.iter().any(|k| k.contains(['/', '~']))
                        || recorded.pointer(&at).is_none()
                        || request.pointer(&pointer).is_none()
                    {
                        continue;
                    }
                    // The answer carries the probe where the request's value belongs.
                    let mut answer = recorded.clone();
                    *answer.pointer_mut(&at).expect("present") = probe.clone();
                    let obs = wraith_check::Observed {
                        status: ex.response.status,
                        headers: vec![(
                            "content-type".into(),
                            ex.response_header("content-type")
                                .unwrap_or("application/json")
                                .into(),
                        )],
                        body: serde_json::to_vec(&answer).expect("json"),
                        provenance: Some(wraith_engine::Provenance::Template),
                        route: Some(format!("{} {}", route.method, route.path)),
                        replay: None,
                    };
                    // The next request sends the probe itself.
                    let mut next = ex.clone();
                    let mut body = request.clone();
                    *body.pointer_mut(&pointer).expect("present") = probe.clone();
                    next.request.body = serde_json::to_vec(&body).expect("json").into();
                    let mut cache = wraith_check::DiffCache::default();
                    let expected = wraith_check::ExpectedBody::of(ex);
                    let first = wraith_check::judge_with_cache(
                        &index,
                        &source,
                        ex,
                        &expected,
                        &obs,
                        &opts,
                        Some(&mut cache),
                    );
                    let second = wraith_check::judge_with_cache(
                        &index,
                        &source,
                        &next,
                        &expected,
                        &obs,
                        &opts,
                        Some(&mut cache),
                    );
                    let fresh = wraith_check::judge_prepared(
                        &index, &source, &next, &expected, &obs, &opts,
                    );
                    assert_eq!(second.divergences, fresh.divergences, "{source} {at}");
                    let path = format!("body.{}", keys.join("."));
                    if first.divergences.iter().any(|d| d.path == path) {
                        assert!(
                            !second.divergences.iter().any(|d| d.path == path),
                            "{source} {at}: {:?}",
                            second.divergences
                        );
                        probed += 1;
                    }
                }
            }
        }
    }
    assert!(probed > 0, "no echo hole to probe in the demo twin");
}

/// The tree the in-memory twin hands the judge with an answer (`Twin::call_with_tree`) is
/// exactly the parse of the answer's bytes, key order included: every answer of linode and
/// Mastodon sessions, in sample and held out (templates, list merges and rewritten moments
/// there, verbatim moments here).
#[test]
fn the_twin_answer_tree_is_the_parse_of_its_bytes() {
    let mut handed = 0usize;
    for (corpus, base, sessions) in both_corpora(40) {
        let (train, held) = wraith_check::holdout_split(&sessions, 3);
        let train_owned: Vec<_> = train.iter().map(|s| (*s).clone()).collect();
        let all: Vec<_> = sessions.iter().collect();
        let full_model = synth(&sessions, corpus, base);
        let held_model = synth(&train_owned, corpus, base);
        for (model, set) in [(&full_model, &all), (&held_model, &held)] {
            let engine = engine(model);
            let mut tw = wraith_check::InMemoryTwin::new(&engine);
            for s in set.iter() {
                let ns = format!("tree-{}", s.manifest.session_id);
                for ex in &s.exchanges {
                    let (obs, tree) = wraith_check::Twin::call_with_tree(
                        &mut tw,
                        &ns,
                        &wraith_check::request_of(ex),
                    )
                    .expect("in-memory answer");
                    let Some(tree) = tree else { continue };
                    handed += 1;
                    let parsed: serde_json::Value =
                        serde_json::from_slice(&obs.body).expect("a tree's answer parses");
                    assert_eq!(tree, parsed, "{}", s.manifest.session_id);
                    assert_eq!(
                        serde_json::to_vec(&tree).unwrap(),
                        serde_json::to_vec(&parsed).unwrap(),
                        "key order, {}",
                        s.manifest.session_id
                    );
                }
            }
        }
    }
    assert!(handed > 0, "no answer came with its tree");
}
