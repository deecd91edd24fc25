//! `--chaos-seed N`: a fault profile derived from the model's routes.
//!
//! Routes are sorted by id before any draw, so the same seed and the same twin always give the
//! same profile, whatever order the model lists its routes in. Per route, one draw decides:
//! ≈30% random errors (500/502/503 at 5–15%), ≈25% delays (at 10–30%, 100–2000 ms), ≈15%
//! throttling (10–50 requests per 10–60 s), ≈5% timeouts (at 2–5%, held 1–5 s); the rest
//! (≈25%) are left alone.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wraith_model::Model;

use super::pattern::RoutePattern;
use super::profile::{FaultProfile, FaultRule, FaultType};

/// Derive the chaos profile for `model` from `seed`.
pub fn chaos_profile(model: &Model, seed: u64) -> FaultProfile {
    let mut routes: Vec<&wraith_model::Route> = model.routes.iter().collect();
    routes.sort_by(|a, b| a.id.cmp(&b.id).then_with(|| a.path.cmp(&b.path)));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut rules = Vec::new();
    for r in routes {
        let roll: f64 = rng.random();
        let fault = if roll < 0.30 {
            let status = [500u16, 502, 503][rng.random_range(0..3usize)];
            let pct = rng.random_range(5..=15u32);
            Some((
                f64::from(pct),
                FaultType::Error {
                    status,
                    body: format!(
                        "{{\"status\":{status},\"code\":\"chaos_error\",\"message\":\"injected by --chaos-seed {seed}\"}}"
                    ),
                },
            ))
        } else if roll < 0.55 {
            let pct = rng.random_range(10..=30u32);
            let min_ms = rng.random_range(100..=500u64);
            let max_ms = rng.random_range(min_ms..=2000u64);
            Some((f64::from(pct), FaultType::Delay { min_ms, max_ms }))
        } else if roll < 0.70 {
            let limit = rng.random_range(10..=50u64);
            let window_secs = rng.random_range(10..=60u64);
            Some((100.0, FaultType::Throttle { limit, window_secs }))
        } else if roll < 0.75 {
            let pct = rng.random_range(2..=5u32);
            let hold_ms = rng.random_range(1000..=5000u64);
            Some((f64::from(pct), FaultType::Timeout { hold_ms }))
        } else {
            None
        };
        let Some((percentage, fault)) = fault else {
            continue;
        };
        let text = format!("{} {}", r.method.to_ascii_uppercase(), r.path);
        // A model route path is always `/...`; one that is not cannot be targeted and is skipped.
        let Ok(route) = RoutePattern::parse(&text) else {
            continue;
        };
        rules.push(FaultRule {
            route,
            percentage,
            header_match: None,
            count: None,
            fault,
        });
    }
    FaultProfile {
        name: format!("chaos-{seed}"),
        rules,
    }
}
