//! The simulation layers' pure decision logic: fault rules (one test per fault type),
//! determinism of the seeded fault and latency sequences, chaos derivation, latency modes and
//! the rate-limit reset rules, all against a fake clock — nothing sleeps, nothing is timed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{Value, json};
use support::*;
use wraith_engine::Provenance;
use wraith_engine::sim::*;
use wraith_model::LatencyProfile;

const T0: i64 = 1_700_000_000_000_000;

struct FakeClock(Arc<AtomicI64>);

impl FakeClock {
    fn new() -> (FakeClock, SimClock) {
        let a = Arc::new(AtomicI64::new(T0));
        let b = Arc::clone(&a);
        (FakeClock(a), Arc::new(move || b.load(Ordering::SeqCst)))
    }
    fn advance_secs(&self, s: i64) {
        self.0.fetch_add(s * 1_000_000, Ordering::SeqCst);
    }
}

fn sim(cfg: SimConfig) -> (Simulation, FakeClock) {
    let (fake, clock) = FakeClock::new();
    (Simulation::new(cfg, &shop_model(), clock), fake)
}

fn profile(text: &str) -> FaultProfile {
    FaultProfile::parse("test.toml", text).unwrap()
}

fn faults(text: &str, seed: u64) -> SimConfig {
    SimConfig {
        faults: Some(profile(text)),
        fault_seed: seed,
        ..SimConfig::default()
    }
}

const NO_HEADERS: &[(String, String)] = &[];

fn rq<'a>(method: &'a str, path: &'a str, route: Option<&'a str>) -> SimRequest<'a> {
    SimRequest {
        method,
        path,
        route,
        headers: NO_HEADERS,
        session: None,
    }
}

fn in_session<'a>(mut r: SimRequest<'a>, s: &'a str) -> SimRequest<'a> {
    r.session = Some(s);
    r
}

fn responded(d: &Decision) -> &SimResponse {
    match &d.action {
        Action::Respond(r) => r,
        other => panic!("expected a short-circuit answer, got {other:?}"),
    }
}

fn body_json(r: &SimResponse) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

fn header<'a>(r: &'a SimResponse, name: &str) -> Option<&'a str> {
    r.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[test]
fn error_fault_answers_the_configured_status_and_body() {
    let (s, _) = sim(faults(
        "[[rules]]\nroute = \"POST /v1/*\"\npercentage = 100\n[rules.fault_type]\ntype = \"error\"\nstatus = 503\nbody = '{\"error\":\"down\"}'\n",
        1,
    ));
    let d = s.decide(&rq("POST", "/v1/customers", Some("POST /v1/customers")));
    assert_eq!(d.fault, Some(FaultKind::Error));
    let r = responded(&d);
    assert_eq!(r.status, 503);
    assert_eq!(body_json(r), json!({"error": "down"}));
    assert_eq!(header(r, "content-type"), Some("application/json"));
    // Other methods are untouched.
    assert_eq!(s.decide(&rq("GET", "/v1/customers", None)), Decision::PASS);
    let resp = r.clone().into_response(Some("POST /v1/customers"));
    assert_eq!(resp.provenance, Provenance::Fault);
}

#[test]
fn delay_fault_replaces_the_latency_instead_of_adding_to_it() {
    let mut cfg = faults(
        "[[rules]]\nroute = \"GET /v1/customers\"\n[rules.fault_type]\ntype = \"delay\"\nmin_ms = 300\nmax_ms = 400\n",
        3,
    );
    cfg.latency.default = LatencyMode::Fixed { ms: 10_000 };
    let (s, _) = sim(cfg);
    let d = s.decide(&rq("GET", "/v1/customers", None));
    assert_eq!(d.action, Action::Dispatch);
    assert_eq!(d.fault, Some(FaultKind::Delay));
    assert!((300..=400).contains(&d.delay_ms), "{}", d.delay_ms);
    // A request the rule does not select gets the latency.
    let d = s.decide(&rq("GET", "/v1/widgets/w1", None));
    assert_eq!((d.delay_ms, d.fault), (10_000, None));
}

#[test]
fn timeout_fault_holds_then_answers_504() {
    let (s, _) = sim(faults(
        "[[rules]]\nroute = \"*\"\n[rules.fault_type]\ntype = \"timeout\"\nhold_ms = 2500\n",
        0,
    ));
    let d = s.decide(&rq("GET", "/v1/customers", None));
    assert_eq!(d.fault, Some(FaultKind::Timeout));
    assert_eq!(d.delay_ms, 2500);
    assert_eq!(responded(&d).status, 504);
}

#[test]
fn drop_fault_answers_499_empty_and_closes() {
    let (s, _) = sim(faults(
        "[[rules]]\nroute = \"*\"\n[rules.fault_type]\ntype = \"drop\"\n",
        0,
    ));
    let d = s.decide(&rq("DELETE", "/v1/customers/c1", None));
    let r = responded(&d);
    assert_eq!((r.status, r.body.len(), r.close_connection), (499, 0, true));
    assert_eq!(d.fault, Some(FaultKind::Drop));
}

#[test]
fn throttle_fault_lets_limit_through_then_429s_with_rate_limit_headers() {
    let (s, clock) = sim(faults(
        "[[rules]]\nroute = \"GET /v1/customers\"\n[rules.fault_type]\ntype = \"throttle\"\nlimit = 2\nwindow_secs = 30\n",
        0,
    ));
    let get = rq("GET", "/v1/customers", Some("GET /v1/customers"));
    assert_eq!(s.decide(&get), Decision::PASS);
    assert_eq!(s.decide(&get), Decision::PASS);
    let d = s.decide(&get);
    assert_eq!(d.fault, Some(FaultKind::Throttle));
    let r = responded(&d);
    assert_eq!(r.status, 429);
    assert_eq!(header(r, "x-ratelimit-limit"), Some("2"));
    assert_eq!(header(r, "x-ratelimit-remaining"), Some("0"));
    assert_eq!(
        header(r, "x-ratelimit-reset"),
        Some((T0 / 1_000_000 + 30).to_string().as_str())
    );
    assert_eq!(header(r, "retry-after"), Some("30"));
    assert_eq!(body_json(r)["code"], "rate_limited");
    clock.advance_secs(30);
    assert_eq!(s.decide(&get), Decision::PASS);
}

/// `Date` reads the session clock's second rounded down: Reset is that second plus
/// `Retry-After`, whatever fraction of a second the refusal and the session clock stand at.
#[test]
fn rate_limit_reset_minus_the_dates_second_is_retry_after_at_any_fraction() {
    let (s, clock) = sim(faults(
        "[[rules]]\nroute = \"*\"\n[rules.fault_type]\ntype = \"throttle\"\nlimit = 1\nwindow_secs = 30\n",
        0,
    ));
    let get = rq("GET", "/v1/customers", Some("GET /v1/customers"));
    assert_eq!(s.decide(&get), Decision::PASS);
    // 0.2 s later the window frees in 29.8 s: Retry-After 30.
    clock.0.fetch_add(200_000, Ordering::SeqCst);
    let d = s.decide(&get);
    let mut r = responded(&d).clone();
    assert_eq!(header(&r, "retry-after"), Some("30"));
    // Said on a session clock 0.7 s into its second.
    let session_now = 1_800_000_000_700_000;
    r.stamp_reset(session_now);
    assert_eq!(
        header(&r, "x-ratelimit-reset"),
        Some((1_800_000_000 + 30).to_string().as_str())
    );
}

#[test]
fn partial_fault_cuts_the_body_and_drops_counts_and_replay_claim() {
    let (s, _) = sim(faults(
        "[[rules]]\nroute = \"*\"\n[rules.fault_type]\ntype = \"partial\"\nbytes = 5\n",
        0,
    ));
    let d = s.decide(&rq("GET", "/v1/customers/cus_1", None));
    assert_eq!(d.action, Action::Partial { bytes: 5 });
    let e = shop();
    let mut resp = get(&e, None, "/v1/customers/cus_1");
    assert!(resp.body.len() > 5);
    resp.replay = Some(wraith_engine::ReplayClass::SeriesMoment);
    resp.field_counts = Some(wraith_engine::FieldCounts::default());
    assert!(apply_partial(&mut resp, 5));
    assert_eq!(resp.body.len(), 5);
    assert_eq!(resp.provenance, Provenance::Fault);
    assert!(resp.replay.is_none() && resp.field_counts.is_none());
    // A body already short enough is not cut and keeps its provenance.
    let mut short = get(&e, None, "/v1/customers/cus_1");
    let before = short.provenance;
    assert!(!apply_partial(&mut short, 1 << 20));
    assert_eq!(short.provenance, before);
}

#[test]
fn header_match_is_case_insensitive_on_the_name_and_exact_on_the_value() {
    let (s, _) = sim(faults(
        "[[rules]]\nroute = \"*\"\nheader_match = [\"X-Tenant\", \"demo\"]\n[rules.fault_type]\ntype = \"drop\"\n",
        0,
    ));
    let demo = vec![("x-tenant".to_string(), "demo".to_string())];
    let other = vec![("x-tenant".to_string(), "Demo".to_string())];
    let mut r = rq("GET", "/v1/customers", None);
    r.headers = &demo;
    assert_eq!(s.decide(&r).fault, Some(FaultKind::Drop));
    r.headers = &other;
    assert_eq!(s.decide(&r), Decision::PASS);
}

#[test]
fn count_caps_triggers_until_the_global_reset() {
    let (s, _) = sim(faults(
        "[[rules]]\nroute = \"*\"\ncount = 2\n[rules.fault_type]\ntype = \"drop\"\n",
        0,
    ));
    let r = rq("GET", "/v1/customers", None);
    let kinds: Vec<_> = (0..4).map(|_| s.decide(&r).fault).collect();
    assert_eq!(
        kinds,
        vec![Some(FaultKind::Drop), Some(FaultKind::Drop), None, None]
    );
    s.reset();
    assert_eq!(s.decide(&r).fault, Some(FaultKind::Drop));
}

#[test]
fn first_matching_rule_wins() {
    let (s, _) = sim(faults(
        "[[rules]]\nroute = \"GET /v1/customers/:id\"\n[rules.fault_type]\ntype = \"drop\"\n\n[[rules]]\nroute = \"*\"\n[rules.fault_type]\ntype = \"error\"\nstatus = 500\n",
        0,
    ));
    // Matched through the route template, not the concrete path.
    let d = s.decide(&rq(
        "GET",
        "/v1/customers/cus_9",
        Some("GET /v1/customers/:id"),
    ));
    assert_eq!(d.fault, Some(FaultKind::Drop));
    let d = s.decide(&rq("GET", "/v1/customers", Some("GET /v1/customers")));
    assert_eq!(d.fault, Some(FaultKind::Error));
}

fn fault_pattern(s: &Simulation, n: usize) -> Vec<bool> {
    let r = rq("GET", "/v1/customers", None);
    (0..n).map(|_| s.decide(&r).fault.is_some()).collect()
}

const HALF: &str = "[[rules]]\nroute = \"*\"\npercentage = 50\n[rules.fault_type]\ntype = \"error\"\nstatus = 500\n";

#[test]
fn same_fault_seed_and_sequence_fault_the_same_requests() {
    let (a, _) = sim(faults(HALF, 7));
    let (b, _) = sim(faults(HALF, 7));
    let pa = fault_pattern(&a, 200);
    assert_eq!(pa, fault_pattern(&b, 200));
    let hits = pa.iter().filter(|&&x| x).count();
    assert!((60..=140).contains(&hits), "50% rolled {hits}/200");
    let (c, _) = sim(faults(HALF, 8));
    assert_ne!(pa, fault_pattern(&c, 200), "another seed, another sequence");
}

#[test]
fn global_reset_restarts_the_fault_and_latency_sequences() {
    let mut cfg = faults(HALF, 11);
    cfg.latency.default = LatencyMode::Uniform {
        min_ms: 0,
        max_ms: 1000,
    };
    cfg.latency_seed = 5;
    let (s, _) = sim(cfg);
    let r = rq("GET", "/v1/customers", None);
    let first: Vec<Decision> = (0..50).map(|_| s.decide(&r)).collect();
    s.reset();
    let again: Vec<Decision> = (0..50).map(|_| s.decide(&r)).collect();
    assert_eq!(first, again);
}

#[test]
fn percentage_zero_never_fires_and_hundred_always_fires() {
    let zero = HALF.replace("percentage = 50", "percentage = 0");
    let (s, _) = sim(faults(&zero, 1));
    assert!(fault_pattern(&s, 50).iter().all(|x| !x));
    let all = HALF.replace("percentage = 50", "percentage = 100");
    let (s, _) = sim(faults(&all, 1));
    assert!(fault_pattern(&s, 50).iter().all(|x| *x));
}

#[test]
fn chaos_profile_is_identical_for_the_same_seed_and_twin_whatever_the_route_order() {
    let m = shop_model();
    let mut shuffled = m.clone();
    shuffled.routes.reverse();
    let a = chaos_profile(&m, 42);
    assert_eq!(a, chaos_profile(&shuffled, 42));
    assert_eq!(a.name, "chaos-42");
    assert!(a.rules.len() <= m.routes.len());
    for r in &a.rules {
        match &r.fault {
            FaultType::Error { status, .. } => {
                assert!([500, 502, 503].contains(status));
                assert!((5.0..=15.0).contains(&r.percentage));
            }
            FaultType::Delay { min_ms, max_ms } => {
                assert!(min_ms <= max_ms);
                assert!((10.0..=30.0).contains(&r.percentage));
            }
            FaultType::Throttle { limit, .. } => assert!(*limit >= 1),
            FaultType::Timeout { .. } => assert!(r.percentage <= 5.0),
            other => panic!("chaos never draws {other:?}"),
        }
    }
}

#[test]
fn chaos_shares_match_the_documented_proportions_over_many_routes() {
    let mut m = shop_model();
    let template = m.routes[0].clone();
    m.routes = (0..2000)
        .map(|i| {
            let mut r = template.clone();
            r.id = format!("get_r{i:05}");
            r.path = format!("/r{i}");
            r
        })
        .collect();
    let p = chaos_profile(&m, 9);
    let share =
        |f: fn(&FaultType) -> bool| p.rules.iter().filter(|r| f(&r.fault)).count() as f64 / 2000.0;
    let err = share(|f| matches!(f, FaultType::Error { .. }));
    let delay = share(|f| matches!(f, FaultType::Delay { .. }));
    let thr = share(|f| matches!(f, FaultType::Throttle { .. }));
    let to = share(|f| matches!(f, FaultType::Timeout { .. }));
    assert!((0.26..0.34).contains(&err), "errors {err}");
    assert!((0.21..0.29).contains(&delay), "delays {delay}");
    assert!((0.12..0.18).contains(&thr), "throttles {thr}");
    assert!((0.03..0.07).contains(&to), "timeouts {to}");
    assert_ne!(p, chaos_profile(&m, 10));
}

fn latency(mode: LatencyMode, seed: u64) -> Simulation {
    sim(SimConfig {
        latency: LatencyPolicy {
            default: mode,
            routes: Vec::new(),
        },
        latency_seed: seed,
        ..SimConfig::default()
    })
    .0
}

fn delays(s: &Simulation, route: Option<&str>, n: usize) -> Vec<u64> {
    let r = rq("GET", "/v1/customers", route);
    (0..n).map(|_| s.decide(&r).delay_ms).collect()
}

#[test]
fn latency_none_and_fixed() {
    assert!(
        delays(&latency(LatencyMode::None, 0), None, 5)
            .iter()
            .all(|&d| d == 0)
    );
    assert_eq!(
        delays(&latency(LatencyMode::Fixed { ms: 42 }, 0), None, 3),
        vec![42; 3]
    );
}

#[test]
fn latency_uniform_stays_in_bounds_and_repeats_per_seed() {
    let s = latency(
        LatencyMode::Uniform {
            min_ms: 20,
            max_ms: 40,
        },
        3,
    );
    let d = delays(&s, None, 300);
    assert!(d.iter().all(|x| (20..=40).contains(x)));
    assert!(d.iter().any(|&x| x < 25) && d.iter().any(|&x| x > 35));
    let again = latency(
        LatencyMode::Uniform {
            min_ms: 20,
            max_ms: 40,
        },
        3,
    );
    assert_eq!(d, delays(&again, None, 300));
}

#[test]
fn latency_percentile_has_the_requested_median() {
    let s = latency(
        LatencyMode::Percentile {
            p50: 100,
            p95: 300,
            p99: 900,
        },
        1,
    );
    let mut d = delays(&s, None, 2001);
    d.sort_unstable();
    let median = d[1000];
    assert!((90..=110).contains(&median), "median {median}");
    assert!(*d.last().unwrap() <= 900);
    let p95 = d[1900];
    assert!((250..=350).contains(&p95), "p95 {p95}");
}

#[test]
fn latency_recorded_uses_the_route_profile_from_the_model() {
    let mut m = shop_model();
    let route = m
        .routes
        .iter_mut()
        .find(|r| r.method == "GET" && r.path == "/v1/customers")
        .unwrap();
    route.latency = LatencyProfile {
        p50_ms: 80,
        p90_ms: 150,
        p99_ms: 400,
        sample_count: 20,
    };
    let (_, clock) = FakeClock::new();
    let s = Simulation::new(
        SimConfig {
            latency: LatencyPolicy {
                default: LatencyMode::Recorded,
                routes: Vec::new(),
            },
            ..SimConfig::default()
        },
        &m,
        clock,
    );
    let mut d = delays(&s, Some("GET /v1/customers"), 1001);
    d.sort_unstable();
    assert!((70..=90).contains(&d[500]), "median {}", d[500]);
    assert!(*d.last().unwrap() <= 400);
    // A route without recorded timings, and a route miss, get no delay.
    assert!(
        delays(&s, Some("GET /v1/widgets/:id"), 5)
            .iter()
            .all(|&x| x == 0)
    );
    assert!(delays(&s, None, 5).iter().all(|&x| x == 0));
}

#[test]
fn latency_normal_centres_on_the_mean() {
    let s = latency(
        LatencyMode::Normal {
            mean_ms: 200.0,
            stddev_ms: 20.0,
        },
        4,
    );
    let d = delays(&s, None, 2000);
    let mean = d.iter().sum::<u64>() as f64 / d.len() as f64;
    assert!((195.0..205.0).contains(&mean), "mean {mean}");
    assert!(d.iter().all(|&x| x < 400));
}

#[test]
fn latency_route_overrides_win_over_the_default() {
    let policy = LatencyPolicy::parse_config(
        "lat.toml",
        "[default]\nmode = \"fixed\"\nms = 5\n\n[[routes]]\nroute = \"POST /v1/*\"\nmode = \"fixed\"\nms = 70\n",
    )
    .unwrap();
    let s = sim(SimConfig {
        latency: policy,
        ..SimConfig::default()
    })
    .0;
    assert_eq!(s.decide(&rq("POST", "/v1/customers", None)).delay_ms, 70);
    assert_eq!(s.decide(&rq("GET", "/v1/customers", None)).delay_ms, 5);
}

fn limited(spec: &str, algorithm: RateAlgorithm) -> (Simulation, FakeClock) {
    sim(SimConfig {
        rate_limit: Some(RateLimitConfig {
            default: None,
            overrides: vec![RateOverride::parse(spec).unwrap()],
            algorithm,
        }),
        ..SimConfig::default()
    })
}

fn allowed(s: &Simulation, session: &str, n: usize) -> usize {
    let r = in_session(
        rq("GET", "/v1/customers", Some("GET /v1/customers")),
        session,
    );
    (0..n).filter(|_| s.decide(&r).fault.is_none()).count()
}

#[test]
fn rate_limit_override_refuses_past_the_quota_with_the_structured_429() {
    let (s, clock) = limited("GET /v1/customers=3/60", RateAlgorithm::Fixed);
    assert_eq!(allowed(&s, "a", 3), 3);
    let d = s.decide(&in_session(rq("GET", "/v1/customers", None), "a"));
    assert_eq!(d.fault, Some(FaultKind::RateLimit));
    let r = responded(&d);
    let body = body_json(r);
    assert_eq!(body["status"], 429);
    assert_eq!(body["code"], "rate_limited");
    assert_eq!(body["retry_after"], 60);
    assert_eq!(header(r, "retry-after"), Some("60"));
    // Other routes are not limited.
    assert_eq!(
        s.decide(&in_session(rq("GET", "/v1/widgets/w", None), "a")),
        Decision::PASS
    );
    clock.advance_secs(60);
    assert_eq!(allowed(&s, "a", 4), 3);
}

#[test]
fn rate_limit_counters_are_per_session() {
    let (s, _) = limited("GET /v1/customers=2/60", RateAlgorithm::Fixed);
    assert_eq!(allowed(&s, "a", 5), 2);
    assert_eq!(allowed(&s, "b", 5), 2);
}

#[test]
fn per_session_reset_clears_only_that_sessions_counters() {
    let (s, _) = limited("GET /v1/customers=2/60", RateAlgorithm::Fixed);
    assert_eq!(allowed(&s, "a", 2), 2);
    assert_eq!(allowed(&s, "b", 2), 2);
    s.clear_session("a");
    assert_eq!(allowed(&s, "a", 5), 2);
    assert_eq!(allowed(&s, "b", 5), 0);
}

#[test]
fn global_reset_clears_every_sessions_counters() {
    let (s, _) = limited("GET /v1/customers=1/60", RateAlgorithm::Fixed);
    assert_eq!(allowed(&s, "a", 2), 1);
    assert_eq!(allowed(&s, "b", 2), 1);
    s.reset();
    assert_eq!(allowed(&s, "a", 2), 1);
    assert_eq!(allowed(&s, "b", 2), 1);
}

#[test]
fn clearing_the_session_named_default_leaves_the_headerless_counters() {
    let (s, _) = limited("GET /v1/customers=1/60", RateAlgorithm::Fixed);
    let headerless = rq("GET", "/v1/customers", None);
    let named = in_session(rq("GET", "/v1/customers", None), "default");
    assert!(s.decide(&headerless).fault.is_none());
    assert!(s.decide(&headerless).fault.is_some());
    assert!(
        s.decide(&named).fault.is_none(),
        "`default` has a quota of its own"
    );
    assert!(s.decide(&named).fault.is_some());
    s.clear_session("default");
    assert!(s.decide(&named).fault.is_none());
    assert!(s.decide(&headerless).fault.is_some());
}

#[test]
fn sliding_window_reopens_as_requests_age_out() {
    let (s, clock) = limited("GET /v1/customers=2/10sec", RateAlgorithm::Sliding);
    assert_eq!(allowed(&s, "a", 1), 1);
    clock.advance_secs(5);
    assert_eq!(allowed(&s, "a", 2), 1);
    clock.advance_secs(5);
    // The first request left the window; the second is still in it.
    assert_eq!(allowed(&s, "a", 2), 1);
}

#[test]
fn rate_limit_runs_before_faults() {
    let mut cfg = faults(
        "[[rules]]\nroute = \"*\"\n[rules.fault_type]\ntype = \"drop\"\n",
        0,
    );
    cfg.rate_limit = Some(RateLimitConfig {
        default: Some(Limit {
            limit: 1,
            window_secs: 60,
        }),
        overrides: Vec::new(),
        algorithm: RateAlgorithm::Fixed,
    });
    let (s, _) = sim(cfg);
    let r = rq("GET", "/v1/customers", Some("GET /v1/customers"));
    assert_eq!(s.decide(&r).fault, Some(FaultKind::Drop));
    assert_eq!(s.decide(&r).fault, Some(FaultKind::RateLimit));
}

/// The shop model with `moments` recorded for `GET /v1/customers?limit=1000`, simulated
/// under a rate limit of one request per `window_secs`.
fn limited_with_recorded(moments: Vec<wraith_model::Moment>, window_secs: u64) -> Simulation {
    let mut m = shop_model();
    let route = m
        .routes
        .iter_mut()
        .find(|r| r.method == "GET" && r.path == "/v1/customers")
        .unwrap();
    route.exact.push(wraith_model::ExactEntry {
        key: wraith_model::RequestKey {
            path: "/v1/customers".into(),
            query: "limit=1000".into(),
            body: None,
        },
        moments,
        session_bound: Vec::new(),
    });
    let (_, clock) = FakeClock::new();
    Simulation::new(
        SimConfig {
            rate_limit: Some(RateLimitConfig {
                default: Some(Limit {
                    limit: 1,
                    window_secs,
                }),
                overrides: Vec::new(),
                algorithm: RateAlgorithm::Fixed,
            }),
            ..SimConfig::default()
        },
        &m,
        clock,
    )
}

#[test]
fn recorded_429_shape_is_preferred_for_the_rate_limit_body() {
    let s = limited_with_recorded(
        vec![moment(
            "s1/9",
            429,
            json!({"error": {"type": "rate_limit_error"}}),
        )],
        1,
    );
    let r = rq("GET", "/v1/customers", Some("GET /v1/customers"));
    s.decide(&r);
    let d = s.decide(&r);
    let resp = responded(&d);
    assert_eq!(
        body_json(resp),
        json!({"error": {"type": "rate_limit_error"}})
    );
    assert_eq!(header(resp, "x-ratelimit-limit"), Some("1"));
    assert_eq!(header(resp, "retry-after"), Some("1"));
}

#[test]
fn all_layers_off_is_reported_off() {
    assert!(SimConfig::default().is_off());
    let mut cfg = SimConfig::default();
    cfg.latency.default = LatencyMode::Fixed { ms: 1 };
    assert!(!cfg.is_off());
}

/// A throttle rule counts its window per session: one session using up its allowance leaves
/// another session's allowance whole.
#[test]
fn throttle_fault_allowance_is_per_session() {
    let (s, _) = sim(faults(
        "[[rules]]\nroute = \"GET /v1/customers\"\n[rules.fault_type]\ntype = \"throttle\"\nlimit = 2\nwindow_secs = 30\n",
        0,
    ));
    assert_eq!(allowed(&s, "a", 5), 2);
    assert_eq!(allowed(&s, "b", 5), 2);
    let d = s.decide(&in_session(
        rq("GET", "/v1/customers", Some("GET /v1/customers")),
        "b",
    ));
    assert_eq!(d.fault, Some(FaultKind::Throttle));
}

/// A delay fault replaces the latency without drawing from the latency RNG: the requests after
/// it get the delays they would have got had the faulted request never been sent.
#[test]
fn delay_fault_does_not_advance_the_latency_sequence() {
    let cfg = || {
        let mut cfg = faults(
            "[[rules]]\nroute = \"POST /v1/customers\"\n[rules.fault_type]\ntype = \"delay\"\nmin_ms = 5000\nmax_ms = 6000\n",
            3,
        );
        cfg.latency.default = LatencyMode::Uniform {
            min_ms: 0,
            max_ms: 1000,
        };
        cfg.latency_seed = 9;
        cfg
    };
    let get = rq("GET", "/v1/customers", Some("GET /v1/customers"));
    let post = rq("POST", "/v1/customers", Some("POST /v1/customers"));
    let (with_fault, _) = sim(cfg());
    let mut faulted = Vec::new();
    for i in 0..8 {
        if i == 2 {
            let d = with_fault.decide(&post);
            assert_eq!(d.fault, Some(FaultKind::Delay));
            assert!((5000..=6000).contains(&d.delay_ms), "{}", d.delay_ms);
        }
        let d = with_fault.decide(&get);
        assert_eq!(d.fault, None);
        faulted.push(d.delay_ms);
    }
    let (without, _) = sim(cfg());
    let plain: Vec<u64> = (0..8).map(|_| without.decide(&get).delay_ms).collect();
    assert_eq!(faulted, plain);
    assert!(plain.windows(2).any(|w| w[0] != w[1]), "{plain:?}");
}

/// A body exactly `bytes` long is already short enough: not cut, and it keeps its provenance
/// and replay claim.
#[test]
fn partial_fault_leaves_a_body_of_exactly_the_cut_length_whole() {
    let e = shop();
    let mut resp = get(&e, None, "/v1/customers/cus_1");
    resp.replay = Some(wraith_engine::ReplayClass::SeriesMoment);
    let before = (resp.body.clone(), resp.provenance);
    let len = resp.body.len();
    assert!(len > 0);
    assert!(!apply_partial(&mut resp, len));
    assert_eq!((resp.body.clone(), resp.provenance), before);
    assert_ne!(resp.provenance, Provenance::Fault);
    assert!(resp.replay.is_some());
}

/// A partial fault dispatches and cuts, but the answer is still held for the decided latency.
#[test]
fn partial_fault_still_gets_the_latency() {
    let mut cfg = faults(
        "[[rules]]\nroute = \"*\"\n[rules.fault_type]\ntype = \"partial\"\nbytes = 5\n",
        0,
    );
    cfg.latency.default = LatencyMode::Fixed { ms: 250 };
    let (s, _) = sim(cfg);
    let d = s.decide(&rq("GET", "/v1/customers/cus_1", None));
    assert_eq!(d.action, Action::Partial { bytes: 5 });
    assert_eq!(d.delay_ms, 250);
}

/// The 429 body is the route's first recorded 429 moment, not a later one.
#[test]
fn recorded_429_body_is_the_routes_first_recorded_429() {
    let s = limited_with_recorded(
        vec![
            moment("s1/9", 429, json!({"error": "first"})),
            moment("s1/10", 429, json!({"error": "second"})),
        ],
        60,
    );
    let r = rq("GET", "/v1/customers", Some("GET /v1/customers"));
    assert_eq!(s.decide(&r), Decision::PASS);
    let d = s.decide(&r);
    assert_eq!(body_json(responded(&d)), json!({"error": "first"}));
}

/// A route miss is limited under its own `METHOD path`: two unmatched paths each get their own
/// quota.
#[test]
fn rate_limit_quota_of_a_route_miss_is_per_method_and_path() {
    let (s, _) = sim(SimConfig {
        rate_limit: Some(RateLimitConfig {
            default: Some(Limit {
                limit: 1,
                window_secs: 60,
            }),
            overrides: Vec::new(),
            algorithm: RateAlgorithm::Fixed,
        }),
        ..SimConfig::default()
    });
    let a = rq("GET", "/v1/nowhere/a", None);
    let b = rq("GET", "/v1/nowhere/b", None);
    assert_eq!(s.decide(&a), Decision::PASS);
    assert_eq!(s.decide(&b), Decision::PASS);
    assert_eq!(s.decide(&a).fault, Some(FaultKind::RateLimit));
    assert_eq!(s.decide(&b).fault, Some(FaultKind::RateLimit));
}
