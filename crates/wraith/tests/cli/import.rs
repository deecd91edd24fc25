//! `wraith import`: HAR files become scrubbed recording sessions; malformed input writes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/recording")
        .join(name)
}

fn corpora() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
}

/// The binary with a fixed key and no CI, and its machine key kept inside `dir`.
fn wraith(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wraith"));
    c.current_dir(dir)
        .env("WRAITH_HMAC_KEY", "import-test-key")
        .env_remove("CI")
        .env("XDG_CONFIG_HOME", dir.join("config"));
    c
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap()
}

fn init(dir: &Path, name: &str, base: &str) {
    let out = run(wraith(dir).args(["init", name, "--base-url", base]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn inspect(dir: &Path, twin: &str) -> serde_json::Value {
    let out = run(wraith(dir).args(["inspect", twin, "--json"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn session_dirs(dir: &Path, twin: &str) -> Vec<String> {
    let mut v: Vec<_> = std::fs::read_dir(dir.join("twins").join(twin).join("recordings/sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn import_mastodon_corpus_matches_readme_counts() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "mastodon", "http://localhost:3000");
    let out = run(wraith(tmp.path())
        .args(["import", "mastodon", "--json"])
        .arg(corpora().join("mastodon")));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (summary["sessions"].as_u64(), summary["exchanges"].as_u64()),
        (Some(205), Some(1108))
    );
    let v = inspect(tmp.path(), "mastodon");
    assert_eq!(
        (v["sessions"].as_u64(), v["exchanges"].as_u64()),
        (Some(205), Some(1108))
    );
    assert_eq!(v["hosts"]["localhost:3000"], 1096);
    assert_eq!(v["hosts"]["localhost:4000"], 7);
    assert_eq!(v["statuses"]["422"], 7);
    assert_eq!(v["methods"]["HEAD"], 3);
}

#[test]
fn import_linode_corpus_keeps_base_path_prefix_and_skips_index_json() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "linode", "https://api.linode.com/v4beta");
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpora().join("linode"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.iter().any(|f| f.ends_with("index.json")));
    let out = run(wraith(tmp.path())
        .args(["import", "linode", "--json"])
        .args(&files));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        summary["skipped_files"][0]
            .as_str()
            .unwrap()
            .ends_with("index.json")
    );
    let v = inspect(tmp.path(), "linode");
    assert_eq!(
        (v["sessions"].as_u64(), v["exchanges"].as_u64()),
        (Some(396), Some(2791))
    );
    assert_eq!(v["hosts"]["api.linode.com"], 2786);
    assert_eq!(v["statuses"]["503"], 38);
    let sessions =
        wraith_recording::read_sessions(&tmp.path().join("twins/linode/recordings/sessions"))
            .unwrap();
    let regions = sessions
        .iter()
        .flat_map(|s| &s.exchanges)
        .filter(|e| e.request.path == "/v4beta/regions")
        .count();
    assert!(regions > 0, "paths keep the base URL's /v4beta prefix");
}

#[test]
fn import_records_session_per_file_with_tags_origin_and_decoded_bodies() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "https://api.example.com/v1");
    let out = run(wraith(tmp.path())
        .args(["import", "shop", "--tag", "demo"])
        .arg(testdata("small.har")));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sessions =
        wraith_recording::read_sessions(&tmp.path().join("twins/shop/recordings/sessions"))
            .unwrap();
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0];
    assert!(s.manifest.complete);
    assert_eq!(s.manifest.proxy_mode, "import");
    assert_eq!(s.manifest.tags, ["small", "demo"]);
    assert!(
        s.manifest.session_id.starts_with("20240301T100000Z-"),
        "{}",
        s.manifest.session_id
    );
    assert_eq!(s.exchanges.len(), 5);
    let e = &s.exchanges[0];
    assert_eq!(
        (e.request.path.as_str(), e.request.query.as_str()),
        ("/v1/customers", "limit=2")
    );
    assert_eq!(e.request.origin, None);
    assert_eq!(e.timing.request_start_us, 1_709_287_200_000_000);
    assert_eq!(e.timing.last_byte_us, 1_709_287_200_001_500);
    assert_eq!(e.correlation.tags, ["small", "demo"]);
    let upload = &s.exchanges[3];
    assert_eq!(
        upload.request.origin.as_deref(),
        Some("https://files.example.net")
    );
    assert_eq!(upload.request.body[..], b"\x00\x01binary\xff"[..]);
    assert_eq!(s.exchanges[4].response.status, 404);
    assert_eq!(
        s.manifest.end_time_us,
        s.exchanges[4].timing.request_start_us
    );
}

#[test]
fn reimporting_the_same_har_skips_it_with_a_notice_and_exit_0() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "https://api.example.com/v1");
    let first = run(wraith(tmp.path())
        .args(["import", "shop"])
        .arg(testdata("small.har")));
    assert!(first.status.success());
    let before = session_dirs(tmp.path(), "shop");
    assert_eq!(before.len(), 1);

    // Again, and once more twice in one command line: still the one session.
    for args in [vec!["small.har"], vec!["small.har", "small.har"]] {
        let mut cmd = wraith(tmp.path());
        cmd.args(["import", "shop", "--json"]);
        for a in &args {
            cmd.arg(testdata(a));
        }
        let out = run(&mut cmd);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(session_dirs(tmp.path(), "shop"), before, "{stderr}");
        let notices: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("already imported"))
            .collect();
        assert_eq!(notices.len(), args.len(), "{stderr}");
        assert!(notices[0].contains("small.har"), "{stderr}");
        assert!(notices[0].contains(&before[0]), "{stderr}");
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(summary["sessions"], 0, "{summary}");
        assert_eq!(summary["exchanges"], 0, "{summary}");
        assert_eq!(summary["files"][0]["already_imported"], true, "{summary}");
        assert_eq!(summary["files"][0]["session_id"], before[0].as_str());
    }
    assert_eq!(inspect(tmp.path(), "shop")["exchanges"], 5);

    // Another file still imports beside it.
    let other = run(wraith(tmp.path())
        .args(["import", "shop"])
        .arg(testdata("secrets.har")));
    assert!(other.status.success());
    assert_eq!(session_dirs(tmp.path(), "shop").len(), 2);
}

#[test]
fn the_same_har_under_another_file_name_is_not_imported_twice() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "https://api.example.com/v1");
    let bytes = std::fs::read(testdata("small.har")).unwrap();
    std::fs::write(tmp.path().join("small.har"), &bytes).unwrap();
    std::fs::write(tmp.path().join("small (1).har"), &bytes).unwrap();
    std::fs::write(tmp.path().join("copy.har"), &bytes).unwrap();
    let first = run(wraith(tmp.path()).args(["import", "shop", "small.har"]));
    assert!(first.status.success());
    let before = session_dirs(tmp.path(), "shop");
    assert_eq!(before.len(), 1);

    // A later import of a copy, and two copies in one command line: still the one session.
    for files in [vec!["small (1).har"], vec!["copy.har", "small (1).har"]] {
        let out = run(wraith(tmp.path())
            .args(["import", "shop", "--json"])
            .args(&files));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(session_dirs(tmp.path(), "shop"), before, "{stderr}");
        assert!(stderr.contains("same exchanges as session"), "{stderr}");
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(summary["sessions"], 0, "{summary}");
        for f in summary["files"].as_array().unwrap() {
            assert_eq!(f["already_imported"], true, "{summary}");
            assert_eq!(f["session_id"], before[0].as_str(), "{summary}");
        }
    }

    // Two copies in a fresh twin's first import: one session.
    init(tmp.path(), "fresh", "https://api.example.com/v1");
    let out = run(wraith(tmp.path()).args(["import", "fresh", "copy.har", "small.har"]));
    assert!(out.status.success());
    assert_eq!(session_dirs(tmp.path(), "fresh").len(), 1);

    // A file that differs in one answer is other traffic, imported beside it.
    let changed =
        String::from_utf8(bytes)
            .unwrap()
            .replacen("\"status\": 200", "\"status\": 201", 1);
    std::fs::write(tmp.path().join("changed.har"), changed).unwrap();
    let out = run(wraith(tmp.path()).args(["import", "shop", "changed.har"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(session_dirs(tmp.path(), "shop").len(), 2);
}

#[test]
fn malformed_har_exits_1_naming_file_and_place_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "https://api.example.com/v1");
    // A good file first: it must not be imported either.
    let out = run(wraith(tmp.path())
        .args(["import", "shop"])
        .arg(testdata("small.har"))
        .arg(testdata("malformed-url.har")));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("malformed-url.har"), "{err}");
    assert!(err.contains("log.entries[3].request.url"), "{err}");
    assert!(session_dirs(tmp.path(), "shop").is_empty());

    let out = run(wraith(tmp.path())
        .args(["import", "shop"])
        .arg(testdata("truncated.har")));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("truncated.har"));
    assert!(session_dirs(tmp.path(), "shop").is_empty());
}

#[test]
fn two_hars_concatenated_into_one_file_exit_1_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "https://api.example.com/v1");
    let one = std::fs::read_to_string(testdata("small.har")).unwrap();
    let both = tmp.path().join("both.har");
    std::fs::write(&both, format!("{one}\n{one}")).unwrap();
    let out = run(wraith(tmp.path()).args(["import", "shop"]).arg(&both));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("both.har"), "{err}");
    assert!(err.contains("more than one JSON document"), "{err}");
    assert!(session_dirs(tmp.path(), "shop").is_empty());
}

#[test]
fn a_har_of_another_api_is_imported_with_a_warning_naming_its_origin() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "other", "https://api.linode.com/v4beta");
    let out = run(wraith(tmp.path())
        .args(["import", "other"])
        .arg(testdata("small.har")));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("none of the exchanges imported"), "{err}");
    assert!(err.contains("https://api.example.com"), "{err}");

    init(tmp.path(), "shop", "https://api.example.com/v1");
    let out = run(wraith(tmp.path())
        .args(["import", "shop"])
        .arg(testdata("small.har")));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("none of the exchanges"), "{err}");
}

#[test]
fn a_fifo_named_har_is_refused_and_an_empty_folder_says_where_it_looked() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "https://api.example.com/v1");
    let fifo = tmp.path().join("pipe.har");
    crate::support::mkfifo(&fifo);
    // Reading a FIFO nobody writes to would block forever.
    let out = run(wraith(tmp.path()).args(["import", "shop"]).arg(&fifo));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pipe.har is not a regular file"), "{err}");

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(tmp.path().join("notes.json"), "{}").unwrap();
    let out = run(wraith(tmp.path())
        .args(["import", "shop"])
        .arg(&empty)
        .arg(tmp.path().join("notes.json")));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("one level deep"), "{err}");
    assert!(err.contains("notes.json"), "{err}");
    assert!(session_dirs(tmp.path(), "shop").is_empty());
}

#[test]
fn control_characters_never_reach_a_tag() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "https://api.example.com/v1");
    let out = run(wraith(tmp.path())
        .args(["import", "shop", "--tag", "red\u{1b}[31m"])
        .arg(testdata("small.har")));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("control character"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
    for (cmd, tag) in [("import", ""), ("synth", ""), ("synth", "\u{7}")] {
        let mut c = wraith(tmp.path());
        c.args([cmd, "shop", "--tag", tag]);
        if cmd == "import" {
            c.arg(testdata("small.har"));
        }
        let out = run(&mut c);
        assert_eq!(out.status.code(), Some(1), "{cmd} {tag:?}");
    }

    // A file name with an escape sequence: imported, its tag without the control character.
    let odd = tmp.path().join("odd\u{1b}[31mname.har");
    std::fs::copy(testdata("small.har"), &odd).unwrap();
    let out = run(wraith(tmp.path()).args(["import", "shop"]).arg(&odd));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listing = inspect(tmp.path(), "shop").to_string();
    assert!(!listing.contains("\\u001b"), "{listing}");
    assert!(listing.contains("odd\u{FFFD}[31mname"), "{listing}");
}

/// A HAR of `entries`, each `(method, url)` answered 200 with `{}`.
fn har_of(entries: &[(&str, &str)]) -> String {
    let entries: Vec<serde_json::Value> = entries
        .iter()
        .map(|(method, url)| {
            serde_json::json!({
                "startedDateTime": "2000-01-01T00:00:00Z",
                "request": {"method": method, "url": url},
                "response": {"status": 200,
                    "content": {"mimeType": "application/json", "text": "{}"}}
            })
        })
        .collect();
    serde_json::json!({"log": {"version": "1.2", "entries": entries}}).to_string()
}

/// What a HAR recorded (a method, a URL, a path outside the base URL's) reaches the terminal
/// with its control and bidi characters escaped, in an error and in the text summary; the
/// JSON summary keeps it as recorded.
#[test]
fn recorded_text_in_import_messages_reaches_the_terminal_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "api", "https://api.example/v4");
    let bad = [
        (
            ("G\u{1b}[2JET", "https://api.example/v4/a"),
            "G\\u{1b}[2JET",
        ),
        (
            ("GET", "ht\u{202e}tp://api.example/v4/a"),
            "ht\\u{202e}tp://",
        ),
    ];
    for ((method, url), escaped) in bad {
        let har = tmp.path().join("bad.har");
        std::fs::write(&har, har_of(&[(method, url)])).unwrap();
        let out = run(wraith(tmp.path()).args(["import", "api"]).arg(&har));
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!crate::support::has_terminal_controls(&err), "{err:?}");
        assert!(err.contains(escaped), "{err}");
    }

    let har = tmp.path().join("login.har");
    let outside = "https://api.example/\u{202e}oauth\u{202c}/token";
    std::fs::write(
        &har,
        har_of(&[("GET", outside), ("GET", "https://api.example/v4/regions")]),
    )
    .unwrap();
    let out = run(wraith(tmp.path()).args(["import", "api"]).arg(&har));
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{err}");
    for printed in [&text, &err] {
        assert!(
            !crate::support::has_terminal_controls(printed),
            "{printed:?}"
        );
        assert!(
            printed.contains("/\\u{202e}oauth\\u{202c}/token"),
            "{printed}"
        );
    }
    init(tmp.path(), "api2", "https://api.example/v4");
    let out = run(wraith(tmp.path())
        .args(["import", "api2", "--json"])
        .arg(&har));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        summary["files"][0]["outside_base_path"][0],
        format!("log.entries[0]: GET {outside}")
    );
}

#[test]
fn import_into_unknown_twin_or_missing_file_is_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(wraith(tmp.path())
        .args(["import", "nope"])
        .arg(testdata("small.har")));
    assert_eq!(out.status.code(), Some(1));
    init(tmp.path(), "shop", "https://api.example.com/v1");
    let out = run(wraith(tmp.path()).args(["import", "shop", "missing.har"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.har"));
}

/// A file that is there but cannot be read (here a read error of the kernel's own, since the
/// tests run with every permission) is an IO failure, exit 4, not a usage error.
#[cfg(target_os = "linux")]
#[test]
fn an_unreadable_har_file_or_wraith_toml_is_an_io_failure_exit_4() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "https://api.example.com/v1");
    let har = tmp.path().join("unreadable.har");
    std::os::unix::fs::symlink("/proc/self/mem", &har).unwrap();
    let out = run(wraith(tmp.path()).args(["import", "shop"]).arg(&har));
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("unreadable.har"));
    assert!(session_dirs(tmp.path(), "shop").is_empty());

    let toml = tmp.path().join("twins/shop/wraith.toml");
    std::fs::remove_file(&toml).unwrap();
    std::os::unix::fs::symlink("/proc/self/mem", &toml).unwrap();
    let compose = [
        "compose",
        "--base",
        "shop",
        "--overlay",
        "shop",
        "--output",
        "twins/both",
    ];
    for cmd in [
        &["import", "shop"][..],
        &["synth", "shop"],
        &["check", "shop"],
        &compose,
    ] {
        let mut c = wraith(tmp.path());
        c.args(cmd);
        if cmd[0] == "import" {
            c.arg(testdata("small.har"));
        }
        let out = run(&mut c);
        assert_eq!(
            out.status.code(),
            Some(4),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("wraith.toml"),
            "{cmd:?}"
        );
    }
}

#[test]
fn ci_without_hmac_key_exits_3_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "https://api.example.com/v1");
    let out = run(wraith(tmp.path())
        .env_remove("WRAITH_HMAC_KEY")
        .env("CI", "true")
        .args(["import", "shop"])
        .arg(testdata("small.har")));
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("WRAITH_HMAC_KEY"));
    assert!(session_dirs(tmp.path(), "shop").is_empty());
}

/// A machine key that cannot be written says how to go on without one: a key of the user's
/// own, or a config folder wraith may write. Nothing is imported.
#[test]
fn an_unwritable_machine_key_folder_says_how_to_go_on() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "https://api.example.com/v1");
    // A file where the config folder should be: no user, root included, can make the folder.
    let blocked = tmp.path().join("not-a-folder");
    std::fs::write(&blocked, "").unwrap();
    let out = run(wraith(tmp.path())
        .env_remove("WRAITH_HMAC_KEY")
        .env("XDG_CONFIG_HOME", &blocked)
        .args(["import", "shop"])
        .arg(testdata("small.har")));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("HMAC key file") && err.contains("set WRAITH_HMAC_KEY"),
        "{err}"
    );
    assert!(session_dirs(tmp.path(), "shop").is_empty());
}

/// Imports of one file into one twin at once take turns: one imports it, the others find it
/// imported already and skip it (exit 0), and the twin holds one session.
#[test]
fn concurrent_imports_of_one_file_import_it_once_and_all_succeed() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "http://localhost:3000");
    // A few megabytes to scrub keep every run busy long enough to overlap the others.
    let har = corpora().join("mastodon/test_status_update_with_media_edit.har");
    crate::support::all_at_once_succeed(
        (0..6)
            .map(|_| {
                let mut c = wraith(tmp.path());
                c.args(["import", "shop"]).arg(&har);
                c
            })
            .collect(),
    );
    assert_eq!(session_dirs(tmp.path(), "shop").len(), 1);
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn no_secret_sent_in_a_har_reaches_any_byte_of_the_twin() {
    let tmp = tempfile::tempdir().unwrap();
    // The base URL covers `/oauth/token` too, so the token it issues is imported.
    init(tmp.path(), "shop", "https://api.example.com");
    let out = run(wraith(tmp.path())
        .args(["import", "shop"])
        .arg(testdata("secrets.har")));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut files = Vec::new();
    crate::support::all_bytes(&tmp.path().join("twins/shop"), &mut files);
    assert!(
        files
            .iter()
            .any(|(p, _)| p.to_string_lossy().ends_with(".wrec.zst"))
    );
    for (path, bytes) in &files {
        for secret in [
            "SECRET_",
            "4111 1111 1111 1111",
            "5555555555554444",
            "import-test-key",
        ] {
            assert!(
                !contains(bytes, secret.as_bytes()),
                "{secret} found in {}",
                path.display()
            );
        }
    }
    // The shape survives: scheme word, cookie names, the rest of the query.
    let sessions =
        wraith_recording::read_sessions(&tmp.path().join("twins/shop/recordings/sessions"))
            .unwrap();
    let e = &sessions[0].exchanges[0];
    assert!(
        e.request_header("authorization")
            .unwrap()
            .starts_with("Bearer wraith_tok_")
    );
    assert!(
        e.request_header("cookie")
            .unwrap()
            .starts_with("session=wraith_tok_")
    );
    assert!(
        e.request.query.starts_with("api_key=wraith_tok_")
            && e.request.query.ends_with("&expand=customer")
    );
    assert!(
        e.response_header("set-cookie")
            .unwrap()
            .ends_with("; Path=/; HttpOnly")
    );
    // The access token issued in one response and sent back later maps to the same token.
    let issued: serde_json::Value =
        serde_json::from_slice(&sessions[0].exchanges[1].response_body()).unwrap();
    let sent = sessions[0].exchanges[2]
        .request_header("authorization")
        .unwrap();
    assert_eq!(
        sent,
        format!("Bearer {}", issued["access_token"].as_str().unwrap())
    );
}

#[test]
fn machine_key_is_created_private_and_gives_stable_tokens() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "a", "https://api.example.com/v1");
    init(tmp.path(), "b", "https://api.example.com/v1");
    for twin in ["a", "b"] {
        let out = run(wraith(tmp.path())
            .env_remove("WRAITH_HMAC_KEY")
            .args(["import", twin])
            .arg(testdata("secrets.har")));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let key = tmp.path().join("config/wraith/hmac.key");
    assert!(key.is_file());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let auth = |twin: &str| {
        let s = wraith_recording::read_sessions(
            &tmp.path()
                .join("twins")
                .join(twin)
                .join("recordings/sessions"),
        )
        .unwrap();
        s[0].exchanges[0]
            .request_header("authorization")
            .unwrap()
            .to_string()
    };
    assert_eq!(auth("a"), auth("b"));
}

#[test]
fn a_file_where_the_sessions_folder_belongs_is_named_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "https://api.example.com/v1");
    let sessions = tmp.path().join("twins/shop/recordings/sessions");
    std::fs::remove_dir_all(&sessions).unwrap();
    std::fs::write(&sessions, b"not a folder").unwrap();
    let out = run(wraith(tmp.path())
        .args(["import", "shop"])
        .arg(testdata("small.har")));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is a file where the folder of recording sessions belongs"),
        "{err}"
    );
    assert_eq!(std::fs::read(&sessions).unwrap(), b"not a folder");
}

/// A browser writes binary or cut text as a JavaScript string, which may end in half a
/// surrogate pair (`"\ud800"`). The entry is imported with U+FFFD in its place and a warning
/// naming the file and the entry; nothing else changes.
#[test]
fn a_lone_surrogate_escape_is_imported_as_u_fffd_with_a_warning_naming_file_and_entry() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "https://api.example.com/v1");
    let har = tmp.path().join("binary.har");
    std::fs::write(
        &har,
        r#"{"log":{"version":"1.2","entries":[
{"startedDateTime":"2000-01-01T00:00:00Z","request":{"method":"GET","url":"https://api.example.com/v1/a"},
 "response":{"status":200,"content":{"mimeType":"text/plain","text":"ok"}}},
{"startedDateTime":"2000-01-01T00:00:01Z","request":{"method":"GET","url":"https://api.example.com/v1/b"},
 "response":{"status":200,"content":{"mimeType":"text/plain","text":"ab\ud800cd"}}}]}}"#,
    )
    .unwrap();
    let out = run(wraith(tmp.path())
        .args(["import", "shop", "--json"])
        .arg(&har));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("warning: "), "{err}");
    assert!(err.contains("binary.har"), "{err}");
    assert!(err.contains("log.entries[1]"), "{err}");
    assert!(err.contains("\\ud800 at line 5"), "{err}");
    assert!(err.contains("U+FFFD"), "{err}");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["exchanges"], 2);
    assert!(
        summary["files"][0]["warnings"][0]
            .as_str()
            .unwrap()
            .contains("log.entries[1]")
    );
    let sessions =
        wraith_recording::read_sessions(&tmp.path().join("twins/shop/recordings/sessions"))
            .unwrap();
    let bodies: Vec<Vec<u8>> = sessions[0]
        .exchanges
        .iter()
        .map(|e| e.response_body())
        .collect();
    assert_eq!(bodies, [b"ok".to_vec(), "ab\u{FFFD}cd".as_bytes().to_vec()]);
}

/// A folder holding several malformed files names every one of them, with its reason, in one
/// run, and imports nothing (not even the good files beside them).
#[test]
fn every_malformed_har_of_an_import_is_named_with_its_reason_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "shop", "https://api.example.com/v1");
    let dir = tmp.path().join("hars");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(testdata("small.har"), dir.join("a-good.har")).unwrap();
    std::fs::copy(testdata("malformed-url.har"), dir.join("b-bad-url.har")).unwrap();
    std::fs::copy(testdata("small.har"), dir.join("c-good.har")).unwrap();
    std::fs::write(dir.join("d-array.har"), "[1, 2]").unwrap();
    let out = run(wraith(tmp.path()).args(["import", "shop"]).arg(&dir));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("2 of 4 HAR files cannot be imported"), "{err}");
    assert!(
        err.contains("b-bad-url.har at log.entries[3].request.url"),
        "{err}"
    );
    assert!(err.contains("d-array.har at (document)"), "{err}");
    assert!(
        !err.contains("a-good.har") && !err.contains("c-good.har"),
        "{err}"
    );
    assert!(session_dirs(tmp.path(), "shop").is_empty());

    // A file that cannot be read among them makes it an IO failure (4), still naming all.
    #[cfg(target_os = "linux")]
    {
        std::os::unix::fs::symlink("/proc/self/mem", dir.join("e-unreadable.har")).unwrap();
        let out = run(wraith(tmp.path()).args(["import", "shop"]).arg(&dir));
        assert_eq!(out.status.code(), Some(4));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("3 of 5 HAR files cannot be imported"), "{err}");
        assert!(
            err.contains("cannot read") && err.contains("e-unreadable.har"),
            "{err}"
        );
        assert!(
            err.contains("b-bad-url.har") && err.contains("d-array.har"),
            "{err}"
        );
        assert!(session_dirs(tmp.path(), "shop").is_empty());
    }
}

/// An entry on the twin's host but outside its base URL's path (`/oauth/token` beside `/v4`)
/// is not the twin's API: it is left out with a count and a warning naming the first, as
/// `wraith record` passes such a request through unrecorded; the twin never serves it.
#[test]
fn an_entry_on_the_twins_host_outside_its_base_path_is_skipped_with_a_count_and_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "api", "https://api.example/v4");
    let har = tmp.path().join("login.har");
    std::fs::write(
        &har,
        r#"{"log":{"version":"1.2","entries":[
{"startedDateTime":"2000-01-01T00:00:00Z","request":{"method":"POST","url":"https://api.example/oauth/token?client_secret=hush"},
 "response":{"status":200,"content":{"mimeType":"application/json","text":"{\"access_token\":\"abc\"}"}}},
{"startedDateTime":"2000-01-01T00:00:01Z","request":{"method":"GET","url":"https://api.example/v4/regions"},
 "response":{"status":200,"content":{"mimeType":"application/json","text":"{\"data\":[]}"}}},
{"startedDateTime":"2000-01-01T00:00:02Z","request":{"method":"GET","url":"https://api.example/app.js"},
 "response":{"status":200,"content":{"mimeType":"text/javascript","text":"1"}}}]}}"#,
    )
    .unwrap();
    let out = run(wraith(tmp.path())
        .args(["import", "api", "--json"])
        .arg(&har));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("warning: skipped 2 entries"), "{err}");
    assert!(err.contains("outside its base URL's path `/v4`"), "{err}");
    assert!(
        err.contains("login.har log.entries[0]: POST https://api.example/oauth/token"),
        "{err}"
    );
    assert!(!err.contains("hush"), "a query is never printed: {err}");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["exchanges"], 1);
    assert_eq!(summary["skipped_outside_base_path"], 2);
    assert_eq!(
        summary["files"][0]["outside_base_path"][1],
        "log.entries[2]: GET https://api.example/app.js"
    );
    let sessions =
        wraith_recording::read_sessions(&tmp.path().join("twins/api/recordings/sessions")).unwrap();
    let paths: Vec<&str> = sessions[0]
        .exchanges
        .iter()
        .map(|e| e.request.path.as_str())
        .collect();
    assert_eq!(paths, ["/v4/regions"]);

    // The text summary counts them per file.
    init(tmp.path(), "api2", "https://api.example/v4");
    let out = run(wraith(tmp.path()).args(["import", "api2"]).arg(&har));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("login.har: skipped 2 entries outside the base URL's path"),
        "{text}"
    );
}

/// A recorded exchange the twin could never replay is left out, named with why: a path with
/// a dot segment (`wraith serve` refuses it with 400, so its route would fail the twin's own
/// check) and an interim answer (`101 Switching Protocols` of a browser's WebSocket, `103
/// Early Hints`), which serve cannot send as a final answer.
#[test]
fn entries_a_twin_could_never_replay_are_skipped_naming_why() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "api", "https://api.example");
    let har = tmp.path().join("odd.har");
    std::fs::write(
        &har,
        r#"{"log":{"version":"1.2","entries":[
{"startedDateTime":"2000-01-01T00:00:00Z","request":{"method":"GET","url":"https://api.example/a/../b"},
 "response":{"status":200,"content":{"mimeType":"application/json","text":"{}"}}},
{"startedDateTime":"2000-01-01T00:00:01Z","request":{"method":"GET","url":"https://api.example/a/%2E%2e/c"},
 "response":{"status":200,"content":{"mimeType":"application/json","text":"{}"}}},
{"startedDateTime":"2000-01-01T00:00:02Z","request":{"method":"GET","url":"wss://api.example/stream"},
 "response":{"status":101,"content":{"mimeType":"","text":""}}},
{"startedDateTime":"2000-01-01T00:00:03Z","request":{"method":"GET","url":"https://api.example/regions"},
 "response":{"status":200,"content":{"mimeType":"application/json","text":"{\"data\":[]}"}}}]}}"#,
    )
    .unwrap();
    let out = run(wraith(tmp.path())
        .args(["import", "api", "--json"])
        .arg(&har));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["exchanges"], 1, "{summary}");
    let skipped = summary["files"][0]["skipped_entries"].to_string();
    assert!(skipped.contains("log.entries[0].request.url"), "{skipped}");
    assert!(skipped.contains("log.entries[1].request.url"), "{skipped}");
    assert!(skipped.contains("wraith serve refuses"), "{skipped}");
    assert!(
        skipped.contains("log.entries[2].response.status: status 101 is an interim answer"),
        "{skipped}"
    );
}

#[test]
fn an_absurd_har_time_is_imported_as_zero_with_a_warning_naming_file_and_entry() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "slow", "https://api.example.com/v1");
    let entry = |time: &str| {
        format!(
            r#"{{"startedDateTime":"2000-01-01T00:00:00.000Z","time":{time},
            "request":{{"method":"GET","url":"https://api.example.com/v1/slow","headers":[]}},
            "response":{{"status":200,"headers":[],"content":{{"mimeType":"application/json",
            "text":"{{}}"}}}},"timings":{{"receive":1,"wait":{time}}}}}"#
        )
    };
    let har = format!(
        r#"{{"log":{{"version":"1.2","creator":{{"name":"t","version":"1"}},"entries":[{},{}]}}}}"#,
        entry("1e300"),
        entry("12")
    );
    let file = tmp.path().join("slow.har");
    std::fs::write(&file, har).unwrap();
    let out = run(wraith(tmp.path()).args(["import", "slow"]).arg(&file));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("slow.har: log.entries[0].time: 1e300 ms is more than a day"),
        "{err}"
    );
    assert!(!err.contains("entries[1]"), "{err}");
    let out = run(wraith(tmp.path()).args(["synth", "slow"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let model: serde_json::Value = serde_json::from_slice(
        &std::fs::read(tmp.path().join("twins/slow/model/twin.wir.json")).unwrap(),
    )
    .unwrap();
    let p99 = model["routes"][0]["latency"]["p99_ms"].as_u64().unwrap();
    assert!(p99 <= 12, "the absurd time reached the model: p99 {p99} ms");
}

/// Import a HAR of `entries` (JSON texts) into a new twin `own` (base URL
/// `https://api.example.com/v1`), synthesize it, and give back `check`'s output with `flags`.
fn import_synth_check(entries: &[&str], flags: &[&str]) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path(), "own", "https://api.example.com/v1");
    let har = format!(
        r#"{{"log":{{"version":"1.2","creator":{{"name":"t","version":"1"}},"entries":[{}]}}}}"#,
        entries.join(",")
    );
    let file = tmp.path().join("own.har");
    std::fs::write(&file, har).unwrap();
    for args in [
        &["import", "own", file.to_str().unwrap()][..],
        &["synth", "own"],
    ] {
        let out = run(wraith(tmp.path()).args(args));
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    run(wraith(tmp.path()).args(["check", "own"]).args(flags))
}

/// A GET entry of `url` answered 200 with `body` as JSON, the response's headers `headers`.
fn get_entry(url: &str, headers: &str, body: &str) -> String {
    format!(
        r#"{{"startedDateTime":"2024-01-01T00:00:00Z","time":1,
        "request":{{"method":"GET","url":"{url}","headers":[]}},
        "response":{{"status":200,"headers":[{headers}],
        "content":{{"mimeType":"application/json","text":{body:?}}}}}}}"#
    )
}

#[test]
fn a_har_url_with_a_raw_space_or_quote_imports_as_sent_and_passes_its_own_wire_check() {
    let ct = r#"{"name":"Content-Type","value":"application/json"}"#;
    let out = import_synth_check(
        &[
            &get_entry("https://api.example.com/v1/items?q=red shoes", ct, "[]"),
            &get_entry(r#"https://api.example.com/v1/tags/a b?t=\"x\""#, ct, "{}"),
        ],
        &["--wire"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A HAR answer with `content.mimeType` and no `Content-Type` header: the twin answers with the
/// type the HAR names, so it passes its own check, in memory and over HTTP.
#[test]
fn an_answer_typed_only_by_its_har_mime_type_passes_the_twins_own_check() {
    let entry = get_entry("https://api.example.com/v1/items", "", "[]");
    for flags in [&["--in-memory"][..], &["--wire"]] {
        let out = import_synth_check(&[&entry], flags);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{flags:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
