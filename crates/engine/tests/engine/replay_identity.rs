//! Exact replay keeps who asked and what the session was given: each principal walks its own
//! recorded moments of a key in order, and a moment of another run that embeds that run's own
//! record of the session's create names the session's record instead.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_engine::Engine;
use wraith_model::*;

fn with_principal(mut m: Moment, principal: &str) -> Moment {
    m.principal = Some(principal.to_string());
    m
}

fn send_as(e: &Engine, who: &str, method: &str, path: &str) -> Value {
    let r = with_header(req(method, path, None), "authorization", who);
    body(&e.handle(Some("s"), &r))
}

#[test]
fn each_principal_gets_its_own_recorded_moments_of_a_key_in_order() {
    // One run recorded `POST /v1/posts/7/like` four times, twice by each of two users.
    let like = R::new("POST", "/v1/posts/:id/like")
        .variant(200, Guard::Always, c(json!({"n": 0})))
        .exact(
            "/v1/posts/7/like",
            "",
            None,
            vec![
                with_principal(moment("r/0", 200, json!({"n": "a1"})), "Bearer a"),
                with_principal(moment("r/1", 200, json!({"n": "b1"})), "Bearer b"),
                with_principal(moment("r/2", 200, json!({"n": "a2"})), "Bearer a"),
                with_principal(moment("r/3", 200, json!({"n": "b2"})), "Bearer b"),
            ],
        )
        .build();
    let e = engine(model(vec![like], vec![]), det_opts());
    let got: Vec<Value> = ["Bearer a", "Bearer b", "Bearer b", "Bearer a"]
        .iter()
        .map(|who| send_as(&e, who, "POST", "/v1/posts/7/like")["n"].clone())
        .collect();
    assert_eq!(
        got,
        vec![json!("a1"), json!("b1"), json!("b2"), json!("a2")]
    );
}

#[test]
fn a_moment_embedding_another_runs_record_of_the_sessions_create_names_the_sessions_record() {
    // Runs a and b both recorded the same create (ids 1 and 2); only run b recorded the
    // notification page that embeds its list.
    let post = lists_create(&[("a/0", "1"), ("b/0", "2")]);
    let page = json!([{
        "id": "n9",
        "type": "listed",
        "list": {"id": "2", "title": "t", "url": "https://x.example/lists/2"},
        "note": "lists/2 and 22 stay as recorded outside the list"
    }]);
    let e = lists_with_run_b_notes(post, page);
    let created = body(&send(
        &e,
        Some("s"),
        "POST",
        "/v1/lists",
        json!({"title": "t"}),
    ));
    let mine = created["id"].as_str().unwrap_or_default().to_string();
    assert_eq!(mine, "1", "the create is answered from run a: {created}");
    let got = body(&get(&e, Some("s"), "/v1/notes"));
    assert_eq!(got[0]["list"]["id"], json!("1"), "{got}");
    assert_eq!(
        got[0]["list"]["url"],
        json!("https://x.example/lists/1"),
        "{got}"
    );
    assert_eq!(got[0]["id"], json!("n9"), "{got}");
    assert_eq!(
        got[0]["note"],
        json!("lists/2 and 22 stay as recorded outside the list"),
        "{got}"
    );
}
