//! Simulated latency: how long the server holds an answer before writing it.
//!
//! The policy only decides a number of milliseconds from its own seeded RNG; the server sleeps
//! it after the engine answered (and released the namespace lock).

use std::collections::BTreeMap;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use wraith_model::{LatencyProfile, Model};

use super::SimError;
use super::pattern::RoutePattern;
use super::profile::line_of;

/// How one request's delay is drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum LatencyMode {
    /// No delay.
    None,
    /// Always `ms`.
    Fixed { ms: u64 },
    /// Uniform in `min_ms..=max_ms`.
    Uniform { min_ms: u64, max_ms: u64 },
    /// Piecewise-linear quantile function through (0, p50/2), (0.50, p50), (0.95, p95),
    /// (0.99, p99), (1, p99).
    Percentile { p50: u64, p95: u64, p99: u64 },
    /// The matched route's recorded profile from the model: the quantile function through
    /// (0, p50/2), (0.50, p50), (0.90, p90), (0.99, p99), (1, p99). Routes without recorded
    /// timings (and route misses) get no delay.
    Recorded,
    /// Normal distribution, clamped at 0.
    Normal { mean_ms: f64, stddev_ms: f64 },
    /// One of the listed values, uniformly.
    List(Vec<u64>),
    /// The matched route's recorded profile drawn as [`LatencyMode::Recorded`] does, times
    /// `multiplier`, then held within `min_ms..=max_ms` (a route without recorded timings gets
    /// `min_ms`): `[serve.latency]` of `wraith.toml`, modes `recorded` and `scaled`.
    Scaled {
        multiplier: f64,
        min_ms: u64,
        max_ms: u64,
    },
}

/// The most a `recorded` latency mode waits unless told otherwise: `[serve.latency] max_ms`'s
/// default.
pub const RECORDED_MAX_MS: u64 = 5000;

/// The whole latency policy: a default mode and per-route overrides (first match wins).
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyPolicy {
    pub default: LatencyMode,
    pub routes: Vec<(RoutePattern, LatencyMode)>,
}

impl LatencyMode {
    /// The `percentile` mode from its three points, an unset p95 being the p50 and an unset
    /// p99 the p95. Points that decrease are refused rather than reordered: `p50 = 100, p95 =
    /// 10` is a typo more often than a wish, and no quantile function runs backwards.
    pub fn percentile(p50: u64, p95: Option<u64>, p99: Option<u64>) -> Result<LatencyMode, String> {
        let p95 = p95.unwrap_or(p50);
        let p99 = p99.unwrap_or(p95);
        if p95 < p50 {
            return Err(format!(
                "percentiles must not decrease: p95 ({p95} ms) is below p50 ({p50} ms)"
            ));
        }
        if p99 < p95 {
            return Err(format!(
                "percentiles must not decrease: p99 ({p99} ms) is below p95 ({p95} ms)"
            ));
        }
        Ok(LatencyMode::Percentile { p50, p95, p99 })
    }
}

impl Default for LatencyPolicy {
    fn default() -> Self {
        LatencyPolicy {
            default: LatencyMode::None,
            routes: Vec::new(),
        }
    }
}

impl LatencyPolicy {
    /// True when no request can ever be delayed.
    pub fn is_off(&self) -> bool {
        self.default == LatencyMode::None
            && self.routes.iter().all(|(_, m)| *m == LatencyMode::None)
    }

    /// The mode for a request.
    pub fn mode_for(&self, method: &str, path: &str, route: Option<&str>) -> &LatencyMode {
        self.routes
            .iter()
            .find(|(p, _)| p.matches(method, path, route))
            .map(|(_, m)| m)
            .unwrap_or(&self.default)
    }

    /// Parse `--latency-config FILE`:
    ///
    /// ```toml
    /// [default]
    /// mode = "normal"      # none | fixed | uniform | percentile | recorded | normal
    /// mean_ms = 120
    /// stddev_ms = 30
    /// [[routes]]
    /// route = "POST /v1/*"
    /// mode = "fixed"
    /// ms = 250
    /// ```
    ///
    /// Keys per entry: `ms`, `min_ms`, `max_ms`, `p50_ms`/`p95_ms`/`p99_ms` (also
    /// `p50`/`p95`/`p99`), `mean_ms`, `stddev_ms`, `latencies = [..]` (picks one uniformly;
    /// implies its own mode when `mode` is absent).
    pub fn parse_config(file: &str, text: &str) -> Result<LatencyPolicy, SimError> {
        let err = |at: usize, reason: String| SimError::LatencyConfig {
            file: file.to_string(),
            line: line_of(text, at),
            reason,
        };
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            err(
                super::profile::error_at(text, &e),
                e.message().trim().to_string(),
            )
        })?;
        let default = match raw.default {
            None => LatencyMode::None,
            Some(d) => {
                let at = d.span().start;
                d.into_inner().mode().map_err(|r| err(at, r))?
            }
        };
        let mut routes = Vec::new();
        for r in raw.routes {
            let at = r.span().start;
            let r = r.into_inner();
            let Some(route) = r.route.clone() else {
                return Err(err(at, "every [[routes]] entry needs `route`".into()));
            };
            let pattern =
                RoutePattern::parse(&route).map_err(|e| err(at, format!("route: {e}")))?;
            routes.push((pattern, r.mode().map_err(|e| err(at, e))?));
        }
        Ok(LatencyPolicy { default, routes })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    default: Option<toml::Spanned<RawMode>>,
    #[serde(default)]
    routes: Vec<toml::Spanned<RawMode>>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RawMode {
    #[serde(default)]
    route: Option<String>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    ms: Option<u64>,
    #[serde(default)]
    min_ms: Option<u64>,
    #[serde(default)]
    max_ms: Option<u64>,
    #[serde(default, alias = "p50")]
    p50_ms: Option<u64>,
    #[serde(default, alias = "p95")]
    p95_ms: Option<u64>,
    #[serde(default, alias = "p99")]
    p99_ms: Option<u64>,
    #[serde(default)]
    mean_ms: Option<f64>,
    #[serde(default)]
    stddev_ms: Option<f64>,
    #[serde(default)]
    latencies: Option<Vec<u64>>,
}

impl RawMode {
    fn mode(&self) -> Result<LatencyMode, String> {
        let need = |v: Option<u64>, key: &str, mode: &str| {
            v.ok_or_else(|| format!("mode `{mode}` needs `{key}`"))
        };
        let mode = match (&self.mode, &self.latencies) {
            (Some(m), _) => m.to_ascii_lowercase(),
            (None, Some(_)) => "list".to_string(),
            (None, None) => {
                return Err(
                    "`mode` is missing (none, fixed, uniform, percentile, recorded or normal)"
                        .into(),
                );
            }
        };
        match mode.as_str() {
            "none" => Ok(LatencyMode::None),
            "fixed" => Ok(LatencyMode::Fixed {
                ms: need(
                    self.ms.or(self.mean_ms.map(|m| m.max(0.0) as u64)),
                    "ms",
                    "fixed",
                )?,
            }),
            "uniform" => {
                let a = need(self.min_ms, "min_ms", "uniform")?;
                let b = need(self.max_ms, "max_ms", "uniform")?;
                Ok(LatencyMode::Uniform {
                    min_ms: a.min(b),
                    max_ms: a.max(b),
                })
            }
            "percentile" => {
                let p50 = need(self.p50_ms, "p50_ms", "percentile")?;
                LatencyMode::percentile(p50, self.p95_ms, self.p99_ms)
            }
            "recorded" | "list" => match &self.latencies {
                Some(l) if l.is_empty() => Err("`latencies` is empty".into()),
                Some(l) => Ok(LatencyMode::List(l.clone())),
                // Held within `min_ms..=max_ms` (5 s at most by default), as `[serve.latency]`
                // and the flag hold it: a recorded timing may be absurd.
                None if mode == "recorded" => Ok(LatencyMode::Scaled {
                    multiplier: 1.0,
                    min_ms: self.min_ms.unwrap_or(0),
                    max_ms: self.max_ms.unwrap_or(RECORDED_MAX_MS),
                }),
                None => Err("`latencies` is missing".into()),
            },
            "normal" => {
                let mean = self
                    .mean_ms
                    .or(self.ms.map(|m| m as f64))
                    .ok_or_else(|| "mode `normal` needs `mean_ms`".to_string())?;
                let sd = self.stddev_ms.unwrap_or(0.0);
                if !(mean.is_finite() && sd.is_finite() && mean >= 0.0 && sd >= 0.0) {
                    return Err("mean_ms and stddev_ms must be finite and >= 0".into());
                }
                Ok(LatencyMode::Normal {
                    mean_ms: mean,
                    stddev_ms: sd,
                })
            }
            other => Err(format!(
                "unknown latency mode `{other}`; use none, fixed, uniform, percentile, recorded or normal"
            )),
        }
    }
}

/// Recorded latency profiles by route name (`METHOD /path`).
pub(crate) fn recorded_profiles(model: &Model) -> BTreeMap<String, LatencyProfile> {
    model
        .routes
        .iter()
        .filter(|r| r.latency.sample_count > 0 || r.latency.p50_ms > 0)
        .map(|r| (format!("{} {}", r.method, r.path), r.latency))
        .collect()
}

/// Draw one delay in milliseconds.
pub(crate) fn draw(
    mode: &LatencyMode,
    route: Option<&str>,
    recorded: &BTreeMap<String, LatencyProfile>,
    rng: &mut ChaCha8Rng,
) -> u64 {
    match mode {
        LatencyMode::None => 0,
        LatencyMode::Fixed { ms } => *ms,
        LatencyMode::Uniform { min_ms, max_ms } => rng.random_range(*min_ms..=*max_ms),
        LatencyMode::Percentile { p50, p95, p99 } => quantile(
            &[
                (0.0, *p50 / 2),
                (0.5, *p50),
                (0.95, *p95),
                (0.99, *p99),
                (1.0, *p99),
            ],
            rng.random::<f64>(),
        ),
        LatencyMode::Recorded => match route.and_then(|r| recorded.get(r)) {
            None => 0,
            Some(p) => quantile(
                &[
                    (0.0, p.p50_ms / 2),
                    (0.5, p.p50_ms),
                    (0.9, p.p90_ms),
                    (0.99, p.p99_ms),
                    (1.0, p.p99_ms),
                ],
                rng.random::<f64>(),
            ),
        },
        LatencyMode::Normal { mean_ms, stddev_ms } => {
            // Box-Muller; 1 - u keeps the logarithm finite.
            let u1: f64 = 1.0 - rng.random::<f64>();
            let u2: f64 = rng.random::<f64>();
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            (mean_ms + stddev_ms * z).max(0.0).round() as u64
        }
        LatencyMode::List(values) => values[rng.random_range(0..values.len())],
        LatencyMode::Scaled {
            multiplier,
            min_ms,
            max_ms,
        } => {
            let base = draw(&LatencyMode::Recorded, route, recorded, rng) as f64;
            let scaled = (base * multiplier).round();
            // `as` saturates: a huge product is held at max_ms below anyway.
            (scaled.max(0.0) as u64).clamp(*min_ms, (*max_ms).max(*min_ms))
        }
    }
}

/// Linear interpolation of a quantile function given as (probability, ms) points; the values
/// are made non-decreasing first so a profile with p95 < p50 cannot run backwards.
fn quantile(points: &[(f64, u64)], u: f64) -> u64 {
    let mut pts: Vec<(f64, f64)> = Vec::with_capacity(points.len());
    let mut top = 0.0f64;
    for &(p, v) in points {
        top = top.max(v as f64);
        pts.push((p, top));
    }
    for w in pts.windows(2) {
        let ((p0, v0), (p1, v1)) = (w[0], w[1]);
        if u <= p1 {
            let t = if p1 > p0 { (u - p0) / (p1 - p0) } else { 1.0 };
            return (v0 + t * (v1 - v0)).round() as u64;
        }
    }
    top.round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn quantile_hits_its_anchor_points() {
        let pts = [(0.0, 5), (0.5, 10), (0.95, 50), (0.99, 90), (1.0, 90)];
        assert_eq!(quantile(&pts, 0.5), 10);
        assert_eq!(quantile(&pts, 0.95), 50);
        assert_eq!(quantile(&pts, 1.0), 90);
        assert_eq!(quantile(&pts, 0.0), 5);
    }

    #[test]
    fn scaled_draws_multiply_the_recorded_profile_within_bounds_and_unrecorded_routes_wait_the_least()
     {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let recorded = BTreeMap::from([(
            "GET /x".to_string(),
            LatencyProfile {
                p50_ms: 100,
                p90_ms: 200,
                p99_ms: 400,
                sample_count: 9,
            },
        )]);
        let m = LatencyMode::Scaled {
            multiplier: 0.5,
            min_ms: 30,
            max_ms: 150,
        };
        let draws: Vec<u64> = (0..500)
            .map(|_| draw(&m, Some("GET /x"), &recorded, &mut rng))
            .collect();
        // Recorded draws lie in 50..=400, halved 25..=200, held within 30..=150.
        assert!(draws.iter().all(|d| (30..=150).contains(d)), "{draws:?}");
        assert!(draws.contains(&30) && draws.contains(&150));
        assert!(draws.iter().any(|d| (31..150).contains(d)));
        assert_eq!(draw(&m, Some("GET /y"), &recorded, &mut rng), 30);
    }

    #[test]
    fn percentile_draws_stay_within_bounds() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let m = LatencyMode::Percentile {
            p50: 20,
            p95: 80,
            p99: 200,
        };
        for _ in 0..1000 {
            let d = draw(&m, None, &BTreeMap::new(), &mut rng);
            assert!((10..=200).contains(&d), "{d}");
        }
    }

    #[test]
    fn config_parses_default_and_route_overrides() {
        let text = "[default]\nmode = \"normal\"\nmean_ms = 100\nstddev_ms = 10\n\n[[routes]]\nroute = \"GET /v1/*\"\nmode = \"fixed\"\nms = 7\n\n[[routes]]\nroute = \"POST /v1/x\"\nlatencies = [1, 2]\n";
        let p = LatencyPolicy::parse_config("lat.toml", text).unwrap();
        assert_eq!(
            p.default,
            LatencyMode::Normal {
                mean_ms: 100.0,
                stddev_ms: 10.0
            }
        );
        assert_eq!(
            p.mode_for("GET", "/v1/a", None),
            &LatencyMode::Fixed { ms: 7 }
        );
        assert_eq!(
            p.mode_for("POST", "/v1/x", None),
            &LatencyMode::List(vec![1, 2])
        );
        assert_eq!(p.mode_for("PUT", "/v1/x", None), &p.default);
    }

    #[test]
    fn config_errors_name_file_and_line() {
        let text = "[default]\nmode = \"fixed\"\n\n[[routes]]\nroute = \"*\"\nmode = \"warp\"\n";
        let e = LatencyPolicy::parse_config("lat.toml", text).unwrap_err();
        assert!(
            matches!(e, SimError::LatencyConfig { line: 1, .. }),
            "{e:?}"
        );
        let text = "[[routes]]\nroute = \"*\"\nmode = \"warp\"\n";
        let e = LatencyPolicy::parse_config("lat.toml", text).unwrap_err();
        assert!(
            e.to_string().contains("lat.toml:1") && e.to_string().contains("warp"),
            "{e}"
        );
    }

    #[test]
    fn percentile_points_that_decrease_are_refused_in_a_config() {
        let text = "[default]\nmode = \"percentile\"\np50_ms = 100\np95_ms = 10\n";
        let e = LatencyPolicy::parse_config("lat.toml", text).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("lat.toml:1") && e.contains("p95 (10 ms)"), "{e}");
        let text =
            "[[routes]]\nroute = \"*\"\nmode = \"percentile\"\np50 = 10\np95 = 50\np99 = 40\n";
        let e = LatencyPolicy::parse_config("lat.toml", text).unwrap_err();
        assert!(
            e.to_string().contains("p99 (40 ms) is below p95 (50 ms)"),
            "{e}"
        );
        // Unset points take the one below, so a lone p50 is a flat profile, not an error.
        assert_eq!(
            LatencyMode::percentile(30, None, Some(80)),
            Ok(LatencyMode::Percentile {
                p50: 30,
                p95: 30,
                p99: 80
            })
        );
    }

    /// The percentile curve starts at (0, p50/2): the lower half of the draws falls under the
    /// median, down toward half of it.
    #[test]
    fn percentile_lower_tail_reaches_down_toward_half_the_median() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let m = LatencyMode::Percentile {
            p50: 100,
            p95: 300,
            p99: 900,
        };
        let draws: Vec<u64> = (0..1000)
            .map(|_| draw(&m, None, &BTreeMap::new(), &mut rng))
            .collect();
        let below = draws.iter().filter(|&&d| d < 100).count();
        assert!((400..=600).contains(&below), "{below} of 1000 under p50");
        let least = *draws.iter().min().unwrap();
        assert!((50..=55).contains(&least), "least draw {least}");
    }
}
