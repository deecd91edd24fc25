//! `wraith route add|list`: appends to `lua/routes.toml` keeping the file's comments and
//! layout, validates method, path, status and JSON (exit 1 on bad input, file untouched), and
//! lists what answers each authored route.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::process::Command;

use serde_json::{Value, json};
use support::{Twin, bin, model};

fn routes_file(t: &Twin) -> String {
    std::fs::read_to_string(t.path().join("lua/routes.toml")).unwrap_or_default()
}

fn list_json(t: &Twin) -> Value {
    let out = t.wraith(&["route", "list", &t.path_str(), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn route_add_creates_the_sidecar_with_schema_version() {
    let t = Twin::init("shop", "https://api.shop.test");
    let out = t.wraith(&[
        "route",
        "add",
        &t.path_str(),
        "--method",
        "patch",
        "--path",
        "/v3/assets/:param",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "added PATCH /v3/assets/:param to lua/routes.toml"
    );
    let text = routes_file(&t);
    assert!(text.contains("schema_version = 1"), "{text}");
    assert!(text.contains("method = \"PATCH\""), "{text}");
    assert_eq!(
        list_json(&t)["routes"],
        json!([{"method": "PATCH", "path": "/v3/assets/:param", "handler": null,
                "answers": "unimplemented"}])
    );
}

#[test]
fn route_add_keeps_the_files_comments_and_layout() {
    let t = Twin::init("shop", "https://api.shop.test");
    let original = "# Our authored routes.\nschema_version = 1\n\n# Health probe for the load balancer.\n[[route]]\nmethod = \"GET\"   # aligned on purpose\npath = \"/health\"\n";
    t.write("lua/routes.toml", original);
    let out = t.wraith(&[
        "route",
        "add",
        &t.path_str(),
        "--method",
        "POST",
        "--path",
        "/exports",
        "--status",
        "202",
        "--response",
        r#"{"status":"queued"}"#,
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["routes"], 2);
    assert_eq!(printed["added"]["answers"], "response");
    let text = routes_file(&t);
    assert!(
        text.starts_with(original),
        "the existing text is kept verbatim:\n{text}"
    );
    assert!(text.contains("status = 202"), "{text}");
    assert!(
        text.contains(r#"response = "{\"status\":\"queued\"}""#)
            || text.contains(r#"response = '{"status":"queued"}'"#),
        "{text}"
    );
    let routes = list_json(&t)["routes"].clone();
    assert_eq!(routes[1]["response"], json!({"status": "queued"}));
    assert_eq!(routes[1]["status"], 202);
}

/// `route add` keeps the file as it was kept: CRLF line endings and a byte order mark, its
/// permissions, a symbolic link (the file it names is updated), and a read-only file is
/// refused untouched.
#[cfg(unix)]
#[test]
fn route_add_keeps_line_endings_bom_mode_and_link_and_refuses_a_read_only_file() {
    use std::os::unix::fs::PermissionsExt;
    let t = Twin::init("shop", "https://api.shop.test");
    let file = t.path().join("lua/routes.toml");
    let add = |path: &str| {
        let out = t.wraith(&[
            "route",
            "add",
            &t.path_str(),
            "--method",
            "GET",
            "--path",
            path,
        ]);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    std::fs::write(
        &file,
        "\u{feff}# shared routes\r\nschema_version = 1\r\n[[route]]\r\nmethod = \"GET\"\r\npath = \"/a\"\r\n",
    )
    .unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert_eq!(add("/b").0, Some(0));
    let text = routes_file(&t);
    assert!(text.starts_with('\u{feff}'), "{text:?}");
    assert!(text.contains("\"/b\""), "{text:?}");
    assert_eq!(
        text.matches('\n').count(),
        text.matches("\r\n").count(),
        "{text:?}"
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o640
    );

    // A link to a file shared elsewhere: the file is updated, the link stays a link.
    let shared = t.tmp.path().join("shared-routes.toml");
    std::fs::rename(&file, &shared).unwrap();
    std::os::unix::fs::symlink(&shared, &file).unwrap();
    assert_eq!(add("/c").0, Some(0));
    assert!(
        std::fs::symlink_metadata(&file)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(std::fs::read_to_string(&shared).unwrap().contains("\"/c\""));

    // Read-only: refused, nothing changed.
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = std::fs::read(&shared).unwrap();
    let (code, err) = add("/d");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("is read-only"), "{err}");
    assert_eq!(std::fs::read(&shared).unwrap(), before);
}

#[test]
fn route_add_rejects_bad_input_with_exit_1_and_leaves_the_file_alone() {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write(
        "lua/routes.toml",
        "schema_version = 1\n[[route]]\nmethod = \"GET\"\npath = \"/a/:id\"\n",
    );
    let before = routes_file(&t);
    let cases: [(&[&str], &str); 11] = [
        (&["--method", "FETCH", "--path", "/x"], "--method"),
        (&["--method", "GET", "--path", "x"], "--path"),
        (&["--method", "GET", "--path", "/x?y=1"], "--path"),
        (
            &["--method", "GET", "--path", "/x", "--status", "42"],
            "--status",
        ),
        (
            &["--method", "GET", "--path", "/x", "--response", "{nope"],
            "--response",
        ),
        (
            &["--method", "get", "--path", "/a/:other"],
            "already declared",
        ),
        // Requests carry it percent-encoded: the literal would match none.
        (
            &["--method", "GET", "--path", "/f/ü"],
            "write it as `%C3%BC`",
        ),
        (
            &["--method", "GET", "--path", "/g/:1abc"],
            "starts with a letter or `_`",
        ),
        // The control plane answers its prefix itself: the route would never be reached.
        (
            &["--method", "GET", "--path", "/__wraith/x"],
            "the twin's control plane",
        ),
        (
            &["--method", "GET", "--path", "/__wraith"],
            "the twin's control plane",
        ),
        // A 204 carries no body: the declared one would never be sent.
        (
            &[
                "--method",
                "GET",
                "--path",
                "/x",
                "--status",
                "204",
                "--response",
                "{}",
            ],
            "answers without a body",
        ),
    ];
    for (args, expect) in cases {
        let mut full = vec!["route", "add"];
        let p = t.path_str();
        full.push(&p);
        full.extend_from_slice(args);
        let out = t.wraith(&full);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(expect), "{args:?}: {err}");
        assert_eq!(routes_file(&t), before, "{args:?} must not touch the file");
    }
}

#[test]
fn route_list_says_what_answers_each_authored_route() {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t.write(
        "lua/routes.toml",
        "schema_version = 1\n\
         [[route]]\nmethod = \"GET\"\npath = \"/v1/customers/:id/summary\"\n\
         [[route]]\nmethod = \"POST\"\npath = \"/v1/exports\"\nstatus = 202\n\
         [[route]]\nmethod = \"GET\"\npath = \"/v1/health\"\n\
         [[route]]\nmethod = \"GET\"\npath = \"/v1/customers/:x\"\n",
    );
    t.write("lua/handlers/get_summary.lua", "return {}");
    let routes = list_json(&t)["routes"].clone();
    let answers: Vec<(&str, &str)> = routes
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["path"].as_str().unwrap(), r["answers"].as_str().unwrap()))
        .collect();
    assert_eq!(
        answers,
        [
            ("/v1/customers/:id/summary", "handler"),
            ("/v1/exports", "response"),
            ("/v1/health", "unimplemented"),
            ("/v1/customers/:x", "shadowed"),
        ]
    );
    assert_eq!(routes[0]["handler"], "get_summary");
    let out = t.wraith(&["route", "list", &t.path_str()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("handler get_summary"), "{text}");
    assert!(text.contains("501 no implementation"), "{text}");
}

/// Without a model, which declarations a recorded route of the same method and path wins over
/// is not known: `route add` and `route list` say so (and how to find out) rather than claim a
/// 501 for a route the recording answers; with the model they say which one is shadowed.
#[test]
fn route_add_and_list_without_a_model_say_shadowing_is_not_known_yet() {
    let t = Twin::init("shop", "https://api.shop.test");
    let out = t.wraith(&[
        "route",
        "add",
        &t.path_str(),
        "--method",
        "GET",
        "--path",
        "/v1/customers/:x",
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no model yet") && stderr.contains("wraith synth"),
        "{stderr}"
    );
    let out = t.wraith(&["route", "list", &t.path_str()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("501 no implementation (unless a recorded route wins: no model yet)"),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no model yet"));
    assert_eq!(list_json(&t)["model_built"], false);

    t.write_model(&model::shop("shop"));
    let out = t.wraith(&["route", "list", &t.path_str()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("shadowed by the recorded route"), "{text}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("no model yet"));
    assert_eq!(list_json(&t)["model_built"], true);
}

/// A `lua/routes.toml` that is not UTF-8 is a file to fix: `route list` and `route add` exit 1
/// saying where the bad byte is (the file left as it was), and lint reports it.
#[test]
fn a_routes_file_that_is_not_utf8_is_refused_saying_where() {
    let t = Twin::init("shop", "https://api.shop.test");
    let bad = b"schema_version = 1\n# caf\xe9\n".to_vec();
    std::fs::write(t.path().join("lua/routes.toml"), &bad).unwrap();
    let twin = t.path_str();
    for args in [
        vec!["route", "list", twin.as_str()],
        vec![
            "route",
            "add",
            twin.as_str(),
            "--method",
            "GET",
            "--path",
            "/x",
        ],
    ] {
        let out = t.wraith(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("routes.toml: not UTF-8 text (line 2, first bad byte at offset 24)")
                && err.contains("save the file as UTF-8"),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read(t.path().join("lua/routes.toml")).unwrap(),
        bad
    );
    let lint = t.wraith(&["lint", &twin]);
    assert!(
        String::from_utf8_lossy(&lint.stdout).contains("not UTF-8 text (line 2"),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
}

/// `route add`s run at once each read, edit and replace the file: every one of them must find
/// its route in the file afterwards, none lost to another's replacement.
#[test]
fn concurrent_route_adds_keep_every_route() {
    let t = Twin::init("shop", "https://api.shop.test");
    let twin = t.path_str();
    support::all_at_once_succeed(
        (0..12)
            .map(|i| {
                let mut c = Command::new(bin());
                c.current_dir(t.tmp.path())
                    .args(["route", "add", &twin, "--method", "GET", "--path"])
                    .arg(format!("/parallel/{i}"));
                c
            })
            .collect(),
    );
    let listed = list_json(&t);
    let mut paths: Vec<String> = listed["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect();
    paths.sort();
    let mut want: Vec<String> = (0..12).map(|i| format!("/parallel/{i}")).collect();
    want.sort();
    assert_eq!(paths, want, "{}", routes_file(&t));
}

#[test]
fn route_list_of_a_twin_without_the_sidecar_is_empty() {
    let t = Twin::init("shop", "https://api.shop.test");
    assert_eq!(list_json(&t)["routes"], json!([]));
    let out = t.wraith(&["route", "list", "no-such-twin"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn inspect_provenance_claims_handler_only_for_routes_a_handler_binds() {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t.write("lua/handlers/get_customer.lua", "return {}");
    let out = t.wraith(&["inspect", &t.path_str(), "--provenance", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let with_handler: Vec<&str> = v["routes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["can_answer"]
                .as_array()
                .unwrap()
                .contains(&json!("handler"))
        })
        .map(|r| r["route"].as_str().unwrap())
        .collect();
    assert_eq!(with_handler, ["GET /v1/customers/:id"]);
}

#[test]
fn route_list_shows_explicit_bindings_and_lint_reports_broken_ones() {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t.write("lua/handlers/customer_view.lua", "return {}");
    t.write(
        "lua/routes.toml",
        "schema_version = 1\n\
         [[route]]\nmethod = \"GET\"\npath = \"/v1/health\"\nhandler = \"customer_view\"\n\
         [[binding]]\nmethod = \"GET\"\npath = \"/v1/customers/:id\"\nhandler = \"customer_view\"\n\
         [[binding]]\nmethod = \"GET\"\npath = \"/v1/nowhere\"\nhandler = \"gone\"\n",
    );
    let v = list_json(&t);
    assert_eq!(v["routes"][0]["handler"], "customer_view");
    assert_eq!(v["routes"][0]["binding"], "explicit");
    assert_eq!(
        v["bindings"],
        json!([
            {"method": "GET", "path": "/v1/customers/:id", "handler": "customer_view",
             "entry": "[[binding]] #1", "route": "recorded", "handler_exists": true},
            {"method": "GET", "path": "/v1/nowhere", "handler": "gone",
             "entry": "[[binding]] #2", "route": "unknown", "handler_exists": false}
        ])
    );
    let out = t.wraith(&["route", "list", &t.path_str()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("handler customer_view (explicit, recorded route)"),
        "{text}"
    );
    assert!(
        text.contains("INVALID: no lua/handlers/gone.lua, no such route"),
        "{text}"
    );

    let out = t.wraith(&["lint", &t.path_str(), "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let broken: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "handler-binding")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(broken.len(), 2, "{report}");
    assert!(
        broken.iter().all(|m| m.contains("[[binding]] #2")),
        "{broken:?}"
    );
}

#[test]
fn lint_names_an_authored_routes_missing_handler_once() {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t.write(
        "lua/routes.toml",
        "schema_version = 1\n\
         [[route]]\nmethod = \"GET\"\npath = \"/v1/h2\"\nhandler = \"nosuch\"\n\
         [[route]]\nmethod = \"GET\"\npath = \"/v1/h3\"\n",
    );
    let out = t.wraith(&["lint", &t.path_str(), "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let about = |route: &str| -> Vec<String> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["message"].as_str().unwrap().contains(route))
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect()
    };
    // The missing file is the one finding about /v1/h2; /v1/h3, bound to nothing, answers 501.
    assert_eq!(about("/v1/h2"), ["handler-binding"], "{report}");
    assert_eq!(
        about("/v1/h3"),
        ["authored-route-unimplemented"],
        "{report}"
    );
}

#[test]
fn route_add_with_handler_writes_an_explicit_binding() {
    let t = Twin::init("shop", "https://api.shop.test");
    let out = t.wraith(&[
        "route",
        "add",
        &t.path_str(),
        "--method",
        "GET",
        "--path",
        "/health",
        "--handler",
        "probe",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no lua/handlers/probe.lua"),
        "a missing handler file is warned about"
    );
    assert!(routes_file(&t).contains("handler = \"probe\""));
    let out = t.wraith(&[
        "route",
        "add",
        &t.path_str(),
        "--method",
        "GET",
        "--path",
        "/other",
        "--handler",
        "probe.lua",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--handler"));
}
