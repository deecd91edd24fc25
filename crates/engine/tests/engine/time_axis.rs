//! The per-session time axis over several recorded runs of the same requests: once a session
//! was served one run's answer, later answers agree with it.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_engine::Engine;
use wraith_model::*;

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|i| i["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// `POST /v1/lists` then `GET /v1/lists`, recorded in several runs; each run created its own
/// list id. `gets` says which runs also recorded the GET, and what it answered.
fn lists_engine(posts: &[(&str, &str)], gets: &[(&str, Value)]) -> Engine {
    engine(lists_engine_model(posts, gets), det_opts())
}

fn lists_engine_model(posts: &[(&str, &str)], gets: &[(&str, Value)]) -> Model {
    let sources: Vec<String> = posts.iter().map(|(run, _)| format!("{run}/0")).collect();
    let moments: Vec<(&str, &str)> = sources
        .iter()
        .zip(posts)
        .map(|(source, (_, id))| (source.as_str(), *id))
        .collect();
    let post = lists_create(&moments);
    let list = R::new("GET", "/v1/lists")
        .op(StateOp::List, "lists")
        .list(bare_array_list())
        .variant(200, Guard::Always, c(json!([])))
        .exact(
            "/v1/lists",
            "",
            None,
            gets.iter()
                .map(|(run, body)| moment(&format!("{run}/1"), 200, body.clone()))
                .collect(),
        )
        .build();
    model(
        vec![post, list],
        vec![("lists", entity_type(&[], &[], vec![]))],
    )
}

#[test]
fn later_answers_come_from_the_run_whose_answer_was_served() {
    // Runs b and c agree on the GET, a does not; the session was served a's POST (id 1), so
    // its GET must be a's, not the majority answer of the other runs.
    let e = lists_engine(
        &[("a", "1"), ("b", "2"), ("c", "3")],
        &[
            ("a", json!([{"id": "1", "title": "t"}])),
            ("b", json!([{"id": "7", "title": "t"}])),
            ("c", json!([{"id": "7", "title": "t"}])),
        ],
    );
    let created = send(&e, Some("s"), "POST", "/v1/lists", json!({"title": "t"}));
    let id = body(&created)["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let listed = ids(&body(&get(&e, Some("s"), "/v1/lists")));
    assert!(listed.contains(&id), "created {id}, listed {listed:?}");
}

#[test]
fn a_replayed_create_shows_in_a_list_answered_from_another_run() {
    // Run a recorded only the POST; the GET is recorded by run b alone. The list the session
    // gets still holds the list it created.
    let e = lists_engine(
        &[("a", "1"), ("b", "2")],
        &[("b", json!([{"id": "2", "title": "t"}]))],
    );
    let created = send(&e, Some("s"), "POST", "/v1/lists", json!({"title": "t"}));
    let id = body(&created)["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let listed = ids(&body(&get(&e, Some("s"), "/v1/lists")));
    assert!(listed.contains(&id), "created {id}, listed {listed:?}");
}

#[test]
fn a_read_answered_differently_by_runs_does_not_pin_the_session() {
    // Runs b and c agree on `GET /v1/me` (a counter), a differs; only run a recorded the list
    // after its create. The read must not drop run a: the create and the list then come from
    // the same run, and the list holds exactly the session's list.
    let me = R::new("GET", "/v1/me")
        .variant(200, Guard::Always, c(json!({"n": 0})))
        .exact(
            "/v1/me",
            "",
            None,
            vec![
                moment("a/0", 200, json!({"n": 1})),
                moment("b/0", 200, json!({"n": 2})),
                moment("c/0", 200, json!({"n": 2})),
            ],
        )
        .build();
    let mut m = lists_engine_model(
        &[("a", "1"), ("b", "2"), ("c", "3")],
        &[("a", json!([{"id": "1", "title": "t"}]))],
    );
    m.routes.push(me);
    let e = engine(m, det_opts());
    assert_eq!(
        body(&get(&e, Some("r"), "/v1/me"))["n"],
        json!(2),
        "majority answer"
    );
    let created = send(&e, Some("r"), "POST", "/v1/lists", json!({"title": "t"}));
    let id = body(&created)["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let listed = ids(&body(&get(&e, Some("r"), "/v1/lists")));
    assert_eq!(listed, vec![id]);
}

/// `POST /v1/lists` recorded by runs a and b, each posting twice (a minted 1001 and 1003, b 1002 and 1004),
/// `GET /v1/lists/1002` and `GET /v1/lists?local=1` recorded by run b only, and `GET /v1/lists`
/// recorded by both after their posts.
fn two_runs_posting_twice() -> Engine {
    let post = lists_create(&[
        ("a/0", "1001"),
        ("a/1", "1003"),
        ("b/0", "1002"),
        ("b/1", "1004"),
    ]);
    let read = R::new("GET", "/v1/lists/:id")
        .op(StateOp::Read, "lists")
        .variant(200, Guard::Always, c(json!({"id": "99", "title": "t"})))
        .exact(
            "/v1/lists/1002",
            "",
            None,
            vec![moment("b/2", 200, json!({"id": "1002", "title": "t"}))],
        )
        .build();
    let list = R::new("GET", "/v1/lists")
        .op(StateOp::List, "lists")
        .list(bare_array_list())
        .variant(200, Guard::Always, c(json!([])))
        .exact(
            "/v1/lists",
            "",
            None,
            vec![
                moment("a/2", 200, json!([{"id": "1001"}, {"id": "1003"}])),
                moment("b/3", 200, json!([{"id": "1002"}, {"id": "1004"}])),
            ],
        )
        .exact(
            "/v1/lists",
            "local=1",
            None,
            vec![moment("b/4", 200, json!([{"id": "1002"}, {"id": "1004"}]))],
        )
        .build();
    engine(
        model(
            vec![post, read, list],
            vec![(
                "lists",
                entity_type(&["1001", "1002", "1003", "1004"], &[], vec![]),
            )],
        ),
        det_opts(),
    )
}

#[test]
fn a_write_repeated_identically_by_runs_that_answered_differently_claims_no_exact_replay() {
    // Nothing in the requests tells runs a and b apart, so neither post's answer is provably
    // this session's own moment, even after the first one was answered from run a.
    let e = two_runs_posting_twice();
    for _ in 0..2 {
        let r = send(&e, Some("s"), "POST", "/v1/lists", json!({"title": "t"}));
        assert_eq!(r.status, 200);
        assert_eq!(r.replay, None, "{}", body(&r));
    }
}

#[test]
fn a_request_naming_what_only_another_run_recorded_moves_the_session_to_that_run() {
    // The first post is answered from run a (id 1001); the session then reads list 1002, which only
    // run b recorded: it is replaying run b, so its list comes from run b as recorded.
    let e = two_runs_posting_twice();
    let created = send(&e, Some("s"), "POST", "/v1/lists", json!({"title": "t"}));
    assert_eq!(body(&created)["id"], json!("1001"));
    let read = get(&e, Some("s"), "/v1/lists/1002");
    assert_eq!(body(&read)["id"], json!("1002"));
    let again = send(&e, Some("s"), "POST", "/v1/lists", json!({"title": "t"}));
    assert_eq!(body(&again)["id"], json!("1004"));
    assert_eq!(
        ids(&body(&get(&e, Some("s"), "/v1/lists"))),
        vec!["1002", "1004"]
    );
}

#[test]
fn a_flag_query_only_another_run_recorded_keeps_the_sessions_write_in_the_list() {
    // `local=1` names no recorded id: it does not prove the session is run b, so the list run b
    // recorded still shows the list this session created (answered from run a).
    let e = two_runs_posting_twice();
    let created = send(&e, Some("s"), "POST", "/v1/lists", json!({"title": "t"}));
    assert_eq!(body(&created)["id"], json!("1001"));
    let listed = ids(&body(&e.handle(
        Some("s"),
        &wraith_engine::Request {
            method: "GET".into(),
            path: "/v1/lists".into(),
            query: "local=1".into(),
            headers: vec![],
            body: Default::default(),
        },
    )));
    assert!(listed.contains(&"1001".to_string()), "{listed:?}");
}

#[test]
fn a_list_from_another_run_shows_the_sessions_record_in_place_of_that_runs_own_create() {
    // Run a recorded only the POST; run b recorded the same POST (minting 2) and then the
    // list holding it. The session's create was answered from run a (1): in run b's list, b's
    // own create stands for it, so the list holds the session's list once and not b's.
    let e = lists_engine(
        &[("a", "1"), ("b", "2")],
        &[("b", json!([{"id": "2", "title": "t"}]))],
    );
    let created = send(&e, Some("s"), "POST", "/v1/lists", json!({"title": "t"}));
    assert_eq!(body(&created)["id"], json!("1"));
    assert_eq!(ids(&body(&get(&e, Some("s"), "/v1/lists"))), vec!["1"]);
}

/// `POST /v1/lists` recorded identically by runs a and b (a minted 1001, b 1002), then
/// `GET /v1/lists/1001` recorded by run a only.
fn two_runs_then_a_read_of_the_first() -> Engine {
    let post = lists_create(&[("a/0", "1001"), ("b/0", "1002")]);
    let read = R::new("GET", "/v1/lists/:id")
        .op(StateOp::Read, "lists")
        .variant(200, Guard::Always, c(json!({"id": "99", "title": "t"})))
        .exact(
            "/v1/lists/1001",
            "",
            None,
            vec![moment("a/1", 200, json!({"id": "1001", "title": "t"}))],
        )
        .build();
    engine(
        model(
            vec![post, read],
            vec![("lists", entity_type(&["1001", "1002"], &[], vec![]))],
        ),
        det_opts(),
    )
}

#[test]
fn a_request_naming_an_id_served_from_an_unproven_run_claims_no_exact_replay() {
    // The post is answered from run a (1001) though run b posted the same: the session reading
    // 1001 is using the id it was given, which proves nothing about which run it replays, so
    // run a's read is served without an exactness claim.
    let e = two_runs_then_a_read_of_the_first();
    let created = send(&e, Some("s"), "POST", "/v1/lists", json!({"title": "t"}));
    assert_eq!(created.replay, None);
    let id = body(&created)["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let read = get(&e, Some("s"), &format!("/v1/lists/{id}"));
    assert_eq!(read.status, 200);
    assert_eq!(body(&read)["id"], json!(id));
    assert_eq!(read.replay, None, "{}", body(&read));
    // A session that names 1001 without having been served it is provably replaying run a.
    let direct = get(&e, Some("t"), "/v1/lists/1001");
    assert!(direct.replay.is_some(), "{}", body(&direct));
}

/// A config that answers 503 until its cluster is ready, recorded as three polling runs.
fn polled_config_engine() -> Engine {
    let s = |run: &str, statuses: &[u16]| -> Vec<Moment> {
        statuses
            .iter()
            .enumerate()
            .map(|(i, st)| {
                let body = if *st == 200 {
                    json!({"config": "ready"})
                } else {
                    json!({"errors": [{"reason": "not ready"}]})
                };
                moment(&format!("{run}/{i}"), *st, body)
            })
            .collect()
    };
    let route = R::new("GET", "/v1/clusters/:id/config")
        .variant(200, Guard::Always, obj(vec![("config", c(json!("ready")))]))
        .variant(
            503,
            Guard::Always,
            obj(vec![("errors", c(json!([{"reason": "not ready"}])))]),
        )
        .exact("/v1/clusters/1/config", "", None, s("a", &[503, 503, 200]))
        .exact("/v1/clusters/2/config", "", None, s("b", &[503, 200]))
        .exact(
            "/v1/clusters/3/config",
            "",
            None,
            s("c", &[503, 503, 503, 200]),
        )
        .build();
    engine(model(vec![route], vec![]), det_opts())
}

#[test]
fn an_unrecorded_polled_url_follows_the_median_recorded_status_series() {
    let e = polled_config_engine();
    let statuses: Vec<u16> = (0..4)
        .map(|_| send(&e, Some("s"), "GET", "/v1/clusters/9/config", json!(null)).status)
        .collect();
    assert_eq!(statuses, vec![503, 503, 200, 200]);
    // Another URL polls from the start of the series; another namespace too.
    assert_eq!(
        send(&e, Some("s"), "GET", "/v1/clusters/8/config", json!(null)).status,
        503
    );
    assert_eq!(
        send(&e, Some("t"), "GET", "/v1/clusters/9/config", json!(null)).status,
        503
    );
}

#[test]
fn a_read_recorded_before_and_after_a_delete_is_not_a_polled_series() {
    let route = R::new("GET", "/v1/notes/:id")
        .variant(200, Guard::Always, obj(vec![("note", c(json!("n")))]))
        .variant(404, Guard::Always, obj(vec![("error", c(json!("gone")))]))
        .exact(
            "/v1/notes/1",
            "",
            None,
            vec![
                moment("a/0", 200, json!({"note": "n"})),
                moment("a/2", 404, json!({"error": "gone"})),
            ],
        )
        .build();
    let e = engine(model(vec![route], vec![]), det_opts());
    for _ in 0..3 {
        assert_eq!(
            send(&e, Some("s"), "GET", "/v1/notes/7", json!(null)).status,
            200
        );
    }
}

#[test]
fn a_refusal_to_another_principal_then_the_owners_read_is_not_a_polled_series() {
    // Each run: the owner created the note, a stranger read it (403), the owner read it (200).
    // That is who asked, not a resource becoming ready: the owner's first read is a 200.
    let by = |source: &str, status: u16, principal: &str| {
        let mut m = moment(
            source,
            status,
            if status == 200 {
                json!({"note": "n"})
            } else {
                json!({"error": "forbidden"})
            },
        );
        m.principal = Some(principal.to_string());
        m
    };
    let mut route = R::new("GET", "/v1/notes/:id")
        .variant(200, Guard::Always, obj(vec![("note", c(json!("n")))]))
        .variant(
            403,
            Guard::Always,
            obj(vec![("error", c(json!("forbidden")))]),
        );
    for (run, id) in [("a", "1"), ("b", "2"), ("c", "3")] {
        route = route.exact(
            &format!("/v1/notes/{id}"),
            "",
            None,
            vec![
                by(&format!("{run}/1"), 403, "Bearer stranger"),
                by(&format!("{run}/2"), 200, "Bearer owner"),
            ],
        );
    }
    let e = engine(model(vec![route.build()], vec![]), det_opts());
    assert_eq!(
        send(&e, Some("s"), "GET", "/v1/notes/7", json!(null)).status,
        200
    );
}

#[test]
#[allow(clippy::unwrap_used)]
fn many_runs_of_one_history_each_replayed_in_its_own_session_get_their_runs_answers() {
    // 1,500 recorded runs of the same create and list, each replayed in a session of its own,
    // as `wraith check` replays them: each session is answered its create and finds it
    // listed. The time axis weighs every recorded run of a request once per distinct
    // question, not once per session (that took time quadratic in the runs).
    let n = 1500;
    let runs: Vec<String> = (0..n).map(|i| format!("r{i:05}")).collect();
    let posts: Vec<(&str, &str)> = runs.iter().map(|r| (r.as_str(), "1")).collect();
    let gets: Vec<(&str, Value)> = runs
        .iter()
        .map(|r| (r.as_str(), json!([{"id": "1", "title": "t"}])))
        .collect();
    let e = lists_engine(&posts, &gets);
    for i in 0..n {
        let s = format!("s{i}");
        let created = send(&e, Some(&s), "POST", "/v1/lists", json!({"title": "t"}));
        assert_eq!(body(&created)["id"], "1", "session {s}");
        let listed = ids(&body(&get(&e, Some(&s), "/v1/lists")));
        assert_eq!(listed, vec!["1".to_string()], "session {s}");
        // As the check does once a session is replayed.
        e.delete_session(&s).unwrap();
    }
}
