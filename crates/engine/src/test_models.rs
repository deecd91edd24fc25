//! Models the unit tests share.

use wraith_model::Model;

/// The model synth makes of the bundled wraith-demo recordings (unfilled: no precomputed
/// facts).
pub(crate) fn demo_model() -> Model {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpora/wraith-demo/recordings/sessions");
    let sessions = wraith_recording::read_sessions(&dir).expect("demo recordings");
    wraith_synth::synthesize(
        &sessions,
        &wraith_synth::SynthOptions {
            twin: "demo".into(),
            base_url: "http://127.0.0.1:18080".into(),
            tool_version: "test".into(),
            tag: None,
            request_keying: Default::default(),
            run_gap_us: None,
        },
    )
    .model
}
