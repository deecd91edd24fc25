//! A variant whose top-level answers are a tagged union (`Variant::union`) renders the template
//! of one type, never the merged body's mix of types: the type the request sent, else the type
//! of the record the path names (as the session holds it, else as recorded), else the most
//! recorded type. Elements of a tagged-union list each render from their own tag's
//! representative. Exact replays are unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_model::*;

fn optional(node: Node, ratio_bp: u32) -> Field {
    Field {
        key: String::new(),
        value: node,
        optional: true,
        present_ratio_bp: ratio_bp,
    }
}

/// The merged body synth anti-unifies over every type's answers: `type` an observed hole,
/// each type's own field optional (a book's `pages` seen in most answers, so rendered; a
/// song's `seconds` in few, so not).
fn merged(id: Node) -> Node {
    let mut root = obj(vec![
        ("id", id),
        (
            "type",
            hole(
                HoleKind::Observed,
                JsonType::String,
                vec![json!("book"), json!("song")],
            ),
        ),
        ("title", echo_body("/title", JsonType::String)),
    ]);
    if let Node::Object { fields } = &mut root {
        for (key, value, ratio) in [("pages", json!(100), 7_500), ("seconds", json!(180), 2_500)] {
            let mut f = optional(c(value), ratio);
            f.key = key.to_string();
            fields.push(f);
        }
    }
    root
}

/// One template per type, the tag a constant, anti-unified over that type's answers only.
fn union(id: impl Fn() -> Node, counts: Vec<u64>) -> VariantUnion {
    let typed = |tag: &str, own: &str, v: Value| {
        obj(vec![
            ("id", id()),
            ("type", c(json!(tag))),
            ("title", echo_body("/title", JsonType::String)),
            (own, c(v)),
        ])
    };
    VariantUnion {
        discriminator: "type".into(),
        templates: vec![
            typed("book", "pages", json!(100)),
            typed("song", "seconds", json!(180)),
        ],
        counts,
    }
}

fn with_union(mut route: Route, u: VariantUnion) -> Route {
    for v in route.variants.iter_mut().filter(|v| v.status == 200) {
        v.union = Some(u.clone());
    }
    route
}

fn items(counts: Vec<u64>) -> wraith_engine::Engine {
    let create = with_union(
        R::new("POST", "/v1/items")
            .op(StateOp::Create, "items")
            .variant(200, Guard::Always, merged(gen_id(cus_id())))
            .build(),
        union(|| gen_id(cus_id()), counts.clone()),
    );
    // A read-only view of an item: the route names an item, but stores and replaces nothing.
    let mut summary = with_union(
        R::new("GET", "/v1/items/:id/summary")
            .variant(200, Guard::Always, merged(echo_path("id")))
            .build(),
        union(|| echo_path("id"), counts),
    );
    summary.entity_type = Some("items".into());
    summary.id_param = Some("id".into());
    engine(
        model(
            vec![create, summary],
            vec![(
                "items",
                entity_type(
                    &["it_song"],
                    &[],
                    vec![json!({"id": "it_song", "type": "song", "title": "S", "seconds": 9})],
                ),
            )],
        ),
        det_opts(),
    )
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    k.sort_unstable();
    k
}

#[test]
fn a_create_naming_its_type_gets_that_types_fields_only() {
    let e = items(vec![3, 1]);
    let song = body(&send(
        &e,
        Some("s"),
        "POST",
        "/v1/items",
        json!({"type": "song", "title": "Z"}),
    ));
    assert_eq!(song["type"], json!("song"), "{song}");
    assert_eq!(keys(&song), ["id", "seconds", "title", "type"], "{song}");
    assert_eq!(song["title"], json!("Z"));
    let book = body(&send(
        &e,
        Some("s"),
        "POST",
        "/v1/items",
        json!({"type": "book", "title": "Y"}),
    ));
    assert_eq!(keys(&book), ["id", "pages", "title", "type"], "{book}");
    assert_eq!(book["type"], json!("book"));
}

#[test]
fn an_answer_about_a_stored_record_takes_the_records_type() {
    let e = items(vec![3, 1]);
    // A song this session created, then a view of it: the song's template.
    let created = body(&send(
        &e,
        Some("v"),
        "POST",
        "/v1/items",
        json!({"type": "song", "title": "mine"}),
    ));
    let id = created["id"].as_str().unwrap().to_string();
    let view = body(&get(&e, Some("v"), &format!("/v1/items/{id}/summary")));
    assert_eq!(keys(&view), ["id", "seconds", "title", "type"], "{view}");
    assert_eq!(view["type"], json!("song"));
    // A recorded song the session never touched: its recorded type.
    let view = body(&get(&e, Some("v"), "/v1/items/it_song/summary"));
    assert_eq!(view["type"], json!("song"), "{view}");
    assert!(view.get("pages").is_none(), "{view}");
}

#[test]
fn without_a_named_type_the_most_recorded_type_renders() {
    // Songs recorded more often than books.
    let e = items(vec![1, 4]);
    let view = body(&get(&e, Some("n"), "/v1/items/it_unknown/summary"));
    assert_eq!(keys(&view), ["id", "seconds", "title", "type"], "{view}");
    assert_eq!(view["type"], json!("song"));
    // A tag no template has is not guessed at: the most recorded type, whole.
    let e = items(vec![4, 1]);
    let film = body(&send(
        &e,
        Some("n"),
        "POST",
        "/v1/items",
        json!({"type": "film", "title": "F"}),
    ));
    assert_eq!(keys(&film), ["id", "pages", "title", "type"], "{film}");
    assert_eq!(film["type"], json!("book"));
}

#[test]
fn an_exactly_recorded_request_replays_its_recorded_answer_whatever_the_union() {
    let sent = json!({"type": "song", "title": "rec"});
    // A recorded answer no type's template would render (both own fields).
    let recorded = json!({"id": "it_9", "type": "song", "title": "rec", "pages": 1, "seconds": 2});
    let create = with_union(
        R::new("POST", "/v1/items")
            .op(StateOp::Create, "items")
            .variant(200, Guard::Always, merged(gen_id(cus_id())))
            .exact(
                "/v1/items",
                "",
                Some(&sent),
                vec![moment("s1/0", 200, recorded.clone())],
            )
            .build(),
        union(|| gen_id(cus_id()), vec![1, 1]),
    );
    let e = engine(
        model(vec![create], vec![("items", entity_type(&[], &[], vec![]))]),
        det_opts(),
    );
    let r = send(&e, Some("x"), "POST", "/v1/items", sent);
    assert_eq!(body(&r), recorded);
}

#[test]
fn a_variant_without_a_union_renders_its_merged_body() {
    let create = R::new("POST", "/v1/items")
        .op(StateOp::Create, "items")
        .variant(200, Guard::Always, merged(gen_id(cus_id())))
        .build();
    let e = engine(
        model(vec![create], vec![("items", entity_type(&[], &[], vec![]))]),
        det_opts(),
    );
    let b = body(&send(
        &e,
        Some("m"),
        "POST",
        "/v1/items",
        json!({"type": "song", "title": "Z"}),
    ));
    // The merged body's optional `pages` (seen in most answers) renders whatever the type.
    assert!(b.get("pages").is_some(), "{b}");
}

#[test]
fn each_element_of_a_tagged_list_renders_from_its_own_tags_representative() {
    let rep = |tag: &str, own: &str| {
        obj(vec![
            ("type", c(json!(tag))),
            ("id", gen_id(cus_id())),
            (own, c(json!(1))),
        ])
    };
    let feed = Node::Array(ArrayNode::List {
        representatives: vec![
            rep("mention", "status"),
            rep("follow", "account"),
            rep("poll", "poll"),
        ],
        target_length: 7,
        discriminator: Some("type".into()),
    });
    let route = R::new("GET", "/v1/feed")
        .variant(200, Guard::Always, feed)
        .build();
    let e = engine(model(vec![route], vec![]), det_opts());
    let page = body(&get(&e, Some("f"), "/v1/feed"));
    let items = page.as_array().expect("a list");
    assert_eq!(items.len(), 7);
    for item in items {
        let own = match item["type"].as_str() {
            Some("mention") => "status",
            Some("follow") => "account",
            Some("poll") => "poll",
            other => panic!("unrecorded tag {other:?} in {page}"),
        };
        assert_eq!(keys(item), {
            let mut k = vec!["id", "type", own];
            k.sort_unstable();
            k
        });
    }
}
