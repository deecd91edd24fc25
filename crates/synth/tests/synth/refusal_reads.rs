//! A read route every recorded answer of which refused an id nobody made (`GET /v1/parts/:id`,
//! 404 only) reads the type whose minted ids those ids look like (parts created under
//! `/v1/widgets/:id/parts`, `prt_` and 14 base62 characters), so a session reads back the part
//! it created; an id shape two types share, or one no type mints, binds nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;
use serde_json::json;
use wraith_model::Model;
use wraith_recording::{Exchange, RecordedSession};

fn not_found(path: &str) -> Exchange {
    common::json_exchange(
        "GET",
        path,
        404,
        wraith_recording::Headers::new(),
        None,
        &json!({"error": {"message": "not found"}}),
    )
}

/// Session `n`: a widget, a part under it (listed), and a read of a part id nobody made,
/// shaped `missing(n)`.
fn session(n: u64, missing: &dyn Fn(u64) -> String) -> RecordedSession {
    let w = format!("wid_{n:02}Kq7ZkR2mXw9L");
    let p = format!("prt_{n:02}Bq7ZkR2mXw9L");
    common::session(
        &format!("s{n}"),
        1_700_000_000_000_000 + n * 1_000,
        vec![
            ok_json(
                "POST",
                "/v1/widgets",
                Some(&json!({"name": "w"})),
                &json!({"id": w, "name": "w"}),
            ),
            ok_json(
                "GET",
                &format!("/v1/widgets/{w}"),
                None,
                &json!({"id": w, "name": "w"}),
            ),
            ok_json(
                "POST",
                &format!("/v1/widgets/{w}/parts"),
                Some(&json!({"label": "bolt"})),
                &json!({"id": p, "widget_id": w, "label": "bolt"}),
            ),
            ok_json(
                "GET",
                &format!("/v1/widgets/{w}/parts"),
                None,
                &json!([{"id": p, "widget_id": w, "label": "bolt"}]),
            ),
            not_found(&format!("/v1/parts/{}", missing(n))),
        ],
    )
}

fn model(missing: &dyn Fn(u64) -> String) -> Model {
    let sessions: Vec<RecordedSession> = (1..=3).map(|n| session(n, missing)).collect();
    common::synth_model("widgets", "https://api.widgets.example", &sessions)
}

fn types(m: &Model) -> (Option<String>, Option<String>) {
    let create = common::route(m, "POST", "/v1/widgets/:param/parts");
    let read = common::route(m, "GET", "/v1/parts/:param");
    (create.entity_type.clone(), read.entity_type.clone())
}

#[test]
fn a_refusal_only_read_of_ids_shaped_as_one_types_reads_that_type() {
    let m = model(&|n| format!("prt_{n:02}Zz8YxWvUtS1Q"));
    let (create, read) = types(&m);
    assert!(create.is_some());
    assert_eq!(read, create);
    let et = &m.entity_types[create.as_deref().unwrap()];
    assert!(
        et.known_missing.contains("prt_01Zz8YxWvUtS1Q"),
        "{:?}",
        et.known_missing
    );
}

#[test]
fn ids_no_type_mints_bind_nothing() {
    // Plain numbers: no prefix to tell whose they are.
    let m = model(&|n| format!("{}", 90_000 + n));
    let (create, read) = types(&m);
    assert_ne!(read, create);
}
