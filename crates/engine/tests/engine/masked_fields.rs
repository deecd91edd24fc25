//! Masked fields: where every recorded item of a list showed one constant at a field that every
//! create answered with a minted value (a client secret, listed as `"<REDACTED>"`), a page
//! listing the session's own record shows that constant, not the secret its create answered.
//! A field the create echoes (its `label`) is listed as the session's record has it.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_engine::Engine;
use wraith_model::*;

fn field(key: &str, value: Node) -> Field {
    Field {
        key: key.into(),
        value,
        optional: false,
        present_ratio_bp: 10_000,
    }
}

fn secret_shape() -> IdShape {
    IdShape::Token {
        prefix: String::new(),
        charset: IdCharset::Hex,
        length: 32,
    }
}

/// `POST /v1/clients` (the create mints `id` and `secret`, echoes `label`, answers `flags` as
/// `{"beta": 0}`) and `GET /v1/clients`, whose recorded items all list `secret` as `listed`,
/// `label` as `app` and `flags` as `{"beta": false}`.
fn clients(listed: &str) -> Engine {
    clients_answering(gen_id(secret_shape()), listed)
}

/// [`clients`], the create answering `secret` as `secret`.
fn clients_answering(secret: Node, listed: &str) -> Engine {
    let create = R::new("POST", "/v1/clients")
        .op(StateOp::Create, "clients")
        .variant(
            200,
            Guard::Always,
            Node::Object {
                fields: vec![
                    field("id", gen_id(cus_id())),
                    field("label", echo_body("/label", JsonType::String)),
                    field("secret", secret),
                    field(
                        "flags",
                        Node::Object {
                            fields: vec![field("beta", c(json!(0)))],
                        },
                    ),
                ],
            },
        )
        .build();
    let item = Node::Object {
        fields: vec![
            field("id", c(json!("cli_1"))),
            field("label", c(json!("app"))),
            field("secret", c(json!(listed))),
            field(
                "flags",
                Node::Object {
                    fields: vec![field("beta", c(json!(false)))],
                },
            ),
        ],
    };
    let list = R::new("GET", "/v1/clients")
        .op(StateOp::List, "clients")
        .list(bare_array_list())
        .variant(
            200,
            Guard::Always,
            Node::Array(ArrayNode::Tuple { items: vec![item] }),
        )
        .build();
    // Without the outbound PII pass, which would tokenize a value under a `secret` key.
    without_pii(engine(
        model(
            vec![create, list],
            vec![("clients", entity_type(&[], &[], Vec::new()))],
        ),
        det_opts(),
    ))
}

fn create_then_list(e: &Engine) -> (Value, Value) {
    let s = Some("agent");
    let created = send(e, s, "POST", "/v1/clients", json!({"label": "mine"}));
    assert_eq!(created.status, 200);
    let page = get(e, s, "/v1/clients");
    assert_eq!(page.status, 200);
    (body(&created), body(&page))
}

#[test]
fn a_listed_session_record_shows_the_constant_every_recorded_item_masked_its_minted_field_with() {
    let (created, page) = create_then_list(&clients("<REDACTED>"));
    assert_ne!(created["secret"], json!("<REDACTED>"), "{created}");
    let mine = page
        .as_array()
        .and_then(|items| items.iter().find(|i| i["id"] == created["id"]))
        .expect("the session's client is listed");
    assert_eq!(mine["secret"], json!("<REDACTED>"), "{page}");
    // Flags every create answered as 0 and every listing as false are listed as false.
    assert_eq!(mine["flags"], json!({"beta": false}), "{page}");
    // The echoed label is the session's record's own.
    assert_eq!(mine["label"], json!("mine"), "{page}");
}

#[test]
fn mask_is_learned_only_from_a_constant_no_create_answered() {
    // `secret` of the create is minted, so any listed constant masks it; but `label` is an
    // echo, so its listed constant never does.
    let (created, page) = create_then_list(&clients("***"));
    let mine = page
        .as_array()
        .and_then(|items| items.iter().find(|i| i["id"] == created["id"]))
        .expect("the session's client is listed");
    assert_eq!(mine["secret"], json!("***"));
    assert_ne!(mine["label"], json!("app"));
}

#[test]
fn a_listed_constant_of_the_minted_shape_is_one_records_own_and_masks_nothing() {
    // One recorded page listing one record: its secret is a constant of the template only
    // because one record was listed, and it has the shape the create mints.
    let (created, page) = create_then_list(&clients("0123456789abcdef0123456789abcdef"));
    let mine = page
        .as_array()
        .and_then(|items| items.iter().find(|i| i["id"] == created["id"]))
        .expect("the session's client is listed");
    assert_eq!(mine["secret"], created["secret"], "{page}");
}

/// The create's `secret` as synth classes secrets the recordings hold scrubbed: an observed
/// value per recorded create (`examples` then `more_examples`, `cut` when more were recorded).
fn observed_secrets(examples: &[&str], more: &[&str], cut: bool) -> Node {
    let strings = |xs: &[&str]| xs.iter().map(|x| json!(x)).collect::<Vec<_>>();
    let Node::Hole(mut h) = hole(HoleKind::Observed, JsonType::String, strings(examples)) else {
        unreachable!()
    };
    h.more_examples = strings(more);
    h.examples_cut = cut;
    Node::Hole(h)
}

fn my_listed_secret(e: &Engine) -> (Value, Value) {
    let (created, page) = create_then_list(e);
    let mine = page
        .as_array()
        .and_then(|items| items.iter().find(|i| i["id"] == created["id"]))
        .expect("the session's client is listed");
    (created["secret"].clone(), mine["secret"].clone())
}

#[test]
fn a_listed_constant_no_observed_create_secret_was_masks_it() {
    // Every recorded create answered its own (scrubbed) secret, none of them the listed one.
    let secrets = observed_secrets(&["tok_a", "tok_b"], &["tok_c"], false);
    let (created, listed) = my_listed_secret(&clients_answering(secrets, "tok_listed"));
    assert_ne!(created, json!("tok_listed"));
    assert_eq!(listed, json!("tok_listed"));
}

#[test]
fn a_listed_constant_some_create_answered_or_may_have_masks_nothing() {
    // A create answered the listed constant itself (past the rendered examples): the listing
    // may be showing a record's own value.
    let secrets = observed_secrets(&["tok_a", "tok_b"], &["tok_listed"], false);
    let (created, listed) = my_listed_secret(&clients_answering(secrets, "tok_listed"));
    assert_eq!(listed, created);
    // More values were recorded than kept: one of those may have been the constant.
    let secrets = observed_secrets(&["tok_a", "tok_b"], &["tok_c"], true);
    let (created, listed) = my_listed_secret(&clients_answering(secrets, "tok_listed"));
    assert_eq!(listed, created);
}
