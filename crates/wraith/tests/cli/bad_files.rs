//! Exit codes for files the user names or owns that cannot be used, as the README states them:
//! a path that is missing or of the wrong kind, or a text file that is not UTF-8, is `1` (the
//! user's to fix), said before a command starts listening or writing. Black-box: the real
//! binary on a copy of the bundled example twin.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::process::{Command, Output, Stdio};

use support::Twin;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn serve_refuses_a_ready_file_path_it_cannot_write_before_it_listens() {
    let t = support::example_shop_twin();
    let folder = t.tmp.path().join("a-folder");
    std::fs::create_dir(&folder).unwrap();
    let missing = t.tmp.path().join("no-such-folder/ready.json");
    for (path, says) in [
        (&folder, "is a folder; name a file"),
        (&missing, "does not exist"),
    ] {
        let (code, err) =
            t.serve_expect_exit(&["--port", "0", "--ready-json", path.to_str().unwrap()]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("--ready-json") && err.contains(says), "{err}");
        assert!(
            !err.contains("twin on http"),
            "refused before listening: {err}"
        );
    }
}

#[test]
fn a_ready_path_holding_another_file_is_refused_and_left_as_it_was() {
    let t = support::example_shop_twin();
    let config = t.root.join("wraith.toml");
    let before = std::fs::read(&config).unwrap();
    let config = config.to_str().unwrap();
    let (code, err) = t.serve_expect_exit(&["--port", "0", "--ready-json", config]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("--ready-json") && err.contains("is not a ready file of an earlier run"),
        "{err}"
    );
    assert!(
        !err.contains("twin on http"),
        "refused before listening: {err}"
    );
    let twin = t.path_str();
    let out = t.wraith(&["record", &twin, "--port", "0", "--ready-json", config]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("is not a ready file of an earlier run"));
    assert_eq!(std::fs::read(t.root.join("wraith.toml")).unwrap(), before);
}

/// A serve killed (SIGKILL, a crash) leaves its whole ready document behind: the next run on
/// the same path takes it, as it takes a clean run's.
#[test]
fn a_ready_file_left_by_a_killed_serve_is_taken_by_the_next_run() {
    let t = support::example_shop_twin();
    let path = t.tmp.path().join("ready.json");
    let start = || {
        Command::new(support::bin())
            .args(["serve", &t.path_str(), "--port", "0", "--ready-json"])
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // The document a run wrote: one with its address, other than `old`.
    let wait_ready = |child: &mut std::process::Child, old: &str| -> String {
        for _ in 0..3000 {
            let now = std::fs::read_to_string(&path).unwrap_or_default();
            if now.contains("wraith_session_header") && now != old {
                return now;
            }
            if let Some(status) = child.try_wait().unwrap() {
                let mut err = String::new();
                std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
                panic!("serve exited {status}: {err}");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("never ready");
    };
    let mut first = start();
    let left = wait_ready(&mut first, "");
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        left,
        "a kill leaves it"
    );
    let mut second = start();
    wait_ready(&mut second, &left);
    let sent = Command::new("kill")
        .args(["-INT", &second.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    assert_eq!(second.wait().unwrap().code(), Some(0));
    assert!(!path.exists(), "removed on stop");
}

#[test]
fn an_empty_file_or_an_earlier_runs_ready_file_is_replaced_and_removed_on_stop() {
    let t = support::example_shop_twin();
    for earlier in [
        "",
        "{\"serve\":{\"url\":\"http://127.0.0.1:1\"}}\n",
        "{\"record\":{\"url\":\"http://127.0.0.1:1\"}}\n",
    ] {
        let path = t.tmp.path().join("ready.json");
        std::fs::write(&path, earlier).unwrap();
        let mut child = Command::new(support::bin())
            .args(["serve", &t.path_str(), "--port", "0", "--ready-json"])
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut now = String::new();
        for _ in 0..3000 {
            now = std::fs::read_to_string(&path).unwrap_or_default();
            if now.contains("wraith_session_header") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(
            now.contains("wraith_session_header"),
            "{earlier:?} was replaced: {now}"
        );
        let sent = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        assert_eq!(child.wait().unwrap().code(), Some(0));
        assert!(!path.exists(), "removed on stop");
    }
}

/// Runs `wraith args…` in `t`, killing it after a minute: `None` when it had to be killed.
fn wraith_within_a_minute(t: &Twin, args: &[&str]) -> Option<Output> {
    let mut child = Command::new(support::bin())
        .current_dir(t.tmp.path())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Some(child.wait_with_output().unwrap())
}

/// Opening a fifo blocks until something writes to it: one where a twin file belongs used to
/// hang every command that read it.
#[cfg(unix)]
#[test]
fn a_fifo_where_a_twin_file_belongs_is_refused_not_waited_on() {
    let session = "recordings/sessions/20261129T201216Z-ec0a1f/manifest.json";
    let exchange = "recordings/sessions/20261129T201216Z-ec0a1f/000000.wrec.zst";
    let cases: &[(&str, &[&str])] = &[
        ("scrub.toml", &["lint"]),
        ("scrub.toml", &["check"]),
        (session, &["synth"]),
        (session, &["lint"]),
        (session, &["inspect"]),
        (exchange, &["synth"]),
        (exchange, &["check"]),
        ("state/schema.json", &["check"]),
        ("state/fixtures/default/fixture.json", &["lint"]),
        ("state/schema.json", &["lint"]),
        ("lua/routes.toml", &["route", "list"]),
        ("lua/handlers/get_summary.lua", &["lint"]),
        (
            "lua/.routes.toml.lock",
            &[
                "route", "add", "--method", "GET", "--path", "/x", "--status", "200",
            ],
        ),
        ("model/twin.wir.json", &["inspect"]),
        ("model/twin.wir.json", &["coverage"]),
        ("model/twin.wir.json", &["check"]),
        ("model/twin.wir.json", &["serve", "--port", "0"]),
        (
            "state/fixtures/default/fixture.json",
            &["serve", "--port", "0"],
        ),
    ];
    for (file, command) in cases {
        let t = support::example_shop_twin();
        let twin = t.path_str();
        if command[0] != "synth" {
            let out = t.wraith(&["synth", &twin]);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        }
        let path = t.root.join(file);
        let _ = std::fs::remove_file(&path);
        support::mkfifo(&path);
        let mut args: Vec<&str> = command.to_vec();
        args.insert(if command[0] == "route" { 2 } else { 1 }, &twin);
        let out = wraith_within_a_minute(&t, &args)
            .unwrap_or_else(|| panic!("`wraith {}` waited on the fifo {file}", args.join(" ")));
        // lint reports on stdout, the other commands on stderr.
        let said = format!("{}{}", stderr(&out), String::from_utf8_lossy(&out.stdout));
        let code = out.status.code();
        // Of the wrong kind: the user's to fix, exit 1 (the README's exit codes).
        assert!(
            code == Some(1) && said.contains("not a regular file"),
            "`wraith {}` with a fifo at {file}: exit {code:?}: {said}",
            args.join(" "),
        );
    }
}

#[test]
fn a_folder_named_like_a_handler_is_refused_by_lint_and_serve_and_listed_as_no_handler() {
    let t = support::example_shop_twin();
    let handler = t.root.join("lua/handlers/get_summary.lua");
    std::fs::remove_file(&handler).unwrap();
    std::fs::create_dir(&handler).unwrap();
    let twin = t.path_str();
    let out = t.wraith(&["lint", &twin]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("lua/handlers/get_summary.lua")
            && said.contains("is a folder where a handler file belongs"),
        "{said}"
    );
    // route list no longer names a handler serve cannot run.
    let out = t.wraith(&["route", "list", &twin]);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(!listed.contains("handler get_summary"), "{listed}");
    let (code, err) = t.serve_expect_exit(&["--port", "0"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("is a folder where a handler file belongs"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn something_else_where_a_twin_folder_belongs_is_named_and_exits_1() {
    let t = support::example_shop_twin();
    let twin = t.path_str();
    std::fs::write(t.root.join("model"), "not a folder").unwrap();
    let out = t.wraith(&["synth", &twin]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("model is a file where a folder belongs"));
    std::fs::remove_file(t.root.join("model")).unwrap();
    std::os::unix::fs::symlink("nowhere", t.root.join("model")).unwrap();
    let out = t.wraith(&["synth", &twin]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("model is a symbolic link to nothing"));
    std::fs::remove_dir_all(t.root.join("lua")).unwrap();
    std::fs::write(t.root.join("lua"), "").unwrap();
    let out = t.wraith(&[
        "route", "add", &twin, "--method", "GET", "--path", "/x", "--status", "200",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("lua is a file where a folder belongs"));
    assert!(!stderr(&out).contains("os error"), "{}", stderr(&out));
}

#[test]
fn record_refuses_ready_and_certificate_paths_it_cannot_write_before_it_listens() {
    let t = support::example_shop_twin();
    let folder = t.tmp.path().join("a-folder");
    std::fs::create_dir(&folder).unwrap();
    let twin = t.path_str();
    let folder = folder.to_str().unwrap();
    for args in [
        vec![
            "record",
            twin.as_str(),
            "--port",
            "0",
            "--ready-json",
            folder,
        ],
        vec![
            "record",
            twin.as_str(),
            "--port",
            "0",
            "--mode",
            "mitm",
            "--ca-cert",
            folder,
        ],
    ] {
        let out = t.wraith(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("is a folder; name a file"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn a_fault_profile_or_token_file_that_is_a_folder_or_not_utf8_exits_1() {
    let t = support::example_shop_twin();
    let bad = t.tmp.path().join("latin1.toml");
    std::fs::write(&bad, b"name = \"caf\xe9\"\n").unwrap();
    let folder = t.tmp.path().join("a-folder");
    std::fs::create_dir(&folder).unwrap();
    for flag in [
        "--fault-profile",
        "--latency-config",
        "--control-token-file",
    ] {
        for path in [&bad, &folder] {
            let (code, err) = t.serve_expect_exit(&["--port", "0", flag, path.to_str().unwrap()]);
            assert_eq!(code, 1, "{flag} {}: {err}", path.display());
            assert!(err.contains(flag), "{err}");
        }
    }
}

#[test]
fn a_wraith_toml_that_is_not_utf8_is_a_configuration_error() {
    let t = support::example_shop_twin();
    let path = t.path().join("wraith.toml");
    let mut text = std::fs::read(&path).unwrap();
    text.extend_from_slice(b"\n# caf\xe9\n");
    std::fs::write(&path, text).unwrap();
    let out = t.wraith(&["synth", &t.path_str()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("not UTF-8 text"), "{}", stderr(&out));
}

#[test]
fn a_fixture_file_that_is_not_utf8_is_the_owners_to_fix() {
    let t = support::example_shop_twin();
    assert!(t.wraith(&["synth", &t.path_str()]).status.success());
    let path = t.path().join("state/fixtures/default/fixture.json");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.iter().position(|b| *b == b'"').unwrap() + 1;
    bytes[at] = 0xe9;
    std::fs::write(&path, bytes).unwrap();
    let out = t.wraith(&["check", &t.path_str()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("fixture"), "{}", stderr(&out));
}

/// A folder where a recording file belongs, or a file where the folder of sessions belongs, is
/// of the wrong kind: the user's to fix (1) in every command that reads the recordings, as the
/// README's exit codes say, not a runtime failure.
#[test]
fn a_recording_path_of_the_wrong_kind_exits_1_in_every_reader() {
    let sessions = "recordings/sessions";
    let exchange = "recordings/sessions/20261129T201216Z-ec0a1f/000000.wrec.zst";
    for (path, folder) in [(exchange, true), (sessions, false)] {
        for command in ["synth", "check", "inspect"] {
            let t = support::example_shop_twin();
            let twin = t.path_str();
            if command != "synth" {
                let out = t.wraith(&["synth", &twin]);
                assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            }
            let at = t.root.join(path);
            std::fs::remove_dir_all(&at)
                .or_else(|_| std::fs::remove_file(&at))
                .unwrap();
            if folder {
                std::fs::create_dir(&at).unwrap();
            } else {
                std::fs::write(&at, "").unwrap();
            }
            let out = t.wraith(&[command, &twin]);
            assert_eq!(
                out.status.code(),
                Some(1),
                "`wraith {command}` with a {} at {path}: {}",
                if folder { "folder" } else { "file" },
                stderr(&out)
            );
            assert!(stderr(&out).contains(path), "{}", stderr(&out));
        }
    }
}

/// A `wraith.toml` that is there but no file is named as the file to fix, not reported as a
/// missing twin (whose advice, `wraith init`, would refuse the taken folder).
#[test]
fn a_folder_at_wraith_toml_is_named_as_the_file_to_fix() {
    let t = support::example_shop_twin();
    let toml = t.root.join("wraith.toml");
    std::fs::remove_file(&toml).unwrap();
    std::fs::create_dir(&toml).unwrap();
    let out = t.wraith(&["synth", &t.path_str()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("wraith.toml is not a file"), "{err}");
    assert!(!err.contains("no twin"), "{err}");
}

/// A Lua handler that is there but cannot be read (a read error of the kernel's own, since the
/// tests run with every permission) is an IO failure, exit 4, as for every twin file.
#[cfg(target_os = "linux")]
#[test]
fn an_unreadable_lua_handler_is_an_io_failure_exit_4() {
    let t = support::example_shop_twin();
    let twin = t.path_str();
    let out = t.wraith(&["synth", &twin]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let handler = t.root.join("lua/handlers/get_summary.lua");
    std::fs::remove_file(&handler).unwrap();
    std::os::unix::fs::symlink("/proc/self/mem", &handler).unwrap();
    let out = t.wraith(&["check", &twin]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("get_summary.lua"), "{}", stderr(&out));
    let (code, err) = t.serve_expect_exit(&["--port", "0"]);
    assert_eq!(code, 4, "{err}");
}
