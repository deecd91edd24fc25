//! A record the session created is read back in the state every recorded read showed where
//! it still holds the state every recorded create answered (a volume created `creating`,
//! read `active`); fields the create took from the request keep the stored value.

use crate::support;

use serde_json::json;
use support::*;
use wraith_model::*;

/// A `volumes` route answering 200 with an object of `fields`.
fn volume_route(method: &str, path: &str, op: StateOp, fields: Vec<(&str, Node)>) -> Route {
    R::new(method, path)
        .op(op, "volumes")
        .variant(200, Guard::Always, obj(fields))
        .build()
}

/// An engine over `routes` and the (recordless) `volumes` type.
fn volumes_engine(routes: Vec<Route>) -> wraith_engine::Engine {
    engine(
        model(routes, vec![("volumes", entity_type(&[], &[], Vec::new()))]),
        det_opts(),
    )
}

fn volumes() -> wraith_engine::Engine {
    let create = volume_route(
        "POST",
        "/v1/volumes",
        StateOp::Create,
        vec![
            ("id", gen_id(cus_id())),
            ("status", c(json!("creating"))),
            ("size", echo_body("/size", JsonType::Number)),
            ("tags", c(json!([]))),
            ("phase", c(json!("provisioning"))),
            ("stage", c(json!("new"))),
        ],
    );
    let read = volume_route(
        "GET",
        "/v1/volumes/:id",
        StateOp::Read,
        vec![
            ("id", echo_path("id")),
            ("status", c(json!("active"))),
            ("size", c(json!(10))),
            ("tags", c(json!(["a"]))),
            (
                "phase",
                hole(
                    HoleKind::Observed,
                    JsonType::String,
                    vec![json!("active"), json!("inactive")],
                ),
            ),
            (
                "stage",
                hole(
                    HoleKind::Observed,
                    JsonType::String,
                    vec![json!("new"), json!("done")],
                ),
            ),
        ],
    );
    volumes_engine(vec![create, read])
}

#[test]
fn a_created_record_reads_back_in_the_state_every_recorded_read_showed() {
    let e = volumes();
    let s = Some("vol");
    let created = body(&send(&e, s, "POST", "/v1/volumes", json!({"size": 20})));
    assert_eq!(created["status"], json!("creating"));
    let id = created["id"].as_str().unwrap_or_default().to_string();
    let read = get(&e, s, &format!("/v1/volumes/{id}"));
    assert_eq!(read.status, 200);
    let b = body(&read);
    assert_eq!(
        b["status"],
        json!("active"),
        "the create's constant settles"
    );
    assert_eq!(b["size"], json!(20), "a value the request gave is kept");
    assert_eq!(b["tags"], json!([]), "a constant list is data, not a state");
    assert!(
        [json!("active"), json!("inactive")].contains(&b["phase"]),
        "no recorded read showed the create's value: one the reads showed, {}",
        b["phase"]
    );
    assert_eq!(
        b["stage"],
        json!("new"),
        "recorded reads showed it too: kept"
    );
    assert_eq!(b["id"], json!(id));
}

/// [`volumes`] with an update (`PUT /v1/volumes/:id`) whose every recorded answer showed the
/// record `active` and echoed the `label` it was sent.
fn volumes_with_update() -> wraith_engine::Engine {
    let create = volume_route(
        "POST",
        "/v1/volumes",
        StateOp::Create,
        vec![
            ("id", gen_id(cus_id())),
            ("status", c(json!("creating"))),
            ("label", echo_body("/label", JsonType::String)),
        ],
    );
    let update = volume_route(
        "PUT",
        "/v1/volumes/:id",
        StateOp::Update,
        vec![
            ("id", echo_path("id")),
            ("status", c(json!("active"))),
            ("label", echo_body("/label", JsonType::String)),
        ],
    );
    let read = volume_route(
        "GET",
        "/v1/volumes/:id",
        StateOp::Read,
        vec![("id", echo_path("id")), ("status", c(json!("active")))],
    );
    volumes_engine(vec![create, update, read])
}

#[test]
fn an_update_of_a_created_record_answers_and_stores_the_state_every_recorded_update_showed() {
    let e = volumes_with_update();
    let s = Some("vol");
    let created = body(&send(&e, s, "POST", "/v1/volumes", json!({"label": "a"})));
    assert_eq!(created["status"], json!("creating"));
    let id = created["id"].as_str().unwrap_or_default().to_string();
    let path = format!("/v1/volumes/{id}");
    let updated = body(&send(&e, s, "PUT", &path, json!({"label": "b"})));
    assert_eq!(
        updated["status"],
        json!("active"),
        "the create's constant settles"
    );
    assert_eq!(updated["label"], json!("b"), "the sent value is answered");
    let read = body(&get(&e, s, &path));
    assert_eq!(read["status"], json!("active"));
}

/// A `media` type whose upload answers 202 with `url: null` (every recorded read of an upload
/// showed its `url`), `text_url: null` (so did every recorded read) and the `note` it was sent
/// (a client may send `null`).
fn uploads() -> wraith_engine::Engine {
    let upload = R::new("POST", "/v1/media")
        .op(StateOp::Create, "media")
        .variant(
            202,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("url", c(json!(null))),
                ("text_url", c(json!(null))),
                ("note", echo_body("/note", JsonType::Mixed)),
            ]),
        )
        .build();
    let urls = vec![json!("http://x/files/1.mp4"), json!("http://x/files/2.mp4")];
    let read = R::new("GET", "/v1/media/:id")
        .op(StateOp::Read, "media")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", echo_path("id")),
                ("url", hole(HoleKind::Observed, JsonType::String, urls)),
                ("text_url", c(json!(null))),
                (
                    "note",
                    hole(HoleKind::Observed, JsonType::String, vec![json!("a cat")]),
                ),
            ]),
        )
        .build();
    engine(
        model(
            vec![upload, read],
            vec![("media", entity_type(&[], &[], Vec::new()))],
        ),
        det_opts(),
    )
}

#[test]
fn a_null_the_create_answered_as_its_first_state_reads_back_as_every_recorded_read_showed() {
    let e = uploads();
    let s = Some("up");
    let created = send(&e, s, "POST", "/v1/media", json!({"note": null}));
    assert_eq!(created.status, 202);
    let created = body(&created);
    assert_eq!(
        created["url"],
        json!(null),
        "the upload is still being processed"
    );
    let id = created["id"].as_str().unwrap_or_default().to_string();
    let path = format!("/v1/media/{id}");
    let read = body(&get(&e, s, &path));
    assert!(
        [json!("http://x/files/1.mp4"), json!("http://x/files/2.mp4")].contains(&read["url"]),
        "a client polling for the processed upload sees it done: {}",
        read["url"]
    );
    assert_eq!(
        body(&get(&e, s, &path))["url"],
        read["url"],
        "the same every read"
    );
    assert_eq!(
        read["text_url"],
        json!(null),
        "recorded reads showed null too"
    );
    assert_eq!(read["note"], json!(null), "the client's own null is kept");
}

/// A volume created `creating`, read `active`, listed as stored (`creating` or `active`).
fn volumes_with_list() -> wraith_engine::Engine {
    let create = volume_route(
        "POST",
        "/v1/volumes",
        StateOp::Create,
        vec![("id", gen_id(cus_id())), ("status", c(json!("creating")))],
    );
    let read = volume_route(
        "GET",
        "/v1/volumes/:id",
        StateOp::Read,
        vec![("id", echo_path("id")), ("status", c(json!("active")))],
    );
    let states = vec![json!("creating"), json!("active")];
    let list = R::new("GET", "/v1/volumes")
        .op(StateOp::List, "volumes")
        .list(bare_array_list())
        .variant(
            200,
            Guard::Always,
            Node::Array(ArrayNode::Tuple {
                items: vec![obj(vec![
                    ("id", c(json!("v1"))),
                    ("status", hole(HoleKind::Observed, JsonType::String, states)),
                ])],
            }),
        )
        .build();
    volumes_engine(vec![create, read, list])
}

#[test]
fn a_settled_read_stores_the_state_so_a_list_shows_it() {
    let e = volumes_with_list();
    let s = Some("vol");
    let created = body(&send(&e, s, "POST", "/v1/volumes", json!({})));
    let id = created["id"].clone();
    let listed = |e: &wraith_engine::Engine| {
        body(&get(e, s, "/v1/volumes"))
            .as_array()
            .and_then(|items| items.iter().find(|i| i["id"] == id).cloned())
            .map(|i| i["status"].clone())
    };
    assert_eq!(listed(&e), Some(json!("creating")));
    let read = body(&get(
        &e,
        s,
        &format!("/v1/volumes/{}", id.as_str().unwrap_or_default()),
    ));
    assert_eq!(read["status"], json!("active"));
    assert_eq!(listed(&e), Some(json!("active")), "the record moved on");
}
