//! A read of a record the session deleted, on a route that recorded no 4xx answer, answers 404
//! in the provider's own not-found shape: the constant 404 body most other routes recorded
//! (provenance `miss`), not one the engine invents, so a client's error parsing works. With no
//! recorded 404 anywhere the engine's own body remains.

use crate::support;

use serde_json::json;
use support::*;
use wraith_engine::Provenance;
use wraith_model::*;

fn widget_routes() -> Vec<Route> {
    let fields = || {
        obj(vec![
            ("id", gen_id(cus_id())),
            ("name", echo_body("/name", JsonType::String)),
        ])
    };
    vec![
        R::new("POST", "/v1/widgets")
            .op(StateOp::Create, "widgets")
            .variant(200, Guard::Always, fields())
            .build(),
        R::new("GET", "/v1/widgets/:id")
            .op(StateOp::Read, "widgets")
            .variant(200, Guard::Always, fields())
            .build(),
        R::new("DELETE", "/v1/widgets/:id")
            .op(StateOp::Delete, "widgets")
            .variant(200, Guard::Always, obj(vec![]))
            .build(),
    ]
}

/// A read route of another type recording only a 404 answer with `body`.
fn missing_route(path: &str, body: serde_json::Value) -> Route {
    R::new("GET", path)
        .variant(404, Guard::Always, c(body))
        .build()
}

fn widgets(extra: Vec<Route>) -> wraith_engine::Engine {
    let mut routes = widget_routes();
    routes.extend(extra);
    engine(
        model(routes, vec![("widgets", entity_type(&[], &[], Vec::new()))]),
        det_opts(),
    )
}

fn read_after_delete(e: &wraith_engine::Engine) -> wraith_engine::Response {
    let s = Some("s");
    let created = body(&send(e, s, "POST", "/v1/widgets", json!({"name": "w"})));
    let path = format!("/v1/widgets/{}", created["id"].as_str().unwrap_or_default());
    assert_eq!(send(e, s, "DELETE", &path, json!({})).status, 200);
    get(e, s, &path)
}

#[test]
fn a_deleted_record_reads_404_in_the_not_found_shape_most_routes_recorded() {
    let provider = json!({"errors": [{"reason": "Not found"}]});
    let e = widgets(vec![
        missing_route("/v1/gadgets/:id", provider.clone()),
        missing_route("/v1/gizmos/:id", provider.clone()),
        missing_route("/v1/other/:id", json!({"message": "gone"})),
    ]);
    let r = read_after_delete(&e);
    assert_eq!(r.status, 404);
    assert_eq!(body(&r), provider);
    assert_eq!(r.provenance, Provenance::Miss);
}

#[test]
fn without_a_recorded_404_a_deleted_record_reads_the_engines_own_404() {
    let r = read_after_delete(&widgets(Vec::new()));
    assert_eq!(r.status, 404);
    assert_eq!(body(&r)["error"], json!("not_found"));
}
