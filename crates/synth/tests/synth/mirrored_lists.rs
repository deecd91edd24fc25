//! An answer array holding one item per object a request array sent (a filter's `keywords`
//! for its `keywords_attributes`), each with that object's fields, is learned as a mirrored
//! list, whether the objects came as JSON or as form fields; a contradicting answer or a
//! single mirrored item learns nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;
use serde_json::{Value, json};
use wraith_model::{JsonType, MirroredField, MirroredList, Model};
use wraith_recording::Exchange;

/// A filter create sending `sent` as `(keyword, whole_word)` objects, answered `listed`.
fn create(id: &str, sent: &[(&str, bool)], listed: &[(&str, bool)]) -> Exchange {
    let mut body = json!({"title": format!("filter {id}")});
    if !sent.is_empty() {
        body["keywords_attributes"] = sent
            .iter()
            .map(|(k, w)| json!({"keyword": k, "whole_word": w}))
            .collect();
    }
    let keywords: Vec<Value> = listed
        .iter()
        .enumerate()
        .map(|(i, (k, w))| json!({"id": format!("{id}{i}"), "keyword": k, "whole_word": w}))
        .collect();
    ok_json(
        "POST",
        "/v2/filters",
        Some(&body),
        &json!({"id": id, "title": format!("filter {id}"), "keywords": keywords}),
    )
}

/// `create` sent as a form (`keywords_attributes[0][keyword]=…&…[whole_word]=1`).
fn form_create(id: &str, sent: &[(&str, bool)]) -> Exchange {
    let e = create(id, sent, sent);
    let mut form = format!("title=filter+{id}");
    for (i, (k, w)) in sent.iter().enumerate() {
        form.push_str(&format!(
            "&keywords_attributes%5B{i}%5D%5Bkeyword%5D={k}&keywords_attributes%5B{i}%5D%5Bwhole_word%5D={}",
            u8::from(*w)
        ));
    }
    common::with_form_body(e, form)
}

fn mirrored(model: &Model) -> Vec<MirroredList> {
    common::route(model, "POST", "/v2/filters")
        .mirrored_lists
        .clone()
}

fn synth(exchanges: Vec<Exchange>) -> Model {
    let runs = exchanges.into_iter().map(|ex| vec![ex]).collect();
    common::synth_runs("social", "https://social.test", runs)
}

fn keywords_rule() -> MirroredList {
    MirroredList {
        field: "/keywords_attributes".into(),
        at: "/keywords".into(),
        fields: vec![
            MirroredField {
                key: "keyword".into(),
                from: "keyword".into(),
                observed_type: JsonType::String,
            },
            MirroredField {
                key: "whole_word".into(),
                from: "whole_word".into(),
                observed_type: JsonType::Bool,
            },
        ],
        empty_when_absent: true,
        records: None,
    }
}

#[test]
fn creates_answering_the_objects_they_sent_learn_a_mirrored_list() {
    let model = synth(vec![
        create(
            "1",
            &[("spam", true), ("eggs", false)],
            &[("spam", true), ("eggs", false)],
        ),
        form_create("2", &[("ham", true)]),
        create("3", &[], &[]),
    ]);
    assert_eq!(mirrored(&model), vec![keywords_rule()]);
}

/// A run creating filter `id` with two keywords, then listing them under it.
fn create_and_list(id: &str) -> Vec<Exchange> {
    let made = create(
        id,
        &[("spam", true), ("eggs", false)],
        &[("spam", true), ("eggs", false)],
    );
    let listed =
        serde_json::from_slice::<Value>(&made.response_body()).unwrap()["keywords"].clone();
    vec![
        made,
        ok_json("GET", &format!("/v2/filters/{id}/keywords"), None, &listed),
    ]
}

#[test]
fn items_a_list_under_the_created_record_shows_are_learned_as_its_records() {
    let runs = vec![create_and_list("1"), create_and_list("2")];
    let model = common::synth_runs("social", "https://social.test", runs);
    let list = common::route(&model, "GET", "/v2/filters/:param/keywords");
    let ty = list.entity_type.clone().unwrap();
    let rules = mirrored(&model);
    assert_eq!(
        rules,
        vec![MirroredList {
            records: Some(ty),
            ..keywords_rule()
        }]
    );
}

#[test]
fn items_no_list_shows_are_no_records() {
    // The same creates, the keywords never listed under the filter.
    let runs = vec![create_and_list("1"), create_and_list("2")]
        .into_iter()
        .map(|run| run.into_iter().take(1).collect())
        .collect();
    let model = common::synth_runs("social", "https://social.test", runs);
    assert_eq!(mirrored(&model), vec![keywords_rule()]);
}

#[test]
fn one_create_with_two_objects_is_enough() {
    let model = synth(vec![create(
        "1",
        &[("spam", true), ("eggs", false)],
        &[("spam", true), ("eggs", false)],
    )]);
    assert_eq!(mirrored(&model), vec![keywords_rule()]);
}

#[test]
fn a_single_mirrored_item_learns_nothing() {
    let model = synth(vec![create("1", &[("spam", true)], &[("spam", true)])]);
    assert_eq!(mirrored(&model), Vec::new());
}

#[test]
fn an_answer_in_another_order_contradicts_the_rule() {
    let model = synth(vec![
        create(
            "1",
            &[("spam", true), ("eggs", false)],
            &[("spam", true), ("eggs", false)],
        ),
        create(
            "2",
            &[("ham", true), ("jam", true)],
            &[("jam", true), ("ham", true)],
        ),
    ]);
    assert_eq!(mirrored(&model), Vec::new());
}

#[test]
fn a_filled_answer_to_a_request_sending_nothing_contradicts_the_rule() {
    let model = synth(vec![
        create(
            "1",
            &[("spam", true), ("eggs", false)],
            &[("spam", true), ("eggs", false)],
        ),
        create("2", &[], &[("spam", true)]),
    ]);
    assert_eq!(mirrored(&model), Vec::new());
}

#[test]
fn an_update_never_recorded_sending_nothing_leaves_its_list_when_nothing_is_sent() {
    let update = |id: &str, sent: &[(&str, bool)]| {
        let mut e = create(id, sent, sent);
        e.request.method = "PATCH".into();
        e.request.path = "/v1/profile".into();
        e
    };
    let model = synth(vec![
        update("1", &[("a", true), ("b", false)]),
        update("2", &[("c", true)]),
    ]);
    let rules = common::route(&model, "PATCH", "/v1/profile")
        .mirrored_lists
        .clone();
    assert_eq!(
        rules,
        vec![MirroredList {
            empty_when_absent: false,
            records: None,
            ..keywords_rule()
        }]
    );
}

#[test]
fn an_array_answered_under_its_own_name_is_left_to_the_item_expansion() {
    let vpc = |id: &str, subnets: &[&str]| {
        let sent: Vec<Value> = subnets
            .iter()
            .map(|l| json!({"label": l, "ipv4": "10.0.0.0/24"}))
            .collect();
        let answered: Vec<Value> = subnets
            .iter()
            .enumerate()
            .map(|(i, l)| json!({"id": 500 + i, "label": l, "ipv4": "10.0.0.0/24", "linodes": []}))
            .collect();
        ok_json(
            "POST",
            "/v4/vpcs",
            Some(&json!({"label": format!("vpc {id}"), "subnets": sent})),
            &json!({"id": id, "label": format!("vpc {id}"), "subnets": answered}),
        )
    };
    let model = synth(vec![
        vpc("1", &["a", "b"]),
        vpc("2", &["c"]),
        vpc("3", &["d"]),
    ]);
    let route = common::route(&model, "POST", "/v4/vpcs");
    let expanded: Vec<&str> = route
        .sent_expansions
        .iter()
        .flat_map(|x| x.items.iter().map(|i| i.field.as_str()))
        .collect();
    assert_eq!(expanded, vec!["subnets"]);
    assert_eq!(route.mirrored_lists, Vec::new());
}

/// An issue create sending `labels` as the names `sent`, answered one `{id, name}` object per
/// name of `listed`.
fn labelled(id: u64, sent: &[&str], listed: &[&str]) -> Exchange {
    let answered: Vec<Value> = listed
        .iter()
        .enumerate()
        .map(|(i, n)| json!({"id": id * 10 + i as u64, "name": n}))
        .collect();
    let mut body = json!({"title": format!("issue {id}")});
    if !sent.is_empty() {
        body["labels"] = json!(sent);
    }
    ok_json(
        "POST",
        "/repos/acme/widgets/issues",
        Some(&body),
        &json!({"id": id, "title": format!("issue {id}"), "labels": answered}),
    )
}

fn issue_rules(model: &Model) -> Vec<MirroredList> {
    common::route(model, "POST", "/repos/acme/widgets/issues")
        .mirrored_lists
        .clone()
}

#[test]
fn an_array_of_names_answered_as_named_objects_learns_a_mirrored_list_from_the_scalars() {
    let model = synth(vec![
        labelled(1, &["bug", "docs"], &["bug", "docs"]),
        labelled(2, &["question"], &["question"]),
        labelled(3, &[], &[]),
    ]);
    assert_eq!(
        issue_rules(&model),
        vec![MirroredList {
            field: "/labels".into(),
            at: "/labels".into(),
            fields: vec![MirroredField {
                key: "name".into(),
                from: String::new(),
                observed_type: JsonType::String,
            }],
            empty_when_absent: true,
            records: None,
        }]
    );
}

#[test]
fn scalars_answered_in_another_order_learn_nothing() {
    let model = synth(vec![
        labelled(1, &["bug", "docs"], &["bug", "docs"]),
        labelled(2, &["ham", "jam"], &["jam", "ham"]),
    ]);
    assert_eq!(issue_rules(&model), Vec::new());
}
