//! A session's follow-up request naming its own record (a create answered from run a) that only
//! run b recorded, naming b's record of the same create: the twin answers b's recorded moment
//! with b's record renamed to the session's.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_engine::{Engine, Provenance, Request};
use wraith_model::*;

/// `POST /v1/lists` recorded identically by every run in `posts` (each minting its own id),
/// then the follow-ups in `extra`.
fn engine_of(posts: &[(&str, &str)], extra: Vec<Route>) -> Engine {
    let sources: Vec<String> = posts.iter().map(|(run, _)| format!("{run}/0")).collect();
    let moments: Vec<(&str, &str)> = sources
        .iter()
        .zip(posts)
        .map(|(source, (_, id))| (source.as_str(), *id))
        .collect();
    let mut routes = vec![lists_create(&moments)];
    routes.extend(extra);
    let known: Vec<&str> = posts.iter().map(|(_, id)| *id).collect();
    without_pii(engine(
        model(routes, vec![("lists", entity_type(&known, &[], vec![]))]),
        det_opts(),
    ))
}

/// `POST /v1/lists/:id/pin` (an action), recorded per `(run, list id)`.
fn pin_route(recorded: &[(&str, &str)]) -> Route {
    let mut r = R::new("POST", "/v1/lists/:id/pin").variant(
        200,
        Guard::Always,
        c(json!({"id": "99", "title": "t", "pinned": true})),
    );
    for (run, id) in recorded {
        r = r.exact(
            &format!("/v1/lists/{id}/pin"),
            "",
            None,
            vec![moment(
                &format!("{run}/1"),
                200,
                json!({"id": id, "title": "t", "pinned": true, "run": run}),
            )],
        );
    }
    r.build()
}

fn create(e: &Engine, session: &str) -> String {
    let created = send(e, Some(session), "POST", "/v1/lists", json!({"title": "t"}));
    body(&created)["id"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn pin(e: &Engine, session: &str, id: &str) -> wraith_engine::Response {
    e.handle(
        Some(session),
        &req("POST", &format!("/v1/lists/{id}/pin"), None),
    )
}

#[test]
fn a_follow_up_only_another_run_recorded_answers_that_runs_moment_with_the_sessions_id() {
    let e = engine_of(
        &[("a", "1001"), ("b", "1002")],
        vec![pin_route(&[("b", "1002")])],
    );
    let mine = create(&e, "s");
    assert_eq!(mine, "1001", "the create is answered from run a");
    let pinned = pin(&e, "s", &mine);
    assert_eq!(pinned.status, 200);
    assert_eq!(
        body(&pinned),
        json!({"id": "1001", "title": "t", "pinned": true, "run": "b"})
    );
    assert_eq!(pinned.provenance, Provenance::Recorded);
    assert_eq!(pinned.exchange.as_deref(), Some("b/1"));
    assert_eq!(
        pinned.replay, None,
        "another request's moment is never claimed"
    );
}

#[test]
fn a_counterpart_replays_link_names_the_sessions_record() {
    // Run b's page of its list's items, linking the next page of that list.
    let mut page = moment("b/1", 200, json!([{"id": "i1", "list_id": "1002"}]));
    page.headers.push((
        "link".to_string(),
        "<https://x.example/v1/lists/1002/items?max_id=i1>; rel=\"next\"".to_string(),
    ));
    let items = R::new("GET", "/v1/lists/:id/items")
        .variant(200, Guard::Always, c(json!([])))
        .exact("/v1/lists/1002/items", "", None, vec![page])
        .build();
    let e = engine_of(&[("a", "1001"), ("b", "1002")], vec![items]);
    let mine = create(&e, "s");
    let r = get(&e, Some("s"), &format!("/v1/lists/{mine}/items"));
    assert_eq!(r.exchange.as_deref(), Some("b/1"), "run b's moment");
    assert_eq!(body(&r), json!([{"id": "i1", "list_id": "1001"}]));
    assert_eq!(
        header(&r.headers, "link"),
        Some("<https://x.example/v1/lists/1001/items?max_id=i1>; rel=\"next\""),
        "the link names the session's list as the body does"
    );
}

#[test]
fn a_follow_up_naming_the_record_in_its_json_body_or_query_is_matched_too() {
    let notes = R::new("POST", "/v1/notes")
        .variant(200, Guard::Always, c(json!({"id": "n0"})))
        .exact(
            "/v1/notes",
            "",
            Some(&json!({"list_ids": ["1002"], "text": "x"})),
            vec![moment(
                "b/1",
                200,
                json!({"id": "n1", "list": {"id": "1002", "title": "t"}}),
            )],
        )
        .build();
    let items = R::new("GET", "/v1/items")
        .variant(200, Guard::Always, c(json!([])))
        .exact(
            "/v1/items",
            "list_id=1002",
            None,
            vec![moment("b/2", 200, json!([{"id": "i1", "list_id": "1002"}]))],
        )
        .build();
    let e = engine_of(&[("a", "1001"), ("b", "1002")], vec![notes, items]);
    let mine = create(&e, "s");
    let note = send(
        &e,
        Some("s"),
        "POST",
        "/v1/notes",
        json!({"list_ids": [mine], "text": "x"}),
    );
    assert_eq!(
        body(&note),
        json!({"id": "n1", "list": {"id": "1001", "title": "t"}})
    );
    assert_eq!(note.exchange.as_deref(), Some("b/1"));
    let listed = get(&e, Some("s"), &format!("/v1/items?list_id={mine}"));
    assert_eq!(listed.exchange.as_deref(), Some("b/2"));
    assert_eq!(listed.provenance, Provenance::Recorded);
}

/// `POST /v1/statuses` (not a create), whose one recording is run b's request keyed `key`,
/// answered `answer` (`b/1`).
fn statuses_recorded(key: RequestKey, answer: Value) -> Route {
    let mut statuses = R::new("POST", "/v1/statuses")
        .variant(200, Guard::Always, c(json!({"id": "s0"})))
        .build();
    statuses.exact.push(ExactEntry {
        key,
        moments: vec![moment("b/1", 200, answer)],
        session_bound: Vec::new(),
    });
    statuses
}

/// Session `s` posts `body` (of `content_type`) to `/v1/statuses`.
fn post_status(e: &Engine, content_type: &str, body: Vec<u8>) -> wraith_engine::Response {
    e.handle(
        Some("s"),
        &Request {
            method: "POST".into(),
            path: "/v1/statuses".into(),
            query: String::new(),
            headers: vec![("content-type".into(), content_type.into())],
            body: body.into(),
        },
    )
}

#[test]
fn a_follow_up_naming_the_record_in_a_form_body_is_matched() {
    let form_key = request_key::request_key(
        "/v1/statuses",
        "",
        Some("application/x-www-form-urlencoded"),
        b"media_ids%5B%5D=1002&status=hi",
    );
    let statuses = statuses_recorded(form_key, json!({"id": "s1", "media": [{"id": "1002"}]}));
    let e = engine_of(&[("a", "1001"), ("b", "1002")], vec![statuses]);
    let mine = create(&e, "s");
    let posted = post_status(
        &e,
        "application/x-www-form-urlencoded",
        format!("status=hi&media_ids[]={mine}").into_bytes(),
    );
    assert_eq!(
        body(&posted),
        json!({"id": "s1", "media": [{"id": "1001"}]})
    );
}

/// A multipart body with boundary `b`: `status` and `in_reply_to_id` text parts and an image
/// file part.
fn multipart_post(b: &str, reply_to: &str) -> Vec<u8> {
    format!(
        "--{b}\r\nContent-Disposition: form-data; name=\"status\"\r\n\r\nhi\r\n\
         --{b}\r\nContent-Disposition: form-data; name=\"in_reply_to_id\"\r\n\r\n{reply_to}\r\n\
         --{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cat.png\"\r\n\
         Content-Type: image/png\r\n\r\nPNG-1001\r\n--{b}--\r\n"
    )
    .into_bytes()
}

#[test]
fn a_follow_up_naming_the_record_in_a_multipart_text_part_is_matched() {
    let ct = |b: &str| format!("multipart/form-data; boundary={b}");
    let recorded_key = request_key::request_key(
        "/v1/statuses",
        "",
        Some(&ct("recorded")),
        &multipart_post("recorded", "1002"),
    );
    let statuses = statuses_recorded(
        recorded_key,
        json!({"id": "s1", "in_reply_to": {"id": "1002"}}),
    );
    let e = engine_of(&[("a", "1001"), ("b", "1002")], vec![statuses]);
    let mine = create(&e, "s");
    assert_eq!(mine, "1001");
    // A fresh boundary, and the file part's bytes name the session's id too: only the text part
    // is a reference.
    let posted = post_status(&e, &ct("fresh-7f3a"), multipart_post("fresh-7f3a", &mine));
    assert_eq!(
        body(&posted),
        json!({"id": "s1", "in_reply_to": {"id": "1001"}})
    );
    assert_eq!(posted.provenance, Provenance::Recorded);
    assert_eq!(posted.exchange.as_deref(), Some("b/1"));
    assert_eq!(posted.replay, None);
}

#[test]
fn a_request_naming_an_id_with_no_counterpart_is_answered_as_before() {
    let e = engine_of(
        &[("a", "1001"), ("b", "1002")],
        vec![pin_route(&[("b", "1002")])],
    );
    create(&e, "s");
    // 7777 is no record of the session's: the route's template answers, as without counterparts.
    let other = pin(&e, "s", "7777");
    assert_eq!(other.provenance, Provenance::Template);
    // A session that never created anything holds no counterparts at all.
    let fresh = pin(&e, "t", "1001");
    assert_eq!(fresh.provenance, Provenance::Template);
}

#[test]
fn a_request_that_replays_under_its_own_key_is_unchanged() {
    // Both runs recorded the pin of their own list: the session's pin replays run a's.
    let e = engine_of(
        &[("a", "1001"), ("b", "1002")],
        vec![pin_route(&[("a", "1001"), ("b", "1002")])],
    );
    let mine = create(&e, "s");
    let pinned = pin(&e, "s", &mine);
    assert_eq!(body(&pinned)["run"], json!("a"));
    assert_eq!(pinned.exchange.as_deref(), Some("a/1"));
}

#[test]
fn the_run_the_session_is_narrowed_to_answers_before_other_runs() {
    // A read recorded only by runs a and c narrows the session to them; the create is answered
    // from a; the pin is recorded by b and c: c answers, though b sorts first.
    let flags = R::new("GET", "/v1/flags")
        .variant(200, Guard::Always, c(json!({})))
        .exact(
            "/v1/flags",
            "mode=cc",
            None,
            vec![
                moment("a/9", 200, json!({"on": true})),
                moment("c/9", 200, json!({"on": true})),
            ],
        )
        .build();
    let e = engine_of(
        &[("a", "1001"), ("b", "1002"), ("c", "1003")],
        vec![flags, pin_route(&[("b", "1002"), ("c", "1003")])],
    );
    assert_eq!(get(&e, Some("s"), "/v1/flags?mode=cc").status, 200);
    let mine = create(&e, "s");
    assert_eq!(mine, "1001");
    let pinned = pin(&e, "s", &mine);
    assert_eq!(
        body(&pinned),
        json!({"id": "1001", "title": "t", "pinned": true, "run": "c"})
    );
    // Without the narrowing, the runs are tried in order: b first.
    let mine = create(&e, "u");
    assert_eq!(body(&pin(&e, "u", &mine))["run"], json!("b"));
}

#[test]
fn after_a_counterpart_replay_later_answers_come_from_that_run() {
    // Run a's and b's later reads of the same URL differ; after the pin answered from b, the
    // session's read is b's, with b's list renamed to the session's.
    let overview = R::new("GET", "/v1/overview")
        .variant(200, Guard::Always, c(json!({})))
        .exact(
            "/v1/overview",
            "",
            None,
            vec![
                moment("a/2", 200, json!({"top": {"id": "1001"}, "run": "a"})),
                moment("b/2", 200, json!({"top": {"id": "1002"}, "run": "b"})),
            ],
        )
        .build();
    let e = engine_of(
        &[("a", "1001"), ("b", "1002")],
        vec![pin_route(&[("b", "1002")]), overview],
    );
    let mine = create(&e, "s");
    assert_eq!(body(&pin(&e, "s", &mine))["run"], json!("b"));
    assert_eq!(
        body(&get(&e, Some("s"), "/v1/overview")),
        json!({"top": {"id": "1001"}, "run": "b"})
    );
}

#[test]
fn counterpart_replays_are_deterministic() {
    let run = || -> Vec<(u16, Value, Option<String>)> {
        let e = engine_of(
            &[("a", "1001"), ("b", "1002"), ("c", "1003")],
            vec![pin_route(&[("c", "1003"), ("b", "1002")])],
        );
        ["s", "t"]
            .iter()
            .map(|s| {
                let mine = create(&e, s);
                let r = pin(&e, s, &mine);
                (r.status, body(&r), r.exchange.clone())
            })
            .collect()
    };
    let first = run();
    assert_eq!(first, run());
    assert_eq!(first[0], first[1]);
}

#[test]
fn a_record_created_under_the_sessions_record_stands_for_the_other_runs_record_in_its_answers() {
    // Each run created an item under its own list (a: 5001 in 1001, b: 5002 in 1002); only run b
    // listed the list's items. The session's item was answered from run a; in run b's page, b's
    // item stands for it, so the page holds the session's item once.
    let items_create = R::new("POST", "/v1/lists/:id/items")
        .op(StateOp::Create, "items")
        .parent("id", "lists")
        .variant(200, Guard::Always, c(json!({"id": "99"})))
        .exact(
            "/v1/lists/1001/items",
            "",
            Some(&json!({"name": "x"})),
            vec![moment("a/1", 200, json!({"id": "5001", "name": "x"}))],
        )
        .exact(
            "/v1/lists/1002/items",
            "",
            Some(&json!({"name": "x"})),
            vec![moment("b/1", 200, json!({"id": "5002", "name": "x"}))],
        )
        .build();
    let items_list = R::new("GET", "/v1/lists/:id/items")
        .op(StateOp::List, "items")
        .parent("id", "lists")
        .list(bare_array_list())
        .variant(200, Guard::Always, c(json!([])))
        .exact(
            "/v1/lists/1002/items",
            "",
            None,
            vec![moment("b/2", 200, json!([{"id": "5002", "name": "x"}]))],
        )
        .build();
    let e = engine_of(
        &[("a", "1001"), ("b", "1002")],
        vec![items_create, items_list],
    );
    let mine = create(&e, "s");
    let item = send(
        &e,
        Some("s"),
        "POST",
        &format!("/v1/lists/{mine}/items"),
        json!({"name": "x"}),
    );
    assert_eq!(body(&item)["id"], json!("5001"));
    let page = get(&e, Some("s"), &format!("/v1/lists/{mine}/items"));
    let ids: Vec<Value> = body(&page)
        .as_array()
        .map(|a| a.iter().map(|i| i["id"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(ids, vec![json!("5001")], "{}", body(&page));
}

#[test]
fn the_other_runs_record_named_anywhere_in_the_answer_names_the_sessions_record() {
    // Run b's answer refers to b's list by a plain reference field and in a URL, not as an
    // embedded record: those mentions were b's echo of the request, so they name the session's.
    let tag = R::new("POST", "/v1/lists/:id/tags")
        .variant(200, Guard::Always, c(json!({"id": "t0"})))
        .exact(
            "/v1/lists/1002/tags",
            "",
            Some(&json!({"tag": "x"})),
            vec![moment(
                "b/1",
                200,
                json!({"id": "t1", "list_id": 1002, "url": "/v1/lists/1002/tags/t1"}),
            )],
        )
        .build();
    let e = engine_of(&[("a", "1001"), ("b", "1002")], vec![tag]);
    let mine = create(&e, "s");
    let tagged = send(
        &e,
        Some("s"),
        "POST",
        &format!("/v1/lists/{mine}/tags"),
        json!({"tag": "x"}),
    );
    assert_eq!(
        body(&tagged),
        json!({"id": "t1", "list_id": 1001, "url": "/v1/lists/1001/tags/t1"})
    );
}

#[test]
fn an_action_answered_from_another_run_makes_that_runs_version_the_sessions_record() {
    // Run b's pin answer shows b's version of its list (another title): the session now replays
    // run b, so its own read of the list (answered from its store) shows that version too.
    let mut pin = R::new("POST", "/v1/lists/:id/pin")
        .variant(200, Guard::Always, c(json!({"id": "99", "title": "t"})))
        .exact(
            "/v1/lists/1002/pin",
            "",
            None,
            vec![moment(
                "b/1",
                200,
                json!({"id": "1002", "title": "b's title", "pinned": true}),
            )],
        )
        .build();
    pin.action = Some(ActionEffect {
        entity_type: "lists".into(),
        id_param: "id".into(),
        fields: vec!["pinned".into()],
        counters: Default::default(),
        at: String::new(),
        sets: Default::default(),
        set_by: String::new(),
        answered_fields: Vec::new(),
        followed_fields: Vec::new(),
        appends: Vec::new(),
        indexed_counters: Vec::new(),
        undoes_wrappers: Vec::new(),
    });
    let read = R::new("GET", "/v1/lists/:id")
        .op(StateOp::Read, "lists")
        .variant(200, Guard::Always, c(json!({"id": "99", "title": "t"})))
        .build();
    let e = engine_of(&[("a", "1001"), ("b", "1002")], vec![pin, read]);
    let mine = create(&e, "s");
    let pinned = self::pin(&e, "s", &mine);
    let expected = json!({"id": "1001", "title": "b's title", "pinned": true});
    assert_eq!(body(&pinned), expected);
    assert_eq!(pinned.exchange.as_deref(), Some("b/1"));
    assert_eq!(
        body(&get(&e, Some("s"), &format!("/v1/lists/{mine}"))),
        expected
    );
}

#[test]
fn an_action_answered_from_another_run_keeps_the_sessions_values_of_its_transient_fields() {
    // Run b's resize answer shows `status: resizing`, which the action's answers show without it
    // lasting (`answered_fields`): the session's record takes b's version but keeps its own
    // status, so its next read does not show the resize still running.
    let mut resize = R::new("POST", "/v1/lists/:id/resize")
        .variant(200, Guard::Always, c(json!({"id": "99", "title": "t"})))
        .exact(
            "/v1/lists/1002/resize",
            "",
            None,
            vec![moment(
                "b/1",
                200,
                json!({"id": "1002", "title": "b's title", "status": "resizing"}),
            )],
        )
        .build();
    resize.action = Some(ActionEffect {
        entity_type: "lists".into(),
        id_param: "id".into(),
        fields: Vec::new(),
        counters: Default::default(),
        at: String::new(),
        sets: Default::default(),
        set_by: String::new(),
        answered_fields: vec!["status".into()],
        followed_fields: Vec::new(),
        appends: Vec::new(),
        indexed_counters: Vec::new(),
        undoes_wrappers: Vec::new(),
    });
    let read = R::new("GET", "/v1/lists/:id")
        .op(StateOp::Read, "lists")
        .variant(200, Guard::Always, c(json!({"id": "99", "title": "t"})))
        .build();
    let e = engine_of(&[("a", "1001"), ("b", "1002")], vec![resize, read]);
    let mine = create(&e, "s");
    let resized = e.handle(
        Some("s"),
        &req("POST", &format!("/v1/lists/{mine}/resize"), None),
    );
    assert_eq!(
        body(&resized),
        json!({"id": "1001", "title": "b's title", "status": "resizing"})
    );
    let read = body(&get(&e, Some("s"), &format!("/v1/lists/{mine}")));
    assert_eq!(read["title"], "b's title", "{read}");
    assert_ne!(read["status"], "resizing", "{read}");
}
