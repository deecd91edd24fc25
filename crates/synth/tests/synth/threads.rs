//! Synth spreads its work over the cores (routes, body parsing, large template nodes); the
//! model must not depend on how many there are or which thread finished first.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use wraith_synth::{SynthOptions, synthesize};

/// The Linode corpus is large enough to take every parallel path: a route whose answers list
/// thousands of items, and routes with more answers than one parse chunk's share.
fn canonical_model_on(threads: usize) -> String {
    let sessions = common::load_corpus("linode", "https://api.linode.com");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let synthesis = pool.install(|| {
        synthesize(
            &sessions,
            &SynthOptions {
                twin: "linode".into(),
                base_url: "https://api.linode.com/v4beta".into(),
                tool_version: "test".into(),
                tag: None,
                request_keying: Default::default(),
                run_gap_us: None,
            },
        )
    });
    wraith_model::to_canonical_json(&synthesis.model).expect("canonical JSON")
}

#[test]
fn the_model_is_the_same_bytes_on_one_thread_and_on_several() {
    let one = canonical_model_on(1);
    let several = canonical_model_on(3);
    assert!(one == several, "the model differs between 1 and 3 threads");
}
