//! A read recorded by several runs with different answers is answered from the runs whose
//! earlier writes match the session's: the recorded answer shows the state its run's writes
//! made, so a session that wrote nothing gets the answer of a run that wrote nothing.

use crate::support;

use serde_json::json;
use support::*;
use wraith_engine::Engine;
use wraith_model::*;

/// `GET /v1/lists` (lists `lists`, a bare array) recorded with the given `moments`.
fn lists_read(moments: Vec<Moment>) -> Route {
    R::new("GET", "/v1/lists")
        .op(StateOp::List, "lists")
        .list(bare_array_list())
        .variant(200, Guard::Always, c(json!([])))
        .exact("/v1/lists", "", None, moments)
        .build()
}

/// An engine serving `routes` over the one entity type `lists`.
fn lists_engine(routes: Vec<Route>) -> Engine {
    engine(
        model(routes, vec![("lists", entity_type(&[], &[], vec![]))]),
        det_opts(),
    )
}

/// `POST /v1/lists` recorded by runs `a` and `b` (their first exchange), then `GET /v1/lists`
/// recorded by `a` and `b` after it (listing their list) and by `c` as its first exchange,
/// with nothing written before it (an empty list).
fn engine_of_three_runs() -> Engine {
    let post = lists_create(&[("a/0", "1"), ("b/0", "2")]);
    let list = lists_read(vec![
        moment("a/1", 200, json!([{"id": "7", "title": "t"}])),
        moment("b/1", 200, json!([{"id": "7", "title": "t"}])),
        moment("c/0", 200, json!([])),
    ]);
    lists_engine(vec![post, list])
}

#[test]
fn a_read_before_any_write_answers_from_a_run_that_wrote_nothing_before_it() {
    let e = engine_of_three_runs();
    // Two of three runs listed a record, but both had created it first.
    assert_eq!(body(&get(&e, Some("fresh"), "/v1/lists")), json!([]));
}

#[test]
fn a_read_after_a_write_answers_from_the_runs_that_wrote_as_much() {
    let e = engine_of_three_runs();
    send(
        &e,
        Some("wrote"),
        "POST",
        "/v1/lists",
        json!({"title": "t"}),
    );
    let listed = body(&get(&e, Some("wrote"), "/v1/lists"));
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
}

/// `GET /v1/lists` recorded by run `late` after two reads of `/v1/ping` and by run `early` as
/// its first exchange; neither wrote anything.
fn engine_of_two_read_only_runs() -> Engine {
    let ping = R::new("GET", "/v1/ping")
        .variant(200, Guard::Always, c(json!({"ok": true})))
        .exact(
            "/v1/ping",
            "",
            None,
            vec![
                moment("late/0", 200, json!({"ok": true})),
                moment("late/1", 200, json!({"ok": true})),
            ],
        )
        .build();
    let list = lists_read(vec![
        moment("late/2", 200, json!([{"id": "7", "title": "late"}])),
        moment("early/0", 200, json!([{"id": "8", "title": "early"}])),
    ]);
    lists_engine(vec![list, ping])
}

#[test]
fn runs_with_the_same_writes_answer_from_the_one_where_the_read_stands_as_far_in() {
    let e = engine_of_two_read_only_runs();
    let first = body(&get(&e, Some("first"), "/v1/lists"));
    assert_eq!(first[0]["title"], json!("early"), "{first}");
    get(&e, Some("third"), "/v1/ping");
    get(&e, Some("third"), "/v1/ping");
    let third = body(&get(&e, Some("third"), "/v1/lists"));
    assert_eq!(third[0]["title"], json!("late"), "{third}");
}

#[test]
fn position_only_breaks_ties_the_majority_of_equally_written_runs_still_answers() {
    let ping = R::new("GET", "/v1/ping")
        .variant(200, Guard::Always, c(json!({"ok": true})))
        .build();
    let list = lists_read(vec![
        moment("a/2", 200, json!([{"id": "7", "title": "most"}])),
        moment("b/2", 200, json!([{"id": "7", "title": "most"}])),
        moment("c/0", 200, json!([{"id": "8", "title": "first"}])),
    ]);
    let e = lists_engine(vec![list, ping]);
    let got = body(&get(&e, Some("fresh"), "/v1/lists"));
    assert_eq!(got[0]["title"], json!("most"), "{got}");
}

/// `GET /v1/lists` recorded as the first exchange of five runs that wrote nothing: runs `a`
/// and `e` answered the same two records, while `b`, `c` and `d` each listed one record, every
/// one with its own id (each run minted its own).
fn engine_of_one_record_runs() -> Engine {
    let two = json!([{"id": "9", "title": "x"}, {"id": "10", "title": "y"}]);
    let list = lists_read(vec![
        moment("a/0", 200, two.clone()),
        moment("b/0", 200, json!([{"id": "1", "title": "b"}])),
        moment("c/0", 200, json!([{"id": "2", "title": "c"}])),
        moment("d/0", 200, json!([{"id": "3", "title": "d"}])),
        moment("e/0", 200, two),
    ]);
    lists_engine(vec![list])
}

#[test]
fn runs_vote_on_the_answers_shape_before_its_values() {
    let e = engine_of_one_record_runs();
    // Three runs of five listed one record: that is the answer most runs gave, though no two
    // of them gave it byte for byte; of those, the first in run order answers.
    let got = body(&get(&e, Some("fresh"), "/v1/lists"));
    assert_eq!(got, json!([{"id": "1", "title": "b"}]));
}

/// `POST /v1/lists` recorded as the first exchange of three runs, each answered with its own
/// minted id; run `a` (first in run order) answered without the `tags` the other two showed.
#[test]
fn a_first_write_recorded_by_many_runs_answers_as_most_of_them_did() {
    let post = lists_create_answered(vec![
        moment("a/0", 200, json!({"id": "1", "title": "t"})),
        moment("b/0", 200, json!({"id": "2", "title": "t", "tags": ["x"]})),
        moment("c/0", 200, json!({"id": "3", "title": "t", "tags": ["y"]})),
    ]);
    let e = lists_engine(vec![post]);
    let got = body(&send(
        &e,
        Some("fresh"),
        "POST",
        "/v1/lists",
        json!({"title": "t"}),
    ));
    assert_eq!(got["tags"], json!(["x"]), "{got}");
}
