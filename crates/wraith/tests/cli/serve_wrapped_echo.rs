//! Booleans a form request sets inside one wrapping key (`data[alerts][poll]=1`) and the
//! answer shows one level up (`alerts.poll: true`) are echoes: synth learns the source from
//! the recordings, and the served twin answers each subscription with the flags its own
//! request set (`1`/`0` spelled form booleans), and none when it set none. Black-box: the real
//! binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "wrapped-echo-test-key");
const ORIGIN: &str = "https://api.alerts.test";

/// A recorded subscription create sent as the form `body`, answered with `alerts`.
fn create(id: u64, body: &str, alerts: &Value) -> Value {
    let mut e = har::entry(
        ORIGIN,
        "POST",
        "/v1/subscription",
        None,
        &json!({"id": id, "endpoint": "https://push.test", "alerts": alerts}),
    );
    e["request"]["headers"] = json!([
        {"name": "Content-Type", "value": "application/x-www-form-urlencoded"}
    ]);
    e["request"]["postData"] =
        json!({"mimeType": "application/x-www-form-urlencoded", "text": body});
    e["request"]["bodySize"] = json!(body.len());
    e
}

fn alerts_twin() -> Twin {
    let t = Twin::init("alerts", ORIGIN);
    let sessions = [
        (
            "endpoint=https%3A%2F%2Fpush.test&data%5Balerts%5D%5Bpoll%5D=1&data%5Balerts%5D%5Bfollow%5D=1",
            json!({"poll": true, "follow": true}),
        ),
        (
            "endpoint=https%3A%2F%2Fpush.test&data%5Balerts%5D%5Bpoll%5D=0&data%5Balerts%5D%5Bfollow%5D=0",
            json!({"poll": false, "follow": false}),
        ),
        (
            "endpoint=https%3A%2F%2Fpush.test&data%5Balerts%5D%5Bpoll%5D=1",
            json!({"poll": true}),
        ),
        ("endpoint=https%3A%2F%2Fpush.test", json!({})),
    ];
    for (n, (body, alerts)) in sessions.iter().enumerate() {
        har::import(
            &t,
            &[KEY],
            &format!("s{n}.har"),
            vec![create(n as u64 + 1, body, alerts)],
        );
    }
    har::synth(&t, &[KEY]);
    t
}

#[tokio::test]
async fn a_served_subscription_shows_the_wrapped_flags_its_form_request_set() {
    let t = alerts_twin();
    let server = t.serve_env(&[], &[KEY]);
    let send = |body: &'static str| {
        server
            .client
            .post(format!("{}/v1/subscription", server.url))
            .header("X-Wraith-Session", "agent-1")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
    };
    // A combination no recording sent: follow on, poll off.
    let r = send(
        "endpoint=https%3A%2F%2Fpush.test&data%5Balerts%5D%5Bpoll%5D=0&data%5Balerts%5D%5Bfollow%5D=1",
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["alerts"], json!({"poll": false, "follow": true}), "{v}");
    // No flag sent: no flag answered.
    let r = send("endpoint=https%3A%2F%2Fpush.test&x=1").await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["alerts"], json!({}), "{v}");
}
