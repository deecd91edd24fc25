//! A create answered `201` with a `Location` naming the created record: the served twin names
//! the record it made for the session, by the key its answer holds, on the twin's own origin,
//! so a client that follows the header reads that record. A `Location` that names no value of
//! its answer (a fixed page) is served as recorded. Black-box: the real binary on HARs
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.widgets.test";

/// `entry` answered `status` with the response header `Location: location`.
fn located(status: u16, location: &str, entry: Value) -> Value {
    har::with_response_header(har::with_status(entry, status), "Location", location)
}

/// Run `i` creates widget `key` named `run-i` (answered `201` with its `Location`), reads it,
/// and posts a report answered with a fixed `Location`.
fn widgets_twin(keys: &[&str]) -> Twin {
    let runs = keys
        .iter()
        .enumerate()
        .map(|(i, key)| {
            let record = json!({"id": key, "name": format!("run-{i}")});
            vec![
                located(
                    201,
                    &format!("{ORIGIN}/v1/widgets/{key}?expand=owner"),
                    har::entry(
                        ORIGIN,
                        "POST",
                        "/v1/widgets",
                        Some(&json!({"name": format!("run-{i}")})),
                        &record,
                    ),
                ),
                har::entry(ORIGIN, "GET", &format!("/v1/widgets/{key}"), None, &record),
                located(
                    202,
                    "/v1/reports/latest",
                    har::entry(
                        ORIGIN,
                        "POST",
                        "/v1/reports",
                        Some(&json!({"kind": "daily"})),
                        &json!({"state": "queued", "count": i + 1}),
                    ),
                ),
            ]
        })
        .collect();
    har::runs_twin("widgets", ORIGIN, runs)
}

#[tokio::test]
async fn a_created_records_location_names_the_key_the_twin_gave_it() {
    let t = widgets_twin(&["w_aaa111", "w_bbb222", "w_ccc333"]);
    let server = t.serve(&[]);
    for session in ["alice", "bob"] {
        let created = server
            .post("/v1/widgets", Some(session), json!({"name": "mine"}))
            .await;
        created.assert_status(201);
        let id = created.json()["id"].as_str().unwrap().to_string();
        assert!(
            !["w_aaa111", "w_bbb222", "w_ccc333"].contains(&id.as_str()),
            "{id}"
        );
        let location = created.header("location").unwrap().to_string();
        let own = format!("{}/v1/widgets/{id}?expand=owner", server.url);
        assert_eq!(location, own, "named by its own key on the twin's origin");
        // Following it reads the record the session made.
        let path = location.strip_prefix(&server.url).unwrap();
        let read = server.get(path, Some(session)).await;
        read.assert_status(200);
        assert_eq!(read.json(), json!({"id": id, "name": "mine"}));
    }
}

/// The key the record finally holds names it, also where it is set after rendering: one the
/// client sent (the recordings' creates sent none), or a fresh one.
#[tokio::test]
async fn a_created_records_location_names_the_key_the_client_sent() {
    let t = widgets_twin(&["w_aaa111", "w_bbb222", "w_ccc333"]);
    let server = t.serve(&[]);
    let created = server
        .post(
            "/v1/widgets",
            Some("carol"),
            json!({"id": "client_key_1", "name": "c"}),
        )
        .await;
    created.assert_status(201);
    assert_eq!(created.json()["id"], "client_key_1");
    assert_eq!(
        created.header("location"),
        Some(format!("{}/v1/widgets/client_key_1?expand=owner", server.url).as_str())
    );
    let read = server.get("/v1/widgets/client_key_1", Some("carol")).await;
    read.assert_status(200);
    assert_eq!(read.json()["name"], "c");
}

#[tokio::test]
async fn a_location_naming_no_value_of_its_answer_is_served_as_recorded() {
    let t = widgets_twin(&["w_aaa111", "w_bbb222"]);
    let server = t.serve(&[]);
    let queued = server
        .post("/v1/reports", Some("alice"), json!({"kind": "weekly"}))
        .await;
    queued.assert_status(202);
    assert_eq!(queued.header("location"), Some("/v1/reports/latest"));
    let route = har::model_route(&t, "POST", "/v1/reports");
    let rule: Vec<Value> = route["variants"][0]["headers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["name"] == "location")
        .map(|h| h["program"]["rule"].clone())
        .collect();
    assert_eq!(rule, vec![json!("constant")]);
}

/// The `location` header program synth wrote for `POST path` of `t`.
fn location_program(t: &Twin, path: &str) -> Value {
    let route = har::model_route(t, "POST", path);
    route["variants"][0]["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "location")
        .map(|h| h["program"].clone())
        .unwrap()
}

/// Runs creating a job per `(body, location)`, answered `201`.
fn jobs_twin(name: &str, runs: &[(Value, &str)]) -> Twin {
    let runs = runs
        .iter()
        .map(|(answer, location)| {
            vec![located(
                201,
                location,
                har::entry(ORIGIN, "POST", "/v1/jobs", Some(&json!({})), answer),
            )]
        })
        .collect();
    har::runs_twin(name, ORIGIN, runs)
}

#[test]
fn one_recorded_location_follows_an_identifier_of_its_answer_and_no_other_value() {
    // `5` is the answer's `count` and a whole segment of the header, but one recording cannot
    // tell a count from a key: only an identifier's key is trusted from one value.
    let counted = jobs_twin("counted", &[(json!({"id": 7, "count": 5}), "/v1/queues/5")]);
    assert_eq!(location_program(&counted, "/v1/jobs")["rule"], "constant");
    // `v1` holds `1`, but not as a whole token.
    let keyed = jobs_twin("keyed", &[(json!({"job_id": 1, "count": 5}), "/v1/jobs/1")]);
    assert_eq!(
        location_program(&keyed, "/v1/jobs"),
        json!({"rule": "body_value",
               "parts": [{"text": "/v1/jobs/"}, {"pointer": "/job_id"}],
               "values": ["/v1/jobs/1"]})
    );
}

#[test]
fn recorded_locations_following_one_value_of_their_answers_follow_it() {
    let t = jobs_twin(
        "tickets",
        &[
            (
                json!({"ticket": {"ref": "T-100"}, "n": 1}),
                "/v1/tickets/T-100#top",
            ),
            (
                json!({"ticket": {"ref": "T-200"}, "n": 2}),
                "/v1/tickets/T-200#top",
            ),
        ],
    );
    let program = location_program(&t, "/v1/jobs");
    assert_eq!(program["rule"], "body_value");
    assert_eq!(
        program["parts"],
        json!([{"text": "/v1/tickets/"}, {"pointer": "/ticket/ref"}, {"text": "#top"}])
    );
}

/// A create under its parent's path, answered with a `Location` naming both the parent and the
/// record (both in the answer): the twin names the session's own parent and record.
#[tokio::test]
async fn a_location_under_a_parent_names_the_sessions_parent_and_record() {
    let runs = ["aaa111", "bbb222", "ccc333"]
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let (project, task) = (format!("p_{k}"), format!("t_{k}"));
            let tasks = format!("/v1/projects/{project}/tasks");
            let record = json!({"id": task, "project_id": project, "title": format!("task-{i}")});
            vec![
                har::with_status(
                    har::entry(
                        ORIGIN,
                        "POST",
                        "/v1/projects",
                        Some(&json!({"name": "p"})),
                        &json!({"id": project, "name": "p"}),
                    ),
                    201,
                ),
                located(
                    201,
                    &format!("{ORIGIN}{tasks}/{task}"),
                    har::entry(
                        ORIGIN,
                        "POST",
                        &tasks,
                        Some(&json!({"title": format!("task-{i}")})),
                        &record,
                    ),
                ),
                har::entry(ORIGIN, "GET", &format!("{tasks}/{task}"), None, &record),
            ]
        })
        .collect();
    let t = har::runs_twin("projects", ORIGIN, runs);
    let server = t.serve(&[]);
    let project = server
        .post("/v1/projects", Some("dora"), json!({"name": "mine"}))
        .await;
    project.assert_status(201);
    let pid = project.json()["id"].as_str().unwrap().to_string();
    let created = server
        .post(
            &format!("/v1/projects/{pid}/tasks"),
            Some("dora"),
            json!({"title": "mine"}),
        )
        .await;
    created.assert_status(201);
    let body = created.json();
    assert_eq!(body["project_id"], pid.as_str(), "{body}");
    let tid = body["id"].as_str().unwrap();
    assert_eq!(
        created.header("location"),
        Some(format!("{}/v1/projects/{pid}/tasks/{tid}", server.url).as_str())
    );
}

/// `wraith check --holdout` holds a held-out session's create, which the twin renders (no
/// recorded answer of it is in the model), to a `Location` naming the record it answered, and
/// compares the header (`header_conformance`).
#[test]
fn check_holds_a_held_out_creates_location_to_the_record_it_answered() {
    let t = widgets_twin(&["w_aaa111", "w_bbb222", "w_ccc333", "w_ddd444"]);
    let out = t.wraith(&["check", &t.path_str(), "--holdout", "2", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no report ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    let located: Vec<&Value> = report["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["path"] == "/v1/widgets" && x["provenance"] == "template")
        .collect();
    assert!(
        !located.is_empty(),
        "a held-out create is rendered: {report}"
    );
    for x in located {
        assert_eq!(x["divergences"], 0, "{x}");
    }
    assert_eq!(report["holdout"]["held_out_score_bp"], 10000, "{report}");
    assert_eq!(
        report["dimensions"]["header_conformance"]["score_bp"],
        10000
    );
}

/// Recordings of the same request, each answered with its own record and a `Location` naming
/// it, agree: the check's ceiling (what the recordings themselves allow) judges each recorded
/// answer with its headers, so it loses nothing to them.
#[test]
fn recorded_answers_each_naming_their_own_record_do_not_disagree() {
    let origin = ORIGIN;
    let runs = ["w_aaa111", "w_bbb222", "w_ccc333", "w_ddd444"]
        .iter()
        .map(|key| {
            let record = json!({"id": key, "name": "same"});
            vec![
                located(
                    201,
                    &format!("{origin}/v1/widgets/{key}"),
                    har::entry(
                        origin,
                        "POST",
                        "/v1/widgets",
                        Some(&json!({"name": "same"})),
                        &record,
                    ),
                ),
                har::entry(origin, "GET", &format!("/v1/widgets/{key}"), None, &record),
            ]
        })
        .collect();
    let t = har::runs_twin("same", origin, runs);
    let report = t.check_report();
    assert_eq!(
        report["ceiling"]["score_bp"], 10000,
        "{}",
        report["ceiling"]
    );
    assert_eq!(report["ceiling"]["lost_recordings_disagree"], 0);
}
