//! A whole-array echo (synth's `array_echo`): an answer array that repeated, in every recorded
//! answer, the array the request sent at the same pointer answers the request's own array.

use crate::support;

use serde_json::json;
use support::*;
use wraith_model::*;

#[test]
fn array_echo_answers_the_array_the_request_sent() {
    let Node::Hole(mut rules) = echo_body("/rules/inbound", JsonType::Array) else {
        unreachable!("echo_body builds a hole")
    };
    rules.examples = vec![json!([{"protocol": "TCP"}]), json!([])];
    let create = R::new("POST", "/v1/firewalls")
        .variant(
            200,
            Guard::Always,
            obj(vec![("rules", obj(vec![("inbound", Node::Hole(rules))]))]),
        )
        .build();
    let e = engine(model(vec![create], Vec::new()), det_opts());
    let sent = json!([{"protocol": "ICMP", "label": "ping"}, {"protocol": "50"}]);
    let r = send(
        &e,
        Some("a"),
        "POST",
        "/v1/firewalls",
        json!({"rules": {"inbound": sent}}),
    );
    assert_eq!(r.status, 200);
    assert_eq!(body(&r)["rules"]["inbound"], sent);
}
