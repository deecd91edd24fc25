//! The simulation layers over HTTP: fault profiles (every fault type), seeded determinism,
//! rate limits and their reset rules, the trace ring endpoints and the access log.
//! Black-box: the real binary on 127.0.0.1. Nothing here measures time: delays are asserted
//! as the decided values the trace ring reports, and every hold is a few milliseconds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::model;
use support::{Server, Twin};

fn shop() -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t
}

/// Serve `t` with a fault profile written from `profile` plus `extra` flags.
fn serve_with_profile(t: &Twin, profile: &str, extra: &[&str]) -> Server {
    t.write("faults.toml", profile);
    let path = t.path().join("faults.toml");
    let mut args = vec!["--fault-profile", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    t.serve(&refs)
}

async fn trace_log(s: &Server, query: &str) -> Value {
    let r = s.get(&format!("/__wraith/trace/log{query}"), None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

#[test]
fn malformed_fault_profile_exits_1_naming_file_line_and_reason() {
    let t = shop();
    t.write(
        "faults.toml",
        "name = \"bad\"\n[[rules]]\nroute = \"*\"\npercentage = 250\n[rules.fault_type]\ntype = \"drop\"\n",
    );
    let path = t.path().join("faults.toml");
    let (code, err) = t.serve_expect_exit(&["--fault-profile", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("faults.toml:4"), "{err}");
    assert!(
        err.contains("percentage must be between 0 and 100"),
        "{err}"
    );

    t.write(
        "faults.toml",
        "[[rules]]\nroute = \"*\"\n[rules.fault_type]\ntype = \"explode\"\n",
    );
    let (code, err) = t.serve_expect_exit(&["--fault-profile", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("faults.toml:"), "{err}");
    assert!(err.contains("explode"), "{err}");

    // An interim status cannot answer a request: hyper would send a bare 500 for it.
    for status in [100, 101, 199] {
        t.write(
            "faults.toml",
            &format!("[[rules]]\nroute = \"*\"\n[rules.fault_type]\ntype = \"error\"\nstatus = {status}\n"),
        );
        let (code, err) = t.serve_expect_exit(&["--fault-profile", path.to_str().unwrap()]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("error status must be 200..=999"), "{err}");
    }
}

#[test]
fn drop_and_timeout_faults_refuse_unknown_keys_like_every_fault_type() {
    let t = shop();
    let path = t.path().join("faults.toml");
    for fault in [
        "type = \"drop\"\nstatus = 500",
        "type = \"drop\"\nhold_sm = 5",
        "type = \"timeout\"\nhold_ms = 5\nstatus = 500",
        "type = \"error\"\nstatus = 503\nbodyy = \"x\"",
    ] {
        t.write(
            "faults.toml",
            &format!("[[rules]]\nroute = \"*\"\n[rules.fault_type]\n{fault}\n"),
        );
        let (code, err) = t.serve_expect_exit(&["--fault-profile", path.to_str().unwrap()]);
        assert_eq!(code, 1, "{fault}: {err}");
        assert!(err.contains("faults.toml:"), "{fault}: {err}");
        assert!(err.contains("unknown field"), "{fault}: {err}");
    }
}

#[test]
fn malformed_latency_config_and_rate_limit_exit_1() {
    let t = shop();
    t.write("lat.toml", "[default]\nmode = \"warp\"\n");
    let path = t.path().join("lat.toml");
    let (code, err) = t.serve_expect_exit(&["--latency-config", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("lat.toml:1") && err.contains("warp"), "{err}");
    let (code, err) =
        t.serve_expect_exit(&["--rate-limit-override", "GET /v1/customers=five/1sec"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("five"), "{err}");
    let (code, err) = t.serve_expect_exit(&["--latency-mode", "fixed"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--latency-ms"), "{err}");
    // A window unit it does not know names the ones it does, short forms included.
    let (code, err) = t.serve_expect_exit(&["--rate-limit", "5/1.5s"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("`60s`") && err.contains("`1h`"), "{err}");
    // A trace ring of no entries would keep nothing.
    let (code, err) = t.serve_expect_exit(&["--trace", "--trace-capacity", "0"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--trace-capacity"), "{err}");
}

#[test]
fn latency_percentiles_that_decrease_exit_1_naming_the_points() {
    let t = shop();
    let (code, err) = t.serve_expect_exit(&[
        "--latency-mode",
        "percentile",
        "--latency-p50",
        "100",
        "--latency-p95",
        "10",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("--latency-mode percentile")
            && err.contains("p95 (10 ms) is below p50 (100 ms)"),
        "{err}"
    );
    // An unset p95 is the p50, so a p99 below the p50 is caught against it.
    let (code, err) = t.serve_expect_exit(&[
        "--latency-mode",
        "percentile",
        "--latency-p50",
        "100",
        "--latency-p99",
        "50",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("p99 (50 ms) is below p95 (100 ms)"), "{err}");
}

#[test]
fn latency_parameter_without_a_mode_that_takes_it_exits_1_naming_flag_and_mode() {
    let t = shop();
    // Without a mode, `--latency-ms 300` would be ignored: refused, naming the modes taking it.
    let (code, err) = t.serve_expect_exit(&["--latency-ms", "300"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--latency-ms"), "{err}");
    assert!(
        err.contains("--latency-mode fixed") && err.contains("--latency-mode normal"),
        "{err}"
    );
    // A parameter of another mode than the one chosen is refused too.
    let (code, err) = t.serve_expect_exit(&[
        "--latency-mode",
        "fixed",
        "--latency-ms",
        "300",
        "--latency-min-ms",
        "5",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--latency-min-ms"), "{err}");
    assert!(err.contains("--latency-mode uniform"), "{err}");
    let (code, err) = t.serve_expect_exit(&[
        "--latency-mode",
        "uniform",
        "--latency-min-ms",
        "1",
        "--latency-max-ms",
        "2",
        "--latency-p50",
        "9",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("--latency-p50") && err.contains("--latency-mode percentile"),
        "{err}"
    );
    let (code, err) = t.serve_expect_exit(&["--latency-stddev-ms", "3"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("--latency-stddev-ms") && err.contains("--latency-mode normal"),
        "{err}"
    );
}

#[tokio::test]
async fn error_fault_answers_configured_status_and_body_with_provenance_fault() {
    let t = shop();
    let s = serve_with_profile(
        &t,
        "name = \"e\"\n[[rules]]\nroute = \"GET /v1/customers/:id\"\npercentage = 100\n[rules.fault_type]\ntype = \"error\"\nstatus = 503\nbody = '{\"error\":\"maintenance\"}'\n",
        &[],
    );
    let r = s.get("/v1/customers/cus_1", None).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.json(), json!({"error": "maintenance"}));
    assert_eq!(r.provenance(), Some("fault"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers/:id"));
    // Another route dispatches normally.
    let r = s.get("/v1/customers", None).await;
    assert_eq!(r.status, 200);
    assert_ne!(r.provenance(), Some("fault"));
}

#[tokio::test]
async fn strict_fidelity_fault_names_the_recorded_path_not_the_template() {
    let t = shop();
    let s = serve_with_profile(
        &t,
        "[[rules]]\nroute = \"GET /v1/customers/:id\"\n[rules.fault_type]\ntype = \"error\"\nstatus = 503\n",
        &["--fidelity", "strict"],
    );
    // Strict fidelity has no template abstraction: the route is the recording's concrete path.
    let r = s.get("/v1/customers/cus_1", None).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.provenance(), Some("fault"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers/cus_1"));
    // No recording of this path: strict names no route, as its route miss would not.
    let r = s.get("/v1/customers/cus_unknown", None).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.provenance(), Some("fault"));
    assert_eq!(r.header("x-wraith-route"), None);
}

#[tokio::test]
async fn strict_fidelity_rate_limit_429_names_the_recorded_path() {
    let t = shop();
    let s = t.serve(&[
        "--fidelity",
        "strict",
        "--rate-limit",
        "--rate-limit-override",
        "GET /v1/customers/:id=1/60",
    ]);
    let r = s.get("/v1/customers/cus_1", Some("a")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers/cus_1"));
    let r = s.get("/v1/customers/cus_1", Some("a")).await;
    assert_eq!(r.status, 429);
    assert_eq!(r.provenance(), Some("fault"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers/cus_1"));
}

#[tokio::test]
async fn drop_fault_answers_499_with_an_empty_body_and_closes() {
    let t = shop();
    let s = serve_with_profile(
        &t,
        "[[rules]]\nroute = \"*\"\n[rules.fault_type]\ntype = \"drop\"\n",
        &[],
    );
    let r = s.get("/v1/customers", None).await;
    assert_eq!(r.status, 499);
    assert!(r.body.is_empty());
    assert_eq!(r.header("connection"), Some("close"));
    assert_eq!(r.provenance(), Some("fault"));
    // On the wire the status line carries nginx's reason phrase, not hyper's `<none>`.
    let addr = s.url.trim_start_matches("http://").to_string();
    let line = tokio::task::spawn_blocking(move || {
        use std::io::{BufRead as _, Write as _};
        let mut conn = std::net::TcpStream::connect(addr).unwrap();
        conn.write_all(b"GET /v1/customers HTTP/1.1\r\nHost: twin\r\n\r\n")
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(conn).read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap();
    assert_eq!(line.trim_end(), "HTTP/1.1 499 Client Closed Request");
}

#[tokio::test]
async fn timeout_fault_answers_504_after_its_hold() {
    let t = shop();
    let s = serve_with_profile(
        &t,
        "[[rules]]\nroute = \"*\"\n[rules.fault_type]\ntype = \"timeout\"\nhold_ms = 3\n",
        &["--trace"],
    );
    let r = s.get("/v1/customers", None).await;
    assert_eq!(r.status, 504);
    assert_eq!(r.provenance(), Some("fault"));
    let log = trace_log(&s, "").await;
    assert_eq!(log["entries"][0]["fault"], "timeout");
    assert_eq!(log["entries"][0]["delay_ms"], 3);
}

#[tokio::test]
async fn throttle_fault_429s_past_its_limit_with_rate_limit_headers() {
    let t = shop();
    let s = serve_with_profile(
        &t,
        "[[rules]]\nroute = \"GET /v1/customers\"\n[rules.fault_type]\ntype = \"throttle\"\nlimit = 2\nwindow_secs = 3600\n",
        &[],
    );
    for _ in 0..2 {
        assert_eq!(s.get("/v1/customers", None).await.status, 200);
    }
    let r = s.get("/v1/customers", None).await;
    assert_eq!(r.status, 429);
    assert_eq!(r.provenance(), Some("fault"));
    assert_eq!(r.header("x-ratelimit-limit"), Some("2"));
    assert_eq!(r.header("x-ratelimit-remaining"), Some("0"));
    let reset: i64 = r.header("x-ratelimit-reset").unwrap().parse().unwrap();
    assert!(
        reset > 1_600_000_000,
        "X-RateLimit-Reset is a unix time: {reset}"
    );
    let retry: u64 = r.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=3600).contains(&retry));
    assert_eq!(r.json()["code"], "rate_limited");
}

#[tokio::test]
async fn rate_limit_reset_reads_the_session_clock_like_date() {
    let t = shop();
    let s = t.serve(&[
        "--clock",
        "fixed",
        "--clock-epoch",
        "1700000000",
        "--rate-limit-override",
        "GET /v1/customers=1/60",
    ]);
    assert_eq!(s.get("/v1/customers", Some("a")).await.status, 200);
    let r = s.get("/v1/customers", Some("a")).await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("date"), Some("Tue, 14 Nov 2023 22:13:20 GMT"));
    // Reset is on the clock Date reads: a frozen clock gives the same header every run, and
    // Reset - Date is the wait.
    let reset: i64 = r.header("x-ratelimit-reset").unwrap().parse().unwrap();
    let retry: i64 = r.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    assert_eq!(reset, 1_700_000_000 + retry);
}

#[tokio::test]
async fn partial_fault_cuts_the_body_and_drops_counts_and_replay_claim() {
    let t = shop();
    let s = serve_with_profile(
        &t,
        "[[rules]]\nroute = \"GET /v1/customers/:id\"\n[rules.fault_type]\ntype = \"partial\"\nbytes = 7\n",
        &["--debug"],
    );
    let r = s.get("/v1/customers/cus_1", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body.len(), 7);
    assert_eq!(r.header("content-length"), Some("7"));
    assert_eq!(r.provenance(), Some("fault"));
    assert!(r.header("x-wraith-provenance-counts").is_none());
    assert!(r.header("x-wraith-replay").is_none());
    assert!(r.header("x-wraith-exchange").is_none());
}

#[tokio::test]
async fn header_match_selects_only_matching_requests() {
    let t = shop();
    let s = serve_with_profile(
        &t,
        "[[rules]]\nroute = \"*\"\nheader_match = [\"X-Tenant\", \"demo\"]\n[rules.fault_type]\ntype = \"error\"\nstatus = 418\n",
        &[],
    );
    let hit = s
        .send("GET", "/v1/customers", None, &[("x-tenant", "demo")], None)
        .await;
    assert_eq!(hit.status, 418);
    let miss = s
        .send("GET", "/v1/customers", None, &[("x-tenant", "other")], None)
        .await;
    assert_eq!(miss.status, 200);
}

async fn statuses(s: &Server, n: usize) -> Vec<u16> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(s.get("/v1/customers", None).await.status);
    }
    out
}

const HALF_ERRORS: &str = "[[rules]]\nroute = \"*\"\npercentage = 50\n[rules.fault_type]\ntype = \"error\"\nstatus = 500\n";

#[tokio::test]
async fn same_fault_seed_faults_the_same_requests_and_global_reset_restarts_the_sequence() {
    let t = shop();
    let a = serve_with_profile(&t, HALF_ERRORS, &["--fault-seed", "7"]);
    let b = serve_with_profile(&t, HALF_ERRORS, &["--fault-seed", "7"]);
    let sa = statuses(&a, 30).await;
    assert_eq!(sa, statuses(&b, 30).await);
    assert!(sa.contains(&500) && sa.contains(&200), "{sa:?}");
    let r = a.post("/__wraith/reset", None, json!({})).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        sa,
        statuses(&a, 30).await,
        "the reset re-seeds the fault RNG"
    );
}

async fn delays(s: &Server, n: usize) -> Vec<u64> {
    for _ in 0..n {
        s.get("/v1/customers", None).await;
    }
    let log = trace_log(s, &format!("?last={n}")).await;
    let mut d: Vec<u64> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["delay_ms"].as_u64().unwrap())
        .collect();
    d.reverse();
    d
}

#[tokio::test]
async fn same_latency_seed_gives_the_same_decided_delays_and_reset_restarts_them() {
    let t = shop();
    let flags = [
        "--trace",
        "--latency-mode",
        "uniform",
        "--latency-min-ms",
        "0",
        "--latency-max-ms",
        "4",
        "--latency-seed",
        "9",
    ];
    let a = t.serve(&flags);
    let b = t.serve(&flags);
    let da = delays(&a, 12).await;
    assert!(da.iter().all(|&d| d <= 4), "{da:?}");
    assert!(
        da.iter().any(|&d| d != da[0]),
        "uniform delays vary: {da:?}"
    );
    assert_eq!(da, delays(&b, 12).await);
    a.post("/__wraith/reset", None, json!({})).await;
    assert_eq!(da, delays(&a, 12).await);
}

#[tokio::test]
async fn fixed_latency_is_decided_for_every_request_and_a_delay_fault_replaces_it() {
    let t = shop();
    let s = serve_with_profile(
        &t,
        "[[rules]]\nroute = \"POST /v1/*\"\n[rules.fault_type]\ntype = \"delay\"\nmin_ms = 1\nmax_ms = 1\n",
        &["--trace", "--latency-mode", "fixed", "--latency-ms", "2"],
    );
    s.get("/v1/customers", None).await;
    s.post("/v1/customers", None, json!({"name": "Ann"})).await;
    let log = trace_log(&s, "").await;
    let e = log["entries"].as_array().unwrap();
    assert_eq!(
        (e[0]["method"].as_str(), e[0]["delay_ms"].as_u64()),
        (Some("POST"), Some(1))
    );
    assert_eq!(e[0]["fault"], "delay");
    assert_eq!(
        (e[1]["method"].as_str(), e[1]["delay_ms"].as_u64()),
        (Some("GET"), Some(2))
    );
    assert_eq!(e[1]["fault"], Value::Null);
}

#[tokio::test]
async fn rate_limit_override_answers_the_structured_429() {
    let t = shop();
    let s = t.serve(&[
        "--rate-limit",
        "--rate-limit-override",
        "GET /v1/customers=2/60",
    ]);
    assert_eq!(s.get("/v1/customers", Some("a")).await.status, 200);
    assert_eq!(s.get("/v1/customers", Some("a")).await.status, 200);
    let r = s.get("/v1/customers", Some("a")).await;
    assert_eq!(r.status, 429);
    assert_eq!(r.provenance(), Some("fault"));
    let body = r.json();
    assert_eq!(body["status"], 429);
    assert_eq!(body["code"], "rate_limited");
    assert!(body["retry_after"].as_u64().unwrap() >= 1);
    assert_eq!(r.header("x-ratelimit-limit"), Some("2"));
    assert!(r.header("retry-after").is_some());
    // Another session has its own quota; another route is not limited.
    assert_eq!(s.get("/v1/customers", Some("b")).await.status, 200);
    assert_eq!(s.get("/v1/customers/cus_1", Some("a")).await.status, 200);
}

#[tokio::test]
async fn wraith_toml_rate_limits_take_effect_and_a_flag_override_wins() {
    let t = shop();
    t.append_toml("[serve.rate_limits.\"GET /v1/customers\"]\nlimit = 1\nwindow_seconds = 60\n");
    let s = t.serve(&[]);
    assert_eq!(s.get("/v1/customers", Some("a")).await.status, 200);
    let r = s.get("/v1/customers", Some("a")).await;
    assert_eq!(r.status, 429, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("x-ratelimit-limit"), Some("1"));
    // Another route is not limited.
    assert_eq!(s.get("/v1/customers/cus_1", Some("a")).await.status, 200);
    drop(s);
    // A --rate-limit-override selecting the same requests comes first.
    let s = t.serve(&["--rate-limit-override", "GET /v1/customers=3/60"]);
    for _ in 0..3 {
        assert_eq!(s.get("/v1/customers", Some("a")).await.status, 200);
    }
    assert_eq!(s.get("/v1/customers", Some("a")).await.status, 429);
}

#[test]
fn a_wraith_toml_rate_limit_of_zero_exits_1_naming_the_entry() {
    let t = shop();
    t.append_toml("[serve.rate_limits.\"GET /v1/customers\"]\nlimit = 0\nwindow_seconds = 60\n");
    let (code, err) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("wraith.toml") && err.contains("[serve.rate_limits.\"GET /v1/customers\"]"),
        "{err}"
    );
}

#[tokio::test]
async fn a_serve_latency_table_sets_the_default_delay_and_a_latency_flag_replaces_it() {
    let t = shop();
    t.append_toml("[serve.latency]\nmode = \"fixed\"\nmin_ms = 3\n");
    let s = t.serve(&["--trace"]);
    assert!(
        !s.ready["warnings"].to_string().contains("[serve.latency]"),
        "{}",
        s.ready["warnings"]
    );
    assert_eq!(delays(&s, 3).await, [3, 3, 3]);
    drop(s);
    let s = t.serve(&["--trace", "--latency-mode", "fixed", "--latency-ms", "1"]);
    assert_eq!(delays(&s, 2).await, [1, 1], "the flag wins");
}

#[tokio::test]
async fn a_scaled_serve_latency_multiplies_the_recorded_timings_within_its_bounds() {
    let t = Twin::init("shop", "https://api.shop.test");
    let mut m = model::shop("shop");
    for r in &mut m.routes {
        r.latency = wraith_model::LatencyProfile {
            p50_ms: 10,
            p90_ms: 10,
            p99_ms: 10,
            sample_count: 4,
        };
    }
    t.write_model(&m);
    // Recorded draws lie in 5..=10 ms, doubled 10..=20, held within 12..=15.
    t.append_toml(
        "[serve.latency]\nmode = \"scaled\"\nmultiplier = 2.0\nmin_ms = 12\nmax_ms = 15\n",
    );
    let s = t.serve(&["--trace", "--latency-seed", "3"]);
    let d = delays(&s, 12).await;
    assert!(d.iter().all(|&x| (12..=15).contains(&x)), "{d:?}");
    assert!(
        d.contains(&15),
        "draws past the bound are held at it: {d:?}"
    );
}

#[tokio::test]
async fn the_recorded_latency_flag_is_held_at_the_serve_latency_cap() {
    let t = Twin::init("shop", "https://api.shop.test");
    let mut m = model::shop("shop");
    // Absurd recorded timings (a HAR entry whose `time` is days): never slept whole.
    for r in &mut m.routes {
        r.latency = wraith_model::LatencyProfile {
            p50_ms: 1_000_000_000,
            p90_ms: 1_000_000_000,
            p99_ms: u64::MAX,
            sample_count: 4,
        };
    }
    t.write_model(&m);
    t.append_toml("[serve.latency]\nmax_ms = 20\n");
    let s = t.serve(&["--trace", "--latency-mode", "recorded"]);
    assert_eq!(
        delays_within(&s).await,
        [20; 4],
        "held at [serve.latency] max_ms"
    );
    drop(s);
    let flags = [
        "--trace",
        "--latency-mode",
        "recorded",
        "--latency-max-ms",
        "7",
    ];
    let s = t.serve(&flags);
    assert_eq!(delays_within(&s).await, [7; 4], "held at --latency-max-ms");
}

/// [`delays`] of four requests, which must all be answered within 20 s.
async fn delays_within(s: &Server) -> Vec<u64> {
    tokio::time::timeout(std::time::Duration::from_secs(20), delays(s, 4))
        .await
        .expect("a recorded delay was slept uncapped")
}

#[test]
fn a_serve_latency_table_that_contradicts_itself_exits_1_naming_the_key() {
    for (table, key) in [
        ("mode = \"recorded\"\nmin_ms = 50\nmax_ms = 10\n", "min_ms"),
        ("mode = \"recorded\"\nmultiplier = 3.0\n", "multiplier"),
        ("mode = \"scaled\"\nmultiplier = -1.0\n", "multiplier"),
    ] {
        let t = shop();
        t.append_toml(&format!("[serve.latency]\n{table}"));
        let (code, err) = t.serve_expect_exit(&[]);
        assert_eq!(code, 1, "{table}: {err}");
        assert!(
            err.contains("wraith.toml") && err.contains(&format!("[serve.latency] {key}:")),
            "{table}: {err}"
        );
    }
}

async fn exhaust(s: &Server, session: &str) {
    s.get("/v1/customers", Some(session)).await;
    assert_eq!(s.get("/v1/customers", Some(session)).await.status, 429);
}

#[tokio::test]
async fn per_session_reset_clears_that_sessions_rate_limit_counters_only() {
    let t = shop();
    let s = t.serve(&["--rate-limit-override", "GET /v1/customers=1/3600sec"]);
    exhaust(&s, "a").await;
    exhaust(&s, "b").await;
    let r = s.post("/__wraith/session/a/reset", None, json!({})).await;
    assert_eq!(r.status, 200);
    assert_eq!(s.get("/v1/customers", Some("a")).await.status, 200);
    assert_eq!(s.get("/v1/customers", Some("b")).await.status, 429);
}

#[tokio::test]
async fn the_headerless_namespace_has_one_quota_and_a_session_named_default_its_own() {
    let t = shop();
    let s = t.serve(&["--rate-limit-override", "GET /v1/customers=2/3600sec"]);
    // No header and an empty value name one namespace, so one quota of two.
    assert_eq!(s.get("/v1/customers", None).await.status, 200);
    assert_eq!(s.get("/v1/customers", Some("")).await.status, 200);
    assert_eq!(s.get("/v1/customers", None).await.status, 429);
    // `default` is a session of its own, with its own quota.
    assert_eq!(s.get("/v1/customers", Some("default")).await.status, 200);
    assert_eq!(s.get("/v1/customers", Some("default")).await.status, 200);
    assert_eq!(s.get("/v1/customers", Some("default")).await.status, 429);
    // Resetting it gives that session its quota back, not the headerless namespace.
    let r = s
        .post("/__wraith/session/default/reset", None, json!({}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(s.get("/v1/customers", Some("default")).await.status, 200);
    assert_eq!(s.get("/v1/customers", Some("")).await.status, 429);
}

#[tokio::test]
async fn a_route_pattern_names_a_parameter_whatever_the_model_calls_it() {
    let t = shop();
    // The model's template is `/v1/customers/:id`; the patterns name it otherwise.
    let s = serve_with_profile(
        &t,
        "[[rules]]\nroute = \"DELETE /v1/customers/:customer\"\n[rules.fault_type]\ntype = \"error\"\nstatus = 502\n",
        &[
            "--rate-limit-override",
            "GET /v1/customers/:param=1/3600sec",
        ],
    );
    assert_eq!(s.delete("/v1/customers/cus_1", Some("p")).await.status, 502);
    assert_eq!(s.get("/v1/customers/cus_1", Some("p")).await.status, 200);
    assert_eq!(s.get("/v1/customers/cus_1", Some("p")).await.status, 429);
    // The collection route has no parameter segment: neither pattern selects it.
    assert_eq!(s.get("/v1/customers", Some("p")).await.status, 200);
    assert_eq!(s.get("/v1/customers", Some("p")).await.status, 200);
}

#[tokio::test]
async fn deleted_then_reused_session_starts_with_a_fresh_quota() {
    let t = shop();
    let s = t.serve(&["--rate-limit-override", "GET /v1/customers=1/3600sec"]);
    exhaust(&s, "w1").await;
    let r = s.delete("/__wraith/session/w1", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(s.get("/v1/customers", Some("w1")).await.status, 200);
}

#[tokio::test]
async fn global_reset_clears_every_sessions_rate_limit_counters() {
    let t = shop();
    let s = t.serve(&[
        "--rate-limit",
        "1/3600",
        "--rate-limit-algorithm",
        "sliding",
    ]);
    exhaust(&s, "a").await;
    exhaust(&s, "b").await;
    assert_eq!(s.post("/__wraith/reset", None, json!({})).await.status, 200);
    assert_eq!(s.get("/v1/customers", Some("a")).await.status, 200);
    assert_eq!(s.get("/v1/customers", Some("b")).await.status, 200);
}

#[tokio::test]
async fn trace_ring_lists_newest_first_filters_by_session_and_evicts_fifo() {
    let t = shop();
    let s = t.serve(&["--trace", "--trace-capacity", "3", "--access-log", "off"]);
    s.get("/v1/customers", Some("a")).await;
    s.get("/v1/customers/cus_1?expand=x", None).await;
    s.get("/v1/nothing-here", Some("a")).await;
    s.get("/v1/customers", Some("b")).await;
    let log = trace_log(&s, "").await;
    assert_eq!(log["capacity"], 3);
    let e = log["entries"].as_array().unwrap();
    assert_eq!(e.len(), 3, "the oldest entry was evicted");
    let ids: Vec<u64> = e.iter().map(|x| x["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, vec![4, 3, 2]);
    assert_eq!(e[0]["session"], "b");
    // A route miss is traced too.
    assert_eq!(e[1]["status"], 501);
    assert_eq!(e[1]["provenance"], "miss");
    assert_eq!(e[1]["route"], Value::Null);
    assert_eq!(e[2]["path"], "/v1/customers/cus_1?expand=x");
    assert_eq!(
        e[2]["session"],
        Value::Null,
        "the headerless namespace has no name"
    );
    assert_eq!(e[2]["route"], "GET /v1/customers/:id");
    assert!(e[2]["timestamp"].as_str().unwrap().ends_with('Z'));
    assert!(e[2]["duration_us"].is_u64());

    let only_a = trace_log(&s, "?session=a").await;
    assert_eq!(only_a["count"], 1);
    assert_eq!(only_a["entries"][0]["id"], 3);
    let last = trace_log(&s, "?last=1").await;
    assert_eq!(last["entries"][0]["id"], 4);

    let one = s.get("/__wraith/trace/2", None).await;
    assert_eq!(one.status, 200);
    assert_eq!(one.json()["path"], "/v1/customers/cus_1?expand=x");
    assert_eq!(s.get("/__wraith/trace/1", None).await.status, 404);
    assert_eq!(s.get("/__wraith/trace/abc", None).await.status, 400);

    let r = s.post("/__wraith/trace/reset", None, json!({})).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["cleared"], 3);
    assert_eq!(trace_log(&s, "").await["count"], 0);
}

#[tokio::test]
async fn trace_records_faults_and_rate_limit_429s() {
    let t = shop();
    let s = serve_with_profile(
        &t,
        "[[rules]]\nroute = \"DELETE *\"\n[rules.fault_type]\ntype = \"drop\"\n",
        &[
            "--trace",
            "--rate-limit-override",
            "GET /v1/customers=1/3600",
        ],
    );
    s.get("/v1/customers", None).await;
    s.get("/v1/customers", None).await;
    s.delete("/v1/customers/cus_1", None).await;
    let log = trace_log(&s, "").await;
    let e = log["entries"].as_array().unwrap();
    assert_eq!(
        (e[0]["status"].as_u64(), e[0]["fault"].as_str()),
        (Some(499), Some("drop"))
    );
    assert_eq!(
        (e[1]["status"].as_u64(), e[1]["fault"].as_str()),
        (Some(429), Some("rate_limit"))
    );
    assert_eq!(e[1]["provenance"], "fault");
    assert_eq!(e[2]["fault"], Value::Null);
}

/// A client may send its real credential in the URL (`?access_token=…`): the trace ring keeps
/// the request with that value masked, and the rest of the query as sent.
#[tokio::test]
async fn the_trace_masks_credentials_sent_in_the_query() {
    let t = shop();
    let s = t.serve(&["--trace"]);
    s.get(
        "/v1/customers?access_token=LIVE-SECRET-1&limit=2&api_key=LIVE-SECRET-2",
        None,
    )
    .await;
    let log = trace_log(&s, "").await;
    let text = log.to_string();
    assert!(!text.contains("LIVE-SECRET"), "{text}");
    assert_eq!(
        log["entries"][0]["path"],
        "/v1/customers?access_token=[REDACTED]&limit=2&api_key=[REDACTED]"
    );
}

#[tokio::test]
async fn trace_endpoints_are_404_without_trace_and_follow_the_control_token() {
    let t = shop();
    let s = t.serve(&[]);
    let r = s.get("/__wraith/trace/log", None).await;
    assert_eq!(r.status, 404);
    assert!(String::from_utf8_lossy(&r.body).contains("--trace"));

    let guarded = t.serve_env(
        &["--trace", "--control-token-env", "G_TRACE_TOKEN"],
        &[("G_TRACE_TOKEN", "tok")],
    );
    assert_eq!(guarded.get("/__wraith/trace/log", None).await.status, 401);
    let ok = guarded
        .send(
            "GET",
            "/__wraith/trace/log",
            None,
            &[("authorization", "Bearer tok")],
            None,
        )
        .await;
    assert_eq!(ok.status, 200);
    assert_eq!(
        guarded
            .send("POST", "/__wraith/trace/reset", None, &[], None)
            .await
            .status,
        401
    );
}

#[tokio::test]
async fn debug_trace_entries_carry_field_counts() {
    let t = shop();
    let s = t.serve(&["--trace", "--debug"]);
    s.post("/v1/customers", None, json!({"name": "Ann"})).await;
    let log = trace_log(&s, "").await;
    assert!(log["entries"][0]["field_counts"].is_object(), "{log}");
}

#[tokio::test]
async fn access_log_writes_one_json_line_per_request_when_piped() {
    let t = shop();
    let s = t.serve(&[]);
    s.get("/v1/customers?limit=1", Some("w9")).await;
    s.get("/__wraith/health", None).await;
    let lines: Vec<Value> = s
        .stderr()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("duration_us").is_some())
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "control requests are not access-logged: {lines:?}"
    );
    assert_eq!(lines[0]["path"], "/v1/customers?limit=1");
    assert_eq!(lines[0]["session"], "w9");
    assert_eq!(lines[0]["status"], 200);
}

#[tokio::test]
async fn access_log_compact_and_off() {
    let t = shop();
    let s = t.serve(&["--access-log", "compact"]);
    s.get("/v1/customers", None).await;
    let err = s.stderr();
    assert!(
        err.lines()
            .any(|l| l.contains(" GET /v1/customers 200 ") && l.contains(" session=- ")),
        "{err}"
    );
    let quiet = t.serve(&["--access-log", "off"]);
    quiet.get("/v1/customers", None).await;
    assert!(
        !quiet.stderr().contains("/v1/customers"),
        "{}",
        quiet.stderr()
    );
}

#[tokio::test]
async fn chaos_seed_answers_are_normal_or_marked_fault() {
    // The chaos profile itself is pinned by the engine tests; here the flag must start a
    // server whose answers are either normal or marked as faults.
    let t = shop();
    let s = t.serve(&["--chaos-seed", "3", "--trace"]);
    for _ in 0..10 {
        let r = s.get("/v1/customers", None).await;
        assert!(
            r.status == 200 || r.provenance() == Some("fault"),
            "{}",
            r.status
        );
    }
}

/// A word alone that is no standard method is a path missing its `/`: refused at start in a
/// fault profile, a rate-limit override flag and a `wraith.toml` rate limit, never read as a
/// method that selects nothing.
#[test]
fn a_route_pattern_that_is_a_bare_word_exits_1_suggesting_the_path() {
    let t = shop();
    t.write(
        "bare.toml",
        "[[rules]]\nroute = \"customers\"\n[rules.fault_type]\ntype = \"error\"\nstatus = 503\n",
    );
    let path = t.path().join("bare.toml");
    let (code, err) = t.serve_expect_exit(&["--fault-profile", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("bare.toml") && err.contains("`/customers`"),
        "{err}"
    );
    let (code, err) = t.serve_expect_exit(&["--rate-limit-override", "customers=1/60"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("`/customers`"), "{err}");
    t.append_toml("[serve.rate_limits.\"customers\"]\nlimit = 1\nwindow_seconds = 60\n");
    let (code, err) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("[serve.rate_limits.\"customers\"]") && err.contains("`/customers`"),
        "{err}"
    );
}

/// The status line of `GET path` on `s`, read off the wire.
async fn status_line(s: &Server, path: &str) -> String {
    let addr = s.url.trim_start_matches("http://").to_string();
    let request = format!("GET {path} HTTP/1.1\r\nHost: twin\r\nConnection: close\r\n\r\n");
    tokio::task::spawn_blocking(move || {
        use std::io::{BufRead as _, Write as _};
        let mut conn = std::net::TcpStream::connect(addr).unwrap();
        conn.write_all(request.as_bytes()).unwrap();
        let mut line = String::new();
        std::io::BufReader::new(conn).read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap()
}

/// A status without a registered reason phrase goes out with an empty one, never hyper's
/// `<none>` placeholder; a registered one keeps its phrase.
#[tokio::test]
async fn an_unregistered_status_goes_out_with_an_empty_reason_phrase() {
    let t = shop();
    let s = serve_with_profile(
        &t,
        "[[rules]]\nroute = \"GET /v1/customers\"\n[rules.fault_type]\ntype = \"error\"\nstatus = 520\nbody = \"x\"\n",
        &[],
    );
    assert_eq!(status_line(&s, "/v1/customers").await, "HTTP/1.1 520 \r\n");
    assert_eq!(
        status_line(&s, "/no/such/route").await.trim_end(),
        "HTTP/1.1 501 Not Implemented"
    );
}

/// A session every request of which a fault or a 429 answered has a spent quota but no
/// namespace: provisioning it starts it fresh, and a reset or delete of it (404: no live
/// session) still frees its quota.
#[tokio::test]
async fn a_session_only_faults_answered_starts_fresh_when_provisioned_or_deleted() {
    let t = shop();
    let s = serve_with_profile(
        &t,
        "[[rules]]\nroute = \"GET /v1/customers\"\n[rules.fault_type]\ntype = \"error\"\nstatus = 503\n",
        &["--rate-limit-override", "GET /v1/customers=1/3600sec"],
    );
    for id in ["z1", "z2", "z3"] {
        assert_eq!(s.get("/v1/customers", Some(id)).await.status, 503);
        assert_eq!(s.get("/v1/customers", Some(id)).await.status, 429);
    }
    let r = s
        .post("/__wraith/session", None, json!({"session": "z1"}))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(s.get("/v1/customers", Some("z1")).await.status, 503);
    assert_eq!(s.delete("/__wraith/session/z2", None).await.status, 404);
    assert_eq!(s.get("/v1/customers", Some("z2")).await.status, 503);
    let r = s.post("/__wraith/session/z3/reset", None, json!({})).await;
    assert_eq!(r.status, 404);
    assert_eq!(s.get("/v1/customers", Some("z3")).await.status, 503);
}

/// A `GET` pattern selects `HEAD` requests too (the GET route answers them, without a body): a
/// HEAD does not get past a GET's fault rule or rate limit.
#[tokio::test]
async fn a_get_pattern_faults_and_limits_head_requests_too() {
    let t = shop();
    let s = serve_with_profile(
        &t,
        "[[rules]]\nroute = \"GET /v1/customers/*\"\n[rules.fault_type]\ntype = \"error\"\nstatus = 503\n",
        &["--rate-limit-override", "GET /v1/customers=1/3600sec"],
    );
    let head = s.send("HEAD", "/v1/customers/cus_1", None, &[], None).await;
    assert_eq!(head.status, 503);
    assert_eq!(head.provenance(), Some("fault"));
    assert_eq!(s.get("/v1/customers", Some("h")).await.status, 200);
    let head = s.send("HEAD", "/v1/customers", Some("h"), &[], None).await;
    assert_eq!(head.status, 429);
}

/// A session past `[serve.limits] max_namespaces` is refused with 503 before any layer runs:
/// its request takes no rate-limit quota and leaves no counters behind (one set per refused
/// id, with no bound, is what a shared twin sees from tests minting fresh session ids). Once
/// a slot frees, that session starts with its whole quota.
#[tokio::test]
async fn a_session_past_the_namespace_cap_is_refused_before_it_takes_any_quota() {
    let t = shop();
    t.set_toml("serve.limits", "max_namespaces", "2");
    let s = t.serve(&["--rate-limit-override", "GET /v1/customers=1/3600sec"]);
    assert_eq!(s.get("/v1/customers", Some("a")).await.status, 200);
    assert_eq!(s.get("/v1/customers", Some("b")).await.status, 200);
    for _ in 0..3 {
        let r = s.get("/v1/customers", Some("c")).await;
        assert_eq!(r.status, 503);
        assert_eq!(r.json()["error"], "namespace-unavailable");
    }
    assert_eq!(s.delete("/__wraith/session/a", None).await.status, 200);
    assert_eq!(s.get("/v1/customers", Some("c")).await.status, 200);
    assert_eq!(s.get("/v1/customers", Some("c")).await.status, 429);
}
