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
    let (train, held) = wraith_check::holdout_split(&sessions, 5);
    let train_owned: Vec<_> = train.iter().map(|s| (*s).clone()).collect();
    let hm = synth(&train_owned, corpus, base);
    let h = check(&hm, &held);
    println!("== {corpus} holdout 5\n{}", summary(&h));
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
#[ignore = "writes a corpus report to $WRAITH_CHECK_DUMP for analysis"]
fn dump_report() {
    let corpus = std::env::var("WRAITH_CHECK_CORPUS").unwrap_or_else(|_| "mastodon".into());
    let base = if corpus == "linode" {
        "https://api.linode.com/v4beta"
    } else {
        "http://localhost:3000"
    };
    let sessions = har_sessions(&corpus, base, None);
    let model = synth(&sessions, &corpus, base);
    let all: Vec<_> = sessions.iter().collect();
    let r = check(&model, &all);
    let out = std::env::var("WRAITH_CHECK_DUMP").unwrap_or_else(|_| "/dev/null".into());
    std::fs::write(&out, wraith_model::to_canonical_json(&r).expect("json")).expect("write");
    std::fs::write(
        format!("{out}.model.json"),
        wraith_model::to_canonical_json(&model).expect("json"),
    )
    .expect("write");
}
