//! Fields a create takes from its request though no recording sent them
//! (`Route::create_inputs`), through `synthesize`: runs create widgets without `size`,
//! `labels`, `note` or `owner`, and are answered the defaults; what each run minted, stamped
//! or was sent is not an input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::{Value, json};
use wraith_model::Model;

/// Widget `n` as a create answers it: a minted id and token, the sent name, a stamp, and the
/// defaults (`owner` is `null` until a read of another widget shows it, given `owner`).
fn widget(n: u64) -> Value {
    json!({
        "id": format!("w_{n:04}"),
        "token": format!("tok_{:08x}", n * 7919),
        "name": format!("w{n}"),
        "kind": "basic",
        "created": format!("2023-11-14T22:{:02}:20.000Z", 13 + n),
        "size": 0,
        "labels": [],
        "settings": {"color": "blue", "ratio": 1},
        "note": "",
        "owner": null
    })
}

/// Three runs, each creating a widget (sending its name, a `kind` the API answers as its own
/// and a `null` for `labels`) and reading it; with `owner`, a read of a widget made elsewhere
/// showing that owner.
fn model(owner: Option<Value>) -> Model {
    let mut runs: Vec<Vec<_>> = (1..=3u64)
        .map(|n| {
            // `labels: null` is a client's unset collection, not a value.
            let sent = json!({"name": format!("w{n}"), "kind": "fancy", "labels": null});
            vec![
                ok_json("POST", "/v1/widgets", Some(&sent), &widget(n)),
                ok_json("GET", &format!("/v1/widgets/w_{n:04}"), None, &widget(n)),
            ]
        })
        .collect();
    if let Some(owner) = owner {
        let mut other = widget(9);
        other["owner"] = owner;
        runs.push(vec![ok_json("GET", "/v1/widgets/w_0009", None, &other)]);
    }
    common::synth_runs("t", "https://api.example", runs)
}

fn inputs(m: &Model) -> Vec<String> {
    common::route(m, "POST", "/v1/widgets")
        .create_inputs
        .clone()
}

#[test]
fn unsent_defaults_are_inputs_and_minted_stamped_or_sent_fields_are_not() {
    let m = model(None);
    // `owner` is `null` in every recording: its type is unknown.
    assert_eq!(inputs(&m), ["labels", "note", "settings", "size"]);
}

#[test]
fn a_null_default_is_an_input_where_recorded_answers_show_a_scalar_there() {
    assert_eq!(
        inputs(&model(Some(json!("alice")))),
        ["labels", "note", "owner", "settings", "size"]
    );
    assert_eq!(
        inputs(&model(Some(json!({"name": "alice"})))),
        ["labels", "note", "settings", "size"]
    );
}

#[test]
fn reads_and_updates_learn_no_inputs() {
    let m = model(None);
    assert!(
        common::route(&m, "GET", "/v1/widgets/:param")
            .create_inputs
            .is_empty()
    );
}

#[test]
fn each_type_of_a_tagged_union_answer_counts_as_a_template() {
    // Shapes answered by kind: circles carry a radius, squares a side; both a `note` default
    // no run sent.
    let shape = |n: u64, kind: &str| {
        let mut v = json!({"id": format!("s_{n:04}"), "kind": kind, "note": "", "layer": 0});
        if kind == "circle" {
            v["radius"] = json!(n);
        } else {
            v["side"] = json!(n);
        }
        v
    };
    let runs: Vec<Vec<_>> = (1..=6u64)
        .map(|n| {
            let kind = if n % 2 == 0 { "circle" } else { "square" };
            let sent = json!({"kind": kind, "size": n});
            vec![ok_json("POST", "/v1/shapes", Some(&sent), &shape(n, kind))]
        })
        .collect();
    let m = common::synth_runs("t", "https://api.example", runs);
    let create = common::route(&m, "POST", "/v1/shapes");
    assert!(
        create.variants.iter().any(|v| v.union.is_some()),
        "expected a tagged-union answer: {:?}",
        create.variants
    );
    assert_eq!(create.create_inputs, ["layer", "note"]);
}
