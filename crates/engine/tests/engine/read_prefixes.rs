//! Read prefixes (`EntityType::read_prefixes`): a field the create answers whole shows as its
//! first characters in every later read, update answer and list item of the record.

use crate::support;

use serde_json::json;
use support::*;

/// The shop, its customers' `name` shown as its first 3 characters after the create.
fn shop_with_name_prefix() -> wraith_engine::Engine {
    let mut m = shop_model();
    if let Some(t) = m.entity_types.get_mut("customers") {
        t.read_prefixes.insert("name".to_string(), 3);
    }
    without_pii(engine(m, det_opts()))
}

#[test]
fn a_rendered_create_answers_the_field_whole_and_later_views_its_prefix() {
    let e = shop_with_name_prefix();
    let s = Some("s");
    let created = send(
        &e,
        s,
        "POST",
        "/v1/customers",
        json!({"name": "Alexandra", "email": "a@example.com", "balance": 1}),
    );
    assert_eq!(created.status, 200);
    let created = body(&created);
    assert_eq!(created["name"], "Alexandra");
    let id = created["id"].as_str().expect("a minted id").to_string();

    let read = body(&get(&e, s, &format!("/v1/customers/{id}")));
    assert_eq!(read["name"], "Ale");

    let listed = body(&get(&e, s, "/v1/customers"));
    let item = listed["data"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["id"] == id.as_str()))
        .expect("the list shows the created customer");
    assert_eq!(item["name"], "Ale");

    let updated = send(
        &e,
        s,
        "PATCH",
        &format!("/v1/customers/{id}"),
        json!({"balance": 5}),
    );
    assert_eq!(updated.status, 200);
    assert_eq!(body(&updated)["name"], "Ale");
}

#[test]
fn a_replayed_create_stores_the_prefix_for_later_reads() {
    let e = shop_with_name_prefix();
    let s = Some("s");
    let created = body(&send(
        &e,
        s,
        "POST",
        "/v1/customers",
        json!({"name": "Recorded"}),
    ));
    assert_eq!(created["name"], "Recorded");
    let read = body(&get(&e, s, "/v1/customers/cus_rec"));
    assert_eq!(read["name"], "Rec");
}

#[test]
fn without_read_prefixes_later_views_show_the_whole_value() {
    let e = without_pii(shop());
    let s = Some("s");
    let created = body(&send(
        &e,
        s,
        "POST",
        "/v1/customers",
        json!({"name": "Alexandra", "email": "a@example.com", "balance": 1}),
    ));
    let id = created["id"].as_str().expect("a minted id").to_string();
    let read = body(&get(&e, s, &format!("/v1/customers/{id}")));
    assert_eq!(read["name"], "Alexandra");
}
