//! Scrub before persist, end to end: secrets sent through the real `wraith record` never reach
//! any byte under the twin folder, compressed recordings included.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::record_support;

use record_support::*;
use serde_json::json;

const BEARER: &str = "sk_live_51HqLyjWDarjtT1zdp7dcQ9x";
const COOKIE_VALUE: &str = "ck_9f8e7d6c5b4a39281706aa";
const QUERY_KEY: &str = "ak_5up3rs3cr3tqu3ryk3y77";
const HEADER_KEY: &str = "xk_h34d3rs3cr3tv4lu3zz";
/// Luhn-valid test card number.
const CARD: &str = "4242424242424242";
/// Secret part of the upstream's `set-cookie`.
const SET_COOKIE_VALUE: &str = "sc_r3sp0nse_c00kie_v4lue";

/// Every byte under `dir`, with `.zst` files decompressed (a secret must not hide in there).
fn all_bytes(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    files_under(dir)
        .into_iter()
        .map(|p| {
            let raw = std::fs::read(&p).unwrap();
            let bytes = if p.extension().is_some_and(|e| e == "zst") {
                zstd::stream::decode_all(&raw[..]).unwrap()
            } else {
                raw
            };
            (p, bytes)
        })
        .collect()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_sent_through_the_proxy_never_reach_the_twin_folder() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("vault", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);

    let r = client()
        .post(format!(
            "{}/payments?api_key={QUERY_KEY}&currency=usd",
            rec.url
        ))
        .header("Authorization", format!("Bearer {BEARER}"))
        .header("Cookie", format!("session_id={COOKIE_VALUE}"))
        .header("X-Api-Key", HEADER_KEY)
        .json(&json!({"amount": 1200, "card": CARD, "note": "lunch"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    // The client itself gets the upstream's real answer: scrubbing is for the disk only.
    let set_cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(set_cookie.contains(SET_COOKIE_VALUE));
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["body"]["card"], CARD);

    rec.stop();

    // The upstream really received the secrets (so the test would catch a proxy that simply
    // dropped them instead of scrubbing what it stores).
    let seen = upstream.seen();
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {BEARER}").as_str())
    );
    assert!(seen[0].query.contains(QUERY_KEY));

    let sessions = twin.sessions();
    assert_eq!(sessions.len(), 1);
    let ex = &sessions[0].exchanges[0];
    assert!(
        ex.request_header("authorization")
            .unwrap()
            .starts_with("Bearer "),
        "the scheme word is kept"
    );
    assert!(
        ex.request.query.contains("currency=usd"),
        "rest of the query kept"
    );
    assert!(
        !ex.safety.scrub_rule_ids.is_empty(),
        "fired rules are listed"
    );

    let files = all_bytes(&twin.root);
    assert!(
        files
            .iter()
            .any(|(p, _)| p.to_string_lossy().ends_with(".wrec.zst"))
    );
    for secret in [
        BEARER,
        COOKIE_VALUE,
        QUERY_KEY,
        HEADER_KEY,
        CARD,
        SET_COOKIE_VALUE,
        TEST_HMAC_KEY,
    ] {
        for (path, bytes) in &files {
            assert!(
                !contains(bytes, secret),
                "secret {secret} found in {}",
                path.display()
            );
        }
    }
}

/// What `body` holds after `before` and a token (`wraith_tok_<22 base62>`), if it starts so.
fn around_token<'a>(body: &'a str, before: &str) -> Option<&'a str> {
    let rest = body.strip_prefix(before)?.strip_prefix("wraith_tok_")?;
    let (token, after) = rest.split_at_checked(22)?;
    token
        .bytes()
        .all(|b| b.is_ascii_alphanumeric())
        .then_some(after)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_json_body_keeps_every_byte_but_the_scrubbed_values() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("ledger", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);
    let tail = r#"","price":9.90,"id":123456789012345678901234567890,"exp":1e3,"neg":-0,"id":7 }"#;
    let sent = format!(r#"{{"token":"{BEARER}{tail}"#);

    let r = client()
        .post(format!("{}/orders", rec.url))
        .header("content-type", "application/json")
        .body(sent.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    rec.stop();
    assert_eq!(upstream.seen()[0].body, sent.as_bytes());

    // Only the secret changed: the numbers are spelled as sent and the repeated key is kept.
    let sessions = twin.sessions();
    let recorded = String::from_utf8(sessions[0].exchanges[0].request.body.to_vec()).unwrap();
    assert_eq!(
        around_token(&recorded, r#"{"token":""#),
        Some(tail),
        "{recorded}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_inside_a_secret_named_array_or_object_never_reach_the_twin_folder() {
    const IN_ARRAY: &str = "ak_4rr4y_s3cr3t_v4lu3";
    const IN_OBJECT: &str = "cs_0bj3ct_s3cr3t_v4lu3";
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("keys", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);

    let r = client()
        .post(format!("{}/clients", rec.url))
        .json(&json!({
            "api_key": [IN_ARRAY],
            "client_secret": {"value": IN_OBJECT, "rotated": [{"old": IN_ARRAY}]},
            "name": "ci"
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    rec.stop();
    assert!(contains(&upstream.seen()[0].body, IN_OBJECT));

    let sessions = twin.sessions();
    let ex = &sessions[0].exchanges[0];
    // Request and echoed response alike: the shape is kept, the strings are tokens.
    for body in [ex.request.body.to_vec(), ex.response_body()] {
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let v = v.get("body").unwrap_or(&v);
        assert!(v["api_key"][0].as_str().unwrap().starts_with("wraith_tok_"));
        assert!(
            v["client_secret"]["value"]
                .as_str()
                .unwrap()
                .starts_with("wraith_tok_")
        );
        assert_eq!(v["name"], "ci");
    }
    for (path, bytes) in all_bytes(&twin.root) {
        for secret in [IN_ARRAY, IN_OBJECT] {
            assert!(
                !contains(&bytes, secret),
                "secret {secret} found in {}",
                path.display()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_body_sent_after_a_byte_order_mark_is_scrubbed_and_keeps_the_mark() {
    const PASSWORD: &str = "pw_b0m_pr3f1x3d_s3cr3t";
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("bom", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);
    let mut sent = b"\xEF\xBB\xBF".to_vec();
    sent.extend(format!(r#"{{"password":"{PASSWORD}","user":"ann"}}"#).into_bytes());

    // `…/missing` answers a fixed 404 body, so only the request holds the secret.
    let r = client()
        .post(format!("{}/missing", rec.url))
        .header("content-type", "application/json; charset=utf-8")
        .body(sent.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    rec.stop();
    assert_eq!(upstream.seen()[0].body, sent);

    let sessions = twin.sessions();
    let recorded = &sessions[0].exchanges[0].request.body;
    let after_mark = recorded
        .strip_prefix(b"\xEF\xBB\xBF")
        .expect("the mark is kept");
    let after_mark = String::from_utf8(after_mark.to_vec()).unwrap();
    assert_eq!(
        around_token(&after_mark, r#"{"password":""#),
        Some(r#"","user":"ann"}"#),
        "{after_mark}"
    );
    for (path, bytes) in all_bytes(&twin.root) {
        assert!(
            !contains(&bytes, PASSWORD),
            "secret found in {}",
            path.display()
        );
    }
}

/// The token of `secret` under the tests' key, as the built-in rules write it.
fn token_of(secret: &str) -> String {
    wraith_recording::Scrubber::new(
        wraith_recording::ScrubPolicy::builtin_only(),
        wraith_recording::HmacKey::from_bytes(TEST_HMAC_KEY),
    )
    .tokenize(secret)
}

/// A query value is read as a form reads it, `+` as a space: the same secret sent in a query
/// as `a+b+…` or `a%20b%20…`, in a form body or in a JSON body is the same token, and every
/// other byte of the stored query stays as it was sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_secret_spelled_with_plus_signs_is_the_same_token_as_in_a_form_or_json_body() {
    let upstream = Upstream::start("", None).await;
    let twin = Twin::init("plus", &upstream.base_url);
    let rec = Recording::start(&twin, &[]);
    let http = client();
    for query in [
        "access_token=a+b+secret1&q=red+shoes",
        "access_token=a%20b%20secret1&q=red+shoes",
    ] {
        let r = http
            .get(format!("{}/q?{query}", rec.url))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    let r = http
        .post(format!("{}/f", rec.url))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("access_token=a+b+secret1")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let r = http
        .post(format!("{}/j", rec.url))
        .json(&json!({"access_token": "a b secret1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    rec.stop();

    let tok = token_of("a b secret1");
    let sessions = twin.sessions();
    let ex = &sessions[0].exchanges;
    assert_eq!(ex.len(), 4);
    assert_eq!(
        ex[0].request.query,
        format!("access_token={tok}&q=red+shoes"),
        "only the secret's value is rewritten"
    );
    assert_eq!(
        ex[1].request.query,
        format!("access_token={tok}&q=red+shoes")
    );
    assert_eq!(
        String::from_utf8_lossy(&ex[2].request.body),
        format!("access_token={tok}")
    );
    let body: serde_json::Value = serde_json::from_slice(&ex[3].request.body).unwrap();
    assert_eq!(body["access_token"], tok.as_str());
}
