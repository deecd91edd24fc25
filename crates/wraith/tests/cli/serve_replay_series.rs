//! `X-Wraith-Replay` over the wire: the recorded sessions of the example shop twin replayed in
//! order against the real server, each in its own namespace. Every answer that claims
//! `series-moment;v=1` (or `session-bound-moment;v=1`, whose substituted values are this very
//! session's) equals its recording field for field; one that adds
//! `;outbound-policy=applied` equals it position by position in policy space (only values the
//! policy rewrote differ, each into an envelope or the twin's own origin, injectively). Under
//! strict fidelity no answer claims anything. Black-box: the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::BTreeMap;

use serde_json::Value;
use support::Twin;
use wraith_engine::{ReplayClaim, ReplayClass};
use wraith_recording::{Exchange, RecordedSession};

const ENV: [(&str, &str); 1] = [("WRAITH_HMAC_KEY", "serve-replay-test-key")];

/// The example shop twin (recorded by `examples/record-shop.sh`), copied to a temp dir.
fn shop_twin() -> Twin {
    support::example_shop_twin()
}

fn sessions(t: &Twin) -> Vec<RecordedSession> {
    wraith_recording::session::read_sessions(&t.path().join("recordings/sessions")).unwrap()
}

struct Answer {
    status: u16,
    replay: Option<String>,
    body: Vec<u8>,
}

async fn replay(client: &reqwest::Client, url: &str, ns: &str, ex: &Exchange) -> Answer {
    let req = &ex.request;
    let mut target = format!("{url}{}", req.path);
    if !req.query.is_empty() {
        target.push('?');
        target.push_str(&req.query);
    }
    let method = reqwest::Method::from_bytes(req.method.as_bytes()).unwrap();
    let mut rb = client
        .request(method, target)
        .header("X-Wraith-Session", ns);
    for (k, vs) in &req.headers {
        if matches!(
            k.to_ascii_lowercase().as_str(),
            "host" | "content-length" | "connection" | "transfer-encoding" | "accept-encoding"
        ) {
            continue;
        }
        for v in vs {
            rb = rb.header(k.as_str(), v.as_str());
        }
    }
    if let Some(ct) = &req.content_type
        && !req
            .headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("content-type"))
    {
        rb = rb.header("content-type", ct.as_str());
    }
    let r = rb.body(req.body.clone()).send().await.unwrap();
    let status = r.status().as_u16();
    let replay = r
        .headers()
        .get("x-wraith-replay")
        .map(|v| v.to_str().unwrap().to_string());
    let body = r.bytes().await.unwrap().to_vec();
    Answer {
        status,
        replay,
        body,
    }
}

fn is_policy_value(s: &str, twin_origin: &str) -> bool {
    let envelope = ["user_", "phone_", "name_", "wraith_tok_"].iter().any(|p| {
        s.strip_prefix(p)
            .map(|r| r.strip_suffix("@wraith.local").unwrap_or(r))
            .is_some_and(|r| r.len() == 22 && r.bytes().all(|b| b.is_ascii_alphanumeric()))
    });
    envelope || s.contains(twin_origin) || s.contains("user_") || s.contains("name_")
}

/// Same positions; a differing leaf must be a string the policy produced, and the rewrite
/// must be injective across the run (`seen`: recorded value → served value).
fn same_in_policy_space(
    exp: &Value,
    act: &Value,
    at: &str,
    origin: &str,
    seen: &mut BTreeMap<String, String>,
) {
    match (exp, act) {
        (Value::Object(e), Value::Object(a)) => {
            assert_eq!(
                e.keys().collect::<Vec<_>>().len(),
                a.keys().collect::<Vec<_>>().len(),
                "{at}: same keys"
            );
            for (k, ev) in e {
                let av = a
                    .get(k)
                    .unwrap_or_else(|| panic!("{at}/{k}: missing in the served body"));
                same_in_policy_space(ev, av, &format!("{at}/{k}"), origin, seen);
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            assert_eq!(e.len(), a.len(), "{at}: same length");
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                same_in_policy_space(ev, av, &format!("{at}/{i}"), origin, seen);
            }
        }
        (Value::String(e), Value::String(a)) if e != a => {
            assert!(is_policy_value(a, origin), "{at}: {e:?} served as {a:?}");
            let prev = seen.insert(e.clone(), a.clone());
            assert!(
                prev.is_none_or(|p| &p == a),
                "{at}: {e:?} rewritten two ways"
            );
        }
        _ => assert_eq!(exp, act, "{at}"),
    }
}

#[tokio::test]
async fn every_series_moment_claim_equals_its_recording_field_for_field() {
    let t = shop_twin();
    // A declared rule that rewrites recorded bytes of most answers, so disclosed claims
    // (`;outbound-policy=applied`) are exercised beside verbatim ones.
    let scrub = t.path().join("scrub.toml");
    let mut text = std::fs::read_to_string(&scrub).unwrap();
    text.push_str(
        "\n[[rules]]\nscope = \"jsonpath\"\nmatch = \"$.object\"\naction = \"tokenize\"\n",
    );
    std::fs::write(&scrub, text).unwrap();
    let s = t.serve_env(&[], &ENV);
    let client = reqwest::Client::new();
    let origin = s.url.trim_end_matches('/').to_string();
    let (mut verbatim, mut disclosed) = (0, 0);
    let mut seen = BTreeMap::new();
    for session in sessions(&t) {
        let ns = format!("replay-{}", session.manifest.session_id);
        for ex in &session.exchanges {
            let a = replay(&client, &s.url, &ns, ex).await;
            let Some(claim) = a.replay.as_deref().and_then(ReplayClaim::parse) else {
                continue;
            };
            // Replaying the recorded session itself, its own session-authored values are the
            // recorded ones: a session-bound moment is asserted exactly like a series moment.
            assert!(matches!(
                claim.class,
                ReplayClass::SeriesMoment | ReplayClass::SessionBoundMoment
            ));
            assert_eq!(a.status, ex.response.status);
            let recorded = ex.response_body();
            if recorded.is_empty() {
                assert!(a.body.is_empty());
                continue;
            }
            let expected: Value = serde_json::from_slice(&recorded).unwrap();
            let actual: Value = serde_json::from_slice(&a.body).unwrap();
            if claim.outbound_policy_applied {
                disclosed += 1;
                same_in_policy_space(&expected, &actual, "", &origin, &mut seen);
            } else {
                verbatim += 1;
                assert_eq!(
                    actual, expected,
                    "{} {}: series-moment;v=1 must be the recording",
                    ex.request.method, ex.request.path
                );
            }
        }
    }
    assert!(verbatim > 0, "no verbatim claim was exercised");
    assert!(disclosed > 0, "no disclosed claim was exercised");
}

/// A recorded session that read a record, updated it, then read it again: a session that
/// sends the update first and then the read has passed the first read's moment, so it is shown
/// its own update, never the record as it was before (with or without a replay claim).
#[tokio::test]
async fn a_read_after_a_replayed_update_shows_the_update_not_the_moment_before_it() {
    let t = shop_twin();
    let mut found = None;
    for session in sessions(&t) {
        let ex = &session.exchanges;
        for (j, update) in ex.iter().enumerate() {
            let read =
                |e: &&Exchange| e.request.method == "GET" && e.request.path == update.request.path;
            if update.request.method == "PATCH"
                && update.response.status == 200
                && ex[..j].iter().any(|e| read(&e))
                && ex[j + 1..].iter().any(|e| read(&e))
            {
                let before = ex[..j].iter().find(|e| read(e)).unwrap().clone();
                found = Some((update.clone(), before));
                break;
            }
        }
        if found.is_some() {
            break;
        }
    }
    let (update, before) = found.expect("a session reading, updating, then reading a record");
    let s = t.serve_env(&[], &ENV);
    let client = reqwest::Client::new();
    let updated = replay(&client, &s.url, "update-first", &update).await;
    assert_eq!(updated.status, 200);
    let updated: Value = serde_json::from_slice(&updated.body).unwrap();
    let read = replay(&client, &s.url, "update-first", &before).await;
    assert_eq!(read.status, 200);
    let read_body: Value = serde_json::from_slice(&read.body).unwrap();
    assert_eq!(read_body, updated, "the read shows the session's update");
    // The moment recorded before the update is no claim of this read.
    let stale: Value = serde_json::from_slice(&before.response_body()).unwrap();
    assert_ne!(
        updated["name"], stale["name"],
        "the recorded update changed the record"
    );
}

#[tokio::test]
async fn strict_fidelity_answers_carry_no_replay_claim() {
    let t = shop_twin();
    let s = t.serve_env(&["--fidelity", "strict"], &ENV);
    let client = reqwest::Client::new();
    let mut answered = 0;
    for session in sessions(&t) {
        let ns = format!("strict-{}", session.manifest.session_id);
        for ex in &session.exchanges {
            let a = replay(&client, &s.url, &ns, ex).await;
            assert!(a.replay.is_none(), "strict answered with a claim");
            answered += 1;
        }
    }
    assert!(answered > 0);
}

#[tokio::test]
async fn no_provenance_headers_drops_the_claim_with_the_others() {
    let t = shop_twin();
    let s = t.serve_env(&["--no-provenance-headers"], &ENV);
    let client = reqwest::Client::new();
    for session in sessions(&t) {
        let ns = format!("quiet-{}", session.manifest.session_id);
        for ex in &session.exchanges {
            let a = replay(&client, &s.url, &ns, ex).await;
            assert!(a.replay.is_none());
        }
    }
}

/// One recorded run: a profile created with `display_name`, then `GET /v1/me` (one literal
/// path, no query, no body) answering that very name.
fn profile_twin() -> Twin {
    use serde_json::json;
    use support::har;
    const ORIGIN: &str = "https://api.profiles.test";
    let t = Twin::init("profiles", ORIGIN);
    let sent = json!({"display_name": "Recorded Person"});
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/profiles",
            Some(&sent),
            &json!({"id": "prof_1001", "display_name": "Recorded Person"}),
        ),
        har::entry(
            ORIGIN,
            "GET",
            "/v1/me",
            None,
            &json!({"acct": "admin", "display_name": "Recorded Person", "note": "hi"}),
        ),
    ];
    har::import(&t, &ENV, "run.har", entries);
    har::synth(&t, &ENV);
    t
}

#[tokio::test]
async fn an_unaddressed_read_repeating_the_sessions_create_claims_session_bound_moment() {
    use serde_json::json;
    let t = profile_twin();
    let server = t.serve_env(&[], &ENV);
    let s = Some("agent-7");
    server
        .post("/v1/profiles", s, json!({"display_name": "Mine Own"}))
        .await
        .assert_status(200);
    let me = server.get("/v1/me", s).await;
    me.assert_status(200);
    let claim = me.header("x-wraith-replay").unwrap_or_default().to_string();
    assert!(claim.starts_with("session-bound-moment;v=1"), "{claim}");
    assert_eq!(
        ReplayClaim::parse(&claim).map(|c| c.class),
        Some(ReplayClass::SessionBoundMoment)
    );
    let body = me.json();
    // The session's own value at the proved path; every other position the moment's own.
    assert_eq!(body["display_name"], "Mine Own");
    assert_eq!(body["acct"], "admin");
    assert_eq!(body["note"], "hi");

    // A session that created nothing gets the moment as recorded: a series moment.
    let fresh = server.get("/v1/me", Some("agent-8")).await;
    let claim = fresh
        .header("x-wraith-replay")
        .unwrap_or_default()
        .to_string();
    assert!(claim.starts_with("series-moment;v=1"), "{claim}");
}
