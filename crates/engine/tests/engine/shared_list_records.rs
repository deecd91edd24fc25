//! Top-level list routes of one entity type list its recorded records (those their recorded
//! pages do not show) from copies the engine shares between them: each list shows its own
//! page's items as the page showed them and the rest of the records as recorded, all in key
//! order, and a session's delete hides a record from every list of its type.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_engine::Engine;
use wraith_model::*;

/// `GET /home` and `GET /public`, both listing `statuses` as a bare array; each recorded one
/// page of one item (`/home` shows status 2 as its page showed it), and the type has three
/// records. A request with a query misses the exact entries, so the list is served from the
/// recorded collection.
fn two_timelines() -> Engine {
    let list = |path: &str, shown: Value| {
        R::new("GET", path)
            .op(StateOp::List, "statuses")
            .list(bare_array_list())
            .variant(200, Guard::Always, c(json!([])))
            .exact(path, "", None, vec![moment("s1/1", 200, json!([shown]))])
            .build()
    };
    let delete = R::new("DELETE", "/statuses/:id")
        .op(StateOp::Delete, "statuses")
        .variant(200, Guard::Always, c(json!({})))
        .build();
    let records = vec![
        json!({"id": "1", "text": "one"}),
        json!({"id": "2", "text": "two"}),
        json!({"id": "3", "text": "three"}),
    ];
    engine(
        model(
            vec![
                list(
                    "/home",
                    json!({"id": "2", "text": "two, as the page showed it"}),
                ),
                list("/public", json!({"id": "3", "text": "three"})),
                delete,
            ],
            vec![("statuses", entity_type(&[], &[], records))],
        ),
        det_opts(),
    )
}

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|i| i["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn lists_of_one_type_each_show_their_page_and_the_shared_records_in_key_order() {
    let e = two_timelines();
    let home = body(&get(&e, Some("a"), "/home?x=1"));
    let public = body(&get(&e, Some("a"), "/public?x=1"));
    assert_eq!(ids(&home), ["1", "2", "3"], "{home}");
    assert_eq!(ids(&public), ["1", "2", "3"], "{public}");
    // The page's own item as the page showed it; the others as recorded.
    assert_eq!(home[1]["text"], json!("two, as the page showed it"));
    assert_eq!(public[1]["text"], json!("two"));
    assert_eq!(home[0], public[0]);
}

#[test]
fn a_record_deleted_in_a_session_leaves_every_list_of_its_type() {
    let e = two_timelines();
    let r = send(&e, Some("d"), "DELETE", "/statuses/1", json!(null));
    assert_eq!(r.status, 200);
    assert_eq!(ids(&body(&get(&e, Some("d"), "/home?x=1"))), ["2", "3"]);
    assert_eq!(ids(&body(&get(&e, Some("d"), "/public?x=1"))), ["2", "3"]);
    // Another session still sees it in both.
    assert_eq!(
        ids(&body(&get(&e, Some("o"), "/public?x=1"))),
        ["1", "2", "3"]
    );
}
