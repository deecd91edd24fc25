//! A `null` the recordings answered where the request sent `null` at the same pointer is an
//! echo (synth's same-pointer rule): a request setting a value there gets that value back, and
//! a request without the field gets the recorded `null`.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_model::*;

fn settings() -> wraith_engine::Engine {
    let Node::Hole(mut linode) = echo_body("/ids/linode", JsonType::Null) else {
        unreachable!("echo_body builds a hole")
    };
    linode.examples = vec![Value::Null];
    let put = R::new("PUT", "/v1/settings")
        .variant(
            200,
            Guard::Always,
            obj(vec![("ids", obj(vec![("linode", Node::Hole(linode))]))]),
        )
        .build();
    engine(model(vec![put], Vec::new()), det_opts())
}

#[test]
fn null_echo_answers_the_value_the_request_set() {
    let e = settings();
    let r = send(
        &e,
        Some("a"),
        "PUT",
        "/v1/settings",
        json!({"ids": {"linode": 5}}),
    );
    assert_eq!(r.status, 200);
    assert_eq!(body(&r)["ids"]["linode"], json!(5));
    let cleared = send(
        &e,
        Some("a"),
        "PUT",
        "/v1/settings",
        json!({"ids": {"linode": null}}),
    );
    assert_eq!(body(&cleared)["ids"]["linode"], Value::Null);
    let absent = send(&e, Some("a"), "PUT", "/v1/settings", json!({}));
    assert_eq!(body(&absent)["ids"]["linode"], Value::Null);
}
