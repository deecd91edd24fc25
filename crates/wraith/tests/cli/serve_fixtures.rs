//! Fixtures and `state/schema.json` over HTTP: both on-disk forms, the implicit default set and
//! its precedence, patches, parent inheritance, `--fixture` (incl. the namespaced form), the
//! strictness rules, and the schema gate. Black-box: the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Server, Twin, model};

fn twin() -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t
}

fn customer(id: &str, name: &str) -> Value {
    json!({"id": id, "object": "customer", "name": name})
}

async fn read(s: &Server, session: &str, id: &str) -> (u16, Option<String>, Value) {
    let r = s.get(&format!("/v1/customers/{id}"), Some(session)).await;
    let prov = r.provenance().map(str::to_string);
    let body = if r.body.is_empty() {
        Value::Null
    } else {
        r.json()
    };
    (r.status, prov, body)
}

async fn known(s: &Server, id: &str) -> bool {
    read(s, "probe", id).await.0 == 200
}

#[tokio::test]
async fn directory_form_default_set_seeds_every_new_session() {
    let t = twin();
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"description": "baseline", "entities": {"customers": [customer("cus_a", "Ann")]}})
            .to_string(),
    );
    let s = t.serve(&[]);
    for session in ["one", "two"] {
        let (status, prov, body) = read(&s, session, "cus_a").await;
        assert_eq!(status, 200);
        assert_eq!(prov.as_deref(), Some("fixture"));
        assert_eq!(body["name"], "Ann");
    }
    // Requests without the header share the default namespace, seeded the same way.
    assert_eq!(s.get("/v1/customers/cus_a", None).await.status, 200);
}

#[tokio::test]
async fn legacy_flat_form_set_reads_one_file_per_entity_type() {
    let t = twin();
    t.write(
        "state/fixtures/default/customers.json",
        &json!([customer("cus_flat", "Flat")]).to_string(),
    );
    let s = t.serve(&[]);
    assert!(known(&s, "cus_flat").await);
}

#[tokio::test]
async fn loose_files_under_fixtures_are_the_default_set_when_there_is_no_default_dir() {
    let t = twin();
    t.write(
        "state/fixtures/customers.json",
        &json!([customer("cus_loose", "Loose")]).to_string(),
    );
    let s = t.serve(&[]);
    assert!(known(&s, "cus_loose").await);
}

#[tokio::test]
async fn default_dir_wins_over_loose_files_with_a_warning() {
    let t = twin();
    t.write(
        "state/fixtures/customers.json",
        &json!([customer("cus_loose", "Loose")]).to_string(),
    );
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"customers": [customer("cus_dir", "Dir")]}}).to_string(),
    );
    let s = t.serve(&[]);
    assert!(known(&s, "cus_dir").await);
    assert!(!known(&s, "cus_loose").await);
    let warnings = s.ready["warnings"].to_string();
    assert!(warnings.contains("default"), "{warnings}");
}

#[tokio::test]
async fn without_any_fixture_sessions_start_empty() {
    let t = twin();
    let s = t.serve(&[]);
    assert!(!known(&s, "cus_a").await);
    // Recorded entities are still known from the recordings.
    assert!(known(&s, "cus_1").await);
}

#[tokio::test]
async fn patches_add_then_replace_then_remove_over_the_parent() {
    let t = twin();
    t.write(
        "state/fixtures/base/fixture.json",
        &json!({"entities": {"customers": [
            customer("cus_1a", "One"), customer("cus_2a", "Two"), customer("cus_3a", "Three")
        ]}})
        .to_string(),
    );
    t.write(
        "state/fixtures/scenario/fixture.json",
        &json!({"parent": "base", "entities": {"customers": [customer("cus_own", "Own")]}})
            .to_string(),
    );
    t.write(
        "state/fixtures/scenario/patches/customers.patch.json",
        &json!({
            "add": [customer("cus_added", "Added")],
            "replace": {"cus_1a": customer("cus_1a", "One Updated"), "cus_nope": customer("cus_nope", "No-op")},
            "remove": ["cus_3a", "cus_never"]
        })
        .to_string(),
    );
    let s = t.serve(&["--fixture", "scenario"]);
    assert_eq!(read(&s, "p", "cus_1a").await.2["name"], "One Updated");
    assert!(known(&s, "cus_2a").await, "inherited from the parent");
    assert!(!known(&s, "cus_3a").await, "removed by the patch");
    assert!(known(&s, "cus_added").await);
    assert!(
        known(&s, "cus_own").await,
        "the set's own entities overlay the parent"
    );
    assert!(
        !known(&s, "cus_nope").await,
        "replacing a missing record is a no-op"
    );
}

/// One patch's keys apply left to right (add, then replace, then remove): a record the patch
/// adds is there for its replace to change and for its remove to drop.
#[tokio::test]
async fn one_patch_adds_then_replaces_then_removes() {
    let t = twin();
    t.write(
        "state/fixtures/base/fixture.json",
        &json!({"entities": {"customers": [customer("cus_base", "Base")]}}).to_string(),
    );
    t.write(
        "state/fixtures/scenario/fixture.json",
        &json!({"parent": "base", "entities": {}}).to_string(),
    );
    t.write(
        "state/fixtures/scenario/patches/customers.patch.json",
        &json!({
            "add": [customer("cus_new", "Added"), customer("cus_gone", "Added too")],
            "replace": {"cus_new": customer("cus_new", "Replaced")},
            "remove": ["cus_gone"]
        })
        .to_string(),
    );
    let s = t.serve(&["--fixture", "scenario"]);
    assert_eq!(read(&s, "p", "cus_new").await.2["name"], "Replaced");
    assert!(!known(&s, "cus_gone").await, "added, then removed");
    assert!(known(&s, "cus_base").await);
}

/// "The legacy form has no parent, description, or patches/": a `patches/` folder beside flat
/// files is not applied, and the ready file's warnings say so.
#[tokio::test]
async fn a_legacy_set_ignores_its_patches_with_a_warning() {
    let t = twin();
    t.write(
        "state/fixtures/default/customers.json",
        &json!([customer("cus_flat", "Flat")]).to_string(),
    );
    t.write(
        "state/fixtures/default/patches/customers.patch.json",
        &json!({"add": [customer("cus_patched", "Patched")], "remove": ["cus_flat"]}).to_string(),
    );
    let s = t.serve(&[]);
    assert!(
        known(&s, "cus_flat").await,
        "the patch's remove is not applied"
    );
    assert!(
        !known(&s, "cus_patched").await,
        "the patch's add is not applied"
    );
    let warnings = s.ready["warnings"].to_string();
    assert!(warnings.contains("patches"), "{warnings}");
}

#[tokio::test]
async fn fixture_flag_selects_a_set_and_accepts_the_namespaced_form() {
    let t = twin();
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"customers": [customer("cus_def", "D")]}}).to_string(),
    );
    t.write(
        "state/fixtures/checkout/fixture.json",
        &json!({"entities": {"customers": [customer("cus_chk", "C")]}}).to_string(),
    );
    let s = t.serve(&["--fixture", "checkout"]);
    assert!(known(&s, "cus_chk").await);
    assert!(!known(&s, "cus_def").await);
    // `<overlay-ns>:<NAME>` falls back to the bare name when no namespaced set exists.
    let s = t.serve(&["--fixture", "base:checkout"]);
    assert!(known(&s, "cus_chk").await);
}

#[tokio::test]
async fn namespaced_parent_resolves_to_the_bare_set() {
    let t = twin();
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"customers": [customer("cus_base", "B")]}}).to_string(),
    );
    t.write(
        "state/fixtures/child/fixture.json",
        &json!({"parent": "base:default", "entities": {}}).to_string(),
    );
    let s = t.serve(&["--fixture", "child"]);
    assert!(known(&s, "cus_base").await);
}

#[test]
fn fixture_json_with_an_unknown_key_is_refused() {
    let t = twin();
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"name": "default", "entities": {}}).to_string(),
    );
    let (code, stderr) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("name"), "{stderr}");
}

#[test]
fn flat_fixture_file_that_is_not_an_array_is_refused() {
    let t = twin();
    t.write(
        "state/fixtures/default/customers.json",
        &json!({"id": "cus_x"}).to_string(),
    );
    let (code, stderr) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("customers"), "{stderr}");
}

#[test]
fn patch_documents_with_rfc6902_keys_are_refused() {
    let t = twin();
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {}}).to_string(),
    );
    t.write(
        "state/fixtures/default/patches/customers.patch.json",
        &json!({"op": "add", "path": "/0", "value": {}}).to_string(),
    );
    let (code, stderr) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("patch"), "{stderr}");
}

/// A patch's `replace` entry is a whole record under the key it replaces: one without its
/// primary key, or carrying another, would be stored where no read finds it. Serve refuses
/// the twin (exit 1) and lint reports the entry by its place in the patch.
#[test]
fn a_replacement_without_its_key_or_under_another_is_refused() {
    for (record, serve_says, lint_says) in [
        (
            json!({"name": "nopk"}),
            "replace.cus_1 has no primary key field `id`",
            "replace.cus_1 has no primary key field \"id\"",
        ),
        (
            json!({"id": "cus_other", "name": "Moved"}),
            "replace.cus_1: primary key `id` is \"cus_other\", not the key it replaces",
            "replace.cus_1.id is \"cus_other\", not the key it replaces",
        ),
    ] {
        let t = twin();
        t.write(
            "state/fixtures/default/fixture.json",
            &json!({"entities": {"customers": [customer("cus_1", "Ann")]}}).to_string(),
        );
        t.write(
            "state/fixtures/default/patches/customers.patch.json",
            &json!({"replace": {"cus_1": record}}).to_string(),
        );
        let (code, stderr) = t.serve_expect_exit(&[]);
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains(serve_says) && stderr.contains("customers.patch.json"),
            "{stderr}"
        );
        let lint = std::process::Command::new(support::bin())
            .args(["lint", &t.path_str()])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&lint.stdout);
        assert_eq!(lint.status.code(), Some(1), "{text}");
        assert!(text.contains(lint_says), "{text}");
        assert!(!text.contains("customers[0]"), "{text}");
    }
}

#[tokio::test]
async fn records_of_undeclared_entity_types_are_skipped() {
    let t = twin();
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {
            "customers": [customer("cus_ok", "Ok")],
            "gadgets": [{"id": "gad_1"}]
        }})
        .to_string(),
    );
    let s = t.serve(&["--debug"]);
    assert!(known(&s, "cus_ok").await);
    let state = s.get("/__wraith/session/probe/state", None).await;
    assert_eq!(state.status, 200);
    assert!(!String::from_utf8_lossy(&state.body).contains("gad_1"));
}

#[tokio::test]
async fn schema_json_declares_extra_entity_types_for_fixtures() {
    let t = twin();
    t.write(
        "state/schema.json",
        &json!({"schema_version": 1, "entity_types": {
            "coupons": {"primary_key": "code"}
        }})
        .to_string(),
    );
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"coupons": [{"code": "SAVE10", "percent_off": 10}]}}).to_string(),
    );
    let s = t.serve(&["--debug"]);
    s.get("/v1/customers/cus_1", Some("probe")).await;
    let state = s.get("/__wraith/session/probe/state", None).await;
    assert_eq!(state.status, 200);
    assert!(String::from_utf8_lossy(&state.body).contains("SAVE10"));
}

#[tokio::test]
async fn unparseable_schema_json_is_not_fatal_and_route_types_still_load() {
    let t = twin();
    t.write("state/schema.json", "{ not json");
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"customers": [customer("cus_ok", "Ok")]}}).to_string(),
    );
    let s = t.serve(&[]);
    assert!(known(&s, "cus_ok").await);
    assert!(
        s.ready["warnings"].to_string().contains("schema"),
        "{}",
        s.ready["warnings"]
    );
}

#[tokio::test]
async fn numeric_primary_keys_in_patches_match_their_stringified_form() {
    let t = twin();
    t.write(
        "state/schema.json",
        &json!({"schema_version": 1, "entity_types": {"customers": {"primary_key": "id"}}})
            .to_string(),
    );
    t.write(
        "state/fixtures/base/fixture.json",
        &json!({"entities": {"customers": [customer("42", "Num")]}}).to_string(),
    );
    t.write(
        "state/fixtures/leaf/fixture.json",
        &json!({"parent": "base", "entities": {}}).to_string(),
    );
    t.write(
        "state/fixtures/leaf/patches/customers.patch.json",
        &json!({"remove": [42]}).to_string(),
    );
    let s = t.serve(&["--fixture", "leaf"]);
    assert!(!known(&s, "42").await);
}

#[tokio::test]
async fn only_the_leaf_sets_patches_are_applied() {
    let t = twin();
    t.write(
        "state/fixtures/base/fixture.json",
        &json!({"entities": {"customers": [customer("cus_keep", "Keep")]}}).to_string(),
    );
    t.write(
        "state/fixtures/base/patches/customers.patch.json",
        &json!({"remove": ["cus_keep"], "add": [customer("cus_base_patch", "BP")]}).to_string(),
    );
    t.write(
        "state/fixtures/leaf/fixture.json",
        &json!({"parent": "base", "entities": {}}).to_string(),
    );
    let s = t.serve(&["--fixture", "leaf"]);
    assert!(
        known(&s, "cus_keep").await,
        "the parent's patch must not apply"
    );
    assert!(!known(&s, "cus_base_patch").await);
    // Served as the leaf of its own, the base set's patch does apply.
    let s = t.serve(&["--fixture", "base"]);
    assert!(!known(&s, "cus_keep").await);
    assert!(known(&s, "cus_base_patch").await);
}

#[tokio::test]
async fn namespaced_fixture_name_prefers_the_exact_namespaced_set() {
    let t = twin();
    t.write(
        "state/fixtures/checkout/fixture.json",
        &json!({"entities": {"customers": [customer("cus_bare", "Bare")]}}).to_string(),
    );
    t.write(
        "state/fixtures/ovl:checkout/fixture.json",
        &json!({"entities": {"customers": [customer("cus_ns", "Namespaced")]}}).to_string(),
    );
    let s = t.serve(&["--fixture", "ovl:checkout"]);
    assert!(known(&s, "cus_ns").await);
    assert!(!known(&s, "cus_bare").await);
}

#[tokio::test]
async fn route_derived_entity_types_win_over_declared_ones() {
    let t = twin();
    // The declaration says customers are keyed by email; the model's routes key them by id.
    t.write(
        "state/schema.json",
        &json!({"schema_version": 1, "entity_types": {"customers": {"primary_key": "email"}}})
            .to_string(),
    );
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"customers": [
            {"id": "cus_by_id", "email": "a@example.test", "object": "customer", "name": "A"}
        ]}})
        .to_string(),
    );
    let s = t.serve(&[]);
    assert!(known(&s, "cus_by_id").await);
    assert!(!known(&s, "a@example.test").await);
}

/// Serve `t` with `schema` as its `state/schema.json` and a default set seeding a customer and
/// a coupon (a type only the schema declares): the schema must not be used, so the customer
/// loads and the coupon is not seeded. The ready file's warnings.
async fn serve_with_an_unusable_schema(t: &Twin, schema: &[u8]) -> String {
    std::fs::write(t.path().join("state/schema.json"), schema).unwrap();
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {
            "coupons": [{"code": "SAVE10"}],
            "customers": [customer("cus_ok", "Ok")]
        }})
        .to_string(),
    );
    let s = t.serve(&["--debug"]);
    assert!(
        known(&s, "cus_ok").await,
        "route-only schema still loads customers"
    );
    let state = s.get("/__wraith/session/probe/state", None).await;
    assert!(!String::from_utf8_lossy(&state.body).contains("SAVE10"));
    s.ready["warnings"].to_string()
}

#[tokio::test]
async fn schema_json_with_another_schema_version_is_not_used() {
    let t = twin();
    let schema = json!({"schema_version": 2, "entity_types": {"coupons": {"primary_key": "code"}}});
    let warnings = serve_with_an_unusable_schema(&t, schema.to_string().as_bytes()).await;
    assert!(warnings.contains("schema"), "{warnings}");
}

/// Bytes that are not UTF-8 are no JSON: the schema is not used (its declared-only type is not
/// seeded), and the warning says so, as for any other unparseable schema.
#[tokio::test]
async fn schema_json_that_is_not_utf8_is_not_used() {
    let t = twin();
    let mut bytes = br#"{"schema_version": 1, "entity_types": {"coupons": {"primary_key": "code", "id_format": "c"#.to_vec();
    bytes.extend_from_slice(b"\xff\"}}}");
    let warnings = serve_with_an_unusable_schema(&t, &bytes).await;
    assert!(
        warnings.contains("state/schema.json is unusable (not UTF-8"),
        "{warnings}"
    );
}

/// A fixture record that leaves out fields the read renders (here `created`, a clock on the
/// bundled twin's read) is completed by the session's first read: later reads show the same
/// values, not a fresh clock reading each time.
#[tokio::test]
async fn a_sparse_fixture_record_reads_the_same_every_time() {
    let t = support::example_shop_twin();
    t.write(
        "state/fixtures/default/fixture.json",
        r#"{"entities": {"customers": [{"id": "cus_SparseRec0001", "name": "Sparse"}]}}"#,
    );
    let s = t.serve(&["--clock", "deterministic"]);
    let path = "/customers/cus_SparseRec0001";
    let first = s.get(path, Some("a")).await;
    first.assert_status(200);
    assert_eq!(first.provenance(), Some("fixture"));
    let first = first.json();
    assert_eq!(first["name"], json!("Sparse"), "{first}");
    assert!(first.get("created").is_some(), "{first}");
    let again = s.get(path, Some("a")).await.json();
    assert_eq!(again, first);
}

#[tokio::test]
async fn a_list_showing_a_fixture_record_is_a_fixture_answer() {
    let t = twin();
    t.write(
        "state/fixtures/default/fixture.json",
        &json!({"entities": {"customers": [customer("cus_seeded", "Seeded")]}}).to_string(),
    );
    let s = t.serve(&[]);
    // The recorded collection read, with the seeded record merged in, and a read no
    // recording made, answered from the session's collection: both show the fixture's record.
    for path in ["/v1/customers", "/v1/customers?limit=5"] {
        let r = s.get(path, Some("lists")).await;
        r.assert_status(200);
        assert_eq!(r.provenance(), Some("fixture"), "{path}");
        let body = r.json();
        assert!(
            body["data"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["id"] == "cus_seeded"),
            "{path}: {body}"
        );
    }
    // Without the set the same reads are learned answers.
    let t = twin();
    let s = t.serve(&[]);
    for path in ["/v1/customers", "/v1/customers?limit=5"] {
        let r = s.get(path, Some("lists")).await;
        assert_ne!(r.provenance(), Some("fixture"), "{path}");
    }
}
