//! `POST /__wraith/session/{id}/probe`: the handler bound to a request's recorded route runs on
//! a copy of the session and its answer comes back marked `X-Wraith-Probe: handler`; the session
//! keeps none of its writes. Nothing to probe (no route, no handler) is a control 404; the
//! control token guards it like the other session endpoints. Black-box: the real binary on
//! 127.0.0.1 port 0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Server, Twin, model};

/// The recorded update route gets a handler that stores what it is sent and reports the bytes
/// it saw, so a probe that leaked its write would show on a later read.
const UPDATE_HANDLER: &str = r#"local stored = nil
if req.json ~= nil then
  stored = state.put("customers", req.params.id, req.json)
end
local n = 0
if req.body ~= nil then n = #req.body end
return { stored = stored, body_bytes = n, via = "handler" }"#;

fn shop(handlers: &[(&str, &str)]) -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    for (name, src) in handlers {
        t.write(&format!("lua/handlers/{name}"), src);
    }
    t
}

async fn probe(s: &Server, session: &str, envelope: Value, auth: &[(&str, &str)]) -> support::Resp {
    s.send(
        "POST",
        &format!("/__wraith/session/{session}/probe"),
        None,
        auth,
        Some(envelope),
    )
    .await
}

#[tokio::test]
async fn probe_answers_the_bound_handler_and_leaves_the_session_unchanged() {
    let t = shop(&[("update_customer.lua", UPDATE_HANDLER)]);
    let s = t.serve(&[]);
    let created = s
        .post("/v1/customers", Some("s1"), json!({"name": "Grace"}))
        .await;
    assert_eq!(created.status, 200, "{:?}", created.json());
    let id = created.json()["id"].as_str().unwrap().to_string();
    let before = s.get(&format!("/v1/customers/{id}"), Some("s1")).await;
    assert_eq!(before.json()["name"], "Grace");

    let sent = br#"{"name":"Changed"}"#;
    let r = probe(
        &s,
        "s1",
        json!({
            "method": "PATCH",
            "path": format!("/v1/customers/{id}?expand=none"),
            "headers": [["Content-Type", "application/json"]],
            "body_base64": b64(sent),
        }),
        &[],
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("x-wraith-probe"), Some("handler"));
    assert_eq!(r.provenance(), Some("handler"));
    assert_eq!(r.header("x-wraith-route"), Some("PATCH /v1/customers/:id"));
    let body = r.json();
    assert_eq!(body["via"], "handler");
    assert_eq!(body["stored"]["name"], "Changed");
    assert_eq!(body["body_bytes"], sent.len());

    // The probe's write was made on a copy: the session still reads the created record.
    let after = s.get(&format!("/v1/customers/{id}"), Some("s1")).await;
    assert_eq!(after.status, 200);
    assert_eq!(after.json()["name"], "Grace");
    assert_eq!(after.json(), before.json());

    // Bodies travel as bytes: a non-UTF-8 body reaches the handler whole.
    let r = probe(
        &s,
        "s1",
        json!({
            "method": "PATCH",
            "path": format!("/v1/customers/{id}"),
            "headers": [["content-type", "application/octet-stream"]],
            "body_base64": b64(&[0x00, 0xff, 0xfe, 0x10]),
        }),
        &[],
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["body_bytes"], 4);
    assert_eq!(r.json()["stored"], Value::Null);

    // A served request on that route still runs the handler and does write.
    let served = s
        .send(
            "PATCH",
            &format!("/v1/customers/{id}"),
            Some("s1"),
            &[],
            Some(json!({"name": "Served"})),
        )
        .await;
    assert_eq!(served.provenance(), Some("handler"));
    assert_eq!(served.header("x-wraith-probe"), None);
    let read = s.get(&format!("/v1/customers/{id}"), Some("s1")).await;
    assert_eq!(read.json()["name"], "Served");
}

#[tokio::test]
async fn probe_without_a_route_or_handler_is_a_control_404_and_a_bad_envelope_a_400() {
    let t = shop(&[("update_customer.lua", UPDATE_HANDLER)]);
    let s = t.serve(&[]);

    let r = probe(
        &s,
        "s1",
        json!({"method": "GET", "path": "/v9/nothing"}),
        &[],
    )
    .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.header("x-wraith-probe"), None);
    let b = r.json();
    assert_eq!(b["error"], "no-route");
    assert_eq!(b["handlers_on_recorded_routes"], true);

    // A recorded route no handler is bound to.
    let r = probe(
        &s,
        "s1",
        json!({"method": "GET", "path": "/v1/customers"}),
        &[],
    )
    .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.header("x-wraith-probe"), None);
    let b = r.json();
    assert_eq!(b["error"], "no-handler");
    assert_eq!(b["route"], "GET /v1/customers");
    assert_eq!(b["session"], "s1");

    let r = probe(&s, "s1", json!({"method": "GET"}), &[]).await;
    assert_eq!(r.status, 400);
    assert!(
        r.json()["message"].as_str().unwrap().contains("path"),
        "{:?}",
        r.json()
    );
    let r = s.get("/__wraith/session/s1/probe", None).await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("POST"));

    // Without any handler on a recorded route the answer says so, so a caller stops asking.
    let bare = shop(&[]);
    let s = bare.serve(&[]);
    let r = probe(
        &s,
        "s1",
        json!({"method": "PATCH", "path": "/v1/customers/cus_1", "body": "{}"}),
        &[],
    )
    .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["error"], "no-handler");
    assert_eq!(r.json()["handlers_on_recorded_routes"], false);
}

#[tokio::test]
async fn probe_needs_the_control_token_when_one_is_configured() {
    let t = shop(&[("update_customer.lua", UPDATE_HANDLER)]);
    let s = t.serve_env(
        &["--control-token-env", "WRAITH_TEST_CONTROL_TOKEN"],
        &[("WRAITH_TEST_CONTROL_TOKEN", "s3cret-token")],
    );
    let envelope = json!({
        "method": "PATCH",
        "path": "/v1/customers/cus_1",
        "headers": [["content-type", "application/json"]],
        "body": "{\"name\":\"X\"}",
    });
    let r = probe(&s, "s1", envelope.clone(), &[]).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.json()["error"], "unauthorized");
    let r = probe(
        &s,
        "s1",
        envelope.clone(),
        &[("authorization", "Bearer wrong")],
    )
    .await;
    assert_eq!(r.status, 401);
    let r = probe(
        &s,
        "s1",
        envelope,
        &[("authorization", "Bearer s3cret-token")],
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-wraith-probe"), Some("handler"));
    assert_eq!(r.json()["stored"]["name"], "X");
}

#[tokio::test]
async fn probe_refuses_a_session_id_no_header_could_carry_and_creates_no_session() {
    let t = shop(&[("update_customer.lua", UPDATE_HANDLER)]);
    let s = t.serve(&[]);
    let envelope = json!({
        "method": "PATCH",
        "path": "/v1/customers/cus_1",
        "headers": [["content-type", "application/json"]],
        "body": "{\"name\":\"X\"}",
    });
    let long = "z".repeat(1025);
    for (id, why) in [
        (long.as_str(), "at most 1024 bytes"),
        ("a%0Ab%00c", "cannot be sent as an X-Wraith-Session"),
        ("%20padded", "cannot be sent as an X-Wraith-Session"),
    ] {
        let r = probe(&s, id, envelope.clone(), &[]).await;
        assert_eq!(r.status, 400, "{id}");
        assert_eq!(r.json()["error"], "bad-request");
        let message = r.json()["message"].as_str().unwrap().to_string();
        assert!(message.contains(why), "{id}: {message}");
    }
    let listed = s.get("/__wraith/session", None).await;
    assert_eq!(listed.status, 200);
    let text = String::from_utf8_lossy(&listed.body).to_string();
    assert!(!text.contains("zzzz") && !text.contains("padded"), "{text}");
    // The longest id a header may carry is still probed.
    let r = probe(&s, &"z".repeat(1024), envelope, &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-wraith-probe"), Some("handler"));
}

/// A probe answers as a served request of the session would be answered: the handler reads
/// the session's own `X-Wraith-Session`, never one the envelope sent for another session, and
/// the session's state.
#[tokio::test]
async fn probe_carries_the_sessions_own_session_header_whatever_the_envelope_says() {
    let t = shop(&[(
        "get_customer.lua",
        r#"return { session = req.headers["x-wraith-session"] or "none",
                    n = state.count("customers") }"#,
    )]);
    let s = t.serve(&[]);
    let created = s
        .post("/v1/customers", Some("A"), json!({"name": "Grace"}))
        .await;
    assert_eq!(created.status, 200, "{:?}", created.json());
    let served_a = s.get("/v1/customers/cus_new", Some("A")).await;
    let served_b = s.get("/v1/customers/cus_new", Some("B")).await;
    assert_eq!(served_a.json()["session"], "A");
    assert_eq!(served_b.json()["session"], "B");
    assert_ne!(served_a.json()["n"], served_b.json()["n"]);
    let served_none = s.get("/v1/customers/cus_new", None).await;
    assert_eq!(served_none.json()["session"], "none");

    for headers in [
        json!([]),
        json!([["X-Wraith-Session", "B"]]),
        json!([["x-wraith-session", "B"], ["X-WRAITH-SESSION", "C"]]),
    ] {
        let r = probe(
            &s,
            "A",
            json!({"method": "GET", "path": "/v1/customers/cus_new", "headers": headers}),
            &[],
        )
        .await;
        assert_eq!(r.status, 200, "{headers}");
        assert_eq!(r.header("x-wraith-probe"), Some("handler"));
        assert_eq!(r.json(), served_a.json(), "{headers}");
    }
}

#[tokio::test]
async fn probe_refuses_a_header_no_request_can_carry_naming_it() {
    let t = shop(&[("update_customer.lua", UPDATE_HANDLER)]);
    let s = t.serve(&[]);
    for (headers, named) in [
        (json!([["bad name", "1"]]), "\"bad name\""),
        (json!([["x-a", "line\nbreak"]]), "`x-a`"),
        (json!([["x-a", "carriage\rreturn"]]), "`x-a`"),
    ] {
        let r = probe(
            &s,
            "s1",
            json!({"method": "PATCH", "path": "/v1/customers/cus_1", "headers": headers,
                   "body": "{}"}),
            &[],
        )
        .await;
        assert_eq!(r.status, 400, "{headers}");
        assert_eq!(r.header("x-wraith-probe"), None);
        assert_eq!(r.json()["error"], "bad-request");
        let message = r.json()["message"].as_str().unwrap().to_string();
        assert!(
            message.contains(named) && message.contains("not one a request can carry"),
            "{headers}: {message}"
        );
    }
}

#[tokio::test]
async fn probe_of_a_new_session_past_max_namespaces_answers_503_namespace_unavailable() {
    let t = shop(&[("update_customer.lua", UPDATE_HANDLER)]);
    t.set_toml("serve.limits", "max_namespaces", "2");
    let s = t.serve(&[]);
    s.get("/v1/customers", Some("s1")).await;
    s.get("/v1/customers", Some("s2")).await;
    let envelope = json!({
        "method": "PATCH",
        "path": "/v1/customers/cus_1",
        "headers": [["content-type", "application/json"]],
        "body": "{\"name\":\"X\"}",
    });
    let r = probe(&s, "s3", envelope.clone(), &[]).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.json()["error"], "namespace-unavailable");
    assert_eq!(r.header("x-wraith-probe"), None);
    // A session that exists is still probed.
    let r = probe(&s, "s1", envelope, &[]).await;
    assert_eq!(r.status, 200);
}

/// Standard base64 with padding, written out so the test does not share the encoder under test.
fn b64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
