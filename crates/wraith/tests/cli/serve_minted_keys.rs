//! `wraith serve` minting the key of a created record from one sequence per type: a create
//! whose answers are a tagged union (posts by `type`) renders each type from its own template,
//! which minted above its own type's recorded keys only. A link post, recorded with keys below
//! the text posts', was answered a key below records made before it, and the next text post
//! counted on from another base (`synth/src/variants.rs`, `mint_primary_key`). Black-box: the
//! real binary on a HAR run written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.feed.test";

/// Two link posts recorded first (keys 100 and 101), then four text posts (200 to 203); each
/// type with a field of its own. `union`: every post sends the same fields, so the answers
/// are one variant, a tagged union by `type`; else the link posts send a `url` the text posts
/// do not, and the route has a variant for each.
fn feed_twin(union: bool) -> Twin {
    let t = Twin::init("feed", ORIGIN);
    let mut entries = Vec::new();
    let posts = [("link", 100), ("link", 101)]
        .into_iter()
        .chain([200, 201, 202, 203].map(|id| ("text", id)));
    for (i, (kind, id)) in posts.enumerate() {
        let text = format!("post {i}");
        let (sent, answer) = match (kind, union) {
            ("link", true) => (
                json!({"type": kind, "text": text}),
                json!({"id": id, "type": kind, "text": text, "preview": format!("page {i}")}),
            ),
            ("link", false) => (
                json!({"type": kind, "url": text}),
                json!({"id": id, "type": kind, "url": text, "preview": format!("page {i}")}),
            ),
            _ => (
                json!({"type": kind, "text": text}),
                json!({"id": id, "type": kind, "text": text, "words": i + 1}),
            ),
        };
        entries.push(har::entry(
            ORIGIN,
            "POST",
            "/v1/posts",
            Some(&sent),
            &answer,
        ));
    }
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

/// A link post, a text post and a link post again, created in one session: their keys.
async fn three_posts(t: &Twin, link_field: &str) -> [u64; 3] {
    let server = t.serve(&[]);
    let link = json!({"type": "link", link_field: "https://mine.test"});
    let text = json!({"type": "text", "text": "mine"});
    [
        created(&server, link.clone()).await,
        created(&server, text).await,
        created(&server, link).await,
    ]
}

async fn created(server: &support::Server, body: Value) -> u64 {
    let r = server.post("/v1/posts", Some("s1"), body).await;
    r.assert_status(200);
    let answer = r.json();
    answer["id"]
        .as_u64()
        .unwrap_or_else(|| panic!("an integer key: {answer}"))
}

#[tokio::test]
async fn every_variant_of_a_create_mints_above_every_recorded_key_from_one_sequence() {
    let t = feed_twin(false);
    let route = har::model_route(&t, "POST", "/v1/posts");
    assert_eq!(route["variants"].as_array().unwrap().len(), 2, "{route}");
    let [link, text, again] = three_posts(&t, "url").await;
    assert!(
        link > 203,
        "a new link post sorts after every recorded post: {link}"
    );
    assert!(
        link < text && text < again,
        "one sequence across the variants: {link}, {text}, {again}"
    );
}

#[tokio::test]
async fn every_type_of_a_union_create_mints_above_every_recorded_key_from_one_sequence() {
    let t = feed_twin(true);
    let route = har::model_route(&t, "POST", "/v1/posts");
    assert!(
        route["variants"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["union"]["discriminator"] == "type"),
        "the answers are a tagged union: {route}"
    );
    let [link, text, again] = three_posts(&t, "text").await;
    assert!(
        link > 203,
        "a new link post sorts after every recorded post: {link}"
    );
    assert!(
        link < text && text < again,
        "one sequence across the types: {link}, {text}, {again}"
    );
}

/// Keys too short to learn an id family from (`tag_1` … `tag_3`, one create recorded): each
/// create in a session still mints a key of its own, in the recorded prefix, and reads back;
/// replaying the one recorded key made every create overwrite the last.
#[tokio::test]
async fn creates_of_keys_too_short_for_an_id_family_mint_distinct_keys() {
    const TAGS: &str = "https://api.tags.test";
    let t = Twin::init("tags", TAGS);
    let tag = |id: &str| json!({"id": id, "label": format!("label {id}")});
    let entries = vec![
        har::entry(TAGS, "GET", "/v1/tags/tag_1", None, &tag("tag_1")),
        har::entry(TAGS, "GET", "/v1/tags/tag_2", None, &tag("tag_2")),
        har::entry(
            TAGS,
            "POST",
            "/v1/tags",
            Some(&json!({"label": "label tag_3"})),
            &tag("tag_3"),
        ),
        har::entry(TAGS, "GET", "/v1/tags/tag_3", None, &tag("tag_3")),
    ];
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    let server = t.serve(&[]);
    let s = Some("maker");
    let mut ids = Vec::new();
    for label in ["red", "green"] {
        let r = server.post("/v1/tags", s, json!({"label": label})).await;
        r.assert_status(200);
        let id = r.json()["id"].as_str().unwrap().to_string();
        assert!(id.starts_with("tag_"), "{id}");
        ids.push((id, label));
    }
    assert_ne!(ids[0].0, ids[1].0, "each create a key of its own");
    for (id, label) in &ids {
        let r = server.get(&format!("/v1/tags/{id}"), s).await;
        r.assert_status(200);
        assert_eq!(r.json()["label"], *label, "{id}");
    }
}
