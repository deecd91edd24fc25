//! A replayed moment of run R embedding R's own record of a create this session made (answered
//! from another run) names the session's record with the strings the session was given: a
//! field that names the record (a `uri` embedding its key) is the session's stored record's
//! value of that field, not R's value with the key renamed.

use crate::support;

use serde_json::json;
use support::*;
use wraith_model::*;

#[test]
fn an_embedded_counterparts_uri_is_the_one_the_sessions_create_answered() {
    // Runs a and b recorded the same create under different accounts; only run b recorded the
    // notification page that embeds its record.
    let create_body = json!({"title": "t"});
    let record = |id: &str, owner: &str| json!({"id": id, "title": "t", "uri": format!("https://x.example/users/{owner}/lists/{id}")});
    let post = R::new("POST", "/v1/lists")
        .op(StateOp::Create, "lists")
        .variant(200, Guard::Always, c(record("99", "Z")))
        .exact(
            "/v1/lists",
            "",
            Some(&create_body),
            vec![
                moment("a/0", 200, record("1", "A")),
                moment("b/0", 200, record("2", "B")),
            ],
        )
        .build();
    let page = json!([{
        "id": "n9",
        "list": {
            "id": "2",
            "title": "t",
            "uri": "https://x.example/users/B/lists/2",
            "url": "https://x.example/lists/2",
            "owner": "https://x.example/users/B"
        }
    }]);
    let e = lists_with_run_b_notes(post, page);
    let created = body(&send(&e, Some("s"), "POST", "/v1/lists", create_body));
    assert_eq!(
        created["uri"],
        json!("https://x.example/users/A/lists/1"),
        "the create is answered from run a: {created}"
    );
    let got = body(&get(&e, Some("s"), "/v1/notes"));
    let list = &got[0]["list"];
    assert_eq!(list["id"], json!("1"), "{got}");
    // The session was told this uri; run b's account path with the session's key is a name
    // it never heard.
    assert_eq!(
        list["uri"],
        json!("https://x.example/users/A/lists/1"),
        "{got}"
    );
    // A field the stored record lacks keeps the recorded string with the key renamed; a field
    // not naming the record stays as recorded.
    assert_eq!(list["url"], json!("https://x.example/lists/1"), "{got}");
    assert_eq!(list["owner"], json!("https://x.example/users/B"), "{got}");
}

#[test]
fn a_replayed_pages_link_names_the_sessions_record_where_the_run_named_its_own() {
    let create_body = json!({"title": "t"});
    let post = R::new("POST", "/v1/lists")
        .op(StateOp::Create, "lists")
        .variant(200, Guard::Always, c(json!({"id": "99", "title": "t"})))
        .exact(
            "/v1/lists",
            "",
            Some(&create_body),
            vec![
                moment("a/0", 200, json!({"id": "1", "title": "t"})),
                moment("b/0", 200, json!({"id": "2", "title": "t"})),
            ],
        )
        .build();
    // Run b's page of notes on its list, linking the next page of that list.
    let mut page = moment(
        "b/1",
        200,
        json!([{"id": "n9", "list": {"id": "2", "title": "t"}}]),
    );
    page.headers.push((
        "link".to_string(),
        "<https://x.example/v1/notes?list_id=2&max_id=n9>; rel=\"next\"".to_string(),
    ));
    let notes = R::new("GET", "/v1/notes")
        .variant(200, Guard::Always, c(json!([])))
        .exact("/v1/notes", "", None, vec![page])
        .build();
    let e = engine(
        model(
            vec![post, notes],
            vec![("lists", entity_type(&[], &[], vec![]))],
        ),
        det_opts(),
    );
    let created = body(&send(&e, Some("s"), "POST", "/v1/lists", create_body));
    assert_eq!(created["id"], json!("1"), "answered from run a: {created}");
    let r = get(&e, Some("s"), "/v1/notes");
    assert_eq!(body(&r)[0]["list"]["id"], json!("1"));
    assert_eq!(
        header(&r.headers, "link"),
        Some("<https://x.example/v1/notes?list_id=1&max_id=n9>; rel=\"next\""),
        "the link names the session's list as the body does"
    );
}
