//! What `wraith check` does when its stdout cannot take the report: the command's result is
//! never lost. A full disk behind `> file` is an IO failure (exit 4) said on stderr; a reader
//! that has gone (`| head`) drops the rest of the output quietly, and a failed gate still exits
//! 2. Black-box: the real binary with its stdout on `/dev/full` or a closed pipe.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};

use crate::check_support;
use check_support::*;

/// The demo twin without its `/health` route: one of its six exchanges is refused, below the
/// 90% gate.
fn failing_twin() -> DemoTwin {
    let t = DemoTwin::synthesized();
    t.drop_route("/health");
    t
}

fn check_into(t: &DemoTwin, stdout: Stdio) -> std::process::Child {
    Command::new(bin())
        .arg("check")
        .arg(&t.root)
        .arg("--json")
        .env("WRAITH_HMAC_KEY", "check-tests-key")
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn full() -> Stdio {
    Stdio::from(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap(),
    )
}

#[test]
fn check_whose_stdout_cannot_be_written_exits_4_saying_so() {
    let t = DemoTwin::synthesized();
    let out = check_into(&t, full()).wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("cannot write the output to stdout"), "{err}");
}

#[test]
fn a_failed_gate_keeps_exit_2_when_stdout_cannot_be_written() {
    let t = failing_twin();
    let out = check_into(&t, full()).wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write the output to stdout"), "{err}");
    assert!(err.contains("below threshold"), "{err}");
}

#[test]
fn a_failed_gate_keeps_exit_2_when_the_reader_of_stdout_has_gone() {
    let t = failing_twin();
    let mut child = check_into(&t, Stdio::piped());
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        !err.contains("cannot write"),
        "a closed pipe is not an error: {err}"
    );
}
