//! A list filtered by its items' key answers, for a key nothing acted on, the item the
//! recordings read before any write named its key: `GET /v1/relationships?id=a` read before
//! any follow of `a` shows the untouched relationship.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Map, Value, json};
use wraith_model::UntouchedItem;

fn account(id: &str) -> Value {
    json!({"id": id, "username": format!("user-{id}")})
}

fn relationship(id: &str, following: bool, note: &str) -> Value {
    json!({"id": id, "following": following, "note": note})
}

fn relationships(id: &str, answer: Value) -> wraith_recording::Exchange {
    let mut e = common::ok_json("GET", "/v1/relationships", None, &answer);
    e.request.query = format!("id={id}");
    e
}

/// Run `n` reads accounts `a{n}` and `b{n}`, reads `a{n}`'s relationship (untouched, its
/// `note` `untouched`), follows `b{n}` and reads that relationship.
fn run(n: u64, untouched: &str) -> Vec<wraith_recording::Exchange> {
    let (a, b) = (format!("a{n}"), format!("b{n}"));
    vec![
        common::ok_json("GET", &format!("/v1/accounts/{a}"), None, &account(&a)),
        common::ok_json("GET", &format!("/v1/accounts/{b}"), None, &account(&b)),
        relationships(&a, json!([relationship(&a, false, untouched)])),
        common::ok_json(
            "POST",
            &format!("/v1/accounts/{b}/follow"),
            None,
            &relationship(&b, true, ""),
        ),
        relationships(&b, json!([relationship(&b, true, "")])),
    ]
}

fn untouched(notes: [&str; 3]) -> Option<UntouchedItem> {
    let m = common::synth_runs(
        "social",
        "https://social.test",
        (1..=3).map(|n| run(n, notes[n as usize - 1])).collect(),
    );
    let list = common::route(&m, "GET", "/v1/relationships");
    let shape = list.list.as_ref().expect("a list");
    assert_eq!(shape.filters, vec!["id".to_string()], "{shape:?}");
    shape.untouched_item.clone()
}

#[test]
fn a_key_filtered_list_learns_the_item_read_before_any_write_named_its_key() {
    let item = untouched(["", "", ""]).expect("learned");
    assert!(item.of.contains(&"accounts".to_string()), "{:?}", item.of);
    assert!(
        !item.of.contains(&"relationships".to_string()),
        "{:?}",
        item.of
    );
    let fields: Map<String, Value> = json!({"following": false, "note": ""})
        .as_object()
        .unwrap()
        .clone();
    assert_eq!(
        item.fields, fields,
        "the followed relationships are not untouched ones"
    );
}

#[test]
fn untouched_items_that_disagree_teach_nothing() {
    assert_eq!(untouched(["", "", "a note"]), None);
}
