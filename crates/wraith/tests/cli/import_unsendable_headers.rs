//! A HAR header whose value holds a control character no HTTP header value can carry (other
//! than CR, LF and NUL, which import refuses): `wraith import` leaves it out of the recording
//! with a warning naming the file, the entry and the header, so the twin's files hold what the
//! twin serves, and `wraith check` judges alike in memory and over HTTP. Black-box: the real
//! binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::process::Command;

use serde_json::{Value, json};
use support::Twin;
use support::har::entry;

const ORIGIN: &str = "https://api.things.test";
const ENV: [(&str, &str); 1] = [("WRAITH_HMAC_KEY", "unsendable-headers-key")];

/// A twin whose one recorded read answered a header holding U+0001 and was sent one holding
/// U+001B; `wraith import`'s stderr beside it.
fn twin() -> (Twin, String) {
    let t = Twin::init("things", ORIGIN);
    let mut e = entry(ORIGIN, "GET", "/things/1", None, &json!({"id": 1}));
    e["response"]["headers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "X-Odd-Note", "value": "a\u{1}b"}));
    e["request"]["headers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "X-Odd-Ask", "value": "\u{1b}[0m"}));
    let stderr = support::har::import_warnings(&t, &ENV, "odd.har", vec![e]);
    support::har::synth(&t, &ENV);
    (t, stderr)
}

fn check(t: &Twin, extra: &[&str]) -> Value {
    let out = Command::new(support::bin())
        .current_dir(t.tmp.path())
        .envs(ENV)
        .env("TMPDIR", t.tmp.path())
        .args(["check", &t.path_str(), "--json"])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn a_header_value_no_http_message_can_carry_is_left_out_at_import_with_a_warning() {
    let (t, stderr) = twin();
    for (place, name, code) in [
        ("log.entries[0].request.headers[1]", "X-Odd-Ask", "U+001B"),
        ("log.entries[0].response.headers[1]", "X-Odd-Note", "U+0001"),
    ] {
        let line = stderr
            .lines()
            .find(|l| l.contains(place))
            .unwrap_or_else(|| panic!("no warning for {place}: {stderr}"));
        assert!(line.starts_with("warning: "), "{line}");
        assert!(line.contains("odd.har"), "names the file: {line}");
        assert!(line.contains(&format!("`{name}` holds {code}")), "{line}");
    }
    // The twin's files hold what it serves: the header is in none of them.
    let mut files = Vec::new();
    support::all_bytes(&t.root, &mut files);
    for (path, bytes) in &files {
        let text = String::from_utf8_lossy(bytes).to_ascii_lowercase();
        assert!(
            !text.contains("x-odd-note") && !text.contains("x-odd-ask"),
            "{} holds the left-out header",
            path.display()
        );
    }
    let s = t.serve_env(&[], &ENV);
    let r = s.get("/things/1", Some("a")).await;
    r.assert_status(200);
    assert_eq!(r.header("x-odd-note"), None);
    let in_memory = check(&t, &[]);
    let wire = check(&t, &["--wire"]);
    assert_eq!(in_memory["score_bp"], 10_000);
    assert_eq!(wire["score_bp"], in_memory["score_bp"]);
    assert_eq!(wire["divergences"], in_memory["divergences"]);
}
