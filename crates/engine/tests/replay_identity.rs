//! Exact replay keeps who asked: each principal walks its own recorded moments of a key in
//! order.

mod support;

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
