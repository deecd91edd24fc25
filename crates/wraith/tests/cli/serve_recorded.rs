//! `wraith serve` on a twin built from real recordings (HAR files under `testdata/serve/` through
//! `wraith import`): automatic synth when the model is missing or stale, freshness from the
//! newest recording (`X-Wraith-Twin-Age`, `X-Wraith-Recorded-At`, ready-json, info), and
//! `X-Wraith-Exchange` naming a WREC file that exists. Black-box: the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::Twin;

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/serve")
        .join(name)
}

fn import(t: &Twin, har: &str) {
    let out = Command::new(support::bin())
        .current_dir(t.tmp.path())
        .env("WRAITH_HMAC_KEY", "serve-test-key")
        .args(["import", &t.path_str()])
        .arg(testdata(har))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "import failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn recorded_twin() -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    import(&t, "shop-customers.har");
    t
}

const ENV: [(&str, &str); 1] = [("WRAITH_HMAC_KEY", "serve-test-key")];

#[tokio::test]
async fn missing_model_is_synthesized_before_serving() {
    let t = recorded_twin();
    let model = t.path().join("model/twin.wir.json");
    assert!(!model.exists());
    let s = t.serve_env(&[], &ENV);
    assert!(model.is_file(), "serve should have run synth");
    let err = s.stderr();
    assert!(err.contains("no model yet"), "{err}");
    assert!(err.contains("running `wraith synth` first"), "{err}");
    // The synthesized twin answers the recorded read verbatim.
    let r = s.get("/v1/customers/cus_Ann0000000001", Some("a")).await;
    assert_eq!(r.status, 200);
    // (Names are personal data: the outbound policy may pseudonymize them; the id is kept.)
    assert_eq!(r.json()["id"], "cus_Ann0000000001");
    assert_eq!(r.provenance(), Some("recorded"));
}

#[tokio::test]
async fn exchange_header_names_an_existing_recording_file() {
    let t = recorded_twin();
    let s = t.serve_env(&[], &ENV);
    let r = s.get("/v1/customers/cus_Ann0000000001", Some("a")).await;
    let exchange = r.header("x-wraith-exchange").unwrap();
    // "Maps directly": the value, as it is, names the file.
    let file = t
        .path()
        .join("recordings/sessions")
        .join(format!("{exchange}.wrec.zst"));
    assert!(file.is_file(), "{exchange}: no file {}", file.display());
    let (_, index) = exchange.split_once('/').unwrap();
    assert!(
        index.parse::<u64>().is_ok(),
        "{exchange}: index is not a number"
    );
}

#[tokio::test]
async fn freshness_comes_from_the_newest_recording_and_does_not_tick() {
    let t = recorded_twin();
    let s = t.serve_env(&[], &ENV);
    let recorded_at = s.ready["recorded_at"].as_str().unwrap().to_string();
    // The newest exchange of the HAR started at 12:00:05 and took 12 ms.
    assert_eq!(recorded_at, "2026-06-01T12:00:05Z");
    let age = s.ready["twin_age_seconds"].as_u64().unwrap();
    let now = jiff::Timestamp::now().as_second();
    let anchor = recorded_at.parse::<jiff::Timestamp>().unwrap().as_second();
    let expected = u64::try_from(now - anchor).unwrap();
    assert!(
        age <= expected && expected - age < 600,
        "{age} vs {expected}"
    );
    for path in ["/v1/customers/cus_Ann0000000001", "/nope"] {
        let r = s.get(path, None).await;
        assert_eq!(r.header("x-wraith-recorded-at"), Some(recorded_at.as_str()));
        assert_eq!(
            r.header("x-wraith-twin-age"),
            Some(age.to_string().as_str())
        );
    }
    let info = s.get("/__wraith/info", None).await.json();
    assert_eq!(info["recorded_at"], recorded_at.as_str());
    assert_eq!(info["twin_age_seconds"], age);
    assert!(info["synthesized_at"].as_str().is_some());
}

#[tokio::test]
async fn recordings_newer_than_the_model_trigger_a_resynth_and_a_fresh_model_does_not() {
    let t = recorded_twin();
    let mut first = t.serve_env(&[], &ENV);
    assert_eq!(first.get("/v1/products/prod_Lamp", None).await.status, 501);
    assert_eq!(first.terminate(), 0);

    // Unchanged recordings: the model is fresh, no synth.
    let again = t.serve_env(&[], &ENV);
    assert!(
        !again.stderr().contains("running `wraith synth`"),
        "{}",
        again.stderr()
    );
    drop(again);

    // A newer recording session makes the model stale.
    std::thread::sleep(std::time::Duration::from_millis(20));
    import(&t, "shop-products.har");
    let s = t.serve_env(&[], &ENV);
    let err = s.stderr();
    assert!(err.contains("newer than the model"), "{err}");
    let r = s.get("/v1/products/prod_Lamp", None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(s.ready["recorded_at"], "2026-07-15T08:30:01Z");
}

#[tokio::test]
async fn exact_replay_prefers_the_moment_recorded_for_the_same_credential() {
    let t = Twin::init("shop", "https://api.shop.test");
    import(&t, "shop-principals.har");
    let s = t.serve_env(&[], &ENV);
    // The credential on the wire is tokenized the way the recorder scrubbed it, so each user
    // gets the answer recorded for them, whatever order they ask in.
    for (token, user) in [("sk_test_bob", "usr_bob"), ("sk_test_ann", "usr_ann")] {
        let auth = format!("Bearer {token}");
        let r = s
            .send(
                "GET",
                "/v1/me",
                Some(token),
                &[("authorization", &auth)],
                None,
            )
            .await;
        assert_eq!(r.status, 200);
        assert_eq!(r.provenance(), Some("recorded"));
        assert_eq!(r.json()["id"], user, "{token}");
    }
}

/// An API that names its caller by a key header of its own (no `Authorization`): each
/// recorded caller is a principal, and exact replay answers each the moment recorded for it.
#[tokio::test]
async fn exact_replay_prefers_the_moment_recorded_for_the_same_api_key_header() {
    use serde_json::json;
    use support::har;
    const ORIGIN: &str = "https://api.keyed.test";
    let t = Twin::init("keyed", ORIGIN);
    let me = |key: &str, user: &str| {
        let mut e = har::entry(ORIGIN, "GET", "/v1/me", None, &json!({"id": user}));
        e["request"]["headers"] = json!([{"name": "X-Api-Key", "value": key}]);
        e
    };
    har::import(&t, &ENV, "ann.har", vec![me("key_for_ann_0001", "usr_ann")]);
    har::import(&t, &ENV, "bob.har", vec![me("key_for_bob_0002", "usr_bob")]);
    har::synth(&t, &ENV);
    let s = t.serve_env(&[], &ENV);
    for _ in 0..2 {
        for (key, user) in [
            ("key_for_bob_0002", "usr_bob"),
            ("key_for_ann_0001", "usr_ann"),
        ] {
            let r = s
                .send("GET", "/v1/me", Some(key), &[("x-api-key", key)], None)
                .await;
            assert_eq!(r.status, 200);
            assert_eq!(r.provenance(), Some("recorded"));
            assert_eq!(r.json()["id"], user, "{key}");
        }
    }
}

/// Recordings of `/x` and `/x/` are one route (the router files both spellings as one), and
/// each spelling replays what was recorded for it; a request no recording made is answered
/// from the one route's template, whichever spelling it uses.
#[tokio::test]
async fn both_trailing_slash_spellings_are_one_route_and_each_replays_its_recording() {
    use serde_json::json;
    use support::har;
    const ORIGIN: &str = "https://api.slashes.test";
    let t = Twin::init("slashes", ORIGIN);
    let bare = |n: u64| {
        har::entry(
            ORIGIN,
            "GET",
            "/v1/things",
            None,
            &json!({"n": n, "spelling": "bare"}),
        )
    };
    let slash = har::entry(
        ORIGIN,
        "GET",
        "/v1/things/",
        None,
        &json!({"n": 9, "spelling": "slash"}),
    );
    har::import(&t, &ENV, "a.har", vec![bare(1), slash]);
    har::import(&t, &ENV, "b.har", vec![bare(2)]);
    har::synth(&t, &ENV);
    let model: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.path().join("model/twin.wir.json")).unwrap())
            .unwrap();
    let routes: Vec<&str> = model["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        routes,
        ["/v1/things"],
        "the spelling recorded most names the route"
    );
    let s = t.serve_env(&[], &ENV);
    let r = s.get("/v1/things/", Some("a")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.provenance(), Some("recorded"));
    assert_eq!(r.json()["spelling"], "slash");
    let r = s.get("/v1/things", Some("b")).await;
    assert_eq!(r.provenance(), Some("recorded"));
    assert_eq!(r.json()["spelling"], "bare");
    // Lint finds no routes the router would file as one.
    let out = Command::new(support::bin())
        .current_dir(t.tmp.path())
        .args(["lint", &t.path_str()])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!text.contains("routes-filed-as-one"), "{text}");
}

/// An API that answered JSON without a `Content-Type`: the twin answers without one too, and
/// `wraith check` passes the twin on its own recordings.
#[tokio::test]
async fn a_json_answer_recorded_without_a_content_type_is_served_without_one() {
    use serde_json::json;
    use support::har;
    const ORIGIN: &str = "https://api.untyped.test";
    let t = Twin::init("untyped", ORIGIN);
    let untyped = |path: &str, answer: serde_json::Value| {
        let mut e = har::entry(ORIGIN, "GET", path, None, &answer);
        e["response"]["headers"] = json!([]);
        e["response"]["content"]
            .as_object_mut()
            .unwrap()
            .remove("mimeType");
        e
    };
    let typed = har::entry(ORIGIN, "GET", "/typed", None, &json!({"t": 1}));
    har::import(
        &t,
        &[],
        "run.har",
        vec![
            untyped("/a", json!({"x": 1})),
            untyped("/c", json!({})),
            typed,
        ],
    );
    har::synth(&t, &[]);
    let s = t.serve(&[]);
    let a = s.get("/a", None).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.json(), json!({"x": 1}));
    assert_eq!(a.header("content-type"), None);
    let typed = s.get("/typed", None).await;
    assert_eq!(typed.header("content-type"), Some("application/json"));
    let out = Command::new(support::bin())
        .current_dir(t.tmp.path())
        .args(["check", &t.path_str()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A recorded answer whose values a parsed tree cannot hold (a 30-digit integer, a key written
/// twice) is served from its parsed tree, so it is not the recorded moment value for value:
/// the twin serves it without an `X-Wraith-Replay` claim, while an ordinary answer of the same
/// twin keeps its claim.
#[tokio::test]
async fn a_moment_the_parse_respelled_is_served_without_a_replay_claim() {
    use serde_json::json;
    use support::har;
    const ORIGIN: &str = "https://api.numbers.test";
    let t = Twin::init("numbers", ORIGIN);
    let raw = |path: &str, text: &str| {
        let mut e = har::entry(ORIGIN, "GET", path, None, &json!({}));
        e["response"]["content"]["text"] = json!(text);
        e["response"]["content"]["size"] = json!(text.len());
        e["response"]["bodySize"] = json!(text.len());
        e
    };
    har::import(
        &t,
        &[],
        "run.har",
        vec![
            raw("/big", r#"{"id":123456789012345678901234567890}"#),
            raw("/twice", r#"{"id":1,"id":2}"#),
            raw("/plain", r#"{"id":1E+2,"ok":true}"#),
        ],
    );
    let out = t.wraith(&["synth", &t.path_str()]);
    assert!(out.status.success(), "{out:?}");
    // Synth says which routes hold such answers, on stderr and in the model.
    let stderr = String::from_utf8_lossy(&out.stderr);
    for route in ["GET /big", "GET /twice"] {
        assert!(
            stderr.contains(&format!("warning: {route}:")) && stderr.contains("(respelled-body)"),
            "{stderr}"
        );
    }
    assert!(!stderr.contains("GET /plain"), "{stderr}");
    let model: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(t.path().join("model/twin.wir.json")).unwrap(),
    )
    .unwrap();
    let warned: Vec<&str> = model["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "respelled-body")
        .map(|d| d["route"].as_str().unwrap())
        .collect();
    assert_eq!(warned, ["GET /big", "GET /twice"]);
    let s = t.serve(&[]);
    let big = s.get("/big", None).await;
    assert_eq!(big.status, 200);
    assert_eq!(big.provenance(), Some("recorded"));
    assert_eq!(big.header("x-wraith-replay"), None);
    let twice = s.get("/twice", None).await;
    assert_eq!(twice.json(), json!({"id": 2}));
    assert_eq!(twice.header("x-wraith-replay"), None);
    // Another spelling of the same value is not a change: the claim stays.
    let plain = s.get("/plain", None).await;
    assert_eq!(plain.json(), json!({"id": 100.0, "ok": true}));
    assert_eq!(plain.header("x-wraith-replay"), Some("series-moment;v=1"));
}
