//! `wraith check`, black-box: the real binary on a copy of the demo twin.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;

use check_support::*;
use serde_json::Value;
use std::process::{Command, Output};

#[test]
fn check_in_memory_passes_demo_twin_and_writes_canonical_reports() {
    let t = DemoTwin::synthesized();
    let out = t.run(&["check", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = stdout_json(&out);
    assert_eq!(r["mode"], "in_memory");
    assert_eq!(r["exchanges_total"], 6);
    assert_eq!(r["exchanges_passed"], 6);
    assert_eq!(r["score_bp"], 10_000);
    assert_eq!(r["sessions_total"], 1);
    assert_eq!(r["passed"], true);
    assert_eq!(r["divergence_count"], 0);
    assert_eq!(r["required_score_bp"], 9_000);
    assert_eq!(r["required_session_pass_rate_bp"], 9_500);
    insta::assert_json_snapshot!(
        "demo_check_summary",
        serde_json::json!({
            "twin": r["twin"], "mode": r["mode"], "passed": r["passed"], "score_bp": r["score_bp"],
            "session_pass_rate_bp": r["session_pass_rate_bp"], "exchanges_total": r["exchanges_total"],
            "exchanges_passed": r["exchanges_passed"], "categories": r["categories"],
            "provenance": r["provenance"], "replay_claims": r["replay_claims"],
            "routes": r["routes"], "sessions": r["sessions"],
            "causes": r["causes"], "ceiling": r["ceiling"],
        })
    );
    let json = std::fs::read_to_string(t.root.join("reports/check.json")).unwrap();
    assert!(
        wraith_model::canonical::is_canonical(&json),
        "report is not canonical JSON"
    );
    let on_disk: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(on_disk, r, "stdout and reports/check.json differ");
    let html = std::fs::read_to_string(t.root.join("reports/check.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("PASS"));
    // Self-contained: no external assets or scripts.
    assert!(!html.contains("<script"), "no scripts");
    assert!(!html.contains("src=\"http"), "no external assets");
    assert!(!html.contains("<link"), "no external stylesheets");
}

/// `--json` prints the document `reports/check.json` holds, byte for byte: canonical JSON (keys
/// sorted, compact, one trailing newline), as docs/report-format.md says.
#[test]
fn check_json_stdout_is_byte_identical_to_reports_check_json() {
    let t = DemoTwin::synthesized();
    let out = t.run(&["check", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = std::fs::read(t.root.join("reports/check.json")).unwrap();
    assert!(
        out.stdout == file,
        "stdout differs from reports/check.json:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(wraith_model::canonical::is_canonical(
        &String::from_utf8_lossy(&out.stdout)
    ));
    assert!(out.stdout.ends_with(b"}\n") && !out.stdout.ends_with(b"\n\n"));
}

#[test]
fn check_text_summary_names_twin_score_and_report_paths() {
    let t = DemoTwin::synthesized();
    let out = t.run(&["check", "--in-memory"]);
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.starts_with("PASS  demo  score 10000/10000"), "{s}");
    assert!(s.contains("check.json") && s.contains("check.html"), "{s}");
}

#[test]
fn check_report_bytes_are_identical_across_runs() {
    let t = DemoTwin::synthesized();
    assert!(t.run(&["check"]).status.success());
    let a = std::fs::read(t.root.join("reports/check.json")).unwrap();
    let ah = std::fs::read(t.root.join("reports/check.html")).unwrap();
    assert!(t.run(&["check"]).status.success());
    assert_eq!(a, std::fs::read(t.root.join("reports/check.json")).unwrap());
    assert_eq!(
        ah,
        std::fs::read(t.root.join("reports/check.html")).unwrap()
    );
}

/// Appendix C recipe 4: change one recorded constant in the model; the divergence must be
/// reported at exactly that JSON path, and nowhere else.
#[test]
fn check_tampered_model_constant_is_reported_at_that_path() {
    let t = DemoTwin::synthesized();
    let mut model = t.model();
    let mut tampered: Option<(String, Value)> = None;
    'routes: for route in model["routes"].as_array_mut().unwrap() {
        if route["method"] != "GET" || !route["path"].as_str().unwrap().contains(':') {
            continue;
        }
        for entry in route["exact"].as_array_mut().unwrap() {
            for moment in entry["moments"].as_array_mut().unwrap() {
                let Some(obj) = moment["body"]["value"].as_object_mut() else {
                    continue;
                };
                let key = obj
                    .iter()
                    .find(|(k, v)| v.is_string() && k.as_str() != "id")
                    .map(|(k, _)| k.clone());
                if let Some(key) = key {
                    let original = obj[&key].clone();
                    obj.insert(key.clone(), Value::String("tampered-value".into()));
                    tampered = Some((key, original));
                    break 'routes;
                }
            }
        }
    }
    let (key, original) = tampered.expect("the demo model has a recorded read with a string field");
    t.write_model(&model);
    let out = t.run(&["check", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "one failing exchange of six is below 90%"
    );
    let r = stdout_json(&out);
    assert_eq!(r["divergence_count"], 1, "{:#}", r["divergences"]);
    let d = &r["divergences"][0];
    assert_eq!(d["path"], format!("body.{key}"));
    assert_eq!(d["category"], "value_mismatch");
    assert_eq!(d["expected"], original);
    assert_eq!(d["actual"], "tampered-value");
    assert!(d["drift_id"].as_str().unwrap().starts_with("drift-"));
    assert_eq!(r["exchanges_passed"], 5);
    assert_eq!(r["passed"], false);
    // The report was still written, and the error line names the failed gate.
    assert!(t.root.join("reports/check.json").exists());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("below threshold"), "{err}");
    // Sessions counted as the summary counts them, not in basis points.
    assert!(
        err.contains("sessions passing 0/1 (0.00%, required 95.00%)"),
        "{err}"
    );
}

/// A route the model does not have answers with the twin's own 501 refusal: never a pass.
#[test]
fn check_route_miss_is_a_synthesized_refusal_never_a_pass() {
    let t = DemoTwin::synthesized();
    let mut model = t.model();
    let routes = model["routes"].as_array_mut().unwrap();
    let before = routes.len();
    routes.retain(|r| !(r["method"] == "GET" && r["path"] == "/health"));
    assert_eq!(routes.len(), before - 1, "the demo model has GET /health");
    t.write_model(&model);
    let out = t.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let r = stdout_json(&out);
    let refusals: Vec<&Value> = r["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["category"] == "synthesized_refusal")
        .collect();
    assert_eq!(refusals.len(), 1, "{:#}", r["divergences"]);
    assert_eq!(refusals[0]["actual"]["provenance"], "miss");
    assert_eq!(refusals[0]["actual"]["status"], 501);
    assert_eq!(r["categories"]["synthesized_refusal"], 1);
}

#[test]
fn check_holdout_reports_in_sample_and_held_out_scores() {
    let t = DemoTwin::copy();
    t.add_session_copies(3);
    t.synth();
    let out = t.run(&["check", "--holdout", "2", "--json"]);
    let r = stdout_json(&out);
    let h = &r["holdout"];
    assert_eq!(h["k"], 2);
    assert_eq!(h["training_sessions"], 2);
    assert_eq!(h["held_out_sessions"].as_array().unwrap().len(), 2);
    assert_eq!(h["in_sample_exchanges"], 12);
    assert_eq!(h["held_out_exchanges"], 12);
    assert_eq!(
        r["exchanges_total"], 12,
        "the top level describes the held-out replay"
    );
    assert_eq!(h["held_out_score_bp"], r["score_bp"]);
    assert!(h["in_sample_score_bp"].as_u64().is_some());
    let text = t.run(&["check", "--holdout", "2"]);
    let s = String::from_utf8_lossy(&text.stdout);
    assert!(
        s.contains("holdout k=2: in-sample") && s.contains("held-out"),
        "{s}"
    );
}

#[test]
fn check_holdout_below_two_is_a_usage_error() {
    let t = DemoTwin::synthesized();
    let out = t.run(&["check", "--holdout", "1"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn check_holdout_on_a_one_session_twin_says_more_sessions_are_needed() {
    let t = DemoTwin::synthesized();
    let out = t.run(&["check", "--holdout", "2"]);
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("only 1 recorded session(s)"), "{e}");
    assert!(e.contains("record or import more sessions"), "{e}");
    assert!(!e.contains("use a K"), "no K works with one session: {e}");
}

#[test]
fn check_without_model_exits_1_and_says_to_run_synth() {
    let t = DemoTwin::copy();
    let out = t.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("wraith synth"));
}

#[test]
fn check_target_replays_over_http_against_running_serve() {
    let t = DemoTwin::synthesized();
    let (mut child, url) = t.serve();
    let out = t.run(&["check", "--target", &url, "--json"]);
    let _ = child.kill();
    let _ = child.wait();
    let r = stdout_json(&out);
    assert_eq!(r["mode"], "target");
    assert_eq!(r["target"], url.as_str());
    assert_eq!(r["exchanges_total"], 6);
    // Every answer came back with a provenance header the check could read.
    assert!(
        r["provenance"].get("unknown").is_none(),
        "{:#}",
        r["provenance"]
    );
    assert_eq!(r["score_bp"], 10_000, "{:#}", r["divergences"]);
    assert_eq!(out.status.code(), Some(0));
}

/// `--target` pointing at another twin's server (the wrong port) is said: the twin it serves
/// is not the one checked. A target serving the checked twin draws no such line.
#[test]
fn check_target_serving_another_twin_is_said() {
    let demo = DemoTwin::synthesized();
    let shop = DemoTwin::example_shop();
    shop.synth();
    let (mut child, url) = shop.serve();
    let wrong = demo.run(&["check", "--target", &url]);
    let _ = child.kill();
    let _ = child.wait();
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        err.contains("the target serves twin `shop`, not `demo`"),
        "{err}"
    );
    let (mut child, url) = demo.serve();
    let right = demo.run(&["check", "--target", &url]);
    let _ = child.kill();
    let _ = child.wait();
    let err = String::from_utf8_lossy(&right.stderr);
    assert!(!err.contains("the target serves twin"), "{err}");
}

/// A run over `--target` frees each session's namespace when it is done with it: a running
/// twin keeps namespaces until told, so repeated runs (or one run of many sessions) would fill
/// `[serve.limits] max_namespaces` and be answered 503.
#[test]
fn check_target_frees_its_namespaces_so_repeated_runs_fit_a_one_namespace_twin() {
    let t = DemoTwin::synthesized();
    edit_config(&t, "max_namespaces = 1000", "max_namespaces = 1");
    let (mut child, url) = t.serve();
    let runs: Vec<Output> = (0..2)
        .map(|_| t.run(&["check", "--target", &url, "--json"]))
        .collect();
    let (_, info) = http_get(&format!("{url}/__wraith/info"));
    let _ = child.kill();
    let _ = child.wait();
    for out in &runs {
        let r = stdout_json(out);
        assert_eq!(r["score_bp"], 10_000, "{:#}", r["divergences"]);
        assert_eq!(out.status.code(), Some(0));
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("cannot free"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let info: Value = serde_json::from_str(&info).unwrap();
    assert_eq!(info["sessions"], 0, "{info:#}");
}

/// A twin whose control plane wants a token refuses the namespace `DELETE` of a run without
/// one: said once, and the run's result is unchanged; with the token the namespaces go.
#[test]
fn check_target_without_the_control_token_says_its_namespaces_stay() {
    let t = DemoTwin::synthesized();
    let token = t.tmp.path().join("token");
    std::fs::write(&token, "s3cret-token\n").unwrap();
    let (mut child, url) = check_support::serve_twin_with(
        &t.root,
        &t.tmp.path().join("ready.json"),
        &["--control-token-file", token.to_str().unwrap()],
    );
    let without = t.run(&["check", "--target", &url, "--json"]);
    let with = Command::new(bin())
        .args(["check"])
        .arg(&t.root)
        .args(["--target", &url, "--json"])
        .env("WRAITH_HMAC_KEY", "check-tests-key")
        .env("WRAITH_CONTROL_TOKEN", "s3cret-token")
        .output()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let err = String::from_utf8_lossy(&without.stderr);
    assert_eq!(without.status.code(), Some(0), "{err}");
    assert_eq!(
        err.matches("cannot free the replay namespaces").count(),
        1,
        "{err}"
    );
    assert!(err.contains("WRAITH_CONTROL_TOKEN"), "{err}");
    assert_eq!(stdout_json(&without)["score_bp"], 10_000);
    let err = String::from_utf8_lossy(&with.stderr);
    assert_eq!(with.status.code(), Some(0), "{err}");
    assert!(!err.contains("cannot free"), "{err}");
}

/// Replace `from` (which must be there) with `to` in the twin's `wraith.toml`.
fn edit_config(t: &DemoTwin, from: &str, to: &str) {
    let toml = t.root.join("wraith.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    assert!(
        text.contains(from),
        "the demo twin's wraith.toml has no `{from}`"
    );
    std::fs::write(&toml, text.replacen(from, to, 1)).unwrap();
}

/// `wraith check <demo> --wire` with its temporary files in `temp`.
fn wire_check(t: &DemoTwin, temp: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(bin());
    cmd.arg("check")
        .arg(&t.root)
        .arg("--wire")
        .env("WRAITH_HMAC_KEY", "check-tests-key")
        .env("TMPDIR", temp);
    cmd
}

#[test]
fn check_wire_starts_its_own_server_and_reports_as_target_does_without_a_port() {
    let t = DemoTwin::synthesized();
    let temp = tempfile::tempdir().unwrap();
    let out = wire_check(&t, temp.path()).arg("--json").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = stdout_json(&out);
    assert_eq!(r["mode"], "wire");
    assert_eq!(
        r["target"],
        Value::Null,
        "the server's port changes every run"
    );
    assert_eq!(r["exchanges_total"], 6);
    assert!(
        r["provenance"].get("unknown").is_none(),
        "{:#}",
        r["provenance"]
    );
    assert_eq!(r["score_bp"], 10_000, "{:#}", r["divergences"]);
    // The server is gone and left nothing behind.
    assert_eq!(
        std::fs::read_dir(temp.path()).unwrap().count(),
        0,
        "ready and log files are removed"
    );
    // Two runs give the same report bytes.
    let again = wire_check(&t, temp.path()).arg("--json").output().unwrap();
    assert!(
        again.stdout == out.stdout,
        "two --wire runs give the same report bytes"
    );
}

#[test]
fn check_wire_on_a_twin_that_serve_refuses_exits_1_with_what_serve_said() {
    let t = DemoTwin::synthesized();
    // A setting only serve reads: the in-memory check runs, the served one cannot start.
    edit_config(&t, "multiplier = 1.0", "multiplier = -1.0");
    assert_eq!(t.run(&["check"]).status.code(), Some(0));
    let out = t.run(&["check", "--wire"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--wire"), "{stderr}");
    assert!(stderr.contains("[serve.latency] multiplier"), "{stderr}");
    let out = t.run(&["check", "--wire", "--target", "http://127.0.0.1:1"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "--wire and --target exclude each other"
    );
}

/// The demo twin, served with every answer 3 s late: a `--wire` run is still replaying when a
/// test stops it.
fn slow_demo_twin() -> DemoTwin {
    let t = DemoTwin::synthesized();
    edit_config(
        &t,
        "[serve.latency]\nmode = \"none\"\nmin_ms = 0",
        "[serve.latency]\nmode = \"fixed\"\nmin_ms = 3000",
    );
    t
}

/// The URL of the server a `--wire` run with its temporary files in `temp` started, once its
/// ready file is there: the server is up and the replay has begun.
fn wire_server_url(temp: &std::path::Path) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let ready = std::fs::read_dir(temp)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with(".ready.json"));
        if let Some(p) = ready
            && let Ok(text) = std::fs::read_to_string(&p)
            && let Ok(doc) = serde_json::from_str::<Value>(&text)
        {
            return doc["serve"]["url"].as_str().unwrap().to_string();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A `--wire` run killed outright (SIGKILL: no handler runs) still leaves no server behind:
/// the server reads its end of a pipe only the run holds, and stops when it closes. The log
/// the dead run could not remove is swept by the next run.
#[test]
fn check_wire_killed_outright_leaves_no_server_and_the_next_run_sweeps_its_log() {
    let t = slow_demo_twin();
    let temp = tempfile::tempdir().unwrap();
    let mut check = wire_check(&t, temp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = wire_server_url(temp.path());
    check.kill().unwrap();
    check.wait().unwrap();
    let addr = url.trim_start_matches("http://").to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(&addr).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server at {url} outlived its run"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Stopped as on SIGTERM, the server removes its ready file; the log is the run's.
    while std::fs::read_dir(temp.path())
        .unwrap()
        .any(|e| e.unwrap().path().to_string_lossy().ends_with(".ready.json"))
    {
        assert!(std::time::Instant::now() < deadline, "the ready file stays");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // The next run, stopped as soon as its server is up, leaves nothing, the dead run's log
    // included.
    let next = wire_check(&t, temp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wire_server_url(temp.path());
    let stopped = std::process::Command::new("kill")
        .args(["-TERM", &next.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    next.wait_with_output().unwrap();
    let left: Vec<_> = std::fs::read_dir(temp.path()).unwrap().collect();
    assert!(left.is_empty(), "files left behind: {left:?}");
}

#[test]
fn check_wire_stopped_by_a_signal_stops_its_server_and_leaves_no_files() {
    let t = slow_demo_twin();
    let temp = tempfile::tempdir().unwrap();
    for (signal, code) in [("-TERM", 143), ("-INT", 130), ("-HUP", 129)] {
        let check = wire_check(&t, temp.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let url = wire_server_url(temp.path());
        let killed = std::process::Command::new("kill")
            .args([signal, &check.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = check.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{signal}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let addr = url.trim_start_matches("http://").to_string();
        assert!(
            std::net::TcpStream::connect(&addr).is_err(),
            "{signal}: the server at {url} still answers"
        );
        let left: Vec<_> = std::fs::read_dir(temp.path()).unwrap().collect();
        assert!(left.is_empty(), "{signal}: files left behind: {left:?}");
    }
}

#[test]
fn check_unreachable_target_is_a_runtime_failure() {
    let t = DemoTwin::synthesized();
    // Bind and drop a listener to get a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = t.run(&["check", "--target", &format!("http://127.0.0.1:{port}")]);
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did not answer"));
}

/// Under `CI=true` without `WRAITH_HMAC_KEY`, check refuses with the policy exit code (3), as
/// serve, import and record do: the twin's `scrub.toml` cannot be keyed as it was recorded.
#[test]
fn ci_without_an_hmac_key_is_refused_by_check_with_exit_3() {
    let t = DemoTwin::synthesized();
    let out = Command::new(bin())
        .args(["check", t.path_str().as_str()])
        .env("CI", "true")
        .env("WRAITH_HMAC_KEY", "")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("WRAITH_HMAC_KEY"), "{err}");
}

/// Recorded paths and keys can run to kilobytes: the HTML report draws a route name and a
/// divergence path cut to their start (the JSON report keeps them whole), so its size stays
/// bounded however long they are.
#[test]
fn check_html_report_cuts_long_route_names_and_divergence_paths() {
    let segment = "a".repeat(5_000);
    let key = "k".repeat(5_000);
    let t = DemoTwin::init("long", "https://api.long.test");
    let url = format!("https://api.long.test/{segment}");
    let har = serde_json::json!({"log": {"version": "1.2",
    "creator": {"name": "t", "version": "1"}, "pages": [], "entries": [
        check_support::notes::entry("GET", &url, None, 200, &serde_json::json!({key.as_str(): 1})),
    ]}});
    t.import_har("long", &har);
    t.synth();
    let route = format!("GET /{segment}");
    let answered = route.clone();
    let target = check_support::fake_target::start(move |_| check_support::fake_target::Answer {
        status: 200,
        provenance: "template",
        route: answered.clone(),
        body: serde_json::json!({}),
    });
    t.run(&["check", "--target", &target]);
    let html = std::fs::read_to_string(t.root.join("reports/check.html")).unwrap();
    let report = std::fs::read_to_string(t.root.join("reports/check.json")).unwrap();
    assert!(report.contains(&segment) && report.contains(&key));
    assert!(html.contains("… (5005 characters)"), "{html}");
    assert!(!html.contains(&"a".repeat(161)) && !html.contains(&"k".repeat(161)));
    assert!(html.len() < 100_000, "{} bytes", html.len());
}
