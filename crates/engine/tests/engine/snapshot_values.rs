//! A template answer's observed values come from one recorded answer (the snapshot): a value
//! recorded past the eight a hole renders (`more_examples`) is still that answer's value.

use crate::support;

use serde_json::json;
use support::*;
use wraith_model::*;

/// `GET /v1/hosts/:id` recorded once, answering host `h9`: the hole at `host` keeps `h1`…`h8`
/// as its rendered examples and `h9` among the values recorded past them.
fn hosts() -> wraith_engine::Engine {
    let Node::Hole(mut host) = hole(
        HoleKind::Observed,
        JsonType::String,
        (1..=8).map(|i| json!(format!("h{i}"))).collect(),
    ) else {
        unreachable!("hole() builds a hole")
    };
    host.more_examples = vec![json!("h9")];
    let read = R::new("GET", "/v1/hosts/:id")
        .variant(
            200,
            Guard::Always,
            obj(vec![("id", echo_path("id")), ("host", Node::Hole(host))]),
        )
        .exact(
            "/v1/hosts/1",
            "",
            None,
            vec![moment("s1/0", 200, json!({"id": "1", "host": "h9"}))],
        )
        .build();
    engine(model(vec![read], Vec::new()), det_opts())
}

#[test]
fn snapshot_value_recorded_past_the_rendered_examples_is_rendered() {
    let e = hosts();
    // Not the recorded request, so the template renders it, from the recorded answer.
    let r = get(&e, Some("a"), "/v1/hosts/2");
    assert_eq!(r.status, 200);
    assert_eq!(body(&r)["host"], json!("h9"));
}
