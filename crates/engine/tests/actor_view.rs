//! The acting principal's own record in a rendered answer (`Route::actor_record`): a create
//! rendered from its template shows, at the route's actor pointer, the principal's record as
//! the session's latest answer carrying it showed it, not the template's representative.

mod support;

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
    let m = model(
        vec![create],
        vec![
            ("posts", entity_type(&["cus_recorded0001"], &[], vec![])),
            ("accounts", entity_type(&["acc_1", "acc_9"], &[], vec![])),
        ],
    );
    without_pii(engine(m, det_opts()))
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
