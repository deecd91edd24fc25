//! Own-records lists (`ListShape::own_records_only`): a list route whose every recorded answer
//! listed only records its own session had created earlier, in at least two sessions' unfiltered
//! answers, is learned as listing a session's own records; and what is not: an answer listing a
//! record no earlier write of its session answered, a record written only after the answer,
//! and evidence from one session or from filtered answers alone. Of such lists, those that
//! listed only the requesting principal's records (`ListShape::principal_records_only`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

use wraith_model::Model;
use wraith_recording::{Exchange, Headers, RecordedSession};

fn create(id: &str) -> Exchange {
    common::json_exchange(
        "POST",
        "/v1/notes",
        201,
        Headers::new(),
        Some(&json!({"text": format!("note {id}")})),
        &json!({"id": id, "text": format!("note {id}")}),
    )
}

/// `GET /v1/notes?query` answering `{"data": [the notes keyed `keys`]}`.
fn list(query: &str, keys: &[&str]) -> Exchange {
    let items: Vec<Value> = keys
        .iter()
        .map(|k| json!({"id": k, "text": format!("note {k}")}))
        .collect();
    let mut ex = common::json_exchange(
        "GET",
        "/v1/notes",
        200,
        Headers::new(),
        None,
        &json!({"data": items}),
    );
    ex.request.query = query.to_string();
    ex
}

fn as_user(user: &str, mut ex: Exchange) -> Exchange {
    ex.request
        .headers
        .insert("authorization".into(), vec![format!("Bearer {user}")]);
    ex
}

fn delete(id: &str) -> Exchange {
    common::json_exchange(
        "DELETE",
        &format!("/v1/notes/{id}"),
        204,
        Headers::new(),
        None,
        &json!(null),
    )
}

fn shape(sessions: Vec<Vec<Exchange>>) -> wraith_model::ListShape {
    let sessions: Vec<RecordedSession> = sessions
        .into_iter()
        .enumerate()
        .map(|(n, exchanges)| common::session(&format!("s{n}"), 0, exchanges))
        .collect();
    let m: Model = common::synth_model("notes", "https://api.notes.example", &sessions);
    common::route(&m, "GET", "/v1/notes")
        .list
        .clone()
        .expect("a list route")
}

fn own_records_only(sessions: Vec<Vec<Exchange>>) -> bool {
    shape(sessions).own_records_only
}

fn principal_records_only(sessions: Vec<Vec<Exchange>>) -> bool {
    let shape = shape(sessions);
    assert!(shape.own_records_only, "{shape:?}");
    shape.principal_records_only
}

#[test]
fn answers_listing_only_what_their_session_created_learn_own_records_only() {
    assert!(own_records_only(vec![
        vec![
            list("", &[]),
            create("n1"),
            create("n2"),
            list("", &["n1", "n2"])
        ],
        vec![create("n3"), list("limit=5", &["n3"])],
        vec![list("", &[])],
    ]));
}

#[test]
fn an_answer_listing_a_record_its_session_never_wrote_is_not_own_records_only() {
    // Session 1 lists the record session 0 created: one shared world.
    assert!(!own_records_only(vec![
        vec![create("n1"), list("", &["n1"])],
        vec![create("n2"), list("", &["n1", "n2"])],
    ]));
}

#[test]
fn a_record_written_after_the_answer_does_not_count() {
    assert!(!own_records_only(vec![
        vec![create("n1"), list("", &["n1"])],
        vec![create("n3"), list("", &["n3"])],
        vec![list("", &["n2"]), create("n2")],
    ]));
}

#[test]
fn one_session_or_filtered_answers_alone_are_not_evidence() {
    // Only one session listed anything unfiltered.
    assert!(!own_records_only(vec![
        vec![create("n1"), list("", &["n1"])],
        vec![create("n2"), list("text=note%20n2", &["n2"])],
    ]));
    assert!(!own_records_only(vec![vec![
        create("n1"),
        list("", &["n1"]),
        create("n2"),
        list("", &["n1", "n2"]),
    ]]));
}

#[test]
fn lists_leaving_out_another_principals_records_list_the_principals_own() {
    assert!(principal_records_only(vec![
        vec![
            as_user("alice", create("n1")),
            as_user("bob", create("n2")),
            as_user("alice", list("", &["n1"])),
            as_user("bob", list("", &["n2"])),
        ],
        vec![
            as_user("bob", create("n3")),
            as_user("bob", list("", &["n3"]))
        ],
    ]));
}

#[test]
fn a_list_showing_another_principals_record_lists_the_sessions_records() {
    assert!(!principal_records_only(vec![
        vec![
            as_user("alice", create("n1")),
            as_user("bob", create("n2")),
            as_user("alice", list("", &["n1"])),
            as_user("bob", list("", &["n1", "n2"])),
        ],
        vec![
            as_user("bob", create("n3")),
            as_user("bob", list("", &["n3"]))
        ],
    ]));
}

#[test]
fn a_record_left_out_for_a_page_or_a_delete_is_no_evidence() {
    // Bob's note is left out of a page of one, or was deleted: nothing says alice could not
    // have seen it.
    assert!(!principal_records_only(vec![
        vec![
            as_user("alice", create("n1")),
            as_user("bob", create("n2")),
            as_user("alice", list("limit=1", &["n1"])),
        ],
        vec![
            as_user("alice", create("n3")),
            as_user("bob", create("n4")),
            as_user("bob", delete("n4")),
            as_user("alice", list("", &["n3"])),
        ],
    ]));
}

#[test]
fn a_first_page_with_room_to_spare_lists_the_whole_collection() {
    // Alice asks for five and gets her one note: bob's was left out for being his.
    assert!(principal_records_only(vec![
        vec![
            as_user("alice", create("n1")),
            as_user("bob", create("n2")),
            as_user("alice", list("limit=5", &["n1"])),
        ],
        vec![
            as_user("bob", create("n3")),
            as_user("bob", list("", &["n3"]))
        ],
    ]));
}

#[test]
fn a_walk_through_pages_ending_with_room_lists_the_whole_collection() {
    let walk = |last_page: &[&str]| {
        principal_records_only(vec![
            vec![
                as_user("alice", create("n1")),
                as_user("bob", create("n2")),
                as_user("alice", create("n3")),
                as_user("alice", list("limit=2", &["n1", "n3"])),
                as_user("alice", list("limit=2&cursor=n3", last_page)),
            ],
            vec![
                as_user("bob", create("n4")),
                as_user("bob", list("", &["n4"])),
            ],
        ])
    };
    // The second page had room: alice's two notes were all there was, bob's left out.
    assert!(walk(&[]));
    // Without a last page with room, the walk may not have reached bob's note.
    let shape = shape(vec![
        vec![
            as_user("alice", create("n1")),
            as_user("bob", create("n2")),
            as_user("alice", create("n3")),
            as_user("alice", list("limit=2", &["n1", "n3"])),
        ],
        vec![
            as_user("bob", create("n4")),
            as_user("bob", list("", &["n4"])),
        ],
    ]);
    assert!(!shape.principal_records_only, "{shape:?}");
}

#[test]
fn a_walk_whose_first_page_names_page_one_lists_the_whole_collection() {
    // `page=1` asks for the first page as a request naming no page does.
    let walk = |first: &str| {
        shape(vec![
            vec![
                as_user("alice", create("n1")),
                as_user("bob", create("n2")),
                as_user("alice", create("n3")),
                as_user("alice", create("n5")),
                as_user("alice", list(first, &["n1", "n3"])),
                as_user("alice", list("per_page=2&page=2", &["n5"])),
            ],
            vec![
                as_user("bob", create("n4")),
                as_user("bob", list("", &["n4"])),
            ],
        ])
    };
    let shape = walk("per_page=2&page=1");
    assert!(shape.principal_records_only, "{shape:?}");
    // A walk starting past the first page saw only part of the collection.
    let shape = walk("per_page=2&page=3");
    assert!(!shape.principal_records_only, "{shape:?}");
}
