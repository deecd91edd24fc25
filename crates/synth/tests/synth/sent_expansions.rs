//! What an update's or a create's answers make of the fields it sent, through `synthesize`: a
//! profile update sends its slots empty and its links as short items; every recorded answer
//! holds all the slots and each link made a record (an id, a state flag, the network of the
//! subnet sent). A network create answers each subnet sent made a record, and `[]` without.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::{Value, json};
use wraith_model::{ImplicitLink, Model, SentExpansions};
use wraith_recording::RecordedSession;

/// Session `n`: a network with a subnet, a profile, then an update of the profile sending
/// empty slots and two short links (one joining the subnet). With `short`, the update's
/// answer holds fewer slots than it was sent.
fn session(n: u64, short: bool) -> RecordedSession {
    let (net, sub, p) = (40_000 + n, 41_000 + n, 50_000 + n);
    let slots = json!({"a": null, "b": null});
    let answered_slots = if short { json!({}) } else { slots.clone() };
    let sent_slots = if short { json!({"a": null}) } else { json!({}) };
    common::session(
        &format!("prof{n}"),
        1_700_000_500_000_000 + n * 1_000,
        vec![
            ok_json(
                "POST",
                "/v1/networks",
                Some(&json!({"label": format!("net-{n}"), "subnets": [{"label": "inner"}]})),
                &json!({"id": net, "label": format!("net-{n}"),
                        "subnets": [{"id": sub, "label": "inner"}]}),
            ),
            ok_json(
                "POST",
                "/v1/profiles",
                Some(&json!({"label": format!("p{n}")})),
                &json!({"id": p, "label": format!("p{n}"), "slots": slots, "links": []}),
            ),
            ok_json(
                "PUT",
                &format!("/v1/profiles/{p}"),
                Some(&json!({"label": format!("p{n}"), "slots": sent_slots,
                             "links": [{"kind": "public"}, {"kind": "net", "subnet_id": sub}]})),
                &json!({"id": p, "label": format!("p{n}"), "slots": answered_slots,
                        "links": [
                            {"id": 70_000 + 2 * n, "kind": "public", "active": false,
                             "network_id": null, "subnet_id": null},
                            {"id": 70_001 + 2 * n, "kind": "net", "active": false,
                             "network_id": net, "subnet_id": sub}]}),
            ),
        ],
    )
}

fn expansions(model: &Model) -> Option<&SentExpansions> {
    model
        .routes
        .iter()
        .find(|r| r.method == "PUT" && r.path == "/v1/profiles/:param")
        .expect("update route")
        .sent_expansions
        .as_ref()
}

#[test]
fn an_update_answering_more_than_it_was_sent_teaches_merged_objects_and_expanded_items() {
    let model = common::synth_model(
        "t",
        "https://api.example",
        &(1..=3).map(|n| session(n, false)).collect::<Vec<_>>(),
    );
    let exp = expansions(&model).expect("expansions learned");
    assert_eq!(exp.merged_objects, vec!["slots".to_string()]);
    assert_eq!(exp.items.len(), 1, "{:?}", exp.items);
    let links = &exp.items[0];
    assert_eq!(links.field, "links");
    // Two sent items per recorded update, in session order.
    let kinds: Vec<&Value> = links.samples.iter().map(|s| &s.request["kind"]).collect();
    assert_eq!(kinds.len(), 6);
    assert_eq!(kinds[..2], [&json!("public"), &json!("net")]);
    let net = &links.samples[1];
    assert_eq!(net.items[0]["id"], json!(70_003));
    let ty = model
        .entity_types
        .keys()
        .find(|k| k.contains("network"))
        .expect("network type")
        .clone();
    // The network the answered link names is found again through the subnet the item sent.
    assert_eq!(
        net.links,
        vec![ImplicitLink {
            value: "40001".into(),
            entity_type: ty,
            request_pointers: vec!["/subnet_id".into()],
        }]
    );
    assert!(links.samples[0].links.is_empty(), "{:?}", links.samples[0]);
}

#[test]
fn an_object_answered_without_a_key_it_was_sent_is_not_merged() {
    let model = common::synth_model(
        "t",
        "https://api.example",
        &(1..=3).map(|n| session(n, true)).collect::<Vec<_>>(),
    );
    let merged = expansions(&model).map(|e| e.merged_objects.clone());
    assert!(merged.as_ref().is_none_or(|m| m.is_empty()), "{merged:?}");
}

#[test]
fn items_one_recorded_answer_did_not_give_back_one_for_one_are_not_expanded() {
    let mut sessions: Vec<RecordedSession> = (1..=3).map(|n| session(n, false)).collect();
    // The third update's answer drops the public link: the array is not answered item for
    // item, so no sent item can be told what it becomes.
    let put = &sessions[2].exchanges[2];
    let mut answer: Value = serde_json::from_slice(&put.response_body()).unwrap();
    answer["links"].as_array_mut().unwrap().remove(0);
    sessions[2].exchanges[2] = ok_json(
        "PUT",
        &put.request.path.clone(),
        Some(&serde_json::from_slice(&put.request.body).unwrap()),
        &answer,
    );
    let model = common::synth_model("t", "https://api.example", &sessions);
    let items = expansions(&model).map(|e| e.items.len());
    assert!(items.is_none_or(|n| n == 0), "{items:?}");
}

/// Session `n` creating a network: with `subnets` sent (each answered made a record with an
/// id), else without, answered `absent_answer` there.
fn network_session(n: u64, with_subnets: bool, absent_answer: &Value) -> RecordedSession {
    let net = 60_000 + n;
    let (sent, answered) = if with_subnets {
        (
            json!({"label": format!("net-{n}"),
                   "subnets": [{"label": "a", "ipv4": "10.0.0.0/24"}, {"label": "b"}]}),
            json!({"id": net, "label": format!("net-{n}"),
                   "subnets": [{"id": 61_000 + 2 * n, "label": "a", "ipv4": "10.0.0.0/24"},
                               {"id": 61_001 + 2 * n, "label": "b", "ipv4": null}]}),
        )
    } else {
        (
            json!({"label": format!("net-{n}")}),
            json!({"id": net, "label": format!("net-{n}"), "subnets": absent_answer}),
        )
    };
    common::session(
        &format!("net{n}"),
        1_700_000_600_000_000 + n * 1_000,
        vec![ok_json("POST", "/v1/networks", Some(&sent), &answered)],
    )
}

fn create_expansions(model: &Model) -> Option<&SentExpansions> {
    model
        .routes
        .iter()
        .find(|r| r.method == "POST" && r.path == "/v1/networks")
        .expect("create route")
        .sent_expansions
        .as_ref()
}

#[test]
fn a_create_expanding_the_items_it_sent_keeps_what_creates_without_them_answered() {
    let sessions: Vec<RecordedSession> = (1..=4)
        .map(|n| network_session(n, n % 2 == 1, &json!([])))
        .collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    let exp = create_expansions(&model).expect("expansions learned on the create");
    assert!(exp.merged_objects.is_empty(), "{exp:?}");
    assert_eq!(exp.items.len(), 1, "{exp:?}");
    let subnets = &exp.items[0];
    assert_eq!(subnets.field, "subnets");
    assert_eq!(
        subnets.samples.len(),
        4,
        "two sent items in each of two creates"
    );
    assert_eq!(subnets.samples[0].items[0]["id"], json!(61_002));
    assert_eq!(subnets.when_absent, Some(json!([])));
}

#[test]
fn creates_without_the_field_answering_differently_keep_no_absent_answer() {
    let sessions: Vec<RecordedSession> = (1..=4)
        .map(|n| {
            let other = if n == 2 {
                json!([])
            } else {
                json!([{"id": 9, "label": "default", "ipv4": null}])
            };
            network_session(n, n % 2 == 1, &other)
        })
        .collect();
    let model = common::synth_model("t", "https://api.example", &sessions);
    let exp = create_expansions(&model).expect("expansions learned on the create");
    assert_eq!(exp.items.len(), 1, "{exp:?}");
    assert_eq!(exp.items[0].when_absent, None);
}
