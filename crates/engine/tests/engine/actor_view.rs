//! The acting principal's own record in a rendered answer (`Route::actor_record`): a create
//! rendered from its template shows, at the route's actor pointer, the principal's record as
//! the session's latest answer carrying it showed it, not the template's representative.

use crate::support;

use serde_json::json;
use support::*;
use wraith_engine::Engine;
use wraith_model::*;

const ALICE: &str = "Bearer alice";
const BOB: &str = "Bearer bob";

/// `POST /v1/posts` creating `posts`, each answer embedding its author at `/author`. One
/// request (`{"text": "first"}`) was recorded, by Alice; the template's representative author
/// is another account (`acc_9`, "Zed", one badge).
fn posts_with_author() -> Engine {
    let m = model(
        vec![posts_route()],
        vec![
            ("posts", entity_type(&["cus_recorded0001"], &[], vec![])),
            ("accounts", entity_type(&["acc_1", "acc_9"], &[], vec![])),
        ],
    );
    without_pii(engine(m, det_opts()))
}

/// The `POST /v1/posts` route of [`posts_with_author`].
fn posts_route() -> Route {
    let first = json!({"text": "first"});
    let mut create = R::new("POST", "/v1/posts")
        .op(StateOp::Create, "posts")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("text", echo_body("/text", JsonType::String)),
                (
                    "author",
                    obj(vec![
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
                                vec![json!("Zed"), json!("Alice")],
                            ),
                        ),
                        ("badges", c(json!(["gold"]))),
                        ("rendered_only", c(json!(7))),
                    ]),
                ),
            ]),
        )
        .exact(
            "/v1/posts",
            "",
            Some(&first),
            vec![moment(
                "s1/0",
                200,
                json!({
                    "id": "cus_recorded0001",
                    "text": "first",
                    "author": {"id": "acc_1", "name": "Alice", "badges": []}
                }),
            )],
        )
        .build();
    create.actor_record = Some(ActorRecord {
        entity_type: "accounts".into(),
        pointer: "/author".into(),
    });
    create
}

#[test]
fn rendered_create_embeds_the_acting_principals_record_as_the_session_last_saw_it() {
    let e = posts_with_author();
    let replayed = post_as(&e, "s", ALICE, "first");
    assert_eq!(replayed["author"]["id"], json!("acc_1"), "{replayed}");
    let rendered = post_as(&e, "s", ALICE, "second");
    assert_eq!(rendered["text"], json!("second"), "rendered: {rendered}");
    assert_eq!(
        rendered["author"],
        json!({"id": "acc_1", "name": "Alice", "badges": [], "rendered_only": 7}),
        "the view's values in the template's shape: {rendered}"
    );
}

#[test]
fn rendered_create_keeps_the_template_author_without_a_view_of_that_principal() {
    let e = posts_with_author();
    let fresh = post_as(&e, "fresh", ALICE, "second");
    assert_eq!(fresh["author"]["badges"], json!(["gold"]), "{fresh}");
    assert_eq!(fresh["author"]["name"], json!("Zed"), "{fresh}");

    // Alice's view is not Bob's.
    let _ = post_as(&e, "two", ALICE, "first");
    let bobs = post_as(&e, "two", BOB, "second");
    assert_eq!(bobs["author"]["badges"], json!(["gold"]), "{bobs}");
    assert_eq!(bobs["author"]["name"], json!("Zed"), "{bobs}");
}

/// [`posts_route`] plus `POST /v1/reports` (a create of `reports`), whose answer embeds the
/// reported account at `/target`, its `id` echoed from the sent `account_id` and every other
/// field the template's representative's (Zed's).
fn posts_and_reports() -> Engine {
    let report = R::new("POST", "/v1/reports")
        .op(StateOp::Create, "reports")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                (
                    "target",
                    obj(vec![
                        ("id", echo_body("/account_id", JsonType::String)),
                        ("name", c(json!("Zed"))),
                        ("badges", c(json!(["gold"]))),
                    ]),
                ),
            ]),
        )
        .build();
    let m = model(
        vec![posts_route(), report],
        vec![
            ("posts", entity_type(&["cus_recorded0001"], &[], vec![])),
            ("reports", entity_type(&[], &[], vec![])),
            ("accounts", entity_type(&["acc_1", "acc_9"], &[], vec![])),
        ],
    );
    without_pii(engine(m, det_opts()))
}

fn report_as(e: &Engine, s: &str, who: &str, account: &str) -> serde_json::Value {
    let r = e.handle(
        Some(s),
        &with_header(
            req(
                "POST",
                "/v1/reports",
                Some(json!({ "account_id": account })),
            ),
            "authorization",
            who,
        ),
    );
    assert_eq!(r.status, 200);
    body(&r)
}

#[test]
fn a_rendered_create_naming_the_principals_own_record_elsewhere_shows_the_sessions_view() {
    let e = posts_and_reports();
    let _ = post_as(&e, "s", ALICE, "first");
    // Alice reports her own account: the embedded copy is her record as the session saw it.
    let own = report_as(&e, "s", ALICE, "acc_1");
    assert_eq!(
        own["target"],
        json!({"id": "acc_1", "name": "Alice", "badges": []}),
        "{own}"
    );
    // Another account keeps the template's values; so does a session without a view.
    let other = report_as(&e, "s", ALICE, "acc_7");
    assert_eq!(other["target"]["name"], json!("Zed"), "{other}");
    let fresh = report_as(&e, "fresh", ALICE, "acc_1");
    assert_eq!(fresh["target"]["name"], json!("Zed"), "{fresh}");
}

/// `POST /v1/posts` whose embedded author (always `acc_1`) has a `created_at` the template
/// takes from the clock; `known` holds the recordings' records of `accounts`.
fn posts_with_clock_author(known: Vec<serde_json::Value>) -> Engine {
    let mut create = R::new("POST", "/v1/posts")
        .op(StateOp::Create, "posts")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("text", echo_body("/text", JsonType::String)),
                (
                    "author",
                    obj(vec![
                        ("id", c(json!("acc_1"))),
                        ("name", c(json!("Zed"))),
                        (
                            "created_at",
                            hole(
                                HoleKind::Clock {
                                    unit: ClockUnit::Iso8601 {
                                        fraction_digits: 3,
                                        suffix: "Z".into(),
                                    },
                                    after: None,
                                },
                                JsonType::String,
                                vec![],
                            ),
                        ),
                    ]),
                ),
            ]),
        )
        .build();
    create.actor_record = Some(ActorRecord {
        entity_type: "accounts".into(),
        pointer: "/author".into(),
    });
    let m = model(
        vec![create],
        vec![
            ("posts", entity_type(&[], &[], vec![])),
            ("accounts", entity_type(&["acc_1"], &[], known)),
        ],
    );
    without_pii(engine(m, det_opts()))
}

#[test]
fn a_first_rendered_create_shows_a_known_authors_recorded_created_at_not_the_clock() {
    let e = posts_with_clock_author(vec![json!({
        "id": "acc_1", "name": "Alice", "created_at": "2020-05-01T00:00:00.000Z"
    })]);
    let first = post_as(&e, "fresh", ALICE, "hello");
    assert_eq!(
        first["author"],
        json!({"id": "acc_1", "name": "Zed", "created_at": "2020-05-01T00:00:00.000Z"}),
        "only the minted value takes the recorded one: {first}"
    );
}

#[test]
fn an_author_the_recordings_do_not_know_keeps_the_clock() {
    let e = posts_with_clock_author(vec![]);
    let first = post_as(&e, "fresh", ALICE, "hello");
    let at = first["author"]["created_at"].as_str().unwrap_or_default();
    assert!(
        at.ends_with('Z') && at != "2020-05-01T00:00:00.000Z",
        "{first}"
    );
}
