//! Action routes (`POST /v1/customers/:id/star`) with a learned effect (`Route::action`) change
//! the stored record they name, so later reads and list pages show the action's result.

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_model::*;

/// The shop with `POST /v1/customers/:id/star`, answering the customer with `starred: true`
/// and a recorded `name` that is some other recording's, not an effect.
fn shop_with_star(fields: &[&str]) -> wraith_engine::Engine {
    let mut m = shop_model();
    let mut star = R::new("POST", "/v1/customers/:id/star")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", echo_path("id")),
                ("object", c(json!("customer"))),
                ("name", c(json!("Recorded Somebody"))),
                ("starred", c(json!(true))),
            ]),
        )
        .build();
    star.action = Some(ActionEffect {
        entity_type: "customers".into(),
        id_param: "id".into(),
        fields: fields.iter().map(|f| f.to_string()).collect(),
        counters: Default::default(),
        at: String::new(),
        sets: Default::default(),
        set_by: String::new(),
        answered_fields: Vec::new(),
        followed_fields: Vec::new(),
        appends: Vec::new(),
        indexed_counters: Vec::new(),
        undoes_wrappers: Vec::new(),
    });
    m.routes.push(star);
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    engine(m, det_opts())
}

fn created_customer(e: &wraith_engine::Engine, s: Option<&str>) -> String {
    let created = send(e, s, "POST", "/v1/customers", json!({"name": "Zoe"}));
    assert_eq!(created.status, 200);
    body(&created)["id"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_action_answering_the_entity_stores_the_fields_it_changed_for_later_reads() {
    let e = shop_with_star(&["starred"]);
    let s = Some("star");
    let id = created_customer(&e, s);
    let before = body(&get(&e, s, &format!("/v1/customers/{id}")));
    assert!(before.get("starred").is_none(), "not starred yet: {before}");

    let starred = send(
        &e,
        s,
        "POST",
        &format!("/v1/customers/{id}/star"),
        json!({}),
    );
    assert_eq!(starred.status, 200);

    let after = body(&get(&e, s, &format!("/v1/customers/{id}")));
    assert_eq!(
        after["starred"],
        json!(true),
        "the effect is stored: {after}"
    );
    assert_eq!(
        after["name"],
        json!("Zoe"),
        "a field outside the effect keeps the session's value"
    );
    let page = body(&get(&e, s, "/v1/customers"));
    let item = page["data"]
        .as_array()
        .and_then(|a| a.iter().find(|i| i["id"] == json!(id)))
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(item["starred"], json!(true), "list pages agree: {page}");
}

#[test]
fn an_action_on_a_recorded_entity_changes_only_that_session() {
    let e = shop_with_star(&["starred"]);
    let starred = send(&e, Some("a"), "POST", "/v1/customers/cus_1/star", json!({}));
    assert_eq!(starred.status, 200);
    let a = body(&get(&e, Some("a"), "/v1/customers/cus_1"));
    assert_eq!(a["starred"], json!(true), "{a}");
    let b = body(&get(&e, Some("b"), "/v1/customers/cus_1"));
    assert!(
        b.get("starred").is_none(),
        "another session is untouched: {b}"
    );
    assert_eq!(
        a["name"], b["name"],
        "a field outside the effect is unchanged"
    );
    assert_ne!(a["name"], json!("Recorded Somebody"));
}

#[test]
fn an_action_without_a_learned_effect_leaves_the_record_alone() {
    let e = shop_with_star(&[]);
    let s = Some("plain");
    let id = created_customer(&e, s);
    let before = body(&get(&e, s, &format!("/v1/customers/{id}")));
    send(
        &e,
        s,
        "POST",
        &format!("/v1/customers/{id}/star"),
        json!({}),
    );
    let after = body(&get(&e, s, &format!("/v1/customers/{id}")));
    assert_eq!(before, after);
}

/// The shop with one more action route on customers, answering `answer` (a template) with the
/// learned effect `effect` (entity type and id parameter filled in).
fn shop_with_action(path: &str, answer: Node, effect: ActionEffect) -> wraith_engine::Engine {
    let mut m = shop_model();
    let mut route = R::new("POST", path)
        .variant(200, Guard::Always, answer)
        .build();
    route.action = Some(effect);
    m.routes.push(route);
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    engine(m, det_opts())
}

#[test]
fn an_action_with_a_learned_counter_steps_the_sessions_value_in_its_answer_and_the_store() {
    let e = shop_with_action(
        "/v1/customers/:id/credit",
        obj(vec![
            ("id", echo_path("id")),
            ("object", c(json!("customer"))),
            // The representative's value is some recording's, not this session's.
            ("balance", c(json!(99))),
        ]),
        ActionEffect {
            entity_type: "customers".into(),
            id_param: "id".into(),
            fields: vec![],
            counters: [("balance".to_string(), 10)].into_iter().collect(),
            at: String::new(),
            sets: Default::default(),
            set_by: String::new(),
            answered_fields: Vec::new(),
            followed_fields: Vec::new(),
            appends: Vec::new(),
            indexed_counters: Vec::new(),
            undoes_wrappers: Vec::new(),
        },
    );
    let s = Some("credit");
    let created = send(
        &e,
        s,
        "POST",
        "/v1/customers",
        json!({"name": "Zoe", "balance": 5}),
    );
    let id = body(&created)["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let path = format!("/v1/customers/{id}/credit");
    let first = body(&send(&e, s, "POST", &path, json!({})));
    assert_eq!(
        first["balance"],
        json!(15),
        "the answer shows the step: {first}"
    );
    let second = body(&send(&e, s, "POST", &path, json!({})));
    assert_eq!(
        second["balance"],
        json!(25),
        "each action steps again: {second}"
    );
    let read = body(&get(&e, s, &format!("/v1/customers/{id}")));
    assert_eq!(read["balance"], json!(25), "later reads agree: {read}");
    let other = body(&get(&e, Some("other"), "/v1/customers/cus_1"));
    assert_ne!(other["balance"], json!(25), "another session is untouched");
}

#[test]
fn an_action_answer_embedding_the_entity_embeds_the_sessions_record_with_the_effect() {
    let e = shop_with_action(
        "/v1/customers/:id/wrap",
        obj(vec![
            ("id", c(json!("wrap_1"))),
            (
                "wrapped",
                obj(vec![
                    ("id", c(json!("cus_recorded"))),
                    ("object", c(json!("customer"))),
                    ("name", c(json!("Recorded Somebody"))),
                    ("starred", c(json!(true))),
                ]),
            ),
        ]),
        ActionEffect {
            entity_type: "customers".into(),
            id_param: "id".into(),
            fields: vec!["starred".into()],
            counters: Default::default(),
            at: "/wrapped".into(),
            sets: Default::default(),
            set_by: String::new(),
            answered_fields: Vec::new(),
            followed_fields: Vec::new(),
            appends: Vec::new(),
            indexed_counters: Vec::new(),
            undoes_wrappers: Vec::new(),
        },
    );
    let s = Some("wrap");
    let id = created_customer(&e, s);
    let wrapped = body(&send(
        &e,
        s,
        "POST",
        &format!("/v1/customers/{id}/wrap"),
        json!({}),
    ));
    assert_eq!(
        wrapped["id"],
        json!("wrap_1"),
        "the answer's own fields stay: {wrapped}"
    );
    assert_eq!(wrapped["wrapped"]["id"], json!(id), "{wrapped}");
    assert_eq!(wrapped["wrapped"]["name"], json!("Zoe"), "{wrapped}");
    assert_eq!(wrapped["wrapped"]["starred"], json!(true), "{wrapped}");
    let read = body(&get(&e, s, &format!("/v1/customers/{id}")));
    assert_eq!(read["starred"], json!(true), "the effect is stored: {read}");
}

#[test]
fn a_rendered_answer_wrapping_the_entity_that_is_a_record_of_its_type_is_stored_under_its_own_key()
{
    let field = |k: &str| (k.to_string(), c(json!(null)));
    let mut wrapper: Vec<(String, Node)> = ["email", "balance", "address", "tags", "created"]
        .iter()
        .map(|k| field(k))
        .collect();
    wrapper.push(("id".into(), gen_id(cus_id())));
    wrapper.push(("object".into(), c(json!("customer"))));
    wrapper.push(("name".into(), c(json!("Wrapper"))));
    wrapper.push((
        "wrapped".into(),
        obj(vec![
            ("id", c(json!("cus_recorded"))),
            ("object", c(json!("customer"))),
            ("starred", c(json!(true))),
        ]),
    ));
    let e = shop_with_action(
        "/v1/customers/:id/reshare",
        obj(wrapper
            .iter()
            .map(|(k, n)| (k.as_str(), n.clone()))
            .collect()),
        ActionEffect {
            entity_type: "customers".into(),
            id_param: "id".into(),
            fields: vec!["starred".into()],
            counters: Default::default(),
            at: "/wrapped".into(),
            sets: Default::default(),
            set_by: String::new(),
            answered_fields: Vec::new(),
            followed_fields: Vec::new(),
            appends: Vec::new(),
            indexed_counters: Vec::new(),
            undoes_wrappers: Vec::new(),
        },
    );
    let s = Some("reshare");
    let id = created_customer(&e, s);
    let answer = body(&send(
        &e,
        s,
        "POST",
        &format!("/v1/customers/{id}/reshare"),
        json!({}),
    ));
    let key = answer["id"].as_str().unwrap_or_default().to_string();
    assert!(!key.is_empty() && key != id, "{answer}");
    let read = get(&e, s, &format!("/v1/customers/{key}"));
    assert_eq!(read.status, 200, "{}", body(&read));
    assert_eq!(body(&read)["wrapped"]["id"], json!(id), "{}", body(&read));
}

#[test]
fn a_rendered_action_answer_that_is_the_entity_answers_the_sessions_record_with_the_effect() {
    let e = shop_with_star(&["starred"]);
    let s = Some("star-answer");
    let id = created_customer(&e, s);
    let starred = body(&send(
        &e,
        s,
        "POST",
        &format!("/v1/customers/{id}/star"),
        json!({}),
    ));
    assert_eq!(
        starred["name"],
        json!("Zoe"),
        "the session's record, not the template's recorded value: {starred}"
    );
    assert_eq!(starred["starred"], json!(true), "{starred}");
    let read = body(&get(&e, s, &format!("/v1/customers/{id}")));
    assert_eq!(
        read["name"], starred["name"],
        "the answer and a later read agree"
    );
}

/// A learned "sets `tier` per value of the body's `type`" effect on `ty`'s records.
fn tier_sets(ty: &str) -> ActionEffect {
    ActionEffect {
        entity_type: ty.into(),
        id_param: "id".into(),
        fields: Vec::new(),
        counters: Default::default(),
        at: String::new(),
        sets: [
            (
                "promote".to_string(),
                [("tier".to_string(), json!("vip"))].into(),
            ),
            (
                "demote".to_string(),
                [("tier".to_string(), json!("basic"))].into(),
            ),
        ]
        .into(),
        set_by: "/type".into(),
        answered_fields: Vec::new(),
        followed_fields: Vec::new(),
        appends: Vec::new(),
        indexed_counters: Vec::new(),
        undoes_wrappers: Vec::new(),
    }
}

/// The shop with `POST /v1/customers/:id/action` and `POST /v1/profiles/:id/action`
/// answering `{}`, whose learned effect sets `tier` per value of the body's `type`; a profile
/// read answers any id (no profile is recorded).
fn shop_with_moderation() -> wraith_engine::Engine {
    let mut m = shop_model();
    for (path, ty) in [
        ("/v1/customers/:id/action", "customers"),
        ("/v1/profiles/:id/action", "profiles"),
    ] {
        let mut act = R::new("POST", path)
            .variant(200, Guard::Always, c(json!({})))
            .build();
        act.action = Some(tier_sets(ty));
        m.routes.push(act);
    }
    m.routes.push(
        R::new("GET", "/v1/profiles/:id")
            .op(StateOp::Read, "profiles")
            .variant(
                200,
                Guard::Always,
                obj(vec![
                    ("id", echo_path("id")),
                    ("object", c(json!("profile"))),
                ]),
            )
            .build(),
    );
    m.entity_types
        .insert("profiles".into(), entity_type(&[], &[], Vec::new()));
    m.routes.sort_by(|a, b| {
        (a.path.as_str(), a.method.as_str()).cmp(&(b.path.as_str(), b.method.as_str()))
    });
    engine(m, det_opts())
}

#[test]
fn an_action_answering_nothing_sets_the_fields_its_request_value_names_for_later_reads() {
    let e = shop_with_moderation();
    let s = Some("moderation");
    let path = "/v1/customers/cus_1";
    let act = |kind: &str| {
        send(
            &e,
            s,
            "POST",
            &format!("{path}/action"),
            json!({"type": kind}),
        )
    };
    assert_eq!(act("promote").status, 200);
    let read = body(&get(&e, s, path));
    assert_eq!(read["tier"], json!("vip"), "{read}");
    assert_eq!(read["id"], json!("cus_1"), "{read}");
    assert_eq!(
        read["object"],
        json!("customer"),
        "the rest is the record: {read}"
    );
    assert_eq!(act("demote").status, 200);
    assert_eq!(body(&get(&e, s, path))["tier"], json!("basic"));
    // A value the recordings never showed changes nothing.
    assert_eq!(act("archive").status, 200);
    assert_eq!(body(&get(&e, s, path))["tier"], json!("basic"));
    // Another session still sees the recorded record.
    let other = body(&get(&e, Some("other"), path));
    assert!(other.get("tier").is_none(), "{other}");
}

#[test]
fn an_action_setting_fields_on_an_unknown_entity_shows_them_on_its_next_read() {
    let e = shop_with_moderation();
    let s = Some("moderation-unknown");
    let path = "/v1/profiles/pro_unrecorded";
    let before = get(&e, s, path);
    assert_eq!(before.status, 200, "an unknown profile is rendered");
    assert!(body(&before).get("tier").is_none());
    let acted = send(
        &e,
        s,
        "POST",
        &format!("{path}/action"),
        json!({"type": "promote"}),
    );
    assert_eq!(acted.status, 200);
    let read = body(&get(&e, s, path));
    assert_eq!(read["tier"], json!("vip"), "{read}");
    assert_eq!(read["id"], json!("pro_unrecorded"), "{read}");
    assert_eq!(
        send(
            &e,
            s,
            "POST",
            &format!("{path}/action"),
            json!({"type": "demote"})
        )
        .status,
        200
    );
    assert_eq!(
        body(&get(&e, s, path))["tier"],
        json!("basic"),
        "the read made it the session's record, which later actions change"
    );
}
