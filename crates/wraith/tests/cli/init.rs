//! `wraith init`: the twin folder layout, refusing to overwrite, and argument validation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

fn wraith(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wraith"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn init_creates_the_documented_twin_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let out = wraith(
        tmp.path(),
        &["init", "shop", "--base-url", "https://api.example.com/v1"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let root = tmp.path().join("twins/shop");
    for dir in [
        "recordings/sessions",
        "model",
        "state/fixtures",
        "lua/handlers",
        "reports",
    ] {
        assert!(root.join(dir).is_dir(), "{dir}");
    }
    assert_eq!(
        std::fs::read_to_string(root.join("state/schema.json")).unwrap(),
        "{\"entity_types\":{},\"schema_version\":1}\n"
    );
    let readme = std::fs::read_to_string(root.join("lua/handlers/README.md")).unwrap();
    assert!(readme.contains("create_<entity>"));
    // Nothing else next to the twin (no staging folder left behind).
    let names: Vec<_> = std::fs::read_dir(tmp.path().join("twins"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["shop"]);
}

/// `wraith init shop` in a fresh directory (kept alive by the returned guard).
fn init_shop() -> (tempfile::TempDir, wraith_twin::TwinDir) {
    let tmp = tempfile::tempdir().unwrap();
    assert!(
        wraith(
            tmp.path(),
            &["init", "shop", "--base-url", "https://api.example.com/v1"]
        )
        .status
        .success()
    );
    let twin = wraith_twin::TwinDir::at(tmp.path().join("twins/shop"));
    (tmp, twin)
}

#[test]
fn init_config_files_load_with_service_set_and_defaults_commented() {
    let (_tmp, twin) = init_shop();
    let text = std::fs::read_to_string(twin.wraith_toml()).unwrap();
    assert!(text.starts_with("#:schema "));
    assert!(text.contains("# [serve.limits]"));
    let cfg = wraith_twin::TwinConfig::load(&twin).unwrap();
    assert_eq!(cfg.service.name, "shop");
    assert_eq!(cfg.service.base_url, "https://api.example.com/v1");
    assert_eq!(cfg.serve.port, 8081);
    assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    let scrub = std::fs::read_to_string(twin.scrub_toml()).unwrap();
    assert!(scrub.contains("# [[rules]]") && scrub.contains("header authorization"));
    let policy = wraith_recording::ScrubPolicy::load(&twin.scrub_toml()).unwrap();
    assert!(policy.rules.is_empty());
}

#[test]
fn every_commented_key_of_the_init_config_is_a_real_key_that_loads_without_warnings() {
    let (_tmp, twin) = init_shop();
    let text = std::fs::read_to_string(twin.wraith_toml()).unwrap();
    // Uncomment every section header and `key = value` line the template documents.
    let is_key = |l: &str| {
        let rest = l.strip_prefix("# ").unwrap_or("");
        rest.starts_with('[')
            || rest.split_once(" = ").is_some_and(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            })
    };
    let uncommented: String = text
        .lines()
        .map(|l| if is_key(l) { &l[2..] } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(uncommented.contains("\nrun_gap = \"1h\""), "{uncommented}");
    std::fs::write(twin.wraith_toml(), uncommented).unwrap();
    let cfg = wraith_twin::TwinConfig::load(&twin).unwrap();
    assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    assert_eq!(cfg.generate.run_gap_us(), Some(3_600_000_000));
    assert_eq!(cfg.freshness.max_age.as_deref(), Some("30d"));
}

#[test]
fn init_refuses_to_overwrite_an_existing_twin() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(
        wraith(
            tmp.path(),
            &["init", "shop", "--base-url", "https://a.example"]
        )
        .status
        .success()
    );
    let toml = tmp.path().join("twins/shop/wraith.toml");
    let before = std::fs::read(&toml).unwrap();
    let out = wraith(
        tmp.path(),
        &["init", "shop", "--base-url", "https://b.example"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(std::fs::read(&toml).unwrap(), before);
}

#[test]
fn init_rejects_invalid_name_or_url_with_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let long = "a".repeat(101);
    for (name, url, expect) in [
        ("../escape", "https://a.example", "invalid twin name"),
        ("a b", "https://a.example", "invalid twin name"),
        (long.as_str(), "https://a.example", "use up to 100 letters"),
        ("ok", "ftp://a.example", "--base-url"),
        ("ok", "api.example.com", "--base-url"),
        ("ok", "https://", "--base-url"),
    ] {
        let out = wraith(tmp.path(), &["init", name, "--base-url", url]);
        assert_eq!(out.status.code(), Some(1), "{name} {url}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expect), "{name} {url}: {err}");
    }
    assert!(!tmp.path().join("twins/ok").exists());
}

#[test]
fn init_refuses_a_malformed_base_url_saying_what_is_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    for (url, says) in [
        ("https://x..com", "not a host name"),
        ("http://999.999.999.999", "no IPv4 address"),
        ("http://x.com:8080:9090", "not a host name"),
        ("https://x.com/../..", "dot segment"),
        ("http://x.com/a b", "holds ' '"),
        ("https://x.com/%zz", "starts no escape"),
        ("https://x.com\ny", "holds '\\n'"),
        ("https://x.com/<script>", "percent-encoded"),
    ] {
        let out = wraith(tmp.path(), &["init", "bad", "--base-url", url]);
        assert_eq!(out.status.code(), Some(1), "{url}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--base-url"), "{url}: {err}");
        assert!(err.contains(says), "{url}: {err}");
    }
    assert!(!tmp.path().join("twins/bad").exists());
    // Scheme and host are case-insensitive: written in lowercase, the path as given.
    let out = wraith(
        tmp.path(),
        &["init", "caps", "--base-url", "HTTPS://API.Example.COM/V1"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let toml = std::fs::read_to_string(tmp.path().join("twins/caps/wraith.toml")).unwrap();
    assert!(toml.contains("\"https://api.example.com/V1\""), "{toml}");
    for (name, url) in [
        ("fqdn", "https://api.example.com./v1"),
        ("under", "http://my_host.internal:8080/a%20b/~x"),
    ] {
        let out = wraith(tmp.path(), &["init", name, "--base-url", url]);
        assert!(
            out.status.success(),
            "{url}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn init_where_twins_is_a_file_exits_1_saying_so() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("twins"), "not a folder").unwrap();
    let out = wraith(
        tmp.path(),
        &["init", "shop", "--base-url", "https://api.example.com"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("./twins exists and is not a folder"), "{err}");
}

#[test]
fn init_refuses_a_base_url_with_credentials_without_repeating_them() {
    let tmp = tempfile::tempdir().unwrap();
    for url in [
        "https://user:s3cr3t-pass@api.example.com/v1",
        "https://tok3n-only@api.example.com",
    ] {
        let out = wraith(tmp.path(), &["init", "creds", "--base-url", url]);
        assert_eq!(out.status.code(), Some(1), "{url}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--base-url"), "{url}: {err}");
        assert!(err.contains("credentials"), "{url}: {err}");
        assert!(err.contains("https://api.example.com"), "{url}: {err}");
        assert!(
            !err.contains("s3cr3t") && !err.contains("tok3n"),
            "{url}: {err}"
        );
    }
    assert!(!tmp.path().join("twins/creds").exists());
}

#[test]
fn init_refuses_a_base_url_port_outside_1_to_65535() {
    let tmp = tempfile::tempdir().unwrap();
    for (url, port) in [
        ("https://api.example.com:99999", "99999"),
        ("http://127.0.0.1:0/v1", "0"),
        ("http://localhost:http", "http"),
        ("http://[::1]:70000", "70000"),
    ] {
        let out = wraith(tmp.path(), &["init", "ports", "--base-url", url]);
        assert_eq!(out.status.code(), Some(1), "{url}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--base-url"), "{url}: {err}");
        assert!(err.contains(&format!("port `{port}`")), "{url}: {err}");
        assert!(err.contains("1 to 65535"), "{url}: {err}");
    }
    assert!(!tmp.path().join("twins/ports").exists());
    // The ports a user does write still work.
    for (name, url) in [
        ("v4", "http://127.0.0.1:65535"),
        ("v6", "http://[::1]:8080/api"),
        ("v6bare", "http://[::1]"),
    ] {
        let out = wraith(tmp.path(), &["init", name, "--base-url", url]);
        assert!(
            out.status.success(),
            "{url}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn init_json_reports_what_was_created() {
    let tmp = tempfile::tempdir().unwrap();
    let out = wraith(
        tmp.path(),
        &[
            "init",
            "shop",
            "--base-url",
            "http://localhost:3000",
            "--json",
        ],
    );
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["twin"], "shop");
    assert_eq!(v["base_url"], "http://localhost:3000");
    assert!(
        v["created"]
            .as_array()
            .unwrap()
            .contains(&"state/schema.json".into())
    );
}

/// A link where the twin or `./twins` belongs, even one to nothing, is refused up front (exit
/// 1) rather than failing at the final move (exit 4).
#[cfg(unix)]
#[test]
fn init_refuses_a_link_where_the_twin_or_twins_folder_belongs() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("twins")).unwrap();
    std::os::unix::fs::symlink("nowhere", tmp.path().join("twins/c")).unwrap();
    let out = wraith(
        tmp.path(),
        &["init", "c", "--base-url", "https://a.example"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("twins/c already exists"));
    let other = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("nowhere", other.path().join("twins")).unwrap();
    let out = wraith(
        other.path(),
        &["init", "c", "--base-url", "https://a.example"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a folder"));
}
