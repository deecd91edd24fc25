//! Members a write names by a path segment (`Route::segment_member`), through `synthesize`:
//! `PUT .../issues/:n/labels/:label` answering the issue's labels with the one named adds it
//! to the issue's `labels`, its `DELETE` answering them without it takes it out; answers that
//! do not hold the named label learn nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::ok_json;

use serde_json::{Value, json};
use wraith_model::{Model, SegmentMember};
use wraith_recording::RecordedSession;

fn labels(names: &[&str]) -> Value {
    names.iter().map(|n| json!({"name": n})).collect()
}

/// Session `n`: create an issue, read it, label it `first` (answered `put_answer`), read it,
/// take the label off.
fn session(n: u64, first: &str, put_answer: &[&str]) -> RecordedSession {
    let at = format!("/repos/alice/widgets/issues/{n}");
    let issue = |names: &[&str]| json!({"number": n, "title": "t", "labels": labels(names)});
    let exchanges = vec![
        ok_json(
            "POST",
            "/repos/alice/widgets/issues",
            Some(&json!({"title": "t"})),
            &issue(&[]),
        ),
        ok_json("GET", &at, None, &issue(&[])),
        ok_json(
            "PUT",
            &format!("{at}/labels/{first}"),
            None,
            &labels(put_answer),
        ),
        ok_json("GET", &at, None, &issue(put_answer)),
        ok_json(
            "DELETE",
            &format!("{at}/labels/{first}"),
            None,
            &labels(&[]),
        ),
    ];
    common::session(
        &format!("s{n}"),
        1_700_000_000_000_000 + n * 1_000,
        exchanges,
    )
}

/// The segment member of a `method` route under `/labels/`, if one has it.
fn rule(model: &Model, method: &str) -> Option<SegmentMember> {
    model
        .routes
        .iter()
        .filter(|r| r.method == method && r.path.contains("/labels/"))
        .find_map(|r| r.segment_member.clone())
}

#[test]
fn a_put_answering_the_named_member_adds_it_and_its_delete_takes_it_out() {
    let model = common::synth_model(
        "t",
        "https://api.example",
        &[session(1, "bug", &["bug"]), session(2, "docs", &["docs"])],
    );
    let added = rule(&model, "PUT").expect("a segment member");
    assert_eq!(
        added,
        SegmentMember {
            entity_type: "issues".into(),
            record_param: "param".into(),
            field: "labels".into(),
            member_param: "param2".into(),
            key: "name".into(),
            adds: true,
        }
    );
    assert_eq!(
        rule(&model, "DELETE"),
        Some(SegmentMember {
            adds: false,
            ..added
        })
    );
}

#[test]
fn answers_not_holding_the_named_member_learn_nothing() {
    let model = common::synth_model(
        "t",
        "https://api.example",
        &[
            session(1, "bug", &["other"]),
            session(2, "docs", &["other"]),
        ],
    );
    assert_eq!(rule(&model, "PUT"), None);
    assert_eq!(rule(&model, "DELETE"), None);
}
