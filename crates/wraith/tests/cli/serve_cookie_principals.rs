//! A browser's API knows its user by a session cookie: the twin does too. The session cookie
//! of a recorded request names its principal (the rest of the `Cookie` header does not), a
//! served request's session cookie is recognised through the twin's scrub key, a cookie no
//! recording sent stands in for a recorded user, and a request without one is answered as
//! the requests recorded without one were. Black-box: the real binary on HAR runs written
//! here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "cookie-principals-test-key");
const ORIGIN: &str = "https://app.cookies.test";

/// `GET /api/me` sent with `cookie` (none when `None`), answered `status` with `body`, an
/// hour after the run before it.
fn me(run: usize, cookie: Option<&str>, status: u16, body: &Value) -> Value {
    let mut e = har::with_status(har::entry(ORIGIN, "GET", "/api/me", None, body), status);
    e["startedDateTime"] = json!(format!("2026-06-01T1{run}:00:00.000Z"));
    match cookie {
        Some(cookie) => har::with_header(e, "Cookie", cookie),
        None => e,
    }
}

fn app_twin() -> Twin {
    let t = Twin::init("app", ORIGIN);
    let runs = [
        me(0, None, 401, &json!({"error": "login required"})),
        me(
            1,
            Some("_ga=GA1.1.5; sessionid=ann-s3cret"),
            200,
            &json!({"user": "ann"}),
        ),
        me(
            2,
            Some("sessionid=ben-s3cret; theme=dark"),
            200,
            &json!({"user": "ben"}),
        ),
        me(
            3,
            Some("sessionid=ann-s3cret"),
            200,
            &json!({"user": "ann"}),
        ),
    ];
    for (n, e) in runs.into_iter().enumerate() {
        har::import(&t, &[KEY], &format!("run{n}.har"), vec![e]);
    }
    har::synth(&t, &[KEY]);
    t
}

async fn me_with(server: &support::Server, session: &str, cookie: Option<&str>) -> (u16, Value) {
    let headers: Vec<(&str, &str)> = cookie.map(|c| ("Cookie", c)).into_iter().collect();
    let r = server
        .send("GET", "/api/me", Some(session), &headers, None)
        .await;
    (r.status, r.json())
}

#[tokio::test]
async fn a_session_cookie_is_the_user_it_was_recorded_as() {
    let t = app_twin();
    let server = t.serve_env(&[], &[KEY]);
    // Recorded session cookies, whatever other cookies ride along.
    let ben = me_with(&server, "b", Some("_ga=other; sessionid=ben-s3cret")).await;
    assert_eq!(ben, (200, json!({"user": "ben"})));
    let ann = me_with(&server, "a", Some("sessionid=ann-s3cret; theme=light")).await;
    assert_eq!(ann, (200, json!({"user": "ann"})));
    // A login the recordings never saw plays the most active recorded user.
    let new = me_with(&server, "n", Some("sessionid=fresh-login")).await;
    assert_eq!(new, (200, json!({"user": "ann"})));
    // No session cookie: the recorded anonymous answer.
    let anonymous = me_with(&server, "x", Some("_ga=GA1.1.9")).await;
    assert_eq!(anonymous, (401, json!({"error": "login required"})));
}
