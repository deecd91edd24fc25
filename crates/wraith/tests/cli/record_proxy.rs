//! Black-box tests of `wraith record`: the real binary proxies to an in-process upstream, is
//! stopped with SIGINT, and what it wrote is read back with the recording library.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::record_support;

use std::time::{Duration, Instant};

use record_support::*;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_upstream_answers_reach_the_client_and_are_recorded_with_the_base_path() {
    let upstream = Upstream::start("/api", None).await;
    let twin = Twin::init("shop", &upstream.base_url);
    let rec = Recording::start(&twin, &["--tag", "smoke"]);
    let http = client();

    // A JSON read with a query string.
    let r = http
        .get(format!("{}/items?limit=2&offset=1", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["path"], "/api/items", "base path prefix kept upstream");
    assert_eq!(upstream.seen()[0].query, "limit=2&offset=1");

    // A create with a JSON body.
    let r = http
        .post(format!("{}/items", rec.url))
        .json(&json!({"name": "widget", "qty": 3}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["body"], json!({"name": "widget", "qty": 3}));

    // An upstream 404 is passed through unchanged.
    let r = http
        .get(format!("{}/items/missing", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "not_found");

    // A streamed body: the first chunk must reach the client while the upstream is still
    // holding back the rest, which a buffering proxy could never do.
    let mut r = http
        .get(format!("{}/stream", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let first = within("first chunk before the upstream finished", r.chunk())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&first[..], b"chunk-1;");
    upstream.release();
    let mut rest = Vec::new();
    while let Some(c) = within("rest of the stream", r.chunk()).await.unwrap() {
        rest.extend_from_slice(&c);
    }
    assert_eq!(rest, b"chunk-2;chunk-3\n");

    let (status, stderr) = rec.interrupt();
    assert!(status.success(), "record exited with {status}: {stderr}");
    assert!(stderr.contains("recorded session"), "{stderr}");

    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1, "one session");
    let s = &sessions[0];
    assert!(s.manifest.complete, "manifest finalized");
    assert_eq!(s.manifest.exchange_count, 4);
    assert_eq!(s.manifest.proxy_mode, "reverse");
    assert_eq!(s.manifest.tags, ["smoke"]);
    assert_eq!(
        s.manifest.end_time_us,
        s.exchanges.last().unwrap().timing.request_start_us
    );

    let order: Vec<(&str, &str)> = s
        .exchanges
        .iter()
        .map(|e| (e.request.method.as_str(), e.request.path.as_str()))
        .collect();
    assert_eq!(
        order,
        [
            ("GET", "/api/items"),
            ("POST", "/api/items"),
            ("GET", "/api/items/missing"),
            ("GET", "/api/stream"),
        ]
    );
    let by_path = |p: &str| s.exchanges.iter().find(|e| e.request.path == p).unwrap();
    let list = by_path("/api/items");
    assert_eq!(list.request.query, "limit=2&offset=1");
    let create = s
        .exchanges
        .iter()
        .find(|e| e.request.method == "POST")
        .unwrap();
    assert_eq!(create.request.path, "/api/items");
    assert_eq!(create.response.status, 201);
    assert_eq!(
        create.request.content_type.as_deref(),
        Some("application/json")
    );
    let sent: Value = serde_json::from_slice(&create.request.body).unwrap();
    assert_eq!(sent, json!({"name": "widget", "qty": 3}));
    assert_eq!(by_path("/api/items/missing").response.status, 404);
    let stream = by_path("/api/stream");
    assert_eq!(stream.response_body(), b"chunk-1;chunk-2;chunk-3\n");
    assert_eq!(
        stream.frames.len(),
        1,
        "one data frame holds the whole body"
    );
    assert!(!stream.truncated);
    for (i, e) in s.exchanges.iter().enumerate() {
        assert_eq!(e.correlation.exchange_index, i as u64);
        assert_eq!(e.correlation.tags, ["smoke"]);
        assert!(e.timing.request_start_us <= e.timing.first_byte_us);
        assert!(e.timing.first_byte_us <= e.timing.last_byte_us);
        assert!(!e.safety.policy_hash.is_empty());
    }
    assert!(
        leftovers(&twin.root).is_empty(),
        "temp files left: {:?}",
        leftovers(&twin.root)
    );
}

/// A method a client spells in lower case reaches the upstream as sent and is recorded
/// uppercase, as the recording format and `wraith import` have it: synth models the route by
/// it and `serve` matches methods case-sensitively.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lowercase_method_is_forwarded_as_sent_and_recorded_uppercase() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("lower", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);
    let http = client();
    let method = reqwest::Method::from_bytes(b"delete").unwrap();
    let r = http
        .request(method, format!("{}/things/1", rec.url))
        .send()
        .await
        .unwrap();
    r.bytes().await.unwrap();
    rec.stop();
    assert_eq!(upstream.seen()[0].method, "delete");
    let sessions = twin.sessions();
    assert_eq!(sessions[0].exchanges[0].request.method, "DELETE");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequential_exchanges_are_numbered_in_request_order() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("order", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);
    let http = client();
    let expected: Vec<String> = (0..40).map(|i| format!("/seq/{i}")).collect();
    for path in &expected {
        let r = http.get(format!("{}{path}", rec.url)).send().await.unwrap();
        r.bytes().await.unwrap();
    }
    rec.stop();
    let sessions = twin.sessions();
    let got: Vec<String> = sessions[0]
        .exchanges
        .iter()
        .map(|e| e.request.path.clone())
        .collect();
    assert_eq!(got, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_upstream_is_reached_with_an_extra_ca_and_recorded() {
    let (ca_pem, tls) = test_tls();
    let upstream = Upstream::start("/v2", Some(tls)).await;
    assert!(upstream.base_url.starts_with("https://"));
    let twin = Twin::init("secure", &upstream.base_url);
    let ca_file = twin.tmp.path().join("ca.pem");
    std::fs::write(&ca_file, ca_pem).unwrap();
    let rec = Recording::start(&twin, &["--upstream-ca", ca_file.to_str().unwrap()]);
    let http = client();

    let r = http
        .get(format!("{}/regions?page=2", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["path"], "/v2/regions");

    let mut r = http
        .get(format!("{}/stream", rec.url))
        .send()
        .await
        .unwrap();
    let first = within("first chunk over TLS", r.chunk())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&first[..], b"chunk-1;");
    upstream.release();
    while within("rest of the stream", r.chunk())
        .await
        .unwrap()
        .is_some()
    {}

    rec.stop();
    // ALPN offered h2 and the upstream took it: the HTTP/2 client path is exercised too.
    assert_eq!(upstream.seen()[0].version, "HTTP/2.0");
    assert_eq!(twin.only_session_paths(), ["/v2/regions", "/v2/stream"]);
    assert_eq!(
        twin.sessions()[0].exchanges[1].response_body(),
        b"chunk-1;chunk-2;chunk-3\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_upstream_with_an_untrusted_certificate_gets_502_and_nothing_recorded() {
    let (_ca_pem, tls) = test_tls();
    let upstream = Upstream::start("", Some(tls)).await;
    let twin = Twin::init("untrusted", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);
    let r = client()
        .get(format!("{}/regions", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 502);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "upstream_unreachable");
    rec.stop();
    assert!(twin.sessions().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wraith_headers_are_neither_forwarded_nor_recorded_and_host_is_the_upstreams() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("hdrs", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);
    let r = client()
        .get(format!("{}/things/1", rec.url))
        .header("X-Wraith-Session", "tenant-a")
        .header("X-Wraith-Replay", "exact")
        .header("X-Trace", "keep-me")
        .header("Connection", "keep-alive")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    rec.stop();

    let seen = upstream.seen();
    assert_eq!(seen.len(), 1);
    let got = &seen[0];
    assert!(
        got.headers.iter().all(|(k, _)| !k.starts_with("x-wraith-")),
        "X-Wraith-* reached the upstream: {:?}",
        got.headers
    );
    assert_eq!(got.header("x-trace"), Some("keep-me"));
    assert_eq!(got.header("host"), Some(upstream.authority.as_str()));

    let sessions = twin.sessions();
    let ex = &sessions[0].exchanges[0];
    assert!(
        ex.request
            .headers
            .keys()
            .all(|k| !k.starts_with("x-wraith-")),
        "X-Wraith-* recorded: {:?}",
        ex.request.headers
    );
    assert_eq!(ex.request_header("x-trace"), Some("keep-me"));
    // Recorded headers are lowercase and sorted by name.
    let names: Vec<&String> = ex.request.headers.keys().collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_plane_is_answered_by_the_proxy_and_never_forwarded_or_recorded() {
    let upstream = Upstream::start("/base", None).await;
    let twin = Twin::init("ctl", &upstream.base_url);
    let rec = Recording::start(&twin, &["--tag", "t1", "--tag", "t2"]);
    let http = client();

    let health: Value = http
        .get(format!("{}/__wraith/health", rec.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health, json!({"status": "recording"}));
    let ready: Value = http
        .get(format!("{}/__wraith/ready", rec.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ready, json!({"ready": true}));

    http.get(format!("{}/one", rec.url)).send().await.unwrap();
    let info: Value = http
        .get(format!("{}/__wraith/info", rec.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(info["upstream"], upstream.base_url.as_str());
    assert_eq!(info["port"], rec.port);
    assert_eq!(info["url"], rec.url.as_str());
    assert_eq!(info["tags"], json!(["t1", "t2"]));
    let active = info["active_sessions"].as_array().unwrap();
    assert_eq!(active.len(), 1);
    // The exchange is either written or on its way to disk.
    let counted =
        active[0]["exchange_count"].as_u64().unwrap() + active[0]["in_flight"].as_u64().unwrap();
    assert_eq!(counted, 1);

    let r = http
        .get(format!("{}/__wraith/new-session", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405, "new-session is POST only");
    let r = http
        .get(format!("{}/__wraith/nope", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);

    rec.stop();
    let seen: Vec<String> = upstream.seen().into_iter().map(|s| s.path).collect();
    assert_eq!(
        seen,
        ["/base/one"],
        "only application traffic reaches the upstream"
    );
    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].exchanges.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_session_endpoint_finalizes_the_session_and_the_next_exchange_opens_another() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("split", &upstream.base_url);
    let rec = Recording::start(&twin, &["--json"]);
    let http = client();

    http.get(format!("{}/a", rec.url)).send().await.unwrap();
    http.get(format!("{}/b", rec.url)).send().await.unwrap();
    let r = http
        .post(format!("{}/__wraith/new-session", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    let finalized = body["finalized"].as_array().unwrap();
    assert_eq!(finalized.len(), 1);
    assert_eq!(finalized[0]["exchange_count"], 2);
    assert_eq!(body["pending"], json!([]));
    // Finalized on disk right away, before the proxy stops.
    let first_id = finalized[0]["session_id"].as_str().unwrap().to_string();
    let on_disk = twin.sessions();
    assert_eq!(on_disk.len(), 1);
    assert!(on_disk[0].manifest.complete);
    assert_eq!(on_disk[0].manifest.session_id, first_id);

    http.get(format!("{}/c", rec.url)).send().await.unwrap();
    let stdout = rec.stdout_path().to_path_buf();
    rec.stop();
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(stdout).unwrap()).unwrap();
    assert_eq!(summary["exchanges"], 3, "--json summary: {summary}");
    assert_eq!(summary["sessions"].as_array().unwrap().len(), 2);

    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 2);
    let paths = |i: usize| -> Vec<String> {
        sessions[i]
            .exchanges
            .iter()
            .map(|e| e.request.path.clone())
            .collect()
    };
    let (first, second) = if sessions[0].manifest.session_id == first_id {
        (0, 1)
    } else {
        (1, 0)
    };
    assert_eq!(paths(first), ["/a", "/b"]);
    assert_eq!(paths(second), ["/c"]);
    assert!(sessions.iter().all(|s| s.manifest.complete));
    assert_eq!(sessions[second].exchanges[0].correlation.exchange_index, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_timeout_closes_the_session_and_the_next_exchange_opens_another() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("idle", &upstream.base_url);
    let rec = Recording::start(&twin, &["--idle-timeout", "1"]);
    let http = client();

    http.get(format!("{}/before", rec.url))
        .send()
        .await
        .unwrap();
    // Poll the control plane (it does not count as traffic) until the session is closed.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let info: Value = http
            .get(format!("{}/__wraith/info", rec.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if info["active_sessions"].as_array().unwrap().is_empty() {
            assert_eq!(info["finalized_sessions"].as_array().unwrap().len(), 1);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "idle session never closed: {info}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    http.get(format!("{}/after", rec.url)).send().await.unwrap();
    rec.stop();

    let mut sessions = twin.sessions();
    sessions.sort_by_key(|s| s.manifest.start_time_us);
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[0].exchanges[0].request.path, "/before");
    assert_eq!(sessions[1].exchanges[0].request.path, "/after");
    assert!(sessions.iter().all(|s| s.manifest.complete));
}

/// Poll until the recorder has stopped accepting (it got the signal and is draining).
async fn until_refusing(rec: &Recording) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !rec.refuses_connections() {
        assert!(
            Instant::now() < deadline,
            "the recorder kept accepting after SIGINT"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_lets_a_streaming_exchange_finish_before_the_session_is_finalized() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("drain", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);
    let mut r = client()
        .get(format!("{}/stream", rec.url))
        .send()
        .await
        .unwrap();
    let first = within("first chunk", r.chunk()).await.unwrap().unwrap();
    assert_eq!(&first[..], b"chunk-1;");

    rec.send_sigint();
    until_refusing(&rec).await;
    // Shutdown has begun; the exchange in flight is still allowed to finish.
    upstream.release();
    let mut rest = Vec::new();
    while let Some(c) = within("rest of the stream", r.chunk()).await.unwrap() {
        rest.extend_from_slice(&c);
    }
    assert_eq!(rest, b"chunk-2;chunk-3\n");
    let (status, stderr) = rec.wait();
    assert!(status.success(), "{stderr}");

    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1);
    assert!(sessions[0].manifest.complete);
    let ex = &sessions[0].exchanges[0];
    assert!(!ex.truncated);
    assert_eq!(ex.response_body(), b"chunk-1;chunk-2;chunk-3\n");
    assert!(leftovers(&twin.root).is_empty());
}

/// Closing the recorder's terminal sends SIGHUP: it must stop as Ctrl-C does, keeping every
/// exchange already answered and finalizing the manifest, not die on the spot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_keeps_every_answered_exchange_and_finalizes_the_manifest() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("hangup", &upstream.base_url);
    let rec = Recording::start(&twin, &["--json"]);
    let http = client();
    let paths = ["/one", "/two", "/three"];
    for path in paths {
        let r = http.get(format!("{}{path}", rec.url)).send().await.unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap();
    }
    let stdout = rec.stdout_path().to_path_buf();
    rec.send_signal("HUP");
    let (status, stderr) = rec.wait();
    assert_eq!(
        status.code(),
        Some(0),
        "record exited with {status}: {stderr}"
    );
    assert!(stderr.contains("stopping"), "{stderr}");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(stdout).unwrap()).unwrap();
    assert_eq!(summary["exchanges"], 3, "--json summary: {summary}");

    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0];
    assert!(s.manifest.complete, "manifest finalized");
    assert_eq!(s.manifest.exchange_count, 3);
    let got: Vec<&str> = s
        .exchanges
        .iter()
        .map(|e| e.request.path.as_str())
        .collect();
    assert_eq!(got, paths);
    assert!(leftovers(&twin.root).is_empty());
}

/// The folder of the session being recorded, once it holds `file` (an exchange written).
async fn session_holding(twin: &Twin, file: &str) -> std::path::PathBuf {
    within(&format!("{file} written"), async {
        loop {
            let dirs: Vec<_> = std::fs::read_dir(twin.sessions_dir())
                .map(|d| d.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            if let Some(dir) = dirs.into_iter().find(|d| d.join(file).is_file()) {
                return dir;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_cannot_be_finalized_keeps_its_exchanges_and_says_how_to_fix_it() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("stuck", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);
    let http = client();
    for path in ["/one", "/two"] {
        let r = http.get(format!("{}{path}", rec.url)).send().await.unwrap();
        r.bytes().await.unwrap();
    }
    // Wait for both exchange files, then put a folder where the manifest must go: renaming the
    // finished manifest onto it fails, as a full disk would.
    let session = session_holding(&twin, "000001.wrec.zst").await;
    std::fs::create_dir(session.join("manifest.json")).unwrap();
    let (status, stderr) = rec.interrupt();
    assert_eq!(status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("2 exchange(s) written before are kept without a manifest")
            && stderr.contains("free disk space"),
        "{stderr}"
    );
    assert!(session.join("000000.wrec.zst").is_file());
    assert!(session.join("000001.wrec.zst").is_file());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exchange_still_streaming_at_the_drain_timeout_is_recorded_truncated() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("cut", &upstream.base_url);
    twin.append_config("[serve.limits]\nrequest_drain_timeout_ms = 200\n");
    let rec = Recording::start(&twin, &[]);
    let mut r = client()
        .get(format!("{}/stream", rec.url))
        .send()
        .await
        .unwrap();
    let first = within("first chunk", r.chunk()).await.unwrap().unwrap();
    assert_eq!(&first[..], b"chunk-1;");

    // Never released: the drain timeout cuts the stream.
    rec.stop();
    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1);
    assert!(sessions[0].manifest.complete);
    let ex = &sessions[0].exchanges[0];
    assert!(ex.truncated, "cut exchanges say so");
    assert_eq!(ex.response_body(), b"chunk-1;");
    assert!(leftovers(&twin.root).is_empty());
}

/// At the drain timeout, an exchange whose response is streaming is recorded truncated, and a
/// request the upstream has not begun to answer cannot be: the log and the summary say which
/// is which instead of counting both as recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_unanswered_at_the_drain_timeout_is_reported_as_not_recorded() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("unanswered", &upstream.base_url);
    twin.append_config("[serve.limits]\nrequest_drain_timeout_ms = 200\n");
    let rec = Recording::start(&twin, &["--json"]);
    let http = client();
    let mut streaming = http
        .get(format!("{}/stream", rec.url))
        .send()
        .await
        .unwrap();
    let first = within("first chunk", streaming.chunk())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&first[..], b"chunk-1;");
    // The upstream never sends a response head for this one.
    let held = tokio::spawn({
        let url = format!("{}/held", rec.url);
        let http = http.clone();
        async move { http.get(url).send().await }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while !upstream.seen().iter().any(|s| s.path == "/held") {
        assert!(
            Instant::now() < deadline,
            "the held request never reached the upstream"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let stdout = rec.stdout_path().to_path_buf();
    let stderr = rec.stop();
    assert!(
        stderr.contains("NOT recorded"),
        "the log says the unanswered request was not recorded: {stderr}"
    );
    assert!(
        !stderr.contains("remaining exchanges (recorded as truncated)"),
        "{stderr}"
    );
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(stdout).unwrap()).unwrap();
    assert_eq!(summary["exchanges"], 1, "--json summary: {summary}");
    assert_eq!(summary["cut_at_shutdown"], 1, "--json summary: {summary}");
    assert_eq!(summary["cut_unrecorded"], 1, "--json summary: {summary}");

    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1);
    assert!(sessions[0].manifest.complete);
    assert_eq!(sessions[0].manifest.exchange_count, 1);
    let ex = &sessions[0].exchanges[0];
    assert_eq!(ex.request.path, "/stream");
    assert!(ex.truncated);
    assert_eq!(ex.response_body(), b"chunk-1;");
    // The client of the cut request is told why (see the test below).
    let r = within("the held request ends", held)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.status(), 503);
}

/// A request the upstream has not begun to answer when the drain timeout runs out gets an
/// answer saying why, in the recorder's error envelope (`503 recorder_stopping`), instead of a
/// connection closed without a word; nothing is recorded for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_unanswered_at_the_drain_timeout_is_answered_503_recorder_stopping() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("stopping", &upstream.base_url);
    twin.append_config("[serve.limits]\nrequest_drain_timeout_ms = 200\n");
    let rec = Recording::start(&twin, &["--json"]);
    let held = tokio::spawn({
        let url = format!("{}/held?access_token=s3cr3t-value", rec.url);
        async move { client().get(url).send().await }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while !upstream.seen().iter().any(|s| s.path == "/held") {
        assert!(
            Instant::now() < deadline,
            "the held request never reached the upstream"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stdout = rec.stdout_path().to_path_buf();
    rec.send_signal("TERM");
    let r = within("the held request's answer", held)
        .await
        .unwrap()
        .expect("an HTTP answer, not a closed connection");
    assert_eq!(r.status(), 503);
    assert_eq!(
        r.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "recorder_stopping", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("GET /held")
            && message.contains("request_drain_timeout_ms")
            && message.contains("nothing was recorded"),
        "{message}"
    );
    assert!(
        !message.contains("s3cr3t"),
        "the query stays out: {message}"
    );
    let (status, stderr) = rec.wait();
    assert!(status.success(), "{stderr}");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(stdout).unwrap()).unwrap();
    assert_eq!(summary["cut_unrecorded"], 1, "--json summary: {summary}");
    assert_eq!(summary["exchanges"], 0, "--json summary: {summary}");
    assert!(twin.sessions().is_empty(), "nothing recorded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_upstream_answers_502_with_json_and_records_nothing() {
    // Bind then drop a listener to get a port nobody listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let twin = Twin::init("down", &format!("http://127.0.0.1:{port}"));
    let rec = Recording::start(&twin, &[]);
    let r = client()
        .get(format!("{}/anything", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 502);
    assert_eq!(
        r.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "upstream_unreachable");
    let stderr = rec.stop();
    assert!(stderr.contains("not recorded"), "{stderr}");
    assert!(twin.sessions().is_empty(), "nothing recorded");
    assert!(files_under(&twin.sessions_dir()).is_empty());
}

/// A fifo's writer waits for a reader: a ready fifo nobody reads must not keep Ctrl-C from
/// stopping the recorder, and the session it opened is finalized (empty).
#[cfg(unix)]
#[test]
fn a_stop_signal_ends_record_while_its_ready_fifo_has_no_reader() {
    let twin = Twin::init("fifo", "http://127.0.0.1:9");
    let fifo = twin.tmp.path().join("ready.fifo");
    crate::support::mkfifo(&fifo);
    let mut child = twin
        .record_command(&["--port", "0", "--ready-json", fifo.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = crate::serve_cli::exit_within_20s(&mut child);
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "record did not stop on SIGINT while blocked on its ready fifo"
    );
    assert!(
        twin.sessions().iter().all(|s| s.exchanges.is_empty()),
        "nothing was recorded"
    );
}

#[test]
fn a_tag_holding_a_control_character_is_refused_before_listening_as_import_refuses_it() {
    let twin = Twin::init("tags", "http://127.0.0.1:9");
    let ready = twin.tmp.path().join("ready.json");
    for tag in ["\u{1b}[31mRED\u{1b}[0m", "a\nb", "  "] {
        let out = twin
            .record_command(&[
                "--port",
                "0",
                "--duration",
                "1",
                "--ready-json",
                ready.to_str().unwrap(),
                "--tag",
                tag,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{tag:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("--tag"), "{tag:?}: {said}");
        assert!(!ready.exists(), "it must not start listening");
    }
    assert!(twin.sessions().is_empty());
}

#[test]
fn ci_without_hmac_key_is_refused_with_exit_3_before_listening() {
    let twin = Twin::init("ci", "http://127.0.0.1:9");
    let ready = twin.tmp.path().join("ready.json");
    let out = twin
        .record_command(&["--port", "0", "--ready-json", ready.to_str().unwrap()])
        .env_remove("WRAITH_HMAC_KEY")
        .env("CI", "true")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("WRAITH_HMAC_KEY"));
    assert!(!ready.exists(), "it must not start listening");
}

#[test]
fn unknown_twin_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(bin())
        .current_dir(tmp.path())
        .args(["record", "nope", "--port", "0"])
        .env("WRAITH_HMAC_KEY", TEST_HMAC_KEY)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duration_stops_the_proxy_by_itself_and_finalizes_what_it_recorded() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("timed", &upstream.base_url);
    let rec = Recording::start(&twin, &["--duration", "2"]);
    let r = client()
        .get(format!("{}/during", rec.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.bytes().await.unwrap();
    // No signal is sent: the proxy stops on its own once the two seconds are up.
    let (status, stderr) = rec.wait();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("--duration of 2 s reached"), "{stderr}");
    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1);
    assert!(sessions[0].manifest.complete);
    assert_eq!(sessions[0].exchanges[0].request.path, "/during");
    assert!(leftovers(&twin.root).is_empty());
    // The ready file named an address nobody listens on any more: it is gone.
    let ready_files: Vec<String> = std::fs::read_dir(twin.tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("record-ready-"))
        .collect();
    assert!(ready_files.is_empty(), "{ready_files:?}");
}

#[test]
fn a_zero_duration_and_an_unknown_proxy_mode_are_usage_errors() {
    let twin = Twin::init("flags", "http://127.0.0.1:9");
    for (args, says) in [
        (
            &["--duration", "0"][..],
            "--duration must be at least 1 second",
        ),
        (&["--mode", "socks"][..], "invalid value 'socks'"),
    ] {
        let ready = twin.tmp.path().join("ready.json");
        let mut all = vec!["--port", "0", "--ready-json", ready.to_str().unwrap()];
        all.extend_from_slice(args);
        let out = twin.record_command(&all).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!ready.exists(), "{args:?} must not start listening");
    }
}

/// A recordings folder the recorder cannot write to would have it proxy traffic it cannot
/// keep: it refuses at startup (exit 4) naming the folder, before it listens.
#[test]
fn an_unwritable_recordings_folder_is_refused_with_exit_4_before_listening() {
    use std::os::unix::fs::PermissionsExt as _;
    let twin = Twin::init("readonly", "http://127.0.0.1:9");
    let sessions = twin.sessions_dir();
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o555)).unwrap();
    // Root writes through any mode bits: nothing to test then.
    let probe = sessions.join("probe");
    if std::fs::write(&probe, b"x").is_ok() {
        let _ = std::fs::remove_file(&probe);
        eprintln!("skipped: a read-only folder is still writable for this user (root)");
        return;
    }
    let out = record_until_exit(&twin);
    std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(out.code, Some(4), "{}", out.stderr);
    assert!(!out.listened, "it must not start listening");
    assert!(
        out.stderr.contains("readonly/recordings/sessions"),
        "the message names the folder: {}",
        out.stderr
    );
    assert!(out.stderr.contains("writable"), "{}", out.stderr);
}

/// The same refusal when the recordings folder cannot be made at all (a file is in the way);
/// this one holds for every user, root included.
#[test]
fn a_file_in_place_of_the_recordings_folder_is_refused_with_exit_4_before_listening() {
    let twin = Twin::init("blocked", "http://127.0.0.1:9");
    let sessions = twin.sessions_dir();
    if sessions.exists() {
        std::fs::remove_dir_all(&sessions).unwrap();
    }
    std::fs::write(&sessions, b"not a folder\n").unwrap();
    let out = record_until_exit(&twin);
    assert_eq!(out.code, Some(4), "{}", out.stderr);
    assert!(!out.listened, "it must not start listening");
    assert!(
        out.stderr.contains("blocked/recordings/sessions"),
        "the message names the folder: {}",
        out.stderr
    );
    assert!(out.stderr.contains("not a folder"), "{}", out.stderr);
}

/// A WebSocket handshake cannot be recorded (nor relayed): it is refused with a 501 whose JSON
/// body says so and a warning on stderr, instead of reaching the upstream as a plain `GET`
/// without its `Upgrade` header and being recorded as one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_upgrade_is_refused_with_501_saying_websockets_are_not_recorded() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let upstream = Upstream::start("/api", None).await;
    let twin = Twin::init("ws", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);
    let mut conn = tokio::net::TcpStream::connect(("127.0.0.1", rec.port))
        .await
        .unwrap();
    let handshake = format!(
        "GET /socket HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: Upgrade\r\n\
         Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
        rec.port
    );
    conn.write_all(handshake.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    within("the refusal", async {
        let mut buf = [0u8; 4096];
        loop {
            let n = conn.read(&mut buf).await.unwrap();
            answer.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&answer);
            if n == 0 || text.contains("}\n") {
                break;
            }
        }
    })
    .await;
    let text = String::from_utf8_lossy(&answer).to_string();
    assert!(text.starts_with("HTTP/1.1 501"), "{text}");
    assert!(text.contains("application/json"), "{text}");
    let body: Value = serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["error"]["type"], "websocket_not_recorded");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("GET /socket asks for a WebSocket"),
        "{message}"
    );
    assert!(
        message.contains("neither sent to the upstream nor recorded"),
        "{message}"
    );
    assert!(upstream.seen().is_empty(), "nothing reached the upstream");

    let stderr = rec.stop();
    assert!(
        stderr.contains("refused the WebSocket upgrade GET /socket"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 WebSocket upgrade request(s) were refused (501)"),
        "{stderr}"
    );
    assert!(twin.sessions().is_empty(), "nothing recorded");
}

/// `OPTIONS *` names the server as a whole: it is refused with a 501 saying so, instead of
/// reaching the upstream as `OPTIONS /api/*` (a resource named `*`) and being recorded so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asterisk_form_options_is_refused_with_501_not_sent_on_as_a_path() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let upstream = Upstream::start("/api", None).await;
    let twin = Twin::init("star", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);
    let mut conn = tokio::net::TcpStream::connect(("127.0.0.1", rec.port))
        .await
        .unwrap();
    let request = format!(
        "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
        rec.port
    );
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    within("the refusal", conn.read_to_end(&mut answer))
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&answer).to_string();
    assert!(text.starts_with("HTTP/1.1 501"), "{text}");
    let body: Value = serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["error"]["type"], "asterisk_form_not_recorded");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("OPTIONS * asks about the server as a whole"),
        "{message}"
    );
    assert!(upstream.seen().is_empty(), "nothing reached the upstream");
    let stderr = rec.stop();
    assert!(
        stderr.contains("refused OPTIONS * (asterisk form)"),
        "{stderr}"
    );
    assert!(twin.sessions().is_empty(), "nothing recorded");
}

/// `wraith serve` refuses a path with a `.` or `..` segment (400), so a recording of one would
/// be a route its twin fails its own check on. The recorder sends such a request on as it came
/// (the client still gets the upstream's answer), records nothing of it, and counts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_with_a_dot_segment_is_passed_through_unrecorded_and_counted() {
    let upstream = Upstream::start("/api", None).await;
    let twin = Twin::init("dots", &upstream.base_url);
    let rec = Recording::start(&twin, &["--json"]);
    let dotted = [
        "/x/../items",
        "/x/%2e%2e/items",
        "/x/%2E./items",
        "/./items",
        "/../outside",
    ];
    for path in ["/items"].into_iter().chain(dotted) {
        let (status, body) = raw_request(rec.port, "GET", path).await;
        assert_eq!(status, 200, "{path}: {body}");
    }
    // The upstream got every request as sent, under the base path.
    let seen: Vec<String> = upstream.seen().into_iter().map(|s| s.path).collect();
    let mut expected = vec!["/api/items".to_string()];
    expected.extend(dotted.iter().map(|p| format!("/api{p}")));
    assert_eq!(seen, expected);

    let stdout = rec.stdout_path().to_path_buf();
    let stderr = rec.stop();
    assert!(
        stderr.contains("GET /x/../items through unrecorded"),
        "the log names the request: {stderr}"
    );
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(stdout).unwrap()).unwrap();
    assert_eq!(summary["exchanges"], 1, "--json summary: {summary}");
    assert_eq!(summary["dot_segment_paths"], 5, "--json summary: {summary}");
    assert_eq!(summary["passed_through"], 0, "--json summary: {summary}");
    assert_eq!(twin.only_session_paths(), ["/api/items"]);
}

/// The human summary names the dot-segment requests it passed through unrecorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_text_summary_counts_dot_segment_requests_passed_through_unrecorded() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("dots", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);
    let (status, _) = raw_request(rec.port, "GET", "/a/../b").await;
    assert_eq!(status, 200);
    let stderr = rec.stop();
    assert!(
        stderr.contains("1 request(s) with a `.` or `..` segment in their path were passed"),
        "{stderr}"
    );
    assert!(twin.sessions().is_empty(), "nothing recorded");
}

/// An exchange the recorder could not write (a full disk; here a folder where its file must go)
/// is lost: the session is finalized `complete: false` over the exchanges it holds, the summary
/// says so, record exits 4, and `wraith lint` warns of the session as `recording-incomplete`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_lost_an_exchange_to_a_failed_write_is_finalized_incomplete() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("lossy", &upstream.base_url);
    let rec = Recording::start(&twin, &["--json"]);
    let http = client();
    let r = http.get(format!("{}/one", rec.url)).send().await.unwrap();
    r.bytes().await.unwrap();
    let session = session_holding(&twin, "000000.wrec.zst").await;
    // The next exchange's file cannot be put in place: its write fails, as on a full disk.
    let blocker = session.join("000001.wrec.zst");
    std::fs::create_dir(&blocker).unwrap();
    let r = http.get(format!("{}/two", rec.url)).send().await.unwrap();
    assert_eq!(r.status(), 200, "the client still gets its answer");
    r.bytes().await.unwrap();
    within("the failed write", async {
        while !rec.stderr().contains("cannot write to session") {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    // Room again: the next exchange is written in the free place.
    std::fs::remove_dir(&blocker).unwrap();
    let r = http.get(format!("{}/three", rec.url)).send().await.unwrap();
    r.bytes().await.unwrap();

    let stdout = rec.stdout_path().to_path_buf();
    let (status, stderr) = rec.interrupt();
    assert_eq!(status.code(), Some(4), "{stderr}");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(stdout).unwrap()).unwrap();
    assert_eq!(summary["exchanges"], 2, "--json summary: {summary}");
    assert_eq!(summary["sessions"][0]["complete"], false, "{summary}");
    assert_eq!(summary["sessions"][0]["lost_exchanges"], 1, "{summary}");
    assert_eq!(
        summary["write_errors"].as_array().unwrap().len(),
        1,
        "{summary}"
    );

    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0];
    assert!(
        !s.manifest.complete,
        "the manifest says the session is not whole"
    );
    assert_eq!(s.manifest.exchange_count, 2);
    let paths: Vec<&str> = s
        .exchanges
        .iter()
        .map(|e| e.request.path.as_str())
        .collect();
    assert_eq!(paths, ["/one", "/three"]);

    let out = std::process::Command::new(bin())
        .current_dir(twin.tmp.path())
        .args(["lint", &twin.name, "--json"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let lint: Value = serde_json::from_slice(&out.stdout).unwrap();
    let incomplete: Vec<&Value> = lint["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "recording-incomplete")
        .collect();
    assert_eq!(incomplete.len(), 1, "{lint:#}");
    let folder = session.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        incomplete[0]["file"],
        format!("recordings/sessions/{folder}")
    );
}

/// A body longer than the recorder keeps (64 MiB) reaches the client whole; the recording holds
/// its first 64 MiB marked truncated, and the recorder says so: a warning naming the request,
/// and a count in the summary apart from exchanges cut at shutdown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_keep_limit_is_recorded_cut_with_a_warning_and_counted() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("big", &upstream.base_url);
    for json in [true, false] {
        let rec = Recording::start(&twin, if json { &["--json"] } else { &[] });
        let r = client()
            .get(format!("{}/oversized", rec.url))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.bytes().await.unwrap().len(), OVERSIZED_BODY_BYTES);
        let stdout = rec.stdout_path().to_path_buf();
        let stderr = rec.stop();
        assert!(
            stderr
                .contains("the response body of GET /oversized is longer than the recorder keeps"),
            "{stderr}"
        );
        if json {
            let summary: Value =
                serde_json::from_str(&std::fs::read_to_string(stdout).unwrap()).unwrap();
            assert_eq!(summary["cut_at_limit"], 1, "{summary}");
            assert_eq!(summary["cut_at_shutdown"], 0, "{summary}");
        } else {
            assert!(
                stderr.contains("1 response body(ies) were longer than the recorder keeps"),
                "{stderr}"
            );
        }
    }
    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 2);
    for s in &sessions {
        let ex = &s.exchanges[0];
        assert!(ex.truncated);
        assert_eq!(ex.response_body().len(), RECORDER_BODY_LIMIT);
    }
}
