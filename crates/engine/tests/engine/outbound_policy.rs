//! The outbound policy: header allowlist, scrub rules, the default PII pass, `[REDACTED]`
//! placeholders, and the echo / mint / fixture exemptions, in synth and strict fidelity.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::*;
use wraith_engine::{
    Engine, EngineOptions, Fidelity, OutboundPolicy, OutboundRule, Provenance, RuleAction,
    RuleTarget,
};
use wraith_model::*;

fn with_policy(mut e: Engine, f: impl FnOnce(&mut OutboundPolicy)) -> Engine {
    let mut p = e.outbound_policy().clone();
    f(&mut p);
    e.set_outbound_policy(p).expect("policy compiles");
    e
}

fn is_b62(s: &str) -> bool {
    s.len() == 22 && s.bytes().all(|b| b.is_ascii_alphanumeric())
}

fn is_email_envelope(v: &Value) -> bool {
    v.as_str()
        .and_then(|s| s.strip_prefix("user_"))
        .and_then(|s| s.strip_suffix("@wraith.local"))
        .is_some_and(is_b62)
}

fn has_prefix_envelope(v: &Value, prefix: &str) -> bool {
    v.as_str()
        .and_then(|s| s.strip_prefix(prefix))
        .is_some_and(is_b62)
}

/// `GET /v1/people/:id` with recorded people (distinct names on distinct carriers) and
/// `POST /v1/people` echoing the request.
fn people_model() -> Model {
    let p1 = json!({
        "id": "p_1", "object": "person", "display_name": "Jane Doe", "username": "jdoe",
        "email": "jane@example.com", "phone": "+14155550123", "hostname": "Db Server",
        "plan": "Gold Tier", "note": "write to jane@example.com", "secret_key": "k3yv4lu3abcdef",
    });
    let p2 = json!({
        "id": "p_2", "object": "person", "display_name": "Bob", "username": "bob",
        "email": "bob@example.com", "phone": "+442071838750", "hostname": "Web Server",
        "plan": "Gold Tier", "note": "", "secret_key": "[REDACTED]",
        "tax_id": "123-45-6789", "ticket": "900-12-3456",
        "commit": "Bob Stone <bob.stone@example.org> 1700000000 +0100",
        "release": "v1.2.3 <see notes> 1700000000 +0100",
    });
    let p3 = json!({
        "id": "p_3", "object": "person", "display_name": "Al", "username": "al",
        "email": "al@example.com", "phone": "+33142685300", "hostname": "Cache",
        "plan": "Gold Tier", "note": "", "secret_key": "[REDACTED]",
    });
    let read = R::new("GET", "/v1/people/:id")
        .op(StateOp::Read, "people")
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", echo_path("id")),
                ("object", c(json!("person"))),
                ("display_name", c(json!("Carol Jones"))),
                ("api_token", c(json!("[REDACTED]"))),
                ("request_id", c(json!("[REDACTED]"))),
            ]),
        )
        .exact("/v1/people/p_1", "", None, vec![moment("s1/1", 200, p1)])
        .exact("/v1/people/p_2", "", None, vec![moment("s1/2", 200, p2)])
        .exact("/v1/people/p_3", "", None, vec![moment("s1/3", 200, p3)])
        .build();
    let create = R::new("POST", "/v1/people")
        .op(StateOp::Create, "people")
        .variant(
            201,
            Guard::Always,
            obj(vec![
                (
                    "id",
                    gen_id(IdShape::Token {
                        prefix: "sk_live_".to_string(),
                        charset: IdCharset::Base62,
                        length: 24,
                    }),
                ),
                ("object", c(json!("person"))),
                ("display_name", echo_body("/display_name", JsonType::String)),
                ("email", echo_body("/email", JsonType::String)),
                ("owner_email", c(json!("owner@example.com"))),
                ("legacy_key", c(json!("sk_live_0123456789abcdefghijklmn"))),
            ]),
        )
        .build();
    model(
        vec![read, create],
        vec![("people", entity_type(&["p_1", "p_2", "p_3"], &[], vec![]))],
    )
}

fn people() -> Engine {
    engine(people_model(), det_opts())
}

#[test]
fn recorded_email_phone_person_name_and_credential_are_tokenized() {
    let e = people();
    let b = body(&get(&e, None, "/v1/people/p_1"));
    assert!(is_email_envelope(&b["email"]), "{}", b["email"]);
    assert!(has_prefix_envelope(&b["phone"], "phone_"), "{}", b["phone"]);
    assert!(
        has_prefix_envelope(&b["display_name"], "name_"),
        "{}",
        b["display_name"]
    );
    assert!(has_prefix_envelope(&b["secret_key"], "wraith_tok_"));
    // Not names: a lowercase handle, a `hostname`.
    assert_eq!(b["username"], json!("jdoe"));
    assert_eq!(b["hostname"], json!("Db Server"));
    assert_eq!(b["id"], json!("p_1"));
}

#[test]
fn a_social_security_number_and_a_git_author_line_are_tokenized_by_shape() {
    let e = people();
    let b = body(&get(&e, None, "/v1/people/p_2"));
    assert!(has_prefix_envelope(&b["tax_id"], "ssn_"), "{}", b["tax_id"]);
    // Area 900 is never issued: a code, not a number to hide.
    assert_eq!(b["ticket"], json!("900-12-3456"));
    let commit = b["commit"].as_str().unwrap_or_default();
    let (name, rest) = commit.split_once(" <").unwrap_or_default();
    let (email, when) = rest.split_once("> ").unwrap_or_default();
    assert!(has_prefix_envelope(&json!(name), "name_"), "{commit}");
    assert!(is_email_envelope(&json!(email)), "{commit}");
    assert_eq!(when, "1700000000 +0100", "the time stays: {commit}");
    assert_eq!(
        b["release"],
        json!("v1.2.3 <see notes> 1700000000 +0100"),
        "no email, no author line"
    );
    // The envelopes are stable: served again, the same bytes.
    let again = body(&get(&e, Some("other"), "/v1/people/p_2"));
    assert_eq!(
        (&again["tax_id"], &again["commit"]),
        (&b["tax_id"], &b["commit"])
    );
}

#[test]
fn a_single_word_name_is_tokenized_when_the_column_names_its_carriers() {
    let e = people();
    let b = body(&get(&e, None, "/v1/people/p_2"));
    assert!(has_prefix_envelope(&b["display_name"], "name_"));
}

#[test]
fn enum_like_values_shared_by_carriers_are_kept() {
    let e = people();
    // `plan` is a name-less column, but "Gold Tier" would read as a name under a name key;
    // the same value on three carriers marks it low-cardinality either way.
    let b = body(&get(&e, None, "/v1/people/p_1"));
    assert_eq!(b["plan"], json!("Gold Tier"));
}

#[test]
fn a_value_tokenized_in_one_field_is_not_left_verbatim_in_another() {
    let e = people();
    let b = body(&get(&e, None, "/v1/people/p_1"));
    let note = b["note"].as_str().unwrap();
    assert!(!note.contains("jane@example.com"), "{note}");
    assert_eq!(note, format!("write to {}", b["email"].as_str().unwrap()));
}

#[test]
fn the_same_recorded_value_gets_the_same_envelope_everywhere() {
    let e = people();
    let a = body(&get(&e, Some("a"), "/v1/people/p_1"));
    let b = body(&get(&e, Some("b"), "/v1/people/p_1"));
    assert_eq!(a["email"], b["email"]);
    let other = body(&get(&e, Some("a"), "/v1/people/p_2"));
    assert_ne!(a["email"], other["email"]);
}

#[test]
fn request_echoes_come_back_verbatim_now_and_when_read_back() {
    let e = people();
    let r = send(
        &e,
        Some("s"),
        "POST",
        "/v1/people",
        json!({"display_name": "Jane Doe", "email": "jane@example.com"}),
    );
    assert_eq!(r.status, 201);
    let b = body(&r);
    assert_eq!(b["display_name"], json!("Jane Doe"));
    assert_eq!(b["email"], json!("jane@example.com"));
    // A recorded constant in the same response is still scrubbed.
    assert!(is_email_envelope(&b["owner_email"]));
    // Read back from the session's state: still the session's own values.
    let id = b["id"].as_str().unwrap();
    let back = body(&get(&e, Some("s"), &format!("/v1/people/{id}")));
    assert_eq!(back["display_name"], json!("Jane Doe"));
}

#[test]
fn minted_values_are_exempt_by_provenance_not_by_shape() {
    let e = people();
    let b = body(&send(&e, None, "POST", "/v1/people", json!({})));
    let id = b["id"].as_str().unwrap();
    assert!(id.starts_with("sk_live_") && id.len() == 32, "{id}");
    // The same shape, recorded: a credential, tokenized.
    assert!(has_prefix_envelope(&b["legacy_key"], "wraith_tok_"));
}

#[test]
fn redacted_placeholders_become_plausible_values_on_synthesized_paths() {
    let e = people();
    let b = body(&get(&e, None, "/v1/people/p_new"));
    let id = b["request_id"].as_str().unwrap();
    assert!(uuid_shaped(id), "{id}");
    let tok = b["api_token"].as_str().unwrap();
    assert!(
        tok.len() == 32 && tok.bytes().all(|c| c.is_ascii_hexdigit()),
        "{tok}"
    );
    // Deterministic.
    let again = body(&get(&e, Some("other"), "/v1/people/p_new"));
    assert_eq!(again["request_id"], b["request_id"]);
}

fn uuid_shaped(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
}

#[test]
fn strict_fidelity_applies_the_same_scrub_but_keeps_placeholders() {
    let strict = engine(
        people_model(),
        EngineOptions {
            fidelity: Fidelity::Strict,
            ..det_opts()
        },
    );
    let synth = people();
    let s = body(&get(&strict, None, "/v1/people/p_2"));
    let y = body(&get(&synth, None, "/v1/people/p_2"));
    assert_eq!(s["email"], y["email"]);
    assert_eq!(s["display_name"], y["display_name"], "same column evidence");
    assert_eq!(s["secret_key"], json!("[REDACTED]"));
    assert_ne!(y["secret_key"], json!("[REDACTED]"));
}

#[test]
fn pii_detect_false_turns_the_pass_off() {
    let e = with_policy(people(), |p| p.pii.detect = false);
    let b = body(&get(&e, None, "/v1/people/p_1"));
    assert_eq!(b["email"], json!("jane@example.com"));
    assert_eq!(b["display_name"], json!("Jane Doe"));
}

#[test]
fn pii_allowlist_keeps_a_path_and_always_forces_one() {
    let e = with_policy(people(), |p| {
        p.pii.allowlist = vec!["$.email".to_string()];
        p.pii.always = vec!["$.username".to_string()];
    });
    let b = body(&get(&e, None, "/v1/people/p_1"));
    assert_eq!(b["email"], json!("jane@example.com"));
    assert!(has_prefix_envelope(&b["username"], "name_"));
}

#[test]
fn scrub_toml_rules_apply_to_responses_and_stay_injective() {
    let e = with_policy(people(), |p| {
        p.pii.detect = false;
        p.rules = vec![
            OutboundRule {
                id: "hosts".into(),
                target: RuleTarget::JsonPath {
                    path: "$.hostname".into(),
                },
                action: RuleAction::Mask {
                    replacement: "****".into(),
                },
            },
            OutboundRule {
                id: "handles".into(),
                target: RuleTarget::Regex {
                    pattern: "^[a-z]+$".into(),
                    header_values: false,
                    body: true,
                },
                action: RuleAction::Tokenize,
            },
        ];
    });
    let a = body(&get(&e, None, "/v1/people/p_1"));
    let b = body(&get(&e, None, "/v1/people/p_2"));
    // Two different hostnames never become one value (a mask literal would merge them).
    assert_ne!(a["hostname"], b["hostname"]);
    assert!(has_prefix_envelope(&a["hostname"], "wraith_tok_"));
    assert!(has_prefix_envelope(&a["username"], "wraith_tok_"));
    assert_ne!(a["username"], b["username"]);
}

#[test]
fn a_bad_rule_is_refused_with_its_id() {
    let mut e = people();
    let mut p = e.outbound_policy().clone();
    p.rules.push(OutboundRule {
        id: "broken".into(),
        target: RuleTarget::Regex {
            pattern: "(".into(),
            header_values: true,
            body: true,
        },
        action: RuleAction::Tokenize,
    });
    let err = e.set_outbound_policy(p).unwrap_err().to_string();
    assert!(err.contains("broken"), "{err}");
}

fn headers_model() -> Model {
    let mut m = moment("s1/1", 200, json!({"ok": true}));
    m.headers = [
        ("content-type", "application/json"),
        ("server", "nginx"),
        ("x-powered-by", "Express"),
        ("cf-ray", "abc"),
        ("x-cache", "HIT"),
        ("via", "1.1 varnish"),
        ("access-control-allow-origin", "*"),
        ("vary", "Accept"),
        ("x-ratelimit-remaining", "99"),
        ("x-shop-version", "2024-01"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let r = R::new("GET", "/v1/ping")
        .variant(200, Guard::Always, obj(vec![("ok", c(json!(true)))]))
        .exact("/v1/ping", "", None, vec![m])
        .build();
    model(vec![r], vec![])
}

#[test]
fn vendor_headers_are_dropped_and_semantic_headers_kept() {
    let e = engine(headers_model(), det_opts());
    let r = get(&e, None, "/v1/ping");
    assert_eq!(r.provenance, Provenance::Recorded);
    for gone in ["server", "x-powered-by", "cf-ray", "x-cache", "via"] {
        assert!(header(&r.headers, gone).is_none(), "{gone} must be dropped");
    }
    for kept in [
        "content-type",
        "access-control-allow-origin",
        "vary",
        "x-ratelimit-remaining",
        "x-shop-version",
    ] {
        assert!(header(&r.headers, kept).is_some(), "{kept} must be kept");
    }
    // Dropping headers changes no byte of the claimed body.
    assert!(!r.outbound_policy_applied);
}

#[test]
fn strip_headers_false_keeps_every_recorded_header() {
    let e = with_policy(engine(headers_model(), det_opts()), |p| {
        p.strip_headers = false
    });
    let r = get(&e, None, "/v1/ping");
    assert_eq!(header(&r.headers, "server"), Some("nginx"));
}

#[test]
fn fixture_values_are_served_as_declared() {
    let fx = r#"{"entities":{"people":[{"id":"p_fx","display_name":"Fixture Person","email":"fx@example.com"}]}}"#;
    let e = engine_with(
        people_model(),
        None,
        tree(vec![("default", set(Some(fx), &[], &[]))], &[]),
        det_opts(),
    );
    let b = body(&get(&e, None, "/v1/people/p_fx"));
    assert_eq!(b["email"], json!("fx@example.com"));
    assert_eq!(b["display_name"], json!("Fixture Person"));
}

#[test]
fn values_a_session_sent_as_multipart_fields_are_echoed_verbatim() {
    let e = people();
    let mut q = req("POST", "/v1/people", None);
    q.headers.push((
        "content-type".into(),
        "multipart/form-data; boundary=xyz".into(),
    ));
    q.body = bytes::Bytes::from_static(
        b"--xyz\r\nContent-Disposition: form-data; name=\"display_name\"\r\n\r\nJane Doe\r\n--xyz--\r\n",
    );
    e.handle(Some("m"), &q);
    let b = body(&get(&e, Some("m"), "/v1/people/p_1"));
    assert_eq!(
        b["display_name"],
        json!("Jane Doe"),
        "the session's own value"
    );
    // Another session never sent it: the recorded name is tokenized there.
    let other = body(&get(&e, Some("n"), "/v1/people/p_1"));
    assert!(has_prefix_envelope(&other["display_name"], "name_"));
}

#[test]
fn a_bare_single_word_name_is_tokenized_only_in_a_person_container() {
    let read = R::new("GET", "/v1/roles/:id")
        .variant(200, Guard::Always, obj(vec![("id", echo_path("id"))]))
        .exact(
            "/v1/roles/r1",
            "",
            None,
            vec![moment(
                "s1/1",
                200,
                json!({"id": "r1", "name": "Owner", "author": {"id": "u1", "name": "Alice"}}),
            )],
        )
        .exact(
            "/v1/roles/r2",
            "",
            None,
            vec![moment(
                "s1/2",
                200,
                json!({"id": "r2", "name": "Moderator", "author": {"id": "u2", "name": "Bob"}}),
            )],
        )
        .build();
    let e = engine(model(vec![read], vec![]), det_opts());
    let b = body(&get(&e, None, "/v1/roles/r1"));
    assert_eq!(b["name"], json!("Owner"), "a role name is not a person's");
    assert!(has_prefix_envelope(&b["author"]["name"], "name_"));
}

#[test]
fn multi_word_names_of_things_outside_person_scope_are_kept() {
    let read = R::new("GET", "/v1/instance/languages")
        .variant(200, Guard::Always, obj(vec![("ok", c(json!(true)))]))
        .exact(
            "/v1/instance/languages",
            "",
            None,
            vec![moment(
                "s1/1",
                200,
                json!([{"code": "cu", "name": "Old Church Slavonic"}, {"code": "fy", "name": "Western Frisian"}]),
            )],
        )
        .build();
    let e = engine(model(vec![read], vec![]), det_opts());
    let b = body(&get(&e, None, "/v1/instance/languages"));
    assert_eq!(b[0]["name"], json!("Old Church Slavonic"));
    assert_eq!(b[1]["name"], json!("Western Frisian"));
}

#[test]
fn a_name_in_a_list_envelope_on_a_person_route_is_tokenized_as_on_its_read() {
    let people = json!({"data": [
        {"id": "cus_1", "name": "Ada Lovelace"},
        {"id": "cus_2", "name": "Grace Brewster Hopper"}
    ]});
    let list = R::new("GET", "/v1/customers")
        .variant(200, Guard::Always, obj(vec![("ok", c(json!(true)))]))
        .exact("/v1/customers", "", None, vec![moment("s1/1", 200, people)])
        .build();
    let read = R::new("GET", "/v1/customers/:id")
        .variant(200, Guard::Always, obj(vec![("id", echo_path("id"))]))
        .exact(
            "/v1/customers/cus_1",
            "",
            None,
            vec![moment(
                "s1/2",
                200,
                json!({"id": "cus_1", "name": "Ada Lovelace"}),
            )],
        )
        .build();
    // Where the envelope is all there is, a thing's name stays as recorded.
    let langs = R::new("GET", "/v1/languages")
        .variant(200, Guard::Always, obj(vec![("ok", c(json!(true)))]))
        .exact(
            "/v1/languages",
            "",
            None,
            vec![moment(
                "s1/3",
                200,
                json!({"data": [{"code": "cu", "name": "Old Church Slavonic"}]}),
            )],
        )
        .build();
    let e = engine(model(vec![list, read, langs], vec![]), det_opts());
    let listed = body(&get(&e, None, "/v1/customers"));
    let one = body(&get(&e, None, "/v1/customers/cus_1"));
    assert!(has_prefix_envelope(&one["name"], "name_"), "{one}");
    assert_eq!(
        listed["data"][0]["name"], one["name"],
        "one envelope for one name"
    );
    assert!(has_prefix_envelope(&listed["data"][1]["name"], "name_"));
    let b = body(&get(&e, None, "/v1/languages"));
    assert_eq!(b["data"][0]["name"], json!("Old Church Slavonic"));
}
