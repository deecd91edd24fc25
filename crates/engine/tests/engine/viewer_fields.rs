//! Fields that depend on who is looking (`Route::viewer_fields`): a create rendered from its
//! template shows every record of the rule's type it carries as the acting principal sees it,
//! the owner's view for the owner, the others' view (a field dropped, a value from the
//! others' table) for everyone else.

use crate::support;

use std::collections::BTreeMap;

use serde_json::json;
use support::*;
use wraith_engine::Engine;
use wraith_model::*;

const ALICE: &str = "Bearer alice";
const BOB: &str = "Bearer bob";

/// `POST /v1/posts` creating `posts`, each answer embedding its author at `/author` and the
/// post it quotes at `/quoted`, which the template holds as Alice's post (`acc_1`) in her
/// own view: `pinned` and her standing `current: automatic`. Alice's first post was recorded.
fn posts_quoting() -> Engine {
    let first = json!({"text": "first"});
    let author = |id: &str, current: &str| json!({"id": id, "approval": {"policy": ["followers"], "current": current}});
    let mut create = R::new("POST", "/v1/posts")
        .op(StateOp::Create, "posts")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", gen_id(cus_id())),
                ("text", echo_body("/text", JsonType::String)),
                ("pinned", c(json!(false))),
                ("author", c(author("acc_9", "automatic"))),
                (
                    "quoted",
                    c(json!({
                        "id": "cus_recorded0001",
                        "text": "first",
                        "pinned": false,
                        "author": author("acc_1", "automatic"),
                    })),
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
                    "pinned": false,
                    "author": author("acc_1", "automatic"),
                    "quoted": null,
                }),
            )],
        )
        .build();
    create.actor_record = Some(ActorRecord {
        entity_type: "accounts".into(),
        pointer: "/author".into(),
    });
    let k = |s: &str| s.to_string();
    create.viewer_fields = Some(ViewerFields {
        entity_type: "posts".into(),
        owner_type: "accounts".into(),
        owner_at: "/author".into(),
        fields: vec![
            ViewerField {
                at: "/author/approval/current".into(),
                shown: ViewerShown::Value {
                    key: "/author/approval/policy".into(),
                    owner: BTreeMap::from([(k("[\"followers\"]"), json!("automatic"))]),
                    others: BTreeMap::from([(k("[\"followers\"]"), json!("denied"))]),
                },
            },
            ViewerField {
                at: "/pinned".into(),
                shown: ViewerShown::OwnerOnly,
            },
        ],
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
fn rendered_create_shows_another_owners_embedded_record_in_the_others_view() {
    let e = posts_quoting();
    let _ = post_as(&e, "s", ALICE, "first");
    let bobs = post_as(&e, "s", BOB, "second");
    let quoted = &bobs["quoted"];
    assert_eq!(quoted["id"], json!("cus_recorded0001"), "{bobs}");
    assert!(quoted.get("pinned").is_none(), "owner-only field: {bobs}");
    assert_eq!(
        quoted["author"]["approval"]["current"],
        json!("denied"),
        "{bobs}"
    );
    // Bob's own post (his author record, the rendered one) keeps the owner's view.
    assert_eq!(bobs["pinned"], json!(false), "{bobs}");
    assert_eq!(
        bobs["author"]["approval"]["current"],
        json!("automatic"),
        "{bobs}"
    );
}

#[test]
fn rendered_create_keeps_the_owners_view_of_the_owners_own_embedded_record() {
    let e = posts_quoting();
    let _ = post_as(&e, "s", ALICE, "first");
    let alices = post_as(&e, "s", ALICE, "second");
    assert_eq!(alices["quoted"]["pinned"], json!(false), "{alices}");
    assert_eq!(
        alices["quoted"]["author"]["approval"]["current"],
        json!("automatic"),
        "{alices}"
    );
}
