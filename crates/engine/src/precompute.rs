//! Facts of a finished model that every engine would otherwise compute on start, computed once
//! (by `wraith synth`, after synthesis) and stored in the model ([`wraith_model::Precomputed`]): each exact-replay moment's
//! verdict (is its stored text canonical, do the outbound body passes leave it unchanged, does it
//! name the upstream origin), and each variant's render snapshot (which recorded moment per
//! principal its observed holes and lists render from). `wraith check` builds a fresh engine per
//! run and used to work these out inside the timed replay.
//!
//! The verdicts depend on the twin's outbound configuration as well as on the model, so they are
//! stored with that configuration's fingerprint; an engine under another configuration ignores
//! them and decides lazily, as it does for models written before this step existed.

use crate::{Engine, EngineOptions, Fidelity, FixtureTree, OutboundPolicy};
use wraith_model::Model;

/// [`fill_with`] under the default outbound policy and fidelity (what an engine built with
/// default options serves under until a twin's policy is installed).
pub fn fill(model: &mut Model) {
    fill_with(model, OutboundPolicy::default(), Fidelity::default());
}

/// Store in `model` the verdicts of its moments under `policy` and `fidelity`, unless it already
/// holds them for that configuration. A configuration without a fingerprint (a caller's
/// tokenizer) or an engine that cannot be built leaves `precomputed` absent: the engine then
/// decides every verdict itself, which serves the same answers.
pub fn fill_with(model: &mut Model, policy: OutboundPolicy, fidelity: Fidelity) {
    let Some(fingerprint) = crate::outbound_fingerprint(&policy, fidelity) else {
        model.precomputed = None;
        return;
    };
    if model
        .precomputed
        .as_ref()
        .is_some_and(|p| p.outbound == fingerprint)
    {
        return;
    }
    // Stored verdicts of another configuration are not read by this one; decide them afresh.
    model.precomputed = None;
    let opts = EngineOptions {
        fidelity,
        ..EngineOptions::default()
    };
    // The engine owns the model it serves, so it gets a copy: synth pays for the copy and the
    // verdicts once, instead of every engine on every start.
    let Ok(mut engine) = Engine::new(model.clone(), None, FixtureTree::default(), opts) else {
        return;
    };
    if engine.set_outbound_policy(policy).is_err() {
        return;
    }
    model.precomputed = engine.precompute();
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn demo_model() -> Model {
        let mut model = crate::test_models::demo_model();
        fill(&mut model);
        model
    }

    #[test]
    fn fill_stores_the_verdicts_a_fresh_engine_decides() {
        let model = demo_model();
        let stored = model.precomputed.clone().expect("fill stores verdicts");
        let mut bare = model.clone();
        bare.precomputed = None;
        let engine =
            Engine::new(bare, None, FixtureTree::default(), EngineOptions::default()).unwrap();
        assert_eq!(engine.precompute(), Some(stored.clone()));
        let moments: usize = model
            .routes
            .iter()
            .flat_map(|r| &r.exact)
            .map(|e| e.moments.len())
            .sum();
        let codes: usize = stored.verdicts.values().flatten().map(|s| s.len()).sum();
        assert_eq!(codes, moments, "one verdict character per moment");
    }

    #[test]
    fn another_policy_replaces_the_stored_verdicts() {
        let mut model = demo_model();
        let default = model.precomputed.clone().expect("default verdicts");
        let policy = OutboundPolicy {
            key: b"another twin key".to_vec(),
            ..OutboundPolicy::default()
        };
        let want = crate::outbound_fingerprint(&policy, Fidelity::Synth);
        fill_with(&mut model, policy, Fidelity::Synth);
        let got = model.precomputed.expect("verdicts under the twin's policy");
        assert_eq!(Some(got.outbound.clone()), want);
        assert_ne!(got.outbound, default.outbound);
    }

    #[test]
    fn a_policy_with_a_tokenizer_stores_no_verdicts() {
        let mut model = demo_model();
        let policy = OutboundPolicy {
            tokenizer: Some(std::sync::Arc::new(|s: &str| s.to_string())),
            ..OutboundPolicy::default()
        };
        fill_with(&mut model, policy, Fidelity::Synth);
        assert_eq!(model.precomputed, None);
    }
}
