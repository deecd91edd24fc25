//! The `Date` of every answer reads the twin's clock, not the wall clock: under `--clock fixed`
//! a miss, a refused session header, a Lua handler's answer, a rate-limited 429 and the control plane all
//! carry the frozen instant, and a namespace provisioned with its own clock dates its answers
//! by that clock. Black-box: the real binary serving the bundled shop twin.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;

/// `--clock-epoch 1700000000`, as an HTTP date.
const FROZEN: &str = "Tue, 14 Nov 2023 22:13:20 GMT";

#[tokio::test]
async fn every_answer_is_dated_by_the_fixed_clock_misses_and_refusals_included() {
    let t = support::example_shop_twin();
    let server = t.serve(&[
        "--clock",
        "fixed",
        "--clock-epoch",
        "1700000000",
        "--rate-limit-override",
        "GET /customers/:param=1/60",
    ]);
    let s = Some("dated");
    let miss = server.get("/no/such/route", s).await;
    miss.assert_status(501);
    assert_eq!(miss.header("date"), Some(FROZEN), "route miss");

    // A session value that is not UTF-8 is refused before any namespace exists.
    let refused = server.get_raw_session("/customers", b"caf\xe9").await;
    refused.assert_status(400);
    assert_eq!(
        refused.header("date"),
        Some(FROZEN),
        "bad session header refusal"
    );

    let handler = server.get("/customers/cus_FixtureMarg001/summary", s).await;
    handler.assert_status(200);
    assert_eq!(handler.provenance(), Some("handler"));
    assert_eq!(handler.header("date"), Some(FROZEN), "Lua handler answer");

    let read = server.get("/customers/cus_FixtureMarg001", s).await;
    read.assert_status(200);
    let limited = server.get("/customers/cus_FixtureMarg001", s).await;
    limited.assert_status(429);
    assert_eq!(limited.header("date"), Some(FROZEN), "rate-limited 429");

    let headerless = server.get("/no/such/route", None).await;
    assert_eq!(headerless.header("date"), Some(FROZEN), "default namespace");

    let health = server.get("/__wraith/health", None).await;
    health.assert_status(200);
    assert_eq!(health.header("date"), Some(FROZEN), "control plane");
}

#[tokio::test]
async fn a_provisioned_clock_dates_its_namespace_answers() {
    let t = support::example_shop_twin();
    let server = t.serve(&[]);
    server
        .post(
            "/__wraith/session",
            None,
            json!({"session": "frozen", "clock": {"mode": "fixed", "base_epoch": 1700000000}}),
        )
        .await
        .assert_status(201);
    let miss = server.get("/no/such/route", Some("frozen")).await;
    miss.assert_status(501);
    assert_eq!(miss.header("date"), Some(FROZEN));
}

/// Under a real clock `--clock-epoch` is not ignored: it is the epoch of a session provisioned
/// with a clock mode but no epoch.
#[tokio::test]
async fn a_provisioned_clock_without_an_epoch_starts_at_the_clock_epoch_flag() {
    let t = support::example_shop_twin();
    let server = t.serve(&["--clock-epoch", "1700000000"]);
    server
        .post(
            "/__wraith/session",
            None,
            json!({"session": "frozen", "clock": {"mode": "fixed"}}),
        )
        .await
        .assert_status(201);
    let miss = server.get("/no/such/route", Some("frozen")).await;
    assert_eq!(miss.header("date"), Some(FROZEN));
    // The serve clock itself stays real.
    let real = server.get("/no/such/route", Some("real")).await;
    assert_ne!(real.header("date"), Some(FROZEN));
}

/// An epoch past 9999-12-30T22:00:00Z has no HTTP date (four-digit years): refused at startup,
/// naming the flag or the `wraith.toml` key, with milliseconds recognised for what they are.
#[test]
fn a_clock_epoch_past_year_9999_exits_1_naming_the_flag_or_key() {
    let t = support::example_shop_twin();
    let (code, stderr) =
        t.serve_expect_exit(&["--clock", "fixed", "--clock-epoch", "99999999999999"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("--clock-epoch"), "{stderr}");
    assert!(stderr.contains("253402207200"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let (code, stderr) =
        t.serve_expect_exit(&["--clock", "fixed", "--clock-epoch", "1700000000000"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("milliseconds, give 1700000000 seconds"),
        "{stderr}"
    );

    t.set_toml("serve.clock", "base_epoch", "99999999999999");
    let (code, stderr) = t.serve_expect_exit(&["--clock", "fixed"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("wraith.toml"), "{stderr}");
    assert!(stderr.contains("serve.clock.base_epoch"), "{stderr}");
}

/// The latest epoch accepted, in the last days of year 9999, is still a date an answer can carry.
#[tokio::test]
async fn the_latest_accepted_clock_epoch_is_a_date_the_twin_dates_answers_by() {
    let t = support::example_shop_twin();
    let server = t.serve(&["--clock", "fixed", "--clock-epoch", "253402207200"]);
    let r = server.get("/no/such/route", Some("late")).await;
    assert_eq!(r.header("date"), Some("Thu, 30 Dec 9999 22:00:00 GMT"));
}

/// A clock may start no earlier than 1970-01-01T00:00:00Z (a clock in unix seconds is never
/// negative): an earlier start, year 0 included, is refused wherever it can be given, naming
/// the flag, the `wraith.toml` key or the provisioning field, with the accepted range.
#[tokio::test]
async fn a_clock_start_before_1970_is_refused_by_flag_config_and_provisioning() {
    let t = support::example_shop_twin();
    for epoch in ["-62167219200", "-1"] {
        let flag = format!("--clock-epoch={epoch}");
        let (code, stderr) = t.serve_expect_exit(&["--clock", "fixed", &flag]);
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.contains("--clock-epoch"), "{stderr}");
        assert!(stderr.contains("before 1970-01-01T00:00:00Z"), "{stderr}");
        assert!(
            stderr.contains("from 0 (1970-01-01T00:00:00Z) to 253402207200"),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }

    let server = t.serve(&[]);
    for (key, epoch) in [("base_epoch", -62_167_219_200_i64), ("base_epoch_secs", -5)] {
        let r = server
            .post(
                "/__wraith/session",
                None,
                json!({"session": "early", "clock": {"mode": "fixed", key: epoch}}),
            )
            .await;
        r.assert_status(400);
        let b = r.json();
        assert_eq!(b["error"], "bad-request", "{b}");
        let message = b["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("`clock.{key}` {epoch}"))
                && message.contains("before 1970-01-01T00:00:00Z"),
            "{message}"
        );
    }
    // Nothing was provisioned: the session is made on its first request, as any other.
    let sessions = server.get("/__wraith/session", None).await.json();
    assert!(!sessions.to_string().contains("early"), "{sessions}");
    drop(server);

    t.set_toml("serve.clock", "mode", "\"fixed\"");
    t.set_toml("serve.clock", "base_epoch", "-5");
    let (code, stderr) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("wraith.toml"), "{stderr}");
    assert!(stderr.contains("serve.clock.base_epoch"), "{stderr}");
    assert!(stderr.contains("before 1970-01-01T00:00:00Z"), "{stderr}");
}

/// The earliest accepted clock start, 1970-01-01T00:00:00Z, is a date the twin dates answers by.
#[tokio::test]
async fn the_earliest_accepted_clock_epoch_dates_answers_1970() {
    let t = support::example_shop_twin();
    t.set_toml("serve.clock", "mode", "\"fixed\"");
    t.set_toml("serve.clock", "base_epoch", "0");
    let server = t.serve(&[]);
    let r = server.get("/no/such/route", Some("early")).await;
    assert_eq!(r.header("date"), Some("Thu, 01 Jan 1970 00:00:00 GMT"));
}
