//! The acting principal's own record in a rendered create, end to end: a post create whose
//! answers embed the author (`Route::actor_record` at `/author`) is answered from its recording
//! for the recorded request and rendered from its template for any other; the rendered answer
//! shows the author as the session's earlier answer showed it, not the template's
//! representative. Black-box: the real binary serving a model written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use support::Twin;
use support::model::{self, RouteSpec, echo_body, hole, json_body, konst, obj, variant};
use wraith_model::*;

fn entity(prefix: Option<&str>, known: &[&str]) -> EntityType {
    EntityType {
        primary_key: "id".to_string(),
        id_shape: prefix.map(|p| IdShape::Token {
            prefix: p.to_string(),
            charset: IdCharset::Base62,
            length: 12,
        }),
        known_ids: known.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>(),
        known_missing: BTreeSet::new(),
        records: BTreeMap::new(),
        read_prefixes: BTreeMap::new(),
        keyed_per_parent: false,
        alternate_key: None,
    }
}

/// `POST /v1/posts` recorded once (`{"text": "first"}`, by `acc_1` with no badges); the
/// template's representative author is `acc_9` with a gold badge.
fn posts_twin() -> Twin {
    let t = Twin::init("blog", "https://api.blog.test");
    let author = obj(vec![
        (
            "id",
            hole(
                HoleKind::Observed,
                JsonType::String,
                vec![json!("acc_9"), json!("acc_1")],
            ),
        ),
        (
            "name",
            hole(
                HoleKind::Observed,
                JsonType::String,
                vec![json!("Zed"), json!("Ann")],
            ),
        ),
        ("badges", konst(json!(["gold"]))),
    ]);
    let template = obj(vec![
        (
            "id",
            hole(
                HoleKind::Generated {
                    shape: IdShape::Token {
                        prefix: "pst_".to_string(),
                        charset: IdCharset::Base62,
                        length: 12,
                    },
                },
                JsonType::String,
                vec![],
            ),
        ),
        ("text", echo_body("/text", json!("first"))),
        ("author", author),
    ]);
    let first = json!({"text": "first"}).to_string();
    let mut create = model::route(RouteSpec {
        method: "POST",
        path: "/v1/posts",
        state_op: Some(StateOp::Create),
        entity_type: Some("posts"),
        variants: vec![variant("v_post", 200, Guard::Always, json_body(template))],
        exact: vec![ExactEntry {
            key: request_key::request_key(
                "/v1/posts",
                "",
                Some("application/json"),
                first.as_bytes(),
            ),
            moments: vec![model::moment(
                "s1/0",
                200,
                json!({
                    "id": "pst_recorded0001",
                    "text": "first",
                    "author": {"id": "acc_1", "name": "Ann", "badges": []}
                }),
            )],
            session_bound: Vec::new(),
        }],
    });
    create.actor_record = Some(ActorRecord {
        entity_type: "accounts".into(),
        pointer: "/author".into(),
    });
    let mut m = model::shop("blog");
    m.routes.push(create);
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    m.entity_types
        .insert("posts".into(), entity(Some("pst_"), &["pst_recorded0001"]));
    m.entity_types
        .insert("accounts".into(), entity(None, &["acc_1", "acc_9"]));
    t.write_model(&m);
    t
}

async fn post(server: &support::Server, session: &str, text: &str) -> Value {
    let r = server
        .send(
            "POST",
            "/v1/posts",
            Some(session),
            &[("authorization", "Bearer ann")],
            Some(json!({ "text": text })),
        )
        .await;
    r.assert_status(200);
    r.json()
}

#[tokio::test]
async fn a_rendered_post_shows_its_author_as_the_sessions_earlier_answer_did() {
    let t = posts_twin();
    let server = t.serve(&[]);
    let replayed = post(&server, "agent-1", "first").await;
    assert_eq!(replayed["author"]["id"], json!("acc_1"), "{replayed}");
    let rendered = post(&server, "agent-1", "something new").await;
    assert_eq!(rendered["text"], json!("something new"), "{rendered}");
    assert_eq!(
        rendered["author"],
        json!({"id": "acc_1", "name": "Ann", "badges": []}),
        "{rendered}"
    );

    let fresh = post(&server, "agent-2", "something new").await;
    assert_eq!(
        fresh["author"]["badges"],
        json!(["gold"]),
        "no earlier answer: the template's author: {fresh}"
    );
}

/// `t`'s model with the post create's author template also holding `key` as `value`, and the
/// create's index among the routes.
fn with_author_field(t: &Twin, key: &str, value: Node) -> (Model, usize) {
    let text = std::fs::read_to_string(t.path().join("model/twin.wir.json")).unwrap();
    let mut m = wraith_model::model_from_json_str(&text).unwrap();
    let ci = m
        .routes
        .iter()
        .position(|r| r.method == "POST" && r.path == "/v1/posts")
        .unwrap();
    let BodyTemplate::Json {
        root: Node::Object { fields },
    } = &mut m.routes[ci].variants[0].body
    else {
        panic!("object template");
    };
    let author = fields.iter_mut().find(|f| f.key == "author").unwrap();
    let Node::Object { fields: author } = &mut author.value else {
        panic!("author object");
    };
    author.push(Field {
        key: key.into(),
        value,
        present_ratio_bp: 10_000,
        optional: false,
    });
    (m, ci)
}

/// The twin of [`posts_twin`], its author also carrying a `created_at` the template takes from
/// the clock, and the recordings knowing the representative `acc_9`'s record.
fn posts_twin_with_clock_author() -> Twin {
    let t = posts_twin();
    let clock = hole(
        HoleKind::Clock {
            unit: ClockUnit::Iso8601 {
                fraction_digits: 3,
                suffix: "Z".into(),
            },
            after: None,
        },
        JsonType::String,
        vec![],
    );
    let (mut m, _) = with_author_field(&t, "created_at", clock);
    let accounts = m.entity_types.get_mut("accounts").unwrap();
    accounts.records.insert(
        "acc_9".into(),
        json!({"id": "acc_9", "name": "Zed", "created_at": "2020-05-01T00:00:00.000Z"}),
    );
    t.write_model(&m);
    t
}

#[tokio::test]
async fn a_sessions_first_rendered_post_shows_a_known_authors_recorded_created_at() {
    let t = posts_twin_with_clock_author();
    let server = t.serve(&[]);
    let fresh = post(&server, "agent-3", "something new").await;
    assert_eq!(fresh["author"]["id"], json!("acc_9"), "{fresh}");
    assert_eq!(
        fresh["author"]["created_at"],
        json!("2020-05-01T00:00:00.000Z"),
        "the known account existed before the session: {fresh}"
    );
    assert_eq!(fresh["author"]["badges"], json!(["gold"]), "{fresh}");
}

/// [`posts_twin`] plus `POST /v1/reports`, whose answer embeds the reported account at
/// `/target`: its `id` echoed from the sent `account_id`, every other field the template
/// representative's (Zed's).
fn posts_and_reports_twin() -> Twin {
    let t = posts_twin();
    let text = std::fs::read_to_string(t.root.join("model/twin.wir.json")).unwrap();
    let mut m: Model = serde_json::from_str(&text).unwrap();
    let template = obj(vec![
        ("id", konst(json!("rep_1"))),
        (
            "target",
            obj(vec![
                ("id", echo_body("/account_id", json!("acc_9"))),
                ("name", konst(json!("Zed"))),
                ("badges", konst(json!(["gold"]))),
            ]),
        ),
    ]);
    m.routes.push(model::route(RouteSpec {
        method: "POST",
        path: "/v1/reports",
        state_op: Some(StateOp::Create),
        entity_type: Some("reports"),
        variants: vec![variant("v_report", 200, Guard::Always, json_body(template))],
        exact: Vec::new(),
    }));
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    m.entity_types.insert("reports".into(), entity(None, &[]));
    t.write_model(&m);
    t
}

async fn report(server: &support::Server, session: &str, account: &str) -> Value {
    let r = server
        .send(
            "POST",
            "/v1/reports",
            Some(session),
            &[("authorization", "Bearer ann")],
            Some(json!({ "account_id": account })),
        )
        .await;
    r.assert_status(200);
    r.json()
}

#[tokio::test]
async fn a_rendered_report_of_the_principals_own_account_shows_it_as_the_session_saw_it() {
    let t = posts_and_reports_twin();
    let server = t.serve(&[]);
    let replayed = post(&server, "agent-1", "first").await;
    assert_eq!(replayed["author"]["id"], json!("acc_1"), "{replayed}");
    let own = report(&server, "agent-1", "acc_1").await;
    assert_eq!(
        own["target"],
        json!({"id": "acc_1", "name": "Ann", "badges": []}),
        "{own}"
    );
    // Another account, or a session that never saw its own: the template's values.
    let other = report(&server, "agent-1", "acc_7").await;
    assert_eq!(other["target"]["name"], json!("Zed"), "{other}");
    let fresh = report(&server, "agent-2", "acc_1").await;
    assert_eq!(fresh["target"]["name"], json!("Zed"), "{fresh}");
}

/// [`posts_twin`], its author also carrying a `posts_count` the recorded posts stepped by one
/// (`Route::actor_steps`): the template holds 40, the recorded post 3.
fn posts_twin_with_counted_author() -> Twin {
    let t = posts_twin();
    let (mut m, ci) = with_author_field(&t, "posts_count", konst(json!(40)));
    let create = &mut m.routes[ci];
    create.actor_steps = vec!["posts_count".into()];
    let moment = &mut create.exact[0].moments[0];
    moment.body = RecordedBody::json(json!({
        "id": "pst_recorded0001",
        "text": "first",
        "author": {"id": "acc_1", "name": "Ann", "badges": [], "posts_count": 3}
    }));
    t.write_model(&m);
    t
}

#[tokio::test]
async fn each_rendered_post_shows_its_author_one_post_further_than_the_last() {
    let t = posts_twin_with_counted_author();
    let server = t.serve(&[]);
    let replayed = post(&server, "agent-1", "first").await;
    assert_eq!(replayed["author"]["posts_count"], json!(3), "{replayed}");
    for (text, count) in [("second", 4), ("third", 5)] {
        let rendered = post(&server, "agent-1", text).await;
        assert_eq!(
            rendered["author"]["posts_count"],
            json!(count),
            "{rendered}"
        );
    }
    // Another session starts from what it saw: no earlier post, the template's count.
    let fresh = post(&server, "agent-2", "something new").await;
    assert_eq!(fresh["author"]["posts_count"], json!(40), "{fresh}");
}
