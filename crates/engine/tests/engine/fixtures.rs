//! Fixtures and `state/schema.json` contract: both set forms, strict `fixture.json`, parents,
//! patches, the implicit default set, `--fixture` lookup, the schema gate, per-session seeding.

use crate::support;

use serde_json::json;
use support::*;
use wraith_engine::{Engine, EngineError, EngineOptions, FixtureTree, Provenance};

fn build(
    schema: Option<&str>,
    tree: FixtureTree,
    fixture: Option<&str>,
) -> Result<Engine, EngineError> {
    Engine::new(
        shop_model(),
        schema,
        tree,
        EngineOptions {
            fixture: fixture.map(str::to_string),
            ..det_opts()
        },
    )
}

fn ok(schema: Option<&str>, tree: FixtureTree, fixture: Option<&str>) -> Engine {
    match build(schema, tree, fixture) {
        Ok(e) => e,
        Err(e) => panic!("{e}"),
    }
}

fn err(schema: Option<&str>, tree: FixtureTree) -> EngineError {
    match build(schema, tree, None) {
        Ok(_) => panic!("expected a fixture error"),
        Err(e) => e,
    }
}

fn status(e: &Engine, id: &str) -> u16 {
    get(e, Some("t"), &format!("/v1/customers/{id}")).status
}

const ALICE: &str = r#"{"entities":{"customers":[{"id":"cus_fx1","name":"Fixture Alice"}]}}"#;

#[test]
fn directory_form_seeds_every_new_session_and_reads_are_fixture_provenance() {
    let e = ok(
        Some(SCHEMA),
        tree(vec![("default", set(Some(ALICE), &[], &[]))], &[]),
        None,
    );
    let r = get(&e, Some("a"), "/v1/customers/cus_fx1");
    assert_eq!(r.status, 200);
    assert_eq!(r.provenance, Provenance::Fixture);
    let b = body(&r);
    assert_eq!(b["name"], json!("Fixture Alice"));
    // Fields the fixture lacks come from the template.
    assert_eq!(b["object"], json!("customer"));
    assert_eq!(get(&e, Some("b"), "/v1/customers/cus_fx1").status, 200);
}

#[test]
fn legacy_flat_form_is_read_when_there_is_no_fixture_json() {
    let e = ok(
        Some(SCHEMA),
        tree(
            vec![(
                "default",
                set(
                    None,
                    &[("customers", r#"[{"id":"cus_flat","name":"Flat"}]"#)],
                    &[],
                ),
            )],
            &[],
        ),
        None,
    );
    assert_eq!(status(&e, "cus_flat"), 200);
}

#[test]
fn flat_file_that_is_not_an_array_is_rejected() {
    let e = err(
        Some(SCHEMA),
        tree(
            vec![("default", set(None, &[("customers", r#"{"id":"x"}"#)], &[]))],
            &[],
        ),
    );
    assert!(
        matches!(&e, EngineError::Fixture { file, .. } if file == "customers.json"),
        "{e}"
    );
}

#[test]
fn fixture_json_is_parsed_strictly() {
    for bad in [
        r#"{"name":"x"}"#,
        r#"{"entities":{},"extra":1}"#,
        r#"[1]"#,
        r#"{"entities":[]}"#,
    ] {
        let e = err(
            Some(SCHEMA),
            tree(vec![("s", set(Some(bad), &[], &[]))], &[]),
        );
        assert!(
            matches!(&e, EngineError::Fixture { set, file, .. } if set == "s" && file == "fixture.json"),
            "{bad}: {e}"
        );
    }
    let named = err(
        Some(SCHEMA),
        tree(vec![("s", set(Some(r#"{"name":"s"}"#), &[], &[]))], &[]),
    );
    assert!(named.to_string().contains("directory name"), "{named}");
    // description is informational and accepted; entities is optional.
    assert!(
        build(
            Some(SCHEMA),
            tree(
                vec![("s", set(Some(r#"{"description":"d"}"#), &[], &[]))],
                &[]
            ),
            None
        )
        .is_ok()
    );
}

#[test]
fn records_must_carry_a_string_primary_key() {
    let missing = err(
        Some(SCHEMA),
        tree(
            vec![(
                "s",
                set(
                    Some(r#"{"entities":{"customers":[{"name":"x"}]}}"#),
                    &[],
                    &[],
                ),
            )],
            &[],
        ),
    );
    assert!(missing.to_string().contains("primary key"), "{missing}");
    let numeric = err(
        Some(SCHEMA),
        tree(
            vec![(
                "s",
                set(Some(r#"{"entities":{"customers":[{"id":5}]}}"#), &[], &[]),
            )],
            &[],
        ),
    );
    assert!(
        numeric.to_string().contains("must be a string"),
        "{numeric}"
    );
}

#[test]
fn parent_inheritance_overlays_the_child_on_the_parent() {
    let base = r#"{"entities":{"customers":[{"id":"cus_p1","name":"Parent"},{"id":"cus_p2","name":"Old"}]}}"#;
    let child = r#"{"parent":"base:basics","entities":{"customers":[{"id":"cus_p2","name":"New"},{"id":"cus_c1","name":"Child"}]}}"#;
    let e = ok(
        Some(SCHEMA),
        tree(
            vec![
                ("basics", set(Some(base), &[], &[])),
                ("scenario", set(Some(child), &[], &[])),
            ],
            &[],
        ),
        Some("scenario"),
    );
    assert_eq!(status(&e, "cus_p1"), 200);
    assert_eq!(status(&e, "cus_c1"), 200);
    assert_eq!(
        body(&get(&e, Some("t"), "/v1/customers/cus_p2"))["name"],
        json!("New")
    );
}

#[test]
fn namespaced_parent_resolves_the_exact_namespaced_set_first() {
    let e = ok(
        Some(SCHEMA),
        tree(
            vec![
                (
                    "base:default",
                    set(
                        Some(r#"{"entities":{"customers":[{"id":"cus_ns"}]}}"#),
                        &[],
                        &[],
                    ),
                ),
                (
                    "default",
                    set(
                        Some(r#"{"entities":{"customers":[{"id":"cus_bare"}]}}"#),
                        &[],
                        &[],
                    ),
                ),
                ("kid", set(Some(r#"{"parent":"base:default"}"#), &[], &[])),
            ],
            &[],
        ),
        Some("kid"),
    );
    assert_eq!(status(&e, "cus_ns"), 200);
    assert_eq!(status(&e, "cus_bare"), 404);
}

#[test]
fn unknown_parent_is_an_error() {
    let e = err(
        Some(SCHEMA),
        tree(
            vec![("kid", set(Some(r#"{"parent":"x:nothing"}"#), &[], &[]))],
            &[],
        ),
    );
    assert!(e.to_string().contains("nothing"), "{e}");
}

#[test]
fn patches_apply_add_then_replace_then_remove_on_the_leaf_only() {
    let base =
        r#"{"entities":{"customers":[{"id":"cus_1a","name":"A"},{"id":"cus_3","name":"C"}]}}"#;
    let base_patch = r#"{"add":[{"id":"cus_base_patch"}]}"#;
    let child = r#"{"parent":"base"}"#;
    let patch = r#"{"add":[{"id":"cus_2b","name":"Bob"}],"replace":{"cus_1a":{"id":"cus_1a","name":"A Updated"},"cus_nope":{"id":"cus_nope"}},"remove":["cus_3","cus_2b","missing"]}"#;
    let e = ok(
        Some(SCHEMA),
        tree(
            vec![
                ("base", set(Some(base), &[], &[("customers", base_patch)])),
                ("leaf", set(Some(child), &[], &[("customers", patch)])),
            ],
            &[],
        ),
        Some("leaf"),
    );
    assert_eq!(
        body(&get(&e, Some("t"), "/v1/customers/cus_1a"))["name"],
        json!("A Updated")
    );
    assert_eq!(status(&e, "cus_3"), 404, "removed");
    assert_eq!(
        status(&e, "cus_2b"),
        404,
        "added then removed: remove runs last"
    );
    assert_eq!(
        status(&e, "cus_nope"),
        404,
        "replacing a missing record is a no-op"
    );
    assert_eq!(
        status(&e, "cus_base_patch"),
        404,
        "only the leaf set's patches apply"
    );
}

#[test]
fn patch_remove_matches_numeric_ids_to_stringified_keys() {
    let base = r#"{"entities":{"customers":[{"id":"7","name":"Seven"},{"id":"8"}]}}"#;
    let e = ok(
        Some(SCHEMA),
        tree(
            vec![(
                "default",
                set(Some(base), &[], &[("customers", r#"{"remove":[7]}"#)]),
            )],
            &[],
        ),
        None,
    );
    assert_eq!(status(&e, "7"), 404);
    assert_eq!(status(&e, "8"), 200);
}

#[test]
fn patch_rejects_other_keys_including_rfc6902() {
    for bad in [
        r#"{"op":"add","path":"/x","value":1}"#,
        r#"[{"op":"remove","path":"/0"}]"#,
        r#"{"add":{"id":"x"}}"#,
        r#"{"add":[1]}"#,
        r#"{"remove":[{"id":"x"}]}"#,
    ] {
        let e = err(
            Some(SCHEMA),
            tree(
                vec![("s", set(Some("{}"), &[], &[("customers", bad)]))],
                &[],
            ),
        );
        assert!(
            matches!(&e, EngineError::Fixture { file, .. } if file == "patches/customers.patch.json"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn patch_add_of_a_key_the_set_holds_is_refused_naming_add_and_index() {
    let base = r#"{"entities":{"customers":[{"id":"cus_1","name":"A"}]}}"#;
    let child = r#"{"parent":"base"}"#;
    for (patch, says) in [
        // The parent's record: `add` appends, `replace` changes.
        (r#"{"add":[{"id":"cus_1","name":"dup"}]}"#, "add[0]"),
        // Twice in one `add`.
        (
            r#"{"add":[{"id":"cus_2"},{"id":"cus_2","name":"again"}]}"#,
            "add[1]",
        ),
    ] {
        let e = err(
            Some(SCHEMA),
            tree(
                vec![
                    ("base", set(Some(base), &[], &[])),
                    ("leaf", set(Some(child), &[], &[("customers", patch)])),
                ],
                &[],
            ),
        );
        let text = e.to_string();
        assert!(
            matches!(&e, EngineError::Fixture { file, .. } if file == "patches/customers.patch.json"),
            "{patch}: {e}"
        );
        assert!(
            text.contains(says) && text.contains("replace"),
            "{patch}: {text}"
        );
    }
    // A record without its key is named by its place in `add`, not by its type.
    let e = err(
        Some(SCHEMA),
        tree(
            vec![(
                "s",
                set(
                    Some("{}"),
                    &[],
                    &[("customers", r#"{"add":[{"id":"ok"},{"name":"no key"}]}"#)],
                ),
            )],
            &[],
        ),
    );
    assert!(e.to_string().contains("add[1] has no primary key"), "{e}");
}

#[test]
fn a_set_repeating_a_primary_key_is_refused_naming_both_records() {
    let base = r#"{"entities":{"customers":[{"id":"cus_1","name":"A"},{"id":"cus_2"},{"id":"cus_1","name":"B"}]}}"#;
    let e = err(
        Some(SCHEMA),
        tree(vec![("default", set(Some(base), &[], &[]))], &[]),
    );
    let text = e.to_string();
    assert!(
        text.contains("customers[2] repeats primary key \"cus_1\" of customers[0]"),
        "{text}"
    );
}

#[test]
fn default_subdirectory_wins_over_loose_files_with_a_warning() {
    let e = ok(
        Some(SCHEMA),
        tree(
            vec![(
                "default",
                set(
                    Some(r#"{"entities":{"customers":[{"id":"cus_dir"}]}}"#),
                    &[],
                    &[],
                ),
            )],
            &[("customers", r#"[{"id":"cus_loose"}]"#)],
        ),
        None,
    );
    assert_eq!(status(&e, "cus_dir"), 200);
    assert_eq!(status(&e, "cus_loose"), 404);
    assert!(
        e.warnings().iter().any(|w| w.contains("loose")),
        "{:?}",
        e.warnings()
    );
}

#[test]
fn loose_files_are_the_default_set_when_there_is_no_default_directory() {
    let e = ok(
        Some(SCHEMA),
        tree(vec![], &[("customers", r#"[{"id":"cus_loose"}]"#)]),
        None,
    );
    assert_eq!(status(&e, "cus_loose"), 200);
    assert!(e.warnings().is_empty(), "{:?}", e.warnings());
}

#[test]
fn without_any_default_sessions_start_empty() {
    let e = ok(
        Some(SCHEMA),
        tree(vec![("other", set(Some(ALICE), &[], &[]))], &[]),
        None,
    );
    assert_eq!(status(&e, "cus_fx1"), 404);
}

#[test]
fn fixture_flag_selects_a_set_with_namespaced_lookup() {
    let t = || {
        tree(
            vec![
                (
                    "ovl:checkout",
                    set(
                        Some(r#"{"entities":{"customers":[{"id":"cus_ns"}]}}"#),
                        &[],
                        &[],
                    ),
                ),
                (
                    "checkout",
                    set(
                        Some(r#"{"entities":{"customers":[{"id":"cus_bare"}]}}"#),
                        &[],
                        &[],
                    ),
                ),
            ],
            &[],
        )
    };
    let exact = ok(Some(SCHEMA), t(), Some("ovl:checkout"));
    assert_eq!(status(&exact, "cus_ns"), 200);
    let fallback = ok(Some(SCHEMA), t(), Some("other:checkout"));
    assert_eq!(status(&fallback, "cus_bare"), 200);
    let bare = ok(Some(SCHEMA), t(), Some("checkout"));
    assert_eq!(status(&bare, "cus_bare"), 200);
}

#[test]
fn unknown_fixture_lists_the_available_sets() {
    let e = build(
        Some(SCHEMA),
        tree(
            vec![
                ("a", set(Some("{}"), &[], &[])),
                ("b", set(Some("{}"), &[], &[])),
            ],
            &[],
        ),
        Some("zzz"),
    );
    match e {
        Err(EngineError::UnknownFixture { name, available }) => {
            assert_eq!(name, "zzz");
            assert_eq!(available, vec!["a".to_string(), "b".to_string()]);
        }
        other => panic!("expected UnknownFixture, got {:?}", other.err()),
    }
}

#[test]
fn records_of_undeclared_types_are_silently_skipped() {
    let fx = r#"{"entities":{"customers":[{"id":"cus_ok"}],"ghosts":[{"no_pk":true}]}}"#;
    let e = ok(
        Some(SCHEMA),
        tree(vec![("default", set(Some(fx), &[], &[]))], &[]),
        None,
    );
    assert_eq!(status(&e, "cus_ok"), 200);
    let info = e.provision(wraith_engine::Provision {
        session: "p".into(),
        ..Default::default()
    });
    assert_eq!(info.ok().map(|i| i.entities_seeded), Some(1));
}

#[test]
fn declared_types_are_seeded_with_their_own_primary_key() {
    let fx = r#"{"entities":{"notes":[{"slug":"hello","text":"hi"}]}}"#;
    let e = ok(
        Some(SCHEMA),
        tree(vec![("default", set(Some(fx), &[], &[]))], &[]),
        None,
    );
    let info = e.provision(wraith_engine::Provision {
        session: "p".into(),
        ..Default::default()
    });
    assert_eq!(info.ok().map(|i| i.entities_seeded), Some(1));
    let dump = e.session_state("p").unwrap_or_default();
    assert_eq!(dump["entities"]["notes"]["live"][0]["slug"], json!("hello"));
}

#[test]
fn route_derived_types_win_over_declared_ones() {
    // The schema declares customers keyed by `email`; the route-derived `id` wins.
    let schema = r#"{"schema_version":1,"entity_types":{"customers":{"primary_key":"email"}}}"#;
    let fx = r#"{"entities":{"customers":[{"id":"cus_route","email":"e@x"}]}}"#;
    let e = ok(
        Some(schema),
        tree(vec![("default", set(Some(fx), &[], &[]))], &[]),
        None,
    );
    assert_eq!(status(&e, "cus_route"), 200);
}

#[test]
fn missing_or_unparseable_schema_is_non_fatal_and_route_only() {
    let fx = r#"{"entities":{"customers":[{"id":"cus_r"}],"notes":[{"slug":"n"}]}}"#;
    let missing = ok(
        None,
        tree(vec![("default", set(Some(fx), &[], &[]))], &[]),
        None,
    );
    assert_eq!(
        status(&missing, "cus_r"),
        200,
        "route-derived types still load"
    );
    for bad in ["{not json", r#"{"schema_version":2,"entity_types":{}}"#] {
        let e = ok(
            Some(bad),
            tree(vec![("default", set(Some(fx), &[], &[]))], &[]),
            None,
        );
        assert_eq!(status(&e, "cus_r"), 200);
        assert!(
            e.warnings().iter().any(|w| w.contains("schema.json")),
            "{:?}",
            e.warnings()
        );
        let info = e.provision(wraith_engine::Provision {
            session: "p".into(),
            ..Default::default()
        });
        assert_eq!(
            info.ok().map(|i| i.entities_seeded),
            Some(1),
            "notes skipped"
        );
    }
}

#[test]
fn schema_entry_without_string_primary_key_is_dropped_with_a_warning() {
    let schema = r#"{"schema_version":1,"entity_types":{"notes":{"primary_key":3}}}"#;
    let fx = r#"{"entities":{"notes":[{"slug":"n"}]}}"#;
    let e = ok(
        Some(schema),
        tree(vec![("default", set(Some(fx), &[], &[]))], &[]),
        None,
    );
    assert!(
        e.warnings().iter().any(|w| w.contains("notes")),
        "{:?}",
        e.warnings()
    );
}

#[test]
fn a_malformed_id_format_index_or_foreign_key_is_a_warning_and_the_type_still_seeds() {
    let schema = r#"{"schema_version":1,"entity_types":{"notes":{"primary_key":"slug",
        "id_format":"n_[","indexes":[{"field":"text"}],"foreign_keys":"customers.id"}}}"#;
    let fx = r#"{"entities":{"notes":[{"slug":"hello","text":"hi"}]}}"#;
    let e = ok(
        Some(schema),
        tree(vec![("default", set(Some(fx), &[], &[]))], &[]),
        None,
    );
    for part in [
        "id_format `n_[`",
        "indexes[0]",
        "foreign_keys must be an array",
    ] {
        assert!(
            e.warnings().iter().any(
                |w| w.starts_with("state/schema.json: entity type `notes`") && w.contains(part)
            ),
            "no warning naming {part}: {:?}",
            e.warnings()
        );
    }
    let info = e.provision(wraith_engine::Provision {
        session: "p".into(),
        ..Default::default()
    });
    assert_eq!(info.ok().map(|i| i.entities_seeded), Some(1));
}

#[test]
fn fixture_is_seeded_once_when_the_namespace_is_created() {
    let e = ok(
        Some(SCHEMA),
        tree(vec![("default", set(Some(ALICE), &[], &[]))], &[]),
        None,
    );
    let del = e.handle(Some("s"), &req("DELETE", "/v1/customers/cus_fx1", None));
    assert_eq!(del.status, 200);
    // Later requests reuse the already-seeded state: the fixture does not come back.
    assert_eq!(get(&e, Some("s"), "/v1/customers/cus_fx1").status, 404);
    assert_eq!(get(&e, Some("fresh"), "/v1/customers/cus_fx1").status, 200);
}

#[test]
fn fixture_sets_lists_every_set() {
    let e = ok(
        Some(SCHEMA),
        tree(
            vec![("a", set(Some("{}"), &[], &[]))],
            &[("customers", "[]")],
        ),
        None,
    );
    assert_eq!(
        e.fixture_sets(),
        vec!["a".to_string(), "default".to_string()]
    );
}
