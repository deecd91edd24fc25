//! Sort orders (`ListShape::sorts`): a query value naming an item field (`sort=name`,
//! `sort=-created_at`) whose every recorded answer listed the items ordered by it is learned
//! with the direction the answers show; a value whose answers were not ordered by the field it
//! names, or showed too few items in order to tell an order from chance, is not.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

use wraith_model::{Model, SortOrder};
use wraith_recording::{Exchange, Headers, RecordedSession};

fn list(query: &str, items: &[(&str, &str, u64)]) -> Exchange {
    let items: Vec<Value> = items
        .iter()
        .map(|(id, name, n)| json!({"id": id, "name": name, "rank": n}))
        .collect();
    let mut ex = common::json_exchange(
        "GET",
        "/v1/widgets",
        200,
        Headers::new(),
        None,
        &json!({"data": items}),
    );
    ex.request.query = query.to_string();
    ex
}

fn sorts(exchanges: Vec<Exchange>) -> Vec<SortOrder> {
    let sessions: Vec<RecordedSession> = vec![common::session("s0", 0, exchanges)];
    let m: Model = common::synth_model("widgets", "https://api.widgets.example", &sessions);
    common::route(&m, "GET", "/v1/widgets")
        .list
        .as_ref()
        .expect("a list route")
        .sorts
        .clone()
}

#[test]
fn answers_ordered_by_the_field_a_sort_value_names_learn_the_order_and_its_direction() {
    let got = sorts(vec![
        list(
            "",
            &[("w1", "kilo", 1), ("w2", "alpha", 2), ("w3", "mike", 3)],
        ),
        list(
            "sort=name",
            &[
                ("w2", "alpha", 2),
                ("w1", "kilo", 1),
                ("w4", "lima", 4),
                ("w3", "mike", 3),
            ],
        ),
        list(
            "sort=-rank",
            &[
                ("w4", "lima", 4),
                ("w3", "mike", 3),
                ("w2", "alpha", 2),
                ("w1", "kilo", 1),
            ],
        ),
    ]);
    assert_eq!(
        got,
        vec![
            SortOrder {
                param: "sort".into(),
                value: "-rank".into(),
                field: "rank".into(),
                descending: true
            },
            SortOrder {
                param: "sort".into(),
                value: "name".into(),
                field: "name".into(),
                descending: false
            },
        ]
    );
}

#[test]
fn a_sort_value_whose_answers_are_not_ordered_by_its_field_is_not_learned() {
    let got = sorts(vec![
        // Not ordered by name; ordered by rank, but with one item; named, but unordered.
        list(
            "sort=name",
            &[
                ("w1", "kilo", 1),
                ("w2", "alpha", 2),
                ("w3", "mike", 3),
                ("w4", "lima", 4),
            ],
        ),
        list("sort=rank", &[("w1", "kilo", 1)]),
        list(
            "q=name",
            &[
                ("w1", "kilo", 1),
                ("w2", "alpha", 2),
                ("w3", "mike", 3),
                ("w4", "lima", 4),
            ],
        ),
        // Two items in order are too few to tell an order from chance.
        list("order=name", &[("w2", "alpha", 2), ("w1", "kilo", 1)]),
    ]);
    assert_eq!(got, Vec::new());
}

#[test]
fn the_pages_of_one_walk_are_one_ordered_sequence() {
    // Two items a page, each page in order and in order across pages: three pairs in all.
    // The same pages as separate lists (no cursor) hold two pairs: too few.
    let pages = |cursor: bool| {
        let q = |after: &str| {
            if cursor && !after.is_empty() {
                format!("limit=2&sort=name&cursor={after}")
            } else {
                "limit=2&sort=name".to_string()
            }
        };
        sorts(vec![
            list(&q(""), &[("w2", "alpha", 2), ("w1", "kilo", 1)]),
            list(&q("w1"), &[("w4", "lima", 4), ("w3", "mike", 3)]),
        ])
    };
    assert_eq!(
        pages(true),
        vec![SortOrder {
            param: "sort".into(),
            value: "name".into(),
            field: "name".into(),
            descending: false
        }]
    );
    assert_eq!(pages(false), Vec::new());
}
