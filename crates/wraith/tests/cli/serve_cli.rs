//! `wraith serve` as a command: flags and `wraith.toml`, exit codes, the `--ready-json` startup
//! contract, the banner, binding, and graceful shutdown. Black-box: the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, model};

fn shop_twin() -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t
}

fn ipv6_loopback_available() -> bool {
    std::net::TcpListener::bind("[::1]:0").is_ok()
}

#[test]
fn the_ready_file_is_removed_when_serve_stops_unless_another_run_took_it_over() {
    let t = shop_twin();
    let mut s = t.serve(&[]);
    assert!(s.ready_path.is_file());
    s.signal("-INT");
    assert!(
        !s.ready_path.exists(),
        "a stopped twin leaves no address behind"
    );
    // A file another run wrote over this one's is that run's: left in place.
    let mut s = t.serve(&[]);
    std::fs::write(&s.ready_path, "{\"serve\":{}}\n").unwrap();
    s.signal("-TERM");
    assert!(s.ready_path.is_file());
}

/// `wraith serve` with `--ready-json <path>`, waiting for nothing.
#[cfg(unix)]
fn spawn_serve(t: &Twin, ready: &std::path::Path) -> std::process::Child {
    std::process::Command::new(support::bin())
        .arg("serve")
        .arg(t.path_str())
        .args(["--port", "0", "--ready-json"])
        .arg(ready)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[cfg(unix)]
fn interrupt(mut child: std::process::Child) -> Option<i32> {
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    child.wait().unwrap().code()
}

/// A fifo stands for `/dev/stdout` or `/dev/null`: renaming a file over such a path, then
/// removing it on stop, once left a machine without `/dev/null`.
#[cfg(unix)]
#[test]
fn a_ready_path_that_is_a_fifo_is_written_into_and_never_replaced_or_removed() {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let t = shop_twin();
    let fifo = t.tmp.path().join("ready.fifo");
    support::mkfifo(&fifo);
    let child = spawn_serve(&t, &fifo);
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            let read = std::fs::File::open(&fifo).and_then(|mut f| f.read_to_string(&mut text));
            let _ = tx.send(read.map(|_| text));
        });
    }
    let text = match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(read) => read.unwrap(),
        Err(_) => {
            let is_fifo = std::fs::symlink_metadata(&fifo).map(|m| m.file_type().is_fifo());
            panic!("nothing was written into the fifo; still a fifo: {is_fifo:?}");
        }
    };
    let ready: Value = serde_json::from_str(&text).unwrap();
    assert!(
        ready["serve"]["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:")
    );
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert_eq!(interrupt(child), Some(0));
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo(),
        "the fifo is still there after the stop"
    );
}

/// Wait up to 20 s for `child` to exit; a child still running is killed and `None` returned.
#[cfg(unix)]
pub(crate) fn exit_within_20s(child: &mut std::process::Child) -> Option<std::process::ExitStatus> {
    for _ in 0..2000 {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// A fifo's writer waits for a reader: a ready fifo nobody reads must not keep a stop signal
/// from stopping serve.
#[cfg(unix)]
#[test]
fn a_stop_signal_ends_serve_while_its_ready_fifo_has_no_reader() {
    use std::os::unix::fs::FileTypeExt;
    let t = shop_twin();
    let fifo = t.tmp.path().join("ready.fifo");
    support::mkfifo(&fifo);
    let mut child = spawn_serve(&t, &fifo);
    // Time to reach the write; a signal before it must stop serve all the same.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = exit_within_20s(&mut child);
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "serve did not stop on SIGTERM while blocked on its ready fifo"
    );
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

#[cfg(unix)]
#[test]
fn a_ready_path_that_is_a_link_writes_the_file_it_names_and_keeps_the_link() {
    let t = shop_twin();
    std::fs::create_dir(t.tmp.path().join("run")).unwrap();
    let link = t.tmp.path().join("ready.json");
    std::os::unix::fs::symlink("run/ready.json", &link).unwrap();
    let real = t.tmp.path().join("run").join("ready.json");
    let child = spawn_serve(&t, &link);
    let mut ready = None;
    for _ in 0..3000 {
        if let Ok(text) = std::fs::read_to_string(&real)
            && let Ok(v) = serde_json::from_str::<Value>(&text)
        {
            ready = Some(v);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        ready.is_some(),
        "the file the link names holds the ready document"
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(interrupt(child), Some(0));
    assert!(!real.exists(), "the ready file is removed on stop");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link itself is the user's and stays"
    );
}

#[tokio::test]
async fn ready_json_describes_the_bound_server_and_freshness() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let r = &s.ready;
    let port = r["serve"]["port"].as_u64().unwrap();
    assert!(port > 0, "--port 0 must be replaced by the real port");
    assert_eq!(r["serve"]["url"], json!(format!("http://127.0.0.1:{port}")));
    assert_eq!(r["serve"]["wraith_session_header"], "X-Wraith-Session");
    let listen: Vec<&str> = r["serve"]["listen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(listen[0], format!("127.0.0.1:{port}"));
    if ipv6_loopback_available() {
        assert_eq!(
            listen,
            vec![format!("127.0.0.1:{port}"), format!("[::1]:{port}")]
        );
    }
    assert_eq!(r["twin"], "shop");
    // Model-only twin: age anchors on the synthesis time, no recorded_at field.
    assert!(r.get("recorded_at").is_none(), "{r}");
    let synthesized = r["synthesized_at"].as_str().unwrap();
    let synthesized = synthesized
        .parse::<jiff::Timestamp>()
        .unwrap_or_else(|e| panic!("{synthesized}: {e}"));
    let since = jiff::Timestamp::now().as_second() - synthesized.as_second();
    let age = r["twin_age_seconds"].as_u64().unwrap();
    assert!(
        i64::try_from(age).unwrap() <= since && since < 600,
        "age {age}, synthesized {since} s ago"
    );
    assert_eq!(r["drifted_routes"], json!([]));
    assert_eq!(r["control"]["health"], "/__wraith/health");
    assert_eq!(r["control"]["ready"], "/__wraith/ready");
    assert_eq!(r["control"]["info"], "/__wraith/info");
    assert_eq!(r["control"]["session"], "/__wraith/session");
    assert_eq!(r["control"]["reset"], "/__wraith/reset");
    assert_eq!(r["capabilities"]["session_provisioning"], true);
    assert!(r["warnings"].is_array());
    // Written as canonical JSON (sorted keys, trailing newline).
    let text = std::fs::read_to_string(&s.ready_path).unwrap();
    let reparsed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(wraith_model::to_canonical_json(&reparsed).unwrap(), text);
    // The URL it names answers.
    let h = s.get("/__wraith/ready", None).await;
    assert_eq!(h.status, 200);
    assert_eq!(h.json(), json!({"ready": true}));
}

#[tokio::test]
async fn default_bind_also_answers_on_ipv6_loopback() {
    if !ipv6_loopback_available() {
        eprintln!("skipped: no IPv6 loopback on this machine");
        return;
    }
    let t = shop_twin();
    let s = t.serve(&[]);
    let port = s.ready["serve"]["port"].as_u64().unwrap();
    let r = s
        .client
        .get(format!("http://[::1]:{port}/__wraith/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
}

#[tokio::test]
async fn listen_flag_binds_exactly_the_given_address() {
    let t = shop_twin();
    let s = t.serve(&["--listen", "127.0.0.1:0"]);
    let listen = s.ready["serve"]["listen"].as_array().unwrap();
    assert_eq!(listen.len(), 1, "{listen:?}");
    assert_eq!(s.get("/__wraith/health", None).await.status, 200);
    if ipv6_loopback_available() {
        let s6 = t.serve(&["--listen", "[::1]:0"]);
        let port = s6.ready["serve"]["port"].as_u64().unwrap();
        assert_eq!(s6.url, format!("http://[::1]:{port}"));
        assert_eq!(s6.get("/__wraith/health", None).await.status, 200);
    }
}

#[test]
fn non_loopback_bind_without_control_token_is_refused_with_exit_3() {
    let t = shop_twin();
    let (code, stderr) = t.serve_expect_exit(&["--listen", "0.0.0.0:0"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("control token"), "{stderr}");
    assert!(stderr.contains("--control-token-env"), "{stderr}");
}

/// `::ffff:127.0.0.1` is the IPv4 loopback address written as IPv6: a bind to it needs no
/// control token, and its control plane answers without one.
#[tokio::test]
async fn an_ipv4_mapped_loopback_bind_is_loopback() {
    if std::net::TcpListener::bind("[::ffff:127.0.0.1]:0").is_err() {
        return; // this host binds no IPv4-mapped address; nothing to check
    }
    let t = shop_twin();
    let s = t.serve(&["--listen", "[::ffff:127.0.0.1]:0"]);
    assert_eq!(s.get("/__wraith/session", None).await.status, 200);
}

#[test]
fn missing_control_token_variable_is_a_usage_error() {
    let t = shop_twin();
    let (code, stderr) =
        t.serve_expect_exit(&["--control-token-env", "WRAITH_TEST_TOKEN_THAT_IS_NOT_SET"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("WRAITH_TEST_TOKEN_THAT_IS_NOT_SET"),
        "{stderr}"
    );
}

#[test]
fn bad_config_exits_1_naming_the_file_and_key() {
    let t = shop_twin();
    t.set_toml("serve", "fidelity", "\"loose\"");
    let (code, stderr) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("wraith.toml"), "{stderr}");
    assert!(stderr.contains("fidelity"), "{stderr}");
}

#[test]
fn a_twin_given_as_a_dot_relative_path_is_named_as_written() {
    let t = shop_twin();
    t.set_toml("serve", "fidelity", "\"loose\"");
    // The temp dir holding `twins/shop`: the command runs there, as a user would.
    let cwd = t.path().parent().unwrap().parent().unwrap();
    for (arg, shown) in [
        ("./twins/shop", "./twins/shop/wraith.toml"),
        ("twins/shop", "./twins/shop/wraith.toml"),
        ("shop", "./twins/shop/wraith.toml"),
    ] {
        let out = std::process::Command::new(support::bin())
            .current_dir(cwd)
            .args(["serve", arg])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{arg}: {stderr}");
        assert!(stderr.contains(shown), "{arg}: {stderr}");
        assert!(!stderr.contains("././"), "{arg}: {stderr}");
    }
}

#[test]
fn max_namespaces_zero_exits_1_naming_the_key() {
    let t = shop_twin();
    t.set_toml("serve.limits", "max_namespaces", "0");
    let (code, stderr) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("wraith.toml"), "{stderr}");
    assert!(stderr.contains("serve.limits.max_namespaces"), "{stderr}");
    assert!(stderr.contains("at least 1"), "{stderr}");
}

#[test]
fn max_pending_body_mb_below_one_whole_body_exits_1_naming_the_key() {
    let t = shop_twin();
    t.set_toml("serve.limits", "max_pending_body_mb", "15");
    let (code, stderr) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("serve.limits.max_pending_body_mb"),
        "{stderr}"
    );
    assert!(stderr.contains("at least 16"), "{stderr}");
}

#[test]
fn bad_flag_value_exits_1() {
    let t = shop_twin();
    let (code, stderr) = t.serve_expect_exit(&["--fidelity", "loose"]);
    assert_eq!(code, 1, "{stderr}");
    let (code, stderr) = t.serve_expect_exit(&["--listen", "nonsense:port"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("--listen"), "{stderr}");
}

#[test]
fn port_flag_naming_another_port_than_listen_exits_1_naming_both() {
    let t = shop_twin();
    let (code, stderr) = t.serve_expect_exit(&["--port", "9", "--listen", "127.0.0.1:0"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("--port 9"), "{stderr}");
    assert!(stderr.contains("--listen 127.0.0.1:0"), "{stderr}");
    // The way out names the address without its port.
    assert!(stderr.contains("--listen 127.0.0.1 --port 9"), "{stderr}");
}

#[tokio::test]
async fn listen_address_without_a_port_takes_the_port_flag() {
    let t = shop_twin();
    // The harness passes `--port 0`: the address takes it, so any free port is bound.
    let s = t.serve(&["--listen", "127.0.0.1"]);
    let port = s.ready["serve"]["port"].as_u64().unwrap();
    assert!(port > 0);
    assert_eq!(s.url, format!("http://127.0.0.1:{port}"));
    assert_eq!(s.get("/__wraith/health", None).await.status, 200);
}

#[test]
fn model_with_another_schema_version_exits_1_asking_for_resynth() {
    let t = shop_twin();
    let mut m = model::shop("shop");
    m.schema_version = wraith_model::MODEL_SCHEMA_VERSION + 1;
    t.write_model(&m);
    let (code, stderr) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("schema_version"), "{stderr}");
    assert!(stderr.contains("wraith synth"), "{stderr}");
}

#[test]
fn a_model_that_is_not_a_model_or_does_not_parse_exits_1_naming_why() {
    let t = shop_twin();
    t.write("model/twin.wir.json", "{\"routes\":[]}\n");
    let (code, stderr) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("not a Wraith model"), "{stderr}");
    assert!(stderr.contains("wraith synth"), "{stderr}");

    let current = wraith_model::MODEL_SCHEMA_VERSION;
    t.write(
        "model/twin.wir.json",
        &format!("{{\"routes\":7,\"schema_version\":{current}}}\n"),
    );
    let (code, stderr) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("does not load"), "{stderr}");
    assert!(stderr.contains("wraith synth"), "{stderr}");
}

#[test]
fn a_truncated_model_exits_1_saying_it_is_not_json_and_where_it_stops() {
    let t = shop_twin();
    t.write("model/twin.wir.json", "{\"routes\":[{\"id\":");
    let (code, stderr) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("model/twin.wir.json"), "{stderr}");
    assert!(stderr.contains("not JSON (EOF while parsing"), "{stderr}");
    assert!(stderr.contains("line 1 column"), "{stderr}");
    assert!(stderr.contains("wraith synth"), "{stderr}");
}

#[test]
fn a_folder_where_a_fixture_file_belongs_exits_1_naming_it() {
    let t = shop_twin();
    t.write("state/fixtures/default/customers.json/records.json", "[]");
    let (code, stderr) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("state/fixtures/default/customers.json is a folder, not a file"),
        "{stderr}"
    );
}

#[test]
fn twin_without_model_or_recordings_exits_1() {
    let t = Twin::init("empty", "https://api.empty.test");
    let (code, stderr) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("wraith import") || stderr.contains("wraith record"),
        "{stderr}"
    );
}

#[test]
fn unknown_fixture_exits_1_listing_the_available_sets() {
    let t = shop_twin();
    t.write("state/fixtures/baseline/fixture.json", r#"{"entities":{}}"#);
    t.write("state/fixtures/checkout/fixture.json", r#"{"entities":{}}"#);
    let (code, stderr) = t.serve_expect_exit(&["--fixture", "nope"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("nope"), "{stderr}");
    assert!(stderr.contains("baseline"), "{stderr}");
    assert!(stderr.contains("checkout"), "{stderr}");
}

#[tokio::test]
async fn startup_banner_names_twin_url_routes_and_age() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let err = s.stderr();
    assert!(err.contains("`shop`"), "{err}");
    assert!(err.contains(&s.url), "{err}");
    assert!(err.contains("routes: 7"), "{err}");
    assert!(err.contains("twin age:"), "{err}");
}

#[tokio::test]
async fn fuzzy_fidelity_warns_at_startup_and_answers_501_everywhere() {
    let t = shop_twin();
    let s = t.serve(&["--fidelity", "fuzzy"]);
    // Warned once: in the ready document's warnings and on stderr.
    let fuzzy: Vec<&Value> = s.ready["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w.as_str().unwrap().contains("fuzzy"))
        .collect();
    assert_eq!(fuzzy.len(), 1, "{fuzzy:?}");
    let stderr = s.stderr();
    assert_eq!(
        stderr.matches("warning: fidelity `fuzzy`").count(),
        1,
        "{stderr}"
    );
    // A matched route, an exact recording and an unmatched path: all 501.
    for path in ["/v1/customers/cus_1", "/v1/customers", "/nope"] {
        let r = s.get(path, None).await;
        assert_eq!(r.status, 501, "{path}");
        // "Provenance values seen: none (nothing is ever served)"; the twin's age still shows.
        assert_eq!(r.provenance(), None, "{path}");
        assert_eq!(r.header("x-wraith-route"), None, "{path}");
        assert!(r.header("x-wraith-twin-age").is_some(), "{path}");
    }
}

#[tokio::test]
async fn permissive_in_toml_means_fuzzy_with_a_deprecation_warning() {
    let t = shop_twin();
    t.set_toml("serve", "fidelity", "\"permissive\"");
    let s = t.serve(&[]);
    let warnings = s.ready["warnings"].to_string();
    assert!(warnings.contains("permissive"), "{warnings}");
    assert!(warnings.contains("fuzzy"), "{warnings}");
    assert_eq!(s.get("/v1/customers/cus_1", None).await.status, 501);
}

#[tokio::test]
async fn port_flag_wins_over_the_toml_port() {
    let t = shop_twin();
    // A port that is free right now; the flag (`--port 0`, always passed by the harness) must win.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let toml_port = taken.local_addr().unwrap().port();
    drop(taken);
    t.set_toml("serve", "port", &toml_port.to_string());
    let s = t.serve(&[]);
    assert_ne!(
        s.ready["serve"]["port"].as_u64().unwrap(),
        u64::from(toml_port)
    );
}

/// Send bytes that are not HTTP: the server logs the broken connection (at debug).
fn send_garbage(s: &support::Server) {
    use std::io::{Read as _, Write as _};
    let addr = s.url.trim_start_matches("http://");
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.write_all(b"NOT HTTP AT ALL\r\n\r\n").unwrap();
    let _ = c.read_to_end(&mut Vec::new());
}

/// Wait until the server's stderr holds `needle`.
fn wait_for_stderr(s: &support::Server, needle: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let text = s.stderr();
        if text.contains(needle) {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no `{needle}` on stderr: {text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[tokio::test]
async fn log_lines_piped_to_a_file_carry_no_colour_codes() {
    let t = shop_twin();
    let s = t.serve_env(&[], &[("WRAITH_LOG", "debug")]);
    send_garbage(&s);
    let stderr = wait_for_stderr(&s, "connection ended with an error");
    assert!(stderr.contains("DEBUG"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "ANSI escape in a piped log: {stderr:?}"
    );
}

#[tokio::test]
async fn sigterm_stops_the_server_gracefully_with_exit_0() {
    let t = shop_twin();
    let mut s = t.serve(&[]);
    assert_eq!(s.get("/__wraith/health", None).await.status, 200);
    assert_eq!(s.terminate(), 0, "{}", s.stderr());
    assert!(s.stderr().contains("stopped"), "{}", s.stderr());
}

#[tokio::test]
async fn json_flag_prints_the_ready_document_on_stdout() {
    let t = shop_twin();
    let out = tempfile::NamedTempFile::new().unwrap();
    let ready = t.tmp.path().join("ready-json-flag.json");
    let mut child = std::process::Command::new(support::bin())
        .args([
            "serve",
            &t.path_str(),
            "--port",
            "0",
            "--json",
            "--ready-json",
        ])
        .arg(&ready)
        .stdout(out.reopen().unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let line = loop {
        let text = std::fs::read_to_string(out.path()).unwrap();
        if text.ends_with('\n') {
            break text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no JSON line on stdout"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let _ = child.kill();
    let _ = child.wait();
    let v: Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(v["twin"], "shop");
    assert!(
        v["serve"]["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:")
    );
    // Canonical, byte for byte the ready file's document.
    assert_eq!(line, wraith_model::to_canonical_json(&v).unwrap());
    assert_eq!(line, std::fs::read_to_string(&ready).unwrap());
}

#[tokio::test]
async fn non_loopback_bind_with_a_token_starts_and_guards_the_control_plane() {
    let t = shop_twin();
    let s = t.serve_env(
        &[
            "--listen",
            "0.0.0.0:0",
            "--control-token-env",
            "WRAITH_TEST_TOKEN",
        ],
        &[("WRAITH_TEST_TOKEN", "tok-123")],
    );
    // The wildcard is not dialable: the advertised URL is the loopback it also serves.
    let port = s.ready["serve"]["port"].as_u64().unwrap();
    assert_eq!(s.url, format!("http://127.0.0.1:{port}"));
    assert_eq!(
        s.ready["serve"]["listen"],
        json!([format!("0.0.0.0:{port}")])
    );
    assert_eq!(s.get("/__wraith/health", None).await.status, 200);
    assert_eq!(s.get("/__wraith/session", None).await.status, 401);
    let ok = s
        .send(
            "GET",
            "/__wraith/session",
            None,
            &[("authorization", "Bearer tok-123")],
            None,
        )
        .await;
    assert_eq!(ok.status, 200);
}

#[tokio::test]
async fn sigint_stops_the_server_gracefully_with_exit_0() {
    let t = shop_twin();
    let mut s = t.serve(&[]);
    assert_eq!(s.get("/__wraith/health", None).await.status, 200);
    assert_eq!(s.signal("-INT"), 0, "{}", s.stderr());
}

#[test]
fn a_port_in_use_exits_4_naming_the_process_that_holds_it() {
    let t = shop_twin();
    // This test process holds the port.
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port();
    let (code, stderr) = t.serve_expect_exit(&["--listen", &format!("127.0.0.1:{port}")]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains(&format!("cannot listen on 127.0.0.1:{port}")),
        "{stderr}"
    );
    if cfg!(target_os = "linux") {
        assert!(
            stderr.contains(&format!("held by pid {}", std::process::id())),
            "{stderr}"
        );
    }
    drop(holder);
}

#[test]
fn the_twin_may_be_given_with_the_twin_flag_but_not_twice() {
    let t = shop_twin();
    let ready = t.tmp.path().join("flag-ready.json");
    let mut child = std::process::Command::new(support::bin())
        .current_dir(t.tmp.path())
        .args([
            "serve",
            "--twin",
            &t.path_str(),
            "--port",
            "0",
            "--ready-json",
        ])
        .arg(&ready)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let served = loop {
        if let Ok(text) = std::fs::read_to_string(&ready)
            && let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text)
        {
            break doc;
        }
        assert!(child.try_wait().unwrap().is_none(), "serve --twin exited");
        assert!(std::time::Instant::now() < deadline, "never ready");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(served["twin"], "shop");
    // Named both ways it is a usage error, not a guess at which one was meant.
    let (code, stderr) = t.serve_expect_exit(&["--twin", &t.path_str()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("--twin"), "{stderr}");
}

/// The ready file's `control` map names every control endpoint serve answers, the handler
/// probe and the trace ring's included, and `capabilities` says whether the trace ones answer.
#[tokio::test]
async fn the_ready_file_lists_every_control_endpoint_serve_answers() {
    let t = shop_twin();
    let s = t.serve(&["--trace"]);
    let control = &s.ready["control"];
    assert_eq!(
        *control,
        json!({
            "health": "/__wraith/health",
            "ready": "/__wraith/ready",
            "info": "/__wraith/info",
            "reset": "/__wraith/reset",
            "session": "/__wraith/session",
            "session_delete": "/__wraith/session/{id}",
            "session_probe": "/__wraith/session/{id}/probe",
            "session_reset": "/__wraith/session/{id}/reset",
            "session_state": "/__wraith/session/{id}/state",
            "trace_entry": "/__wraith/trace/{id}",
            "trace_log": "/__wraith/trace/log",
            "trace_reset": "/__wraith/trace/reset",
        })
    );
    assert_eq!(s.ready["capabilities"]["trace"], true);
    // Each path is an endpoint: some method of it is answered, never as an unknown one.
    for (key, path) in control.as_object().unwrap() {
        let path = path.as_str().unwrap().replace("{id}", "1");
        for method in ["GET", "POST", "DELETE"] {
            let r = s.send(method, &path, None, &[], Some(json!({}))).await;
            assert_ne!(
                r.json()["error"]["type"],
                "not-found",
                "{key}: {method} {path} answered {}",
                r.status
            );
        }
    }
    let plain = t.serve(&[]);
    assert_eq!(plain.ready["capabilities"]["trace"], false);
    assert_eq!(plain.ready["control"], *control);
}

/// A `[serve] session_mode` other than `header` is not built: serve refuses it (exit 1) rather
/// than putting every client in one shared world, and lint fails it.
#[test]
fn a_session_mode_other_than_header_is_refused_by_serve_and_lint() {
    let t = shop_twin();
    for mode in ["cookie", "path"] {
        t.set_toml("serve", "session_mode", &format!("\"{mode}\""));
        let (code, err) = t.serve_expect_exit(&[]);
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains("wraith.toml")
                && err.contains(&format!("session_mode = \"{mode}\" is not built")),
            "{err}"
        );
        let out = t.wraith(&["lint", t.path_str().as_str(), "--json"]);
        assert_eq!(out.status.code(), Some(1));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["rule"] == "serve-session-mode" && f["severity"] == "error"),
            "{v:#}"
        );
    }
    t.set_toml("serve", "session_mode", "\"header\"");
    let mut s = t.serve(&[]);
    assert_eq!(s.terminate(), 0);
}

/// Under `CI=true` without `WRAITH_HMAC_KEY`, serve refuses with the policy exit code (3), as
/// import and record do, rather than answer under a policy without the twin's `scrub.toml`.
#[test]
fn ci_without_an_hmac_key_is_refused_by_serve_with_exit_3() {
    let t = shop_twin();
    let (code, err) = t.serve_expect_exit_env(&[], &[("CI", "true"), ("WRAITH_HMAC_KEY", "")]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("WRAITH_HMAC_KEY"), "{err}");
    // With a key, CI serves.
    let mut s = t.serve_env(&[], &[("CI", "true"), ("WRAITH_HMAC_KEY", "k")]);
    assert_eq!(s.terminate(), 0);
}

/// A client that shuts its sending side as soon as the request is written (`nc -N`) still gets
/// the answer, and a write sent that way is carried out.
#[test]
fn a_request_whose_client_half_closes_at_once_is_still_answered() {
    use std::io::{Read as _, Write as _};
    let t = shop_twin();
    let s = t.serve(&[]);
    let addr = s.url.trim_start_matches("http://").to_string();
    let send = |request: &str| {
        let mut conn = std::net::TcpStream::connect(&addr).unwrap();
        conn.write_all(request.as_bytes()).unwrap();
        conn.shutdown(std::net::Shutdown::Write).unwrap();
        let mut answer = String::new();
        conn.read_to_string(&mut answer).unwrap();
        answer
    };
    for _ in 0..10 {
        let answer = send("GET /v1/customers/cus_1 HTTP/1.1\r\nHost: twin\r\n\r\n");
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer:?}");
    }
    let answer =
        send("DELETE /v1/customers/cus_1 HTTP/1.1\r\nHost: twin\r\nX-Wraith-Session: h\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 2"), "{answer:?}");
    let answer =
        send("GET /v1/customers/cus_1 HTTP/1.1\r\nHost: twin\r\nX-Wraith-Session: h\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer:?}");
}
