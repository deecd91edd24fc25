//! Synthesize the real corpora (Mastodon and Linode HAR, the wraith-demo WREC twin): no crash,
//! no placeholder anywhere, route counts in plausible ranges, route lists pinned by snapshots,
//! and the behaviours each corpus is known for.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::OnceLock;

use wraith_model::{Guard, Model, Pagination, StateOp};
use wraith_synth::{SynthOptions, Synthesis, synthesize};

fn synth_har_corpus(name: &str, base_url: &str, origin: &str) -> Synthesis {
    let sessions = common::load_corpus(name, origin);
    synthesize(
        &sessions,
        &SynthOptions {
            twin: name.to_string(),
            base_url: base_url.to_string(),
            tool_version: "test".into(),
            tag: None,
            request_keying: Default::default(),
            run_gap_us: None,
        },
    )
}

/// Each corpus is synthesized once per test binary and shared by its tests.
fn mastodon() -> &'static Synthesis {
    static CELL: OnceLock<Synthesis> = OnceLock::new();
    CELL.get_or_init(|| {
        synth_har_corpus("mastodon", "http://localhost:3000", "http://localhost:3000")
    })
}

fn linode() -> &'static Synthesis {
    static CELL: OnceLock<Synthesis> = OnceLock::new();
    CELL.get_or_init(|| {
        synth_har_corpus(
            "linode",
            "https://api.linode.com/v4beta",
            "https://api.linode.com",
        )
    })
}

/// `METHOD path state_op entity_type` per route, one per line (origin first when foreign).
fn route_list(model: &Model) -> String {
    model
        .routes
        .iter()
        .map(|r| {
            format!(
                "{}{} {} {} {}",
                r.origin
                    .as_deref()
                    .map(|o| format!("{o} "))
                    .unwrap_or_default(),
                r.method,
                r.path,
                r.state_op.map(|s| s.as_str()).unwrap_or("-"),
                r.entity_type.as_deref().unwrap_or("-")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// No template placeholder string may appear anywhere in the written model.
fn assert_no_placeholders(s: &Synthesis) {
    let text = wraith_model::to_canonical_json(&s.model).unwrap();
    for marker in ["$hole_", "$arr_"] {
        assert!(
            !text.contains(marker),
            "placeholder {marker} leaked into the model"
        );
    }
}

fn route<'m>(model: &'m Model, method: &str, path: &str) -> &'m wraith_model::Route {
    model
        .routes
        .iter()
        .find(|r| r.method == method && r.path == path && r.origin.is_none())
        .unwrap_or_else(|| panic!("no route {method} {path}"))
}

#[test]
fn mastodon_synthesizes_plausible_routes_without_placeholders() {
    let s = mastodon();
    assert_no_placeholders(s);
    assert_eq!(s.summary.exchanges, 1108);
    assert_eq!(s.summary.sessions, 205);
    assert!(
        (170..=240).contains(&s.summary.routes),
        "{} routes",
        s.summary.routes
    );
    insta::assert_snapshot!("mastodon_routes", route_list(&s.model));
}

#[test]
fn mastodon_statuses_are_a_crud_collection_with_state_member_guards() {
    let s = mastodon();
    let create = route(&s.model, "POST", "/api/v1/statuses");
    assert_eq!(create.state_op, Some(StateOp::Create));
    assert_eq!(create.entity_type.as_deref(), Some("statuses"));
    let read = route(&s.model, "GET", "/api/v1/statuses/:param");
    assert_eq!(read.state_op, Some(StateOp::Read));
    let guards: Vec<(u16, &Guard)> = read.variants.iter().map(|v| (v.status, &v.guard)).collect();
    assert!(guards.contains(&(404, &Guard::StateMember { member: false })));
    assert!(guards.contains(&(200, &Guard::StateMember { member: true })));
    // Verb endpoints under a collection stay literal and never mutate.
    let follow = route(&s.model, "POST", "/api/v1/accounts/:param/follow");
    assert_eq!(follow.state_op, None);
    route(&s.model, "GET", "/api/v1/accounts/verify_credentials");
    // Snowflake ids are minted as strings above the highest recorded one.
    let statuses = &s.model.entity_types["statuses"];
    assert!(matches!(
        statuses.id_shape,
        Some(wraith_model::IdShape::Integer {
            as_string: true,
            ..
        })
    ));
}

#[test]
fn list_only_views_of_addressable_records_take_their_entity_type() {
    let s = mastodon();
    let ty = |m: &str, p: &str| {
        route(&s.model, m, p)
            .entity_type
            .clone()
            .unwrap_or_default()
    };
    // Timelines and bookmarks list statuses (`/statuses/:id`); who favourited or reblogged a
    // status, and the directory, list accounts (`/accounts/:id`).
    for p in [
        "/api/v1/timelines/home",
        "/api/v1/timelines/public",
        "/api/v1/bookmarks",
    ] {
        assert_eq!(ty("GET", p), "statuses", "{p}");
    }
    for p in [
        "/api/v1/statuses/:param/favourited_by",
        "/api/v1/statuses/:param/reblogged_by",
        "/api/v1/directory",
    ] {
        assert_eq!(ty("GET", p), "accounts", "{p}");
    }
    // Records of another shape keep their own type.
    assert_eq!(ty("GET", "/api/v1/notifications"), "notifications");
}

#[test]
fn mastodon_timelines_page_with_link_headers() {
    let s = mastodon();
    let home = route(&s.model, "GET", "/api/v1/timelines/home");
    let list = home.list.as_ref().expect("list shape");
    assert_eq!(list.items_pointer, "");
    assert!(matches!(
        &list.pagination,
        Pagination::LinkHeader { next_param, .. } if next_param == "max_id"
    ));
}

#[test]
fn linode_synthesizes_plausible_routes_without_placeholders() {
    let s = linode();
    assert_no_placeholders(s);
    assert_eq!(s.summary.exchanges, 2791);
    assert!(
        (300..=460).contains(&s.summary.routes),
        "{} routes",
        s.summary.routes
    );
    // Distinct collections never collapse into a catch-all under the version prefix.
    assert!(
        !s.model
            .routes
            .iter()
            .any(|r| r.path.starts_with("/v4beta/:")),
        "a collection root became a parameter"
    );
    insta::assert_snapshot!("linode_routes", route_list(&s.model));
}

#[test]
fn linode_lists_use_data_envelopes_pages_and_the_filter_header() {
    let s = linode();
    let instances = route(&s.model, "GET", "/v4beta/linode/instances");
    assert_eq!(instances.state_op, Some(StateOp::List));
    let list = instances.list.as_ref().expect("list shape");
    assert_eq!(list.items_pointer, "/data");
    assert_eq!(list.filter_header.as_deref(), Some("x-filter"));
    assert!(matches!(&list.pagination, Pagination::PagePerPage { page, .. } if page == "page"));
    assert!(
        list.envelope
            .iter()
            .any(|e| e.pointer == "/results" && e.meaning == wraith_model::EnvelopeMeaning::Total)
    );
    // Same collection segment under two parents: two entity types.
    assert!(s.model.entity_types.contains_key("linode_instances"));
    assert!(s.model.entity_types.contains_key("mysql_instances"));
    // Slugs handed out by their collection route as parameters; tags are keyed by label.
    let tag = route(&s.model, "DELETE", "/v4beta/tags/:param");
    assert_eq!(tag.state_op, Some(StateOp::Delete));
    assert_eq!(s.model.entity_types["tags"].primary_key, "label");
}

#[test]
fn wraith_demo_recordings_synthesize_into_customers_and_orders() {
    let dir = common::corpora().join("wraith-demo/recordings/sessions");
    let sessions = wraith_recording::read_sessions(&dir).unwrap();
    let s = synthesize(
        &sessions,
        &SynthOptions {
            twin: "wraith-demo".into(),
            base_url: "http://127.0.0.1:18080".into(),
            tool_version: "test".into(),
            tag: Some("checkout-contract".into()),
            request_keying: Default::default(),
            run_gap_us: None,
        },
    );
    assert_no_placeholders(&s);
    assert_eq!(s.summary.exchanges, 6);
    insta::assert_snapshot!("wraith_demo_routes", route_list(&s.model));
    let customers = &s.model.entity_types["customers"];
    assert!(customers.known_ids.contains("cus_000001"));
    assert_eq!(
        customers.id_shape,
        Some(wraith_model::IdShape::Token {
            prefix: "cus_".into(),
            charset: wraith_model::IdCharset::Digits,
            length: 6
        })
    );
    assert_eq!(
        s.model.recorded_at.as_deref().map(|t| &t[..4]),
        Some("2026")
    );
}

#[test]
fn an_action_answering_the_entity_it_names_learns_the_fields_it_changes() {
    let m = &mastodon().model;
    let fav = route(m, "POST", "/api/v1/statuses/:param/favourite")
        .action
        .as_ref()
        .expect("favourite answers the status it names");
    assert_eq!(fav.entity_type, "statuses");
    assert_eq!(fav.id_param, "param");
    assert_eq!(fav.fields, vec!["favourited".to_string()]);
    let bookmark = route(m, "POST", "/api/v1/statuses/:param/bookmark")
        .action
        .as_ref()
        .expect("bookmark answers the status it names");
    assert_eq!(bookmark.fields, vec!["bookmarked".to_string()]);
    // Undoing is compared with the action before it, so it learns the reverse.
    let unbookmark = route(m, "POST", "/api/v1/statuses/:param/unbookmark")
        .action
        .as_ref()
        .expect("unbookmark answers the status it names");
    assert_eq!(unbookmark.fields, vec!["bookmarked".to_string()]);
    // A relationship shares the account's id but is not the account: the actions answering
    // it change the relationship with the account.
    for verb in ["follow", "unfollow", "mute", "unmute"] {
        let path = format!("/api/v1/accounts/:param/{verb}");
        let action = route(m, "POST", &path).action.as_ref();
        assert_eq!(
            action.map(|a| a.entity_type.as_str()),
            Some("relationships"),
            "{path}"
        );
    }
    for verb in ["mute", "unmute"] {
        let path = format!("/api/v1/accounts/:param/{verb}");
        let action = route(m, "POST", &path).action.as_ref();
        assert!(
            action.is_some_and(|a| a.fields.contains(&"muting".to_string())),
            "{path}: {action:?}"
        );
    }
}

#[test]
fn an_action_effect_leaves_out_transient_and_per_recording_values() {
    let m = &linode().model;
    // Resize answers `resizing` (a later read shows `active`) and each recording's own size:
    // neither is stored, and a rendered answer keeps both from its template.
    let resize = route(m, "POST", "/v4beta/volumes/:param/resize")
        .action
        .as_ref()
        .expect("resize answers the volume it names");
    assert!(resize.fields.is_empty(), "{resize:?}");
    assert_eq!(
        resize.answered_fields,
        vec!["size".to_string(), "status".to_string()]
    );
    // Attach answers each recording's own linode id.
    let attach = route(m, "POST", "/v4beta/volumes/:param/attach")
        .action
        .as_ref()
        .expect("attach answers the volume it names");
    assert!(attach.fields.is_empty(), "{attach:?}");
}

#[test]
fn an_action_learns_counters_that_step_the_same_way_and_where_the_answer_embeds_the_entity() {
    let m = &mastodon().model;
    let action = |path: &str| {
        route(m, "POST", path)
            .action
            .clone()
            .unwrap_or_else(|| panic!("{path} acts on the status it names"))
    };
    let fav = action("/api/v1/statuses/:param/favourite");
    assert_eq!(fav.counters.get("favourites_count"), Some(&1), "{fav:?}");
    assert_eq!(fav.at, "");
    let unfav = action("/api/v1/statuses/:param/unfavourite");
    assert_eq!(
        unfav.counters.get("favourites_count"),
        Some(&-1),
        "{unfav:?}"
    );
    assert!(!unfav.fields.contains(&"favourites_count".to_string()));
    // A reblog answers a new status that wraps the one it names.
    let reblog = action("/api/v1/statuses/:param/reblog");
    assert_eq!(reblog.at, "/reblog", "{reblog:?}");
    assert_eq!(reblog.counters.get("reblogs_count"), Some(&1), "{reblog:?}");
    assert!(
        reblog.fields.contains(&"reblogged".to_string()),
        "{reblog:?}"
    );
}

#[test]
fn a_membership_action_learns_that_the_next_list_read_lists_or_drops_the_ids_it_sent() {
    let m = &mastodon().model;
    let membership = |method: &str| {
        route(m, method, "/api/v1/lists/:param/accounts")
            .membership
            .clone()
            .unwrap_or_else(|| panic!("{method} names the list's members in its body"))
    };
    let add = membership("POST");
    assert_eq!(add.list_path, "/api/v1/lists/:param/accounts");
    assert_eq!(add.ids_field, "/account_ids");
    assert!(add.adds, "{add:?}");
    let remove = membership("DELETE");
    assert_eq!(remove.ids_field, "/account_ids");
    assert!(!remove.adds, "{remove:?}");
    assert_eq!(add.member_type, remove.member_type);
    let member_type = m
        .routes
        .iter()
        .find(|r| r.method == "GET" && r.path == "/api/v1/accounts/:param")
        .and_then(|r| r.entity_type.clone());
    assert_eq!(
        Some(add.member_type.clone()),
        member_type,
        "members are accounts"
    );
    // Nothing else in either corpus shows a list read following the ids a write sent.
    for model in [m, &linode().model] {
        let learned: Vec<String> = model
            .routes
            .iter()
            .filter(|r| r.membership.is_some())
            .map(|r| format!("{} {}", r.method, r.path))
            .collect();
        let expected: Vec<String> = if std::ptr::eq(model, m) {
            vec![
                "DELETE /api/v1/lists/:param/accounts".to_string(),
                "POST /api/v1/lists/:param/accounts".to_string(),
            ]
        } else {
            Vec::new()
        };
        assert_eq!(learned, expected);
    }
}

#[test]
fn a_write_whose_next_same_path_read_repeats_its_answer_is_last_write_wins() {
    for (synthesis, name) in [(mastodon(), "mastodon"), (linode(), "linode")] {
        let learned: Vec<String> = synthesis
            .model
            .routes
            .iter()
            .filter(|r| r.last_write_wins)
            .map(|r| format!("{} {}", r.method, r.path))
            .collect();
        let expected: &[&str] = if name == "mastodon" {
            &[
                "POST /api/v1/markers",
                "PATCH /api/v1/profile",
                "PUT /api/v1/push/subscription",
                "PATCH /api/v2/notifications/policy",
            ]
        } else {
            // No recorded session read these paths after writing them; each write answers
            // the resource its path's read answers (by their field names).
            &[
                "PUT /v4beta/account/settings",
                "PUT /v4beta/iam/users/prod-test-022/role-permissions",
                "PUT /v4beta/networking/firewalls/settings",
                "PUT /v4beta/profile",
            ]
        };
        assert_eq!(learned, expected, "{name}");
    }
    let m = &mastodon().model;
    assert!(route(m, "POST", "/api/v1/markers").last_write_wins);
    // A read is never a write, and a write with an id in its path is not a singleton.
    assert!(!route(m, "GET", "/api/v1/markers").last_write_wins);
    assert!(
        m.routes
            .iter()
            .filter(|r| r.last_write_wins)
            .all(|r| r.params.is_empty() && r.method != "GET")
    );
}
