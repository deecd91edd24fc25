//! Synth is a pure function of the recordings: the same sessions give byte-identical canonical
//! output whatever order the sessions, and the exchanges inside them, arrive in.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::OnceLock;

use proptest::prelude::*;
use wraith_recording::RecordedSession;
use wraith_synth::{SynthOptions, synthesize};

/// A small mixed corpus: a few Mastodon and Linode sessions plus the wraith-demo recordings.
fn corpus() -> &'static Vec<RecordedSession> {
    static CELL: OnceLock<Vec<RecordedSession>> = OnceLock::new();
    CELL.get_or_init(|| {
        let mut sessions = Vec::new();
        for name in [
            "test_status.har",
            "test_status_missing.har",
            "test_list_update.har",
            "test_home_tl.har",
            "test_unauthed_home_tl_throws.har",
        ] {
            sessions.push(common::load_har(
                &common::corpora().join("mastodon").join(name),
                "http://localhost:3000",
            ));
        }
        for name in [
            "TestDomain_Update.har",
            "TestDomainRecord_Update.har",
            "TestInstance_GetMonthlyTransfer.har",
        ] {
            let path = common::corpora().join("linode").join(name);
            if path.exists() {
                sessions.push(common::load_har(&path, "http://localhost:3000"));
            }
        }
        let demo = common::corpora().join("wraith-demo/recordings/sessions");
        sessions.extend(wraith_recording::read_sessions(&demo).unwrap());
        sessions
    })
}

fn canonical(sessions: &[RecordedSession]) -> (String, String) {
    let s = synthesize(
        sessions,
        &SynthOptions {
            twin: "mixed".into(),
            base_url: "http://localhost:3000".into(),
            tool_version: "test".into(),
            tag: None,
            request_keying: Default::default(),
            run_gap_us: None,
        },
    );
    (
        wraith_model::to_canonical_json(&s.model).unwrap(),
        wraith_model::to_canonical_json(&s.symbols).unwrap(),
    )
}

fn baseline() -> &'static (String, String) {
    static CELL: OnceLock<(String, String)> = OnceLock::new();
    CELL.get_or_init(|| canonical(corpus()))
}

/// Fisher–Yates with a tiny LCG, so proptest only has to generate seeds.
fn shuffle<T>(items: &mut [T], mut seed: u64) {
    for i in (1..items.len()).rev() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let j = (seed >> 33) as usize % (i + 1);
        items.swap(i, j);
    }
}

#[test]
fn synthesizing_twice_gives_identical_bytes() {
    assert_eq!(&canonical(corpus()), baseline());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn input_order_does_not_change_the_output(session_seed in any::<u64>(), exchange_seed in any::<u64>()) {
        let mut sessions = corpus().clone();
        shuffle(&mut sessions, session_seed);
        for (k, s) in sessions.iter_mut().enumerate() {
            shuffle(&mut s.exchanges, exchange_seed.wrapping_add(k as u64));
        }
        let out = canonical(&sessions);
        prop_assert!(out == *baseline(), "output changed with input order");
    }
}
