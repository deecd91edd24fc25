//! The outbound policy's configuration as `wraith serve` reads it: `[serve] strip_headers` in
//! wraith.toml, `[pii]` and `[[rules]]` in scrub.toml, and a broken rule refused at startup.
//! Black-box: a HAR imported into a fresh twin, served by the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::process::Command;

use serde_json::json;
use support::Twin;

const ENV: [(&str, &str); 1] = [("WRAITH_HMAC_KEY", "policy-config-test-key")];

/// One recorded read with vendor headers and an email, imported from a HAR.
fn twin() -> Twin {
    let t = Twin::init("acme", "https://api.acme.test");
    let body = json!({"id": "u_1", "email": "jane@example.com", "plan": "free",
        "tax_id": "123-45-6789",
        "last_commit": "Jane Doe <jane@example.com> 1700000000 +0100"})
    .to_string();
    let har = json!({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"},
    "entries": [{
        "startedDateTime": "2026-07-01T10:00:00.000Z",
        "time": 5,
        "request": {"method": "GET", "url": "https://api.acme.test/v1/users/u_1",
            "httpVersion": "HTTP/1.1", "headers": [], "queryString": [], "cookies": [],
            "headersSize": -1, "bodySize": 0},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
            "headers": [
                {"name": "Content-Type", "value": "application/json"},
                {"name": "Server", "value": "nginx/1.25"},
                {"name": "X-Powered-By", "value": "Express"},
                {"name": "CF-Ray", "value": "8a1b2c3d4e5f-CDG"},
                {"name": "Vary", "value": "Accept"}
            ],
            "cookies": [],
            "content": {"size": body.len(), "mimeType": "application/json", "text": body},
            "redirectURL": "", "headersSize": -1, "bodySize": body.len()},
        "cache": {}, "timings": {"send": 0, "wait": 5, "receive": 0}
    }]}});
    let har_path = t.tmp.path().join("acme.har");
    std::fs::write(&har_path, har.to_string()).unwrap();
    let out = Command::new(support::bin())
        .current_dir(t.tmp.path())
        .envs(ENV)
        .args(["import", &t.path_str()])
        .arg(&har_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "import failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    t
}

fn append(t: &Twin, file: &str, text: &str) {
    let p = t.path().join(file);
    let mut s = std::fs::read_to_string(&p).unwrap();
    s.push_str(text);
    std::fs::write(&p, s).unwrap();
}

#[tokio::test]
async fn by_default_vendor_headers_drop_and_recorded_pii_is_tokenized() {
    let t = twin();
    let s = t.serve_env(&[], &ENV);
    let r = s.get("/v1/users/u_1", Some("a")).await;
    assert_eq!(r.status, 200);
    for h in ["server", "x-powered-by", "cf-ray"] {
        assert!(r.header(h).is_none(), "{h} must be dropped");
    }
    assert_eq!(r.header("vary"), Some("Accept"));
    let b = r.json();
    let email = b["email"].as_str().unwrap();
    assert!(
        email.starts_with("user_") && email.ends_with("@wraith.local"),
        "{email}"
    );
    assert_eq!(b["plan"], "free");
    let ssn = b["tax_id"].as_str().unwrap();
    assert!(ssn.starts_with("ssn_") && ssn.len() == 26, "{ssn}");
    let commit = b["last_commit"].as_str().unwrap();
    assert!(
        commit.starts_with("name_")
            && commit.contains(&format!("<{email}>"))
            && commit.ends_with(" 1700000000 +0100"),
        "the name and email enveloped as elsewhere, the time kept: {commit}"
    );
    assert_eq!(
        r.header("x-wraith-replay"),
        Some("series-moment;v=1;outbound-policy=applied")
    );
}

#[tokio::test]
async fn strip_headers_false_and_pii_detect_false_turn_those_passes_off() {
    let t = twin();
    t.set_toml("serve", "strip_headers", "false");
    append(&t, "scrub.toml", "\n[pii]\ndetect = false\n");
    let s = t.serve_env(&[], &ENV);
    let r = s.get("/v1/users/u_1", Some("a")).await;
    // (`server` and `cf-ray` never reach the model: synth classifies them volatile.)
    assert_eq!(r.header("x-powered-by"), Some("Express"));
    assert_eq!(r.json()["email"], "jane@example.com");
    assert_eq!(r.header("x-wraith-replay"), Some("series-moment;v=1"));
}

#[tokio::test]
async fn a_scrub_rule_rewrites_served_bodies_and_a_broken_one_refuses_to_start() {
    let t = twin();
    append(
        &t,
        "scrub.toml",
        "\n[[rules]]\nscope = \"jsonpath\"\nmatch = \"$.plan\"\naction = \"tokenize\"\n",
    );
    let s = t.serve_env(&[], &ENV);
    let r = s.get("/v1/users/u_1", Some("a")).await;
    assert!(
        r.json()["plan"]
            .as_str()
            .unwrap()
            .starts_with("wraith_tok_")
    );
    drop(s);

    let bad = twin();
    append(&bad, "scrub.toml", "\n[pii]\nallowlist = \"$.plan\"\n");
    let (code, stderr) = bad.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("allowlist"), "{stderr}");
}

#[tokio::test]
async fn a_reasoned_pii_allow_entry_keeps_its_value_and_one_without_a_reason_refuses_to_start() {
    let t = twin();
    append(
        &t,
        "scrub.toml",
        "\n[[pii.allow]]\npath = \"$.email\"\nvalue = \"jane@example.com\"\nreason = \"a documented sample address\"\n",
    );
    let s = t.serve_env(&[], &ENV);
    let r = s.get("/v1/users/u_1", Some("a")).await;
    assert_eq!(r.json()["email"], "jane@example.com");
    drop(s);

    // An entry for another value keeps nothing.
    let other = twin();
    append(
        &other,
        "scrub.toml",
        "\n[[pii.allow]]\npath = \"$.email\"\nvalue = \"bob@example.com\"\nreason = \"sample\"\n",
    );
    let s = other.serve_env(&[], &ENV);
    let email = s.get("/v1/users/u_1", Some("a")).await.json()["email"].clone();
    assert!(email.as_str().unwrap().starts_with("user_"), "{email}");
    drop(s);

    let bad = twin();
    append(&bad, "scrub.toml", "\n[[pii.allow]]\npath = \"$.email\"\n");
    let (code, stderr) = bad.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("scrub.toml")
            && stderr.contains("entry 1 ($.email) needs a non-empty `reason`"),
        "{stderr}"
    );
}

#[tokio::test]
async fn an_unbuilt_or_unknown_pii_key_is_a_startup_warning_not_silence() {
    let t = twin();
    append(
        &t,
        "scrub.toml",
        "\n[pii]\ndefault_action = \"redact\"\nallowlst = [\"$.email\"]\n",
    );
    let s = t.serve_env(&[], &ENV);
    let email = s.get("/v1/users/u_1", Some("a")).await.json()["email"].clone();
    assert!(email.as_str().unwrap().starts_with("user_"), "{email}");
    let err = s.stderr();
    assert!(err.contains("[pii] default_action is not built"), "{err}");
    assert!(err.contains("[pii] has an unknown key `allowlst`"), "{err}");
}
