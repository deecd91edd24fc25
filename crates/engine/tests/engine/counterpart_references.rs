//! A replayed moment of run R that references R's own record of a create this session made
//! (answered from another run) by its bare key, such as a reply's `in_reply_to_id`, names the
//! session's record instead, as an embedded copy of that record already does.

use crate::support;

use serde_json::json;
use support::*;

#[test]
fn a_moment_referencing_another_runs_record_of_the_sessions_create_names_the_sessions_record() {
    // Runs a and b both recorded the same create (long ids); only run b recorded the reply
    // that references its list.
    let post = lists_create(&[("a/0", "1000001"), ("b/0", "2000002")]);
    let page = json!([{
        "id": "9000009",
        "list_id": "2000002",
        "note": "see 2000002"
    }]);
    let e = lists_with_run_b_notes(post, page);
    let created = body(&send(
        &e,
        Some("s"),
        "POST",
        "/v1/lists",
        json!({"title": "t"}),
    ));
    assert_eq!(
        created["id"],
        json!("1000001"),
        "answered from run a: {created}"
    );
    let got = body(&get(&e, Some("s"), "/v1/notes"));
    assert_eq!(got[0]["list_id"], json!("1000001"), "{got}");
    assert_eq!(got[0]["id"], json!("9000009"), "{got}");
    assert_eq!(
        got[0]["note"],
        json!("see 2000002"),
        "not a whole value: {got}"
    );
}
