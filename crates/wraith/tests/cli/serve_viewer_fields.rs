//! Fields that depend on who is looking (`Route::viewer_fields`), end to end: two principals
//! (two `Authorization` values) each post an item, like it, read their own item and the
//! other's, and quote their own item and the other's in a create that embeds the named
//! record (`quoted`, `null` when the request names none). The recordings show an item's
//! `pinned` only to its owner, and its owner's `approval.current` as `denied` to others under
//! a `followers` policy. The served twin, in a create rendered from its template, shows the
//! embedded item as the acting principal sees it (a record the session stored in its owner's
//! view loses `pinned` and reads `denied` for another principal). Black-box: the real binary
//! on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Server, Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "viewer-fields-test-key");
const ORIGIN: &str = "https://api.shop.test";

/// One principal of the recordings: `Authorization` value, user id, item id, the ids of the
/// items its quotes (of its own item, of the other's) created, its approval policy, and its
/// item's title.
struct Principal {
    auth: &'static str,
    user: &'static str,
    item: &'static str,
    own_quote: &'static str,
    quote: &'static str,
    policy: &'static str,
    title: &'static str,
}

const ANN: Principal = Principal {
    auth: "Bearer tok_ann",
    user: "u_8f3a1c9e27",
    item: "it_5d2b7e1a90",
    own_quote: "it_2c9d4b8e16",
    quote: "it_7b3e9d2c41",
    policy: "followers",
    title: "ann's lamp",
};
const BOB: Principal = Principal {
    auth: "Bearer tok_bob",
    user: "u_2e7c4a1b93",
    item: "it_9a4f1c6e28",
    own_quote: "it_6e1b3f9a72",
    quote: "it_1f6a8c3d57",
    policy: "public",
    title: "bob's chair",
};

/// A user as itself (`mine`) or another principal sees it.
fn user(p: &Principal, mine: bool) -> Value {
    let current = if mine || p.policy == "public" {
        "automatic"
    } else {
        "denied"
    };
    json!({"id": p.user, "name": format!("name of {}", p.user),
        "approval": {"policy": [p.policy], "current": current}})
}

/// `owner`'s item `id`, as its owner (`mine`) or another principal sees it.
fn item(id: &str, title: &str, owner: &Principal, mine: bool, quoted: Value) -> Value {
    let mut v = json!({"id": id, "title": title, "owner": user(owner, mine), "quoted": quoted});
    if mine {
        v["pinned"] = json!(false);
    }
    v
}

/// A HAR entry sent with `Authorization: auth`.
fn entry(auth: &str, method: &str, path: &str, body: Option<&Value>, answer: &Value) -> Value {
    let mut e = har::entry(ORIGIN, method, path, body, answer);
    e["request"]["headers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "Authorization", "value": auth}));
    e
}

/// One recorded session of `me`: read its user, post an item, like it and list its likers
/// (the list then holds `me`: the create's `/owner` is the acting principal's record), read
/// its own item and `them`'s, then post a quote of its own item (embedded in the owner's view)
/// and one of `them`'s item (embedded in the others' view, `pinned` hidden).
fn session(t: &Twin, me: &Principal, them: &Principal) {
    let a = me.auth;
    let mine = item(me.item, me.title, me, true, Value::Null);
    let theirs = item(them.item, them.title, them, false, Value::Null);
    let quote_title = format!("look at {}", them.title);
    let own_title = format!("see my {}", me.title);
    let entries = vec![
        entry(
            a,
            "GET",
            &format!("/v1/users/{}", me.user),
            None,
            &user(me, true),
        ),
        entry(
            a,
            "POST",
            "/v1/items",
            Some(&json!({"title": me.title})),
            &mine,
        ),
        entry(
            a,
            "POST",
            &format!("/v1/items/{}/like", me.item),
            None,
            &json!({}),
        ),
        entry(
            a,
            "GET",
            &format!("/v1/items/{}/likers", me.item),
            None,
            &json!([user(me, true)]),
        ),
        entry(a, "GET", &format!("/v1/items/{}", me.item), None, &mine),
        entry(a, "GET", &format!("/v1/items/{}", them.item), None, &theirs),
        entry(
            a,
            "POST",
            "/v1/items",
            Some(&json!({"title": own_title, "quoted_id": me.item})),
            &item(me.own_quote, &own_title, me, true, mine.clone()),
        ),
        entry(
            a,
            "POST",
            "/v1/items",
            Some(&json!({"title": quote_title, "quoted_id": them.item})),
            &item(me.quote, &quote_title, me, true, theirs.clone()),
        ),
    ];
    har::import(t, &[KEY], &format!("{}.har", me.user), entries);
}

fn shop_twin() -> Twin {
    let t = Twin::init("shop", ORIGIN);
    session(&t, &ANN, &BOB);
    session(&t, &BOB, &ANN);
    har::synth(&t, &[KEY]);
    t
}

async fn post_as(server: &Server, who: &Principal, body: Value) -> Value {
    let r = server
        .send(
            "POST",
            "/v1/items",
            Some("agent-1"),
            &[("authorization", who.auth)],
            Some(body),
        )
        .await;
    r.assert_status(200);
    r.json()
}

#[tokio::test]
async fn a_rendered_quote_shows_the_quoted_item_as_the_acting_principal_sees_it() {
    let t = shop_twin();
    let server = t.serve_env(&[], &[KEY]);
    // Each principal's recorded first post (replayed) makes its own record known to the
    // session.
    for p in [&ANN, &BOB] {
        let first = post_as(&server, p, json!({"title": p.title})).await;
        assert_eq!(first["owner"]["id"], json!(p.user), "{first}");
    }
    // Ann's new item, rendered from the template: her own view.
    let anns = post_as(&server, &ANN, json!({"title": "ann's new shelf"})).await;
    assert_eq!(anns["pinned"], json!(false), "{anns}");
    let id = har::key_text(&anns["id"]);

    // Bob quoting Ann's item sees it as every other principal does.
    let bobs = post_as(
        &server,
        &BOB,
        json!({"title": "bob looks", "quoted_id": id.clone()}),
    )
    .await;
    let quoted = &bobs["quoted"];
    assert_eq!(quoted["id"], anns["id"], "{bobs}");
    assert!(quoted.get("pinned").is_none(), "owner-only field: {bobs}");
    assert_eq!(quoted["owner"]["id"], json!(ANN.user), "{bobs}");
    assert_eq!(
        quoted["owner"]["approval"]["current"],
        json!("denied"),
        "{bobs}"
    );
    // Bob's own new item keeps its owner's view.
    assert_eq!(bobs["pinned"], json!(false), "{bobs}");
    assert_eq!(bobs["owner"]["id"], json!(BOB.user), "{bobs}");

    // Ann quoting her own item sees her own view of it.
    let again = post_as(
        &server,
        &ANN,
        json!({"title": "ann looks", "quoted_id": id}),
    )
    .await;
    let quoted = &again["quoted"];
    assert_eq!(quoted["id"], anns["id"], "{again}");
    assert_eq!(quoted["pinned"], json!(false), "{again}");
    assert_eq!(
        quoted["owner"]["approval"]["current"],
        json!("automatic"),
        "{again}"
    );
}
