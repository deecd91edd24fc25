//! The control plane (`/__wraith/*`) of a running twin: health, ready, info, session
//! provisioning and listing, per-session reset and delete, global reset, the debug state dump,
//! bearer-token auth, and the front door's own refusals. Black-box: the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Server, Twin, model};

fn shop_twin() -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"customers": [{"id": "cus_fx", "object": "customer", "name": "Fixture"}]}})
            .to_string(),
    );
    t.write(
        "state/fixtures/empty/fixture.json",
        &json!({"entities": {}}).to_string(),
    );
    t
}

fn session_ids(list: &Value) -> Vec<Option<String>> {
    list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().map(str::to_string))
        .collect()
}

async fn create_customer(s: &Server, session: Option<&str>, name: &str) -> String {
    let r = s
        .post("/v1/customers", session, json!({"name": name}))
        .await;
    assert_eq!(r.status, 200, "{:?}", String::from_utf8_lossy(&r.body));
    r.json()["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn health_ready_and_info_answer_json() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let h = s.get("/__wraith/health", None).await;
    assert_eq!((h.status, h.json()), (200, json!({"status": "ok"})));
    assert_eq!(h.header("content-type"), Some("application/json"));
    let r = s.get("/__wraith/ready", None).await;
    assert_eq!((r.status, r.json()), (200, json!({"ready": true})));
    let i = s.get("/__wraith/info", None).await;
    assert_eq!(i.status, 200);
    let info = i.json();
    assert_eq!(info["twin"], "shop");
    assert_eq!(info["routes"], 7);
    assert_eq!(info["drifted_routes"], json!([]));
    assert_eq!(info["twin_age_seconds"], s.ready["twin_age_seconds"]);
    assert_eq!(info["synthesized_at"], s.ready["synthesized_at"]);
    assert!(info.get("recorded_at").is_none());
    assert!(info["warnings"].is_array());
    assert_eq!(info["sessions"], 0);
    create_customer(&s, Some("a"), "A").await;
    assert_eq!(s.get("/__wraith/info", None).await.json()["sessions"], 1);
}

#[tokio::test]
async fn unknown_control_paths_and_methods_answer_json_errors() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let r = s.get("/__wraith/nope", None).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["error"], "not-found");
    let r = s.get("/__wraith/reset", None).await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("POST"));
    assert_eq!(r.json()["error"], "method-not-allowed");
    // Control answers are not application answers: no provenance.
    assert_eq!(r.provenance(), None);
}

#[tokio::test]
async fn provisioning_creates_201_then_200_and_conflicts_on_different_settings() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let body = json!({"session": "w1", "fixture": "empty", "seed": 7,
                      "clock": {"mode": "fixed", "base_epoch": 1700000000}});
    let r = s.post("/__wraith/session", None, body.clone()).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let info = r.json();
    assert_eq!(info["session"], "w1");
    assert_eq!(info["fixture"], "empty");
    assert_eq!(info["seed"], 7);
    assert_eq!(info["clock"]["mode"], "fixed");
    assert_eq!(info["clock"]["base_epoch"], 1_700_000_000);
    assert_eq!(info["entities_seeded"], 0);
    // The same settings again: idempotent.
    let again = s.post("/__wraith/session", None, body).await;
    assert_eq!(again.status, 200);
    // Different settings for the same session: refused.
    let c = s
        .post(
            "/__wraith/session",
            None,
            json!({"session": "w1", "seed": 8}),
        )
        .await;
    assert_eq!(c.status, 409, "{}", String::from_utf8_lossy(&c.body));
    assert_eq!(c.json()["error"], "session-provision-conflict");
    // The message names the setting that differs, as the request would write it, and only it.
    let message = c.json()["message"].as_str().unwrap_or_default().to_string();
    assert!(
        message.contains("seed 7 (asked 8)")
            && !message.contains("fixture")
            && !message.contains("clock")
            && !message.contains("Some("),
        "{message}"
    );
    let c = s
        .post(
            "/__wraith/session",
            None,
            json!({"session": "w1", "fixture": "default", "clock": {"mode": "real"}}),
        )
        .await;
    assert_eq!(c.status, 409);
    let message = c.json()["message"].as_str().unwrap_or_default().to_string();
    assert!(
        message.contains("fixture empty (asked default)")
            && message.contains("clock fixed at 1700000000 (asked real at")
            && !message.contains("seed")
            && !message.contains("Fixed"),
        "{message}"
    );
    // `base_epoch_secs` is accepted as the epoch's other spelling.
    let r = s
        .post(
            "/__wraith/session",
            None,
            json!({"session": "w2", "clock": {"mode": "fixed", "base_epoch_secs": 1234}}),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["clock"]["base_epoch"], 1234);
}

/// The seed the listing reports is the one the session's values come from: provisioning
/// another session with it reproduces them, whether the first was given it or not.
#[tokio::test]
async fn a_sessions_reported_seed_reproduces_its_generated_ids_in_another_session() {
    let t = shop_twin();
    let s = t.serve(&["--seed", "42"]);
    let lazy = [
        create_customer(&s, Some("lazy"), "Ann").await,
        create_customer(&s, Some("lazy"), "Bea").await,
    ];
    let other = create_customer(&s, Some("other"), "Ann").await;
    assert_ne!(
        lazy[0], other,
        "sessions not given a seed draw different ids"
    );
    let listed = s.get("/__wraith/session", None).await.json();
    let seed_of = |name: Value| {
        listed["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["session"] == name)
            .map(|x| x["seed"].as_u64().unwrap())
            .unwrap()
    };
    let seed = seed_of(json!("lazy"));
    let c = s
        .post(
            "/__wraith/session",
            None,
            json!({"session": "copy", "seed": seed}),
        )
        .await;
    assert_eq!(c.status, 201, "{}", String::from_utf8_lossy(&c.body));
    let copy = [
        create_customer(&s, Some("copy"), "Ann").await,
        create_customer(&s, Some("copy"), "Bea").await,
    ];
    assert_eq!(
        copy, lazy,
        "the reported seed reproduces the lazy session's ids"
    );
    // Asking the lazy session for another seed is a conflict naming both; its own is not.
    let c = s
        .post(
            "/__wraith/session",
            None,
            json!({"session": "lazy", "seed": 42}),
        )
        .await;
    assert_eq!(c.status, 409, "{}", String::from_utf8_lossy(&c.body));
    let message = c.json()["message"].as_str().unwrap_or_default().to_string();
    assert!(
        message.contains(&format!("seed {seed} (asked 42)")),
        "{message}"
    );
    let same = s
        .post(
            "/__wraith/session",
            None,
            json!({"session": "lazy", "seed": seed}),
        )
        .await;
    assert_eq!(same.status, 200, "{}", String::from_utf8_lossy(&same.body));
    // The headerless namespace is seeded with the serve seed itself.
    create_customer(&s, None, "Ann").await;
    let listed = s.get("/__wraith/session", None).await.json();
    let default_seed = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["session"].is_null())
        .map(|x| x["seed"].as_u64().unwrap());
    assert_eq!(default_seed, Some(42));
}

#[tokio::test]
async fn provisioning_an_unknown_fixture_lists_the_available_sets() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let r = s
        .post(
            "/__wraith/session",
            None,
            json!({"session": "w1", "fixture": "nope"}),
        )
        .await;
    assert_eq!(r.status, 404, "{}", String::from_utf8_lossy(&r.body));
    let b = r.json();
    assert_eq!(b["error"], "fixture-not-found");
    assert_eq!(b["available"], json!(["default", "empty"]));
}

#[tokio::test]
async fn malformed_provisioning_bodies_are_400_saying_what_is_wrong() {
    let t = shop_twin();
    let s = t.serve(&[]);
    for (body, needle) in [
        (json!({"sesion": "x"}), "sesion"),
        (json!({"session": "x", "seed": "seven"}), "seed"),
        (json!({"session": ""}), "empty"),
        (
            json!({"session": "x", "clock": {"mode": "sometimes"}}),
            "clock",
        ),
        // An epoch no date can show (here: milliseconds given as seconds, past year 9999).
        (
            json!({"session": "x", "clock": {"mode": "fixed", "base_epoch": 1_767_225_600_000_i64}}),
            "clock.base_epoch",
        ),
        (
            json!({"session": "x", "clock": {"mode": "deterministic", "base_epoch_secs": i64::MIN}}),
            "before 1970-01-01",
        ),
        // Objects only: serde would read the body or its clock from an array by position.
        (json!(["x", null, 5, null]), "must be a JSON object"),
        (
            json!({"session": "x", "clock": ["fixed", 1_700_000_000]}),
            "clock",
        ),
        // No set can be named so (folder names stop at 255 bytes); the name is not echoed.
        (
            json!({"session": "x", "fixture": "f".repeat(100_000)}),
            "`fixture` is 100000 bytes long",
        ),
    ] {
        let r = s.post("/__wraith/session", None, body.clone()).await;
        assert_eq!(r.status, 400, "{body}");
        let b = r.json();
        assert_eq!(b["error"], "bad-request");
        assert!(b["message"].as_str().unwrap().contains(needle), "{b}");
        assert!(r.body.len() < 1000, "{} bytes", r.body.len());
    }
}

#[tokio::test]
async fn session_list_shows_lazy_and_provisioned_sessions() {
    let t = shop_twin();
    let s = t.serve(&[]);
    assert_eq!(
        session_ids(&s.get("/__wraith/session", None).await.json()),
        Vec::<Option<String>>::new()
    );
    create_customer(&s, Some("lazy-1"), "L").await;
    s.post("/__wraith/session", None, json!({"session": "eager-1"}))
        .await;
    let list = s.get("/__wraith/session", None).await.json();
    let ids = session_ids(&list);
    assert!(ids.contains(&Some("lazy-1".into())), "{list}");
    assert!(ids.contains(&Some("eager-1".into())), "{list}");
    let eager = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session"] == "eager-1")
        .unwrap();
    assert_eq!(eager["provisioned"], true);
}

#[tokio::test]
async fn session_ids_in_control_paths_are_percent_decoded_and_case_sensitive() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let id = create_customer(&s, Some("worker 3"), "W").await;
    create_customer(&s, Some("Worker-3"), "U").await;
    // Reset `worker 3` through its percent-encoded path.
    let r = s
        .send(
            "POST",
            "/__wraith/session/worker%203/reset",
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        s.get(&format!("/v1/customers/{id}"), Some("worker 3"))
            .await
            .status,
        404
    );
    // `worker-3` (lowercase) was never created: deleting it is a 404, `Worker-3` still exists.
    let r = s.delete("/__wraith/session/worker-3", None).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["error"], "session-not-found");
    let r = s.delete("/__wraith/session/Worker-3", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), json!({"session": "Worker-3", "deleted": true}));
}

#[tokio::test]
async fn session_state_dump_is_debug_only_and_never_creates_a_session() {
    let t = shop_twin();
    let plain = t.serve(&[]);
    create_customer(&plain, Some("a"), "A").await;
    let r = plain.get("/__wraith/session/a/state", None).await;
    assert_eq!(r.status, 404);
    assert!(r.json()["message"].as_str().unwrap().contains("--debug"));

    let debug = t.serve(&["--debug"]);
    assert_eq!(debug.ready["capabilities"]["session_state"], true);
    let id = create_customer(&debug, Some("a"), "A").await;
    let r = debug.get("/__wraith/session/a/state", None).await;
    assert_eq!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains(&id));
    let r = debug.get("/__wraith/session/ghost/state", None).await;
    assert_eq!(r.status, 404);
    let list = debug.get("/__wraith/session", None).await.json();
    assert!(
        !session_ids(&list).contains(&Some("ghost".into())),
        "{list}"
    );
}

#[tokio::test]
async fn control_token_guards_everything_but_health_ready_and_info() {
    let t = shop_twin();
    let s = t.serve_env(
        &["--control-token-env", "WRAITH_TEST_CONTROL_TOKEN"],
        &[("WRAITH_TEST_CONTROL_TOKEN", "s3cret-token")],
    );
    for path in ["/__wraith/health", "/__wraith/ready", "/__wraith/info"] {
        assert_eq!(s.get(path, None).await.status, 200, "{path}");
    }
    let protected: [(&str, &str); 6] = [
        ("POST", "/__wraith/session"),
        ("GET", "/__wraith/session"),
        ("POST", "/__wraith/reset"),
        ("POST", "/__wraith/session/x/reset"),
        ("POST", "/__wraith/session/x/probe"),
        ("DELETE", "/__wraith/session/x"),
    ];
    for (m, p) in protected {
        let r = s.send(m, p, None, &[], None).await;
        assert_eq!(r.status, 401, "{m} {p}");
        assert_eq!(r.json()["error"], "unauthorized");
        let wrong = s
            .send(m, p, None, &[("authorization", "Bearer wrong")], None)
            .await;
        assert_eq!(wrong.status, 401, "{m} {p}");
    }
    // A well-formed provisioning request without the token makes no session.
    let r = s
        .post("/__wraith/session", None, json!({"session": "untokened"}))
        .await;
    assert_eq!(r.status, 401, "{}", String::from_utf8_lossy(&r.body));
    let ok = s
        .send(
            "GET",
            "/__wraith/session",
            None,
            &[("authorization", "Bearer s3cret-token")],
            None,
        )
        .await;
    assert_eq!(ok.status, 200);
    let listed = String::from_utf8_lossy(&ok.body);
    assert!(!listed.contains("untokened"), "{listed}");
    let ok = s
        .send(
            "POST",
            "/__wraith/reset",
            None,
            &[("authorization", "Bearer s3cret-token")],
            None,
        )
        .await;
    assert_eq!(ok.status, 200);
    // Application traffic is not the control plane: no token needed.
    assert_eq!(s.get("/v1/customers/cus_1", None).await.status, 200);
}

/// Without a token the control plane trusts every client on this machine, which a web page in
/// the user's browser is not: a request naming another site as its `Origin` (a page posting to
/// the loopback port) or as its `Host` (a DNS-rebinding page) is refused 403 and changes
/// nothing. Health, ready and info stay open; a token replaces the check.
#[tokio::test]
async fn control_calls_from_a_web_page_are_refused_without_a_token() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let id = create_customer(&s, Some("kept"), "Kept").await;
    let foreign: [&[(&str, &str)]; 3] = [
        &[("origin", "https://evil.example")],
        &[("host", "evil.example")],
        &[("origin", "null")],
    ];
    for headers in foreign {
        for (m, p) in [
            ("POST", "/__wraith/reset"),
            ("POST", "/__wraith/session/kept/reset"),
            ("GET", "/__wraith/session"),
        ] {
            let r = s.send(m, p, None, headers, None).await;
            assert_eq!(r.status, 403, "{m} {p} {headers:?}");
            assert_eq!(r.json()["error"], "foreign-caller", "{}", r.json());
            assert!(
                r.json()["message"]
                    .as_str()
                    .unwrap()
                    .contains("control token")
            );
        }
        assert_eq!(
            s.send("GET", "/__wraith/health", None, headers, None)
                .await
                .status,
            200
        );
    }
    // Nothing was reset.
    let read = s.get(&format!("/v1/customers/{id}"), Some("kept")).await;
    assert_eq!(read.status, 200);
    assert_eq!(read.json()["name"], "Kept");
    // A page of this machine, and a client naming this machine, are local.
    for headers in [
        &[("origin", "http://localhost:3000")][..],
        &[("host", "localhost")][..],
        &[][..],
    ] {
        let r = s
            .send("GET", "/__wraith/session", None, headers, None)
            .await;
        assert_eq!(r.status, 200, "{headers:?}");
    }
    // With a token the token decides.
    let s = t.serve_env(
        &["--control-token-env", "WRAITH_TEST_CONTROL_TOKEN"],
        &[("WRAITH_TEST_CONTROL_TOKEN", "s3cret-token")],
    );
    let r = s
        .send(
            "GET",
            "/__wraith/session",
            None,
            &[
                ("authorization", "Bearer s3cret-token"),
                ("host", "twin.internal"),
            ],
            None,
        )
        .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn control_token_can_come_from_a_file() {
    let t = shop_twin();
    let token_file = t.tmp.path().join("token");
    std::fs::write(&token_file, "file-token\n").unwrap();
    let s = t.serve(&["--control-token-file", token_file.to_str().unwrap()]);
    assert_eq!(s.get("/__wraith/session", None).await.status, 401);
    let ok = s
        .send(
            "GET",
            "/__wraith/session",
            None,
            &[("authorization", "Bearer file-token")],
            None,
        )
        .await;
    assert_eq!(ok.status, 200);
}

#[tokio::test]
async fn loopback_bind_without_token_needs_no_auth() {
    let t = shop_twin();
    let s = t.serve(&[]);
    assert_eq!(s.get("/__wraith/session", None).await.status, 200);
    assert_eq!(
        s.send("POST", "/__wraith/reset", None, &[], None)
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn oversized_request_bodies_are_refused_with_413() {
    use std::io::{Read, Write};
    let t = shop_twin();
    let s = t.serve(&[]);
    // Declare a body over the 16 MiB cap: refused before any of it is read (raw TCP, because
    // an HTTP client would still be writing the body when the refusal arrives).
    let addr = s.url.trim_start_matches("http://").to_string();
    let mut tcp = std::net::TcpStream::connect(&addr).unwrap();
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let head = format!(
        "POST /v1/customers HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        16 * 1024 * 1024 + 1
    );
    tcp.write_all(head.as_bytes()).unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match tcp.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                if String::from_utf8_lossy(&buf).contains("payload-too-large") {
                    break;
                }
            }
            Err(e) => panic!("read failed: {e}"),
        }
    }
    let text = String::from_utf8_lossy(&buf);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("payload-too-large"), "{text}");
    // Still an application response: the twin says it invented the answer, and how old it is.
    let lower = text.to_ascii_lowercase();
    assert!(lower.contains("x-wraith-provenance: miss\r\n"), "{text}");
    assert!(lower.contains("x-wraith-twin-age: "), "{text}");
    // The request matched a route before its body was refused: the answer names it.
    assert!(
        lower.contains("x-wraith-route: post /v1/customers\r\n"),
        "{text}"
    );
}

#[tokio::test]
async fn an_unreadable_session_header_is_refused_with_the_control_headers() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let r = s.get_raw_session("/v1/customers/cus_1", b"caf\xe9").await;
    r.assert_status(400);
    assert_eq!(r.provenance(), Some("miss"));
    assert!(r.header("x-wraith-twin-age").is_some());
    // The path matched a route: the refusal names it, as every answer where one matched.
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers/:id"));
    let miss = s.get_raw_session("/v1/nowhere", b"caf\xe9").await;
    miss.assert_status(400);
    assert_eq!(miss.header("x-wraith-route"), None, "no route was matched");
}

#[tokio::test]
async fn two_session_headers_are_refused_rather_than_one_picked() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let r = s
        .send(
            "GET",
            "/v1/customers/cus_1",
            Some("other"),
            &[("X-Wraith-Session", "worker-3")],
            None,
        )
        .await;
    r.assert_status(400);
    assert_eq!(r.json()["error"], json!("bad-session-header"));
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .contains("more than one X-Wraith-Session")
    );
    assert_eq!(r.provenance(), Some("miss"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers/:id"));
    // Neither session was created by the refused request.
    let list = s.get("/__wraith/session", None).await.json();
    let ids = session_ids(&list);
    assert!(!ids.contains(&Some("other".to_string())), "{list}");
    assert!(!ids.contains(&Some("worker-3".to_string())), "{list}");
}

/// A session id is at most 1024 bytes, so every session stays nameable in a control path and
/// one client cannot pin megabytes of ids: longer header values and provisioned ids are
/// refused with 400, and the longest allowed id works end to end and can be deleted.
#[tokio::test]
async fn session_ids_past_1024_bytes_are_refused_and_the_longest_allowed_can_be_deleted() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let long = "s".repeat(1025);
    let r = s.get("/v1/customers/cus_1", Some(&long)).await;
    r.assert_status(400);
    assert_eq!(r.json()["error"], json!("bad-session-header"));
    let message = r.json()["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("1025 bytes") && message.contains("1024"),
        "{message}"
    );
    assert_eq!(r.provenance(), Some("miss"));
    let p = s
        .post("/__wraith/session", None, json!({"session": long}))
        .await;
    assert_eq!(p.status, 400, "{}", String::from_utf8_lossy(&p.body));
    assert_eq!(p.json()["error"], "bad-request");
    assert!(
        p.json()["message"]
            .as_str()
            .unwrap()
            .contains("at most 1024 bytes"),
        "{}",
        p.json()
    );
    let list = s.get("/__wraith/session", None).await.json();
    assert!(!session_ids(&list).contains(&Some(long.clone())), "{list}");

    // The longest allowed id, of multi-byte characters that percent-encode to three times
    // their length in the path.
    let longest = "é".repeat(512);
    assert_eq!(longest.len(), 1024);
    create_customer(&s, Some(&longest), "Edge").await;
    let list = s.get("/__wraith/session", None).await.json();
    assert!(
        session_ids(&list).contains(&Some(longest.clone())),
        "{list}"
    );
    let encoded: String = longest.bytes().map(|b| format!("%{b:02X}")).collect();
    let d = s
        .send(
            "DELETE",
            &format!("/__wraith/session/{encoded}"),
            None,
            &[],
            None,
        )
        .await;
    d.assert_status(200);
    assert_eq!(d.json()["deleted"], json!(true));
    let list = s.get("/__wraith/session", None).await.json();
    assert!(!session_ids(&list).contains(&Some(longest)), "{list}");
}

/// A model that holds an interim answer (a WebSocket upgrade's `101`; import leaves such
/// entries out, so here the model is edited by hand) cannot be answered with it: hyper would
/// switch protocols no client asked for, or send a bare 500 without the control headers. The
/// twin answers 500 `internal-error` saying why, with its headers.
#[tokio::test]
async fn a_recorded_interim_status_is_answered_500_with_the_control_headers() {
    let origin = "https://api.socket.test";
    let t = Twin::init("socket", origin);
    let upgrade = support::har::entry(origin, "GET", "/v1/stream", None, &json!({}));
    support::har::import(&t, &[], "run.har", vec![upgrade]);
    support::har::synth(&t, &[]);
    let model = t.path().join("model/twin.wir.json");
    let text = std::fs::read_to_string(&model).unwrap();
    assert!(text.contains("\"status\":200"), "{text}");
    std::fs::write(&model, text.replace("\"status\":200", "\"status\":101")).unwrap();
    let s = t.serve(&[]);
    let r = s.get("/v1/stream", Some("agent")).await;
    r.assert_status(500);
    assert_eq!(r.json()["error"], json!("internal-error"));
    let message = r.json()["message"].as_str().unwrap().to_string();
    assert!(message.contains("HTTP status 101"), "{message}");
    assert_eq!(r.provenance(), Some("miss"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/stream"));
}

#[tokio::test]
async fn http2_prior_knowledge_is_served_on_the_same_port() {
    let t = shop_twin();
    let s = t.serve(&[]);
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let r = h2
        .get(format!("{}/v1/customers/cus_1", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.version(), reqwest::Version::HTTP_2);
    assert_eq!(r.status().as_u16(), 200);
    let h = h2
        .get(format!("{}/__wraith/health", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(h.status().as_u16(), 200);
}
