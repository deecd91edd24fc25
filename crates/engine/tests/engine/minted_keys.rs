//! A key the API minted more than once (recordings that scrub minted ids to one value): each
//! create made a record of its own, so the key answers as many deletes as it had creates.

use crate::support;

use serde_json::json;
use support::*;
use wraith_model::*;

/// Reserve an address (the answer's `id` is one recorded value, whatever the request), read
/// it, release it.
fn addresses(client_keyed: bool) -> wraith_engine::Engine {
    let id = if client_keyed {
        echo_body("/id", JsonType::String)
    } else {
        c(json!("192.0.2.0"))
    };
    let create = R::new("POST", "/v1/addresses")
        .op(StateOp::Create, "addresses")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", id),
                ("region", echo_body("/region", JsonType::String)),
            ]),
        )
        .build();
    let read = R::new("GET", "/v1/addresses/:id")
        .op(StateOp::Read, "addresses")
        .variant(
            404,
            member(false),
            obj(vec![("error", c(json!("Not found")))]),
        )
        .variant(
            200,
            Guard::Always,
            obj(vec![("id", echo_path("id")), ("region", c(json!("x")))]),
        )
        .build();
    let delete = R::new("DELETE", "/v1/addresses/:id")
        .op(StateOp::Delete, "addresses")
        .variant(
            404,
            member(false),
            obj(vec![("error", c(json!("Not found")))]),
        )
        .variant(200, Guard::Always, obj(vec![]))
        .build();
    let mut ty = entity_type(&[], &[], Vec::new());
    ty.id_shape = None;
    engine(
        model(vec![create, read, delete], vec![("addresses", ty)]),
        det_opts(),
    )
}

#[test]
fn a_key_minted_by_three_creates_answers_three_deletes_then_not_found() {
    let e = addresses(false);
    let s = Some("reserve");
    for _ in 0..3 {
        let r = send(&e, s, "POST", "/v1/addresses", json!({"region": "au-mel"}));
        assert_eq!(r.status, 200);
        assert_eq!(body(&r)["id"], json!("192.0.2.0"));
    }
    let del = |e: &wraith_engine::Engine| {
        e.handle(s, &req("DELETE", "/v1/addresses/192.0.2.0", None))
            .status
    };
    assert_eq!(del(&e), 200);
    assert_eq!(del(&e), 200);
    // One record still holds the key: it reads.
    assert_eq!(get(&e, s, "/v1/addresses/192.0.2.0").status, 200);
    assert_eq!(del(&e), 200);
    assert_eq!(del(&e), 404, "every record under the key is gone");
    assert_eq!(get(&e, s, "/v1/addresses/192.0.2.0").status, 404);
}

#[test]
fn a_key_the_client_named_twice_is_one_record_deleted_once() {
    let e = addresses(true);
    let s = Some("named");
    for region in ["au-mel", "us-sea"] {
        let r = send(
            &e,
            s,
            "POST",
            "/v1/addresses",
            json!({"id": "mine", "region": region}),
        );
        assert_eq!(r.status, 200);
        assert_eq!(body(&r)["id"], json!("mine"));
    }
    let first = e.handle(s, &req("DELETE", "/v1/addresses/mine", None));
    assert_eq!(first.status, 200);
    let second = e.handle(s, &req("DELETE", "/v1/addresses/mine", None));
    assert_eq!(second.status, 404, "the second create replaced the first");
}

/// Sessions that each create three items with short sequential keys (`it_0_0`, `it_0_1`,
/// ...), read, list and delete each: the keys are distinct, but no id shape describes them,
/// so synth picks the create's key among the recorded ones.
fn sequential_key_sessions() -> Vec<wraith_recording::RecordedSession> {
    (0..4)
        .map(|s| {
            let mut ex = Vec::new();
            let mut n = 0u64;
            let mut push =
                |m: &str, p: &str, b: Option<serde_json::Value>, r: serde_json::Value| {
                    ex.push(json_exchange(n, m, p, b, r));
                    n += 1;
                };
            for i in 0..3 {
                let id = format!("it_{s}_{i}");
                let rec = json!({"id": id, "name": format!("n{i}"), "price": i * 10});
                let sent = json!({"name": format!("n{i}"), "price": i * 10});
                push("POST", "/items", Some(sent), rec.clone());
                push("GET", &format!("/items/{id}"), None, rec.clone());
                push("GET", "/items", None, json!({"data": [rec], "total": 1}));
                push("DELETE", &format!("/items/{id}"), None, json!({}));
            }
            recorded_session(&format!("s{s}"), ex)
        })
        .collect()
}

#[test]
fn creates_whose_recorded_keys_are_sequential_each_answer_a_key_of_their_own() {
    let model = synthesize(&sequential_key_sessions(), "items");
    let e = engine(model, det_opts());
    let s = Some("dup");
    let mut ids = Vec::new();
    for name in ["A", "B", "C"] {
        let r = send(&e, s, "POST", "/items", json!({"name": name, "price": 1}));
        assert_eq!(r.status, 200);
        let id = body(&r)["id"].clone();
        assert!(!ids.contains(&id), "{id} answered twice: {ids:?}");
        ids.push(id);
    }
    // Each record reads back as created, none overwritten by a later create.
    for (id, name) in ids.iter().zip(["A", "B", "C"]) {
        let id = id.as_str().unwrap_or_default();
        assert!(id.starts_with("it_"), "a key in the recorded shape: {id}");
        let r = get(&e, s, &format!("/items/{id}"));
        assert_eq!(r.status, 200, "{id}");
        assert_eq!(body(&r)["name"], json!(name), "{id}");
    }
}
