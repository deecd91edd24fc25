//! A create the recordings refused (409) only for a name a record of the session still held
//! (`Guard::DuplicateValue`) is refused in a session that holds the name and accepted in one
//! that does not, even for a request body a recording only ever answered with the refusal.
//! Black-box: the real binary on a widgets twin built from HARs written here, each a
//! fresh-store session.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "duplicate-values-test-key");
const ORIGIN: &str = "https://api.widgets.test";

fn create(body: Value, answer: &Value, status: u16) -> Value {
    har::with_status(
        har::entry(ORIGIN, "POST", "/v1/widgets", Some(&body), answer),
        status,
    )
}

/// Recorded session `n`: creates `first-n` (with a color) and `second-n`, is refused a bare
/// `{"name": "first-n"}`, deletes `second-n` and creates it again.
fn record(t: &Twin, n: u64) {
    let first = format!("first-{n}");
    let second = format!("second-{n}");
    let w = |k: u64, name: &str| json!({"id": format!("wid_{n:02}{k:02}Kq9Lm2Rt"), "name": name});
    let conflict = json!({"error": "conflict", "message": "name already taken"});
    let entries = vec![
        create(json!({"name": first, "color": "red"}), &w(0, &first), 201),
        create(json!({"name": second}), &w(1, &second), 201),
        create(json!({"name": first}), &conflict, 409),
        har::with_status(
            har::entry(
                ORIGIN,
                "DELETE",
                &format!("/v1/widgets/wid_{n:02}01Kq9Lm2Rt"),
                None,
                &json!({}),
            ),
            204,
        ),
        create(json!({"name": second}), &w(2, &second), 201),
    ];
    har::import(t, &[KEY], &format!("session-{n}.har"), entries);
}

#[tokio::test]
async fn a_create_is_refused_for_a_name_the_session_holds_and_accepted_for_a_fresh_one() {
    let t = twin();
    let s = t.serve_env(&[], &[KEY]);
    let made = s
        .post("/v1/widgets", Some("a"), json!({"name": "oscar"}))
        .await;
    made.assert_status(201);
    let again = s
        .post("/v1/widgets", Some("a"), json!({"name": "oscar"}))
        .await;
    again.assert_status(409);
    assert_eq!(
        again.json(),
        json!({"error": "conflict", "message": "name already taken"})
    );
    s.post("/v1/widgets", Some("a"), json!({"name": "papa"}))
        .await
        .assert_status(201);
    // Another session holds no `oscar`.
    s.post("/v1/widgets", Some("b"), json!({"name": "oscar"}))
        .await
        .assert_status(201);
    // Deleted, the name is free again.
    let id = made.json()["id"].as_str().unwrap().to_string();
    s.delete(&format!("/v1/widgets/{id}"), Some("a"))
        .await
        .assert_status(204);
    s.post("/v1/widgets", Some("a"), json!({"name": "oscar"}))
        .await
        .assert_status(201);
}

#[tokio::test]
async fn a_body_recorded_only_refused_is_accepted_where_no_record_holds_its_name() {
    let t = twin();
    let s = t.serve_env(&[], &[KEY]);
    // `{"name": "first-0"}` was recorded once, refused: that run held a `first-0`. This
    // session, two creates in as that run was, holds none.
    for name in ["one", "two"] {
        s.post("/v1/widgets", Some("c"), json!({"name": name}))
            .await
            .assert_status(201);
    }
    let fresh = s
        .post("/v1/widgets", Some("c"), json!({"name": "first-0"}))
        .await;
    fresh.assert_status(201);
    assert_eq!(fresh.json()["name"], json!("first-0"));
    s.post("/v1/widgets", Some("c"), json!({"name": "first-0"}))
        .await
        .assert_status(409);
}

fn twin() -> Twin {
    har::synth_twin("widgets", ORIGIN, &[KEY], 4, record)
}

/// Recorded session `n` of projects keyed by their names: creates `first-n` and `second-n`,
/// reads `first-n` by its name, is refused a create without a name and one repeating
/// `first-n`, both with `422`.
fn record_projects(t: &Twin, n: u64) {
    let first = format!("first-{n}");
    let second = format!("second-{n}");
    let p = |name: &str| json!({"name": name, "description": format!("about {name}")});
    let invalid = |body: Value, code: &str| {
        let answer = json!({"message": "Validation Failed",
            "errors": [{"field": "name", "code": code}]});
        har::with_status(
            har::entry(ORIGIN, "POST", "/v1/projects", Some(&body), &answer),
            422,
        )
    };
    let entries = vec![
        har::entry(
            ORIGIN,
            "POST",
            "/v1/projects",
            Some(&json!({"name": first})),
            &p(&first),
        ),
        har::entry(
            ORIGIN,
            "POST",
            "/v1/projects",
            Some(&json!({"name": second})),
            &p(&second),
        ),
        har::entry(
            ORIGIN,
            "GET",
            &format!("/v1/projects/{first}"),
            None,
            &p(&first),
        ),
        invalid(json!({"description": format!("run {n}")}), "missing_field"),
        invalid(json!({"name": first}), "already_exists"),
    ];
    har::import(t, &[KEY], &format!("projects-{n}.har"), entries);
}

#[tokio::test]
async fn a_name_key_taken_is_refused_beside_the_missing_name_refusal_of_the_same_status() {
    let t = har::synth_twin("projects", ORIGIN, &[KEY], 4, record_projects);
    let s = t.serve_env(&[], &[KEY]);
    let session = Some("a");
    s.post("/v1/projects", session, json!({"name": "oscar"}))
        .await
        .assert_status(200);
    let again = s
        .post("/v1/projects", session, json!({"name": "oscar"}))
        .await;
    again.assert_status(422);
    assert_eq!(again.json()["errors"][0]["code"], "already_exists");
    let bare = s
        .post("/v1/projects", session, json!({"description": "none"}))
        .await;
    bare.assert_status(422);
    assert_eq!(bare.json()["errors"][0]["code"], "missing_field");
    s.post("/v1/projects", session, json!({"name": "papa"}))
        .await
        .assert_status(200);
}

/// Recorded session `n`: alice and bob each create `shared-n`, and alice is refused a second
/// one: a name unique per user, not across them.
fn record_per_user(t: &Twin, n: u64) {
    let name = format!("shared-{n}");
    let w = |k: u64| json!({"id": format!("wid_{n:02}{k:02}Kq9Lm2Rt"), "name": name});
    let conflict = json!({"error": "conflict", "message": "name already taken"});
    let entries = vec![
        har::by(
            "Bearer alice",
            201,
            create(json!({"name": name}), &w(0), 201),
        ),
        har::by("Bearer bob", 201, create(json!({"name": name}), &w(1), 201)),
        har::by(
            "Bearer alice",
            409,
            create(json!({"name": name}), &conflict, 409),
        ),
    ];
    har::import(t, &[KEY], &format!("session-{n}.har"), entries);
}

#[tokio::test]
async fn a_name_unique_per_user_is_refused_to_its_owner_and_accepted_for_another() {
    let t = Twin::init("widgets", ORIGIN);
    for n in 0..3 {
        record_per_user(&t, n);
    }
    har::synth(&t, &[KEY]);
    let s = t.serve_env(&[], &[KEY]);
    let as_ = |who: &'static str| [("authorization", who)];
    let post = |who: &'static str| {
        let s = &s;
        async move {
            s.send(
                "POST",
                "/v1/widgets",
                Some("a"),
                &as_(who),
                Some(json!({"name": "oscar"})),
            )
            .await
        }
    };
    post("Bearer alice").await.assert_status(201);
    post("Bearer bob").await.assert_status(201);
    post("Bearer alice").await.assert_status(409);
    post("Bearer bob").await.assert_status(409);
}
